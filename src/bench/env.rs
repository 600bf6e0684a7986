//! The run's shared context (`Env`): clock anchor, counters, connection spec, cancellation, and for a run
//! spread over agents which share of it this process runs.

use super::conn::ConnectFailure;
use super::result::{merge_hists, BenchResult, LatencySummary};
use super::{BenchError, BenchSpec, ConnSpec};
use anyhow::anyhow;
use hdrhistogram::Histogram;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

/// Shared run context: the clock anchor all samples are relative to, counters, the connection spec.
pub(super) struct Env {
    pub(super) conn: ConnSpec,
    pub(super) anchor: Instant,
    pub(super) slow_events: Arc<AtomicU64>,
    pub(super) done: Arc<AtomicU64>,
    pub(super) spec: BenchSpec,
    pub(super) run_id: String,
    /// This process's part of a run spread over agents (None: the whole run is here).
    pub(super) share: Option<Share>,
    /// Held until the run's setup is done; then the coordinator says when the clock starts.
    pub(super) gate: std::sync::Mutex<Option<Gate>>,
    /// When this process's clock started (the agreed start on agents).
    pub(super) started: std::sync::OnceLock<Instant>,
    /// The run's merged latency histogram, kept for agents to send whole.
    pub(super) hist: std::sync::Mutex<Option<Histogram<u64>>>,
    /// Tripped by a signal (or the caller): every worker stops at its next operation.
    pub(super) cancel: super::Cancel,
    /// The server URLs (indices into the connection's list) workers use in turn, once `bench::leader`
    /// has placed them by the stream leader; unset, worker `i` uses URL `i mod n`.
    pub(super) route: std::sync::OnceLock<Vec<usize>>,
    /// The cluster's other client URLs, as the server the run's assets were created through advertised
    /// them (INFO `connect_urls`): the run's assets are removed through these too when every URL given is
    /// down (one `--server` given, and that server died).
    pub(super) cluster_urls: std::sync::Mutex<Vec<String>>,
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
    pub(super) fn new(
        conn: &ConnSpec,
        spec: &BenchSpec,
        run_id: String,
        share: Option<Share>,
        gate: Option<Gate>,
    ) -> Env {
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
            cancel: super::Cancel::new(),
            route: std::sync::OnceLock::new(),
            cluster_urls: std::sync::Mutex::new(Vec::new()),
        }
    }
    /// The clock's start: now, or on an agent, once setup is done, the instant the coordinator agreed.
    pub(super) async fn start_clock(&self) -> Result<Instant, BenchError> {
        if self.cancel.is_cancelled() {
            return Err(interrupted());
        }
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
    pub(super) fn origin(&self) -> u16 {
        self.share.as_ref().map(|s| s.origin).unwrap_or(0)
    }
    /// Messages per local worker.
    pub(super) fn per_worker(&self, n: usize) -> Vec<u64> {
        match &self.share {
            Some(s) => s.workers.iter().map(|w| w.msgs).collect(),
            None => split(self.spec.msgs, n),
        }
    }
    /// Operations this process was asked for (its share's, on agents).
    pub(super) fn asked(&self) -> u64 {
        match &self.share {
            Some(s) if !s.workers.is_empty() => s.workers.iter().map(|w| w.msgs).sum(),
            Some(s) => s.total_msgs,
            None => self.spec.msgs,
        }
    }
    /// Global index of local worker `i`.
    pub(super) fn worker(&self, i: usize) -> usize {
        self.share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.index)
            .unwrap_or(i)
    }
    /// Global index of local subscriber `i`.
    pub(super) fn sub(&self, i: usize) -> usize {
        self.share.as_ref().and_then(|s| s.subs.get(i)).copied().unwrap_or(i)
    }
    /// Subscribers in the whole run.
    pub(super) fn total_subs(&self, local: usize) -> usize {
        self.share.as_ref().map(|s| s.total_subs).unwrap_or(local)
    }
    /// Open-loop rate of one worker: the aggregate rate over every worker of the run.
    pub(super) fn worker_rate(&self, local: usize) -> Option<f64> {
        let n = self.share.as_ref().map(|s| s.total_workers).unwrap_or(local).max(1);
        self.spec.rate_per_s.map(|r| r / n as f64)
    }
    /// Streams, buckets and object stores are created and removed by this process (not on agents).
    pub(super) fn owns_assets(&self) -> bool {
        self.share.is_none()
    }
    /// Summarise the merged histogram and keep it.
    pub(super) fn summary(&self, hists: &[Histogram<u64>]) -> Option<LatencySummary> {
        let h = merge_hists(hists);
        let s = LatencySummary::from_hist_ns(&h);
        if let Ok(mut k) = self.hist.lock() {
            *k = Some(h);
        }
        s
    }
    pub(super) fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.anchor).as_secs_f64()
    }
    pub(super) fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.anchor).as_nanos() as u64
    }
    pub(super) async fn connect(&self, i: usize, role: &str) -> Result<async_nats::Client, BenchError> {
        self.conn
            .connect_via(self.server_of(i), i, role, Some(self.slow_events.clone()))
            .await
            .map_err(connect_err)
    }
    /// The URL index worker `i` connects to (see `route`).
    pub(super) fn server_of(&self, i: usize) -> usize {
        match self.route.get() {
            Some(r) if !r.is_empty() => r[i % r.len()],
            _ => i,
        }
    }
    /// The raw fast path's target for worker `i`, on the server `server_of(i)` names.
    pub(super) fn raw_target(&self, i: usize) -> Option<super::raw::RawTarget> {
        self.conn.raw_target(self.server_of(i))
    }
}

pub(super) fn connect_err(e: ConnectFailure) -> BenchError {
    match e {
        ConnectFailure::Setup(e) => BenchError::BadInput(e),
        ConnectFailure::Unreachable(e) => BenchError::CannotRun(e),
    }
}

/// The error a run stopped by its token before its clock started ends with (`workload::run_with` turns
/// it into an empty result marked interrupted).
pub(super) fn interrupted() -> BenchError {
    BenchError::CannotRun(anyhow!("interrupted before the run started"))
}

pub(super) fn cannot(e: impl std::fmt::Display, what: &str) -> BenchError {
    BenchError::CannotRun(anyhow!("{what}: {e}"))
}

/// Split `n` over `k` workers, the remainder going to the first ones (nats-bench's MsgsPerClient).
pub fn split(n: u64, k: usize) -> Vec<u64> {
    let k = k.max(1) as u64;
    (0..k).map(|i| n / k + u64::from(i < n % k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    pub(super) fn split_spreads_the_remainder_over_the_first_workers() {
        assert_eq!(split(10, 3), vec![4, 3, 3]);
        assert_eq!(split(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(split(7, 1), vec![7]);
    }
}
