//! `natsplan verify`: run a ladder of benchmarks on a live cluster and put every measured row beside the
//! prediction for the same shape (perf's `predict_shape`), with the error and whether it falls inside the
//! prediction's band; with a planned layout, also report drift between plan and cluster.
//!
//! Layout: `monitor::probe` detects what is running (and known version hazards), `ladder` builds and
//! scales the rows, `drift` compares a plan with the cluster, `report` holds the result value and its
//! exporters, `run` runs the steps in order; this file holds the options, the per-row prediction and
//! `Load`, the seam between verify and the cluster (unset: `bench`; `load_tests` runs the ladder on a
//! stand-in without a server).
//! The command writes the results folder (verify returns values, never renders or writes). Safety: the only things created are bench's `natsplan-*` streams, buckets
//! and object stores, removed after each row unless `keep`; the bytes to be written are announced (through
//! the caller's logger) before anything is written, and a run that would exceed `max_bytes` is refused.

pub mod drift;
pub mod ladder;
#[cfg(test)]
mod load_tests;
pub mod report;
mod run;

use crate::bench::{BenchResult, ConnSpec};
use crate::catalog::{Catalog, ServerModel};
use crate::error::Failure;
use crate::layout::Raid;
use crate::monitor::probe as cluster;
use crate::perf::{predict_shape, Calibration, Kind, Prediction, Shape, SyncClass, VolumeSpec};
use crate::plan::Plan;
use anyhow::anyhow;
use cluster::ClusterFacts;
use ladder::{Ladder, RowSpec};
use report::{ConfigEcho, RowMeasured, RowPrediction, RowResult, RowStatus, VerifyReport};
pub use run::{run, run_with_agents};
use std::collections::BTreeMap;
use std::time::Duration;

/// How far above its target a fixed-rate row's achieved rate may read and still be on target.
const RATE_OVERSHOOT: f64 = 1.05;

/// A planned layout to check drift against and to take the volume and server model from.
pub struct Baseline {
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
    pub target: Option<Baseline>,
    /// Trips on the first SIGINT/SIGTERM (the run catches them): the row running stops its load and
    /// removes its assets, later rows are not run, and the report says `interrupted`.
    pub cancel: crate::bench::Cancel,
    /// Where the rows' load comes from: `None` is the cluster, through `bench` (what the command does);
    /// tests put a stand-in here (`Load`) to run the ladder without a server.
    pub load: Option<std::sync::Arc<dyn Load>>,
}

/// What verify asks of the cluster, as a seam: the connected server's facts and one benchmark run. The
/// command leaves it to `bench` (`VerifyOptions::load` unset); a test gives a deterministic stand-in.
pub trait Load: Send + Sync {
    /// The connected server's name, version and whether JetStream is on (`ConnSpec::server_facts`).
    fn server_facts(&self) -> anyhow::Result<(String, String, bool)>;
    /// One benchmark run of `spec`, as `bench::run_with` runs it, stopped by `cancel`.
    fn run(
        &self,
        spec: &crate::bench::BenchSpec,
        cancel: &crate::bench::Cancel,
    ) -> Result<BenchResult, crate::error::Failure>;
}

/// The prediction inputs that do not vary by row.
struct PredictCtx {
    servers: u32,
    sync: SyncClass,
    volume: VolumeSpec,
    server: ServerModel,
    nats_version: Option<String>,
    volume_label: String,
}

fn predict_ctx(opts: &VerifyOptions, facts: &ClusterFacts) -> Result<PredictCtx, Failure> {
    let cat = &opts.catalog;
    // tmpfs makes `always` free: predict what the disk will really do.
    let sync = if facts.sync_always && !facts.store_on_tmpfs {
        SyncClass::Always
    } else {
        SyncClass::Delayed
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
                .ok_or_else(|| Failure::BadInput(anyhow!("--layout {}: not in the plan", t.layout_id)))?;
            let site = &t.plan.input;
            let first = pl.hardware().servers.first().copied();
            let volume = first.and_then(|s| crate::perf::volume_of(site, pl.hardware(), cat, s));
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
                    "the NATS-on-E-Series guide's EF600 RAID 1 (the layout's servers have no volume)".into(),
                ),
            }
        }
        None => (
            VolumeSpec::seed000(cat, Raid::Raid1, 1),
            default_server(),
            "the NATS-on-E-Series guide's EF600 2-disk RAID 1, one LUN per group (no --site/--layout given)".into(),
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
        subjects: None,
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

/// One run of a row.
struct Run {
    ops: f64,
    bench: BenchResult,
    agents: Option<crate::agent::AgentsRun>,
    cpu: Vec<(String, f64)>,
    /// The client host's load while it ran.
    host: Option<crate::hostload::HostLoad>,
}

/// The run whose rate is the median (for an even count, the lower of the middle two) and the median rate
/// itself (for an even count, the mean of the middle two). An incomplete or interrupted run, always the last, is the
/// row's result as it is: it is never judged.
fn pick_median(mut runs: Vec<Run>) -> (Run, f64) {
    let unfinished = |r: &Run| r.agents.as_ref().is_some_and(|a| !a.complete) || r.bench.completion.interrupted;
    if runs.last().is_some_and(unfinished) {
        let last = runs.pop().expect("an incomplete run is there");
        let ops = last.ops;
        return (last, ops);
    }
    runs.sort_by(|a, b| a.ops.total_cmp(&b.ops));
    let n = runs.len();
    let median = crate::stats::median_sorted(&runs.iter().map(|r| r.ops).collect::<Vec<_>>());
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
    let median = crate::stats::median_sorted(&v);
    (median > 0.0).then(|| (v[n - 1] - v[0]) / median)
}

/// Drift against the target layout: the emitted stream definitions against `/jsz`.
fn check_drift(t: &Baseline, facts: &ClusterFacts, monitors: &[String]) -> Result<drift::Drift, Failure> {
    let pl = t
        .plan
        .layout(&t.layout_id)
        .ok_or_else(|| Failure::BadInput(anyhow!("--layout {}: not in the plan", t.layout_id)))?;
    let files =
        crate::emit::render(&t.plan, &t.layout_id, &crate::emit::EmitOptions::default()).map_err(Failure::BadInput)?;
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
    let mut jsz_answered = 0;
    for m in monitors {
        if let Ok(j) = crate::monitor::jsz(m, "accounts=true&streams=true&config=true", Duration::from_secs(3)) {
            jsz_answered += 1;
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
    // Without a /jsz answer the streams are unknown, not absent.
    let live = (jsz_answered > 0).then_some(live.as_slice());
    Ok(drift::check(&t.plan, pl, &emitted, facts, live))
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
            host: None,
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
        // So does a run a signal stopped.
        let mut cut = run(2.0);
        cut.bench.completion.interrupted = true;
        let (r, m) = pick_median(vec![run(50.0), run(60.0), cut]);
        assert_eq!((r.ops, m), (2.0, 2.0));
    }
}
