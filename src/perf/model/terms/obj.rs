//! The object store's rows and fit: each calibration row's inputs, the least-squares terms and their
//! leave-one-out check. Moved out of terms.rs whole.

use super::*;

/// The object-put rows fit to use: measured `put_obj_per_s`, known sync mode, `fit: true`.
pub fn obj_rows(set: &CalibrationSet, fio: &FioRef) -> Vec<ObjRow> {
    let mut out = Vec::new();
    for (file, r) in set.rows_of(Kind::ObjPut) {
        if let Some(o) = obj_row(file, r, fio) {
            out.push(o);
        }
    }
    out
}

fn obj_row(file: &CalibrationFile, r: &Row, fio: &FioRef) -> Option<ObjRow> {
    if !r.fit || r.flags.iter().any(|f| f == "duplicate_label") {
        return None;
    }
    let raid = Raid::parse(r.raid.as_deref()?)?;
    let disks = file
        .hardware
        .get("disks_per_group")
        .and_then(|v| v.as_f64())
        .unwrap_or(2.0);
    let data_disks = match raid {
        Raid::Raid0 => disks,
        Raid::Raid6 => (disks - 2.0).max(1.0),
        _ => (disks / 2.0).max(1.0),
    };
    Some(ObjRow {
        label: format!(
            "{} {} {} {}w",
            r.label,
            r.sync.as_deref().unwrap_or("?"),
            r.size.as_deref().unwrap_or("?"),
            r.workers.unwrap_or(1)
        ),
        servers: r.servers.unwrap_or(1),
        replicas: r.replicas.unwrap_or(1),
        raid,
        always: r.sync_always()?,
        size_bytes: r.size_bytes()?,
        workers: r.workers.unwrap_or(1),
        consumers: r.consumers.unwrap_or(0),
        consumers_spread: r.consumers_placement.as_deref() == Some("spread"),
        put_obj_per_s: r.measured("put_obj_per_s")?,
        volume_write_s: if matches!(raid, Raid::Raid0) {
            fio.raid0_write_s
        } else {
            fio.raid1_write_s
        },
        data_disks,
    })
}

/// Seconds of one object put by one worker, split into the part workers overlap and the part they do not
/// (the fsync's byte transfer through one device queue).
pub(crate) fn obj_time(t: &ObjTerms, size: u64, replicas: u8, always: bool, lat_s: f64, data_disks: f64) -> (f64, f64) {
    let chunks = size.div_ceil(CHUNK_BYTES).max(1) as f64;
    let s = size as f64;
    // Chunks go out asynchronously and commit in one round; the metadata message is a second round.
    let rounds = 2.0;
    let mut par = t.obj_fixed_s + chunks * t.chunk_s + s * t.byte_s;
    if replicas > 1 {
        par += t.rep_round_s * rounds + t.rep_byte_s * (replicas as f64 - 1.0) * s;
    }
    let mut ser = 0.0;
    if always {
        let fs = if replicas > 1 { t.fsync_lat_rn } else { t.fsync_lat_r1 };
        par += fs * lat_s * rounds;
        ser = t.sync_byte_s * s / data_disks.max(1.0);
    }
    (par, ser)
}

/// Consumer slowdown factor on the busiest server.
pub(crate) fn consumer_factor(t: &ObjTerms, consumers: u32, servers: u32, spread: bool) -> f64 {
    let on_busiest = if spread {
        (consumers as f64 / servers.max(1) as f64).ceil()
    } else {
        consumers as f64
    };
    1.0 + t.consumer_gamma * on_busiest / REF_CONSUMERS
}

/// USL throughput of `workers` workers whose operation takes `par` (overlappable) + `ser` (serial) seconds.
pub(crate) fn usl(par: f64, ser: f64, workers: f64, sigma: f64) -> f64 {
    1.0 / (par * (1.0 + sigma * (workers - 1.0)) / workers + ser)
}

/// Predicted puts/s for a fit row (no hard ceilings: none bound in seed 000, per its author).
pub fn obj_row_rate(t: &ObjTerms, r: &ObjRow) -> f64 {
    let (par, ser) = obj_time(t, r.size_bytes, r.replicas, r.always, r.volume_write_s, r.data_disks);
    let f = consumer_factor(t, r.consumers, r.servers, r.consumers_spread);
    usl(par * f, ser, r.workers as f64, t.sigma)
}

/// Least squares on log rates (errors are multiplicative), parameters in log space (all positive).
pub fn fit_obj(rows: &[ObjRow], source: &str) -> ObjTerms {
    let loss = |p: &[f64]| -> f64 {
        let t = ObjTerms::from_vec(p, "");
        rows.iter()
            .map(|r| {
                let x = obj_row_rate(&t, r);
                if !x.is_finite() || x <= 0.0 {
                    1e6
                } else {
                    (x.ln() - r.put_obj_per_s.ln()).powi(2)
                }
            })
            .sum::<f64>()
            // A faint pull toward the starting point keeps terms the rows cannot separate from wandering.
            + 1e-4 * p.iter().zip(ObjTerms::start()).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
    };
    let (p, _) = minimise(&loss, &ObjTerms::start(), 0.7, 3000, 5);
    let mut t = ObjTerms::from_vec(&p, source);
    let ss: f64 = rows
        .iter()
        .map(|r| (obj_row_rate(&t, r).ln() - r.put_obj_per_s.ln()).powi(2))
        .sum();
    t.rms_log = (ss / rows.len() as f64).sqrt();
    t.rows = rows.len();
    t
}

/// One leave-one-out result: the row predicted by a fit to all the others, with that fit's band.
#[derive(Debug, Clone, Serialize)]
pub struct LooRow {
    pub label: String,
    pub predicted: f64,
    pub measured: f64,
    pub band: Band,
}

/// Leave-one-out: predict each row from a fit to all the others.
pub fn leave_one_out(rows: &[ObjRow]) -> Vec<LooRow> {
    (0..rows.len())
        .map(|i| {
            let rest: Vec<ObjRow> = rows
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, r)| r.clone())
                .collect();
            let t = fit_obj(&rest, "loo");
            let x = obj_row_rate(&t, &rows[i]);
            LooRow {
                label: rows[i].label.clone(),
                predicted: x,
                measured: rows[i].put_obj_per_s,
                band: band(x, t.band_log_width()),
            }
        })
        .collect()
}
