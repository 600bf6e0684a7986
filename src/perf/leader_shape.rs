//! A leader class's per-message work by message size where a straight per-byte line prices its rows worse
//! than the chords between them (issue 37): a piecewise line through the rows' medians at each measured
//! size, with a band from the class's own leave-one-out interpolation error.
//!
//! Why: under `sync_interval: always` the work per message holds the append entries' fsyncs shared among
//! the messages of each entry (raft.go `runAsLeader` batches up to 256 KiB), and the rows are not a line
//! in size. The prediction matrix's `always` calibrations (R3, loopback, 2 publishers × 500 in flight, 3 at
//! 2 KiB) measured 22, 28, 50, 86, 147 µs per message at 64 B, 512 B, 2 KiB, 4 KiB, 16 KiB (run 12): in
//! every `always` file the chord of its neighbours prices the 4 KiB rows 17–48 % low (the rows sit 21–91 %
//! above it), and a line through them made the `always` async bands 2.4–5.0× (runs 6–16).
//!
//! Which form, by a second method: each interior size left out in turn and priced from the rest, by the
//! chord of its neighbours and by the line refitted without it; the smaller rms of log error (in the
//! class's work per message) wins. On the `always` files the chord won in six of seven (runs 6, 7, 8, 12,
//! 16, 17: 0.17–0.24 against the line's 0.26–0.42); run 11, whose repeats spread 1.2–2.1×, kept the line.
//! Classes fitted to delayed rows keep the line by choice (`fit_class`): the mechanism is `always`'s, and
//! on the delayed files the two forms come within a few hundredths of each other either way.
//!
//! The band: the repeats' scatter about their size's median, and the chord's leave-one-out error per unit
//! of log-distance from the nearest measured size, carried at the target's own distance (zero at a
//! measured size, growing between and beyond them).

use serde::Serialize;

/// Fewer measured sizes leave no interior size to cross-validate the interpolation with.
const MIN_SIZES: usize = 4;

/// z of a two-sided 90 % interval (every band part in perf is a 90 % half-width).
const Z90: f64 = 1.645;

/// Per-message work between measured sizes (reference-core seconds), and what its band carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeShape {
    /// (size in bytes, median work per message) at each measured size, ascending.
    pub knots: Vec<(f64, f64)>,
    /// Rms of log(row ÷ its size's median), one degree of freedom spent per size.
    pub repeats_rms_log: f64,
    /// Rms, per unit of ln(size), of the leave-one-out error of the interior sizes.
    pub loo_rms_per_ln: f64,
    /// Rms of log error of the interior sizes left out in turn: priced by their neighbours' chord, and by
    /// the line refitted without them (the form the shape replaced: it lost).
    pub chord_loo_rms_log: f64,
    pub line_loo_rms_log: f64,
}

impl SizeShape {
    /// The shape of `pts` (size, work per message) when it prices the class's own rows better than the
    /// line `line` fits (least squares on the given points): each interior measured size left out in turn
    /// and priced from the rest — by the chord of its neighbours, and by the line refitted without it —
    /// the form with the smaller rms of log error wins. None (at least `MIN_SIZES` distinct sizes needed)
    /// keeps the line.
    pub fn fit(pts: &[(f64, f64)], line: impl Fn(&[(f64, f64)]) -> (f64, f64)) -> Option<SizeShape> {
        // Whole sizes of a byte or more and positive finite work, or no shape: a bad row would count in the
        // degrees of freedom and in the line refitted without a size.
        if pts
            .iter()
            .any(|p| !(p.0 >= 1.0 && p.0.is_finite() && p.1 > 0.0 && p.1.is_finite()))
        {
            return None;
        }
        let mut sizes: Vec<f64> = pts.iter().map(|p| p.0).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        // Repeats are needed too: without them nothing measures the rows' scatter (the band at a size).
        if sizes.len() < MIN_SIZES || pts.len() <= sizes.len() {
            return None;
        }
        let knots: Vec<(f64, f64)> = sizes
            .iter()
            .map(|&s| {
                let at: Vec<f64> = pts.iter().filter(|p| p.0 == s).map(|p| p.1).collect();
                (s, crate::stats::median_or_zero(at))
            })
            .collect();
        let ss: f64 = pts
            .iter()
            .map(|(s, u)| {
                let m = knots.iter().find(|k| k.0 == *s).map_or(*u, |k| k.1);
                (u / m).ln().powi(2)
            })
            .sum();
        let dof = pts.len().saturating_sub(knots.len()).max(1) as f64;
        let repeats_rms_log = (ss / dof).sqrt();
        let interior = 1..knots.len() - 1;
        let chord: Vec<(f64, f64)> = interior
            .clone()
            .map(|i| {
                let (lo, at, hi) = (knots[i - 1], knots[i], knots[i + 1]);
                ((between(lo, hi, at.0) / at.1).ln(), log_distance(at.0, &[lo.0, hi.0]))
            })
            .collect();
        let line_loo: Vec<f64> = interior
            .map(|i| {
                let at = knots[i];
                let rest: Vec<(f64, f64)> = pts.iter().copied().filter(|p| p.0 != at.0).collect();
                let (a, b) = line(&rest);
                ((a + b * at.0) / at.1).ln()
            })
            .collect();
        let rms = |v: &mut dyn Iterator<Item = f64>, n: usize| (v.map(|e| e * e).sum::<f64>() / n as f64).sqrt();
        let n = chord.len();
        let chord_loo_rms_log = rms(&mut chord.iter().map(|c| c.0), n);
        let line_loo_rms_log = rms(&mut line_loo.iter().copied(), n);
        if chord_loo_rms_log >= line_loo_rms_log {
            return None;
        }
        Some(SizeShape {
            knots,
            repeats_rms_log,
            loo_rms_per_ln: rms(&mut chord.iter().map(|c| c.0 / c.1), n),
            chord_loo_rms_log,
            line_loo_rms_log,
        })
    }

    /// Work per message at `bytes`: on the chord between the measured sizes around it; beyond the ends,
    /// along the end segment, but never more work below the smallest size than at it (nor under a tenth
    /// of it) and never less above the largest than at it (a segment sloping down would otherwise price
    /// large messages up to 10× too fast).
    pub fn unit(&self, bytes: f64) -> f64 {
        let k = &self.knots;
        let (first, last) = (k[0], k[k.len() - 1]);
        let i = k.partition_point(|p| p.0 < bytes).clamp(1, k.len() - 1);
        let on = between(k[i - 1], k[i], bytes);
        if bytes < first.0 {
            on.clamp(0.1 * first.1, first.1)
        } else if bytes > last.0 {
            on.max(last.1)
        } else {
            // Between two measured sizes: on their chord, between two positive medians.
            on
        }
    }

    /// Half-width (log units) for a target of `bytes`: the repeats' scatter and the interpolation error at
    /// the target's log-distance from the nearest measured size, in quadrature (independent: the repeats
    /// measure noise, the leave-one-out the shape between the sizes). Beyond the smallest and largest
    /// sizes the same error per unit of log-distance is carried, an assumption: leaving sizes out tests
    /// only interpolation, never extrapolation.
    pub fn width(&self, bytes: f64) -> f64 {
        let sizes: Vec<f64> = self.knots.iter().map(|k| k.0).collect();
        let interp = self.loo_rms_per_ln * log_distance(bytes, &sizes);
        Z90 * (self.repeats_rms_log.powi(2) + interp.powi(2)).sqrt()
    }
}

/// The chord through `lo` and `hi` at `x` (extended beyond them).
fn between(lo: (f64, f64), hi: (f64, f64), x: f64) -> f64 {
    let slope = if hi.0 > lo.0 {
        (hi.1 - lo.1) / (hi.0 - lo.0)
    } else {
        0.0
    };
    lo.1 + slope * (x - lo.0)
}

/// |ln(x ÷ s)| to the nearest of `sizes`.
fn log_distance(x: f64, sizes: &[f64]) -> f64 {
    sizes
        .iter()
        .map(|s| (x.max(1.0) / s.max(1.0)).ln().abs())
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run 12's `always` medians (µs per message; calibration/lab-loopback-matrix-12-always.yaml), three
    /// repeats each spread by ±4 %.
    const RUN12_US: [(f64, f64); 5] = [
        (64.0, 22.1),
        (512.0, 28.4),
        (2048.0, 49.5),
        (4096.0, 85.5),
        (16384.0, 146.7),
    ];

    fn run12() -> Vec<(f64, f64)> {
        RUN12_US
            .iter()
            .flat_map(|&(s, u)| [0.96, 1.0, 1.04].map(|f| (s, u * f * 1e-6)))
            .collect()
    }

    fn line(pts: &[(f64, f64)]) -> (f64, f64) {
        crate::perf::leader::weighted_line(pts)
    }

    #[test]
    fn a_line_that_prices_the_left_out_sizes_better_is_kept() {
        // Medians on a line (10 µs + 8 ns/B) but each size 8 % off it, alternately: a chord between two
        // neighbours misses by about 16 %, the line refitted without the size by about 8 %.
        let pts: Vec<(f64, f64)> = [64.0, 512.0, 2048.0, 4096.0, 16384.0]
            .iter()
            .enumerate()
            .flat_map(|(i, &s)| {
                let u = (10.0 + 0.008 * s) * if i % 2 == 0 { 1.08 } else { 0.92 } * 1e-6;
                [0.97, 1.0, 1.03].map(|f| (s, u * f))
            })
            .collect();
        assert!(SizeShape::fit(&pts, line).is_none(), "{:?}", SizeShape::fit(&pts, line));
        // Three sizes leave one interior size: too little to choose by; the line stays however it misses.
        let three: Vec<_> = run12().into_iter().filter(|p| p.0 <= 2048.0).collect();
        assert!(SizeShape::fit(&three, line).is_none());
    }

    #[test]
    fn the_shape_gives_its_sizes_back_and_interpolates_between_them() {
        let s =
            SizeShape::fit(&run12(), line).expect("run 12's always rows: the chords price the left-out sizes better");
        for (b, u) in [(64.0, 22.1), (512.0, 28.4), (4096.0, 85.5), (16384.0, 146.7)] {
            assert!((s.unit(b) / (u * 1e-6) - 1.0).abs() < 1e-9, "{b} B");
        }
        // 1 KiB lies on the chord of 512 B and 2 KiB.
        let chord = 28.4 + (49.5 - 28.4) * 512.0 / 1536.0;
        assert!((s.unit(1024.0) / (chord * 1e-6) - 1.0).abs() < 1e-9);
        // Monotone rows give a monotone shape, beyond the ends too, never zero.
        let mut last = 0.0;
        for b in [
            1.0, 16.0, 64.0, 100.0, 700.0, 3000.0, 9000.0, 16384.0, 65536.0, 1048576.0,
        ] {
            let u = s.unit(b);
            assert!(u > 0.0 && u >= last, "{b} B: {u}");
            last = u;
        }
    }

    #[test]
    fn work_far_below_the_largest_size_is_not_floored_by_it() {
        // The class of run 12's `always` file in reference-core work (the rows less the store writes): the
        // 64 B work is a twelfth of the 16 KiB one.
        let pts: Vec<(f64, f64)> = [
            (64.0, 4.32),
            (512.0, 6.83),
            (2048.0, 15.8),
            (4096.0, 29.7),
            (16384.0, 54.1),
        ]
        .iter()
        .flat_map(|&(s, u)| [0.9, 1.0, 1.1].map(|f| (s, u * f * 1e-6)))
        .collect();
        let s = SizeShape::fit(&pts, line).unwrap();
        assert!((s.unit(64.0) / 4.32e-6 - 1.0).abs() < 1e-9, "{}", s.unit(64.0));
        assert!((s.unit(200.0) / (4.32e-6 + 2.51e-6 * 136.0 / 448.0) - 1.0).abs() < 1e-9);
        assert!(s.unit(1.0) >= 0.43e-6 && s.unit(1.0) <= 4.32e-6);
    }

    #[test]
    fn beyond_the_ends_work_never_falls_above_nor_rises_below() {
        // The last segment slopes down (16 KiB cheaper than 4 KiB): above 16 KiB the work stays at 16 KiB's.
        let s = SizeShape {
            knots: [
                (64.0, 20.0),
                (512.0, 30.0),
                (2048.0, 60.0),
                (4096.0, 120.0),
                (16384.0, 100.0),
            ]
            .map(|(s, u)| (s, u * 1e-6))
            .to_vec(),
            repeats_rms_log: 0.05,
            loo_rms_per_ln: 0.2,
            chord_loo_rms_log: 0.1,
            line_loo_rms_log: 0.2,
        };
        assert!((s.unit(1048576.0) / 100e-6 - 1.0).abs() < 1e-9, "{}", s.unit(1048576.0));
        assert!((s.unit(8192.0) / (120e-6 - 20e-6 * 4096.0 / 12288.0) - 1.0).abs() < 1e-9);
        // Below 64 B the first segment rises toward 64 B: less work, never under a tenth of 64 B's.
        assert!(s.unit(1.0) < 20e-6 && s.unit(1.0) >= 2e-6, "{}", s.unit(1.0));
    }

    #[test]
    fn bad_rows_or_no_repeats_keep_the_line() {
        let mut pts = run12();
        pts.push((f64::NAN, 30e-6));
        assert!(SizeShape::fit(&pts, line).is_none());
        let mut pts = run12();
        pts.push((0.5, 30e-6));
        assert!(SizeShape::fit(&pts, line).is_none());
        let once: Vec<(f64, f64)> = RUN12_US.iter().map(|&(s, u)| (s, u * 1e-6)).collect();
        assert!(
            SizeShape::fit(&once, line).is_none(),
            "one row per size: nothing measures the scatter"
        );
    }

    #[test]
    fn the_band_is_narrowest_at_a_measured_size_and_grows_away_from_them() {
        let s = SizeShape::fit(&run12(), line).unwrap();
        let at = s.width(512.0);
        assert!((at - Z90 * s.repeats_rms_log).abs() < 1e-12);
        assert!(s.width(1024.0) > at);
        assert!(s.width(256.0 * 1024.0) > s.width(32.0 * 1024.0));
        // Leave-one-out over run 12's interior sizes: 512 B priced from 64 B and 2 KiB, 2 KiB from 512 B
        // and 4 KiB, 4 KiB from 2 KiB and 16 KiB (0.4 % below, 6.6 % above, 26 % below).
        let e = |lo: (f64, f64), at: (f64, f64), hi: (f64, f64)| {
            ((between(lo, hi, at.0) / at.1).ln() / log_distance(at.0, &[lo.0, hi.0])).powi(2)
        };
        let want = ((e((64.0, 22.1), (512.0, 28.4), (2048.0, 49.5))
            + e((512.0, 28.4), (2048.0, 49.5), (4096.0, 85.5))
            + e((2048.0, 49.5), (4096.0, 85.5), (16384.0, 146.7)))
            / 3.0)
            .sqrt();
        assert!((s.loo_rms_per_ln - want).abs() < 1e-9, "{} vs {want}", s.loo_rms_per_ln);
    }
}
