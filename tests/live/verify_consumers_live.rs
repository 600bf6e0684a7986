//! Live test of verify's consumer rows: with `--site/--layout`, the site's durable consumers
//! (`workload.streams[].consumers`) join the ladder as consumer-read rows, judged against perf::consumer's
//! prediction (not a publish law), named in JSON, BENCH.md and results.csv. Verdicts are made
//! deterministic with fixture calibrations: consumer bands huge → inside (exit 0); consumer bands at
//! 10^9 msgs/s → those rows, and only they, OUTSIDE (exit 1). The site is examples/three-racks-raid1.yaml
//! (orders: 1 KiB, R3, 2 durables; events: 512 B, 3 durables) on a lab started for its first layout.

use crate::common::serial;
use assert_cmd::Command;
use natsplan::catalog::Catalog;
use natsplan::lab::TestCluster;
use natsplan::plan::Plan;
use serde_json::Value;
use std::time::Duration;

const SITE: &str = "examples/three-racks-raid1.yaml";

fn path(f: &str) -> String {
    format!("{}/{f}", env!("CARGO_MANIFEST_DIR"))
}

fn plan() -> Plan {
    let text = std::fs::read_to_string(path(SITE)).unwrap();
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(&text, &path(SITE), &cat).unwrap_or_else(|e| panic!("{e}"));
    natsplan::plan::build(&site, &cat)
}

/// verify --format json with the site, its first layout and `cal`; (exit code, JSON, stderr, results dir).
fn verify(c: &TestCluster, layout: &str, cal: &str, out: &std::path::Path) -> (i32, Value, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["--format", "json", "verify", "--server", &c.url()])
        .args(["--monitor", &c.monitor_urls().join(",")])
        .args(["--site", &path(SITE), "--layout", layout])
        .args(["--calibration", &path(cal), "--row-seconds", "0.3"])
        .args(["--out", out.to_str().unwrap()])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stderr)
}

fn consumer_rows(v: &Value) -> Vec<&Value> {
    v["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r.get("consumer_of").is_some())
        .collect()
}

/// The one results folder a run wrote under `out` (verify writes `out/<timestamp>/`).
fn results_dir(out: &std::path::Path) -> std::path::PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(out).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

#[test]
fn the_sites_consumers_are_ladder_rows_judged_against_the_consumer_prediction() {
    let _s = serial();
    let plan = plan();
    let lay = plan.layouts[0].clone();
    let (p2, l2) = (plan.clone(), lay.clone());
    let c =
        TestCluster::start_spec(move |dir| natsplan::lab::spec::for_layout(&p2, &l2, p2.input.nats.sync, dir)).unwrap();

    // Bands huge everywhere: every row inside, the consumer rows among them.
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = verify(&c, &lay.id, "tests/data/verify-cal-huge-bands.yaml", out.path());
    assert_eq!(code, 0, "{err}\n{:#}", v["rows"]);
    let rows = consumer_rows(&v);
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        ["consumer-fetch-orders-r3-1024B", "consumer-fetch-events-r3-512B"],
        "one row per stream with durables, at its size and planned replicas"
    );
    for r in &rows {
        assert_eq!(r["kind"], "consumer-fetch", "{r:#}");
        assert_eq!(r["status"], "inside", "{r:#}");
        // Priced by the consumer rows of the calibration given, not by a publish prediction.
        let p = &r["predicted"];
        assert!(
            p["source"]
                .as_str()
                .unwrap()
                .contains("fixture-huge-bands (consumer-fetch R3"),
            "{p:#}"
        );
        assert!(p["bottleneck"].as_str().unwrap().contains("consumer"), "{p:#}");
        assert!(r["measured"]["ops_per_s"].as_f64().unwrap() > 0.0, "{r:#}");
        assert!(r["label"].as_str().unwrap().contains("durables"), "{r:#}");
    }
    let orders = &rows[0]["consumer_of"];
    assert_eq!(orders["stream"], "orders");
    assert_eq!(orders["durables"], 2);
    assert_eq!(orders["required_per_s"], 5000.0);
    // The table (BENCH.md) and results.csv name them too.
    let dir = results_dir(out.path());
    let md = std::fs::read_to_string(dir.join("BENCH.md")).unwrap();
    assert!(
        md.contains("consumer-fetch-orders-r3-1024B") && md.contains("each durable needs 5.0k/s"),
        "{md}"
    );
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let line = csv
        .lines()
        .find(|l| l.starts_with("consumer-fetch-events-r3-512B,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(
        line.contains(",consumer-fetch,Consumer fetch events (1 of 3 durables) R3 512 B,"),
        "{line}"
    );
    assert!(line.contains(",inside,"), "{line}");
    // Nothing left behind: the rows fill and read streams of their own.
    assert!(c.streams().iter().all(|s| !s.name.contains("natsplan-")));

    // Consumer bands no machine reaches: those rows fail, the others still pass.
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = verify(
        &c,
        &lay.id,
        "tests/data/verify-cal-consumer-impossible.yaml",
        out.path(),
    );
    assert_eq!(code, 1, "{err}");
    for r in v["rows"].as_array().unwrap() {
        let want = if r.get("consumer_of").is_some() {
            "outside"
        } else {
            "inside"
        };
        if r["status"] != "skipped" {
            assert_eq!(r["status"], want, "{r:#}");
        }
    }
    assert_eq!(consumer_rows(&v).len(), 2);
}
