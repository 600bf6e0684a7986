//! `natsplan lab up|status|down`: run a plan's cluster (or N plain servers) locally with real nats-server
//! processes on loopback, show it, and remove it.

use crate::cli::{Global, PlanArgs};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::lab::{self, InterruptGuard, Lab, LabLock, LabSpec, LabState, NodeSpec, StartHooks, StartOptions};
use crate::units::SyncMode;
use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub action: LabAction,
}

#[derive(Debug, Subcommand)]
pub enum LabAction {
    /// Start the cluster, wait for a meta leader and a settled route mesh, print its URLs and return
    /// (servers keep running).
    Up(Box<UpArgs>),
    /// Show the lab's servers, the meta leader, and the streams with their replicas.
    Status(DirArgs),
    /// Stop the lab's servers and remove what `lab up` made (also after a crash).
    Down(DownArgs),
}

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Site file whose planned layout to run (with --layout).
    #[arg(value_name = "SITE.yaml", conflicts_with = "nodes")]
    pub site: Option<PathBuf>,
    #[command(flatten)]
    pub inputs: PlanArgs,
    /// Layout id from `natsplan design` (with SITE.yaml or --plan); default: the layout a --plan was saved with, else the best-ranked one (said on stderr).
    #[arg(long, value_name = "ID", conflicts_with = "nodes")]
    pub layout: Option<String>,
    /// Run N plain servers n1..nN (tagged rack:r1..rN) instead of a plan.
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// `always` (fsync every write) or `delayed` (the plan's interval, else 2m); default: the plan's.
    #[arg(long, value_name = "always|delayed")]
    pub sync: Option<String>,
    /// Folder for configurations, stores, logs and lab.json.
    #[arg(long, value_name = "DIR", default_value = "natsplan-lab")]
    pub dir: PathBuf,
    /// nats-server binary (default: $NATS_SERVER_BIN, .tools/bin/nats-server, then PATH).
    #[arg(long, value_name = "PATH")]
    pub nats_server: Option<PathBuf>,
    /// Also create the plan's streams, KV buckets and object stores (the JSON `emit` writes) and the
    /// planned durable consumers (`emit`'s `consumers/`: `STREAM-c1`…), and report any that NATS cannot
    /// place (exit 1; the lab stays up for a look with `lab status`).
    #[arg(long, conflicts_with = "nodes")]
    pub streams: bool,
    /// Give up when the cluster has no meta leader after this long.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub timeout: String,
    /// Put each server's store on natsplan's power-loss layer (FUSE; needs root or fusermount3): writes
    /// not yet fsynced can be dropped as in a power cut (SIGUSR1 to the server's `natsplan powerfs`
    /// process, recorded in lab.json). Dirty data is written back after 30 s. See docs/power-loss.md.
    #[arg(long)]
    pub power_loss_fs: bool,
}

#[derive(Debug, Args)]
pub struct DirArgs {
    /// The folder given to `lab up`.
    #[arg(long, value_name = "DIR", default_value = "natsplan-lab")]
    pub dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct DownArgs {
    #[command(flatten)]
    pub at: DirArgs,
    /// Keep each server's log as DIR/logs/NAME.log (the rest of the lab is removed as always).
    #[arg(long)]
    pub keep_logs: bool,
}

pub fn run(g: &Global, a: LabArgs) -> Result<Outcome, Failure> {
    match a.action {
        LabAction::Up(u) => up(g, *u),
        LabAction::Status(d) => status(g, d),
        LabAction::Down(d) => down(g, d),
    }
}

/// The spec `lab up` starts, from the flags (a plan's layout or N plain servers).
/// The stream definitions of a planned layout, as `emit` writes them: (file, JSON).
/// The stream definitions (file, StreamConfig) and the consumers (stream, ConsumerConfig) `--streams`
/// creates.
type StreamDefs = (Vec<(String, Value)>, Vec<(String, Value)>);

/// The lab's spec, the stream definitions to create, and the planned layout to record in lab.json.
fn spec_from_args(g: &Global, u: &UpArgs, dir: &Path) -> Result<(LabSpec, StreamDefs, Option<lab::LabPlan>), Failure> {
    let sync_flag = |plan_sync: SyncMode| -> Result<SyncMode, Failure> {
        match u.sync.as_deref().map(|s| s.trim().to_ascii_lowercase()) {
            None => Ok(plan_sync),
            Some(s) if s == "always" => Ok(SyncMode::Always),
            Some(s) if s == "delayed" => Ok(match plan_sync {
                SyncMode::Always => SyncMode::Interval(120),
                d => d,
            }),
            Some(other) => Err(bad_input(anyhow!(
                "--sync '{other}' is not understood; use --sync always or --sync delayed"
            ))),
        }
    };
    let planned = u.site.is_some() || u.inputs.plan.is_some();
    if planned && u.nodes.is_some() {
        return Err(bad_input(anyhow!(
            "--nodes runs plain servers; it cannot be combined with a plan (SITE.yaml or --plan)"
        )));
    }
    match (planned, u.nodes) {
        (true, _) => {
            let loaded = super::load_plan(g, &u.inputs, u.site.as_deref(), u.layout.as_deref())?;
            let (inputs, plan) = (&loaded.inputs, &loaded.plan);
            if let Some(note) = inputs.layout_note(plan, u.layout.as_deref()) {
                eprintln!("natsplan: {note}");
            }
            let pl = loaded.layout()?;
            crate::input::limits::LAB_SERVERS
                .check_usize(pl.servers.len())
                .map_err(|e| bad_input(anyhow!("--layout {} has {} servers: {e}", pl.id, pl.servers.len())))?;
            let sync = sync_flag(plan.input.nats.sync)?;
            let mut defs: StreamDefs = Default::default();
            if u.streams {
                let files =
                    crate::emit::render(plan, &pl.id, &crate::emit::EmitOptions::default()).map_err(bad_input)?;
                for (path, text) in files {
                    if path.extension().is_some_and(|e| e == "json") {
                        let v: Value = serde_json::from_str(&text).map_err(|e| cannot_run(anyhow!(e)))?;
                        defs.0.push((path.display().to_string(), v));
                    }
                }
                // The consumers emit writes (no deploy file here: the placeholders `<stream>-c1`…), each with
                // its stream's replicas, as `emit::consumers::files` gives them.
                let deploy = crate::emit::deploy::Deploy::default();
                for (stream, list, _) in crate::emit::consumers::specs(plan, &deploy) {
                    let replicas = defs
                        .0
                        .iter()
                        .find(|(_, v)| v["name"].as_str() == Some(stream.as_str()))
                        .and_then(|(_, v)| v["num_replicas"].as_u64())
                        .unwrap_or(1);
                    for c in &list {
                        let cfg = crate::emit::consumers::consumer_json(c, replicas.min(u8::MAX as u64) as u8);
                        defs.1.push((stream.clone(), cfg));
                    }
                }
            }
            // Files the plan can be read from again (absolute: verify may run from another folder); a plan
            // built from --omb or --from-cluster cannot, so only its layout is recorded.
            let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            let files = u.inputs.omb.is_none() && u.inputs.from_cluster.is_empty();
            let record = lab::LabPlan {
                layout: pl.id.clone(),
                site: u.site.as_deref().filter(|_| files && u.inputs.plan.is_none()).map(abs),
                plan: u.inputs.plan.as_deref().map(abs),
                models: g.models.as_deref().map(abs),
                calibration: u.inputs.calibration.as_deref().map(abs),
            };
            Ok((
                lab::spec::for_layout(plan, pl, sync, dir.to_path_buf()),
                defs,
                Some(record),
            ))
        }
        (false, Some(n)) => {
            crate::input::limits::LAB_SERVERS
                .check_usize(n)
                .map_err(|e| bad_input(anyhow!("--nodes {n}: {e}")))?;
            let sync = sync_flag(SyncMode::Interval(120))?;
            let mut spec = LabSpec::plain(n, dir);
            for (i, node) in spec.nodes.iter_mut().enumerate() {
                *node = NodeSpec::new(format!("n{}", i + 1), &[&format!("rack:r{}", i + 1)]);
            }
            spec.sync = sync;
            Ok((spec, Default::default(), None))
        }
        (false, None) => Err(bad_input(anyhow!(
            "lab up needs either SITE.yaml --layout ID (a planned layout), --plan FILE, or --nodes N (plain servers)"
        ))),
    }
}

fn up(g: &Global, u: UpArgs) -> Result<Outcome, Failure> {
    super::refuse_unless::<lab::status::UpReport>(super::format(g))?;
    let timeout = crate::units::parse_duration(&u.timeout).map_err(|e| bad_input(anyhow!("--timeout: {e}")))?;
    let mut created_dir = !u.dir.exists();
    let (spec, defs, planned) = spec_from_args(g, &u, &u.dir)?;
    let bin = lab::find_nats_server(u.nats_server.as_deref()).map_err(cannot_run)?;
    std::fs::create_dir_all(&u.dir)
        .with_context(|| format!("--dir: cannot create {}", u.dir.display()))
        .map_err(cannot_run)?;
    // One natsplan at a time in a lab folder: held until this one returns.
    let _lock = LabLock::take(&u.dir).map_err(cannot_run)?;
    clean_before_up(&u, &mut created_dir)?;
    let guard = InterruptGuard::install();
    let opts = StartOptions {
        detached: true,
        timeout,
        power_fs: u.power_loss_fs.then(lab::PowerFs::default),
        ..StartOptions::default()
    };
    // Record the pids as soon as the processes exist, so a natsplan killed mid-start leaves a record that
    // `lab down` and the next `lab up` clean up.
    let record = |st: &LabState| -> anyhow::Result<()> {
        LabState {
            created_dir,
            ..st.clone()
        }
        .save()
    };
    let hooks = StartHooks {
        cancel: Some(guard.flag()),
        on_spawned: Some(&record),
    };
    let started = Lab::start_with(spec, &bin, &opts, &hooks);
    let lab = match started {
        Ok(l) => l,
        Err(e) => {
            // Whatever started was killed when the failed Lab dropped; remove the files too.
            if let Ok(Some(st)) = LabState::load(&u.dir) {
                let _ = st.teardown(Duration::from_secs(2), true);
            }
            return Err(cannot_run(e));
        }
    };
    let leader = lab.meta_leader().ok();
    let created = if defs.0.is_empty() {
        lab::status::Created::default()
    } else {
        lab::status::create_streams(&lab.client_urls(), &defs.0, &defs.1)
    };
    let startup_s = lab.startup().as_secs_f64();
    let st = LabState {
        created_dir,
        plan: planned,
        ..lab.detach()
    };
    st.save().map_err(cannot_run)?;
    drop(guard);
    let report = lab::status::UpReport {
        dir: st.dir.clone(),
        cluster_name: st.cluster_name.clone(),
        meta_leader: leader,
        startup_s,
        client_urls: st.nodes.iter().map(|n| n.client_url()).collect(),
        monitor_urls: st.nodes.iter().map(|n| n.monitor_url()).collect(),
        servers: st.nodes.iter().map(lab::status::ServerRow::from_node).collect(),
        streams: created.streams,
        consumers: created.consumers,
        system_user: crate::emit::conf::SYSTEM_USER.into(),
    };
    super::print(g, &report)?;
    eprintln!(
        "natsplan: monitoring at {}; verify this lab with `natsplan verify --lab {}`",
        report.monitor_urls.join(","),
        st.dir.display()
    );
    Ok(up_outcome(&report))
}

/// Before `lab up` starts servers in `u.dir`: stop a lab left behind there (natsplan or the machine
/// crashed, or `lab down` was never run), and clean up the power-loss probes of earlier runs.
fn clean_before_up(u: &UpArgs, created_dir: &mut bool) -> Result<(), Failure> {
    // A lab left behind (natsplan or the machine crashed, or `lab down` was never run): clean it first.
    // The record is held to this folder (`LabState::load`); one that is not is refused, untouched.
    if let Some(old) = LabState::load(&u.dir).map_err(bad_input)? {
        *created_dir |= old.created_dir;
        let stopped = old.teardown(Duration::from_secs(5), false).map_err(cannot_run)?;
        if !stopped.is_empty() {
            eprintln!(
                "natsplan: stopped {} server(s) of the earlier lab in {}: {}",
                stopped.len(),
                u.dir.display(),
                stopped.join(", ")
            );
        }
    }
    if u.power_loss_fs {
        let cleaned = crate::powerfs::probe().map_err(|e| cannot_run(anyhow!("--power-loss-fs: {e}")))?;
        say_probes_cleaned(&cleaned);
    } else {
        clean_dead_probes();
    }
    Ok(())
}

/// A lab that is up: fails the check when NATS could not create some of the plan's streams or consumers.
fn up_outcome(report: &lab::status::UpReport) -> Outcome {
    let failed: Vec<String> = report
        .streams
        .iter()
        .filter_map(|s| s.error.as_ref().map(|e| format!("{}: {e}", s.name)))
        .collect();
    if !failed.is_empty() {
        return Outcome::CheckFailed(format!(
            "the lab is up but NATS could not create {} of the plan's streams: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    let failed: Vec<String> = report
        .consumers
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| format!("{}/{}: {e}", c.stream, c.name)))
        .collect();
    if !failed.is_empty() {
        return Outcome::CheckFailed(format!(
            "the lab is up but NATS could not create {} of the plan's consumers: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    Outcome::Ok
}

fn load_state(dir: &Path) -> Result<LabState, Failure> {
    LabState::load(dir).map_err(bad_input)?.ok_or_else(|| {
        bad_input(anyhow!(
            "--dir {}: no lab there (no lab.json); start one with `natsplan lab up --dir {}`",
            dir.display(),
            dir.display()
        ))
    })
}

fn status(g: &Global, d: DirArgs) -> Result<Outcome, Failure> {
    super::refuse_unless::<lab::status::StatusReport>(super::format(g))?;
    let st = load_state(&d.dir)?;
    super::print(g, &lab::status::collect_status(&st))?;
    Ok(Outcome::Ok)
}

/// Say on stderr which dead FUSE probe mounts (a `--power-loss-fs` probe killed mid-way) were removed.
pub(crate) fn say_probes_cleaned(cleaned: &[std::path::PathBuf]) {
    if !cleaned.is_empty() {
        let names: Vec<String> = cleaned.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "natsplan: unmounted {} dead FUSE mount(s) a killed --power-loss-fs probe left, and removed their temp \
             folders: {}",
            cleaned.len(),
            names.join(", ")
        );
    }
}

/// Remove the dead mounts killed FUSE probes left (`lab up` and `lab down` do, whatever the lab); one
/// that cannot be removed is said, never fatal to the command.
fn clean_dead_probes() {
    match crate::powerfs::mounts::clean_dead_probes() {
        Ok(cleaned) => say_probes_cleaned(&cleaned),
        Err(e) => eprintln!(
            "natsplan: warning: a dead FUSE mount a killed --power-loss-fs probe left could not be removed ({e}); \
             as root: grep natsplan-powerfs /proc/self/mountinfo, then umount -l MOUNTPOINT"
        ),
    }
}

fn down(g: &Global, a: DownArgs) -> Result<Outcome, Failure> {
    let d = a.at;
    let fmt = super::format(g);
    clean_dead_probes();
    let _lock = match d.dir.is_dir() {
        true => Some(LabLock::take(&d.dir).map_err(cannot_run)?),
        false => None,
    };
    // `lab down` prints its line for every format but JSON, as it always has.
    let shown = super::json_else_table(fmt);
    let Some(st) = LabState::load(&d.dir).map_err(bad_input)? else {
        let report = crate::report::lab::Down {
            dir: &d.dir,
            removed: None,
        };
        super::print_as(&report, shown, super::width(g))?;
        return Ok(Outcome::Ok);
    };
    let (stopped, logs) = st
        .teardown_keeping(Duration::from_secs(5), true, a.keep_logs)
        .map_err(cannot_run)?;
    let report = crate::report::lab::Down {
        dir: &st.dir,
        removed: Some(crate::report::lab::Removed {
            stopped,
            keep_logs: a.keep_logs,
            logs,
        }),
    };
    super::print_as(&report, shown, super::width(g))?;
    Ok(Outcome::Ok)
}
