//! The work itself: connect, create `natsplan-*` assets, run publishers/subscribers/clients as tokio tasks
//! each with its own histogram, stop cleanly (subscribers never wait forever for dropped messages, `--rate`
//! runs stop when they fall behind), clean up, and assemble a `BenchResult`.

use super::conn::ConnectFailure;
use super::raw::{self, RawConn, RawTarget};
use super::result::{merge_hists, new_hist, BenchResult, ClientSample, Group, LatencySummary, Losses, RateOutcome};
use super::{varz, BenchError, BenchSpec, ClientChoice, ConnSpec, ObjOp, PublishMode, Storage, Workload};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::{Bytes, BytesMut};
use futures::StreamExt;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Closed-loop core runs stamp one message in this many with its send time (latency sampling that costs
/// no allocation for the others); open-loop and flood runs stamp every message.
const STAMP_EVERY: u64 = 64;

/// Shared run context: the clock anchor all samples are relative to, counters, the connection spec.
struct Env {
    conn: ConnSpec,
    anchor: Instant,
    slow_events: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
    spec: BenchSpec,
    run_id: String,
    /// This process's part of a run spread over agents (None: the whole run is here).
    share: Option<Share>,
    /// Held until the run's setup is done; then the coordinator says when the clock starts.
    gate: std::sync::Mutex<Option<Gate>>,
    /// When this process's clock started (the agreed start on agents).
    started: std::sync::OnceLock<Instant>,
    /// The run's merged latency histogram, kept for agents to send whole.
    hist: std::sync::Mutex<Option<Histogram<u64>>>,
}

/// One process's part of a run coordinated over agents (`natsplan agent`): which of the run's workers it
/// runs (global indices, so connections spread over the servers and subjects, inboxes and keys never
/// collide between agents), the run id every agent shares (so they use the same stream, bucket and
/// subject, created beforehand by the coordinator), and a stamp origin so latency is only ever computed
/// from a send time taken on this host's clock.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Share {
    pub run_id: String,
    /// Marks this process's latency stamps (1..); 0 is a whole run in one process.
    pub origin: u16,
    /// Publishers, putters or getters run here, in local order.
    pub workers: Vec<Slot>,
    /// Global indices of the subscribers run here (core and flood).
    pub subs: Vec<usize>,
    /// Workers and subscribers of the whole run, over every agent.
    pub total_workers: usize,
    pub total_subs: usize,
    /// Messages of the whole run (what each core subscriber expects).
    pub total_msgs: u64,
}

/// One worker of a shared run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    /// Index of the worker in the whole run (server `index % servers`, `P{index+1}`).
    pub index: usize,
    /// Messages, operations or objects it does.
    pub msgs: u64,
    /// Global index of its first item (object names, KV keys).
    pub first: u64,
}

/// How a run on an agent waits for its start: `ready` fires once its connections, subscriptions and
/// interest checks are done; `start` brings the local instant all agents start at.
pub struct Gate {
    pub ready: tokio::sync::oneshot::Sender<()>,
    pub start: tokio::sync::oneshot::Receiver<Instant>,
}

/// What a run on an agent hands back besides its result: the merged histogram (nanoseconds) and when
/// its clock started, in seconds after the anchor its samples are timed from.
pub struct ShareOutput {
    pub result: BenchResult,
    pub hist: Histogram<u64>,
    pub start_s: f64,
    /// How late the local start was against the agreed instant, in seconds.
    pub late_s: f64,
}

impl Env {
    fn new(conn: &ConnSpec, spec: &BenchSpec, run_id: String, share: Option<Share>, gate: Option<Gate>) -> Env {
        Env {
            conn: conn.clone(),
            anchor: Instant::now(),
            slow_events: Arc::new(AtomicU64::new(0)),
            done: Arc::new(AtomicU64::new(0)),
            spec: spec.clone(),
            run_id,
            share,
            gate: std::sync::Mutex::new(gate),
            started: std::sync::OnceLock::new(),
            hist: std::sync::Mutex::new(None),
        }
    }
    /// The clock's start: now, or on an agent, once setup is done, the instant the coordinator agreed.
    async fn start_clock(&self) -> Result<Instant, BenchError> {
        let gate = self.gate.lock().map(|mut g| g.take()).unwrap_or(None);
        let start = match gate {
            None => Instant::now(),
            Some(g) => {
                let _ = g.ready.send(());
                let at = g
                    .start
                    .await
                    .map_err(|_| BenchError::CannotRun(anyhow!("the coordinator did not start the run")))?;
                tokio::time::sleep_until(at.into()).await;
                at
            }
        };
        let _ = self.started.set(start);
        Ok(start)
    }
    /// Stamp origin of this process (0 for a whole run).
    fn origin(&self) -> u16 {
        self.share.as_ref().map(|s| s.origin).unwrap_or(0)
    }
    /// Messages per local worker.
    fn per_worker(&self, n: usize) -> Vec<u64> {
        match &self.share {
            Some(s) => s.workers.iter().map(|w| w.msgs).collect(),
            None => split(self.spec.msgs, n),
        }
    }
    /// Global index of local worker `i`.
    fn worker(&self, i: usize) -> usize {
        self.share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.index)
            .unwrap_or(i)
    }
    /// Global index of local subscriber `i`.
    fn sub(&self, i: usize) -> usize {
        self.share.as_ref().and_then(|s| s.subs.get(i)).copied().unwrap_or(i)
    }
    /// Subscribers in the whole run.
    fn total_subs(&self, local: usize) -> usize {
        self.share.as_ref().map(|s| s.total_subs).unwrap_or(local)
    }
    /// Open-loop rate of one worker: the aggregate rate over every worker of the run.
    fn worker_rate(&self, local: usize) -> Option<f64> {
        let n = self.share.as_ref().map(|s| s.total_workers).unwrap_or(local).max(1);
        self.spec.rate_per_s.map(|r| r / n as f64)
    }
    /// Streams, buckets and object stores are created and removed by this process (not on agents).
    fn owns_assets(&self) -> bool {
        self.share.is_none()
    }
    /// Summarise the merged histogram and keep it.
    fn summary(&self, hists: &[Histogram<u64>]) -> Option<LatencySummary> {
        let h = merge_hists(hists);
        let s = LatencySummary::from_hist_ns(&h);
        if let Ok(mut k) = self.hist.lock() {
            *k = Some(h);
        }
        s
    }
    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.anchor).as_secs_f64()
    }
    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.anchor).as_nanos() as u64
    }
    async fn connect(&self, i: usize, role: &str) -> Result<async_nats::Client, BenchError> {
        self.conn
            .connect(i, role, Some(self.slow_events.clone()))
            .await
            .map_err(connect_err)
    }
}

fn connect_err(e: ConnectFailure) -> BenchError {
    match e {
        ConnectFailure::Setup(e) => BenchError::BadInput(e),
        ConnectFailure::Unreachable(e) => BenchError::CannotRun(e),
    }
}

fn cannot(e: impl std::fmt::Display, what: &str) -> BenchError {
    BenchError::CannotRun(anyhow!("{what}: {e}"))
}

/// Split `n` over `k` workers, the remainder going to the first ones (nats-bench's MsgsPerClient).
pub fn split(n: u64, k: usize) -> Vec<u64> {
    let k = k.max(1) as u64;
    (0..k).map(|i| n / k + u64::from(i < n % k)).collect()
}

/// Open-loop pacing: message `i` is due at `start + i / rate`. Latency is measured from that intended
/// time, so a stalled server shows up as latency instead of silently slowing the sender (no coordinated
/// omission). Falling further behind than the cut-off ends the run as not sustained.
struct Pacer {
    start: Instant,
    per_msg_s: f64,
    cutoff: Duration,
    max_lag: Duration,
}

impl Pacer {
    fn new(start: Instant, rate_per_s: f64, cutoff: Duration) -> Pacer {
        Pacer {
            start,
            per_msg_s: 1.0 / rate_per_s,
            cutoff,
            max_lag: Duration::ZERO,
        }
    }
    fn intended(&self, i: u64) -> Instant {
        self.start + Duration::from_secs_f64(i as f64 * self.per_msg_s)
    }
    /// Whether message `i` is not due yet (the caller flushes before `due` sleeps).
    fn would_wait(&self, i: u64) -> bool {
        self.intended(i) > Instant::now()
    }
    /// Wait until message `i` is due; Err when the schedule is lost.
    async fn due(&mut self, i: u64) -> Result<Instant, ()> {
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
struct TaskOut {
    sample: ClientSample,
    hist: Histogram<u64>,
    errors: u64,
    first_error: Option<String>,
    behind: bool,
    max_lag: Duration,
}

fn proto(c: &async_nats::Client) -> (u64, u64) {
    let s = c.statistics();
    (
        s.in_messages.load(Ordering::Relaxed) + s.out_messages.load(Ordering::Relaxed),
        s.in_bytes.load(Ordering::Relaxed) + s.out_bytes.load(Ordering::Relaxed),
    )
}

/// Bits of a stamp that carry the time; the 16 above carry the origin (which process stamped it).
const STAMP_TIME_BITS: u32 = 48;

/// The 8-byte stamp: send time + 1 (so a stamp is never zero: zero marks an unstamped message) in the
/// low 48 bits (78 hours of nanoseconds), the stamping process's origin above.
fn stamp_word(origin: u16, t_ns: u64) -> u64 {
    ((origin as u64) << STAMP_TIME_BITS) | ((t_ns + 1) & ((1u64 << STAMP_TIME_BITS) - 1))
}

fn stamped(template: &Bytes, origin: u16, t_ns: u64) -> Bytes {
    let mut b = BytesMut::with_capacity(template.len());
    b.extend_from_slice(&stamp_word(origin, t_ns).to_le_bytes());
    b.extend_from_slice(&template[8..]);
    b.freeze()
}

/// The send time of a stamped message, when it was stamped by `origin` (another host's clock means
/// nothing here: latency is measured per host, never across clocks).
fn read_stamp(p: &[u8], origin: u16) -> Option<u64> {
    let s = u64::from_le_bytes(p.get(..8)?.try_into().ok()?);
    let t = s & ((1u64 << STAMP_TIME_BITS) - 1);
    (t != 0 && (s >> STAMP_TIME_BITS) as u16 == origin).then(|| t - 1)
}

/// Draws a progress bar from the shared counter while the run goes on (stderr, terminals only).
fn progress_task(
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

async fn stop_progress(p: Option<(tokio::task::JoinHandle<()>, Arc<AtomicBool>)>) {
    if let Some((h, stop)) = p {
        stop.store(true, Ordering::Relaxed);
        let _ = h.await;
    }
}

/// Run one benchmark. Errors: bad input (exit 2) or cannot run (exit 3); everything else is a result
/// with warnings.
pub async fn run(conn: &ConnSpec, spec: &BenchSpec) -> Result<BenchResult, BenchError> {
    validate(spec)?;
    let env = Arc::new(Env::new(conn, spec, new_run_id(), None, None));
    dispatch(&env).await
}

/// A fresh run id: seconds since the epoch and the pid, so runs from different processes do not collide.
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{:x}{:04x}{:02x}",
        now.as_secs(),
        std::process::id() & 0xffff,
        now.subsec_nanos() & 0xff
    )
}

/// Check a whole run's spec (the coordinator does, before splitting it over agents).
pub fn check(spec: &BenchSpec) -> Result<(), BenchError> {
    validate(spec)
}

/// Run this process's share of a run spread over agents: `spec` holds the local worker counts and the
/// share's messages; the streams, buckets and object stores exist already (`prepare_shared`). The clock
/// starts when `gate` says so. `progress` counts completed operations as they happen.
pub async fn run_share(
    conn: &ConnSpec,
    spec: &BenchSpec,
    share: Share,
    gate: Gate,
    progress: Arc<AtomicU64>,
) -> Result<ShareOutput, BenchError> {
    let mut env = Env::new(conn, spec, share.run_id.clone(), Some(share), Some(gate));
    env.done = progress;
    let env = Arc::new(env);
    let mut result = dispatch(&env).await?;
    // Name clients by their index in the whole run, so the merged report lists P1..Pn once each.
    let renumber = |c: &mut crate::bench::result::ClientSample, n: usize| {
        let prefix: String = c.id.chars().take_while(|ch| ch.is_ascii_alphabetic()).collect();
        c.id = format!("{prefix}{}", n + 1);
    };
    for (k, c) in result.publishers.clients.iter_mut().enumerate() {
        renumber(c, env.worker(k));
    }
    let subs_are_workers = result.kind == "obj-get";
    for (k, c) in result.subscribers.clients.iter_mut().enumerate() {
        renumber(c, if subs_are_workers { env.worker(k) } else { env.sub(k) });
    }
    let hist = env.hist.lock().ok().and_then(|mut h| h.take()).unwrap_or_else(new_hist);
    let start = env.started.get().copied().unwrap_or(env.anchor);
    let first_start = result
        .publishers
        .start_s()
        .into_iter()
        .chain(result.subscribers.start_s())
        .reduce(f64::min);
    let start_s = env.secs(start);
    Ok(ShareOutput {
        result,
        hist,
        start_s,
        late_s: first_start.map(|f| (f - start_s).max(0.0)).unwrap_or(0.0),
    })
}

async fn dispatch(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    match spec.workload.clone() {
        Workload::Core { pubs, subs } => core(env, pubs, subs, false).await,
        Workload::Flood { pubs } => {
            let subs = env.share.as_ref().map(|s| s.subs.len()).unwrap_or(1);
            core(env, pubs, subs, true).await
        }
        Workload::Ping => ping(env).await,
        Workload::Js {
            pubs,
            replicas,
            storage,
            publish,
            window,
        } => js(env, pubs, replicas, storage, publish, window).await,
        Workload::Kv {
            clients,
            replicas,
            storage,
        } => kv(env, clients, replicas, storage).await,
        Workload::Obj {
            op,
            clients,
            replicas,
            storage,
        } => obj(env, op, clients, replicas, storage).await,
    }
}

fn validate(spec: &BenchSpec) -> Result<(), BenchError> {
    let bad = |m: String| Err(BenchError::BadInput(anyhow!(m)));
    if spec.msgs == 0 {
        return bad("--msgs must be at least 1".into());
    }
    if let Some(r) = spec.rate_per_s {
        if !(r.is_finite() && r > 0.0) {
            return bad(format!("--rate {r}: give a positive messages-per-second rate"));
        }
        match spec.workload {
            Workload::Core { .. } | Workload::Js { .. } | Workload::Kv { .. } => {}
            _ => {
                return bad(format!(
                    "--rate applies to core, js and kv; `{}` does not take it",
                    spec.workload.kind()
                ))
            }
        }
    }
    let workers = match spec.workload {
        Workload::Core { pubs, subs } => {
            if pubs == 0 && subs == 0 {
                return bad("--pubs and --subs are both 0: nothing to run".into());
            }
            pubs
        }
        Workload::Flood { pubs } | Workload::Js { pubs, .. } => pubs,
        Workload::Kv { clients, .. } | Workload::Obj { clients, .. } => clients,
        Workload::Ping => 1,
    };
    if workers == 0 {
        return bad("the number of publishers/clients must be at least 1 (--pubs / --clients)".into());
    }
    let needs_stamp = spec.rate_per_s.is_some() || matches!(spec.workload, Workload::Flood { .. });
    if needs_stamp && matches!(spec.workload, Workload::Core { .. } | Workload::Flood { .. }) && spec.size < 8 {
        return bad(format!(
            "--size {}: latency runs (flood, --rate) carry an 8-byte send time; use --size 8 or more",
            spec.size
        ));
    }
    let (replicas, window) = match spec.workload {
        Workload::Js { replicas, window, .. } => (replicas, window),
        Workload::Kv { replicas, .. } | Workload::Obj { replicas, .. } => (replicas, 1),
        _ => (1, 1),
    };
    if !(1..=5).contains(&replicas) {
        return bad(format!("--replicas {replicas}: JetStream allows 1 to 5 replicas"));
    }
    if window == 0 {
        return bad("--window must be at least 1".into());
    }
    Ok(())
}

fn params(env: &Env, extra: &[(&str, String)]) -> BTreeMap<String, String> {
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

fn blank_result(env: &Env, kind: &str, label: &str, params: BTreeMap<String, String>) -> BenchResult {
    BenchResult {
        kind: kind.into(),
        label: label.into(),
        params,
        msgs: env.spec.msgs,
        size: env.spec.size,
        publishers: Group::default(),
        subscribers: Group::default(),
        latency_us: None,
        rate: None,
        losses: None,
        warnings: vec![],
        failed: 0,
        ops: false,
        run_id: env.run_id.clone(),
    }
}

/// Collect task outputs into a group, the merged histogram, errors and the rate verdict.
fn absorb(
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
            first.unwrap_or_default()
        ));
    }
    let _ = env;
    (behind, lag)
}

fn rate_outcome(env: &Env, r: &BenchResult, behind: bool, lag: Duration) -> Option<RateOutcome> {
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

struct SubOut {
    sample: ClientSample,
    hist: Histogram<u64>,
    /// Why the subscription ended early (the server closed a slow consumer, ...).
    error: Option<String>,
}

enum SubConn {
    Nats(async_nats::Client, async_nats::Subscriber),
    Raw(RawConn),
}

enum PubConn {
    Nats(async_nats::Client),
    Raw(RawConn),
}

/// Whether this run takes the raw path (`fits`: the run needs nothing only async-nats does).
fn use_raw(env: &Env, fits: bool) -> Result<bool, BenchError> {
    let possible = env.conn.raw_target(0).is_some() && fits;
    match env.spec.client {
        ClientChoice::Auto => Ok(possible),
        ClientChoice::AsyncNats => Ok(false),
        ClientChoice::Raw if possible => Ok(true),
        ClientChoice::Raw => Err(BenchError::BadInput(anyhow!(
            "--client raw: this run needs async-nats (TLS, --creds, --nkey, --sub-buffer or --sub-sleep); use --client auto"
        ))),
    }
}

async fn raw_connect(t: &RawTarget, name: &str) -> Result<RawConn, BenchError> {
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

/// Closed-loop and open-loop core publishing on the raw path: one buffer, a precomputed `PUB` header,
/// one write per 64 KiB; flushed before every pacing sleep so open-loop messages leave on time.
#[allow(clippy::too_many_arguments)]
async fn core_pub_raw(
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
    for j in 0..n {
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
    }
}

async fn core_sub_raw(
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

async fn core(env: &Arc<Env>, pubs: usize, subs: usize, flood: bool) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let subject = format!("natsplan.bench.{}", env.run_id);
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
    let raw = use_raw(env, spec.sub_buffer.is_none() && spec.sub_sleep.is_none())?;
    r.params
        .insert("client".into(), if raw { "raw" } else { "async-nats" }.into());

    // Subscribers first, each on its own connection, spread over the servers.
    // On agents every subscriber expects the whole run's messages, not this agent's share of them.
    let expected = Arc::new(AtomicU64::new(
        env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs),
    ));
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let mut sub_conns = Vec::new();
    let mut counters = Vec::new();
    for i in 0..subs {
        // A probe subject per subscriber, subscribed after the main one: once a publisher's server sees
        // the probe's interest it has seen the main subject's too (route interest is ordered).
        let probe_subject = format!("{subject}.probe.{}", env.sub(i));
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
    // Subscriber tasks run from here on: on the raw path they also answer the interest probes.
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
    // Every server a publisher uses must know every subscriber's interest before the clock starts.
    // (On agents: every subscriber of the whole run, wherever it runs.)
    if total_subs > 0 {
        for k in 0..pubs.min(env.conn.servers.len()) {
            let probe_client = env.connect(env.worker(k) + total_subs, "probe").await?;
            for i in 0..total_subs {
                wait_for_interest(&probe_client, &format!("{subject}.probe.{i}"), spec.timeout).await?;
            }
        }
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
        let (env, subject, template, n) = (env.clone(), subject.clone(), template.clone(), per_pub[i]);
        let rate = env.worker_rate(pubs);
        pub_tasks.push(tokio::spawn(async move {
            match pc {
                PubConn::Nats(c) => {
                    let subject = async_nats::Subject::from(subject.as_str());
                    core_pub(&env, i, c, subject, template, n, stamp_every, rate, start).await
                }
                PubConn::Raw(c) => core_pub_raw(&env, i, c, &subject, &template, n, stamp_every, rate, start).await,
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

    // Watchdog: subscribers are done when each has everything published; if messages stop arriving for
    // `timeout` (dropped by a slow-consumer cut-off) they are told to stop and the loss is reported.
    let mut timed_out = false;
    if subs > 0 {
        let mut last_total = u64::MAX;
        let mut last_change = Instant::now();
        loop {
            let counts: Vec<u64> = counters.iter().map(|c| c.load(Ordering::Relaxed)).collect();
            if counts.iter().all(|&n| n >= published) {
                break;
            }
            let total: u64 = counts.iter().sum();
            if total != last_total {
                last_total = total;
                last_change = Instant::now();
            } else if last_change.elapsed() > spec.timeout {
                timed_out = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
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
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    Ok(r)
}

async fn wait_for_interest(c: &async_nats::Client, probe: &str, timeout: Duration) -> Result<(), BenchError> {
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
async fn core_pub(
    env: &Env,
    i: usize,
    c: async_nats::Client,
    subject: async_nats::Subject,
    template: Bytes,
    n: u64,
    stamp_every: u64,
    rate: Option<f64>,
    start: Instant,
) -> TaskOut {
    let mut pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
    let can_stamp = template.len() >= 8;
    let mut errors = 0u64;
    let mut first_error = None;
    let mut sent = 0u64;
    let mut behind = false;
    let t0 = Instant::now();
    for j in 0..n {
        let payload = if let Some(p) = pacer.as_mut() {
            match p.due(j).await {
                Ok(intended) => stamped(&template, env.origin(), env.ns(intended)),
                Err(()) => {
                    behind = true;
                    break;
                }
            }
        } else if can_stamp && j % stamp_every == 0 {
            stamped(&template, env.origin(), env.ns(Instant::now()))
        } else {
            template.clone()
        };
        if let Err(e) = c.publish(subject.clone(), payload).await {
            errors += 1;
            first_error.get_or_insert_with(|| e.to_string());
            break;
        }
        sent += 1;
        if sent & 4095 == 0 {
            env.done.fetch_add(4096, Ordering::Relaxed);
        }
    }
    if let Err(e) = c.flush().await {
        errors += 1;
        first_error.get_or_insert_with(|| e.to_string());
    }
    let t1 = Instant::now();
    env.done.fetch_add(sent & 4095, Ordering::Relaxed);
    let (pm, pb) = proto(&c);
    TaskOut {
        sample: ClientSample {
            id: format!("P{}", i + 1),
            msgs: sent,
            bytes: sent * template.len() as u64,
            proto_msgs: pm,
            proto_bytes: pb,
            start_s: env.secs(t0),
            end_s: env.secs(t1),
            latency_us: None,
        },
        hist: new_hist(),
        errors,
        first_error,
        behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}

async fn core_sub(
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

// ---------------------------------------------------------------------------------------------- ping

async fn ping(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
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
    if ok == 0 {
        return Err(BenchError::CannotRun(anyhow!(
            "no request was answered: {}",
            r.warnings.join("; ")
        )));
    }
    let _ = spec;
    Ok(r)
}

/// Sequential request/reply on the raw path: the responder echoes on its own connection (the second
/// server when there are several), the requester waits for each reply on its inbox before the next.
async fn ping_raw(env: &Arc<Env>, subject: &str) -> Result<TaskOut, BenchError> {
    let spec = &env.spec;
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
    'requests: for j in 0..spec.msgs {
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
    })
}

async fn ping_nats(env: &Arc<Env>, subject: &str) -> Result<TaskOut, BenchError> {
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
    let mut hist = new_hist();
    let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None);
    if let Err(e) = env.start_clock().await {
        echo.abort();
        return Err(e);
    }
    let t0 = Instant::now();
    for _ in 0..spec.msgs {
        let a = Instant::now();
        match tokio::time::timeout(spec.timeout, requester.request(subject.clone(), payload.clone())).await {
            Ok(Ok(_)) => {
                let _ = hist.record((a.elapsed().as_nanos() as u64).max(1));
                ok += 1;
            }
            Ok(Err(e)) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
            }
            Err(_) => {
                errors += 1;
                first_error.get_or_insert_with(|| "request timed out".to_string());
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
    let (pm, pb) = proto(&requester);
    Ok(TaskOut {
        sample: ClientSample {
            id: "P1".into(),
            msgs: ok,
            bytes: ok * spec.size * 2,
            proto_msgs: pm,
            proto_bytes: pb,
            start_s: env.secs(t0),
            end_s: env.secs(t1),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        errors,
        first_error,
        behind: false,
        max_lag: Duration::ZERO,
    })
}

// ---------------------------------------------------------------------------------------------- JetStream

fn storage_type(s: Storage) -> jetstream::stream::StorageType {
    match s {
        Storage::File => jetstream::stream::StorageType::File,
        Storage::Memory => jetstream::stream::StorageType::Memory,
    }
}

/// JetStream asset creation retried: right after a cluster starts the meta leader may not be elected
/// yet, and a request can go unanswered (seen on a fresh 3-server loopback cluster: "create stream:
/// jetstream request timed out"). Each attempt waits `timeout`; attempts go on for three of them (at least
/// 15 s). An answer that refuses the asset (no room for its replicas, say) is retried for 5 s only, since
/// it is usually final. Creating with the same configuration again is harmless: the server answers with
/// what exists.
async fn retry<T, E: std::fmt::Display, F, Fut>(what: &str, timeout: Duration, mut f: F) -> Result<T, BenchError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let t0 = tokio::time::Instant::now();
    let unanswered = (timeout * 3).max(Duration::from_secs(15));
    let refused = timeout.max(Duration::from_secs(5));
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) => {
                let text = e.to_string().to_lowercase();
                let transient = text.contains("timed out") || text.contains("no responders");
                if t0.elapsed() > if transient { unanswered } else { refused } {
                    return Err(cannot(e, what));
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

fn js_context(c: async_nats::Client, env: &Env, window: usize) -> jetstream::Context {
    jetstream::context::ContextBuilder::new()
        .timeout(env.spec.timeout)
        .ack_timeout(env.spec.timeout)
        .max_ack_inflight(window.max(1))
        .backpressure_on_inflight(true)
        .build(c)
}

async fn js(
    env: &Arc<Env>,
    pubs: usize,
    replicas: usize,
    storage: Storage,
    mode: PublishMode,
    window: usize,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let stream = format!("natsplan-js-{}", env.run_id);
    let subject = format!("natsplan.js.{}", env.run_id);
    if env.owns_assets() {
        create_assets(env).await?;
    }
    let result = js_run(env, pubs, &subject, mode, window).await;
    if env.owns_assets() && !spec.keep {
        delete_assets(env).await;
    }
    let mut r = result?;
    r.label = match mode {
        PublishMode::Async => "JetStream asynchronous publisher",
        PublishMode::Sync => "JetStream synchronous publisher",
    }
    .into();
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("storage".into(), format!("{storage:?}").to_lowercase());
    r.params.insert("stream".into(), stream);
    if mode == PublishMode::Async {
        r.params.insert("window".into(), window.to_string());
    }
    Ok(r)
}

async fn js_run(
    env: &Arc<Env>,
    pubs: usize,
    subject: &str,
    mode: PublishMode,
    window: usize,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let raw = use_raw(env, true)?;
    let mut conns = Vec::new();
    // Before the clock starts, every publisher's path to the stream and back is proven (see
    // `raw::stream_answers_publish`): a publish or ack dropped while interest crosses the routes would
    // otherwise be counted as a failure, or delay the start inside the measured window.
    for i in 0..pubs {
        if raw {
            let t = env.conn.raw_target(env.worker(i)).expect("raw checked above");
            let mut c = raw_connect(&t, &format!("natsplan-bench-pub{i}")).await?;
            let inbox = ack_inbox(env, env.worker(i));
            c.out.extend_from_slice(format!("SUB {inbox}* 1\r\n").as_bytes());
            c.round_trip().await.map_err(|e| cannot(e, "subscribe to acks"))?;
            raw::stream_answers_publish(&mut c, subject, &inbox, probe_timeout(spec))
                .await
                .map_err(|e| BenchError::CannotRun(anyhow!(e)))?;
            conns.push(PubConn::Raw(c));
        } else {
            let c = env.connect(env.worker(i), "pub").await?;
            stream_answers_request(&c, subject, probe_timeout(spec)).await?;
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
        let rate = env.worker_rate(pubs);
        let window = if mode == PublishMode::Async { window } else { 1 };
        // The global index names the raw path's ack inbox: agents sharing a run never share an inbox.
        let gi = env.worker(i);
        tasks.push(tokio::spawn(async move {
            let pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
            match pc {
                PubConn::Raw(c) => js_pub_raw(&env, gi, c, &subject, &payload, n, window, pacer).await,
                PubConn::Nats(c) => {
                    let ctx = js_context(c.clone(), &env, window);
                    let subject = async_nats::Subject::from(subject.as_str());
                    let mut out = match mode {
                        PublishMode::Async => js_pub_async(&env, &ctx, subject, payload, n, window, pacer).await,
                        PublishMode::Sync => js_pub_sync(&env, &ctx, subject, payload, n, pacer).await,
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
    if r.published() == 0 {
        return Err(BenchError::CannotRun(anyhow!(
            "no publish was acknowledged: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

/// The raw path's ack inbox of global worker `i` (a prefix: each publish's reply adds its sequence).
fn ack_inbox(env: &Env, i: usize) -> String {
    format!("_INBOX.natsplan{}p{}.", env.run_id, i)
}

/// How long a publisher waits for its path to the stream before the run cannot start: routes carry
/// interest within milliseconds on a healthy cluster, and seconds on a loaded one.
fn probe_timeout(spec: &BenchSpec) -> Duration {
    spec.timeout.max(Duration::from_secs(10))
}

/// `raw::stream_answers_publish` for an async-nats client: a request on `subject` carrying a stream name
/// no stream has is answered by the stream's leader with an error and stores nothing; the answer proves
/// the client's inbox is known where acks come from. Retried every 250 ms until `timeout`.
async fn stream_answers_request(c: &async_nats::Client, subject: &str, timeout: Duration) -> Result<(), BenchError> {
    let t0 = Instant::now();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Expected-Stream", raw::PROBE_EXPECTED_STREAM);
    loop {
        let ask = c.request_with_headers(subject.to_string(), headers.clone(), Bytes::new());
        match tokio::time::timeout(Duration::from_millis(250), ask).await {
            Ok(Ok(_)) => return Ok(()),
            // No responders yet (the stream's subject has not reached this server): wait a little.
            Ok(Err(_)) => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(_) => {}
        }
        if t0.elapsed() > timeout {
            return Err(BenchError::CannotRun(anyhow!(
                "no answer to a probe publish on {subject} within {:.1} s: the servers do not route this \
                 client's messages to the stream, or its replies back (check the cluster's routes)",
                t0.elapsed().as_secs_f64()
            )));
        }
    }
}

/// JetStream publishing on the raw path: each message carries its own reply subject (`<inbox><seq>`), up
/// to `window` are in flight (1 = synchronous), acks are matched by sequence and timed from the send (or
/// intended) time. A single task writes batches and reads acks, as nats.go's PublishAsync does in effect.
/// `c` is already subscribed to the ack inbox of global worker `i` and its path proven (`js_run`).
#[allow(clippy::too_many_arguments)]
async fn js_pub_raw(
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
    let t0 = Instant::now();
    let mut last = t0;
    let mut last_progress = Instant::now();
    while fatal.is_none() {
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
        };
        match res {
            Err(e) => {
                fatal = Some(e.to_string());
                break;
            }
            Ok(None) => {
                if wake_at.is_none() && last_progress.elapsed() >= env.spec.timeout {
                    errors += sent - resolved;
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
    TaskOut {
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

type AckFut = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<jetstream::publish::PublishAck, jetstream::context::PublishError>>
            + Send,
    >,
>;

async fn js_pub_async(
    env: &Arc<Env>,
    ctx: &jetstream::Context,
    subject: async_nats::Subject,
    payload: Bytes,
    n: u64,
    window: usize,
    mut pacer: Option<Pacer>,
) -> TaskOut {
    // Acks are awaited by a second task, in publish order, so the publisher never stops to wait unless
    // the in-flight window is full (the context's backpressure).
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(u64, AckFut)>(window.max(1));
    let acker_env = env.clone();
    let acker = tokio::spawn(async move {
        let env = acker_env;
        let mut hist = new_hist();
        let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
        let mut last = Instant::now();
        while let Some((t_ns, fut)) = rx.recv().await {
            match fut.await {
                Ok(_) => {
                    last = Instant::now();
                    let _ = hist.record(env.ns(last).saturating_sub(t_ns).max(1));
                    ok += 1;
                    env.done.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| e.to_string());
                }
            }
        }
        (hist, ok, errors, first_error, last)
    });
    let t0 = Instant::now();
    let mut pub_errors = 0u64;
    let mut pub_first = None;
    let mut behind = false;
    for j in 0..n {
        let t_ns = match pacer.as_mut() {
            Some(p) => match p.due(j).await {
                Ok(intended) => env.ns(intended),
                Err(()) => {
                    behind = true;
                    break;
                }
            },
            None => env.ns(Instant::now()),
        };
        match ctx.publish(subject.clone(), payload.clone()).await {
            Ok(f) => {
                if tx.send((t_ns, std::future::IntoFuture::into_future(f))).await.is_err() {
                    break;
                }
            }
            Err(e) => {
                pub_errors += 1;
                pub_first.get_or_insert_with(|| e.to_string());
                if pub_errors > 100 {
                    break;
                }
            }
        }
    }
    drop(tx);
    let (hist, ok, errors, first_error, last) = acker
        .await
        .unwrap_or_else(|e| (new_hist(), 0, 1, Some(e.to_string()), Instant::now()));
    TaskOut {
        sample: ClientSample {
            id: String::new(),
            msgs: ok,
            bytes: ok * payload.len() as u64,
            proto_msgs: 0,
            proto_bytes: 0,
            start_s: env.secs(t0),
            end_s: env.secs(last.max(t0)),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        errors: errors + pub_errors,
        first_error: pub_first.or(first_error),
        behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}

async fn js_pub_sync(
    env: &Env,
    ctx: &jetstream::Context,
    subject: async_nats::Subject,
    payload: Bytes,
    n: u64,
    mut pacer: Option<Pacer>,
) -> TaskOut {
    let mut hist = new_hist();
    let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
    let mut behind = false;
    let t0 = Instant::now();
    for j in 0..n {
        let t = match pacer.as_mut() {
            Some(p) => match p.due(j).await {
                Ok(intended) => intended,
                Err(()) => {
                    behind = true;
                    break;
                }
            },
            None => Instant::now(),
        };
        let res = match ctx.publish(subject.clone(), payload.clone()).await {
            Ok(f) => f.await,
            Err(e) => Err(e),
        };
        match res {
            Ok(_) => {
                let _ = hist.record((t.elapsed().as_nanos() as u64).max(1));
                ok += 1;
                env.done.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.to_string());
                if errors > 100 && ok == 0 {
                    break;
                }
            }
        }
    }
    let t1 = Instant::now();
    TaskOut {
        sample: ClientSample {
            id: String::new(),
            msgs: ok,
            bytes: ok * payload.len() as u64,
            proto_msgs: 0,
            proto_bytes: 0,
            start_s: env.secs(t0),
            end_s: env.secs(t1),
            latency_us: LatencySummary::from_hist_ns(&hist),
        },
        hist,
        errors,
        first_error,
        behind,
        max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
    }
}

/// Create what a run writes to: the stream (js), bucket (kv) or object store (obj, and for gets the
/// objects to read, written before any clock starts). Retried while a new cluster elects its leaders.
async fn create_assets(env: &Env) -> Result<(), BenchError> {
    let spec = &env.spec;
    let admin = env.connect(0, "admin").await?;
    let actx = js_context(admin, env, 1);
    match spec.workload {
        Workload::Js { replicas, storage, .. } => {
            let cfg = jetstream::stream::Config {
                name: format!("natsplan-js-{}", env.run_id),
                subjects: vec![format!("natsplan.js.{}", env.run_id)],
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create stream", spec.timeout, || actx.create_stream(cfg.clone())).await?;
        }
        Workload::Kv { replicas, storage, .. } => {
            let cfg = jetstream::kv::Config {
                bucket: format!("natsplan-kv-{}", env.run_id),
                history: 1,
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create KV bucket", spec.timeout, || actx.create_key_value(cfg.clone())).await?;
        }
        Workload::Obj {
            op, replicas, storage, ..
        } => {
            let cfg = jetstream::object_store::Config {
                bucket: format!("natsplan-obj-{}", env.run_id),
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            let store = retry("create object store", spec.timeout, || {
                actx.create_object_store(cfg.clone())
            })
            .await?;
            if op == ObjOp::Get {
                let data = vec![0x5au8; spec.size as usize];
                let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs);
                for i in 0..total {
                    let mut rd: &[u8] = &data;
                    if let Err(e) = store.put(format!("o{i}").as_str(), &mut rd).await {
                        let _ = actx.delete_object_store(&cfg.bucket).await;
                        return Err(cannot(e, "put object for the get run"));
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Remove what `create_assets` made (best effort: a failure leaves a `natsplan-*` asset to delete by hand).
async fn delete_assets(env: &Env) {
    let Ok(admin) = env.connect(0, "admin").await else {
        return;
    };
    let actx = js_context(admin, env, 1);
    match env.spec.workload {
        Workload::Js { .. } => {
            let _ = actx.delete_stream(format!("natsplan-js-{}", env.run_id)).await;
        }
        Workload::Kv { .. } => {
            let _ = actx.delete_key_value(format!("natsplan-kv-{}", env.run_id)).await;
        }
        Workload::Obj { .. } => {
            let _ = actx.delete_object_store(format!("natsplan-obj-{}", env.run_id)).await;
        }
        _ => {}
    }
}

/// The coordinator's side of a run spread over agents: create the run's stream, bucket or object store
/// (`spec` is the whole run) under `run_id`, which every agent's share then uses.
pub async fn prepare_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) -> Result<(), BenchError> {
    let env = Env::new(conn, spec, run_id.to_string(), None, None);
    create_assets(&env).await
}

/// Remove what `prepare_shared` created (unless `spec.keep`).
pub async fn cleanup_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) {
    if !spec.keep {
        let env = Env::new(conn, spec, run_id.to_string(), None, None);
        delete_assets(&env).await;
    }
}

// ---------------------------------------------------------------------------------------------- KV

async fn kv(env: &Arc<Env>, clients: usize, replicas: usize, storage: Storage) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    // Created by `create_assets` from the spec (here or, on agents, by the coordinator).
    let _ = storage;
    let bucket = format!("natsplan-kv-{}", env.run_id);
    let admin = env.connect(0, "admin").await?;
    let actx = js_context(admin, env, 1);
    let owns = env.owns_assets();
    if owns {
        create_assets(env).await?;
    }
    let per = env.per_worker(clients);
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    let mut conns = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "kv").await?;
        let kctx = js_context(c.clone(), env, 1);
        let store = retry("open KV bucket", spec.timeout, || kctx.get_key_value(&bucket)).await;
        if store.is_ok() {
            if let Err(e) =
                stream_answers_request(&c, &format!("$KV.{bucket}.natsplan-probe"), probe_timeout(spec)).await
            {
                if owns && !spec.keep {
                    let _ = actx.delete_key_value(&bucket).await;
                }
                return Err(e);
            }
        }
        conns.push((c, store));
    }
    let progress = progress_task(env, spec.msgs, "puts");
    let start = match env.start_clock().await {
        Ok(s) => s,
        Err(e) => {
            if owns && !spec.keep {
                let _ = actx.delete_key_value(&bucket).await;
            }
            return Err(e);
        }
    };
    let mut tasks = Vec::new();
    for (i, (c, store)) in conns.into_iter().enumerate() {
        let store = match store {
            Ok(s) => s,
            Err(e) => {
                if owns && !spec.keep {
                    let _ = actx.delete_key_value(&bucket).await;
                }
                return Err(e);
            }
        };
        let (env, payload, n) = (env.clone(), payload.clone(), per[i]);
        let rate = env.worker_rate(clients);
        // Keys carry the global worker index: agents sharing a bucket never write each other's keys.
        let i = env.worker(i);
        tasks.push(tokio::spawn(async move {
            let mut pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
            let mut hist = new_hist();
            let (mut ok, mut errors, mut first_error, mut behind) = (0u64, 0u64, None::<String>, false);
            let t0 = Instant::now();
            for j in 0..n {
                let t = match pacer.as_mut() {
                    Some(p) => match p.due(j).await {
                        Ok(x) => x,
                        Err(()) => {
                            behind = true;
                            break;
                        }
                    },
                    None => Instant::now(),
                };
                match store.put(format!("c{i}.k{j}"), payload.clone()).await {
                    Ok(_) => {
                        let _ = hist.record((t.elapsed().as_nanos() as u64).max(1));
                        ok += 1;
                        env.done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert_with(|| e.to_string());
                        if errors > 100 && ok == 0 {
                            break;
                        }
                    }
                }
            }
            let t1 = Instant::now();
            let (pm, pb) = proto(&c);
            TaskOut {
                sample: ClientSample {
                    id: format!("P{}", i + 1),
                    msgs: ok,
                    bytes: ok * payload.len() as u64,
                    proto_msgs: pm,
                    proto_bytes: pb,
                    start_s: env.secs(t0),
                    end_s: env.secs(t1),
                    latency_us: LatencySummary::from_hist_ns(&hist),
                },
                hist,
                errors,
                first_error,
                behind,
                max_lag: pacer.map(|p| p.max_lag).unwrap_or_default(),
            }
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        match t.await {
            Ok(o) => outs.push(o),
            Err(e) => {
                if owns && !spec.keep {
                    let _ = actx.delete_key_value(&bucket).await;
                }
                return Err(cannot(e, "KV task"));
            }
        }
    }
    stop_progress(progress).await;
    if owns && !spec.keep {
        let _ = actx.delete_key_value(&bucket).await;
    }
    let mut r = blank_result(
        env,
        "kv",
        "JetStream KV putter",
        params(
            env,
            &[
                ("clients", clients.to_string()),
                ("replicas", replicas.to_string()),
                ("bucket", bucket),
            ],
        ),
    );
    r.ops = true;
    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, &mut r, outs, false, &mut hists);
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, &r, behind, lag);
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    if r.published() == 0 {
        return Err(BenchError::CannotRun(anyhow!(
            "no KV put succeeded: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

// ---------------------------------------------------------------------------------------------- objects

async fn obj(
    env: &Arc<Env>,
    op: ObjOp,
    clients: usize,
    replicas: usize,
    storage: Storage,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let bucket = format!("natsplan-obj-{}", env.run_id);
    let _ = storage;
    let res = if env.owns_assets() {
        match create_assets(env).await {
            Ok(()) => obj_run(env, op, clients, &bucket).await,
            Err(e) => Err(e),
        }
    } else {
        obj_run(env, op, clients, &bucket).await
    };
    if env.owns_assets() && !spec.keep {
        delete_assets(env).await;
    }
    let mut r = res?;
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("bucket".into(), bucket);
    Ok(r)
}

async fn obj_run(env: &Arc<Env>, op: ObjOp, clients: usize, bucket: &str) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let data = Bytes::from(vec![0x5au8; spec.size as usize]);
    let per = env.per_worker(clients);
    let mut stores = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "obj").await?;
        let octx = js_context(c.clone(), env, 1);
        let s = retry("open object store", spec.timeout, || octx.get_object_store(bucket)).await?;
        if op == ObjOp::Put {
            stream_answers_request(&c, &format!("$O.{bucket}.C.natsplan-probe"), probe_timeout(spec)).await?;
        }
        stores.push((c, s));
    }
    let progress = progress_task(env, spec.msgs, "objects");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    let mut offset = 0u64;
    for (i, (c, store)) in stores.into_iter().enumerate() {
        // On agents the first object of each worker is its place in the whole run.
        let first = env
            .share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.first)
            .unwrap_or(offset);
        let (env, data, n) = (env.clone(), data.clone(), per[i]);
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut hist = new_hist();
            let (mut ok, mut errors, mut first_error) = (0u64, 0u64, None::<String>);
            let t0 = Instant::now();
            for j in first..first + n {
                let a = Instant::now();
                let res: Result<(), String> = match op {
                    ObjOp::Put => {
                        let mut rd: &[u8] = &data;
                        store
                            .put(format!("o{j}").as_str(), &mut rd)
                            .await
                            .map(|_| ())
                            .map_err(|e| e.to_string())
                    }
                    ObjOp::Get => match store.get(format!("o{j}")).await {
                        Ok(mut o) => {
                            let mut buf = Vec::with_capacity(data.len());
                            match tokio::io::AsyncReadExt::read_to_end(&mut o, &mut buf).await {
                                Ok(_) if buf.len() == data.len() => Ok(()),
                                Ok(_) => Err(format!(
                                    "object o{j}: read {} bytes, expected {}",
                                    buf.len(),
                                    data.len()
                                )),
                                Err(e) => Err(e.to_string()),
                            }
                        }
                        Err(e) => Err(e.to_string()),
                    },
                };
                match res {
                    Ok(()) => {
                        let _ = hist.record((a.elapsed().as_nanos() as u64).max(1));
                        ok += 1;
                        env.done.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => {
                        errors += 1;
                        first_error.get_or_insert(e);
                    }
                }
            }
            let t1 = Instant::now();
            let (pm, pb) = proto(&c);
            TaskOut {
                sample: ClientSample {
                    id: format!("{}{}", if op == ObjOp::Put { "P" } else { "S" }, i + 1),
                    msgs: ok,
                    bytes: ok * data.len() as u64,
                    proto_msgs: pm,
                    proto_bytes: pb,
                    start_s: env.secs(t0),
                    end_s: env.secs(t1),
                    latency_us: LatencySummary::from_hist_ns(&hist),
                },
                hist,
                errors,
                first_error,
                behind: false,
                max_lag: Duration::ZERO,
            }
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "object task"))?);
    }
    stop_progress(progress).await;
    let (kind, label) = match op {
        ObjOp::Put => ("obj-put", "JetStream object putter"),
        ObjOp::Get => ("obj-get", "JetStream object getter"),
    };
    let mut r = blank_result(env, kind, label, params(env, &[("clients", clients.to_string())]));
    r.ops = true;
    let mut hists = Vec::new();
    absorb(env, &mut r, outs, op == ObjOp::Get, &mut hists);
    r.latency_us = env.summary(&hists);
    if r.published() + r.received() == 0 {
        return Err(BenchError::CannotRun(anyhow!(
            "no object operation succeeded: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn asset_creation_retries_unanswered_requests_longer_than_refusals() {
        // Attempts until success or the deadline, on a paused clock (time moves only while sleeping).
        async fn attempts(error: &'static str, succeed_at: u32) -> (u32, Result<(), String>) {
            let n = std::sync::atomic::AtomicU32::new(0);
            let t = Duration::from_secs(5);
            let r = retry("create stream", t, || {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    // Each unanswered attempt costs its timeout.
                    if error.contains("timed out") {
                        tokio::time::sleep(t).await;
                    }
                    if k == succeed_at {
                        Ok(())
                    } else {
                        Err(error)
                    }
                }
            })
            .await;
            (n.load(Ordering::SeqCst), r.map_err(|e| e.to_string()))
        }
        // Unanswered twice (10 s), then created: within the 15 s allowed for unanswered requests.
        let (n, r) = attempts("jetstream request timed out", 3).await;
        assert_eq!((n, r), (3, Ok(())));
        // Never answered: gives up after 15 s, naming what it was doing.
        let (n, r) = attempts("jetstream request timed out", 0).await;
        assert_eq!(n, 3, "5 s per attempt and 250 ms between: the third ends past 15 s");
        assert!(r.unwrap_err().contains("create stream: jetstream request timed out"));
        // Refused at once (no room for the replicas): retried for 5 s only.
        let (n, r) = attempts("insufficient resources", 0).await;
        assert!((19..=22).contains(&n), "{n} attempts 250 ms apart");
        assert!(r.unwrap_err().contains("insufficient resources"));
    }

    #[test]
    fn split_spreads_the_remainder_over_the_first_workers() {
        assert_eq!(split(10, 3), vec![4, 3, 3]);
        assert_eq!(split(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(split(7, 1), vec![7]);
    }

    #[tokio::test]
    async fn the_pacer_schedules_from_the_start_and_gives_up_past_the_cutoff() {
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

    #[test]
    fn stamps_round_trip_and_zero_means_unstamped() {
        let t = Bytes::from(vec![0u8; 16]);
        assert_eq!(read_stamp(&stamped(&t, 0, 0), 0), Some(0));
        assert_eq!(read_stamp(&stamped(&t, 0, 123_456), 0), Some(123_456));
        assert_eq!(read_stamp(&t, 0), None);
        assert_eq!(read_stamp(&[1, 2, 3], 0), None);
    }

    #[test]
    fn stamps_from_another_host_are_not_read_as_send_times() {
        let t = Bytes::from(vec![0u8; 16]);
        let from_agent_2 = stamped(&t, 2, 987_654_321);
        assert_eq!(read_stamp(&from_agent_2, 2), Some(987_654_321));
        assert_eq!(read_stamp(&from_agent_2, 1), None, "agent 1's clock is not agent 2's");
        assert_eq!(read_stamp(&from_agent_2, 0), None);
        // A whole run (origin 0) writes exactly what it wrote before origins existed.
        assert_eq!(stamp_word(0, 41), 42);
    }
}
