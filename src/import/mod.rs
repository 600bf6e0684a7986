//! Workload import, so nobody types a workload twice: an OpenMessaging Benchmark workload file (`omb`),
//! a live cluster's `/jsz` measured over an interval (`cluster`) or the JSON files the nats CLI writes
//! (`natscli`: `nats stream info --json`, `nats stream ls --json`, JSZ answers) becomes the site's streams
//! before `plan::build`. Each importer returns the streams and notes saying what it assumed or ignored.

pub mod cluster;
pub mod natscli;
pub mod omb;

use crate::site::{StreamSpec, Workload};

/// Streams read from somewhere else, with what the reader assumed or left out.
#[derive(Debug, Clone, Default)]
pub struct Imported {
    pub streams: Vec<StreamSpec>,
    pub notes: Vec<String>,
}

/// Put imported streams into a workload: a stream of the same name is replaced, others are added; KV
/// buckets, object stores and core traffic of the site file stay.
pub fn merge(workload: &mut Workload, imported: &Imported) -> Vec<String> {
    let mut notes = Vec::new();
    // The first stream of each name, as a search from the front finds it, from a map: a linear search per
    // imported stream is quadratic in OMB's topic counts.
    let mut at: crate::fxhash::FxHashMap<String, usize> = Default::default();
    for (i, x) in workload.streams.iter().enumerate() {
        at.entry(x.name.clone()).or_insert(i);
    }
    for s in &imported.streams {
        match at.get(&s.name).map(|&i| &mut workload.streams[i]) {
            Some(existing) => {
                *existing = s.clone();
                // The imported stream is the definition now, not the site's StreamConfig file.
                let file = workload.stream_configs.remove(&s.name).is_some();
                notes.push(format!(
                    "stream {} of the site file replaced by the imported one{}",
                    s.name,
                    if file { " (its config file is not used)" } else { "" }
                ));
            }
            None => {
                at.insert(s.name.clone(), workload.streams.len());
                workload.streams.push(s.clone());
            }
        }
    }
    notes
}

/// A stream name as the site format accepts it: letters, digits, '-' and '_' (others become '_').
pub fn stream_name(raw: &str) -> String {
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, rate: f64) -> StreamSpec {
        StreamSpec {
            name: name.into(),
            msgs_per_s: rate,
            msg_size_bytes: 100,
            subject_bytes: 10,
            retention_s: 60.0,
            replicas: None,
            consumers: 0,
            max_bytes: None,
            subjects: Vec::new(),
        }
    }

    #[test]
    fn merge_replaces_same_names_and_adds_the_rest() {
        let mut w = Workload {
            streams: vec![spec("a", 1.0), spec("b", 2.0)],
            ..Workload::default()
        };
        let imp = Imported {
            streams: vec![spec("b", 20.0), spec("c", 3.0)],
            notes: vec![],
        };
        w.stream_configs.insert("b".into(), serde_json::json!({"name": "b"}));
        let notes = merge(&mut w, &imp);
        let names: Vec<&str> = w.streams.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(w.streams[1].msgs_per_s, 20.0);
        assert_eq!(notes.len(), 1);
        assert!(w.stream_configs.is_empty() && notes[0].contains("config file is not used"));
    }

    /// As a search from the front: a site with two streams of one name has the first replaced; an
    /// import naming one stream twice keeps the last of them, once.
    #[test]
    fn merge_replaces_the_first_of_a_name_and_repeats_replace_what_they_added() {
        let mut w = Workload {
            streams: vec![spec("a", 1.0), spec("a", 2.0)],
            ..Workload::default()
        };
        let imp = Imported {
            streams: vec![spec("a", 10.0), spec("c", 3.0), spec("c", 30.0)],
            notes: vec![],
        };
        merge(&mut w, &imp);
        let got: Vec<(&str, f64)> = w.streams.iter().map(|s| (s.name.as_str(), s.msgs_per_s)).collect();
        assert_eq!(got, [("a", 10.0), ("a", 2.0), ("c", 30.0)]);
    }

    #[test]
    fn names_are_made_valid() {
        assert_eq!(stream_name("orders.v1 eu"), "orders_v1_eu");
        assert_eq!(stream_name("KV_sessions"), "KV_sessions");
        assert_eq!(stream_name(""), "_");
    }
}
