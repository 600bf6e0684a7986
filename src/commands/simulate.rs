//! `natsplan simulate SITE.yaml --years N --trials M --seed S`: a seeded Monte Carlo of failures and repairs
//! over years for one layout (default: the top-ranked), beside the exact Markov-chain figures when the
//! chain is small enough. The report is rendered by `report::simulate`.

use super::design::{chosen_layout, load_site};
use super::{emit_stdout, format, unsupported_format, width};
use crate::cli::{Format, Global};
use crate::error::{bad_input, Failure, Outcome};
use crate::survival::{self, Model, Reliability};
use std::path::PathBuf;

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
    let report = survival::SimulateReport {
        site: site.name.clone(),
        layout: planned.id.clone(),
        sync_interval: site.nats.sync.config_value(),
        site_years,
        seed: a.seed,
        monte_carlo: mc,
        exact,
        known_hazards: survival::known_hazards(),
    };
    let bytes = match fmt {
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(&report).expect("a report always serialises");
            v.push(b'\n');
            v
        }
        Format::Markdown => crate::report::simulate::markdown(&report).into_bytes(),
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
        _ => crate::report::simulate::table_report(&report, width(g)).into_bytes(),
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}
