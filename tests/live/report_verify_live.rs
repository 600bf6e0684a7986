//! `verify --format html` against a live lab cluster: one bar per ladder row (measured, with the predicted
//! band and prediction) and the latency percentile curves, in a self-contained page.

use assert_cmd::Command;
use natsplan::lab::TestCluster;
use std::collections::BTreeSet;
use std::time::Duration;

#[test]
fn verify_html_charts_every_row() {
    let _s = crate::common::serial();
    let c = TestCluster::start(3).expect("lab starts (scripts/install-nats-server)");
    let out_dir = tempfile::tempdir().unwrap();
    let cal = format!("{}/tests/data/verify-cal-huge-bands.yaml", env!("CARGO_MANIFEST_DIR"));
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["--format", "html", "verify", "--server", &c.url()])
        .args(["--monitor", &c.monitor_urls().join(",")])
        .args(["--calibration", &cal, "--row-seconds", "0.3", "--out"])
        .arg(out_dir.path())
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8(out.stdout).unwrap();
    std::fs::write(std::env::temp_dir().join("natsplan-verify-report.html"), &html).ok();
    let doc = roxmltree::Document::parse_with_options(
        &html,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .expect("verify HTML parses");
    let lower = html.to_ascii_lowercase();
    for bad in ["http:", "https:", "<script", "<link", "url("] {
        assert!(!lower.contains(bad), "not self-contained: {bad}");
    }
    let attr = |a: &str| -> BTreeSet<String> {
        doc.descendants()
            .filter_map(|n| n.attribute(a))
            .map(str::to_string)
            .collect()
    };
    let bars = attr("data-bar");
    assert_eq!(bars.len(), 8, "one bar per quick-ladder row: {bars:?}");
    assert!(bars.contains("core-1p1s-128B"), "{bars:?}");
    // The results folder carries the same page.
    let dirs: Vec<_> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    let saved = std::fs::read_to_string(dirs[0].join("report.html")).expect("report.html in the results folder");
    assert!(saved.contains("data-bar=\"core-1p1s-128B\""));
    let series = attr("data-series");
    assert!(
        series.contains("core-1p1s-128B"),
        "latency curve for the core row: {series:?}"
    );
    // The CPU chart appears only when /varz CPU was sampled during the rows (not in 0.3 s rows).
    let marks = attr("data-marks");
    assert!(
        marks.is_empty() || marks.contains("measured (busiest server)"),
        "{marks:?}"
    );
}
