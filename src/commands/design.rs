//! `natsplan design SITE.yaml`: enumerate, check and rank layouts; print the ranked summary and the
//! best layout's details (or the Plan as JSON / Markdown); `--save FILE` keeps the plan for `--plan`.

use super::{emit_stdout, format, load_plan, width};
use crate::cli::{Format, Global, PlanArgs};
use crate::error::{bad_input, Failure, Outcome};
use crate::plan::inputs::find_layout;
use crate::report::design::{json, markdown, table_report, Selection};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(after_help = crate::report::detail::VERDICTS)]
pub struct DesignArgs {
    /// The site file (see docs/site-format.md and examples/); optional with --plan.
    #[arg(required_unless_present = "plan")]
    pub site: Option<PathBuf>,
    /// Show only the N best layouts [default: all of them].
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Show only this layout (ids come from content, so they survive re-ranking).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// Also write the plan to FILE (JSON with the site, models, calibration and imported streams it was
    /// built from and their hashes); `--plan FILE` on whatif, simulate, emit, lab up and verify uses it.
    /// With --layout, that layout becomes the saved plan's choice.
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
}

pub fn run(g: &Global, a: DesignArgs) -> Result<Outcome, Failure> {
    let (inputs, mut plan) = load_plan(g, &a.inputs, a.site.as_deref())?;
    if a.top == Some(0) {
        return Err(bad_input(anyhow::anyhow!("--top 0 shows nothing; use --top 1 or more")));
    }
    // The whole id from here on (`--layout` may give the tables' short form).
    let layout = match &a.layout {
        Some(id) => Some(find_layout(&plan, id)?.id.clone()),
        None => None,
    };
    if let Some(path) = &a.save {
        std::fs::write(path, inputs.saved_plan_json(&plan, layout.as_deref()))
            .map_err(|e| bad_input(anyhow::anyhow!("--save {}: cannot write it: {e}", path.display())))?;
        eprintln!("natsplan: plan saved to {}", path.display());
    }
    // The layout --layout names is shown per asset (after the save: its hash is of the plan as built).
    inputs.expand(&mut plan, layout.as_deref())?;
    let sel = Selection { top: a.top, layout };
    let bytes = match format(g) {
        Format::Table => table_report(&plan, &sel, width(g)).into_bytes(),
        Format::Json => {
            super::stream_stdout(|w| json(&plan, &sel, w))?;
            return Ok(Outcome::Ok);
        }
        Format::Markdown => markdown(&plan, &sel).into_bytes(),
        Format::Csv => crate::report::csv::design(&plan, &sel),
        Format::Html => {
            let shown: Vec<(&str, &crate::layout::Layout)> = crate::report::design::selected(&plan, &sel)
                .into_iter()
                .map(|l| (l.id.as_str(), &l.layout))
                .collect();
            let curves =
                crate::perf::curves::PerfCurves::build(&plan.input, &shown, &inputs.catalog, &inputs.calibration);
            crate::report::html::design(&plan, &sel, Some(&curves)).into_bytes()
        }
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}
