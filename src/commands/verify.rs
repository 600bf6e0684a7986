//! `natsplan verify`: flags → `verify::VerifyOptions`, run the ladder, write `DIR/<utc>/` (results.json,
//! BENCH.md, results.csv) and print the report. Exit 1 when a row is outside its band by more than
//! `--tolerance` (or failed) or the cluster drifted from the layout (never for --dry-run), 2 on bad flags or
//! a refused `--max-bytes`, 3 when the cluster is unreachable. With `--agents N` the load comes from `natsplan
//! agent` processes; a row an agent did not finish is INCOMPLETE and exits 1 too. SIGINT/SIGTERM stop the
//! row running (its assets removed), write the finished rows with the run marked `interrupted`, exit 130.

use crate::bench::{ConnArgs, ConnSpec};
use crate::cli::{Format, Global, PlanArgs};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::plan::inputs::{load_calibration, Inputs};
use crate::plan::Plan;
use crate::verify::{self, ladder::Ladder, report, Baseline, VerifyOptions};
use anyhow::anyhow;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Monitoring URLs (http://host:8222), comma separated; default: port 8222 on each server's host.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub monitor: Vec<String>,
    /// Verify a lab from `natsplan lab up`: its folder (or its lab.json) gives the servers' client and
    /// monitoring URLs. nats CLI contexts are not read unless --context names one.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["server", "monitor", "faults"])]
    pub lab: Option<PathBuf>,
    /// Site file of the plan to compare with (with --layout): drift, and the volume and server model the
    /// predictions use.
    #[arg(long, value_name = "SITE.yaml")]
    pub site: Option<PathBuf>,
    /// Layout id from `natsplan design` (with --site or --plan); default: the layout a --plan was saved with, else the best-ranked one (said on stderr).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// quick: a subset that runs in about a minute; full: seed 004's rows, KV, every object size both
    /// ways and the fixed-rate ladder.
    #[arg(long, value_enum, default_value_t = Ladder::Quick)]
    pub ladder: Ladder,
    /// Results go to DIR/<utc-timestamp>/.
    // The doc comment is the --help text, where `<utc-timestamp>` reads as meant; rustdoc takes it for HTML.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(long, value_name = "DIR", default_value = "natsplan-verify")]
    pub out: PathBuf,
    /// A row fails when it is outside its band by more than this fraction of the band's edge.
    #[arg(long, value_name = "F", default_value = "0.1")]
    pub tolerance: String,
    /// Refuse to run when the ladder would write more than N bytes over all replicas (1GiB, 500MB...).
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<String>,
    /// Time budget per row in seconds: counts are scaled so each row takes about this long.
    #[arg(long, value_name = "S")]
    pub row_seconds: Option<String>,
    /// Run every row N times back to back: the median rate is judged against the band and the runs'
    /// spread ((max − min) ÷ median) is reported beside it.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=20), conflicts_with = "faults")]
    pub repeat: u32,
    /// Print the rows that would run (with predictions and bytes) and exit 0.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep the natsplan-* streams, buckets and object stores the rows create.
    #[arg(long)]
    pub keep: bool,
    /// Inject real failures (kill -9, SIGSTOP, restarts, a wiped store, a full store, network partitions)
    /// into a lab of its own and check the whatif predictions; with --site/--layout the lab runs that
    /// layout's servers and whole racks fail; --ladder full runs the longer holds.
    #[arg(long)]
    pub faults: bool,
    /// Generate every row's load on N `natsplan agent` processes (other client hosts) instead of here;
    /// a row an agent did not finish is INCOMPLETE and fails the check (exit 1).
    #[arg(long, value_name = "N", value_parser = super::bench::parse_agents, conflicts_with = "faults")]
    pub agents: Option<usize>,
    /// With --agents: how long to wait for N idle agents to answer.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::units::parse_duration, requires = "agents")]
    pub agents_timeout: std::time::Duration,
    /// Only these --faults scenarios, comma separated (follower-kill, leader-kill, leader-pause,
    /// majority-kill, all-kill, rolling-restart, leader-partition, full-limit, full-disk, rack-power,
    /// rack-net, meta-majority-kill, follower-wipe, power-server, power-quorum, power-all,
    /// power-crash-pause, power-rack, and with --recover two-stores-lost, leader-replace,
    /// meta-quorum-lost); default: all of the ladder (with --recover, those three last).
    #[arg(long, value_delimiter = ',', value_name = "NAMES", requires = "faults")]
    pub scenarios: Vec<String>,
    /// With --faults on a planned layout: whole-rack scenarios only for these racks (comma separated).
    #[arg(long, value_delimiter = ',', value_name = "RACKS", requires = "faults")]
    pub racks: Vec<String>,
    /// Lab size for --faults (at least 3; with --site/--layout the layout's servers are the lab).
    #[arg(long, value_name = "N", default_value_t = 3, requires = "faults")]
    pub nodes: usize,
    /// With --faults: the lab's sync_interval, `always` or `delayed` (2m; a plan's own interval when it
    /// has one); the predictions use the same. Default: delayed, or the plan's.
    #[arg(long, value_name = "always|delayed", requires = "faults")]
    pub sync: Option<String>,
    /// With --faults: after each destructive scenario's fault, carry out whatif's own recovery steps for
    /// it on the lab, in order (restart, free space, peer-remove, rejoin under a new name, META.RESCUE,
    /// waits; hardware steps recorded as simulated), then judge the end state under load (docs/faults.md).
    #[arg(long)]
    pub recover: bool,
}

fn parse_f64(flag: &str, v: &str, range: std::ops::RangeInclusive<f64>, fix: &str) -> Result<f64, Failure> {
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| bad_input(anyhow!("--{flag} '{v}' is not a number; {fix}")))?;
    if !x.is_finite() || !range.contains(&x) {
        return Err(bad_input(anyhow!(
            "--{flag} {v} is out of range {}..{}; {fix}",
            range.start(),
            range.end()
        )));
    }
    Ok(x)
}

/// The plan and layout to compare with, when `--site` or `--plan` names one (`--layout` or the saved
/// plan's choice picks the layout).
fn planned(g: &Global, a: &VerifyArgs) -> Result<Option<(Inputs, Plan, String)>, Failure> {
    if a.site.is_none() && a.inputs.plan.is_none() {
        if a.layout.is_some() {
            return Err(bad_input(anyhow!(
                "--layout needs the plan it comes from: --site SITE.yaml or --plan FILE"
            )));
        }
        return Ok(None);
    }
    let loaded = super::load_plan(g, &a.inputs, a.site.as_deref(), a.layout.as_deref())?;
    if let Some(note) = loaded.inputs.layout_note(&loaded.plan, a.layout.as_deref()) {
        eprintln!("natsplan: {note}");
    }
    // The whole id from here on (`--layout` may give the tables' short form).
    let id = loaded.layout()?.id.clone();
    Ok(Some((loaded.inputs, loaded.plan, id)))
}

/// The servers to connect to and the monitors to read: from the flags (and the nats CLI's variables and
/// contexts), or from a lab's `lab.json` with `--lab`.
fn connection(a: &VerifyArgs) -> Result<(ConnSpec, Vec<String>), Failure> {
    super::connect_to(&a.conn, &a.monitor, a.lab.as_deref())
}

/// `verify --lab DIR` with no --site, --plan or --layout: the plan the lab was started from (`lab up`
/// records it in lab.json), said on stderr; None for a lab of plain servers, or one planned from what
/// files cannot give again (--omb, --from-cluster), which is said too.
fn planned_by_lab(g: &Global, a: &VerifyArgs) -> Result<Option<(Inputs, Plan, String)>, Failure> {
    let Some(lab) = a.lab.as_deref() else {
        return Ok(None);
    };
    if a.site.is_some() || a.inputs.plan.is_some() || a.layout.is_some() {
        return Ok(None);
    }
    let Some(rec) = super::lab_state(lab)?.plan else {
        return Ok(None);
    };
    if rec.site.is_none() && rec.plan.is_none() {
        eprintln!(
            "natsplan: the lab runs layout {}, planned from --omb or --from-cluster: give --site or --plan to \
             compare with it",
            rec.layout
        );
        return Ok(None);
    }
    let inputs_args = crate::cli::PlanArgs {
        plan: rec.plan.clone(),
        calibration: a.inputs.calibration.clone().or(rec.calibration.clone()),
        ..a.inputs.clone()
    };
    let mut g = g.clone();
    if g.models.is_none() {
        g.models = rec.models.clone();
    }
    let loaded = super::load_plan(&g, &inputs_args, rec.site.as_deref(), Some(&rec.layout))?;
    let id = loaded.layout()?.id.clone();
    eprintln!(
        "natsplan: comparing with layout {id} of {}, which `lab up` started this lab from",
        rec.plan
            .as_ref()
            .or(rec.site.as_ref())
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    );
    Ok(Some((loaded.inputs, loaded.plan, id)))
}

/// `verify --faults`: inject real failures into a lab of its own and check the whatif predictions.
fn run_faults(g: &Global, a: &VerifyArgs, format: Format) -> Result<Outcome, Failure> {
    use crate::faults::{run_saved, FaultKind, FaultOptions};
    if a.nodes < 3 {
        return Err(bad_input(anyhow!(
            "--nodes {}: --faults needs at least 3 servers for an R3 stream",
            a.nodes
        )));
    }
    crate::input::limits::FAULT_LAB_SERVERS
        .check_usize(a.nodes)
        .map_err(|e| bad_input(anyhow!("--nodes {}: {e}", a.nodes)))?;
    let mut opts = match a.ladder {
        Ladder::Full => FaultOptions::full(a.nodes),
        Ladder::Quick => FaultOptions::quick(a.nodes, &FaultKind::ladder()),
    };
    // A planned layout: the lab runs its servers and the scenarios add whole-rack failures.
    if let Some((inputs, plan, id)) = planned(g, a)? {
        let target = crate::faults::PlanTarget::from_plan(&plan, &id, &inputs.site_path.display().to_string())
            .map_err(bad_input)?;
        opts = opts.on_plan(target);
    }
    // Rack names are checked here so a typo is bad input (exit 2), not a run that could not start.
    let known: Vec<String> = match &opts.target {
        Some(t) => t.site.racks.iter().map(|r| r.name.clone()).collect(),
        None => (1..=a.nodes).map(|i| format!("r{i}")).collect(),
    };
    for n in &a.racks {
        if !known.contains(n) {
            return Err(bad_input(anyhow!(
                "--racks {n}: no such rack {}; the racks are {}",
                if opts.target.is_some() {
                    "in the site"
                } else {
                    "in a plain lab (one per server)"
                },
                known.join(", ")
            )));
        }
    }
    opts.racks = a.racks.clone();
    if let Some(s) = &a.sync {
        opts = match s.trim().to_ascii_lowercase().as_str() {
            "always" => opts.with_sync(crate::units::SyncMode::Always),
            "delayed" if opts.sync == crate::units::SyncMode::Always => {
                opts.with_sync(crate::units::SyncMode::Interval(120))
            }
            "delayed" => opts,
            other => {
                return Err(bad_input(anyhow!(
                    "--sync '{other}' is not understood; use --sync always or --sync delayed"
                )))
            }
        };
    }
    if !a.scenarios.is_empty() {
        opts.scenarios = a
            .scenarios
            .iter()
            .map(|n| FaultKind::parse(n.trim()).map_err(|e| bad_input(anyhow!("--scenarios: {e}"))))
            .collect::<Result<_, _>>()?;
    }
    opts.recover = a.recover;
    if a.recover && a.scenarios.is_empty() {
        opts.scenarios.extend(FaultKind::recover_ladder());
    }
    let (report, folder) = run_saved(&opts, Some(&a.out), &|m| eprintln!("{m}")).map_err(cannot_run)?;
    if let Some(f) = folder {
        eprintln!("results in {}", f.display());
    }
    let failed = report.failed();
    // The fault report is a table or JSON; verify's other formats print its table, as they always have.
    let shown = super::json_else_table(format);
    super::print_as(&report, shown, super::width(g))?;
    if report.interrupted {
        let done = report.scenarios.iter().filter(|s| s.skipped.is_none()).count();
        return Ok(Outcome::Interrupted(format!(
            "verify --faults: interrupted after {done} finished scenario(s); they are reported and written, the lab, its mounts and namespaces were removed"
        )));
    }
    Ok(if failed {
        Outcome::CheckFailed("fault verification: a prediction disagreed or an acknowledged write was lost".into())
    } else {
        Outcome::Ok
    })
}

pub fn run(g: &Global, a: VerifyArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    if a.recover && !a.faults {
        return Err(bad_input(anyhow!(
            "--recover works only with --faults: it carries out whatif's recovery steps after each fault \
             scenario on the lab --faults starts; add --faults (e.g. natsplan verify --faults --recover --nodes 5)"
        )));
    }
    if a.faults && a.dry_run {
        // It was ignored: `--faults --dry-run` started a lab and injected the faults.
        return Err(bad_input(anyhow!(
            "--dry-run works only with the ladder: it lists the rows and connects to nothing, while --faults starts \
             a lab of its own and has no dry run; leave out --dry-run (--scenarios NAME,... runs fewer), or see the \
             scenarios and their predictions with `natsplan whatif`"
        )));
    }
    if a.faults {
        return run_faults(g, &a, format);
    }
    let opts = options(g, &a)?;
    let log = |s: &str| eprintln!("{s}");
    let rep = match a.agents {
        Some(n) => {
            let mut ao = crate::agent::AgentsOptions::new(n);
            ao.discover_timeout = a.agents_timeout;
            verify::run_with_agents(&opts, &ao, &log)
        }
        None => verify::run(&opts, &log),
    }?;
    if !a.dry_run {
        let dir = write_results(&a.out, &rep).map_err(cannot_run)?;
        eprintln!("verify: results in {}", dir.display());
    }
    super::print(g, &rep)?;
    if a.dry_run {
        return Ok(Outcome::Ok);
    }
    Ok(outcome(&rep, opts.tolerance))
}

/// The flags and inputs of `verify` as the options of a run: tolerance, row length and byte cap parsed,
/// monitors checked, the plan (given or the lab's) with its catalog and calibration.
fn options(g: &Global, a: &VerifyArgs) -> Result<VerifyOptions, Failure> {
    let tolerance = parse_f64("tolerance", &a.tolerance, 0.0..=100.0, "e.g. --tolerance 0.1 for 10 %")?;
    let row_seconds = match &a.row_seconds {
        Some(v) => parse_f64("row-seconds", v, 0.05..=3600.0, "e.g. --row-seconds 5")?,
        None => match a.ladder {
            Ladder::Quick => 4.0,
            Ladder::Full => 15.0,
        },
    };
    let max_bytes = match &a.max_bytes {
        Some(v) => {
            Some(crate::units::parse_size(v).map_err(|e| bad_input(anyhow!("--max-bytes '{v}': {e}; e.g. 1GiB")))?)
        }
        None => None,
    };
    for m in &a.monitor {
        if !m.starts_with("http://") {
            return Err(bad_input(anyhow!(
                "--monitor '{m}': give an http:// URL of a server's monitoring port, e.g. http://127.0.0.1:8222"
            )));
        }
    }
    let (conn, monitors) = connection(a)?;
    let planned = match planned(g, a)? {
        Some(p) => Some(p),
        None => planned_by_lab(g, a)?,
    };
    let (catalog, calibration, calibration_label, target) = match planned {
        Some((inputs, plan, id)) => (
            inputs.catalog,
            inputs.calibration,
            inputs.calibration_label,
            Some(Baseline {
                plan,
                layout_id: id,
                site: inputs.site_path.display().to_string(),
            }),
        ),
        None => {
            let (cal, label) = load_calibration(a.inputs.calibration.as_deref())?;
            (super::catalog(g)?, cal, label, None)
        }
    };
    Ok(VerifyOptions {
        conn,
        monitors,
        ladder: a.ladder,
        tolerance,
        row_seconds,
        repeat: a.repeat,
        max_bytes,
        dry_run: a.dry_run,
        keep: a.keep,
        calibration,
        calibration_label,
        catalog,
        target,
        cancel: crate::bench::Cancel::new(),
        load: None,
    })
}

/// What a finished (not dry) run of `verify` says: interrupted, drift, incomplete rows, rows outside their
/// band, or fine.
fn outcome(rep: &report::VerifyReport, tolerance: f64) -> Outcome {
    if rep.interrupted {
        let done = rep
            .rows
            .iter()
            .filter(|r| r.measured.is_some() && r.status != report::RowStatus::Interrupted)
            .count();
        return Outcome::Interrupted(format!(
            "verify was interrupted: {done} row(s) finished and written, the rest not run"
        ));
    }
    let drift_items = rep.drift.as_ref().map(|d| d.items.len()).unwrap_or(0);
    if drift_items > 0 {
        return Outcome::CheckFailed(format!(
            "{drift_items} drift item(s) between the cluster and layout {}{}",
            rep.config.layout.as_deref().unwrap_or_default(),
            if rep.failed_rows > 0 {
                format!("; {} row(s) outside their band", rep.failed_rows)
            } else {
                String::new()
            }
        ));
    }
    let incomplete = rep
        .rows
        .iter()
        .filter(|r| r.status == report::RowStatus::Incomplete)
        .count();
    if incomplete > 0 {
        return Outcome::CheckFailed(format!(
            "{incomplete} row(s) INCOMPLETE: an agent did not finish its share (see each row's agents)"
        ));
    }
    if rep.failed_rows > 0 {
        return Outcome::CheckFailed(format!(
            "{} row(s) outside their band by more than --tolerance {tolerance}",
            rep.failed_rows
        ));
    }
    Outcome::Ok
}

/// Write results.json, BENCH.md, results.csv and report.html into `dir/<utc-timestamp>/`; returns that folder.
fn write_results(dir: &Path, r: &report::VerifyReport) -> anyhow::Result<PathBuf> {
    use crate::report::render;
    let out = render::unused_folder(dir, &r.generated_at.replace(['-', ':'], ""));
    render::write_results(&out, r, crate::report::verify::RESULT_FILES, 120)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Wrap {
        #[command(flatten)]
        a: VerifyArgs,
    }

    #[test]
    fn the_scenarios_help_names_every_fault_scenario() {
        let cmd = Wrap::command();
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == "scenarios")
            .expect("--scenarios");
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        for k in crate::faults::FaultKind::ALL {
            assert!(help.contains(k.name()), "--scenarios help lacks {}: {help}", k.name());
        }
    }
}
