//! A calibration measured on a busy client host says so wherever a prediction comes from it (issue 37):
//! `design`, `predict` and `verify` with `--calibration FILE` whose provenance records `host_during.busy`
//! (what `natsplan calibrate` writes, `hostload`); the same file recorded quiet says nothing.

use crate::common::{dead_url, run};
use serde_json::Value;

/// A committed lab calibration with `provenance.host_during` set as calibrate writes it.
fn calibration_with_host(dir: &std::path::Path, busy: bool) -> String {
    let src = format!("{}/calibration/lab-loopback-js-quiet.yaml", env!("CARGO_MANIFEST_DIR"));
    let mut v: serde_norway::Value = serde_norway::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let host: serde_norway::Value = serde_norway::from_str(&format!(
        "{{seconds: 61.5, cores: 2, other_cores: {}, steal_percent: 0.0, busy: {busy}}}",
        if busy { 1.1 } else { 0.02 }
    ))
    .unwrap();
    v["provenance"]
        .as_mapping_mut()
        .unwrap()
        .insert("host_during".into(), host);
    let p = dir.join(if busy { "busy.yaml" } else { "quiet.yaml" });
    std::fs::write(&p, serde_norway::to_string(&v).unwrap()).unwrap();
    p.to_str().unwrap().to_string()
}

const SAID: &str = "was measured on a busy client host";

#[test]
fn a_calibration_measured_on_a_busy_host_is_said_by_design_predict_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let site = format!("{}/examples/three-racks-raid1.yaml", env!("CARGO_MANIFEST_DIR"));
    for busy in [true, false] {
        let cal = calibration_with_host(tmp.path(), busy);
        let (code, _, err) = run(&["--format", "json", "design", &site, "--calibration", &cal]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err.contains(SAID), busy, "design, busy {busy}: {err}");
        if busy {
            assert!(
                err.contains("other processes used 1.10 of 2 cores") && err.contains("natsplan's assumption"),
                "{err}"
            );
        }
        let (code, _, err) = run(&["predict", "--kind", "kv", "--calibration", &cal]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err.contains(SAID), busy, "predict, busy {busy}: {err}");
        let url = dead_url();
        let (code, out, err) = run(&[
            "--format",
            "json",
            "verify",
            "--server",
            &url,
            "--dry-run",
            "--calibration",
            &cal,
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let said = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains(SAID));
        assert_eq!(said, busy, "verify, busy {busy}: {v:#}");
        // A dry run measures nothing: no host figures.
        assert!(
            v.get("host_during").is_none() && v.get("host_before").is_none(),
            "{v:#}"
        );
    }
}
