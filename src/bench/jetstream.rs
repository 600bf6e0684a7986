//! JetStream helpers every JetStream workload shares: the context a run talks through, asset requests
//! retried while a new cluster elects its leaders, the probes that prove a publisher's path to a stream
//! before the clock starts, and opening a stream given with `--stream`. Nothing here creates or fills
//! what a run measures (that is `assets`), and nothing here runs a workload.

use super::env::*;
use super::raw;
use super::{BenchError, BenchSpec, Existing, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
use std::time::{Duration, Instant};

pub(super) fn storage_type(s: Storage) -> jetstream::stream::StorageType {
    match s {
        Storage::File => jetstream::stream::StorageType::File,
        Storage::Memory => jetstream::stream::StorageType::Memory,
    }
}

/// JetStream asset creation retried: right after a cluster starts the meta leader may not be elected
/// yet, and a request can go unanswered (seen on a fresh 3-server loopback cluster: "create stream:
/// jetstream request timed out"). Each attempt waits `timeout`; attempts go on for three of them (at least
/// 15 s). An answer that refuses the asset (no room for its replicas, say) is retried for 5 s only, since
/// it is usually final. Creating with the same configuration again is harmless: the server answers with
/// what exists.
pub(super) async fn retry<T, E: std::fmt::Display, F, Fut>(
    what: &str,
    timeout: Duration,
    mut f: F,
) -> Result<T, BenchError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let t0 = tokio::time::Instant::now();
    let unanswered = (timeout * 3).max(Duration::from_secs(15));
    let refused = timeout.max(Duration::from_secs(5));
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) => {
                let text = e.to_string().to_lowercase();
                let transient = text.contains("timed out") || text.contains("no responders");
                if t0.elapsed() > if transient { unanswered } else { refused } {
                    return Err(cannot(e, what));
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

/// The subject a `bench js` run publishes to: natscli's SUBJECT when given, else the run's own.
pub(super) fn js_subject(env: &Env) -> String {
    env.spec.subjects.base(format!("natsplan.js.{}", env.run_id))
}

pub(super) fn js_context(c: async_nats::Client, env: &Env, window: usize) -> jetstream::Context {
    jetstream::context::ContextBuilder::new()
        .api_prefix(env.conn.js_api_prefix())
        .timeout(env.spec.timeout)
        .ack_timeout(env.spec.timeout)
        .max_ack_inflight(window.max(1))
        .backpressure_on_inflight(true)
        .build(c)
}

/// The raw path's ack inbox of global worker `i` (a prefix: each publish's reply adds its sequence).
pub(super) fn ack_inbox(env: &Env, i: usize) -> String {
    format!("_INBOX.natsplan{}p{}.", env.run_id, i)
}

/// How long a publisher waits for its path to the stream before the run cannot start: routes carry
/// interest within milliseconds on a healthy cluster, and seconds on a loaded one.
pub(super) fn probe_timeout(spec: &BenchSpec) -> Duration {
    spec.timeout.max(Duration::from_secs(10))
}

/// `raw::stream_answers_publish` for an async-nats client: a request on `subject` carrying a stream name
/// no stream has is answered by the stream's leader with an error and stores nothing; the answer proves
/// the client's inbox is known where acks come from. Retried every 250 ms until `timeout`.
pub(super) async fn stream_answers_request(
    c: &async_nats::Client,
    subject: &str,
    timeout: Duration,
) -> Result<(), BenchError> {
    let t0 = Instant::now();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Expected-Stream", raw::PROBE_EXPECTED_STREAM);
    loop {
        let ask = c.request_with_headers(subject.to_string(), headers.clone(), Bytes::new());
        match tokio::time::timeout(Duration::from_millis(250), ask).await {
            Ok(Ok(_)) => return Ok(()),
            // No responders yet (the stream's subject has not reached this server): wait a little.
            Ok(Err(_)) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => {}
        }
        if t0.elapsed() > timeout {
            return Err(BenchError::CannotRun(anyhow!(
                "no answer to a probe publish on {subject} within {:.1} s: the servers do not route this \
                 client's messages to the stream, or its replies back (check the cluster's routes)",
                t0.elapsed().as_secs_f64()
            )));
        }
    }
}

pub(super) type AckFut = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<jetstream::publish::PublishAck, jetstream::context::PublishError>>
            + Send,
    >,
>;

/// The name of the stream a consumer run reads and whether the run made it.
pub(super) fn stream_name(env: &Env, target: &Option<Existing>) -> (String, bool) {
    match target {
        Some(t) => (t.stream.clone(), false),
        None => (format!("natsplan-js-{}", env.run_id), true),
    }
}

/// Open an existing stream named by `--stream`: a stream that is not there is the user's mistake (exit
/// 2), said with the flag; anything else is retried as asset operations are.
pub(super) async fn open_existing(
    env: &Env,
    ctx: &jetstream::Context,
    stream: &str,
) -> Result<jetstream::stream::Stream, BenchError> {
    match ctx.get_stream(stream).await {
        Ok(s) => Ok(s),
        Err(e) if e.to_string().to_lowercase().contains("not found") => Err(BenchError::BadInput(anyhow!(
            "--stream {stream}: the cluster has no stream of that name (`nats stream ls` lists them)"
        ))),
        Err(_) => retry("open stream", env.spec.timeout, || ctx.get_stream(stream)).await,
    }
}
