//! The workload section: streams, KV buckets, object stores and core traffic, one namespace of names.

use super::keys::*;
use super::read::*;
use super::stream_file::Limits;
use crate::input::limits::{
    BATCH, DISTINCT_SUBJECTS, MAX_ASSETS, MAX_CONSUMERS_PER_STREAM, PUBLISHERS, SUBJECTS_PER_STREAM,
};
use crate::input::yaml::{Node, Val};
use crate::site::model::*;
use crate::site::names::NameKind;
use std::collections::HashMap;

impl Validator<'_> {
    pub(super) fn workload(&mut self, node: Option<&Node>) -> Workload {
        let mut out = Workload::default();
        let Some(w) = node.and_then(|n| self.obj(n, "workload", "the workload", WORKLOAD_KEYS)) else {
            return out;
        };
        // Streams, KV buckets and object stores are all streams inside nats-server: one namespace.
        let mut names: HashMap<String, Seen> = HashMap::new();
        for (i, n) in self
            .list(
                w.get("streams"),
                "workload.streams",
                "[{ name: orders, msgs_per_s: 20000, ... }]",
            )
            .iter()
            .enumerate()
        {
            self.stream(n, i, &mut names, &mut out);
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
            self.kv(n, i, &mut names, &mut out);
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
            self.object_store(n, i, &mut names, &mut out);
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
        self.namespace(&out);
        let assets = super::stream_spec::workload_assets(&out);
        if assets > MAX_ASSETS {
            self.err(
                w.key_pos("streams").or(Some(w.pos)),
                "workload",
                format!(
                    "{assets} streams, buckets, object stores and durable consumers; at most {MAX_ASSETS} are planned"
                ),
                "split the site, or plan a representative share of the streams",
            );
        }
        out
    }

    /// `workload.streams[i]`.
    fn stream(&mut self, n: &Node, i: usize, names: &mut HashMap<String, Seen>, out: &mut Workload) {
        let p = format!("workload.streams[{i}]");
        let Some(o) = self.obj(n, &p, "a stream", STREAM_KEYS) else {
            return;
        };
        // A stream may be defined by a StreamConfig file (`config:`), its traffic given here.
        let cfg_node = o.get("config");
        let file = cfg_node.and_then(|n| self.stream_file(n, &o.p("config")));
        let name = match (&file, cfg_node) {
            (Some(f), Some(at)) => self.file_name(&o, f, at, names),
            (None, Some(_)) if !o.has("name") => String::new(),
            _ => self.asset_name(&o, names, "orders", NameKind::Stream),
        };
        let msgs_per_s = self
            .req(&o, "msgs_per_s", "20000")
            .and_then(|n| self.rate(n, &o.p("msgs_per_s"), "messages per second"));
        let msg_size_bytes = self
            .req(&o, "msg_size", "1KiB")
            .and_then(|n| self.size(n, &o.p("msg_size")));
        let retention_s = match (&file, cfg_node) {
            (Some(f), Some(at)) => self.file_retention(&o, f, at),
            // The file could not be read (already reported): retention may have been in it.
            (None, Some(_)) => self.retention(&o, false),
            _ => self.retention(&o, true),
        };
        let subject_bytes = o.get("subject_size").and_then(|n| self.size(n, &o.p("subject_size")));
        let mut max_bytes = o.get("max_bytes").and_then(|n| {
            let b = self.size_nonzero(n, &o.p("max_bytes"), "max_bytes")?;
            if b > i64::MAX as u64 {
                // emit writes it into the stream's configuration, whose max_bytes nats-server reads as an int64.
                self.err(
                    Some(n.pos),
                    o.p("max_bytes"),
                    format!(
                        "max_bytes is {b} bytes, more than nats-server's max_bytes holds (an int64: at most {} \
                         bytes, 8 EiB)",
                        i64::MAX
                    ),
                    "write a cap the stream's store can hold, e.g. 10TiB, or drop max_bytes",
                );
                return None;
            }
            Some(b)
        });
        let mut replicas = o.get("replicas").and_then(|n| self.replicas(n, &o.p("replicas")));
        let consumers = o
            .get("consumers")
            .and_then(|n| {
                self.whole(
                    n,
                    &o.p("consumers"),
                    "durable consumers",
                    0,
                    MAX_CONSUMERS_PER_STREAM as i64,
                    "2 (each durable consumer of a replicated stream is its own RAFT group)",
                )
            })
            .map(|x| x as u32);
        // Bounded before the pairwise overlap check inside `subjects` runs.
        let listed = match o.get("subjects").map(|n| &n.val) {
            Some(Val::Seq(items)) => items.len(),
            _ => 0,
        };
        let mut subjects = match (o.get("subjects"), SUBJECTS_PER_STREAM.check_usize(listed)) {
            (Some(n), Err(e)) => {
                self.err(
                    Some(n.pos),
                    o.p("subjects"),
                    format!("{listed} subjects: {e}"),
                    "capture them with wildcards (orders.>)",
                );
                Vec::new()
            }
            (Some(n), Ok(_)) => self.subjects(n, &o.p("subjects")),
            (None, _) => Vec::new(),
        };
        if let (Some(f), Some(at)) = (&file, cfg_node) {
            let limits = Limits {
                replicas: &mut replicas,
                max_bytes: &mut max_bytes,
                subjects: &mut subjects,
            };
            self.file_limits(&o, f, at, limits, msg_size_bytes, subject_bytes);
            out.stream_configs.insert(name.clone(), f.def.config.clone());
        }
        // Overlaps with other streams' subjects are `namespace`'s, once every asset is read.
        let entry = o.get("name").or(cfg_node).map_or(o.pos, |n| n.pos);
        out.places.streams.push(entry);
        out.places
            .subjects
            .push(subjects.iter().map(|(_, pos, at)| (*pos, at.clone())).collect());
        let subjects: Vec<String> = subjects.into_iter().map(|(s, _, _)| s).collect();
        if let Some(ps) = self.publish_spec(&o) {
            out.publish.insert(name.clone(), ps);
        }
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

    /// nats-server's rules across the workload's streams (`site::streams`): one namespace of stream names
    /// (KV buckets are `KV_<name>`, object stores `OBJ_<name>`) and no two streams' subjects overlapping,
    /// the defaults `emit` writes included. Each clash is reported at the later asset (at its subject when
    /// the user gave it), naming the first with its place.
    fn namespace(&mut self, w: &Workload) {
        use crate::site::streams::{clashes, AssetRef, Clash};
        for c in clashes(w) {
            let (then, first) = c.assets();
            let line = w
                .places
                .of(first)
                .map(|p| format!(", line {}", p.line))
                .unwrap_or_default();
            let (what, fix) = c.message(w, &format!("{}{line}", first.path()));
            let given = match (&c, then) {
                (
                    Clash::Overlap {
                        then_subject,
                        then_default: false,
                        ..
                    },
                    AssetRef::Stream(i),
                ) => w.streams[i]
                    .subjects
                    .iter()
                    .position(|s| s == then_subject)
                    .and_then(|j| w.places.subjects.get(i)?.get(j).cloned()),
                _ => None,
            };
            let (pos, path) = match given {
                Some((pos, at)) => (Some(pos), at),
                None => (w.places.of(then), then.path()),
            };
            self.err(pos, path, what, fix);
        }
    }

    /// `publishers`, `publish: sync|async` and `window` of a stream or bucket (issue 14), and a stream's
    /// `distinct_subjects` (issue 37); None when none given.
    fn publish_spec(&mut self, o: &Obj) -> Option<PublishSpec> {
        let publishers = o
            .get("publishers")
            .and_then(|n| self.whole(n, &o.p("publishers"), "publishers", 1, PUBLISHERS.max as i64, "12"))
            .map(|v| v as u32);
        let window = o
            .get("window")
            .and_then(|n| self.whole(n, &o.p("window"), "publishes in flight", 1, BATCH.max as i64, "256"))
            .map(|v| v as u32);
        let sync = o.get("publish").and_then(|n| {
            let t = self.text(n, &o.p("publish"), "async")?;
            match t.to_ascii_lowercase().as_str() {
                "sync" => Some(true),
                "async" => Some(false),
                other => {
                    self.err(
                        Some(n.pos),
                        o.p("publish"),
                        format!("publish '{other}' is unknown"),
                        "write publish: sync (each publisher waits for its ack) or publish: async (with a window)",
                    );
                    None
                }
            }
        });
        if sync == Some(true) && window.is_some_and(|w| w > 1) {
            if let Some(n) = o.get("window") {
                self.err(
                    Some(n.pos),
                    o.p("window"),
                    "a window of publishes in flight needs publish: async",
                    "drop window, or write publish: async",
                );
            }
        }
        let subjects = o.get("distinct_subjects").and_then(|n| {
            self.whole(
                n,
                &o.p("distinct_subjects"),
                "distinct subjects",
                1,
                DISTINCT_SUBJECTS.max as i64,
                "10000",
            )
            .map(|v| v as u64)
        });
        (publishers.is_some() || sync.is_some() || window.is_some() || subjects.is_some()).then_some(PublishSpec {
            publishers,
            sync,
            window,
            subjects,
        })
    }

    /// `workload.kv[i]`.
    fn kv(&mut self, n: &Node, i: usize, names: &mut HashMap<String, Seen>, out: &mut Workload) {
        let p = format!("workload.kv[{i}]");
        let Some(o) = self.obj(n, &p, "a KV bucket", KV_KEYS) else {
            return;
        };
        let name = self.asset_name(&o, names, "sessions", NameKind::Bucket);
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
        if let Some(ps) = self.publish_spec(&o) {
            out.publish.insert(name.clone(), ps);
        }
        out.places.kv.push(o.get("name").map_or(o.pos, |n| n.pos));
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

    /// `workload.object_stores[i]`.
    fn object_store(&mut self, n: &Node, i: usize, names: &mut HashMap<String, Seen>, out: &mut Workload) {
        let p = format!("workload.object_stores[{i}]");
        let Some(o) = self.obj(n, &p, "an object store", OBJ_KEYS) else {
            return;
        };
        let name = self.asset_name(&o, names, "blobs", NameKind::Bucket);
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
            if let Err(why) = crate::input::limits::REQUIRED_RATE_PER_S.check_f64(x) {
                self.err(
                    Some(n.pos),
                    o.p("gets_per_s"),
                    format!("gets per second {}: {why}", fmt_num(x)),
                    "give the rate per second the workload needs",
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
        out.places.object_stores.push(o.get("name").map_or(o.pos, |n| n.pos));
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

    /// A stream, bucket or object store name: required, usable by nats-server, unique among all three.
    pub(super) fn asset_name(
        &mut self,
        o: &Obj<'_>,
        names: &mut HashMap<String, Seen>,
        example: &str,
        kind: NameKind,
    ) -> String {
        let Some(n) = self.req(o, "name", example) else {
            return String::new();
        };
        let Some(name) = self.text(n, &o.p("name"), example) else {
            return String::new();
        };
        // The name rules live in one function, shared with streams that arrive built (stream_spec.rs).
        if let Some((message, fix)) = super::stream_spec::asset_name_problem(kind, &name, example) {
            self.err(Some(n.pos), o.p("name"), message, fix);
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

    pub(super) fn retention(&mut self, o: &Obj<'_>, required: bool) -> Option<f64> {
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
        // emit writes it as the stream's max_age (and the duplicate window at most that): nats-server refuses
        // either below 100 ms (server/stream.go checkStreamCfg, "max age needs to be >= 100ms").
        if s < 0.1 {
            self.err(
                Some(n.pos),
                o.p("retention"),
                format!(
                    "retention {} s is shorter than nats-server keeps messages (max_age at least 100ms)",
                    fmt_num(s)
                ),
                "write 100ms or more, e.g. 1m",
            );
            return None;
        }
        Some(s)
    }
}
