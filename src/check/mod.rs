//! `natsplan check`: a running cluster held against its plan, graded as monitoring reads it (ok, warning,
//! critical, unknown; Nagios plugin codes 0, 1, 2, 3). Pure: `Expected::from_plan` reads what the plan
//! asked for (servers and their tags, the stream definitions `emit` writes, the bytes each server holds
//! at the horizon and what it must still take on after the worst tolerated failure, RAFT groups per
//! server), `grade` compares it with what `monitor::observe` read. Nothing here reads the network or
//! prints; `report::check` renders, `commands::check` glues. docs/check.md lists every check, its
//! threshold and where that comes from.

use crate::monitor::observe::{Observed, PeerObs, ServerObs, StreamObs};
use crate::plan::Plan;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// A check's grade. Ordered by how much it matters: the report's status is its worst item's, and unknown
/// (a figure that could not be read) counts above ok but below warning, so that a critical or a warning
/// found elsewhere is what the monitoring system sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Ok,
    Unknown,
    Warning,
    Critical,
}

impl Health {
    /// The Nagios plugin exit code: 0 ok, 1 warning, 2 critical, 3 unknown.
    pub fn exit_code(self) -> u8 {
        match self {
            Health::Ok => 0,
            Health::Warning => 1,
            Health::Critical => 2,
            Health::Unknown => 3,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Ok => "ok",
            Health::Unknown => "unknown",
            Health::Warning => "warning",
            Health::Critical => "critical",
        }
    }
}

/// One graded check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// server | tags | asset | replicas | placement | replica_current | consumers | consumer_replicas |
    /// consumer_current | meta | store | store_failover | memory | ha_assets | leaders | rate | unplanned
    /// (docs/check.md)
    pub check: String,
    /// The server or stream it is about (`cluster` for the meta group).
    pub subject: String,
    pub status: Health,
    /// What was found, with the planned figure beside it.
    pub message: String,
    /// The measured figure and its thresholds, where the check has a number (`unit` names its unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warn: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// Thresholds, each overridable by a flag named as natscli's (`nats server check`), see docs/check.md.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Thresholds {
    /// A stream replica this many operations behind its leader is critical; None: per stream, the
    /// operations its planned rate brings in `peer_seen_critical`, at least natscli's 200.
    pub peer_lag_critical: Option<u64>,
    /// A stream replica not heard from by its leader for this long is critical (natscli: 5 s).
    #[serde(serialize_with = "secs")]
    pub peer_seen_critical: Duration,
    /// The same for the meta group's peers (natscli `check meta --lag-critical`, `--seen-critical`).
    pub lag_critical: u64,
    #[serde(serialize_with = "secs")]
    pub seen_critical: Duration,
    /// Store and memory use, percent of the server's limit (natscli `check jetstream`: 75 and 90).
    pub store_warn: f64,
    pub store_critical: f64,
    pub mem_warn: f64,
    pub mem_critical: f64,
    /// HA assets per server: warning above this (None: the plan's count for the server), critical above
    /// `ha_assets_critical` (nats audit CLUSTER_003: 1,000; the plan's count when it plans more).
    pub ha_assets_warn: Option<u64>,
    pub ha_assets_critical: u64,
    /// An observed rate above this percent of the plan's rate warns, above `rate_critical` percent of the
    /// predicted ceiling is critical (both 100: the plan's figures themselves).
    pub rate_warn: f64,
    pub rate_critical: f64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// natscli's `check jetstream` replica defaults (`--replica-lag-critical 200`, `--replica-seen-critical 5s`).
pub const NATSCLI_LAG_CRITICAL: u64 = 200;
pub const NATSCLI_SEEN_CRITICAL: Duration = Duration::from_secs(5);
/// nats audit's CLUSTER_003: more HA assets than this on one server.
pub const AUDIT_HA_ASSETS: u64 = 1_000;

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            peer_lag_critical: None,
            peer_seen_critical: NATSCLI_SEEN_CRITICAL,
            lag_critical: NATSCLI_LAG_CRITICAL,
            seen_critical: NATSCLI_SEEN_CRITICAL,
            store_warn: 75.0,
            store_critical: 90.0,
            mem_warn: 75.0,
            mem_critical: 90.0,
            ha_assets_warn: None,
            ha_assets_critical: AUDIT_HA_ASSETS,
            rate_warn: 100.0,
            rate_critical: 100.0,
        }
    }
}

/// One planned server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpServer {
    pub name: String,
    /// Lower case, as emitted.
    pub tags: Vec<String>,
    /// `max_file_store`.
    pub store_bytes: u64,
    /// What it holds at the end of the planning horizon under the expected placement.
    pub planned_bytes: u64,
    /// What it must still take on when the worst tolerated failure's replicas are placed again (after
    /// peer-remove), and that failure (`rack:A`); 0 and None when nothing is re-placed on it.
    pub failover_bytes: u64,
    pub failover: Option<String>,
    /// RAFT groups on it: the meta group and every planned stream, bucket, store and consumer placed there.
    pub ha_assets: u64,
}

/// One planned stream (a KV bucket's `KV_<name>`, an object store's `OBJ_<name>`), as emit defines it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpAsset {
    pub stream: String,
    /// stream | kv | object_store
    pub kind: String,
    pub replicas: u64,
    pub placement_tags: Vec<String>,
    /// Operations per second the plan gives it (messages, puts, or object chunks and metadata).
    pub ops_per_s: f64,
    /// The predicted ceiling in the same operations (perf's `ops_per_s` for it, scaled as `ops_per_s` is
    /// from the workload's figure); None without a prediction.
    pub ceiling_per_s: Option<f64>,
}

/// What the plan expects of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Expected {
    pub cluster: String,
    pub layout: String,
    pub unique_tag: Option<String>,
    pub servers: Vec<ExpServer>,
    pub assets: Vec<ExpAsset>,
    /// The durable consumers planned per stream (streams with none planned are not listed).
    pub consumers: Vec<consumers::ExpConsumers>,
}

impl Expected {
    /// The expectations of layout `id` (its per-asset lists expanded: `Inputs::expand`).
    pub fn from_plan(plan: &Plan, id: &str) -> anyhow::Result<Expected> {
        let pl = plan
            .layout(id)
            .ok_or_else(|| anyhow::anyhow!("--layout {id}: not in the plan"))?;
        let site = &plan.input;
        let files = crate::emit::render(plan, id, &crate::emit::EmitOptions::default())?;
        let rates = crate::plan::stream_rates(site, pl);
        let mut assets = Vec::new();
        for (path, text) in &files {
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let kind = match path.iter().next().and_then(|c| c.to_str()) {
                Some("streams") => "stream",
                Some("kv") => "kv",
                Some("object_stores") => "object_store",
                _ => continue,
            };
            let v: Value = serde_json::from_str(text)?;
            let Some(name) = v.get("name").and_then(Value::as_str) else {
                continue;
            };
            assets.push(ExpAsset {
                stream: name.to_string(),
                kind: kind.into(),
                replicas: v.get("num_replicas").and_then(Value::as_u64).unwrap_or(1),
                placement_tags: v
                    .pointer("/placement/tags")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_lowercase)
                    .collect(),
                ops_per_s: rates.get(name).map(|r| r.ops_per_s).unwrap_or(0.0),
                ceiling_per_s: rates.get(name).and_then(|r| r.ceiling_per_s),
            });
        }
        assets.sort_by(|a, b| a.stream.cmp(&b.stream));
        // Bytes per server now and after each tolerated failure (capacity's scenarios: whole racks when
        // one is tolerated, single servers when one is).
        let (Some(layout), Some(planned)) = (pl.placed(), pl.per_asset().map(|d| &d.assets)) else {
            anyhow::bail!("layout {id} is kept per class: {}", crate::plan::MATERIALISED);
        };
        let need = crate::plan::needs(layout);
        let failover = crate::plan::failover_room(site, layout, &pl.tolerates);
        let planned_consumers = consumers::ExpConsumers::from_plan(plan, &assets);
        let mut servers = Vec::new();
        for (i, s) in pl.servers.iter().enumerate() {
            // The plan's assets include the durable consumers (on their stream's peers). nats-server makes
            // a RAFT node (an HA asset) only for a group of more than one peer (server/jetstream_cluster.go
            // `createRaftGroup`: "a single peer raft group … return"), so R1 assets are not counted.
            let placed = planned
                .iter()
                .filter(|a| a.replicas > 1 && a.expected.contains(&s.name))
                .count() as u64;
            servers.push(ExpServer {
                name: s.name.clone(),
                tags: s.tags.iter().map(|t| t.to_lowercase()).collect(),
                store_bytes: s.store_bytes,
                planned_bytes: need.get(i).copied().unwrap_or(0.0).ceil() as u64,
                failover_bytes: failover.get(i).map(|f| f.0.ceil() as u64).unwrap_or(0),
                failover: failover.get(i).and_then(|f| f.1.clone()),
                ha_assets: 1 + placed,
            });
        }
        Ok(Expected {
            cluster: site.nats.cluster_name.clone(),
            layout: pl.id.clone(),
            unique_tag: pl.unique_tag.clone(),
            servers,
            assets,
            consumers: planned_consumers,
        })
    }
}

/// The graded result of one pass.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    pub cluster: String,
    pub layout: String,
    /// The worst item's status (ok when there is none).
    pub status: Health,
    /// `status` as a Nagios plugin exit code.
    pub exit_code: u8,
    /// Items per status.
    pub counts: BTreeMap<String, usize>,
    pub thresholds: Thresholds,
    pub checks: Vec<Item>,
    pub notes: Vec<String>,
}

/// Why the cluster that answered is not the one the plan is for, when none of the servers that answered
/// is in the plan's cluster (a `--monitor` of another cluster, a plan of another site).
pub fn other_cluster(exp: &Expected, obs: &Observed) -> Option<String> {
    let names: BTreeSet<&str> = obs.servers.iter().filter_map(|s| s.cluster.as_deref()).collect();
    if names.is_empty() || names.contains(exp.cluster.as_str()) {
        return None;
    }
    Some(format!(
        "the plan is for cluster '{}' (layout {}), but the servers that answered are in cluster {}: give the \
         monitors of the planned cluster, or the plan of this one",
        exp.cluster,
        exp.layout,
        names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
    ))
}

struct Out(Vec<Item>);

impl Out {
    fn add(&mut self, check: &str, subject: &str, status: Health, message: String) -> &mut Item {
        self.0.push(Item {
            check: check.into(),
            subject: subject.into(),
            status,
            message,
            value: None,
            warn: None,
            critical: None,
            unit: None,
        });
        self.0.last_mut().expect("just pushed")
    }
}

impl Item {
    fn figures(&mut self, value: f64, warn: Option<f64>, critical: Option<f64>, unit: &str) -> &mut Self {
        self.value = Some(value);
        self.warn = warn;
        self.critical = critical;
        self.unit = Some(unit.into());
        self
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}

fn gib(b: u64) -> String {
    crate::units::fmt_bytes(b as f64)
}

/// Messages per second per stream between two passes `seconds` apart (`last_seq` grows by one per
/// message stored), for the streams both passes saw; a stream whose sequence went back (purged and
/// re-created) is left out.
pub fn rates(first: &Observed, second: &Observed, seconds: f64) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    if seconds <= 0.0 {
        return out;
    }
    for b in &second.streams {
        if let Some(a) = first
            .streams
            .iter()
            .find(|a| a.account == b.account && a.name == b.name)
        {
            if b.last_seq >= a.last_seq {
                out.insert(b.name.clone(), (b.last_seq - a.last_seq) as f64 / seconds);
            }
        }
    }
    out
}

/// Grade the cluster against the plan; `rates` (messages/s per stream, from two passes) adds the rate
/// checks.
pub fn grade(exp: &Expected, obs: &Observed, rates: Option<&BTreeMap<String, f64>>, th: &Thresholds) -> CheckReport {
    let mut out = Out(Vec::new());
    let mut notes = Vec::new();
    let live: BTreeMap<&str, &ServerObs> = obs.servers.iter().map(|s| (s.name.as_str(), s)).collect();
    let planned: BTreeSet<&str> = exp.servers.iter().map(|s| s.name.as_str()).collect();
    let silent_urls: Vec<String> = obs
        .unreachable
        .iter()
        .filter(|(_, n, _)| n.is_none())
        .map(|(u, _, e)| format!("{} ({e})", crate::monitor::shown(u)))
        .collect();
    if !silent_urls.is_empty() {
        notes.push(format!("monitors that did not answer: {}", silent_urls.join("; ")));
    }
    servers(exp, obs, &live, &planned, th, &mut out);
    meta(exp, obs, &live, th, &mut out);
    assets(exp, obs, &live, th, &mut out, &mut notes);
    consumers::grade(exp, obs, th, &mut out);
    leaders(exp, obs, &live, &mut out);
    if let Some(r) = rates {
        rate_checks(exp, r, th, &mut out);
    }
    let status = out.0.iter().map(|i| i.status).max().unwrap_or(Health::Ok);
    let mut counts = BTreeMap::new();
    for s in [Health::Ok, Health::Warning, Health::Critical, Health::Unknown] {
        counts.insert(s.as_str().to_string(), out.0.iter().filter(|i| i.status == s).count());
    }
    CheckReport {
        cluster: exp.cluster.clone(),
        layout: exp.layout.clone(),
        status,
        exit_code: status.exit_code(),
        counts,
        thresholds: th.clone(),
        checks: out.0,
        notes,
    }
}

/// The meta group: its size, a leader, its peers current (from the leader's view).
fn meta(exp: &Expected, obs: &Observed, live: &BTreeMap<&str, &ServerObs>, th: &Thresholds, out: &mut Out) {
    let want = exp.servers.len() as u64;
    let views: Vec<&ServerObs> = obs.servers.iter().filter(|s| s.meta.is_some()).collect();
    if views.is_empty() {
        out.add(
            "meta",
            "cluster",
            Health::Critical,
            "meta group: no server answered with JetStream cluster information".into(),
        );
        return;
    }
    let leader = views
        .iter()
        .filter_map(|s| s.meta.as_ref().and_then(|m| m.leader.clone()))
        .next();
    let Some(leader) = leader else {
        out.add(
            "meta",
            "cluster",
            Health::Critical,
            format!(
                "meta group: no leader (the JetStream API is down; {} of {want} planned servers answered)",
                obs.servers.len()
            ),
        );
        return;
    };
    let size = views
        .iter()
        .filter_map(|s| s.meta.as_ref())
        .map(|m| m.cluster_size)
        .max()
        .unwrap_or(0);
    let mut problems: Vec<(Health, String)> = Vec::new();
    if size < want {
        problems.push((
            Health::Critical,
            format!("{size} peers, the plan has {want} JetStream servers"),
        ));
    } else if size > want {
        problems.push((
            Health::Warning,
            format!("{size} peers, the plan has {want} JetStream servers"),
        ));
    }
    match live.get(leader.as_str()).and_then(|s| s.meta.as_ref()) {
        Some(m) if m.leader.as_deref() == Some(leader.as_str()) => {
            for p in &m.replicas {
                if let Some(pr) = peer_problem(p, th.lag_critical, th.seen_critical) {
                    problems.push(pr);
                }
            }
        }
        _ => problems.push((
            Health::Unknown,
            format!("the leader {leader}'s monitor was not read, so its peers' currency is unknown"),
        )),
    }
    let st = problems.iter().map(|p| p.0).max().unwrap_or(Health::Ok);
    let msg = if problems.is_empty() {
        format!("meta group: {size} peers as planned, leader {leader}, all current")
    } else {
        format!(
            "meta group (leader {leader}): {}",
            problems.iter().map(|p| p.1.clone()).collect::<Vec<_>>().join("; ")
        )
    };
    out.add("meta", "cluster", st, msg)
        .figures(size as f64, None, Some(want as f64), "peers");
}

/// The most leaders one of `groups` may hold before it is a warning: twice its fair share, and at least
/// one more than it (a leader moving at an election is never an alert by itself; a pile-up is).
fn leaders_allowed(total: usize, groups: usize) -> usize {
    let fair = total.div_ceil(groups.max(1));
    (2 * fair).max(fair + 1)
}

/// Leader balance: the plan's performance model assumes the replicated assets' leaders spread over the
/// servers (and so over the failure domains); a server or a domain holding more than twice its share is a
/// warning (one failure then forces that many elections, and those leaders' load sits on one place).
fn leaders(exp: &Expected, obs: &Observed, live: &BTreeMap<&str, &ServerObs>, out: &mut Out) {
    let planned: BTreeSet<&str> = exp
        .assets
        .iter()
        .filter(|a| a.replicas > 1)
        .map(|a| a.stream.as_str())
        .collect();
    let led: Vec<&str> = obs
        .streams
        .iter()
        .filter(|s| planned.contains(s.name.as_str()))
        .filter_map(|s| s.leader.as_deref())
        .collect();
    if led.is_empty() {
        return;
    }
    let mut per_server: BTreeMap<&str, usize> = exp.servers.iter().map(|s| (s.name.as_str(), 0)).collect();
    for l in &led {
        *per_server.entry(l).or_insert(0) += 1;
    }
    let mut problems = Vec::new();
    let allowed = leaders_allowed(led.len(), exp.servers.len());
    let (top, most) = per_server
        .iter()
        .max_by_key(|(n, c)| (**c, std::cmp::Reverse(**n)))
        .map(|(n, c)| (*n, *c))
        .unwrap_or_default();
    if most > allowed {
        problems.push(format!(
            "{top} leads {most} of {} (more than twice a fair share over {} servers)",
            led.len(),
            exp.servers.len()
        ));
    }
    if let Some(ut) = &exp.unique_tag {
        let key = ut.to_lowercase();
        let domain_of = |server: &str| -> Option<String> {
            let tags: Vec<String> = match live.get(server) {
                Some(l) => l.tags.iter().map(|t| t.to_lowercase()).collect(),
                None => exp.servers.iter().find(|x| x.name == server)?.tags.clone(),
            };
            tags.into_iter().find(|t| t.starts_with(&key))
        };
        let domains: BTreeSet<String> = exp.servers.iter().filter_map(|s| domain_of(&s.name)).collect();
        let mut per_domain: BTreeMap<String, usize> = BTreeMap::new();
        for l in &led {
            if let Some(d) = domain_of(l) {
                *per_domain.entry(d).or_insert(0) += 1;
            }
        }
        let allowed_d = leaders_allowed(led.len(), domains.len());
        if let Some((d, n)) = per_domain.iter().max_by_key(|(_, n)| **n) {
            if *n > allowed_d && domains.len() < exp.servers.len() {
                problems.push(format!(
                    "{d} leads {n} of {} (more than twice a fair share over {} failure domains)",
                    led.len(),
                    domains.len()
                ));
            }
        }
    }
    let counts = per_server
        .iter()
        .map(|(n, c)| format!("{n} {c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let (st, msg) = if problems.is_empty() {
        (Health::Ok, format!("stream leaders spread: {counts}"))
    } else {
        (
            Health::Warning,
            format!("stream leaders piled up: {}; per server: {counts}", problems.join("; ")),
        )
    };
    out.add("leaders", "cluster", st, msg)
        .figures(most as f64, Some(allowed as f64), None, "leaders");
}

/// Observed rates against the plan's rate (warning) and the predicted ceiling (critical).
fn rate_checks(exp: &Expected, rates: &BTreeMap<String, f64>, th: &Thresholds, out: &mut Out) {
    for a in &exp.assets {
        let Some(&r) = rates.get(&a.stream) else { continue };
        let warn = a.ops_per_s * th.rate_warn / 100.0;
        let crit = a.ceiling_per_s.map(|c| c * th.rate_critical / 100.0);
        let st = if crit.is_some_and(|c| r > c) {
            Health::Critical
        } else if r > warn {
            Health::Warning
        } else {
            Health::Ok
        };
        let ceiling = match a.ceiling_per_s {
            Some(c) => format!(", predicted ceiling {c:.0}/s"),
            None => ", no predicted ceiling".into(),
        };
        out.add(
            "rate",
            &a.stream,
            st,
            format!("{}: {r:.1} messages/s, planned {:.1}/s{ceiling}", a.stream, a.ops_per_s),
        )
        .figures(r, Some(warn), crit, "msgs/s");
    }
}

mod assets;
mod consumers;
mod servers;

use assets::{assets, current, Group};
use servers::{peer_problem, servers};

#[cfg(test)]
mod tests;
