//! Live test of `natsplan calibrate` on a 3-node lab (loopback, temp dirs): a tiny budget still produces
//! a file that loads, names its provenance, and that `predict --calibration` and `verify --calibration`
//! accept. It checks structure only, never this machine's speed.

use crate::common::serial;
use assert_cmd::Command;
use natsplan::lab::TestCluster;
use natsplan::perf::CalibrationSet;
use serde_json::Value;
use std::time::Duration;

/// One cluster at a time (2 cores).
fn natsplan(args: &[&str], timeout_s: u64) -> (i32, String, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(args)
        .timeout(Duration::from_secs(timeout_s))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn calibrate_on_a_lab_writes_a_file_predict_and_verify_accept() {
    let _one = serial();
    let c = TestCluster::start(3).expect("lab");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.yaml");
    let out_s = out.to_str().unwrap();
    let monitors = c.monitor_urls().join(",");
    // Load on purpose for the first seconds only (issue 37): it covers calibrate's one-second reading of
    // the host before the runs, which must then say the host was busy; the runs themselves are left alone.
    let busy = crate::common::BusyHost::start();
    let unbusy = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(6));
        drop(busy);
    });
    let (code, stdout, err) = natsplan(
        &[
            "--format",
            "json",
            "calibrate",
            "--server",
            &c.url(),
            "--monitor",
            &monitors,
            "--budget",
            // The required points alone plan to about 35 s; on a loaded 2-core machine their setup costs
            // more than planned and the core rows, measured last, were skipped (fit refused). 60 s leaves
            // room for that without asserting any speed.
            "60s",
            "--hardware",
            "test lab",
            "--out",
            out_s,
        ],
        240,
    );
    unbusy.join().unwrap();
    assert_eq!(code, 0, "{err}");
    let rep: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(rep["sync"], "delayed");
    assert!(
        err.contains("calibrate: warning: before the runs, a busy client host"),
        "{err}"
    );
    let f = CalibrationSet::from_path(&out).unwrap();
    assert_eq!(
        f.recorded_host("host_before").map(|h| h.busy),
        Some(true),
        "{:?}",
        f.provenance
    );
    assert!(
        f.recorded_host("host_during").is_some_and(|h| h.cores >= 1),
        "{:?}",
        f.provenance
    );
    assert_eq!(f.source.kind, "natsplan-calibrate");
    assert_eq!(f.hardware["host"].as_str(), Some("test lab"));
    assert!(f.nats_version.starts_with("2."), "{}", f.nats_version);
    assert_eq!(f.provenance["jetstream_servers"].as_u64(), Some(3));
    // Several URLs: writers and consumer readers are placed away from their leaders, and the file says so.
    for k in ["leader", "consumer_leader"] {
        let said = f.conditions.get(k).and_then(|v| v.as_str()).unwrap_or_default();
        assert!(said.starts_with("remote:"), "conditions.{k}: {:?}", f.conditions);
    }
    assert!(f.provenance.contains_key("store_filesystem"));
    let q = f.fit_quality.as_ref().expect("fit quality");
    assert!(!q.terms.is_empty() && !q.residuals.is_empty());
    assert!(f.rows().filter(|r| r.kind == "obj-put").count() >= 12);

    let (code, stdout, err) = natsplan(
        &[
            "--format",
            "json",
            "predict",
            "--calibration",
            out_s,
            "--kind",
            "obj-put",
            "--size",
            "64KiB",
            "--replicas",
            "3",
            "--servers",
            "3",
        ],
        60,
    );
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("lab"), "{stdout}");

    let vdir = tempfile::tempdir().unwrap();
    let (code, _, err) = natsplan(
        &[
            "verify",
            "--server",
            &c.url(),
            "--monitor",
            &monitors,
            "--calibration",
            out_s,
            "--dry-run",
            "--out",
            vdir.path().to_str().unwrap(),
        ],
        60,
    );
    assert_eq!(code, 0, "{err}");
}

/// `lab up --nodes 3 --sync always|delayed` starts servers whose /varz shows that sync mode (what calibrate
/// records), and `lab down` removes them.
#[test]
fn lab_up_runs_both_sync_modes() {
    let _one = serial();
    for (mode, always) in [("always", true), ("delayed", false)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("lab");
        let _down = crate::common::LabDown(dir.clone());
        let dir_s = dir.to_str().unwrap();
        let (code, _, err) = natsplan(&["lab", "up", "--nodes", "3", "--sync", mode, "--dir", dir_s], 90);
        assert_eq!(code, 0, "{err}");
        let lab: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).unwrap()).unwrap();
        let nodes = lab["nodes"].as_array().unwrap().clone();
        assert_eq!(nodes.len(), 3);
        for n in &nodes {
            let m = format!("http://127.0.0.1:{}", n["monitor_port"]);
            let v = natsplan::monitor::varz(&m, Duration::from_secs(3)).unwrap();
            let cfg = &v["jetstream"]["config"];
            assert_eq!(cfg["sync_always"].as_bool().unwrap_or(false), always, "{mode}: {cfg}");
            if !always {
                assert_eq!(cfg["sync_interval"].as_u64(), Some(120_000_000_000), "{cfg}");
            }
        }
        let (code, _, err) = natsplan(&["lab", "down", "--dir", dir_s], 60);
        assert_eq!(code, 0, "{err}");
    }
}
