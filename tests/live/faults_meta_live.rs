//! Live test of the meta-group scenario (issue 15): on a 5-server lab, kill a majority of the meta group
//! (every JetStream server) while the R3 test stream keeps its own quorum. What nats-server 2.15.1 does,
//! confirmed on this lab: the stream goes on acknowledging writes, while stream and consumer creation
//! answer 10008 "JetStream system temporarily unavailable" (or nothing in the first seconds), and the
//! model must say the same: the stream degraded but writable, the meta group unavailable.

use crate::common::serial;
use natsplan::faults::{json, run, table, FaultKind, FaultOptions};

#[test]
fn a_lost_meta_majority_stops_the_api_but_not_the_streams_writes() {
    let _s = serial();
    let opts = FaultOptions::quick(5, &[FaultKind::MetaMajorityKill]);
    let r = run(&opts, &|m| eprintln!("{m}")).expect("the fault run starts and stops its lab");
    let text = String::from_utf8(table(&r)).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json(&r)).unwrap();
    eprintln!("{text}\n{v:#}");
    let s = &r.scenarios[0];
    assert_eq!(s.name, "meta-majority-kill");
    assert!(s.skipped.is_none(), "{text}");
    assert_eq!(s.selectors.len(), 3, "three of five servers: {text}");
    assert_eq!(s.predicted, "degraded", "{text}");
    assert_eq!(s.observed, "writes_continued", "{text}");
    assert!(s.acked > 100 && s.acked_lost == Some(0), "{text}");
    assert_eq!(s.predicted_meta.as_deref(), Some("unavailable"), "{text}");
    assert_eq!(s.observed_meta.as_deref(), Some("api_refused"), "{text}");
    // Each create answered nothing (while the servers have not yet noticed the lost quorum) or 10008.
    for what in ["stream create", "consumer create"] {
        let line = s
            .detail
            .split("; ")
            .find_map(|l| l.split_once(&format!("{what}: ")).map(|(_, a)| a))
            .unwrap_or_else(|| panic!("no {what} answer in {}", s.detail));
        for a in line.split(", then ") {
            assert!(
                a.starts_with("10008 JetStream system temporarily unavailable") || a.starts_with("no answer"),
                "{what}: {a}"
            );
        }
    }
    assert!(
        s.detail.contains("stream info: ok"),
        "an existing stream still answers info: {}",
        s.detail
    );
    assert!(s.agree, "{text}");
    assert_eq!(v["scenarios"][0]["observed_meta"], "api_refused");
}

#[test]
fn a_lab_too_small_for_the_meta_scenario_skips_it_with_the_reason() {
    let _s = serial();
    let opts = FaultOptions::quick(3, &[FaultKind::MetaMajorityKill]);
    let r = run(&opts, &|m| eprintln!("{m}")).expect("the fault run starts and stops its lab");
    let s = &r.scenarios[0];
    let why = s.skipped.as_deref().unwrap_or_default();
    assert!(why.contains("needs 5 or more"), "{why}");
    assert!(!s.agree);
}
