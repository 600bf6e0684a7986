//! `natsplan verify`: run a ladder of benchmarks on a live cluster and put every measured row beside the
//! prediction for the same shape (perf's `predict_shape`), with the error and whether it falls inside the
//! prediction's band; with a planned layout, also report drift between plan and cluster.
//!
//! Layout: `cluster` detects what is running (and known version hazards), `ladder` builds and scales the
//! rows, `drift` compares a plan with the cluster, `report` holds the result value and its exporters. This
//! file runs the steps in order. Safety: the only things created are bench's `natsplan-*` streams, buckets
//! and object stores, removed after each row unless `keep`; the bytes to be written are announced (through
//! the caller's logger) before anything is written, and a run that would exceed `max_bytes` is refused.

pub mod drift;
pub mod ladder;
pub mod report;

use crate::bench::{self, BenchError, BenchResult, BenchSpec, ConnSpec};
use crate::catalog::{Catalog, ServerModel};
/// The clock and the monitor-URL default live in the floor modules `clock` and `monitor`; these names stay
/// for calibrate and faults until they call those directly.
pub use crate::clock::utc_now;
use crate::layout::Raid;
pub use crate::monitor::default_monitors;
use crate::monitor::probe as cluster;
use crate::perf::{predict_shape, Calibration, Kind, Prediction, Shape, Sync, VolumeSpec};
use crate::plan::Plan;
use anyhow::anyhow;
use cluster::ClusterFacts;
use ladder::{Ladder, RowSpec};
use report::{ConfigEcho, RowMeasured, RowPrediction, RowResult, Status, VerifyReport};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How far above its target a fixed-rate row's achieved rate may read and still be on target.
const RATE_OVERSHOOT: f64 = 1.05;

/// A planned layout to check drift against and to take the volume and server model from.
pub struct Target {
    pub plan: Plan,
    pub layout_id: String,
    pub site: String,
}

/// Everything a verify run needs.
pub struct VerifyOptions {
    pub conn: ConnSpec,
    /// Monitoring URLs; empty = `http://HOST:8222` for each server's host.
    pub monitors: Vec<String>,
    pub ladder: Ladder,
    /// Relative distance beyond a band's edge that still passes.
    pub tolerance: f64,
    /// Time budget per row in seconds (counts are scaled to it).
    pub row_seconds: f64,
    /// Runs per row (1..): the median is judged, the runs' spread reported beside it.
    pub repeat: u32,
    pub max_bytes: Option<u64>,
    pub dry_run: bool,
    pub keep: bool,
    pub calibration: Calibration,
    /// How the calibration was chosen (built-in, or the file).
    pub calibration_label: String,
    pub catalog: Catalog,
    pub target: Option<Target>,
}

/// Why verify could not produce a report.
pub type VerifyError = crate::error::RunError;

/// The prediction inputs that do not vary by row.
struct PredictCtx {
    servers: u32,
    sync: Sync,
    volume: VolumeSpec,
    server: ServerModel,
    nats_version: Option<String>,
    volume_label: String,
}

fn predict_ctx(opts: &VerifyOptions, facts: &ClusterFacts) -> Result<PredictCtx, VerifyError> {
    let cat = &opts.catalog;
    // tmpfs makes `always` free: predict what the disk will really do.
    let sync = if facts.sync_always && !facts.store_on_tmpfs {
        Sync::Always
    } else {
        Sync::Delayed
    };
    let default_server = || {
        cat.server(&cat.default_server)
            .cloned()
            .unwrap_or_else(|| cat.servers[0].clone())
    };
    let (volume, server, volume_label) = match &opts.target {
        Some(t) => {
            let pl = t
                .plan
                .layout(&t.layout_id)
                .ok_or_else(|| VerifyError::BadInput(anyhow!("--layout {}: not in the plan", t.layout_id)))?;
            let site = &t.plan.input;
            let first = pl.layout.servers.first().copied();
            let volume = first.and_then(|s| crate::perf::volume_of(site, &pl.layout, cat, s));
            let server = first
                .and_then(|s| cat.server(&site.servers[s].model).cloned())
                .unwrap_or_else(default_server);
            match volume {
                Some(v) => {
                    let label = format!(
                        "{} / {} / {} ×{} (layout {})",
                        v.array.name,
                        v.disk.name,
                        v.raid.as_str(),
                        v.disks,
                        t.layout_id
                    );
                    (v, server, label)
                }
                None => (
                    VolumeSpec::seed000(cat, Raid::Raid1, 1),
                    server,
                    "seed 000's EF600 RAID 1 (the layout's servers have no volume)".into(),
                ),
            }
        }
        None => (
            VolumeSpec::seed000(cat, Raid::Raid1, 1),
            default_server(),
            "seed 000's EF600 2-disk RAID 1, one LUN per group (no --site/--layout given)".into(),
        ),
    };
    Ok(PredictCtx {
        servers: facts.jetstream_servers.max(1),
        sync,
        volume,
        server,
        nats_version: facts.version.clone(),
        volume_label,
    })
}

fn predict_row(opts: &VerifyOptions, ctx: &PredictCtx, r: &RowSpec) -> Prediction {
    let shape = Shape {
        kind: r.kind,
        servers: ctx.servers,
        replicas: r.replicas,
        sync: ctx.sync,
        size_bytes: r.size_bytes,
        workers: r.workers,
        subscribers: r.subscribers,
        consumers: 0,
        consumers_spread: true,
        volume: ctx.volume.clone(),
        server: ctx.server.clone(),
        rate: r.rate_per_s,
        batch: r.batch,
        nats_version: ctx.nats_version.clone(),
    };
    let mut p = predict_shape(&opts.calibration.terms, &opts.catalog, &shape);
    if let Some(target) = r.rate_per_s {
        // A fixed-rate row achieves its target when the cluster can carry it, else its capacity. Achieved
        // rates are measured over the send window, so a run on target may read a little above it.
        p.ops_per_s = p.ops_per_s.min(target);
        p.band.low = p.band.low.min(target);
        p.band.high = if p.band.high >= target {
            target * RATE_OVERSHOOT
        } else {
            p.band.high
        };
    }
    p
}

fn row_prediction(p: &Prediction) -> RowPrediction {
    RowPrediction {
        ops_per_s: p.ops_per_s,
        low: p.band.low,
        high: p.band.high,
        bottleneck: p.bottleneck.clone(),
        latency_p50_us: p.latency_us.p50,
        cpu_per_server: p.cpu_per_server,
        source: p.source.clone(),
        scaled: p.scaled,
    }
}

/// The figure a row compares with its prediction.
fn measured_ops(r: &RowSpec, b: &BenchResult) -> f64 {
    if let Some(rate) = &b.rate {
        return rate.achieved_per_s;
    }
    match r.kind {
        Kind::Core => b.aggregate_msgs_per_s(),
        Kind::Flood if !b.subscribers.clients.is_empty() => b.subscribers.msgs_per_s(),
        _ => b.msgs_per_s(),
    }
}

/// The bench run for a row (no progress bars: verify logs one line per row).
fn bench_spec(r: &RowSpec, monitors: &[String], keep: bool) -> BenchSpec {
    BenchSpec {
        workload: r.workload.clone(),
        msgs: r.msgs,
        size: r.size_bytes,
        rate_per_s: r.rate_per_s,
        backlog_cutoff: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        monitor: monitors.to_vec(),
        keep,
        sub_sleep: None,
        sub_buffer: None,
        client: bench::ClientChoice::Auto,
        progress: false,
    }
}

/// Samples `/varz cpu` of every monitored server while a row runs; averages per server.
struct CpuSampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<(String, f64)>>,
}

impl CpuSampler {
    fn start(monitors: Vec<String>) -> CpuSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
            // The first reading covers the idle time before the row: skip it.
            let mut first = true;
            'outer: loop {
                // Sample every 500 ms, but notice the end of the row within 50 ms.
                for _ in 0..10 {
                    if s2.load(Ordering::Relaxed) {
                        break 'outer;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                let now = cluster::cpu_percent(&monitors);
                if first {
                    first = false;
                    continue;
                }
                for (name, c) in now {
                    let e = sums.entry(name).or_default();
                    e.0 += c;
                    e.1 += 1;
                }
            }
            sums.into_iter().map(|(n, (s, k))| (n, s / k.max(1) as f64)).collect()
        });
        CpuSampler { stop, handle }
    }
    fn finish(self) -> Vec<(String, f64)> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

/// Run verify: detect, plan the rows, announce the bytes, run (unless dry run), compare, check drift.
/// `log` receives progress lines (the command sends them to stderr).
pub fn run(opts: &VerifyOptions, log: &dyn Fn(&str)) -> Result<VerifyReport, VerifyError> {
    run_maybe_agents(opts, None, log)
}

/// Run verify with every row's load generated by `natsplan agent` processes (`--agents N`): they are
/// discovered before the first row (too few is an error naming how many answered), each row is split
/// over them and merged, and a row an agent did not finish is `INCOMPLETE` (a failed check).
pub fn run_with_agents(
    opts: &VerifyOptions,
    agents: &crate::agent::AgentsOptions,
    log: &dyn Fn(&str),
) -> Result<VerifyReport, VerifyError> {
    run_maybe_agents(opts, Some(agents), log)
}

fn run_maybe_agents(
    opts: &VerifyOptions,
    agents: Option<&crate::agent::AgentsOptions>,
    log: &dyn Fn(&str),
) -> Result<VerifyReport, VerifyError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| VerifyError::CannotRun(e.into()))?;
    let result = run_on(&rt, opts, agents, log);
    rt.shutdown_timeout(Duration::from_millis(100));
    result
}

fn run_on(
    rt: &tokio::runtime::Runtime,
    opts: &VerifyOptions,
    agents: Option<&crate::agent::AgentsOptions>,
    log: &dyn Fn(&str),
) -> Result<VerifyReport, VerifyError> {
    let mut notes = Vec::new();
    let (generated_at, _) = utc_now();
    let connected = match rt.block_on(opts.conn.server_facts("verify")) {
        Ok(c) => Some(c),
        Err(e) if opts.dry_run => {
            notes.push(format!(
                "cluster not reached ({e:#}); the row plan assumes one server per --server URL"
            ));
            None
        }
        Err(e) => return Err(VerifyError::CannotRun(e)),
    };
    let monitors = if opts.monitors.is_empty() {
        default_monitors(&opts.conn.servers)
    } else {
        opts.monitors.clone()
    };
    let mut facts = cluster::detect(&monitors, connected.as_ref().map(|c| (c.0.clone(), c.1.clone())));
    if connected.is_none() {
        facts.jetstream_servers = facts.jetstream_servers.max(opts.conn.servers.len() as u32).max(1);
        facts.max_replicas = facts.jetstream_servers.min(5) as u8;
    }
    let js_enabled = connected.as_ref().is_none_or(|c| c.2) || facts.servers.iter().any(|s| s.jetstream);
    if facts.servers.is_empty() && js_enabled {
        // Without /varz the meta group's size is unknown: assume one per listed server.
        facts.jetstream_servers = facts.jetstream_servers.max(opts.conn.servers.len() as u32).max(1);
        facts.max_replicas = facts.jetstream_servers.min(5) as u8;
    }
    let ctx = predict_ctx(opts, &facts)?;
    let mut rows = ladder::build(opts.ladder, facts.jetstream_servers.max(1), facts.max_replicas.max(1));
    if !js_enabled {
        for r in rows
            .iter_mut()
            .filter(|r| !matches!(r.kind, Kind::Core | Kind::Ping | Kind::Flood))
        {
            r.skip = Some("JetStream is not enabled on the server".into());
        }
    }
    let preds: Vec<Prediction> = rows.iter().map(|r| predict_row(opts, &ctx, r)).collect();
    for (r, p) in rows.iter_mut().zip(&preds) {
        ladder::scale(r, p, opts.row_seconds, 1.0);
    }
    let runnable = |r: &RowSpec| r.skip.is_none();
    // Under `always`, a disk probe runs first (see below); its bytes count too.
    let probe = (ctx.sync == Sync::Always && rows.iter().any(|r| runnable(r) && r.writes()))
        .then(|| ladder::probe_row(facts.max_replicas.clamp(1, 3)));
    let repeat = u64::from(opts.repeat.max(1));
    let write_bytes: u64 = rows
        .iter()
        .filter(|r| runnable(r))
        .map(|r| r.write_bytes() * repeat)
        .sum::<u64>()
        + probe.iter().map(|r| r.write_bytes()).sum::<u64>();
    let write_rep: u64 = rows
        .iter()
        .filter(|r| runnable(r))
        .map(|r| r.write_bytes_replicated() * repeat)
        .sum::<u64>()
        + probe.iter().map(|r| r.write_bytes_replicated()).sum::<u64>();
    log(&format!(
        "verify will write at most {} to JetStream ({} over all replicas), in natsplan-* streams{}",
        crate::units::fmt_bytes(write_bytes as f64),
        crate::units::fmt_bytes(write_rep as f64),
        if opts.keep {
            " kept afterwards (--keep)"
        } else {
            " removed after each row"
        }
    ));
    if let Some(max) = opts.max_bytes {
        if write_rep > max && !opts.dry_run {
            return Err(VerifyError::BadInput(anyhow!(
                "the {} ladder would write {write_rep} bytes over all replicas, more than --max-bytes {max}; \
                 lower --row-seconds or --repeat, use --ladder quick, or raise --max-bytes",
                match opts.ladder {
                    Ladder::Quick => "quick",
                    Ladder::Full => "full",
                }
            )));
        }
    }
    let config = ConfigEcho {
        servers: opts.conn.servers.iter().map(|s| bench::conn::redact_url(s)).collect(),
        monitors: monitors.clone(),
        ladder: format!("{:?}", opts.ladder).to_lowercase(),
        tolerance: opts.tolerance,
        row_seconds: opts.row_seconds,
        repeat: opts.repeat.max(1),
        max_bytes: opts.max_bytes,
        calibration: opts.calibration_label.clone(),
        site: opts.target.as_ref().map(|t| t.site.clone()),
        layout: opts.target.as_ref().map(|t| t.layout_id.clone()),
        volume: ctx.volume_label.clone(),
        dry_run: opts.dry_run,
        keep: opts.keep,
    };
    // Agents are found (and their clocks measured) before anything is written.
    let mut coordinator = match agents.filter(|_| !opts.dry_run) {
        Some(a) => {
            let c = rt.block_on(crate::agent::Coordinator::connect(&opts.conn, a.clone()))?;
            for l in crate::agent::report::summary_lines(&c.summary) {
                log(&format!("verify: {l}"));
            }
            Some(c)
        }
        None => None,
    };
    let mut results = Vec::new();
    // Measured ÷ predicted-low of earlier fsync-bound writing rows, when below 1: later writing rows shrink
    // with it, so `sync_interval: always` on a slow disk still finishes in its budget.
    let mut slowdown = 1.0f64;
    if let Some(probe) = probe.filter(|_| !opts.dry_run) {
        // Probe the disk first: a few synchronous publishes, against the prediction for the same shape. A
        // disk slower than the predicted hardware shrinks every writing row from the start.
        let p = predict_row(opts, &ctx, &probe);
        let spec = bench_spec(&probe, &monitors, false);
        match rt.block_on(bench::run(&opts.conn, &spec)) {
            Ok(b) => {
                let m = measured_ops(&probe, &b);
                if p.band.low > 0.0 && m < p.band.low {
                    slowdown = (m / p.band.low).max(1e-4);
                }
                notes.push(format!(
                    "sync always: probe of {} synchronous R{} publishes ran at {m:.0}/s (predicted {:.0}/s, low {:.0}/s); writing rows scaled by {slowdown:.3}",
                    probe.msgs, probe.replicas, p.ops_per_s, p.band.low
                ));
            }
            Err(e) => notes.push(format!(
                "sync always: the disk probe failed ({e}); counts follow the prediction"
            )),
        }
    }
    for (mut r, p) in rows.into_iter().zip(preds) {
        let predicted = Some(row_prediction(&p));
        let kind = r.kind_str().to_string();
        if let Some(why) = r.skip.clone() {
            results.push(RowResult {
                spec: r,
                kind,
                status: Status::Skipped,
                reason: Some(why),
                predicted,
                measured: None,
                error: None,
                agents: None,
            });
            continue;
        }
        if opts.dry_run {
            results.push(RowResult {
                spec: r,
                kind,
                status: Status::Planned,
                reason: None,
                predicted,
                measured: None,
                error: None,
                agents: None,
            });
            continue;
        }
        if r.writes() && slowdown < 1.0 {
            ladder::scale(&mut r, &p, opts.row_seconds, slowdown);
        }
        log(&format!("verify: {} ({} × {} B)...", r.label, r.msgs, r.size_bytes));
        let spec = bench_spec(&r, &monitors, opts.keep);
        // Each run of the row, back to back; the first error or incomplete run ends the row.
        let mut runs: Vec<Run> = Vec::new();
        let mut out = Ok(());
        for k in 0..repeat {
            if k > 0 {
                log(&format!("verify: {} run {} of {repeat}...", r.id, k + 1));
            }
            let sampler = CpuSampler::start(monitors.clone());
            let res = match coordinator.as_mut() {
                Some(c) => rt.block_on(c.run(&spec)).map(|d| (d.result, Some(d.agents))),
                None => rt.block_on(bench::run(&opts.conn, &spec)).map(|b| (b, None)),
            };
            let cpu = sampler.finish();
            match res {
                Ok((b, agents)) => {
                    let incomplete = agents.as_ref().is_some_and(|a| !a.complete);
                    runs.push(Run {
                        ops: measured_ops(&r, &b),
                        bench: b,
                        agents,
                        cpu,
                    });
                    if incomplete {
                        break;
                    }
                }
                Err(e) => {
                    out = Err(e);
                    break;
                }
            }
        }
        let all_ops: Vec<f64> = runs.iter().map(|x| x.ops).collect();
        let picked = match out {
            Ok(()) => Ok(pick_median(runs)),
            Err(e) => Err(e),
        };
        match picked {
            Ok((
                Run {
                    bench: b,
                    agents: row_agents,
                    cpu,
                    ..
                },
                m,
            )) => {
                let error = (p.ops_per_s > 0.0).then(|| m / p.ops_per_s - 1.0);
                // A row an agent did not finish measured less than the row: never judged as if complete.
                let incomplete = row_agents.as_ref().is_some_and(|a| !a.complete);
                let status = if incomplete {
                    Status::Incomplete
                } else {
                    report::judge(m, p.band.low, p.band.high, opts.tolerance)
                };
                // Only fsync-bound writing (sync always) is expected to run slower than the prediction's
                // hardware for a reason that carries over to later rows: a slow disk.
                let fsync_bound = ctx.sync == Sync::Always;
                if fsync_bound && r.writes() && r.rate_per_s.is_none() && p.band.low > 0.0 && m < p.band.low {
                    slowdown = slowdown.min(m / p.band.low);
                }
                log(&format!(
                    "verify: {} measured {:.0}/s, predicted {:.0}/s ({})",
                    r.id,
                    m,
                    p.ops_per_s,
                    status.as_str()
                ));
                let measured = RowMeasured {
                    ops_per_s: m,
                    bytes_per_s: b.bytes_per_s(),
                    window_s: b.window_s(),
                    latency_us: b.latency_us,
                    rate: b.rate.clone(),
                    losses: b.losses.clone(),
                    cpu_percent: cpu,
                    warnings: b.warnings.clone(),
                    spread: if incomplete { None } else { spread_of(&all_ops) },
                    runs_ops_per_s: if all_ops.len() > 1 { all_ops.clone() } else { vec![] },
                };
                let reason = row_agents.as_ref().filter(|a| !a.complete).map(|a| {
                    let lost: Vec<String> = a
                        .agents
                        .iter()
                        .filter(|x| x.status != crate::agent::ShareStatus::Completed)
                        .map(|x| format!("{} ({:?})", x.name, x.status).to_lowercase())
                        .collect();
                    format!("incomplete: agent(s) {} did not finish their share", lost.join(", "))
                });
                results.push(RowResult {
                    spec: r,
                    kind,
                    status,
                    reason,
                    predicted,
                    measured: Some(measured),
                    error,
                    agents: row_agents,
                });
            }
            Err(e) => {
                // An agent that went away before the row could start leaves the row incomplete (it
                // measured nothing), which is not the cluster's error.
                let (status, msg) = match e {
                    BenchError::CannotRun(e) if e.downcast_ref::<crate::agent::AgentUnavailable>().is_some() => {
                        (Status::Incomplete, format!("incomplete: {e:#}"))
                    }
                    BenchError::BadInput(e) | BenchError::CannotRun(e) => (Status::Error, format!("{e:#}")),
                };
                log(&format!("verify: {} failed: {msg}", r.id));
                results.push(RowResult {
                    spec: r,
                    kind,
                    status,
                    reason: Some(msg),
                    predicted,
                    measured: None,
                    error: None,
                    agents: None,
                });
            }
        }
    }
    let drift = match &opts.target {
        Some(t) => Some(check_drift(t, &facts, &monitors)?),
        None => None,
    };
    let failed_rows = results.iter().filter(|r| r.status.fails()).count();
    Ok(VerifyReport {
        generated_at,
        config,
        cluster: facts,
        rows: results,
        drift,
        write_bytes,
        write_bytes_replicated: write_rep,
        failed_rows,
        notes,
        agents: coordinator.map(|c| c.summary),
    })
}

/// One run of a row.
struct Run {
    ops: f64,
    bench: BenchResult,
    agents: Option<crate::agent::AgentsRun>,
    cpu: Vec<(String, f64)>,
}

/// The run whose rate is the median (for an even count, the lower of the middle two) and the median rate
/// itself (for an even count, the mean of the middle two). An incomplete run, always the last, is the
/// row's result as it is: it is never judged.
fn pick_median(mut runs: Vec<Run>) -> (Run, f64) {
    if runs.last().and_then(|r| r.agents.as_ref()).is_some_and(|a| !a.complete) {
        let last = runs.pop().expect("an incomplete run is there");
        let ops = last.ops;
        return (last, ops);
    }
    runs.sort_by(|a, b| a.ops.total_cmp(&b.ops));
    let n = runs.len();
    let median = if n % 2 == 1 {
        runs[n / 2].ops
    } else {
        (runs[n / 2 - 1].ops + runs[n / 2].ops) / 2.0
    };
    let keep = (n - 1) / 2;
    (runs.swap_remove(keep), median)
}

/// (max − min) ÷ median of the runs' rates; None for a single run.
fn spread_of(ops: &[f64]) -> Option<f64> {
    if ops.len() < 2 {
        return None;
    }
    let mut v = ops.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median > 0.0).then(|| (v[n - 1] - v[0]) / median)
}

/// Drift against the target layout: the emitted stream definitions against `/jsz`.
fn check_drift(t: &Target, facts: &ClusterFacts, monitors: &[String]) -> Result<drift::Drift, VerifyError> {
    let pl = t
        .plan
        .layout(&t.layout_id)
        .ok_or_else(|| VerifyError::BadInput(anyhow!("--layout {}: not in the plan", t.layout_id)))?;
    let files = crate::emit::render(&t.plan, &t.layout_id, &crate::emit::EmitOptions::default())
        .map_err(VerifyError::BadInput)?;
    let emitted: BTreeMap<String, serde_json::Value> = files
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|(_, text)| serde_json::from_str::<serde_json::Value>(&text).ok())
        .filter_map(|v| Some((v.get("name")?.as_str()?.to_string(), v)))
        .collect();
    let named: Vec<(String, String)> = facts
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.monitor_url.clone()))
        .collect();
    let placements = crate::monitor::cluster_streams(&named, Duration::from_secs(3));
    let mut configs = BTreeMap::new();
    for m in monitors {
        if let Ok(j) = crate::monitor::jsz(m, "accounts=true&streams=true&config=true", Duration::from_secs(3)) {
            for (k, v) in drift::stream_configs(&j) {
                configs.entry(k).or_insert(v);
            }
        }
    }
    let live: Vec<drift::LiveStream> = placements
        .into_iter()
        .map(|p| drift::LiveStream {
            config: configs.get(&p.name).cloned().unwrap_or(serde_json::Value::Null),
            placement: p,
        })
        .collect();
    Ok(drift::check(&t.plan, pl, &emitted, facts, &live))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_rows_judge_the_median_run_and_report_the_spread() {
        let run = |ops: f64| Run {
            ops,
            bench: serde_json::from_value(serde_json::json!({
                "kind": "js", "label": "x", "params": {}, "msgs": 1, "size": 1,
                "publishers": {"clients": []}, "subscribers": {"clients": []},
                "latency_us": null, "rate": null, "losses": null, "warnings": [], "ops": false,
                "run_id": format!("{ops}")
            }))
            .unwrap(),
            agents: None,
            cpu: vec![],
        };
        let (r, m) = pick_median(vec![run(30.0), run(10.0), run(20.0)]);
        assert_eq!((r.ops, m, r.bench.run_id.as_str()), (20.0, 20.0, "20"));
        let (r, m) = pick_median(vec![run(40.0), run(10.0), run(30.0), run(20.0)]);
        assert_eq!((r.ops, m), (20.0, 25.0));
        let (r, m) = pick_median(vec![run(7.0)]);
        assert_eq!((r.ops, m), (7.0, 7.0));
        assert_eq!(spread_of(&[7.0]), None);
        assert!((spread_of(&[30.0, 10.0, 20.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((spread_of(&[40.0, 10.0, 30.0, 20.0]).unwrap() - 30.0 / 25.0).abs() < 1e-12);
        assert_eq!(spread_of(&[0.0, 0.0]), None);
        // An incomplete run ends the row and is its result, never a median.
        let mut last = run(1.0);
        last.agents = Some(crate::agent::AgentsRun {
            complete: false,
            published: 0,
            received: 0,
            failed: 0,
            agents: vec![],
        });
        let (r, m) = pick_median(vec![run(50.0), run(60.0), last]);
        assert_eq!((r.ops, m), (1.0, 1.0));
    }
}
