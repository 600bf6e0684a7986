//! Core NATS publish/subscribe and flood: subscribers first, interest proven, then paced publishers and a
//! watchdog that ends subscribers once everything arrived or nothing did for `timeout`.

use super::result::{new_hist, BenchResult, ClientSample, LatencySummary, Losses};
use super::{env::*, exec::*, pubsub_raw::*, stamp::*};
use super::{varz, BenchError};
use anyhow::anyhow;
use bytes::Bytes;
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

pub(super) async fn core(env: &Arc<Env>, pubs: usize, subs: usize, flood: bool) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    // natscli's SUBJECT and --multisubject: subscribers listen on SUBJECT(.*), probes ride on SUBJECT.
    let base = spec.subjects.base(format!("natsplan.bench.{}", env.run_id));
    let subject = spec.subjects.capture(&base);
    let stamp_every = if flood || spec.rate_per_s.is_some() {
        1
    } else {
        STAMP_EVERY
    };
    let per_pub = env.per_worker(pubs);
    let total_subs = env.total_subs(subs);
    let label = if flood {
        "Flood"
    } else if subs > 0 && pubs > 0 {
        "Pub/Sub"
    } else if pubs > 0 {
        "Pub"
    } else {
        "Sub"
    };
    let mut r = blank_result(
        env,
        if flood { "flood" } else { "core" },
        label,
        params(env, &[("pubs", pubs.to_string()), ("subs", subs.to_string())]),
    );

    // The raw protocol path unless the run needs what only async-nats does (TLS, creds, nkey, a bounded
    // client-side buffer, a sleeping subscriber).
    let raw = use_raw(
        env,
        spec.sub_buffer.is_none() && spec.sub_sleep.is_none() && spec.subjects.multi.is_none(),
    )?;
    r.params
        .insert("client".into(), if raw { "raw" } else { "async-nats" }.into());
    spec.subjects.record(&subject, &mut r.params);

    // Subscribers first, each on its own connection, spread over the servers.
    // On agents every subscriber expects the whole run's messages, not this agent's share of them.
    let expected = Arc::new(AtomicU64::new(
        env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs),
    ));
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (sub_conns, counters) = connect_subs(env, subs, raw, &subject, &base).await?;
    let pub_conns = connect_pubs(env, pubs, raw, total_subs).await?;
    // Subscriber tasks run from here on: on the raw path they also answer the interest probes.
    let sub_tasks = spawn_subs(env, sub_conns, &expected, &counters, &cancel_rx);
    // Every server a publisher uses must know every subscriber's interest before the clock starts.
    // (On agents: every subscriber of the whole run, wherever it runs.)
    if total_subs > 0 {
        prove_interest(env, pubs, total_subs, &base).await?;
    }
    let slow_before = varz::total_slow_consumers(&spec.monitor).await;
    let progress = progress_task(env, spec.msgs * (1 + subs as u64), "messages");

    let template = Bytes::from(vec![0u8; spec.size as usize]);
    let start = match env.start_clock().await {
        Ok(s) => s,
        Err(e) => {
            let _ = cancel_tx.send(true);
            return Err(e);
        }
    };
    let mut pub_tasks = Vec::new();
    for (i, pc) in pub_conns.into_iter().enumerate() {
        let (env, base, template, n) = (env.clone(), base.clone(), template.clone(), per_pub[i]);
        let rate = env.worker_rate(pubs);
        // --multisubject numbers messages over the run's publishers, as natscli does.
        let first: u64 = per_pub[..i].iter().sum();
        pub_tasks.push(tokio::spawn(async move {
            match pc {
                PubConn::Nats(c) => {
                    let to = Topic::new(&env.spec.subjects, base, first);
                    core_pub(&env, i, c, to, template, n, stamp_every, rate, start).await
                }
                PubConn::Raw(c) => core_pub_raw(&env, i, c, &base, &template, n, stamp_every, rate, start).await,
            }
        }));
    }
    let mut outs = Vec::new();
    for t in pub_tasks {
        outs.push(t.await.map_err(|e| cannot(e, "publisher task"))?);
    }
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

    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, &mut r, outs, false, &mut hists);
    for s in sub_outs {
        if let Some(e) = s.error {
            r.warnings.push(format!("subscriber {}: {e}", s.sample.id));
        }
        hists.push(s.hist);
        r.subscribers.clients.push(s.sample);
    }
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, &r, behind, lag);
    if subs > 0 {
        record_losses(env, &mut r, published, timed_out, slow_before).await;
    }
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    if pubs == 0 {
        // Subscribers only: what they were asked is to receive --msgs each.
        r.completion.done = r.subscribers.clients.iter().map(|c| c.msgs).min().unwrap_or(0);
    }
    finish(env, &mut r);
    Ok(r)
}

/// Subscriber connections, each subscribed to the run's subject and its own interest probe (subscribed
/// after the main one: once a publisher's server sees the probe's interest it has seen the main
/// subject's too, as route interest is ordered). Returns them with their received-message counters.
async fn connect_subs(
    env: &Arc<Env>,
    subs: usize,
    raw: bool,
    subject: &str,
    probe_base: &str,
) -> Result<(Vec<SubConn>, Vec<Arc<AtomicU64>>), BenchError> {
    let spec = &env.spec;
    let subject = subject.to_string();
    let mut sub_conns = Vec::new();
    let mut counters = Vec::new();
    for i in 0..subs {
        // A probe subject per subscriber, subscribed after the main one: once a publisher's server sees
        // the probe's interest it has seen the main subject's too (route interest is ordered).
        let probe_subject = format!("{probe_base}.probe.{}", env.sub(i));
        if raw {
            let t = env.conn.raw_target(env.sub(i)).expect("raw checked above");
            let mut c = raw_connect(&t, &format!("natsplan-bench-sub{i}")).await?;
            c.out
                .extend_from_slice(format!("SUB {subject} 1\r\nSUB {probe_subject} 2\r\n").as_bytes());
            c.round_trip().await.map_err(|e| cannot(e, "subscribe"))?;
            sub_conns.push(SubConn::Raw(c));
        } else {
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
            let sub = c.subscribe(subject.clone()).await.map_err(|e| cannot(e, "subscribe"))?;
            let probe = c.subscribe(probe_subject).await.map_err(|e| cannot(e, "subscribe"))?;
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
            sub_conns.push(SubConn::Nats(c, sub));
        }
        counters.push(Arc::new(AtomicU64::new(0)));
    }
    Ok((sub_conns, counters))
}

/// Publisher connections; they start after the subscribers in the server rotation so 1 pub / 1 sub
/// crosses servers.
async fn connect_pubs(env: &Arc<Env>, pubs: usize, raw: bool, total_subs: usize) -> Result<Vec<PubConn>, BenchError> {
    let mut pub_conns = Vec::new();
    for i in 0..pubs {
        // Publishers start after the subscribers in the server rotation so 1 pub / 1 sub crosses servers.
        if raw {
            let t = env
                .conn
                .raw_target(env.worker(i) + total_subs)
                .expect("raw checked above");
            pub_conns.push(PubConn::Raw(raw_connect(&t, &format!("natsplan-bench-pub{i}")).await?));
        } else {
            pub_conns.push(PubConn::Nats(env.connect(env.worker(i) + total_subs, "pub").await?));
        }
    }
    Ok(pub_conns)
}

type SubTask = tokio::task::JoinHandle<SubOut>;

fn spawn_subs(
    env: &Arc<Env>,
    sub_conns: Vec<SubConn>,
    expected: &Arc<AtomicU64>,
    counters: &[Arc<AtomicU64>],
    cancel_rx: &watch::Receiver<bool>,
) -> Vec<SubTask> {
    let mut sub_tasks = Vec::new();
    for (i, sc) in sub_conns.into_iter().enumerate() {
        let (env, expected, counter, cancel) = (env.clone(), expected.clone(), counters[i].clone(), cancel_rx.clone());
        sub_tasks.push(tokio::spawn(async move {
            match sc {
                SubConn::Nats(c, sub) => core_sub(&env, i, c, sub, expected, counter, cancel).await,
                SubConn::Raw(c) => core_sub_raw(&env, i, c, expected, counter, cancel).await,
            }
        }));
    }
    sub_tasks
}

/// Every server a publisher uses knows every subscriber's interest (its probe answers).
async fn prove_interest(env: &Arc<Env>, pubs: usize, total_subs: usize, subject: &str) -> Result<(), BenchError> {
    for k in 0..pubs.min(env.conn.servers.len()) {
        let probe_client = env.connect(env.worker(k) + total_subs, "probe").await?;
        for i in 0..total_subs {
            wait_for_interest(&probe_client, &format!("{subject}.probe.{i}"), env.spec.timeout).await?;
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

#[allow(clippy::too_many_arguments)]
pub(super) async fn core_pub(
    env: &Env,
    i: usize,
    c: async_nats::Client,
    to: Topic,
    template: Bytes,
    n: u64,
    stamp_every: u64,
    rate: Option<f64>,
    start: Instant,
) -> TaskOut {
    let pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
    let can_stamp = template.len() >= 8;
    let mut d = Drive::ops(n, pacer);
    // Latency is the subscribers' (from the stamps); a failed publish means the connection is gone.
    d.record = false;
    d.stop_on_error = true;
    let mut t = drive(env, d, |k| {
        let payload = match k.due {
            Some(due) => stamped(&template, env.origin(), env.ns(due)),
            None if can_stamp && k.j % stamp_every == 0 => stamped(&template, env.origin(), env.ns(Instant::now())),
            None => template.clone(),
        };
        let (c, subject) = (&c, to.of(k.j));
        async move { c.publish(subject, payload).await.map_err(Fail::refused) }
    })
    .await;
    if let Err(e) = c.flush().await {
        t.errors += 1;
        t.first_error.get_or_insert_with(|| e.to_string());
    }
    t.t1 = Instant::now();
    let proto = proto(&c);
    t.into_out(env, format!("P{}", i + 1), template.len() as u64, proto)
}

pub(super) async fn core_sub(
    env: &Env,
    i: usize,
    c: async_nats::Client,
    sub: async_nats::Subscriber,
    expected: Arc<AtomicU64>,
    counter: Arc<AtomicU64>,
    mut cancel: watch::Receiver<bool>,
) -> SubOut {
    let mut hist = new_hist();
    let mut count = 0u64;
    let mut first = None;
    let mut last = Instant::now();
    let size = env.spec.size;
    {
        let stop = async move {
            let _ = cancel.wait_for(|v| *v).await;
        };
        let mut s = sub.take_until(Box::pin(stop));
        while let Some(m) = s.next().await {
            count += 1;
            if count == 1 {
                first = Some(Instant::now());
            }
            if let Some(t_ns) = read_stamp(&m.payload, env.origin()) {
                let now = Instant::now();
                let _ = hist.record(env.ns(now).saturating_sub(t_ns).max(1));
                last = now;
            } else if count & 63 == 0 {
                last = Instant::now();
            }
            counter.store(count, Ordering::Relaxed);
            if let Some(d) = env.spec.sub_sleep {
                tokio::time::sleep(d).await;
            }
            if count & 4095 == 0 {
                env.done.fetch_add(4096, Ordering::Relaxed);
            }
            if count >= expected.load(Ordering::Relaxed) {
                last = Instant::now();
                break;
            }
        }
    }
    env.done.fetch_add(count & 4095, Ordering::Relaxed);
    let (pm, pb) = proto(&c);
    let first = first.unwrap_or(last);
    SubOut {
        sample: ClientSample {
            id: format!("S{}", i + 1),
            msgs: count,
            bytes: count * size,
            proto_msgs: pm,
            proto_bytes: pb,
            start_s: env.secs(first),
            end_s: env.secs(last.max(first)),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        error: None,
    }
}
