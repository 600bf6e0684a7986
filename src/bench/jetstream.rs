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
pub(super) async fn retry<T, E: std::error::Error + 'static, F, Fut>(
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
                let transient = js_failure(&e) == JsFailure::Unanswered;
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
        Err(e) if js_failure(&e) == JsFailure::NotFound => Err(BenchError::BadInput(anyhow!(
            "--stream {stream}: the cluster has no stream of that name (`nats stream ls` lists them)"
        ))),
        Err(_) => retry("open stream", env.spec.timeout, || ctx.get_stream(stream)).await,
    }
}

/// What an async-nats JetStream error means to a run, read from the error kinds and the JetStream API
/// error codes along its source chain, never from its text (which async-nats may reword).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsFailure {
    /// The stream, consumer, bucket or message asked for is not there.
    NotFound,
    /// Nobody answered in time (a timeout, no responders, JetStream not up yet): worth waiting for.
    Unanswered,
    /// The servers refused for want of room (insufficient resources; storage, memory or account
    /// limits exceeded).
    NoRoom,
    /// Anything else.
    Other,
}

/// `JsFailure` of `e`: the first error along `e` and its sources that says one.
pub fn js_failure(e: &(dyn std::error::Error + 'static)) -> JsFailure {
    let mut at = Some(e);
    while let Some(e) = at {
        if let Some(f) = one_failure(e) {
            return f;
        }
        at = e.source();
    }
    JsFailure::Other
}

/// A JetStream API error code's meaning.
fn of_code(c: jetstream::ErrorCode) -> JsFailure {
    use jetstream::ErrorCode as C;
    if [C::STREAM_NOT_FOUND, C::CONSUMER_NOT_FOUND, C::NO_MESSAGE_FOUND].contains(&c) {
        JsFailure::NotFound
    } else if [
        C::INSUFFICIENT_RESOURCES,
        C::STORAGE_RESOURCES_EXCEEDED,
        C::MEMORY_RESOURCES_EXCEEDED,
        C::ACCOUNT_RESOURCES_EXCEEDED,
    ]
    .contains(&c)
    {
        JsFailure::NoRoom
    } else {
        JsFailure::Other
    }
}

/// The meaning of one error of the chain, when its type and kind say one (else its source is asked).
fn one_failure(e: &(dyn std::error::Error + 'static)) -> Option<JsFailure> {
    use jetstream::context::{self as c, CreateStreamErrorKind as Cs, PublishErrorKind as P, RequestErrorKind as R};
    use jetstream::stream::{self as s, ConsumerErrorKind as Co, LastRawMessageErrorKind as Raw};
    if let Some(x) = e.downcast_ref::<jetstream::Error>() {
        return Some(of_code(x.error_code()));
    }
    if let Some(x) = e.downcast_ref::<c::RequestError>() {
        return matches!(x.kind(), R::TimedOut | R::NoResponders).then_some(JsFailure::Unanswered);
    }
    if let Some(x) = e.downcast_ref::<c::GetStreamError>() {
        if let c::GetStreamErrorKind::JetStream(j) = x.kind() {
            return Some(of_code(j.error_code()));
        }
    }
    if let Some(x) = e.downcast_ref::<c::CreateStreamError>() {
        return match x.kind() {
            Cs::TimedOut | Cs::JetStreamUnavailable => Some(JsFailure::Unanswered),
            Cs::NotFound => Some(JsFailure::NotFound),
            Cs::JetStream(j) => Some(of_code(j.error_code())),
            _ => None,
        };
    }
    if let Some(x) = e.downcast_ref::<c::CreateKeyValueError>() {
        return (x.kind() == c::CreateKeyValueErrorKind::TimedOut).then_some(JsFailure::Unanswered);
    }
    if let Some(x) = e.downcast_ref::<s::ConsumerError>() {
        return match x.kind() {
            Co::TimedOut => Some(JsFailure::Unanswered),
            Co::JetStream(j) => Some(of_code(j.error_code())),
            _ => None,
        };
    }
    if let Some(x) = e.downcast_ref::<s::RawMessageError>() {
        return match x.kind() {
            Raw::NoMessageFound => Some(JsFailure::NotFound),
            Raw::JetStream(j) => Some(of_code(j.error_code())),
            _ => None,
        };
    }
    if let Some(x) = e.downcast_ref::<c::PublishError>() {
        return match x.kind() {
            P::TimedOut => Some(JsFailure::Unanswered),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_nats::jetstream::context::{
        GetStreamError, GetStreamErrorKind, KeyValueError, KeyValueErrorKind, PublishError, PublishErrorKind,
        RequestError, RequestErrorKind,
    };
    use async_nats::jetstream::stream::{ConsumerError, ConsumerErrorKind, RawMessageError, RawMessageErrorKind};

    fn api(code: u64, description: &str) -> jetstream::Error {
        let json = format!(r#"{{"code":400,"err_code":{code},"description":"{description}"}}"#);
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn failures_are_read_from_kinds_and_codes_along_the_source_chain() {
        let missing = || GetStreamError::new(GetStreamErrorKind::JetStream(api(10059, "stream not found")));
        assert_eq!(js_failure(&missing()), JsFailure::NotFound);
        // A KV bucket's delete wraps the stream's error: its source says it.
        let kv = KeyValueError::with_source(KeyValueErrorKind::JetStream, missing());
        assert_eq!(js_failure(&kv), JsFailure::NotFound);
        let gone = ConsumerError::new(ConsumerErrorKind::JetStream(api(10014, "consumer not found")));
        assert_eq!(js_failure(&gone), JsFailure::NotFound);
        assert_eq!(
            js_failure(&RawMessageError::new(RawMessageErrorKind::NoMessageFound)),
            JsFailure::NotFound
        );
        let full = PublishError::with_source(PublishErrorKind::Other, api(10047, "insufficient storage"));
        assert_eq!(js_failure(&full), JsFailure::NoRoom);
        let unanswered = GetStreamError::with_source(
            GetStreamErrorKind::Request,
            RequestError::new(RequestErrorKind::NoResponders),
        );
        assert_eq!(js_failure(&unanswered), JsFailure::Unanswered);
        assert_eq!(
            js_failure(&PublishError::new(PublishErrorKind::TimedOut)),
            JsFailure::Unanswered
        );
    }

    #[test]
    fn the_text_of_an_error_decides_nothing() {
        // Says "not found" and "insufficient resources" in words, with codes that mean neither.
        let e = GetStreamError::new(GetStreamErrorKind::JetStream(api(10999, "not found")));
        assert_eq!(js_failure(&e), JsFailure::Other);
        let e = PublishError::with_source(PublishErrorKind::Other, std::io::Error::other("insufficient resources"));
        assert_eq!(js_failure(&e), JsFailure::Other);
    }
}
