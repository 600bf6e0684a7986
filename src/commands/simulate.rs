//! `natsplan simulate SITE.yaml --years N --trials M --seed S`: a seeded Monte Carlo of failures and repairs
//! over years for one layout (default: the top-ranked), beside the exact Markov-chain figures when the
//! chain is small enough; and the rendering of that report (pure: value → bytes).

use super::design::{chosen_layout, load_site};
use super::{emit_stdout, format, unsupported_format, width};
use crate::cli::{Format, Global};
use crate::error::{bad_input, Failure, Outcome};
use crate::report::{md_table, table};
use crate::survival::{self, Model, Reliability, Yearly, YearlyAsset};
use crate::units::fmt_sci;
use serde::Serialize;
use std::path::PathBuf;

/// Rows the terminal table shows besides the meta group (the least available assets).
const ROWS_SHOWN: usize = 15;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The site file.
    pub site: PathBuf,
    /// The layout to simulate (an id from `natsplan design`); default: the top-ranked one.
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Years per trial (state carries over from year to year within a trial).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub years: u64,
    /// Independent trials; site-years simulated = years × trials.
    #[arg(long, value_name = "M", default_value_t = 100_000)]
    pub trials: u64,
    /// Seed: the same seed gives the same numbers on any number of cores.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Skip the exact Markov-chain figures even when the chain is small.
    #[arg(long)]
    pub no_exact: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimulateReport {
    pub site: String,
    pub layout: String,
    pub sync_interval: String,
    pub site_years: u64,
    pub seed: u64,
    pub monte_carlo: Yearly,
    /// The exact chain (at most 3 concurrent failures), when small enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<Yearly>,
}

pub fn run(g: &Global, a: SimulateArgs) -> Result<Outcome, Failure> {
    let fmt = format(g);
    if !matches!(fmt, Format::Table | Format::Json | Format::Markdown | Format::Html) {
        return Err(unsupported_format(
            "simulate",
            fmt,
            &["table", "json", "markdown", "html"],
        ));
    }
    if a.years == 0 || a.trials == 0 {
        return Err(bad_input(anyhow::anyhow!(
            "--years and --trials must be at least 1 (site-years = years × trials; e.g. --years 1 --trials 100000)"
        )));
    }
    let site_years = a
        .years
        .checked_mul(a.trials)
        .ok_or_else(|| bad_input(anyhow::anyhow!("--years × --trials overflows; use fewer site-years")))?;
    let (site, cat) = load_site(g, &a.site)?;
    let plan = crate::plan::build(&site, &cat);
    let planned = chosen_layout(&plan, a.layout.as_deref(), &a.site)?;
    let model = Model::new(&site, &planned.layout);
    let rel = Reliability::new(&model, &cat);
    let mc = survival::monte_carlo(&rel, a.trials, a.years, a.seed, None);
    let exact = if a.no_exact {
        None
    } else {
        survival::exact(&rel, 3, 200_000)
    };
    let report = SimulateReport {
        site: site.name.clone(),
        layout: planned.id.clone(),
        sync_interval: site.nats.sync.config_value(),
        site_years,
        seed: a.seed,
        monte_carlo: mc,
        exact,
    };
    let bytes = match fmt {
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(&report).expect("a report always serialises");
            v.push(b'\n');
            v
        }
        Format::Markdown => markdown(&report).into_bytes(),
        Format::Html => crate::report::html::simulate(
            &site,
            planned,
            &format!(
                "layout {} · sync_interval {} · {} site-years · seed {}",
                report.layout, report.sync_interval, report.site_years, report.seed
            ),
            &report.monte_carlo,
            report.exact.as_ref(),
        )
        .into_bytes(),
        _ => table_report(&report, width(g)).into_bytes(),
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}

fn range(lo: f64, hi: f64, f: fn(f64) -> String) -> String {
    format!("[{} – {}]", f(lo), f(hi))
}

fn minutes(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        fmt_sci(x)
    }
}

fn mttdl(a: &YearlyAsset) -> String {
    match a.mttdl_years {
        Some(y) if y >= 1e6 => format!("{y:.1e} y"),
        Some(y) => format!("{y:.0} y"),
        None => "—".into(),
    }
}

/// Rows: meta first, then the least available assets.
fn rows(r: &SimulateReport) -> (Vec<Vec<String>>, usize) {
    let mc = &r.monte_carlo;
    let ex = r.exact.as_ref();
    let mut idx: Vec<usize> = (0..mc.assets.len()).collect();
    idx.sort_by(|&i, &j| {
        mc.assets[j]
            .unavailable_min_per_year
            .total_cmp(&mc.assets[i].unavailable_min_per_year)
            .then(i.cmp(&j))
    });
    let hidden = idx.len().saturating_sub(ROWS_SHOWN);
    idx.truncate(ROWS_SHOWN);
    let line = |a: &YearlyAsset, e: Option<&YearlyAsset>| {
        let ci = a.ci95.clone().unwrap_or_default();
        vec![
            a.name.clone(),
            a.kind.clone(),
            format!(
                "{} {}",
                minutes(a.unavailable_min_per_year),
                range(ci.unavailable_min_per_year.0, ci.unavailable_min_per_year.1, minutes)
            ),
            e.map(|e| minutes(e.unavailable_min_per_year))
                .unwrap_or_else(|| "—".into()),
            format!(
                "{} {}",
                fmt_sci(a.p_data_lost_per_year),
                range(ci.p_data_lost_per_year.0, ci.p_data_lost_per_year.1, fmt_sci)
            ),
            e.map(|e| fmt_sci(e.p_data_lost_per_year)).unwrap_or_else(|| "—".into()),
            format!(
                "{} {}",
                minutes(a.acked_msgs_lost_per_year),
                range(ci.acked_msgs_lost_per_year.0, ci.acked_msgs_lost_per_year.1, minutes)
            ),
            e.map(mttdl).unwrap_or_else(|| mttdl(a)),
        ]
    };
    let mut out = vec![line(&mc.meta, ex.map(|e| &e.meta))];
    for i in idx {
        out.push(line(&mc.assets[i], ex.map(|e| &e.assets[i])));
    }
    (out, hidden)
}

const HEADER: [&str; 8] = [
    "asset",
    "kind",
    "unavailable min/yr [95 % CI]",
    "exact",
    "P(data_lost)/yr [95 % CI]",
    "exact",
    "acked msgs lost/yr [95 % CI]",
    "MTTDL (ref.)",
];

fn summary(r: &SimulateReport) -> String {
    let mc = &r.monte_carlo;
    let mut s = format!(
        "natsplan simulate — site {} — layout {} — sync_interval {}\n{}\n",
        r.site, r.layout, r.sync_interval, mc.method_detail
    );
    if let Some(e) = &r.exact {
        s.push_str(&format!("exact: {}\n", e.method_detail));
    }
    s.push_str(&format!(
        "P(any data_lost)/yr {}; acked messages lost/yr {}; least available: {} ({} min/yr)\n",
        fmt_sci(mc.p_any_data_lost_per_year),
        minutes(mc.acked_msgs_lost_per_year),
        mc.worst_unavailable,
        minutes(mc.worst_unavailable_min_per_year)
    ));
    s
}

pub fn table_report(r: &SimulateReport, width: u16) -> String {
    let mut s = summary(r);
    let (rows, hidden) = rows(r);
    let mut t = table(width, &HEADER);
    for row in rows {
        t.add_row(row);
    }
    s.push_str(&t.to_string());
    s.push('\n');
    if hidden > 0 {
        s.push_str(&format!("… {hidden} more assets (--format json lists them all)\n"));
    }
    s.push_str("assumptions:\n");
    for a in &r.monte_carlo.assumptions {
        s.push_str(&format!("  - {a}\n"));
    }
    s
}

pub fn markdown(r: &SimulateReport) -> String {
    let mut s = format!("## natsplan simulate — {}\n\n", r.layout);
    for line in summary(r).lines().skip(1) {
        s.push_str(&format!("{line}\n\n"));
    }
    let (rows, hidden) = rows(r);
    s.push_str(&md_table(&HEADER, &rows));
    if hidden > 0 {
        s.push_str(&format!("\n… {hidden} more assets (--format json lists them all)\n"));
    }
    s.push_str("\nAssumptions:\n\n");
    for a in &r.monte_carlo.assumptions {
        s.push_str(&format!("- {a}\n"));
    }
    s
}
