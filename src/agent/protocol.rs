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

use crate::bench::{BenchResult, BenchSpec, ClientChoice, Share, Workload};
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
    pub workload: Workload,
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
    pub fn from_spec(spec: &BenchSpec, workload: Workload, msgs: u64, rate_per_s: Option<f64>) -> WorkSpec {
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
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Start {
    pub start_at_ns: i128,
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
            workload: Workload::Js {
                pubs: 2,
                replicas: 3,
                storage: Storage::File,
                publish: PublishMode::Async,
                window: 500,
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
        roundtrip(Start { start_at_ns: 42 });
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
