//! JetStream consumer accounting and its cut-short paths on the mock consumer client
//! (`mock::MockReader`), through the per-client loop as written for async-nats's pull consumers
//! (`consume::read_share`, `consumer_result`).

use super::consume::{consumer_result, read_share};
use super::env::Env;
use super::mock::{spec, Answer, MockReader};
use super::result::BenchResult;
use super::{export, BenchError, BenchWorkload, ConnSpec, ConsumeMode, Storage};
use std::sync::Arc;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn env(mode: ConsumeMode, clients: usize, msgs: u64, timeout: Duration) -> Arc<Env> {
    let w = BenchWorkload::Consume {
        mode,
        clients,
        batch: 100,
        replicas: 1,
        storage: Storage::Memory,
        target: None,
    };
    Arc::new(Env::new(
        &ConnSpec::default(),
        &spec(w, msgs, 32, timeout),
        "mock".into(),
        None,
        None,
    ))
}

async fn run(
    env: &Arc<Env>,
    mode: ConsumeMode,
    clients: usize,
    make: impl Fn(usize) -> MockReader,
) -> Result<BenchResult, BenchError> {
    let mut outs = Vec::new();
    for (i, n) in env.per_worker(clients).into_iter().enumerate() {
        outs.push(read_share(env, env.worker(i), make(i), n).await);
    }
    consumer_result(env, mode, clients, outs)
}

#[tokio::test]
async fn every_message_read_is_counted_once_per_client_with_its_bytes() {
    for (mode, kind) in [
        (ConsumeMode::Fetch, "js-fetch"),
        (ConsumeMode::Consume, "js-consume"),
        (ConsumeMode::Ordered, "js-ordered"),
    ] {
        let env = env(mode, 3, 100, Duration::from_secs(5));
        let r = run(&env, mode, 3, |_| MockReader::steady(32, Duration::ZERO, &env.cancel))
            .await
            .unwrap();
        assert_eq!(r.kind, kind);
        let got: Vec<(String, u64, u64, u64)> = r
            .subscribers
            .clients
            .iter()
            .map(|c| (c.id.clone(), c.msgs, c.bytes, c.proto_msgs))
            .collect();
        assert_eq!(
            got,
            [
                ("S1".into(), 34, 34 * 32, 34),
                ("S2".into(), 33, 33 * 32, 33),
                ("S3".into(), 33, 33 * 32, 33)
            ]
        );
        assert_eq!((r.completion.done, r.failed), (100, 0));
        assert!(r.completion.complete() && r.warnings.is_empty(), "{:?}", r.warnings);
        assert!(r.latency_us.is_none(), "consumer runs time no single read");
        let v = export::json_value(&r);
        assert_eq!(
            (v["received"].as_u64(), v["complete"].as_bool()),
            (Some(100), Some(true))
        );
    }
}

#[tokio::test]
async fn a_stream_run_dry_ends_the_client_after_the_timeout_with_an_honest_count() {
    let env = env(ConsumeMode::Fetch, 1, 10, Duration::from_millis(100));
    let r = run(&env, ConsumeMode::Fetch, 1, |_| {
        let mut m = MockReader::steady(32, MS, &env.cancel);
        m.script = vec![Answer::Ok(MS); 6];
        m.rest = Answer::Hang;
        m
    })
    .await
    .unwrap();
    assert_eq!(r.received(), 6);
    assert!(!r.completion.complete(), "{:?}", r.completion);
    assert!(
        r.completion.stopped.is_some(),
        "the client says why it stopped: {:?}",
        r.completion
    );
}

#[tokio::test]
async fn refused_reads_are_failures_and_the_reading_goes_on() {
    let env = env(ConsumeMode::Consume, 1, 10, Duration::from_secs(5));
    let r = run(&env, ConsumeMode::Consume, 1, |_| {
        let mut m = MockReader::steady(32, Duration::ZERO, &env.cancel);
        m.script = vec![Answer::Ok(MS), Answer::Refused("consumer deleted")];
        m
    })
    .await
    .unwrap();
    assert_eq!((r.received(), r.failed), (9, 1));
    assert!(
        r.warnings
            .iter()
            .any(|w| w == "1 operations failed (first: consumer deleted)"),
        "{:?}",
        r.warnings
    );
}

#[tokio::test]
async fn a_signal_mid_read_interrupts_the_run_and_keeps_what_was_read() {
    let env = env(ConsumeMode::Ordered, 1, 100, Duration::from_secs(5));
    let r = run(&env, ConsumeMode::Ordered, 1, |_| {
        let mut m = MockReader::steady(32, Duration::ZERO, &env.cancel);
        m.script = vec![Answer::Ok(MS); 40];
        m.rest = Answer::Signal;
        m
    })
    .await
    .unwrap();
    assert!(r.completion.interrupted, "{:?}", r.completion);
    assert_eq!(r.received(), 40);
}

#[tokio::test]
async fn nothing_read_at_all_cannot_run() {
    let env = env(ConsumeMode::Fetch, 1, 10, Duration::from_millis(50));
    let e = run(&env, ConsumeMode::Fetch, 1, |_| {
        let mut m = MockReader::steady(32, MS, &env.cancel);
        m.rest = Answer::Hang;
        m
    })
    .await
    .unwrap_err();
    assert!(
        matches!(&e, BenchError::CannotRun(m) if m.to_string().starts_with("no message was read")),
        "{e:?}"
    );
}

mod push_ordered {
    use super::super::consume::consumer_result;
    use super::super::mock::MockPushOrdered;
    use super::super::ordered::{read_push, Client, Share};
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn client(env: &Env, i: usize, n: u64) -> Client {
        Client {
            gi: env.worker(i),
            share: Share {
                stream: "natsplan-js-mock".into(),
                filter: String::new(),
                start: 1,
                n,
            },
            sleep: None,
        }
    }

    fn mock(n: u64, per_recv: u64) -> MockPushOrdered {
        MockPushOrdered {
            share: n,
            size: 32,
            per_recv,
            stall_after: None,
            refuse: None,
            got: 0,
            closed: Arc::new(AtomicBool::new(false)),
        }
    }

    #[tokio::test]
    async fn every_client_reads_its_share_once_and_deletes_its_consumer() {
        let env = env(ConsumeMode::OrderedPush, 2, 101, Duration::from_secs(5));
        let mut outs = Vec::new();
        for (i, n) in env.per_worker(2).into_iter().enumerate() {
            let m = mock(n, 7);
            let closed = m.closed.clone();
            let (o, resets) = read_push(&env, m, client(&env, i, n)).await;
            assert!(
                closed.load(Ordering::Relaxed),
                "the consumer is deleted after the share"
            );
            assert_eq!(resets, 0);
            outs.push(o);
        }
        let r = consumer_result(&env, ConsumeMode::OrderedPush, 2, outs).unwrap();
        assert_eq!(r.kind, "js-ordered-push");
        let got: Vec<(String, u64, u64)> = r
            .subscribers
            .clients
            .iter()
            .map(|c| (c.id.clone(), c.msgs, c.bytes))
            .collect();
        assert_eq!(got, [("S1".into(), 51, 51 * 32), ("S2".into(), 50, 50 * 32)]);
        assert!(r.completion.complete() && r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[tokio::test]
    async fn a_stalled_consumer_ends_after_the_timeout_as_one_failed_read() {
        let env = env(ConsumeMode::OrderedPush, 1, 100, Duration::from_millis(150));
        let mut m = mock(100, 10);
        m.stall_after = Some(40);
        let (o, _) = read_push(&env, m, client(&env, 0, 100)).await;
        let r = consumer_result(&env, ConsumeMode::OrderedPush, 1, vec![o]).unwrap();
        assert_eq!((r.received(), r.failed, r.completion.unacknowledged), (40, 1, 1));
        let stopped = r.completion.stopped.as_deref().unwrap_or_default();
        assert!(
            stopped.ends_with("after 40 of 100 (the ordered consumer stalled)"),
            "{stopped}"
        );
    }

    #[tokio::test]
    async fn a_consumer_the_server_refuses_reads_nothing_and_says_why() {
        let env = env(ConsumeMode::OrderedPush, 1, 10, Duration::from_secs(5));
        let mut m = mock(10, 10);
        m.refuse = Some("creating the ordered consumer on stream natsplan-js-mock: insufficient resources");
        let (o, _) = read_push(&env, m, client(&env, 0, 10)).await;
        let e = consumer_result(&env, ConsumeMode::OrderedPush, 1, vec![o]).unwrap_err();
        assert!(
            matches!(&e, BenchError::CannotRun(m) if m.to_string().contains("ordered consumer on stream natsplan-js-mock: insufficient resources")),
            "{e:?}"
        );
    }
}
