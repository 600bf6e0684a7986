//! Bench (not a test): `design` on the large generated site (24 racks, 120 servers, 48 arrays of 12
//! disks, 500 streams with consumers). Prints wall time per run (min/median/max of 5) and the process's
//! peak resident memory. Target: < 2 s and < 300 MiB in release on a 2-core machine.
//! Run: `cargo bench --bench design_large`.

use std::time::Instant;

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` runs this binary without it, unoptimised,
    // where the large site would take minutes and prove nothing: there, one small site checks it still runs.
    let measuring = std::env::args().any(|a| a == "--bench");
    let (yaml, runs) = if measuring {
        (natsplan::sitegen::large().to_yaml(false), 5)
    } else {
        (natsplan::sitegen::small(1).to_yaml(false), 1)
    };
    let catalog = natsplan::catalog::Catalog::builtin();
    let mut times = Vec::new();
    let mut layouts = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let site = natsplan::site::parse_str(&yaml, "large.yaml", &catalog).expect("generated site is valid");
        let plan = natsplan::plan::build(&site, &catalog);
        let mut json = Vec::new();
        natsplan::report::design::json(&plan, &Default::default(), None, &mut json).expect("a Vec takes any write");
        times.push(t.elapsed().as_secs_f64());
        layouts = plan.layouts.len();
        std::hint::black_box(json);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "design {} site: {} layouts; wall min {:.3} s, median {:.3} s, max {:.3} s; peak RSS {} MiB",
        if measuring {
            "large"
        } else {
            "small (smoke run; `cargo bench` measures the large one)"
        },
        layouts,
        times[0],
        times[times.len() / 2],
        times[times.len() - 1],
        peak_rss_kib()
            .map(|k| (k / 1024).to_string())
            .unwrap_or_else(|| "?".into())
    );
}
