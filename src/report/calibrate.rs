//! `natsplan calibrate`'s report for the terminal and Markdown (JSON is the value itself): what was
//! measured, the fitted terms and how well they fit.

use crate::calibrate::CalibrateReport;
use crate::text::pct1_or_dash;
use comfy_table::{presets, ContentArrangement, Table};

use super::render::{json_to, Format, Render};

impl Render for CalibrateReport {
    const COMMAND: &'static str = "calibrate";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => json_to(self, w),
            _ => w.write_all(text(self, f == Format::Markdown, width).as_bytes()),
        }
    }
}

fn fmt_s(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1.0 {
        format!("{x:.3}")
    } else if a >= 1e-3 {
        format!("{:.3} ms", x * 1e3)
    } else if a >= 1e-6 {
        format!("{:.3} µs", x * 1e6)
    } else {
        format!("{:.3} ns", x * 1e9)
    }
}

fn fmt_term(name: &str, x: f64) -> String {
    if name.ends_with("_s") {
        fmt_s(x)
    } else if name.ends_with("_per_s") {
        format!("{x:.0}/s")
    } else {
        format!("{x:.4}")
    }
}

/// The terminal/markdown report.
pub fn text(r: &CalibrateReport, markdown: bool, width: u16) -> String {
    let q = &r.fit_quality;
    let mut out = String::new();
    out.push_str(&format!(
        "calibration {} written to {} ({} runs in {:.0} s; sync {}; nats-server {})\n",
        r.id, r.out, r.runs, r.elapsed_s, r.sync, r.nats_version
    ));
    out.push_str(&format!(
        "plan: {} points × {} repeats, {:.1} s per run, budget {:.0} s\n",
        r.plan.points.len(),
        r.plan.repeats,
        r.plan.run_s,
        r.plan.budget_s
    ));
    for d in &r.plan.dropped {
        out.push_str(&format!("dropped for the budget: {d}\n"));
    }
    // A point measured in some pass is short of repeats, not "not run" (issue 39).
    let (unrun, short): (Vec<_>, Vec<_>) = r.short_points.iter().partition(|p| p.measured == 0);
    if !unrun.is_empty() {
        let ids: Vec<&str> = unrun.iter().map(|p| p.point.as_str()).collect();
        out.push_str(&format!("not run (budget spent): {}\n", ids.join(", ")));
    }
    if !short.is_empty() {
        let ids: Vec<String> = short
            .iter()
            .map(|p| format!("{} ({} of {} passes)", p.point, p.measured, p.measured + p.skipped))
            .collect();
        out.push_str(&format!("fewer repeats (budget spent): {}\n", ids.join(", ")));
    }
    for (p, e) in &r.failures {
        out.push_str(&format!("failed: {p}: {e}\n"));
    }
    out.push_str(&format!(
        "held-out points: median |error| {}, worst {}; repeat spread (median) {}; knee: sustained {} , not {}\n\n",
        pct1_or_dash(q.holdout_median_abs_error),
        pct1_or_dash(q.holdout_worst_abs_error),
        pct1_or_dash(q.repeat_spread_median),
        q.knee_sustained_per_s
            .map(|x| format!("{x:.0}/s"))
            .unwrap_or("-".into()),
        q.knee_failed_per_s.map(|x| format!("{x:.0}/s")).unwrap_or("-".into()),
    ));
    let mut t = table(markdown, width, vec!["term", "value", "± (jackknife)", "identified"]);
    for term in &q.terms {
        t.add_row(vec![
            term.name.clone(),
            fmt_term(&term.name, term.value),
            term.uncertainty
                .map(|u| fmt_term(&term.name, u))
                .unwrap_or_else(|| "unknown".into()),
            if term.identified { "yes".into() } else { "no".into() },
        ]);
    }
    out.push_str(&t.to_string());
    out.push_str("\n\n");
    let mut t = table(
        markdown,
        width,
        vec!["point", "measured", "predicted", "error", "held out"],
    );
    for res in &q.residuals {
        t.add_row(vec![
            res.label.clone(),
            format!("{:.1}", res.measured),
            format!("{:.1}", res.predicted),
            format!("{:+.1} %", res.error * 100.0),
            if res.held_out { "yes".into() } else { "".into() },
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// A table for the terminal or for Markdown, `width` wide, with `header`.
fn table(markdown: bool, width: u16, header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_preset(if markdown {
        presets::ASCII_MARKDOWN
    } else {
        presets::UTF8_FULL_CONDENSED
    })
    .set_content_arrangement(ContentArrangement::Dynamic)
    .set_width(width)
    .set_header(header);
    t
}
