//! The control protocol between a coordinator (`bench --agents`, `verify --agents`) and its agents
//! (`natsplan agent`): subjects under `natsplan.agents.>` — never a benchmark's (`natsplan.bench.*`,
//! `natsplan.js.*`, `_INBOX.*`) — and the JSON messages sent on them. Histograms travel V2-serialised
//! (hdrhistogram's own format, base64 inside the JSON), so the coordinator merges exactly what each agent
//! recorded.
//!
//! A row: the coordinator sends `RunRequest` to each agent's `run` subject (request/reply: `RunAccepted`),
//! each agent sets up (connections, subscriptions, interest checks) and publishes `Ready`; once all are
//! ready the coordinator publishes `Start` with an instant in each agent's own wall clock (the measured
//! offset applied); agents publish `Progress` every `heartbeat_ms` while they run and `AgentResult` at the
//! end. `Abort` stops an agent's part; `Bye` says an agent is going away.

use crate::bench::{BenchResult, BenchSpec, BenchWorkload, ClientChoice, Share};
use anyhow::{anyhow, Context as _};
use base64::Engine as _;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Every control subject starts with this.
pub const PREFIX: &str = "natsplan.agents";

/// Where agents announce themselves when they start.
pub fn hello_subject() -> String {
    format!("{PREFIX}.hello")
}

/// Coordinators ask here who is listening; every agent answers with its `Hello`.
pub fn discover_subject() -> String {
    format!("{PREFIX}.discover")
}

/// An agent's own subject for `what` (`clock`, `run`, `start`, `abort`, `bye`).
pub fn agent_subject(id: &str, what: &str) -> String {
    format!("{PREFIX}.{id}.{what}")
}

/// Where agents report on one row to its coordinator: `<report_to>.<agent id>.<ready|progress|result>`.
pub fn report_subject(report_to: &str, id: &str, what: &str) -> String {
    format!("{report_to}.{id}.{what}")
}

/// The subject prefix a coordinator listens on for one row.
pub fn row_subject(row: &str) -> String {
    format!("{PREFIX}.coord.{row}")
}

/// Whether `s` can be one token of a subject (agent names and ids): letters, digits, `-` and `_`.
pub fn is_token(s: &str) -> bool {
    !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Wall-clock nanoseconds since the Unix epoch (the clock offsets are measured on).
pub fn wall_ns() -> i128 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// An agent introducing itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Unique per process: `<name>-<8 hex>`; its subjects are `natsplan.agents.<id>.*`.
    pub id: String,
    /// What the user called it (`--name`, default the host name).
    pub name: String,
    pub host: String,
    pub pid: u32,
    /// natsplan version of the agent.
    pub version: String,
    /// The servers it connects to (credentials stripped).
    pub servers: Vec<String>,
    /// Running a row for some coordinator right now.
    pub busy: bool,
}

/// NTP-style clock probe: the coordinator's send time (its wall clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockRequest {
    pub t0_ns: i128,
}

/// The agent's receive and reply times (its wall clock).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockReply {
    pub t0_ns: i128,
    pub t1_ns: i128,
    pub t2_ns: i128,
}

/// The parts of a `BenchSpec` an agent needs (durations in milliseconds; no monitoring, no progress
/// bars: the coordinator reads `/varz` itself).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkSpec {
    /// The workload with this agent's worker counts.
    pub workload: BenchWorkload,
    /// This agent's messages (core sub-only agents: the whole run's).
    pub msgs: u64,
    pub size: u64,
    /// This agent's part of the open-loop rate.
    pub rate_per_s: Option<f64>,
    pub backlog_cutoff_ms: u64,
    pub timeout_ms: u64,
    pub keep: bool,
    pub sub_sleep_ms: Option<u64>,
    pub sub_buffer: Option<usize>,
    pub client: ClientChoice,
}

impl WorkSpec {
    pub fn from_spec(spec: &BenchSpec, workload: BenchWorkload, msgs: u64, rate_per_s: Option<f64>) -> WorkSpec {
        WorkSpec {
            workload,
            msgs,
            size: spec.size,
            rate_per_s,
            backlog_cutoff_ms: spec.backlog_cutoff.as_millis() as u64,
            timeout_ms: spec.timeout.as_millis() as u64,
            keep: spec.keep,
            sub_sleep_ms: spec.sub_sleep.map(|d| d.as_millis() as u64),
            sub_buffer: spec.sub_buffer,
            client: spec.client,
        }
    }

    pub fn to_spec(&self) -> BenchSpec {
        BenchSpec {
            workload: self.workload.clone(),
            msgs: self.msgs,
            size: self.size,
            rate_per_s: self.rate_per_s,
            backlog_cutoff: Duration::from_millis(self.backlog_cutoff_ms),
            timeout: Duration::from_millis(self.timeout_ms),
            monitor: vec![],
            keep: self.keep,
            sub_sleep: self.sub_sleep_ms.map(Duration::from_millis),
            sub_buffer: self.sub_buffer,
            client: self.client,
            progress: false,
            leader: crate::bench::LeaderPlacement::Any,
            consumer_leader: crate::bench::LeaderPlacement::Any,
            subjects: Default::default(),
        }
    }
}

/// Work for one agent: its share of one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// The row's run id (shared by every agent: the stream, bucket and subject names).
    pub row: String,
    /// Subject prefix for `Ready`, `Progress` and `AgentResult`.
    pub report_to: String,
    pub work: WorkSpec,
    pub share: Share,
    /// How often to send `Progress` while running.
    pub heartbeat_ms: u64,
    /// Give up when `Start` has not come this long after `Ready`.
    pub start_timeout_ms: u64,
}

impl RunRequest {
    /// What an agent refuses, with the reason it answers: everything `natsplan bench` itself would refuse
    /// for the whole row (the one table of bounds, via `bench::check`), and work outside the row's own
    /// run. The row id must be a subject token (it names the row's streams, buckets and subjects), the
    /// reports go only to the row's own subject prefix (`natsplan.agents.coord.<row>`), the share is of
    /// that row and consistent with itself, and the work is on the row's own `natsplan-*` assets, never
    /// an existing stream. Nothing is allocated from the request before its counts pass.
    pub fn check(&self) -> Result<(), String> {
        use crate::input::limits::{AGENTS, AGENT_HEARTBEAT_MS, AGENT_START_WAIT_MS};
        if !is_token(&self.row) {
            return Err(format!(
                "row {:?}: a row id is letters, digits, '-' and '_' (up to 64), as coordinators make them",
                clip(&self.row)
            ));
        }
        if self.report_to != row_subject(&self.row) {
            return Err(format!(
                "report_to {:?}: an agent reports only to its row's own subjects, {}",
                clip(&self.report_to),
                row_subject(&self.row)
            ));
        }
        let share = &self.share;
        if share.run_id != self.row {
            return Err(format!(
                "share.run_id {:?}: the share is of another run than row {}",
                clip(&share.run_id),
                self.row
            ));
        }
        AGENT_HEARTBEAT_MS
            .check_u64(self.heartbeat_ms)
            .map_err(|e| format!("heartbeat_ms {}: {e}", self.heartbeat_ms))?;
        AGENT_START_WAIT_MS
            .check_u64(self.start_timeout_ms)
            .map_err(|e| format!("start_timeout_ms {}: {e}", self.start_timeout_ms))?;
        AGENTS
            .check_u64(share.origin.into())
            .map_err(|e| format!("share.origin {}: an agent's number: {e}", share.origin))?;
        if let Some(target) = self.work.workload.existing() {
            return Err(format!(
                "work.workload: stream {:?} is not the row's own; agents work only on the streams, buckets and \
                 object stores of the row (natsplan-*-{})",
                clip(&target.stream),
                self.row
            ));
        }
        // The whole row as `natsplan bench` would run it: its totals, held to the CLI's own checks (and so
        // to the one table of bounds) before anything below is sized from them.
        let mut whole = self.work.to_spec();
        whole.workload = self.work.workload.with_counts(share.total_workers, share.total_subs);
        whole.msgs = share.total_msgs;
        crate::bench::check(&whole).map_err(|e| format!("{e:#}"))?;
        let (local_workers, local_subs) = self.work.workload.counts();
        let flood = matches!(self.work.workload, BenchWorkload::Flood { .. });
        if local_workers != share.workers.len()
            || (!flood && local_subs != share.subs.len())
            || share.workers.len() > share.total_workers
            || share.subs.len() > share.total_subs.max(usize::from(flood))
        {
            return Err(format!(
                "share: {} worker(s) and {} subscriber(s) of a run of {} and {}, for a workload of {} and {}",
                share.workers.len(),
                share.subs.len(),
                share.total_workers,
                share.total_subs,
                local_workers,
                local_subs
            ));
        }
        let mut sum = 0u64;
        for (i, w) in share.workers.iter().enumerate() {
            let end = w.first.checked_add(w.msgs);
            if w.index >= share.total_workers || end.is_none_or(|e| e > share.total_msgs) {
                return Err(format!(
                    "share.workers[{i}]: worker {} with messages {}..+{} is not within the run's {} workers and {} \
                     messages",
                    w.index, w.first, w.msgs, share.total_workers, share.total_msgs
                ));
            }
            sum += w.msgs;
        }
        if let Some((i, s)) = share
            .subs
            .iter()
            .enumerate()
            .find(|(_, s)| **s >= share.total_subs.max(usize::from(flood)))
        {
            return Err(format!(
                "share.subs[{i}]: subscriber {s} is not within the run's {}",
                share.total_subs
            ));
        }
        if sum > share.total_msgs || self.work.msgs != sum {
            return Err(format!(
                "work.msgs {}: the share's workers have {sum} of the run's {} messages",
                self.work.msgs, share.total_msgs
            ));
        }
        Ok(())
    }
}

/// A value from a request, shortened for a message.
fn clip(s: &str) -> String {
    crate::input::yaml::clip(s)
}

/// The agent's answer to a `RunRequest`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunAccepted {
    pub id: String,
    pub accepted: bool,
    /// Why not (busy with another row, a bad request).
    pub error: Option<String>,
}

/// Setup done; waiting for `Start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub id: String,
    pub row: String,
}

/// When to start, in the receiving agent's wall clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub start_at_ns: i128,
    /// The row it starts: an agent starts only the row it took (a `Start` for another is ignored).
    pub row: String,
}

/// Stop the row now (another agent failed, the coordinator is going away).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Abort {
    pub row: String,
    pub reason: String,
}

/// Heartbeat while a row runs: operations completed so far (what the agent did, should it vanish).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub done: u64,
    /// Seconds since the agreed start (negative while setting up).
    pub elapsed_s: f64,
    /// The share is set up (what `Ready` said): repeated in every heartbeat, so a `Ready` lost while the
    /// coordinator's new row subscription crossed the routes costs one heartbeat, not the row.
    #[serde(default)]
    pub ready: bool,
}

/// An agent's result for one row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentResult {
    pub id: String,
    pub row: String,
    /// The agent's own bench result (its clients, timed from its own anchor).
    pub result: Option<BenchResult>,
    /// Its merged latency histogram in nanoseconds, V2-serialised and base64-encoded.
    pub hist_v2: Option<String>,
    /// When its clock started, in seconds after the anchor its samples are timed from.
    pub start_s: f64,
    /// How late its first client began against the agreed start, in seconds.
    pub late_s: f64,
    /// Why the row failed on this agent.
    pub error: Option<String>,
}

/// An agent leaving (SIGINT/SIGTERM).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bye {
    pub id: String,
}

/// Encode a message for the wire.
pub fn encode<T: Serialize>(m: &T) -> bytes::Bytes {
    bytes::Bytes::from(serde_json::to_vec(m).unwrap_or_default())
}

/// Decode a message, naming what was expected when it is not one.
pub fn decode<T: for<'de> Deserialize<'de>>(what: &str, payload: &[u8]) -> anyhow::Result<T> {
    serde_json::from_slice(payload).with_context(|| {
        format!(
            "not a natsplan agent {what} message ({} bytes); are coordinator and agent the same natsplan version?",
            payload.len()
        )
    })
}

/// A histogram in hdrhistogram's V2 encoding, base64.
pub fn hist_to_v2(h: &Histogram<u64>) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    hdrhistogram::serialization::Serializer::serialize(
        &mut hdrhistogram::serialization::V2Serializer::new(),
        h,
        &mut buf,
    )
    .map_err(|e| anyhow!("cannot serialise a latency histogram: {e:?}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(buf))
}

/// The inverse of `hist_to_v2` (also reads the V2 deflate encoding).
pub fn hist_from_v2(s: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(s.as_bytes())
        .context("a latency histogram is not base64")?;
    let mut h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| anyhow!("a latency histogram is not in hdrhistogram's V2 encoding: {e:?}"))?;
    // Merged histograms resize as they grow; a deserialised one must too.
    h.auto(true);
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::new_hist;
    use crate::bench::{PublishMode, Slot, Storage};

    fn roundtrip<T: Serialize + for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(m: T) {
        let back: T = decode("test", &encode(&m)).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn every_message_round_trips_through_json() {
        roundtrip(Hello {
            id: "a-1234abcd".into(),
            name: "a".into(),
            host: "h".into(),
            pid: 7,
            version: "0.1.0".into(),
            servers: vec!["nats://127.0.0.1:4222".into()],
            busy: false,
        });
        roundtrip(ClockRequest { t0_ns: -5 });
        roundtrip(ClockReply {
            t0_ns: 1,
            t1_ns: 1_800_000_000_000_000_000,
            t2_ns: 3,
        });
        let spec = BenchSpec {
            workload: BenchWorkload::Js {
                pubs: 2,
                replicas: 3,
                storage: Storage::File,
                publish: PublishMode::Async,
                window: 500,
                consumers: 0,
            },
            msgs: 1000,
            size: 128,
            rate_per_s: Some(5000.0),
            backlog_cutoff: Duration::from_secs(1),
            timeout: Duration::from_millis(2500),
            monitor: vec!["http://x:8222".into()],
            keep: true,
            sub_sleep: Some(Duration::from_millis(3)),
            sub_buffer: Some(64),
            client: ClientChoice::Raw,
            progress: true,
            leader: crate::bench::LeaderPlacement::Any,
            consumer_leader: crate::bench::LeaderPlacement::Any,
            subjects: Default::default(),
        };
        let w = WorkSpec::from_spec(&spec, spec.workload.clone(), 400, Some(2000.0));
        let back = w.to_spec();
        assert_eq!(
            (back.msgs, back.timeout, back.sub_sleep, back.keep, back.client),
            (400, spec.timeout, spec.sub_sleep, true, ClientChoice::Raw)
        );
        assert!(
            back.monitor.is_empty() && !back.progress,
            "agents neither poll /varz nor draw bars"
        );
        roundtrip(RunRequest {
            row: "r1".into(),
            report_to: row_subject("r1"),
            work: w,
            share: Share {
                run_id: "r1".into(),
                origin: 2,
                workers: vec![Slot {
                    index: 1,
                    msgs: 400,
                    first: 500,
                }],
                subs: vec![0],
                total_workers: 2,
                total_subs: 1,
                total_msgs: 1000,
            },
            heartbeat_ms: 250,
            start_timeout_ms: 30_000,
        });
        roundtrip(RunAccepted {
            id: "a".into(),
            accepted: false,
            error: Some("busy".into()),
        });
        roundtrip(Ready {
            id: "a".into(),
            row: "r".into(),
        });
        roundtrip(Start {
            start_at_ns: 42,
            row: "r".into(),
        });
        roundtrip(Abort {
            row: "r".into(),
            reason: "x".into(),
        });
        roundtrip(Progress {
            ready: true,
            done: 9,
            elapsed_s: -0.25,
        });
        roundtrip(Bye { id: "a".into() });
        // A heartbeat from an agent that predates `ready` reads as not ready (its `Ready` still counts).
        let old: Progress = serde_json::from_str(r#"{"done":3,"elapsed_s":-1.0}"#).unwrap();
        assert!(!old.ready);
        roundtrip(AgentResult {
            id: "a".into(),
            row: "r".into(),
            result: None,
            hist_v2: Some(hist_to_v2(&new_hist()).unwrap()),
            start_s: 0.5,
            late_s: 0.001,
            error: Some("boom".into()),
        });
        assert!(decode::<Hello>("hello", b"{\"nope\":1}").is_err());
    }

    /// A request as the coordinator makes it: agent 1 of 2 of a JetStream row of 4 publishers.
    fn request() -> RunRequest {
        let spec = BenchSpec {
            workload: BenchWorkload::Js {
                pubs: 4,
                replicas: 3,
                storage: Storage::File,
                publish: PublishMode::Async,
                window: 500,
                consumers: 0,
            },
            msgs: 1000,
            size: 128,
            rate_per_s: None,
            backlog_cutoff: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            monitor: vec![],
            keep: false,
            sub_sleep: None,
            sub_buffer: None,
            client: ClientChoice::Auto,
            progress: false,
            leader: crate::bench::LeaderPlacement::Any,
            consumer_leader: crate::bench::LeaderPlacement::Any,
            subjects: Default::default(),
        };
        let a = &crate::agent::split::split(&spec.workload, spec.msgs, 2, 0)[0];
        let local = crate::agent::split::local_workload(&spec.workload, a);
        let row = "18c3f0a2b1c4d07".to_string();
        RunRequest {
            row: row.clone(),
            report_to: row_subject(&row),
            work: WorkSpec::from_spec(&spec, local, a.msgs(), None),
            share: Share {
                run_id: row,
                origin: 1,
                workers: a.workers.clone(),
                subs: a.subs.clone(),
                total_workers: 4,
                total_subs: 0,
                total_msgs: 1000,
            },
            heartbeat_ms: 250,
            start_timeout_ms: 30_000,
        }
    }

    /// Issue 40, item 4: hostile run requests, each of which a `natsplan agent` accepted unchecked (and
    /// `work.size: 1e12` aborted it). Each is refused with what is wrong, in the CLI's words where the
    /// CLI has a flag for it.
    #[test]
    fn an_agent_refuses_what_its_cli_would_refuse_and_work_outside_its_row() {
        request().check().unwrap();
        type Edit = fn(&mut RunRequest);
        let cases: &[(Edit, &str)] = &[
            (|r| r.work.size = 1_000_000_000_000, "--size 1000000000000"),
            (|r| r.work.size = u64::MAX, "--size 18446744073709551615"),
            (
                |r| r.share.total_msgs = u64::MAX,
                "--msgs 18446744073709551615: at most",
            ),
            (|r| r.work.msgs = u64::MAX, "work.msgs"),
            (
                |r| r.share.total_workers = 20_000,
                "--clients 20000: at most 10000 clients",
            ),
            (|r| r.share.total_workers = usize::MAX, "--clients"),
            (|r| r.heartbeat_ms = 0, "heartbeat_ms 0: at least 20"),
            (|r| r.heartbeat_ms = u64::MAX, "heartbeat_ms"),
            (|r| r.start_timeout_ms = u64::MAX, "start_timeout_ms"),
            (
                |r| {
                    if let BenchWorkload::Js { replicas, .. } = &mut r.work.workload {
                        *replicas = 0;
                    }
                },
                "--replicas 0: at least 1 replicas",
            ),
            (
                |r| {
                    if let BenchWorkload::Js { window, .. } = &mut r.work.workload {
                        *window = usize::MAX;
                    }
                },
                "--batch",
            ),
            (|r| r.work.timeout_ms = u64::MAX, "--timeout"),
            (|r| r.work.rate_per_s = Some(f64::INFINITY), "--rate"),
            (|r| r.work.sub_buffer = Some(usize::MAX), "--sub-buffer"),
            (|r| r.row = ">".into(), "row \">\""),
            (|r| r.share.run_id = ">".into(), "share.run_id"),
            (
                |r| r.report_to = ">".into(),
                "report_to \">\": an agent reports only to its row's own subjects",
            ),
            (|r| r.report_to = "orders.eu".into(), "report_to"),
            (
                |r| {
                    r.work.workload = BenchWorkload::JsExisting {
                        pubs: 2,
                        publish: PublishMode::Async,
                        window: 1,
                        target: crate::bench::Existing {
                            stream: "ORDERS".into(),
                            subject: None,
                        },
                    }
                },
                "stream \"ORDERS\" is not the row's own",
            ),
            (|r| r.share.workers[0].index = 99, "share.workers[0]"),
            (|r| r.share.workers[0].first = u64::MAX, "share.workers[0]"),
            (|r| r.share.workers.clear(), "share: 0 worker(s)"),
            (|r| r.share.origin = 0, "share.origin 0"),
        ];
        for (edit, says) in cases {
            let mut r = request();
            edit(&mut r);
            let e = r.check().expect_err(says);
            assert!(e.contains(says), "{says}: {e}");
        }
    }

    #[test]
    fn histograms_survive_the_v2_encoding() {
        let mut h = new_hist();
        for v in [1u64, 999, 1_000, 12_345, 9_999_999, 3_600_000_000_000] {
            h.record(v).unwrap();
        }
        let back = hist_from_v2(&hist_to_v2(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        assert!(hist_from_v2("not base64!").is_err());
        assert!(hist_from_v2("AAAA").is_err());
    }

    #[test]
    fn subjects_stay_under_the_agents_prefix() {
        for s in [
            hello_subject(),
            discover_subject(),
            agent_subject("a-1", "run"),
            report_subject(&row_subject("r"), "a-1", "result"),
        ] {
            assert!(s.starts_with("natsplan.agents."), "{s}");
        }
        assert!(is_token("client-7_b") && !is_token("a.b") && !is_token("") && !is_token("a b"));
    }
}
