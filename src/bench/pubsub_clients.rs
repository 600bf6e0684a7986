//! Core publish and subscribe on the raw protocol path.

use super::raw::{self, RawConn};
use super::result::{new_hist, ClientSample, LatencySummary};
use super::{env::*, exec::*, stamp::*};
use bytes::Bytes;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// Closed-loop and open-loop core publishing on the raw path: one buffer, a precomputed `PUB` header,
/// one write per 64 KiB; flushed before every pacing sleep so open-loop messages leave on time.
#[allow(clippy::too_many_arguments)]
pub(super) async fn core_pub_raw(
    env: &Env,
    i: usize,
    mut c: RawConn,
    subject: &str,
    template: &Bytes,
    n: u64,
    stamp_every: u64,
    rate: Option<f64>,
    start: Instant,
) -> TaskOut {
    const BATCH: usize = 32 * 1024;
    let header = format!("PUB {subject} {}\r\n", template.len()).into_bytes();
    let mut pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
    let can_stamp = template.len() >= 8;
    let (mut sent, mut behind, mut error) = (0u64, false, None::<String>);
    let (mut until_stamp, mut reported) = (0u64, 0u64);
    let t0 = Instant::now();
    let mut cancelled = false;
    for j in 0..n {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let mut stamp = None;
        if let Some(p) = pacer.as_mut() {
            if !c.out.is_empty() && p.would_wait(j) {
                if let Err(e) = c.flush_out().await {
                    error = Some(e.to_string());
                    break;
                }
            }
            match p.due(j).await {
                Ok(intended) => stamp = Some(env.ns(intended)),
                Err(()) => {
                    behind = true;
                    break;
                }
            }
        } else if can_stamp {
            if until_stamp == 0 {
                stamp = Some(env.ns(Instant::now()));
                until_stamp = stamp_every;
            }
            until_stamp -= 1;
        }
        c.out.extend_from_slice(&header);
        match stamp {
            Some(t) => {
                c.out.extend_from_slice(&stamp_word(env.origin(), t).to_le_bytes());
                c.out.extend_from_slice(&template[8..]);
            }
            None => c.out.extend_from_slice(template),
        }
        c.out.extend_from_slice(b"\r\n");
        sent += 1;
        if c.out.len() >= BATCH {
            let res = async {
                c.flush_out().await?;
                // Answer server PINGs on long runs without ever waiting for input.
                if c.try_fill()? > 0 {
                    c.drain(|_, _| {})?;
                }
                std::io::Result::Ok(())
            }
            .await;
            if let Err(e) = res {
                error = Some(e.to_string());
                break;
            }
            env.done.fetch_add(sent - reported, Ordering::Relaxed);
            reported = sent;
        }
    }
    // nats-bench's end of publishing: everything written and a PING answered (the server has it all).
    if error.is_none() {
        if let Err(e) = c.round_trip().await {
            error = Some(e.to_string());
        }
    }
    let t1 = Instant::now();
    env.done.fetch_add(sent - reported, Ordering::Relaxed);
    c.msgs_out += sent;
    TaskOut {
        sample: ClientSample {
            id: format!("P{}", i + 1),
            msgs: sent,
            bytes: sent * template.len() as u64,
            proto_msgs: c.msgs_out + c.msgs_in,
            proto_bytes: c.bytes_out + c.bytes_in,
            start_s: env.secs(t0),
            end_s: env.secs(t1),
            latency_us: None,
        },
        hist: new_hist(),
        errors: u64::from(error.is_some()),
        first_error: error,
        behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
        unacked: 0,
        stopped: None,
        cancelled,
    }
}

pub(super) async fn core_sub_raw(
    env: &Env,
    i: usize,
    mut c: RawConn,
    expected: Arc<AtomicU64>,
    counter: Arc<AtomicU64>,
    mut cancel: watch::Receiver<bool>,
) -> SubOut {
    let mut hist = new_hist();
    let (mut count, mut first, mut last, mut error) = (0u64, None, Instant::now(), None::<String>);
    let mut reported = 0u64;
    let origin = env.origin();
    loop {
        let res = tokio::select! {
            biased;
            _ = cancel.wait_for(|v| *v) => break,
            r = c.fill() => r,
        };
        if let Err(e) = res {
            error = Some(e.to_string());
            break;
        }
        let exp = expected.load(Ordering::Relaxed);
        let mut done = false;
        let drained = c.drain(|f, out| {
            if let raw::Frame::Msg {
                sid, reply, payload, ..
            } = f
            {
                if sid == 1 {
                    count += 1;
                    if count == 1 {
                        first = Some(Instant::now());
                    }
                    if let Some(t_ns) = read_stamp(payload, origin) {
                        let now = Instant::now();
                        let _ = hist.record(env.ns(now).saturating_sub(t_ns).max(1));
                        last = now;
                    }
                    if count >= exp {
                        last = Instant::now();
                        done = true;
                    }
                } else if !reply.is_empty() {
                    out.extend_from_slice(b"PUB ");
                    out.extend_from_slice(reply);
                    out.extend_from_slice(b" 0\r\n\r\n");
                }
            }
        });
        if let Err(e) = drained {
            error = Some(e.to_string());
            break;
        }
        if !done {
            last = Instant::now();
        }
        counter.store(count, Ordering::Relaxed);
        env.done.fetch_add(count - reported, Ordering::Relaxed);
        reported = count;
        if let Err(e) = c.flush_out().await {
            error = Some(e.to_string());
            break;
        }
        if done {
            break;
        }
    }
    let first = first.unwrap_or(last);
    SubOut {
        sample: ClientSample {
            id: format!("S{}", i + 1),
            msgs: count,
            bytes: count * env.spec.size,
            proto_msgs: c.msgs_in + c.msgs_out,
            proto_bytes: c.bytes_in + c.bytes_out,
            start_s: env.secs(first),
            end_s: env.secs(last.max(first)),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        error,
    }
}
