//! `--recover` on the lab: the sandbox's operations behind `recover::LabOps` (restart, free space, the
//! system account's `$JS.API.SERVER.REMOVE`, a wiped server rejoining under a new name, waits), and the
//! end state judged under load: every replica back and current, then a sustained publish.

use super::recover::{self, LabOps, Limits, RecoveryStep};
use super::*;
use crate::lab::Lab;
use crate::survival::{Action, Until};
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The lab, the scenario's full store (if any) and the server's version, as the drill's operations see them.
pub(super) struct LabDrill<'a, 'b> {
    pub(super) ctx: &'a Ctx<'a>,
    /// The scenario's test stream (whatif calls it by the model's asset name).
    pub(super) stream: &'a str,
    pub(super) lab: &'b mut Lab,
    pub(super) full: Option<&'b mut FullStore>,
    pub(super) producer: &'a Producer,
}

/// The scenario's producer as the drill sees it: its stream and subject, the ids it has had acknowledged so
/// far (the publisher appends them), and the ids the drill re-published (`republish_acked`).
pub(super) struct Producer {
    js: jetstream::Context,
    subject: String,
    pub(super) acked: Arc<Mutex<Vec<String>>>,
    pub(super) republished: Mutex<Vec<String>>,
}

impl Producer {
    pub(super) fn new(js: &jetstream::Context, subject: &str) -> Producer {
        Producer {
            js: js.clone(),
            subject: subject.to_string(),
            acked: Arc::default(),
            republished: Mutex::default(),
        }
    }
    /// The ids re-published so far.
    pub(super) fn republished(&self) -> Vec<String> {
        self.republished.lock().map(|r| r.clone()).unwrap_or_default()
    }
    /// Re-publish every acknowledged id `name` no longer holds, each under its own `Nats-Msg-Id`, until
    /// acknowledged or the deadline: how many the stream took as new (a duplicate ack means it still had it).
    fn republish_missing(&self, rt: &tokio::runtime::Runtime, name: &str, deadline: Instant) -> Result<usize> {
        // What had been acknowledged before the stream is read: an id acknowledged after the read would
        // look missing (the publisher writes on during the drill).
        let acked = self.acked.lock().map(|a| a.clone()).unwrap_or_default();
        let (read, _) = rt.block_on(super::traffic::read_all(&self.js, name))?;
        let held: HashSet<&str> = read.iter().map(|(_, id)| id.as_str()).collect();
        let missing: Vec<String> = acked.into_iter().filter(|id| !held.contains(id.as_str())).collect();
        let mut republished = 0;
        'ids: for id in &missing {
            loop {
                let msg = super::traffic::id_message(id);
                let ack = rt.block_on(tokio::time::timeout(Duration::from_secs(2), async {
                    self.js.send_publish(self.subject.clone(), msg).await?.await
                }));
                match ack {
                    // The stream still had it (its duplicate window): not re-published.
                    Ok(Ok(a)) if a.duplicate => continue 'ids,
                    Ok(Ok(_)) => break,
                    Ok(Err(e)) if Instant::now() >= deadline => bail!("re-publishing {id}: {e}"),
                    Err(_) if Instant::now() >= deadline => bail!("re-publishing {id}: no ack within 2 s"),
                    _ => std::thread::sleep(Duration::from_millis(200)),
                }
            }
            if let Ok(mut r) = self.republished.lock() {
                r.push(id.clone());
            }
            republished += 1;
        }
        Ok(republished)
    }
}

/// Each step's own deadline (a restart waits for the whole lab to be healthy again).
pub(super) const STEP_DEADLINE: Duration = Duration::from_secs(60);

impl LabDrill<'_, '_> {
    fn index(&self, server: &str) -> Result<usize> {
        peer_index(self.lab, server).map_err(|_| anyhow!("{server} is not a server of the lab"))
    }
    /// The name the cluster knows server `i` by now (its configuration's; a rejoined server's new one).
    fn current_name(&self, i: usize) -> Result<String> {
        let conf = &self.lab.nodes()[i].conf;
        let text = crate::input::read_text(conf, "server config").map_err(|e| anyhow!("{e}"))?;
        conf_server_name(&text).ok_or_else(|| anyhow!("{}: no server_name", conf.display()))
    }
    /// Waits for each named stream (`ASSET`: the scenario's) to be back at its replica count with every
    /// replica current ([`replicas_back`]), one after another by `deadline`; says how long each took.
    fn each_back(&mut self, streams: &[String], deadline: Instant, back: &str) -> Result<String> {
        let mut said = Vec::new();
        for s in streams {
            let name = if s == ASSET { self.stream } else { s.as_str() };
            let within = deadline.saturating_duration_since(Instant::now());
            let t = replicas_back(self.lab, name, self.ctx.replicas, within)?;
            said.push(format!("{name} {back} after {t:.1} s"));
        }
        Ok(said.join("; "))
    }
    /// A running server of the lab goes by `name` now.
    fn runs_as(&mut self, name: &str) -> bool {
        (0..self.lab.nodes().len()).any(|i| self.lab.is_running(i) && self.current_name(i).is_ok_and(|n| n == name))
    }
    /// The meta leader, when it leads under a rescue: its own `/jsz` names itself leader with the quorum
    /// lowered (`meta_cluster.rescue`, server/jetstream_cluster.go `MetaClusterInfo`). Right after the kill
    /// the survivors still name the old leader, itself a survivor, for a few seconds: a full run of 5
    /// December took that for the rescued group, so the rescue was never applied and the peer-removes went
    /// unanswered.
    fn rescued_leader(&mut self) -> Option<String> {
        let l = self.lab.meta_leader().ok()?;
        let i = (0..self.lab.nodes().len())
            .find(|&i| self.lab.is_running(i) && self.current_name(i).is_ok_and(|n| n == l))?;
        let jsz = crate::monitor::jsz(&self.lab.nodes()[i].monitor_url(), "", Duration::from_secs(2)).ok()?;
        leads_rescued(&jsz, &l).then_some(l)
    }
    fn healthy_by(&mut self, deadline: Instant) -> Result<()> {
        wait_healthy(self.lab, deadline.saturating_duration_since(Instant::now()))
    }
    /// Server `i` answers `/healthz` 200 by the deadline (others a later step brings back may still be down).
    fn server_healthy_by(&self, i: usize, deadline: Instant) -> Result<()> {
        self.answers_by(i, "/healthz", deadline)
    }
    /// Server `i` answers `path` 200 by the deadline.
    fn answers_by(&self, i: usize, path: &str, deadline: Instant) -> Result<()> {
        let url = self.lab.nodes()[i].monitor_url();
        loop {
            let last = match crate::monitor::get(&url, path, Duration::from_secs(2)) {
                Ok(r) if r.status == 200 => return Ok(()),
                Ok(r) => format!("{} {}", r.status, r.body.trim()),
                Err(e) => format!("{e:#}"),
            };
            if Instant::now() >= deadline {
                bail!(
                    "{} not healthy by its deadline: {path} {last}",
                    self.lab.nodes()[i].name
                );
            }
            self.ctx.opts.pause(Duration::from_millis(250))?;
        }
    }
    /// Every server of the lab runs with JetStream up and the meta group current (`/healthz?js-meta-only=true`,
    /// server/monitor.go): the process-level end of a restart or a stall. A stream's replicas being current is
    /// not part of it: a diverged replica re-syncs later, at its leader's next snapshot (`replicas_resynced`).
    fn servers_back_by(&mut self, deadline: Instant) -> Result<()> {
        for i in 0..self.lab.nodes().len() {
            if !self.lab.is_running(i) {
                bail!("{} is not running", self.lab.nodes()[i].name);
            }
            self.answers_by(i, "/healthz?js-meta-only=true", deadline)?;
        }
        Ok(())
    }
    /// A request on the system account (the lab carries the one `emit` writes), retried until it
    /// answers `success` or the deadline passes.
    fn system_request(&self, subject: &str, body: serde_json::Value, deadline: Instant) -> Result<String> {
        let success = |v: &serde_json::Value| v.get("success").and_then(|s| s.as_bool()) == Some(true);
        self.system_request_until(subject, body, deadline, Ask::First, &success)
    }
    /// As [`Self::system_request`], done when `done` accepts an answer (with [`Ask::Everyone`], any one of
    /// the answers that came within the window).
    fn system_request_until(
        &self,
        subject: &str,
        body: serde_json::Value,
        deadline: Instant,
        ask: Ask,
        done: &dyn Fn(&serde_json::Value) -> bool,
    ) -> Result<String> {
        let (user, pass) = self.lab.system_user();
        let addrs = self
            .lab
            .client_urls()
            .iter()
            .map(|u| u.parse::<async_nats::ServerAddr>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow!("bad lab url: {e}"))?;
        let opts = async_nats::ConnectOptions::with_user_and_password(user.into(), pass.into())
            .connection_timeout(Duration::from_secs(5));
        let rt = self.ctx.rt;
        let client = rt
            .block_on(opts.connect(addrs))
            .context("cannot connect as the system user")?;
        let mut last = String::from("no answer");
        while Instant::now() < deadline {
            match rt.block_on(answers(&client, subject, &body, ask)) {
                Ok(vs) => {
                    if let Some(v) = vs.iter().find(|v| done(v)) {
                        rt.block_on(client.drain()).ok();
                        return Ok(format!("{subject} answered {}", answer_said(v)));
                    }
                    if !vs.is_empty() {
                        last = vs.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("; ");
                    }
                }
                Err(e) => last = format!("{e:#}"),
            }
            self.ctx.opts.pause(Duration::from_millis(500))?;
        }
        rt.block_on(client.drain()).ok();
        bail!("{subject} {body} did not succeed before its deadline: {last}")
    }
}

/// How a system request is answered: by the first responder, or by every server (a broadcast such as
/// `$JS.API.META.RESCUE`, where each running server applies it to itself and answers on its own).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ask {
    First,
    Everyone,
}

/// One try of a system request: the first answer within 3 s, or every answer within 2 s.
async fn answers(
    client: &async_nats::Client,
    subject: &str,
    body: &serde_json::Value,
    ask: Ask,
) -> Result<Vec<serde_json::Value>> {
    use futures::StreamExt;
    let parse = |m: &async_nats::Message| serde_json::from_slice(&m.payload).unwrap_or_default();
    if ask == Ask::First {
        let m = tokio::time::timeout(
            Duration::from_secs(3),
            client.request(subject.to_string(), body.to_string().into()),
        )
        .await
        .map_err(|_| anyhow!("no answer within 3 s"))??;
        return Ok(vec![parse(&m)]);
    }
    let inbox = client.new_inbox();
    let mut sub = client.subscribe(inbox.clone()).await?;
    client
        .publish_with_reply(subject.to_string(), inbox, body.to_string().into())
        .await?;
    client.flush().await?;
    let end = tokio::time::Instant::now() + Duration::from_secs(2);
    let mut out = Vec::new();
    while let Ok(Some(m)) = tokio::time::timeout_at(end, sub.next()).await {
        out.push(parse(&m));
    }
    sub.unsubscribe().await.ok();
    Ok(out)
}

impl LabOps for LabDrill<'_, '_> {
    fn restart(&mut self, server: &str, deadline: Instant) -> Result<String> {
        let i = self.index(server)?;
        let name = self.lab.nodes()[i].name.clone();
        self.lab.restart(i)?;
        self.server_healthy_by(i, deadline)?;
        Ok(format!("restarted nats-server on {name}; it is healthy"))
    }
    fn free_space(&mut self, server: &str) -> Result<String> {
        let i = self.index(server)?;
        let fs = self
            .full
            .as_deref_mut()
            .filter(|f| f.server == i)
            .ok_or_else(|| anyhow!("nothing filled {server}'s store in this scenario"))?;
        match fs.ballast.take() {
            Some(b) => {
                std::fs::remove_file(&b).with_context(|| format!("cannot remove {}", b.display()))?;
                let effect = full_disk_effect(&self.lab.nodes()[i].monitor_url());
                Ok(format!("space freed: {}", effect.describe(server)))
            }
            None => bail!("{server}'s store has no filler to remove"),
        }
    }
    fn peer_remove(&mut self, server: &str, deadline: Instant) -> Result<String> {
        let name = self.current_name(self.index(server)?)?;
        let body = serde_json::json!({ "peer": name });
        self.system_request("$JS.API.SERVER.REMOVE", body, deadline)
            .map(|d| format!("{d} (system account; peer {name})"))
    }
    fn rejoin_as_new(&mut self, server: &str, deadline: Instant) -> Result<String> {
        let i = self.index(server)?;
        let base = self.lab.nodes()[i].name.clone();
        let old = self.current_name(i)?;
        let new = next_wiped_name(&base, &old);
        if self.lab.is_running(i) {
            self.lab.kill(i)?;
        }
        let store = self.lab.nodes()[i].store_dir.clone();
        let _ = std::fs::remove_dir_all(&store);
        std::fs::create_dir_all(&store).with_context(|| format!("cannot create {}", store.display()))?;
        let conf = self.lab.nodes()[i].conf.clone();
        let text = crate::input::read_text(&conf, "server config").map_err(|e| anyhow!("{e}"))?;
        let renamed = rename_server(&text, &old, &new)
            .ok_or_else(|| anyhow!("{}: no server_name line to rename", conf.display()))?;
        std::fs::write(&conf, renamed)?;
        self.lab.restart(i)?;
        self.server_healthy_by(i, deadline)?;
        Ok(format!(
            "{server} started on an empty store as {new} (same tags); it is healthy"
        ))
    }
    fn meta_rescue(&mut self, quorum_needed: u64, deadline: Instant) -> Result<String> {
        // A broadcast: every running server with data and no known meta leader lowers its own quorum (for 5
        // minutes, server/raft.go `rescueQuorumTimeoutDefault`) and answers on its own, with `new_quorum` or
        // an error (10224 "leader is known" while it still follows a leader). One that applied it campaigns
        // and wins with the others' votes, so every answer counts, not the first (a lab run took the first:
        // a survivor still following answered "leader is known" first for 60 s while the other had applied it).
        let body = serde_json::json!({ "quorum_needed": quorum_needed });
        let rescued = |v: &serde_json::Value| v.get("error").is_none() && v.get("new_quorum").is_some();
        // Tries of 5 s; between them a running meta leader also counts: the server that applied an earlier
        // try may have answered after the 2 s window, and every later try gets "leader is known".
        loop {
            let within = deadline.min(Instant::now() + Duration::from_secs(5));
            let err =
                match self.system_request_until("$JS.API.META.RESCUE", body.clone(), within, Ask::Everyone, &rescued) {
                    Ok(said) => return Ok(format!("{said} (system account; quorum lowered to {quorum_needed})")),
                    Err(e) => e,
                };
            if let Some(l) = self.rescued_leader() {
                return Ok(format!(
                    "$JS.API.META.RESCUE sent (system account; quorum {quorum_needed}); no answer said it applied \
                     it, but the meta group leads again under the rescue ({l})"
                ));
            }
            if Instant::now() >= deadline {
                return Err(err);
            }
        }
    }
    fn reattach_store(&mut self, server: &str, standby: &str, deadline: Instant) -> Result<String> {
        // The lab has no second machine: the standby is the same process slot, started on the store as it
        // was left, under the same server_name.
        let i = self.index(server)?;
        self.lab.restart(i)?;
        self.server_healthy_by(i, deadline)?;
        Ok(format!(
            "{server}'s store started under the same server_name (the lab's stand-in for {standby})"
        ))
    }
    fn reconcile(&mut self, streams: &[String], deadline: Instant) -> Result<String> {
        // The lab's side of it: the stream's group re-formed on the survivors (a leader and its replica count);
        // what the lost replicas alone held is the checker's to find, as the operator would with the writers.
        self.each_back(streams, deadline, "leads again with every replica current")
    }
    fn resync(&mut self, streams: &[String], deadline: Instant) -> Result<String> {
        self.each_back(streams, deadline, "has every replica current")
    }
    fn republish_acked(&mut self, streams: &[String], deadline: Instant) -> Result<String> {
        // The producer's side: it knows what it had acknowledged; what the stream no longer holds goes again
        // under the same id. The checker then requires every acknowledged id in the stream exactly once.
        let mut said = Vec::new();
        for s in streams {
            let name = if s == ASSET { self.stream } else { s.as_str() };
            let n = self.producer.republish_missing(self.ctx.rt, name, deadline)?;
            said.push(format!(
                "{n} acknowledged writes missing from {name}, re-published under their ids"
            ));
        }
        Ok(said.join("; "))
    }
    fn wait(&mut self, until: Until, deadline: Instant) -> Result<String> {
        match until {
            Until::MetaRescued => loop {
                // The old leader, a survivor, is still named for a few seconds after the kill: only a leader
                // under the rescue counts.
                match self.rescued_leader() {
                    Some(l) => return Ok(format!("the meta group leads again under the rescue ({l})")),
                    None if Instant::now() >= deadline => {
                        bail!("no meta leader under the rescue before the deadline")
                    }
                    None => self.ctx.opts.pause(Duration::from_millis(500))?,
                }
            },
            Until::MetaQuorum => loop {
                // A server may still name a leader that is gone: only a running one counts.
                match self.lab.meta_leader() {
                    Ok(l) if self.runs_as(&l) => return Ok(format!("the meta group leads again ({l})")),
                    Ok(l) if Instant::now() >= deadline => {
                        bail!("no running meta leader before the deadline (servers name {l})")
                    }
                    Ok(_) => self.ctx.opts.pause(Duration::from_millis(500))?,
                    Err(e) if Instant::now() >= deadline => bail!("no meta leader before the deadline: {e:#}"),
                    Err(_) => self.ctx.opts.pause(Duration::from_millis(500))?,
                }
            },
            Until::Restarted | Until::StallEnds | Until::Reread => {
                self.servers_back_by(deadline)?;
                Ok("every server runs with the meta group current".into())
            }
            _ => {
                self.healthy_by(deadline)?;
                Ok("the lab is healthy".into())
            }
        }
    }
}

/// What a successful system-account answer said, short: `success`, or a rescue's server and new quorum.
fn answer_said(v: &serde_json::Value) -> String {
    match (v.get("server").and_then(|s| s.as_str()), v.get("new_quorum")) {
        (Some(server), Some(q)) => format!("from {server}: quorum {} -> {q}", v["prev_quorum"]),
        _ => "success".into(),
    }
}

/// whatif's actions for the scenario with their drill seconds, less the kinds `leave_out` names.
pub(super) fn drill_steps(pred: &ScenarioPrediction, leave_out: &[String]) -> Vec<(Action, Option<f64>)> {
    pred.recovery_actions
        .iter()
        .cloned()
        .zip(pred.recovery_drill_s.iter().copied().chain(std::iter::repeat(None)))
        .filter(|(a, _)| !leave_out.contains(&recover::kind_of(a)))
        .collect()
}

/// The scenario's recovery budget: the option's, or half again whatif's own drill seconds over the steps the
/// lab carries out and 30 s when that is longer (the drill carries them out one after another; a simulated
/// step's seconds are the hardware's, an hour for a rack's power, and the lab spends none on it).
fn budget(option: Duration, steps: &[(Action, Option<f64>)]) -> Duration {
    let predicted: f64 = steps
        .iter()
        .filter(|(a, _)| !recover::is_simulated(a))
        .filter_map(|(_, s)| *s)
        .filter(|s| s.is_finite() && *s > 0.0)
        .sum();
    option.max(Duration::from_secs_f64(1.5 * predicted + 30.0))
}

/// Carry out whatif's recovery for the scenario on the lab.
pub(super) fn run_drill(
    ctx: &Ctx,
    lab: &mut Lab,
    full: Option<&mut FullStore>,
    pred: &ScenarioPrediction,
    stream: &str,
    producer: &Producer,
) -> Vec<RecoveryStep> {
    let steps = drill_steps(pred, &ctx.opts.recovery_leave_out);
    for (a, _) in &steps {
        (ctx.log)(&format!("  recovery step: {}", recover::kind_of(a)));
    }
    let mut ops = LabDrill {
        ctx,
        stream,
        lab,
        full,
        producer,
    };
    let limits = Limits {
        budget: budget(ctx.opts.recovery_budget, &steps),
        per_step: STEP_DEADLINE,
    };
    recover::carry_out(&steps, &mut ops, limits)
}

/// Wait until the stream has `replicas` peers, all on running servers and current: each server's `/jsz`
/// holds at least the highest last sequence any of them held when the wait began, and then at least the
/// highest any held when they first all reached that (the publisher writes on meanwhile, so replicas equal at
/// one instant would be luck; and a diverged replica ahead of the leader sets the first target itself and
/// meets it while stuck: past the leader's later writes, the second target, it does not).
/// Ok(seconds waited) or why not by the deadline.
pub(super) fn replicas_back(lab: &Lab, name: &str, replicas: usize, within: Duration) -> Result<f64> {
    let t0 = Instant::now();
    let mut rounds = Rounds::default();
    loop {
        let placed = lab.streams().into_iter().find(|s| s.name == name);
        let peers = placed.as_ref().map(|s| s.peers.len()).unwrap_or(0);
        let states = super::judge::replica_states_now(lab, name);
        let seqs: Vec<u64> = states.iter().map(|s| s.last_seq).collect();
        let current = states.len() == replicas && rounds.step(&seqs);
        if peers == replicas && current {
            return Ok(t0.elapsed().as_secs_f64());
        }
        if t0.elapsed() > within {
            let st: Vec<String> = states.iter().map(|s| format!("{}@{}", s.server, s.last_seq)).collect();
            bail!(
                "the stream had {peers} of {replicas} peers, replicas [{}], {:.0} s after the recovery",
                st.join(", "),
                within.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Whether `jsz` (a server's `/jsz`) shows it leading the meta group as `name` with the quorum lowered by a
/// rescue (nats-server ≥ 2.15: `meta_cluster.rescue`, or a `quorum_needed` below a majority of
/// `cluster_size`).
pub(super) fn leads_rescued(jsz: &serde_json::Value, name: &str) -> bool {
    let m = &jsz["meta_cluster"];
    let size = m["cluster_size"].as_u64().unwrap_or(0);
    let lowered = m["quorum_needed"].as_u64().is_some_and(|q| q > 0 && q < size / 2 + 1);
    m["leader"].as_str() == Some(name) && (m["rescue"].as_bool() == Some(true) || lowered)
}

/// The two targets of [`replicas_back`]: each the highest last sequence of a poll where every replica
/// reported; current once every replica has reached the second.
#[derive(Debug, Default)]
pub(super) struct Rounds {
    first: Option<u64>,
    second: Option<u64>,
}

impl Rounds {
    /// One poll's last sequences (every replica's): whether the replicas are current.
    pub(super) fn step(&mut self, seqs: &[u64]) -> bool {
        let (Some(&top), Some(&low)) = (seqs.iter().max(), seqs.iter().min()) else {
            return false;
        };
        match (self.first, self.second) {
            (None, _) => {
                self.first = Some(top);
                false
            }
            (Some(want), None) => {
                if low >= want {
                    self.second = Some(top);
                }
                false
            }
            (Some(_), Some(want)) => low >= want,
        }
    }
}

/// The sustained publish after the recovery: acknowledgements in `[from_s, to_s]` against the rate.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sustained {
    pub(super) acked: usize,
    pub(super) expected: f64,
    pub(super) longest_gap_s: f64,
}

impl Sustained {
    pub(super) fn of(ack_times: &[f64], from_s: f64, to_s: f64, rate: f64) -> Sustained {
        let mut t: Vec<f64> = ack_times
            .iter()
            .copied()
            .filter(|x| *x >= from_s && *x <= to_s)
            .collect();
        t.sort_by(f64::total_cmp);
        let mut gap: f64 = 0.0;
        let mut prev = from_s;
        for x in t.iter().copied().chain(std::iter::once(to_s)) {
            gap = gap.max(x - prev);
            prev = x;
        }
        Sustained {
            acked: t.len(),
            expected: rate * (to_s - from_s),
            longest_gap_s: gap,
        }
    }
    /// At least half the rate, and no gap longer than a publish timeout and a second.
    pub(super) fn ok(&self, timeout_s: f64) -> bool {
        self.acked as f64 >= 0.5 * self.expected && self.longest_gap_s <= timeout_s + 1.0
    }
}

/// The drill's verdict on the scenario (already judged as every scenario is): a failed step, replicas not
/// back, or writes that did not keep up after the recovery disagree.
pub(super) fn judge_recovery(
    res: &mut ScenarioResult,
    steps: &[RecoveryStep],
    back: &Result<f64>,
    sustained: &Sustained,
    timeout_s: f64,
) {
    let failed: Vec<String> = steps
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.ok)
        .map(|(i, s)| format!("step {} {}: {}", i + 1, recover::kind_of(&s.action), s.detail))
        .collect();
    let mut why = Vec::new();
    if !failed.is_empty() {
        res.observed = "recovery_failed".into();
        why.push(failed.join("; "));
    }
    match back {
        Ok(s) => why.push(format!("every replica back and current {s:.1} s after the recovery")),
        Err(e) => {
            if failed.is_empty() {
                res.observed = "replicas_not_back".into();
            }
            why.push(format!("{e:#}"));
        }
    }
    why.push(format!(
        "sustained publish: {} acked of {:.0} at the rate, longest gap {:.1} s",
        sustained.acked, sustained.expected, sustained.longest_gap_s
    ));
    // After `republish_acked`: every acknowledged write the fault lost is in the stream again.
    let still_missing = match (res.acked_republished, res.acked_lost) {
        (Some(re), Some(lost)) => {
            let still = lost.saturating_sub(re);
            why.push(format!(
                "{re} acknowledged writes the fault lost re-published and read back, {still} still missing"
            ));
            still
        }
        _ => 0,
    };
    if !sustained.ok(timeout_s) && failed.is_empty() && back.is_ok() {
        res.observed = "writes_not_sustained".into();
    }
    if still_missing > 0 && failed.is_empty() {
        res.observed = "acked_still_missing".into();
    }

    if !failed.is_empty() || back.is_err() || !sustained.ok(timeout_s) || still_missing > 0 {
        res.agree = false;
    }
    res.detail.push_str(&format!("; recovery: {}", why.join("; ")));
    res.recovery_steps = Some(steps.to_vec());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leader_under_the_rescue_counts_as_rescued() {
        // What n5 and n4 showed in the full run's finding of 5 December (3 of 5 servers lost, no rescue
        // applied): n5 still named leader by a survivor, quorum 3 of 4, no rescue flag.
        let stale = serde_json::json!({"meta_cluster": {"leader": "n5", "cluster_size": 4, "quorum_needed": 3}});
        assert!(!leads_rescued(&stale, "n5"));
        let flagged = serde_json::json!({"meta_cluster": {"leader": "n5", "cluster_size": 5, "quorum_needed": 2, "rescue": true}});
        assert!(leads_rescued(&flagged, "n5"));
        // Another server's view, or a rescue without the flag but with the quorum lowered.
        assert!(!leads_rescued(&flagged, "n4-w"));
        let lowered = serde_json::json!({"meta_cluster": {"leader": "n4-w", "cluster_size": 5, "quorum_needed": 2}});
        assert!(leads_rescued(&lowered, "n4-w"));
        assert!(!leads_rescued(&serde_json::json!({}), "n5"));
    }

    #[test]
    fn a_server_rejoins_under_a_new_name_each_time_and_is_found_by_it() {
        assert_eq!(next_wiped_name("n2", "n2"), "n2-w");
        assert_eq!(next_wiped_name("n2", "n2-w"), "n2-w2");
        assert_eq!(next_wiped_name("n2", "n2-w2"), "n2-w3");
        assert_eq!(
            conf_server_name("# x\nserver_name: n2-w\nport: 1\n").as_deref(),
            Some("n2-w")
        );
        assert_eq!(conf_server_name("server_name = \"a b\"\n").as_deref(), Some("a b"));
        assert_eq!(conf_server_name("port: 1\n"), None);
    }

    #[test]
    fn sustained_writes_need_half_the_rate_and_no_long_gap() {
        let even: Vec<f64> = (0..100).map(|i| 10.0 + i as f64 * 0.05).collect();
        let s = Sustained::of(&even, 10.0, 15.0, 20.0);
        assert_eq!(s.acked, 100);
        assert!(s.ok(2.0), "{s:?}");
        // Writes stop after 1.5 s: a 3.5 s gap to the window's end, under half the rate.
        let half: Vec<f64> = even.iter().copied().filter(|t| *t < 11.5).collect();
        assert!(!Sustained::of(&half, 10.0, 15.0, 20.0).ok(2.0));
        assert!(!Sustained::of(&[], 10.0, 15.0, 20.0).ok(2.0));
    }

    #[test]
    fn replicas_are_current_only_past_a_second_target_a_stuck_replica_cannot_reach() {
        // The documented divergence: n2 stuck ahead at 2,601, n1 and n3 (the leader) at 2,178 and writing on.
        let mut r = Rounds::default();
        assert!(!r.step(&[2178, 2601, 2178]));
        // The others pass n2's 2,601; n2 has not moved: the second target is the leader's 2,700.
        assert!(!r.step(&[2650, 2601, 2700]));
        for _ in 0..5 {
            assert!(!r.step(&[2800, 2601, 2800]), "a stuck replica is never current");
        }
        // Re-synced at the leader's snapshot: current.
        assert!(r.step(&[2900, 2900, 2900]));
        // Replicas that keep up: current on the third poll, not by one equal instant.
        let mut r = Rounds::default();
        assert!(!r.step(&[10, 10, 10]));
        assert!(!r.step(&[12, 11, 12]));
        assert!(r.step(&[14, 14, 13]));
        // Nothing reported: never current.
        assert!(!Rounds::default().step(&[]));
    }

    #[test]
    fn the_budget_leaves_out_what_the_lab_only_records() {
        let steps = vec![
            (Action::Hardware, Some(3600.0)),
            (
                Action::Resync {
                    streams: vec!["s".into()],
                },
                Some(195.0),
            ),
            (
                Action::Wait {
                    until: Until::OperatorResponds,
                },
                None,
            ),
        ];
        // 1.5 × 195 + 30, not an hour and a half.
        assert_eq!(budget(Duration::from_secs(120), &steps), Duration::from_secs_f64(322.5));
        assert_eq!(budget(Duration::from_secs(900), &steps), Duration::from_secs(900));
    }

    #[test]
    fn a_failed_step_or_replicas_not_back_disagree() {
        let mut r = not_run(FaultKind::FullDisk, String::new());
        r.agree = true;
        let good = Sustained::of(&(0..100).map(|i| i as f64 * 0.05).collect::<Vec<_>>(), 0.0, 5.0, 20.0);
        let step = |ok: bool| RecoveryStep {
            action: Action::Restart {
                servers: vec!["n2".into()],
            },
            ok,
            seconds: 1.0,
            predicted_seconds: Some(10.0),
            simulated: false,
            detail: "x".into(),
        };
        let mut a = r.clone();
        judge_recovery(&mut a, &[step(true)], &Ok(1.0), &good, 2.0);
        assert!(a.agree, "{a:?}");
        let mut b = r.clone();
        judge_recovery(&mut b, &[step(false)], &Ok(1.0), &good, 2.0);
        assert!(!b.agree && b.observed == "recovery_failed", "{b:?}");
        let mut c = r.clone();
        judge_recovery(&mut c, &[step(true)], &Err(anyhow!("2 of 3 peers")), &good, 2.0);
        assert!(!c.agree && c.observed == "replicas_not_back", "{c:?}");
        assert_eq!(c.recovery_steps.as_ref().map(Vec::len), Some(1));
    }
}
