use super::*;
use crate::survival::Status;
use crate::units::SyncMode;

fn p(nodes: usize, steps: &[&[&str]]) -> ScenarioPrediction {
    let (site, layout) = model_of_lab(nodes, SyncMode::Interval(120));
    let steps: Vec<Vec<String>> = steps
        .iter()
        .map(|s| s.iter().map(|x| x.to_string()).collect())
        .collect();
    predict(&site, &layout, &steps).unwrap()
}

#[test]
fn the_model_predicts_what_the_ladder_expects() {
    assert!(p(3, &[&["process:n2"]]).status.writable());
    assert!(p(3, &[&["pause:n1"]]).status.writable());
    assert_eq!(p(3, &[&["process:n1", "process:n2"]]).status, Status::Unavailable);
    assert_eq!(
        p(3, &[&["process:n1", "process:n2", "process:n3"]]).status,
        Status::Unavailable
    );
    let rolling = p(3, &[&["process:n1"], &["process:n2"], &["process:n3"]]);
    assert!(rolling.status.writable());
    assert!(!p(3, &[&["process:n1"]]).acked_loss_risk);
    assert!(p(5, &[&["process:n4"]]).status.writable());
    // Whole-site power loss with interval sync: the one case where acknowledged writes are at risk.
    let power = p(3, &[&["power:r1", "power:r2", "power:r3"]]);
    assert!(power.acked_loss_risk, "{power:?}");
    assert!(!p(3, &[&["process:n1", "process:n2", "process:n3"]]).acked_loss_risk);
    let wipe = p(3, &[&["wipe:n2"]]);
    assert!(wipe.status.writable() && !wipe.acked_loss_risk, "{wipe:?}");
}

fn acked_every(times: &[f64]) -> Vec<Attempt> {
    times
        .iter()
        .enumerate()
        .map(|(i, t)| Attempt {
            id: format!("m{i}"),
            outcome: PublishFate::Ok {
                seq: i as u64 + 1,
                at_s: *t,
            },
            tries_refused: 0,
            tries_unknown: 0,
        })
        .collect()
}

fn judged(pred: Status, stall_s: Option<f64>, times: &[f64], inject_s: f64, heal_s: f64) -> ScenarioResult {
    let a = acked_every(times);
    let read: Vec<(u64, String)> = a
        .iter()
        .enumerate()
        .map(|(i, x)| (i as u64 + 1, x.id.clone()))
        .collect();
    let chk = check(&a, &read);
    let mut r = not_run(FaultKind::LeaderKill, String::new());
    r.skipped = None;
    r.replicas = ["n1", "n2", "n3"]
        .iter()
        .map(|s| ReplicaState {
            server: s.to_string(),
            messages: a.len() as u64,
            first_seq: 1,
            last_seq: a.len() as u64,
        })
        .collect();
    r.unavailable_s = longest_gap_s(&a, 0.0);
    let p = ScenarioPrediction {
        status: pred,
        stall_s,
        acked_loss_risk: false,
        acked_loss: AckedLoss::None,
        meta_status: crate::survival::Status::Ok,
        recovery: Vec::new(),
        recovery_actions: Vec::new(),
        recovery_drill_s: Vec::new(),
        recovery_chains: Vec::new(),
    };
    let opts = FaultOptions::full(3);
    let tl = Timeline { inject_s, heal_s };
    let m = Measured {
        attempts: &a,
        chk: &chk,
        tl: &tl,
    };
    judge(&mut r, &p, &m, &opts, 17.0, 3);
    r
}

#[test]
fn judging_compares_gaps_and_stalls_with_the_prediction() {
    // Degraded, one 6 s election gap: agrees. A 30 s gap does not.
    let ok = judged(
        Status::Degraded,
        Some(10.0),
        &[0.5, 1.0, 7.0, 8.0, 20.0, 21.0],
        1.0,
        12.0,
    );
    assert!(ok.agree && ok.observed == "writes_continued", "{ok:?}");
    let slow = judged(Status::Degraded, Some(10.0), &[0.5, 1.0, 31.0, 32.0], 1.0, 12.0);
    assert!(!slow.agree && slow.observed == "stalled_too_long", "{slow:?}");
    // Unavailable: no acks between inject + timeout and heal, resumed soon after: agrees.
    let st = judged(Status::Unavailable, None, &[0.5, 1.0, 1.5, 15.0, 16.0], 1.0, 10.0);
    assert!(st.agree && st.observed == "stalled_until_healed", "{st:?}");
    // Acks while quorum was supposedly lost: disagrees.
    let w = judged(Status::Unavailable, None, &[0.5, 1.0, 5.0, 15.0], 1.0, 10.0);
    assert!(!w.agree && w.observed == "writes_without_quorum", "{w:?}");
    // Never resumed after healing: disagrees.
    let never = judged(Status::Unavailable, None, &[0.5, 1.0], 1.0, 10.0);
    assert!(!never.agree, "{never:?}");
}

#[test]
fn power_scenarios_predict_the_acked_loss_risk_only_with_delayed_sync() {
    for (sync, risk) in [(SyncMode::Interval(120), true), (SyncMode::Always, false)] {
        let (site, layout) = model_of_lab(3, sync);
        let peers: Vec<String> = ["n1", "n2", "n3"].iter().map(|s| s.to_string()).collect();
        let l = pin_test_stream(&site, &layout, &peers).unwrap();
        let p = |steps: &[&[&str]]| {
            let steps: Vec<Vec<String>> = steps
                .iter()
                .map(|s| s.iter().map(|x| x.to_string()).collect())
                .collect();
            predict(&site, &l, &steps).unwrap()
        };
        let one = p(&[&["server:n1"]]);
        assert!(!one.acked_loss_risk && one.status.writable(), "{one:?}");
        assert_eq!(p(&[&["server:n1", "server:n2"]]).acked_loss_risk, risk, "{sync}");
        assert_eq!(p(&[&["server:n1", "server:n2", "server:n3"]]).acked_loss_risk, risk);
        // The crash-plus-pause steps as power-crash-pause reports them.
        let cp = p(&[&["pause:n2"], &["pause:n2", "server:n1", "pause:n3"]]);
        assert_eq!(cp.acked_loss_risk, risk, "{cp:?}");
        assert_eq!(cp.status, Status::Unavailable);
        // How the risk shows: a quorum's power with the third replica up needs an election race;
        // every replica's power, or the crash plus pause, leaves no survivor with the writes.
        let (possible, likely) = match risk {
            true => (AckedLoss::Possible, AckedLoss::Likely),
            false => (AckedLoss::None, AckedLoss::None),
        };
        assert_eq!(one.acked_loss, AckedLoss::None);
        assert_eq!(p(&[&["server:n1", "server:n2"]]).acked_loss, possible, "{sync}");
        assert_eq!(p(&[&["server:n1", "server:n2", "server:n3"]]).acked_loss, likely);
        assert_eq!(cp.acked_loss, likely, "{cp:?}");
        // The third replica killed (not powered off) too: none stayed up with the writes.
        assert_eq!(
            p(&[&["server:n1", "server:n2", "process:n3"]]).acked_loss,
            likely,
            "{sync}"
        );
    }
}

#[test]
fn a_quorums_power_on_five_servers_is_a_possible_loss_a_whole_racks_likely() {
    let (site, layout) = model_of_lab(5, SyncMode::Interval(120));
    let peers: Vec<String> = ["n1", "n2", "n3"].iter().map(|s| s.to_string()).collect();
    let l = pin_test_stream(&site, &layout, &peers).unwrap();
    let p = |sels: &[&str]| predict(&site, &l, &[sels.iter().map(|x| x.to_string()).collect()]).unwrap();
    // The stream's replicas n1..n3: two of them powered off, n3 up with every write.
    assert_eq!(p(&["server:n1", "server:n2"]).acked_loss, AckedLoss::Possible);
    // The servers without a replica do not count.
    assert_eq!(p(&["server:n4", "server:n5"]).acked_loss, AckedLoss::None);
    let all: Vec<String> = (1..=5).map(|i| format!("server:n{i}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    assert_eq!(p(&all).acked_loss, AckedLoss::Likely);
}

#[test]
fn diverged_replicas_after_a_predicted_loss_are_reported_not_a_disagreement() {
    let a = acked_every(&[0.5, 1.0, 1.5, 15.0, 16.0]);
    // m2 (acked at 1.5 s) is gone; one replica kept it.
    let read: Vec<(u64, String)> = vec![(1, "m0".into()), (2, "m1".into()), (3, "m3".into()), (4, "m4".into())];
    let chk = check(&a, &read);
    assert_eq!(chk.acked_lost, 1);
    let judge_with = |risk: bool| {
        let mut r = not_run(FaultKind::PowerQuorum, String::new());
        r.skipped = None;
        r.replicas = [("n1", 4), ("n2", 4), ("n3", 5)]
            .iter()
            .map(|(s, m)| ReplicaState {
                server: s.to_string(),
                messages: *m,
                first_seq: 1,
                last_seq: *m,
            })
            .collect();
        r.unavailable_s = longest_gap_s(&a, 0.0);
        let p = ScenarioPrediction {
            status: Status::Unavailable,
            stall_s: None,
            acked_loss_risk: risk,
            acked_loss: if risk { AckedLoss::Possible } else { AckedLoss::None },
            meta_status: Status::Ok,
            recovery: Vec::new(),
            recovery_actions: Vec::new(),
            recovery_drill_s: Vec::new(),
            recovery_chains: Vec::new(),
        };
        let opts = FaultOptions::full(3);
        let tl = Timeline {
            inject_s: 1.6,
            heal_s: 10.0,
        };
        let m = Measured {
            attempts: &a,
            chk: &chk,
            tl: &tl,
        };
        judge(&mut r, &p, &m, &opts, 17.0, 3);
        r
    };
    let predicted = judge_with(true);
    assert!(predicted.agree && predicted.observed == "acked_lost", "{predicted:?}");
    assert!(predicted.detail.contains("split-brain"), "{}", predicted.detail);
    let surprise = judge_with(false);
    assert!(!surprise.agree, "{surprise:?}");
}

#[test]
fn store_archives_copy_the_whole_tree() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("jetstream/$G/streams/s")).unwrap();
    std::fs::write(src.path().join("jetstream/$G/streams/s/1.blk"), b"abc").unwrap();
    let dst = tempfile::tempdir().unwrap();
    copy_tree(src.path(), &dst.path().join("n1-store")).unwrap();
    let got = std::fs::read(dst.path().join("n1-store/jetstream/$G/streams/s/1.blk")).unwrap();
    assert_eq!(got, b"abc");
}

#[test]
fn max_file_store_is_set_in_the_jetstream_block() {
    let c = "jetstream {\n  store_dir: \"/x\"\n  sync_interval: \"2m\"\n}\n";
    let got = set_max_file_store(c, 1024).unwrap();
    assert_eq!(
        got,
        "jetstream {\n  store_dir: \"/x\"\n  max_file_store: 1024\n  sync_interval: \"2m\"\n}\n"
    );
    // An existing limit is replaced, not doubled.
    let again = set_max_file_store(&got, 7).unwrap();
    assert_eq!(again.matches("max_file_store").count(), 1, "{again}");
    assert!(again.contains("max_file_store: 7"));
    assert!(set_max_file_store("listen: 1\n", 5).is_none());
}

#[test]
fn predictions_follow_where_the_stream_was_placed() {
    let (site, layout) = model_of_lab(5, SyncMode::Interval(120));
    let peers: Vec<String> = ["n1", "n2", "n3"].iter().map(|s| s.to_string()).collect();
    let pinned = pin_test_stream(&site, &layout, &peers).unwrap();
    let st = |l: &Layout, sel: &[&str]| {
        let steps = vec![sel.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
        predict(&site, l, &steps).unwrap().status
    };
    // Two servers that hold no replica: the pinned stream is untouched; the free one might have been.
    assert_eq!(st(&pinned, &["process:n4", "process:n5"]), Status::Ok);
    assert_eq!(st(&layout, &["process:n4", "process:n5"]), Status::Unavailable);
    // A partitioned replica holder: degraded (an election if it led); two of them: unavailable.
    assert_eq!(st(&pinned, &["net:r1"]), Status::Degraded);
    assert_eq!(st(&pinned, &["net:r1", "net:r2"]), Status::Unavailable);
    // A full store is that replica out of service.
    assert_eq!(st(&pinned, &["full:n3"]), Status::Degraded);
    assert!(pin_test_stream(&site, &layout, &["x9".to_string()]).is_err());
}

#[test]
fn rack_scenarios_run_only_with_a_plan_or_when_asked() {
    assert!(!FaultKind::ladder().iter().any(|k| k.per_rack()));
    assert_eq!(FaultKind::ladder().len(), 15);
    assert!(FaultKind::ALL.iter().filter(|k| k.per_rack()).count() == 3);
    // Every power scenario's name starts with `power`, and only theirs do.
    for k in FaultKind::ALL {
        assert_eq!(k.is_power(), k.name().starts_with("power"), "{}", k.name());
    }
    assert_eq!(FaultKind::parse("power-loss").unwrap(), FaultKind::PowerAll);
    assert!(FaultKind::ladder().iter().filter(|k| k.needs_net()).count() == 1);
}

#[test]
fn a_wiped_server_gets_a_new_name_in_its_conf() {
    let c = "# x\nserver_name: n2\nlisten: 127.0.0.1:1\n";
    assert_eq!(
        rename_server(c, "n2", "n2-w").unwrap(),
        "# x\nserver_name: n2-w\nlisten: 127.0.0.1:1\n"
    );
    assert!(rename_server("listen: 1\n", "n2", "n2-w").is_none());
}

#[test]
fn scenario_names_round_trip_and_typos_are_explained() {
    for k in FaultKind::ALL {
        assert_eq!(FaultKind::parse(k.name()).unwrap(), k);
    }
    let e = FaultKind::parse("leader-kil").unwrap_err().to_string();
    assert!(e.contains("leader-kill"), "{e}");
}
