//! What many distinct subjects add to a stream leader's work per message (nats-server #4043).
//!
//! A stream whose messages go to many subjects (`orders.<id>`) costs nats-server more per message than one
//! subject, read from nats-server's source (main 1787eee, 2026-08; helper study for issue 37):
//! - each client connection keeps the subjects it published to and their interest (client.go
//!   `processInboundClientMsg`, `maxResultCacheSize` = 512, pruned 32 at a time): past 512 subjects most
//!   publishes miss it and match the account's subject list again (sublist.go `match`, whose own cache
//!   holds `slCacheMax` = 1,024 and is swept under the write lock);
//! - the store indexes every subject (filestore.go `psim`, a subject tree; each message block's `fss`): a
//!   subject the block has not seen is an insert, on every replica. A block holds 8 MiB (`dynBlkSize`,
//!   limits retention): about 8,000 messages of 1 KiB, so up to that many subjects each block inserts more;
//! - a publisher on a server other than the leader's reaches it over a route whose cache holds 8,192
//!   subjects (client.go `maxPerAccountCacheSize`).
//!
//! So the extra work rises from a few hundred subjects and levels off past about 16,000. Measured on the
//! loopback lab (2026-12-06, 3 nodes on 2 cores, R3, 1 KiB, 2 async publishers × 256, raw protocol client,
//! `--leader remote`, interleaved passes; docs/prediction-matrix.md, "Many subjects"): against one subject,
//! 7 passes of 160,000 messages: 1,024 subjects 0.87×, 4,096 0.82×, 16,384 0.76×, 65,536 0.83×, 262,144
//! 0.78×; 5 passes of 80,000: 1,024 1.05×, 4,096 0.91×, 16,384 0.95×, 65,536 0.84×. The form below — nothing
//! up to `FLAT`, rising with log(subjects) to the full term at `PLATEAU`, flat beyond — follows the
//! thresholds in the source; the term's size is measured by `natsplan calibrate`'s many-subjects point
//! (`PLATEAU` subjects), else assumed (`ASSUMED_SHARE`).

use serde::Serialize;

/// Distinct subjects up to which the work per message does not grow: half the per-connection cache
/// (client.go `maxResultCacheSize` = 512; pruned randomly, it starts missing before it is full).
pub const FLAT: f64 = 256.0;
/// Distinct subjects from which it grows no further: past the route cache (8,192) and a block's messages
/// at 512 B-1 KiB (8 MiB blocks); the lab's 16,384-262,144 subjects carried 0.76-0.95× (median 0.83×).
pub const PLATEAU: f64 = 16_384.0;
/// The extra work at the plateau when no row measured it, as a share of the class's per-message work at
/// `ASSUMED_AT_BYTES`: the median of the loopback lab's rates at 16,384 subjects and more, 0.83× one
/// subject's (0.76-0.95×: five figures over three counts in two sweeps at 1 KiB), is 20 % more work per
/// message (an assumption for any other host, its band widened by the whole share).
pub const ASSUMED_SHARE: f64 = 0.2;
/// The message size the assumed share is taken at: the sweeps' (1 KiB; calibrate's many-subjects point
/// measures at 512 B).
pub const ASSUMED_AT_BYTES: f64 = 1024.0;
/// Band half-width (log units) per unit of the share of the work the term prices: measured at one count
/// (the form between `FLAT` and `PLATEAU` is read from nats-server's caches, an assumption), and when the
/// term itself is assumed.
const MEASURED_WIDTH_PER_SHARE: f64 = 0.5;
const ASSUMED_WIDTH_PER_SHARE: f64 = 1.0;

/// How much of the plateau's extra work `n` distinct subjects pay: 0 up to `FLAT`, log-linear to 1 at
/// `PLATEAU`, 1 beyond.
pub fn reach(n: f64) -> f64 {
    ((n.max(1.0) / FLAT).ln() / (PLATEAU / FLAT).ln()).clamp(0.0, 1.0)
}

/// The extra per-message work of many subjects for one leader class.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SubjectsTerm {
    /// Extra work per message at `PLATEAU` subjects or more (reference-core seconds).
    pub plateau_s: f64,
    /// True when the class's own rows measured it (calibrate's many-subjects point).
    pub measured: bool,
    /// Where the figure comes from, in words.
    pub source: String,
}

impl SubjectsTerm {
    /// The assumed term for a class whose per-message work at `ASSUMED_AT_BYTES` is `unit_s`.
    pub fn assumed(unit_s: f64) -> SubjectsTerm {
        SubjectsTerm {
            plateau_s: ASSUMED_SHARE * unit_s.max(0.0),
            measured: false,
            source: format!(
                "assumed: {:.0} % of the per-message work at {ASSUMED_AT_BYTES:.0} B at {PLATEAU:.0} subjects or more (loopback lab 2026-12-06: 0.76-0.95x of one subject's rate, median 0.83x)",
                ASSUMED_SHARE * 100.0
            ),
        }
    }

    /// The term from a file's many-subjects rows: each row's work per message beyond the class's line at
    /// its size (`extra`: subjects, extra work), over the share `reach` says its count pays; the median,
    /// never below zero. `fallback` (the assumed term) when no row has more than `FLAT` subjects.
    pub fn fit(extra: &[(f64, f64)], file: &str, fallback: SubjectsTerm) -> SubjectsTerm {
        let per: Vec<f64> = extra
            .iter()
            .filter(|(n, e)| reach(*n) > 0.0 && e.is_finite())
            .map(|(n, e)| e / reach(*n))
            .collect();
        if per.is_empty() {
            return fallback;
        }
        let most = extra.iter().map(|(n, _)| *n).fold(0.0, f64::max);
        let plateau_s = crate::stats::median_or_zero(per.clone()).max(0.0);
        SubjectsTerm {
            plateau_s,
            measured: true,
            source: format!(
                "{file} ({} row{} at up to {most:.0} subjects: {:.2} µs more per message at the plateau)",
                per.len(),
                if per.len() == 1 { "" } else { "s" },
                plateau_s * 1e6
            ),
        }
    }

    /// Extra work per message (reference-core seconds) for `n` distinct subjects.
    pub fn work_s(&self, n: f64) -> f64 {
        self.plateau_s * reach(n)
    }

    /// What a prediction says it priced for `given` distinct subjects (None: none given, priced as one)
    /// when the leader's work per message without them is `unit_s`.
    pub fn describe(&self, given: Option<u64>, unit_s: f64) -> String {
        let pct = |x: f64| 100.0 * x / unit_s.max(1e-12);
        let Some(n) = given else {
            return format!(
                "one subject (assumed: no distinct_subjects given; {PLATEAU:.0} or more would add {:.0} % to the leader's work per message: {})",
                pct(self.plateau_s),
                self.source
            );
        };
        let extra = self.work_s(n as f64);
        if extra > 0.0 {
            format!(
                "{n} distinct subjects: {:.2} µs more work per message at the leader (+{:.0} %; {})",
                extra * 1e6,
                pct(extra),
                self.source
            )
        } else {
            format!("{n} distinct subjects: no more work per message (up to {FLAT:.0}, perf::subjects)")
        }
    }

    /// Band half-width (log units) for `n` subjects when the leader's work per message is `unit_s`
    /// without them: in proportion to the share of the work this term prices.
    pub fn width(&self, n: f64, unit_s: f64) -> f64 {
        let extra = self.work_s(n);
        if extra <= 0.0 {
            return 0.0;
        }
        let share = extra / (unit_s.max(0.0) + extra);
        share
            * if self.measured {
                MEASURED_WIDTH_PER_SHARE
            } else {
                ASSUMED_WIDTH_PER_SHARE
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_is_flat_then_rises_with_log_subjects_then_levels() {
        assert_eq!(reach(1.0), 0.0);
        assert_eq!(reach(FLAT), 0.0);
        assert!((reach(2048.0) - 0.5).abs() < 1e-12, "{}", reach(2048.0));
        assert_eq!(reach(PLATEAU), 1.0);
        assert_eq!(reach(1e9), 1.0);
        let mut last = 0.0;
        for n in [300.0, 1024.0, 4096.0, 10_000.0] {
            assert!(reach(n) > last);
            last = reach(n);
        }
    }

    #[test]
    fn the_fit_reads_the_plateau_off_each_row_share() {
        let fb = SubjectsTerm::assumed(10e-6);
        assert!(!fb.measured);
        assert!((fb.plateau_s - 2e-6).abs() < 1e-15);
        // 2,048 subjects pay half the plateau: 1 µs there is 2 µs at the plateau.
        let t = SubjectsTerm::fit(&[(2048.0, 1e-6), (PLATEAU, 2e-6), (PLATEAU, 3e-6)], "lab", fb.clone());
        assert!(t.measured);
        assert!((t.plateau_s - 2e-6).abs() < 1e-15, "{t:?}");
        assert!((t.work_s(2048.0) - 1e-6).abs() < 1e-15);
        // Rows at or below FLAT say nothing: the fallback stands.
        assert_eq!(SubjectsTerm::fit(&[(100.0, 1e-6)], "lab", fb.clone()), fb);
        // Noise below the line is no negative work.
        assert_eq!(SubjectsTerm::fit(&[(PLATEAU, -1e-6)], "lab", fb).plateau_s, 0.0);
    }

    #[test]
    fn the_prediction_says_what_it_priced() {
        let t = SubjectsTerm {
            plateau_s: 2e-6,
            measured: true,
            source: "lab".into(),
        };
        assert!(t
            .describe(None, 8e-6)
            .starts_with("one subject (assumed: no distinct_subjects given; 16384 or more would add 25 %"));
        assert!(t
            .describe(Some(16_384), 8e-6)
            .starts_with("16384 distinct subjects: 2.00 µs more work per message at the leader (+25 %; lab)"));
        assert!(t
            .describe(Some(100), 8e-6)
            .starts_with("100 distinct subjects: no more work"));
        // A zero unit (a degenerate fit) says a large share, never NaN or inf.
        assert!(!t.describe(None, 0.0).contains("NaN") && !t.describe(None, 0.0).contains("inf"));
    }

    #[test]
    fn the_band_widens_with_the_share_the_term_prices() {
        let t = SubjectsTerm {
            plateau_s: 2e-6,
            measured: true,
            source: String::new(),
        };
        assert_eq!(t.width(1.0, 8e-6), 0.0);
        assert!((t.width(PLATEAU, 8e-6) - 0.5 * 0.2).abs() < 1e-12);
        let a = SubjectsTerm { measured: false, ..t };
        assert!((a.width(PLATEAU, 8e-6) - 0.2).abs() < 1e-12);
    }
}
