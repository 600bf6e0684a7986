//! Issue 37: the live prediction matrix, held against the model. tests/data/prediction-matrix.yaml holds
//! dated runs of `scripts/prediction-matrix` (a 3-node loopback lab: calibrate, then a grid of cells
//! calibrate never measures, interleaved passes, medians) with the calibration each run's predictions came
//! from. Each cell is predicted again here from its run's calibration alone, for the calibration's own
//! host class, as the script's `natsplan predict` did, and judged on the median of its passes
//! (error = measured ÷ predicted − 1).
//!
//! Cells are `fit` (a shape calibrate measures, or one the model's form was changed after seeing) or
//! `held-out`. A run's held-out cells must meet the targets (median |error| ≤ 15 %, worst ≤ 35 %, each
//! inside its band, no band wider than `MAX_BAND`) unless the run is marked `development: true`: the run
//! the model was changed after (its misses are recorded and reported, not asserted). A model broken for one
//! mode fails the same judge (`a_model_broken_for_one_mode_fails_the_matrix`).

use crate::stats::median;
use natsplan::catalog::Catalog;
use natsplan::layout::Raid;
use natsplan::perf::sync_law::SyncOp;
use natsplan::perf::{predict_shape, Calibration, Kind, Shape, SyncClass, VolumeSpec};
use serde::Deserialize;
use std::path::Path;

const FIXTURE: &str = "tests/data/prediction-matrix.yaml";
/// Issue 37's targets over a run's held-out cells.
const MEDIAN_TARGET: f64 = 0.15;
const WORST_TARGET: f64 = 0.35;
/// The widest band (high ÷ low) a prediction on the lab's own host class may carry: issue 37 ("a 5.8×
/// band is not a prediction"). The runs' own bands were 1.7-2.1× (delayed sync).
const MAX_BAND: f64 = 2.5;
/// A band is a 90 % interval (1.645 × the fit's residual spread, perf::model): one cell in ten outside is
/// what a true band does. The share of held-out cells outside may be at most twice that.
const MAX_OUTSIDE: f64 = 0.2;
/// The sync mode every quiet held-out run is held to. `always` cells are held to the same targets (errors,
/// bands and their width) only when the run calibrated its `always` lab (`always_calibration`): priced
/// from a delayed calibration they missed by up to 44 % (run 5). Their bands were 4.2× in run 6 (a class
/// fitted to `always` async rows, which its form fits loosely, set them); synchronous clients measured under
/// `always` now carry what their own rows say (`sync_law::Beyond::width`), a rule set after run 6.
const JUDGED_SYNC: &str = "delayed";

#[derive(Deserialize, Clone)]
struct Open {
    why: String,
    cells: Vec<String>,
}

#[derive(Deserialize, Clone)]
struct Fixture {
    runs: Vec<Run>,
}

#[derive(Deserialize, Clone)]
struct Run {
    date: String,
    calibration: String,
    model: String,
    #[serde(default)]
    development: bool,
    /// Cells the model was changed after seeing in this run (their misses are why): judged as fit cells,
    /// their recorded predictions no longer the model's.
    #[serde(default)]
    changed_after: Vec<String>,
    /// Cells whose predictions the model moved since the run was recorded, and why (the docs quote what
    /// was predicted then): those cells only are no longer pinned to `predicted_then`, and are judged as
    /// the model prices them now.
    #[serde(default)]
    repriced: Option<Repriced>,
    /// The `always` lab's own calibration (`--calibrate-always`) and its host class: the run's `always`
    /// cells are predicted from it, and held to the error targets (`JUDGED_SYNC`).
    #[serde(default)]
    always_calibration: Option<String>,
    #[serde(default)]
    always_model: Option<String>,
    /// The run's calibration was taken under a named synthetic load (`--calibrate-under-load`: a busy loop
    /// pinned to one core), its cells on a quiet host: issue 37's report of what a busy calibration does to
    /// the held-out error, never asserted.
    #[serde(default)]
    calibrated_under_load: bool,
    /// Held-out cells whose miss is a named open item of the model (and why): still counted in the run's
    /// median and in how many fall outside their band, but not held to the worst-error target or the band
    /// cap (run 7: 64 KV putters, the extrapolation beyond the rows' clients: docs/prediction-matrix.md).
    #[serde(default)]
    open: Option<Open>,
    /// Why a run measured on a quiet host is reported and not held to the targets (say it in the fixture;
    /// the test prints it with the run's misses).
    #[serde(default)]
    reported: Option<String>,
    /// Why a quiet run's `always` cells, from its own quiet `always` calibration, are reported and not held
    /// to the targets (run 18: the lab slowed about a fifth from its first pass to its second with nothing
    /// the host load shows; the same build and procedure met every target in run 19): printed with the
    /// misses.
    #[serde(default)]
    always_reported: Option<String>,
    /// Why a quiet run's bands are wider than the cap (`MAX_BAND`) while its errors are held to every
    /// other target: the width is printed, not asserted (run 9: its calibration's rows spread more, so the
    /// class's fit residuals, and with them every band, were 2.6x).
    #[serde(default)]
    width_reported: Option<String>,
    /// The cells `width_reported` is about, where it names them (run 23 on): only their bands' width is
    /// printed and not asserted; every other cell's band is held to the cap. Absent: every cell's.
    #[serde(default)]
    width_cells: Option<Vec<String>>,
    /// The lab host's cores: a cell is busy when other processes used more than a quarter of them.
    cores: f64,
    cells: Vec<Cell>,
}

#[derive(Deserialize, Clone)]
struct Repriced {
    why: String,
    cells: Vec<String>,
}

#[derive(Deserialize, Clone)]
struct Cell {
    name: String,
    set: String,
    sync: String,
    kind: String,
    replicas: u8,
    workers: u32,
    batch: u32,
    size: u64,
    runs: Vec<f64>,
    predicted_then: f64,
    /// Cores other processes than natsplan and nats-server used while the cell ran (hostload's count).
    other_cores: f64,
    #[serde(default)]
    unmodelled: Option<String>,
    /// Distinct subjects the cell's messages went to (`--multisubjectmax`; run 10 on: predicted with them,
    /// perf::subjects). Runs 1-9's subjects cell has none: it ran through async-nats and was priced as one
    /// subject (`unmodelled`).
    #[serde(default)]
    subjects: Option<u64>,
    /// Consumers reading every message while the cell's publishers wrote (`bench js --consumers`, run 13
    /// on; predict::readers_work). None: no readers.
    #[serde(default)]
    consumers: Option<u32>,
}

/// One judged cell: name, set, predicted, band (low, high), measured median, error.
struct Judged {
    name: String,
    held_out: bool,
    /// Named in the run's `open`: not held to the worst error or the band cap.
    open: bool,
    sync: String,
    predicted: f64,
    low: f64,
    high: f64,
    measured: f64,
    error: f64,
    /// Priced over this many distinct subjects (perf::subjects).
    subjects: Option<u64>,
}

fn fixture() -> Fixture {
    serde_norway::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()
}

fn shape(cat: &Catalog, cal: &Calibration, model: &str, c: &Cell) -> Shape {
    let host = cal
        .terms
        .leaders
        .iter()
        .find(|l| l.host.server_model == model)
        .unwrap_or_else(|| panic!("no host class {model}"))
        .server_model();
    Shape {
        kind: match c.kind.as_str() {
            "js" => Kind::Js,
            "kv" => Kind::Kv,
            "consumer-fetch" => Kind::ConsumerFetch,
            k => panic!("fixture kind {k}"),
        },
        servers: 3,
        replicas: c.replicas,
        sync: if c.sync == "always" {
            SyncClass::Always
        } else {
            SyncClass::Delayed
        },
        size_bytes: c.size,
        workers: c.workers,
        subscribers: 0,
        consumers: c.consumers.unwrap_or(0),
        consumers_spread: true,
        volume: VolumeSpec::seed000(cat, Raid::Raid1, 1),
        server: host,
        rate: None,
        batch: c.batch,
        nats_version: None,
        subjects: c.subjects,
    }
}

/// The run's `always` calibration, when it calibrated its `always` lab.
fn always_calibration(run: &Run) -> Option<Calibration> {
    run.always_calibration
        .as_ref()
        .map(|p| Calibration::with_file(Path::new(p)).unwrap())
}

fn judge(cal: &Calibration, always: Option<&Calibration>, run: &Run) -> Vec<Judged> {
    let cat = Catalog::builtin();
    run.cells
        .iter()
        .map(|c| {
            let (cal, model) = match (always, &run.always_model) {
                (Some(a), Some(m)) if c.sync == "always" => (a, m),
                _ => (cal, &run.model),
            };
            let p = predict_shape(&cal.terms, &cat, &shape(&cat, cal, model, c));
            let m = median(c.runs.clone());
            Judged {
                name: c.name.clone(),
                held_out: c.set == "held-out" && !run.changed_after.contains(&c.name),
                open: run.open.as_ref().is_some_and(|o| o.cells.contains(&c.name)),
                sync: c.sync.clone(),
                predicted: p.ops_per_s,
                low: p.band.low,
                high: p.band.high,
                measured: m,
                error: m / p.ops_per_s - 1.0,
                subjects: c.subjects,
            }
        })
        .collect()
}

/// What is wrong with a run's held-out cells of one sync mode against issue 37's targets (empty: none).
fn misses(judged: &[Judged], sync: &str) -> Vec<String> {
    misses_within(judged, sync, &|_| MAX_BAND)
}

/// `misses` with the widest band allowed for each cell given (infinite: the band's width not judged).
fn misses_within(judged: &[Judged], sync: &str, cap: &dyn Fn(&Judged) -> f64) -> Vec<String> {
    let held: Vec<&Judged> = judged.iter().filter(|j| j.held_out && j.sync == sync).collect();
    let mut out = Vec::new();
    if held.is_empty() {
        // A run of the other mode's cells only (run 7: `always` synchronous clients).
        return out;
    }
    let mut outside = Vec::new();
    for j in &held {
        if !(j.low..=j.high).contains(&j.measured) {
            outside.push(format!(
                "{}: measured {:.0} outside the band {:.0}-{:.0} (predicted {:.0}, {:+.1} %)",
                j.name,
                j.measured,
                j.low,
                j.high,
                j.predicted,
                j.error * 100.0
            ));
        }
        if j.high / j.low > cap(j) && !j.open {
            out.push(format!(
                "{}: band {:.1}x wider than {}x",
                j.name,
                j.high / j.low,
                cap(j)
            ));
        }
    }
    // The cells priced over many subjects are held to the median target each: there are two, which the
    // run's count of cells outside and its median cannot see (a model without the subjects term passes
    // those on run 10: helper review, 2026-12-06).
    for j in held.iter().filter(|j| j.subjects.is_some() && !j.open) {
        if j.error.abs() > MEDIAN_TARGET {
            out.push(format!(
                "{} ({} subjects): {:+.1} %, beyond {:.0} %",
                j.name,
                j.subjects.unwrap_or(1),
                j.error * 100.0,
                MEDIAN_TARGET * 100.0
            ));
        }
    }
    if outside.len() as f64 > MAX_OUTSIDE * held.len() as f64 {
        out.push(format!(
            "{} of {} cells outside their band (at most {:.0} %): {outside:#?}",
            outside.len(),
            held.len(),
            MAX_OUTSIDE * 100.0
        ));
    }
    let errs: Vec<f64> = held.iter().map(|j| j.error.abs()).collect();
    let med = median(errs.clone());
    let worst = held
        .iter()
        .filter(|j| !j.open)
        .map(|j| j.error.abs())
        .fold(0.0, f64::max);
    if med > MEDIAN_TARGET {
        out.push(format!(
            "median |error| {:.1} % above {:.0} %",
            med * 100.0,
            MEDIAN_TARGET * 100.0
        ));
    }
    if worst > WORST_TARGET {
        out.push(format!(
            "worst |error| {:.1} % above {:.0} %",
            worst * 100.0,
            WORST_TARGET * 100.0
        ));
    }
    out
}

fn print(run: &Run, judged: &[Judged]) {
    for (c, j) in run.cells.iter().zip(judged) {
        eprintln!(
            "{} {:40} {:8} measured {:8.0} predicted {:8.0} band {:8.0}-{:<8.0} {:+6.1} %{}",
            run.date,
            j.name,
            if j.held_out { "held-out" } else { "fit" },
            j.measured,
            j.predicted,
            j.low,
            j.high,
            j.error * 100.0,
            c.unmodelled
                .as_deref()
                .map(|u| format!(" (unmodelled: {u})"))
                .unwrap_or_default()
        );
    }
}

impl Run {
    /// A run some held-out cell of which was measured on a busy host (other processes above a quarter of
    /// the cores, as the script marks BUSY), calibrated under load, or `reported` for a reason it states:
    /// not held to the targets (issue 37: a busy host is seen and said, and a run on one misses by 25-30 %
    /// median).
    fn busy(&self) -> bool {
        self.calibrated_under_load || self.reported.is_some() || !self.cells_quiet()
    }

    /// No held-out cell was measured on a busy host (the script's BUSY mark).
    fn cells_quiet(&self) -> bool {
        !self
            .cells
            .iter()
            .any(|c| c.set == "held-out" && c.other_cores > 0.25 * self.cores)
    }

    /// The run's `always` cells are held to the error targets: they were predicted from the run's own
    /// quiet `always` calibration and measured on a quiet host (whatever the delayed calibration was).
    fn always_judged(&self) -> bool {
        self.always_calibration.is_some() && !self.development && self.cells_quiet() && self.always_reported.is_none()
    }

    /// Every cell the fixture names (`changed_after`, `repriced`) is one of the run's: a typo is caught.
    fn names_known(&self) {
        let named = self
            .changed_after
            .iter()
            .chain(self.repriced.iter().flat_map(|r| r.cells.iter()))
            .chain(self.open.iter().flat_map(|o| o.cells.iter()));
        for n in named.chain(self.width_cells.iter().flatten()) {
            assert!(self.cells.iter().any(|c| &c.name == n), "{}: no cell {n}", self.date);
        }
        assert!(
            self.width_cells.is_none() || self.width_reported.is_some(),
            "{}: width_cells without width_reported saying why",
            self.date
        );
    }

    /// `misses` of the run's cells of one sync mode, the bands' width judged unless the run says why it is
    /// reported (run 11: its `always` bands carry its calibration's repeat spread): for the cells it names
    /// (`width_cells`), else for every cell.
    fn misses(&self, judged: &[Judged], sync: &str) -> Vec<String> {
        let reported = |j: &Judged| match (&self.width_reported, &self.width_cells) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(_), Some(cells)) => cells.contains(&j.name),
        };
        misses_within(judged, sync, &|j| if reported(j) { f64::INFINITY } else { MAX_BAND })
    }

    fn repriced(&self, cell: &str) -> bool {
        self.repriced
            .as_ref()
            .is_some_and(|r| r.cells.iter().any(|c| c == cell))
    }
}

/// A cell inside its band and within the worst target: what the tests that hold one kind of cell across
/// runs assert of each.
fn within_targets(run: &Run, j: &Judged) {
    assert!(
        (j.low..=j.high).contains(&j.measured),
        "{} {}: outside its band",
        run.date,
        j.name
    );
    assert!(
        j.error.abs() <= WORST_TARGET,
        "{} {}: {:+.1} %",
        run.date,
        j.name,
        j.error * 100.0
    );
}

/// Every run's predictions stay within 2 % of what its script printed (docs/prediction-matrix.md quotes
/// them), and every held-out run measured on a quiet host meets issue 37's targets.
#[test]
fn held_out_matrix_cells_meet_the_targets() {
    let f = fixture();
    assert!(
        f.runs
            .iter()
            .any(|r| !r.development && !r.busy() && r.cells.iter().any(|c| c.sync == JUDGED_SYNC)),
        "no held-out run on a quiet host recorded"
    );
    for run in &f.runs {
        run.names_known();
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let always = always_calibration(run);
        let judged = judge(&cal, always.as_ref(), run);
        print(run, &judged);
        for (c, j) in run.cells.iter().zip(&judged) {
            assert!(
                (j.predicted / c.predicted_then - 1.0).abs() <= 0.02
                    || run.development
                    || run.repriced(&c.name)
                    || run.changed_after.contains(&c.name),
                "{} {}: predicted {:.0}, recorded {:.0}",
                run.date,
                c.name,
                j.predicted,
                c.predicted_then
            );
        }
        if let Some(why) = &run.width_reported {
            let wide = misses(&judged, JUDGED_SYNC);
            eprintln!("{}: bands' width reported, not asserted ({why}): {wide:#?}", run.date);
        }
        let m = run.misses(&judged, JUDGED_SYNC);
        eprintln!("{}: {} held-out misses: {m:#?}", run.date, m.len());
        if let Some(why) = &run.reported {
            eprintln!(
                "{} ({}): delayed cells reported, not asserted: {why}",
                run.date, run.calibration
            );
        }
        if let Some(r) = &run.repriced {
            eprintln!("{}: repriced since recorded: {}", run.date, r.why);
        }
        if !run.development && !run.busy() {
            assert!(m.is_empty(), "{} ({}): {m:#?}", run.date, run.calibration);
        }
        let a = run.misses(&judged, "always");
        if run.always_judged() {
            eprintln!(
                "{} under always, from the always lab's own calibration (asserted): {a:#?}",
                run.date
            );
            assert!(a.is_empty(), "{} under always: {a:#?}", run.date);
        } else {
            eprintln!(
                "{} under always (reported, not asserted{}): {a:#?}",
                run.date,
                run.always_reported
                    .as_deref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default()
            );
        }
        if let Some(o) = &run.open {
            eprintln!(
                "{}: open, not held to the worst error or the band cap: {:?}: {}",
                run.date, o.cells, o.why
            );
        }
    }
}

/// The judge is not vacuous: the latest held-out run's calibration with one mode's terms broken — every
/// synchronous publish's round trip 1.6× too long, or every KV put's, the async window's base latency 3×
/// too long, or the subjects term zeroed — fails it; and the latest run with readers' cells fails with
/// the readers priced as none.
#[test]
fn a_model_broken_for_one_mode_fails_the_matrix() {
    let f = fixture();
    let run = f
        .runs
        .iter()
        .rev()
        .find(|r| !r.development && !r.busy() && r.cells.iter().any(|c| c.sync == JUDGED_SYNC && c.kind == "kv"))
        .expect("a held-out run on a quiet host with every kind of cell");
    for op in [SyncOp::Publish, SyncOp::KvPut] {
        let mut cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        for h in &mut cal.terms.sync_hosts {
            for l in h.laws.iter_mut().filter(|l| l.op == op) {
                l.round_trip_s *= 1.6;
                l.round_trip_min_s *= 1.6;
                for p in &mut l.curve {
                    p.1 *= 1.6;
                }
            }
        }
        let m = run.misses(&judge(&cal, None, run), JUDGED_SYNC);
        assert!(!m.is_empty(), "{op:?} broken, yet the matrix passes");
    }
    // The async window's closed loop: its base latency 3× too long.
    let mut cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
    for l in &mut cal.terms.leaders {
        l.async_base_s = l.async_base_s.map(|a| a * 3.0);
    }
    let m = run.misses(&judge(&cal, None, run), JUDGED_SYNC);
    assert!(!m.is_empty(), "async base latency broken, yet the matrix passes");
    // Many subjects priced as one: the subjects term zeroed (runs from 10 on measure cells over many).
    if run.cells.iter().any(|c| c.subjects.is_some()) {
        let mut cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        for l in &mut cal.terms.leaders {
            l.subjects.plateau_s = 0.0;
        }
        let m = run.misses(&judge(&cal, None, run), JUDGED_SYNC);
        assert!(!m.is_empty(), "subjects term zeroed, yet the matrix passes");
    }
    // Readers priced as none (the model before bench js --consumers): the latest held-out run with
    // readers' cells fails it.
    let readers = f
        .runs
        .iter()
        .rev()
        .find(|r| !r.development && !r.busy() && r.cells.iter().any(|c| c.consumers.is_some()))
        .expect("a held-out run with readers' cells");
    let cal = Calibration::with_file(Path::new(&readers.calibration)).unwrap();
    assert!(
        readers.misses(&judge(&cal, None, readers), JUDGED_SYNC).is_empty(),
        "the readers' run misses before anything is broken"
    );
    let mut blind = readers.clone();
    for c in &mut blind.cells {
        c.consumers = None;
    }
    let m = blind.misses(&judge(&cal, None, &blind), JUDGED_SYNC);
    assert!(!m.is_empty(), "readers priced as none, yet the matrix passes");
    // The latest run whose `always` cells are judged: they pass on the errors as measured, and fail with
    // the synchronous clients' round trips measured under `always` 1.6× too long.
    let run = f
        .runs
        .iter()
        .rev()
        .find(|r| r.always_judged())
        .expect("a run whose always cells are judged");
    let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
    let sound = always_calibration(run).unwrap();
    let m = misses_within(&judge(&cal, Some(&sound), run), "always", &|_| f64::INFINITY);
    assert!(m.is_empty(), "always cells miss before anything is broken: {m:#?}");
    let mut always = always_calibration(run).unwrap();
    for h in &mut always.terms.sync_hosts {
        for l in &mut h.always_laws {
            l.round_trip_s *= 1.6;
            for p in &mut l.curve {
                p.1 *= 1.6;
            }
        }
    }
    let m = misses_within(&judge(&cal, Some(&always), run), "always", &|_| f64::INFINITY);
    assert!(!m.is_empty(), "always round trips broken, yet the matrix passes");
}

/// Issue 37 (review of run 6's change): a host calibrated under `always` prices its own `always` shapes as
/// measured and nothing twice. Its R3 async rows come back from its leader class; an R1 async window, which
/// no row of the class measured (R1 under `always` fsyncs every message), keeps the fsync per message; and
/// the advice `rate_with` gives for synchronous publishers agrees with the prediction (the fsyncs in the
/// measured round trip not added again).
#[test]
fn a_host_calibrated_under_always_prices_its_own_shapes_once() {
    let cat = Catalog::builtin();
    let path = "calibration/lab-loopback-matrix-6-always.yaml";
    let cal = Calibration::with_file(Path::new(path)).unwrap();
    let cell = |replicas: u8, workers: u32, batch: u32, size: u64| Cell {
        name: String::new(),
        set: "held-out".into(),
        sync: "always".into(),
        kind: "js".into(),
        replicas,
        workers,
        batch,
        size,
        runs: vec![],
        predicted_then: 0.0,
        other_cores: 0.0,
        unmodelled: None,
        subjects: None,
        consumers: None,
    };
    let predict = |c: &Cell| predict_shape(&cal.terms, &cat, &shape(&cat, &cal, "lab-loopback-matrix-6-always", c));
    // Its own R3 rows (2 publishers, 500 in flight): measured 72k at 64 B and 58k at 512 B.
    for (size, measured) in [(64, 72_000.0), (512, 58_000.0)] {
        let p = predict(&cell(3, 2, 500, size));
        assert!(
            (p.ops_per_s / measured - 1.0).abs() < 0.15,
            "{size} B: {:.0}",
            p.ops_per_s
        );
    }
    // R1, a window of 500: the file's own R1 rows carried 4.7-5.2k/s, every message fsynced.
    let r1 = predict(&cell(1, 1, 500, 128));
    assert!(
        r1.ops_per_s < 10_000.0,
        "R1 always priced without its fsync: {:.0}",
        r1.ops_per_s
    );
    // 16 synchronous publishers at 1 KiB: the advice re-prices what the prediction priced.
    let p = predict(&cell(3, 16, 1, 1024));
    let s = p.stream.as_ref().expect("stream facts");
    let again = s.rate_with(16.0, 1.0);
    assert!(
        (again / p.ops_per_s - 1.0).abs() < 0.02,
        "rate_with {again:.0} vs {:.0}",
        p.ops_per_s
    );
}

/// Issue 37 (the `always` async windows): run 12's `always` async cells sit inside bands within the cap
/// because the class prices work by size from its rows' medians (`perf::leader::SizeShape`, chosen over the
/// line by leaving each size out); priced by the line through its concave rows, as recorded, their bands
/// were 2.6x, above the cap.
#[test]
fn the_always_class_size_shape_keeps_run_12s_async_bands_within_the_cap() {
    let f = fixture();
    let run = f
        .runs
        .iter()
        .find(|r| r.always_model.as_deref() == Some("lab-loopback-matrix-12-always"))
        .expect("run 12's always cells");
    let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
    let shaped = always_calibration(run).unwrap();
    let class = |c: &Calibration| {
        c.terms
            .leaders
            .iter()
            .find(|l| l.id == "lab-loopback-matrix-12-always")
            .cloned()
            .unwrap()
    };
    assert!(class(&shaped).shape.is_some(), "run 12's always rows chose the line");
    // The two async windows (judged as fit cells since: the shape was built after seeing them).
    let widths = |c: &Calibration| -> Vec<(String, f64, bool)> {
        judge(&cal, Some(c), run)
            .into_iter()
            .filter(|j| j.name.starts_with("js-async-") && j.sync == "always")
            .map(|j| (j.name, j.high / j.low, (j.low..=j.high).contains(&j.measured)))
            .collect()
    };
    let w = widths(&shaped);
    assert_eq!(w.len(), 2);
    assert!(w.iter().all(|(_, x, inside)| *x <= MAX_BAND && *inside), "{w:#?}");
    let mut line = shaped.clone();
    for l in &mut line.terms.leaders {
        l.shape = None;
    }
    let w = widths(&line);
    assert!(
        w.iter().all(|(_, x, _)| *x > MAX_BAND),
        "priced by the line, within the cap: {w:#?}"
    );
}

/// The gap between a run's asynchronous KV cell's error and its asynchronous publish cells' median error
/// under `always` (None when the run has no such cells).
fn kv_async_gap(judged: &[Judged]) -> Option<f64> {
    let kv = judged
        .iter()
        .find(|j| j.sync == "always" && j.name.starts_with("kv-async-"))?;
    let js: Vec<f64> = judged
        .iter()
        .filter(|j| j.sync == "always" && j.name.starts_with("js-async-"))
        .map(|j| j.error)
        .collect();
    (!js.is_empty()).then(|| kv.error - median(js))
}

/// Issue 37: asynchronous KV puts under `always` are priced with the leader's KV put ratio the always lab
/// measured itself (calibrate's kvasync point, `leader::KvPutRatio`), so in every run whose calibration has
/// it the KV cell's error sits within 15 points of the same run's asynchronous publishes — whatever the
/// lab's drift (run 18: its cells 2-22 % low). Before it (runs 12, 16 and 17, the synchronous rows' D
/// ratio) the KV cell was 30-48 points above them (printed); with the measured ratio 1.6x too high the
/// latest run fails its targets or this gap.
#[test]
fn async_kv_puts_under_always_are_priced_in_line_with_the_runs_async_publishes() {
    let f = fixture();
    let mut with_ratio = 0;
    for run in f.runs.iter().filter(|r| !r.development) {
        let Some(always) = always_calibration(run) else {
            continue;
        };
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let Some(gap) = kv_async_gap(&judge(&cal, Some(&always), run)) else {
            continue;
        };
        let model = run.always_model.as_deref().unwrap();
        let measured = always
            .terms
            .leaders
            .iter()
            .find(|l| l.id == model)
            .and_then(|l| l.kv_put.clone());
        eprintln!(
            "{}: async KV - async publishes {:+.1} points (ratio {measured:?})",
            run.date,
            gap * 100.0
        );
        // Before the ratio (runs 12, 16, 17: +37.0, +30.2, +48.4 points): printed, not asserted, so a better
        // fallback is never a failure.
        if let Some(k) = measured {
            with_ratio += 1;
            assert!(gap.abs() <= 0.15, "{}: {:+.1} points ({k:?})", run.date, gap * 100.0);
            assert!(k.ratio > 1.0 && k.kv_rows >= 2 && k.publish_rows >= 2, "{k:?}");
        }
    }
    assert!(with_ratio >= 2, "runs 18 and 19 measured the ratio");
    // Broken: the latest run with the ratio, the ratio 1.6x too high, misses its targets.
    let run = f
        .runs
        .iter()
        .rev()
        .find(|r| r.always_judged() && r.cells.iter().any(|c| c.name.starts_with("kv-async-")))
        .expect("a judged always run with an async KV cell");
    let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
    let mut always = always_calibration(run).unwrap();
    assert!(run.misses(&judge(&cal, Some(&always), run), "always").is_empty());
    for l in &mut always.terms.leaders {
        if let Some(k) = l.kv_put.as_mut() {
            k.ratio *= 1.6;
        }
    }
    // Broken, it misses the run's targets or lands the KV cell more than 15 points off the run's async
    // publishes (runs 21-22's 2.4-2.5x async bands hold a price 1.6x low: the gap is what finds it).
    let judged = judge(&cal, Some(&always), run);
    let (m, gap) = (run.misses(&judged, "always"), kv_async_gap(&judged).unwrap());
    assert!(
        !m.is_empty() || gap.abs() > 0.15,
        "the KV put ratio 1.6x too high, yet run {} passes ({:+.1} points)",
        run.date,
        gap * 100.0
    );
}

/// Issue 37 (review): the measured KV put ratio prices asynchronous puts only — synchronous putters keep
/// their own rows whatever it is — and the advice a prediction gives for the other mode uses that mode's
/// factor: synchronous putters' law re-priced for a window of 256 lands on the asynchronous prediction.
#[test]
fn the_kv_put_ratio_prices_async_puts_only_and_the_advice_follows_the_mode() {
    let cat = Catalog::builtin();
    let path = "calibration/lab-loopback-matrix-19-always.yaml";
    let model = "lab-loopback-matrix-19-always";
    let cell = |workers: u32, batch: u32| Cell {
        name: format!("kv-{workers}-{batch}"),
        set: "held-out".into(),
        sync: "always".into(),
        kind: "kv".into(),
        replicas: 3,
        workers,
        batch,
        size: 128,
        runs: vec![1.0],
        predicted_then: 1.0,
        other_cores: 0.0,
        unmodelled: None,
        subjects: None,
        consumers: None,
    };
    let price = |cal: &Calibration, workers: u32, batch: u32| {
        predict_shape(&cal.terms, &cat, &shape(&cat, cal, model, &cell(workers, batch)))
    };
    let cal = Calibration::with_file(Path::new(path)).unwrap();
    let mut tripled = Calibration::with_file(Path::new(path)).unwrap();
    for l in &mut tripled.terms.leaders {
        if let Some(k) = l.kv_put.as_mut() {
            k.ratio = 3.0;
        }
    }
    for workers in [1, 8, 64] {
        let (a, b) = (price(&cal, workers, 1).ops_per_s, price(&tripled, workers, 1).ops_per_s);
        assert!(
            (a / b - 1.0).abs() < 1e-9,
            "{workers} synchronous putters: {a:.0} against {b:.0}"
        );
    }
    let (a, b) = (price(&cal, 2, 256).ops_per_s, price(&tripled, 2, 256).ops_per_s);
    assert!(
        b < 0.8 * a,
        "asynchronous puts: {a:.0} with the measured ratio, {b:.0} with 3"
    );
    // The synchronous putters' law asked about a window of 256 (design's advice) says what the
    // asynchronous prediction does.
    let sync = price(&cal, 2, 1);
    let advised = sync.stream.as_ref().expect("a stream law").rate_with(2.0, 256.0);
    assert!(
        (advised / a - 1.0).abs() < 0.05,
        "advice {advised:.0}/s against the asynchronous prediction {a:.0}/s"
    );
}

/// Issue 37 (R1 readers, 2026-12-07): an R1 stream's reader loads every message from the store its
/// publishes are written to, under the store's lock, so part of its time is in the stream's one stage
/// (`predict::readers`, 0.75 of it). The lab's R1 cell with one reader, priced on the readers' CPU alone,
/// read -15 to -34 % in every run (runs 13-15, 20, 21: median 24.7 %); with the share its errors are
/// held to issue 37's targets over those runs and run 22 — runs 21 and 22 held out — each inside its band. With no share
/// the same runs fail; the R3 readers' cells do not move with it.
#[test]
fn an_r1_readers_time_under_the_store_lock_prices_its_publishers() {
    const CELL: &str = "js-async-r1-1p-w256-128B-1c";
    let f = fixture();
    let runs: Vec<&Run> = f
        .runs
        .iter()
        .filter(|r| r.cells.iter().any(|c| c.name == CELL))
        .collect();
    assert!(runs.len() >= 6, "runs 13-15 and 20-22 measured the cell");
    let mut errors = Vec::new();
    for run in &runs {
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let judged = judge(&cal, always_calibration(run).as_ref(), run);
        let j = judged.iter().find(|j| j.name == CELL).unwrap();
        eprintln!(
            "{}: {CELL} measured {:.0} predicted {:.0} ({:+.1} %) band {:.0}-{:.0}",
            run.date,
            j.measured,
            j.predicted,
            j.error * 100.0,
            j.low,
            j.high
        );
        within_targets(run, j);
        // The R3 readers' cells are priced as before the share (their recorded prices, in held-out runs).
        for (c, j) in run.cells.iter().zip(&judged) {
            let pinned = !run.development && !run.repriced(&c.name) && !run.changed_after.contains(&c.name);
            if c.consumers.is_some() && c.replicas > 1 && pinned {
                assert!(
                    (j.predicted / c.predicted_then - 1.0).abs() <= 0.02,
                    "{} {}",
                    run.date,
                    c.name
                );
            }
        }
        errors.push(j.error.abs());
    }
    let m = median(errors);
    assert!(m <= MEDIAN_TARGET, "median |error| {:.1} %", m * 100.0);
    // Before the share: the prices recorded without it (runs 13-15 and 20 on the readers' CPU alone, and
    // run 21's: the runs that list the cell `changed_after` or `repriced`).
    let before: Vec<f64> = runs
        .iter()
        .filter(|r| r.changed_after.iter().any(|c| c == CELL) || r.repriced(CELL))
        .map(|r| {
            let c = r.cells.iter().find(|c| c.name == CELL).unwrap();
            (median(c.runs.clone()) / c.predicted_then - 1.0).abs()
        })
        .collect();
    assert!(
        median(before) > MEDIAN_TARGET,
        "the cell's recorded prices were within target"
    );
}

/// Issue 37 (2026-12-07): calibrate measures an R1 fetch (since run 23), and an R1 stream's readers are
/// priced from it: the R1 readers' cells' bands come within the cap (runs 21-22, priced from the R3 fetch
/// rows with the other-replicas allowance: 2.8x), each inside it and within the worst-error target; the R1
/// fetch cell at a size the point did not measure (its per-byte time borrowed from the R3 rows) is held to
/// the same. Runs whose calibration has no R1 fetch are the "before".
#[test]
fn an_r1_fetch_in_the_calibration_brings_the_r1_readers_bands_within_the_cap() {
    const R1_CELLS: [&str; 3] = [
        "js-async-r1-1p-w256-128B-1c",
        "js-sync-r1-16p-128B-1c",
        "consumer-fetch-r1-1c-1KiB",
    ];
    let f = fixture();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for run in f
        .runs
        .iter()
        .filter(|r| r.cells.iter().any(|c| R1_CELLS.contains(&c.name.as_str())))
    {
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let r1_fetch = cal
            .set
            .rows_named("consumer")
            .any(|(_, r)| r.fit && r.replicas == Some(1) && r.mode.as_deref() == Some("fetch"));
        let judged = judge(&cal, always_calibration(run).as_ref(), run);
        for j in judged.iter().filter(|j| R1_CELLS.contains(&j.name.as_str())) {
            let width = j.high / j.low;
            eprintln!(
                "{} (R1 fetch {}): {} {:+.1} % band {width:.2}x",
                run.date,
                if r1_fetch { "measured" } else { "not measured" },
                j.name,
                j.error * 100.0
            );
            if r1_fetch {
                assert!(width <= MAX_BAND, "{} {}: band {width:.2}x", run.date, j.name);
                within_targets(run, j);
                with.push(width);
            } else if !run.development {
                without.push(width);
            }
        }
    }
    assert!(with.len() >= 3, "runs with an R1 fetch measured: {with:?}");
    // Before: the R1 readers' bands above the cap on calibrations without the point.
    assert!(median(without.clone()) > MAX_BAND, "{without:?}");
}

/// Issue 37 (2026-12-07): calibrate measures what a reader adds to a synchronous publisher's round trip on
/// its host (since run 24; `leader::ReadersStretch`), in place of a figure read on another machine (0.22
/// per reader). The synchronous cells with readers, priced from it, meet the targets (median |error| and
/// worst, each inside its band); on the same machine without it (runs 21-23) their median |error| was
/// 11.7 % (run 24 with it: 4.2 %; its 16 and 64 publishers with 2-3 readers +16.3/+28.4 % as recorded,
/// +10.2/+12.1 % since the readers are counted once (session 33, `t_law`), inside their bands).
#[test]
fn a_measured_readers_stretch_prices_synchronous_publishers_with_readers() {
    let f = fixture();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for run in f.runs.iter().filter(|r| !r.development) {
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let measured = cal.terms.leaders.iter().any(|l| l.readers_stretch.is_some());
        let judged = judge(&cal, always_calibration(run).as_ref(), run);
        for (c, j) in run.cells.iter().zip(&judged) {
            if c.consumers.is_none() || c.batch != 1 || j.sync != JUDGED_SYNC {
                continue;
            }
            eprintln!(
                "{} (stretch {}): {} {:+.1} %",
                run.date,
                if measured { "measured" } else { "assumed" },
                j.name,
                j.error * 100.0
            );
            if measured {
                within_targets(run, j);
                with.push(j.error);
            } else if ["matrix-21.yaml", "matrix-22.yaml", "matrix-23.yaml"]
                .iter()
                .any(|s| run.calibration.ends_with(s))
            {
                // Runs 21-23: the machine of run 24, without the readers point.
                without.push(j.error);
            }
        }
    }
    assert!(with.len() >= 5, "{with:?}");
    let abs = |v: &[f64]| median(v.iter().map(|e| e.abs()).collect());
    assert!(abs(&with) <= MEDIAN_TARGET, "{with:?}");
    assert!(abs(&with) < abs(&without), "with {with:?} without {without:?}");
}

/// Issue 37 (2026-12-07, session 33): calibrate measures the readers' stretch with one reader and with two
/// (`ReadersStretch::further_measured`), so the first reader's share and each further one's are priced
/// apart (the loopback lab: the first 0.34-0.37 at 1-64 publishers, each further one 0.21 on average). On
/// the runs whose calibration measured both, the synchronous cells with two or more readers meet the
/// targets, each inside its band, and priced as before (the first reader's share carried linearly to every
/// further reader) the worst of them is further off: the most readers (three, 64 publishers) are where a
/// linear stretch errs most (run 24: +28.4 % that way; run 25: +28.9 % linear, +15.3 % apart, while its
/// one and 16 publishers with two readers read -0.7/+3.3 % linear and -7.2/-3.5 % apart, all inside the
/// median target). Run 25's cells with 16 and 64 publishers are `changed_after` (the readers counted once
/// was developed on them): there the test pins a regression; run 26 on holds both changes out.
#[test]
fn the_first_reader_and_each_further_one_price_many_readers_apart() {
    let f = fixture();
    let (mut apart, mut linear) = (Vec::new(), Vec::new());
    for run in f.runs.iter().filter(|r| !r.development && !r.busy()) {
        let cal = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        let two_counts = |c: &Calibration| {
            c.terms
                .leaders
                .iter()
                .any(|l| l.readers_stretch.as_ref().is_some_and(|s| s.further_measured))
        };
        if !two_counts(&cal) {
            continue;
        }
        let mut carried = Calibration::with_file(Path::new(&run.calibration)).unwrap();
        for s in carried
            .terms
            .leaders
            .iter_mut()
            .filter_map(|l| l.readers_stretch.as_mut())
        {
            s.further_reader = s.per_reader;
            s.further_measured = false;
        }
        assert!(!two_counts(&carried));
        let many = |c: &Cell| c.consumers.is_some_and(|n| n >= 2) && c.batch == 1;
        let judged = judge(&cal, None, run);
        let before = judge(&carried, None, run);
        for ((c, j), b) in run.cells.iter().zip(&judged).zip(&before) {
            if !many(c) || j.sync != JUDGED_SYNC {
                continue;
            }
            eprintln!(
                "{}: {} {:+.1} % (linear from the first reader: {:+.1} %)",
                run.date,
                j.name,
                j.error * 100.0,
                b.error * 100.0
            );
            within_targets(run, j);
            apart.push(j.error);
            linear.push(b.error);
        }
    }
    assert!(
        apart.len() >= 3,
        "cells with many readers on a two-count calibration: {apart:?}"
    );
    let abs = |v: &[f64]| median(v.iter().map(|e| e.abs()).collect());
    assert!(abs(&apart) <= MEDIAN_TARGET, "{apart:?}");
    let worst = |v: &[f64]| v.iter().map(|e| e.abs()).fold(0.0, f64::max);
    assert!(worst(&apart) < worst(&linear), "apart {apart:?} linear {linear:?}");
}
