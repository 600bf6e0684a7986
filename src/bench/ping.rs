//! Sequential request/reply round trips, written once against `client::OpClient` (`ping_run`: one
//! request at a time through `exec::drive`, each bounded by `--timeout`); the raw protocol requester and
//! async-nats are its adapters, each with its responder.

use super::client::OpClient;
use super::raw::{self, RawConn};
use super::result::BenchResult;
use super::BenchError;
use super::{env::*, exec::*, pubsub::*};
use anyhow::anyhow;
use bytes::Bytes;
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub(super) async fn ping(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
    let subject = format!("natsplan.ping.{}", env.run_id);
    let raw = use_raw(env, true)?;
    let out = if raw {
        let echo = raw_echo(env, &subject).await?;
        let requester = RawRequester::connect(env, &subject).await;
        ping_run(env, requester, echo).await?
    } else {
        let echo = nats_echo(env, &subject).await?;
        let requester = NatsRequester::connect(env, &subject).await;
        ping_run(env, requester, echo).await?
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

/// The request/reply run on any requester (`OpClient`): interest already proven, the clock, one
/// request at a time bounded by `--timeout` (an unanswered one is counted and the run goes on; 11 failed
/// and none answered ends it), and the requester's output. `echo` is the responder, stopped at the end.
pub(super) async fn ping_run<R: OpClient>(
    env: &Arc<Env>,
    requester: Result<R, BenchError>,
    echo: tokio::task::JoinHandle<()>,
) -> Result<TaskOut, BenchError> {
    let spec = &env.spec;
    let requester = match requester {
        Ok(r) => r,
        Err(e) => {
            echo.abort();
            return Err(e);
        }
    };
    let progress = progress_task(env, spec.msgs, "requests");
    if let Err(e) = env.start_clock().await {
        echo.abort();
        return Err(e);
    }
    let mut d = Drive::ops(spec.msgs, None);
    d.bound = Some(spec.timeout);
    d.give_up_after = 11;
    let t = drive(env, d, |k| requester.op(k.j)).await;
    stop_progress(progress).await;
    echo.abort();
    Ok(t.into_out(env, "P1".into(), spec.size * 2, requester.proto()))
}

/// The raw path's requester: each request is a `PUB` with the reply subject `<inbox><j>`, answered when
/// a reply to that subject arrives (a late reply to an earlier request is read past).
struct RawRequester {
    c: tokio::sync::Mutex<RawConn>,
    subject: String,
    inbox: String,
    payload: Vec<u8>,
    /// Requests sent, for the protocol counters.
    sent: AtomicU64,
}

impl RawRequester {
    /// Connected to the first server once the responder's interest reached it, subscribed to its inbox.
    async fn connect(env: &Arc<Env>, subject: &str) -> Result<RawRequester, BenchError> {
        let probe = env.connect(0, "probe").await?;
        wait_for_interest(&probe, subject, env.spec.timeout).await?;
        let mut c = raw_connect(
            &env.conn.raw_target(0).expect("raw checked"),
            "natsplan-bench-requester",
        )
        .await?;
        let inbox = format!("_INBOX.natsplan{}r.", env.run_id);
        c.out.extend_from_slice(format!("SUB {inbox}* 1\r\n").as_bytes());
        c.round_trip().await.map_err(|e| cannot(e, "subscribe"))?;
        Ok(RawRequester {
            c: tokio::sync::Mutex::new(c),
            subject: subject.to_string(),
            inbox,
            payload: vec![0u8; env.spec.size as usize],
            sent: AtomicU64::new(0),
        })
    }
}

impl OpClient for RawRequester {
    async fn op(&self, j: u64) -> Result<(), Fail> {
        let gone = |e: std::io::Error| Fail::Gone(e.to_string());
        let mut c = self.c.lock().await;
        self.sent.fetch_add(1, Ordering::Relaxed);
        c.out.extend_from_slice(b"PUB ");
        c.out.extend_from_slice(self.subject.as_bytes());
        c.out.push(b' ');
        c.out.extend_from_slice(self.inbox.as_bytes());
        raw::push_num(&mut c.out, j);
        c.out.push(b' ');
        raw::push_num(&mut c.out, self.payload.len() as u64);
        c.out.extend_from_slice(b"\r\n");
        c.out.extend_from_slice(&self.payload);
        c.out.extend_from_slice(b"\r\n");
        c.flush_out().await.map_err(gone)?;
        let inbox = self.inbox.len();
        loop {
            let mut answered = false;
            c.drain(|f, _| {
                if let raw::Frame::Msg { subject, .. } = f {
                    if subject.get(inbox..).and_then(|d| raw::parse_num(d).ok()) == Some(j) {
                        answered = true;
                    }
                }
            })
            .map_err(gone)?;
            if answered {
                return Ok(());
            }
            c.fill().await.map_err(gone)?;
        }
    }
    fn proto(&self) -> (u64, u64) {
        // Called once the run is over, when no request holds the connection.
        match self.c.try_lock() {
            Ok(c) => (c.msgs_in + self.sent.load(Ordering::Relaxed), c.bytes_in + c.bytes_out),
            Err(_) => (0, 0),
        }
    }
}

/// async-nats's responder: on the second server (when there are several), echoing every request's
/// payload to its reply subject until aborted.
async fn nats_echo(env: &Arc<Env>, subject: &str) -> Result<tokio::task::JoinHandle<()>, BenchError> {
    let responder = env.connect(1, "responder").await?;
    let mut sub = responder
        .subscribe(subject.to_string())
        .await
        .map_err(|e| cannot(e, "subscribe"))?;
    responder.flush().await.map_err(|e| cannot(e, "flush"))?;
    Ok(tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            if let Some(reply) = m.reply {
                let _ = responder.publish(reply, m.payload).await;
            }
        }
    }))
}

/// async-nats's requester (its `request`, with its own inbox and timeout).
struct NatsRequester {
    c: async_nats::Client,
    subject: String,
    payload: Bytes,
}

impl NatsRequester {
    /// Connected to the first server once the responder's interest reached it.
    async fn connect(env: &Arc<Env>, subject: &str) -> Result<NatsRequester, BenchError> {
        let c = env.connect(0, "requester").await?;
        wait_for_interest(&c, subject, env.spec.timeout).await?;
        Ok(NatsRequester {
            c,
            subject: subject.to_string(),
            payload: Bytes::from(vec![0u8; env.spec.size as usize]),
        })
    }
}

impl OpClient for NatsRequester {
    async fn op(&self, _j: u64) -> Result<(), Fail> {
        self.c
            .request(self.subject.clone(), self.payload.clone())
            .await
            .map(|_| ())
            .map_err(Fail::refused)
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.c)
    }
}
