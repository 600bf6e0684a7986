//! The coordinator side (`bench ... --agents N`, `verify --agents N`): find N idle agents, measure each
//! one's clock offset, and run rows on them: create the row's stream/bucket/object store, send every
//! agent its share, wait until all are set up, start them at one agreed instant (converted into each
//! agent's clock), watch their heartbeats, collect their results and merge them (`merge`). An agent whose
//! heartbeats stop for `lost_after` is lost: the row is then marked incomplete with what each agent did
//! (its last reported count), never reported as a smaller complete run.

use super::clock::{self, ClockEstimate, ClockSample};
use super::merge::{self, Part};
use super::protocol::{self as p, AgentResult, Hello, Progress, Ready, RunAccepted, RunRequest, Start, WorkSpec};
use super::split;
use crate::bench::result::LatencySummary;
use crate::bench::{self, BenchResult, BenchSpec, ConnSpec, Share};
use crate::error::Failure;
use anyhow::anyhow;
use futures::StreamExt;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How the coordinator finds and watches agents.
#[derive(Debug, Clone)]
pub struct AgentsOptions {
    /// Agents to use (`--agents N`).
    pub count: usize,
    /// How long to wait for N idle agents to answer.
    pub discover_timeout: Duration,
    /// An agent silent for this long during a row is lost.
    pub lost_after: Duration,
    /// How often agents send progress.
    pub heartbeat: Duration,
    /// Longest time an agent may take to connect and subscribe before the start.
    pub setup_timeout: Duration,
    /// Clock probes per agent.
    pub clock_probes: usize,
}

impl AgentsOptions {
    pub fn new(count: usize) -> AgentsOptions {
        AgentsOptions {
            count,
            discover_timeout: Duration::from_secs(5),
            // 20 missed heartbeats: a loaded client host (2 cores, a busy run) still gets its beats out.
            lost_after: Duration::from_secs(5),
            heartbeat: Duration::from_millis(250),
            setup_timeout: Duration::from_secs(30),
            clock_probes: 8,
        }
    }
}

/// An agent in use, as reported.
#[derive(Debug, Clone, Serialize)]
pub struct AgentInfo {
    pub id: String,
    pub name: String,
    pub host: String,
    pub pid: u32,
    pub version: String,
    pub servers: Vec<String>,
    pub clock: ClockEstimate,
}

/// The agents of a run, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct AgentsSummary {
    pub requested: usize,
    pub agents: Vec<AgentInfo>,
    /// Other agents that answered but were not used (busy, or more than requested).
    pub not_used: Vec<String>,
}

/// What happened to an agent's part of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShareStatus {
    /// Ran its part and reported.
    Completed,
    /// Stopped answering during the row.
    Lost,
    /// Reported an error instead of a result.
    Failed,
}

/// One agent's part of one row.
#[derive(Debug, Clone, Serialize)]
pub struct AgentShareReport {
    pub id: String,
    pub name: String,
    pub host: String,
    pub status: ShareStatus,
    /// Publishers / putters / getters it ran, and subscribers.
    pub workers: usize,
    pub subscribers: usize,
    /// Messages (operations, objects) its workers were given.
    pub assigned_msgs: u64,
    /// What it reported: published (or done) and received.
    pub published: u64,
    pub received: u64,
    /// Operations that failed on it (never counted in published or received).
    pub failed: u64,
    /// Operations it had counted at its last heartbeat (what a lost agent is known to have done).
    pub done_at_last_heartbeat: u64,
    /// Seconds after the agreed start of its last heartbeat.
    pub last_heartbeat_s: Option<f64>,
    /// How late its first client began against the agreed start, milliseconds.
    pub start_late_ms: Option<f64>,
    pub clock_offset_ms: f64,
    pub rtt_ms: f64,
    /// Its own latency (its clock only).
    pub latency_us: Option<LatencySummary>,
    /// Its histogram, V2-encoded (base64), so the merge can be checked or redone.
    pub latency_hist_v2: Option<String>,
    pub error: Option<String>,
}

/// The agents' side of one row.
#[derive(Debug, Clone, Serialize)]
pub struct AgentsRun {
    /// Every agent completed its part.
    pub complete: bool,
    /// Sums over the agents that reported.
    pub published: u64,
    pub received: u64,
    pub failed: u64,
    pub agents: Vec<AgentShareReport>,
}

/// A row run on agents: the merged result and each agent's part.
#[derive(Debug, Clone)]
pub struct Distributed {
    pub result: BenchResult,
    pub agents: AgentsRun,
}

/// Say on stderr what a failed row's clean-up left (its error is already made; the warning names the
/// asset and the command that removes it).
fn say_left(left: Option<bench::result::LeftBehind>) {
    if let Some(l) = left {
        eprintln!("natsplan: warning: {}", l.warning());
    }
}

/// A connected coordinator with its agents.
pub struct Coordinator {
    client: async_nats::Client,
    conn: ConnSpec,
    opts: AgentsOptions,
    pub summary: AgentsSummary,
    rows: usize,
    /// Agents lost in an earlier row: later rows fail fast as incomplete instead of waiting on them.
    gone: Vec<String>,
    /// A tripped token (SIGINT/SIGTERM) stops the row: the agents are told to abort it, its shared
    /// assets are removed and `run` returns an error saying it was interrupted.
    cancel: bench::Cancel,
}

fn cannot(e: impl std::fmt::Display) -> Failure {
    Failure::CannotRun(anyhow!("{e}"))
}

/// A row could not start because one of the agents found earlier did not take or set up its share (it
/// went away between rows, say): the row is incomplete, not a cluster error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct AgentUnavailable(pub String);

fn agent_unavailable(e: impl std::fmt::Display) -> Failure {
    Failure::CannotRun(anyhow::Error::new(AgentUnavailable(e.to_string())))
}

impl Coordinator {
    /// Connect, discover `opts.count` idle agents and measure their clocks. Fewer agents than asked for
    /// is an error naming how many answered.
    pub async fn connect(conn: &ConnSpec, opts: AgentsOptions) -> Result<Coordinator, Failure> {
        let limits = crate::input::limits::AGENTS;
        limits
            .check_usize(opts.count)
            .map_err(|e| Failure::BadInput(anyhow!("--agents {}: {e}", opts.count)))?;
        crate::input::limits::BENCH_WAIT_S
            .check_duration(opts.discover_timeout)
            .map_err(|e| {
                Failure::BadInput(anyhow!(
                    "--agents-timeout {}: {e}",
                    humantime::format_duration(opts.discover_timeout)
                ))
            })?;
        let client = conn
            .connect_control("natsplan-coordinator", &format!("{}._inbox", p::PREFIX), false)
            .await
            .map_err(|e| match e {
                bench::conn::ConnectFailure::Setup(e) => Failure::BadInput(e),
                bench::conn::ConnectFailure::Unreachable(e) => Failure::CannotRun(e),
            })?;
        let (chosen, not_used) = discover(&client, &opts).await?;
        let mut agents = Vec::new();
        for h in chosen {
            let clock = measure_clock(&client, &h.id, opts.clock_probes).await?;
            agents.push(AgentInfo {
                id: h.id,
                name: h.name,
                host: h.host,
                pid: h.pid,
                version: h.version,
                servers: h.servers,
                clock,
            });
        }
        Ok(Coordinator {
            client,
            conn: conn.clone(),
            summary: AgentsSummary {
                requested: opts.count,
                agents,
                not_used,
            },
            opts,
            rows: 0,
            gone: Vec::new(),
            cancel: bench::Cancel::new(),
        })
    }

    /// Stop rows when `cancel` trips (the command's signal watcher).
    pub fn set_cancel(&mut self, cancel: bench::Cancel) {
        self.cancel = cancel;
    }

    /// Abort the row on every agent, remove its assets, and say it was interrupted.
    async fn interrupted(&self, states: &BTreeMap<String, RowState>, spec: &BenchSpec, row: &str) -> Failure {
        self.abort(states, row, "interrupted by a signal on the coordinator")
            .await;
        say_left(bench::cleanup_shared(&self.conn, spec, row).await);
        cannot("interrupted by a signal: the agents were told to stop the row and its assets were removed")
    }

    /// Run one row (`spec` is the whole row) on the agents and merge their results. A tripped cancel
    /// token ends it with an error (after aborting the agents' shares and removing the row's assets).
    pub async fn run(&mut self, spec: &BenchSpec) -> Result<Distributed, Failure> {
        bench::check(spec)?;
        bench::check_payload(&self.conn, spec).await?;
        if !self.gone.is_empty() {
            return Err(agent_unavailable(format!(
                "agent(s) {} went away in an earlier row; the row cannot be spread over {} agents as asked",
                self.gone.join(", "),
                self.summary.agents.len()
            )));
        }
        let rotate = self.rows;
        self.rows += 1;
        let row = bench::new_run_id();
        let report_to = p::row_subject(&row);
        let mut inbox = self
            .client
            .subscribe(format!("{report_to}.>"))
            .await
            .map_err(|e| cannot(format!("subscribe to {report_to}.>: {e}")))?;
        let n = self.summary.agents.len();
        let parts = split::split(&spec.workload, spec.msgs, n, rotate);
        bench::prepare_shared(&self.conn, spec, &row).await?;
        let slow_before = bench::varz::total_slow_consumers(&spec.monitor).await;
        let mut states = self.hand_out(spec, &row, &parts).await?;
        self.await_setup(&mut states, spec, &row, &mut inbox).await?;
        let start_instant = self.start(&states, &row).await;
        self.await_results(&mut states, spec, &row, &mut inbox, start_instant)
            .await?;
        let slow_after = bench::varz::total_slow_consumers(&spec.monitor).await;
        let left = bench::cleanup_shared(&self.conn, spec, &row).await;
        let mut out = self.finish(spec, &row, &states, slow_before.zip(slow_after));
        if let (Ok(d), Some(l)) = (&mut out, left) {
            d.result.warnings.push(l.warning());
            d.result.left_behind.push(l);
        }
        if let Ok(d) = &out {
            let lost = d.agents.agents.iter().filter(|a| a.status == ShareStatus::Lost);
            self.gone.extend(lost.map(|a| a.name.clone()));
        }
        out
    }

    /// Ask each agent with a part of the row to run it; the first refusal aborts the others' shares,
    /// removes the row's assets and ends the row. The states of the agents that took their shares.
    async fn hand_out(
        &mut self,
        spec: &BenchSpec,
        row: &str,
        parts: &[split::Assignment],
    ) -> Result<BTreeMap<String, RowState>, Failure> {
        let mut states: BTreeMap<String, RowState> = BTreeMap::new();
        for (k, a) in parts.iter().enumerate() {
            if a.is_empty() {
                continue;
            }
            let info = &self.summary.agents[k];
            if let Some(why) = self.ask(spec, row, k, a).await {
                self.gone.push(info.name.clone());
                let (name, id) = (info.name.clone(), info.id.clone());
                self.abort(&states, row, "another agent refused the row").await;
                say_left(bench::cleanup_shared(&self.conn, spec, row).await);
                return Err(agent_unavailable(format!(
                    "agent {name} ({id}) did not take its share of the row: {why}"
                )));
            }
            states.insert(
                info.id.clone(),
                RowState {
                    k,
                    assignment: a.clone(),
                    last_seen: Instant::now(),
                    last_progress: None,
                    ready: false,
                    result: None,
                    lost: false,
                },
            );
        }
        Ok(states)
    }

    /// Ask agent `k` to run its part `a` of the row: None when it took it, else why not.
    async fn ask(&self, spec: &BenchSpec, row: &str, k: usize, a: &split::Assignment) -> Option<String> {
        let info = &self.summary.agents[k];
        let (workers_total, subs_total) = spec.workload.counts();
        let local = split::local_workload(&spec.workload, a);
        // A core agent with subscribers only still expects every message; its own count is 0.
        let work = WorkSpec::from_spec(spec, local, a.msgs(), spec.rate_per_s);
        let req = RunRequest {
            row: row.to_string(),
            report_to: p::row_subject(row),
            work,
            share: Share {
                run_id: row.to_string(),
                origin: (k + 1) as u16,
                workers: a.workers.clone(),
                subs: a.subs.clone(),
                total_workers: workers_total,
                total_subs: subs_total,
                total_msgs: spec.msgs,
            },
            heartbeat_ms: self.opts.heartbeat.as_millis() as u64,
            start_timeout_ms: self.opts.setup_timeout.as_millis() as u64,
        };
        let accepted = tokio::time::timeout(
            Duration::from_secs(5),
            self.client.request(p::agent_subject(&info.id, "run"), p::encode(&req)),
        )
        .await;
        match accepted {
            Ok(Ok(m)) => match p::decode::<RunAccepted>("run reply", &m.payload) {
                Ok(r) if r.accepted => None,
                Ok(r) => Some(r.error.unwrap_or_else(|| "refused".into())),
                Err(e) => Some(format!("{e:#}")),
            },
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("no answer within 5 s".into()),
        }
    }

    /// Setup: every agent ready (or failed), within the setup timeout. One that is not ends the row (its
    /// shares aborted and assets removed).
    async fn await_setup(
        &mut self,
        states: &mut BTreeMap<String, RowState>,
        spec: &BenchSpec,
        row: &str,
        inbox: &mut async_nats::Subscriber,
    ) -> Result<(), Failure> {
        let setup_deadline = Instant::now() + self.opts.setup_timeout;
        while states.values().any(|s| !s.ready && s.result.is_none() && !s.lost) {
            if self.cancel.is_cancelled() {
                return Err(self.interrupted(states, spec, row).await);
            }
            let msg = tokio::time::timeout(Duration::from_millis(100), inbox.next()).await;
            if let Ok(Some(m)) = msg {
                self.absorb(states, &m, None);
            }
            let now = Instant::now();
            for s in states.values_mut() {
                if !s.ready && s.result.is_none() && now.duration_since(s.last_seen) > self.opts.lost_after {
                    s.lost = true;
                }
            }
            if now > setup_deadline {
                for s in states.values_mut().filter(|s| !s.ready && s.result.is_none()) {
                    s.lost = true;
                }
            }
        }
        if let Some((id, s)) = states.iter().find(|(_, s)| !s.ready) {
            let why = match &s.result {
                Some(r) => r.error.clone().unwrap_or_else(|| "no result".into()),
                None => "stopped answering while setting up".into(),
            };
            let name = self.summary.agents[s.k].name.clone();
            let id = id.clone();
            if s.lost {
                self.gone.push(name.clone());
            }
            self.abort(states, row, "another agent failed to set up").await;
            say_left(bench::cleanup_shared(&self.conn, spec, row).await);
            return Err(agent_unavailable(format!(
                "agent {name} ({id}) could not set up its share of the row: {why}"
            )));
        }
        Ok(())
    }

    /// The agreed start, told to every agent in its own clock: far enough ahead that every agent hears
    /// of it in time. The local instant it falls on.
    async fn start(&self, states: &BTreeMap<String, RowState>, row: &str) -> Instant {
        let max_rtt_ms = self
            .summary
            .agents
            .iter()
            .map(|a| a.clock.rtt_ms)
            .fold(0.0f64, f64::max);
        let margin_ns = (50.0 + 2.0 * max_rtt_ms) as i128 * 1_000_000;
        let start_at = p::wall_ns() + margin_ns;
        let start_instant = Instant::now() + Duration::from_nanos(margin_ns as u64);
        for id in states.keys() {
            let info = self
                .summary
                .agents
                .iter()
                .find(|a| &a.id == id)
                .expect("state of a known agent");
            let local = start_at + (info.clock.offset_ms * 1e6) as i128;
            let _ = self
                .client
                .publish(
                    p::agent_subject(id, "start"),
                    p::encode(&Start {
                        start_at_ns: local,
                        row: row.to_string(),
                    }),
                )
                .await;
        }
        let _ = self.client.flush().await;
        start_instant
    }

    /// Run: results, or silence longer than lost_after.
    async fn await_results(
        &mut self,
        states: &mut BTreeMap<String, RowState>,
        spec: &BenchSpec,
        row: &str,
        inbox: &mut async_nats::Subscriber,
        start_instant: Instant,
    ) -> Result<(), Failure> {
        while states.values().any(|s| s.result.is_none() && !s.lost) {
            if self.cancel.is_cancelled() {
                return Err(self.interrupted(states, spec, row).await);
            }
            let msg = tokio::time::timeout(Duration::from_millis(100), inbox.next()).await;
            if let Ok(Some(m)) = msg {
                self.absorb(states, &m, Some(start_instant));
            }
            let now = Instant::now();
            for s in states.values_mut() {
                if s.result.is_none() && now.duration_since(s.last_seen) > self.opts.lost_after {
                    s.lost = true;
                }
            }
        }
        Ok(())
    }

    /// Tell every agent of a row to stop it.
    async fn abort(&self, states: &BTreeMap<String, RowState>, row: &str, reason: &str) {
        for id in states.keys() {
            let _ = self
                .client
                .publish(
                    p::agent_subject(id, "abort"),
                    p::encode(&p::Abort {
                        row: row.to_string(),
                        reason: reason.to_string(),
                    }),
                )
                .await;
        }
        let _ = self.client.flush().await;
    }

    /// Take one report message into the row's state.
    fn absorb(&self, states: &mut BTreeMap<String, RowState>, m: &async_nats::Message, start: Option<Instant>) {
        // `<report_to>.<id>.<what>`
        let mut it = m.subject.as_str().rsplit('.');
        let (Some(what), Some(id)) = (it.next(), it.next()) else {
            return;
        };
        let Some(s) = states.get_mut(id) else { return };
        s.last_seen = Instant::now();
        match what {
            "ready" if p::decode::<Ready>("ready", &m.payload).is_ok() => s.ready = true,
            "progress" => {
                if let Ok(pr) = p::decode::<Progress>("progress", &m.payload) {
                    s.ready |= pr.ready;
                    let at = start.map(|t| Instant::now().saturating_duration_since(t).as_secs_f64());
                    s.last_progress = Some((pr.done, at));
                }
            }
            "result" => {
                s.result = Some(
                    p::decode::<AgentResult>("result", &m.payload).unwrap_or_else(|e| AgentResult {
                        id: id.to_string(),
                        row: String::new(),
                        result: None,
                        hist_v2: None,
                        start_s: 0.0,
                        late_s: 0.0,
                        error: Some(format!("{e:#}")),
                    }),
                );
            }
            _ => {}
        }
    }

    /// Merge the completed parts and describe every agent's.
    fn finish(
        &self,
        spec: &BenchSpec,
        row: &str,
        states: &BTreeMap<String, RowState>,
        slow: Option<(u64, u64)>,
    ) -> Result<Distributed, Failure> {
        let mut reports = Vec::new();
        let mut done: Vec<(String, BenchResult, hdrhistogram::Histogram<u64>, f64)> = Vec::new();
        for (id, s) in states {
            let info = &self.summary.agents[s.k];
            let mut rep = AgentShareReport {
                id: id.clone(),
                name: info.name.clone(),
                host: info.host.clone(),
                status: ShareStatus::Lost,
                workers: s.assignment.workers.len(),
                subscribers: s.assignment.subs.len(),
                assigned_msgs: s.assignment.msgs(),
                published: 0,
                received: 0,
                failed: 0,
                done_at_last_heartbeat: s.last_progress.map(|x| x.0).unwrap_or(0),
                last_heartbeat_s: s.last_progress.and_then(|x| x.1),
                start_late_ms: None,
                clock_offset_ms: info.clock.offset_ms,
                rtt_ms: info.clock.rtt_ms,
                latency_us: None,
                latency_hist_v2: None,
                error: s.lost.then(|| {
                    format!(
                        "no heartbeat for more than {:.1} s: the agent stopped or lost its connection",
                        self.opts.lost_after.as_secs_f64()
                    )
                }),
            };
            if let Some(r) = &s.result {
                let hist = r.hist_v2.as_deref().map(p::hist_from_v2);
                match (&r.result, hist, &r.error) {
                    (Some(b), Some(Ok(h)), None) => {
                        rep.status = ShareStatus::Completed;
                        rep.published = b.published();
                        rep.received = b.received();
                        rep.failed = b.failed;
                        rep.start_late_ms = Some(r.late_s * 1e3);
                        rep.latency_us = LatencySummary::from_hist_ns(&h);
                        rep.latency_hist_v2 = r.hist_v2.clone();
                        done.push((info.name.clone(), b.clone(), h, r.start_s));
                    }
                    (_, Some(Err(e)), _) => {
                        rep.status = ShareStatus::Failed;
                        rep.error = Some(format!("{e:#}"));
                    }
                    (_, _, e) => {
                        rep.status = ShareStatus::Failed;
                        rep.error = Some(e.clone().unwrap_or_else(|| "no result in the report".into()));
                    }
                }
            }
            reports.push(rep);
        }
        if done.is_empty() {
            let why: Vec<String> = reports
                .iter()
                .map(|r| format!("{}: {}", r.name, r.error.clone().unwrap_or_default()))
                .collect();
            return Err(cannot(format!("no agent completed the row: {}", why.join("; "))));
        }
        let parts: Vec<Part> = done
            .iter()
            .map(|(name, r, h, start_s)| Part {
                name,
                result: r,
                hist: h,
                start_s: *start_s,
            })
            .collect();
        let (mut result, _) = merge::merge(spec, row, &parts);
        // Every agent that had a share counts, finished or not.
        result.params.insert("agents".into(), states.len().to_string());
        if let (Some(l), Some((a, b))) = (result.losses.as_mut(), slow) {
            l.server_slow_consumers = Some(b.saturating_sub(a));
        }
        let complete = reports.iter().all(|r| r.status == ShareStatus::Completed);
        if !complete {
            for r in reports.iter().filter(|r| r.status != ShareStatus::Completed) {
                result.warnings.push(format!(
                    "INCOMPLETE: agent {} {} ({} of {} assigned operations counted at its last heartbeat): {}",
                    r.name,
                    match r.status {
                        ShareStatus::Lost => "was lost",
                        _ => "failed",
                    },
                    r.done_at_last_heartbeat,
                    r.assigned_msgs,
                    r.error.clone().unwrap_or_default()
                ));
            }
        }
        let agents = AgentsRun {
            complete,
            published: reports.iter().map(|r| r.published).sum(),
            received: reports.iter().map(|r| r.received).sum(),
            failed: reports.iter().map(|r| r.failed).sum(),
            agents: reports,
        };
        Ok(Distributed { result, agents })
    }
}

/// What the coordinator knows of one agent during a row.
struct RowState {
    k: usize,
    assignment: split::Assignment,
    last_seen: Instant,
    last_progress: Option<(u64, Option<f64>)>,
    ready: bool,
    result: Option<AgentResult>,
    lost: bool,
}

/// Ask who is there until `count` idle agents answered (then a short grace for the rest, so the choice
/// is by name, not by who answered first) or the timeout passes.
async fn discover(client: &async_nats::Client, opts: &AgentsOptions) -> Result<(Vec<Hello>, Vec<String>), Failure> {
    let reply = format!("{}.discover", p::row_subject(&bench::new_run_id()));
    let mut answers = client
        .subscribe(reply.clone())
        .await
        .map_err(|e| cannot(format!("subscribe to {reply}: {e}")))?;
    let mut hellos = client
        .subscribe(p::hello_subject())
        .await
        .map_err(|e| cannot(format!("subscribe to {}: {e}", p::hello_subject())))?;
    let t0 = Instant::now();
    let deadline = t0 + opts.discover_timeout;
    let mut found: BTreeMap<String, Hello> = BTreeMap::new();
    let mut enough_at: Option<Instant> = None;
    let mut next_ask = t0;
    loop {
        let now = Instant::now();
        if now >= next_ask {
            // Asked again every second: an agent that connects meanwhile answers the next one.
            let _ = client
                .publish_with_reply(p::discover_subject(), reply.clone(), bytes::Bytes::new())
                .await;
            let _ = client.flush().await;
            next_ask = now + Duration::from_secs(1);
        }
        if enough_at.is_some_and(|t| now >= t) || now >= deadline {
            break;
        }
        let m = tokio::select! {
            m = answers.next() => m,
            m = hellos.next() => m,
            _ = tokio::time::sleep(Duration::from_millis(50)) => None,
        };
        if let Some(m) = m {
            if let Ok(h) = p::decode::<Hello>("hello", &m.payload) {
                found.insert(h.id.clone(), h);
            }
        }
        let idle = found.values().filter(|h| !h.busy).count();
        if idle >= opts.count && enough_at.is_none() {
            enough_at = Some(Instant::now() + Duration::from_millis(200));
        }
    }
    let mut idle: Vec<Hello> = found.values().filter(|h| !h.busy).cloned().collect();
    idle.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    let busy: Vec<String> = found.values().filter(|h| h.busy).map(|h| h.name.clone()).collect();
    if idle.len() < opts.count {
        let names: Vec<String> = idle.iter().map(|h| h.name.clone()).collect();
        return Err(Failure::CannotRun(anyhow!(
            "--agents {}: {} idle agent(s) answered on {} within {:.0} s{}{}; start more with \
             `natsplan agent --server URLS` on the client hosts (same servers and credentials) or lower --agents",
            opts.count,
            idle.len(),
            p::discover_subject(),
            opts.discover_timeout.as_secs_f64(),
            if names.is_empty() {
                String::new()
            } else {
                format!(" ({})", names.join(", "))
            },
            if busy.is_empty() {
                String::new()
            } else {
                format!("; busy with another coordinator: {}", busy.join(", "))
            }
        )));
    }
    let rest = idle.split_off(opts.count);
    let not_used = rest.into_iter().map(|h| h.name).chain(busy).collect();
    Ok((idle, not_used))
}

/// NTP-style probes of one agent's clock.
async fn measure_clock(client: &async_nats::Client, id: &str, probes: usize) -> Result<ClockEstimate, Failure> {
    let mut samples = Vec::new();
    for _ in 0..probes.max(1) {
        let t0 = p::wall_ns();
        let r = tokio::time::timeout(
            Duration::from_secs(2),
            client.request(p::agent_subject(id, "clock"), p::encode(&p::ClockRequest { t0_ns: t0 })),
        )
        .await;
        let t3 = p::wall_ns();
        if let Ok(Ok(m)) = r {
            if let Ok(c) = p::decode::<p::ClockReply>("clock", &m.payload) {
                if c.t0_ns == t0 {
                    samples.push(ClockSample {
                        t0,
                        t1: c.t1_ns,
                        t2: c.t2_ns,
                        t3,
                    });
                }
            }
        }
    }
    clock::estimate(&samples).ok_or_else(|| cannot(format!("agent {id} did not answer its clock probes")))
}
