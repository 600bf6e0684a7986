//! `natsplan simulate` end to end: seeded and thread-count independent, JSON shape, bad input.

use assert_cmd::Command;
use std::io::Write;

const SITE: &str = r#"
site: one-rack
nats: { replicas: [3], sync_interval: 2m }
racks:
  - name: A
    servers: [n1, n2, n3]
    arrays: [{ name: A1, model: EF600, disk_model: nvme-3.84t, disks: 12 }]
workload:
  streams:
    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 1d }
failure_rates: { rack_power_per_year: 2.0 }
"#;

fn site() -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(SITE.as_bytes()).unwrap();
    f
}

fn run(path: &str, threads: &str, seed: &str) -> Vec<u8> {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env("RAYON_NUM_THREADS", threads)
        .args([
            "simulate", path, "--years", "2", "--trials", "600", "--seed", seed, "--format", "json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn same_seed_same_numbers_on_any_core_count() {
    let f = site();
    let p = f.path().to_str().unwrap();
    let a = run(p, "1", "5");
    assert_eq!(a, run(p, "2", "5"));
    assert_ne!(a, run(p, "1", "6"));
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(v["site_years"], 1200);
    let mc = &v["monte_carlo"];
    let orders = &mc["assets"][0];
    assert_eq!(orders["name"], "orders");
    // Two power events a year on the only rack: about 2 × 65 min unavailable, and acked writes lost.
    let un = orders["unavailable_min_per_year"].as_f64().unwrap();
    assert!(un > 60.0 && un < 300.0, "{un}");
    assert!(orders["acked_msgs_lost_per_year"].as_f64().unwrap() > 10_000.0);
    assert!(orders["ci95"]["unavailable_min_per_year"].is_array());
    // The exact chain is small here and agrees roughly (the tests in the library check it properly).
    let ex = v["exact"]["assets"][0]["unavailable_min_per_year"].as_f64().unwrap();
    assert!((ex - un).abs() < 0.3 * ex, "exact {ex} vs mc {un}");
}

#[test]
fn zero_trials_is_bad_input() {
    let f = site();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["simulate", f.path().to_str().unwrap(), "--trials", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--trials"));
}
