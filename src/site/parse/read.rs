//! The validator and its readers of single values (mappings, lists, text, names, numbers, sizes,
//! durations): each reports its own problem with place, path and fix, and returns None on one.

use super::keys::*;
use crate::catalog::Catalog;
use crate::input::limits::MAX_NAME_BYTES;
use crate::input::yaml::{clip, Node, Pos, Typed, Val};
use crate::input::InputError;
use crate::site::model::*;
use crate::units::{parse_duration, parse_size};
use std::collections::HashMap;

/// A mapping being read: its entries by key (first occurrence), where it is and its path.
pub(super) struct Obj<'n> {
    pub(super) path: String,
    pub(super) pos: Pos,
    pub(super) entries: Vec<(String, &'n Node, &'n Node)>,
    /// Unknown keys (already reported), so a misspelt required key is not reported twice.
    pub(super) unknown: Vec<String>,
}

impl<'n> Obj<'n> {
    /// The value of `key`, or None when absent or empty (`key:` with nothing after it means "not given").
    pub(super) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| k == key)
            .map(|(_, _, v)| *v)
            .filter(|v| !v.is_null())
    }
    pub(super) fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _, _)| k == key)
    }
    pub(super) fn key_pos(&self, key: &str) -> Option<Pos> {
        self.entries.iter().find(|(k, _, _)| k == key).map(|(_, k, _)| k.pos)
    }
    pub(super) fn p(&self, key: &str) -> String {
        join(&self.path, key)
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// First place and path a name was seen, for "duplicate" messages that point at both.
pub(super) struct Seen {
    pub(super) line: usize,
    pub(super) rack: Option<RackIdx>,
}

pub(super) struct Validator<'c> {
    pub(super) errors: Vec<InputError>,
    pub(super) catalog: &'c Catalog,
    /// Reads the files the site names (`workload.streams[].config`).
    pub(super) files: super::SiteFiles<'c>,
}

impl<'c> Validator<'c> {
    pub(super) fn err(
        &mut self,
        at: Option<Pos>,
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.errors.push(InputError {
            path: path.into(),
            line: at.map(|p| p.line),
            column: at.map(|p| p.col),
            message: message.into(),
            fix: Some(fix.into()),
        });
    }

    // ---- shapes ----

    /// Read a mapping, reporting non-text keys, duplicate keys and unknown keys (with a suggestion).
    pub(super) fn obj<'n>(&mut self, node: &'n Node, path: &str, what: &str, keys: &[&str]) -> Option<Obj<'n>> {
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
        let mut first_line: HashMap<&str, usize> = HashMap::new();
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
            // A map from key to its first line keeps this linear (a scan of the entries so far is
            // quadratic in the mapping's keys).
            if let Some(&line) = first_line.get(key.as_str()) {
                self.err(
                    Some(k.pos),
                    join(path, &key),
                    format!("key '{key}' is given twice (first on line {line})"),
                    "keep one of them",
                );
                continue;
            }
            if let Val::Scalar(s) = &k.val {
                first_line.insert(s.text.as_str(), k.pos.line);
            }
            if !keys.contains(&key.as_str()) {
                self.unknown_key(k.pos, path, &key, keys);
                obj.unknown.push(key.clone());
            }
            obj.entries.push((key, k, v));
        }
        Some(obj)
    }

    pub(super) fn unknown_key(&mut self, at: Pos, path: &str, key: &str, keys: &[&str]) {
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
    pub(super) fn req<'n>(&mut self, o: &Obj<'n>, key: &str, example: &str) -> Option<&'n Node> {
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
    pub(super) fn list<'n>(&mut self, node: Option<&'n Node>, path: &str, example: &str) -> &'n [Node] {
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
    pub(super) fn text(&mut self, node: &Node, path: &str, example: &str) -> Option<String> {
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
    pub(super) fn subjects(&mut self, node: &Node, path: &str) -> Vec<(String, Pos, String)> {
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
            } else if let Some(why) = crate::units::reserved_subject(&subj) {
                self.err(
                    Some(n.pos),
                    at,
                    format!("subject '{}' {why}", clip(&subj)),
                    "give the stream's own subjects, e.g. orders.> (natsplan's streams acknowledge every publish)",
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
    /// nats-server itself only refuses spaces in `server_name` (server/server.go `validateOptions`); the
    /// narrower set here is what layout ids, selectors, tags and folder names (emit, lab) can carry.
    pub(super) fn name(
        &mut self,
        node: &Node,
        path: &str,
        kind: &str,
        example: &str,
        allow_dot: bool,
    ) -> Option<String> {
        let n = self.text(node, path, example)?;
        let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || (allow_dot && c == '.');
        if n.len() > MAX_NAME_BYTES {
            self.err(
                Some(node.pos),
                path,
                format!(
                    "{kind} name is {} bytes long; at most {MAX_NAME_BYTES} (it becomes a folder name in emit and lab)",
                    n.len()
                ),
                format!("shorten it, e.g. {example}"),
            );
        } else if n.starts_with('.') {
            // `.` and `..` name the folder itself or its parent when used as a folder name (emit, lab).
            self.err(
                Some(node.pos),
                path,
                format!("{kind} name '{}' starts with '.'", clip(&n)),
                format!("start it with a letter or digit, e.g. {example} (names become folder names in emit and lab)"),
            );
        } else if n.is_empty() || !n.chars().all(ok_char) {
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
    pub(super) fn number(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<f64> {
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
    pub(super) fn whole(
        &mut self,
        node: &Node,
        path: &str,
        what: &str,
        min: i64,
        max: i64,
        example: &str,
    ) -> Option<i64> {
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

    pub(super) fn count_u32(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<u32> {
        self.whole(node, path, what, 0, u32::MAX as i64, example)
            .map(|x| x as u32)
    }

    pub(super) fn count_u64(&mut self, node: &Node, path: &str, what: &str, example: &str) -> Option<u64> {
        self.whole(node, path, what, 0, i64::MAX, example).map(|x| x as u64)
    }

    pub(super) fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
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
    pub(super) fn size(&mut self, node: &Node, path: &str) -> Option<u64> {
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
    pub(super) fn size_nonzero(&mut self, node: &Node, path: &str, what: &str) -> Option<u64> {
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
    pub(super) fn duration_s(&mut self, node: &Node, path: &str) -> Option<f64> {
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
    pub(super) fn rate(&mut self, node: &Node, path: &str, what: &str) -> Option<f64> {
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
        if let Err(why) = crate::input::limits::REQUIRED_RATE_PER_S.check_f64(x) {
            self.err(
                Some(node.pos),
                path,
                format!("{what} {}: {why}", fmt_num(x)),
                "give the rate per second the workload needs (check the unit: per second, not per day)",
            );
            return None;
        }
        Some(x)
    }

    /// A fraction in `lo..hi` (hi exclusive).
    pub(super) fn fraction(&mut self, o: &Obj<'_>, key: &str, lo: f64, hi: f64, default: f64, hint: &str) -> f64 {
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

    pub(super) fn replicas(&mut self, node: &Node, path: &str) -> Option<u8> {
        let r = self.whole(node, path, "replicas", i64::MIN, i64::MAX, "3")?;
        let b = crate::input::limits::REPLICAS;
        if (b.min as i64..=b.max as i64).contains(&r) {
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
    pub(super) fn model_check(&mut self, node: &Node, path: &str, kind: &str, name: &str, known: &[&str]) -> bool {
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
}

/// The problem part of a units.rs message ("x is not a size; write e.g. …"): the fix line says the rest.
pub(super) fn first_clause(msg: &str) -> String {
    ["; write", "; use"]
        .iter()
        .filter_map(|sep| msg.find(sep))
        .min()
        .map_or_else(|| msg.to_string(), |i| msg[..i].to_string())
}

/// A number for messages: no trailing `.0` on whole numbers.
pub(super) fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `1_000_000` (YAML 1.2 reads it as text) as a number.
pub(super) fn underscored_number(t: &str) -> Option<f64> {
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
