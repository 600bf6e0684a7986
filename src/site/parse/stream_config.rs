//! A stream definition as the nats CLI writes and reads it: the StreamConfig JSON of `nats stream add
//! --config FILE` (or a `nats stream info --json` StreamInfo, whose `config` is used, as natscli's
//! `loadConfigFile` does), mapped to what natsplan's workload model knows — subjects, `max_age`,
//! `max_bytes`, `max_msgs`, `num_replicas` — and kept whole for `emit` to write back.
//!
//! The field names and values are nats-server's (`StreamConfig` in server/stream.go, the policy
//! spellings in server/store.go). What the model cannot carry is refused with the reason: memory storage
//! (not on the planned LUNs), mirrors and sources (their traffic is another stream's), placement tags
//! (natsplan chooses placement), `persist_mode: async` (acknowledged before it is written, which the loss
//! model does not cover). Problems are located (`line:col` in the file, field path), all at once: the file
//! is read through `input::Doc` (JSON is YAML's flow style), after a JSON syntax check.

use crate::input::{Doc, InputError};
use serde::Deserialize;
use serde_json::Value;

/// nats-server's most replicas for a stream (server/stream.go `StreamMaxReplicas`).
const MAX_REPLICAS: i64 = 5;

/// A stream definition read from a file, as the workload model needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamDef {
    pub name: String,
    /// As given; nats-server's default (the stream's name) when none are given.
    pub subjects: Vec<String>,
    /// `max_age` in seconds; None = 0 (unlimited).
    pub max_age_s: Option<f64>,
    /// `max_bytes`; None = -1 or 0 (unlimited).
    pub max_bytes: Option<u64>,
    /// `max_msgs`; None = unlimited.
    pub max_msgs: Option<u64>,
    /// `max_msg_size`; None = unlimited.
    pub max_msg_size: Option<u64>,
    /// `num_replicas` (0 means 1 to nats-server); None = not given.
    pub replicas: Option<u8>,
    /// `placement.cluster`, when given (it must be the site's cluster).
    pub cluster: Option<String>,
    /// The StreamConfig object as given (emit writes it back with the plan's placement).
    pub config: Value,
}

/// Every StreamConfig field nats-server knows (server/stream.go). Unmapped ones are kept as given.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Config {
    name: String,
    description: Option<Value>,
    subjects: Option<Vec<String>>,
    retention: Option<String>,
    max_consumers: Option<Value>,
    max_msgs: Option<i64>,
    max_bytes: Option<i64>,
    max_age: Option<i64>,
    max_msgs_per_subject: Option<Value>,
    max_msg_size: Option<i64>,
    discard: Option<String>,
    storage: Option<String>,
    num_replicas: Option<i64>,
    no_ack: Option<Value>,
    duplicate_window: Option<Value>,
    placement: Option<Placement>,
    mirror: Option<Value>,
    sources: Option<Value>,
    compression: Option<String>,
    first_seq: Option<Value>,
    subject_transform: Option<Value>,
    republish: Option<Value>,
    allow_direct: Option<Value>,
    mirror_direct: Option<Value>,
    discard_new_per_subject: Option<Value>,
    sealed: Option<Value>,
    deny_delete: Option<Value>,
    deny_purge: Option<Value>,
    allow_rollup_hdrs: Option<Value>,
    consumer_limits: Option<Value>,
    allow_msg_ttl: Option<Value>,
    subject_delete_marker_ttl: Option<Value>,
    allow_msg_counter: Option<Value>,
    allow_atomic: Option<Value>,
    allow_msg_schedules: Option<Value>,
    persist_mode: Option<String>,
    allow_batched: Option<Value>,
    metadata: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Placement {
    cluster: Option<String>,
    tags: Option<Vec<String>>,
    preferred: Option<Value>,
}

/// A StreamInfo (`nats stream info --json`): its `config` is the definition; the rest (`state`, `cluster`,
/// `ts`, and whatever later servers add) is not read.
#[derive(Debug, Deserialize)]
struct Info {
    config: Config,
    #[serde(flatten)]
    _rest: std::collections::BTreeMap<String, Value>,
}

/// The located problem of a JSON syntax error, from serde_json's line and column.
pub fn syntax_error(e: &serde_json::Error) -> InputError {
    let text = e.to_string();
    let what = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    InputError {
        path: String::new(),
        line: (e.line() > 0).then_some(e.line()),
        column: (e.column() > 0).then_some(e.column()),
        message: format!("not valid JSON: {what}"),
        fix: Some(
            "write the StreamConfig as `nats stream add --config` takes it (e.g. from `nats stream info NAME --json`)"
                .into(),
        ),
    }
}

/// Read one StreamConfig (or StreamInfo) file's text; `file` names it in problems. Every problem at once,
/// each with its line and column in the file.
pub fn parse(text: &str, file: &str) -> Result<StreamDef, crate::input::InputErrors> {
    let fail = |errors: Vec<InputError>| crate::input::InputErrors {
        file: file.to_string(),
        errors,
    };
    let raw: Value = serde_json::from_str(text).map_err(|e| fail(vec![syntax_error(&e)]))?;
    let Some(obj) = raw.as_object() else {
        return Err(fail(vec![InputError {
            path: String::new(),
            line: Some(1),
            column: Some(1),
            message: "expected a StreamConfig object ({\"name\": ..., \"subjects\": [...]}), got another JSON value"
                .into(),
            fix: Some("write one stream's configuration as `nats stream add --config FILE` takes it".into()),
        }]));
    };
    let doc = Doc::parse(text, file)?;
    let (prefix, config_json, cfg, mut errs) = if obj.contains_key("config") {
        let (v, e) = doc.read::<Info>();
        ("config.", raw["config"].clone(), v.map(|i| i.config), e)
    } else {
        let (v, e) = doc.read::<Config>();
        ("", raw.clone(), v, e)
    };
    let Some(cfg) = cfg else {
        return Err(doc.errors(errs));
    };
    let mut more = Vec::new();
    let def = map(&cfg, prefix, config_json, &doc, &mut more);
    errs = doc.merge(errs, more);
    if errs.is_empty() {
        Ok(def)
    } else {
        Err(doc.errors(errs))
    }
}

/// A limit where -1 and 0 both mean unlimited (nats-server's convention for max_msgs and max_bytes).
fn limit(v: Option<i64>) -> Option<u64> {
    v.filter(|x| *x > 0).map(|x| x as u64)
}

/// The policy fields: known spellings, and what the model cannot carry (memory storage, async persist,
/// mirrors, sources).
fn policies(cfg: &Config, prefix: &str, doc: &Doc, errs: &mut Vec<InputError>) {
    let mut err = |k: &str, what: String, fix: &str| errs.push(doc.error(&format!("{prefix}{k}"), what, fix));
    match cfg.retention.as_deref() {
        None | Some("limits") | Some("interest") | Some("workqueue") => {}
        Some(other) => err(
            "retention",
            format!("retention '{other}' is not one nats-server knows"),
            "write limits, interest or workqueue",
        ),
    }
    match cfg.storage.as_deref() {
        None | Some("file") => {}
        Some("memory") => err(
            "storage",
            "memory storage is not on the planned volumes: natsplan plans file storage (max_file_store on the LUNs)"
                .into(),
            "write \"storage\": \"file\", or leave this stream out of the site (size max_memory_store by hand)",
        ),
        Some(other) => err(
            "storage",
            format!("storage '{other}' is not one nats-server knows"),
            "write file",
        ),
    }
    match cfg.discard.as_deref() {
        None | Some("old") | Some("new") | Some("Old") | Some("New") => {}
        Some(other) => err("discard", format!("discard '{other}' is unknown"), "write old or new"),
    }
    match cfg.compression.as_deref() {
        None | Some("none") | Some("s2") => {}
        Some(other) => err(
            "compression",
            format!("compression '{other}' is unknown"),
            "write none or s2",
        ),
    }
    if cfg.persist_mode.as_deref() == Some("async") {
        err(
            "persist_mode",
            "persist_mode async acknowledges writes before they are flushed; natsplan's loss model does not cover it"
                .into(),
            "remove persist_mode (the default flushes before the ack), or plan this stream by hand",
        );
    } else if !matches!(cfg.persist_mode.as_deref(), None | Some("default") | Some("")) {
        err(
            "persist_mode",
            "persist_mode is unknown".into(),
            "write default, or remove it",
        );
    }
    if cfg.mirror.as_ref().is_some_and(|v| !v.is_null()) {
        err(
            "mirror",
            "a mirror's traffic is its origin stream's; natsplan does not model mirrors".into(),
            "plan the origin stream, and create the mirror with `nats stream add --mirror` after emit",
        );
    }
    if cfg
        .sources
        .as_ref()
        .is_some_and(|v| v.as_array().is_some_and(|a| !a.is_empty()))
    {
        err(
            "sources",
            "a sourcing stream's traffic is other streams'; natsplan does not model sources".into(),
            "plan the source streams, and add the sourcing stream by hand after emit",
        );
    }
}

fn map(cfg: &Config, prefix: &str, config: Value, doc: &Doc, errs: &mut Vec<InputError>) -> StreamDef {
    policies(cfg, prefix, doc, errs);
    let p = |k: &str| format!("{prefix}{k}");
    let mut err = |k: &str, what: String, fix: &str| errs.push(doc.error(&p(k), what, fix));
    // nats-server's name rules (server/jetstream.go isValidAssetName, JSMaxNameLen), as site::names has them.
    let name = cfg.name.clone();
    if let Some(why) = crate::site::names::problem(crate::site::names::NameKind::Stream, &name) {
        err(
            "name",
            format!(
                "'{}' is not a stream name nats-server accepts: it {why}",
                name.escape_debug()
            ),
            "use letters, digits, '-' and '_' (no spaces, '.', '*', '>', '/' or '\\'), at most 250 bytes",
        );
    }
    let mut subjects = cfg.subjects.clone().unwrap_or_default();
    for (i, s) in subjects.iter().enumerate() {
        if let Err(why) = crate::units::check_subject(s) {
            err(
                &format!("subjects[{i}]"),
                format!("subject '{s}': {why}"),
                "write a NATS subject such as orders.>",
            );
        }
    }
    if subjects.is_empty() {
        // nats-server gives a stream without subjects its own name as the subject (server/stream.go).
        subjects.push(name.clone());
    }
    let mut cluster = None;
    if let Some(pl) = &cfg.placement {
        if pl.tags.as_ref().is_some_and(|t| !t.is_empty()) {
            err(
                "placement.tags",
                "natsplan chooses placement itself (unique_tag, or the tags of a pinned replica set); tags given \
                 here cannot be mapped to a layout"
                    .into(),
                "remove placement.tags; emit writes the layout's placement into the stream's definition",
            );
        }
        cluster = pl.cluster.clone().filter(|c| !c.is_empty());
    }
    let replicas = match cfg.num_replicas {
        None => None,
        Some(r) if (0..=MAX_REPLICAS).contains(&r) => Some(r.max(1) as u8),
        Some(r) => {
            err(
                "num_replicas",
                format!("num_replicas {r}: nats-server allows 1 to {MAX_REPLICAS}"),
                "write 1, 3 or 5",
            );
            None
        }
    };
    let max_age_s = match cfg.max_age {
        Some(ns) if ns < 0 => {
            err(
                "max_age",
                format!("max_age {ns} is negative"),
                "write nanoseconds, e.g. 86400000000000 for 24h, or 0",
            );
            None
        }
        // nats-server: "max age needs to be >= 100ms" (server/stream.go checkStreamCfg).
        Some(ns) if ns > 0 && ns < 100_000_000 => {
            err(
                "max_age",
                format!("max_age {ns} ns is below nats-server's 100 ms"),
                "write at least 100000000 (100ms), or 0 for no limit",
            );
            None
        }
        Some(ns) if ns > 0 => Some(ns as f64 / 1e9),
        _ => None,
    };
    let max_msg_size = match cfg.max_msg_size {
        // nats-server keeps max_msg_size in an int32 (-1 = unlimited).
        Some(b) if b > i32::MAX as i64 => {
            err(
                "max_msg_size",
                format!("max_msg_size {b} does not fit nats-server's int32"),
                "write at most 2147483647",
            );
            None
        }
        b => limit(b),
    };
    StreamDef {
        name,
        subjects,
        max_age_s,
        max_bytes: limit(cfg.max_bytes),
        max_msgs: limit(cfg.max_msgs),
        max_msg_size,
        replicas,
        cluster,
        config,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ORDERS: &str = r#"{
  "name": "orders",
  "subjects": ["orders.>"],
  "retention": "limits",
  "max_consumers": -1,
  "max_msgs": -1,
  "max_bytes": 1073741824,
  "max_age": 86400000000000,
  "max_msgs_per_subject": -1,
  "max_msg_size": -1,
  "discard": "old",
  "storage": "file",
  "num_replicas": 3,
  "duplicate_window": 120000000000,
  "compression": "none",
  "allow_direct": true,
  "mirror_direct": false,
  "sealed": false,
  "deny_delete": false,
  "deny_purge": false,
  "allow_rollup_hdrs": false,
  "consumer_limits": {}
}"#;

    #[test]
    fn a_stream_config_maps_to_the_workload_model() {
        let d = parse(ORDERS, "orders.json").unwrap();
        assert_eq!(d.name, "orders");
        assert_eq!(d.subjects, ["orders.>"]);
        assert_eq!(d.max_age_s, Some(86_400.0));
        assert_eq!(d.max_bytes, Some(1 << 30));
        assert_eq!(d.max_msgs, None);
        assert_eq!(d.replicas, Some(3));
        assert_eq!(d.config["discard"], "old");
    }

    #[test]
    fn a_stream_info_is_read_through_its_config() {
        let info = format!(
            r#"{{"config": {ORDERS}, "created": "2026-01-01T00:00:00Z", "state": {{"messages": 1}}, "ts": "2026-01-02T00:00:00Z", "a_later_field": 1}}"#
        );
        let d = parse(&info, "info.json").unwrap();
        assert_eq!(d.name, "orders");
        let bad = info
            .replace(r#""max_bytes": 1073741824"#, r#""max_bytes": "big""#)
            .replace(r#""storage": "file""#, r#""storage": "memory""#);
        let e = parse(&bad, "info.json").unwrap_err().to_string();
        assert!(
            e.contains("info.json:7:16: config.max_bytes: expected a whole number"),
            "{e}"
        );
        assert!(e.contains("info.json:12:14: config.storage: memory storage"), "{e}");
        assert_eq!(d.config["name"], "orders");
        assert!(d.config.get("state").is_none());
    }

    #[test]
    fn what_cannot_be_mapped_is_refused_with_its_place() {
        let bad = ORDERS
            .replace(r#""storage": "file""#, r#""storage": "memory""#)
            .replace(r#""num_replicas": 3"#, r#""num_replicas": 7"#)
            .replace(r#""max_consumers": -1,"#, r#""max_consumers": -1, "mirorr": 1,"#)
            .replace(
                r#""compression": "none","#,
                r#""compression": "none", "placement": {"tags": ["ssd"]},"#,
            );
        let e = parse(&bad, "orders.json").unwrap_err().to_string();
        assert!(e.contains("orders.json has 4 problems"), "{e}");
        assert!(e.contains("orders.json:5:24: mirorr: unknown key 'mirorr'"), "{e}");
        assert!(e.contains("orders.json:12:14: storage: memory storage"), "{e}");
        assert!(e.contains("orders.json:13:19: num_replicas: num_replicas 7"), "{e}");
        assert!(e.contains("placement.tags: natsplan chooses placement"), "{e}");
    }

    #[test]
    fn bad_json_points_at_its_line_and_column() {
        let e = parse("{\n  \"name\": \"orders\",\n  \"subjects\": [\"a\" \"b\"]\n}", "o.json").unwrap_err();
        let t = e.to_string();
        assert!(t.contains("o.json:3:"), "{t}");
        assert!(t.contains("not valid JSON"), "{t}");
        let e = parse("[1]", "o.json").unwrap_err().to_string();
        assert!(e.contains("expected a StreamConfig object"), "{e}");
    }

    #[test]
    fn a_stream_without_subjects_captures_its_name_and_zero_replicas_mean_one() {
        let d = parse(
            r#"{"name": "audit", "num_replicas": 0, "max_age": 0, "max_bytes": -1}"#,
            "a.json",
        )
        .unwrap();
        assert_eq!(d.subjects, ["audit"]);
        assert_eq!(d.replicas, Some(1));
        assert_eq!(d.max_age_s, None);
        assert_eq!(d.max_bytes, None);
    }
}
