//! JetStream publishing (async-nats asynchronous and synchronous publishers; the raw path is in
//! `js_raw`).

use super::raw::{self};
use super::result::{new_hist, BenchResult, ClientSample, LatencySummary};
use super::{assets::*, env::*, exec::*, jetstream::*, js_raw::*};
use super::{BenchError, PublishMode, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
use hdrhistogram::Histogram;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) async fn js(
    env: &Arc<Env>,
    pubs: usize,
    replicas: usize,
    storage: Storage,
    mode: PublishMode,
    window: usize,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let stream = format!("natsplan-js-{}", env.run_id);
    let subject = js_subject(env);
    let mut r = on_own_stream(env, &stream, pubs, || js_run(env, pubs, &subject, mode, window)).await?;
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
    let mut r = js_run(env, pubs, &subject, mode, window).await?;
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

pub(super) async fn js_run(
    env: &Arc<Env>,
    pubs: usize,
    subject: &str,
    mode: PublishMode,
    window: usize,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    // --multisubject publishes through async-nats (the raw path precomputes one PUB header).
    // Atomic batches too (their headers differ message by message).
    let raw = use_raw(env, spec.subjects.multi.is_none() && mode != PublishMode::Atomic)?;
    // The probe rides on the first message's subject: with --multisubject the stream captures SUBJECT.*.
    let probe = spec.subjects.of(subject, 0);
    let mut conns = Vec::new();
    // Before the clock starts, every publisher's path to the stream and back is proven (see
    // `raw::stream_answers_publish`): a publish or ack dropped while interest crosses the routes would
    // otherwise be counted as a failure, or delay the start inside the measured window.
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
    let per_pub = env.per_worker(pubs);
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    let progress = progress_task(env, spec.msgs, "acked");
    let start = env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, pc) in conns.into_iter().enumerate() {
        let (env, subject, payload, n) = (env.clone(), subject.to_string(), payload.clone(), per_pub[i]);
        // --multisubject numbers messages over the run's publishers, as natscli does.
        let first: u64 = per_pub[..i].iter().sum();
        let rate = env.worker_rate(pubs);
        let window = if mode == PublishMode::Sync { 1 } else { window };
        // The global index names the raw path's ack inbox: agents sharing a run never share an inbox.
        let gi = env.worker(i);
        tasks.push(tokio::spawn(async move {
            let pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
            match pc {
                PubConn::Raw(c) => {
                    let load = RawLoad {
                        subject: &subject,
                        payload: &payload,
                        n,
                        window,
                    };
                    js_pub_raw(&env, gi, c, &load, pacer).await
                }
                PubConn::Nats(c) => {
                    let ctx = js_context(c.clone(), &env, window);
                    let to = Topic::new(&env.spec.subjects, subject, first);
                    let mut out = match mode {
                        PublishMode::Async => js_pub_async(&env, &ctx, to, payload, n, window, pacer).await,
                        PublishMode::Sync => js_pub_sync(&env, &ctx, to, payload, n, pacer).await,
                        PublishMode::Atomic => {
                            let batch = Batch {
                                client: &c,
                                size: window,
                                id: format!("{}-{gi}", env.run_id),
                            };
                            js_pub_atomic(&env, &ctx, &batch, to, payload, n).await
                        }
                    };
                    out.sample.id = format!("P{}", i + 1);
                    let (pm, pb) = proto(&c);
                    out.sample.proto_msgs = pm;
                    out.sample.proto_bytes = pb;
                    out
                }
            }
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "publisher task"))?);
    }
    stop_progress(progress).await;
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

/// What the ack task of an asynchronous publisher counted.
struct Acks {
    hist: Histogram<u64>,
    ok: u64,
    errors: u64,
    unacked: u64,
    first_error: Option<String>,
    stopped: Option<String>,
    last: Instant,
}

/// Await acks in publish order. Each wait ends at the later of the last answer and the publish, plus
/// `--timeout`: once nothing has answered for that long the path to the stream is gone, the publisher is
/// stopped (`stop`) and what is still in flight is only looked at, never waited for (a publish whose ack
/// is not there yet is unacknowledged). Without this bound each later ack would wait a whole timeout of
/// its own, one after the other (issue 17: one message per 5 s after the server was killed).
async fn await_acks(env: Arc<Env>, mut rx: tokio::sync::mpsc::Receiver<(u64, AckFut)>, stop: super::Cancel) -> Acks {
    let timeout = env.spec.timeout;
    let mut a = Acks {
        hist: new_hist(),
        ok: 0,
        errors: 0,
        unacked: 0,
        first_error: None,
        stopped: None,
        last: Instant::now(),
    };
    let mut last_answer = Instant::now();
    let mut gave_up = false;
    while let Some((t_ns, fut)) = rx.recv().await {
        let res = if gave_up || env.cancel.is_cancelled() {
            futures::FutureExt::now_or_never(fut)
        } else {
            let sent = env.anchor + Duration::from_nanos(t_ns);
            let deadline = last_answer.max(sent) + timeout;
            tokio::select! {
                r = tokio::time::timeout_at(deadline.into(), fut) => r.ok(),
                _ = env.cancel.cancelled() => None,
            }
        };
        match res {
            Some(Ok(_)) => {
                a.last = Instant::now();
                last_answer = a.last;
                let _ = a.hist.record(env.ns(a.last).saturating_sub(t_ns).max(1));
                a.ok += 1;
                env.done.fetch_add(1, Ordering::Relaxed);
            }
            Some(Err(e)) if !matches!(Fail::of_publish(&e), Fail::Unanswered(_)) => {
                last_answer = Instant::now();
                a.errors += 1;
                a.first_error.get_or_insert_with(|| e.to_string());
            }
            other => {
                a.errors += 1;
                a.unacked += 1;
                if let Some(Err(e)) = other {
                    a.first_error.get_or_insert_with(|| e.to_string());
                }
                if !gave_up && !env.cancel.is_cancelled() {
                    let why = format!("no ack within {timeout:?}");
                    a.first_error.get_or_insert_with(|| why.clone());
                    a.stopped = Some(why);
                }
                gave_up = true;
                stop.cancel();
            }
        }
    }
    a
}

pub(super) async fn js_pub_async(
    env: &Arc<Env>,
    ctx: &jetstream::Context,
    to: Topic,
    payload: Bytes,
    n: u64,
    window: usize,
    pacer: Option<Pacer>,
) -> TaskOut {
    // Acks are awaited by a second task, in publish order, so the publisher never stops to wait unless
    // the in-flight window is full (the context's backpressure).
    let (tx, rx) = tokio::sync::mpsc::channel::<(u64, AckFut)>(window.max(1));
    // Tripped by the ack task when the stream stopped answering, and by the run's token.
    let stop = super::Cancel::new();
    let acker = tokio::spawn(await_acks(env.clone(), rx, stop.clone()));
    let mut d = Drive::ops(n, pacer);
    d.record = false;
    d.stall_ends = true;
    // The publish itself waits only for a slot in the window; a gone connection shows in the acks.
    let sent = drive(env, d, |k| {
        let (tx, subject, payload, stop) = (&tx, to.of(k.j), payload.clone(), &stop);
        async move {
            let t_ns = env.ns(k.due.unwrap_or_else(Instant::now));
            let f = tokio::select! {
                f = ctx.publish(subject, payload) => f.map_err(|e| Fail::of_publish(&e))?,
                _ = stop.cancelled() => return Err(Fail::Unanswered("the stream stopped answering".into())),
            };
            tx.send((t_ns, std::future::IntoFuture::into_future(f)))
                .await
                .map_err(|_| Fail::Unanswered("the ack task ended".into()))
        }
    })
    .await;
    drop(tx);
    let acks = acker.await.unwrap_or_else(|e| Acks {
        hist: new_hist(),
        ok: 0,
        errors: 1,
        unacked: 0,
        first_error: Some(e.to_string()),
        stopped: None,
        last: Instant::now(),
    });
    // A publish refused before it left is a failure; one the stop or the token interrupted was never
    // sent (the publisher only waits there for room in the window), so it is neither failed nor
    // unacknowledged: what was sent and not acked is counted by the ack task.
    let unsent = sent.unacked;
    TaskOut {
        sample: ClientSample {
            id: String::new(),
            msgs: acks.ok,
            bytes: acks.ok * payload.len() as u64,
            proto_msgs: 0,
            proto_bytes: 0,
            start_s: env.secs(sent.t0),
            end_s: env.secs(acks.last.max(sent.t0)),
            latency_us: LatencySummary::from_hist_ns(&acks.hist),
        },
        hist: acks.hist,
        errors: acks.errors + sent.errors - unsent,
        first_error: sent.first_error.filter(|_| sent.errors > unsent).or(acks.first_error),
        behind: sent.behind,
        max_lag: sent.max_lag,
        unacked: acks.unacked,
        stopped: acks.stopped.or(sent.stopped),
        cancelled: sent.cancelled,
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

pub(super) async fn js_pub_sync(
    env: &Env,
    ctx: &jetstream::Context,
    to: Topic,
    payload: Bytes,
    n: u64,
    pacer: Option<Pacer>,
) -> TaskOut {
    let mut d = Drive::ops(n, pacer);
    // Nothing answered within --timeout ends the publisher, as on the raw path (the ack's own timeout
    // is the same; the bound is the backstop for a publish that cannot even be sent).
    d.bound = Some(env.spec.timeout + Duration::from_millis(500));
    d.stall_ends = true;
    let t = drive(env, d, |k| {
        let (subject, payload) = (to.of(k.j), payload.clone());
        async move {
            let f = ctx.publish(subject, payload).await.map_err(|e| Fail::of_publish(&e))?;
            f.await.map(|_| ()).map_err(|e| Fail::of_publish(&e))
        }
    })
    .await;
    t.into_out(env, String::new(), payload.len() as u64, (0, 0))
}
