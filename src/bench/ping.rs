//! Sequential request/reply round trips.

use super::raw::{self};
use super::result::{new_hist, BenchResult, ClientSample, LatencySummary};
use super::BenchError;
use super::{env::*, exec::*, pubsub::*};
use anyhow::anyhow;
use bytes::Bytes;
use futures::StreamExt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) async fn ping(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let subject = format!("natsplan.ping.{}", env.run_id);
    let raw = use_raw(env, true)?;
    let out = if raw {
        ping_raw(env, &subject).await?
    } else {
        ping_nats(env, &subject).await?
    };
    let mut r = blank_result(env, "ping", "service requester", params(env, &[]));
    r.params
        .insert("client".into(), if raw { "raw" } else { "async-nats" }.into());
    let ok = out.sample.msgs;
    let mut hists = Vec::new();
    absorb(env, &mut r, vec![out], false, &mut hists);
    r.latency_us = env.summary(&hists);
    finish(env, &mut r);
    if ok == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no request was answered: {}",
            r.warnings.join("; ")
        )));
    }
    let _ = spec;
    Ok(r)
}

/// The raw path's responder: subscribed on the second server (when there are several), echoing every
/// request's payload to its reply subject until aborted.
async fn raw_echo(env: &Arc<Env>, subject: &str) -> Result<tokio::task::JoinHandle<()>, BenchError> {
    let mut responder = raw_connect(
        &env.conn.raw_target(1).expect("raw checked"),
        "natsplan-bench-responder",
    )
    .await?;
    responder
        .out
        .extend_from_slice(format!("SUB {subject} 1\r\n").as_bytes());
    responder.round_trip().await.map_err(|e| cannot(e, "subscribe"))?;
    let echo = tokio::spawn(async move {
        while responder.fill().await.is_ok() {
            let drained = responder.drain(|f, out| {
                if let raw::Frame::Msg { reply, payload, .. } = f {
                    if !reply.is_empty() {
                        out.extend_from_slice(b"PUB ");
                        out.extend_from_slice(reply);
                        out.push(b' ');
                        raw::push_num(out, payload.len() as u64);
                        out.extend_from_slice(b"\r\n");
                        out.extend_from_slice(payload);
                        out.extend_from_slice(b"\r\n");
                    }
                }
            });
            if drained.is_err() || responder.flush_out().await.is_err() {
                break;
            }
        }
    });
    Ok(echo)
}

/// Sequential request/reply on the raw path: the responder echoes on its own connection (the second
/// server when there are several), the requester waits for each reply on its inbox before the next.
pub(super) async fn ping_raw(env: &Arc<Env>, subject: &str) -> Result<TaskOut, BenchError> {
    let spec = &env.spec;
    let echo = raw_echo(env, subject).await?;
    let probe = env.connect(0, "probe").await?;
    wait_for_interest(&probe, subject, spec.timeout).await?;
    let mut c = raw_connect(
        &env.conn.raw_target(0).expect("raw checked"),
        "natsplan-bench-requester",
    )
    .await?;
    let inbox = format!("_INBOX.natsplan{}r.", env.run_id);
    c.out.extend_from_slice(format!("SUB {inbox}* 1\r\n").as_bytes());
    c.round_trip().await.map_err(|e| cannot(e, "subscribe"))?;
    let progress = progress_task(env, spec.msgs, "requests");
    let payload = vec![0u8; spec.size as usize];
    let mut hist = new_hist();
    let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
    if let Err(e) = env.start_clock().await {
        echo.abort();
        return Err(e);
    }
    let t0 = Instant::now();
    let mut cancelled = false;
    'requests: for j in 0..spec.msgs {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let a = Instant::now();
        c.out.extend_from_slice(b"PUB ");
        c.out.extend_from_slice(subject.as_bytes());
        c.out.push(b' ');
        c.out.extend_from_slice(inbox.as_bytes());
        raw::push_num(&mut c.out, j);
        c.out.push(b' ');
        raw::push_num(&mut c.out, payload.len() as u64);
        c.out.extend_from_slice(b"\r\n");
        c.out.extend_from_slice(&payload);
        c.out.extend_from_slice(b"\r\n");
        if let Err(e) = c.flush_out().await {
            first_error = Some(e.to_string());
            errors += 1;
            break;
        }
        let deadline = a + spec.timeout;
        loop {
            let mut answered = false;
            let drained = c.drain(|f, _| {
                if let raw::Frame::Msg { subject, .. } = f {
                    if subject.get(inbox.len()..).and_then(|d| raw::parse_num(d).ok()) == Some(j) {
                        answered = true;
                    }
                }
            });
            if let Err(e) = drained {
                first_error = Some(e.to_string());
                errors += 1;
                break 'requests;
            }
            if answered {
                let _ = hist.record((a.elapsed().as_nanos() as u64).max(1));
                ok += 1;
                break;
            }
            match tokio::time::timeout_at(deadline.into(), c.fill()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    first_error = Some(e.to_string());
                    errors += 1;
                    break 'requests;
                }
                Err(_) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| format!("request timed out after {:?}", spec.timeout));
                    break;
                }
            }
        }
        env.done.fetch_add(1, Ordering::Relaxed);
        if errors > 10 && ok == 0 {
            break;
        }
    }
    let t1 = Instant::now();
    stop_progress(progress).await;
    echo.abort();
    Ok(TaskOut {
        sample: ClientSample {
            id: "P1".into(),
            msgs: ok,
            bytes: ok * spec.size * 2,
            proto_msgs: c.msgs_in + ok + errors,
            proto_bytes: c.bytes_in + c.bytes_out,
            start_s: env.secs(t0),
            end_s: env.secs(t1),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        errors,
        first_error,
        behind: false,
        max_lag: Duration::ZERO,
        unacked: 0,
        stopped: None,
        cancelled,
    })
}

pub(super) async fn ping_nats(env: &Arc<Env>, subject: &str) -> Result<TaskOut, BenchError> {
    let spec = &env.spec;
    let subject = subject.to_string();
    let responder = env.connect(1, "responder").await?;
    let requester = env.connect(0, "requester").await?;
    let mut sub = responder
        .subscribe(subject.clone())
        .await
        .map_err(|e| cannot(e, "subscribe"))?;
    responder.flush().await.map_err(|e| cannot(e, "flush"))?;
    let rc = responder.clone();
    let echo = tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            if let Some(reply) = m.reply {
                let _ = rc.publish(reply, m.payload).await;
            }
        }
    });
    wait_for_interest(&requester, &subject, spec.timeout).await?;
    let progress = progress_task(env, spec.msgs, "requests");
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    if let Err(e) = env.start_clock().await {
        echo.abort();
        return Err(e);
    }
    let mut d = Drive::ops(spec.msgs, None);
    d.bound = Some(spec.timeout);
    d.give_up_after = 11;
    let t = drive(env, d, |_| {
        let (requester, subject, payload) = (&requester, subject.clone(), payload.clone());
        async move {
            requester
                .request(subject, payload)
                .await
                .map(|_| ())
                .map_err(Fail::refused)
        }
    })
    .await;
    stop_progress(progress).await;
    echo.abort();
    Ok(t.into_out(env, "P1".into(), spec.size * 2, proto(&requester)))
}
