//! Bench (not a test): how long `survival::yearly` takes per layout of a site, as `design` would call it.
//! Run: `cargo run --release --example yearly_timing SITE.yaml`.

use natsplan::catalog::Catalog;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: yearly_timing SITE.yaml");
    let cat = Catalog::builtin();
    let site = natsplan::site::load(std::path::Path::new(&path), &cat).expect("a valid site");
    let plan = natsplan::plan::build(&site, &cat);
    let mut total = 0.0;
    for l in &plan.layouts {
        // A layout kept per class (a site of over 1,000 assets) has no placed assets to time.
        let Some(layout) = l.placed() else {
            println!("  (per class) {}", l.id);
            continue;
        };
        let t = Instant::now();
        let y = natsplan::survival::yearly(&site, layout, &cat);
        let dt = t.elapsed().as_secs_f64();
        total += dt;
        println!(
            "{:>7.3} s  {:<60} {:<12} worst {:>10.3} min/yr  P(dl) {:.2e}  acked {:.0}/yr",
            dt,
            l.id.chars().take(60).collect::<String>(),
            y.method,
            y.worst_unavailable_min_per_year,
            y.p_any_data_lost_per_year,
            y.acked_msgs_lost_per_year
        );
    }
    println!("total {total:.2} s for {} layouts", plan.layouts.len());
}
