//! Consumer reads: how fast one client reads a stream through a durable pull consumer (fetch batches or a
//! continuous `consume`, every message acked) or an ordered consumer (no acks), as `natsplan bench consumer
//! fetch|consume|ordered` measures it.
//!
//! The law is one client's time per message, `msg_s + byte_s × size`, fitted per read mode and replica
//! count from calibration rows of kind `consumer` (`mode: fetch|consume|ordered`, `values.msgs_per_s`),
//! weighted so every row counts by its relative error. Each file's rows are their own host class (the
//! file's `hardware.server_model`, as perf::leader reads it); a prediction for another host scales the
//! rate by CPU speed and by the share of a core each process gets (an assumption, said in the notes, with
//! a wider band). What no row measured — a replica count, `sync_interval: always` with acks, more than
//! one client — is priced from the nearest measured case with the band widened and a note.

use super::calibration::CalibrationSet;
use super::leader::{self, HostClass};
use super::model::{band, cpu_cores, Band, Kind, Latency, Prediction, Shape, SyncClass};
use crate::catalog::Catalog;
use serde::Serialize;

/// The calibration row kind these terms fit.
pub const ROW_KIND: &str = "consumer";
/// Half-width (log units) every consumer prediction carries for the law's form, on top of the fit's
/// residuals: an assumption (as perf::leader's `FORM_WIDTH`).
const FORM_WIDTH: f64 = 0.1;
/// Half-width when a (mode, replicas) group has too few rows for a residual spread: an assumption.
const FEW_ROWS_WIDTH: f64 = 0.5;
/// Extra half-width per unit of host distance: an assumption (as perf::leader's).
const WIDTH_PER_DISTANCE: f64 = 0.25;
/// Extra half-width for a replica count no row measured: an assumption.
const OTHER_REPLICAS_WIDTH: f64 = 0.3;
/// Extra half-width for acked reads under `sync_interval: always` (no row measured them; the consumer's
/// ack state is written to its store): an assumption.
const ALWAYS_ACK_WIDTH: f64 = 0.5;

/// One measured consumer read.
#[derive(Debug, Clone, Serialize)]
pub struct ConsumerRow {
    pub label: String,
    pub mode: Kind,
    pub replicas: u8,
    pub size_bytes: f64,
    pub msgs_per_s: f64,
    /// The calibration file (id).
    pub file: String,
}

/// One (file, mode, replicas) group's fitted law.
#[derive(Debug, Clone, Serialize)]
pub struct ConsumerFit {
    pub mode: Kind,
    pub replicas: u8,
    /// One client's seconds per message and per payload byte on the file's host.
    pub msg_s: f64,
    pub byte_s: f64,
    /// Root-mean-square of log(fitted ÷ measured) over the group's rows, and how many rows.
    pub rms_log: f64,
    pub rows: usize,
    pub source: String,
    pub host: HostClass,
}

impl ConsumerFit {
    /// One client's messages/s at `size` bytes on the file's host.
    pub fn rate(&self, size: f64) -> f64 {
        1.0 / (self.msg_s + self.byte_s * size.max(1.0))
    }

    /// Half-width (log units) at `distance` from the fit's host: its residuals (a 90 % interval) and the
    /// form, in quadrature on the fit's own host and summed with the distance's allowance elsewhere
    /// (`band::own_and_carried`); with fewer than three rows, `FEW_ROWS_WIDTH` and the distance.
    fn width_at(&self, distance: f64) -> f64 {
        if self.rows < 3 {
            return FEW_ROWS_WIDTH + WIDTH_PER_DISTANCE * distance;
        }
        let n = self.rows as f64;
        crate::perf::band::own_and_carried(
            &[1.645 * self.rms_log * (n / (n - 2.0)).sqrt(), FORM_WIDTH],
            WIDTH_PER_DISTANCE * distance,
        )
    }
}

/// Every group's law; empty when no calibration has consumer rows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConsumerTerms {
    pub fits: Vec<ConsumerFit>,
}

/// The read mode a row's `mode` names.
pub fn mode_kind(mode: &str) -> Option<Kind> {
    match mode.trim().to_ascii_lowercase().as_str() {
        "fetch" => Some(Kind::ConsumerFetch),
        "consume" => Some(Kind::ConsumerConsume),
        "ordered" => Some(Kind::ConsumerOrdered),
        _ => None,
    }
}

/// A consumer kind's read mode as rows name it (`fetch`, `consume`, `ordered`); None for other kinds.
pub fn mode_name(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::ConsumerFetch => Some("fetch"),
        Kind::ConsumerConsume => Some("consume"),
        Kind::ConsumerOrdered => Some("ordered"),
        _ => None,
    }
}

/// The fittable consumer rows of a set (`fit: true`, one client, a known mode, size and rate).
pub fn rows(set: &CalibrationSet) -> Vec<ConsumerRow> {
    set.rows_named(ROW_KIND)
        .filter(|(_, r)| r.fit && r.workers.unwrap_or(1) == 1)
        .filter_map(|(f, r)| {
            Some(ConsumerRow {
                label: r.label.clone(),
                mode: mode_kind(r.mode.as_deref()?)?,
                replicas: r.replicas.unwrap_or(1),
                size_bytes: r.size_bytes()? as f64,
                msgs_per_s: r.measured("msgs_per_s").filter(|x| *x > 0.0)?,
                file: f.id.clone(),
            })
        })
        .collect()
}

/// Least squares of `msg_s + byte_s × size` against each row's 1 ÷ rate, in relative terms; `byte_s` is
/// kept ≥ 0 (a read never gets faster with bigger messages).
fn fit_law(rows: &[&ConsumerRow]) -> (f64, f64) {
    let (mut a00, mut a01, mut a11, mut y0, mut y1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for r in rows {
        let (x, s) = (r.msgs_per_s, r.size_bytes);
        a00 += x * x;
        a01 += s * x * x;
        a11 += s * s * x * x;
        y0 += x;
        y1 += s * x;
    }
    let det = a00 * a11 - a01 * a01;
    if det.abs() > 1e-12 * a00 * a11 {
        let msg_s = (y0 * a11 - y1 * a01) / det;
        let byte_s = (a00 * y1 - a01 * y0) / det;
        if msg_s > 0.0 && byte_s >= 0.0 {
            return (msg_s, byte_s);
        }
    }
    (y0 / a00, 0.0)
}

impl ConsumerTerms {
    /// Fit every (file, mode, replicas) group of the set's consumer rows.
    pub fn fit(set: &CalibrationSet, catalog: &Catalog) -> ConsumerTerms {
        let all = rows(set);
        let mut fits = Vec::new();
        let mut groups: Vec<(String, Kind, u8)> = all.iter().map(|r| (r.file.clone(), r.mode, r.replicas)).collect();
        groups.sort_by(|a, b| (&a.0, a.1.as_str(), a.2).cmp(&(&b.0, b.1.as_str(), b.2)));
        groups.dedup();
        for (file, mode, replicas) in groups {
            let Some(f) = set.file(&file) else { continue };
            let host = leader::host_of(f, catalog).0;
            let g: Vec<&ConsumerRow> = all
                .iter()
                .filter(|r| r.file == file && r.mode == mode && r.replicas == replicas)
                .collect();
            fits.push(fit_group(&g, mode, replicas, &file, host));
        }
        ConsumerTerms { fits }
    }

    /// The fit for `mode` nearest the shape: its own replica count first (else the nearest, R>1 before R1
    /// for a replicated shape), then the nearest host.
    fn nearest(&self, mode: Kind, r: u8, host: &HostClass) -> Option<(&ConsumerFit, f64)> {
        self.fits
            .iter()
            .filter(|f| f.mode == mode)
            .map(|f| (f, host_distance(&f.host, host)))
            .min_by(|a, b| {
                let key = |f: &ConsumerFit| ((f.replicas > 1) != (r > 1), (f.replicas as i32 - r as i32).abs());
                key(a.0).cmp(&key(b.0)).then(a.1.total_cmp(&b.1))
            })
    }
}

/// Fit one group's law from its rows (public for the held-out test).
pub fn fit_group(g: &[&ConsumerRow], mode: Kind, replicas: u8, file: &str, host: HostClass) -> ConsumerFit {
    let (msg_s, byte_s) = fit_law(g);
    let mut fit = ConsumerFit {
        mode,
        replicas,
        msg_s,
        byte_s,
        rms_log: 0.0,
        rows: g.len(),
        source: file.to_string(),
        host,
    };
    let ss: f64 = g
        .iter()
        .map(|r| (fit.rate(r.size_bytes).ln() - r.msgs_per_s.ln()).powi(2))
        .sum();
    fit.rms_log = (ss / g.len().max(1) as f64).sqrt();
    fit
}

/// Share of a core one process gets on a host: its cores over the processes sharing it, at most one.
fn core_share(h: &HostClass) -> f64 {
    (h.cores / h.co_located.max(1) as f64).min(1.0)
}

/// How much faster a host reads than the calibrated one: CPU speed × share of a core per process
/// (an assumption: a consumer's delivery is one server goroutine and one client task).
fn host_factor(cal: &HostClass, to: &HostClass) -> f64 {
    if to.server_model.eq_ignore_ascii_case(&cal.server_model) {
        return 1.0;
    }
    (to.cpu_speed / cal.cpu_speed) * (core_share(to) / core_share(cal))
}

fn host_distance(cal: &HostClass, to: &HostClass) -> f64 {
    if to.server_model.eq_ignore_ascii_case(&cal.server_model) {
        return 0.0;
    }
    let shared = if (to.co_located > 1) != (cal.co_located > 1) {
        0.3
    } else {
        0.0
    };
    0.1 + host_factor(cal, to).ln().abs() + shared
}

/// Predict one consumer-read shape (`sh.kind` a consumer kind; `workers` clients, `size_bytes` messages,
/// `replicas` of the stream and its durable consumer).
pub fn predict(terms: &ConsumerTerms, sh: &Shape) -> Prediction {
    let host = HostClass::of(&sh.server);
    let r = sh.replicas.clamp(1, 5);
    let s = sh.size_bytes.max(1) as f64;
    let mut notes = Vec::new();
    let Some((fit, distance)) = terms.nearest(sh.kind, r, &host) else {
        return Prediction {
            kind: sh.kind,
            ops_per_s: 0.0,
            bytes_per_s: 0.0,
            latency_us: Latency {
                p50: f64::INFINITY,
                p99: f64::INFINITY,
            },
            cpu_per_server: 0.0,
            bottleneck: "no consumer calibration".into(),
            band: Band { low: 0.0, high: 0.0 },
            source: "none".into(),
            scaled: true,
            calibration: String::new(),
            extrapolation_distance: f64::INFINITY,
            stream: None,
            subjects: None,
            notes: vec![format!(
                "no calibration has {} rows: run scripts/bench-consumers and pass the file with --calibration",
                sh.kind.as_str()
            )],
        };
    };
    let mut width = fit.width_at(distance);
    let mut scaled = distance > 0.0;
    let factor = host_factor(&fit.host, &host);
    if distance > 0.0 {
        notes.push(format!(
            "consumer read priced from {} (host {}: {} cores, speed {:.2}, {} sharing) and scaled ×{factor:.2} to {} by CPU speed and core share per process (an assumption): distance {distance:.2}",
            fit.source, fit.host.server_model, fit.host.cores, fit.host.cpu_speed, fit.host.co_located, host.server_model
        ));
    }
    if fit.replicas != r {
        scaled = true;
        width += OTHER_REPLICAS_WIDTH;
        notes.push(format!(
            "R{r} consumer reads are not calibrated: priced from R{} rows",
            fit.replicas
        ));
    }
    let acked = sh.kind != Kind::ConsumerOrdered;
    if acked && sh.sync == SyncClass::Always {
        scaled = true;
        width += ALWAYS_ACK_WIDTH;
        notes.push("sync always: acked consumer reads were calibrated under delayed sync only".into());
    }
    let one = fit.rate(s) * factor;
    let w = sh.workers.max(1) as f64;
    let mut b = band(one, width);
    if w > 1.0 {
        scaled = true;
        // Each client has its own consumer; no row measured more than one: priced as one client's rate,
        // the band reaching up to perfect scaling.
        b.high = one * w * width.exp();
        notes.push(format!(
            "{w:.0} clients: only one client was calibrated; priced as one client's rate, the band reaching {w:.0}× for perfect scaling"
        ));
    }
    let op_rate = sh.rate.unwrap_or(one);
    // Work per message at the consumer's leader: a delivery and, when acked, an ack (one unit), half of it
    // without acks. An assumption: a verify run on the lab read 25-35 % of a core on the busiest server
    // at 43-80k msgs/s (fetch, R3, 512 B-1 KiB), within 2x of one unit; the publish law's units (a
    // replicated append per message) read 5-7 cores there.
    let units = if acked { 1.0 } else { 0.5 };
    Prediction {
        kind: sh.kind,
        ops_per_s: one,
        bytes_per_s: one * s,
        latency_us: Latency {
            p50: 1e6 / one,
            p99: 1e6 / one * super::model::TAIL_P99_OVER_AVG,
        },
        cpu_per_server: cpu_cores(op_rate, s, units),
        bottleneck: if acked {
            "consumer delivery and acks (one client)".into()
        } else {
            "ordered delivery (one client, flow control)".into()
        },
        band: b,
        source: format!(
            "{} ({} R{}, {} rows)",
            fit.source,
            fit.mode.as_str(),
            fit.replicas,
            fit.rows
        ),
        scaled,
        calibration: fit.source.clone(),
        extrapolation_distance: distance,
        stream: None,
        subjects: None,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(mode: Kind, size: f64, rate: f64) -> ConsumerRow {
        ConsumerRow {
            label: format!("{size}"),
            mode,
            replicas: 3,
            size_bytes: size,
            msgs_per_s: rate,
            file: "t".into(),
        }
    }

    fn host() -> HostClass {
        HostClass {
            server_model: "lab".into(),
            cores: 2.0,
            cpu_speed: 1.0,
            co_located: 4,
        }
    }

    #[test]
    fn the_law_reproduces_rows_it_was_fitted_to_and_never_speeds_up_with_size() {
        // 10 µs per message and 1 ns per byte.
        let rows: Vec<ConsumerRow> = [128.0, 1024.0, 8192.0]
            .iter()
            .map(|&s| row(Kind::ConsumerFetch, s, 1.0 / (10e-6 + 1e-9 * s)))
            .collect();
        let refs: Vec<&ConsumerRow> = rows.iter().collect();
        let f = fit_group(&refs, Kind::ConsumerFetch, 3, "t", host());
        assert!(
            (f.msg_s - 10e-6).abs() < 1e-9 && (f.byte_s - 1e-9).abs() < 1e-12,
            "{f:?}"
        );
        assert!(f.rms_log < 1e-9);
        // Rows that get faster with size would need a negative per-byte time: refused, kept at 0.
        let odd = [
            row(Kind::ConsumerFetch, 128.0, 1000.0),
            row(Kind::ConsumerFetch, 8192.0, 2000.0),
        ];
        let refs: Vec<&ConsumerRow> = odd.iter().collect();
        let f = fit_group(&refs, Kind::ConsumerFetch, 3, "t", host());
        assert_eq!(f.byte_s, 0.0);
        assert!(f.msg_s > 0.0);
        assert_eq!(f.width_at(0.0), FEW_ROWS_WIDTH);
    }

    #[test]
    fn other_hosts_scale_by_speed_and_core_share_and_the_own_host_is_distance_zero() {
        let lab = host();
        assert_eq!(host_factor(&lab, &lab), 1.0);
        assert_eq!(host_distance(&lab, &lab), 0.0);
        let big = HostClass {
            server_model: "big".into(),
            cores: 16.0,
            cpu_speed: 1.5,
            co_located: 1,
        };
        // 1.5× the speed and a whole core per process instead of half of one.
        assert!((host_factor(&lab, &big) - 3.0).abs() < 1e-12);
        assert!(host_distance(&lab, &big) > 1.0);
    }
}
