//! Bench accounting, its cut-short paths and its output on the mock client (`bench::mock`), through the
//! direct-get workload as written for the real client (`get::get_workers`).

use super::env::{Env, Share, Slot};
use super::get::get_workers;
use super::mock::{spec, Answer, MockClient};
use super::{export, BenchError, BenchWorkload, ConnSpec, Storage};
use std::sync::Arc;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn workload(clients: usize) -> BenchWorkload {
    BenchWorkload::JsGet {
        clients,
        replicas: 1,
        storage: Storage::Memory,
    }
}

fn env(clients: usize, msgs: u64, timeout: Duration, share: Option<Share>) -> Arc<Env> {
    let s = spec(workload(clients), msgs, 64, timeout);
    Arc::new(Env::new(&ConnSpec::default(), &s, "mock".into(), share, None))
}

/// Steady clients for `env`, each starting at its first operation.
fn steady(env: &Env, clients: usize) -> Vec<MockClient> {
    let per = env.per_worker(clients);
    (0..clients)
        .map(|i| MockClient::steady(per[..i].iter().sum(), MS, &env.cancel))
        .collect()
}

#[tokio::test]
async fn every_operation_is_counted_once_and_the_outputs_agree() {
    let env = env(3, 100, Duration::from_secs(5), None);
    let mut clients = steady(&env, 3);
    for c in &mut clients {
        c.wire_bytes = 100;
    }
    let r = get_workers(&env, clients).await.unwrap();
    assert_eq!(r.kind, "js-get");
    // 100 over 3 clients: 34, 33, 33, each named S1.. and sized by --size.
    let got: Vec<(String, u64, u64)> = r
        .subscribers
        .clients
        .iter()
        .map(|c| (c.id.clone(), c.msgs, c.bytes))
        .collect();
    assert_eq!(
        got,
        [
            ("S1".into(), 34, 34 * 64),
            ("S2".into(), 33, 33 * 64),
            ("S3".into(), 33, 33 * 64)
        ]
    );
    assert_eq!(r.subscribers.clients[0].proto_bytes, 34 * 100);
    assert_eq!((r.completion.asked, r.completion.done, r.failed), (100, 100, 0));
    assert!(r.completion.complete() && r.warnings.is_empty(), "{:?}", r.warnings);
    let lat = r.latency_us.as_ref().expect("latency of every get");
    assert!(lat.p50 >= 1_000.0, "each get took at least 1 ms: {lat:?}");
    // The three outputs say the same counts.
    let v = export::json_value(&r);
    assert_eq!(
        (v["done"].as_u64(), v["received"].as_u64(), v["complete"].as_bool()),
        (Some(100), Some(100), Some(true))
    );
    let csv = String::from_utf8(export::csv(&r)).unwrap();
    assert_eq!(csv.lines().count(), 4, "a header and one row per client:\n{csv}");
    let text = String::from_utf8(export::text(&r)).unwrap();
    assert!(text.contains("(34 msgs)") && text.contains("(33 msgs)"), "{text}");
}

#[tokio::test]
async fn refusals_and_unanswered_gets_are_counted_apart_and_the_first_is_said() {
    let env = env(1, 10, Duration::from_secs(5), None);
    let c = MockClient::steady(0, MS, &env.cancel).scripted(vec![
        Answer::Ok(MS),
        Answer::Refused("sequence 2: 3 bytes, expected 64"),
        Answer::Unanswered("no answer"),
    ]);
    let r = get_workers(&env, vec![c]).await.unwrap();
    assert_eq!((r.completion.done, r.failed, r.completion.unacknowledged), (8, 2, 1));
    assert!(!r.completion.complete());
    assert!(
        r.warnings
            .iter()
            .any(|w| w == "2 operations failed (first: sequence 2: 3 bytes, expected 64)"),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_get_nobody_answers_ends_at_the_timeout_and_the_run_goes_on() {
    // --timeout 50 ms: the bound is the timeout plus 500 ms.
    let env = env(1, 3, Duration::from_millis(50), None);
    let c = MockClient::steady(0, MS, &env.cancel).scripted(vec![Answer::Hang]);
    let t0 = std::time::Instant::now();
    let r = get_workers(&env, vec![c]).await.unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(550));
    assert_eq!((r.completion.done, r.completion.unacknowledged), (2, 1));
    assert!(r.warnings[0].contains("no answer within 550ms"), "{:?}", r.warnings);
}

#[tokio::test]
async fn a_signal_mid_run_cuts_it_short_and_counts_the_get_in_flight_as_unanswered() {
    let env = env(2, 20, Duration::from_secs(5), None);
    let mut clients = steady(&env, 2);
    clients[1] = MockClient::steady(10, MS, &env.cancel).scripted(vec![
        Answer::Ok(MS),
        Answer::Ok(MS),
        Answer::Ok(MS),
        Answer::Signal,
    ]);
    let r = get_workers(&env, clients).await.unwrap();
    assert!(r.completion.interrupted, "{:?}", r.completion);
    // S2 did 3 and abandoned its 4th; S1 stopped at its next operation after the signal.
    assert_eq!(r.subscribers.clients[1].msgs, 3);
    assert!(
        r.completion.done < 20 && r.completion.unacknowledged >= 1,
        "{:?}",
        r.completion
    );
    assert!(r.completion.shortfall().is_some());
}

#[tokio::test]
async fn a_run_whose_every_get_is_refused_gives_up_and_cannot_run() {
    let env = env(1, 1000, Duration::from_secs(5), None);
    let c = MockClient::steady(0, MS, &env.cancel);
    let c = MockClient {
        rest: Answer::Refused("stream not found"),
        ..c
    };
    let Err(BenchError::CannotRun(e)) = get_workers(&env, vec![c]).await else {
        panic!("a run with no get answered cannot run")
    };
    let e = format!("{e:#}");
    assert!(
        e.starts_with("no direct get succeeded: 100 operations failed (first: stream not found)"),
        "{e}"
    );
}

#[tokio::test]
async fn an_agents_share_runs_its_global_stretch_and_counts_only_what_it_was_asked() {
    // Workers 2 and 3 of a 4-worker, 100-get run spread over agents.
    let share = Share {
        run_id: "mock".into(),
        origin: 2,
        workers: vec![
            Slot {
                index: 2,
                msgs: 25,
                first: 50,
            },
            Slot {
                index: 3,
                msgs: 25,
                first: 75,
            },
        ],
        subs: vec![],
        total_workers: 4,
        total_subs: 0,
        total_msgs: 100,
    };
    let env = env(2, 100, Duration::from_secs(5), Some(share));
    // The getters read from sequence 1 on every agent (local offsets 0 and 25, not the slots' global
    // firsts 50 and 75): what the workload does today, kept as it is. A mock client's script starts at
    // its first operation, so a get outside that stretch would fail the test (`j - first`).
    let clients = vec![
        MockClient::steady(0, MS, &env.cancel),
        MockClient::steady(25, MS, &env.cancel),
    ];
    let r = get_workers(&env, clients).await.unwrap();
    assert_eq!((r.completion.asked, r.completion.done), (50, 50));
    assert!(r.completion.complete());
}

#[tokio::test]
async fn agents_split_a_run_and_their_merge_counts_as_one_large_client_would() {
    use crate::agent::merge::{merge, Part};
    use crate::agent::split::{local_workload, split};
    let whole = spec(workload(4), 100, 64, Duration::from_secs(5));
    let mut outs = Vec::new();
    for (k, a) in split(&whole.workload, 100, 2, 0).iter().enumerate() {
        let share = Share {
            run_id: "mock".into(),
            origin: (k + 1) as u16,
            workers: a.workers.clone(),
            subs: a.subs.clone(),
            total_workers: 4,
            total_subs: 0,
            total_msgs: 100,
        };
        let mut local = whole.clone();
        local.workload = local_workload(&whole.workload, a);
        local.msgs = a.workers.iter().map(|w| w.msgs).sum();
        let env = Arc::new(Env::new(&ConnSpec::default(), &local, "mock".into(), Some(share), None));
        let clients = steady(&env, a.workers.len());
        let r = get_workers(&env, clients).await.unwrap();
        outs.push(super::workload::share_output(&env, r));
    }
    // Agent 1 ran workers 1 and 3, agent 2 workers 2 and 4: each names its clients by their global index.
    let ids =
        |o: &super::ShareOutput| -> Vec<String> { o.result.subscribers.clients.iter().map(|c| c.id.clone()).collect() };
    assert_eq!(
        (ids(&outs[0]), ids(&outs[1])),
        (vec!["S1".into(), "S3".into()], vec!["S2".into(), "S4".into()])
    );
    let parts: Vec<Part> = outs
        .iter()
        .enumerate()
        .map(|(k, o)| Part {
            name: if k == 0 { "a1" } else { "a2" },
            result: &o.result,
            hist: &o.hist,
            start_s: o.start_s,
        })
        .collect();
    let (r, hist) = merge(&whole, "mock", &parts);
    let merged: Vec<(String, u64)> = r.subscribers.clients.iter().map(|c| (c.id.clone(), c.msgs)).collect();
    assert_eq!(
        merged,
        [
            ("S1".into(), 25),
            ("S2".into(), 25),
            ("S3".into(), 25),
            ("S4".into(), 25)
        ]
    );
    assert_eq!((r.completion.asked, r.completion.done, r.failed), (100, 100, 0));
    assert!(r.completion.complete(), "{:?}", r.completion);
    assert_eq!(hist.len(), 100, "every get's latency, once");
    assert_eq!(r.params["agents"], "2");
}

fn kv_env(msgs: u64, rate: f64, cutoff: Duration) -> Arc<Env> {
    let mut s = spec(
        BenchWorkload::Kv {
            clients: 1,
            replicas: 1,
            storage: Storage::Memory,
            publish: super::PublishMode::Sync,
            window: 1,
        },
        msgs,
        64,
        Duration::from_secs(5),
    );
    s.rate_per_s = Some(rate);
    s.backlog_cutoff = cutoff;
    Arc::new(Env::new(&ConnSpec::default(), &s, "mock".into(), None, None))
}

#[tokio::test]
async fn a_rate_the_client_keeps_up_with_is_sustained() {
    let env = kv_env(20, 200.0, Duration::from_millis(200));
    let c = MockClient::steady(0, MS, &env.cancel);
    let t0 = std::time::Instant::now();
    let r = super::kv::kv_workers(&env, vec![c], false).await.unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(95),
        "paced at 200/s: 20 puts take 95 ms or more"
    );
    assert_eq!((r.kind.as_str(), r.completion.done), ("kv", 20));
    assert_eq!(r.publishers.clients[0].id, "P1");
    let rate = r.rate.as_ref().expect("a paced run says its rate");
    assert!(rate.sustained && !r.completion.rate_cutoff, "{rate:?}");
    assert!(r.completion.complete());
}

#[tokio::test]
async fn a_rate_the_client_cannot_keep_up_with_is_cut_off_at_the_backlog_limit() {
    // 1,000 puts/s asked of a client that takes 5 ms a put: 20 ms behind after about 5 puts.
    let env = kv_env(200, 1000.0, Duration::from_millis(20));
    let c = MockClient::steady(0, 5 * MS, &env.cancel);
    let r = super::kv::kv_workers(&env, vec![c], false).await.unwrap();
    assert!(r.completion.rate_cutoff, "{:?}", r.completion);
    assert!(r.completion.done < 50, "{:?}", r.completion);
    assert!(!r.rate.as_ref().unwrap().sustained);
    assert!(
        r.warnings.iter().any(|w| w == "the requested rate was not sustained"),
        "{:?}",
        r.warnings
    );
    // A rate cut-off is a finished run: nothing unacknowledged, nothing interrupted.
    assert!(
        r.completion.complete() && r.completion.unacknowledged == 0,
        "{:?}",
        r.completion
    );
}

#[tokio::test]
async fn an_object_run_never_gives_up_early_since_each_object_is_many_chunks() {
    let s = spec(
        BenchWorkload::Obj {
            op: super::ObjOp::Put,
            clients: 1,
            replicas: 1,
            storage: Storage::Memory,
        },
        150,
        64,
        Duration::from_secs(5),
    );
    let env = Arc::new(Env::new(&ConnSpec::default(), &s, "mock".into(), None, None));
    let c = MockClient {
        rest: Answer::Refused("object o0 exists already"),
        ..MockClient::steady(0, MS, &env.cancel)
    };
    let Err(BenchError::CannotRun(e)) = super::obj::obj_workers(&env, super::ObjOp::Put, vec![c]).await else {
        panic!("no object put succeeded: cannot run")
    };
    // All 150 tried (a direct get gives up after 100 failures with none answered).
    let e = format!("{e:#}");
    assert!(
        e.starts_with("no object operation succeeded: 150 operations failed (first: object o0 exists already)"),
        "{e}"
    );
}
