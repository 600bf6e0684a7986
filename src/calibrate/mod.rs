//! `natsplan calibrate`: measure a live cluster at well-chosen points, and write what was measured as a
//! calibration file (`natsplan-calibration/1`) that `predict`, `verify` and `design` load with
//! `--calibration FILE`. The file holds observations only (perf fits the terms whenever it loads a file);
//! calibrate adds where they were measured (provenance) and how well the model fitted them (fit quality,
//! with cross-validation on points held out of the fit).
//!
//! Layout: `plan` chooses the points and fits them into the budget (pure), `runner` measures them with
//! bench, `write` turns measurements into the file and writes it atomically, `quality` fits, cross-validates
//! and estimates each term's uncertainty. This file runs the steps in order.

pub mod plan;
pub mod probe;
pub mod quality;
pub mod runner;
pub mod write;

use crate::bench::{self, ConnSpec};
use crate::catalog::Catalog;
use crate::error::Failure;
use crate::monitor::probe::{self as cluster, ClusterFacts};
use crate::perf::calibration::{CalibrationFile, FitQuality};
use crate::perf::SyncClass;
use anyhow::anyhow;
use serde::Serialize;
use serde_norway::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Everything a calibrate run needs.
pub struct CalibrateOptions {
    pub conn: ConnSpec,
    /// Monitoring URLs; empty = `http://HOST:8222` for each server's host.
    pub monitors: Vec<String>,
    pub budget_s: f64,
    /// Free text describing the machines (`3 x 2-core VM, loopback, ext4 on virtio`).
    pub hardware: Option<String>,
    pub out: PathBuf,
    /// The file's id (default: from the out file's name).
    pub id: Option<String>,
    /// The sync mode, when /varz cannot tell (no monitoring port reachable).
    pub sync: Option<SyncClass>,
    pub catalog: Catalog,
    /// Trips on the first SIGINT/SIGTERM (the run catches them): the run it hits stops and removes its
    /// assets, and no calibration file is written (an existing one is left as it was).
    pub cancel: bench::Cancel,
}

/// The error (inside `Failure::CannotRun`) of a run a signal stopped: nothing was written. The
/// command turns it into exit 130.
#[derive(Debug, thiserror::Error)]
#[error("interrupted by a signal after {runs} measured run(s); no calibration file written ({out} untouched)")]
pub struct Interrupted {
    pub runs: usize,
    pub out: String,
}

/// What calibrate did, as the command prints it.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrateReport {
    pub out: String,
    pub id: String,
    pub plan: plan::MeasurePlan,
    pub runs: usize,
    pub failures: Vec<(String, String)>,
    pub skipped: Vec<String>,
    /// The points `skipped` names, each once: `measured` 0 is a point no pass ran, more is a point short
    /// of repeats (skipped in one pass, measured in another).
    pub short_points: Vec<runner::ShortPoint>,
    pub elapsed_s: f64,
    pub sync: String,
    pub nats_version: String,
    pub fit_quality: FitQuality,
    pub notes: Vec<String>,
}

/// The id a file gets from its path: the file stem, lower case, other characters as `-`.
pub fn id_from_path(p: &std::path::Path) -> String {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let id: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    if id.trim_matches('-').is_empty() {
        "natsplan-calibrate".into()
    } else {
        id
    }
}

fn load_average() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

fn v(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

/// Provenance from the cluster facts.
fn provenance(facts: &ClusterFacts, opts: &CalibrateOptions, monitors: &[String]) -> BTreeMap<String, Value> {
    let mut p = BTreeMap::new();
    let names: Vec<Value> = facts.servers.iter().map(|s| v(s.name.clone())).collect();
    p.insert("servers_seen".into(), Value::Sequence(names));
    p.insert("jetstream_servers".into(), Value::from(facts.jetstream_servers as u64));
    p.insert(
        "connected_server".into(),
        v(facts.connected_server.clone().unwrap_or_else(|| "unknown".into())),
    );
    if let Some(c) = facts.servers.iter().find_map(|s| s.cluster.clone()) {
        p.insert("cluster_name".into(), v(c));
    }
    p.insert("sync_observed".into(), v(facts.sync.clone()));
    let fs: Vec<String> = facts.servers.iter().filter_map(|s| s.store_fs.clone()).collect();
    p.insert(
        "store_filesystem".into(),
        v(if fs.is_empty() {
            "unknown".to_string()
        } else {
            let mut f = fs.clone();
            f.dedup();
            f.join(",")
        }),
    );
    let cores: Vec<Value> = facts.servers.iter().filter_map(|s| s.cores.map(Value::from)).collect();
    if !cores.is_empty() {
        p.insert("cores_per_server".into(), Value::Sequence(cores));
    }
    p.insert(
        "monitors".into(),
        Value::Sequence(monitors.iter().map(|m| v(m.clone())).collect()),
    );
    if !facts.unreachable_monitors.is_empty() {
        p.insert(
            "monitors_unreachable".into(),
            Value::Sequence(facts.unreachable_monitors.iter().map(|(m, _)| v(m.clone())).collect()),
        );
    }
    p.insert(
        "client_servers".into(),
        Value::Sequence(
            opts.conn
                .servers
                .iter()
                .map(|s| v(bench::conn::redact_url(s)))
                .collect(),
        ),
    );
    if let Some(l) = load_average() {
        p.insert("load_average_at_start".into(), v(l));
    }
    p.insert("natsplan_version".into(), v(env!("CARGO_PKG_VERSION")));
    p
}

/// Run calibrate: check the output, connect, detect, plan, measure, fit, write.
pub fn run(opts: &CalibrateOptions, log: &dyn Fn(&str)) -> Result<CalibrateReport, Failure> {
    write::check_writable(&opts.out).map_err(Failure::BadInput)?;
    // A budget too small for anything is refused before touching the cluster.
    plan::plan(opts.budget_s, 3)
        .and(plan::plan(opts.budget_s, 1))
        .map_err(|e| Failure::BadInput(anyhow!(e)))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::CannotRun(e.into()))?;
    // SIGINT/SIGTERM trip the token: the run in progress stops and removes its assets; nothing is written.
    let _signals = {
        let _in_rt = rt.enter();
        opts.cancel
            .trip_on_signals()
            .map_err(|e| Failure::CannotRun(e.into()))?
    };
    let r = run_on(&rt, opts, log);
    rt.shutdown_timeout(Duration::from_millis(100));
    r
}

fn run_on(
    rt: &tokio::runtime::Runtime,
    opts: &CalibrateOptions,
    log: &dyn Fn(&str),
) -> Result<CalibrateReport, Failure> {
    let mut notes = Vec::new();
    let d = detect(rt, opts, &mut notes)?;
    let (facts, sync, monitors) = (&d.facts, d.sync, &d.monitors);
    let version = d.version.clone();
    let plan = plan::plan(opts.budget_s, facts.max_replicas.max(1)).map_err(|e| Failure::BadInput(anyhow!(e)))?;
    log(&format!(
        "calibrate: {} points × {} repeats, {:.1} s per run, about {:.0} s of {:.0} s budget; sync {}, {} JetStream server(s), nats-server {version}",
        plan.points.len(),
        plan.repeats,
        plan.run_s,
        plan.estimated_s,
        plan.budget_s,
        sync_str(sync),
        facts.jetstream_servers
    ));
    for d in &plan.dropped {
        log(&format!("calibrate: budget: dropped {d}"));
    }
    let (date, _) = crate::clock::utc_now();
    let mut prov = provenance(facts, opts, monitors);
    let probe_dir = std::env::temp_dir();
    let local = is_local(opts);
    // The client host's own load: a second before the runs, then over them (recorded; said when busy).
    let host_before = crate::hostload::sample(Duration::from_secs(1));
    let host_start = crate::hostload::read();
    let runlog = runner::run(
        rt,
        &opts.conn,
        monitors,
        &plan,
        &opts.cancel,
        local.then_some(probe_dir.as_path()),
        log,
    );
    if runlog.interrupted || opts.cancel.is_cancelled() {
        return Err(interrupted(runlog.measurements.len(), opts));
    }
    prov.insert("measured_at".into(), v(date.clone()));
    prov.insert("budget_s".into(), Value::from(opts.budget_s));
    prov.insert(
        "elapsed_s".into(),
        Value::from((runlog.elapsed_s * 10.0).round() / 10.0),
    );
    if let Some(l) = load_average() {
        prov.insert("load_average_at_end".into(), v(l));
    }
    let host_during = host_start
        .as_ref()
        .and_then(|a| crate::hostload::HostLoad::between(a, &crate::hostload::read()?));
    note_host_load(&mut prov, [host_before, host_during], log, &mut notes);
    record_losses(&mut prov, &plan, &runlog)?;
    let id = opts.id.clone().unwrap_or_else(|| id_from_path(&opts.out));
    let header = header(opts, &d, &plan, &date, id.clone(), prov);
    let ctx = write::RowContext {
        servers: facts.jetstream_servers.max(1),
        sync: sync_str(sync).into(),
    };
    let mut file = write::build(&header, &plan.points, &runlog.measurements, &ctx);
    store_probe(&mut file, opts, &runlog.probes, log, &mut notes);
    let quality = quality::assess(
        &file,
        &plan.points,
        &runlog.measurements,
        &opts.catalog,
        facts.jetstream_servers.max(1),
        sync,
    )
    .map_err(|e| {
        Failure::CannotRun(anyhow!(
            "the measurements do not fit the model ({e:#}); {} of {} runs measured, {} skipped for the budget, {} failed",
            runlog.measurements.len(),
            plan.runs(),
            runlog.skipped.len(),
            runlog.failures.len()
        ))
    })?;
    file.fit_quality = Some(quality.clone());
    let text = write::to_yaml(
        &file,
        &format!(
            "Measured by `natsplan calibrate` on {date}. It describes THIS cluster and machine only ({}).\n\
             Rows are observations; natsplan fits the model's terms from them whenever it loads the file.",
            opts.hardware.as_deref().unwrap_or("hardware not stated")
        ),
    )
    .map_err(Failure::CannotRun)?;
    // The file must load as --calibration will load it before it replaces anything.
    CalibrationFile::parse(&text, &opts.out.display().to_string()).map_err(Failure::CannotRun)?;
    // A signal during the fit still writes nothing: the file is replaced only by a run nobody stopped.
    if opts.cancel.is_cancelled() {
        return Err(interrupted(runlog.measurements.len(), opts));
    }
    write::write_atomic(&opts.out, &text).map_err(Failure::BadInput)?;
    notes.extend(quality.notes.iter().cloned());
    Ok(CalibrateReport {
        out: opts.out.display().to_string(),
        id,
        runs: runlog.measurements.len(),
        short_points: runlog.short_points(),
        failures: runlog.failures,
        skipped: runlog.skipped,
        elapsed_s: runlog.elapsed_s,
        plan,
        sync: sync_str(sync).into(),
        nats_version: version,
        fit_quality: quality,
        notes,
    })
}

/// What calibrate learns of the cluster before it plans: the server it reached, the monitoring URLs, the
/// detected facts and the sync mode the runs measure.
struct Detected {
    server_name: String,
    version: String,
    monitors: Vec<String>,
    facts: ClusterFacts,
    sync: SyncClass,
}

/// Connect, read the cluster's facts from its monitoring ports and settle the sync mode (from /varz, or
/// `--sync` when no port answers; a `--sync` that contradicts /varz is refused).
fn detect(rt: &tokio::runtime::Runtime, opts: &CalibrateOptions, notes: &mut Vec<String>) -> Result<Detected, Failure> {
    let (server_name, version, js) = rt
        .block_on(opts.conn.server_facts("calibrate"))
        .map_err(Failure::CannotRun)?;
    if !js {
        return Err(Failure::CannotRun(anyhow!(
            "{} ({server_name}) has JetStream disabled; calibrate measures JetStream and needs it on",
            opts.conn.describe()
        )));
    }
    let monitors = if opts.monitors.is_empty() {
        crate::monitor::default_monitors(&opts.conn.servers)
    } else {
        opts.monitors.clone()
    };
    let mut facts = cluster::detect(&monitors, Some((server_name.clone(), version.clone())));
    if facts.servers.is_empty() {
        facts.jetstream_servers = facts.jetstream_servers.max(opts.conn.servers.len() as u32).max(1);
        facts.max_replicas = facts.jetstream_servers.min(5) as u8;
        notes.push(format!(
            "no monitoring port answered ({}): cluster size assumed from --server, sync mode from --sync",
            monitors.join(", ")
        ));
    }
    // The sync mode as the model reads it: `always` on tmpfs costs nothing, so it measures as delayed.
    let observed = (!facts.servers.is_empty()).then_some(if facts.sync_always && !facts.store_on_tmpfs {
        SyncClass::Always
    } else {
        SyncClass::Delayed
    });
    let sync = match (observed, opts.sync) {
        (Some(o), Some(f)) if o != f => {
            return Err(Failure::BadInput(anyhow!(
                "--sync {}: the servers' /varz says {} (sync_interval {}); drop --sync or fix it",
                sync_str(f),
                sync_str(o),
                facts.sync
            )))
        }
        (Some(o), _) => o,
        (None, Some(f)) => f,
        (None, None) => {
            return Err(Failure::BadInput(anyhow!(
                "the sync mode is unknown: no monitoring port answered ({}); give --monitor http://HOST:PORT or --sync always|delayed",
                monitors.join(", ")
            )))
        }
    };
    Ok(Detected {
        server_name,
        version,
        monitors,
        facts,
        sync,
    })
}

/// The error of a run stopped by a signal: nothing is written.
fn interrupted(runs: usize, opts: &CalibrateOptions) -> Failure {
    Failure::CannotRun(anyhow::Error::new(Interrupted {
        runs,
        out: opts.out.display().to_string(),
    }))
}

/// Record the client host's load before and during the runs in the provenance, and warn when it was busy.
fn note_host_load(
    prov: &mut BTreeMap<String, Value>,
    [host_before, host_during]: [Option<crate::hostload::HostLoad>; 2],
    log: &dyn Fn(&str),
    notes: &mut Vec<String>,
) {
    for (key, h, when) in [
        ("host_before", host_before, "before the runs"),
        ("host_during", host_during, "during the runs"),
    ] {
        let Some(h) = h else { continue };
        if let Ok(val) = serde_norway::to_value(h) {
            prov.insert(key.into(), val);
        }
        if h.busy {
            let n = format!(
                "{when}, {}: the fitted costs include the client's lost share of the host, so predictions from \
                 this file read low; calibrate again on a quiet host",
                h.busy_because()
            );
            log(&format!("calibrate: warning: {n}"));
            notes.push(n);
        }
    }
}

/// Record the points dropped for the budget and the failed runs in the provenance; no run measured is an
/// error naming the first failure.
fn record_losses(
    prov: &mut BTreeMap<String, Value>,
    plan: &plan::MeasurePlan,
    runlog: &runner::RunLog,
) -> Result<(), Failure> {
    if !plan.dropped.is_empty() || !runlog.skipped.is_empty() {
        let mut d: Vec<Value> = plan.dropped.iter().map(|s| v(s.clone())).collect();
        d.extend(runlog.skipped.iter().map(|s| v(format!("run {s} (budget spent)"))));
        prov.insert("dropped".into(), Value::Sequence(d));
    }
    if !runlog.failures.is_empty() {
        prov.insert(
            "failed_runs".into(),
            Value::Sequence(runlog.failures.iter().map(|(p, e)| v(format!("{p}: {e}"))).collect()),
        );
    }
    if runlog.measurements.is_empty() {
        return Err(Failure::CannotRun(anyhow!(
            "no run succeeded: {}",
            runlog
                .failures
                .first()
                .map(|(p, e)| format!("{p}: {e}"))
                .unwrap_or_else(|| "the budget was spent before the first run".into())
        )));
    }
    Ok(())
}

/// The calibration file's header: the hardware, the conditions of the runs, the method and provenance.
fn header(
    opts: &CalibrateOptions,
    d: &Detected,
    plan: &plan::MeasurePlan,
    date: &str,
    id: String,
    prov: BTreeMap<String, Value>,
) -> write::Header {
    let (facts, sync, server_name, version) = (&d.facts, d.sync, &d.server_name, &d.version);
    let mut hardware = BTreeMap::new();
    hardware.insert("array".into(), v("none"));
    hardware.insert("disk_kind".into(), v("unknown"));
    hardware.insert(
        "host".into(),
        v(opts.hardware.clone().unwrap_or_else(|| "unknown".into())),
    );
    if let Some(fs) = prov.get("store_filesystem").cloned() {
        hardware.insert("store_filesystem".into(), fs);
    }
    if let Some(c) = facts.servers.iter().find_map(|s| s.cores) {
        hardware.insert("cores".into(), Value::from(c));
    }
    let mut conditions = BTreeMap::new();
    conditions.insert("storage".into(), v("file"));
    conditions.insert("sync".into(), v(sync_str(sync)));
    conditions.insert("chunk_size".into(), v("128KiB"));
    if opts.conn.server_count() > 1 {
        conditions.insert(
            "leader".into(),
            v("remote: publishers, KV putters and object clients connect to a server other than the stream leader's (bench --leader remote)"),
        );
        conditions.insert(
            "consumer_leader".into(),
            v("remote: consumer readers (fetch) connect to a server other than their consumer's leader's (bench --consumer-leader remote)"),
        );
    }
    conditions.insert(
        "raid_key".into(),
        v(format!(
            "rows say raid: {} to key them to the model's reference volume (what verify and predict use without a layout); the store is not a RAID volume",
            write::REFERENCE_RAID
        )),
    );
    write::Header {
        id,
        title: format!(
            "natsplan calibrate on {} ({} JetStream server(s), sync {}){}",
            server_name,
            facts.jetstream_servers,
            sync_str(sync),
            opts.hardware.as_ref().map(|h| format!(": {h}")).unwrap_or_default()
        ),
        document: format!("natsplan calibrate --out {}", opts.out.display()),
        date: date[..10].to_string(),
        nats_version: version.clone(),
        method: format!(
            "natsplan calibrate {}: bench workloads (raw protocol or async-nats), {} points x {} interleaved repeats, \
             ~{:.1} s per run; every repeat is its own row; fit by perf on load",
            env!("CARGO_PKG_VERSION"),
            plan.points.len(),
            plan.repeats,
            plan.run_s
        ),
        hardware,
        conditions,
        provenance: prov,
    }
}

/// Probe the store's write and fsync latency when the cluster runs on this machine (every server on
/// loopback), so the file can price `sync_interval: always` (perf::leader); elsewhere say how to get one.
/// Every server on this machine: the store probe can measure the filesystem they store on.
fn is_local(opts: &CalibrateOptions) -> bool {
    !opts.conn.servers.is_empty()
        && opts
            .conn
            .servers
            .iter()
            .all(|s| s.contains("127.0.0.1") || s.contains("localhost") || s.contains("[::1]"))
}

/// The store-probe series: the probes taken between runs plus one after them, pooled (`probe::pool`).
fn store_probe(
    file: &mut CalibrationFile,
    opts: &CalibrateOptions,
    during: &[probe::Probe],
    log: &dyn Fn(&str),
    notes: &mut Vec<String>,
) {
    if !is_local(opts) {
        notes.push(
            "no store probe: the servers are not on this machine; `always` will be priced through the catalog's volume latency".into(),
        );
        return;
    }
    let dir = std::env::temp_dir();
    let fs = file
        .hardware
        .get("store_filesystem")
        .and_then(|v| v.as_str())
        .unwrap_or("unknown")
        .to_string();
    let mut all = during.to_vec();
    match probe::run(&dir) {
        Ok(p) => all.push(p),
        Err(e) => notes.push(format!("store probe in {} failed: {e}", dir.display())),
    }
    if let Some(p) = probe::pool(&all) {
        log(&format!(
            "calibrate: store probe in {} ({} runs, {} between the bench runs): write {:.1} µs, fsync {:.3} ms, {:.2} ns per synced byte",
            dir.display(),
            all.len(),
            during.len(),
            p.write_s * 1e6,
            p.fsync_s * 1e3,
            p.sync_byte_s * 1e9
        ));
        file.series.push(probe::series(&p, &dir, &fs));
    }
}

pub fn sync_str(s: SyncClass) -> &'static str {
    s.as_str()
}
