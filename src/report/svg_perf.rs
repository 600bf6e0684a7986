//! The perf chart: predicted object-store put rate versus object size, per layout and sync mode, with the
//! seed 000 Appendix B rows as points. The data step is `perf::curves`, built by the plan's loader for
//! the layouts the report shows (`plan::inputs::Loaded::perf_curves`) and handed to the page, so drawing
//! stays a pure function of its input.

use super::svg::{colour, line_chart, Chart, Marks, Series};
pub use crate::perf::curves::PerfCurves;
use crate::units::fmt_bytes;

impl PerfCurves {
    pub fn caption(&self) -> String {
        format!(
            "Predicted whole-object puts/s (lines; shaded: the prediction band) for {} concurrent putters; solid = \
             sync_interval always, dashed = delayed. Points: the NATS-on-E-Series guide's Appendix B second batch as published (filled = \
             always, open = delayed; its first batch ran 1 putter and is left out; rows flagged duplicate_label are \
             not shown). Calibration: {}.",
            self.workers,
            self.sources.join(", ")
        )
    }
}

/// Both panels, one under the other.
pub fn perf_chart(c: &PerfCurves) -> String {
    let mut out = String::new();
    let ticks: Vec<(f64, String)> = [1u64 << 10, 8 << 10, 64 << 10, 128 << 10, 1 << 20, 16 << 20]
        .iter()
        .map(|&b| (b as f64, fmt_bytes(b as f64)))
        .collect();
    for p in &c.panels {
        let mut ch = Chart::new(&p.title, "object size", "puts/s");
        ch.x_log = true;
        ch.y_log = true;
        ch.x_ticks = ticks.clone();
        // Same colour for a layout's two sync modes; solid = always, dashed = delayed.
        let mut names: Vec<String> = Vec::new();
        for cv in &p.curves {
            let base = cv
                .label
                .rsplit_once(' ')
                .map(|(a, _)| a.to_string())
                .unwrap_or_default();
            let i = match names.iter().position(|n| n == &base) {
                Some(i) => i,
                None => {
                    names.push(base);
                    names.len() - 1
                }
            };
            ch.series.push(Series {
                name: cv.label.clone(),
                colour: colour(i).into(),
                dashed: !cv.always,
                points: cv.points.iter().map(|p| (p.0, p.1)).collect(),
                band: cv.points.iter().map(|p| (p.0, p.2, p.3)).collect(),
            });
        }
        for always in [true, false] {
            let pts: Vec<(f64, f64, String)> = p
                .seed
                .iter()
                .filter(|s| s.always == always)
                .map(|s| {
                    (
                        s.size_bytes,
                        s.put_obj_per_s,
                        format!(
                            "E-Series guide {} {}: {:.0} puts/s",
                            s.label,
                            fmt_bytes(s.size_bytes),
                            s.put_obj_per_s
                        ),
                    )
                })
                .collect();
            if !pts.is_empty() {
                ch.marks.push(Marks {
                    name: format!("E-Series guide rows, {}", if always { "always" } else { "delayed" }),
                    colour: "#333333".into(),
                    filled: always,
                    points: pts,
                });
            }
        }
        out.push_str(&line_chart(&ch));
    }
    out
}
