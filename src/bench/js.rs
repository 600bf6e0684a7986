//! JetStream publishing: the asynchronous and synchronous publishers written once against
//! `client::JsPublisher` (`js_pub`; adapters for the raw protocol path and async-nats in `js_clients`),
//! and natscli's atomic batches (async-nats only, `js_pub_atomic`).

use super::client::{Ack, JsPublisher};
use super::js_clients::{NatsJsPublisher, RawJsPublisher};
use super::raw::{self};
use super::result::{new_hist, BenchResult, ClientSample, LatencySummary};
use super::{assets::*, env::*, exec::*, jetstream::*};
use super::{BenchError, PublishMode, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
use hdrhistogram::Histogram;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a JetStream publish run does: publishers (`mode`, `window` in flight) and the readers reading every
/// message while they write (`bench js --consumers`; 0: none).
#[derive(Debug, Clone, Copy)]
pub(super) struct JsLoad {
    pub(super) pubs: usize,
    pub(super) mode: PublishMode,
    pub(super) window: usize,
    pub(super) readers: usize,
}

pub(super) async fn js(
    env: &Arc<Env>,
    load: JsLoad,
    replicas: usize,
    storage: Storage,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let JsLoad { pubs, mode, window, .. } = load;
    let stream = format!("natsplan-js-{}", env.run_id);
    let subject = js_subject(env);
    let on = &spec.subjects;
    let mut r = on_own_stream(env, &stream, pubs, || async {
        // The readers' consumers exist and have their leaders before the publishers connect.
        let readers = super::consume::concurrent_readers(env, &stream, load.readers).await?;
        js_run(env, pubs, &subject, on, mode, window, readers).await
    })
    .await?;
    if load.readers > 0 {
        r.params.insert("consumers".into(), load.readers.to_string());
    }
    r.label = mode.label().into();
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("storage".into(), format!("{storage:?}").to_lowercase());
    r.params.insert("stream".into(), stream);
    spec.subjects.record(&spec.subjects.capture(&subject), &mut r.params);
    if mode == PublishMode::Async {
        r.params.insert("window".into(), window.to_string());
    }
    if mode == PublishMode::Atomic {
        r.params.insert("batch".into(), window.to_string());
    }
    Ok(r)
}

/// Publish to a stream that exists already: to `--subject`, else the stream's first subject (which must
/// then be a literal subject). Nothing is created or deleted.
pub(super) async fn js_existing(
    env: &Arc<Env>,
    pubs: usize,
    mode: PublishMode,
    window: usize,
    target: &super::Existing,
) -> Result<BenchResult, BenchError> {
    let subject = match &target.subject {
        Some(s) => s.clone(),
        None => {
            let admin = env.connect(0, "admin").await?;
            let ctx = js_context(admin, env, 1);
            let s = open_existing(env, &ctx, &target.stream).await?;
            let subjects = s.cached_info().config.subjects.clone();
            match subjects.first() {
                Some(x) if !x.contains('*') && !x.contains('>') => x.clone(),
                Some(x) => {
                    return Err(BenchError::BadInput(anyhow!(
                        "stream {}'s first subject {x} is a wildcard: give the subject to publish to with --subject",
                        target.stream
                    )))
                }
                None => {
                    return Err(BenchError::BadInput(anyhow!(
                        "stream {} has no subjects to publish to (a mirror or sourced stream?)",
                        target.stream
                    )))
                }
            }
        }
    };
    let placed = super::leader::place(env, &target.stream, pubs).await?;
    let mut r = js_run(env, pubs, &subject, &env.spec.subjects, mode, window, Vec::new()).await?;
    super::leader::record(env, &target.stream, placed, &mut r).await;
    r.label = mode.label().into();
    r.params.insert("stream".into(), target.stream.clone());
    r.params.insert("subject".into(), subject);
    if let Some(max) = env.spec.subjects.multi {
        r.params.insert("multisubject".into(), max.to_string());
    }
    if mode == PublishMode::Async {
        r.params.insert("window".into(), window.to_string());
    }
    if mode == PublishMode::Atomic {
        r.params.insert("batch".into(), window.to_string());
    }
    Ok(r)
}

/// The publishers' run on `subject`, each message's subject numbered by `on` (the run's `--multisubject`,
/// or a KV bucket's keys: `kv::kv`), with `readers` (made ready before the clock, `bench js --consumers`)
/// reading every message while the publishers write.
pub(super) async fn js_run(
    env: &Arc<Env>,
    pubs: usize,
    subject: &str,
    on: &super::Subjects,
    mode: PublishMode,
    window: usize,
    readers: Vec<super::consume::PullReader>,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let conns = connect_publishers(env, pubs, subject, on, mode).await?;
    let client = match conns.first() {
        Some(PubConn::Nats(_)) => "async-nats",
        _ => "raw",
    };
    let per_pub = env.per_worker(pubs);
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    // Readers count their reads in the same counter as the publishers' acks.
    let total = spec.msgs * (1 + readers.len() as u64);
    let what = if readers.is_empty() { "acked" } else { "acked and read" };
    let progress = progress_task(env, total, what);
    let start = env.start_clock().await?;
    let reading: Vec<_> = readers
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let env = env.clone();
            tokio::spawn(async move { super::consume::read_share(&env, i, r, env.spec.msgs).await })
        })
        .collect();
    let mut tasks = Vec::new();
    for (i, pc) in conns.into_iter().enumerate() {
        let (env, payload, n) = (env.clone(), payload.clone(), per_pub[i]);
        // --multisubject numbers messages over the run's publishers, as natscli does.
        let first: u64 = per_pub[..i].iter().sum();
        let pacer = env
            .worker_rate(pubs)
            .map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
        let window = if mode == PublishMode::Sync { 1 } else { window };
        // The global index names the publisher and the raw path's ack inbox: agents sharing a run never
        // share an inbox.
        let gi = env.worker(i);
        let load = Load { n, window, pacer };
        tasks.push(match pc {
            PubConn::Raw(c) => {
                let to = Topic::new(on, subject.to_string(), first);
                let p = RawJsPublisher::new(c, &to, ack_inbox(&env, gi), payload);
                tokio::spawn(async move { js_pub(&env, gi, p, load).await })
            }
            PubConn::Nats(c) if mode == PublishMode::Atomic => {
                let ctx = js_context(c.clone(), &env, window);
                let to = Topic::new(on, subject.to_string(), first);
                tokio::spawn(async move {
                    let batch = Batch {
                        client: &c,
                        size: window,
                        id: format!("{}-{gi}", env.run_id),
                    };
                    let mut out = js_pub_atomic(&env, &ctx, &batch, to, payload, n).await;
                    out.sample.id = format!("P{}", i + 1);
                    (out.sample.proto_msgs, out.sample.proto_bytes) = proto(&c);
                    out
                })
            }
            PubConn::Nats(c) => {
                let ctx = js_context(c.clone(), &env, window);
                let to = Topic::new(on, subject.to_string(), first);
                let p = NatsJsPublisher::new(c, ctx, to, payload);
                tokio::spawn(async move { js_pub(&env, gi, p, load).await })
            }
        });
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "publisher task"))?);
    }
    // Readers end when they have read every message, or after --timeout with nothing new.
    let mut read = Vec::new();
    for t in reading {
        read.push(t.await.map_err(|e| cannot(e, "reader task"))?);
    }
    stop_progress(progress).await;
    let mut r = js_result(env, pubs, outs)?;
    readers_into(env, &mut r, read);
    r.params.insert("client".into(), client.into());
    Ok(r)
}

/// The readers of `bench js --consumers` as the result's subscribers: the run's completion stays the
/// publishers' (what was asked was the publishing); a reader that read less than every acknowledged
/// message, or failed, is a warning.
fn readers_into(env: &Env, r: &mut BenchResult, read: Vec<TaskOut>) {
    let stored = r.published();
    for o in read {
        let got = o.sample.msgs;
        if got < stored {
            r.warnings.push(format!(
                "reader {} read {got} of the {stored} acknowledged messages{}",
                o.sample.id,
                o.first_error
                    .as_deref()
                    .or(o.stopped.as_deref())
                    .map(|e| format!(" ({e})"))
                    .unwrap_or_default()
            ));
        }
        r.subscribers.clients.push(o.sample);
    }
    let _ = env;
}

/// One connection per publisher, each with its path to the stream and back proven before the clock
/// starts (see `raw::stream_answers_publish`): a publish or ack dropped while interest crosses the
/// routes would otherwise be counted as a failure, or delay the start inside the measured window.
async fn connect_publishers(
    env: &Arc<Env>,
    pubs: usize,
    subject: &str,
    on: &super::Subjects,
    mode: PublishMode,
) -> Result<Vec<PubConn>, BenchError> {
    let spec = &env.spec;
    // Atomic batches publish through async-nats (their headers differ message by message).
    let raw = use_raw(env, mode != PublishMode::Atomic)?;
    // The probe rides on the first message's subject: with --multisubject the stream captures SUBJECT.*.
    let probe = on.of(subject, 0);
    let mut conns = Vec::new();
    for i in 0..pubs {
        if raw {
            let t = env.raw_target(env.worker(i)).expect("raw checked above");
            let mut c = raw_connect(&t, &format!("natsplan-bench-pub{i}")).await?;
            let inbox = ack_inbox(env, env.worker(i));
            c.out.extend_from_slice(format!("SUB {inbox}* 1\r\n").as_bytes());
            c.round_trip().await.map_err(|e| cannot(e, "subscribe to acks"))?;
            raw::stream_answers_publish(&mut c, &probe, &inbox, probe_timeout(spec))
                .await
                .map_err(|e| BenchError::CannotRun(anyhow!(e)))?;
            conns.push(PubConn::Raw(c));
        } else {
            let c = env.connect(env.worker(i), "pub").await?;
            stream_answers_request(&c, &probe, probe_timeout(spec)).await?;
            conns.push(PubConn::Nats(c));
        }
    }
    Ok(conns)
}

/// The JetStream publish result of the publishers' reports.
pub(super) fn js_result(env: &Env, pubs: usize, outs: Vec<TaskOut>) -> Result<BenchResult, BenchError> {
    let mut r = blank_result(
        env,
        "js",
        "JetStream publisher",
        params(env, &[("pubs", pubs.to_string())]),
    );
    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, &mut r, outs, false, &mut hists);
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, &r, behind, lag);
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    finish(env, &mut r);
    if r.published() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no publish was acknowledged: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

/// How often a publisher waiting for acks looks at the run's token.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// What one JetStream publisher sends: `n` messages, up to `window` in flight (1: synchronous), paced
/// when the run has a rate.
pub(super) struct Load {
    pub(super) n: u64,
    pub(super) window: usize,
    pub(super) pacer: Option<Pacer>,
}

/// No message is in flight in this slot of `Flight::in_flight`.
const FREE: u64 = u64::MAX;

/// One publisher's state in `js_pub`: what is in flight (by number modulo the window: the message in
/// each slot and its send time), counts and the histogram.
///
/// Acks may come back out of order (async-nats hands over completed ack futures in the order they were
/// woken, not sent), so the window is the span from the oldest message still in flight, not a count
/// (one ack that never comes holds the window after `window − 1` more sends, and the publisher stops at
/// `--timeout` with it unacknowledged, as it would with every ack lost):
/// a slot is reused only once its message is answered, and an ack counts only when its message is in
/// its slot. An ack overtaken by more than a window of later ones used to be dropped as a stray, and
/// its message reported unacknowledged after `--timeout` (a 1,200-message run on a loaded host: 145
/// "acks did not arrive" that the server had sent).
struct Flight {
    window: u64,
    in_flight: Vec<u64>,
    sent_ns: Vec<u64>,
    /// The lowest message number not yet answered (`sent` when none is in flight).
    oldest: u64,
    hist: Histogram<u64>,
    sent: u64,
    resolved: u64,
    ok: u64,
    errors: u64,
    ack_error: Option<String>,
    behind: bool,
}

impl Flight {
    /// Send while the window has room (and, open loop, while messages are due). Returns when to wake
    /// for the next due message if acks are outstanding meanwhile; Err when the connection broke.
    async fn send<P: JsPublisher>(
        &mut self,
        env: &Env,
        p: &mut P,
        n: u64,
        pacer: &mut Option<Pacer>,
    ) -> Result<Option<Instant>, String> {
        while self.sent < n && !self.behind && self.sent - self.oldest < self.window {
            let t = match pacer.as_mut() {
                Some(pc) => {
                    if pc.would_wait(self.sent) && self.sent > self.resolved {
                        // Not due yet and acks are outstanding: read them until it is.
                        return Ok(Some(pc.intended(self.sent)));
                    }
                    if pc.would_wait(self.sent) {
                        p.flush().await?;
                    }
                    match pc.due(self.sent).await {
                        Ok(intended) => env.ns(intended),
                        Err(()) => {
                            self.behind = true;
                            break;
                        }
                    }
                }
                None => env.ns(Instant::now()),
            };
            let k = (self.sent % self.window) as usize;
            (self.in_flight[k], self.sent_ns[k]) = (self.sent, t);
            p.send(self.sent).await?;
            self.sent += 1;
        }
        Ok(None)
    }

    /// Match the acks there are to their publishes (by number); Ok(false): none came by `until`.
    async fn read_acks<P: JsPublisher>(&mut self, env: &Env, p: &mut P, until: Instant) -> Result<bool, String> {
        let (window, mut now_ns) = (self.window, None);
        let (resolved, ok, errors) = (&mut self.resolved, &mut self.ok, &mut self.errors);
        let (hist, sent_ns, ack_error) = (&mut self.hist, &self.sent_ns, &mut self.ack_error);
        let in_flight = &mut self.in_flight;
        let got = p
            .acks(until, &mut |j, ack| {
                let k = (j % window) as usize;
                // A stray (an earlier run's, or a second answer): its message is not the one in flight there.
                if in_flight[k] != j {
                    return;
                }
                match ack {
                    Ack::Stored => {
                        *ok += 1;
                        let now = *now_ns.get_or_insert_with(|| env.ns(Instant::now()));
                        let _ = hist.record(now.saturating_sub(sent_ns[k]).max(1));
                    }
                    Ack::Refused(why) => {
                        *errors += 1;
                        ack_error.get_or_insert(why);
                    }
                    Ack::Unanswered => return,
                }
                in_flight[k] = FREE;
                *resolved += 1;
            })
            .await;
        while self.oldest < self.sent && self.in_flight[(self.oldest % window) as usize] != self.oldest {
            self.oldest += 1;
        }
        got
    }
}

/// JetStream publishing, asynchronous (up to `window` in flight) and synchronous (a window of 1), on any
/// `JsPublisher`: acks are matched by number and timed from the send (or intended) time, in one task that
/// sends batches and reads acks, as nats.go's PublishAsync does in effect. Ends when everything is
/// acknowledged, the connection breaks, nothing answered for `--timeout`, or the run's token trips;
/// what is in flight then is unacknowledged. `gi` is the publisher's number in the whole run.
pub(super) async fn js_pub<P: JsPublisher>(env: &Env, gi: usize, mut p: P, load: Load) -> TaskOut {
    let Load { n, window, mut pacer } = load;
    let window = window.max(1) as u64;
    let mut f = Flight {
        window,
        in_flight: vec![FREE; window as usize],
        sent_ns: vec![0u64; window as usize],
        oldest: 0,
        hist: new_hist(),
        sent: 0,
        resolved: 0,
        ok: 0,
        errors: 0,
        ack_error: None,
        behind: false,
    };
    let mut fatal = None::<String>;
    let mut unacked = 0u64;
    let t0 = Instant::now();
    let (mut last, mut last_progress) = (t0, t0);
    let mut cancelled = false;
    while fatal.is_none() {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let wake_at = match f.send(env, &mut p, n, &mut pacer).await {
            Ok(w) => w,
            Err(e) => {
                fatal = Some(e);
                break;
            }
        };
        if let Err(e) = p.flush().await {
            fatal = Some(e);
            break;
        }
        if f.resolved == f.sent && (f.sent == n || f.behind) {
            break;
        }
        // The run's token is checked at the top of the loop; waking at least every CANCEL_POLL keeps a
        // silent connection from delaying that, without registering a waiter per read on the hot path.
        let deadline = wake_at
            .unwrap_or(last_progress + env.spec.timeout)
            .min(Instant::now() + CANCEL_POLL);
        let before = f.resolved;
        match f.read_acks(env, &mut p, deadline).await {
            Err(e) => {
                fatal = Some(e);
                break;
            }
            Ok(false) => {
                if wake_at.is_none() && last_progress.elapsed() >= env.spec.timeout {
                    unacked = f.sent - f.resolved;
                    f.errors += unacked;
                    fatal = Some(format!("{unacked} acks did not arrive within {:?}", env.spec.timeout));
                    break;
                }
                continue;
            }
            Ok(true) => {}
        }
        if f.resolved > before {
            last = Instant::now();
            last_progress = last;
            env.done.fetch_add(f.resolved - before, Ordering::Relaxed);
        }
        // An error ack is data, not the end of the run: keep going unless nothing ever succeeds.
        if f.errors > 100 && f.ok == 0 {
            break;
        }
    }
    // The connection broke or the run was stopped with publishes in flight: their acks never came.
    // (The timeout above has counted its own already.)
    if unacked == 0 && f.sent > f.resolved {
        unacked = f.sent - f.resolved;
        f.errors += unacked;
    }
    let bytes = env.spec.size;
    let (proto_msgs, proto_bytes) = p.proto();
    TaskOut {
        stopped: fatal.clone(),
        unacked,
        cancelled,
        sample: ClientSample {
            id: format!("P{}", gi + 1),
            msgs: f.ok,
            bytes: f.ok * bytes,
            proto_msgs,
            proto_bytes,
            start_s: env.secs(t0),
            end_s: env.secs(last.max(t0)),
            latency_us: LatencySummary::from_hist_ns(&f.hist),
        },
        hist: f.hist,
        errors: f.errors,
        first_error: fatal.or(f.ack_error),
        behind: f.behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}

/// One atomic-batch publisher's connection, batch size and batch id prefix (unique per run and worker).
pub(super) struct Batch<'a> {
    client: &'a async_nats::Client,
    size: usize,
    id: String,
}

/// natscli's `bench js pub atomic`: `n` messages in atomic batches of `batch.size` (ADR-50): each
/// message carries `Nats-Batch-Id` and `Nats-Batch-Sequence` and goes out as a core publish; the last of
/// a batch carries `Nats-Batch-Commit: 1` and is the one acknowledged, for the whole batch. One batch is
/// one operation: its latency is the batch's (first publish to the commit's ack), a failed commit fails
/// the batch, and the messages counted are those of acknowledged batches.
pub(super) async fn js_pub_atomic(
    env: &Env,
    ctx: &jetstream::Context,
    batch: &Batch<'_>,
    to: Topic,
    payload: Bytes,
    n: u64,
) -> TaskOut {
    use async_nats::header::{HeaderMap, NATS_BATCH_COMMIT, NATS_BATCH_ID, NATS_BATCH_SEQUENCE};
    let size = batch.size.max(1) as u64;
    let acked = std::sync::atomic::AtomicU64::new(0);
    let mut d = Drive::ops(n.div_ceil(size), None);
    d.bound = Some(env.spec.timeout + Duration::from_millis(500));
    d.stall_ends = true;
    let t = drive(env, d, |k| {
        let (payload, to, acked) = (payload.clone(), &to, &acked);
        async move {
            let first = k.j * size;
            let count = size.min(n - first);
            let id = format!("{}-{}", batch.id, k.j);
            for s in 1..=count {
                let mut h = HeaderMap::new();
                h.insert(NATS_BATCH_ID, id.as_str());
                h.insert(NATS_BATCH_SEQUENCE, s.to_string().as_str());
                let subject = to.of(first + s - 1);
                if s < count {
                    batch
                        .client
                        .publish_with_headers(subject, h, payload.clone())
                        .await
                        .map_err(Fail::refused)?;
                } else {
                    h.insert(NATS_BATCH_COMMIT, "1");
                    let f = ctx
                        .publish_with_headers(subject, h, payload.clone())
                        .await
                        .map_err(|e| Fail::of_publish(&e))?;
                    f.await.map_err(|e| Fail::of_publish(&e))?;
                }
            }
            acked.fetch_add(count, Ordering::Relaxed);
            Ok(())
        }
    })
    .await;
    let mut out = t.into_out(env, String::new(), payload.len() as u64, (0, 0));
    out.sample.msgs = acked.load(Ordering::Relaxed);
    out.sample.bytes = out.sample.msgs * payload.len() as u64;
    out
}
