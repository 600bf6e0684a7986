//! `natsplan size WORKLOAD.yaml`: what to buy for a workload (docs/size.md): candidate bills of materials
//! from the catalog, each planned as design plans a site, priced with `--prices`, on the cost × survival ×
//! headroom frontier.

use super::{emit_stdout, format, width};
use crate::cli::{Format, Global};
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
    /// Write each evaluated bill's site file to DIR (BILL.yaml), for `natsplan design`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Calibration file to predict with besides the built-in ones (as design's --calibration).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
}

pub fn run(g: &Global, a: SizeArgs) -> Result<Outcome, Failure> {
    if a.budget == 0 {
        return Err(bad_input(anyhow::anyhow!(
            "--budget 0 evaluates nothing; give 1 or more, e.g. --budget 200"
        )));
    }
    let catalog = super::catalog(g)?;
    let file = a.workload.display().to_string();
    let text = crate::input::read_text(&a.workload, "workload file").map_err(bad_input)?;
    let w = crate::size::read_workload(&text, &file, &catalog).map_err(bad_input)?;
    let prices = match &a.prices {
        Some(p) => {
            let t = crate::input::read_text(p, "prices file").map_err(bad_input)?;
            Some(crate::size::price::read_prices(&t, &p.display().to_string(), &w.spec, &catalog).map_err(bad_input)?)
        }
        None => None,
    };
    let cal = match &a.calibration {
        Some(p) => crate::perf::Calibration::with_file(p).map_err(bad_input)?,
        None => crate::perf::Calibration::builtin(),
    };
    let progress = super::progress::Progress::new("sizing: bills evaluated");
    let started = std::time::Instant::now();
    let s = crate::size::search::run(&w, &catalog, &cal, prices.as_ref(), a.budget, &|d, t| {
        progress.tick(d, t)
    });
    drop(progress);
    eprintln!(
        "natsplan: size evaluated {} of {} bills ({} points) in {:.1} s",
        s.considered,
        s.bills,
        s.candidates.len(),
        started.elapsed().as_secs_f64()
    );
    if let Some(dir) = &a.out {
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
    }
    let bytes = match format(g) {
        Format::Json => crate::report::size::json(&s),
        Format::Table | Format::Nagios | Format::Prometheus => crate::report::size::table(&s, width(g)).into_bytes(),
        other => {
            return Err(bad_input(anyhow::anyhow!(
                "--format {} is not written by size yet; use table or json",
                format!("{other:?}").to_ascii_lowercase()
            )))
        }
    };
    emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}
