//! `verify` against a lab started with `natsplan lab up`: `lab up` names its monitoring URLs, `verify --lab
//! DIR` (or DIR/lab.json) finds the servers and monitors from the lab's record and checks drift; without a
//! monitor that answers, the drift is `unknown` (never "none") and the streams are not called "not created
//! yet". Dry runs: the drift check is what is tested, not the ladder.

use crate::common::{dead_url, serial};
use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const SITE: &str = "examples/three-racks-raid1.yaml";

fn natsplan(args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .env_remove("NATS_CONTEXT")
        .env("XDG_CONFIG_HOME", home.path())
        .args(args)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The site's first layout id, as `design` lists it.
fn first_layout(site: &str) -> String {
    let (code, out, err) = natsplan(&["--format", "json", "design", site]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["layouts"][0]["id"].as_str().unwrap().to_string()
}

/// `lab down` when the test ends, however it ends.
struct Down<'a>(&'a Path);
impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = natsplan(&["lab", "down", "--dir", self.0.to_str().unwrap()]);
    }
}

#[test]
fn verify_finds_a_labs_servers_and_monitors_and_never_calls_unread_drift_none() {
    let _s = serial();
    let site = format!("{}/{SITE}", env!("CARGO_MANIFEST_DIR"));
    let id = first_layout(&site);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let d = dir.to_str().unwrap();
    let (code, out, err) = natsplan(&["lab", "up", &site, "--layout", &id, "--dir", d, "--streams"]);
    let _down = Down(&dir);
    assert_eq!(code, 0, "{out}\n{err}");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).unwrap()).unwrap();
    let monitors: Vec<String> = state["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("http://{}:{}", n["host"].as_str().unwrap(), n["monitor_port"]))
        .collect();
    let clients: Vec<String> = state["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| format!("nats://{}:{}", n["host"].as_str().unwrap(), n["client_port"]))
        .collect();
    for m in &monitors {
        assert!(out.contains(m.as_str()), "lab up prints {m}:\n{out}");
        assert!(err.contains(m.as_str()), "lab up's hint names {m}:\n{err}");
    }
    assert!(err.contains(&format!("natsplan verify --lab {d}")), "{err}");

    // --lab DIR and --lab DIR/lab.json: servers and monitors from the record; the plan's streams exist and
    // match, so the drift is none.
    let state_file = dir.join("lab.json");
    for lab in [d, state_file.to_str().unwrap()] {
        let (code, out, err) = natsplan(&[
            "--format",
            "json",
            "verify",
            "--lab",
            lab,
            "--dry-run",
            "--site",
            &site,
            "--layout",
            &id,
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["config"]["servers"], serde_json::json!(clients), "{:#}", v["config"]);
        assert_eq!(
            v["config"]["monitors"],
            serde_json::json!(monitors),
            "{:#}",
            v["config"]
        );
        assert_eq!(v["drift"]["status"], "none", "{:#}", v["drift"]);
        assert_eq!(v["cluster"]["servers"].as_array().unwrap().len(), clients.len());
    }

    // Issue 39: lab up records the layout it runs, so `verify --lab DIR` alone compares with it. Before,
    // lab.json had no `plan` and verify without --site/--layout had no layout to compare with.
    assert_eq!(state["plan"]["layout"], id.as_str(), "{:#}", state["plan"]);
    assert_eq!(state["plan"]["site"], site.as_str(), "{:#}", state["plan"]);
    let (code, out, err) = natsplan(&["--format", "json", "verify", "--lab", d, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "comparing with layout {id} of {site}, which `lab up` started this lab from"
        )),
        "{err}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["config"]["layout"], id.as_str(), "{:#}", v["config"]);
    assert_eq!(v["drift"]["status"], "none", "{:#}", v["drift"]);

    // Issue 39: bench takes the lab too (before: NATS_URL built by hand from lab.json; --lab did not exist).
    let (code, out, err) = natsplan(&[
        "--format",
        "json",
        "bench",
        "js",
        "--lab",
        d,
        "--msgs",
        "2000",
        "--replicas",
        "3",
        "--no-progress",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["published"].as_u64(), Some(2000), "{v:#}");

    // The same cluster with a monitor that does not answer: drift unknown, no "none", no "not created yet".
    let silent = dead_url().replace("nats://", "http://");
    let common = [
        "verify",
        "--server",
        &clients.join(","),
        "--monitor",
        &silent,
        "--dry-run",
        "--site",
        &site,
    ];
    let mut args = vec!["--format", "json"];
    args.extend(common);
    args.extend(["--layout", &id]);
    let (code, out, err) = natsplan(&args);
    assert_eq!(code, 0, "unknown drift is not a failed check: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["drift"]["status"], "unknown", "{:#}", v["drift"]);
    assert!(v["drift"]["items"].as_array().unwrap().is_empty());
    let notes = v["drift"]["notes"].to_string();
    assert!(!notes.contains("not created yet"), "{notes}");
    assert!(notes.contains(&silent), "the silent monitor is named: {notes}");
    let mut args = common.to_vec();
    args.extend(["--layout", &id]);
    let (code, out, err) = natsplan(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("unknown, could not check"), "{out}");
    assert!(!out.contains(": none"), "{out}");

    // A folder without a lab is bad input naming the fix.
    let (code, _, err) = natsplan(&["verify", "--lab", tmp.path().to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no lab.json") && err.contains("natsplan lab up"), "{err}");
}
