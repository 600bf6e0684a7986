//! A cluster's streams from files the nats CLI (or the server) wrote, offline: `--from-cluster FILE,...`.
//! Each file holds one or more JSON values, concatenated or in an array, of these kinds:
//!
//! - a StreamInfo, as `nats stream info NAME --json` prints it (nats-server `StreamInfo`, server/stream.go:
//!   `config`, `state`, `cluster`, `ts`);
//! - stream names, as `nats stream ls --json` prints them (natscli prints names only, with or without
//!   `--names`: cli/stream_command.go `lsAction`); a name alone carries no workload, so it is only checked
//!   against the infos given;
//! - a JSZ answer: `nats server request jetstream --all` prints one `{"server": ..., "data": JSInfo}` per
//!   line (`$SYS.REQ.SERVER.PING.JSZ`, server/events.go `ServerAPIJszResponse`), and the monitor's
//!   `/jsz?accounts=true&streams=true&config=true` is the bare JSInfo. (`nats server report jetstream`
//!   has no `--json`: natscli removed the flag from that report in 2023, commit e6daae7; its data is this
//!   same JSZ answer.) The servers it names, their tags and settings are compared with the site.
//!
//! The rate of a stream comes from two snapshots of it taken at different times (`ts` of a StreamInfo,
//! `now` of a JSZ answer) when the files hold them: the growth of `last_seq` over the time between. With
//! one snapshot it is the average over what the stream holds: `(last_seq − first_seq) ÷ (last_ts −
//! first_ts)`, the publishes between its oldest and newest stored message.

use super::cluster::{IDLE_RATE_PER_S, RECORD_OVERHEAD_BYTES};
use super::{stream_name, Imported};
use crate::site::{Site, StreamSpec};
use crate::text::plural_s;
use anyhow::{anyhow, bail, Result};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One stream as one file saw it.
#[derive(Debug, Clone)]
struct Snap {
    account: String,
    name: String,
    /// When the snapshot was taken (Unix seconds), when the file says.
    at_s: Option<f64>,
    first_seq: u64,
    last_seq: u64,
    first_ts_s: Option<f64>,
    last_ts_s: Option<f64>,
    messages: u64,
    bytes: u64,
    consumers: u32,
    config: Value,
}

/// A server named by a JSZ answer.
#[derive(Debug, Clone, Default)]
struct ServerFacts {
    name: String,
    cluster: Option<String>,
    version: Option<String>,
    tags: Vec<String>,
    sync: Option<String>,
    unique_tag: Option<String>,
}

#[derive(Debug, Default)]
struct Read {
    snaps: Vec<Snap>,
    names: BTreeSet<String>,
    servers: Vec<ServerFacts>,
}

/// Unix seconds of an RFC 3339 time as Go writes it (UTC, `Z`); None for Go's zero time or another form.
fn unix_s(v: &Value) -> Option<f64> {
    let t = humantime::parse_rfc3339_weak(v.as_str()?).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    (d.as_secs() > 0).then_some(d.as_secs_f64())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

fn snap(account: &str, name: &str, config: &Value, state: &Value, at_s: Option<f64>) -> Snap {
    Snap {
        account: account.to_string(),
        name: name.to_string(),
        at_s,
        first_seq: u(&state["first_seq"]),
        last_seq: u(&state["last_seq"]),
        first_ts_s: unix_s(&state["first_ts"]),
        last_ts_s: unix_s(&state["last_ts"]),
        messages: u(&state["messages"]),
        bytes: u(&state["bytes"]),
        consumers: u(&state["consumer_count"]).min(u32::MAX as u64) as u32,
        config: config.clone(),
    }
}

/// A JSInfo (`data` of a JSZ answer, or `/jsz`): its streams, with the answer's server.
fn jsinfo(data: &Value, server: Option<&Value>, out: &mut Read) {
    let at = unix_s(&data["now"]).or_else(|| server.and_then(|s| unix_s(&s["time"])));
    if let Some(s) = server {
        let cfg = &data["config"];
        out.servers.push(ServerFacts {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            cluster: s["cluster"].as_str().map(str::to_string),
            version: s["ver"].as_str().map(str::to_string),
            tags: s["tags"]
                .as_array()
                .map(|t| t.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                .unwrap_or_default(),
            sync: if cfg["sync_always"].as_bool() == Some(true) {
                Some("always".into())
            } else {
                cfg["sync_interval"]
                    .as_i64()
                    .filter(|n| *n > 0)
                    .map(|n| match n % 1_000_000_000 {
                        // As nats-server's configuration writes it (`2m`, `10s`), to compare with the site's.
                        0 => crate::units::SyncMode::Interval((n / 1_000_000_000) as u64).config_value(),
                        _ => crate::units::fmt_secs(n as f64 / 1e9),
                    })
            },
            unique_tag: cfg["unique_tag"].as_str().filter(|t| !t.is_empty()).map(str::to_string),
        });
    }
    for acc in data["account_details"].as_array().into_iter().flatten() {
        let account = acc["name"].as_str().unwrap_or("$G");
        for st in acc["stream_detail"].as_array().into_iter().flatten() {
            let name = st["name"].as_str().unwrap_or_default();
            out.snaps.push(snap(account, name, &st["config"], &st["state"], at));
        }
    }
}

/// One JSON value of a file, whatever kind it is.
fn value(v: &Value, file: &str, out: &mut Read) -> Result<()> {
    match v {
        Value::Array(items) => {
            for x in items {
                value(x, file, out)?;
            }
        }
        Value::String(name) => {
            out.names.insert(name.clone());
        }
        Value::Object(o) if o.contains_key("config") && o.contains_key("state") => {
            let name = v["config"]["name"].as_str().unwrap_or_default();
            out.snaps
                .push(snap("", name, &v["config"], &v["state"], unix_s(&v["ts"])));
        }
        Value::Object(o) if o.contains_key("server") && (o.contains_key("data") || o.contains_key("error")) => {
            if let Some(e) = o.get("error").filter(|e| !e.is_null()) {
                bail!("{file}: a server answered with an error: {e}");
            }
            jsinfo(&v["data"], Some(&v["server"]), out);
        }
        Value::Object(o) if o.contains_key("server_id") || o.contains_key("account_details") => {
            jsinfo(v, None, out);
        }
        _ => bail!(
            "{file}: a JSON value that is neither a StreamInfo (`nats stream info NAME --json`), stream names \
             (`nats stream ls --json`) nor a JSZ answer (`nats server request jetstream --all`, or the monitor's \
             /jsz?accounts=true&streams=true&config=true)"
        ),
    }
    Ok(())
}

/// Read one file: one JSON value, several concatenated (JSON lines), or an array.
fn read_file(text: &str, file: &str, out: &mut Read) -> Result<()> {
    let mut any = false;
    for v in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let v = v.map_err(|e| {
            let p = crate::site::stream_config::syntax_error(&e);
            anyhow!(
                "{file}:{}:{}: {}",
                p.line.unwrap_or(0),
                p.column.unwrap_or(0),
                p.message
            )
        })?;
        value(&v, file, out)?;
        any = true;
    }
    if !any {
        bail!("{file}: empty; write `nats stream info NAME --json` (or a JSZ answer) into it");
    }
    Ok(())
}

/// A stream's rate and how it was found.
fn rate(snaps: &[&Snap]) -> (f64, &'static str) {
    let mut timed: Vec<&&Snap> = snaps.iter().filter(|s| s.at_s.is_some()).collect();
    timed.sort_by(|a, b| a.at_s.partial_cmp(&b.at_s).expect("finite times"));
    if let (Some(a), Some(b)) = (timed.first(), timed.last()) {
        let dt = b.at_s.unwrap_or(0.0) - a.at_s.unwrap_or(0.0);
        if dt >= 1.0 && b.last_seq > a.last_seq {
            return ((b.last_seq - a.last_seq) as f64 / dt, "snapshots");
        }
    }
    let s = snaps.iter().max_by_key(|s| s.last_seq).expect("one snapshot at least");
    match (s.first_ts_s, s.last_ts_s) {
        (Some(f), Some(l)) if l - f >= 1.0 && s.last_seq > s.first_seq => {
            ((s.last_seq - s.first_seq) as f64 / (l - f), "span")
        }
        _ => (IDLE_RATE_PER_S, "idle"),
    }
}

/// The streams of the files (and notes comparing the servers they name with the site).
pub fn load(paths: &[&Path], site: &Site) -> Result<Imported> {
    let mut read = Read::default();
    for p in paths {
        let label = p.display().to_string();
        let text = crate::input::read_text(p, "--from-cluster").map_err(|e| anyhow!("{e}"))?;
        read_file(&text, &label, &mut read)?;
    }
    from_read(read, site)
}

/// The streams of file texts already read, (label, text) each (tests and the saved plan).
pub fn from_texts(files: &[(String, String)], site: &Site) -> Result<Imported> {
    let mut read = Read::default();
    for (label, text) in files {
        read_file(text, label, &mut read)?;
    }
    from_read(read, site)
}

fn from_read(read: Read, site: &Site) -> Result<Imported> {
    let mut by: BTreeMap<(String, String), Vec<&Snap>> = BTreeMap::new();
    for s in &read.snaps {
        if !s.name.is_empty() {
            by.entry((s.account.clone(), s.name.clone())).or_default().push(s);
        }
    }
    if by.is_empty() {
        if read.names.is_empty() {
            bail!(
                "--from-cluster: the files hold no streams; write each stream's `nats stream info NAME --json`, or \
                 `nats server request jetstream --all` (a system-account user), into them"
            );
        }
        bail!(
            "--from-cluster: the files list stream names only ({}); names carry no limits or traffic: add each \
             stream's `nats stream info NAME --json`",
            read.names.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, name) in by.keys() {
        *count.entry(name.as_str()).or_default() += 1;
    }
    let mut streams = Vec::new();
    let (mut span, mut idle, mut unlimited) = (Vec::new(), Vec::new(), Vec::new());
    let mut measured = 0;
    for ((account, name), snaps) in &by {
        let s = *snaps.iter().max_by_key(|s| s.last_seq).expect("non-empty");
        let (r, how) = rate(snaps);
        match how {
            "snapshots" => measured += 1,
            "span" => span.push(name.clone()),
            _ => idle.push(name.clone()),
        }
        let cfg = &s.config;
        let mut subjects: Vec<String> = cfg["subjects"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
            .unwrap_or_default();
        if subjects.is_empty() {
            // nats-server's default for a stream created without subjects: its own name
            // (server/stream.go `checkStreamCfg`). Written out, so emit recreates it and the site's
            // rules across streams see it (emit's default for the site's streams is `<name>.>`).
            subjects.push(name.clone());
        }
        let subject_bytes = subjects.first().map(|x| x.len() as u64).unwrap_or(name.len() as u64);
        let payload = if s.messages > 0 {
            (s.bytes as f64 / s.messages as f64 - subject_bytes as f64 - RECORD_OVERHEAD_BYTES).max(1.0)
        } else {
            1.0
        };
        let max_age_s = cfg["max_age"].as_f64().unwrap_or(0.0) / 1e9;
        let retention_s = if max_age_s > 0.0 {
            max_age_s
        } else {
            unlimited.push(name.clone());
            (s.messages.max(1) as f64 / r).max(1.0)
        };
        let full = if count[name.as_str()] > 1 && !account.is_empty() {
            format!("{account}_{name}")
        } else {
            name.clone()
        };
        streams.push(StreamSpec {
            name: stream_name(&full),
            msgs_per_s: r,
            msg_size_bytes: payload.round() as u64,
            subject_bytes,
            retention_s,
            replicas: Some(cfg["num_replicas"].as_u64().unwrap_or(1).clamp(1, 5) as u8),
            consumers: s.consumers,
            max_bytes: cfg["max_bytes"].as_i64().filter(|b| *b > 0).map(|b| b as u64),
            subjects,
        });
    }
    let mut notes = vec![format!(
        "from cluster files: {} stream{} ({} with the rate measured between two snapshots; size from stored bytes \
         per message less subject and {RECORD_OVERHEAD_BYTES:.0} B record overhead; replicas pinned as configured)",
        streams.len(),
        plural_s(streams.len()),
        measured
    )];
    if !span.is_empty() {
        notes.push(format!(
            "one snapshot only, so the rate is the average between the oldest and newest stored message: {} (give \
             two snapshots taken apart, e.g. `nats stream info NAME --json` twice, for the current rate)",
            span.join(", ")
        ));
    }
    if !idle.is_empty() {
        notes.push(format!(
            "no publishes seen, rate set to {IDLE_RATE_PER_S}/s: {}",
            idle.join(", ")
        ));
    }
    if !unlimited.is_empty() {
        notes.push(format!(
            "no max_age, so retention is what they hold now at the rate found: {}",
            unlimited.join(", ")
        ));
    }
    let with_info: BTreeSet<&str> = by.keys().map(|(_, n)| n.as_str()).collect();
    let missing: Vec<&str> = read
        .names
        .iter()
        .map(String::as_str)
        .filter(|n| !with_info.contains(n))
        .collect();
    if !missing.is_empty() {
        notes.push(format!(
            "listed by `nats stream ls --json` but without an info, so not imported: {}",
            missing.join(", ")
        ));
    }
    notes.extend(cluster_notes(&read.servers, site));
    Ok(Imported { streams, notes })
}

/// What the JSZ answers say about the servers, beside what the site plans.
fn cluster_notes(servers: &[ServerFacts], site: &Site) -> Vec<String> {
    let mut by: BTreeMap<&str, &ServerFacts> = BTreeMap::new();
    for s in servers.iter().filter(|s| !s.name.is_empty()) {
        by.insert(s.name.as_str(), s);
    }
    if by.is_empty() {
        return Vec::new();
    }
    let mut notes = Vec::new();
    let versions: BTreeSet<&str> = by.values().filter_map(|s| s.version.as_deref()).collect();
    let clusters: BTreeSet<&str> = by.values().filter_map(|s| s.cluster.as_deref()).collect();
    notes.push(format!(
        "the cluster files name {} server{} ({}) in cluster {}, nats-server {}",
        by.len(),
        plural_s(by.len()),
        by.keys().copied().collect::<Vec<_>>().join(", "),
        if clusters.is_empty() {
            "-".to_string()
        } else {
            clusters.iter().copied().collect::<Vec<_>>().join(", ")
        },
        if versions.is_empty() {
            "?".to_string()
        } else {
            versions.iter().copied().collect::<Vec<_>>().join(", ")
        },
    ));
    let planned: BTreeSet<String> = site.servers.iter().map(|s| s.name.to_lowercase()).collect();
    let unknown: Vec<&str> = by
        .keys()
        .copied()
        .filter(|n| !planned.contains(&n.to_lowercase()))
        .collect();
    if !unknown.is_empty() {
        notes.push(format!(
            "servers in the cluster files that the site does not list: {} (the plan places replicas on the site's \
             servers only)",
            unknown.join(", ")
        ));
    }
    if let Some(c) = clusters
        .iter()
        .find(|c| !c.eq_ignore_ascii_case(&site.nats.cluster_name))
    {
        notes.push(format!(
            "the live cluster is named {c}, the site's nats.cluster_name is {}: emitted configs and stream placement \
             use the site's",
            site.nats.cluster_name
        ));
    }
    let planned_sync = site.nats.sync.config_value();
    let syncs: BTreeSet<&str> = by.values().filter_map(|s| s.sync.as_deref()).collect();
    if !syncs.is_empty() && !syncs.contains(planned_sync.as_str()) {
        notes.push(format!(
            "the live servers sync {}; the site plans sync_interval {planned_sync}",
            syncs.iter().copied().collect::<Vec<_>>().join(", ")
        ));
    }
    let uniques: BTreeSet<&str> = by.values().filter_map(|s| s.unique_tag.as_deref()).collect();
    let tagged = by.values().filter(|s| !s.tags.is_empty()).count();
    notes.push(format!(
        "live placement: unique_tag {}; {tagged} of {} servers have tags",
        if uniques.is_empty() {
            "none".to_string()
        } else {
            uniques.iter().copied().collect::<Vec<_>>().join(", ")
        },
        by.len()
    ));
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        let cat = crate::catalog::Catalog::builtin();
        let text = include_str!("../../examples/three-racks-raid1.yaml");
        crate::site::parse_str(text, "three-racks-raid1.yaml", &cat).unwrap()
    }

    fn info(ts: &str, first: u64, last: u64, first_ts: &str, last_ts: &str) -> String {
        format!(
            r#"{{"config": {{"name": "orders", "subjects": ["orders.>"], "num_replicas": 3, "max_age": 3600000000000,
              "max_bytes": -1}},
             "created": "2026-01-01T00:00:00Z",
             "state": {{"messages": {n}, "bytes": {b}, "first_seq": {first}, "first_ts": "{first_ts}",
                        "last_seq": {last}, "last_ts": "{last_ts}", "consumer_count": 2}},
             "ts": "{ts}"}}"#,
            n = last - first + 1,
            b = (last - first + 1) * 1038,
        )
    }

    #[test]
    fn two_stream_infos_give_the_rate_between_them() {
        let a = info(
            "2026-12-01T10:00:00Z",
            1,
            1000,
            "2026-12-01T09:00:00Z",
            "2026-12-01T10:00:00Z",
        );
        let b = info(
            "2026-12-01T10:00:10.5Z",
            1,
            2050,
            "2026-12-01T09:00:00Z",
            "2026-12-01T10:00:10Z",
        );
        let imp = from_texts(&[("a.json".into(), format!("{a}\n{b}"))], &site()).unwrap();
        let o = &imp.streams[0];
        assert_eq!(o.name, "orders");
        assert!((o.msgs_per_s - 100.0).abs() < 1e-9, "{}", o.msgs_per_s);
        assert_eq!(o.replicas, Some(3));
        assert_eq!(o.consumers, 2);
        assert_eq!(o.retention_s, 3600.0);
        assert_eq!(o.msg_size_bytes, 1038 - 8 - 30);
    }

    #[test]
    fn one_snapshot_gives_the_average_over_the_stored_span() {
        let a = info(
            "2026-12-01T10:00:00Z",
            1,
            3601,
            "2026-12-01T09:00:00Z",
            "2026-12-01T10:00:00Z",
        );
        let imp = from_texts(&[("a.json".into(), format!("[{a}]"))], &site()).unwrap();
        assert!((imp.streams[0].msgs_per_s - 1.0).abs() < 1e-9);
        assert!(imp.notes.join("\n").contains("one snapshot only"), "{:?}", imp.notes);
    }

    #[test]
    fn jsz_answers_give_streams_and_cluster_facts() {
        let line = |now: &str, last: u64| {
            serde_json::json!({"server": {"name": "n1", "cluster": "prod", "ver": "2.12.1", "tags": ["rack:a"]},
              "data": {"now": now, "config": {"sync_interval": 120_000_000_000u64, "unique_tag": "rack:"},
                "account_details": [{"name": "APP", "stream_detail": [{"name": "events",
                  "config": {"name": "events", "subjects": ["events.>"], "num_replicas": 3, "max_age": 0},
                  "state": {"messages": last, "bytes": last * 100, "first_seq": 1, "last_seq": last,
                            "consumer_count": 1}}]}]}})
            .to_string()
        };
        let text = format!(
            "{}\n{}\n",
            line("2026-12-01T10:00:00Z", 100),
            line("2026-12-01T10:00:20Z", 300)
        );
        let imp = from_texts(&[("jsz.json".into(), text)], &site()).unwrap();
        assert!((imp.streams[0].msgs_per_s - 10.0).abs() < 1e-9);
        let notes = imp.notes.join("\n");
        assert!(
            notes.contains("1 server (n1) in cluster prod, nats-server 2.12.1"),
            "{notes}"
        );
        assert!(
            notes.contains("servers in the cluster files that the site does not list: n1"),
            "{notes}"
        );
        assert!(notes.contains("no max_age"), "{notes}");
    }

    #[test]
    fn names_alone_and_other_json_are_refused_with_what_to_give() {
        let e = from_texts(&[("ls.json".into(), r#"["orders", "events"]"#.into())], &site()).unwrap_err();
        assert!(e.to_string().contains("names only (events, orders)"), "{e}");
        let e = from_texts(&[("x.json".into(), r#"{"hello": 1}"#.into())], &site()).unwrap_err();
        assert!(e.to_string().contains("neither a StreamInfo"), "{e}");
        let e = from_texts(&[("x.json".into(), "{\n \"a\": }".into())], &site()).unwrap_err();
        assert!(e.to_string().starts_with("x.json:2:"), "{e}");
    }
}
