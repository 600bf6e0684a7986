//! One file per command: its arguments and the glue from arguments to modules to a report on stdout.

pub mod agent;
pub mod bench;
pub mod calibrate;
pub mod check;
pub mod completions;
pub mod design;
pub mod emit;
pub mod lab;
pub mod powerfs;
pub mod predict;
mod progress;
pub mod simulate;
pub mod size;
pub mod verify;
pub mod whatif;

use crate::catalog::Catalog;
use crate::cli::{Cli, Command, Format, Global, PlanArgs};
use crate::error::{bad_input, Failure, Outcome};
use crate::plan::inputs::{Inputs, Loaded};
use crate::plan::Plan;
use crate::report::render::Render;
use std::io::{IsTerminal, Write};
use std::path::Path;

pub fn dispatch(cli: Cli) -> Result<Outcome, Failure> {
    let g = cli.global;
    if let Some(f @ (Format::Nagios | Format::Prometheus)) = g.format {
        if !matches!(cli.command, Command::Check(_)) {
            return Err(bad_input(anyhow::anyhow!(
                "--format {} is for `natsplan check` only; use table, json, markdown, html or csv here (docs/reports.md \
                 says which command writes which)",
                format!("{f:?}").to_ascii_lowercase()
            )));
        }
    }
    match cli.command {
        Command::Design(a) => design::run(&g, a),
        Command::Whatif(a) => whatif::run(&g, a),
        Command::Simulate(a) => simulate::run(&g, a),
        Command::Size(a) => size::run(&g, a),
        Command::Predict(a) => predict::run(&g, *a),
        Command::Emit(a) => emit::run(&g, a),
        Command::Lab(a) => lab::run(&g, a),
        Command::Bench(a) => bench::run(&g, a),
        Command::Verify(a) => verify::run(&g, *a),
        Command::Check(a) => check::run(&g, *a),
        Command::Calibrate(a) => calibrate::run(&g, a),
        Command::Agent(a) => agent::run(&g, a),
        Command::Completions(a) => completions::run(&g, a),
        Command::Man(a) => completions::run_man(&g, a),
        Command::Powerfs(a) => powerfs::run(&g, a),
    }
}

/// The catalog the user asked for: built in, or `--models DIR`.
pub fn catalog(g: &Global) -> Result<Catalog, Failure> {
    crate::plan::inputs::load_catalog(g.models.as_deref())
}

/// The one way a command gets its plan: the inputs the flags name (or a saved `--plan`), loaded by
/// `plan::inputs`, then planned, with the layout the command takes (`layout`: `--layout ID`, else the
/// saved plan's choice, else the best) given per asset (`Inputs::choose`). What an importer assumed goes
/// to stderr.
pub fn load_plan(g: &Global, p: &PlanArgs, site: Option<&Path>, layout: Option<&str>) -> Result<Loaded, Failure> {
    load_plan_then(g, p, site, layout, |_, _| Ok(()))
}

/// As `load_plan`, with `as_built` given the plan as built, before the layout is chosen and given per
/// asset (`design --save` hashes the plan as built).
pub fn load_plan_then(
    g: &Global,
    p: &PlanArgs,
    site: Option<&Path>,
    layout: Option<&str>,
    as_built: impl FnOnce(&Inputs, &mut Plan) -> Result<(), Failure>,
) -> Result<Loaded, Failure> {
    let inputs = Inputs::load(&p.sources(g, site))?;
    for n in &inputs.notes {
        eprintln!("natsplan: {n}");
    }
    let mut plan = {
        let progress = progress::Progress::new("evaluating layouts");
        inputs.plan_with(&|done, total| progress.tick(done, total))?
    };
    as_built(&inputs, &mut plan)?;
    inputs.choose(plan, layout)
}

/// The report format: the flag, else table.
pub fn format(g: &Global) -> Format {
    g.format.unwrap_or(Format::Table)
}

/// Table width: the flag, else the terminal's, else 120.
pub fn width(g: &Global) -> u16 {
    if let Some(w) = g.width {
        return w.max(40);
    }
    if std::io::stdout().is_terminal() {
        if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
            return cols;
        }
    }
    120
}

/// Write a finished report to stdout. A closed pipe (`| head`) is not an error.
pub fn emit_stdout(bytes: &[u8]) -> Result<(), Failure> {
    stream_stdout(|w| w.write_all(bytes))
}

/// Stdout written by `write` as the report is made (through a 1 MiB buffer), with `emit_stdout`'s handling
/// of a closed pipe.
pub fn stream_stdout(write: impl FnOnce(&mut (dyn Write + Send)) -> std::io::Result<()>) -> Result<(), Failure> {
    // Control characters in names natsplan did not write (terminal escapes) are shown, not acted on.
    let mut out = std::io::BufWriter::with_capacity(1 << 20, crate::report::TerminalSafe(std::io::stdout()));
    match write(&mut out).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        // The report may be cut short on stdout: the exit status (3) and this line say it did not finish.
        Err(e) => Err(crate::error::cannot_run(anyhow::anyhow!(
            "cannot write the report to stdout ({e}); what was written is incomplete"
        ))),
    }
}

/// Print a command's result on stdout in the format asked (`--format`, else table) at the table width
/// asked: the one way a report reaches stdout (`report::render`). A format the result has not is bad
/// input; a closed pipe is not an error (`stream_stdout`).
pub fn print<R: Render>(g: &Global, r: &R) -> Result<(), Failure> {
    print_as(r, format(g), width(g))
}

/// `print` in the format `f`.
pub fn print_as<R: Render>(r: &R, f: Format, width: u16) -> Result<(), Failure> {
    refuse_unless::<R>(f)?;
    stream_stdout(|w| r.write_to(f, width, w))
}

/// JSON when asked for, else the table: for the two reports (`lab down`, `verify --faults`) that have
/// always printed their table for every format but JSON, rather than refuse the others.
pub fn json_else_table(f: Format) -> Format {
    match f {
        Format::Json => Format::Json,
        _ => Format::Table,
    }
}

/// Refuse, before the command does its work, a format its result `R` has not, naming the ones it has.
pub fn refuse_unless<R: Render>(f: Format) -> Result<(), Failure> {
    crate::report::render::supports::<R>(f).map_err(|e| bad_input(anyhow::anyhow!(e)))
}

/// Write a result to the file a flag names (`--csv FILE`), whole or not at all; a failure could not run
/// (exit 3) and names the flag.
pub fn save_as<R: Render>(flag: &str, path: &Path, r: &R, f: Format) -> Result<(), Failure> {
    crate::report::render::write_report(path, r, f, 120)
        .map_err(|e| crate::error::cannot_run(anyhow::anyhow!("{flag} {}: cannot write: {e}", path.display())))
}

/// The servers to connect to and the monitors to read, for every command that targets a cluster (bench,
/// calibrate, verify): from the flags (and the nats CLI's variables and contexts), or with `--lab DIR`
/// from the lab's `lab.json` (issue 39: bench and calibrate took NATS_URL and monitor URLs built by hand).
pub fn connect_to(
    conn: &crate::bench::ConnArgs,
    monitors: &[String],
    lab: Option<&std::path::Path>,
) -> Result<(crate::bench::ConnSpec, Vec<String>), Failure> {
    let Some(lab) = lab else {
        return Ok((
            crate::bench::ConnSpec::resolve(conn).map_err(bad_input)?,
            monitors.to_vec(),
        ));
    };
    let st = lab_state(lab)?;
    if st.nodes.is_empty() {
        return Err(bad_input(anyhow::anyhow!(
            "--lab {}: lab.json lists no servers",
            lab.display()
        )));
    }
    let mut args = conn.clone();
    // A selected context (or NATS_URL) is for the user's clusters, not for this loopback lab.
    args.no_context = args.context.is_none();
    let mut spec = crate::bench::ConnSpec::resolve(&args).map_err(bad_input)?;
    spec.servers = st.nodes.iter().map(|n| n.client_url()).collect();
    Ok((spec, st.nodes.iter().map(|n| n.monitor_url()).collect()))
}

/// The record of the lab `--lab` names (DIR, or DIR/lab.json).
pub fn lab_state(lab: &std::path::Path) -> Result<crate::lab::LabState, Failure> {
    // `--lab DIR/lab.json` is the same as `--lab DIR`.
    let dir = if lab.is_file() {
        lab.parent().map(std::path::Path::to_path_buf).unwrap_or_default()
    } else {
        lab.to_path_buf()
    };
    crate::lab::LabState::load(&dir)
        .map_err(|e| bad_input(anyhow::anyhow!("--lab {}: {e:#}", lab.display())))?
        .ok_or_else(|| {
            bad_input(anyhow::anyhow!(
                "--lab {}: no lab there (no lab.json); start one with `natsplan lab up --dir {}`",
                lab.display(),
                dir.display()
            ))
        })
}
