//! `natsplan calibrate`: flags → `calibrate::CalibrateOptions`, measure, write the calibration file, print
//! what was measured and how well it fitted. Exit 2 on bad flags (a budget too small to measure anything,
//! an unwritable --out, an unknown sync mode), 3 when the cluster cannot be reached or measured, 130 when
//! SIGINT/SIGTERM stopped it (the run in progress removes its assets; no file is written).

use crate::bench::ConnArgs;
use crate::calibrate::{self, CalibrateOptions};
use crate::cli::Global;
use crate::error::{bad_input, Failure, Outcome};
use crate::perf::SyncClass;
use anyhow::anyhow;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Monitoring URLs (http://host:8222), comma separated: version, cluster size, sync mode and store
    /// filesystem for the provenance; default: port 8222 on each server's host.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub monitor: Vec<String>,
    /// Time to spend measuring (5m, 90s): fewer points, repeats and shorter runs fit a smaller budget.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub budget: String,
    /// What the cluster runs on, recorded in the file (e.g. "3 x 16-core, NVMe RAID 1, 25 GbE").
    #[arg(long, value_name = "TEXT")]
    pub hardware: Option<String>,
    /// The calibration file to write (YAML, replaced atomically).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The file's id, cited by predictions (default: from the file name).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The cluster's sync mode when no monitoring port answers (/varz tells it otherwise).
    #[arg(long, value_name = "always|delayed")]
    pub sync: Option<String>,
    /// Calibrate a lab from `natsplan lab up`: its folder (or its lab.json) gives the servers and their
    /// monitoring URLs; nats CLI contexts are not read unless --context names one.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["server", "monitor"])]
    pub lab: Option<PathBuf>,
}

pub fn run(g: &Global, a: CalibrateArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    super::refuse_unless::<calibrate::CalibrateReport>(format)?;
    let budget = crate::units::parse_duration(&a.budget).map_err(|e| {
        bad_input(anyhow!(
            "--budget '{}': {e}; e.g. --budget 5m or --budget 90s",
            a.budget
        ))
    })?;
    for m in &a.monitor {
        if !m.starts_with("http://") {
            return Err(bad_input(anyhow!(
                "--monitor '{m}': give an http:// URL of a server's monitoring port, e.g. http://127.0.0.1:8222"
            )));
        }
    }
    let sync = match a.sync.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
        None => None,
        Some(s) if s == "always" => Some(SyncClass::Always),
        Some(s) if s == "delayed" => Some(SyncClass::Delayed),
        Some(s) => {
            return Err(bad_input(anyhow!(
                "--sync '{s}' is not understood; use --sync always or --sync delayed"
            )))
        }
    };
    let (conn, monitors) = super::connect_to(&a.conn, &a.monitor, a.lab.as_deref())?;
    let opts = CalibrateOptions {
        conn,
        monitors,
        budget_s: budget.as_secs_f64(),
        hardware: a.hardware.clone(),
        out: a.out.clone(),
        id: a.id.clone(),
        sync,
        catalog: super::catalog(g)?,
        cancel: crate::bench::Cancel::new(),
    };
    let log = |s: &str| eprintln!("{s}");
    let rep = match calibrate::run(&opts, &log) {
        Ok(rep) => rep,
        Err(crate::error::Failure::CannotRun(e)) if e.downcast_ref::<calibrate::Interrupted>().is_some() => {
            return Ok(Outcome::Interrupted(format!("calibrate: {e}")));
        }
        Err(e) => return Err(e),
    };
    super::print(g, &rep)?;
    Ok(Outcome::Ok)
}
