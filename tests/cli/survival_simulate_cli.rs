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

/// `natsplan ARGS` with a hang guard: (exit code, stderr).
fn natsplan(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn every_failure_rate_is_bounded_at_its_place() {
    // Only disk_afr was bounded: server_crash_per_year: 1e9 was accepted, and simulate ran for months.
    for (line, col, rates) in [
        (
            11,
            67,
            "failure_rates: { rack_power_per_year: 2.0, server_crash_per_year: 1e9 }",
        ),
        (
            11,
            42,
            "failure_rates: { process_crash_per_year: 1001, rack_power_per_year: 2.0 }",
        ),
        (11, 43, "maintenance: { rolling_restarts_per_year: 1e6 }"),
    ] {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        f.write_all(
            SITE.replace("failure_rates: { rack_power_per_year: 2.0 }", rates)
                .as_bytes(),
        )
        .unwrap();
        let (code, err) = natsplan(&["simulate", f.path().to_str().unwrap()]);
        assert_eq!(code, Some(2), "{rates}: {err}");
        assert!(err.contains(&format!(":{line}:{col}:")), "{rates}: {err}");
        assert!(
            err.contains("more than natsplan models (at most 1000"),
            "{rates}: {err}"
        );
    }
    // The catalog's own rates (--models) too.
    let models = tempfile::tempdir().unwrap();
    let rates = std::fs::read_to_string(format!("{}/models/failure_rates.yaml", env!("CARGO_MANIFEST_DIR")))
        .unwrap()
        .replace(
            "server_crash_per_year: { value: 2.0,",
            "server_crash_per_year: { value: 1e9,",
        );
    std::fs::write(models.path().join("failure_rates.yaml"), rates).unwrap();
    let f = site();
    let (code, err) = natsplan(&[
        "simulate",
        f.path().to_str().unwrap(),
        "--models",
        models.path().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("failure_rates.server_crash_per_year.value: 1000000000 is not events per year"),
        "{err}"
    );
}

#[test]
fn a_run_of_too_many_events_is_refused_before_it_starts() {
    // Rates of ten a year make every site-year about 120 events: the site-years bound alone let this run
    // for hours. (Rates of 1,000 a year, as this test had, make the plan's own Markov chain converge slowly:
    // 37 s of design in a debug build, past the harness's timeout on a busy machine.)
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(
        SITE.replace(
            "failure_rates: { rack_power_per_year: 2.0 }",
            "failure_rates: { server_crash_per_year: 10, process_crash_per_year: 10 }",
        )
        .as_bytes(),
    )
    .unwrap();
    let (code, err) = natsplan(&[
        "simulate",
        f.path().to_str().unwrap(),
        "--years",
        "1000",
        "--trials",
        "1000000",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("failure and repair events") && err.contains("or fewer"),
        "{err}"
    );
}
