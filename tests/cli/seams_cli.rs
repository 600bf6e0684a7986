//! Issue 39: the small seams a new user trips over, each exit code and message as the docs give them.

use crate::common::run;

#[test]
fn predict_rate_above_the_prediction_fails_the_check() {
    // Before: the note alone and exit 0.
    let (code, out, err) = run(&["predict", "--kind", "js", "--rate", "10000000"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("exceeds the predicted"),
        "the report is still written: {out}"
    );
    assert!(
        err.contains("check failed: --rate 10000000/s is above the predicted"),
        "{err}"
    );
    let (code, _, err) = run(&["predict", "--kind", "js", "--rate", "10"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_unsupported_format_is_named_as_typed() {
    // Before: "--format Csv is not available".
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "--format",
        "csv",
        "lab",
        "status",
        "--dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--format csv is not available"), "{err}");
}

#[test]
fn a_malformed_server_url_is_bad_input() {
    // Before: exit 3 ("cannot connect to nats://[::1: …"), as if a server were down.
    let (code, _, err) = run(&["bench", "js", "--server", "nats://[::1", "--msgs", "10"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a URL a NATS client takes") && err.contains("nats://[::1"),
        "{err}"
    );
}

#[test]
fn fractional_years_get_the_reason() {
    // Before: clap's bare "invalid digit found in string".
    let (code, _, err) = run(&["simulate", "examples/three-racks-raid1.yaml", "--years", "0.5"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0.5 is not a whole number of years"), "{err}");
    assert!(!err.contains("invalid digit"), "{err}");
}

#[test]
fn bench_and_calibrate_take_a_lab_folder() {
    // Before: neither had --lab (clap's "unexpected argument", exit 2 without a hint).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for args in [
        vec!["bench", "js", "--lab", d, "--msgs", "10"],
        vec!["calibrate", "--lab", d, "--out", "/tmp/natsplan-never-written.yaml"],
    ] {
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("no lab there (no lab.json)") && err.contains("natsplan lab up --dir"),
            "{args:?}: {err}"
        );
    }
    let (code, _, err) = run(&["bench", "js", "--lab", d, "--server", "nats://127.0.0.1:4222"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--lab") && err.contains("--server"), "{err}");
}

#[test]
fn a_calibration_carried_far_is_said_first_with_the_built_in_verdict_beside() {
    // Before: the lab calibration of two shared cores was "(scaled)" to the site's 16-core servers with
    // nothing said above the tables, and no verdict without it to compare with.
    let cal = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/calibration/lab-loopback-calibrate-8m.yaml"
    );
    let (code, out, err) = run(&["design", "examples/full-reference.yaml", "--calibration", cal]);
    assert_eq!(code, 0, "{err}");
    let first_table = out.find('┌').expect("a table");
    let warning = out
        .find("warning: calibration \"lab-loopback-calibrate-8m\" is carried far")
        .expect(&out);
    assert!(warning < first_table, "said above the tables:\n{out}");
    assert!(
        out.contains("with the built-in calibration instead the best is"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "design",
        "examples/full-reference.yaml",
        "--calibration",
        cal,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{:#}", v["warnings"]);
    // Without a calibration of its own, nothing is said.
    let (code, out, _) = run(&["design", "examples/full-reference.yaml", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("warnings").is_none());
}
