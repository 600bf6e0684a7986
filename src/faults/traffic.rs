//! The workload of a scenario: connect, create and delete its stream, the idempotent publisher, the
//! read-back.

use super::*;
use crate::bench::{js_failure, JsFailure};
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self, message::PublishMessage as Publish, stream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) async fn connect(urls: &[String]) -> Result<async_nats::Client> {
    let addrs = urls
        .iter()
        .map(|u| u.parse::<async_nats::ServerAddr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("bad lab url: {e}"))?;
    async_nats::ConnectOptions::new()
        .name("natsplan-faults")
        .connection_timeout(Duration::from_secs(5))
        // A server cut off by a partition answers nothing: notice within a few seconds and reconnect to
        // one that can reach the stream, rather than after the default 2 minutes of missed pings.
        .ping_interval(Duration::from_secs(2))
        .retry_on_initial_connect()
        .connect(addrs)
        .await
        .context("cannot connect to the lab")
}

pub(super) async fn create_stream(
    js: &jetstream::Context,
    name: &str,
    subject: &str,
    replicas: usize,
    placement_tag: Option<&str>,
) -> Result<()> {
    let cfg = stream::Config {
        name: name.into(),
        subjects: vec![subject.into()],
        num_replicas: replicas,
        placement: placement_tag.map(|t| stream::Placement {
            cluster: None,
            tags: vec![t.to_string()],
        }),
        storage: stream::StorageType::File,
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    };
    let mut last = None;
    for _ in 0..20 {
        match js.get_or_create_stream(cfg.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(anyhow!(
        "cannot create stream {name}: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    ))
}

pub(super) async fn delete_stream(js: &jetstream::Context, name: &str) {
    let _ = js.delete_stream(name).await;
}

/// The checker's message: the id as payload and as `Nats-Msg-Id` (the publisher's, and the drill's
/// re-publish of a lost one, so the stream's duplicate window treats both alike).
pub(super) fn id_message(id: &str) -> Publish {
    Publish::build().payload(id.to_string().into()).message_id(id)
}

/// A scenario's publisher: what it writes where and how fast, and what it shares with the scenario while
/// it runs.
pub(super) struct Publisher {
    pub(super) js: jetstream::Context,
    pub(super) subject: String,
    /// Ids are `prefix-NNNNNNN`.
    pub(super) prefix: String,
    /// Messages per second.
    pub(super) rate: u32,
    /// How long one try waits for its ack.
    pub(super) timeout: Duration,
    /// Set by the scenario to end the run.
    pub(super) stop: Arc<AtomicBool>,
    /// When the last ack came, in milliseconds since `t0`.
    pub(super) last_ack_ms: Arc<AtomicU64>,
    /// The acknowledged ids as they come (what a producer knows it had acknowledged, for the drill's
    /// re-publish).
    pub(super) acked: Arc<std::sync::Mutex<Vec<String>>>,
    pub(super) t0: Instant,
}

/// Publish `prefix-NNNNNNN` at `rate` until `stop`; each id retried under the same `Nats-Msg-Id` until it is
/// acknowledged (or the run stops), so every id ends ok / failed / unknown exactly once. Acknowledged ids
/// are also appended to `acked` as they come (what a producer knows it had acknowledged, for the drill's
/// re-publish).
pub(super) async fn publisher(p: Publisher) -> Vec<Attempt> {
    let Publisher {
        js,
        subject,
        prefix,
        rate,
        timeout,
        stop,
        last_ack_ms,
        acked,
        t0,
    } = p;
    let period = Duration::from_secs_f64(1.0 / rate as f64);
    let mut out = Vec::new();
    let mut next = tokio::time::Instant::now();
    let mut i = 0u64;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let id = format!("{prefix}-{i:07}");
        let mut maybe_stored = false;
        let (mut tries_refused, mut tries_unknown) = (0u32, 0u32);
        let outcome = loop {
            let msg = id_message(&id);
            let r = tokio::time::timeout(timeout, async {
                match js.send_publish(subject.clone(), msg).await {
                    Ok(f) => f.await.map_err(|e| (true, e.kind())),
                    Err(e) => Err((false, e.kind())),
                }
            })
            .await;
            match r {
                Ok(Ok(ack)) => {
                    let at_s = t0.elapsed().as_secs_f64();
                    last_ack_ms.store((at_s * 1000.0) as u64, Ordering::SeqCst);
                    if let Ok(mut a) = acked.lock() {
                        a.push(id.clone());
                    }
                    break PublishFate::Ok {
                        seq: ack.sequence,
                        at_s,
                    };
                }
                // Sent and then no ack: it may be stored. "No responders" means nobody took it.
                Ok(Err((sent, kind))) => {
                    use async_nats::jetstream::context::PublishErrorKind as K;
                    if sent && !matches!(kind, K::StreamNotFound) {
                        maybe_stored = true;
                        tries_unknown += 1;
                    } else {
                        tries_refused += 1;
                    }
                }
                Err(_) => {
                    maybe_stored = true;
                    tries_unknown += 1;
                }
            }
            if stop.load(Ordering::SeqCst) {
                break if maybe_stored {
                    PublishFate::Unknown
                } else {
                    PublishFate::Failed
                };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        out.push(Attempt {
            id,
            outcome,
            tries_refused,
            tries_unknown,
        });
        next += period;
        let now = tokio::time::Instant::now();
        if next > now {
            tokio::time::sleep_until(next).await;
        } else {
            next = now; // behind after a stall: do not burst to catch up
        }
    }
    out
}

/// Every message of the stream as `(sequence, id)`.
/// Also returns how many sequences between the first and the last were answered "not found".
pub(super) async fn read_all(js: &jetstream::Context, name: &str) -> Result<(Vec<(u64, String)>, u64)> {
    let mut s = None;
    for _ in 0..40 {
        match js.get_stream(name).await {
            Ok(x) => {
                s = Some(x);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
    let mut s = s.ok_or_else(|| anyhow!("stream {name} cannot be read back after healing"))?;
    let info = s.info().await.context("stream info")?;
    let (first, last) = (info.state.first_sequence, info.state.last_sequence);
    let mut out = Vec::new();
    let mut not_found = 0u64;
    if info.state.messages == 0 {
        return Ok((out, 0));
    }
    for seq in first..=last {
        let mut tries = 0;
        loop {
            match s.get_raw_message(seq).await {
                Ok(m) => {
                    out.push((seq, String::from_utf8_lossy(&m.payload).into_owned()));
                    break;
                }
                Err(e) if js_failure(&e) == JsFailure::NotFound => {
                    not_found += 1;
                    break;
                }
                Err(e) => {
                    tries += 1;
                    if tries > 20 {
                        bail!("cannot read message {seq} of {name}: {e}");
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
    }
    Ok((out, not_found))
}
