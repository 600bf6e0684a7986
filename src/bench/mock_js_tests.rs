//! JetStream publish accounting and its cut-short paths on the mock publisher (`mock::MockJsPublisher`),
//! through the publisher loop as written for the raw path and async-nats (`js::js_pub`, `js_result`).

use super::client::Ack;
use super::env::Env;
use super::js::{js_pub, js_result, Load};
use super::mock::{spec, MockJsPublisher};
use super::result::BenchResult;
use super::{export, BenchError, BenchWorkload, ConnSpec, PublishMode, Storage};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn env(pubs: usize, msgs: u64, timeout: Duration) -> Arc<Env> {
    let w = BenchWorkload::Js {
        pubs,
        replicas: 1,
        storage: Storage::Memory,
        publish: PublishMode::Async,
        window: 50,
        consumers: 0,
    };
    Arc::new(Env::new(
        &ConnSpec::default(),
        &spec(w, msgs, 16, timeout),
        "mock".into(),
        None,
        None,
    ))
}

/// Run `pubs` mock publishers (made by `make`) over the env's messages, each with `window` in flight.
async fn run(
    env: &Arc<Env>,
    pubs: usize,
    window: usize,
    make: impl Fn(usize) -> MockJsPublisher,
) -> Result<BenchResult, BenchError> {
    let per = env.per_worker(pubs);
    let mut outs = Vec::new();
    for (i, n) in per.into_iter().enumerate() {
        let load = Load { n, window, pacer: None };
        outs.push(js_pub(env, env.worker(i), make(i), load).await);
    }
    js_result(env, pubs, outs)
}

fn stored(_: u64) -> Option<Ack> {
    Some(Ack::Stored)
}

#[tokio::test]
async fn every_acknowledged_publish_is_counted_once_async_and_sync() {
    for window in [50, 1] {
        let env = env(2, 1000, Duration::from_secs(5));
        let r = run(&env, 2, window, |_| MockJsPublisher::new(stored, &env.cancel))
            .await
            .unwrap();
        let got: Vec<(String, u64, u64, u64)> = r
            .publishers
            .clients
            .iter()
            .map(|c| (c.id.clone(), c.msgs, c.bytes, c.proto_msgs))
            .collect();
        assert_eq!(got, [("P1".into(), 500, 8000, 500), ("P2".into(), 500, 8000, 500)]);
        assert_eq!((r.completion.asked, r.completion.done, r.failed), (1000, 1000, 0));
        assert!(r.completion.complete() && r.warnings.is_empty(), "{:?}", r.warnings);
        assert!(r.latency_us.is_some(), "every ack is timed");
        let v = export::json_value(&r);
        assert_eq!((v["kind"].as_str(), v["done"].as_u64()), (Some("js"), Some(1000)));
    }
}

#[tokio::test]
async fn an_ack_overtaken_by_later_ones_counts_and_the_window_spans_from_the_oldest_in_flight() {
    // Message 0's ack comes only once every later ack there is has come. It was dropped as a stray
    // once more than a window of later acks had overtaken it: 1 of 300 left unacknowledged after the
    // timeout (a live 1,200-message run on a loaded host lost 145 that way).
    let env = env(1, 300, Duration::from_millis(500));
    let peak = Arc::new(AtomicU64::new(0));
    let r = run(&env, 1, 100, |_| {
        let mut p = MockJsPublisher::new(stored, &env.cancel);
        (p.late, p.max_in_flight) = (Some(0), peak.clone());
        p
    })
    .await
    .unwrap();
    assert_eq!(
        (r.published(), r.failed, r.completion.unacknowledged),
        (300, 0, 0),
        "{:?}",
        r.warnings
    );
    assert!(r.completion.complete());
    // The window is the span from the oldest message in flight: with message 0 unanswered, no more
    // than 100 are ever out (a count would have let 199 out).
    assert_eq!(peak.load(Ordering::Relaxed), 100);
}

#[tokio::test]
async fn a_second_answer_to_one_publish_is_not_counted_again() {
    let env = env(1, 100, Duration::from_secs(5));
    let r = run(&env, 1, 10, |_| {
        let mut p = MockJsPublisher::new(stored, &env.cancel);
        p.twice = Some(7);
        p
    })
    .await
    .unwrap();
    assert_eq!((r.published(), r.completion.done, r.failed), (100, 100, 0));
}

#[tokio::test]
async fn refused_acks_are_failures_and_the_run_goes_on() {
    let env = env(1, 100, Duration::from_secs(5));
    let every_tenth = |j: u64| match j % 10 {
        9 => Some(Ack::Refused("{\"error\":{\"code\":503}}".into())),
        _ => Some(Ack::Stored),
    };
    let r = run(&env, 1, 50, |_| MockJsPublisher::new(every_tenth, &env.cancel))
        .await
        .unwrap();
    assert_eq!((r.published(), r.failed, r.completion.unacknowledged), (90, 10, 0));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("10 operations failed (first: {\"error\"")),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn acks_that_never_come_stop_the_publisher_after_the_timeout_as_unacknowledged() {
    let env = env(1, 1000, Duration::from_millis(200));
    let half = |j: u64| (j < 500).then_some(Ack::Stored);
    // Unanswered acks (the client's own timeout) are no answer either.
    let gave_up = |j: u64| Some(if j < 500 { Ack::Stored } else { Ack::Unanswered });
    for answer in [half as fn(u64) -> Option<Ack>, gave_up] {
        let t0 = std::time::Instant::now();
        let r = run(&env, 1, 50, |_| MockJsPublisher::new(answer, &env.cancel))
            .await
            .unwrap();
        assert!(t0.elapsed() >= Duration::from_millis(200), "waited the timeout");
        // The window was full: 50 sent past the last ack, none answered.
        assert_eq!((r.published(), r.completion.unacknowledged, r.failed), (500, 50, 50));
        let stopped = r.completion.stopped.as_deref().unwrap_or_default();
        assert!(stopped.starts_with("50 acks did not arrive within"), "{stopped}");
        assert!(!r.completion.complete());
    }
}

#[tokio::test]
async fn a_broken_connection_ends_the_publisher_and_says_so() {
    let env = env(1, 1000, Duration::from_secs(5));
    let r = run(&env, 1, 50, |_| {
        let mut p = MockJsPublisher::new(stored, &env.cancel);
        p.broken_at = Some(300);
        p
    })
    .await
    .unwrap();
    // Everything sent before the break was flushed and acknowledged.
    assert_eq!((r.published(), r.failed, r.completion.unacknowledged), (300, 0, 0));
    assert!(
        r.warnings
            .iter()
            .any(|w| w == "client P1 stopped: connection reset by peer"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.completion.stopped.as_deref(), Some("connection reset by peer"));
}

#[tokio::test]
async fn a_signal_mid_run_interrupts_it_and_what_is_in_flight_is_unacknowledged() {
    let env = env(1, 1000, Duration::from_secs(5));
    let r = run(&env, 1, 50, |_| {
        let mut p = MockJsPublisher::new(stored, &env.cancel);
        p.signal_at = Some(120);
        p
    })
    .await
    .unwrap();
    assert!(r.completion.interrupted, "{:?}", r.completion);
    assert!(r.published() < 1000 && r.published() >= 100, "{}", r.published());
    assert_eq!(
        r.published() + r.completion.unacknowledged,
        r.publishers.clients[0].proto_msgs
    );
}

#[tokio::test]
async fn no_acknowledged_publish_at_all_cannot_run() {
    let env = env(1, 10, Duration::from_secs(5));
    let refused = |_: u64| Some(Ack::Refused("{\"error\":{\"code\":503}}".into()));
    let e = run(&env, 1, 5, |_| MockJsPublisher::new(refused, &env.cancel))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, BenchError::CannotRun(m) if m.to_string().starts_with("no publish was acknowledged")),
        "{e:?}"
    );
}
