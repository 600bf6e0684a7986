//! OpenMessaging Benchmark workload files (`workloads/*.yaml` of OMB) as natsplan streams, mapped as OMB's
//! NATS driver does: one JetStream stream per topic (subject = the topic name, file storage, replicas from
//! the driver's `replicationFactor`, which is not in the workload, so the layout's default applies), one
//! durable consumer per subscription, partitions ignored.
//!
//! OMB's `producerRate` is the publish rate of the whole workload (split over its topics). 0 and OMB's
//! max-rate convention, 10,000,000 (its `max-rate-*` workloads: "Discover max-sustainable rate"), both mean
//! "as fast as possible": there is no rate to size storage for (10 M msgs/s of 1 KiB kept a day is 14 PiB
//! per replica), so such a file is refused unless `--omb-rate R` gives the rate to size for. OMB streams
//! have no limits, so retention comes from a `retention` key (not an OMB key; added for natsplan) or
//! `--omb-retention`.

use super::{stream_name, Imported};
use crate::input::limits::{MAX_ASSETS, MAX_CONSUMERS_PER_STREAM, MAX_OMB_TOPICS};
use crate::input::yaml::{clip, Node, Pos, Typed, Val};
use crate::input::{Doc, InputError};
use crate::site::StreamSpec;
use crate::text::plural_s;
use anyhow::{Context, Result};
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

/// `producerRate` of OMB's max-rate workloads (`max-rate-*.yaml`: "Discover max-sustainable rate"): not a
/// rate to size for. Any rate at or above it is read the same way.
pub const MAX_RATE_CONVENTION: f64 = 10_000_000.0;

/// The most assets (streams plus durable consumers) an OMB file may create. Time and memory grow about
/// linearly with the asset count (docs/scale.md: OMB's 100,000-topic file, 200,000 assets, plans in about
/// 3.5 s and 500 MiB on a 2-core machine); OMB's 1,000,000-topic files (2,000,000 assets) are refused at
/// once with the reason rather than planned for a minute in several GiB.
pub const MAX_PLANNED_ASSETS: u64 = 200_000;

/// Read an OMB workload file. `retention` (a duration such as `24h`) applies when the file has none.
pub fn load(path: &Path, retention: Option<&str>) -> Result<Imported> {
    load_with(path, retention, None)
}

/// As `load`; `rate` (`--omb-rate`, messages/s of the whole workload) replaces the file's producerRate,
/// and is what a max-rate file (producerRate 0 or 10,000,000) needs to be planned at all.
pub fn load_with(path: &Path, retention: Option<&str>, rate: Option<f64>) -> Result<Imported> {
    let text = crate::input::read_text(path, "--omb workload file")?;
    parse_named(&text, &path.display().to_string(), retention, rate)
        .with_context(|| format!("--omb {}", path.display()))
}

/// Parse OMB workload text (see `load`).
pub fn parse(text: &str, retention: Option<&str>) -> Result<Imported> {
    parse_named(text, "OMB workload", retention, None)
}

/// Parse OMB workload text with `--omb-rate` (see `load_with`).
pub fn parse_with(text: &str, retention: Option<&str>, rate: Option<f64>) -> Result<Imported> {
    parse_named(text, "OMB workload", retention, rate)
}

/// The workload's figures as read, before they are turned into streams.
struct Omb {
    topics: u64,
    size: u64,
    rate: f64,
    /// The file's producerRate when `--omb-rate` replaced it.
    file_rate: Option<f64>,
    subs: u64,
    retention_s: f64,
    from: &'static str,
}

/// Every problem of the file at once, each with file:line:col, its key and a fix (as site files).
fn parse_named(text: &str, file: &str, retention: Option<&str>, rate_flag: Option<f64>) -> Result<Imported> {
    let doc = Doc::parse(text, file)?;
    let mut errs: Vec<InputError> = Vec::new();
    let entries = mapping(&doc)?;
    duplicate_keys(&doc, entries, &mut errs);
    let get = |k: &str| {
        entries
            .iter()
            .find(|(key, _)| key_is(key, k))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    };
    let missing = |errs: &mut Vec<InputError>, k: &str, what: &str| {
        errs.push(doc.error(k, format!("missing ({what})"), format!("add `{k}: ...` ({what})")));
    };
    let topics = match get("topics") {
        None => {
            missing(&mut errs, "topics", "how many topics, e.g. topics: 1");
            None
        }
        Some(n) => whole(
            &doc,
            &mut errs,
            n,
            "topics",
            1,
            MAX_OMB_TOPICS,
            "topics: 1 (each topic is one stream)",
        ),
    };
    let size = match get("messageSize") {
        None => {
            missing(&mut errs, "messageSize", "payload bytes, e.g. messageSize: 1024");
            None
        }
        // A message cannot exceed max_payload, which nats-server refuses above 2³¹−1 bytes (an int32,
        // server/opts.go "max_payload value is too big"; it warns above 8 MiB, server/const.go).
        Some(n) => whole(
            &doc,
            &mut errs,
            n,
            "messageSize",
            1,
            i32::MAX as u64,
            "messageSize: 1024",
        ),
    };
    let rate = match get("producerRate") {
        None => {
            missing(&mut errs, "producerRate", "messages/s of the whole workload");
            None
        }
        Some(n) => producer_rate(&doc, &mut errs, n, rate_flag),
    };
    if let Some(r) = rate_flag.filter(|r| !(r.is_finite() && *r > 0.0)) {
        errs.push(InputError {
            path: "--omb-rate".into(),
            line: None,
            column: None,
            message: format!("{r}: expected a finite number of messages/s above 0"),
            fix: Some("write e.g. --omb-rate 50000 (messages/s of the whole workload)".into()),
        });
    }
    let subs = match get("subscriptionsPerTopic") {
        None => Some(1),
        Some(n) => whole(
            &doc,
            &mut errs,
            n,
            "subscriptionsPerTopic",
            0,
            MAX_CONSUMERS_PER_STREAM as u64,
            "subscriptionsPerTopic: 1 (each is one durable consumer)",
        ),
    };
    let ret = omb_retention(&doc, &mut errs, get("retention"), retention);
    if let (Some(t), Some(s)) = (topics, subs) {
        too_many_assets(&doc, &mut errs, t, s);
    }
    match (topics, size, rate, subs, ret) {
        (Some(topics), Some(size), Some(rate), Some(subs), Some((retention_s, from))) if errs.is_empty() => Ok(build(
            &Omb {
                topics,
                size,
                rate: rate_flag.unwrap_or(rate),
                file_rate: rate_flag.map(|_| rate),
                subs,
                retention_s,
                from,
            },
            entries,
        )),
        _ => Err(doc.errors(errs).into()),
    }
}

/// The file's top-level mapping, or the problem that it is not one.
fn mapping(doc: &Doc) -> Result<&[(Node, Node)]> {
    match doc.root().map(|n| (&n.val, n.pos)) {
        Some((Val::Map(e), _)) => Ok(e),
        other => {
            let at = other.map(|(_, p)| p).unwrap_or(Pos { line: 1, col: 1 });
            let mut e = doc.error(
                "",
                "an OMB workload is a mapping of keys (topics, messageSize, producerRate, ...)",
                "write `key: value` lines, as OMB's workloads/*.yaml",
            );
            (e.line, e.column) = (Some(at.line), Some(at.col));
            Err(doc.errors(vec![e]).into())
        }
    }
}

/// A problem for each key given twice.
fn duplicate_keys(doc: &Doc, entries: &[(Node, Node)], errs: &mut Vec<InputError>) {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (k, _) in entries {
        if let Val::Scalar(s) = &k.val {
            if let Some(&line) = first.get(s.text.as_str()) {
                let mut e = doc.error(
                    &s.text,
                    format!("key '{}' is given twice (first on line {line})", clip(&s.text)),
                    "keep one of them",
                );
                (e.line, e.column) = (Some(k.pos.line), Some(k.pos.col));
                errs.push(e);
            } else {
                first.insert(s.text.as_str(), k.pos.line);
            }
        }
    }
}

/// `t` topics of `s` consumers each: a problem when that is more assets than natsplan plans.
fn too_many_assets(doc: &Doc, errs: &mut Vec<InputError>, t: u64, s: u64) {
    let assets = t.saturating_mul(1 + s);
    let limit = MAX_ASSETS.min(MAX_PLANNED_ASSETS);
    if assets > limit {
        // OMB's 1,000,000-topic files land here. Pointed at the count that alone passes the bound.
        let share = limit / (1 + s.min(limit));
        let (key, fix) = if share == 0 {
            (
                "subscriptionsPerTopic",
                format!("lower subscriptionsPerTopic (at most {} with one topic)", limit - 1),
            )
        } else {
            (
                "topics",
                format!(
                    "plan a share of the topics (topics: {share} fits) and scale the result, or lower \
                     subscriptionsPerTopic"
                ),
            )
        };
        errs.push(doc.error(
            key,
            format!(
                "{t} topics × (1 stream + {s} consumers) = {assets} assets; natsplan plans at most {limit} \
                 in bounded time and memory (both grow with the asset count: 200,000 take about 3.5 s and \
                 500 MiB on 2 cores, docs/scale.md)"
            ),
            fix,
        ));
    }
}

fn key_is(key: &Node, k: &str) -> bool {
    matches!(&key.val, Val::Scalar(s) if s.text == k)
}

/// A whole number in `lo..=hi` (a float with no fraction, as `1e3`, counts), or a problem.
fn whole(doc: &Doc, errs: &mut Vec<InputError>, n: &Node, key: &str, lo: u64, hi: u64, example: &str) -> Option<u64> {
    let got = match &n.val {
        Val::Scalar(s) => match s.typed() {
            Typed::Int(i) => Some(i as f64),
            Typed::Float(f) if f.is_finite() && f.fract() == 0.0 => Some(f),
            Typed::BigInt => Some(f64::INFINITY),
            _ => None,
        },
        _ => None,
    };
    let at = |mut e: InputError| {
        (e.line, e.column) = (Some(n.pos.line), Some(n.pos.col));
        e
    };
    match got {
        Some(x) if x >= lo as f64 && x <= hi as f64 => Some(x as u64),
        Some(x) if x < lo as f64 => {
            let msg = if key == "topics" && x == 0.0 {
                "0 topics is no workload".to_string()
            } else {
                format!("must be at least {lo}, got {}", clip(&describe_num(n)))
            };
            errs.push(at(doc.error(key, msg, format!("write e.g. {example}"))));
            None
        }
        Some(_) => {
            errs.push(at(doc.error(
                key,
                format!("{} is more than the {hi} natsplan plans", clip(&describe_num(n))),
                format!("write at most {hi}, e.g. {example}"),
            )));
            None
        }
        None => {
            errs.push(at(doc.error(
                key,
                format!("expected a whole number ≥ {lo}, got {}", n.describe()),
                format!("write e.g. {example}"),
            )));
            None
        }
    }
}

fn describe_num(n: &Node) -> String {
    match &n.val {
        Val::Scalar(s) => s.text.clone(),
        _ => n.describe(),
    }
}

/// The file's producerRate. A max-rate value (0, or OMB's 10,000,000) is an error unless `--omb-rate`
/// gives the rate to size for; then it is returned as read (the flag replaces it).
fn producer_rate(doc: &Doc, errs: &mut Vec<InputError>, n: &Node, flag: Option<f64>) -> Option<f64> {
    let x = match &n.val {
        Val::Scalar(s) => match s.typed() {
            Typed::Int(i) => Some(i as f64),
            Typed::Float(f) => Some(f),
            _ => None,
        },
        _ => None,
    };
    let mut push = |msg: String, fix: &str| {
        let mut e = doc.error("producerRate", msg, fix);
        (e.line, e.column) = (Some(n.pos.line), Some(n.pos.col));
        errs.push(e);
    };
    const FIX: &str = "give the rate to size for with --omb-rate R (messages/s of the whole workload), or set \
                       producerRate to it in the file";
    match x {
        Some(r) if flag.is_some() && (r == 0.0 || r >= MAX_RATE_CONVENTION) => Some(r),
        Some(r) if r.is_finite() && r >= MAX_RATE_CONVENTION => {
            push(
                format!(
                    "{} is OMB's max-rate convention ('discover the max sustainable rate'), not a rate to size \
                     storage for",
                    describe_num(n)
                ),
                FIX,
            );
            None
        }
        Some(r) if r.is_finite() && r > 0.0 => Some(r),
        Some(0.0) => {
            push(
                "0 means 'publish as fast as possible' in OMB, which cannot be planned for".into(),
                FIX,
            );
            None
        }
        _ => {
            push(
                format!("expected a finite number of messages/s above 0, got {}", n.describe()),
                "write e.g. producerRate: 50000",
            );
            None
        }
    }
}

/// The file's `retention` (not an OMB key; added for natsplan), else `--omb-retention`.
fn omb_retention(
    doc: &Doc,
    errs: &mut Vec<InputError>,
    n: Option<&Node>,
    flag: Option<&str>,
) -> Option<(f64, &'static str)> {
    const FIX: &str = "write a duration such as 24h or 7d";
    match n {
        Some(n) => {
            let text = match &n.val {
                Val::Scalar(s) if matches!(s.typed(), Typed::Str(_)) => Some(s.text.as_str()),
                _ => None,
            };
            let r = match text {
                Some(t) => parse_secs(t),
                None => Err(format!("expected a duration, got {}", n.describe())),
            };
            match r {
                Ok(s) => Some((s, "the file's retention")),
                Err(e) => {
                    let mut x = doc.error("retention", e, FIX);
                    (x.line, x.column) = (Some(n.pos.line), Some(n.pos.col));
                    errs.push(x);
                    None
                }
            }
        }
        None => match flag {
            Some(r) => match parse_secs(r) {
                Ok(s) => Some((s, "--omb-retention")),
                Err(e) => {
                    errs.push(InputError {
                        path: "--omb-retention".into(),
                        line: None,
                        column: None,
                        message: format!("{r}: {e}"),
                        fix: Some(FIX.into()),
                    });
                    None
                }
            },
            None => {
                errs.push(InputError {
                    path: "retention".into(),
                    line: None,
                    column: None,
                    message: "no retention: OMB's NATS driver creates streams without limits".into(),
                    fix: Some(
                        "say how long messages are kept with --omb-retention DURATION (e.g. 24h) or `retention: 24h` \
                         in the file"
                            .into(),
                    ),
                });
                None
            }
        },
    }
}

/// One stream per topic, and notes on what was assumed or ignored.
fn build(o: &Omb, entries: &[(Node, Node)]) -> Imported {
    let Omb {
        topics,
        size,
        rate,
        file_rate,
        subs,
        retention_s,
        from,
    } = *o;
    let mut notes = Vec::new();
    if let Some(f) = file_rate {
        notes.push(format!(
            "OMB: sized at --omb-rate {rate} msgs/s (the file's producerRate {f}{} is replaced)",
            if f == 0.0 || f >= MAX_RATE_CONVENTION {
                ", OMB's 'as fast as possible',"
            } else {
                ""
            }
        ));
    }
    let per_topic = rate / topics as f64;
    notes.push(format!(
        "OMB: {topics} topic{} → {topics} stream{} ({TOPIC_PREFIX}-0000000…), {per_topic:.1} msgs/s each (producerRate \
         {rate} split over the topics), {size} B messages, {subs} durable consumer{} each, retention {}s from {from}; \
         replicas: the layout's default (OMB's replicationFactor is in the driver file, not the workload)",
        plural_s(topics),
        plural_s(topics),
        plural_s(subs),
        retention_s
    ));
    let mut ignored = Vec::new();
    let mut unknown = Vec::new();
    for k in entries.iter().filter_map(|(k, _)| match &k.val {
        Val::Scalar(s) => Some(s.text.as_str()),
        _ => None,
    }) {
        if let Some((_, why)) = IGNORED.iter().find(|(n, _)| *n == k) {
            ignored.push(format!("{k} ({why})"));
        } else if !matches!(
            k,
            "topics" | "messageSize" | "producerRate" | "subscriptionsPerTopic" | "retention"
        ) {
            unknown.push(clip(k));
        }
    }
    if !ignored.is_empty() {
        notes.push(format!("OMB keys ignored: {}", ignored.join("; ")));
    }
    if !unknown.is_empty() {
        let shown = unknown.len().min(20);
        let more = if unknown.len() > shown {
            format!(" and {} more", unknown.len() - shown)
        } else {
            String::new()
        };
        notes.push(format!("unknown keys ignored: {}{more}", unknown[..shown].join(", ")));
    }
    // `topics` is bounded by MAX_OMB_TOPICS, so this is at most that many streams.
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
                consumers: subs as u32,
                max_bytes: None,
                subjects: Vec::new(),
            }
        })
        .collect();
    Imported { streams, notes }
}

fn parse_secs(s: &str) -> Result<f64, String> {
    let d = crate::units::parse_duration(s)?;
    if d.as_secs_f64() <= 0.0 {
        return Err("must be longer than 0".into());
    }
    Ok(d.as_secs_f64())
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

    #[test]
    fn max_rate_files_are_refused_naming_omb_rate_or_sized_at_it() {
        for rate in ["0", "10000000", "1e7", "20000000"] {
            let text = format!("topics: 100\nmessageSize: 1024\nproducerRate: {rate}\n");
            let err = format!("{:#}", parse(&text, Some("1h")).unwrap_err());
            assert!(err.contains("--omb-rate R"), "{rate}: {err}");
            assert!(err.contains("producerRate"), "{rate}: {err}");
            let imp = parse_with(&text, Some("1h"), Some(5_000.0)).unwrap();
            assert_eq!(imp.streams.len(), 100);
            assert_eq!(
                imp.streams[0].msgs_per_s, 50.0,
                "{rate}: sized at --omb-rate, never 10 M msgs/s"
            );
            assert!(
                imp.notes.iter().any(|n| n.contains("--omb-rate 5000")),
                "{:?}",
                imp.notes
            );
        }
        // An ordinary rate is kept without the flag, replaced with it.
        let text = "topics: 2\nmessageSize: 1024\nproducerRate: 1000\n";
        assert_eq!(parse(text, Some("1h")).unwrap().streams[0].msgs_per_s, 500.0);
        assert_eq!(
            parse_with(text, Some("1h"), Some(10.0)).unwrap().streams[0].msgs_per_s,
            5.0
        );
        let bad = format!("{:#}", parse_with(text, Some("1h"), Some(0.0)).unwrap_err());
        assert!(bad.contains("--omb-rate"), "{bad}");
    }

    #[test]
    fn a_million_topics_are_refused_at_once_with_the_reason() {
        let t = std::time::Instant::now();
        let e = format!(
            "{:#}",
            parse(
                "topics: 1000000\nmessageSize: 1024\nsubscriptionsPerTopic: 0\nproducerRate: 50000\n",
                Some("1h")
            )
            .unwrap_err()
        );
        assert!(e.contains("1000000 topics") && e.contains("at most 200000"), "{e}");
        assert!(t.elapsed().as_secs() < 5, "refused before anything is built");
        // OMB's 100 k-topic file with one subscription each is 200,000 assets: planned.
        let ok = parse("topics: 100000\nmessageSize: 1024\nproducerRate: 50000\n", Some("1h")).unwrap();
        assert_eq!(ok.streams.len(), 100_000);
    }

    #[test]
    fn counts_are_bounded_before_anything_is_built() {
        let e = |t: &str| format!("{:#}", parse(t, Some("1h")).unwrap_err());
        // Once a panic (capacity overflow) and out-of-memory aborts.
        let huge = e("topics: 18446744073709551615\nmessageSize: 1\nproducerRate: 1\n");
        assert!(
            huge.contains(":1:9: topics:") && huge.contains("more than the 1000000"),
            "{huge}"
        );
        assert!(e("topics: 1e15\nmessageSize: 1\nproducerRate: 1\n").contains("more than the"));
        let subs = e("topics: 1\nmessageSize: 1\nproducerRate: 1\nsubscriptionsPerTopic: 4294967295\n");
        assert!(
            subs.contains("subscriptionsPerTopic") && subs.contains("10000"),
            "{subs}"
        );
        let many = e("topics: 200000\nmessageSize: 1\nproducerRate: 1\nsubscriptionsPerTopic: 9\n");
        assert!(many.contains("2000000 assets"), "{many}");
        // The largest real workloads are read.
        let big = parse("topics: 100000\nmessageSize: 1024\nproducerRate: 1000000\n", Some("1h")).unwrap();
        assert_eq!(big.streams.len(), 100_000);
    }

    #[test]
    fn every_problem_is_reported_with_its_place() {
        let e = format!(
            "{:#}",
            parse(
                "topics: x\nmessageSize: 0\nproducerRate: .nan\nretention: forever\n",
                None
            )
            .unwrap_err()
        );
        for want in [
            ":1:9: topics:",
            ":2:14: messageSize:",
            ":3:15: producerRate:",
            ":4:12: retention:",
        ] {
            assert!(e.contains(want), "{want} not in {e}");
        }
        let twice = format!(
            "{:#}",
            parse("topics: 1\nmessageSize: 1\nproducerRate: 1\ntopics: 2\n", None).unwrap_err()
        );
        assert!(
            twice.contains(":4:1: topics: key 'topics' is given twice (first on line 1)"),
            "{twice}"
        );
        let deep = format!("topics: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        assert!(format!("{:#}", parse(&deep, None).unwrap_err()).contains("nested"));
    }
}
