//! The shared client executor: pacing, the per-task tally (histogram, counts, errors), the progress bar,
//! and assembling task outputs into a result.

use super::env::*;
use super::raw::{RawConn, RawTarget};
use super::result::{new_hist, BenchResult, ClientSample, LatencySummary, RateOutcome};
use super::{BenchError, ClientChoice};
use anyhow::anyhow;
use async_nats::jetstream;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Open-loop pacing: message `i` is due at `start + i / rate`. Latency is measured from that intended
/// time, so a stalled server shows up as latency instead of silently slowing the sender (no coordinated
/// omission). Falling further behind than the cut-off ends the run as not sustained.
pub(super) struct Pacer {
    pub(super) start: Instant,
    pub(super) per_msg_s: f64,
    pub(super) cutoff: Duration,
    pub(super) max_lag: Duration,
}

impl Pacer {
    pub(super) fn new(start: Instant, rate_per_s: f64, cutoff: Duration) -> Pacer {
        Pacer {
            start,
            per_msg_s: 1.0 / rate_per_s,
            cutoff,
            max_lag: Duration::ZERO,
        }
    }
    pub(super) fn intended(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(i as f64 * self.per_msg_s)
    }
    /// Whether message `i` is not due yet (the caller flushes before `due` sleeps).
    pub(super) fn would_wait(&self, i: u64) -> bool {
        self.intended(i) > Instant::now()
    }
    /// Wait until message `i` is due; Err when the schedule is lost.
    pub(super) async fn due(&mut self, i: u64) -> Result<Instant, ()> {
        let intended = self.intended(i);
        let now = Instant::now();
        if intended > now {
            tokio::time::sleep_until(intended.into()).await;
        } else {
            let lag = now - intended;
            self.max_lag = self.max_lag.max(lag);
            if lag > self.cutoff {
                return Err(());
            }
        }
        Ok(intended)
    }
}

/// What one publishing/requesting/putting task reports.
pub(super) struct TaskOut {
    pub(super) sample: ClientSample,
    pub(super) hist: Histogram<u64>,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
    pub(super) behind: bool,
    pub(super) max_lag: Duration,
    /// Operations sent whose answer never came (also counted in `errors`).
    pub(super) unacked: u64,
    /// Why the task stopped before its last operation, when it did for a reason other than `behind`.
    pub(super) stopped: Option<String>,
    /// The run's token stopped it.
    pub(super) cancelled: bool,
}

/// How one worker's operations are driven by `drive`.
pub(super) struct Drive {
    /// Operations to do, numbered `first..first + n`.
    pub(super) n: u64,
    pub(super) first: u64,
    /// Open loop: when each is due (latency then runs from the intended time).
    pub(super) pacer: Option<Pacer>,
    /// No wait for one operation lasts longer than this; the operation is then unanswered.
    pub(super) bound: Option<Duration>,
    /// An unanswered operation ends the worker (JetStream publishing, as the raw path does: nothing
    /// answered within `--timeout` means the path to the stream is gone).
    pub(super) stall_ends: bool,
    /// Stop once this many operations failed and none succeeded.
    pub(super) give_up_after: u64,
    /// Stop at the first failure (a core publish fails only when the connection is gone).
    pub(super) stop_on_error: bool,
    /// Record each successful operation's latency.
    pub(super) record: bool,
}

impl Drive {
    /// Closed or open loop over `n` operations with the run's usual stopping rules: operations bounded
    /// by nothing but their own timeouts, a worker that never succeeds gives up after 100 failures.
    pub(super) fn ops(n: u64, pacer: Option<Pacer>) -> Drive {
        Drive {
            n,
            first: 0,
            pacer,
            bound: None,
            stall_ends: false,
            give_up_after: 100,
            stop_on_error: false,
            record: true,
        }
    }
}

/// One operation's place in the loop: its index.
#[derive(Clone, Copy)]
pub(super) struct Tick {
    pub(super) j: u64,
}

/// Why one operation did not succeed.
pub(super) enum Fail {
    /// The server answered with an error (an error ack, a refused put): data, the run goes on.
    Refused(String),
    /// No answer came (a timed-out ack, a connection gone): an unacknowledged operation.
    Unanswered(String),
    /// The client's connection broke: the operation failed and the worker ends (the raw requester).
    Gone(String),
}

impl Fail {
    /// A JetStream publish error: a timeout is an ack that never came, anything else an answer.
    pub(super) fn of_publish(e: &jetstream::context::PublishError) -> Fail {
        match e.kind() {
            jetstream::context::PublishErrorKind::TimedOut => Fail::Unanswered(e.to_string()),
            _ => Fail::Refused(e.to_string()),
        }
    }
    pub(super) fn refused(e: impl std::fmt::Display) -> Fail {
        Fail::Refused(e.to_string())
    }
}

/// What `drive` counted.
pub(super) struct Tally {
    pub(super) hist: Histogram<u64>,
    pub(super) ok: u64,
    pub(super) errors: u64,
    pub(super) unacked: u64,
    pub(super) first_error: Option<String>,
    pub(super) behind: bool,
    pub(super) cancelled: bool,
    pub(super) stopped: Option<String>,
    pub(super) t0: Instant,
    pub(super) t1: Instant,
    pub(super) max_lag: Duration,
}

impl Tally {
    /// The task's report: `id` names the client, `bytes_per_op` sizes its byte counts, `proto` its
    /// connection's protocol counters.
    pub(super) fn into_out(self, env: &Env, id: String, bytes_per_op: u64, proto: (u64, u64)) -> TaskOut {
        TaskOut {
            sample: ClientSample {
                id,
                msgs: self.ok,
                bytes: self.ok * bytes_per_op,
                proto_msgs: proto.0,
                proto_bytes: proto.1,
                start_s: env.secs(self.t0),
                end_s: env.secs(self.t1.max(self.t0)),
                latency_us: LatencySummary::from_hist_ns(&self.hist),
            },
            hist: self.hist,
            errors: self.errors,
            first_error: self.first_error,
            behind: self.behind,
            max_lag: self.max_lag,
            unacked: self.unacked,
            stopped: self.stopped,
            cancelled: self.cancelled,
        }
    }
}

/// The shared client loop: pace, operate, record, count errors, stop. Every wait (the pacer's sleep,
/// the operation) also ends when the run's token trips, and with `bound` when nothing answered in time,
/// so no worker can outlive its run's rules. Progress is published to `env.done` in batches.
pub(super) async fn drive<F, Fut>(env: &Env, mut d: Drive, mut op: F) -> Tally
where
    F: FnMut(Tick) -> Fut,
    Fut: std::future::Future<Output = Result<(), Fail>>,
{
    let t0 = Instant::now();
    let mut t = Tally {
        hist: new_hist(),
        ok: 0,
        errors: 0,
        unacked: 0,
        first_error: None,
        behind: false,
        cancelled: false,
        stopped: None,
        t0,
        t1: t0,
        max_lag: Duration::ZERO,
    };
    let (mut pending, mut flushed) = (0u64, t0);
    for j in d.first..d.first + d.n {
        if env.cancel.is_cancelled() {
            t.cancelled = true;
            break;
        }
        let due = match d.pacer.as_mut() {
            Some(p) => {
                let r = tokio::select! {
                    r = p.due(j - d.first) => r,
                    _ = env.cancel.cancelled() => {
                        t.cancelled = true;
                        break;
                    }
                };
                match r {
                    Ok(x) => Some(x),
                    Err(()) => {
                        t.behind = true;
                        break;
                    }
                }
            }
            None => None,
        };
        let started = Instant::now();
        let bound = async {
            match d.bound {
                Some(b) => tokio::time::sleep(b).await,
                None => std::future::pending().await,
            }
        };
        let res = tokio::select! {
            biased;
            r = op(Tick { j }) => r,
            _ = env.cancel.cancelled() => {
                // Abandoned mid-way: its answer never came.
                t.cancelled = true;
                t.unacked += 1;
                t.errors += 1;
                break;
            }
            _ = bound => Err(Fail::Unanswered(format!("no answer within {:?}", d.bound.unwrap_or_default()))),
        };
        let now = Instant::now();
        match res {
            Ok(()) => {
                if d.record {
                    let from = due.unwrap_or(started);
                    let _ = t
                        .hist
                        .record((now.saturating_duration_since(from).as_nanos() as u64).max(1));
                }
                t.ok += 1;
                t.t1 = now;
                pending += 1;
            }
            Err(Fail::Refused(e)) => {
                t.errors += 1;
                t.first_error.get_or_insert(e);
                if d.stop_on_error {
                    break;
                }
            }
            Err(Fail::Gone(e)) => {
                t.errors += 1;
                t.first_error.get_or_insert(e);
                break;
            }
            Err(Fail::Unanswered(why)) => {
                t.errors += 1;
                t.unacked += 1;
                t.first_error.get_or_insert_with(|| why.clone());
                if d.stall_ends || d.stop_on_error {
                    t.stopped = Some(why);
                    break;
                }
            }
        }
        if t.errors >= d.give_up_after && t.ok == 0 {
            t.stopped
                .get_or_insert_with(|| format!("{} operations failed and none succeeded", t.errors));
            break;
        }
        if pending >= 4096 || now.saturating_duration_since(flushed) >= Duration::from_millis(50) {
            env.done.fetch_add(pending, Ordering::Relaxed);
            pending = 0;
            flushed = now;
        }
    }
    env.done.fetch_add(pending, Ordering::Relaxed);
    if t.ok == 0 {
        t.t1 = Instant::now();
    }
    t.max_lag = d.pacer.map(|p| p.max_lag).unwrap_or_default();
    t
}

pub(super) fn proto(c: &async_nats::Client) -> (u64, u64) {
    let s = c.statistics();
    (
        s.in_messages.load(Ordering::Relaxed) + s.out_messages.load(Ordering::Relaxed),
        s.in_bytes.load(Ordering::Relaxed) + s.out_bytes.load(Ordering::Relaxed),
    )
}

/// Draws a progress bar from the shared counter while the run goes on (stderr, terminals only).
pub(super) fn progress_task(
    env: &Arc<Env>,
    total: u64,
    what: &'static str,
) -> Option<(tokio::task::JoinHandle<()>, Arc<AtomicBool>)> {
    if !env.spec.progress || total == 0 {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {pos}/{len} ({per_sec}, eta {eta})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(what);
    let stop = Arc::new(AtomicBool::new(false));
    let (env, stop2) = (env.clone(), stop.clone());
    let h = tokio::spawn(async move {
        while !stop2.load(Ordering::Relaxed) {
            bar.set_position(env.done.load(Ordering::Relaxed).min(total));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        bar.finish_and_clear();
    });
    Some((h, stop))
}

pub(super) async fn stop_progress(p: Option<(tokio::task::JoinHandle<()>, Arc<AtomicBool>)>) {
    if let Some((h, stop)) = p {
        stop.store(true, Ordering::Relaxed);
        let _ = h.await;
    }
}

pub(super) fn params(env: &Env, extra: &[(&str, String)]) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("msgs".into(), env.spec.msgs.to_string());
    m.insert("msgsize".into(), env.spec.size.to_string());
    m.insert("servers".into(), env.conn.servers.len().to_string());
    if let Some(r) = env.spec.rate_per_s {
        m.insert("rate".into(), format!("{r}"));
    }
    for (k, v) in extra {
        m.insert((*k).into(), v.clone());
    }
    m
}

pub(super) fn blank_result(env: &Env, kind: &str, label: &str, params: BTreeMap<String, String>) -> BenchResult {
    BenchResult::blank(kind, label, params, env.spec.msgs, env.spec.size, &env.run_id)
}

/// Collect task outputs into a group, the merged histogram, errors and the rate verdict.
pub(super) fn absorb(
    env: &Env,
    r: &mut BenchResult,
    outs: Vec<TaskOut>,
    into_subs: bool,
    hists: &mut Vec<Histogram<u64>>,
) -> (bool, Duration) {
    let mut behind = false;
    let mut lag = Duration::ZERO;
    let mut errors = 0;
    let mut first = None;
    for o in outs {
        behind |= o.behind;
        lag = lag.max(o.max_lag);
        errors += o.errors;
        if first.is_none() {
            first = o.first_error.clone();
        }
        let c = &mut r.completion;
        c.done += o.sample.msgs;
        c.unacknowledged += o.unacked;
        c.interrupted |= o.cancelled;
        c.rate_cutoff |= o.behind;
        if c.stopped.is_none() {
            c.stopped = o.stopped.clone();
        }
        if o.errors == 0 {
            if let Some(e) = &o.first_error {
                // A task that ended on an error without a failed operation (a connection that broke).
                r.warnings.push(format!("client {} stopped: {e}", o.sample.id));
            }
        }
        hists.push(o.hist);
        if into_subs {
            r.subscribers.clients.push(o.sample);
        } else {
            r.publishers.clients.push(o.sample);
        }
    }
    r.failed += errors;
    if errors > 0 {
        r.warnings.push(format!(
            "{errors} operations failed (first: {})",
            first
                .filter(|f| !f.trim().is_empty())
                .unwrap_or_else(|| "the client gave no message for it".into())
        ));
    }
    let _ = env;
    (behind, lag)
}

/// Close a result: what was asked of this process, whether the token stopped the run, and a warning
/// that says so when the run is incomplete.
pub(super) fn finish(env: &Env, r: &mut BenchResult) {
    r.completion.asked = env.asked();
    r.completion.interrupted |= env.cancel.is_cancelled();
    if let Some(why) = r.completion.shortfall() {
        r.warnings.push(why);
    }
}

pub(super) fn rate_outcome(env: &Env, r: &BenchResult, behind: bool, lag: Duration) -> Option<RateOutcome> {
    let target = env.spec.rate_per_s?;
    let g = &r.publishers;
    Some(RateOutcome {
        target_per_s: target,
        achieved_per_s: g.msgs_per_s(),
        sustained: !behind,
        max_lag_ms: lag.as_secs_f64() * 1e3,
        cutoff_ms: env.spec.backlog_cutoff.as_secs_f64() * 1e3,
    })
}

// ---------------------------------------------------------------------------------------------- core

pub(super) struct SubOut {
    pub(super) sample: ClientSample,
    pub(super) hist: Histogram<u64>,
    /// Why the subscription ended early (the server closed a slow consumer, ...).
    pub(super) error: Option<String>,
}

pub(super) enum PubConn {
    Nats(async_nats::Client),
    Raw(RawConn),
}

/// Whether this run takes the raw path (`fits`: the run needs nothing only async-nats does).
/// The subject of each message one async-nats publisher sends: one subject, or natscli's
/// `--multisubject` subject per message (`Subjects::of`, numbered from the publisher's first message).
pub(super) struct Topic {
    one: async_nats::Subject,
    multi: Option<(super::Subjects, String, u64)>,
}

impl Topic {
    pub(super) fn new(subjects: &super::Subjects, base: String, first: u64) -> Topic {
        Topic {
            one: async_nats::Subject::from(base.as_str()),
            multi: subjects.multi.map(|_| (subjects.clone(), base, first)),
        }
    }
    /// The one subject, or the base `--multisubject` numbers.
    pub(super) fn base(&self) -> &str {
        match &self.multi {
            None => self.one.as_str(),
            Some((_, base, _)) => base,
        }
    }
    /// The `--multisubject` numbering and the publisher's first message number, if any.
    pub(super) fn numbering(&self) -> Option<(super::Subjects, u64)> {
        self.multi.as_ref().map(|(s, _, first)| (s.clone(), *first))
    }
    /// The subject of this publisher's message `j`.
    pub(super) fn of(&self, j: u64) -> async_nats::Subject {
        match &self.multi {
            None => self.one.clone(),
            Some((s, base, first)) => async_nats::Subject::from(s.of(base, first + j)),
        }
    }
}

pub(super) fn use_raw(env: &Env, fits: bool) -> Result<bool, BenchError> {
    let possible = env.conn.raw_target(0).is_some() && fits;
    match env.spec.client {
        ClientChoice::Auto => Ok(possible),
        ClientChoice::AsyncNats => Ok(false),
        ClientChoice::Raw if possible => Ok(true),
        ClientChoice::Raw => Err(BenchError::BadInput(anyhow!(
            "--client raw: this run needs async-nats (TLS, --creds, --nkey, --sub-buffer, --sub-sleep, core --multisubject or atomic batches); use --client auto"
        ))),
    }
}

pub(super) async fn raw_connect(t: &RawTarget, name: &str) -> Result<RawConn, BenchError> {
    let url = &t.display;
    match tokio::time::timeout(Duration::from_secs(5), RawConn::connect(t, name)).await {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(BenchError::CannotRun(anyhow!("{url}: {e}")))
        }
        Ok(Err(e)) => Err(BenchError::CannotRun(anyhow!("cannot connect to {url}: {e}"))),
        Err(_) => Err(BenchError::CannotRun(anyhow!("cannot connect to {url}: timed out"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[tokio::test]
    pub(super) async fn the_pacer_schedules_from_the_start_and_gives_up_past_the_cutoff() {
        let now = Instant::now();
        let mut p = Pacer::new(now, 1000.0, Duration::from_millis(100));
        assert_eq!(p.intended(500) - now, Duration::from_millis(500));
        assert!(p.would_wait(500) && !p.would_wait(0));
        assert!(p.due(0).await.is_ok());
        let mut late = Pacer::new(now - Duration::from_secs(2), 1000.0, Duration::from_millis(100));
        assert!(
            late.due(0).await.is_err(),
            "two seconds behind a 100 ms cut-off is not sustained"
        );
        assert!(late.max_lag >= Duration::from_secs(2));
    }
}
