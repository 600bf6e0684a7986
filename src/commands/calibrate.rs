//! `natsplan calibrate`: flags → `calibrate::CalibrateOptions`, measure, write the calibration file, print
//! what was measured and how well it fitted. Exit 2 on bad flags (a budget too small to measure anything,
//! an unwritable --out, an unknown sync mode), 3 when the cluster cannot be reached or measured.

use crate::bench::{ConnArgs, ConnSpec};
use crate::calibrate::{self, CalibrateOptions, CalibrateReport};
use crate::cli::{Format, Global};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::perf::Sync;
use anyhow::anyhow;
use comfy_table::{presets, ContentArrangement, Table};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Monitoring URLs (http://host:8222), comma separated: version, cluster size, sync mode and store
    /// filesystem for the provenance; default: port 8222 on each server's host.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub monitor: Vec<String>,
    /// Time to spend measuring (5m, 90s): fewer points, repeats and shorter runs fit a smaller budget.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub budget: String,
    /// What the cluster runs on, recorded in the file (e.g. "3 x 16-core, NVMe RAID 1, 25 GbE").
    #[arg(long, value_name = "TEXT")]
    pub hardware: Option<String>,
    /// The calibration file to write (YAML, replaced atomically).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The file's id, cited by predictions (default: from the file name).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The cluster's sync mode when no monitoring port answers (/varz tells it otherwise).
    #[arg(long, value_name = "always|delayed")]
    pub sync: Option<String>,
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

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1} %", v * 100.0)).unwrap_or_else(|| "-".into())
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
    if !r.skipped.is_empty() {
        out.push_str(&format!("not run (budget spent): {}\n", r.skipped.join(", ")));
    }
    for (p, e) in &r.failures {
        out.push_str(&format!("failed: {p}: {e}\n"));
    }
    out.push_str(&format!(
        "held-out points: median |error| {}, worst {}; repeat spread (median) {}; knee: sustained {} , not {}\n\n",
        pct(q.holdout_median_abs_error),
        pct(q.holdout_worst_abs_error),
        pct(q.repeat_spread_median),
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

pub fn run(g: &Global, a: CalibrateArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    if !matches!(format, Format::Table | Format::Json | Format::Markdown) {
        return Err(super::unsupported_format(
            "calibrate",
            format,
            &["table", "json", "markdown"],
        ));
    }
    let budget = crate::units::parse_duration(&a.budget).map_err(|e| {
        bad_input(anyhow!(
            "--budget '{}': {e}; e.g. --budget 5m or --budget 90s",
            a.budget
        ))
    })?;
    for m in &a.monitor {
        if !m.starts_with("http://") {
            return Err(bad_input(anyhow!(
                "--monitor '{m}': give an http:// URL of a server's monitoring port, e.g. http://127.0.0.1:8222"
            )));
        }
    }
    let sync = match a.sync.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => None,
        Some(s) if s == "always" => Some(Sync::Always),
        Some(s) if s == "delayed" => Some(Sync::Delayed),
        Some(s) => {
            return Err(bad_input(anyhow!(
                "--sync '{s}' is not understood; use --sync always or --sync delayed"
            )))
        }
    };
    let conn = ConnSpec::resolve(&a.conn).map_err(bad_input)?;
    let opts = CalibrateOptions {
        conn,
        monitors: a.monitor.clone(),
        budget_s: budget.as_secs_f64(),
        hardware: a.hardware.clone(),
        out: a.out.clone(),
        id: a.id.clone(),
        sync,
        catalog: super::catalog(g)?,
    };
    let log = |s: &str| eprintln!("{s}");
    let rep = calibrate::run(&opts, &log)?;
    let bytes = match format {
        Format::Json => {
            let mut b = serde_json::to_vec_pretty(&rep).map_err(|e| cannot_run(anyhow!(e)))?;
            b.push(b'\n');
            b
        }
        Format::Markdown => text(&rep, true, super::width(g)).into_bytes(),
        _ => text(&rep, false, super::width(g)).into_bytes(),
    };
    super::emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
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
