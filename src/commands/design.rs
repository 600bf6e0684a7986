//! `natsplan design SITE.yaml`: enumerate, check and rank layouts; print the ranked summary and the
//! best layout's details (or the Plan as JSON / Markdown).

use super::{catalog, emit_stdout, format, unsupported_format, width};
use crate::cli::{Format, Global};
use crate::error::{bad_input, Failure, Outcome};
use crate::report::design::{json, markdown, table_report, Selection};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct DesignArgs {
    /// The site file (see docs/site-format.md and examples/).
    pub site: PathBuf,
    /// Show only the N best layouts.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Show only this layout (ids come from content, so they survive re-ranking).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
}

/// Load a site file with the chosen catalog; site problems are bad input (exit 2).
pub fn load_site(g: &Global, path: &std::path::Path) -> Result<(crate::site::Site, crate::catalog::Catalog), Failure> {
    let cat = catalog(g)?;
    let site = crate::site::load(path, &cat).map_err(bad_input)?;
    Ok((site, cat))
}

/// Resolve `--layout ID` against a plan, suggesting ids when it is unknown.
pub fn check_layout_id(plan: &crate::plan::Plan, id: &str) -> Result<(), Failure> {
    if plan.layout(id).is_some() {
        return Ok(());
    }
    let mut ids: Vec<&str> = plan.layouts.iter().map(|l| l.id.as_str()).collect();
    let prefix: Vec<&str> = ids.iter().copied().filter(|x| x.starts_with(id)).collect();
    if prefix.len() == 1 {
        return Err(bad_input(anyhow::anyhow!(
            "--layout {id}: no such layout; did you mean {}?",
            prefix[0]
        )));
    }
    ids.truncate(8);
    Err(bad_input(anyhow::anyhow!(
        "--layout {id}: no such layout in this plan; run `natsplan design` to list them (e.g. {})",
        ids.join(", ")
    )))
}

pub fn run(g: &Global, a: DesignArgs) -> Result<Outcome, Failure> {
    let (site, cat) = load_site(g, &a.site)?;
    if a.top == Some(0) {
        return Err(bad_input(anyhow::anyhow!("--top 0 shows nothing; use --top 1 or more")));
    }
    let plan = crate::plan::build(&site, &cat);
    if let Some(id) = &a.layout {
        check_layout_id(&plan, id)?;
    }
    let sel = Selection {
        top: a.top,
        layout: a.layout,
    };
    let bytes = match format(g) {
        Format::Table => table_report(&plan, &sel, width(g)).into_bytes(),
        Format::Json => json(&plan, &sel),
        Format::Markdown => markdown(&plan, &sel).into_bytes(),
        f => return Err(unsupported_format("design", f, &["table", "json", "markdown"])),
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}
