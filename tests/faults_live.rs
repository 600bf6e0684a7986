//! Live fault verification on a real 3-node lab (one cluster at a time): kill -9 a follower and the
//! stream leader while publishing; no acknowledged write may be lost and the outcome must agree with the
//! survival model's prediction.

use natsplan::faults::{run, table, FaultOptions, Kind};
use std::sync::Mutex;

/// Live tests in this file run one lab at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run_scenario(k: Kind) {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut opts = FaultOptions::quick(3, &[k]);
    let findings = tempfile::tempdir().unwrap();
    opts.findings_dir = Some(findings.path().to_path_buf());
    let r = run(&opts, &|m| eprintln!("{m}")).expect("the fault run starts and stops its lab");
    let text = String::from_utf8(table(&r)).unwrap();
    eprintln!("{text}");
    assert_eq!(r.scenarios.len(), 1);
    let s = &r.scenarios[0];
    assert!(s.skipped.is_none(), "{text}");
    assert!(s.acked > 100, "the publisher must have written during the run:\n{text}");
    assert_eq!(s.acked_lost, 0, "acknowledged writes lost:\n{text}\n{:?}", s.check);
    assert_eq!(s.check.unexpected + s.check.duplicates, 0, "{:?}", s.check);
    assert_eq!(s.predicted, "degraded", "{text}");
    assert!(s.agree, "prediction and outcome disagree:\n{text}");
    assert_eq!(
        s.replicas.len(),
        3,
        "every replica reports the stream: {:?}",
        s.replicas
    );
    assert!(!r.failed());
}

#[test]
fn killing_a_follower_loses_nothing_and_writes_continue() {
    run_scenario(Kind::FollowerKill);
}

#[test]
fn killing_the_leader_loses_nothing_and_writes_resume_after_one_election() {
    run_scenario(Kind::LeaderKill);
}

/// The whole ladder on a 3-node lab, printing the agreement table (about 3 minutes; run with
/// `cargo test --release --test faults_live -- --ignored --nocapture`).
#[test]
#[ignore]
fn full_ladder_on_three_nodes() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let nodes: usize = std::env::var("FAULTS_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut opts = FaultOptions::full(nodes);
    let findings = tempfile::tempdir().unwrap();
    opts.findings_dir = Some(findings.path().to_path_buf());
    let r = run(&opts, &|m| eprintln!("{m}")).expect("the fault run starts and stops its lab");
    let text = String::from_utf8(table(&r)).unwrap();
    println!("{text}");
    for s in &r.scenarios {
        assert_eq!(s.acked_lost, 0, "{text}");
    }
    assert!(!r.failed(), "{text}");
    if findings.path().read_dir().unwrap().next().is_some() {
        let kept = findings.keep();
        panic!("findings kept in {}", kept.display());
    }
}

/// The ladder's named scenarios on a 3-node lab (comma separated in FAULTS_SCENARIOS), printing the table.
#[test]
#[ignore]
fn chosen_scenarios_on_three_nodes() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let names = std::env::var("FAULTS_SCENARIOS").unwrap_or_else(|_| "follower-wipe".into());
    let kinds: Vec<Kind> = names.split(',').map(|n| Kind::parse(n.trim()).unwrap()).collect();
    let r = run(&FaultOptions::quick(3, &kinds), &|m| eprintln!("{m}")).unwrap();
    let text = String::from_utf8(table(&r)).unwrap();
    println!("{text}");
    assert!(!r.failed(), "{text}");
}

/// The CLI entry writes one results folder with the JSON contract and prints the chosen format.
#[test]
fn run_cli_writes_a_results_folder() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = tempfile::tempdir().unwrap();
    let opts = FaultOptions::quick(3, &[Kind::FollowerKill]);
    let (bytes, failed) = natsplan::faults::run_cli(&opts, true, Some(out.path())).unwrap();
    let printed: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert!(!failed, "{printed:#}");
    let folders: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folders[0].join("faults.json")).unwrap()).unwrap();
    assert_eq!(saved["scenarios"][0]["name"], "follower-kill");
    assert_eq!(saved["scenarios"][0]["agree"], true, "{saved:#}");
    assert_eq!(saved["scenarios"][0]["acked_lost"], 0);
    assert!(folders[0].join("FAULTS.md").exists());
}
