//! Turns measurements into a calibration file (`natsplan-calibration/1`, docs/calibration-format.md) and
//! writes it atomically (a temporary file in the same folder, then a rename), so a crash or a full disk
//! never leaves half a file where a good one was.

use super::plan::Point;
use super::runner::{Measurement, JS_WINDOW};
use crate::perf::calibration::{CalibrationFile, Row, Series, Source, SCHEMA};
use crate::perf::Kind;
use anyhow::{anyhow, Context};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// What the rows share: the cluster they ran on and its sync mode as the model reads it.
#[derive(Debug, Clone)]
pub struct RowContext {
    pub servers: u32,
    /// `always` or `delayed`.
    pub sync: String,
}

/// The raid key measured rows carry. The model's fsync terms are in units of a reference volume's write
/// latency; verify and predict use seed 000's RAID 1 volume unless a layout says otherwise, so measured
/// rows are keyed to it and the terms come out in the units predictions use. The lab's store is not a RAID
/// volume; `hardware` and `conditions` say what it is.
pub const REFERENCE_RAID: &str = "raid1";

pub fn size_text(b: u64) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}KiB", b / 1024)
    } else {
        format!("{b}B")
    }
}

/// The calibration row for one measurement of one point.
pub fn row(p: &Point, m: &Measurement, ctx: &RowContext) -> Row {
    let jetstream = matches!(p.kind, Kind::ObjPut | Kind::ObjGet | Kind::Js | Kind::Kv) || p.kind.is_consumer();
    let rate = p.rate_per_s.is_some();
    let (workers, publishers, subscribers) = match p.kind {
        Kind::ObjPut | Kind::ObjGet | Kind::Kv => (Some(p.workers), None, None),
        Kind::Js | Kind::Flood => (None, Some(p.workers), None),
        Kind::Core => (None, Some(p.workers), Some(p.subscribers)),
        Kind::Ping => (Some(1), None, None),
        Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered => (Some(p.workers), None, None),
    };
    Row {
        label: format!("{} #{}", p.id, m.repeat),
        // Consumer reads are one row kind with the read mode beside it (perf::consumer).
        kind: if p.kind.is_consumer() {
            crate::perf::consumer::ROW_KIND.to_string()
        } else if p.kind == Kind::Js && p.readers.is_some() {
            crate::perf::calibration::JS_READERS_KIND.to_string()
        } else if p.kind == Kind::Kv && p.window.is_some() {
            crate::perf::calibration::KV_ASYNC_KIND.to_string()
        } else {
            p.kind.as_str().to_string()
        },
        servers: Some(ctx.servers),
        replicas: jetstream.then_some(p.replicas),
        raid: jetstream.then(|| REFERENCE_RAID.to_string()),
        write_cache: None,
        sync: jetstream.then(|| ctx.sync.clone()),
        size: Some(size_text(p.size_bytes)),
        workers,
        workers_placement: matches!(p.kind, Kind::ObjPut | Kind::Kv).then(|| "spread".to_string()),
        publishers,
        publishers_low: None,
        window: match p.kind {
            Kind::Js if rate => None,
            Kind::Js if p.sync_publish() => Some(1),
            Kind::Js => Some(p.window.unwrap_or(JS_WINDOW as u32)),
            Kind::Kv => p.window,
            _ => None,
        },
        subscribers,
        consumers: match p.kind {
            Kind::ObjPut => Some(0),
            Kind::Js => p.readers,
            _ => None,
        },
        consumers_placement: None,
        publish_mode: match p.kind {
            Kind::Js if p.sync_publish() => Some("sync".into()),
            Kind::Js => Some("async".into()),
            Kind::Kv if p.window.is_some() => Some("async".into()),
            Kind::Kv | Kind::ObjPut => Some("sync".into()),
            _ => None,
        },
        subjects: p.subjects.map(u64::from),
        storage: jetstream.then(|| "file".to_string()),
        mode: rate
            .then(|| "fixed-rate".to_string())
            .or_else(|| crate::perf::consumer::mode_name(p.kind).map(str::to_string)),
        msgs: Some(m.msgs),
        values: m.values.clone(),
        derived: vec![],
        flags: vec![],
        // The sweep's rows describe the knee; the closed-loop js rows carry the leader's rate.
        fit: !rate,
        note: match (rate, p.kind) {
            (true, _) => Some(format!(
                "open loop at {:.0} msgs/s, {} publisher(s), R{}",
                p.rate_per_s.unwrap_or(0.0),
                p.workers,
                p.replicas
            )),
            (false, Kind::Js) if p.sync_publish() && p.readers.is_some() => Some(format!(
                "synchronous publishes: one in flight per publisher, {} consumer(s) reading every message as it is written; msgs_per_s values: publishers' (pub_msgs_per_s) and readers' (sub_msgs_per_s)",
                p.readers.unwrap_or(0)
            )),
            (false, Kind::Js) if p.sync_publish() => Some("synchronous publishes: one in flight per publisher".into()),
            (false, Kind::Js) => Some(format!(
                "{} async publishes in flight per publisher{}",
                p.window.unwrap_or(JS_WINDOW as u32),
                p.subjects
                    .map(|n| format!(", messages round-robin over {n} subjects"))
                    .unwrap_or_default()
            )),
            (false, Kind::Kv) => p.window.map(|w| {
                format!(
                    "{w} asynchronous puts in flight per client, every put a new key (the async publish point's shape)"
                )
            }),
            _ => None,
        },
    }
}

/// Series names by kind, in the order the file lists them.
fn series_of(p: &Point) -> (&'static str, &'static str) {
    match (p.kind, p.rate_per_s.is_some()) {
        (_, true) => (
            "rate-sweep",
            "fixed-rate sweep (JetStream, 128 B, one publisher): the knee",
        ),
        (Kind::ObjPut, _) => ("obj-put", "object puts, one factor varied at a time around the base"),
        (Kind::ObjGet, _) => ("obj-get", "object gets"),
        (Kind::Js, _) if p.readers.is_some() => (
            "js-readers",
            "JetStream synchronous publishes with consumers reading every message as it is written",
        ),
        (Kind::Js, _) => ("js", "JetStream async publishes, message size in log steps"),
        (Kind::Kv, _) if p.window.is_some() => (
            "kv-async",
            "KV puts, asynchronous: the async publish point's shape, for what a put costs the stream leader",
        ),
        (Kind::Kv, _) => ("kv", "KV putter: synchronous puts"),
        (Kind::Core, _) => ("core", "core pub/sub: subscribers and size varied independently"),
        (Kind::Ping, _) => ("ping", "request-reply round trips"),
        (Kind::Flood, _) => ("flood", "flood: a burst queued at once, drained by one subscriber"),
        (Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered, _) => (
            "consumer",
            "consumer reads: one client, the stream filled before the clock",
        ),
    }
}

/// Header fields of a measured file.
#[derive(Debug, Clone)]
pub struct Header {
    pub id: String,
    pub title: String,
    pub document: String,
    pub date: String,
    pub nats_version: String,
    pub method: String,
    pub hardware: BTreeMap<String, serde_norway::Value>,
    pub conditions: BTreeMap<String, serde_norway::Value>,
    pub provenance: BTreeMap<String, serde_norway::Value>,
}

/// Build the file: one series per kind, one row per measurement (repeats are separate rows: the file holds
/// observations as measured).
pub fn build(h: &Header, points: &[Point], ms: &[Measurement], ctx: &RowContext) -> CalibrationFile {
    let mut series: Vec<Series> = Vec::new();
    for p in points {
        let (name, table) = series_of(p);
        let rows: Vec<Row> = ms.iter().filter(|m| m.point == p.id).map(|m| row(p, m, ctx)).collect();
        if rows.is_empty() {
            continue;
        }
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.rows.extend(rows),
            None => series.push(Series {
                name: name.to_string(),
                table: table.to_string(),
                conditions: BTreeMap::new(),
                rows,
            }),
        }
    }
    CalibrationFile {
        schema: SCHEMA.to_string(),
        id: h.id.clone(),
        title: h.title.clone(),
        source: Source {
            document: h.document.clone(),
            kind: "natsplan-calibrate".into(),
            date: h.date.clone(),
        },
        nats_version: h.nats_version.clone(),
        method: h.method.clone(),
        hardware: h.hardware.clone(),
        conditions: h.conditions.clone(),
        series,
        provenance: h.provenance.clone(),
        fit_quality: None,
    }
}

/// YAML text of a file, with a header comment.
pub fn to_yaml(f: &CalibrationFile, comment: &str) -> anyhow::Result<String> {
    let body = serde_norway::to_string(f).context("serialising the calibration file")?;
    let mut out = String::new();
    for line in comment.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&body);
    Ok(out)
}

/// Check that `out` can be written (its folder exists and takes a new file) before measuring anything.
pub fn check_writable(out: &Path) -> anyhow::Result<()> {
    if out.is_dir() {
        return Err(anyhow!(
            "--out {}: is a folder; give a file name, e.g. {}/my-cluster.yaml",
            out.display(),
            out.display()
        ));
    }
    let dir = parent(out);
    if !dir.is_dir() {
        return Err(anyhow!(
            "--out {}: the folder {} does not exist; create it or choose another path",
            out.display(),
            dir.display()
        ));
    }
    tempfile::NamedTempFile::new_in(dir).map(drop).map_err(|e| {
        anyhow!(
            "--out {}: cannot write in {} ({e}); choose a writable folder",
            out.display(),
            dir.display()
        )
    })
}

fn parent(out: &Path) -> &Path {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Write `text` to `out` atomically: a temporary file beside it, flushed and synced, then renamed.
pub fn write_atomic(out: &Path, text: &str) -> anyhow::Result<()> {
    let dir = parent(out);
    let mut tmp = tempfile::Builder::new()
        .prefix(".natsplan-calibrate-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| {
            anyhow!(
                "--out {}: cannot create a temporary file in {}: {e}",
                out.display(),
                dir.display()
            )
        })?;
    tmp.write_all(text.as_bytes())
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| anyhow!("--out {}: cannot write: {e}", out.display()))?;
    tmp.persist(out).map_err(|e| {
        anyhow!(
            "--out {}: cannot rename the temporary file into place: {}",
            out.display(),
            e.error
        )
    })?;
    Ok(())
}
