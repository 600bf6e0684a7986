//! Drift: how the live cluster differs from the planned layout. Servers, their tags, `unique_tag`, the
//! sync mode and `max_file_store` come from `/varz`; streams (their replicas, placement and limits) from
//! `/jsz`, compared with exactly the stream definitions `emit` writes for the layout. Planned streams
//! not created yet are noted, not counted as drift (a fresh cluster has none).
//!
//! What could not be looked at is never reported as matching: with no `/varz` answering, the drift is
//! `unknown` (not "none"); with `/varz` but no `/jsz` answering, the streams are "not checked" rather than
//! "not created yet"; with some monitors silent, "none" becomes `partial` (nothing found in what answered).

use crate::monitor::probe::ClusterFacts;
use crate::monitor::StreamPlacement;
use crate::plan::{Plan, PlannedLayout};
use crate::units::SyncMode;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One difference between plan and cluster.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DriftItem {
    /// servers | tags | unique_tag | sync | store_limit | volume | replicas | placement | stream_limit
    pub what: String,
    /// The server or stream it concerns.
    pub subject: String,
    pub planned: String,
    pub live: String,
}

/// The drift report.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Drift {
    pub layout: String,
    /// `found` (items below), `none` (everything checked, nothing differs), `partial` (nothing differs in
    /// what could be read, but some monitors did not answer or the streams could not be read) or `unknown`
    /// (no monitoring endpoint answered: nothing could be compared).
    pub status: DriftStatus,
    pub items: Vec<DriftItem>,
    /// Things checked that are not drift (streams not created yet, servers whose `/varz` did not answer).
    pub notes: Vec<String>,
}

/// How far the drift check got; see `Drift::status`.
#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DriftStatus {
    Found,
    None,
    Partial,
    #[default]
    Unknown,
}

impl Drift {
    /// One line for the reports: "none" only when everything was compared.
    pub fn summary(&self) -> String {
        match self.status {
            DriftStatus::Found => format!("drift against layout {}: {} item(s)", self.layout, self.items.len()),
            DriftStatus::None => format!("drift against layout {}: none", self.layout),
            DriftStatus::Partial => format!(
                "drift against layout {}: none found in what could be read (not everything answered; see the notes)",
                self.layout
            ),
            DriftStatus::Unknown => format!(
                "drift against layout {}: unknown, could not check (no monitoring endpoint answered; give \
                 --monitor URLS, or --lab DIR for a lab)",
                self.layout
            ),
        }
    }
}

/// A live stream's configuration from `/jsz?config=true`.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveStream {
    pub placement: StreamPlacement,
    pub config: Value,
}

/// Stream configs from a `/jsz?accounts=true&streams=true&config=true` answer, by name.
pub fn stream_configs(jsz: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for st in crate::monitor::jsz::streams(jsz) {
        if let (Some(n), Some(c)) = (st.name, st.config) {
            out.insert(n, c);
        }
    }
    out
}

fn item(what: &str, subject: &str, planned: impl Into<String>, live: impl Into<String>) -> DriftItem {
    DriftItem {
        what: what.into(),
        subject: subject.into(),
        planned: planned.into(),
        live: live.into(),
    }
}

fn set_str(v: &BTreeSet<String>) -> String {
    if v.is_empty() {
        "(none)".into()
    } else {
        v.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// The live servers by name.
type LiveServers<'f> = BTreeMap<&'f str, &'f crate::monitor::probe::ServerFacts>;

/// Compare a planned layout with the live cluster. `emitted` are the stream definitions emit writes
/// (name → JetStream config), `streams` the live ones (None: no `/jsz` answered, so they are unknown).
pub fn check(
    plan: &Plan,
    layout: &PlannedLayout,
    emitted: &BTreeMap<String, Value>,
    facts: &ClusterFacts,
    streams: Option<&[LiveStream]>,
) -> Drift {
    let mut items = Vec::new();
    let mut notes = Vec::new();
    if facts.servers.is_empty() {
        let silent: Vec<&str> = facts.unreachable_monitors.iter().map(|(m, _)| m.as_str()).collect();
        notes.push(if silent.is_empty() {
            "no monitoring URL to read /varz and /jsz from: servers, tags, sync, placements and stream limits \
             were not compared"
                .to_string()
        } else {
            format!(
                "no monitoring endpoint answered ({}): servers, tags, sync, placements and stream limits were not \
                 compared",
                silent.join(", ")
            )
        });
        return Drift {
            layout: layout.id.clone(),
            status: DriftStatus::Unknown,
            items,
            notes,
        };
    }
    let live: LiveServers = facts.servers.iter().map(|s| (s.name.as_str(), s)).collect();
    server_set(layout, facts, &live, &mut items, &mut notes);
    for s in &layout.servers {
        if let Some(l) = live.get(s.name.as_str()) {
            server_config(plan, layout, s, l, &mut items);
        }
    }
    volumes(layout, &live, &mut items, &mut notes);
    match streams {
        Some(streams) => {
            let by_name: BTreeMap<&str, &LiveStream> = streams.iter().map(|s| (s.placement.name.as_str(), s)).collect();
            let mut absent = Vec::new();
            for (name, cfg) in emitted {
                match by_name.get(name.as_str()) {
                    Some(s) => stream(layout, &live, name, cfg, s, &mut items),
                    None => absent.push(name.clone()),
                }
            }
            if !absent.is_empty() {
                notes.push(format!(
                    "planned streams not created yet (not drift): {}",
                    absent.join(", ")
                ));
            }
        }
        None if !emitted.is_empty() => notes.push(format!(
            "streams not checked: no server's /jsz answered, so whether {} exist, and their placement and limits, \
             is unknown",
            emitted.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
        None => {}
    }
    let complete = streams.is_some() && facts.unreachable_monitors.is_empty();
    let status = if !items.is_empty() {
        DriftStatus::Found
    } else if complete {
        DriftStatus::None
    } else {
        DriftStatus::Partial
    };
    Drift {
        layout: layout.id.clone(),
        status,
        items,
        notes,
    }
}

/// Each server's store against its planned volume, where the volume under its store dir can be seen (a
/// server on this host whose store dir is a mount point, as `emit` asks): a filesystem smaller than the
/// planned `max_file_store` cannot hold what the plan puts there (drift: `volume`); one that differs from
/// the planned volume by more than a tenth is noted, not drift. A store on a filesystem shared with the
/// rest of the host (a lab's folders) is not compared, and the notes say so.
fn volumes(layout: &PlannedLayout, live: &LiveServers, items: &mut Vec<DriftItem>, notes: &mut Vec<String>) {
    let mut other = Vec::new();
    let mut shared = Vec::new();
    for s in &layout.servers {
        let Some(l) = live.get(s.name.as_str()) else { continue };
        let Some(fs) = l.store_fs_bytes else {
            if l.store_fs.is_some() {
                shared.push(s.name.clone());
            }
            continue;
        };
        let planned = s.volume.clone().unwrap_or_else(|| "no volume".into());
        let here = format!(
            "a filesystem of {} under its store dir",
            crate::units::fmt_bytes(fs as f64)
        );
        if fs < s.store_bytes {
            items.push(item(
                "volume",
                &s.name,
                format!(
                    "{planned} (max_file_store {})",
                    crate::units::fmt_bytes(s.store_bytes as f64)
                ),
                here,
            ));
        } else if (fs as f64 - s.lun_bytes as f64).abs() > 0.1 * s.lun_bytes as f64 {
            other.push(format!("{} ({here}; planned: {planned})", s.name));
        }
    }
    if !other.is_empty() {
        notes.push(format!(
            "stores not on their planned volumes, large enough for max_file_store (not drift): {}",
            other.join("; ")
        ));
    }
    if !shared.is_empty() {
        notes.push(format!(
            "stores in a folder of a filesystem shared with the host, not a volume of their own, so not compared \
             with their planned volumes: {}",
            shared.join(", ")
        ));
    }
}

/// Planned servers missing from the cluster (a note when some monitors did not answer) and live servers
/// the plan does not have.
fn server_set(
    layout: &PlannedLayout,
    facts: &ClusterFacts,
    live: &LiveServers,
    items: &mut Vec<DriftItem>,
    notes: &mut Vec<String>,
) {
    let planned_names: BTreeSet<String> = layout.servers.iter().map(|s| s.name.clone()).collect();
    let live_names: BTreeSet<String> = live.keys().map(|s| s.to_string()).collect();
    let missing: BTreeSet<String> = planned_names.difference(&live_names).cloned().collect();
    let extra: BTreeSet<String> = live_names.difference(&planned_names).cloned().collect();
    if !missing.is_empty() {
        if facts.unreachable_monitors.is_empty() {
            items.push(item("servers", "cluster", set_str(&missing), "not found"));
        } else {
            notes.push(format!(
                "planned servers {} not seen: their monitoring did not answer or they are absent",
                set_str(&missing)
            ));
        }
    }
    if !extra.is_empty() {
        items.push(item("servers", "cluster", "not planned", set_str(&extra)));
    }
}

/// One server's tags, `unique_tag`, sync mode and store limit against the plan.
fn server_config(
    plan: &Plan,
    layout: &PlannedLayout,
    s: &crate::plan::PlannedServer,
    l: &crate::monitor::probe::ServerFacts,
    items: &mut Vec<DriftItem>,
) {
    let want: BTreeSet<String> = s.tags.iter().map(|t| t.to_lowercase()).collect();
    let got: BTreeSet<String> = l.tags.iter().map(|t| t.to_lowercase()).collect();
    if want != got {
        items.push(item("tags", &s.name, set_str(&want), set_str(&got)));
    }
    let want_ut = layout.unique_tag.clone().unwrap_or_default().to_lowercase();
    let got_ut = l.unique_tag.clone().unwrap_or_default().to_lowercase();
    if want_ut.trim_end_matches(':') != got_ut.trim_end_matches(':') {
        items.push(item(
            "unique_tag",
            &s.name,
            if want_ut.is_empty() { "(none)".into() } else { want_ut },
            if got_ut.is_empty() { "(none)".into() } else { got_ut },
        ));
    }
    let (want_sync, live_sync) = match plan.input.nats.sync {
        SyncMode::Always => ("always".to_string(), l.sync_always),
        SyncMode::Interval(sec) => (format!("{sec}s"), !l.sync_always),
    };
    let interval_ok = match plan.input.nats.sync {
        SyncMode::Interval(sec) => l.sync_interval_s.is_none_or(|i| (i - sec as f64).abs() < 0.5),
        SyncMode::Always => true,
    };
    if !live_sync || !interval_ok {
        let got = if l.sync_always {
            "always".to_string()
        } else {
            format!("{}s", l.sync_interval_s.unwrap_or(120.0))
        };
        items.push(item("sync", &s.name, want_sync, got));
    }
    if let Some(max) = l.max_storage_bytes {
        if max != s.store_bytes {
            items.push(item("store_limit", &s.name, s.store_bytes.to_string(), max.to_string()));
        }
    }
}

/// One planned stream against its live configuration: replicas, limits, and placement (inside the
/// pinned set, on distinct `unique_tag` values).
fn stream(
    layout: &PlannedLayout,
    live: &LiveServers,
    name: &str,
    cfg: &Value,
    s: &LiveStream,
    items: &mut Vec<DriftItem>,
) {
    let tag_of = |server: &str, key: &str| -> Option<String> {
        live.get(server)?
            .tags
            .iter()
            .find(|t| t.to_lowercase().starts_with(key))
            .map(|t| t.to_lowercase())
    };
    let want_r = cfg.get("num_replicas").and_then(Value::as_u64).unwrap_or(1);
    let got_r = s
        .config
        .get("num_replicas")
        .and_then(Value::as_u64)
        .unwrap_or(s.placement.replicas);
    if want_r != got_r {
        items.push(item("replicas", name, want_r.to_string(), got_r.to_string()));
    }
    for key in ["max_bytes", "max_age", "max_msgs_per_subject", "storage"] {
        let (w, g) = (cfg.get(key), s.config.get(key));
        if let (Some(w), Some(g)) = (w, g) {
            if w != g {
                items.push(item(
                    "stream_limit",
                    &format!("{name}.{key}"),
                    w.to_string(),
                    g.to_string(),
                ));
            }
        }
    }
    // Placement: inside the pinned set, and on distinct unique_tag values.
    let peers: BTreeSet<String> = s.placement.peers.iter().cloned().collect();
    if let Some(tag) = cfg.pointer("/placement/tags/0").and_then(Value::as_str) {
        let set_servers: BTreeSet<String> = layout
            .servers
            .iter()
            .filter(|sv| sv.tags.iter().any(|t| t.eq_ignore_ascii_case(tag)))
            .map(|sv| sv.name.clone())
            .collect();
        if !peers.is_subset(&set_servers) {
            items.push(item("placement", name, set_str(&set_servers), set_str(&peers)));
        }
    }
    if let Some(ut) = &layout.unique_tag {
        let key = ut.to_lowercase();
        let vals: Vec<Option<String>> = peers.iter().map(|p| tag_of(p, &key)).collect();
        let distinct: BTreeSet<&Option<String>> = vals.iter().collect();
        if distinct.len() != vals.len() {
            items.push(item(
                "placement",
                name,
                format!("replicas on distinct '{ut}' values"),
                set_str(&peers),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::monitor::probe::{summarise, ServerFacts};

    fn plan() -> Plan {
        let cat = crate::catalog::Catalog::builtin();
        let text = include_str!("../../examples/three-racks-raid1.yaml");
        let site = crate::site::parse_str(text, "three-racks-raid1.yaml", &cat).unwrap();
        crate::plan::build(&site, &cat)
    }

    fn live_of(l: &PlannedLayout) -> Vec<ServerFacts> {
        l.servers
            .iter()
            .map(|s| ServerFacts {
                name: s.name.clone(),
                monitor_url: "http://127.0.0.1:1".into(),
                version: "2.15.1".into(),
                tags: s.tags.clone(),
                cluster: None,
                cores: None,
                jetstream: true,
                max_storage_bytes: Some(s.store_bytes),
                max_memory_bytes: None,
                store_dir: None,
                sync_always: false,
                sync_interval_s: Some(120.0),
                unique_tag: l.unique_tag.clone(),
                store_fs: None,
                store_fs_bytes: None,
            })
            .collect()
    }

    fn emitted(p: &Plan, id: &str) -> BTreeMap<String, Value> {
        crate::emit::render(p, id, &crate::emit::EmitOptions::default())
            .unwrap()
            .into_iter()
            .filter(|(f, _)| f.extension().is_some_and(|e| e == "json"))
            .map(|(_, t)| serde_json::from_str::<Value>(&t).unwrap())
            .map(|v| (v["name"].as_str().unwrap().to_string(), v))
            .collect()
    }

    fn streams_as_planned(l: &PlannedLayout, em: &BTreeMap<String, Value>) -> Vec<LiveStream> {
        let peers: Vec<String> = l.servers.iter().map(|s| s.name.clone()).collect();
        em.iter()
            .map(|(n, cfg)| {
                let r = cfg["num_replicas"].as_u64().unwrap();
                LiveStream {
                    placement: StreamPlacement {
                        account: "$G".into(),
                        name: n.clone(),
                        leader: Some(peers[0].clone()),
                        peers: peers.iter().take(r as usize).cloned().collect(),
                        replicas: r,
                    },
                    config: cfg.clone(),
                }
            })
            .collect()
    }

    #[test]
    fn a_cluster_as_planned_has_no_drift_and_each_difference_is_named() {
        let p = plan();
        let l = &p.layouts[0];
        assert_eq!(l.unique_tag.as_deref(), Some("rack:"), "the example spreads over racks");
        let em = emitted(&p, &l.id);
        let live = streams_as_planned(l, &em);
        let facts = summarise(live_of(l), vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&live));
        assert!(d.items.is_empty(), "{:#?}", d.items);
        assert!(d.notes.is_empty(), "{:?}", d.notes);
        assert_eq!(d.status, DriftStatus::None);

        let mut servers = live_of(l);
        servers[0].tags = vec!["rack:z".into()];
        servers[1].unique_tag = None;
        servers[2].sync_always = true;
        servers[2].max_storage_bytes = Some(1);
        let facts = summarise(servers, vec![], Some(3), None);
        let mut live = streams_as_planned(l, &em);
        live[0].config["max_bytes"] = serde_json::json!(5);
        live[1].config["num_replicas"] = serde_json::json!(1);
        let d = check(&p, l, &em, &facts, Some(&live[..live.len() - 1]));
        assert_eq!(d.status, DriftStatus::Found);
        let what: Vec<(&str, &str)> = d.items.iter().map(|i| (i.what.as_str(), i.subject.as_str())).collect();
        let s0 = l.servers[0].name.as_str();
        let s1 = l.servers[1].name.as_str();
        let s2 = l.servers[2].name.as_str();
        for want in [
            ("tags", s0),
            ("unique_tag", s1),
            ("sync", s2),
            ("store_limit", s2),
            ("replicas", live[1].placement.name.as_str()),
        ] {
            assert!(what.contains(&want), "{want:?} missing from {what:?}");
        }
        assert!(
            what.iter()
                .any(|(w, s)| *w == "stream_limit" && s.ends_with(".max_bytes")),
            "{what:?}"
        );
        // n0 now carries rack:z, but the others keep distinct racks: replicas still on distinct values.
        assert!(!what.iter().any(|(w, _)| *w == "placement"), "{what:?}");
        assert!(d.notes[0].contains("not created yet"), "{:?}", d.notes);

        // Two replicas in one rack break unique_tag spreading.
        let mut servers = live_of(l);
        servers[1].tags = servers[0].tags.clone();
        let facts = summarise(servers, vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&streams_as_planned(l, &em)));
        assert!(d.items.iter().any(|i| i.what == "placement"), "{:#?}", d.items);
        // Missing and extra servers.
        let mut servers = live_of(l);
        servers[0].name = "stranger".into();
        let facts = summarise(servers, vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&[]));
        let servers_items: Vec<_> = d.items.iter().filter(|i| i.what == "servers").collect();
        assert_eq!(servers_items.len(), 2, "{:#?}", d.items);
    }

    #[test]
    fn what_could_not_be_read_is_unknown_never_none_nor_not_created() {
        let p = plan();
        let l = &p.layouts[0];
        let em = emitted(&p, &l.id);
        // No monitor answered: nothing compared, and the report must not say "none".
        let silent = vec![("http://127.0.0.1:8222".to_string(), "connection refused".to_string())];
        let facts = summarise(vec![], silent.clone(), None, None);
        let d = check(&p, l, &em, &facts, Some(&[]));
        assert_eq!(d.status, DriftStatus::Unknown);
        assert!(d.items.is_empty());
        assert!(d.summary().contains("unknown, could not check"), "{}", d.summary());
        assert!(!d.summary().contains(": none"), "{}", d.summary());
        assert!(!d.notes.iter().any(|n| n.contains("not created yet")), "{:?}", d.notes);
        assert!(d.notes[0].contains("127.0.0.1:8222"), "{:?}", d.notes);
        // /varz answered but no /jsz: the streams are "not checked", and the result is partial.
        let facts = summarise(live_of(l), vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, None);
        assert_eq!(d.status, DriftStatus::Partial);
        assert!(
            d.notes.iter().any(|n| n.starts_with("streams not checked")),
            "{:?}",
            d.notes
        );
        assert!(!d.notes.iter().any(|n| n.contains("not created yet")), "{:?}", d.notes);
        // One monitor silent, the rest as planned: partial, not none.
        let mut servers = live_of(l);
        servers.pop();
        let facts = summarise(servers, silent, Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&streams_as_planned(l, &em)));
        assert_eq!(d.status, DriftStatus::Partial, "{:#?}", d);
    }

    #[test]
    fn a_store_on_a_filesystem_smaller_than_its_planned_volume_is_drift() {
        let p = plan();
        let l = &p.layouts[0];
        let em = emitted(&p, &l.id);
        let live = streams_as_planned(l, &em);
        let mut servers = live_of(l);
        // s0: a filesystem far too small; s1: as planned (the LUN's size); s2: larger (a lab's folder).
        servers[0].store_fs_bytes = Some(1 << 30);
        servers[1].store_fs_bytes = Some(l.servers[1].lun_bytes);
        servers[2].store_fs_bytes = Some(l.servers[2].lun_bytes * 4);
        let mut shared = servers.clone();
        let facts = summarise(servers, vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&live));
        let vol: Vec<&DriftItem> = d.items.iter().filter(|i| i.what == "volume").collect();
        assert_eq!(vol.len(), 1, "{:#?}", d.items);
        assert_eq!(vol[0].subject, l.servers[0].name);
        let planned = l.servers[0].volume.as_deref().expect("a planned volume");
        assert!(vol[0].planned.starts_with(planned), "{}", vol[0].planned);
        assert!(planned.contains("of array"), "{planned}");
        assert!(vol[0].live.contains("1.00 GiB"), "{}", vol[0].live);
        let note = d
            .notes
            .iter()
            .find(|n| n.contains("not on their planned volumes"))
            .expect("a note");
        assert!(
            note.contains(&l.servers[2].name) && !note.contains(&format!("{} (", l.servers[1].name)),
            "{note}"
        );
        // A store that is a folder on the host's filesystem (a lab's): not compared, and said so; no drift.
        for f in &mut shared {
            f.store_fs = Some("ext4".into());
            f.store_fs_bytes = None;
        }
        let facts = summarise(shared, vec![], Some(3), None);
        let d = check(&p, l, &em, &facts, Some(&live));
        assert!(d.items.is_empty(), "{:#?}", d.items);
        assert_eq!(d.status, DriftStatus::None);
        assert!(
            d.notes.iter().any(|n| n.contains("not a volume of their own")),
            "{:?}",
            d.notes
        );
    }

    #[test]
    fn stream_configs_are_read_by_name() {
        let j = serde_json::json!({"account_details": [{"name": "$G", "stream_detail": [
            {"name": "orders", "config": {"num_replicas": 3, "max_bytes": 10}}]}]});
        let c = stream_configs(&j);
        assert_eq!(c["orders"]["max_bytes"], 10);
    }
}
