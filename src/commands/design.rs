//! `natsplan design SITE.yaml`: enumerate, check and rank layouts; print the ranked summary and the
//! best layout's details (or the Plan as JSON / Markdown); `--save FILE` keeps the plan for `--plan`.

use super::{format, load_plan_then};
use crate::cli::{Format, Global, PlanArgs};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::plan::inputs::{find_layout, Inputs};
use crate::plan::Plan;
use crate::report::design::{Design, Selection};
use std::io::Write as _;
use std::path::{Path, PathBuf};

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
    /// Exit 1 when the best layout (or the one --layout names) has this verdict or a worse one, after
    /// the report is written: `risky` fails on risky and rejected, `rejected` on rejected only; for a CI
    /// job that must stop when the site has no usable layout.
    #[arg(long, value_name = "VERDICT")]
    pub fail_on: Option<FailOn>,
    /// Prices per server, array and disk model (the file `size --prices` reads, docs/size.md): each layout
    /// gets a cost, of the servers it runs JetStream on and the arrays their volumes are on (table: a cost
    /// section; JSON: `cost` per layout).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
}

/// The prices `--prices` gave and each layout's cost, by layout id.
type Priced = (crate::size::price::Prices, Vec<(String, crate::size::price::Cost)>);

/// Each layout's cost under `--prices` (the pricing `size` uses: `size::price::cost_of`), by layout id.
fn layout_costs(
    plan: &crate::plan::Plan,
    catalog: &crate::catalog::Catalog,
    file: Option<&Path>,
) -> Result<Option<Priced>, Failure> {
    use crate::size::price::{cost_of, read_prices, Needed, Parts};
    let Some(file) = file else { return Ok(None) };
    let text = crate::input::read_text(file, "prices file").map_err(bad_input)?;
    let prices = read_prices(
        &text,
        &file.display().to_string(),
        &Needed::of_site(&plan.input),
        catalog,
    )
    .map_err(bad_input)?;
    let costs = plan
        .layouts
        .iter()
        .map(|l| {
            (
                l.id.clone(),
                cost_of(&Parts::of_layout(&plan.input, l), Some(&prices), catalog),
            )
        })
        .collect();
    Ok(Some((prices, costs)))
}

/// The verdict from which `design --fail-on` exits 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Risky,
    Rejected,
}

impl FailOn {
    fn verdict(self) -> crate::plan::Verdict {
        match self {
            FailOn::Risky => crate::plan::Verdict::Risky,
            FailOn::Rejected => crate::plan::Verdict::Rejected,
        }
    }
}

/// `--fail-on`'s answer for the layout judged: the best one, or the one `--layout` names.
fn gate(plan: &crate::plan::Plan, layout: Option<&str>, fail_on: Option<FailOn>) -> Outcome {
    let Some(f) = fail_on else {
        return Outcome::Ok;
    };
    let judged = match layout {
        Some(id) => plan.layouts.iter().find(|l| l.id == id),
        None => plan.layouts.first(),
    };
    match judged {
        // Verdicts are ordered best first (recommended < acceptable < risky < rejected).
        Some(l) if l.verdict >= f.verdict() => Outcome::CheckFailed(format!(
            "--fail-on {}: {} layout {} is {}{}",
            f.verdict().as_str(),
            if layout.is_some() { "the chosen" } else { "the best" },
            l.id,
            l.verdict.as_str(),
            l.reasons.first().map(|r| format!(" ({r})")).unwrap_or_default()
        )),
        Some(_) => Outcome::Ok,
        None => Outcome::CheckFailed(format!(
            "--fail-on {}: the site has no layout at all (see the plan's notes)",
            f.verdict().as_str()
        )),
    }
}

/// Write the saved plan to `path`, refusing (exit 2) one of the files it was read from (`design SITE --save
/// SITE` replaced the site with JSON), a FIFO or socket (the write waited for a reader forever) and a
/// folder; a write that fails on the way (a full disk, /dev/full) could not run (exit 3).
fn save(path: &Path, read: &[PathBuf], bytes: &[u8]) -> Result<(), Failure> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let shown = path.display();
    if let Ok(m) = std::fs::metadata(path) {
        let t = m.file_type();
        let what = if t.is_fifo() {
            Some("a FIFO (the write would wait for a reader)")
        } else if t.is_socket() {
            Some("a socket")
        } else if t.is_dir() {
            Some("a folder")
        } else {
            None
        };
        if let Some(what) = what {
            return Err(bad_input(anyhow::anyhow!(
                "--save {shown} is {what}, not a file; give a file path, e.g. --save plan.json"
            )));
        }
        let same = |p: &PathBuf| std::fs::metadata(p).is_ok_and(|i| (i.dev(), i.ino()) == (m.dev(), m.ino()));
        if let Some(input) = read.iter().find(|p| same(p)) {
            return Err(bad_input(anyhow::anyhow!(
                "--save {shown} is {}, an input of this plan: saving would replace it with the plan's JSON; give \
                 another path, e.g. --save plan.json",
                input.display()
            )));
        }
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| {
            let bad = matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotADirectory
            );
            let e = anyhow::anyhow!("--save {shown}: cannot open it: {e}");
            if bad {
                bad_input(e)
            } else {
                cannot_run(e)
            }
        })?
        .write_all(bytes);
    written.map_err(|e| cannot_run(anyhow::anyhow!("--save {shown}: cannot write the plan: {e}")))
}

/// Design's work on the plan as built, before the layout `--layout` names is given per asset: the
/// prices (`--prices`), `--save` (its hash is of the plan as built) and the note on a user's calibration
/// carried far from where it was measured.
fn as_built(g: &Global, a: &DesignArgs, inputs: &Inputs, plan: &mut Plan) -> Result<Option<Priced>, Failure> {
    let priced = layout_costs(plan, &inputs.catalog, a.prices.as_deref())?;
    if a.top == Some(0) {
        return Err(bad_input(anyhow::anyhow!("--top 0 shows nothing; use --top 1 or more")));
    }
    // The whole id (`--layout` may give the tables' short form); checked here, before anything is saved.
    let layout = match &a.layout {
        Some(id) => Some(find_layout(plan, id)?.id.clone()),
        None => None,
    };
    if let Some(path) = &a.save {
        let sources = a.inputs.sources(g, a.site.as_deref());
        let mut read: Vec<PathBuf> = [&sources.site, &sources.calibration, &sources.omb]
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        read.extend(
            sources
                .from_cluster
                .iter()
                .filter(|f| !f.contains("://"))
                .map(PathBuf::from),
        );
        save(path, &read, &inputs.saved_plan_json(plan, layout.as_deref()))?;
        eprintln!("natsplan: plan saved to {}", path.display());
    }
    // A user's calibration carried far from where it was measured: said first, with the built-in
    // calibration's verdicts beside (a second plan, only then).
    let far = plan
        .layouts
        .first()
        .and_then(|l| crate::perf::far_user_calibration(l.prediction_entries()));
    if far.is_some() {
        let builtin = crate::plan::build(&plan.input, &inputs.catalog);
        if let Some(note) = crate::plan::far_calibration_note(plan, &builtin) {
            plan.warnings.push(note);
        }
    }
    Ok(priced)
}

pub fn run(g: &Global, a: DesignArgs) -> Result<Outcome, Failure> {
    let mut priced = None;
    let loaded = load_plan_then(g, &a.inputs, a.site.as_deref(), a.layout.as_deref(), |inputs, plan| {
        priced = as_built(g, &a, inputs, plan)?;
        Ok(())
    })?;
    let plan = &loaded.plan;
    // The whole id from here on (`--layout` may give the tables' short form); that layout is shown per
    // asset (`load_plan` gives it so).
    let layout = a.layout.as_ref().and(loaded.id.clone());
    let outcome = gate(plan, layout.as_deref(), a.fail_on);
    let sel = Selection { top: a.top, layout };
    // The perf curves are made only for HTML, the one format that draws them.
    let curves = (format(g) == Format::Html).then(|| loaded.perf_curves(&sel));
    let report = Design {
        plan,
        sel: &sel,
        priced: priced.as_ref().map(|(p, c)| (p, c.as_slice())),
        curves: curves.as_ref(),
    };
    super::print(g, &report)?;
    Ok(outcome)
}
