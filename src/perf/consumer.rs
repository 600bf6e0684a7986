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
/// What a borrowed per-byte time adds to the band (log half-width), as a share of how far the slope moves the
/// price from the one size measured: an assumption (a group measured at one size takes its per-byte time
/// from the same file's group of another replica count, which measured two; the loopback lab read R1 and
/// R3 fetches within 8 % of each other at 128 B, 256 B and 1 KiB, 2026-12-07, 3 interleaved passes).
const BORROWED_SLOPE_WIDTH: f64 = 0.5;
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
    /// When the group measured one size only: that size, and the replica count of the same file's group
    /// whose per-byte time it borrowed (`byte_s`; only `msg_s` fitted to its own rows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slope_from: Option<BorrowedSlope>,
}

/// Where a one-size group's per-byte time came from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BorrowedSlope {
    /// The one payload size the group measured.
    pub size_bytes: f64,
    /// The replica count of the group (same file and mode) the per-byte time is taken from.
    pub replicas: u8,
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
        // Two parameters fitted to the rows, or one when the per-byte time was borrowed.
        let k = if self.slope_from.is_some() { 1 } else { 2 };
        if self.rows < k + 1 {
            return FEW_ROWS_WIDTH + WIDTH_PER_DISTANCE * distance;
        }
        let n = self.rows as f64;
        crate::perf::band::own_and_carried(
            &[1.645 * self.rms_log * (n / (n - k as f64)).sqrt(), FORM_WIDTH],
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
        // A group that measured one size has no per-byte time of its own (the fit kept it at 0): it takes
        // the one of the same file and mode measured at more than one size, nearest in replica count
        // (calibrate's R1 fetch point, beside the R{rb} points at two sizes), and fits only its per-message
        // time. The band says so (`BORROWED_SLOPE_WIDTH`).
        let sizes = |f: &ConsumerFit| {
            let mut s: Vec<u64> = all
                .iter()
                .filter(|r| r.file == f.source && r.mode == f.mode && r.replicas == f.replicas)
                .map(|r| r.size_bytes.to_bits())
                .collect();
            s.sort_unstable();
            s.dedup();
            s
        };
        let spans: Vec<Vec<u64>> = fits.iter().map(sizes).collect();
        for i in 0..fits.len() {
            if spans[i].len() != 1 {
                continue;
            }
            let donor = (0..fits.len())
                .filter(|&j| spans[j].len() > 1 && fits[j].byte_s > 0.0)
                .filter(|&j| fits[j].source == fits[i].source && fits[j].mode == fits[i].mode)
                .min_by_key(|&j| (fits[j].replicas as i32 - fits[i].replicas as i32).abs());
            if let Some(j) = donor {
                let (byte_s, from) = (fits[j].byte_s, fits[j].replicas);
                let g: Vec<&ConsumerRow> = all
                    .iter()
                    .filter(|r| r.file == fits[i].source && r.mode == fits[i].mode && r.replicas == fits[i].replicas)
                    .collect();
                let size = f64::from_bits(spans[i][0]);
                fits[i] = with_slope(
                    &g,
                    byte_s,
                    fits[i].clone(),
                    BorrowedSlope {
                        size_bytes: size,
                        replicas: from,
                    },
                );
            }
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
        slope_from: None,
    };
    let ss: f64 = g
        .iter()
        .map(|r| (fit.rate(r.size_bytes).ln() - r.msgs_per_s.ln()).powi(2))
        .sum();
    fit.rms_log = (ss / g.len().max(1) as f64).sqrt();
    fit
}

/// Refit a one-size group's per-message time with a per-byte time taken from another group: least squares
/// in relative terms (as `fit_law`) with `byte_s` fixed.
fn with_slope(g: &[&ConsumerRow], byte_s: f64, mut fit: ConsumerFit, from: BorrowedSlope) -> ConsumerFit {
    let (mut num, mut den) = (0.0, 0.0);
    for r in g {
        let x = r.msgs_per_s;
        num += x * (1.0 - byte_s * r.size_bytes * x);
        den += x * x;
    }
    let msg_s = num / den;
    if msg_s.is_nan() || msg_s <= 0.0 {
        // The borrowed slope alone would price the measured size slower than measured: keep the group's own
        // per-message fit.
        return fit;
    }
    fit.msg_s = msg_s;
    fit.byte_s = byte_s;
    fit.slope_from = Some(from);
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
    if let Some(b) = fit.slope_from {
        let moved = ((fit.msg_s + fit.byte_s * s) / (fit.msg_s + fit.byte_s * b.size_bytes.max(1.0)))
            .ln()
            .abs();
        if moved > 0.0 {
            width += BORROWED_SLOPE_WIDTH * moved;
            notes.push(format!(
                "R{} consumer reads were calibrated at {:.0} B only: the time per payload byte is the R{} rows' (an assumption), band widened",
                fit.replicas, b.size_bytes, b.replicas
            ));
        }
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

    /// Issue 37 (2026-12-07): a group measured at one size (calibrate's R1 fetch) takes its per-byte time
    /// from the same file's group measured at two, fits its own per-message time, and an R1 shape is priced
    /// from it (not from the R3 rows with the other-replicas allowance); the band grows with the distance
    /// from the size it measured.
    #[test]
    fn a_one_size_group_borrows_the_per_byte_time_and_prices_its_own_replica_count() {
        let law = |msg_s: f64, byte_s: f64, s: f64| 1.0 / (msg_s + byte_s * s);
        let mut all: Vec<ConsumerRow> = [256.0, 256.0, 12288.0, 12288.0]
            .iter()
            .map(|&s| row(Kind::ConsumerFetch, s, law(8e-6, 2e-9, s)))
            .collect();
        // Two R3 rows at each size, a little apart (a residual spread), and three R1 rows at 256 B.
        all[0].msgs_per_s *= 1.02;
        all[2].msgs_per_s *= 0.98;
        for k in [0.99, 1.0, 1.01] {
            let mut r = row(Kind::ConsumerFetch, 256.0, law(9e-6, 2e-9, 256.0) * k);
            r.replicas = 1;
            all.push(r);
        }
        let g3: Vec<&ConsumerRow> = all.iter().filter(|r| r.replicas == 3).collect();
        let r3 = fit_group(&g3, Kind::ConsumerFetch, 3, "t", host());
        let g1: Vec<&ConsumerRow> = all.iter().filter(|r| r.replicas == 1).collect();
        let own = fit_group(&g1, Kind::ConsumerFetch, 1, "t", host());
        assert_eq!(own.byte_s, 0.0, "one size alone has no per-byte time");
        let r1 = with_slope(
            &g1,
            r3.byte_s,
            own,
            BorrowedSlope {
                size_bytes: 256.0,
                replicas: 3,
            },
        );
        assert!((r1.byte_s - r3.byte_s).abs() < 1e-18);
        assert!((r1.msg_s - 9e-6).abs() < 0.02e-6, "{r1:?}");
        // Residuals with one parameter: n ÷ (n - 1), not FEW_ROWS_WIDTH.
        assert!(r1.width_at(0.0) < FEW_ROWS_WIDTH, "{}", r1.width_at(0.0));
        let terms = ConsumerTerms { fits: vec![r3, r1] };
        let catalog = Catalog::builtin();
        let lab = leader::LeaderClass::for_tests("t", &host(), 1e-5, 0.0, 3).server_model();
        let shape = |replicas: u8, size: u64| Shape {
            kind: Kind::ConsumerFetch,
            servers: 3,
            replicas,
            sync: SyncClass::Delayed,
            size_bytes: size,
            workers: 1,
            subscribers: 0,
            consumers: 0,
            consumers_spread: false,
            volume: crate::perf::model::VolumeSpec::seed000(&catalog, crate::layout::Raid::Raid1, 1),
            server: lab.clone(),
            rate: None,
            batch: 1,
            nats_version: None,
            subjects: None,
        };
        let at = |replicas: u8, size: u64| predict(&terms, &shape(replicas, size));
        let p = at(1, 256);
        assert!(
            (p.ops_per_s - law(9e-6, 2e-9, 256.0)).abs() / p.ops_per_s < 0.01,
            "{p:?}"
        );
        assert!(p.source.contains("fetch R1"), "{}", p.source);
        assert!(!p.notes.iter().any(|n| n.contains("not calibrated")), "{:?}", p.notes);
        // Away from 256 B the borrowed slope widens the band and says so.
        let far = at(1, 16384);
        let w = |p: &Prediction| (p.band.high / p.band.low).ln();
        assert!(w(&far) > w(&p), "{} vs {}", w(&far), w(&p));
        assert!(
            far.notes.iter().any(|n| n.contains("per payload byte")),
            "{:?}",
            far.notes
        );
        // R3 shapes keep the R3 fit.
        assert!(at(3, 1024).source.contains("fetch R3"));
    }

    /// A calibration file of consumer fetch rows (`(replicas, size, rate)`), for the group fit's tests.
    fn fetch_file(id: &str, rows: &[(u8, &str, f64)]) -> crate::perf::calibration::CalibrationFile {
        let rows: String = rows
            .iter()
            .enumerate()
            .map(|(i, (r, size, rate))| format!(
                "      - {{ label: \"fetch {i}\", kind: consumer, servers: 3, replicas: {r}, sync: delayed, size: {size}, workers: 1, storage: file, mode: fetch, msgs: 1000, values: {{ msgs_per_s: {rate} }}, fit: true }}\n"
            ))
            .collect();
        let text = format!(
            "schema: natsplan-calibration/1\nid: {id}\ntitle: test\nsource:\n  document: test\n  kind: natsplan-calibrate\n  date: \"2026-12-07\"\nnats_version: \"2.15.1\"\nmethod: test\nhardware:\n  array: none\n  disk_kind: unknown\n  host: unknown\n  server_model: fetch-box\n  cores: 2\nconditions: {{}}\nseries:\n  - name: consumer\n    table: test\n    rows:\n{rows}"
        );
        crate::perf::calibration::CalibrationFile::parse(&text, &format!("{id}.yaml")).unwrap()
    }

    /// The group fit borrows a one-size group's per-byte time from the same file and mode only, from a
    /// group that measured more than one size and a per-byte time above zero.
    #[test]
    fn only_a_group_of_the_same_file_with_two_sizes_lends_its_per_byte_time() {
        let cat = Catalog::builtin();
        let a = fetch_file(
            "a",
            &[
                (3, "256B", 120_000.0),
                (3, "256B", 124_000.0),
                (3, "12KiB", 40_000.0),
                (3, "12KiB", 39_000.0),
                (1, "256B", 118_000.0),
                (1, "256B", 121_000.0),
                (1, "256B", 119_000.0),
            ],
        );
        // File b measured R1 at one size and nothing else; file c's R3 rows get faster with size (a
        // per-byte time of 0): neither lends anything.
        let b = fetch_file("b", &[(1, "256B", 90_000.0), (1, "256B", 91_000.0)]);
        let c = fetch_file(
            "c",
            &[
                (3, "256B", 50_000.0),
                (3, "12KiB", 60_000.0),
                (1, "256B", 70_000.0),
                (1, "256B", 71_000.0),
            ],
        );
        let terms = ConsumerTerms::fit(&CalibrationSet { files: vec![a, b, c] }, &cat);
        let get = |file: &str, r: u8| {
            terms
                .fits
                .iter()
                .find(|f| f.source == file && f.replicas == r)
                .unwrap_or_else(|| panic!("{file} R{r}"))
        };
        let (a1, a3) = (get("a", 1), get("a", 3));
        let s = a1.slope_from.expect("a's R1 borrows from a's R3");
        assert_eq!((s.replicas, s.size_bytes), (3, 256.0));
        assert!(a3.byte_s > 0.0 && a1.byte_s == a3.byte_s, "{a1:?} {a3:?}");
        // Its per-message time fits its own rows: 256 B at about 119k/s.
        assert!((a1.rate(256.0) / 119_300.0 - 1.0).abs() < 0.01, "{}", a1.rate(256.0));
        for (file, r) in [("b", 1), ("c", 1), ("a", 3), ("c", 3)] {
            assert!(get(file, r).slope_from.is_none(), "{file} R{r}");
        }
        assert_eq!(get("c", 1).byte_s, 0.0);
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
