//! Core NATS publish/subscribe and flood: subscribers first, interest proven, then paced publishers and a
//! watchdog that ends subscribers once everything arrived or nothing did for `timeout`.

use super::client::{CorePublisher, CoreSubscriber, PubStop};
use super::result::{new_hist, BenchResult, ClientSample, LatencySummary, Losses};
use super::{env::*, exec::*, pubsub_clients::*, stamp::*};
use super::{varz, BenchError};
use anyhow::anyhow;
use bytes::Bytes;
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What one core or flood run is: its publishers, subscribers and subjects.
pub(super) struct CorePlan {
    pub(super) pubs: usize,
    pub(super) subs: usize,
    pub(super) flood: bool,
    /// The subject publishers send to (probes ride on `<base>.probe.<n>`).
    pub(super) base: String,
    /// What subscribers listen on (`base`, or `base.*` with `--multisubject`).
    pub(super) subject: String,
}

pub(super) async fn core(env: &Arc<Env>, pubs: usize, subs: usize, flood: bool) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    // natscli's SUBJECT and --multisubject: subscribers listen on SUBJECT(.*), probes ride on SUBJECT.
    let base = spec.subjects.base(format!("natsplan.bench.{}", env.run_id));
    let subject = spec.subjects.capture(&base);
    let plan = CorePlan {
        pubs,
        subs,
        flood,
        base,
        subject,
    };
    let mut r = core_result(env, &plan);
    // The raw protocol path unless the run needs what only async-nats does (TLS, creds, nkey, a bounded
    // client-side buffer, a sleeping subscriber).
    let raw = use_raw(
        env,
        spec.sub_buffer.is_none() && spec.sub_sleep.is_none() && spec.subjects.multi.is_none(),
    )?;
    r.params
        .insert("client".into(), if raw { "raw" } else { "async-nats" }.into());
    let total_subs = env.total_subs(subs);
    // Every server a publisher uses must know every subscriber's interest before the clock starts.
    // (On agents: every subscriber of the whole run, wherever it runs.) Proven once the subscriber
    // tasks run: on the raw path they answer the probes.
    let prove = prove_interest(env, pubs, total_subs, &plan.base);
    // Subscribers first, each on its own connection, spread over the servers; then the publishers.
    if raw {
        let sub_conns = raw_subs(env, &plan).await?;
        let pub_conns = raw_pubs(env, &plan, total_subs).await?;
        core_run(env, r, &plan, pub_conns, sub_conns, prove).await
    } else {
        let sub_conns = nats_subs(env, &plan).await?;
        let pub_conns = nats_pubs(env, &plan, total_subs).await?;
        core_run(env, r, &plan, pub_conns, sub_conns, prove).await
    }
}

/// The blank result of a core or flood run, labelled as nats bench labels it.
pub(super) fn core_result(env: &Env, plan: &CorePlan) -> BenchResult {
    let (pubs, subs) = (plan.pubs, plan.subs);
    let label = if plan.flood {
        "Flood"
    } else if subs > 0 && pubs > 0 {
        "Pub/Sub"
    } else if pubs > 0 {
        "Pub"
    } else {
        "Sub"
    };
    blank_result(
        env,
        if plan.flood { "flood" } else { "core" },
        label,
        params(env, &[("pubs", pubs.to_string()), ("subs", subs.to_string())]),
    )
}

/// A core or flood run on any client (`CorePublisher`, `CoreSubscriber`): subscribers started, interest
/// proven (`prove`), the clock, publishers, the subscribers' watchdog, and the result. Written once for
/// the raw path, async-nats and the mock.
pub(super) async fn core_run<P: CorePublisher, S: CoreSubscriber>(
    env: &Arc<Env>,
    mut r: BenchResult,
    plan: &CorePlan,
    pub_conns: Vec<P>,
    sub_conns: Vec<S>,
    prove: impl std::future::Future<Output = Result<(), BenchError>>,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let (pubs, subs) = (plan.pubs, plan.subs);
    env.spec.subjects.record(&plan.subject, &mut r.params);
    // On agents every subscriber expects the whole run's messages, not this agent's share of them.
    let expected = Arc::new(AtomicU64::new(
        env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs),
    ));
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let counters: Vec<_> = (0..sub_conns.len()).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let sub_tasks = spawn_subs(env, sub_conns, &expected, &counters, &cancel_rx);
    if env.total_subs(subs) > 0 {
        prove.await?;
    }
    let slow_before = varz::total_slow_consumers(&spec.monitor).await;
    let progress = progress_task(env, spec.msgs * (1 + subs as u64), "messages");
    let outs = match run_pubs(env, plan, pub_conns).await {
        Ok(outs) => outs,
        Err(e) => {
            let _ = cancel_tx.send(true);
            return Err(e);
        }
    };
    // With no publishers of our own, subscribers wait for --msgs from someone else's (until --timeout idle).
    let published: u64 = if let Some(share) = &env.share {
        // Publishers on other agents count too: each subscriber expects the whole run's messages.
        share.total_msgs
    } else if pubs == 0 {
        spec.msgs
    } else {
        outs.iter().map(|o| o.sample.msgs).sum()
    };
    expected.store(published, Ordering::Relaxed);
    // Subscribers are done when each has everything published, or told to stop when nothing arrives.
    let timed_out = subs > 0 && watch_subs(env, &counters, published).await;
    if subs > 0 {
        let _ = cancel_tx.send(true);
    }
    let mut sub_outs = Vec::new();
    for t in sub_tasks {
        sub_outs.push(t.await.map_err(|e| cannot(e, "subscriber task"))?);
    }
    stop_progress(progress).await;
    let ends = CoreEnds {
        published,
        timed_out,
        slow_before,
    };
    assemble(env, &mut r, plan, outs, sub_outs, ends).await;
    Ok(r)
}

/// Start the clock and run every publisher to its end.
async fn run_pubs<P: CorePublisher>(
    env: &Arc<Env>,
    plan: &CorePlan,
    conns: Vec<P>,
) -> Result<Vec<TaskOut>, BenchError> {
    let spec = &env.spec;
    let stamp_every = if plan.flood || spec.rate_per_s.is_some() {
        1
    } else {
        STAMP_EVERY
    };
    let per_pub = env.per_worker(plan.pubs);
    let start = env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, pc) in conns.into_iter().enumerate() {
        let env = env.clone();
        let o = PubPlan {
            n: per_pub[i],
            size: spec.size,
            stamp_every,
            rate: env.worker_rate(plan.pubs),
            start,
        };
        tasks.push(tokio::spawn(async move { publish(&env, i, pc, &o).await }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "publisher task"))?);
    }
    Ok(outs)
}

/// How a core run's subscribers ended.
struct CoreEnds {
    published: u64,
    timed_out: bool,
    slow_before: Option<u64>,
}

/// The publishers' and subscribers' outputs into the result: latency, the rate verdict, losses and
/// completion.
async fn assemble(
    env: &Env,
    r: &mut BenchResult,
    plan: &CorePlan,
    outs: Vec<TaskOut>,
    sub_outs: Vec<SubOut>,
    ends: CoreEnds,
) {
    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, r, outs, false, &mut hists);
    for s in sub_outs {
        if let Some(e) = s.error {
            r.warnings.push(format!("subscriber {}: {e}", s.sample.id));
        }
        hists.push(s.hist);
        r.subscribers.clients.push(s.sample);
    }
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, r, behind, lag);
    if plan.subs > 0 {
        record_losses(env, r, ends.published, ends.timed_out, ends.slow_before).await;
    }
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    if plan.pubs == 0 {
        // Subscribers only: what they were asked is to receive --msgs each.
        r.completion.done = r.subscribers.clients.iter().map(|c| c.msgs).min().unwrap_or(0);
    }
    finish(env, r);
}

/// The probe subject of subscriber `n` of the whole run, subscribed after the main one: once a
/// publisher's server sees the probe's interest it has seen the main subject's too (route interest is
/// ordered).
fn probe_subject(base: &str, n: usize) -> String {
    format!("{base}.probe.{n}")
}

/// Raw subscriber connections, each subscribed to the run's subject (sid 1) and its probe (sid 2).
async fn raw_subs(env: &Arc<Env>, plan: &CorePlan) -> Result<Vec<RawSubscriber>, BenchError> {
    let mut conns = Vec::new();
    for i in 0..plan.subs {
        let probe = probe_subject(&plan.base, env.sub(i));
        let t = env.conn.raw_target(env.sub(i)).expect("raw checked above");
        let mut c = raw_connect(&t, &format!("natsplan-bench-sub{i}")).await?;
        c.out
            .extend_from_slice(format!("SUB {} 1\r\nSUB {probe} 2\r\n", plan.subject).as_bytes());
        c.round_trip().await.map_err(|e| cannot(e, "subscribe"))?;
        conns.push(RawSubscriber(c));
    }
    Ok(conns)
}

/// async-nats subscriber connections, each subscribed to the run's subject and its probe, which a task
/// of its own answers.
async fn nats_subs(env: &Arc<Env>, plan: &CorePlan) -> Result<Vec<NatsSubscriber>, BenchError> {
    let spec = &env.spec;
    let mut conns = Vec::new();
    for i in 0..plan.subs {
        // Deep enough that the library does not drop a burst the task is about to read.
        let cap = spec
            .sub_buffer
            .unwrap_or((spec.msgs as usize).clamp(1024, 1 << 20))
            .max(1);
        let c = env
            .conn
            .connect_sub(env.sub(i), cap, env.slow_events.clone())
            .await
            .map_err(connect_err)?;
        let sub = c
            .subscribe(plan.subject.clone())
            .await
            .map_err(|e| cannot(e, "subscribe"))?;
        let probe = c
            .subscribe(probe_subject(&plan.base, env.sub(i)))
            .await
            .map_err(|e| cannot(e, "subscribe"))?;
        c.flush().await.map_err(|e| cannot(e, "flush"))?;
        let pc = c.clone();
        tokio::spawn(async move {
            let mut probe = probe;
            while let Some(m) = probe.next().await {
                if let Some(reply) = m.reply {
                    let _ = pc.publish(reply, Bytes::new()).await;
                }
            }
        });
        conns.push(NatsSubscriber { c, sub });
    }
    Ok(conns)
}

/// Raw publisher connections; they start after the subscribers in the server rotation so 1 pub / 1 sub
/// crosses servers.
async fn raw_pubs(env: &Arc<Env>, plan: &CorePlan, total_subs: usize) -> Result<Vec<RawPublisher>, BenchError> {
    let template = Bytes::from(vec![0u8; env.spec.size as usize]);
    let mut conns = Vec::new();
    for i in 0..plan.pubs {
        let t = env
            .conn
            .raw_target(env.worker(i) + total_subs)
            .expect("raw checked above");
        let c = raw_connect(&t, &format!("natsplan-bench-pub{i}")).await?;
        conns.push(RawPublisher::new(c, &plan.base, template.clone()));
    }
    Ok(conns)
}

/// async-nats publisher connections, after the subscribers in the server rotation as `raw_pubs`.
async fn nats_pubs(env: &Arc<Env>, plan: &CorePlan, total_subs: usize) -> Result<Vec<NatsPublisher>, BenchError> {
    let template = Bytes::from(vec![0u8; env.spec.size as usize]);
    let per_pub = env.per_worker(plan.pubs);
    let mut conns = Vec::new();
    for i in 0..plan.pubs {
        let c = env.connect(env.worker(i) + total_subs, "pub").await?;
        // --multisubject numbers messages over the run's publishers, as natscli does.
        let first: u64 = per_pub[..i].iter().sum();
        conns.push(NatsPublisher {
            c,
            to: Topic::new(&env.spec.subjects, plan.base.clone(), first),
            template: template.clone(),
            cancel: env.cancel.clone(),
        });
    }
    Ok(conns)
}

type SubTask = tokio::task::JoinHandle<SubOut>;

fn spawn_subs<S: CoreSubscriber>(
    env: &Arc<Env>,
    sub_conns: Vec<S>,
    expected: &Arc<AtomicU64>,
    counters: &[Arc<AtomicU64>],
    cancel_rx: &watch::Receiver<bool>,
) -> Vec<SubTask> {
    let mut sub_tasks = Vec::new();
    for (i, sc) in sub_conns.into_iter().enumerate() {
        let env = env.clone();
        let w = SubWatch {
            expected: expected.clone(),
            counter: counters[i].clone(),
            cancel: cancel_rx.clone(),
        };
        sub_tasks.push(tokio::spawn(async move { subscribe(&env, i, sc, w).await }));
    }
    sub_tasks
}

/// Every server a publisher uses knows every subscriber's interest (its probe answers).
async fn prove_interest(env: &Arc<Env>, pubs: usize, total_subs: usize, subject: &str) -> Result<(), BenchError> {
    for k in 0..pubs.min(env.conn.servers.len()) {
        let probe_client = env.connect(env.worker(k) + total_subs, "probe").await?;
        for i in 0..total_subs {
            wait_for_interest(&probe_client, &probe_subject(subject, i), env.spec.timeout).await?;
        }
    }
    Ok(())
}

/// Watchdog: true when messages stopped arriving for `timeout` (dropped by a slow-consumer cut-off)
/// before every subscriber had all `published`; also ends when the run's token trips.
async fn watch_subs(env: &Env, counters: &[Arc<AtomicU64>], published: u64) -> bool {
    let mut last_total = u64::MAX;
    let mut last_change = Instant::now();
    loop {
        let counts: Vec<u64> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
        if counts.iter().all(|&n| n >= published) || env.cancel.is_cancelled() {
            return false;
        }
        let total: u64 = counts.iter().sum();
        if total != last_total {
            last_total = total;
            last_change = Instant::now();
        } else if last_change.elapsed() > env.spec.timeout {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What subscribers missed, client- and server-side slow-consumer events, and a warning when any.
async fn record_losses(env: &Env, r: &mut BenchResult, published: u64, timed_out: bool, slow_before: Option<u64>) {
    let spec = &env.spec;
    let dropped: u64 = r
        .subscribers
        .clients
        .iter()
        .map(|c| published.saturating_sub(c.msgs))
        .sum();
    let slow_after = varz::total_slow_consumers(&spec.monitor).await;
    let client_slow = env.slow_events.load(Ordering::Relaxed);
    if dropped > 0 || client_slow > 0 || timed_out {
        r.warnings.push(format!(
            "subscribers received {} of {} messages each at least; {dropped} dropped (slow consumer cut-off or loss)",
            r.subscribers.clients.iter().map(|c| c.msgs).min().unwrap_or(0),
            published
        ));
    }
    r.losses = Some(Losses {
        expected_per_sub: published,
        dropped,
        client_slow_events: client_slow,
        server_slow_consumers: match (slow_before, slow_after) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        timed_out,
    });
}

pub(super) async fn wait_for_interest(
    c: &async_nats::Client,
    probe: &str,
    timeout: Duration,
) -> Result<(), BenchError> {
    let deadline = Instant::now() + timeout.max(Duration::from_secs(2));
    loop {
        match tokio::time::timeout(Duration::from_millis(250), c.request(probe.to_string(), Bytes::new())).await {
            Ok(Ok(_)) => return Ok(()),
            _ if Instant::now() > deadline => {
                return Err(BenchError::CannotRun(anyhow!(
                    "subscriber interest did not reach the publisher's server within {:?}; is the cluster routed?",
                    timeout
                )))
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// What one core publisher sends: `n` messages of `size` bytes, one in `stamp_every` stamped with its
/// send time (every one when paced), at `rate` from `start` when given.
pub(super) struct PubPlan {
    pub(super) n: u64,
    pub(super) size: u64,
    pub(super) stamp_every: u64,
    pub(super) rate: Option<f64>,
    pub(super) start: Instant,
}

/// One core publisher, closed or open loop, on any client: pace, stamp, send, report progress at each
/// batch the client writes, and end as nats-bench does (everything written and acknowledged by a
/// round trip). Latency is the subscribers' (from the stamps); a failed send means the connection is
/// gone and ends the publisher.
pub(super) async fn publish<P: CorePublisher>(env: &Env, i: usize, mut pc: P, o: &PubPlan) -> TaskOut {
    let mut pacer = o.rate.map(|r| Pacer::new(o.start, r, env.spec.backlog_cutoff));
    let (origin, can_stamp) = (env.origin(), o.size >= 8);
    let (mut sent, mut behind, mut error, mut cancelled, mut abandoned) = (0u64, false, None::<String>, false, false);
    let (mut until_stamp, mut reported) = (0u64, 0u64);
    let t0 = Instant::now();
    for j in 0..o.n {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let mut stamp = None;
        if let Some(p) = pacer.as_mut() {
            match pace(env, p, &mut pc, j).await {
                Ok(intended) => stamp = Some(stamp_word(origin, env.ns(intended))),
                Err(Halt::Cancelled) => cancelled = true,
                Err(Halt::Behind) => behind = true,
                Err(Halt::Broken(e)) => error = Some(e),
            }
            if stamp.is_none() {
                break;
            }
        } else if can_stamp {
            if until_stamp == 0 {
                stamp = Some(stamp_word(origin, env.ns(Instant::now())));
                until_stamp = o.stamp_every;
            }
            until_stamp -= 1;
        }
        match pc.send(j, stamp).await {
            Ok(()) => sent += 1,
            Err(PubStop::Broken(e)) => {
                error = Some(e);
                break;
            }
            Err(PubStop::Cancelled) => {
                (cancelled, abandoned) = (true, true);
                break;
            }
        }
        match pc.settle(sent).await {
            Ok(false) => {}
            Ok(true) => {
                env.done.fetch_add(sent - reported, Ordering::Relaxed);
                reported = sent;
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let finished = pc.finish(sent, error.is_some()).await.err();
    let errors = u64::from(error.is_some()) + u64::from(abandoned) + u64::from(finished.is_some());
    let t1 = Instant::now();
    env.done.fetch_add(sent - reported, Ordering::Relaxed);
    let ended = PubEnd {
        sent,
        errors,
        error: error.or(finished),
        behind,
        cancelled,
        abandoned,
        window: (t0, t1),
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    };
    pub_out(env, i, o, ended, pc.proto())
}

/// Why an open-loop publisher stops before its next message.
enum Halt {
    Cancelled,
    Behind,
    Broken(String),
}

/// Wait until message `j` is due (the raw path's buffer written out first, so what is sent leaves on
/// time); its intended send time, which latency runs from.
async fn pace<P: CorePublisher>(env: &Env, p: &mut Pacer, pc: &mut P, j: u64) -> Result<Instant, Halt> {
    if P::BUFFERS && p.would_wait(j) {
        pc.flush().await.map_err(Halt::Broken)?;
    }
    tokio::select! {
        r = p.due(j) => r.map_err(|()| Halt::Behind),
        _ = env.cancel.cancelled() => Err(Halt::Cancelled),
    }
}

/// How a core publisher ended.
struct PubEnd {
    sent: u64,
    errors: u64,
    error: Option<String>,
    behind: bool,
    cancelled: bool,
    /// Its last publish was abandoned when the run's token tripped.
    abandoned: bool,
    window: (Instant, Instant),
    max_lag: Duration,
}

/// A core publisher's report: its sample (no latency: that is the subscribers'), errors and stops.
fn pub_out(env: &Env, i: usize, o: &PubPlan, e: PubEnd, proto: (u64, u64)) -> TaskOut {
    TaskOut {
        sample: ClientSample {
            id: format!("P{}", i + 1),
            msgs: e.sent,
            bytes: e.sent * o.size,
            proto_msgs: proto.0,
            proto_bytes: proto.1,
            start_s: env.secs(e.window.0),
            end_s: env.secs(e.window.1),
            latency_us: None,
        },
        hist: new_hist(),
        errors: e.errors,
        first_error: e.error,
        behind: e.behind,
        max_lag: e.max_lag,
        unacked: u64::from(e.abandoned),
        stopped: None,
        cancelled: e.cancelled,
    }
}

/// What a core subscriber watches: the messages it expects (set once the publishers are done), its
/// received count for the watchdog, and the watchdog's stop.
pub(super) struct SubWatch {
    pub(super) expected: Arc<AtomicU64>,
    pub(super) counter: Arc<AtomicU64>,
    pub(super) cancel: watch::Receiver<bool>,
}

/// One core subscriber on any client: count, time stamped messages, stop once it has what is expected
/// or the watchdog says so. Its window runs from the first message to the last.
pub(super) async fn subscribe<S: CoreSubscriber>(env: &Env, i: usize, mut s: S, w: SubWatch) -> SubOut {
    let mut hist = new_hist();
    let (mut count, mut first, mut last, mut error) = (0u64, None, Instant::now(), None::<String>);
    let mut reported = 0u64;
    let origin = env.origin();
    let mut cancel = w.cancel;
    let stop = cancel.wait_for(|v| *v);
    tokio::pin!(stop);
    loop {
        let exp = w.expected.load(Ordering::Relaxed);
        let mut done = false;
        let mut on = |payload: &[u8]| {
            count += 1;
            if count == 1 {
                first = Some(Instant::now());
            }
            if let Some(t_ns) = read_stamp(payload, origin) {
                let now = Instant::now();
                let _ = hist.record(env.ns(now).saturating_sub(t_ns).max(1));
                last = now;
            } else if !S::BATCHED && count & 63 == 0 {
                last = Instant::now();
            }
            if count >= exp {
                last = Instant::now();
                done = true;
            }
        };
        let res = tokio::select! {
            biased;
            _ = &mut stop => break,
            r = s.recv(&mut on) => r,
        };
        match res {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        if S::BATCHED && !done {
            last = Instant::now();
        }
        w.counter.store(count, Ordering::Relaxed);
        if let Some(d) = env.spec.sub_sleep {
            tokio::time::sleep(d).await;
        }
        if S::BATCHED || count - reported >= 4096 {
            env.done.fetch_add(count - reported, Ordering::Relaxed);
            reported = count;
        }
        if done {
            if !S::BATCHED {
                // The last message counts once its pause is over, as it always has on async-nats.
                last = Instant::now();
            }
            break;
        }
    }
    env.done.fetch_add(count - reported, Ordering::Relaxed);
    let (proto_msgs, proto_bytes) = s.proto();
    let first = first.unwrap_or(last);
    SubOut {
        sample: ClientSample {
            id: format!("S{}", i + 1),
            msgs: count,
            bytes: count * env.spec.size,
            proto_msgs,
            proto_bytes,
            start_s: env.secs(first),
            end_s: env.secs(last.max(first)),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        error,
    }
}
