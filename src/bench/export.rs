//! Exporters: pure functions from a `BenchResult` to bytes. Text follows nats-bench's familiar lines,
//! JSON is the machine contract (`kind`, `msgs`, `size`, `msgs_per_s`, `bytes_per_s`, `latency_us`, ...),
//! CSV has nats bench's columns. Nothing here reads a clock or a socket.

use super::result::{BenchResult, Group, LatencySummary};
use serde_json::{json, Value};
use std::fmt::Write;

/// `2009230.4` → `2,009,230`.
pub fn commas(x: f64) -> String {
    let n = x.round().max(0.0) as u64;
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Bytes the way nats bench prints them (go-humanize's `IBytes`): base 1024, `KiB`/`MiB`/`GiB` labels,
/// one decimal below 10 and none above (`3.7 MiB`, `31 MiB`), plain bytes below 10.
pub fn human_bytes(x: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let b = x.max(0.0).floor();
    if b < 10.0 {
        return format!("{b:.0} B");
    }
    let e = (b.ln() / 1024f64.ln()).floor().min((units.len() - 1) as f64);
    let val = (b / 1024f64.powf(e) * 10.0 + 0.5).floor() / 10.0;
    if val < 10.0 {
        format!("{val:.1} {}", units[e as usize])
    } else {
        format!("{val:.0} {}", units[e as usize])
    }
}

/// A latency in microseconds as nats bench prints it (go-humanize's `CommafWithDigits(x, 2)`): thousands
/// separated, at most two decimals, trailing zeros dropped (`1,234.5`, `33.26`, `12`).
pub fn us(x: f64) -> String {
    let s = format!("{:.2}", x.max(0.0));
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    let frac = frac.trim_end_matches('0');
    let int = commas(int.parse::<f64>().unwrap_or(0.0));
    if frac.is_empty() {
        int
    } else {
        format!("{int}.{frac}")
    }
}

fn unit(r: &BenchResult) -> &'static str {
    if r.ops {
        "ops/sec"
    } else {
        "msgs/sec"
    }
}

/// One sample's line: `R msgs/sec ~ X MiB/sec`, then its latency as nats bench's `BenchSample.String`
/// prints it (`~ min: ..us ~ avg: ..us ~ max: ..us ~ P50: ..us ~ P90: ..us ~ P99: ..us ~ P99.9: ..us`).
fn sample_line(rate: f64, bytes_per_s: f64, lat: Option<&LatencySummary>, u: &str) -> String {
    let mut s = format!("{} {u} ~ {}/sec", commas(rate), human_bytes(bytes_per_s));
    if let Some(l) = lat {
        let _ = write!(
            s,
            " ~ min: {}us ~ avg: {}us ~ max: {}us ~ P50: {}us ~ P90: {}us ~ P99: {}us ~ P99.9: {}us",
            us(l.min),
            us(l.avg),
            us(l.max),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.p999)
        );
    }
    s
}

/// nats bench's "latencies per operation" line of a group.
fn lat_line(l: &LatencySummary) -> String {
    format!(
        "min {}us | avg {}us | max {}us | stddev {}us | P50 {}us | P90 {}us | P99 {}us | P99.9: {}us",
        us(l.min),
        us(l.avg),
        us(l.max),
        us(l.stddev),
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.p999)
    )
}

/// A group as nats bench's `Report` prints it: one client → `NATS <label> stats: <sample>`; several →
/// ` [i] <sample> (N msgs)` per client, a blank line, the aggregated line, the spread of client rates and
/// the group's latencies. `label` is the group's name in the headline.
fn group_report(out: &mut String, label: &str, g: &Group, lat: Option<&LatencySummary>, u: &str) {
    if g.clients.len() == 1 {
        let c = &g.clients[0];
        let l = c.latency_us.as_ref().or(lat);
        let _ = writeln!(
            out,
            "NATS {label} stats: {}",
            sample_line(c.msgs_per_s(), c.bytes_per_s(), l, u)
        );
        return;
    }
    for (i, c) in g.clients.iter().enumerate() {
        let line = sample_line(c.msgs_per_s(), c.bytes_per_s(), c.latency_us.as_ref(), u);
        let _ = writeln!(out, "  [{}] {line} ({} msgs)", i + 1, commas(c.msgs as f64));
    }
    let _ = writeln!(
        out,
        "\n NATS {label} aggregated stats: {} {u} ~ {}/sec",
        commas(g.msgs_per_s()),
        human_bytes(g.bytes_per_s())
    );
    if let Some(s) = g.rate_spread() {
        let _ = writeln!(
            out,
            " message rates min {} | avg {} | max {} | stddev {} msgs",
            commas(s.min),
            commas(s.avg),
            commas(s.max),
            commas(s.stddev)
        );
    }
    if let Some(l) = lat {
        let _ = writeln!(out, " latencies per operation {}", lat_line(l));
    }
}

/// One side of a run that has both (core pub/sub): ` Pub stats: <sample>`, then with several clients
/// each client's line and the spread of their rates.
fn side_report(out: &mut String, name: &str, g: &Group, lat: Option<&LatencySummary>, u: &str) {
    let _ = writeln!(
        out,
        " {name} stats: {}",
        sample_line(g.msgs_per_s(), g.bytes_per_s(), lat, u)
    );
    if g.clients.len() > 1 {
        for (i, c) in g.clients.iter().enumerate() {
            let line = sample_line(c.msgs_per_s(), c.bytes_per_s(), c.latency_us.as_ref(), u);
            let _ = writeln!(out, "  [{}] {line} ({} msgs)", i + 1, commas(c.msgs as f64));
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

/// The human report, as the current `nats bench` prints it: the banner, then per group (publishers,
/// subscribers) `NATS <label> stats: R msgs/sec ~ X MiB/sec ~ min: ..us ~ avg: ..us ...`; a run with
/// both sides (core pub/sub) first prints the aggregate `NATS Pub/Sub stats:` line and names each side
/// (`Pub`, `Sub`). Then rate and loss notes.
pub fn text(r: &BenchResult) -> Vec<u8> {
    let mut out = String::new();
    let u = unit(r);
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "Starting {} benchmark [{}]", r.label, params.join(", "));
    for w in &r.warnings {
        let _ = writeln!(out, "WARNING: {w}");
    }
    out.push('\n');
    let both = !r.publishers.clients.is_empty() && !r.subscribers.clients.is_empty();
    if both {
        let _ = writeln!(
            out,
            "NATS {} stats: {} {u} ~ {}/sec",
            r.label,
            commas(r.msgs_per_s()),
            human_bytes(r.bytes_per_s())
        );
        // The run's latency is measured on one side only (subscribers for core stamps).
        let sub_lat = r.subscribers.clients.iter().any(|c| c.latency_us.is_some());
        let (pl, sl) = if sub_lat {
            (None, r.latency_us.as_ref())
        } else {
            (r.latency_us.as_ref(), None)
        };
        side_report(&mut out, "Pub", &r.publishers, pl, u);
        side_report(&mut out, "Sub", &r.subscribers, sl, u);
    } else if !r.publishers.clients.is_empty() || !r.subscribers.clients.is_empty() {
        let g = if r.publishers.clients.is_empty() {
            &r.subscribers
        } else {
            &r.publishers
        };
        group_report(&mut out, &r.label, g, r.latency_us.as_ref(), u);
    } else {
        out.push_str("No publisher or subscribers. Nothing to report.\n");
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
        "left_behind": r.left_behind,
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

/// The header nats bench writes when the run measured no latency: the first seven columns.
pub const CSV_HEADER_NO_LATENCY: &str = "#RunID,ClientID,MsgCount,MsgBytes,MsgsPerSec,BytesPerSec,DurationSecs";

/// nats bench's CSV (natscli `internal/bench/stats.go`, `BenchmarkResults.CSV`): one row per client;
/// the latency columns only when the run measured latency (a client that measured none then leaves
/// them empty). Columns as nats bench fills them:
/// - `ClientID`: `P0, P1, …` for publishers (and putters), `S0, S1, …` for subscribers (consumers,
///   getters), numbered from 0 within each side, as nats bench numbers them;
/// - `MsgCount`: the connection's protocol messages in and out (acks and flow control included);
/// - `MsgBytes`: payload bytes, message size × the client's messages, so `BytesPerSec` = `MsgBytes` ÷
///   `DurationSecs` in the same row;
/// - `MsgsPerSec`: the client's messages ÷ its duration, truncated to a whole number; `BytesPerSec`,
///   `DurationSecs` and the latencies (microseconds) with six decimals (Go's `%f`).
pub fn csv(r: &BenchResult) -> Vec<u8> {
    let all = || r.publishers.clients.iter().chain(&r.subscribers.clients);
    let with_latency = r.latency_us.is_some() || all().any(|c| c.latency_us.is_some());
    let header = if with_latency {
        CSV_HEADER
    } else {
        CSV_HEADER_NO_LATENCY
    };
    let mut out = crate::text::Csv::lf();
    out.record(header.split(','));
    for (prefix, g) in [("P", &r.publishers), ("S", &r.subscribers)] {
        for (j, c) in g.clients.iter().enumerate() {
            let mut rec = vec![
                r.run_id.clone(),
                format!("{prefix}{j}"),
                c.proto_msgs.to_string(),
                c.bytes.to_string(),
                (c.msgs_per_s().floor() as u64).to_string(),
                format!("{:.6}", c.bytes_per_s()),
                format!("{:.6}", c.duration_s()),
            ];
            match (&c.latency_us, with_latency) {
                (Some(l), _) => {
                    rec.extend([l.min, l.avg, l.max, l.p50, l.p90, l.p99, l.p999, l.stddev].map(|x| format!("{x:.6}")))
                }
                (None, true) => rec.extend(std::iter::repeat_n(String::new(), 8)),
                (None, false) => {}
            }
            out.record(rec);
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
        let params = BTreeMap::from([("msgs".into(), "100000".into()), ("msgsize".into(), "16".into())]);
        BenchResult {
            publishers: Group {
                clients: vec![c("P1", 0.0, 0.05)],
            },
            subscribers: Group {
                clients: vec![c("S1", 0.0, 0.1)],
            },
            ..BenchResult::blank("core", "Pub/Sub", params, 100_000, 16, "abc")
        }
    }

    #[test]
    fn numbers_print_like_nats_bench() {
        assert_eq!(commas(2_009_230.4), "2,009,230");
        assert_eq!(commas(999.0), "999");
        // go-humanize's IBytes: one decimal below 10, none above, KiB/MiB labels.
        assert_eq!(human_bytes(30.66 * 1024.0 * 1024.0), "31 MiB");
        assert_eq!(human_bytes(3.7 * 1024.0 * 1024.0), "3.7 MiB");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_bytes(9.0), "9 B");
        assert_eq!(us(33.26), "33.26");
        assert_eq!(us(1234.5), "1,234.5");
        assert_eq!(us(12.0), "12");
    }

    #[test]
    fn text_has_the_lines_of_the_current_nats_bench() {
        let t = String::from_utf8(text(&sample())).unwrap();
        assert!(
            t.starts_with("Starting Pub/Sub benchmark [msgs=100000, msgsize=16]\n"),
            "{t}"
        );
        assert!(t.contains("NATS Pub/Sub stats: 2,000,000 msgs/sec ~ 30 MiB/sec"), "{t}");
        assert!(t.contains(" Pub stats: 2,000,000 msgs/sec ~ 30 MiB/sec\n"), "{t}");
        assert!(t.contains(" Sub stats: 1,000,000 msgs/sec ~ 15 MiB/sec\n"), "{t}");
        // One side only, with latency: `NATS <label> stats: R msgs/sec ~ X MiB/sec ~ min: ..us ~ avg: ..us`.
        let mut r = sample();
        r.subscribers.clients.clear();
        r.label = "JetStream asynchronous publisher".into();
        r.latency_us = Some(LatencySummary {
            count: 10,
            min: 10.0,
            avg: 33.26,
            p50: 30.0,
            p90: 50.5,
            p99: 90.0,
            p999: 1234.5,
            max: 2000.0,
            stddev: 4.0,
        });
        let t = String::from_utf8(text(&r)).unwrap();
        assert!(
            t.contains("NATS JetStream asynchronous publisher stats: 2,000,000 msgs/sec ~ 30 MiB/sec ~ min: 10us ~ avg: 33.26us ~ max: 2,000us ~ P50: 30us ~ P90: 50.5us ~ P99: 90us ~ P99.9: 1,234.5us\n"),
            "{t}"
        );
        // Several clients: one line each, then the aggregate, the spread and the latencies.
        r.publishers.clients.push(r.publishers.clients[0].clone());
        let t = String::from_utf8(text(&r)).unwrap();
        assert!(
            t.contains("  [2] 2,000,000 msgs/sec ~ 30 MiB/sec (100,000 msgs)\n"),
            "{t}"
        );
        assert!(
            t.contains(
                "\n\n NATS JetStream asynchronous publisher aggregated stats: 4,000,000 msgs/sec ~ 61 MiB/sec\n"
            ),
            "{t}"
        );
        assert!(
            t.contains(" message rates min 2,000,000 | avg 2,000,000 | max 2,000,000 | stddev 0 msgs\n"),
            "{t}"
        );
        assert!(
            t.contains(" latencies per operation min 10us | avg 33.26us | max 2,000us | stddev 4us | P50 30us"),
            "{t}"
        );
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
    fn csv_has_nats_bench_semantics() {
        let s = String::from_utf8(csv(&sample())).unwrap();
        let lines: Vec<_> = s.lines().collect();
        // No latency measured: nats bench's seven columns.
        assert_eq!(lines[0], CSV_HEADER_NO_LATENCY);
        assert_eq!(lines.len(), 3);
        // Ids from 0 per side; MsgCount the connection's messages; MsgBytes payload bytes (100,000 × 16),
        // so BytesPerSec = MsgBytes / DurationSecs in the same row.
        assert_eq!(lines[1], "abc,P0,100000,1600000,2000000,32000000.000000,0.050000");
        assert_eq!(lines[2], "abc,S0,100000,1600000,1000000,16000000.000000,0.100000");
        for l in &lines[1..] {
            let f: Vec<f64> = l.split(',').skip(3).map(|x| x.parse().unwrap()).collect();
            assert!((f[0] / f[3] - f[2]).abs() < 1e-3, "{l}");
        }
        // With latency: all fifteen columns; a client without latency leaves them empty.
        let mut r = sample();
        r.subscribers.clients[0].latency_us = LatencySummary::from_hist_ns(&{
            let mut h = crate::bench::result::new_hist();
            h.record(5_000).unwrap();
            h
        });
        let s = String::from_utf8(csv(&r)).unwrap();
        let lines: Vec<_> = s.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(lines[1].ends_with(",,,,,,,,"), "{}", lines[1]);
        assert!(
            lines[2].starts_with("abc,S0,") && lines[2].contains(",5.000000,"),
            "{}",
            lines[2]
        );
        for l in &lines {
            assert_eq!(l.split(',').count(), CSV_HEADER.split(',').count(), "{l}");
        }
    }
}
