//! `natsplan simulate SITE.yaml --years N --trials M --seed S`: a seeded Monte Carlo of failures and repairs
//! over years for one layout (default: the top-ranked), beside the exact Markov-chain figures when the
//! chain is small enough. The report is rendered by `report::simulate`.

use super::{format, load_plan};
use crate::cli::{Global, PlanArgs};
use crate::error::{bad_input, Failure, Outcome};
use crate::report::simulate::Simulate;
use crate::survival::{self, Model, Reliability};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The site file; optional with --plan.
    #[arg(required_unless_present = "plan")]
    pub site: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// The layout to simulate (an id from `natsplan design`); default: the layout a --plan was saved with, else the best-ranked one (said on stderr).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Years per trial (state carries over from year to year within a trial).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = whole_years)]
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
    /// Skip the reference simulation (written apart from the chain) and its comparison at inflated rates.
    #[arg(long)]
    pub no_reference: bool,
}

/// Most site-years (years × trials) one run simulates: about 4 minutes on two cores for a three-rack
/// site (0.24 s per million measured), and far past where the Monte Carlo's error stops mattering (its
/// relative error falls as 1/√site-years: ±0.003 % on a once-a-year event at 10⁹).
pub const MAX_SITE_YEARS: u64 = 1_000_000_000;
/// Most years in one trial: state carries over within a trial, and no hardware lives 1,000 years.
pub const MAX_YEARS_PER_TRIAL: u64 = 1_000;

/// Most failure and repair events one run steps through (`survival::expected_events`): what a run at
/// `MAX_SITE_YEARS` on a three-rack site at the catalog's rates does (1.9 × 10¹⁰, about 4 minutes on two
/// cores: 6 × 10⁸ events took 12.8 s here). The work grows with the events, not only with the site-years:
/// a site whose rates are high (up to `input::limits::MAX_EVENTS_PER_YEAR` per unit) or which has many
/// components makes every site-year many events.
pub const MAX_EVENTS: f64 = 2e10;

/// Refuse a run whose expected events (`per_site_year` × years × trials) pass `MAX_EVENTS`, saying how many
/// trials fit.
fn check_events(per_site_year: f64, years: u64, trials: u64) -> Result<(), String> {
    let events = per_site_year * years as f64 * trials as f64;
    if events <= MAX_EVENTS {
        return Ok(());
    }
    let fit = (MAX_EVENTS / (per_site_year * years as f64)).floor().max(0.0);
    Err(format!(
        "--years {years} × --trials {trials} on this layout is about {events:.1e} failure and repair events \
         ({per_site_year:.3e} per site-year at the site's failure rates), more than the {MAX_EVENTS:.0e} one run \
         simulates (about 4 minutes on two cores); use --trials {} or fewer, or check the site's failure_rates",
        fit as u64
    ))
}

/// The site-years of a run, or why the flags are refused (before anything is allocated).
fn check_bounds(years: u64, trials: u64) -> Result<u64, String> {
    if years > MAX_YEARS_PER_TRIAL {
        return Err(format!(
            "--years {years}: at most {MAX_YEARS_PER_TRIAL} years per trial; for more site-years raise --trials \
             (site-years = years × trials)"
        ));
    }
    match years.checked_mul(trials) {
        Some(sy) if sy <= MAX_SITE_YEARS => Ok(sy),
        _ => Err(format!(
            "--years {years} × --trials {trials} is more than the {MAX_SITE_YEARS} site-years one run simulates; \
             use fewer (the default 100000 gives ±0.3 % on a once-a-year event)"
        )),
    }
}

pub fn run(g: &Global, a: SimulateArgs) -> Result<Outcome, Failure> {
    super::refuse_unless::<Simulate>(format(g))?;
    if a.years == 0 || a.trials == 0 {
        return Err(bad_input(anyhow::anyhow!(
            "--years and --trials must be at least 1 (site-years = years × trials; e.g. --years 1 --trials 100000)"
        )));
    }
    let site_years = check_bounds(a.years, a.trials).map_err(|m| bad_input(anyhow::anyhow!(m)))?;
    let loaded = load_plan(g, &a.inputs, a.site.as_deref(), a.layout.as_deref())?;
    let (inputs, plan) = (&loaded.inputs, &loaded.plan);
    let (site, cat) = (&inputs.site, &inputs.catalog);
    let (planned, layout) = loaded.placed()?;
    if let Some(note) = inputs.layout_note(plan, a.layout.as_deref()) {
        eprintln!("natsplan: {note}");
    }
    // Refused before anything runs; the model is built again below, after the reference check (which
    // needs none of it): holding both at once would add a model's size to the peak.
    {
        let model = Model::new(site, layout);
        let rel = Reliability::new(&model, cat);
        check_events(survival::expected_events(&rel, 1), a.years, a.trials)
            .map_err(|m| bad_input(anyhow::anyhow!(m)))?;
    }
    let reference = (!a.no_reference).then(|| survival::agreement::check(site, layout, cat, a.trials, a.years, a.seed));
    let model = Model::new(site, layout);
    let rel = Reliability::new(&model, cat);
    let mc = survival::monte_carlo(&rel, a.trials, a.years, a.seed, None);
    // The same exact figures `design` shows for this layout (issue 32: one figure per layout).
    let exact = if a.no_exact {
        None
    } else {
        survival::exact(&rel, &Reliability::destroyers(&model, cat))
    };
    let report = survival::SimulateReport {
        site: site.name.clone(),
        layout: planned.id.clone(),
        sync_interval: site.nats.sync.config_value(),
        site_years,
        seed: a.seed,
        monte_carlo: mc,
        exact,
        reference,
        known_hazards: survival::known_hazards(),
    };
    super::print(
        g,
        &Simulate {
            report: &report,
            site,
            planned,
        },
    )?;
    Ok(Outcome::Ok)
}

/// `--years`: a whole number of years from 1 (a trial runs whole site-years, its state carried from year to
/// year); `0.5` gets the reason, not clap's bare "invalid digit".
fn whole_years(v: &str) -> Result<u64, String> {
    match v.trim().parse::<u64>() {
        Ok(0) => Err("0 years simulates nothing; give 1 or more".into()),
        Ok(n) => Ok(n),
        Err(_) if v.trim().parse::<f64>().is_ok_and(|f| f.is_finite() && f > 0.0) => Err(format!(
            "{v} is not a whole number of years: a trial runs whole site-years; give --years 1 and more --trials \
             for finer figures"
        )),
        Err(_) => Err(format!(
            "{v:?} is not a number of years; give a whole number such as 1 or 10"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_runs_are_refused_before_they_start() {
        assert_eq!(check_bounds(1, 100_000), Ok(100_000));
        assert_eq!(check_bounds(1_000, 1_000_000), Ok(1_000_000_000));
        assert!(check_bounds(1, 1_000_000_000_000)
            .unwrap_err()
            .contains("--trials 1000000000000"));
        assert!(check_bounds(4_294_967_295, 1)
            .unwrap_err()
            .contains("at most 1000 years"));
        assert!(check_bounds(1_000, u64::MAX).is_err());
    }

    #[test]
    fn runs_of_too_many_events_are_refused_with_the_trials_that_fit() {
        // 6,000 events a site-year (three servers crashing 1,000 times a year, and their repairs).
        assert!(check_events(6_000.0, 1, 100_000).is_ok());
        let e = check_events(6_000.0, 1_000, 100_000).unwrap_err();
        assert!(
            e.contains("6.0e11 failure and repair events") && e.contains("--trials 3333 or fewer"),
            "{e}"
        );
        // A rate of 10^9 a year (issue 41: accepted, and months of work).
        assert!(check_events(6e9, 1, 100_000)
            .unwrap_err()
            .contains("--trials 3 or fewer"));
    }
}
