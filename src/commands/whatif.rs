//! `natsplan whatif SITE.yaml --fail rack:A ...` / `--all K`: what a layout survives, scenario by scenario
//! or over every combination of up to K failures. The report is rendered by `report::whatif`.

use super::{format, load_plan};
use crate::cli::{Global, PlanArgs};
use crate::error::{bad_input, Failure, Outcome};
use crate::report::whatif::Whatif;
use crate::survival::{self, Domain, DomainKind, Model, Status};
use std::path::PathBuf;

/// Combinations beyond this are refused: the sweep would not finish in reasonable time.
const MAX_COMBINATIONS: u64 = 200_000_000;

#[derive(Debug, clap::Args)]
pub struct WhatifArgs {
    /// The site file; optional with --plan.
    #[arg(required_unless_present = "plan")]
    pub site: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// The layout to test (an id from `natsplan design`); default: the layout a --plan was saved with, else the best-ranked one (said on stderr).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Failed domains of one scenario, e.g. `rack:A`, `disk:A1/2`, `process:n1` (repeatable).
    #[arg(long = "fail", value_name = "SELECTOR", num_args = 1.., conflicts_with = "all")]
    pub fail: Vec<String>,
    /// Every combination of 1..=K simultaneous failures over the chosen kinds, aggregated by outcome.
    #[arg(long, value_name = "K")]
    pub all: Option<usize>,
    /// Domain kinds for --all, comma-separated (default: all but the permanent losses): rack, array,
    /// server, disk, power, net, process, pause, wipe, full, host, pdu; lost-rack and lost-array (a rack
    /// or an array destroyed for good) only when named.
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub kinds: Vec<String>,
    /// Exit 1 when any scenario reaches this outcome.
    #[arg(long, value_enum, value_name = "OUTCOME")]
    pub fail_on: Option<FailOn>,
}

/// `--fail-on` conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum FailOn {
    Unavailable,
    DataLost,
    AckedLossRisk,
}

pub fn run(g: &Global, a: WhatifArgs) -> Result<Outcome, Failure> {
    super::refuse_unless::<Whatif>(format(g))?;
    if a.fail.is_empty() && a.all.is_none() {
        return Err(bad_input(anyhow::anyhow!(
            "nothing to test: give --fail SELECTOR (e.g. --fail rack:A) or --all K (e.g. --all 2)"
        )));
    }
    if a.all == Some(0) {
        return Err(bad_input(anyhow::anyhow!(
            "--all 0 tests no failure; use --all 1 or more"
        )));
    }
    if !a.kinds.is_empty() && a.all.is_none() {
        return Err(bad_input(anyhow::anyhow!(
            "--kinds only applies to --all K; with --fail, name the domains themselves"
        )));
    }
    let kinds: Vec<DomainKind> = if a.kinds.is_empty() {
        DomainKind::ALL.to_vec()
    } else {
        let mut v = Vec::new();
        for k in &a.kinds {
            let k = DomainKind::parse(k).map_err(|e| bad_input(anyhow::anyhow!("--kinds: {e}")))?;
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    };
    let loaded = load_plan(g, &a.inputs, a.site.as_deref(), a.layout.as_deref())?;
    let (inputs, plan) = (&loaded.inputs, &loaded.plan);
    let (site, cat) = (&inputs.site, &inputs.catalog);
    let (planned, layout) = loaded.placed()?;
    if let Some(note) = inputs.layout_note(plan, a.layout.as_deref()) {
        eprintln!("natsplan: {note}");
    }
    let model = Model::new(site, layout);
    let report = if let Some(k) = a.all {
        let n: usize = kinds.iter().map(|&kd| Domain::universe(kd, site, layout).len()).sum();
        let c = survival::combinations(n, k);
        if c > MAX_COMBINATIONS {
            return Err(bad_input(anyhow::anyhow!(
                "--all {k} over {n} domains is {c} combinations (limit {MAX_COMBINATIONS}); use a smaller K or fewer \
                 --kinds (e.g. --kinds rack,array,server)"
            )));
        }
        let sw = survival::sweep(&model, &kinds, k);
        survival::report_sweep(&model, cat, &sw)
    } else {
        let mut failed = Vec::new();
        let mut errors = Vec::new();
        for sel in &a.fail {
            match Domain::parse(sel, site) {
                Ok(d) => {
                    if !failed.contains(&d) {
                        failed.push(d)
                    }
                }
                Err(e) => errors.push(format!("--fail {e}")),
            }
        }
        if !errors.is_empty() {
            return Err(bad_input(anyhow::anyhow!(errors.join("\n"))));
        }
        let sc = model.evaluate(&failed);
        survival::report_scenarios(&model, cat, &[sc])
    };
    super::print(
        g,
        &Whatif {
            report: &report,
            site,
            planned,
        },
    )?;
    let hit = match a.fail_on {
        None => None,
        Some(FailOn::Unavailable) => report.reaches(Status::Unavailable).then_some("unavailable"),
        Some(FailOn::DataLost) => report.reaches(Status::DataLost).then_some("data_lost"),
        Some(FailOn::AckedLossRisk) => report.any_acked_loss_risk().then_some("acked_loss_risk"),
    };
    Ok(match hit {
        Some(what) => Outcome::CheckFailed(format!("a scenario reaches {what} (--fail-on {what})")),
        None => Outcome::Ok,
    })
}
