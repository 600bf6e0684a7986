//! JetStream publishing on the raw protocol path.

use super::raw::{self, RawConn};
use super::result::{new_hist, ClientSample, LatencySummary};
use super::{env::*, exec::*, js::*};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// JetStream publishing on the raw path: each message carries its own reply subject (`<inbox><seq>`), up
/// to `window` are in flight (1 = synchronous), acks are matched by sequence and timed from the send (or
/// intended) time. A single task writes batches and reads acks, as nats.go's PublishAsync does in effect.
/// `c` is already subscribed to the ack inbox of global worker `i` and its path proven (`js_run`).
#[allow(clippy::too_many_arguments)]
pub(super) async fn js_pub_raw(
    env: &Env,
    i: usize,
    mut c: RawConn,
    subject: &str,
    payload: &Bytes,
    n: u64,
    window: usize,
    mut pacer: Option<Pacer>,
) -> TaskOut {
    const BATCH: usize = 64 * 1024;
    let window = window.max(1) as u64;
    let inbox = ack_inbox(env, i);
    let prefix = format!("PUB {subject} {inbox}").into_bytes();
    let len_suffix = format!(" {}\r\n", payload.len()).into_bytes();
    let mut sent_ns = vec![0u64; window as usize];
    let mut hist = new_hist();
    let (mut sent, mut resolved, mut ok, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let (mut fatal, mut ack_error, mut behind) = (None::<String>, None::<String>, false);
    let mut unacked = 0u64;
    let t0 = Instant::now();
    let mut last = t0;
    let mut last_progress = Instant::now();
    let mut cancelled = false;
    while fatal.is_none() {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        // Send while the window has room (and, open loop, while messages are due).
        let mut wake_at = None;
        while sent < n && !behind && sent - resolved < window {
            let t = match pacer.as_mut() {
                Some(p) => {
                    if p.would_wait(sent) && sent > resolved {
                        // Not due yet and acks are outstanding: read them until it is.
                        wake_at = Some(p.intended(sent));
                        break;
                    }
                    if p.would_wait(sent) {
                        if let Err(e) = c.flush_out().await {
                            fatal = Some(e.to_string());
                            break;
                        }
                    }
                    match p.due(sent).await {
                        Ok(intended) => env.ns(intended),
                        Err(()) => {
                            behind = true;
                            break;
                        }
                    }
                }
                None => env.ns(Instant::now()),
            };
            sent_ns[(sent % window) as usize] = t;
            c.out.extend_from_slice(&prefix);
            raw::push_num(&mut c.out, sent);
            c.out.extend_from_slice(&len_suffix);
            c.out.extend_from_slice(payload);
            c.out.extend_from_slice(b"\r\n");
            sent += 1;
            if c.out.len() >= BATCH {
                if let Err(e) = c.flush_out().await {
                    fatal = Some(e.to_string());
                    break;
                }
            }
        }
        if fatal.is_some() {
            break;
        }
        if let Err(e) = c.flush_out().await {
            fatal = Some(e.to_string());
            break;
        }
        if resolved == sent && (sent == n || behind) {
            break;
        }
        let deadline = wake_at.unwrap_or(last_progress + env.spec.timeout);
        let res = tokio::select! {
            r = c.fill() => r.map(Some),
            _ = tokio::time::sleep_until(deadline.into()) => Ok(None),
            _ = env.cancel.cancelled() => {
                cancelled = true;
                break;
            }
        };
        match res {
            Err(e) => {
                fatal = Some(e.to_string());
                break;
            }
            Ok(None) => {
                if wake_at.is_none() && last_progress.elapsed() >= env.spec.timeout {
                    errors += sent - resolved;
                    unacked = sent - resolved;
                    fatal = Some(format!(
                        "{} acks did not arrive within {:?}",
                        sent - resolved,
                        env.spec.timeout
                    ));
                    break;
                }
                continue;
            }
            Ok(Some(_)) => {}
        }
        let before = resolved;
        let now_ns = env.ns(Instant::now());
        let drained = c.drain(|f, _| {
            if let raw::Frame::Msg { subject, payload, .. } = f {
                let Some(seq) = subject.get(inbox.len()..).and_then(|d| raw::parse_num(d).ok()) else {
                    return;
                };
                if seq >= sent || seq < resolved.saturating_sub(window) {
                    return;
                }
                resolved += 1;
                if payload.windows(7).any(|w| w == b"\"error\"") {
                    errors += 1;
                    ack_error.get_or_insert_with(|| String::from_utf8_lossy(payload).into_owned());
                } else {
                    ok += 1;
                    let _ = hist.record(now_ns.saturating_sub(sent_ns[(seq % window) as usize]).max(1));
                }
            }
        });
        if let Err(e) = drained {
            fatal = Some(e.to_string());
            break;
        }
        if resolved > before {
            last = Instant::now();
            last_progress = last;
            env.done.fetch_add(resolved - before, Ordering::Relaxed);
        }
        // An error ack is data, not the end of the run: keep going unless nothing ever succeeds.
        if errors > 100 && ok == 0 {
            break;
        }
    }
    // The connection broke or the run was stopped with publishes in flight: their acks never came.
    // (The timeout above has counted its own already.)
    if unacked == 0 && sent > resolved {
        unacked = sent - resolved;
        errors += unacked;
    }
    TaskOut {
        stopped: fatal.clone(),
        unacked,
        cancelled,
        sample: ClientSample {
            id: format!("P{}", i + 1),
            msgs: ok,
            bytes: ok * payload.len() as u64,
            proto_msgs: sent + c.msgs_in,
            proto_bytes: c.bytes_in + c.bytes_out,
            start_s: env.secs(t0),
            end_s: env.secs(last.max(t0)),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        errors,
        first_error: fatal.or(ack_error),
        behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}
