//! From YAML text to a validated `Site`. Problems are collected, never returned one at a time: a user
//! fixing a site file wants the whole list, each problem with its file:line:column, its field path, what
//! is wrong and how to fix it. Only a YAML syntax error stops early (a parser cannot resynchronise after
//! one), and it still says where.
//!
//! The walk is over the spanned tree of `yaml.rs`, one section at a time; a section that is the wrong
//! shape is reported and skipped, so a type error in one rack never hides an unknown key in another.

use super::model::*;
use super::yaml::{self, clip, Node, Pos, Typed, Val};
use crate::catalog::Catalog;
use crate::units::{parse_duration, parse_size, SyncMode, YEAR_S};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// One problem in a site file. Serialisable so a command can report problems as JSON too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteError {
    /// Field path such as `racks[1].arrays[0].disk_model`.
    pub path: String,
    /// 1-based line and column when the parser knows them.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// How to fix it.
    pub fix: Option<String>,
}

/// Every problem found in one site file, in file order.
#[derive(Debug, Clone, Serialize)]
pub struct SiteErrors {
    pub file: String,
    pub errors: Vec<SiteError>,
}

impl fmt::Display for SiteErrors {
    /// One problem per entry: `FILE:LINE:COL: PATH: what is wrong`, then an indented `fix:` line. The
    /// first part is the form editors and terminals turn into links.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} has {} problem{}:",
            self.file,
            self.errors.len(),
            if self.errors.len() == 1 { "" } else { "s" }
        )?;
        for e in &self.errors {
            let place = match (e.line, e.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file),
                (Some(l), None) => format!("{}:{l}", self.file),
                _ => self.file.clone(),
            };
            // Problems of the file as a whole (unreadable, YAML syntax) have no field path.
            if e.path.is_empty() {
                write!(f, "  {place}: {}", e.message)?;
            } else {
                write!(f, "  {place}: {}: {}", e.path, e.message)?;
            }
            if let Some(fix) = &e.fix {
                write!(f, "\n      fix: {fix}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for SiteErrors {}

/// Read and validate a site file.
pub fn load(path: &Path, catalog: &Catalog) -> Result<Site, SiteErrors> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SiteErrors {
        file: file.clone(),
        errors: vec![SiteError {
            path: String::new(),
            line: None,
            column: None,
            message: format!("cannot read the file: {e}"),
            fix: Some("check the path; `natsplan design examples/three-racks-raid1.yaml` shows a working one".into()),
        }],
    })?;
    parse_str(&text, &file, catalog)
}

/// Validate site YAML text; `file` is used in messages.
pub fn parse_str(text: &str, file: &str, catalog: &Catalog) -> Result<Site, SiteErrors> {
    let fail = |errors: Vec<SiteError>| SiteErrors {
        file: file.to_string(),
        errors,
    };
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(fail(vec![SiteError {
                path: "site".into(),
                line: Some(1),
                column: Some(1),
                message: "the file is empty (no YAML document)".into(),
                fix: Some("start from examples/full-reference.yaml, which shows every key".into()),
            }]))
        }
        Err(e) => {
            return Err(fail(vec![SiteError {
                path: String::new(),
                line: e.pos.map(|p| p.line),
                column: e.pos.map(|p| p.col),
                message: e.message,
                fix: Some(e.fix),
            }]))
        }
    };
    let mut v = Validator {
        errors: Vec::new(),
        catalog,
    };
    let site = v.build(&root);
    if v.errors.is_empty() {
        Ok(site)
    } else {
        // File order reads best; problems without a place (none today) go last. The sort is stable, so
        // two problems on one value keep the order they were found in.
        v.errors
            .sort_by_key(|e| (e.line.unwrap_or(usize::MAX), e.column.unwrap_or(usize::MAX)));
        Err(fail(v.errors))
    }
}

// ---- the keys each section accepts (an unknown key is an error with a suggestion) ----

const TOP_KEYS: &[&str] = &[
    "site",
    "nats",
    "racks",
    "workload",
    "policy",
    "failure_rates",
    "repair_times",
    "maintenance",
];
const NATS_KEYS: &[&str] = &[
    "replicas",
    "sync_interval",
    "compression",
    "compression_ratio",
    "cluster_name",
    "max_ha_assets",
];
const RACK_KEYS: &[&str] = &["name", "servers", "arrays", "power_feeds", "uplinks", "pdus"];
const SERVER_KEYS: &[&str] = &["name", "host", "pdu", "model", "disks"];
const INTERNAL_KEYS: &[&str] = &["disk_model", "count", "disk_size", "raid", "hot_spares"];
const ARRAY_KEYS: &[&str] = &[
    "name",
    "model",
    "disk_model",
    "disks",
    "hot_spares",
    "disk_size",
    "write_cache",
    "raid",
];
const WORKLOAD_KEYS: &[&str] = &["streams", "kv", "object_stores", "core"];
const STREAM_KEYS: &[&str] = &[
    "name",
    "msgs_per_s",
    "msg_size",
    "retention",
    "replicas",
    "consumers",
    "subject_size",
    "max_bytes",
    "subjects",
];
const KV_KEYS: &[&str] = &[
    "name",
    "puts_per_s",
    "value_size",
    "key_size",
    "keys",
    "history",
    "replicas",
];
const OBJ_KEYS: &[&str] = &[
    "name",
    "puts_per_s",
    "gets_per_s",
    "object_size",
    "retention",
    "objects",
    "replicas",
];
const CORE_KEYS: &[&str] = &["msgs_per_s", "msg_size"];
const POLICY_KEYS: &[&str] = &[
    "patterns",
    "wear_headroom",
    "hot_spares_per_array",
    "min_tolerated",
    "growth",
    "horizon",
    "fs_reserve",
    "store_headroom",
    "baselines",
];
const TOLERANCE_KEYS: &[&str] = &["racks", "arrays", "servers", "disks", "meta"];

/// Where each fixed-schema key lives, to say "this key belongs under X" when one is put in the wrong place.
const SECTIONS: &[(&str, &[&str])] = &[
    ("the top level", TOP_KEYS),
    ("nats", NATS_KEYS),
    ("a rack (racks[])", RACK_KEYS),
    ("a server object (racks[].servers[])", SERVER_KEYS),
    ("a server's internal disks (racks[].servers[].disks)", INTERNAL_KEYS),
    ("an array (racks[].arrays[])", ARRAY_KEYS),
    ("workload", WORKLOAD_KEYS),
    ("a stream (workload.streams[])", STREAM_KEYS),
    ("a KV bucket (workload.kv[])", KV_KEYS),
    ("an object store (workload.object_stores[])", OBJ_KEYS),
    ("workload.core", CORE_KEYS),
    ("policy", POLICY_KEYS),
    ("policy.min_tolerated", TOLERANCE_KEYS),
];

/// The closest candidate to `word` by edit distance (transpositions count once), if it is close enough
/// to be a typo rather than a different word.
pub(crate) fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_ascii_lowercase();
    let limit = (w.chars().count() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&w, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A list for messages: `a, b, c`.
fn list_of(names: &[&str]) -> String {
    names.join(", ")
}

/// A mapping being read: its entries by key (first occurrence), where it is and its path.
struct Obj<'n> {
    path: String,
    pos: Pos,
    entries: Vec<(String, &'n Node, &'n Node)>,
    /// Unknown keys (already reported), so a misspelt required key is not reported twice.
    unknown: Vec<String>,
}

impl<'n> Obj<'n> {
    /// The value of `key`, or None when absent or empty (`key:` with nothing after it means "not given").
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, v)| *v)
            .filter(|v| !v.is_null())
    }
    fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _, _)| k == key)
    }
    fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entries.iter().find(|(k, _, _)| k == key).map(|(_, k, _)| k.pos)
    }
    fn p(&self, key: &str) -> String {
        join(&self.path, key)
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// An array (shared, or a server's internal disks) as read, before the checks that need the catalog.
struct ArrayIn<'n> {
    path: String,
    pos: Pos,
    name: String,
    name_node: Option<&'n Node>,
    /// None for internal disks (always the catalog's `internal` model).
    model: Option<(String, &'n Node)>,
    disk_model: Option<(String, &'n Node)>,
    /// Key the disk count was given under (`disks` for arrays, `count` for internal disks).
    disks_key: &'static str,
    disks: Option<(u32, &'n Node)>,
    hot_spares: Option<(u32, &'n Node)>,
    disk_size_bytes: Option<(u64, &'n Node)>,
    write_cache: Option<bool>,
    raid: Option<(RaidChoice, &'n Node)>,
    internal: bool,
}

/// First place and path a name was seen, for "duplicate" messages that point at both.
struct Seen {
    line: usize,
    rack: Option<RackIdx>,
}

struct Validator<'c> {
    errors: Vec<SiteError>,
    catalog: &'c Catalog,
}

impl<'c> Validator<'c> {
    fn err(&mut self, at: Option<Pos>, path: impl Into<String>, message: impl Into<String>, fix: impl Into<String>) {
        self.errors.push(SiteError {
            path: path.into(),
            line: at.map(|p| p.line),
            column: at.map(|p| p.col),
            message: message.into(),
            fix: Some(fix.into()),
        });
    }

    // ---- shapes ----

    /// Read a mapping, reporting non-text keys, duplicate keys and unknown keys (with a suggestion).
    fn obj<'n>(&mut self, node: &'n Node, path: &str, what: &str, keys: &[&str]) -> Option<Obj<'n>> {
        let Val::Map(entries) = &node.val else {
            self.err(
                Some(node.pos),
                path,
                format!(
                    "expected {what} as a mapping (key: value lines), got {}",
                    node.describe()
                ),
                format!("write it as `key: value` lines; keys allowed here: {}", list_of(keys)),
            );
            return None;
        };
        let mut obj = Obj {
            path: path.to_string(),
            pos: node.pos,
            entries: Vec::new(),
            unknown: Vec::new(),
        };
        for (k, v) in entries {
            let key = match &k.val {
                Val::Scalar(s) if !k.is_null() => s.text.clone(),
                _ => {
                    self.err(
                        Some(k.pos),
                        path,
                        format!("a key must be a plain name, got {}", k.describe()),
                        format!("keys allowed here: {}", list_of(keys)),
                    );
                    continue;
                }
            };
            if let Some((_, first, _)) = obj.entries.iter().find(|(n, _, _)| *n == key) {
                let line = first.pos.line;
                self.err(
                    Some(k.pos),
                    join(path, &key),
                    format!("key '{key}' is given twice (first on line {line})"),
                    "keep one of them",
                );
                continue;
            }
            if !keys.contains(&key.as_str()) {
                self.unknown_key(k.pos, path, &key, keys);
                obj.unknown.push(key.clone());
            }
            obj.entries.push((key, k, v));
        }
        Some(obj)
    }

    fn unknown_key(&mut self, at: Pos, path: &str, key: &str, keys: &[&str]) {
        let p = join(path, key);
        if let Some(near) = nearest(key, keys.iter().copied()) {
            self.err(
                Some(at),
                p,
                format!("unknown key '{}'; did you mean '{near}'?", clip(key)),
                format!("rename it to '{near}'"),
            );
            return;
        }
        let home = SECTIONS
            .iter()
            .find(|(_, ks)| ks.contains(&key) && !std::ptr::eq(*ks, keys))
            .map(|(section, _)| *section);
        let fix = match home {
            Some(section) => format!(
                "'{key}' belongs in {section}; move it there (keys allowed here: {})",
                list_of(keys)
            ),
            None if keys.is_empty() => "remove it; nothing can be set here".to_string(),
            None => format!("remove it, or use one of: {}", list_of(keys)),
        };
        self.err(Some(at), p, format!("unknown key '{}'", clip(key)), fix);
    }

    /// A required key's value; reports it missing (at the mapping) with an example.
    fn req<'n>(&mut self, o: &Obj<'n>, key: &str, example: &str) -> Option<&'n Node> {
        let v = o.get(key);
        // `disk_modle: x` already got "did you mean 'disk_model'?"; "missing disk_model" would be noise.
        let misspelt = o.unknown.iter().any(|u| nearest(u, [key]).is_some());
        if v.is_none() && !misspelt {
            let (at, msg) = match o.key_pos(key) {
                Some(p) => (p, format!("'{key}' has no value")),
                None => (o.pos, format!("missing key '{key}'")),
            };
            self.err(Some(at), o.p(key), msg, format!("add `{key}: {example}`"));
        }
        v
    }

    /// A list; `None`/empty values are an empty list, anything else but a list is an error.
    fn list<'n>(&mut self, node: Option<&'n Node>, path: &str, example: &str) -> &'n [Node] {
        match node {
            None => &[],
            Some(Node {
                val: Val::Seq(items), ..
            }) => items,
            Some(n) => {
                self.err(
                    Some(n.pos),
                    path,
                    format!("expected a list, got {}", n.describe()),
                    format!("write a list: `- item` lines, or {example}"),
                );
                &[]
            }
        }
    }

    /// Text (names, models, enumerations). Numbers are taken as written (`name: 1` is the name "1").
    fn text(&mut self, node: &Node, path: &str, example: &str) -> Option<String> {
        match &node.val {
            Val::Scalar(s) => match s.typed() {
                Typed::Null => {
                    self.err(Some(node.pos), path, "has no value", format!("write e.g. {example}"));
                    None
                }
                Typed::Str(t) => Some(t.to_string()),
                _ => Some(s.text.clone()),
            },
            _ => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("expected text, got {}", node.describe()),
                    format!("write e.g. {example}"),
                );
                None
            }
        }
    }

    /// A stream's subjects: one subject or a list, each a valid NATS subject filter.
    fn subjects(&mut self, node: &Node, path: &str) -> Vec<(String, Pos, String)> {
        let items: Vec<(String, &Node)> = match &node.val {
            Val::Seq(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, n)| self.text(n, &format!("{path}[{i}]"), "orders.>").map(|t| (t, n)))
                .collect(),
            _ => self
                .text(node, path, "[orders.>]")
                .map(|t| vec![(t, node)])
                .unwrap_or_default(),
        };
        let mut out: Vec<(String, Pos, String)> = Vec::new();
        for (i, (subj, n)) in items.into_iter().enumerate() {
            let at = if matches!(node.val, Val::Seq(_)) {
                format!("{path}[{i}]")
            } else {
                path.to_string()
            };
            if let Err(why) = crate::units::check_subject(&subj) {
                self.err(
                    Some(n.pos),
                    at,
                    format!("subject '{}' is not valid: {why}", clip(&subj)),
                    "write tokens separated by '.', with '*' for one token and '>' only last, e.g. orders.*.created or orders.>",
                );
            } else if let Some((prev, _, _)) = out.iter().find(|(p, _, _)| crate::units::subjects_overlap(p, &subj)) {
                self.err(
                    Some(n.pos),
                    at,
                    format!("subject '{subj}' overlaps '{prev}' of the same stream"),
                    "keep the wider one (nats-server refuses overlapping subjects in one stream)",
                );
            } else {
                out.push((subj, n.pos, at));
            }
        }
        out
    }

    /// A name used as an identifier in ids, selectors (`rack:A`, `disk:A1/2`) and nats-server config.
    fn name(&mut self, node: &Node, path: &str, kind: &str, example: &str, allow_dot: bool) -> Option<String> {
        let n = self.text(node, path, example)?;
        let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || (allow_dot && c == '.');
        if n.is_empty() || !n.chars().all(ok_char) {
            let allowed = if allow_dot {
                "letters, digits, '-', '_' and '.'"
            } else {
                "letters, digits, '-' and '_'"
            };
            self.err(
                Some(node.pos),
                path,
                format!("{kind} name '{}' is not usable: use only {allowed}", clip(&n)),
                format!("rename it, e.g. {example} (names appear in layout ids, selectors and nats-server config)"),
            );
        }
        Some(n)
    }

    /// A number (rates, fractions). Underscores are allowed as digit separators (`1_000_000`).
    fn number(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<f64> {
        let got = match &node.val {
            Val::Scalar(s) => match s.typed() {
                Typed::Int(i) => Some(i as f64),
                Typed::Float(f) => Some(f),
                Typed::BigInt => s.text.parse::<f64>().ok(),
                Typed::Str(t) => underscored_number(t),
                _ => None,
            },
            _ => None,
        };
        match got {
            Some(x) if x.is_finite() => Some(x),
            Some(_) => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("{what} must be a finite number, got {}", node.describe()),
                    format!("write e.g. {example}"),
                );
                None
            }
            None => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("expected a number ({what}), got {}", node.describe()),
                    format!("write a plain number without quotes or units, e.g. {example}"),
                );
                None
            }
        }
    }

    /// A whole number in `min..=max`.
    fn whole(&mut self, node: &Node, path: &str, what: &str, min: i64, max: i64, example: &str) -> Option<i64> {
        let got = match &node.val {
            Val::Scalar(s) => match s.typed() {
                Typed::Int(i) => Ok(i),
                Typed::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
                Typed::BigInt => Err("is far too large"),
                Typed::Str(t) => match underscored_number(t) {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
                    _ => Err("not a whole number"),
                },
                _ => Err("not a whole number"),
            },
            _ => Err("not a whole number"),
        };
        match got {
            Ok(x) if x < min && x < 0 => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("{what} cannot be negative, got {x}"),
                    format!("write e.g. {example}"),
                );
                None
            }
            Ok(x) if x < min => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("{what} must be at least {min}, got {x}"),
                    format!("write e.g. {example}"),
                );
                None
            }
            Ok(x) if x > max => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("{what} must be at most {max}, got {x}"),
                    format!("write e.g. {example}"),
                );
                None
            }
            Ok(x) => Some(x),
            Err(why) => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("expected a whole number ({what}), got {} ({why})", node.describe()),
                    format!("write e.g. {example}"),
                );
                None
            }
        }
    }

    fn count_u32(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<u32> {
        self.whole(node, path, what, 0, u32::MAX as i64, example)
            .map(|x| x as u32)
    }

    fn count_u64(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<u64> {
        self.whole(node, path, what, 0, i64::MAX, example).map(|x| x as u64)
    }

    fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
        if let Val::Scalar(s) = &node.val {
            if let Typed::Bool(b) = s.typed() {
                return Some(b);
            }
        }
        self.err(
            Some(node.pos),
            path,
            format!("expected true or false, got {}", node.describe()),
            "write true or false (yes/no/on/off are text in YAML 1.2)",
        );
        None
    }

    /// A size: a number of bytes or text with a unit (`512B`, `1KiB`, `3.84TB`).
    fn size(&mut self, node: &Node, path: &str) -> Option<u64> {
        const FIX: &str =
            "write a number with a unit: 512B, 1KiB, 4GiB or 3.84TB (KiB/MiB/GiB are binary, KB/MB/GB decimal)";
        let Val::Scalar(s) = &node.val else {
            self.err(
                Some(node.pos),
                path,
                format!("expected a size, got {}", node.describe()),
                FIX,
            );
            return None;
        };
        let r = match s.typed() {
            Typed::Int(i) if i >= 0 => Ok(i as u64),
            Typed::Float(f) if f.is_finite() && f >= 0.0 && f < u64::MAX as f64 => Ok(f.round() as u64),
            Typed::Int(_) | Typed::Float(_) => Err(format!("a size cannot be negative or infinite, got {}", s.text)),
            Typed::BigInt => Err(format!("size {} is out of range", clip(&s.text))),
            Typed::Str(t) => parse_size(t),
            Typed::Null | Typed::Bool(_) => Err(format!("expected a size, got {}", node.describe())),
        };
        match r {
            Ok(b) => Some(b),
            Err(e) => {
                self.err(Some(node.pos), path, first_clause(&e), FIX);
                None
            }
        }
    }

    /// A size that must be above zero.
    fn size_nonzero(&mut self, node: &Node, path: &str, what: &str) -> Option<u64> {
        let b = self.size(node, path)?;
        if b == 0 {
            self.err(
                Some(node.pos),
                path,
                format!("{what} cannot be zero"),
                "write a size above zero, e.g. 1KiB",
            );
            return None;
        }
        Some(b)
    }

    /// A duration in humantime form, in seconds.
    fn duration_s(&mut self, node: &Node, path: &str) -> Option<f64> {
        const FIX: &str = "write a number with a unit: 30s, 2m, 24h, 7d or 1y";
        let Val::Scalar(s) = &node.val else {
            self.err(
                Some(node.pos),
                path,
                format!("expected a duration, got {}", node.describe()),
                FIX,
            );
            return None;
        };
        match s.typed() {
            Typed::Str(t) => match parse_duration(t) {
                Ok(d) => Some(d.as_secs_f64()),
                Err(e) => {
                    self.err(Some(node.pos), path, first_clause(&e), FIX);
                    None
                }
            },
            Typed::Int(_) | Typed::Float(_) | Typed::BigInt => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("a duration needs a unit, got the bare number {}", s.text),
                    format!("write e.g. {}s for seconds, or 30s, 2m, 24h, 7d", s.text),
                );
                None
            }
            _ => {
                self.err(
                    Some(node.pos),
                    path,
                    format!("expected a duration, got {}", node.describe()),
                    FIX,
                );
                None
            }
        }
    }

    /// A rate that must be above zero (msgs_per_s, puts_per_s).
    fn rate(&mut self, node: &Node, path: &str, what: &str) -> Option<f64> {
        let x = self.number(node, path, what, "20000")?;
        if x <= 0.0 {
            self.err(
                Some(node.pos),
                path,
                format!("{what} must be above zero, got {}", fmt_num(x)),
                "give a rate above zero, or remove the entry",
            );
            return None;
        }
        Some(x)
    }

    /// A fraction in `lo..hi` (hi exclusive).
    fn fraction(&mut self, o: &Obj<'_>, key: &str, lo: f64, hi: f64, default: f64, hint: &str) -> f64 {
        let Some(n) = o.get(key) else { return default };
        let Some(x) = self.number(n, &o.p(key), "a fraction", &fmt_num(default)) else {
            return default;
        };
        if !(lo..hi).contains(&x) {
            self.err(
                Some(n.pos),
                o.p(key),
                format!("must be a fraction in {lo}..{hi}, got {}", fmt_num(x)),
                format!("{hint} (default {})", fmt_num(default)),
            );
            return default;
        }
        x
    }

    fn replicas(&mut self, node: &Node, path: &str) -> Option<u8> {
        let r = self.whole(node, path, "replicas", i64::MIN, i64::MAX, "3")?;
        if (1..=5).contains(&r) {
            Some(r as u8)
        } else {
            self.err(
                Some(node.pos),
                path,
                format!("replicas must be 1..5 (nats-server's limit), got {r}"),
                "use 3 (tolerates one lost server) or 5 (tolerates two)",
            );
            None
        }
    }

    /// A model name looked up in the catalog; unknown names get the nearest known one.
    fn model_check(&mut self, node: &Node, path: &str, kind: &str, name: &str, known: &[&str]) -> bool {
        if known.iter().any(|k| k.eq_ignore_ascii_case(name)) {
            return true;
        }
        let (message, fix) = match nearest(name, known.iter().copied()) {
            Some(near) => (
                format!("unknown {kind} '{}'; did you mean '{near}'?", clip(name)),
                format!("write {near}; known {kind}s: {}", list_of(known)),
            ),
            None => (
                format!("unknown {kind} '{}'", clip(name)),
                format!(
                    "use one of: {} (or describe your own in a models folder and pass --models DIR)",
                    list_of(known)
                ),
            ),
        };
        self.err(Some(node.pos), path, message, fix);
        false
    }

    // ---- the site ----

    fn build(&mut self, root: &Node) -> Site {
        let Some(top) = self.obj(root, "", "the site", TOP_KEYS) else {
            return empty_site();
        };
        let name = match self.req(&top, "site", "east-dc") {
            Some(n) => self.text(n, "site", "east-dc").unwrap_or_default(),
            None => String::new(),
        };
        let nats = self.nats(top.get("nats"));
        let policy = self.policy(top.get("policy"));
        let default_spares = policy.hot_spares_per_array;
        let (racks, servers, arrays) = self.racks(&top, default_spares);
        let workload = self.workload(top.get("workload"));

        // Requirements no layout could meet are input mistakes, not planning results.
        let mt = policy.min_tolerated;
        let tol_pos = |key: &str| -> Option<Pos> {
            let p = top.get("policy")?;
            let Val::Map(e) = &p.val else { return None };
            let (_, m) = e
                .iter()
                .find(|(k, _)| matches!(&k.val, Val::Scalar(s) if s.text == "min_tolerated"))?;
            let Val::Map(e) = &m.val else { return None };
            e.iter()
                .find(|(k, _)| matches!(&k.val, Val::Scalar(s) if s.text == key))
                .map(|(_, v)| v.pos)
        };
        for (key, want, have, what) in [
            ("racks", mt.racks, racks.len(), "racks"),
            ("arrays", mt.arrays, arrays.len(), "arrays"),
            ("servers", mt.servers, servers.len(), "servers"),
        ] {
            if want > 0 && have > 0 && want as usize >= have {
                self.err(
                    tol_pos(key),
                    format!("policy.min_tolerated.{key}"),
                    format!("asks to survive losing {want} {what}, but the site has only {have}; no layout can"),
                    format!("lower it below {have}, or add {what}"),
                );
            }
        }

        let failure_rates = self.failure_rates(top.get("failure_rates"));
        let repair_times = self.repair_times(top.get("repair_times"));
        let maintenance = self.maintenance(top.get("maintenance"));
        Site {
            name,
            nats,
            racks,
            servers,
            arrays,
            workload,
            policy,
            failure_rates,
            repair_times,
            maintenance,
        }
    }

    fn nats(&mut self, node: Option<&Node>) -> NatsSettings {
        let mut out = NatsSettings {
            replicas: vec![3],
            sync: SyncMode::Interval(120),
            compression: Compression::None,
            compression_ratio: 1.0,
            cluster_name: "natsplan".into(),
            max_ha_assets: None,
        };
        let Some(o) = node.and_then(|n| self.obj(n, "nats", "the nats settings", NATS_KEYS)) else {
            return out;
        };
        if let Some(n) = o.get("replicas") {
            // A single number is accepted as a one-element list.
            let items: Vec<(String, &Node)> = match &n.val {
                Val::Seq(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (format!("nats.replicas[{i}]"), x))
                    .collect(),
                Val::Scalar(_) => vec![("nats.replicas".to_string(), n)],
                Val::Map(_) => {
                    self.err(
                        Some(n.pos),
                        "nats.replicas",
                        format!("expected a list of replica counts, got {}", n.describe()),
                        "write e.g. replicas: [3, 5]",
                    );
                    Vec::new()
                }
            };
            let mut replicas = Vec::new();
            for (p, x) in &items {
                if let Some(r) = self.replicas(x, p) {
                    if !replicas.contains(&r) {
                        replicas.push(r);
                    }
                }
            }
            if matches!(&n.val, Val::Seq(v) if v.is_empty()) {
                self.err(
                    Some(n.pos),
                    "nats.replicas",
                    "no replica counts to compare",
                    "list at least one, e.g. [3, 5]",
                );
            }
            if !replicas.is_empty() {
                out.replicas = replicas;
            }
        }
        if let Some(n) = o.get("sync_interval") {
            match &n.val {
                Val::Scalar(s) if matches!(s.typed(), Typed::Int(_) | Typed::Float(_)) => self.err(
                    Some(n.pos),
                    "nats.sync_interval",
                    format!("sync_interval needs a unit, got the bare number {}", s.text),
                    format!("write {}s, 2m (nats-server's default) or always", s.text),
                ),
                _ => {
                    if let Some(t) = self.text(n, "nats.sync_interval", "2m") {
                        match SyncMode::parse(&t) {
                            Ok(m) => out.sync = m,
                            Err(e) => self.err(
                                Some(n.pos),
                                "nats.sync_interval",
                                first_clause(&e),
                                "write always (fsync every write) or an interval such as 10s or 2m (the default)",
                            ),
                        }
                    }
                }
            }
        }
        if let Some(n) = o.get("compression") {
            if let Some(t) = self.text(n, "nats.compression", "none") {
                match t.to_ascii_lowercase().as_str() {
                    "none" => out.compression = Compression::None,
                    "s2" => out.compression = Compression::S2,
                    other => self.err(
                        Some(n.pos),
                        "nats.compression",
                        format!("unknown compression '{}'", clip(other)),
                        "use none or s2 (the only stream compression nats-server has)",
                    ),
                }
            }
        }
        if let Some(n) = o.get("compression_ratio") {
            if let Some(x) = self.number(n, "nats.compression_ratio", "a ratio", "1.5") {
                if x < 1.0 {
                    self.err(
                        Some(n.pos),
                        "nats.compression_ratio",
                        format!("must be >= 1.0 (stored = raw / ratio), got {}", fmt_num(x)),
                        "use 1.0 for no compression; s2 on typical JSON gives 1.5 to 3",
                    );
                } else {
                    out.compression_ratio = x;
                }
            }
        }
        if out.compression == Compression::None && out.compression_ratio > 1.0 {
            self.err(
                o.key_pos("compression_ratio"),
                "nats.compression_ratio",
                format!(
                    "a compression ratio of {} needs compression; compression is none",
                    fmt_num(out.compression_ratio)
                ),
                "set compression: s2, or remove compression_ratio",
            );
        }
        if let Some(n) = o.get("cluster_name") {
            if let Some(c) = self.name(n, "nats.cluster_name", "cluster", "east-dc", true) {
                out.cluster_name = c;
            }
        }
        if let Some(n) = o.get("max_ha_assets") {
            if let Some(x) = self.whole(n, "nats.max_ha_assets", "max_ha_assets", 1, u32::MAX as i64, "2000") {
                out.max_ha_assets = Some(x as u32);
            }
        }
        out
    }

    fn racks(&mut self, top: &Obj<'_>, default_spares: u32) -> (Vec<Rack>, Vec<Server>, Vec<Array>) {
        let mut racks = Vec::new();
        let mut servers: Vec<Server> = Vec::new();
        let mut arrays: Vec<Array> = Vec::new();
        let racks_node = top.get("racks");
        let rack_nodes = self.list(racks_node, "racks", "[{ name: A, servers: [alpha], arrays: [...] }]");
        if rack_nodes.is_empty() && !matches!(racks_node.map(|n| &n.val), Some(Val::Scalar(_) | Val::Map(_))) {
            self.err(
                racks_node.map(|n| n.pos).or(top.key_pos("racks")).or(Some(top.pos)),
                "racks",
                "the site has no racks",
                "add at least one rack with servers and storage under `racks:`",
            );
        }
        let mut rack_names: HashMap<String, Seen> = HashMap::new();
        let mut server_names: HashMap<String, Seen> = HashMap::new();
        let mut array_names: HashMap<String, Seen> = HashMap::new();
        let mut pdu_names: HashMap<String, Seen> = HashMap::new();
        // host → (rack, first server on it, where)
        let mut hosts: HashMap<String, (RackIdx, String)> = HashMap::new();
        let mut had_rack_error = false;
        for (ri, rn) in rack_nodes.iter().enumerate() {
            let rp = format!("racks[{ri}]");
            let Some(o) = self.obj(rn, &rp, "a rack", RACK_KEYS) else {
                // Keep indices aligned with the file.
                racks.push(Rack {
                    name: format!("rack{ri}"),
                    power_feeds: 2,
                    uplinks: 2,
                    pdus: Vec::new(),
                });
                had_rack_error = true;
                continue;
            };
            let name = match self.req(&o, "name", "A") {
                Some(n) => {
                    let name = self.name(n, &o.p("name"), "rack", "A", false).unwrap_or_default();
                    self.unique(&mut rack_names, "rack", &name, n, &o.p("name"), None);
                    name
                }
                None => String::new(),
            };
            let power_feeds = match o.get("power_feeds") {
                Some(n) => self
                    .whole(n, &o.p("power_feeds"), "power feeds", 1, 16, "2")
                    .map_or(2, |x| x as u32),
                None => 2,
            };
            let uplinks = match o.get("uplinks") {
                Some(n) => self
                    .whole(n, &o.p("uplinks"), "uplinks", 1, 64, "2")
                    .map_or(2, |x| x as u32),
                None => 2,
            };
            let mut pdus = Vec::new();
            for (i, pn) in self
                .list(o.get("pdus"), &o.p("pdus"), "[A-pdu1, A-pdu2]")
                .iter()
                .enumerate()
            {
                let pp = format!("{}[{i}]", o.p("pdus"));
                if let Some(p) = self.name(pn, &pp, "PDU", "A-pdu1", true) {
                    // `pdu:NAME` is a site-wide failure selector, so PDU names are unique across racks.
                    self.unique(&mut pdu_names, "PDU", &p, pn, &pp, Some(ri));
                    pdus.push(p);
                }
            }
            racks.push(Rack {
                name: name.clone(),
                power_feeds,
                uplinks,
                pdus: pdus.clone(),
            });

            for (si, sn) in self
                .list(o.get("servers"), &o.p("servers"), "[alpha, bravo]")
                .iter()
                .enumerate()
            {
                let sp = format!("{rp}.servers[{si}]");
                let idx = servers.len();
                let mut server = Server {
                    name: String::new(),
                    rack: ri,
                    host: None,
                    pdu: None,
                    model: self.catalog.default_server.clone(),
                    internal: None,
                };
                let mut name_node = sn;
                let mut internal: Option<ArrayIn> = None;
                match &sn.val {
                    Val::Scalar(_) => {
                        server.name = self.name(sn, &sp, "server", "alpha", true).unwrap_or_default();
                    }
                    Val::Seq(_) => {
                        self.err(
                            Some(sn.pos),
                            &sp,
                            format!("expected a server name or object, got {}", sn.describe()),
                            "write a name (`- alpha`) or an object (`- { name: alpha, host: ns1 }`)",
                        );
                        continue;
                    }
                    Val::Map(_) => {
                        let Some(so) = self.obj(sn, &sp, "a server", SERVER_KEYS) else {
                            continue;
                        };
                        if let Some(n) = self.req(&so, "name", "alpha") {
                            name_node = n;
                            server.name = self.name(n, &so.p("name"), "server", "alpha", true).unwrap_or_default();
                        }
                        if let Some(n) = so.get("host") {
                            server.host = self.name(n, &so.p("host"), "host", "ns1", true);
                            if let Some(h) = &server.host {
                                match hosts.get(&h.to_ascii_lowercase()) {
                                    Some((hr, first)) if *hr != ri => {
                                        let other = racks.get(*hr).map(|r: &Rack| r.name.clone()).unwrap_or_default();
                                        self.err(
                                            Some(n.pos),
                                            so.p("host"),
                                            format!(
                                                "host '{h}' also carries server '{first}' in rack {other}; one machine cannot stand in two racks"
                                            ),
                                            format!(
                                                "put every server on host '{h}' in one rack, or give the hosts different names"
                                            ),
                                        );
                                    }
                                    Some(_) => {}
                                    None => {
                                        hosts.insert(h.to_ascii_lowercase(), (ri, server.name.clone()));
                                    }
                                }
                            }
                        }
                        if let Some(n) = so.get("pdu") {
                            if let Some(p) = self.text(n, &so.p("pdu"), "A-pdu1") {
                                if !pdus.iter().any(|x| x.eq_ignore_ascii_case(&p)) {
                                    let fix = match nearest(&p, pdus.iter().map(|s| s.as_str())) {
                                        Some(near) => {
                                            format!("did you mean '{near}'? Or add '{p}' to the rack's pdus list")
                                        }
                                        None if pdus.is_empty() => {
                                            format!("list the rack's PDUs first: `pdus: [{p}]` under rack {name}")
                                        }
                                        None => format!(
                                            "use one of the rack's PDUs ({}), or add '{p}' to its pdus list",
                                            pdus.join(", ")
                                        ),
                                    };
                                    self.err(
                                        Some(n.pos),
                                        so.p("pdu"),
                                        format!("PDU '{}' is not listed in rack {name}'s pdus", clip(&p)),
                                        fix,
                                    );
                                }
                                server.pdu = Some(p);
                            }
                        }
                        if let Some(n) = so.get("model") {
                            if let Some(m) = self.text(n, &so.p("model"), "generic-16c") {
                                let known = self.catalog.server_names();
                                self.model_check(n, &so.p("model"), "server model", &m, &known);
                                server.model = m;
                            }
                        }
                        if let Some(n) = so.get("disks") {
                            internal = self.internal_disks(n, &so.p("disks"), &server.name);
                        }
                    }
                }
                let name_path = if matches!(sn.val, Val::Map(_)) {
                    format!("{sp}.name")
                } else {
                    sp.clone()
                };
                self.unique(
                    &mut server_names,
                    "server",
                    &server.name,
                    name_node,
                    &name_path,
                    Some(ri),
                );
                if let Some(a) = internal {
                    // A nameless server is already reported; its "-internal" array is no second problem.
                    if let Some(nn) = a.name_node.filter(|_| !server.name.is_empty()) {
                        self.unique(&mut array_names, "array", &a.name, nn, &a.path, Some(ri));
                    }
                    server.internal = Some(arrays.len());
                    let arr = self.finish_array(a, ri, Some(idx), 0);
                    arrays.push(arr);
                }
                servers.push(server);
            }

            for (ai, an) in self
                .list(
                    o.get("arrays"),
                    &o.p("arrays"),
                    "[{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3 }]",
                )
                .iter()
                .enumerate()
            {
                let ap = format!("{rp}.arrays[{ai}]");
                let Some(a) = self.array_in(an, &ap) else { continue };
                if let Some(nn) = a.name_node {
                    self.unique(&mut array_names, "array", &a.name, nn, &format!("{ap}.name"), Some(ri));
                }
                let arr = self.finish_array(a, ri, None, default_spares);
                arrays.push(arr);
            }
        }
        if servers.is_empty() && !rack_nodes.is_empty() && !had_rack_error {
            self.err(
                top.key_pos("racks"),
                "racks",
                "the site has no servers",
                "list the NATS hosts under racks[].servers, e.g. `servers: [alpha, bravo]`",
            );
        } else if !servers.is_empty() && arrays.is_empty() {
            self.err(
                top.key_pos("racks"),
                "racks",
                "the site has no storage: no arrays and no servers with internal disks",
                "add arrays under racks[].arrays, or internal disks under a server's `disks:`",
            );
        }
        (racks, servers, arrays)
    }

    /// Report a name seen before (case-insensitive: selectors and tags are case-insensitive).
    fn unique(
        &mut self,
        seen: &mut HashMap<String, Seen>,
        kind: &str,
        name: &str,
        node: &Node,
        path: &str,
        rack: Option<RackIdx>,
    ) {
        if name.is_empty() {
            return;
        }
        match seen.get(&name.to_ascii_lowercase()) {
            Some(first) => {
                let where_ = match (first.rack, rack) {
                    (Some(a), Some(b)) if a != b => format!("line {}, another rack", first.line),
                    _ => format!("line {}", first.line),
                };
                self.err(
                    Some(node.pos),
                    path,
                    format!("duplicate {kind} name '{name}' (first on {where_})"),
                    format!("give every {kind} a unique name (names are compared without case)"),
                );
            }
            None => {
                seen.insert(
                    name.to_ascii_lowercase(),
                    Seen {
                        line: node.pos.line,
                        rack,
                    },
                );
            }
        }
    }

    fn raid(&mut self, node: &Node, path: &str) -> Option<RaidChoice> {
        let t = self.text(node, path, "raid10")?;
        let r = RaidChoice::parse(&t);
        if r.is_none() {
            let names: Vec<&str> = RaidChoice::ALL.iter().map(|r| r.as_str()).collect();
            let hint = if t.to_ascii_lowercase().contains('5') {
                " (RAID 5 is not offered: one failure during a rebuild loses the group; use raid6)"
            } else {
                ""
            };
            self.err(
                Some(node.pos),
                path,
                format!("unknown RAID level '{}'{hint}", clip(&t)),
                format!("use one of: {}", list_of(&names)),
            );
        }
        r
    }

    /// `racks[].arrays[]`.
    fn array_in<'n>(&mut self, node: &'n Node, ap: &str) -> Option<ArrayIn<'n>> {
        let o = self.obj(node, ap, "an array", ARRAY_KEYS)?;
        let name_node = self.req(&o, "name", "A1");
        let name = name_node
            .and_then(|n| self.name(n, &o.p("name"), "array", "A1", true))
            .unwrap_or_default();
        let model = match self.req(&o, "model", "EF300") {
            Some(n) => self.text(n, &o.p("model"), "EF300").map(|m| (m, n)),
            None => None,
        };
        Some(self.array_common(&o, name, name_node, model, false))
    }

    /// `racks[].servers[].disks`: a server's own disks, an array that fails with the server.
    fn internal_disks<'n>(&mut self, node: &'n Node, dp: &str, server: &str) -> Option<ArrayIn<'n>> {
        let o = self.obj(node, dp, "the server's internal disks", INTERNAL_KEYS)?;
        let a = self.array_common(&o, format!("{server}-internal"), Some(node), None, true);
        Some(a)
    }

    fn array_common<'n>(
        &mut self,
        o: &Obj<'n>,
        name: String,
        name_node: Option<&'n Node>,
        model: Option<(String, &'n Node)>,
        internal: bool,
    ) -> ArrayIn<'n> {
        // Internal disks give their number as `count` (a server's `disks:` is the whole block).
        let disks_key = if internal { "count" } else { "disks" };
        let disk_model = match self.req(o, "disk_model", "nvme-3.84t") {
            Some(n) => self.text(n, &o.p("disk_model"), "nvme-3.84t").map(|m| (m, n)),
            None => None,
        };
        let disks = match self.req(o, disks_key, "3") {
            Some(n) => self.count_u32(n, &o.p(disks_key), "a disk count", "3").map(|x| (x, n)),
            None => None,
        };
        let hot_spares = o
            .get("hot_spares")
            .and_then(|n| self.count_u32(n, &o.p("hot_spares"), "hot spares", "1").map(|x| (x, n)));
        let disk_size_bytes = o
            .get("disk_size")
            .and_then(|n| self.size_nonzero(n, &o.p("disk_size"), "disk_size").map(|x| (x, n)));
        let write_cache = o.get("write_cache").and_then(|n| self.boolean(n, &o.p("write_cache")));
        let raid = o.get("raid").and_then(|n| self.raid(n, &o.p("raid")).map(|r| (r, n)));
        ArrayIn {
            path: o.path.clone(),
            pos: o.pos,
            name,
            name_node,
            model,
            disk_model,
            disks_key,
            disks,
            hot_spares,
            disk_size_bytes,
            write_cache,
            raid,
            internal,
        }
    }

    /// Catalog and RAID checks on an array as read.
    fn finish_array(&mut self, a: ArrayIn<'_>, rack: RackIdx, owner: Option<ServerIdx>, default_spares: u32) -> Array {
        let ap = a.path.as_str();
        let model = match (&a.model, a.internal) {
            (_, true) => "internal".to_string(),
            (Some((m, n)), false) => {
                let known: Vec<&str> = self.catalog.array_names();
                let known: Vec<&str> = known.into_iter().filter(|k| *k != "internal").collect();
                self.model_check(n, &join(ap, "model"), "array model", m, &known);
                m.clone()
            }
            (None, false) => String::new(),
        };
        let am = self.catalog.array(&model).cloned();
        if let Some((dm, n)) = &a.disk_model {
            let known = self.catalog.disk_names();
            self.model_check(n, &join(ap, "disk_model"), "disk model", dm, &known);
        }
        let disks_path = join(ap, a.disks_key);
        let disks = a.disks.map_or(0, |(d, _)| d);
        let disks_pos = a.disks.map(|(_, n)| n.pos).or(Some(a.pos));
        if a.disks.is_some() && disks == 0 {
            self.err(
                disks_pos,
                &disks_path,
                if a.internal {
                    "a server's internal disks need a count of at least one".to_string()
                } else {
                    "an array needs at least one disk".to_string()
                },
                if a.internal {
                    "give the number of disks, or remove `disks:` from the server"
                } else {
                    "give the number of disks in the array, or remove the array"
                },
            );
        }
        if let Some(m) = &am {
            if disks > m.drive_slots {
                self.err(
                    disks_pos,
                    &disks_path,
                    format!(
                        "{disks} disks do not fit the {}'s {} drive slots",
                        m.name, m.drive_slots
                    ),
                    "add an expansion shelf as another array, or use fewer disks",
                );
            }
        }
        let is_ddp = matches!(a.raid, Some((RaidChoice::Ddp, _)));
        // DDP spreads reserve capacity over all its disks instead of keeping idle hot spares.
        let hot_spares = match a.hot_spares {
            Some((h, n)) if is_ddp && h > 0 => {
                self.err(
                    Some(n.pos),
                    join(ap, "hot_spares"),
                    format!("a DDP pool keeps reserve capacity instead of hot spares, but hot_spares is {h}"),
                    "remove hot_spares (or set it to 0); DDP reserves rebuild space across all its disks",
                );
                0
            }
            Some((h, _)) => h,
            None if is_ddp || a.internal => 0,
            None => default_spares,
        };
        if hot_spares >= disks && disks > 0 {
            let at = a.hot_spares.map(|(_, n)| n.pos).or(disks_pos);
            let given = if a.hot_spares.is_some() {
                ""
            } else {
                " (policy.hot_spares_per_array)"
            };
            self.err(
                at,
                join(ap, "hot_spares"),
                format!(
                    "{hot_spares} hot spare{}{given} leave no data disks out of {disks}",
                    plural(hot_spares)
                ),
                format!("use fewer hot spares than disks (at most {}), or add disks", disks - 1),
            );
        }
        if let Some((r, n)) = a.raid {
            let raid_path = join(ap, "raid");
            if let Some(m) = &am {
                if !m.supports.iter().any(|s| s == r.as_str()) {
                    self.err(
                        Some(n.pos),
                        &raid_path,
                        format!("the {} does not offer {}", m.name, r.as_str()),
                        format!("use one of: {}", m.supports.join(", ")),
                    );
                }
            }
            if disks > 0 && hot_spares < disks {
                let data = disks - hot_spares;
                if let Err(why) = r.check_data_disks(data) {
                    let spares_note = if hot_spares > 0 {
                        format!(" ({disks} disks − {hot_spares} hot spare{})", plural(hot_spares))
                    } else {
                        String::new()
                    };
                    let fix = raid_fix(r, data, hot_spares);
                    self.err(Some(n.pos), &raid_path, format!("{why}{spares_note}"), fix);
                }
            }
        }
        Array {
            name: a.name,
            rack,
            model,
            disk_model: a.disk_model.map(|(m, _)| m).unwrap_or_default(),
            disks,
            disk_size_bytes: a.disk_size_bytes.map(|(b, _)| b),
            hot_spares: hot_spares.min(disks),
            write_cache: a.write_cache.unwrap_or(!a.internal),
            owner,
            raid: a.raid.map(|(r, _)| r),
        }
    }

    fn workload(&mut self, node: Option<&Node>) -> Workload {
        let mut out = Workload::default();
        let Some(w) = node.and_then(|n| self.obj(n, "workload", "the workload", WORKLOAD_KEYS)) else {
            return out;
        };
        // Streams, KV buckets and object stores are all streams inside nats-server: one namespace.
        let mut names: HashMap<String, Seen> = HashMap::new();
        // Every stream's subjects so far, with its name and place: nats-server refuses overlapping ones.
        let mut subject_owners: Vec<(String, String, String)> = Vec::new();
        for (i, n) in self
            .list(
                w.get("streams"),
                "workload.streams",
                "[{ name: orders, msgs_per_s: 20000, ... }]",
            )
            .iter()
            .enumerate()
        {
            let p = format!("workload.streams[{i}]");
            let Some(o) = self.obj(n, &p, "a stream", STREAM_KEYS) else {
                continue;
            };
            let name = self.asset_name(&o, &mut names, "orders");
            let msgs_per_s = self
                .req(&o, "msgs_per_s", "20000")
                .and_then(|n| self.rate(n, &o.p("msgs_per_s"), "messages per second"));
            let msg_size_bytes = self
                .req(&o, "msg_size", "1KiB")
                .and_then(|n| self.size(n, &o.p("msg_size")));
            let retention_s = self.retention(&o, true);
            let subject_bytes = o.get("subject_size").and_then(|n| self.size(n, &o.p("subject_size")));
            let max_bytes = o
                .get("max_bytes")
                .and_then(|n| self.size_nonzero(n, &o.p("max_bytes"), "max_bytes"));
            let replicas = o.get("replicas").and_then(|n| self.replicas(n, &o.p("replicas")));
            let consumers = o
                .get("consumers")
                .and_then(|n| self.count_u32(n, &o.p("consumers"), "durable consumers", "2"));
            let subjects = o
                .get("subjects")
                .map(|n| self.subjects(n, &o.p("subjects")))
                .unwrap_or_default();
            for (subj, pos, at) in &subjects {
                if let Some((other, theirs_at, theirs)) = subject_owners
                    .iter()
                    .find(|(_, _, theirs)| crate::units::subjects_overlap(subj, theirs))
                {
                    self.err(
                        Some(*pos),
                        at.clone(),
                        format!(
                            "subject '{subj}' overlaps '{theirs}' of stream {other} ({theirs_at}); nats-server \
                             refuses streams whose subjects overlap"
                        ),
                        "give each stream its own subjects (e.g. orders.> and payments.>)",
                    );
                } else {
                    subject_owners.push((name.clone(), at.clone(), subj.clone()));
                }
            }
            let subjects: Vec<String> = subjects.into_iter().map(|(s, _, _)| s).collect();
            out.streams.push(StreamSpec {
                name,
                msgs_per_s: msgs_per_s.unwrap_or(0.0),
                msg_size_bytes: msg_size_bytes.unwrap_or(0),
                subject_bytes: subject_bytes.unwrap_or(32),
                retention_s: retention_s.unwrap_or(0.0),
                replicas,
                consumers: consumers.unwrap_or(0),
                max_bytes,
                subjects,
            });
        }
        for (i, n) in self
            .list(
                w.get("kv"),
                "workload.kv",
                "[{ name: sessions, puts_per_s: 3000, ... }]",
            )
            .iter()
            .enumerate()
        {
            let p = format!("workload.kv[{i}]");
            let Some(o) = self.obj(n, &p, "a KV bucket", KV_KEYS) else {
                continue;
            };
            let name = self.asset_name(&o, &mut names, "sessions");
            let puts_per_s = self
                .req(&o, "puts_per_s", "3000")
                .and_then(|n| self.rate(n, &o.p("puts_per_s"), "puts per second"));
            let value_size_bytes = self
                .req(&o, "value_size", "512B")
                .and_then(|n| self.size(n, &o.p("value_size")));
            let key_bytes = o.get("key_size").and_then(|n| self.size(n, &o.p("key_size")));
            let keys = self.req(&o, "keys", "1000000").and_then(|n| {
                let k = self.count_u64(n, &o.p("keys"), "a key count", "1000000")?;
                if k == 0 {
                    self.err(
                        Some(n.pos),
                        o.p("keys"),
                        "a bucket needs at least one key",
                        "give how many distinct keys the bucket holds",
                    );
                }
                Some(k)
            });
            let history = o
                .get("history")
                .and_then(|n| {
                    let h = self.whole(n, &o.p("history"), "history", i64::MIN, i64::MAX, "1")?;
                    if !(1..=64).contains(&h) {
                        self.err(
                            Some(n.pos),
                            o.p("history"),
                            format!("history must be 1..64 (nats-server's limit), got {h}"),
                            "use 1 (latest value only) up to 64 values per key",
                        );
                        return None;
                    }
                    Some(h as u32)
                })
                .unwrap_or(1);
            let replicas = o.get("replicas").and_then(|n| self.replicas(n, &o.p("replicas")));
            out.kv.push(KvSpec {
                name,
                puts_per_s: puts_per_s.unwrap_or(0.0),
                value_size_bytes: value_size_bytes.unwrap_or(0),
                key_bytes: key_bytes.unwrap_or(32),
                keys: keys.unwrap_or(0),
                history,
                replicas,
            });
        }
        for (i, n) in self
            .list(
                w.get("object_stores"),
                "workload.object_stores",
                "[{ name: blobs, puts_per_s: 50, ... }]",
            )
            .iter()
            .enumerate()
        {
            let p = format!("workload.object_stores[{i}]");
            let Some(o) = self.obj(n, &p, "an object store", OBJ_KEYS) else {
                continue;
            };
            let name = self.asset_name(&o, &mut names, "blobs");
            let puts_per_s = self
                .req(&o, "puts_per_s", "50")
                .and_then(|n| self.rate(n, &o.p("puts_per_s"), "puts per second"));
            let gets_per_s = o.get("gets_per_s").and_then(|n| {
                let x = self.number(n, &o.p("gets_per_s"), "gets per second", "20")?;
                if x < 0.0 {
                    self.err(
                        Some(n.pos),
                        o.p("gets_per_s"),
                        format!("gets per second cannot be negative, got {}", fmt_num(x)),
                        "write 0 or more",
                    );
                    return None;
                }
                Some(x)
            });
            let object_size_bytes = self
                .req(&o, "object_size", "1MiB")
                .and_then(|n| self.size_nonzero(n, &o.p("object_size"), "object_size"));
            let retention_s = self.retention(&o, false);
            let objects = o
                .get("objects")
                .and_then(|n| self.count_u64(n, &o.p("objects"), "an object count", "10000"));
            if !o.has("retention") && !o.has("objects") {
                self.err(
                    Some(o.pos),
                    &p,
                    "an object store needs retention or objects",
                    "add retention: 7d, or objects: N (how many are kept)",
                );
            }
            let replicas = o.get("replicas").and_then(|n| self.replicas(n, &o.p("replicas")));
            out.object_stores.push(ObjectStoreSpec {
                name,
                puts_per_s: puts_per_s.unwrap_or(0.0),
                gets_per_s: gets_per_s.unwrap_or(0.0),
                object_size_bytes: object_size_bytes.unwrap_or(0),
                retention_s,
                objects,
                replicas,
            });
        }
        if let Some(c) = w.get("core") {
            if let Some(o) = self.obj(c, "workload.core", "core NATS traffic", CORE_KEYS) {
                let msgs_per_s = self
                    .req(&o, "msgs_per_s", "500000")
                    .and_then(|n| self.rate(n, &o.p("msgs_per_s"), "messages per second"));
                let msg_size_bytes = self
                    .req(&o, "msg_size", "128B")
                    .and_then(|n| self.size(n, &o.p("msg_size")));
                out.core = Some(CoreSpec {
                    msgs_per_s: msgs_per_s.unwrap_or(0.0),
                    msg_size_bytes: msg_size_bytes.unwrap_or(0),
                });
            }
        }
        out
    }

    /// A stream, bucket or object store name: required, usable by nats-server, unique among all three.
    fn asset_name(&mut self, o: &Obj<'_>, names: &mut HashMap<String, Seen>, example: &str) -> String {
        let Some(n) = self.req(o, "name", example) else {
            return String::new();
        };
        let Some(name) = self.text(n, &o.p("name"), example) else {
            return String::new();
        };
        // nats-server rejects these in stream names (subjects and file paths are built from them).
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || ".*>/\\".contains(c)) {
            self.err(
                Some(n.pos),
                o.p("name"),
                format!("'{}' is not a valid name for nats-server", clip(&name)),
                format!("use letters, digits, '-' and '_' (no spaces, '.', '*', '>', '/' or '\\'), e.g. {example}"),
            );
        }
        match names.get(&name) {
            Some(first) => self.err(
                Some(n.pos),
                o.p("name"),
                format!("duplicate asset name '{name}' (first on line {})", first.line),
                "streams, KV buckets and object stores need unique names (they are all streams in nats-server)",
            ),
            None => {
                names.insert(
                    name.clone(),
                    Seen {
                        line: n.pos.line,
                        rack: None,
                    },
                );
            }
        }
        name
    }

    fn retention(&mut self, o: &Obj<'_>, required: bool) -> Option<f64> {
        let n = if required {
            self.req(o, "retention", "24h")?
        } else {
            o.get("retention")?
        };
        let s = self.duration_s(n, &o.p("retention"))?;
        if s <= 0.0 {
            self.err(
                Some(n.pos),
                o.p("retention"),
                "retention cannot be zero",
                "write how long messages are kept, e.g. 24h or 7d",
            );
            return None;
        }
        Some(s)
    }

    fn policy(&mut self, node: Option<&Node>) -> Policy {
        let mut out = Policy {
            patterns: vec![Pattern::P1, Pattern::P2, Pattern::P3, Pattern::P4],
            wear_headroom: 0.15,
            hot_spares_per_array: 1,
            min_tolerated: Tolerance::default(),
            min_tolerated_meta: false,
            growth: 0.0,
            horizon_s: YEAR_S,
            fs_reserve: 0.05,
            store_headroom: 0.1,
            baselines: true,
        };
        let Some(o) = node.and_then(|n| self.obj(n, "policy", "the policy", POLICY_KEYS)) else {
            return out;
        };
        if let Some(n) = o.get("patterns") {
            let mut patterns = Vec::new();
            let items = self.list(Some(n), "policy.patterns", "[\"1\", \"2\", \"3\", \"4\"]");
            for (i, x) in items.iter().enumerate() {
                let p = format!("policy.patterns[{i}]");
                let Some(s) = self.text(x, &p, "\"1\"") else { continue };
                match Pattern::parse(&s) {
                    Some(pt) if !patterns.contains(&pt) => patterns.push(pt),
                    Some(_) => {}
                    None => {
                        let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.as_str()).collect();
                        let msg = match nearest(&s, names.iter().copied()).filter(|_| s.len() > 2) {
                            Some(near) => format!("unknown pattern '{}'; did you mean '{near}'?", clip(&s)),
                            None => format!("unknown pattern '{}'", clip(&s)),
                        };
                        self.err(
                            Some(x.pos),
                            p,
                            msg,
                            "use \"1\", \"2\", \"3\", \"4\", \"ddp-raid1\" or \"raid6\"",
                        );
                    }
                }
            }
            if items.is_empty() && matches!(n.val, Val::Seq(_)) {
                self.err(
                    Some(n.pos),
                    "policy.patterns",
                    "no patterns to evaluate",
                    "list at least one, e.g. [\"1\", \"2\"], or remove the key for all four",
                );
            }
            out.patterns = patterns;
        }
        out.wear_headroom = self.fraction(
            &o,
            "wear_headroom",
            0.0,
            0.9,
            0.15,
            "0.15 leaves 15 % of each SSD empty for wear levelling",
        );
        if let Some(n) = o.get("hot_spares_per_array") {
            if let Some(h) = self.count_u32(n, "policy.hot_spares_per_array", "hot spares", "1") {
                out.hot_spares_per_array = h;
            }
        }
        if let Some(n) = o.get("min_tolerated") {
            if let Some(t) = self.obj(n, "policy.min_tolerated", "the failures to survive", TOLERANCE_KEYS) {
                for (key, slot) in [
                    ("racks", &mut out.min_tolerated.racks),
                    ("arrays", &mut out.min_tolerated.arrays),
                    ("servers", &mut out.min_tolerated.servers),
                    ("disks", &mut out.min_tolerated.disks),
                ] {
                    if let Some(v) = t.get(key) {
                        if let Some(x) = self.count_u32(v, &t.p(key), "a failure count", "1") {
                            *slot = x;
                        }
                    }
                }
                if let Some(v) = t.get("meta") {
                    if let Some(b) = self.boolean(v, &t.p("meta")) {
                        out.min_tolerated_meta = b;
                    }
                }
            }
        }
        if let Some(n) = o.get("growth") {
            if let Some(g) = self.number(n, "policy.growth", "yearly growth as a fraction", "0.3") {
                if g < 0.0 {
                    self.err(
                        Some(n.pos),
                        "policy.growth",
                        format!("must be >= 0, got {}", fmt_num(g)),
                        "write the yearly growth as a fraction: 0.3 for 30 % a year, 0 for none",
                    );
                } else {
                    if g > 10.0 {
                        // 1000 %/yr is almost surely "30" meant as 30 %.
                        self.err(
                            Some(n.pos),
                            "policy.growth",
                            format!(
                                "growth is a fraction per year; {} means {} % a year",
                                fmt_num(g),
                                fmt_num(g * 100.0)
                            ),
                            format!("for {} % a year write {}", fmt_num(g), fmt_num(g / 100.0)),
                        );
                    }
                    out.growth = g;
                }
            }
        }
        if let Some(n) = o.get("horizon") {
            if let Some(h) = self.duration_s(n, "policy.horizon") {
                out.horizon_s = h;
            }
        }
        out.fs_reserve = self.fraction(
            &o,
            "fs_reserve",
            0.0,
            0.5,
            0.05,
            "the filesystem's reserve and metadata",
        );
        out.store_headroom = self.fraction(
            &o,
            "store_headroom",
            0.0,
            0.9,
            0.1,
            "the part of max_file_store kept free",
        );
        if let Some(n) = o.get("baselines") {
            if let Some(b) = self.boolean(n, "policy.baselines") {
                out.baselines = b;
            }
        }
        out
    }

    /// A mapping of overrides keyed by the catalog's names (`failure_rates`, `repair_times`,
    /// `maintenance`): unknown keys are reported with suggestions, each value is read by `value`.
    fn overrides(
        &mut self,
        node: Option<&Node>,
        path: &str,
        what: &str,
        keys: Vec<String>,
        value: impl Fn(&mut Self, &str, &Node, &str) -> Option<f64>,
    ) -> Vec<(String, f64)> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let Some(o) = node.and_then(|n| self.obj(n, path, what, &keys)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, _, v) in &o.entries {
            if !keys.contains(&k.as_str()) || v.is_null() {
                continue;
            }
            if let Some(x) = value(self, k, v, &o.p(k)) {
                out.push((k.clone(), x));
            }
        }
        out
    }

    /// `x` when it is 0 or more; otherwise a problem at `node` with `fix`.
    fn non_negative(&mut self, x: f64, node: &Node, path: &str, fix: &str) -> Option<f64> {
        if x < 0.0 {
            self.err(Some(node.pos), path, format!("must be >= 0, got {}", fmt_num(x)), fix);
            return None;
        }
        Some(x)
    }

    fn failure_rates(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.rates.keys().cloned().collect();
        self.overrides(node, "failure_rates", "failure-rate overrides", keys, |me, k, v, p| {
            let x = me.number(v, p, "events per year (or a fraction)", "0.01")?;
            let x = me.non_negative(x, v, p, "a rate is events per year per unit: write 0 or more")?;
            if (k.ends_with("afr") || k == "not_return_after_power") && x > 1.0 {
                me.err(
                    Some(v.pos),
                    p,
                    format!(
                        "{k} is a fraction per year; {} means {} %",
                        fmt_num(x),
                        fmt_num(x * 100.0)
                    ),
                    format!("for {} % write {}", fmt_num(x), fmt_num(x / 100.0)),
                );
                return None;
            }
            Some(x)
        })
    }

    fn repair_times(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.repair.keys().cloned().collect();
        self.overrides(node, "repair_times", "repair-time overrides", keys, |me, k, v, p| {
            if k != "rebuild_rate" {
                return me.duration_s(v, p);
            }
            // A rate: bytes per second, written as a size (`200MB` or `200MB/s`).
            let stripped = match &v.val {
                Val::Scalar(s) if s.text.ends_with("/s") => Some(Node {
                    val: Val::Scalar(yaml::Scalar {
                        text: s.text.trim_end_matches("/s").to_string(),
                        plain: true,
                    }),
                    pos: v.pos,
                }),
                _ => None,
            };
            me.size_nonzero(stripped.as_ref().unwrap_or(v), p, "rebuild_rate")
                .map(|b| b as f64)
        })
    }

    fn maintenance(&mut self, node: Option<&Node>) -> Vec<(String, f64)> {
        let keys = self.catalog.failures.maintenance.keys().cloned().collect();
        self.overrides(
            node,
            "maintenance",
            "planned-maintenance overrides",
            keys,
            |me, k, v, p| {
                // `restart_stall` is a duration; the others are events per year.
                if k == "restart_stall" {
                    return me.duration_s(v, p);
                }
                let x = me.number(v, p, "events per year", "12")?;
                me.non_negative(x, v, p, "write how many times a year, 0 or more")
            },
        )
    }
}

/// How to meet a RAID level's disk-count rule from `data` data disks.
fn raid_fix(r: RaidChoice, data: u32, hot_spares: u32) -> String {
    let spares = if hot_spares > 0 {
        format!(" (plus {hot_spares} hot spare{})", plural(hot_spares))
    } else {
        String::new()
    };
    match r {
        RaidChoice::Raid0 => "add a data disk".into(),
        RaidChoice::Raid1 if data >= 4 && data % 2 == 0 => {
            format!("use raid: raid10 for {data} disks (RAID 1 with more than 2 disks is RAID 10)")
        }
        RaidChoice::Raid1 if data > 2 => format!(
            "use raid10 with {} data disks, or raid1 with 2{spares}",
            if data >= 4 { data - 1 } else { 4 }
        ),
        RaidChoice::Raid1 => format!("use 2 data disks{spares}"),
        RaidChoice::Raid10 if data == 2 => "use raid: raid1 for a mirrored pair".into(),
        RaidChoice::Raid10 if data >= 4 => format!(
            "use {} or {} data disks{spares}: RAID 10 mirrors pairs",
            data - 1,
            data + 1
        ),
        RaidChoice::Raid10 => format!("use 4 data disks{spares}, or raid1 with 2"),
        RaidChoice::Raid6 => format!(
            "add {} disk{}, or use raid10 / raid1 for small groups",
            5 - data,
            plural(5 - data)
        ),
        RaidChoice::Ddp => format!(
            "add {} disk{}, or use raid6 (5 or more) or raid10 for fewer disks",
            11 - data,
            plural(11 - data)
        ),
    }
}

/// The problem part of a units.rs message ("x is not a size; write e.g. …"): the fix line says the rest.
fn first_clause(msg: &str) -> String {
    ["; write", "; use"]
        .iter()
        .filter_map(|sep| msg.find(sep))
        .min()
        .map_or_else(|| msg.to_string(), |i| msg[..i].to_string())
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A number for messages: no trailing `.0` on whole numbers.
fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `1_000_000` (YAML 1.2 reads it as text) as a number.
fn underscored_number(t: &str) -> Option<f64> {
    if !t.contains('_') || t.starts_with('_') || t.ends_with('_') {
        return None;
    }
    let s = t.replace('_', "");
    if s.bytes()
        .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+')
    {
        s.parse().ok()
    } else {
        None
    }
}

fn empty_site() -> Site {
    Site {
        name: String::new(),
        nats: NatsSettings {
            replicas: vec![3],
            sync: SyncMode::Interval(120),
            compression: Compression::None,
            compression_ratio: 1.0,
            cluster_name: "natsplan".into(),
            max_ha_assets: None,
        },
        racks: Vec::new(),
        servers: Vec::new(),
        arrays: Vec::new(),
        workload: Workload::default(),
        policy: Policy {
            patterns: Vec::new(),
            wear_headroom: 0.15,
            hot_spares_per_array: 1,
            min_tolerated: Tolerance::default(),
            min_tolerated_meta: false,
            growth: 0.0,
            horizon_s: YEAR_S,
            fs_reserve: 0.05,
            store_headroom: 0.1,
            baselines: true,
        },
        failure_rates: Vec::new(),
        repair_times: Vec::new(),
        maintenance: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
site: east-dc
nats: { replicas: [3, 5], sync_interval: 2m, compression: none, compression_ratio: 1.0 }
racks:
  - name: A
    servers: [alpha, bravo]
    arrays:
      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }
  - name: B
    servers: [charlie, delta]
    arrays:
      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }
  - name: C
    servers: [echo]
    arrays:
      - { name: C1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }
workload:
  streams:       [{ name: orders, msgs_per_s: 20000, msg_size: 1KiB, retention: 24h, replicas: 3, consumers: 2 }]
  kv:            [{ name: sessions, puts_per_s: 3000, value_size: 512B, keys: 1000000, history: 1 }]
  object_stores: [{ name: blobs, puts_per_s: 50, gets_per_s: 20, object_size: 1MiB, retention: 6h }]
  core:          { msgs_per_s: 500000, msg_size: 128B }
policy: { patterns: ["1", "2", "3", "4"], wear_headroom: 0.15, hot_spares_per_array: 1,
          min_tolerated: { racks: 1 }, growth: 0.3, horizon: 1y }
failure_rates: { disk_afr: 0.01 }
"#;

    fn parse(t: &str) -> Result<Site, SiteErrors> {
        parse_str(t, "site.yaml", &Catalog::builtin())
    }

    #[test]
    fn issue_sample_parses() {
        let s = parse(SAMPLE).unwrap();
        assert_eq!(s.name, "east-dc");
        assert_eq!(s.racks.len(), 3);
        assert_eq!(s.servers.len(), 5);
        assert_eq!(s.arrays.len(), 3);
        assert_eq!(s.arrays[2].hot_spares, 1);
        assert_eq!(s.nats.replicas, vec![3, 5]);
        assert_eq!(s.workload.streams[0].msg_size_bytes, 1024);
        assert_eq!(s.workload.streams[0].retention_s, 86_400.0);
        assert_eq!(s.workload.kv[0].keys, 1_000_000);
        assert_eq!(s.workload.object_stores[0].retention_s, Some(21_600.0));
        assert_eq!(s.policy.min_tolerated.racks, 1);
        assert_eq!(s.failure_rates, vec![("disk_afr".to_string(), 0.01)]);
        assert_eq!(s.servers[4].rack, 2);
        assert_eq!(s.arrays[0].raid, None);
    }

    #[test]
    fn nearest_finds_typos_not_strangers() {
        assert_eq!(nearest("disk_modle", ARRAY_KEYS.iter().copied()), Some("disk_model"));
        assert_eq!(nearest("nvme-3.8t", ["nvme-3.84t", "nvme-1.92t"]), Some("nvme-3.84t"));
        assert_eq!(nearest("colour", ARRAY_KEYS.iter().copied()), None);
    }

    #[test]
    fn errors_are_sorted_by_place_and_all_reported() {
        let t = SAMPLE
            .replace(
                "disks: 3, hot_spares: 1 }\n  - name: B",
                "disks: three, hot_spares: 1 }\n  - name: B",
            )
            .replace("name: C1, model", "name: C1, colour: red, model");
        let e = parse(&t).unwrap_err();
        assert_eq!(e.errors.len(), 2, "{e}");
        assert!(e.errors[0].line < e.errors[1].line);
        assert!(e.errors[0].message.contains("whole number"));
        assert!(e.errors[1].message.contains("unknown key 'colour'"));
    }

    #[test]
    fn raid_rules() {
        assert!(RaidChoice::Raid10.check_data_disks(4).is_ok());
        assert!(RaidChoice::Raid10.check_data_disks(5).is_err());
        assert!(RaidChoice::Raid10.check_data_disks(2).is_err());
        assert!(RaidChoice::Raid1.check_data_disks(2).is_ok());
        assert!(RaidChoice::Raid1.check_data_disks(4).is_err());
        assert!(RaidChoice::Raid6.check_data_disks(5).is_ok());
        assert!(RaidChoice::Raid6.check_data_disks(4).is_err());
        assert!(RaidChoice::Ddp.check_data_disks(11).is_ok());
        assert!(RaidChoice::Ddp.check_data_disks(10).is_err());
        assert_eq!(RaidChoice::parse("RAID 10"), Some(RaidChoice::Raid10));
        assert_eq!(RaidChoice::parse("DDP"), Some(RaidChoice::Ddp));
        assert_eq!(RaidChoice::parse("raid5"), None);
    }

    #[test]
    fn display_is_one_line_per_problem_with_a_fix() {
        let e = parse(&SAMPLE.replace("nvme-3.84t, disks: 2", "nvme-3.8t, disks: 2")).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("site.yaml has 1 problem:\n"), "{text}");
        assert!(
            text.contains(
                "site.yaml:16:47: racks[2].arrays[0].disk_model: unknown disk model 'nvme-3.8t'; did you mean 'nvme-3.84t'?\n      fix: write nvme-3.84t;"
            ),
            "{text}"
        );
    }
}
