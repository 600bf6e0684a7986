//! Core publish/subscribe accounting, losses and cut-short paths on the mock publishers and subscribers
//! (`mock::MockPublisher`, `mock::MockSubscriber`), through the core workload as written for the raw
//! path and async-nats (`pubsub::core_run`, `publish`, `subscribe`).

use super::env::Env;
use super::mock::{core_clients, spec, MockPublisher, MockSubscriber};
use super::pubsub::{core_result, core_run, CorePlan};
use super::result::BenchResult;
use super::{export, BenchError, BenchWorkload, ConnSpec};
use std::sync::Arc;
use std::time::Duration;

fn env(pubs: usize, subs: usize, msgs: u64, rate: Option<f64>, timeout: Duration) -> Arc<Env> {
    let mut s = spec(BenchWorkload::Core { pubs, subs }, msgs, 16, timeout);
    s.rate_per_s = rate;
    Arc::new(Env::new(&ConnSpec::default(), &s, "mock".into(), None, None))
}

fn plan(pubs: usize, subs: usize) -> CorePlan {
    CorePlan {
        pubs,
        subs,
        flood: false,
        base: "natsplan.bench.mock".into(),
        subject: "natsplan.bench.mock".into(),
    }
}

async fn run(env: &Arc<Env>, p: CorePlan, pubs: Vec<MockPublisher>, subs: Vec<MockSubscriber>) -> BenchResult {
    let r = core_result(env, &p);
    core_run(env, r, &p, pubs, subs, async { Ok::<(), BenchError>(()) })
        .await
        .unwrap()
}

fn counts(g: &super::result::Group) -> Vec<(String, u64, u64)> {
    g.clients.iter().map(|c| (c.id.clone(), c.msgs, c.bytes)).collect()
}

#[tokio::test]
async fn every_message_is_counted_once_by_publishers_and_by_each_subscriber() {
    let env = env(2, 2, 1000, None, Duration::from_secs(5));
    let (pubs, subs) = core_clients(2, 2, 16, &env.cancel);
    let r = run(&env, plan(2, 2), pubs, subs).await;
    assert_eq!((r.kind.as_str(), r.label.as_str()), ("core", "Pub/Sub"));
    assert_eq!(
        counts(&r.publishers),
        [("P1".into(), 500, 500 * 16), ("P2".into(), 500, 500 * 16)]
    );
    assert_eq!(
        counts(&r.subscribers),
        [("S1".into(), 1000, 1000 * 16), ("S2".into(), 1000, 1000 * 16)]
    );
    // The protocol counters are the client's own (the mock counts what it sent).
    assert_eq!(r.publishers.clients[0].proto_msgs, 500);
    let losses = r.losses.as_ref().expect("losses of a run with subscribers");
    assert_eq!(
        (losses.expected_per_sub, losses.dropped, losses.timed_out),
        (1000, 0, false)
    );
    assert_eq!((r.completion.asked, r.completion.done, r.failed), (1000, 1000, 0));
    assert!(r.completion.complete() && r.warnings.is_empty(), "{:?}", r.warnings);
    // One message in 64 carries its send time: 8 a publisher, read by both subscribers.
    let lat = r.latency_us.as_ref().expect("latency from the stamps");
    assert_eq!(lat.count, 2 * 2 * 8, "{lat:?}");
    assert!(r.publishers.clients[0].latency_us.is_none(), "publishers do not time");
    let v = export::json_value(&r);
    assert_eq!(v["received"].as_u64(), Some(2000), "{v}");
    let csv = String::from_utf8(export::csv(&r)).unwrap();
    assert_eq!(csv.lines().count(), 5, "a header and one row per client:\n{csv}");
}

#[tokio::test]
async fn paced_publishers_stamp_every_message_and_keep_the_rate() {
    let env = env(1, 1, 200, Some(2000.0), Duration::from_secs(5));
    let (pubs, subs) = core_clients(1, 1, 16, &env.cancel);
    let r = run(&env, plan(1, 1), pubs, subs).await;
    let rate = r.rate.as_ref().expect("a --rate run says its rate");
    assert!(rate.sustained, "{rate:?}");
    assert_eq!(r.latency_us.as_ref().map(|l| l.count), Some(200));
    // 200 messages at 2000/s: the last is due 99.5 ms after the first.
    let p = &r.publishers.clients[0];
    assert!(p.end_s - p.start_s >= 0.099, "{p:?}");
}

#[tokio::test]
async fn a_flood_stamps_every_message_and_says_it_is_a_flood() {
    let env = env(1, 1, 300, None, Duration::from_secs(5));
    let (pubs, subs) = core_clients(1, 1, 16, &env.cancel);
    let p = CorePlan {
        flood: true,
        ..plan(1, 1)
    };
    let r = run(&env, p, pubs, subs).await;
    assert_eq!((r.kind.as_str(), r.label.as_str()), ("flood", "Flood"));
    assert_eq!(r.latency_us.as_ref().map(|l| l.count), Some(300), "every message timed");
    assert!(r.completion.complete(), "{:?}", r.warnings);
}

#[tokio::test]
async fn a_subscriber_that_loses_messages_times_out_and_the_loss_is_said() {
    let env = env(1, 2, 100, None, Duration::from_millis(100));
    let (pubs, mut subs) = core_clients(1, 2, 16, &env.cancel);
    subs[1].lose_every = Some(10);
    let r = run(&env, plan(1, 2), pubs, subs).await;
    assert_eq!(counts(&r.subscribers)[1].1, 90);
    let losses = r.losses.as_ref().unwrap();
    assert_eq!((losses.dropped, losses.timed_out), (10, true));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("subscribers received 90 of 100 messages each at least; 10 dropped")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_broken_publisher_stops_and_subscribers_expect_only_what_was_sent() {
    let env = env(2, 1, 200, None, Duration::from_secs(5));
    let (mut pubs, subs) = core_clients(2, 1, 16, &env.cancel);
    pubs[1].broken_at = Some(30);
    let r = run(&env, plan(2, 1), pubs, subs).await;
    assert_eq!(counts(&r.publishers)[1].1, 30);
    assert_eq!(counts(&r.subscribers)[0].1, 130, "100 + 30 sent, all received");
    assert_eq!(r.losses.as_ref().unwrap().dropped, 0);
    assert_eq!((r.failed, r.completion.done), (1, 130));
    assert!(!r.completion.complete());
    assert!(
        r.warnings
            .iter()
            .any(|w| w == "1 operations failed (first: connection reset by peer)"),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_signal_mid_run_cuts_it_short_and_the_publish_it_abandons_is_unacknowledged() {
    let env = env(1, 1, 1000, None, Duration::from_secs(5));
    let (mut pubs, subs) = core_clients(1, 1, 16, &env.cancel);
    pubs[0].signal_at = Some(300);
    let r = run(&env, plan(1, 1), pubs, subs).await;
    assert!(r.completion.interrupted, "{:?}", r.completion);
    assert_eq!(counts(&r.publishers)[0].1, 300);
    assert_eq!((r.completion.done, r.completion.unacknowledged, r.failed), (300, 1, 1));
    // The subscriber is stopped by the run's token, not left waiting for the timeout.
    assert!(!r.losses.as_ref().unwrap().timed_out);
    assert!(r.completion.shortfall().is_some());
}

/// Ping's request loop (`ping::ping_run`) on the mock requester.
mod ping {
    use super::super::mock::{spec, Answer, MockClient};
    use super::super::ping::ping_run;
    use super::super::{BenchWorkload, ConnSpec};
    use super::Env;
    use std::sync::Arc;
    use std::time::Duration;

    const MS: Duration = Duration::from_millis(1);

    fn env(msgs: u64, timeout: Duration) -> Arc<Env> {
        let s = spec(BenchWorkload::Ping, msgs, 32, timeout);
        Arc::new(Env::new(&ConnSpec::default(), &s, "mock".into(), None, None))
    }

    #[tokio::test]
    async fn every_round_trip_is_timed_and_counts_both_ways() {
        let env = env(20, Duration::from_secs(5));
        let c = MockClient::steady(0, MS, &env.cancel);
        let out = ping_run(&env, Ok(c), tokio::spawn(async {})).await.unwrap();
        assert_eq!((out.sample.id.as_str(), out.sample.msgs), ("P1", 20));
        assert_eq!(out.sample.bytes, 20 * 32 * 2, "a request and its echo");
        assert_eq!((out.errors, out.unacked), (0, 0));
        assert_eq!(out.hist.len(), 20);
    }

    #[tokio::test]
    async fn an_unanswered_request_is_counted_at_the_timeout_and_the_run_goes_on() {
        let env = env(4, Duration::from_millis(30));
        let c = MockClient::steady(0, MS, &env.cancel).scripted(vec![Answer::Ok(MS), Answer::Hang]);
        let out = ping_run(&env, Ok(c), tokio::spawn(async {})).await.unwrap();
        assert_eq!((out.sample.msgs, out.errors, out.unacked), (3, 1, 1));
        assert!(out.first_error.unwrap().contains("no answer within 30ms"));
    }

    #[tokio::test]
    async fn a_requester_nobody_answers_gives_up_after_eleven() {
        let env = env(100, Duration::from_secs(5));
        let c = MockClient::steady(0, MS, &env.cancel).scripted(vec![]);
        let c = MockClient {
            rest: Answer::Unanswered("no responders"),
            ..c
        };
        let out = ping_run(&env, Ok(c), tokio::spawn(async {})).await.unwrap();
        assert_eq!((out.sample.msgs, out.errors), (0, 11));
        assert!(out.stopped.is_some());
    }
}
