//! Exporters: pure functions from a `BenchResult` to bytes. Text follows nats-bench's familiar lines,
//! JSON is the machine contract (`kind`, `msgs`, `size`, `msgs_per_s`, `bytes_per_s`, `latency_us`, ...),
//! CSV has nats bench's columns. Nothing here reads a clock or a socket.

use super::result::{BenchResult, ClientSample, Group, LatencySummary};
use serde_json::{json, Value};
use std::fmt::Write;

/// `2009230.4` → `2,009,230`.
pub fn commas(x: f64) -> String {
    let n = x.round().max(0.0) as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Bytes per second the way nats-bench prints them: base 1024 with KB/MB/GB labels.
pub fn human_bytes(x: f64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = x;
    let mut i = 0;
    while v >= 1024.0 && i < units.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} {}", units[i])
    } else {
        format!("{v:.2} {}", units[i])
    }
}

fn unit(r: &BenchResult) -> &'static str {
    if r.ops {
        "ops/sec"
    } else {
        "msgs/sec"
    }
}

fn lat_line(l: &LatencySummary) -> String {
    format!(
        "min {:.2}us | avg {:.2}us | max {:.2}us | stddev {:.2}us | P50 {:.2}us | P90 {:.2}us | P99 {:.2}us | P99.9 {:.2}us",
        l.min, l.avg, l.max, l.stddev, l.p50, l.p90, l.p99, l.p999
    )
}

fn client_line(out: &mut String, i: usize, c: &ClientSample, u: &str) {
    let _ = writeln!(
        out,
        "  [{}] {} {u} ~ {}/sec ({} msgs)",
        i + 1,
        commas(c.msgs_per_s()),
        human_bytes(c.bytes_per_s()),
        c.msgs
    );
}

fn group_lines(out: &mut String, name: &str, g: &Group, u: &str) {
    let _ = writeln!(
        out,
        " {name} stats: {} {u} ~ {}/sec",
        commas(g.msgs_per_s()),
        human_bytes(g.bytes_per_s())
    );
    if g.clients.len() > 1 {
        for (i, c) in g.clients.iter().enumerate() {
            client_line(out, i, c, u);
        }
        if let Some(s) = g.rate_spread() {
            let _ = writeln!(
                out,
                "  min {} | avg {} | max {} | stddev {} msgs",
                commas(s.min),
                commas(s.avg),
                commas(s.max),
                commas(s.stddev)
            );
        }
    }
}

/// The human report: banner, headline, groups, per-client lines, latency, rate and loss notes.
pub fn text(r: &BenchResult) -> Vec<u8> {
    let mut out = String::new();
    let u = unit(r);
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "Starting {} benchmark [{}]", r.label, params.join(", "));
    for w in &r.warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    let both = !r.publishers.clients.is_empty() && !r.subscribers.clients.is_empty();
    let _ = writeln!(
        out,
        "NATS {} stats: {} {u} ~ {}/sec",
        r.label,
        commas(r.msgs_per_s()),
        human_bytes(r.bytes_per_s())
    );
    if both {
        group_lines(&mut out, "Pub", &r.publishers, u);
        group_lines(&mut out, "Sub", &r.subscribers, u);
    } else {
        let g = if r.publishers.clients.is_empty() {
            &r.subscribers
        } else {
            &r.publishers
        };
        if g.clients.len() > 1 {
            for (i, c) in g.clients.iter().enumerate() {
                client_line(&mut out, i, c, u);
            }
            if let Some(s) = g.rate_spread() {
                let _ = writeln!(
                    out,
                    " message rates min {} | avg {} | max {} | stddev {} {}",
                    commas(s.min),
                    commas(s.avg),
                    commas(s.max),
                    commas(s.stddev),
                    if r.ops { "ops" } else { "msgs" }
                );
            }
        }
    }
    if let Some(l) = &r.latency_us {
        let _ = writeln!(out, " latencies ({} samples) {}", l.count, lat_line(l));
    }
    if let Some(rt) = &r.rate {
        let verdict = if rt.sustained { "sustained" } else { "not sustained" };
        let _ = writeln!(
            out,
            " rate: target {} {u}, achieved {} {u}: {verdict} (max lag {:.1} ms, cut-off {:.0} ms)",
            commas(rt.target_per_s),
            commas(rt.achieved_per_s),
            rt.max_lag_ms,
            rt.cutoff_ms
        );
    }
    if let Some(l) = &r.losses {
        let _ = writeln!(
            out,
            " delivery: {} published, {} subscriber(s) expecting {} each, {} received; dropped {}; client slow-consumer events {}; server slow_consumers {}{}",
            commas(r.published() as f64),
            r.subscribers.clients.len(),
            commas(l.expected_per_sub as f64),
            commas(r.received() as f64),
            commas(l.dropped as f64),
            l.client_slow_events,
            l.server_slow_consumers.map(|n| n.to_string()).unwrap_or_else(|| "n/a (no --monitor)".into()),
            if l.timed_out { "; subscribers timed out waiting" } else { "" }
        );
    }
    out.into_bytes()
}

fn lat_json(l: &Option<LatencySummary>) -> Value {
    match l {
        Some(l) => json!({
            "count": l.count, "min": l.min, "avg": l.avg, "p50": l.p50, "p90": l.p90, "p99": l.p99,
            "p999": l.p999, "max": l.max, "stddev": l.stddev,
        }),
        None => Value::Null,
    }
}

fn clients_json(g: &Group) -> Value {
    Value::Array(
        g.clients
            .iter()
            .map(|c| {
                json!({
                    "id": c.id, "msgs": c.msgs, "bytes": c.bytes, "duration_s": c.duration_s(),
                    "msgs_per_s": c.msgs_per_s(), "bytes_per_s": c.bytes_per_s(), "latency_us": lat_json(&c.latency_us),
                })
            })
            .collect(),
    )
}

/// The JSON value (stable keys; see the module doc).
pub fn json_value(r: &BenchResult) -> Value {
    let mut v = json!({
        "kind": r.kind,
        "label": r.label,
        "run_id": r.run_id,
        "params": r.params,
        "msgs": r.msgs,
        "size": r.size,
        "published": r.published(),
        "received": r.received(),
        "failed": r.failed,
        "window_s": r.window_s(),
        "msgs_per_s": r.msgs_per_s(),
        "bytes_per_s": r.bytes_per_s(),
        "latency_us": lat_json(&r.latency_us),
        "publishers": clients_json(&r.publishers),
        "subscribers": clients_json(&r.subscribers),
        "warnings": r.warnings,
        "complete": r.completion.complete(),
        "asked": r.completion.asked,
        "done": r.completion.done,
        "unacknowledged": r.completion.unacknowledged,
        "interrupted": r.completion.interrupted,
    });
    let m = v.as_object_mut().expect("json! of an object literal is an object");
    if r.ops {
        m.insert("ops_per_s".into(), json!(r.msgs_per_s()));
    }
    if !r.publishers.clients.is_empty() && !r.subscribers.clients.is_empty() {
        m.insert("aggregate_msgs_per_s".into(), json!(r.aggregate_msgs_per_s()));
    }
    if !r.publishers.clients.is_empty() {
        m.insert("pub_msgs_per_s".into(), json!(r.publishers.msgs_per_s()));
    }
    if !r.subscribers.clients.is_empty() {
        m.insert("sub_msgs_per_s".into(), json!(r.subscribers.msgs_per_s()));
    }
    if let Some(rt) = &r.rate {
        m.insert("rate".into(), serde_json::to_value(rt).unwrap_or(Value::Null));
    }
    if let Some(l) = &r.losses {
        m.insert("losses".into(), serde_json::to_value(l).unwrap_or(Value::Null));
    }
    v
}

pub fn json(r: &BenchResult) -> Vec<u8> {
    let mut b = serde_json::to_vec_pretty(&json_value(r)).unwrap_or_default();
    b.push(b'\n');
    b
}

pub const CSV_HEADER: &str = "#RunID,ClientID,MsgCount,MsgBytes,MsgsPerSec,BytesPerSec,DurationSecs,MinLatencyMicroSecs,AvgLatencyMicroSecs,MaxLatencyMicroSecs,P50LatencyMicroSecs,P90LatencyMicroSecs,P99LatencyMicroSecs,P99.9LatencyMicroSecs,StdDevLatencyMicroSecs";

/// nats bench's CSV: one row per client; latency columns empty when the client measured none.
pub fn csv(r: &BenchResult) -> Vec<u8> {
    let mut out = String::new();
    out.push_str(CSV_HEADER);
    out.push('\n');
    for c in r.publishers.clients.iter().chain(&r.subscribers.clients) {
        let _ = write!(
            out,
            "{},{},{},{},{:.0},{:.0},{:.6}",
            r.run_id,
            c.id,
            c.proto_msgs,
            c.proto_bytes,
            c.msgs_per_s(),
            c.bytes_per_s(),
            c.duration_s()
        );
        match &c.latency_us {
            Some(l) => {
                let _ = writeln!(
                    out,
                    ",{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}",
                    l.min, l.avg, l.max, l.p50, l.p90, l.p99, l.p999, l.stddev
                );
            }
            None => out.push_str(",,,,,,,,\n"),
        }
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::result::{ClientSample, Group};
    use std::collections::BTreeMap;

    fn sample() -> BenchResult {
        let c = |id: &str, a: f64, b: f64| ClientSample {
            id: id.into(),
            msgs: 100_000,
            bytes: 1_600_000,
            proto_msgs: 100_000,
            proto_bytes: 1_700_000,
            start_s: a,
            end_s: b,
            latency_us: None,
        };
        BenchResult {
            kind: "core".into(),
            label: "Pub/Sub".into(),
            params: BTreeMap::from([("msgs".into(), "100000".into()), ("msgsize".into(), "16".into())]),
            msgs: 100_000,
            size: 16,
            publishers: Group {
                clients: vec![c("P1", 0.0, 0.05)],
            },
            subscribers: Group {
                clients: vec![c("S1", 0.0, 0.1)],
            },
            latency_us: None,
            rate: None,
            losses: None,
            warnings: vec![],
            failed: 0,
            ops: false,
            run_id: "abc".into(),
            completion: Default::default(),
        }
    }

    #[test]
    fn numbers_print_like_nats_bench() {
        assert_eq!(commas(2_009_230.4), "2,009,230");
        assert_eq!(commas(999.0), "999");
        assert_eq!(human_bytes(30.66 * 1024.0 * 1024.0), "30.66 MB");
    }

    #[test]
    fn text_has_the_familiar_lines() {
        let t = String::from_utf8(text(&sample())).unwrap();
        assert!(
            t.starts_with("Starting Pub/Sub benchmark [msgs=100000, msgsize=16]\n"),
            "{t}"
        );
        assert!(
            t.contains("NATS Pub/Sub stats: 2,000,000 msgs/sec ~ 30.52 MB/sec"),
            "{t}"
        );
        assert!(t.contains(" Pub stats: 2,000,000 msgs/sec"), "{t}");
        assert!(t.contains(" Sub stats: 1,000,000 msgs/sec"), "{t}");
    }

    #[test]
    fn json_has_the_contract_keys() {
        let v = json_value(&sample());
        for k in [
            "kind",
            "msgs",
            "size",
            "msgs_per_s",
            "bytes_per_s",
            "latency_us",
            "aggregate_msgs_per_s",
            "pub_msgs_per_s",
            "sub_msgs_per_s",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        assert!(v.get("ops_per_s").is_none());
    }

    #[test]
    fn csv_has_header_and_one_row_per_client() {
        let s = String::from_utf8(csv(&sample())).unwrap();
        let lines: Vec<_> = s.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("abc,P1,100000,1700000,2000000,"));
        assert_eq!(lines[1].split(',').count(), CSV_HEADER.split(',').count());
    }
}
