//! `natsplan design SITE.yaml`: enumerate, check and rank layouts; print the ranked summary and the
//! best layout's details (or the Plan as JSON / Markdown).

use super::{catalog, emit_stdout, format, width};
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
    /// Take the streams from an OpenMessaging Benchmark workload file (one stream per topic, as OMB's NATS
    /// driver creates them); they replace same-named streams of the site file and add to the rest.
    #[arg(long, value_name = "FILE")]
    pub omb: Option<PathBuf>,
    /// How long OMB streams keep messages when the workload file does not say (`retention: 24h`).
    #[arg(long, value_name = "DURATION", requires = "omb")]
    pub omb_retention: Option<String>,
    /// Take the streams from a live cluster: its monitor URLs (comma-separated, every server's for full
    /// coverage), read twice --interval apart for the rates.
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub from_cluster: Vec<String>,
    /// How long to measure a --from-cluster cluster's message rates.
    #[arg(long, value_name = "DURATION", default_value = "10s", requires = "from_cluster")]
    pub interval: String,
}

/// Replace or extend the site's streams with imported ones (`--omb`, `--from-cluster`); notes to stderr.
fn import_workload(site: &mut crate::site::Site, a: &DesignArgs) -> Result<(), Failure> {
    let mut imports = Vec::new();
    if let Some(path) = &a.omb {
        imports.push(crate::import::omb::load(path, a.omb_retention.as_deref()).map_err(bad_input)?);
    }
    if !a.from_cluster.is_empty() {
        let interval = crate::units::parse_duration(&a.interval)
            .map_err(|e| bad_input(anyhow::anyhow!("--interval {}: {e}", a.interval)))?;
        let imp = crate::import::cluster::measure(&a.from_cluster, interval, std::time::Duration::from_secs(5))
            .map_err(crate::error::cannot_run)?;
        imports.push(imp);
    }
    for imp in imports {
        for n in imp
            .notes
            .iter()
            .chain(crate::import::merge(&mut site.workload, &imp).iter())
        {
            eprintln!("natsplan: {n}");
        }
    }
    Ok(())
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

/// The layout `--layout ID` names, else the plan's best; an error when the plan has none.
pub fn chosen_layout<'p>(
    plan: &'p crate::plan::Plan,
    id: Option<&str>,
    site: &std::path::Path,
) -> Result<&'p crate::plan::PlannedLayout, Failure> {
    match id {
        Some(id) => {
            check_layout_id(plan, id)?;
            Ok(plan.layout(id).expect("checked above"))
        }
        None => plan.layouts.first().ok_or_else(|| {
            bad_input(anyhow::anyhow!(
                "{}: no layout could be built for this site; run `natsplan design` to see why",
                site.display()
            ))
        }),
    }
}

pub fn run(g: &Global, a: DesignArgs) -> Result<Outcome, Failure> {
    let (mut site, cat) = load_site(g, &a.site)?;
    import_workload(&mut site, &a)?;
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
        Format::Html => {
            let shown: Vec<(&str, &crate::layout::Layout)> = crate::report::design::selected(&plan, &sel)
                .into_iter()
                .map(|l| (l.id.as_str(), &l.layout))
                .collect();
            let curves =
                crate::perf::curves::PerfCurves::build(&plan.input, &shown, &cat, &crate::perf::Calibration::builtin());
            crate::report::html::design(&plan, &sel, Some(&curves)).into_bytes()
        }
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}
