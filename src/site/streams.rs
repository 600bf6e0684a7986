//! The rules nats-server applies across a workload's streams, as one check every door into the workload
//! runs: the site file's validator, the imported streams (`--from-cluster`, `--omb`) once merged with the
//! site's, and a saved plan's frozen streams. nats-server keeps one namespace of stream names per account
//! (a KV bucket is the stream `KV_<bucket>`, an object store `OBJ_<store>`) and refuses a stream whose
//! subjects overlap another's (`JSStreamSubjectOverlapErr`, error code 10065, server/errors.json). Names
//! are case-sensitive there (`ORDERS` beside `orders` is legal).
//!
//! Every asset is checked as it will be created: a stream with the subjects `emit` writes for it (those
//! given; else its StreamConfig file's, which nats-server defaults to the stream's name; else `<name>.>`
//! in lower case), a KV bucket as `KV_<name>` on `$KV.<name>.>`, an object store as `OBJ_<name>` on
//! `$O.<name>.C.>` and `$O.<name>.M.>`.
//!
//! Overlaps are found with a trie of subject tokens (each filter looked up with its wildcards against the
//! filters before it), not by comparing every pair: an OMB workload holds 100,000 streams.

use super::model::Workload;
use std::collections::HashMap;

/// One asset of a workload, by kind and index in its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AssetRef {
    Stream(usize),
    Kv(usize),
    ObjectStore(usize),
}

impl AssetRef {
    /// The site file's path of the asset, e.g. `workload.kv[2]`.
    pub fn path(self) -> String {
        match self {
            AssetRef::Stream(i) => format!("workload.streams[{i}]"),
            AssetRef::Kv(i) => format!("workload.kv[{i}]"),
            AssetRef::ObjectStore(i) => format!("workload.object_stores[{i}]"),
        }
    }

    /// "stream orders", "KV bucket sessions".
    pub fn short(self, w: &Workload) -> String {
        match self {
            AssetRef::Stream(i) => format!("stream {}", w.streams[i].name),
            AssetRef::Kv(i) => format!("KV bucket {}", w.kv[i].name),
            AssetRef::ObjectStore(i) => format!("object store {}", w.object_stores[i].name),
        }
    }

    /// "stream orders", "KV bucket sessions (stream KV_sessions)".
    pub fn describe(self, w: &Workload) -> String {
        match self {
            AssetRef::Stream(i) => format!("stream {}", w.streams[i].name),
            AssetRef::Kv(i) => format!("KV bucket {0} (stream KV_{0})", w.kv[i].name),
            AssetRef::ObjectStore(i) => format!("object store {0} (stream OBJ_{0})", w.object_stores[i].name),
        }
    }
}

/// An asset as nats-server will hold it: the stream's name and the subjects it captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backing {
    pub asset: AssetRef,
    pub stream: String,
    pub subjects: Vec<String>,
    /// The subjects are the default `emit` writes (no `subjects:` given), not the user's own.
    pub default_subjects: bool,
}

/// The subjects `emit` writes for a stream without `subjects:` and without a StreamConfig file.
pub fn default_subject(name: &str) -> String {
    format!("{}.>", name.to_lowercase())
}

/// Every asset of `w` as nats-server will hold it, streams first, then KV buckets, then object stores.
pub fn backing(w: &Workload) -> Vec<Backing> {
    let mut out = Vec::with_capacity(w.streams.len() + w.kv.len() + w.object_stores.len());
    for (i, s) in w.streams.iter().enumerate() {
        let (subjects, default_subjects) = match (s.subjects.is_empty(), w.stream_configs.contains_key(&s.name)) {
            (false, _) => (s.subjects.clone(), false),
            // A StreamConfig file without subjects is written back as given: nats-server's default.
            (true, true) => (vec![s.name.clone()], true),
            (true, false) => (vec![default_subject(&s.name)], true),
        };
        out.push(Backing {
            asset: AssetRef::Stream(i),
            stream: s.name.clone(),
            subjects,
            default_subjects,
        });
    }
    for (i, k) in w.kv.iter().enumerate() {
        out.push(Backing {
            asset: AssetRef::Kv(i),
            stream: format!("KV_{}", k.name),
            subjects: vec![format!("$KV.{}.>", k.name)],
            default_subjects: false,
        });
    }
    for (i, o) in w.object_stores.iter().enumerate() {
        out.push(Backing {
            asset: AssetRef::ObjectStore(i),
            stream: format!("OBJ_{}", o.name),
            subjects: vec![format!("$O.{}.C.>", o.name), format!("$O.{}.M.>", o.name)],
            default_subjects: false,
        });
    }
    out
}

/// Two assets nats-server cannot hold side by side. `first` comes before `then` in `backing` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clash {
    /// Both are one stream in nats-server (a stream named `KV_sessions` beside the KV bucket `sessions`).
    SameStream {
        first: AssetRef,
        then: AssetRef,
        stream: String,
    },
    /// Their subjects overlap: nats-server refuses the second (error 10065).
    Overlap {
        first: AssetRef,
        first_subject: String,
        then: AssetRef,
        then_subject: String,
        /// `then_subject` is the default `emit` writes, not one the user gave.
        then_default: bool,
        /// The same of `first_subject`.
        first_default: bool,
    },
}

impl Clash {
    /// The asset the clash is reported at (the later one) and the one it clashes with.
    pub fn assets(&self) -> (AssetRef, AssetRef) {
        match self {
            Clash::SameStream { first, then, .. } | Clash::Overlap { first, then, .. } => (*then, *first),
        }
    }

    /// The same clash said of the other asset (an imported stream's clash with the site's is said of the
    /// imported one).
    pub fn swapped(self) -> Clash {
        match self {
            Clash::SameStream { first, then, stream } => Clash::SameStream {
                first: then,
                then: first,
                stream,
            },
            Clash::Overlap {
                first,
                first_subject,
                then,
                then_subject,
                then_default,
                first_default,
            } => Clash::Overlap {
                first: then,
                first_subject: then_subject,
                then: first,
                then_subject: first_subject,
                then_default: first_default,
                first_default: then_default,
            },
        }
    }

    /// What is wrong, said of the later asset (`then`), with `other` naming where the first one is (its
    /// place: `site.yaml:12:7, workload.streams[0]` or `--from-cluster FILE`), and the fix.
    pub fn message(&self, w: &Workload, other: &str) -> (String, String) {
        match self {
            Clash::SameStream { first, then, stream } => (
                format!(
                    "{} and {} ({other}) are both the stream {stream} in nats-server",
                    then.short(w),
                    first.short(w)
                ),
                "rename one: streams, KV buckets (KV_<name>) and object stores (OBJ_<name>) share nats-server's \
                 stream names"
                    .into(),
            ),
            Clash::Overlap {
                first,
                first_subject,
                then,
                then_subject,
                then_default,
                ..
            } => (
                format!(
                    "{}'s subject '{then_subject}'{} overlaps '{first_subject}' of {} ({other}); nats-server refuses \
                     streams whose subjects overlap (error 10065)",
                    then.describe(w),
                    if *then_default {
                        " (its default: no subjects given, emit writes <name>.>)"
                    } else {
                        ""
                    },
                    first.describe(w)
                ),
                "give each stream its own subjects (e.g. orders.> and payments.>), or drop one".into(),
            ),
        }
    }
}

/// Every clash between the assets of `w`: each asset is compared with the ones before it (in `backing`
/// order) and reported once, with the first it clashes with (a name before subjects).
pub fn clashes(w: &Workload) -> Vec<Clash> {
    let all = backing(w);
    let mut names: HashMap<&str, AssetRef> = HashMap::with_capacity(all.len());
    let mut trie = Trie::default();
    let mut out = Vec::new();
    for (at, b) in all.iter().enumerate() {
        if let Some(&first) = names.get(b.stream.as_str()) {
            out.push(Clash::SameStream {
                first,
                then: b.asset,
                stream: b.stream.clone(),
            });
        } else {
            let hit = b
                .subjects
                .iter()
                .filter_map(|s| trie.first_overlap(s).map(|(owner, theirs)| (owner, theirs, s)))
                .min_by_key(|(owner, _, _)| *owner);
            if let Some((owner, theirs, mine)) = hit {
                out.push(Clash::Overlap {
                    first: all[owner].asset,
                    first_subject: theirs,
                    then: b.asset,
                    then_subject: mine.clone(),
                    then_default: b.default_subjects,
                    first_default: all[owner].default_subjects,
                });
            }
        }
        names.entry(b.stream.as_str()).or_insert(b.asset);
        for s in &b.subjects {
            trie.insert(s, at);
        }
    }
    out
}

/// Subject filters by token. Owners are inserted in increasing order, so the first one to reach a node is
/// the smallest there.
#[derive(Default)]
struct Trie {
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Node {
    children: HashMap<String, usize>,
    /// The `*` child.
    star: Option<usize>,
    /// The first filter ending here, and its text.
    ends: Option<(usize, String)>,
    /// The first filter whose next token here is `>`, and its text.
    rest: Option<(usize, String)>,
    /// The first filter with at least one more token after this node, and its text.
    below: Option<(usize, String)>,
}

impl Trie {
    fn root(&mut self) -> usize {
        if self.nodes.is_empty() {
            self.nodes.push(Node::default());
        }
        0
    }

    fn insert(&mut self, filter: &str, owner: usize) {
        let mut at = self.root();
        for tok in filter.split('.') {
            self.nodes[at].below.get_or_insert_with(|| (owner, filter.to_string()));
            if tok == ">" {
                self.nodes[at].rest.get_or_insert_with(|| (owner, filter.to_string()));
                return;
            }
            let next = if tok == "*" {
                self.nodes[at].star
            } else {
                self.nodes[at].children.get(tok).copied()
            };
            at = match next {
                Some(n) => n,
                None => {
                    self.nodes.push(Node::default());
                    let n = self.nodes.len() - 1;
                    if tok == "*" {
                        self.nodes[at].star = Some(n);
                    } else {
                        self.nodes[at].children.insert(tok.to_string(), n);
                    }
                    n
                }
            };
        }
        self.nodes[at].ends.get_or_insert_with(|| (owner, filter.to_string()));
    }

    /// The smallest owner whose filter overlaps `filter` (`units::subjects_overlap`), with its text.
    fn first_overlap(&self, filter: &str) -> Option<(usize, String)> {
        if self.nodes.is_empty() {
            return None;
        }
        let toks: Vec<&str> = filter.split('.').collect();
        let mut best: Option<(usize, String)> = None;
        self.walk(0, &toks, &mut best);
        best
    }

    fn walk(&self, at: usize, toks: &[&str], best: &mut Option<(usize, String)>) {
        let node = &self.nodes[at];
        let take = |best: &mut Option<(usize, String)>, c: &Option<(usize, String)>| {
            if let Some((o, t)) = c {
                if best.as_ref().is_none_or(|(b, _)| o < b) {
                    *best = Some((*o, t.clone()));
                }
            }
        };
        let Some((&tok, more)) = toks.split_first() else {
            // Both end here.
            take(best, &node.ends);
            return;
        };
        // Another's `>` here matches this token and the rest.
        take(best, &node.rest);
        match tok {
            // Matches every filter with at least one more token from here.
            ">" => take(best, &node.below),
            "*" => {
                for &c in node.children.values() {
                    self.walk(c, more, best);
                }
                if let Some(s) = node.star {
                    self.walk(s, more, best);
                }
            }
            lit => {
                if let Some(&c) = node.children.get(lit) {
                    self.walk(c, more, best);
                }
                if let Some(s) = node.star {
                    self.walk(s, more, best);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::site::{KvSpec, StreamSpec};

    fn stream(name: &str, subjects: &[&str]) -> StreamSpec {
        StreamSpec {
            name: name.into(),
            msgs_per_s: 1.0,
            msg_size_bytes: 100,
            subject_bytes: 10,
            retention_s: 60.0,
            replicas: None,
            consumers: 0,
            max_bytes: None,
            subjects: subjects.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_trie_finds_what_comparing_every_pair_finds() {
        // Filters over a small alphabet so that overlaps are common, each looked up against those before
        // it: the first overlapping one, by the pairwise rule (`units::subjects_overlap`).
        let toks = ["a", "b", "*", ">"];
        let mut filters: Vec<String> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..400 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = 1 + (x % 4) as usize;
            let mut f: Vec<&str> = (0..n).map(|k| toks[((x >> (8 * k + 3)) % 4) as usize]).collect();
            // `>` only last.
            if let Some(p) = f.iter().position(|t| *t == ">") {
                f.truncate(p + 1);
            }
            filters.push(f.join("."));
        }
        let mut trie = Trie::default();
        for (i, f) in filters.iter().enumerate() {
            let want = filters[..i]
                .iter()
                .position(|g| crate::units::subjects_overlap(f, g))
                .map(|j| (j, filters[j].clone()));
            assert_eq!(trie.first_overlap(f), want, "{f} against {:?}", &filters[..i]);
            trie.insert(f, i);
        }
    }

    #[test]
    fn wildcards_defaults_and_the_kv_and_object_store_names_clash() {
        let mut w = Workload {
            streams: vec![
                stream("orders", &["orders.>"]),
                stream("eu", &["orders.eu.*"]),
                stream("ORDERS", &[]),
                stream("KV_sessions", &["sess.>"]),
                stream("Payments", &[]),
                stream("audit", &["$KV.sessions.x"]),
            ],
            ..Workload::default()
        };
        w.kv.push(KvSpec {
            name: "sessions".into(),
            puts_per_s: 1.0,
            value_size_bytes: 10,
            key_bytes: 10,
            keys: 1,
            history: 1,
            replicas: None,
        });
        let got = clashes(&w);
        assert_eq!(
            got,
            vec![
                Clash::Overlap {
                    first: AssetRef::Stream(0),
                    first_subject: "orders.>".into(),
                    then: AssetRef::Stream(1),
                    then_subject: "orders.eu.*".into(),
                    then_default: false,
                    first_default: false,
                },
                // No subjects: emit writes `orders.>`, which overlaps the first stream's.
                Clash::Overlap {
                    first: AssetRef::Stream(0),
                    first_subject: "orders.>".into(),
                    then: AssetRef::Stream(2),
                    then_subject: "orders.>".into(),
                    then_default: true,
                    first_default: false,
                },
                Clash::SameStream {
                    first: AssetRef::Stream(3),
                    then: AssetRef::Kv(0),
                    stream: "KV_sessions".into(),
                },
            ]
        );
        let (what, _) = got[2].message(&w, "site.yaml:9:7");
        assert_eq!(
            what,
            "KV bucket sessions and stream KV_sessions (site.yaml:9:7) are both the stream KV_sessions in nats-server"
        );
        // The bucket's subjects clash with the stream `audit` on `$KV.sessions.x` once the name clash is
        // renamed away.
        w.streams[3].name = "sess".into();
        assert!(clashes(&w).iter().any(|c| matches!(
            c,
            Clash::Overlap {
                first: AssetRef::Stream(5),
                then: AssetRef::Kv(0),
                ..
            }
        )));
    }
}
