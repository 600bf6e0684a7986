//! A live cluster's streams as the workload: `/jsz?accounts=true&streams=true&config=true` read from each
//! given monitor URL twice, an interval apart. Replicas, limits and consumers come from the config; the
//! message rate from the growth of `last_seq` over the interval (publishes, whatever retention removes
//! meanwhile); the message size from stored bytes per message less the subject and record overhead.
//!
//! A server's `/jsz` lists the streams it holds a replica of, so give every server's monitor URL (or at
//! least enough to cover every stream); the freshest view of each stream (highest `last_seq`) wins.

use super::{stream_name, Imported};
use crate::site::StreamSpec;
use crate::text::plural_s;
use anyhow::{bail, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Per-message bytes natsplan's capacity model adds to payload and subject (kept in step with `plan`).
pub(crate) const RECORD_OVERHEAD_BYTES: f64 = 30.0;
/// The rate given to streams that saw no publish during the interval (rates must be positive).
pub(crate) const IDLE_RATE_PER_S: f64 = 0.001;

/// One stream in one `/jsz` answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub account: String,
    pub name: String,
    pub replicas: u8,
    pub messages: u64,
    pub bytes: u64,
    pub last_seq: u64,
    pub consumers: u32,
    /// `max_age` in seconds; 0 = unlimited.
    pub max_age_s: f64,
    /// `max_bytes`; None = unlimited.
    pub max_bytes: Option<u64>,
    pub subject_bytes: u64,
    /// The stream's configured subjects (carried into the site so `emit` recreates them).
    pub subjects: Vec<String>,
}

/// The streams of one `/jsz?accounts=true&streams=true&config=true` answer.
pub fn samples(jsz: &Value) -> Vec<Sample> {
    crate::monitor::jsz::streams(jsz)
        .into_iter()
        .map(|st| {
            let name = st.name_or_empty().to_string();
            let mut subjects = st.subjects().unwrap_or_default();
            if subjects.is_empty() {
                // nats-server's default for a stream created without subjects: its own name.
                subjects.push(name.clone());
            }
            let subject_bytes = subjects.first().map(|s| s.len() as u64).unwrap_or(name.len() as u64);
            Sample {
                account: st.account.clone(),
                replicas: st.config_u64("num_replicas").unwrap_or(0).clamp(1, 5) as u8,
                messages: st.messages,
                bytes: st.bytes,
                last_seq: st.last_seq,
                consumers: st.consumer_count.min(u32::MAX as u64) as u32,
                max_age_s: st.config_f64("max_age").map(|ns| ns / 1e9).unwrap_or(0.0),
                max_bytes: st.config_i64("max_bytes").filter(|b| *b > 0).map(|b| b as u64),
                subject_bytes,
                subjects,
                name,
            }
        })
        .collect()
}

/// The freshest view of each stream over several servers' samples.
fn freshest(all: Vec<Sample>) -> BTreeMap<(String, String), Sample> {
    let mut m: BTreeMap<(String, String), Sample> = BTreeMap::new();
    for s in all {
        let k = (s.account.clone(), s.name.clone());
        match m.get(&k) {
            Some(old) if old.last_seq >= s.last_seq => {}
            _ => {
                m.insert(k, s);
            }
        }
    }
    m
}

/// Streams from two rounds of samples taken `interval_s` apart.
pub fn from_samples(first: Vec<Sample>, second: Vec<Sample>, interval_s: f64) -> Imported {
    let a = freshest(first);
    let b = freshest(second);
    let mut notes = Vec::new();
    let mut streams = Vec::new();
    let mut idle = Vec::new();
    let mut unlimited = Vec::new();
    let mut kv_obj = Vec::new();
    // A name in more than one account gets the account as a prefix (site stream names are one namespace).
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, name) in b.keys() {
        *count.entry(name.as_str()).or_default() += 1;
    }
    for ((account, name), s) in &b {
        let before = a.get(&(account.clone(), name.clone()));
        let published = before.map(|p| s.last_seq.saturating_sub(p.last_seq)).unwrap_or(0);
        let mut rate = published as f64 / interval_s.max(1e-3);
        if rate <= 0.0 {
            rate = IDLE_RATE_PER_S;
            idle.push(name.clone());
        }
        let payload = if s.messages > 0 {
            (s.bytes as f64 / s.messages as f64 - s.subject_bytes as f64 - RECORD_OVERHEAD_BYTES).max(1.0)
        } else {
            1.0
        };
        let retention_s = if s.max_age_s > 0.0 {
            s.max_age_s
        } else {
            // No max_age: keep what it holds now, at the measured rate (growth beyond is not predicted).
            unlimited.push(name.clone());
            (s.messages.max(1) as f64 / rate).max(1.0)
        };
        if name.starts_with("KV_") || name.starts_with("OBJ_") {
            kv_obj.push(name.clone());
        }
        let full = if count[name.as_str()] > 1 {
            format!("{account}_{name}")
        } else {
            name.clone()
        };
        streams.push(StreamSpec {
            name: stream_name(&full),
            msgs_per_s: rate,
            msg_size_bytes: payload.round() as u64,
            subject_bytes: s.subject_bytes,
            retention_s,
            replicas: Some(s.replicas),
            consumers: s.consumers,
            max_bytes: s.max_bytes,
            subjects: s.subjects.clone(),
        });
    }
    notes.push(format!(
        "from the cluster: {} stream{} measured over {:.1} s (rate from last_seq growth, size from stored bytes per \
         message less subject and {RECORD_OVERHEAD_BYTES:.0} B record overhead, replicas pinned as configured)",
        streams.len(),
        plural_s(streams.len()),
        interval_s
    ));
    if !idle.is_empty() {
        notes.push(format!(
            "no publishes during the interval: {} (rate set to {IDLE_RATE_PER_S}/s; measure longer with \
             --interval to catch slow streams)",
            idle.join(", ")
        ));
    }
    if !unlimited.is_empty() {
        notes.push(format!(
            "no max_age, so retention is what they hold now at the measured rate: {}",
            unlimited.join(", ")
        ));
    }
    if !kv_obj.is_empty() {
        notes.push(format!(
            "KV buckets and object stores imported as the streams that hold them: {}",
            kv_obj.join(", ")
        ));
    }
    Imported { streams, notes }
}

/// Read every URL's `/jsz`, wait `interval`, read again. Servers that do not answer are named; none
/// answering is an error.
pub fn measure(urls: &[String], interval: Duration, timeout: Duration) -> Result<Imported> {
    if urls.is_empty() {
        bail!("--from-cluster: give a monitor URL, e.g. http://127.0.0.1:8222");
    }
    for u in urls {
        if !u.starts_with("http://") {
            bail!(
                "--from-cluster {}: give the monitoring URL (http://HOST:8222, the server's `http_port`), not a \
                 client URL",
                crate::monitor::shown(u)
            );
        }
    }
    let round = |notes: &mut Vec<String>| -> Result<Vec<Sample>> {
        let mut all = Vec::new();
        let mut ok = 0;
        for u in urls {
            match crate::monitor::jsz(u, "accounts=true&streams=true&config=true", timeout) {
                Ok(j) => {
                    ok += 1;
                    all.extend(samples(&j));
                }
                Err(e) => notes.push(format!("{} did not answer: {e:#}", crate::monitor::shown(u))),
            }
        }
        if ok == 0 {
            bail!("--from-cluster: no monitor URL answered /jsz ({})", notes.join("; "));
        }
        Ok(all)
    };
    let mut notes = Vec::new();
    let t0 = std::time::Instant::now();
    let first = round(&mut notes)?;
    std::thread::sleep(interval);
    let second = round(&mut notes)?;
    let mut imp = from_samples(first, second, t0.elapsed().as_secs_f64().max(interval.as_secs_f64()));
    notes.dedup();
    imp.notes.extend(notes);
    Ok(imp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jsz(last_seq: u64, messages: u64, bytes: u64) -> Value {
        serde_json::json!({"account_details": [{"name": "$G", "stream_detail": [
            {"name": "orders", "config": {"num_replicas": 3, "subjects": ["orders.>"], "max_age": 3_600_000_000_000u64,
              "max_bytes": -1},
             "state": {"messages": messages, "bytes": bytes, "last_seq": last_seq, "consumer_count": 2}},
            {"name": "KV_cfg", "config": {"num_replicas": 1, "subjects": ["$KV.cfg.>"], "max_age": 0, "max_bytes": 1000000},
             "state": {"messages": 10, "bytes": 1000, "last_seq": 10, "consumer_count": 0}}
        ]}]})
    }

    #[test]
    fn rates_sizes_and_limits_come_from_two_samples() {
        let a = samples(&jsz(1000, 1000, 1000 * 1100));
        let b = samples(&jsz(1500, 1500, 1500 * 1100));
        let imp = from_samples(a, b, 5.0);
        let o = imp.streams.iter().find(|s| s.name == "orders").unwrap();
        assert_eq!(o.msgs_per_s, 100.0);
        assert_eq!(o.replicas, Some(3));
        assert_eq!(o.consumers, 2);
        assert_eq!(o.retention_s, 3600.0);
        assert_eq!(o.subject_bytes, "orders.>".len() as u64);
        assert_eq!(o.msg_size_bytes, 1100 - 8 - 30);
        assert_eq!(o.max_bytes, None);
        let kv = imp.streams.iter().find(|s| s.name == "KV_cfg").unwrap();
        assert_eq!(kv.msgs_per_s, IDLE_RATE_PER_S);
        assert_eq!(kv.max_bytes, Some(1_000_000));
        let notes = imp.notes.join("\n");
        assert!(notes.contains("no publishes during the interval: KV_cfg"), "{notes}");
        assert!(notes.contains("KV buckets and object stores"), "{notes}");
    }

    #[test]
    fn the_freshest_view_of_a_stream_wins() {
        let mut a = samples(&jsz(100, 100, 100));
        a.extend(samples(&jsz(90, 90, 90)));
        let f = freshest(a);
        assert_eq!(f[&("$G".to_string(), "orders".to_string())].last_seq, 100);
    }

    #[test]
    fn client_urls_are_refused_with_the_fix() {
        let e = measure(
            &["nats://127.0.0.1:4222".into()],
            Duration::ZERO,
            Duration::from_millis(10),
        )
        .unwrap_err();
        assert!(e.to_string().contains("monitoring URL"));
    }
}
