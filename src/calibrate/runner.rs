//! Runs a calibration plan with bench's workloads: interleaved passes over the points (all points once,
//! then again), each run sized to the plan's run length from the rates already measured, inside the time
//! budget (a pass that would overrun it is cut short, and the report says so).

use super::plan::{MeasurePlan, Point, RUN_OVERHEAD_S};
use crate::bench::{
    self, BenchResult, BenchSpec, BenchWorkload, ClientChoice, ConnSpec, LeaderPlacement, ObjOp, PublishMode, Storage,
};
use crate::error::Failure;
use crate::perf::Kind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Async publishes in flight per JetStream publisher (verify's ladder uses the same window).
pub const JS_WINDOW: usize = 500;

/// One run of one point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Measurement {
    pub point: String,
    /// 1-based pass number.
    pub repeat: u32,
    /// Messages, puts or objects the run did.
    pub msgs: u64,
    /// The figure the model is fitted to and verify compares (objects/s, publishes/s, ...).
    pub ops_per_s: f64,
    /// Every figure written to the calibration row, keyed with its unit.
    pub values: BTreeMap<String, f64>,
    pub warnings: Vec<String>,
}

/// What the runner did.
#[derive(Debug, Clone, Serialize, Default)]
pub struct RunLog {
    pub measurements: Vec<Measurement>,
    /// Runs that failed, with the error.
    pub failures: Vec<(String, String)>,
    /// Runs the budget did not leave time for.
    pub skipped: Vec<String>,
    pub elapsed_s: f64,
    /// A signal stopped the runs (the run it hit removed its assets; nothing after it ran).
    pub interrupted: bool,
    /// Store probes taken between runs (every `PROBE_EVERY` runs when the store is on this machine), so
    /// the fsync figure is sampled under the same load as the runs, not on one idle moment after them.
    #[serde(skip)]
    pub probes: Vec<super::probe::Probe>,
}

/// A point the budget cut short: measured in fewer passes than planned (none: never measured).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShortPoint {
    pub point: String,
    /// Passes that measured it.
    pub measured: usize,
    /// Passes the budget skipped.
    pub skipped: usize,
}

impl RunLog {
    /// The points the budget skipped in some pass, each once, in the order first skipped, with how many
    /// passes measured them: a point skipped in pass 1 and measured in pass 2 is short of repeats, not
    /// "not run".
    pub fn short_points(&self) -> Vec<ShortPoint> {
        let mut out: Vec<ShortPoint> = Vec::new();
        for s in &self.skipped {
            let id = s.rsplit_once(" pass ").map(|(id, _)| id).unwrap_or(s);
            match out.iter_mut().find(|p| p.point == id) {
                Some(p) => p.skipped += 1,
                None => out.push(ShortPoint {
                    point: id.to_string(),
                    measured: self.measurements.iter().filter(|m| m.point == id).count(),
                    skipped: 1,
                }),
            }
        }
        out
    }
}

/// Runs between two store probes: about 13 probes in a 126-run plan, each 0.1-1 s.
const PROBE_EVERY: usize = 10;

/// The bench workload for a point.
pub fn workload(p: &Point) -> BenchWorkload {
    match p.kind {
        Kind::ObjPut | Kind::ObjGet => BenchWorkload::Obj {
            op: if p.kind == Kind::ObjPut { ObjOp::Put } else { ObjOp::Get },
            clients: p.workers as usize,
            replicas: p.replicas as usize,
            storage: Storage::File,
        },
        Kind::Js => BenchWorkload::Js {
            pubs: p.workers as usize,
            replicas: p.replicas as usize,
            storage: Storage::File,
            publish: if p.sync_publish() {
                PublishMode::Sync
            } else {
                PublishMode::Async
            },
            window: if p.sync_publish() {
                1
            } else {
                p.window.map_or(JS_WINDOW, |w| w as usize)
            },
            consumers: p.readers.unwrap_or(0) as usize,
        },
        Kind::Kv => BenchWorkload::Kv {
            clients: p.workers as usize,
            replicas: p.replicas as usize,
            storage: Storage::File,
            publish: if p.window.is_some() {
                PublishMode::Async
            } else {
                PublishMode::Sync
            },
            window: p.window.map_or(1, |w| w as usize),
        },
        Kind::Core => BenchWorkload::Core {
            pubs: p.workers as usize,
            subs: p.subscribers as usize,
        },
        Kind::Ping => BenchWorkload::Ping,
        Kind::Flood => BenchWorkload::Flood {
            pubs: p.workers as usize,
        },
        Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered => BenchWorkload::Consume {
            mode: match p.kind {
                Kind::ConsumerFetch => bench::ConsumeMode::Fetch,
                Kind::ConsumerConsume => bench::ConsumeMode::Consume,
                _ => bench::ConsumeMode::Ordered,
            },
            clients: p.workers as usize,
            batch: 500,
            replicas: p.replicas as usize,
            storage: Storage::File,
            target: None,
        },
    }
}

/// A first guess of a point's rate on a loopback machine, before anything of its kind ran (the first run
/// of each kind is short and later runs are sized from it).
fn pilot_rate(p: &Point) -> f64 {
    match p.kind {
        Kind::ObjPut | Kind::ObjGet => 200.0 * 16_384.0 / (p.size_bytes as f64 + 16_384.0),
        // One synchronous publisher waits a round trip per publish, like the KV putter.
        Kind::Js if p.sync_publish() => 1_000.0,
        Kind::Js => 10_000.0,
        Kind::Kv if p.window.is_some() => 10_000.0,
        Kind::Kv => 1_000.0,
        Kind::Core => 100_000.0,
        Kind::Ping => 2_000.0,
        Kind::Flood => 50_000.0,
        Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered => 50_000.0,
    }
}

/// Size (bytes) at which a kind's per-byte time equals its fixed time, roughly: used only to carry a
/// measured rate over to the next size when sizing runs.
fn half_size(kind: Kind) -> f64 {
    match kind {
        Kind::ObjPut | Kind::ObjGet => 32_768.0,
        Kind::Js | Kind::Kv => 4_096.0,
        _ => 2_048.0,
    }
}

/// Estimated count rate (the run's count unit per second) of `p` from measured points of the same kind (the nearest size), else a pilot guess.
pub fn estimate_rate(p: &Point, done: &[(Point, f64)]) -> f64 {
    if let Some((_, r)) = done.iter().find(|(q, _)| q.id == p.id).map(|(q, r)| (q.clone(), *r)) {
        return r;
    }
    let same: Vec<&(Point, f64)> = done
        .iter()
        // A synchronous publisher's rate is a round trip per publish, not an async window's: never sized
        // from the other (sized from async rows, one sync run took 135,297 publishes and the budget).
        .filter(|(q, _)| q.kind == p.kind && q.rate_per_s.is_none() && q.one_in_flight() == p.one_in_flight())
        .collect();
    let nearest = same.iter().min_by(|a, b| {
        let d = |q: &Point| ((q.size_bytes as f64).ln() - (p.size_bytes as f64).ln()).abs();
        d(&a.0).total_cmp(&d(&b.0))
    });
    match nearest {
        Some((q, r)) => {
            let h = half_size(p.kind);
            let size = (q.size_bytes as f64 + h) / (p.size_bytes as f64 + h);
            let workers = (p.workers.max(1) as f64 / q.workers.max(1) as f64).sqrt();
            // Every subscriber receives every message: the publishers slow down with the fan-out.
            let fan_out = (1.0 + q.subscribers as f64) / (1.0 + p.subscribers as f64);
            r * size * workers * fan_out
        }
        None => pilot_rate(p),
    }
}

/// How many messages a run of `p` does in about `run_s` seconds.
pub fn count_for(p: &Point, rate_per_s: f64, run_s: f64) -> u64 {
    if let Some(target) = p.rate_per_s {
        return ((target * run_s) as u64).max(100);
    }
    let w = p.workers.max(1) as u64;
    let min = match p.kind {
        Kind::ObjPut | Kind::ObjGet => 3 * w,
        Kind::Ping => 50,
        _ => 200 * w,
    };
    // The many-subjects point goes over its subjects at least four times (a shorter run would send each
    // message to a subject not seen before: another workload than the row says).
    let min = min.max(4 * p.subjects.map_or(0, u64::from));
    // Asynchronous KV puts write a new key each (bench kv put --publish async): at least four times the
    // subjects term's plateau, so the ratio they give is a bucket of many keys' at any run length (run 18's
    // first, shortest repeat, 12 k keys, read the fastest of three).
    let min = if p.kind == Kind::Kv && p.window.is_some() {
        min.max(4 * crate::perf::subjects::PLATEAU as u64)
    } else {
        min
    };
    let n = ((rate_per_s * run_s) as u64).clamp(min, 5_000_000);
    n.div_ceil(w) * w
}

/// The figures one bench result gives for a point.
pub fn figures(p: &Point, b: &BenchResult) -> (f64, BTreeMap<String, f64>) {
    let mut v = BTreeMap::new();
    let lat = b.latency_us;
    let ops = match (p.kind, p.rate_per_s) {
        (_, Some(target)) => {
            let (achieved, sustained) = b
                .rate
                .as_ref()
                .map(|r| (r.achieved_per_s, r.sustained))
                .unwrap_or((b.msgs_per_s(), false));
            v.insert("target_msgs_per_s".into(), target);
            v.insert("achieved_msgs_per_s".into(), achieved);
            // Bench calls a run sustained while its backlog stays under the cut-off, which a short run at an
            // impossible rate can do: the target must also be reached (within 5 %).
            let held = sustained && achieved >= 0.95 * target;
            v.insert("sustained".into(), if held { 1.0 } else { 0.0 });
            achieved
        }
        (Kind::Js, _) if p.readers.is_some() => {
            // The publishers' rate (a JetStream run's headline, as the points without readers record it) under
            // the key perf::leader::ReadersStretch reads, and the readers' beside it.
            v.insert("pub_msgs_per_s".into(), b.publishers.msgs_per_s());
            v.insert("sub_msgs_per_s".into(), b.subscribers.msgs_per_s());
            b.publishers.msgs_per_s()
        }
        (Kind::ObjPut | Kind::ObjGet | Kind::Js | Kind::Kv, _) => {
            // The calibration file's name for the operation rate of each kind.
            let key = match p.kind {
                Kind::ObjPut => "put_obj_per_s",
                Kind::ObjGet => "get_obj_per_s",
                Kind::Js => "durable_pubs_per_s",
                _ => "ops_per_s",
            };
            v.insert(key.into(), b.msgs_per_s());
            b.msgs_per_s()
        }
        (Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered, _) => {
            // perf::consumer's key.
            v.insert("msgs_per_s".into(), b.msgs_per_s());
            b.msgs_per_s()
        }
        (Kind::Core, _) => {
            v.insert("pub_msgs_per_s".into(), b.publishers.msgs_per_s());
            if p.subscribers > 0 {
                v.insert("aggregate_msgs_per_s".into(), b.aggregate_msgs_per_s());
                b.aggregate_msgs_per_s()
            } else {
                b.publishers.msgs_per_s()
            }
        }
        (Kind::Ping, _) => {
            if let Some(l) = lat {
                v.insert("rtt_avg_ms".into(), l.avg / 1e3);
                v.insert("rtt_p99_ms".into(), l.p99 / 1e3);
            }
            b.msgs_per_s()
        }
        (Kind::Flood, _) => {
            if let Some(l) = lat {
                v.insert("delay_avg_ms".into(), l.avg / 1e3);
            }
            let drain = b.subscribers.msgs_per_s();
            v.insert("drain_msgs_per_s".into(), drain);
            drain
        }
    };
    if p.kind != Kind::Ping && p.kind != Kind::Flood {
        if let Some(l) = lat {
            v.insert("lat_p50_ms".into(), l.p50 / 1e3);
            v.insert("lat_p99_ms".into(), l.p99 / 1e3);
        }
    }
    v.retain(|_, x| x.is_finite() && *x >= 0.0);
    (ops, v)
}

/// The calibrate runs' leader placement: on a cluster given by more than one URL, every run that writes to a
/// stream connects its workers to servers other than the stream leader's (`bench --leader remote`), the
/// usual case for a client of an N-server cluster; left to the URL order, a run measured 1.45-1.7x more
/// whenever the election put the leader on the publisher's server (`bench::leader`).
pub fn leader_for(p: &Point, servers: usize) -> LeaderPlacement {
    let writes = matches!(p.kind, Kind::Js | Kind::Kv | Kind::ObjPut | Kind::ObjGet);
    match writes && servers > 1 {
        true => LeaderPlacement::Remote,
        false => LeaderPlacement::Any,
    }
}

/// The calibrate runs' consumer placement: on a cluster given by more than one URL, consumer reads (fetch,
/// consume) connect each reader to a server other than its consumer's leader's (`bench --consumer-leader
/// remote`), as verify and the prediction matrix do. Left to the election, one reader fetched 43-75 k or
/// 74-124 k msgs/s (R3, 1 KiB) as its consumer's leader was elsewhere or on its server (issue 37), and
/// calibrate's fetch rows spread 64-153 k/s over three repeats.
pub fn consumer_leader_for(p: &Point, servers: usize) -> LeaderPlacement {
    let placed = matches!(p.kind, Kind::ConsumerFetch | Kind::ConsumerConsume);
    match placed && servers > 1 {
        true => LeaderPlacement::Remote,
        false => LeaderPlacement::Any,
    }
}

fn spec(p: &Point, msgs: u64, monitors: &[String], servers: usize) -> BenchSpec {
    BenchSpec {
        workload: workload(p),
        msgs,
        size: p.size_bytes,
        rate_per_s: p.rate_per_s,
        backlog_cutoff: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        monitor: monitors.to_vec(),
        keep: false,
        sub_sleep: None,
        sub_buffer: None,
        client: ClientChoice::Auto,
        progress: false,
        leader: leader_for(p, servers),
        consumer_leader: consumer_leader_for(p, servers),
        // The many-subjects point: its messages round-robin over that many subjects (perf::subjects).
        subjects: bench::Subjects {
            subject: None,
            multi: p.subjects.map(u64::from),
        },
    }
}

/// The order of one pass: required points first, so a budget that runs short (runs that cost more than
/// planned on a loaded machine) skips optional points, never the rows a model needs to fit; within each,
/// kind by kind, sizes ascending, so each run is sized from its neighbour's rate; object puts first: the
/// object model needs the most rows; fixed-rate rows last.
pub fn run_order(points: &[Point]) -> Vec<&Point> {
    let rank = |k: Kind| match k {
        Kind::ObjPut => 0,
        Kind::Js => 1,
        Kind::Kv => 2,
        Kind::Ping => 3,
        Kind::Flood => 4,
        Kind::Core => 5,
        Kind::ObjGet => 6,
        Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered => 7,
    };
    let mut order: Vec<&Point> = points.iter().collect();
    order.sort_by_key(|p| {
        (
            p.optional,
            p.rate_per_s.is_some(),
            rank(p.kind),
            p.size_bytes,
            p.workers,
            p.replicas,
        )
    });
    order
}

/// Run every point `plan.repeats` times, interleaved, stopping when the budget is spent.
pub fn run(
    rt: &tokio::runtime::Runtime,
    conn: &ConnSpec,
    monitors: &[String],
    plan: &MeasurePlan,
    cancel: &bench::Cancel,
    probe_dir: Option<&std::path::Path>,
    log: &dyn Fn(&str),
) -> RunLog {
    let start = Instant::now();
    let mut out = RunLog::default();
    let order = run_order(&plan.points);
    let mut done: Vec<(Point, f64)> = Vec::new();
    let mut overhead_s = RUN_OVERHEAD_S;
    let total_runs = plan.runs();
    let mut run_no = 0usize;
    for pass in 1..=plan.repeats {
        for p in &order {
            if cancel.is_cancelled() {
                out.interrupted = true;
                break;
            }
            run_no += 1;
            if let Some(dir) = probe_dir.filter(|_| run_no.is_multiple_of(PROBE_EVERY)) {
                // The probe's time comes out of the budget like a run's (elapsed below includes it).
                if let Ok(pr) = super::probe::run(dir) {
                    out.probes.push(pr);
                }
            }
            let elapsed = start.elapsed().as_secs_f64();
            let left = plan.budget_s - elapsed;
            let remaining_runs = (total_runs - run_no + 1) as f64;
            // Spread what is left over the runs still to do, within the plan's run length.
            let run_s = (left / remaining_runs - overhead_s).min(plan.run_s);
            // Short of time: optional points go first, then anything that cannot get half the shortest run.
            let short = run_s < super::plan::MIN_RUN_S;
            if (short && p.optional) || run_s < super::plan::MIN_RUN_S * 0.5 || left < overhead_s {
                out.skipped.push(format!("{} pass {pass}", p.id));
                continue;
            }
            let rate = estimate_rate(p, &done);
            let msgs = count_for(p, rate, run_s);
            log(&format!(
                "calibrate: [{run_no}/{total_runs}] {} pass {pass}: {msgs} × {} B",
                p.id, p.size_bytes
            ));
            let t0 = Instant::now();
            let r = rt.block_on(bench::run_with(
                conn,
                &spec(p, msgs, monitors, conn.server_count()),
                cancel,
            ));
            let took = t0.elapsed().as_secs_f64();
            if cancel.is_cancelled() {
                // A run a signal cut short measured part of a point: not a row of the file.
                log(&format!("calibrate: {} interrupted", p.id));
                out.interrupted = true;
                break;
            }
            match r {
                Ok(b) => {
                    let (ops, values) = figures(p, &b);
                    let window = b.window_s();
                    // What the run cost beyond its measured window: setup, stream creation and deletion.
                    overhead_s = 0.7 * overhead_s + 0.3 * (took - window).max(0.05);
                    // Runs are sized in their own count unit (published messages, puts, objects) per second.
                    let count_rate = b.msgs as f64 / window.max(1e-3);
                    if count_rate > 0.0 && p.rate_per_s.is_none() {
                        done.retain(|(q, _)| q.id != p.id);
                        done.push(((*p).clone(), count_rate));
                    }
                    out.measurements.push(Measurement {
                        point: p.id.clone(),
                        repeat: pass,
                        msgs,
                        ops_per_s: ops,
                        values,
                        warnings: b.warnings.clone(),
                    });
                }
                Err(e) => {
                    let msg = match e {
                        Failure::BadInput(e) | Failure::CannotRun(e) => format!("{e:#}"),
                    };
                    log(&format!("calibrate: {} failed: {msg}", p.id));
                    out.failures.push((p.id.clone(), msg));
                }
            }
        }
    }
    out.elapsed_s = start.elapsed().as_secs_f64();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::plan::all_points;

    #[test]
    fn a_point_skipped_in_one_pass_and_measured_in_another_is_short_of_repeats_not_unrun() {
        let m = |p: &str, repeat| Measurement {
            point: p.into(),
            repeat,
            msgs: 1,
            ops_per_s: 1.0,
            values: Default::default(),
            warnings: vec![],
        };
        let log = RunLog {
            measurements: vec![m("js-a", 2), m("js-a", 3), m("kv-b", 1)],
            skipped: vec!["js-a pass 1".into(), "obj-c pass 1".into(), "obj-c pass 2".into()],
            ..Default::default()
        };
        let short = log.short_points();
        assert_eq!(
            short,
            vec![
                ShortPoint {
                    point: "js-a".into(),
                    measured: 2,
                    skipped: 1
                },
                ShortPoint {
                    point: "obj-c".into(),
                    measured: 0,
                    skipped: 2
                },
            ]
        );
    }

    #[test]
    fn a_sync_publisher_is_never_sized_from_async_rows() {
        let pts = all_points(3);
        let sync = pts.iter().find(|p| p.sync_publish()).unwrap().clone();
        let asyn = pts
            .iter()
            .find(|p| p.kind == Kind::Js && !p.sync_publish())
            .unwrap()
            .clone();
        // 180k/s async (as measured on the lab) once gave the sync run 135,297 publishes.
        let r = estimate_rate(&sync, &[(asyn, 180_000.0)]);
        assert_eq!(r, pilot_rate(&sync));
        assert!(r <= 1_000.0, "{r}");
    }

    /// Issue 37: the asynchronous KV point runs asynchronous puts in the async publish point's shape, is
    /// written as such (so perf reads it as the leader's KV put ratio, never as a synchronous client), and
    /// is never sized from the synchronous putters' rates (nor they from it).
    #[test]
    fn the_async_kv_point_puts_asynchronously_in_the_publish_points_shape() {
        let pts = all_points(3);
        let kv = pts
            .iter()
            .find(|p| p.id == "kvasync-r3-2p-512B")
            .expect("the point")
            .clone();
        let js = pts.iter().find(|p| p.id == "js-r3-2p-512B").expect("the publish point");
        assert!(kv.optional && !kv.holdout && !kv.one_in_flight());
        assert_eq!(
            (kv.size_bytes, kv.replicas, kv.workers),
            (js.size_bytes, js.replicas, js.workers)
        );
        match workload(&kv) {
            BenchWorkload::Kv {
                publish,
                window,
                clients,
                ..
            } => {
                assert_eq!((publish, window, clients), (PublishMode::Async, JS_WINDOW, 2));
            }
            w => panic!("{w:?}"),
        }
        let m = Measurement {
            point: kv.id.clone(),
            repeat: 1,
            msgs: 1000,
            ops_per_s: 30_000.0,
            values: [("ops_per_s".to_string(), 30_000.0)].into(),
            warnings: vec![],
        };
        let ctx = crate::calibrate::write::RowContext {
            servers: 3,
            sync: "always".into(),
        };
        let row = crate::calibrate::write::row(&kv, &m, &ctx);
        assert_eq!(
            (row.kind.as_str(), row.publish_mode.as_deref(), row.window),
            ("kv-async", Some("async"), Some(JS_WINDOW as u32))
        );
        assert!(row.async_put() && !row.is(Kind::Kv));
        assert!(count_for(&kv, 10_000.0, 0.5) >= 4 * crate::perf::subjects::PLATEAU as u64);
        let putter = pts
            .iter()
            .find(|p| p.id == "kv-r3-16p-128B")
            .expect("16 putters")
            .clone();
        assert!(putter.one_in_flight());
        assert_eq!(estimate_rate(&kv, &[(putter.clone(), 2_000.0)]), pilot_rate(&kv));
        assert_eq!(estimate_rate(&putter, &[(kv, 30_000.0)]), pilot_rate(&putter));
        match workload(&putter) {
            BenchWorkload::Kv { publish, window, .. } => assert_eq!((publish, window), (PublishMode::Sync, 1)),
            w => panic!("{w:?}"),
        }
    }

    /// Issue 37 (2026-12-07): the readers point publishes synchronously with one consumer reading every
    /// message, and its row is of kind `js-readers` with the publishers' rate under `pub_msgs_per_s` (never a
    /// `js` publish row: the leader and sync-law fits must not read it).
    #[test]
    fn the_readers_point_publishes_synchronously_with_a_reader_and_writes_a_readers_row() {
        let pts = all_points(3);
        let p = pts
            .iter()
            .find(|p| p.readers.is_some())
            .expect("a readers point")
            .clone();
        match workload(&p) {
            BenchWorkload::Js {
                publish,
                window,
                consumers,
                pubs,
                ..
            } => assert_eq!((publish, window, consumers, pubs), (PublishMode::Sync, 1, 1, 4)),
            w => panic!("{w:?}"),
        }
        let m = Measurement {
            point: p.id.clone(),
            repeat: 1,
            msgs: 1000,
            ops_per_s: 4_000.0,
            values: [
                ("pub_msgs_per_s".to_string(), 4_000.0),
                ("sub_msgs_per_s".to_string(), 3_990.0),
            ]
            .into(),
            warnings: vec![],
        };
        let ctx = crate::calibrate::write::RowContext {
            servers: 3,
            sync: "delayed".into(),
        };
        let row = crate::calibrate::write::row(&p, &m, &ctx);
        assert_eq!(
            (
                row.kind.as_str(),
                row.publish_mode.as_deref(),
                row.consumers,
                row.window
            ),
            ("js-readers", Some("sync"), Some(1), Some(1))
        );
        assert!(!row.is(Kind::Js));
        assert_eq!(row.measured("pub_msgs_per_s"), Some(4_000.0));
        // The writers go to a server other than the stream leader's, as the publishers without a reader do.
        assert_eq!(leader_for(&p, 3), LeaderPlacement::Remote);
    }

    #[test]
    fn fetch_points_read_from_a_server_other_than_their_consumers_on_a_cluster() {
        let pts = all_points(3);
        let fetch: Vec<&Point> = pts.iter().filter(|p| p.kind == Kind::ConsumerFetch).collect();
        assert_eq!(fetch.len(), 3, "256 B and 12 KiB at R3, 256 B at R1");
        for p in &fetch {
            assert_eq!(consumer_leader_for(p, 3), LeaderPlacement::Remote, "{}", p.id);
            assert_eq!(spec(p, 10, &[], 3).consumer_leader, LeaderPlacement::Remote);
            // One URL: wherever the consumer is (bench cannot place an R1 consumer's reader by one URL).
            assert_eq!(spec(p, 10, &[], 1).consumer_leader, LeaderPlacement::Any);
            // A consumer run writes nothing to the stream leader on the clock.
            assert_eq!(leader_for(p, 3), LeaderPlacement::Any);
        }
        for p in pts.iter().filter(|p| p.kind != Kind::ConsumerFetch) {
            assert_eq!(consumer_leader_for(p, 3), LeaderPlacement::Any, "{}", p.id);
        }
    }

    #[test]
    fn required_points_run_before_optional_ones() {
        let pts = all_points(3);
        let order = run_order(&pts);
        assert_eq!(order.len(), pts.len());
        let first_optional = order.iter().position(|p| p.optional).expect("some optional point");
        assert!(
            order[first_optional..].iter().all(|p| p.optional),
            "a required point after an optional one"
        );
        // The core rows the core model needs are all required, so they come before every optional point.
        let core_required = order.iter().position(|p| p.kind == Kind::Core && !p.optional).unwrap();
        assert!(core_required < first_optional);
    }

    #[test]
    fn runs_are_sized_from_the_nearest_measured_size() {
        let pts = all_points(3);
        let a = pts.iter().find(|p| p.id == "obj-r3-w2-12KiB").unwrap().clone();
        let b = pts.iter().find(|p| p.id == "obj-r3-w2-768KiB").unwrap().clone();
        let guess = estimate_rate(&b, &[]);
        assert!(guess > 0.0);
        let from_a = estimate_rate(&b, &[(a.clone(), 500.0)]);
        assert!(from_a < 500.0 / 10.0, "{from_a}");
        // Its own earlier pass wins.
        assert_eq!(estimate_rate(&b, &[(a, 500.0), (b.clone(), 7.0)]), 7.0);
        // Counts are whole multiples of the workers and never below the minimum.
        assert_eq!(count_for(&b, 0.1, 1.0), 6);
        assert_eq!(count_for(&b, 101.0, 1.0) % 2, 0);
        let rate = pts.iter().find(|p| p.rate_per_s.is_some()).unwrap();
        assert_eq!(count_for(rate, 1.0, 2.0), (rate.rate_per_s.unwrap() * 2.0) as u64);
    }
}
