//! The Grafana dashboard `emit --monitoring` writes (`dashboard.json`): one panel per figure the plan
//! predicts or the rules alert on. Moved out of monitoring.rs whole.

use super::*;

/// Grafana's dashboard JSON model version the dashboard is written in (Grafana 10.4 and 11.0 write 39;
/// later versions migrate it on import).
pub const GRAFANA_SCHEMA_VERSION: u64 = 39;
/// The data-source input Grafana asks for on import (`__inputs`), used as `${DS_PROMETHEUS}`.
pub const DATASOURCE_INPUT: &str = "DS_PROMETHEUS";

/// One time-series panel.
fn panel(id: usize, title: &str, desc: &str, expr: String, legend: &str, unit: &str, steps: Value) -> Value {
    let ds = json!({ "type": "prometheus", "uid": format!("${{{DATASOURCE_INPUT}}}") });
    let (x, y) = ((id - 1) % 2 * 12, (id - 1) / 2 * 8);
    json!({
        "id": id,
        "type": "timeseries",
        "title": title,
        "description": desc,
        "datasource": ds,
        "gridPos": { "h": 8, "w": 12, "x": x, "y": y },
        "targets": [ { "refId": "A", "datasource": ds, "expr": expr, "legendFormat": legend } ],
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "thresholds": { "mode": "absolute", "steps": steps },
                "custom": { "thresholdsStyle": { "mode": "line" } }
            },
            "overrides": []
        },
        "options": { "legend": { "displayMode": "list", "placement": "bottom" }, "tooltip": { "mode": "multi" } }
    })
}

fn steps(levels: &[(&str, f64)]) -> Value {
    let mut v = vec![json!({ "color": "green", "value": null })];
    for (c, x) in levels {
        v.push(json!({ "color": c, "value": x }));
    }
    Value::Array(v)
}

/// The dashboard's panels every exporter has: store fill, meta group size, stream rates and bytes,
/// consumers, HA assets, natsplan check, CPU and memory.
fn panels(e: &Exprs, want: f64, store_levels: &[(&str, f64)], planned: &[String], check_sel: &str) -> Vec<Value> {
    let sl = e.server_label();
    let stl = e.stream_label();
    vec![
        panel(
            1,
            "JetStream store fill (% of max_file_store)",
            "Orange: the fill above which some server could not take on the replicas re-placed on it after the worst \
             tolerated failure (plan::failover_room); red: natscli's 90 % critical. The alerting rules hold each \
             server to its own figure.",
            format!("100 * {}", e.store_fill("")),
            &format!("{{{{{sl}}}}}"),
            "percent",
            steps(store_levels),
        ),
        panel(
            2,
            "Meta group size",
            &format!("The plan has {want} JetStream servers: fewer is critical, more a warning."),
            e.meta_size(),
            "peers",
            "none",
            json!([
                { "color": "red", "value": null },
                { "color": "green", "value": want },
                { "color": "orange", "value": want + 1.0 }
            ]),
        ),
        panel(
            3,
            "Messages stored per second, per stream",
            &format!("last_seq growth. Planned: {}.", planned.join("; ")),
            e.stream_rate(""),
            &format!("{{{{{stl}}}}}"),
            "ops",
            steps(&[]),
        ),
        panel(
            4,
            "Stream bytes",
            "Bytes stored per stream (the largest replica's figure).",
            e.stream_bytes(),
            &format!("{{{{{stl}}}}}"),
            "bytes",
            steps(&[]),
        ),
        panel(
            5,
            "Consumer pending messages",
            "Messages not yet delivered, per durable consumer.",
            e.consumer("num_pending"),
            &format!("{{{{{stl}}}}} {{{{consumer_name}}}}"),
            "none",
            steps(&[]),
        ),
        panel(
            6,
            "HA assets per server",
            "RAFT groups per server; jsm.go audit CLUSTER_003 warns above 1,000.",
            e.ha_assets(),
            &format!("{{{{{sl}}}}}"),
            "none",
            steps(&[("orange", AUDIT_HA_ASSETS as f64)]),
        ),
        panel(
            7,
            "natsplan check: worst status",
            "0 ok, 1 warning, 2 critical, 3 unknown (natsplan check --watch).",
            format!("natsplan_check_status{{{check_sel}}}"),
            "status",
            "none",
            steps(&[("orange", 1.0), ("red", 2.0)]),
        ),
        panel(
            8,
            "natsplan check: stream replicas current",
            "Per planned stream, from its leader's view (the exporters have no per-replica lag): 0 ok, 2 critical.",
            format!("natsplan_check_item_status{{{check_sel}, check=\"replica_current\"}}"),
            "{{subject}}",
            "none",
            steps(&[("orange", 1.0), ("red", 2.0)]),
        ),
        panel(
            9,
            "CPU per server (%)",
            "nats-server's CPU use as it reports it.",
            e.cpu(),
            &format!("{{{{{sl}}}}}"),
            "percent",
            steps(&[]),
        ),
        panel(
            10,
            "Memory per server",
            "nats-server's resident memory.",
            e.mem(),
            &format!("{{{{{sl}}}}}"),
            "bytes",
            steps(&[]),
        ),
    ]
}

/// The dashboard for layout `pl`.
pub(super) fn dashboard(plan: &Plan, pl: &PlannedLayout, m: &Monitoring) -> Value {
    use sha2::{Digest, Sha256};
    let site = &plan.input;
    let e = Exprs { m, n: Names::new(m) };
    let cluster = &site.nats.cluster_name;
    let check_sel = format!("cluster={}, layout={}", q(cluster), q(&pl.id));
    let failover = crate::plan::failover_room(site, pl.hardware(), &pl.tolerates);
    // The lowest fill any server may reach and still take on the worst tolerated failure's replicas.
    let room_pct = pl
        .servers
        .iter()
        .zip(&failover)
        .filter(|(s, _)| s.store_bytes > 0)
        .map(|(s, (extra, _))| 100.0 * (s.store_bytes as f64 - extra).max(0.0) / s.store_bytes as f64)
        .fold(f64::INFINITY, f64::min);
    let mut store_levels = Vec::new();
    if room_pct.is_finite() && room_pct < STORE_CRITICAL_PCT {
        store_levels.push(("orange", (room_pct * 10.0).floor() / 10.0));
    }
    store_levels.push(("red", STORE_CRITICAL_PCT));
    let want = pl.servers.len() as f64;
    let rates = crate::plan::stream_rates(site, pl);
    let planned: Vec<String> = rates
        .iter()
        .map(|(s, r)| match r.ceiling_per_s {
            Some(c) => format!("{s} {} planned, {c:.0} predicted ceiling", r.ops_per_s),
            None => format!("{s} {} planned", r.ops_per_s),
        })
        .collect();
    let mut panels = panels(&e, want, &store_levels, &planned, &check_sel);
    if m.exporter == Exporter::Surveyor {
        panels.push(panel(
            11,
            "Meta group peers current",
            "From the meta leader's view: 1 current, 0 behind.",
            "min by (peer) (nats_core_jetstream_cluster_raft_group_replica_peer_current)".into(),
            "{{peer}}",
            "none",
            json!([{ "color": "red", "value": null }, { "color": "green", "value": 1 }]),
        ));
    } else {
        panels.push(panel(
            11,
            "natsplan check: meta group",
            "The exporter does not export the meta peers' currency: natsplan check's meta item (0 ok, 2 critical).",
            format!("natsplan_check_item_status{{{check_sel}, check=\"meta\"}}"),
            "meta",
            "none",
            steps(&[("orange", 1.0), ("red", 2.0)]),
        ));
    }
    let title = format!("natsplan {cluster} layout {} ({})", pl.id, m.exporter.as_str());
    let h = Sha256::digest(title.as_bytes());
    let uid: String = format!(
        "natsplan-{}",
        h.iter().take(8).map(|b| format!("{b:02x}")).collect::<String>()
    );
    json!({
        "__inputs": [{
            "name": DATASOURCE_INPUT,
            "label": "Prometheus",
            "description": format!("The Prometheus that scrapes {} and natsplan check --watch", m.exporter.as_str()),
            "type": "datasource",
            "pluginId": "prometheus",
            "pluginName": "Prometheus"
        }],
        "__requires": [
            { "type": "grafana", "id": "grafana", "name": "Grafana", "version": "10.4.0" },
            { "type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0" },
            { "type": "panel", "id": "timeseries", "name": "Time series", "version": "" }
        ],
        "uid": uid,
        "title": title,
        "tags": ["natsplan", "nats", m.exporter.as_str()],
        "schemaVersion": GRAFANA_SCHEMA_VERSION,
        "version": 1,
        "editable": true,
        "refresh": "30s",
        "time": { "from": "now-6h", "to": "now" },
        "timezone": "utc",
        "annotations": { "list": [] },
        "templating": { "list": [] },
        "panels": panels
    })
}
