//! `verify --faults --recover` (issue 35) on a real lab: whatif's own recovery steps carried out after each
//! destructive scenario, the end state judged under load. The CI subset: `full-disk` (the tmpfs over the
//! stream's message folder, so the stuck replica shows in every run) and `follower-wipe`, on 3 servers
//! (about a minute on 2 cores); and the same full disk with whatif's restart left out, which must disagree.
//! Full stores need root (a tmpfs mount); without it `full-disk` is skipped with the reason.

use natsplan::faults::{run, table, FaultKind, FaultOptions, FaultReport, FullDiskAt};
use natsplan::survival::Action;

fn run_recover(kinds: &[FaultKind], leave_out: &[&str]) -> FaultReport {
    run_recover_on(3, kinds, leave_out)
}

fn run_recover_on(nodes: usize, kinds: &[FaultKind], leave_out: &[&str]) -> FaultReport {
    let _g = crate::common::serial();
    let findings = tempfile::tempdir().unwrap();
    let mut opts = FaultOptions::quick(nodes, kinds);
    opts.full_disk_at = FullDiskAt::StreamMessages;
    opts.recover = true;
    opts.recovery_leave_out = leave_out.iter().map(|s| s.to_string()).collect();
    opts.findings_dir = Some(findings.path().to_path_buf());
    let r = run(&opts, &|m| eprintln!("{m}")).expect("the fault run starts and stops its lab");
    eprintln!("{}", String::from_utf8(table(&r)).unwrap());
    eprintln!("{}", String::from_utf8(natsplan::faults::json(&r)).unwrap());
    assert_eq!(r.scenarios.len(), kinds.len());
    r
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn the_ci_subset_carries_out_whatifs_steps_and_every_scenario_agrees() {
    let r = run_recover(&[FaultKind::FullDisk, FaultKind::Wipe], &[]);
    for s in &r.scenarios {
        if let Some(why) = &s.skipped {
            assert!(!root() && s.name == "full-disk", "{} skipped: {why}", s.name);
            continue;
        }
        let steps = s.recovery_steps.as_ref().expect("--recover reports the steps");
        assert!(!steps.is_empty(), "{}: whatif gives steps", s.name);
        assert!(steps.iter().all(|st| st.ok), "{}: {steps:#?}", s.name);
        assert!(
            steps.iter().any(|st| !st.simulated),
            "{}: something was carried out",
            s.name
        );
        assert_eq!(
            steps.iter().map(|st| st.action.clone()).collect::<Vec<_>>(),
            s.predicted_recovery_actions,
            "whatif's steps, all of them, in whatif's order"
        );
        assert_eq!(s.acked_lost, Some(0), "{}: {}", s.name, s.detail);
        assert!(s.agree, "{}: {} / {}", s.name, s.observed, s.detail);
        assert!(s.detail.contains("sustained publish"), "{}", s.detail);
    }
    let wipe = r.scenarios.iter().find(|s| s.name == "follower-wipe").unwrap();
    let kinds: Vec<&Action> = wipe
        .recovery_steps
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| &s.action)
        .collect();
    assert!(
        kinds.iter().any(|a| matches!(a, Action::RejoinAsNew { .. })),
        "{kinds:?}"
    );
    assert!(!r.failed());
}

#[test]
fn full_disk_with_whatifs_restart_left_out_disagrees() {
    let r = run_recover(&[FaultKind::FullDisk], &["restart"]);
    let s = &r.scenarios[0];
    if s.skipped.is_some() {
        assert!(!root(), "{s:?}");
        return;
    }
    let steps = s.recovery_steps.as_ref().unwrap();
    assert!(
        !steps.iter().any(|st| matches!(st.action, Action::Restart { .. })),
        "{steps:?}"
    );
    assert!(!s.agree, "without the restart the replica stays stuck: {}", s.detail);
    assert!(r.failed());
}

/// Both followers' stores lost on 5 servers: whatif's steps (peer-remove and rejoin each, then reconcile) bring
/// the stream back on the survivor, and writes resume within whatif's own predicted time for them: reconcile
/// waits the lost-quorum interval and an election (20 s predicted; 20.7 s and 20.8 s measured on nats-server
/// 2.15.1), which the model gave 0 s before (the scenario then disagreed: resumed 22.2 s, bound 17 s).
#[test]
fn two_stores_lost_re_forms_on_the_survivor_within_whatifs_predicted_time() {
    let r = run_recover_on(5, &[FaultKind::StoresLost], &[]);
    let s = &r.scenarios[0];
    assert!(s.skipped.is_none(), "{s:?}");
    let steps = s.recovery_steps.as_ref().expect("--recover reports the steps");
    assert!(steps.iter().all(|st| st.ok), "{steps:#?}");
    let reconcile = steps
        .iter()
        .find(|st| matches!(st.action, Action::Reconcile { .. }))
        .expect("whatif ends with reconcile");
    let predicted = reconcile.predicted_seconds.expect("reconcile has a predicted time");
    assert!(
        reconcile.seconds > 0.5 * predicted && reconcile.seconds < 2.0 * predicted,
        "reconcile took {:.1} s on the lab, whatif predicts {predicted:.1} s",
        reconcile.seconds
    );
    assert_eq!(s.acked_lost, Some(0), "{}", s.detail);
    assert!(s.agree, "{} / {}", s.observed, s.detail);
}

/// A majority of the meta group lost for good on 5 servers (three killed, their stores emptied; the R3 stream
/// keeps its leader and a follower, so its writes go on): whatif's steps start with `$JS.API.META.RESCUE` from
/// the system account (nats-server ≥ 2.15), then peer-remove and rejoin each lost server. With the rescue the
/// meta group leads again and every step succeeds; without it (left out) no leader is elected, the waits and
/// peer-removes fail, and the scenario disagrees.
#[test]
fn meta_quorum_lost_needs_whatifs_rescue_and_comes_back_with_it() {
    let r = run_recover_on(5, &[FaultKind::MetaLost], &[]);
    let s = &r.scenarios[0];
    assert!(s.skipped.is_none(), "{s:?}");
    let steps = s.recovery_steps.as_ref().expect("--recover reports the steps");
    assert!(
        matches!(steps[0].action, Action::MetaRescue { quorum_needed: 2 }),
        "{steps:#?}"
    );
    assert!(steps.iter().all(|st| st.ok), "{steps:#?}");
    assert_eq!(
        steps
            .iter()
            .filter(|st| matches!(st.action, Action::RejoinAsNew { .. }))
            .count(),
        3,
        "each lost server rejoins: {steps:#?}"
    );
    assert_eq!(s.acked_lost, Some(0), "{}", s.detail);
    assert!(s.agree, "{} / {}", s.observed, s.detail);

    let r = run_recover_on(5, &[FaultKind::MetaLost], &["meta_rescue"]);
    let s = &r.scenarios[0];
    // Without the rescue the lab may not come back even by the harness's own heal after the judgement
    // (restarting the wiped servers under their names): the fresh-clone CI run of 5 December 18:13 UTC ended
    // this way ("n1 sees no meta leader yet" 120 s on). The judged result is kept then, with its steps and a
    // note (it was reported `harness_failed` without them), so the steps are asked for whichever way it went.
    let steps = s
        .recovery_steps
        .as_ref()
        .unwrap_or_else(|| panic!("no steps: {} / {}", s.observed, s.detail));
    assert!(!steps.iter().any(|st| matches!(st.action, Action::MetaRescue { .. })));
    assert!(
        steps.iter().any(|st| !st.ok),
        "without the rescue a step fails: {steps:#?}"
    );
    assert!(!s.agree, "{} / {}", s.observed, s.detail);
}
