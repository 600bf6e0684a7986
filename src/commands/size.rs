//! `natsplan size WORKLOAD.yaml`: what to buy for a workload (docs/size.md): candidate bills of materials
//! from the catalog, each planned as design plans a site, priced with `--prices`, on the cost × survival ×
//! headroom frontier.

use crate::cli::Global;
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct SizeArgs {
    /// The workload file: a site file without `racks`, plus a `size:` key (docs/size.md).
    pub workload: PathBuf,
    /// Prices per server, array and disk model, per rack unit and per watt-year, with a currency
    /// (docs/size.md); without it, costs are relative units (typical watts), never invented prices.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
    /// Evaluate at most N bills of materials, cheapest first (their cost is known before planning).
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub budget: usize,
    /// Stop starting bills once the search has spent this many CPU-seconds (all threads; the bill under way
    /// finishes). The output then says the search was cut.
    #[arg(long, value_name = "SECONDS")]
    pub cpu_seconds: Option<f64>,
    /// Plan every bill: no pruning of bills that provably cannot meet policy.min_tolerated (the brute
    /// force the pruned search is tested against; their points then show design's figures).
    #[arg(long)]
    pub exhaustive: bool,
    /// Take streams from an OpenMessaging Benchmark workload file, as design's --omb: merged into every
    /// candidate's site (its site file does not hold them: give design the same --omb).
    #[arg(long, value_name = "FILE")]
    pub omb: Option<PathBuf>,
    /// How long OMB streams keep messages when the workload file does not say (as design's).
    #[arg(long, value_name = "DURATION", requires = "omb")]
    pub omb_retention: Option<String>,
    /// Messages/s of the whole OMB workload to size for (as design's).
    #[arg(long, value_name = "R", requires = "omb")]
    pub omb_rate: Option<f64>,
    /// Take streams from a live cluster's monitor URLs or nats CLI files, as design's --from-cluster.
    #[arg(long, value_name = "URL|FILE", value_delimiter = ',')]
    pub from_cluster: Vec<String>,
    /// How long to measure a --from-cluster cluster's message rates.
    #[arg(long, value_name = "DURATION", default_value = "10s", requires = "from_cluster")]
    pub interval: String,
    /// Write each evaluated bill's site file to DIR (BILL.yaml), for `natsplan design`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Calibration file to predict with besides the built-in ones (as design's --calibration).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// The site you already own: its hardware is kept in every candidate at cost 0, and candidates add
    /// to it what `size:` allows (docs/size.md, "What to add to what you have").
    #[arg(long, value_name = "SITE")]
    pub have: Option<PathBuf>,
    /// Today's layout on the --have site (a design layout id), that migrations start from; default:
    /// design's first-ranked layout of that site as it is.
    #[arg(long, value_name = "ID", requires = "have")]
    pub have_layout: Option<String>,
}

pub fn run(g: &Global, a: SizeArgs) -> Result<Outcome, Failure> {
    if a.budget == 0 {
        return Err(bad_input(anyhow::anyhow!(
            "--budget 0 evaluates nothing; give 1 or more, e.g. --budget 200"
        )));
    }
    if let Some(c) = a.cpu_seconds {
        if !(c.is_finite() && c > 0.0) {
            return Err(bad_input(anyhow::anyhow!(
                "--cpu-seconds {c}: give a number of seconds above 0, e.g. --cpu-seconds 60"
            )));
        }
    }
    let catalog = super::catalog(g)?;
    let file = a.workload.display().to_string();
    let text = crate::input::read_text(&a.workload, "workload file").map_err(bad_input)?;
    let mut w = crate::size::read_workload(&text, &file, &catalog).map_err(bad_input)?;
    imports(&a, &mut w, &catalog)?;
    let cal = match &a.calibration {
        Some(p) => crate::perf::Calibration::with_file(p).map_err(bad_input)?,
        None => crate::perf::Calibration::builtin(),
    };
    have(&a, &text, &mut w, &catalog, &cal)?;
    let prices = prices(&a, &w, &catalog)?;
    let progress = super::progress::Progress::new("sizing: bills evaluated");
    let started = std::time::Instant::now();
    let limits = crate::size::search::Limits {
        budget: a.budget,
        cpu_seconds: a.cpu_seconds,
        prune: !a.exhaustive,
    };
    let s = crate::size::search::run(&w, &catalog, &cal, prices.as_ref(), limits, &|d, t| progress.tick(d, t));
    drop(progress);
    eprintln!(
        "natsplan: size planned {} of {} bills ({} points), pruned {}, in {:.1} s ({:.1} CPU-s){}",
        s.considered,
        s.bills,
        s.points,
        s.pruned.len(),
        started.elapsed().as_secs_f64(),
        s.cpu_seconds,
        match s.cut_by {
            Some(c) => format!("; INCOMPLETE: --{} cut {} bill(s)", c.replace('_', "-"), s.over_budget),
            None => String::new(),
        }
    );
    if let Some(dir) = &a.out {
        write_sites(dir, &s)?;
    }
    super::print(g, &s)?;
    Ok(Outcome::Ok)
}

/// `--have SITE` (and `--have-layout`): the owned site every candidate keeps.
fn have(
    a: &SizeArgs,
    text: &str,
    w: &mut crate::size::WorkloadFile,
    catalog: &crate::catalog::Catalog,
    cal: &crate::perf::Calibration,
) -> Result<(), Failure> {
    let Some(p) = &a.have else { return Ok(()) };
    let t = crate::input::read_text(p, "--have site file").map_err(bad_input)?;
    let args = crate::size::have::HaveArgs {
        text: &t,
        file: &p.display().to_string(),
        workload_text: text,
        layout: a.have_layout.as_deref(),
    };
    let h = crate::size::have::read(&args, w, catalog, cal).map_err(bad_input)?;
    w.have = Some(std::sync::Arc::new(h));
    Ok(())
}

/// `--prices FILE`: every model `size:` allows needs a price, and with `--have` the disk models of the
/// owned arrays that may be topped up.
fn prices(
    a: &SizeArgs,
    w: &crate::size::WorkloadFile,
    catalog: &crate::catalog::Catalog,
) -> Result<Option<crate::size::price::Prices>, Failure> {
    let Some(p) = &a.prices else { return Ok(None) };
    let t = crate::input::read_text(p, "prices file").map_err(bad_input)?;
    let mut needed = crate::size::price::Needed::of_spec(&w.spec);
    if let Some(h) = &w.have {
        needed.disks.extend(h.top_up_disk_models());
        needed.disks.sort();
        needed.disks.dedup();
        needed.from = "the workload's size: key and the --have site's arrays that take more disks".into();
    }
    crate::size::price::read_prices(&t, &p.display().to_string(), &needed, catalog)
        .map(Some)
        .map_err(bad_input)
}

/// `--out DIR`: each planned bill's site file, as `DIR/BILL.yaml`.
fn write_sites(dir: &std::path::Path, s: &crate::size::search::Sizing) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        bad_input(anyhow::anyhow!(
            "--out {}: cannot create the folder: {e}",
            dir.display()
        ))
    })?;
    for (id, site) in &s.sites {
        let p = dir.join(format!("{id}.yaml"));
        std::fs::write(&p, site.as_bytes())
            .map_err(|e| cannot_run(anyhow::anyhow!("--out: cannot write {}: {e}", p.display())))?;
    }
    eprintln!("natsplan: {} site files written to {}", s.sites.len(), dir.display());
    Ok(())
}

/// `--omb` / `--from-cluster`: imported once against the probe site and checked as design checks them,
/// then merged into every candidate's site by the search.
fn imports(a: &SizeArgs, w: &mut crate::size::WorkloadFile, catalog: &crate::catalog::Catalog) -> Result<(), Failure> {
    if a.omb.is_none() && a.from_cluster.is_empty() {
        return Ok(());
    }
    let src = crate::plan::inputs::Sources {
        site: Some(a.workload.clone()),
        omb: a.omb.clone(),
        omb_retention: a.omb_retention.clone(),
        omb_rate: a.omb_rate,
        from_cluster: a.from_cluster.clone(),
        interval: a.interval.clone(),
        ..Default::default()
    };
    let mut probe = crate::size::probe_site(w, catalog).map_err(bad_input)?;
    let (imports, notes) = crate::plan::inputs::imports_into(&src, &mut probe, &a.workload)?;
    for n in notes {
        eprintln!("natsplan: {n}");
    }
    w.imports = imports;
    Ok(())
}
