//! `emit --monitoring`: Prometheus alerting rules and a Grafana dashboard for the planned cluster, written
//! for one exporter, because the metric names differ between them:
//!
//! - **prometheus-nats-exporter** (`-varz -jsz=all -use_internal_server_name`, one exporter per server as
//!   the Helm chart's sidecar runs it): `gnatsd_varz_*` from `/varz` and `jetstream_*` from `/jsz`, or
//!   `PREFIX_varz_*` and `PREFIX_*` under `-prefix=PREFIX` (the chart passes `-prefix=nats`). Its `/varz`
//!   metrics are made at run time by flattening the JSON: every number at path `a.b.c` becomes
//!   `<namespace>_varz_a_b_c` (collector/collector.go `objectToMetrics`, `fqName`); the names in
//!   [`EXPORTER_METRICS`] follow that rule from nats-server's `Varz` json tags.
//! - **nats-surveyor** (`--jsz all`, with system-account credentials: it polls `$SYS.REQ.SERVER.PING`):
//!   `nats_core_*` per server, `nats_stream_*` and `nats_consumer_*` per stream and consumer.
//!
//! Neither exporter says how far a stream replica lags its leader; the exporter does not say which meta
//! peers are current. Those alerts read `natsplan check --watch`'s own `natsplan_check_*` series. Every
//! threshold comes from the plan or a named default, and every rule carries its source in its
//! `threshold_source` annotation. `render` is pure; [`metric_names`] is the table the tests hold every
//! rule and panel to.

use crate::plan::{Plan, PlannedLayout};
use anyhow::{anyhow, bail, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Which exporter's metric names the rules and dashboard use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exporter {
    /// nats-io/prometheus-nats-exporter.
    PrometheusNatsExporter,
    /// nats-io/nats-surveyor.
    Surveyor,
}

impl Exporter {
    /// The name used on the command line and as the output folder.
    pub fn as_str(self) -> &'static str {
        match self {
            Exporter::PrometheusNatsExporter => "prometheus-nats-exporter",
            Exporter::Surveyor => "surveyor",
        }
    }
}

/// What `--monitoring` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Monitoring {
    pub exporter: Exporter,
    /// prometheus-nats-exporter's `-prefix`: replaces both `gnatsd` and `jetstream` (collector.go
    /// `getSystem`). None: the defaults.
    pub prefix: Option<String>,
    /// (planned server, the `server_name` it runs under) where they differ — under the Helm chart every
    /// server is named for its pod (`helm::pod_names`); empty when the servers run under their planned names.
    pub server_names: Vec<(String, String)>,
}

impl Monitoring {
    /// The name planned server `planned` reports under.
    pub fn deployed<'a>(&'a self, planned: &'a str) -> &'a str {
        self.server_names
            .iter()
            .find(|(p, _)| p == planned)
            .map_or(planned, |(_, d)| d.as_str())
    }
}

/// Where a metric name comes from: the file of the exporter's repository that defines it (or, for the
/// flattened `/varz` names, the nats-server struct whose json tags make it).
pub type Source = &'static str;

const EXPORTER_VARZ: Source = "prometheus-nats-exporter collector/collector.go (objectToMetrics flattens /varz) over \
                               nats-server server/monitor.go Varz.jetstream";
const EXPORTER_JSZ: Source = "prometheus-nats-exporter collector/jsz.go";

/// prometheus-nats-exporter's names with its default namespaces (`gnatsd` for `/varz`, `jetstream` for
/// `/jsz`), and their source. `/varz` ones derived from nats-server 2.15's `Varz` (server/monitor.go):
/// `jetstream` → `JetStreamVarz{config, stats, meta}`; `JetStreamConfig.max_storage`,
/// `JetStreamStats.{storage, ha_assets}` (server/jetstream.go), `MetaClusterInfo.cluster_size`
/// (server/monitor.go); `cpu`, `mem`, `slow_consumers` at the top.
pub const EXPORTER_METRICS: &[(&str, Source)] = &[
    ("gnatsd_varz_jetstream_stats_storage", EXPORTER_VARZ),
    ("gnatsd_varz_jetstream_config_max_storage", EXPORTER_VARZ),
    ("gnatsd_varz_jetstream_stats_ha_assets", EXPORTER_VARZ),
    ("gnatsd_varz_jetstream_meta_cluster_size", EXPORTER_VARZ),
    ("gnatsd_varz_cpu", EXPORTER_VARZ),
    ("gnatsd_varz_mem", EXPORTER_VARZ),
    ("gnatsd_varz_slow_consumers", EXPORTER_VARZ),
    ("jetstream_server_max_storage", EXPORTER_JSZ),
    ("jetstream_stream_last_seq", EXPORTER_JSZ),
    ("jetstream_stream_total_bytes", EXPORTER_JSZ),
    ("jetstream_consumer_num_pending", EXPORTER_JSZ),
    ("jetstream_consumer_num_ack_pending", EXPORTER_JSZ),
];

const SURVEYOR_STATZ: Source = "nats-surveyor surveyor/collector_statz.go";

/// nats-surveyor's names and their source.
pub const SURVEYOR_METRICS: &[(&str, Source)] = &[
    ("nats_core_jetstream_filestore_used_bytes", SURVEYOR_STATZ),
    ("nats_core_jetstream_filestore_size_bytes", SURVEYOR_STATZ),
    ("nats_core_jetstream_ha_assets", SURVEYOR_STATZ),
    ("nats_core_jetstream_cluster_raft_group_size", SURVEYOR_STATZ),
    (
        "nats_core_jetstream_cluster_raft_group_replica_peer_current",
        SURVEYOR_STATZ,
    ),
    (
        "nats_core_jetstream_cluster_raft_group_replica_peer_offline",
        SURVEYOR_STATZ,
    ),
    ("nats_core_cpu_percentage", SURVEYOR_STATZ),
    ("nats_core_mem_bytes", SURVEYOR_STATZ),
    ("nats_core_slow_consumer_count", SURVEYOR_STATZ),
    ("nats_stream_last_seq", SURVEYOR_STATZ),
    ("nats_stream_total_bytes", SURVEYOR_STATZ),
    ("nats_consumer_num_pending", SURVEYOR_STATZ),
    ("nats_consumer_num_ack_pending", SURVEYOR_STATZ),
];

const CHECK: Source = "natsplan check --format prometheus / --watch (src/report/check.rs, docs/check.md)";

/// `natsplan check`'s series, which both outputs use for what the exporters cannot say.
pub const CHECK_METRICS: &[(&str, Source)] = &[
    ("natsplan_check_status", CHECK),
    ("natsplan_check_item_status", CHECK),
    ("natsplan_check_item_value", CHECK),
];

/// Every metric name the outputs for `m` may use, with its source: the exporter's (under its prefix) and
/// natsplan check's.
pub fn metric_names(m: &Monitoring) -> BTreeMap<String, Source> {
    let mut out: BTreeMap<String, Source> = CHECK_METRICS.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    let table = match m.exporter {
        Exporter::PrometheusNatsExporter => EXPORTER_METRICS,
        Exporter::Surveyor => SURVEYOR_METRICS,
    };
    for (n, s) in table {
        out.insert(Names::new(m).rename(n), *s);
    }
    out
}

/// The names of one output: the exporter's defaults, renamed under prometheus-nats-exporter's `-prefix`.
struct Names<'a> {
    prefix: Option<&'a str>,
}

impl<'a> Names<'a> {
    fn new(m: &'a Monitoring) -> Self {
        Names {
            prefix: match m.exporter {
                Exporter::PrometheusNatsExporter => m.prefix.as_deref(),
                Exporter::Surveyor => None,
            },
        }
    }

    /// `gnatsd_varz_x` → `P_varz_x`, `jetstream_x` → `P_x` under `-prefix=P` (the namespace is replaced,
    /// the `varz` subsystem kept: collector.go `newPrometheusGaugeVec`, jsz.go `BuildFQName(system, …)`).
    fn rename(&self, name: &str) -> String {
        let Some(p) = self.prefix else { return name.to_string() };
        if let Some(rest) = name.strip_prefix("gnatsd_") {
            format!("{p}_{rest}")
        } else if let Some(rest) = name.strip_prefix("jetstream_") {
            format!("{p}_{rest}")
        } else {
            name.to_string()
        }
    }
}

/// natscli's `check jetstream` store critical level, 90 % (cli/server_check_command.go; the default
/// `natsplan check --store-critical` uses too).
const STORE_CRITICAL_PCT: f64 = 90.0;
/// jsm.go `audit` CLUSTER_003: more than 1,000 HA assets on one server.
const AUDIT_HA_ASSETS: u64 = 1000;

/// A PromQL string literal.
fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn gib(b: f64) -> String {
    format!("{:.1} GiB", b / (1u64 << 30) as f64)
}

/// The expressions of one exporter, by what they measure.
struct Exprs<'a> {
    m: &'a Monitoring,
    n: Names<'a>,
}

impl Exprs<'_> {
    fn name(&self, n: &str) -> String {
        self.n.rename(n)
    }

    /// The label that names a server, and the one that names a stream. prometheus-nats-exporter's `/varz`
    /// metrics carry only `server_id` — the server's id under the Helm chart's `-use_internal_server_id`
    /// (files/stateful-set/prom-exporter-container.yaml), its name only under `-use_internal_server_name` —
    /// so its per-server expressions take `server_name` from the `/jsz` server metric of the same `server_id`
    /// (`named`).
    fn server_label(&self) -> &'static str {
        "server_name"
    }

    /// `expr` (one series per `server_id`) with the server's name as the label `server_name`, for the servers
    /// `sel` matches: joined on `server_id` with `/jsz`'s `jetstream_server_max_storage`, which carries both
    /// (jsz.go `serverLabels`). nats-surveyor's metrics carry `server_name` themselves.
    fn named(&self, expr: String, sel: &str) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => format!(
                "({expr}) * on (server_id) group_left (server_name) group by (server_id, server_name) ({}{sel})",
                self.name("jetstream_server_max_storage")
            ),
            Exporter::Surveyor => expr,
        }
    }

    fn stream_label(&self) -> &'static str {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => "stream_name",
            Exporter::Surveyor => "stream",
        }
    }

    /// Store fill as a fraction of the server's JetStream file-store limit; `sel` is a label matcher list.
    fn store_fill(&self, sel: &str) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => self.named(
                format!(
                    "{} / {}",
                    self.name("gnatsd_varz_jetstream_stats_storage"),
                    self.name("gnatsd_varz_jetstream_config_max_storage")
                ),
                sel,
            ),
            Exporter::Surveyor => {
                format!("nats_core_jetstream_filestore_used_bytes{sel} / nats_core_jetstream_filestore_size_bytes{sel}")
            }
        }
    }

    /// One series per reporting JetStream server.
    fn per_server(&self) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => self.name("jetstream_server_max_storage"),
            Exporter::Surveyor => "nats_core_jetstream_filestore_size_bytes".into(),
        }
    }

    fn meta_size(&self) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => {
                format!("max({})", self.name("gnatsd_varz_jetstream_meta_cluster_size"))
            }
            Exporter::Surveyor => "max(nats_core_jetstream_cluster_raft_group_size)".into(),
        }
    }

    fn ha_assets(&self) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => self.named(self.name("gnatsd_varz_jetstream_stats_ha_assets"), ""),
            Exporter::Surveyor => "nats_core_jetstream_ha_assets".into(),
        }
    }

    /// Messages stored per second in one stream (its `last_seq` growth), one series per stream: every
    /// replica reports it, so the largest is taken.
    fn stream_rate(&self, sel: &str) -> String {
        let l = self.stream_label();
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => format!(
                "max by ({l}) (rate({}{sel}[5m]))",
                self.name("jetstream_stream_last_seq")
            ),
            Exporter::Surveyor => format!("max by ({l}) (rate(nats_stream_last_seq{sel}[5m]))"),
        }
    }

    fn stream_bytes(&self) -> String {
        let l = self.stream_label();
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => {
                format!("max by ({l}) ({})", self.name("jetstream_stream_total_bytes"))
            }
            Exporter::Surveyor => format!("max by ({l}) (nats_stream_total_bytes)"),
        }
    }

    fn consumer(&self, what: &str) -> String {
        let l = self.stream_label();
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => format!(
                "max by ({l}, consumer_name) ({})",
                self.name(&format!("jetstream_consumer_{what}"))
            ),
            Exporter::Surveyor => format!("max by ({l}, consumer_name) (nats_consumer_{what})"),
        }
    }

    fn cpu(&self) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => self.named(self.name("gnatsd_varz_cpu"), ""),
            Exporter::Surveyor => "nats_core_cpu_percentage".into(),
        }
    }

    fn mem(&self) -> String {
        match self.m.exporter {
            Exporter::PrometheusNatsExporter => self.named(self.name("gnatsd_varz_mem"), ""),
            Exporter::Surveyor => "nats_core_mem_bytes".into(),
        }
    }
}

/// One alerting rule.
fn rule(alert: &str, expr: String, for_: &str, severity: &str, labels: Value, ann: Value) -> Value {
    let mut l = json!({ "severity": severity });
    if let (Some(l), Some(extra)) = (l.as_object_mut(), labels.as_object()) {
        for (k, v) in extra {
            l.insert(k.clone(), v.clone());
        }
    }
    json!({ "alert": alert, "expr": expr, "for": for_, "labels": l, "annotations": ann })
}

/// The alerting rules (a Prometheus rule file, one group) for layout `pl`.
fn rules(plan: &Plan, pl: &PlannedLayout, m: &Monitoring) -> Result<Value> {
    let site = &plan.input;
    let e = Exprs { m, n: Names::new(m) };
    let cluster = &site.nats.cluster_name;
    let base = json!({ "cluster": cluster, "layout": pl.id });
    let check_sel = format!("cluster={}, layout={}", q(cluster), q(&pl.id));
    let mut out: Vec<Value> = Vec::new();
    store_rules(plan, pl, &e, &base, &mut out);
    meta_rules(pl, &e, &base, &check_sel, &mut out);
    // Per-replica lag: neither exporter has it; natsplan check does.
    out.push(rule(
        "NatsplanStreamReplicasNotCurrent",
        format!("natsplan_check_item_status{{{check_sel}, check=\"replica_current\"}} >= 2"),
        "2m",
        "critical",
        base.clone(),
        json!({
            "summary": "a planned stream has no leader, too few peers, or a replica offline or lagging (natsplan check)",
            "description": "Neither prometheus-nats-exporter nor nats-surveyor exports a stream replica's lag; natsplan check --watch reads it from each stream leader's /jsz.",
            "threshold": "2 (critical)",
            "threshold_source": "natsplan check's replica_current item (docs/check.md): lag critical per stream from its planned rate × 5 s, at least natscli's 200",
        }),
    ));
    out.push(rule(
        "NatsplanCheckCritical",
        format!("natsplan_check_status{{{check_sel}}} == 2"),
        "5m",
        "critical",
        base.clone(),
        json!({
            "summary": "natsplan check: the cluster is not as planned (critical)",
            "description": "Run `natsplan check --plan PLAN` for the items.",
            "threshold": "2 (critical)",
            "threshold_source": "natsplan check's status (Nagios codes, docs/check.md)",
        }),
    ));
    out.push(rule(
        "NatsplanHaAssetsAboveAudit",
        format!("{} > {AUDIT_HA_ASSETS}", e.ha_assets()),
        "15m",
        "warning",
        base.clone(),
        json!({
            "summary": format!("a server holds more than {AUDIT_HA_ASSETS} HA assets (RAFT groups)"),
            "description": "Above this, restarts and elections slow down (nats audit).",
            "threshold": AUDIT_HA_ASSETS.to_string(),
            "threshold_source": "jsm.go audit CLUSTER_003: 1,000 HA assets per server",
        }),
    ));
    rate_rules(plan, pl, &e, &base, &mut out);
    if out.is_empty() {
        bail!("layout {} gave no alerting rule", pl.id);
    }
    Ok(json!({ "groups": [ { "name": format!("natsplan-{cluster}-{}", pl.id), "rules": out } ] }))
}

/// Store fill per server: what still leaves room for the worst tolerated failure's replicas (plan), and
/// natscli's critical level.
fn store_rules(plan: &Plan, pl: &PlannedLayout, e: &Exprs, base: &Value, out: &mut Vec<Value>) {
    let site = &plan.input;
    let failover = crate::plan::failover_room(site, pl.hardware(), &pl.tolerates);
    for (i, s) in pl.servers.iter().enumerate() {
        if s.store_bytes == 0 {
            continue;
        }
        let limit = s.store_bytes as f64;
        let name = e.m.deployed(&s.name);
        let sel = format!("{{{}={}}}", e.server_label(), q(name));
        let fill = e.store_fill(&sel);
        let mut labels = base.clone();
        labels["server"] = json!(name);
        if name != s.name {
            labels["planned_server"] = json!(s.name);
        }
        if let Some((extra, Some(after))) = failover.get(i) {
            let room = (limit - extra).max(0.0);
            // Rounded down: the rule fires at or below the plan's room, never above it.
            let frac = (room / limit * 1e4).floor() / 1e4;
            out.push(rule(
                "NatsplanStoreBeyondFailoverRoom",
                format!("{fill} > {frac:.4}"),
                "15m",
                "warning",
                labels.clone(),
                json!({
                    "summary": format!("{}: JetStream store above {:.1} % of max_file_store; it could not take on the replicas re-placed on it after {after}", s.name, 100.0 * frac),
                    "description": format!("{} must keep {} of its {} free for the replicas it takes on after {after} is peer-removed, so at most {} stored.", s.name, gib(*extra), gib(limit), gib(room)),
                    "threshold": format!("{frac:.4}"),
                    "threshold_source": format!("plan layout {}: max_file_store {} bytes of {} minus {} bytes re-placed on it after {after} (plan::failover_room over plan::needs_after and plan::tolerated_failures; natsplan check's store_failover)", pl.id, s.store_bytes, s.name, extra.ceil()),
                }),
            ));
        }
        out.push(rule(
            "NatsplanStoreNearlyFull",
            format!("{fill} > {:.2}", STORE_CRITICAL_PCT / 100.0),
            "5m",
            "critical",
            labels,
            json!({
                "summary": format!("{}: JetStream store above {STORE_CRITICAL_PCT} % of max_file_store ({})", s.name, gib(limit)),
                "description": "nats-server refuses new messages (error 10047, insufficient resources) when the store is full.",
                "threshold": format!("{:.2}", STORE_CRITICAL_PCT / 100.0),
                "threshold_source": format!("natscli check jetstream --store-critical default 90 % (cli/server_check_command.go), of the planned max_file_store {} bytes", s.store_bytes),
            }),
        ));
    }
}

/// The meta group: as many peers as the plan has JetStream servers, each current.
fn meta_rules(pl: &PlannedLayout, e: &Exprs, base: &Value, check_sel: &str, out: &mut Vec<Value>) {
    let m = e.m;
    let want = pl.servers.len();
    // Every planned server reporting: the per-server rules select servers by name, so a server that is
    // down, not scraped, or named otherwise than the plan (the Helm chart names servers for their pods)
    // would leave them silent; this one fires instead.
    out.push(rule(
        "NatsplanServersNotReporting",
        format!("count({}) < {want} or absent({}) == 1", e.per_server(), e.per_server()),
        "5m",
        "critical",
        base.clone(),
        json!({
            "summary": format!("fewer servers report JetStream figures than the plan's {want}"),
            "description": "A planned server is down, its exporter does not reach it, or it reports under another name than the plan's (the per-server rules select servers by name and stay silent for it).",
            "threshold": want.to_string(),
            "threshold_source": format!("plan layout {}: {want} JetStream servers (servers[])", pl.id),
        }),
    ));
    out.push(rule(
        "NatsplanMetaGroupSmaller",
        format!("{} < {want}", e.meta_size()),
        "2m",
        "critical",
        base.clone(),
        json!({
            "summary": format!("meta group smaller than the plan's {want} JetStream servers"),
            "description": "A server left the meta group (peer-removed, or never joined); the plan's survival figures assume every planned server.",
            "threshold": want.to_string(),
            "threshold_source": format!("plan layout {}: {want} JetStream servers (servers[])", pl.id),
        }),
    ));
    out.push(rule(
        "NatsplanMetaGroupLarger",
        format!("{} > {want}", e.meta_size()),
        "15m",
        "warning",
        base.clone(),
        json!({
            "summary": format!("meta group larger than the plan's {want} JetStream servers"),
            "description": "An unplanned server joined the meta group; its placement and quorum are not the plan's.",
            "threshold": want.to_string(),
            "threshold_source": format!("plan layout {}: {want} JetStream servers (servers[])", pl.id),
        }),
    ));
    if m.exporter == Exporter::Surveyor {
        out.push(rule(
            "NatsplanMetaPeerOffline",
            "max by (peer) (nats_core_jetstream_cluster_raft_group_replica_peer_offline) > 0".into(),
            "1m",
            "critical",
            base.clone(),
            json!({
                "summary": "a meta group peer is offline in the meta leader's view",
                "description": format!("The plan tolerates {} failed server(s) and {} rack(s); check `natsplan whatif` before the next one.", pl.tolerates_meta.servers, pl.tolerates_meta.racks),
                "threshold": "0",
                "threshold_source": "nats-server's meta leader (JetStream.Meta.Replicas[].offline via nats-surveyor); any offline peer",
            }),
        ));
        out.push(rule(
            "NatsplanMetaPeerNotCurrent",
            "min by (peer) (nats_core_jetstream_cluster_raft_group_replica_peer_current) < 1".into(),
            "5m",
            "warning",
            base.clone(),
            json!({
                "summary": "a meta group peer is not current in the meta leader's view",
                "description": "The peer is behind the meta leader's log.",
                "threshold": "1",
                "threshold_source": "nats-server's meta leader (JetStream.Meta.Replicas[].current via nats-surveyor)",
            }),
        ));
    } else {
        out.push(rule(
            "NatsplanMetaPeersNotCurrent",
            format!("natsplan_check_item_status{{{check_sel}, check=\"meta\"}} >= 2"),
            "2m",
            "critical",
            base.clone(),
            json!({
                "summary": "meta group: no leader, too few peers, or a peer offline or behind (natsplan check)",
                "description": "prometheus-nats-exporter does not export the meta peers' currency; natsplan check --watch reads it from the meta leader's /jsz.",
                "threshold": "2 (critical)",
                "threshold_source": "natsplan check's meta item (docs/check.md): natscli check meta --lag-critical 200, --seen-critical 5s",
            }),
        ));
    }
}

/// Rates: above the plan's (warning) and above the predicted ceiling (critical).
fn rate_rules(plan: &Plan, pl: &PlannedLayout, e: &Exprs, base: &Value, out: &mut Vec<Value>) {
    let site = &plan.input;
    let rates = crate::plan::stream_rates(site, pl);
    for (stream, r) in &rates {
        let sel = format!("{{{}={}}}", e.stream_label(), q(stream));
        let rate = e.stream_rate(&sel);
        let mut labels = base.clone();
        labels["stream"] = json!(stream);
        if r.ops_per_s > 0.0 {
            out.push(rule(
                "NatsplanStreamAbovePlannedRate",
                format!("{rate} > {}", r.ops_per_s),
                "15m",
                "warning",
                labels.clone(),
                json!({
                    "summary": format!("{stream}: more messages per second than planned ({})", r.ops_per_s),
                    "description": "The store fills faster than planned and the plan's retention sizing no longer holds.",
                    "threshold": r.ops_per_s.to_string(),
                    "threshold_source": format!("site workload: {} ({} ops/s as stored messages: msgs_per_s, puts_per_s, or object puts/s × (128 KiB chunks + 1))", r.asset, r.ops_per_s),
                }),
            ));
        }
        if let Some(c) = r.ceiling_per_s.filter(|c| c.is_finite() && *c > 0.0) {
            out.push(rule(
                "NatsplanStreamAbovePredictedCeiling",
                format!("{rate} > {c:.1}"),
                "5m",
                "critical",
                labels,
                json!({
                    "summary": format!("{stream}: above the predicted ceiling of {c:.1} messages per second"),
                    "description": "Latency and publish errors rise past the layout's predicted throughput.",
                    "threshold": format!("{c:.1}"),
                    "threshold_source": format!("natsplan design's prediction for {} on layout {} (predicted.streams[].ops_per_s)", r.asset, pl.id),
                }),
            ));
        }
    }
}

mod dashboard;
mod promql;

use dashboard::dashboard;
pub use dashboard::{DATASOURCE_INPUT, GRAFANA_SCHEMA_VERSION};
pub use promql::{expressions, names_in};

/// The README of `monitoring/`: what each output covers, what it cannot, and how the exporter must run.
fn readme(plan: &Plan, pl: &PlannedLayout, m: &Monitoring, dir: &str) -> String {
    let run = match m.exporter {
        Exporter::PrometheusNatsExporter => {
            let p = m.prefix.as_deref().map(|p| format!(" -prefix={p}")).unwrap_or_default();
            format!(
                "Run one prometheus-nats-exporter per server (a sidecar, as the Helm chart runs it) with\n\n    \
                 prometheus-nats-exporter -varz -jsz=all{p} http://127.0.0.1:8222\n\n\
                 `-jsz=all` is needed: besides the stream and consumer metrics it gives each server's name \
                 (`server_name`), which the per-server rules join to the `/varz` metrics by `server_id`, whichever \
                 id the exporter uses (the chart passes `-use_internal_server_id`)."
            )
        }
        Exporter::Surveyor => format!(
            "Run nats-surveyor with the system account's credentials (it polls `$SYS.REQ.SERVER.PING`; emit's \
             configurations have user `sys`, password `$NATS_SYSTEM_PASSWORD`, unless the deploy file names \
             another system account), `-c` the number of servers it should hear from, and `--jsz all` for the \
             stream and consumer metrics:\n\n    nats-surveyor -s nats://HOST:4222 --user sys --password \
             \"$NATS_SYSTEM_PASSWORD\" -c {} --jsz all",
            pl.servers.len()
        ),
    };
    format!(
        "# Monitoring for cluster {cluster}, layout {id} ({exp})\n\n\
         - `{dir}/alerts.rules.yaml`: Prometheus alerting rules (`rule_files:` in prometheus.yml). Every threshold \
         is the plan's or a named default; each rule's `threshold_source` annotation says which.\n\
         - `{dir}/dashboard.json`: a Grafana dashboard (schemaVersion {sv}); import it and choose the Prometheus \
         data source for the `{ds}` input.\n\n\
         {run}\n\n\
         Run natsplan check beside it and scrape its endpoint too (docs/check.md; `--plan` the plan this was \
         emitted from):\n\n    natsplan check --plan PLAN --monitor {monitors} --watch 30s --listen 127.0.0.1:9849\n\nThe \
         state of the stream replicas{meta} comes only from natsplan check's `natsplan_check_*` series, because \
         {exp} does not export it.\n\n\
         What this cannot watch: a stream replica's lag in the exporters' own metrics (natsplan check's \
         `replica_current` stands in), latency, disk health, and streams created after the plan (natsplan check \
         lists them as `unplanned`).\n",
        cluster = plan.input.nats.cluster_name,
        id = pl.id,
        monitors = pl
            .servers
            .iter()
            .map(|s| format!("http://{}:8222", m.deployed(&s.name)))
            .collect::<Vec<_>>()
            .join(","),
        exp = m.exporter.as_str(),
        sv = GRAFANA_SCHEMA_VERSION,
        ds = DATASOURCE_INPUT,
        meta = if m.exporter == Exporter::PrometheusNatsExporter {
            " and of the meta peers"
        } else {
            ""
        },
    )
}

/// A valid prometheus-nats-exporter `-prefix` (a Prometheus metric name's first part).
pub fn check_prefix(p: &str) -> Result<()> {
    let ok = !p.is_empty()
        && p.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(anyhow!(
            "--metric-prefix '{}': a Prometheus name prefix is letters, digits and '_' and starts with a letter \
             or '_' (the Helm chart uses nats)",
            p.escape_debug()
        ));
    }
    Ok(())
}

/// The monitoring files of layout `layout_id`: `monitoring/README.md`, `monitoring/<exporter>/alerts.rules.yaml`
/// and `monitoring/<exporter>/dashboard.json`.
pub fn render(plan: &Plan, layout_id: &str, m: &Monitoring) -> Result<Vec<(PathBuf, String)>> {
    if let Some(p) = &m.prefix {
        check_prefix(p)?;
    }
    let pl = super::emittable(plan, layout_id)?;
    if let Some(s) = pl.servers.iter().find(|s| s.name.eq_ignore_ascii_case("monitoring")) {
        bail!(
            "server '{}' has its folder where --monitoring writes monitoring/; rename the server in the site file, \
             or emit without --monitoring",
            s.name
        );
    }
    let dir = format!("monitoring/{}", m.exporter.as_str());
    let rules = rules(plan, pl, m)?;
    let mut yaml = format!(
        "# Prometheus alerting rules for cluster {}, layout {} ({}), written by natsplan emit --monitoring.\n",
        plan.input.nats.cluster_name,
        pl.id,
        m.exporter.as_str()
    );
    yaml.push_str(&serde_norway::to_string(&rules)?);
    let mut dash = serde_json::to_string_pretty(&dashboard(plan, pl, m))?;
    dash.push('\n');
    Ok(vec![
        (PathBuf::from(format!("{dir}/alerts.rules.yaml")), yaml),
        (PathBuf::from(format!("{dir}/dashboard.json")), dash),
        (PathBuf::from("monitoring/README.md"), readme(plan, pl, m, &dir)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_reads_metric_names_and_skips_functions_labels_and_ranges() {
        let e = "max by (stream_name) (rate(jetstream_stream_last_seq{stream_name=\"a{b\"}[5m])) > 1e3 and on (x) \
                 natsplan_check_status{cluster=\"c\"} == 2 or 100 * gnatsd_varz_cpu";
        assert_eq!(
            names_in(e),
            ["jetstream_stream_last_seq", "natsplan_check_status", "gnatsd_varz_cpu"]
        );
    }

    #[test]
    fn the_exporter_prefix_replaces_both_namespaces() {
        let m = Monitoring {
            exporter: Exporter::PrometheusNatsExporter,
            prefix: Some("nats".into()),
            server_names: vec![],
        };
        let n = metric_names(&m);
        assert!(n.contains_key("nats_varz_jetstream_stats_storage"));
        assert!(n.contains_key("nats_stream_last_seq"));
        assert!(n.contains_key("natsplan_check_status"));
        assert!(!n
            .keys()
            .any(|k| k.starts_with("gnatsd_") || k.starts_with("jetstream_")));
    }

    #[test]
    fn a_prefix_that_is_no_metric_name_is_refused() {
        for bad in ["", "9x", "na-ts", "a b"] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
        check_prefix("nats").unwrap();
    }
}
