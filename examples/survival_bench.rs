//! Bench (not a test): times `tolerates`, `whatif --all 2` (the sweep) and the Monte Carlo on a large
//! site built in code (24 racks × 4 servers, 48 arrays × 12 disks, 500 streams + 500 consumers).
//! Run: `cargo run --release --example survival_bench [SITE_YEARS]`.

use natsplan::catalog::Catalog;
use natsplan::survival::{self, fixture, DomainKind, Model, Reliability};
use std::time::Instant;

fn main() {
    let site_years: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let (site, layout) = fixture::large(24, 4, 2, 12, 500);
    println!(
        "site: {} racks, {} servers, {} arrays, {} assets; {} rayon threads",
        site.racks.len(),
        layout.servers.len(),
        site.arrays.len(),
        layout.assets.len(),
        rayon::current_num_threads()
    );
    // Interleaved repeats: the machine is shared, report the best and the median.
    let mut tol = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let r = survival::tolerates(&site, &layout);
        tol.push(t.elapsed().as_secs_f64());
        std::hint::black_box(r);
    }
    tol.sort_by(f64::total_cmp);
    println!(
        "tolerates: best {:.4} s, median {:.4} s -> {:?}",
        tol[0],
        tol[2],
        survival::tolerates(&site, &layout)
    );
    let model = Model::new(&site, &layout);
    let t = Instant::now();
    let sw = survival::sweep(&model, &DomainKind::ALL, 2);
    println!(
        "sweep --all 2 (all kinds): {:.2} s, {} combinations over {} domains, {} signatures, {} outcomes",
        t.elapsed().as_secs_f64(),
        sw.combinations,
        sw.domains,
        sw.signatures,
        sw.classes.len()
    );
    let cat = Catalog::builtin();
    let rel = Reliability::new(&model, &cat);
    let t = Instant::now();
    let y = survival::monte_carlo(&rel, site_years, 1, 1, None);
    let dt = t.elapsed().as_secs_f64();
    println!(
        "monte carlo: {site_years} site-years in {dt:.2} s ({:.1} s per million), {} components; worst {} {:.3} min/yr",
        dt * 1e6 / site_years as f64,
        rel.components.len(),
        y.worst_unavailable,
        y.worst_unavailable_min_per_year
    );
}
