//! `workload.streams[].config: FILE`: a stream defined by the StreamConfig JSON `nats stream add --config`
//! takes (read by `stream_config`), its traffic (`msgs_per_s`, `msg_size`) beside it in the site file. A
//! problem in the file is reported at the `config:` value with the file's own `FILE:LINE:COL` first, so
//! both places are named.

use super::read::*;
use super::stream_config::{self, StreamDef};
use crate::input::yaml::{Node, Pos};
use std::collections::HashMap;

/// Bytes each stored message adds to payload and subject: the capacity model's record overhead
/// (`layout::sizing::RECORD_OVERHEAD_BYTES`, ARCHITECTURE.md "Capacity"), used to turn max_msgs into bytes.
const RECORD_OVERHEAD_BYTES: u64 = 30;

/// The entry's limits the file may set (each refused when both give it).
pub(super) struct Limits<'a> {
    pub(super) replicas: &'a mut Option<u8>,
    pub(super) max_bytes: &'a mut Option<u64>,
    /// (subject, place, field path), as `Validator::subjects` reads them.
    pub(super) subjects: &'a mut Vec<(String, Pos, String)>,
}

/// What a stream's site entry takes from its config file, after the checks against the entry's keys.
pub(super) struct FromFile {
    pub(super) def: StreamDef,
    /// The file as written in the site (for messages).
    pub(super) file: String,
}

impl Validator<'_> {
    /// Read and map the file `config:` names; None (with problems reported) when it cannot be used.
    pub(super) fn stream_file(&mut self, n: &Node, path: &str) -> Option<FromFile> {
        let file = self.text(n, path, "orders.json")?;
        let text = match (self.files)(&file) {
            Ok(t) => t,
            Err(why) => {
                self.err(
                    Some(n.pos),
                    path,
                    format!("cannot read {file}: {why}"),
                    "give the path of a StreamConfig JSON file (as `nats stream add --config` takes), relative to the \
                     site file's folder",
                );
                return None;
            }
        };
        match stream_config::parse(&text, &file) {
            Ok(def) => Some(FromFile { def, file }),
            Err(errs) => {
                for e in errs.errors {
                    let place = match (e.line, e.column) {
                        (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
                        (Some(l), None) => format!("{file}:{l}"),
                        _ => file.clone(),
                    };
                    let field = if e.path.is_empty() {
                        String::new()
                    } else {
                        format!("{}: ", e.path)
                    };
                    self.err(
                        Some(n.pos),
                        path,
                        format!("{place}: {field}{}", e.message),
                        e.fix.unwrap_or_else(|| "fix the file".into()),
                    );
                }
                None
            }
        }
    }

    /// The stream's name from its file; a `name:` beside it must agree, and names stay unique.
    pub(super) fn file_name(&mut self, o: &Obj, f: &FromFile, at: &Node, names: &mut HashMap<String, Seen>) -> String {
        let name = f.def.name.clone();
        if let Some(n) = o.get("name") {
            if let Some(given) = self.text(n, &o.p("name"), "orders") {
                if given != name {
                    self.err(
                        Some(n.pos),
                        o.p("name"),
                        format!("name '{given}' differs from the name in {} ('{name}')", f.file),
                        "drop name: here (the file names the stream), or make them the same",
                    );
                }
            }
        }
        match names.get(&name) {
            Some(first) => self.err(
                Some(at.pos),
                o.p("config"),
                format!(
                    "duplicate asset name '{name}' from {} (first on line {})",
                    f.file, first.line
                ),
                "streams, KV buckets and object stores need unique names (they are all streams in nats-server)",
            ),
            None => {
                names.insert(
                    name.clone(),
                    Seen {
                        line: at.pos.line,
                        rack: None,
                    },
                );
            }
        }
        name
    }

    /// A key given both in the site entry and in the file is refused: one place says it.
    pub(super) fn given_twice(&mut self, o: &Obj, key: &str, f: &FromFile, field: &str) -> bool {
        let Some(n) = o.get(key) else {
            return false;
        };
        self.err(
            Some(n.pos),
            o.p(key),
            format!("{key} is also given by {} ({field})", f.file),
            format!("drop {key}: here, or remove {field} from the file"),
        );
        true
    }

    /// Retention from the file's max_age; with none there, the entry's `retention:` is required.
    pub(super) fn file_retention(&mut self, o: &Obj, f: &FromFile, at: &Node) -> Option<f64> {
        match f.def.max_age_s {
            Some(age) if !self.given_twice(o, "retention", f, "max_age") => Some(age),
            Some(_) => None,
            None => {
                if !o.has("retention") {
                    self.err(
                        Some(at.pos),
                        o.p("config"),
                        format!(
                            "{} has no max_age (0 = kept until max_bytes or max_msgs): natsplan needs how long messages \
                             stay",
                            f.file
                        ),
                        "add retention: here (e.g. 7d; the file's max_age is emitted as written), or set max_age in \
                         the file",
                    );
                }
                self.retention(o, false)
            }
        }
    }

    /// The file's replicas, max_bytes (capped by max_msgs records) and subjects into the entry's.
    pub(super) fn file_limits(
        &mut self,
        o: &Obj,
        f: &FromFile,
        at: &Node,
        l: Limits<'_>,
        msg_size: Option<u64>,
        subject_bytes: Option<u64>,
    ) {
        if f.def.replicas.is_some() && !self.given_twice(o, "replicas", f, "num_replicas") {
            *l.replicas = f.def.replicas;
        }
        if f.def.max_bytes.is_some() && !self.given_twice(o, "max_bytes", f, "max_bytes") {
            *l.max_bytes = f.def.max_bytes;
        }
        if !self.given_twice(o, "subjects", f, "subjects") {
            *l.subjects = f
                .def
                .subjects
                .iter()
                .map(|s| (s.clone(), at.pos, o.p("config")))
                .collect();
        }
        // max_msgs caps the stored bytes at that many records (payload + subject + record overhead).
        if let (Some(m), Some(size)) = (f.def.max_msgs, msg_size) {
            let record = size + subject_bytes.unwrap_or(32) + RECORD_OVERHEAD_BYTES;
            let cap = m.saturating_mul(record);
            *l.max_bytes = Some(l.max_bytes.map_or(cap, |b| b.min(cap)));
        }
        if let (Some(limit), Some(size)) = (f.def.max_msg_size, msg_size) {
            if size > limit {
                self.err(
                    o.get("msg_size").map(|n| n.pos),
                    o.p("msg_size"),
                    format!(
                        "msg_size {size} B is over the max_msg_size of {} ({limit} B): nats-server would refuse every \
                         message",
                        f.file
                    ),
                    "raise max_msg_size in the file, or give the real message size",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;

    const SITE: &str = "site: s\nracks:\n  - name: A\n    servers: [a1, a2, a3]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7 }\nworkload:\n  streams:\n";

    fn parse(entries: &str, file: &str) -> Result<crate::site::Site, crate::input::InputErrors> {
        let text = format!("{SITE}{entries}");
        let f = file.to_string();
        let read = move |rel: &str| -> Result<String, String> {
            if rel == "orders.json" {
                Ok(f.clone())
            } else {
                Err("no such file".into())
            }
        };
        crate::site::parse_str_with(&text, "site.yaml", &Catalog::builtin(), &read)
    }

    const ORDERS: &str = r#"{"name": "orders", "subjects": ["orders.>", "refunds.*"], "retention": "workqueue",
 "max_bytes": 1000000000, "max_age": 86400000000000, "max_msgs": 1000, "num_replicas": 3, "discard": "new",
 "storage": "file"}"#;

    #[test]
    fn a_stream_takes_its_definition_from_the_file_and_its_traffic_from_the_site() {
        let s = parse(
            "    - { config: orders.json, msgs_per_s: 100, msg_size: 1KiB, consumers: 2 }\n",
            ORDERS,
        )
        .unwrap();
        let o = &s.workload.streams[0];
        assert_eq!(o.name, "orders");
        assert_eq!(o.subjects, ["orders.>", "refunds.*"]);
        assert_eq!(o.retention_s, 86_400.0);
        assert_eq!(o.replicas, Some(3));
        assert_eq!(o.consumers, 2);
        // max_msgs 1000 records of 1024 + 32 + 30 bytes caps it below max_bytes.
        assert_eq!(o.max_bytes, Some(1000 * (1024 + 32 + 30)));
        assert_eq!(s.workload.stream_configs["orders"]["discard"], "new");
    }

    #[test]
    fn file_problems_name_both_places_and_conflicts_are_refused() {
        let bad = ORDERS.replace(r#""storage": "file""#, r#""storage": "memory""#);
        let e = parse("    - { config: orders.json, msgs_per_s: 100, msg_size: 1KiB }\n", &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("site.yaml:9:17: workload.streams[0].config: orders.json:3:"),
            "{e}"
        );
        assert!(e.contains("storage: memory storage"), "{e}");
        let e = parse(
            "    - { config: orders.json, name: other, msgs_per_s: 100, msg_size: 1KiB, replicas: 5 }\n",
            ORDERS,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("name 'other' differs from the name in orders.json"), "{e}");
        assert!(
            e.contains("replicas is also given by orders.json (num_replicas)"),
            "{e}"
        );
        let e = parse(
            "    - { config: missing.json, msgs_per_s: 1, msg_size: 1KiB }\n",
            ORDERS,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("cannot read missing.json: no such file"), "{e}");
        let e = parse(
            "    - { config: orders.json, msgs_per_s: 1, msg_size: 1KiB }\n",
            r#"{"name": "orders", "max_age": 0}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("has no max_age"), "{e}");
    }
}
