//! The value one benchmark run produces, and the arithmetic nats-bench does on it (per-client samples,
//! group windows, min/avg/max/stddev of client rates, latency summaries from merged hdrhistograms).
//! Pure data: no I/O here, so exporters and verify can work from it alone.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One client's share of the work, timed on the run's own clock (seconds since the run's anchor).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClientSample {
    /// `P1`, `S2`, ... as nats bench's CSV names them.
    pub id: String,
    /// Messages (or operations) this client completed for the job.
    pub msgs: u64,
    /// Payload bytes of those messages.
    pub bytes: u64,
    /// Protocol messages in and out on this client's connection (nats bench's CSV MsgCount).
    pub proto_msgs: u64,
    /// Protocol bytes in and out on this client's connection (nats bench's CSV MsgBytes).
    pub proto_bytes: u64,
    pub start_s: f64,
    pub end_s: f64,
    /// Per-operation latency of this client, when it measured one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_us: Option<LatencySummary>,
}

impl ClientSample {
    pub fn duration_s(&self) -> f64 {
        (self.end_s - self.start_s).max(1e-9)
    }
    pub fn msgs_per_s(&self) -> f64 {
        self.msgs as f64 / self.duration_s()
    }
    pub fn bytes_per_s(&self) -> f64 {
        self.bytes as f64 / self.duration_s()
    }
}

/// A set of clients reported together (publishers, subscribers): rate over the group window, as
/// nats-bench's `SampleGroup` computes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Group {
    pub clients: Vec<ClientSample>,
}

impl Group {
    pub fn msgs(&self) -> u64 {
        self.clients.iter().map(|c| c.msgs).sum()
    }
    pub fn bytes(&self) -> u64 {
        self.clients.iter().map(|c| c.bytes).sum()
    }
    pub fn start_s(&self) -> Option<f64> {
        self.clients.iter().map(|c| c.start_s).reduce(f64::min)
    }
    pub fn end_s(&self) -> Option<f64> {
        self.clients.iter().map(|c| c.end_s).reduce(f64::max)
    }
    pub fn window_s(&self) -> f64 {
        match (self.start_s(), self.end_s()) {
            (Some(a), Some(b)) => (b - a).max(1e-9),
            _ => 0.0,
        }
    }
    pub fn msgs_per_s(&self) -> f64 {
        rate(self.msgs() as f64, self.window_s())
    }
    pub fn bytes_per_s(&self) -> f64 {
        rate(self.bytes() as f64, self.window_s())
    }
    /// min, avg, max and population stddev of the per-client message rates.
    pub fn rate_spread(&self) -> Option<Spread> {
        Spread::of(&self.clients.iter().map(|c| c.msgs_per_s()).collect::<Vec<_>>())
    }
}

fn rate(n: f64, window_s: f64) -> f64 {
    if window_s > 0.0 {
        n / window_s
    } else {
        0.0
    }
}

/// min | avg | max | stddev (population), as nats-bench prints for client rates.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub avg: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Spread {
    pub fn of(xs: &[f64]) -> Option<Spread> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len() as f64;
        let avg = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / n;
        Some(Spread {
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            avg,
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            stddev: var.sqrt(),
        })
    }
}

/// Latency percentiles in microseconds, read from an hdrhistogram recorded in nanoseconds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub avg: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub stddev: f64,
}

impl LatencySummary {
    pub fn from_hist_ns(h: &Histogram<u64>) -> Option<LatencySummary> {
        if h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1000.0;
        Some(LatencySummary {
            count: h.len(),
            min: us(h.min()),
            avg: h.mean() / 1000.0,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p999: us(h.value_at_quantile(0.999)),
            max: us(h.max()),
            stddev: h.stdev() / 1000.0,
        })
    }
}

/// A histogram for one task: nanoseconds, 3 significant figures, auto-resizing (latte's choice).
pub fn new_hist() -> Histogram<u64> {
    let mut h = Histogram::<u64>::new(3).expect("3 significant figures is a valid histogram precision");
    h.auto(true);
    h
}

/// Merge per-task histograms; auto-resizing histograms of equal precision always merge.
pub fn merge_hists<'a>(hs: impl IntoIterator<Item = &'a Histogram<u64>>) -> Histogram<u64> {
    let mut all = new_hist();
    for h in hs {
        // Both sides auto-resize with the same precision, so `add` cannot fail on range.
        let _ = all.add(h);
    }
    all
}

/// Outcome of an open-loop `--rate` run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RateOutcome {
    pub target_per_s: f64,
    pub achieved_per_s: f64,
    pub sustained: bool,
    /// Largest lag behind the schedule seen, in milliseconds.
    pub max_lag_ms: f64,
    /// The cut-off that ends a run as not sustained, in milliseconds.
    pub cutoff_ms: f64,
}

/// What happened to messages that did not arrive.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Losses {
    /// Messages each subscriber should have received.
    pub expected_per_sub: u64,
    /// Messages missing, summed over subscribers.
    pub dropped: u64,
    /// Client-side slow-consumer events (the library's subscription buffer overflowed).
    pub client_slow_events: u64,
    /// Increase of `/varz slow_consumers` over the run, summed over monitored servers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_slow_consumers: Option<u64>,
    /// True when subscribers stopped waiting because messages stopped arriving.
    pub timed_out: bool,
}

/// One benchmark run. Exporters turn this into text, JSON or CSV.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchResult {
    /// core | js | kv | obj-put | obj-get | ping | flood
    pub kind: String,
    /// nats bench's label, e.g. "Pub/Sub", "JetStream asynchronous publisher".
    pub label: String,
    /// Banner parameters (`Starting ... [k=v, ...]`), sorted.
    pub params: BTreeMap<String, String>,
    /// Requested messages / operations.
    pub msgs: u64,
    pub size: u64,
    pub publishers: Group,
    pub subscribers: Group,
    /// Latency over every task, merged.
    pub latency_us: Option<LatencySummary>,
    /// Open-loop details when `--rate` was given.
    pub rate: Option<RateOutcome>,
    pub losses: Option<Losses>,
    /// Warnings printed before the results (timeouts, errors counted, cut-offs).
    pub warnings: Vec<String>,
    /// Operations that failed (error acks, acks that never came, failed puts and gets): never counted
    /// in the figures above. Results written before this field existed read as 0.
    #[serde(default)]
    pub failed: u64,
    /// Whether the run counts operations (kv puts, whole objects) rather than messages.
    pub ops: bool,
    /// Identifies the run in CSV rows.
    pub run_id: String,
    /// Whether the run did all it was asked (results written before this field existed read as complete).
    #[serde(default)]
    pub completion: Completion,
    /// The run's stream, KV bucket or object store that no server removed (empty when all went): what it
    /// is and the command that removes it. Results written before this field existed read as none.
    #[serde(default)]
    pub left_behind: Vec<LeftBehind>,
}

/// An asset a run created and could not remove, and how to remove it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LeftBehind {
    /// `stream`, `KV bucket` or `object store`.
    pub kind: String,
    pub name: String,
    /// The natscli command that removes it (`nats stream rm NAME -f`, ...).
    pub remove: String,
}

impl LeftBehind {
    /// The warning printed with the results.
    pub fn warning(&self) -> String {
        format!(
            "the run's {} {} is left on the cluster (no server removed it): remove it with `{}`",
            self.kind, self.name, self.remove
        )
    }
}

/// What a run was asked to do and what it did. A run is complete when nothing interrupted it, no publish
/// was left without its ack, and it did every operation asked, or stopped at `--rate`'s backlog cut-off
/// (that stop is the open-loop run's own rule, reported as `rate.sustained: false`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Completion {
    /// Operations this run was asked for (messages, puts, objects, requests).
    pub asked: u64,
    /// Operations it did: acknowledged publishes, puts and gets, answered requests; for core runs the
    /// messages published (or, with no publishers, the fewest any subscriber received).
    pub done: u64,
    /// Publishes sent whose ack never came (the connection died, or no answer within `--timeout`).
    pub unacknowledged: u64,
    /// A signal (SIGINT, SIGTERM) stopped the run.
    pub interrupted: bool,
    /// The run stopped at `--rate`'s backlog cut-off.
    pub rate_cutoff: bool,
    /// Why workers stopped early, when they did (the first reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl Completion {
    pub fn complete(&self) -> bool {
        !self.interrupted && self.unacknowledged == 0 && (self.done >= self.asked || self.rate_cutoff)
    }
    /// One line saying why the run is incomplete (None when it is complete).
    pub fn shortfall(&self) -> Option<String> {
        if self.complete() {
            return None;
        }
        let mut s = if self.interrupted {
            format!("interrupted: {} of {} operations done", self.done, self.asked)
        } else {
            format!("incomplete: {} of {} operations done", self.done, self.asked)
        };
        if self.unacknowledged > 0 {
            s.push_str(&format!(", {} publishes left unacknowledged", self.unacknowledged));
        }
        if let Some(why) = &self.stopped {
            s.push_str(&format!(" ({why})"));
        }
        Some(s)
    }
    /// Sum of parts (agents' shares): counts add, any interruption or cut-off marks the whole.
    pub fn add(&mut self, o: &Completion) {
        self.asked += o.asked;
        self.done += o.done;
        self.unacknowledged += o.unacknowledged;
        self.interrupted |= o.interrupted;
        self.rate_cutoff |= o.rate_cutoff;
        if self.stopped.is_none() {
            self.stopped = o.stopped.clone();
        }
    }
}

impl BenchResult {
    /// A result before any client ran: its kind, label, parameters, messages, size and run id, no clients,
    /// no figures, no warnings (a run fills it in; tests start from it).
    pub fn blank(
        kind: &str,
        label: &str,
        params: BTreeMap<String, String>,
        msgs: u64,
        size: u64,
        run_id: &str,
    ) -> BenchResult {
        BenchResult {
            kind: kind.into(),
            label: label.into(),
            params,
            msgs,
            size,
            publishers: Group::default(),
            subscribers: Group::default(),
            latency_us: None,
            rate: None,
            losses: None,
            warnings: vec![],
            failed: 0,
            ops: false,
            run_id: run_id.into(),
            completion: Default::default(),
            left_behind: vec![],
        }
    }

    /// The whole-run window: earliest start of any client to the latest end (first publish → last receipt).
    pub fn window_s(&self) -> f64 {
        let starts = self.publishers.start_s().into_iter().chain(self.subscribers.start_s());
        let ends = self.publishers.end_s().into_iter().chain(self.subscribers.end_s());
        match (starts.reduce(f64::min), ends.reduce(f64::max)) {
            (Some(a), Some(b)) => (b - a).max(1e-9),
            _ => 0.0,
        }
    }
    /// Published plus received over the whole window (nats-bench's "NATS Pub/Sub stats").
    pub fn aggregate_msgs_per_s(&self) -> f64 {
        rate(
            (self.publishers.msgs() + self.subscribers.msgs()) as f64,
            self.window_s(),
        )
    }
    pub fn aggregate_bytes_per_s(&self) -> f64 {
        rate(
            (self.publishers.bytes() + self.subscribers.bytes()) as f64,
            self.window_s(),
        )
    }
    /// Whether the headline is the publishers' alone with subscribers beside them: a JetStream publish run
    /// with readers (`bench js --consumers`) says its publishers' rate, as every js run did before readers
    /// (JSON contract); `aggregate_msgs_per_s` has both.
    fn publishers_headline(&self) -> bool {
        self.kind == "js"
    }
    /// The headline rate: aggregate when both sides ran (a js run's publishers'), else whichever side did.
    pub fn msgs_per_s(&self) -> f64 {
        match (self.publishers.clients.is_empty(), self.subscribers.clients.is_empty()) {
            (false, false) if self.publishers_headline() => self.publishers.msgs_per_s(),
            (false, false) => self.aggregate_msgs_per_s(),
            (false, true) => self.publishers.msgs_per_s(),
            (true, false) => self.subscribers.msgs_per_s(),
            (true, true) => 0.0,
        }
    }
    pub fn bytes_per_s(&self) -> f64 {
        match (self.publishers.clients.is_empty(), self.subscribers.clients.is_empty()) {
            (false, false) if self.publishers_headline() => self.publishers.bytes_per_s(),
            (false, false) => self.aggregate_bytes_per_s(),
            (false, true) => self.publishers.bytes_per_s(),
            (true, false) => self.subscribers.bytes_per_s(),
            (true, true) => 0.0,
        }
    }
    pub fn published(&self) -> u64 {
        self.publishers.msgs()
    }
    pub fn received(&self) -> u64 {
        self.subscribers.msgs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, msgs: u64, a: f64, b: f64) -> ClientSample {
        ClientSample {
            id: id.into(),
            msgs,
            bytes: msgs * 16,
            proto_msgs: msgs,
            proto_bytes: msgs * 16,
            start_s: a,
            end_s: b,
            latency_us: None,
        }
    }

    #[test]
    fn group_rate_uses_the_group_window_not_the_sum_of_rates() {
        let g = Group {
            clients: vec![c("P1", 100, 0.0, 1.0), c("P2", 100, 0.5, 2.0)],
        };
        assert_eq!(g.msgs(), 200);
        assert!((g.msgs_per_s() - 100.0).abs() < 1e-9);
        let s = g.rate_spread().unwrap();
        assert!((s.min - 66.666).abs() < 0.01 && (s.max - 100.0).abs() < 1e-9);
        assert!((s.stddev - 16.666).abs() < 0.01);
    }

    #[test]
    fn aggregate_counts_published_plus_received_over_first_publish_to_last_receipt() {
        let r = BenchResult {
            publishers: Group {
                clients: vec![c("P1", 100, 0.0, 1.0)],
            },
            subscribers: Group {
                clients: vec![c("S1", 100, 0.1, 2.0)],
            },
            ..BenchResult::blank("core", "Pub/Sub", BTreeMap::new(), 100, 16, "x")
        };
        assert!((r.aggregate_msgs_per_s() - 100.0).abs() < 1e-9);
        assert_eq!(r.msgs_per_s(), r.aggregate_msgs_per_s());
    }

    #[test]
    fn a_run_is_complete_only_when_everything_asked_was_done_and_acknowledged() {
        let c = |asked, done, unacknowledged, interrupted, rate_cutoff| Completion {
            asked,
            done,
            unacknowledged,
            interrupted,
            rate_cutoff,
            stopped: None,
        };
        assert!(c(400_000, 400_000, 0, false, false).complete());
        // The killed-server run of issue 17: 96,632 of 400,000 and no ack missing is still incomplete.
        let short = c(400_000, 96_632, 0, false, false);
        assert!(!short.complete());
        assert!(short.shortfall().unwrap().contains("96632 of 400000"));
        assert!(!c(10, 10, 1, false, false).complete(), "an ack that never came");
        assert!(!c(10, 10, 0, true, false).complete(), "interrupted");
        assert!(
            c(10, 3, 0, false, true).complete(),
            "a --rate run ends at its cut-off by its own rule"
        );
        assert!(c(10, 10, 0, true, false)
            .shortfall()
            .unwrap()
            .starts_with("interrupted"));
        let mut sum = c(5, 5, 0, false, false);
        sum.add(&c(5, 2, 1, false, false));
        assert_eq!(
            (sum.asked, sum.done, sum.unacknowledged, sum.complete()),
            (10, 7, 1, false)
        );
    }

    #[test]
    fn latency_summary_is_ordered_and_in_microseconds() {
        let mut h = new_hist();
        for ns in [1_000u64, 2_000, 3_000, 50_000, 1_000_000] {
            h.record(ns).unwrap();
        }
        let s = LatencySummary::from_hist_ns(&h).unwrap();
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
        assert!((s.min - 1.0).abs() < 0.01 && (s.max - 1000.0).abs() < 1.0);
        let mut other = new_hist();
        other.record(10_000_000).unwrap();
        assert_eq!(merge_hists([&h, &other]).len(), 6);
    }
}
