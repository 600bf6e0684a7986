//! OpenMessaging Benchmark workload files (`workloads/*.yaml` of OMB) as natsplan streams, mapped as OMB's
//! NATS driver does: one JetStream stream per topic (subject = the topic name, file storage, replicas from
//! the driver's `replicationFactor`, which is not in the workload, so the layout's default applies), one
//! durable consumer per subscription, partitions ignored.
//!
//! OMB's `producerRate` is the publish rate of the whole workload (split over its topics); 0 means "as fast
//! as possible", which cannot be planned for. OMB streams have no limits, so retention comes from a
//! `retention` key (not an OMB key; added for natsplan) or `--omb-retention`.

use super::{stream_name, Imported};
use crate::site::StreamSpec;
use anyhow::{anyhow, bail, Context, Result};
use serde_yaml::Value;
use std::path::Path;

/// Keys OMB workloads have that do not change storage or placement (said so in the notes).
const IGNORED: [(&str, &str); 12] = [
    ("name", "the workload's title"),
    (
        "partitionsPerTopic",
        "the NATS driver ignores partitions (one stream per topic)",
    ),
    ("producersPerTopic", "clients, not storage: the rate is what counts"),
    (
        "consumerPerSubscription",
        "members of one durable's deliver group, not extra consumers",
    ),
    ("keyDistributor", "keys do not exist in the NATS driver"),
    ("payloadFile", "only its size (messageSize) matters"),
    ("useRandomizedPayloads", "payload content"),
    ("randomBytesRatio", "payload content"),
    ("randomizedPayloadPoolSize", "payload content"),
    ("consumerBacklogSizeGB", "a backlog test phase, not steady state"),
    (
        "testDurationMinutes",
        "the run's length; retention decides what is stored",
    ),
    ("warmupDurationMinutes", "the run's warm-up"),
];

/// OMB's topic names (`getTopicNamePrefix()` of the NATS driver, then a number).
const TOPIC_PREFIX: &str = "Nats-benchmark";

fn int(v: &Value, key: &str) -> Result<Option<u64>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .or_else(|| x.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
            .map(Some)
            .ok_or_else(|| anyhow!("{key}: expected a whole number ≥ 0, got {}", show(x))),
    }
}

fn num(v: &Value, key: &str) -> Result<Option<f64>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(Some)
            .ok_or_else(|| anyhow!("{key}: expected a number ≥ 0, got {}", show(x))),
    }
}

fn show(v: &Value) -> String {
    serde_yaml::to_string(v).unwrap_or_default().trim().to_string()
}

/// Read an OMB workload file. `retention` (a duration such as `24h`) applies when the file has none.
pub fn load(path: &Path, retention: Option<&str>) -> Result<Imported> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--omb {}: cannot read", path.display()))?;
    parse(&text, retention).with_context(|| format!("--omb {}", path.display()))
}

/// Parse OMB workload text (see `load`).
pub fn parse(text: &str, retention: Option<&str>) -> Result<Imported> {
    let v: Value = serde_yaml::from_str(text).context("not YAML")?;
    if !v.is_mapping() {
        bail!("an OMB workload is a mapping of keys (topics, messageSize, producerRate, ...)");
    }
    let topics = int(&v, "topics")?.ok_or_else(|| anyhow!("topics: missing (how many topics, e.g. topics: 1)"))?;
    if topics == 0 {
        bail!("topics: 0 topics is no workload; use 1 or more");
    }
    let size = int(&v, "messageSize")?
        .ok_or_else(|| anyhow!("messageSize: missing (payload bytes, e.g. messageSize: 1024)"))?;
    if size == 0 {
        bail!("messageSize: must be at least 1 byte");
    }
    let rate =
        num(&v, "producerRate")?.ok_or_else(|| anyhow!("producerRate: missing (messages/s of the whole workload)"))?;
    if rate <= 0.0 {
        bail!(
            "producerRate: {rate} means 'publish as fast as possible' in OMB, which cannot be planned for; set the \
             target rate (messages/s of the whole workload)"
        );
    }
    let mut notes = Vec::new();
    let (retention_s, from) = match v.get("retention") {
        Some(Value::String(s)) => (
            parse_secs(s).map_err(|e| anyhow!("retention: {e}"))?,
            "the file's retention",
        ),
        Some(x) if !x.is_null() => bail!("retention: expected a duration such as 24h, got {}", show(x)),
        _ => match retention {
            Some(r) => (
                parse_secs(r).map_err(|e| anyhow!("--omb-retention {r}: {e}"))?,
                "--omb-retention",
            ),
            None => bail!(
                "no retention: OMB's NATS driver creates streams without limits, so say how long messages are kept \
                 with --omb-retention DURATION (e.g. 24h) or `retention: 24h` in the file"
            ),
        },
    };
    let subs = int(&v, "subscriptionsPerTopic")?.unwrap_or(1);
    let per_topic = rate / topics as f64;
    notes.push(format!(
        "OMB: {topics} topic{} → {topics} stream{} ({TOPIC_PREFIX}-0000000…), {per_topic:.1} msgs/s each (producerRate \
         {rate} split over the topics), {size} B messages, {subs} durable consumer{} each, retention {}s from {from}; \
         replicas: the layout's default (OMB's replicationFactor is in the driver file, not the workload)",
        plural(topics),
        plural(topics),
        plural(subs),
        retention_s
    ));
    let mut ignored = Vec::new();
    let mut unknown = Vec::new();
    if let Some(m) = v.as_mapping() {
        for k in m.keys().filter_map(|k| k.as_str()) {
            if let Some((_, why)) = IGNORED.iter().find(|(n, _)| *n == k) {
                ignored.push(format!("{k} ({why})"));
            } else if !matches!(
                k,
                "topics" | "messageSize" | "producerRate" | "subscriptionsPerTopic" | "retention"
            ) {
                unknown.push(k.to_string());
            }
        }
    }
    if !ignored.is_empty() {
        notes.push(format!("OMB keys ignored: {}", ignored.join("; ")));
    }
    if !unknown.is_empty() {
        notes.push(format!("unknown keys ignored: {}", unknown.join(", ")));
    }
    let streams = (0..topics)
        .map(|i| {
            let name = stream_name(&format!("{TOPIC_PREFIX}-{i:07}"));
            StreamSpec {
                subject_bytes: name.len() as u64,
                name,
                msgs_per_s: per_topic,
                msg_size_bytes: size,
                retention_s,
                replicas: None,
                consumers: subs.min(u32::MAX as u64) as u32,
                max_bytes: None,
                subjects: Vec::new(),
            }
        })
        .collect();
    Ok(Imported { streams, notes })
}

fn parse_secs(s: &str) -> Result<f64, String> {
    let d = crate::units::parse_duration(s)?;
    if d.as_secs_f64() <= 0.0 {
        return Err("must be longer than 0".into());
    }
    Ok(d.as_secs_f64())
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "
name: 4 topics / 16 partitions / 1kb
topics: 4
partitionsPerTopic: 16
keyDistributor: NO_KEY
messageSize: 1024
payloadFile: payload/payload-1Kb.data
subscriptionsPerTopic: 2
consumerPerSubscription: 8
producersPerTopic: 4
producerRate: 100000
consumerBacklogSizeGB: 0
testDurationMinutes: 15
";

    #[test]
    fn the_sample_maps_to_one_stream_per_topic() {
        let imp = parse(SAMPLE, Some("24h")).unwrap();
        assert_eq!(imp.streams.len(), 4);
        for (i, s) in imp.streams.iter().enumerate() {
            assert_eq!(s.name, format!("Nats-benchmark-{i:07}"));
            assert_eq!(s.msgs_per_s, 25_000.0);
            assert_eq!(s.msg_size_bytes, 1024);
            assert_eq!(s.consumers, 2);
            assert_eq!(s.retention_s, 86_400.0);
            assert_eq!(s.replicas, None);
        }
        let notes = imp.notes.join("\n");
        assert!(notes.contains("partitionsPerTopic"), "{notes}");
        assert!(notes.contains("consumerPerSubscription"), "{notes}");
        assert!(notes.contains("testDurationMinutes"), "{notes}");
    }

    #[test]
    fn the_file_retention_wins_and_unknown_keys_are_named() {
        let imp = parse(
            "topics: 1\nmessageSize: 10\nproducerRate: 5\nretention: 1h\nfoo: 1\n",
            Some("24h"),
        )
        .unwrap();
        assert_eq!(imp.streams[0].retention_s, 3600.0);
        assert!(imp.notes.iter().any(|n| n.contains("unknown keys ignored: foo")));
    }

    #[test]
    fn bad_files_say_what_to_fix() {
        let e = |t: &str| format!("{:#}", parse(t, Some("1h")).unwrap_err());
        assert!(e("messageSize: 1\nproducerRate: 1").contains("topics: missing"));
        assert!(e("topics: 1\nmessageSize: 1\nproducerRate: 0").contains("as fast as possible"));
        assert!(e("topics: x\nmessageSize: 1\nproducerRate: 1").contains("topics: expected a whole number"));
        assert!(e("- a\n- b").contains("mapping"));
        let no_ret = format!(
            "{:#}",
            parse("topics: 1\nmessageSize: 1\nproducerRate: 1", None).unwrap_err()
        );
        assert!(no_ret.contains("--omb-retention"), "{no_ret}");
    }
}
