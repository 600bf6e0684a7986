//! JetStream publishing on the raw protocol path.

use super::raw::{self, RawConn};
use super::result::{new_hist, ClientSample, LatencySummary};
use super::{env::*, exec::*, jetstream::*};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How often a raw publisher waiting for acks looks at the run's token.
const CANCEL_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// One raw-path publisher's state: the connection, what is in flight (send times by sequence modulo the
/// window), counts and the histogram.
struct RawPub<'a> {
    c: RawConn,
    payload: &'a Bytes,
    inbox: String,
    prefix: Vec<u8>,
    len_suffix: Vec<u8>,
    window: u64,
    sent_ns: Vec<u64>,
    hist: hdrhistogram::Histogram<u64>,
    sent: u64,
    resolved: u64,
    ok: u64,
    errors: u64,
    ack_error: Option<String>,
    behind: bool,
}

impl RawPub<'_> {
    /// Send while the window has room (and, open loop, while messages are due). Returns when to wake
    /// for the next due message if acks are outstanding meanwhile; Err when the connection broke.
    async fn send(&mut self, env: &Env, n: u64, pacer: &mut Option<Pacer>) -> Result<Option<Instant>, String> {
        const BATCH: usize = 64 * 1024;
        while self.sent < n && !self.behind && self.sent - self.resolved < self.window {
            let t = match pacer.as_mut() {
                Some(p) => {
                    if p.would_wait(self.sent) && self.sent > self.resolved {
                        // Not due yet and acks are outstanding: read them until it is.
                        return Ok(Some(p.intended(self.sent)));
                    }
                    if p.would_wait(self.sent) {
                        self.c.flush_out().await.map_err(|e| e.to_string())?;
                    }
                    match p.due(self.sent).await {
                        Ok(intended) => env.ns(intended),
                        Err(()) => {
                            self.behind = true;
                            break;
                        }
                    }
                }
                None => env.ns(Instant::now()),
            };
            self.sent_ns[(self.sent % self.window) as usize] = t;
            let out = &mut self.c.out;
            out.extend_from_slice(&self.prefix);
            raw::push_num(out, self.sent);
            out.extend_from_slice(&self.len_suffix);
            out.extend_from_slice(self.payload);
            out.extend_from_slice(b"\r\n");
            self.sent += 1;
            if self.c.out.len() >= BATCH {
                self.c.flush_out().await.map_err(|e| e.to_string())?;
            }
        }
        Ok(None)
    }

    /// Match the acks read so far to their publishes (by the sequence in the reply subject).
    fn read_acks(&mut self, env: &Env) -> Result<(), String> {
        let now_ns = env.ns(Instant::now());
        let (inbox, window, sent) = (&self.inbox, self.window, self.sent);
        let (resolved, ok, errors) = (&mut self.resolved, &mut self.ok, &mut self.errors);
        let (hist, sent_ns, ack_error) = (&mut self.hist, &self.sent_ns, &mut self.ack_error);
        self.c
            .drain(|f, _| {
                if let raw::Frame::Msg { subject, payload, .. } = f {
                    let Some(seq) = subject.get(inbox.len()..).and_then(|d| raw::parse_num(d).ok()) else {
                        return;
                    };
                    if seq >= sent || seq < resolved.saturating_sub(window) {
                        return;
                    }
                    *resolved += 1;
                    if payload.windows(7).any(|w| w == b"\"error\"") {
                        *errors += 1;
                        ack_error.get_or_insert_with(|| String::from_utf8_lossy(payload).into_owned());
                    } else {
                        *ok += 1;
                        let _ = hist.record(now_ns.saturating_sub(sent_ns[(seq % window) as usize]).max(1));
                    }
                }
            })
            .map_err(|e| e.to_string())
    }
}

/// What one raw JetStream publisher sends: `n` messages of `payload` to `subject`, up to `window` in
/// flight.
pub(super) struct RawLoad<'a> {
    pub(super) subject: &'a str,
    pub(super) payload: &'a Bytes,
    pub(super) n: u64,
    pub(super) window: usize,
}

/// JetStream publishing on the raw path: each message carries its own reply subject (`<inbox><seq>`), up
/// to `window` are in flight (1 = synchronous), acks are matched by sequence and timed from the send (or
/// intended) time. A single task writes batches and reads acks, as nats.go's PublishAsync does in effect.
/// `c` is already subscribed to the ack inbox of global worker `i` and its path proven (`js_run`). Ends
/// when everything is acknowledged, the connection breaks, nothing answered for `--timeout`, or the run's
/// token trips; what is in flight then is unacknowledged.
pub(super) async fn js_pub_raw(
    env: &Env,
    i: usize,
    c: RawConn,
    load: &RawLoad<'_>,
    mut pacer: Option<Pacer>,
) -> TaskOut {
    let (subject, payload, n) = (load.subject, load.payload, load.n);
    let window = load.window.max(1) as u64;
    let inbox = ack_inbox(env, i);
    let mut p = RawPub {
        c,
        payload,
        prefix: format!("PUB {subject} {inbox}").into_bytes(),
        inbox,
        len_suffix: format!(" {}\r\n", payload.len()).into_bytes(),
        window,
        sent_ns: vec![0u64; window as usize],
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
    let mut last = t0;
    let mut last_progress = Instant::now();
    let mut cancelled = false;
    while fatal.is_none() {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let wake_at = match p.send(env, n, &mut pacer).await {
            Ok(w) => w,
            Err(e) => {
                fatal = Some(e);
                break;
            }
        };
        if let Err(e) = p.c.flush_out().await {
            fatal = Some(e.to_string());
            break;
        }
        if p.resolved == p.sent && (p.sent == n || p.behind) {
            break;
        }
        // The run's token is checked at the top of the loop; waking at least every CANCEL_POLL keeps a
        // silent connection from delaying that, without registering a waiter per read on the hot path.
        let deadline = wake_at
            .unwrap_or(last_progress + env.spec.timeout)
            .min(Instant::now() + CANCEL_POLL);
        let res = tokio::select! {
            r = p.c.fill() => r.map(Some),
            _ = tokio::time::sleep_until(deadline.into()) => Ok(None),
        };
        match res {
            Err(e) => {
                fatal = Some(e.to_string());
                break;
            }
            Ok(None) => {
                if wake_at.is_none() && last_progress.elapsed() >= env.spec.timeout {
                    unacked = p.sent - p.resolved;
                    p.errors += unacked;
                    fatal = Some(format!("{unacked} acks did not arrive within {:?}", env.spec.timeout));
                    break;
                }
                continue;
            }
            Ok(Some(_)) => {}
        }
        let before = p.resolved;
        if let Err(e) = p.read_acks(env) {
            fatal = Some(e);
            break;
        }
        if p.resolved > before {
            last = Instant::now();
            last_progress = last;
            env.done.fetch_add(p.resolved - before, Ordering::Relaxed);
        }
        // An error ack is data, not the end of the run: keep going unless nothing ever succeeds.
        if p.errors > 100 && p.ok == 0 {
            break;
        }
    }
    // The connection broke or the run was stopped with publishes in flight: their acks never came.
    // (The timeout above has counted its own already.)
    if unacked == 0 && p.sent > p.resolved {
        unacked = p.sent - p.resolved;
        p.errors += unacked;
    }
    TaskOut {
        stopped: fatal.clone(),
        unacked,
        cancelled,
        sample: ClientSample {
            id: format!("P{}", i + 1),
            msgs: p.ok,
            bytes: p.ok * payload.len() as u64,
            proto_msgs: p.sent + p.c.msgs_in,
            proto_bytes: p.c.bytes_in + p.c.bytes_out,
            start_s: env.secs(t0),
            end_s: env.secs(last.max(t0)),
            latency_us: LatencySummary::from_hist_ns(&p.hist),
        },
        hist: p.hist,
        errors: p.errors,
        first_error: fatal.or(p.ack_error),
        behind: p.behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}
