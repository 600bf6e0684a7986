//! How good the fit is: residuals of every row, cross-validation on the held-out points (predicted by a fit
//! that never saw them), each term's jackknife uncertainty over the measurement points, whether the points
//! can move a term at all (identification), the noise between repeats, and the knee of the rate sweep.
//!
//! The fit itself is perf's (`Calibration::from_set` on the built-in files plus the measured one, exactly as
//! `--calibration FILE` loads it), so what is reported here is what predictions will use.

use super::plan::Point;
use super::runner::{Measurement, JS_WINDOW};
use crate::catalog::Catalog;
use crate::layout::Raid;
use crate::perf::calibration::{CalibrationFile, CalibrationSet, FitQuality, Residual, TermFit};
use crate::perf::model::{obj_row_rate, ObjTerms};
use crate::perf::{predict_shape, Calibration, Kind, Prediction, Shape, SyncClass, Terms, VolumeSpec};
use crate::stats::median;

/// The model fitted from the built-in files plus `file` (its rows replace the built-in rows of its kinds).
pub fn fit(file: &CalibrationFile) -> anyhow::Result<Calibration> {
    Calibration::from_set(CalibrationSet::builtin().with_file(file.clone()))
}

/// Predict a point's shape as verify predicts its rows with no layout given: seed 000's RAID 1 volume
/// (the measured rows are keyed to it, see `write::REFERENCE_RAID`) and the catalog's default server.
pub fn predict_point(terms: &Terms, cat: &Catalog, p: &Point, servers: u32, sync: SyncClass) -> Prediction {
    // The measured file's own host when it priced the stream leader (its js rows replace the built-in
    // ones, so its class is the only one), else the catalog's default server.
    let server = match terms.leaders.as_slice() {
        [only] => only.server_model(),
        _ => cat
            .server(&cat.default_server)
            .cloned()
            .unwrap_or_else(|| cat.servers[0].clone()),
    };
    let shape = Shape {
        kind: p.kind,
        servers,
        replicas: p.replicas,
        sync,
        size_bytes: p.size_bytes,
        workers: p.workers,
        subscribers: p.subscribers,
        // The readers point: its publishers with consumers reading every message.
        consumers: p.readers.unwrap_or(0),
        consumers_spread: true,
        volume: VolumeSpec::seed000(cat, Raid::Raid1, 1),
        server,
        rate: p.rate_per_s,
        batch: match p.kind {
            Kind::Js if !p.sync_publish() => p.window.unwrap_or(JS_WINDOW as u32),
            // The asynchronous KV point: its puts in flight (a synchronous putter's residual otherwise).
            Kind::Kv => p.window.unwrap_or(1),
            _ => 1,
        },
        nats_version: None,
        subjects: p.subjects.map(u64::from),
    };
    let mut pr = predict_shape(terms, cat, &shape);
    if let Some(t) = p.rate_per_s {
        pr.ops_per_s = pr.ops_per_s.min(t);
    }
    pr
}

/// Every term the measured kinds feed, by name (NaN for get terms when no gets were measured).
pub fn term_values(t: &Terms) -> Vec<(&'static str, f64)> {
    let o = &t.obj;
    vec![
        ("obj.obj_fixed_s", o.obj_fixed_s),
        ("obj.chunk_s", o.chunk_s),
        ("obj.byte_s", o.byte_s),
        ("obj.rep_round_s", o.rep_round_s),
        ("obj.rep_byte_s", o.rep_byte_s),
        ("obj.fsync_lat_r1", o.fsync_lat_r1),
        ("obj.fsync_lat_rn", o.fsync_lat_rn),
        ("obj.sync_byte_s", o.sync_byte_s),
        ("obj.sigma", o.sigma),
        ("obj.consumer_gamma", o.consumer_gamma),
        ("js.op_s", t.js.op_s),
        ("js.leader_op_s", t.js.leader_op_s),
        ("js.leader_byte_s", t.js.leader_byte_s),
        ("core.per_msg_s", t.core.per_msg_s),
        ("core.per_sub_s", t.core.per_sub_s),
        ("core.per_byte_s", t.core.per_byte_s),
        ("core.client_max_per_s", t.core.client_max_per_s),
        ("core.ping_avg_s", t.core.ping_avg_s),
        ("core.flood_drain_per_s", t.core.flood_drain_per_s),
        (
            "get.obj_fixed_s",
            t.obj_get.as_ref().map_or(f64::NAN, |g| g.obj_fixed_s),
        ),
        ("get.chunk_s", t.obj_get.as_ref().map_or(f64::NAN, |g| g.chunk_s)),
        ("get.byte_s", t.obj_get.as_ref().map_or(f64::NAN, |g| g.byte_s)),
        (
            "get.sigma",
            t.obj_get.as_ref().and_then(|g| g.sigma).unwrap_or(f64::NAN),
        ),
    ]
}

/// Whether the object rows can move each object term: doubling it changes some row's predicted rate by
/// more than 1 %. A term no row feels (fsync terms without `always` rows, consumer slowdown without
/// consumers) keeps the fit's starting value and is reported as not identified.
pub fn obj_identified(t: &Terms) -> Vec<bool> {
    let base: Vec<f64> = t.obj_rows.iter().map(|r| obj_row_rate(&t.obj, r)).collect();
    (0..10)
        .map(|i| {
            let mut o: ObjTerms = t.obj.clone();
            let f = match i {
                0 => &mut o.obj_fixed_s,
                1 => &mut o.chunk_s,
                2 => &mut o.byte_s,
                3 => &mut o.rep_round_s,
                4 => &mut o.rep_byte_s,
                5 => &mut o.fsync_lat_r1,
                6 => &mut o.fsync_lat_rn,
                7 => &mut o.sync_byte_s,
                8 => &mut o.sigma,
                _ => &mut o.consumer_gamma,
            };
            *f = if i == 8 { (*f * 2.0).clamp(0.01, 1.0) } else { *f * 2.0 };
            t.obj_rows
                .iter()
                .zip(&base)
                .any(|(r, b)| (obj_row_rate(&o, r) / b - 1.0).abs() > 0.01)
        })
        .collect()
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

/// The file without the rows of the given points.
pub fn without(file: &CalibrationFile, point_ids: &[&str]) -> CalibrationFile {
    let mut f = file.clone();
    for s in &mut f.series {
        s.rows.retain(|r| {
            let id = r.label.split(" #").next().unwrap_or(&r.label);
            !point_ids.contains(&id)
        });
    }
    f.series.retain(|s| !s.rows.is_empty());
    f
}

/// Everything `FitQuality` reports, computed from the file, the points and the measurements.
pub fn assess(
    file: &CalibrationFile,
    points: &[Point],
    ms: &[Measurement],
    cat: &Catalog,
    servers: u32,
    sync: SyncClass,
) -> anyhow::Result<FitQuality> {
    let full = fit(file)?;
    let mut notes = Vec::new();
    let inp = Inputs {
        file,
        points,
        ms,
        cat,
        servers,
        sync,
    };
    let measured_pts: Vec<&Point> = points.iter().filter(|p| ms.iter().any(|m| m.point == p.id)).collect();
    let (residuals, held_errors) = residuals(&inp, &full, &measured_pts, &mut notes);
    let terms = term_fits(&inp, &full, &measured_pts, &mut notes);
    let mut spreads = repeat_spreads(&measured_pts, ms);
    let (sustained, failed) = knee(points, ms);
    let unidentified: Vec<&str> = terms
        .iter()
        .filter(|t| !t.identified)
        .map(|t| t.name.as_str())
        .collect();
    if !unidentified.is_empty() {
        notes.push(format!(
            "not identified: doubling these moves no row's prediction by 1 % (no point exercises them, or they fitted to about zero): {}",
            unidentified.join(", ")
        ));
    }
    Ok(FitQuality {
        terms,
        residuals,
        holdout_median_abs_error: median(&mut held_errors.clone()),
        holdout_worst_abs_error: held_errors.iter().copied().reduce(f64::max),
        repeat_spread_median: median(&mut spreads),
        knee_sustained_per_s: sustained.into_iter().reduce(f64::max),
        knee_failed_per_s: failed.into_iter().reduce(f64::min),
        notes,
    })
}

/// What [`assess`] reads: the file, its points and measurements, and the cluster they were measured on.
struct Inputs<'a> {
    file: &'a CalibrationFile,
    points: &'a [Point],
    ms: &'a [Measurement],
    cat: &'a Catalog,
    servers: u32,
    sync: SyncClass,
}

/// Each measured point's mean against the model's prediction (a held-out point's from a fit without it),
/// and the held-out points' absolute errors.
fn residuals(
    inp: &Inputs,
    full: &Calibration,
    measured_pts: &[&Point],
    notes: &mut Vec<String>,
) -> (Vec<Residual>, Vec<f64>) {
    let Inputs {
        file,
        ms,
        cat,
        servers,
        sync,
        ..
    } = *inp;
    let measured_mean = |p: &Point| -> Option<f64> {
        let xs: Vec<f64> = ms.iter().filter(|m| m.point == p.id).map(|m| m.ops_per_s).collect();
        (!xs.is_empty()).then(|| mean(&xs))
    };
    // Cross-validation: a fit without the held-out points predicts them.
    let held: Vec<&str> = measured_pts
        .iter()
        .filter(|p| p.holdout)
        .map(|p| p.id.as_str())
        .collect();
    // One fit per held-out point (a fit without all of them at once may lack the rows a kind needs).
    let mut cv: Vec<(String, Calibration)> = Vec::new();
    for id in &held {
        match fit(&without(file, &[id])) {
            Ok(c) => cv.push((id.to_string(), c)),
            Err(e) => notes.push(format!(
                "cross-validation of {id} skipped: the fit without it failed ({e:#})"
            )),
        }
    }
    let mut residuals = Vec::new();
    let mut held_errors = Vec::new();
    for p in measured_pts {
        let Some(m) = measured_mean(p) else { continue };
        let (terms, held_out) = match cv.iter().find(|(id, _)| *id == p.id) {
            Some((_, c)) => (&c.terms, true),
            None => (&full.terms, false),
        };
        let pred = predict_point(terms, cat, p, servers, sync).ops_per_s;
        if !(pred > 0.0 && pred.is_finite()) {
            continue;
        }
        let error = m / pred - 1.0;
        if held_out {
            held_errors.push(error.abs());
        }
        residuals.push(Residual {
            label: p.id.clone(),
            measured: m,
            predicted: pred,
            error,
            held_out,
        });
    }
    (residuals, held_errors)
}

/// Each fitted term with its uncertainty (a jackknife over the fitted points, or the repeats' standard
/// error for terms one kind of point fixes) and whether any point identifies it.
fn term_fits(inp: &Inputs, full: &Calibration, measured_pts: &[&Point], notes: &mut Vec<String>) -> Vec<TermFit> {
    let Inputs { file, points, ms, .. } = *inp;
    // Jackknife over the fitted points of the kinds with fitted terms (each point with all its repeats).
    let base = term_values(&full.terms);
    let jk_points: Vec<&str> = measured_pts
        .iter()
        // The readers point feeds no term of this list (its row kind is `js-readers`): left out, as it would
        // add a sample identical to the full fit.
        .filter(|p| p.rate_per_s.is_none() && p.readers.is_none())
        .filter(|p| matches!(p.kind, Kind::ObjPut | Kind::ObjGet | Kind::Js | Kind::Core))
        .map(|p| p.id.as_str())
        .collect();
    let mut samples: Vec<Vec<f64>> = Vec::new();
    let mut core_samples = 0;
    for id in &jk_points {
        if let Ok(c) = fit(&without(file, &[id])) {
            samples.push(term_values(&c.terms).iter().map(|(_, v)| *v).collect());
            if measured_pts.iter().any(|p| p.id == *id && p.kind == Kind::Core) {
                core_samples += 1;
            }
        }
    }
    let ident_obj = obj_identified(&full.terms);
    // Terms one kind of point fixes (KV putter, ping, flood) have no jackknife: their uncertainty is the
    // standard error of the mean over the point's repeats, carried through the term's formula.
    let sem = |kind: Kind, key: &str| -> Option<(f64, f64)> {
        let xs: Vec<f64> = ms
            .iter()
            // The putter term reads single-client R1 KV rows only (the R3 KV point prices replicated puts).
            .filter(|m| {
                points.iter().any(|p| {
                    p.id == m.point && p.kind == kind && !(kind == Kind::Kv && (p.replicas > 1 || p.workers > 1))
                })
            })
            .filter_map(|m| m.values.get(key).copied())
            .collect();
        if xs.len() < 2 {
            return None;
        }
        let m = mean(&xs);
        let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() as f64 - 1.0)).sqrt();
        Some((m, sd / (xs.len() as f64).sqrt()))
    };
    let from_repeats = |name: &str, value: f64| -> Option<Option<f64>> {
        match name {
            // op_s = 1 ÷ rate (less a constant): relative error of the rate.
            "js.op_s" => Some(sem(Kind::Kv, "ops_per_s").map(|(m, e)| value * e / m)),
            "core.ping_avg_s" => Some(sem(Kind::Ping, "rtt_avg_ms").map(|(_, e)| e / 1e3)),
            "core.flood_drain_per_s" => Some(sem(Kind::Flood, "drain_msgs_per_s").map(|(_, e)| e)),
            _ => None,
        }
    };
    let terms = base
        .iter()
        .enumerate()
        .filter(|(_, (_, value))| value.is_finite())
        .map(|(i, (name, value))| {
            let col: Vec<f64> = samples.iter().map(|s| s[i]).filter(|x| x.is_finite()).collect();
            let n = col.len() as f64;
            // Points whose removal leaves a kind unfittable give no sample; a term then has fewer samples.
            let se = if n >= 2.0 && !((13..=15).contains(&i) && core_samples < 2) {
                let m = mean(&col);
                Some(((n - 1.0) / n * col.iter().map(|x| (x - m).powi(2)).sum::<f64>()).sqrt())
            } else {
                None
            };
            let identified = if i < 10 { ident_obj[i] } else { true };
            let se = from_repeats(name, *value).unwrap_or(se);
            TermFit {
                name: name.to_string(),
                value: *value,
                uncertainty: se.filter(|x| x.is_finite()),
                identified,
            }
        })
        .collect::<Vec<_>>();
    if samples.len() < 2 {
        notes.push("too few points for a jackknife: uncertainties are unknown".into());
    }
    terms
}

/// Noise: the relative spread of the repeats of each measured point.
fn repeat_spreads(measured_pts: &[&Point], ms: &[Measurement]) -> Vec<f64> {
    measured_pts
        .iter()
        .filter_map(|p| {
            let xs: Vec<f64> = ms.iter().filter(|m| m.point == p.id).map(|m| m.ops_per_s).collect();
            if xs.len() < 2 {
                return None;
            }
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            Some((hi - lo) / mean(&xs).max(1e-12))
        })
        .collect()
}

/// The knee: the targets every repeat sustained and those some repeat could not.
fn knee(points: &[Point], ms: &[Measurement]) -> (Vec<f64>, Vec<f64>) {
    // The knee: the highest target every repeat sustained, the lowest some repeat could not.
    let mut sustained = Vec::new();
    let mut failed = Vec::new();
    for p in points.iter().filter(|p| p.rate_per_s.is_some()) {
        let runs: Vec<&Measurement> = ms.iter().filter(|m| m.point == p.id).collect();
        if runs.is_empty() {
            continue;
        }
        let t = p.rate_per_s.unwrap_or(0.0);
        if runs.iter().all(|m| m.values.get("sustained") == Some(&1.0)) {
            sustained.push(t);
        } else {
            failed.push(t);
        }
    }
    (sustained, failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::plan::all_points;
    use crate::calibrate::write::{self, Header, RowContext};
    use crate::perf::model::ObjRow;
    use std::collections::BTreeMap;

    /// Known terms the synthetic measurements are generated from.
    fn known_obj() -> ObjTerms {
        let mut t = Calibration::builtin().terms.obj.clone();
        t.obj_fixed_s = 2.0e-3;
        t.chunk_s = 0.3e-3;
        t.byte_s = 8.0e-9;
        t.rep_round_s = 0.4e-3;
        t.rep_byte_s = 3.0e-9;
        t.sigma = 0.2;
        t
    }
    fn known_get() -> crate::perf::model::GetTerms {
        crate::perf::model::GetTerms {
            obj_fixed_s: 0.3e-3,
            chunk_s: 0.15e-3,
            byte_s: 1.5e-9,
            sigma: Some(0.3),
            rms_log: 0.0,
            rows: 0,
            source: String::new(),
        }
    }
    const LEADER_A: f64 = 40e-6;
    const LEADER_B: f64 = 2e-9;
    const CORE: (f64, f64, f64) = (1.5e-6, 0.8e-6, 0.6e-9);

    /// One measurement per point (two repeats with ±1 % either side, so repeats exist but average out).
    fn synthetic(always: bool) -> (Vec<Point>, Vec<Measurement>) {
        let pts = all_points(3);
        let o = known_obj();
        let fio_r1 = Calibration::builtin().terms.fio.raid1_write_s;
        let mut ms = Vec::new();
        for p in &pts {
            let mut values = BTreeMap::new();
            let s = p.size_bytes as f64;
            let (key, x) = match (p.kind, p.rate_per_s) {
                (_, Some(t)) => {
                    let cap = 1.0 / (LEADER_A + LEADER_B * s);
                    values.insert("target_msgs_per_s".into(), t);
                    values.insert("sustained".into(), if t < cap { 1.0 } else { 0.0 });
                    ("achieved_msgs_per_s", t.min(cap))
                }
                (Kind::ObjPut, _) => {
                    let r = ObjRow {
                        label: p.id.clone(),
                        servers: 3,
                        replicas: p.replicas,
                        raid: Raid::Raid1,
                        always,
                        size_bytes: p.size_bytes,
                        workers: p.workers,
                        consumers: 0,
                        consumers_spread: false,
                        put_obj_per_s: 0.0,
                        volume_write_s: fio_r1,
                        data_disks: 1.0,
                    };
                    ("put_obj_per_s", obj_row_rate(&o, &r))
                }
                (Kind::ObjGet, _) => (
                    "get_obj_per_s",
                    crate::perf::model::get_rate(&known_get(), o.sigma, p.size_bytes, p.replicas, p.workers),
                ),
                // The readers points: the first reader stretches each publisher's round trip by 30 %, each
                // further one by 20 %.
                (Kind::Js, _) if p.readers.is_some() => (
                    "pub_msgs_per_s",
                    1.0 / (LEADER_A + LEADER_B * s) / (1.1 + 0.2 * f64::from(p.readers.unwrap_or(1))),
                ),
                (Kind::Js, _) => ("durable_pubs_per_s", 1.0 / (LEADER_A + LEADER_B * s)),
                (Kind::Kv, _) => ("ops_per_s", 2500.0),
                (Kind::Core, _) => {
                    let m = p.subscribers as f64;
                    let (a, b, c) = CORE;
                    if p.subscribers == 0 {
                        ("pub_msgs_per_s", 3e6)
                    } else {
                        ("aggregate_msgs_per_s", (1.0 + m) / (a + b * m + c * s * (1.0 + m)))
                    }
                }
                (Kind::Ping, _) => {
                    values.insert("rtt_p99_ms".into(), 0.3);
                    ("rtt_avg_ms", 0.1)
                }
                (Kind::Flood, _) => {
                    values.insert("drain_msgs_per_s".into(), 400_000.0);
                    ("delay_avg_ms", 20.0)
                }
                (Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered, _) => ("msgs_per_s", 100_000.0),
            };
            for (rep, f) in [(1, 1.01), (2, 1.0 / 1.01)] {
                let mut v = values.clone();
                v.insert(key.into(), x * f);
                ms.push(Measurement {
                    point: p.id.clone(),
                    repeat: rep,
                    msgs: 1000,
                    ops_per_s: x * f,
                    values: v,
                    warnings: vec![],
                });
            }
        }
        (pts, ms)
    }

    fn header() -> Header {
        let mut hardware = BTreeMap::new();
        for (k, v) in [("array", "none"), ("disk_kind", "unknown"), ("host", "test host")] {
            hardware.insert(k.to_string(), serde_norway::Value::String(v.into()));
        }
        let mut provenance = BTreeMap::new();
        provenance.insert("sync_observed".to_string(), serde_norway::Value::String("2m0s".into()));
        provenance.insert(
            "store_filesystem".to_string(),
            serde_norway::Value::String("ext4".into()),
        );
        provenance.insert("jetstream_servers".to_string(), serde_norway::Value::from(3u64));
        Header {
            id: "synthetic-lab".into(),
            title: "synthetic".into(),
            document: "test".into(),
            date: "2026-11-30".into(),
            nats_version: "2.15.1".into(),
            method: "generated from known terms".into(),
            hardware,
            conditions: BTreeMap::new(),
            provenance,
        }
    }

    fn rel(a: f64, b: f64) -> f64 {
        (a / b - 1.0).abs()
    }

    #[test]
    fn a_fit_on_synthetic_measurements_recovers_the_known_terms() {
        let (pts, ms) = synthetic(false);
        let ctx = RowContext {
            servers: 3,
            sync: "delayed".into(),
        };
        let file = write::build(&header(), &pts, &ms, &ctx);
        let c = fit(&file).unwrap();
        let o = &c.terms.obj;
        let k = known_obj();
        for (name, got, want, tol) in [
            ("obj_fixed_s", o.obj_fixed_s, k.obj_fixed_s, 0.1),
            ("chunk_s", o.chunk_s, k.chunk_s, 0.15),
            ("byte_s", o.byte_s, k.byte_s, 0.15),
            ("rep_round_s", o.rep_round_s, k.rep_round_s, 0.25),
            ("rep_byte_s", o.rep_byte_s, k.rep_byte_s, 0.25),
            ("sigma", o.sigma, k.sigma, 0.15),
        ] {
            assert!(rel(got, want) < tol, "{name}: fitted {got:e}, known {want:e}");
        }
        assert!(
            rel(c.terms.js.leader_op_s, LEADER_A) < 0.02,
            "{}",
            c.terms.js.leader_op_s
        );
        assert!(
            rel(c.terms.js.leader_byte_s, LEADER_B) < 0.05,
            "{}",
            c.terms.js.leader_byte_s
        );
        assert!(rel(c.terms.core.per_msg_s, CORE.0) < 0.05, "{}", c.terms.core.per_msg_s);
        assert!(rel(c.terms.core.per_sub_s, CORE.1) < 0.05, "{}", c.terms.core.per_sub_s);
        assert!(
            rel(c.terms.core.per_byte_s, CORE.2) < 0.05,
            "{}",
            c.terms.core.per_byte_s
        );
        assert_eq!(c.terms.core.flood_drain_per_s, 400_000.0);
        let g = c.terms.obj_get.as_ref().expect("get terms from the measured gets");
        let kg = known_get();
        assert!(rel(g.obj_fixed_s, kg.obj_fixed_s) < 0.15, "{}", g.obj_fixed_s);
        assert!(rel(g.chunk_s, kg.chunk_s) < 0.15, "{}", g.chunk_s);
        assert!(rel(g.byte_s, kg.byte_s) < 0.15, "{}", g.byte_s);
        assert!(rel(g.sigma.unwrap(), 0.3) < 0.15, "{:?}", g.sigma);
        assert!(rel(c.terms.js.op_s, 1.0 / 2500.0) < 0.02);
        // Delayed rows cannot move the fsync terms, and no row has consumers: reported as not identified.
        let id = obj_identified(&c.terms);
        assert!(id[0] && id[1] && id[2] && id[3] && id[4] && id[8], "{id:?}");
        assert!(!id[5] && !id[6] && !id[7] && !id[9], "{id:?}");
    }

    #[test]
    fn fit_quality_cross_validates_held_out_points_and_finds_the_knee() {
        let (pts, ms) = synthetic(false);
        let ctx = RowContext {
            servers: 3,
            sync: "delayed".into(),
        };
        let file = write::build(&header(), &pts, &ms, &ctx);
        let q = assess(&file, &pts, &ms, &Catalog::builtin(), 3, SyncClass::Delayed).unwrap();
        assert!(q.residuals.iter().any(|r| r.held_out));
        // Noise-free data from the model's own form: held-out points are predicted closely.
        let worst = q.holdout_worst_abs_error.unwrap();
        assert!(worst < 0.1, "worst held-out error {worst}");
        assert!((q.repeat_spread_median.unwrap() - 0.02).abs() < 1e-3);
        let cap = 1.0 / (LEADER_A + LEADER_B * 128.0);
        let (s, f) = (q.knee_sustained_per_s.unwrap(), q.knee_failed_per_s.unwrap());
        assert!(s < cap && cap < f, "{s} < {cap} < {f}");
        let t = q.terms.iter().find(|t| t.name == "obj.chunk_s").unwrap();
        assert!(t.identified && t.uncertainty.unwrap() < t.value, "{t:?}");
        assert!(
            !q.terms
                .iter()
                .find(|t| t.name == "obj.fsync_lat_rn")
                .unwrap()
                .identified
        );
    }

    /// Issue 37: the asynchronous KV point's residual is priced as asynchronous puts with its window in
    /// flight (the first files written with it priced it as one synchronous putter: +2,713 %).
    #[test]
    fn the_async_kv_points_residual_is_priced_with_its_window() {
        let cal = crate::perf::Calibration::builtin();
        let cat = Catalog::builtin();
        let pts = all_points(3);
        let at = |id: &str| {
            let p = pts.iter().find(|p| p.id == id).unwrap();
            predict_point(&cal.terms, &cat, p, 3, SyncClass::Delayed).ops_per_s
        };
        let (asynchronous, one) = (at("kvasync-r3-2p-512B"), at("kv-r3-1p-128B"));
        assert!(
            asynchronous > 10.0 * one,
            "async {asynchronous:.0}/s against one putter's {one:.0}/s"
        );
    }

    #[test]
    fn always_rows_identify_the_fsync_terms() {
        let (pts, ms) = synthetic(true);
        let ctx = RowContext {
            servers: 3,
            sync: "always".into(),
        };
        let c = fit(&write::build(&header(), &pts, &ms, &ctx)).unwrap();
        let id = obj_identified(&c.terms);
        assert!(id[5] && id[6] && id[7], "{id:?}");
    }

    #[test]
    fn a_written_file_round_trips_through_calibration_loading() {
        let (pts, ms) = synthetic(false);
        let ctx = RowContext {
            servers: 3,
            sync: "delayed".into(),
        };
        let mut file = write::build(&header(), &pts, &ms, &ctx);
        let q = assess(&file, &pts, &ms, &Catalog::builtin(), 3, SyncClass::Delayed).unwrap();
        file.fit_quality = Some(q.clone());
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("lab.yaml");
        write::check_writable(&out).unwrap();
        write::write_atomic(&out, &write::to_yaml(&file, "a test\nof two lines").unwrap()).unwrap();
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let back = CalibrationSet::from_path(&out).unwrap();
        assert_eq!(back.id, "synthetic-lab");
        assert_eq!(back.source.kind, "natsplan-calibrate");
        assert_eq!(back.fit_quality.as_ref(), Some(&q));
        assert_eq!(
            back.provenance.get("store_filesystem").and_then(|v| v.as_str()),
            Some("ext4")
        );
        assert_eq!(back.rows().count(), ms.len());
        // Repeats are separate rows, the sweep is kept out of the fit, the header comment is there.
        assert!(back.rows().any(|r| r.label.ends_with("#2")));
        assert!(back
            .rows()
            .filter(|r| r.mode.as_deref() == Some("fixed-rate"))
            .all(|r| !r.fit));
        assert!(std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("# a test\n# of two lines\n"));
        // And it loads as --calibration does: its rows replace the built-in rows of their kinds.
        let c = Calibration::with_file(&out).unwrap();
        assert!(c.set.rows_of(Kind::ObjPut).all(|(f, _)| f.id == "synthetic-lab"));
        assert!(c.terms.obj.source.contains("synthetic-lab"));
    }

    #[test]
    fn unwritable_outputs_are_refused_with_the_flag() {
        let e = write::check_writable(std::path::Path::new("/nonexistent-dir/x.yaml")).unwrap_err();
        assert!(
            e.to_string().contains("--out") && e.to_string().contains("does not exist"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = write::check_writable(dir.path()).unwrap_err();
        assert!(e.to_string().contains("folder"), "{e}");
    }
}
