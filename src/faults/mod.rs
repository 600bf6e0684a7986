//! Fault verification (`verify --faults`, issue 8): start a lab cluster of our own, inject real failures
//! (kill -9, SIGSTOP, restarts, a wiped store, a full store on a small tmpfs, network partitions between
//! per-server network namespaces) while a throttled publisher writes uniquely-identified messages, heal,
//! read everything back and check it as Jepsen does, then compare the outcome with what
//! `survival::evaluate` predicts for the same failure-domain selectors — on a layout shaped like the lab,
//! or on a planned layout whose servers the lab runs (`--site --layout`), with whole racks failed.

mod check;
mod report;
pub mod sandbox;

pub use check::{check, longest_gap_s, Attempt, Outcome};
pub use report::{json, table, write_results, Check, FaultReport, ReplicaState, ScenarioResult};

use crate::lab::{self, Lab, LabSpec, NodeSpec, StartHooks, StartOptions};
use crate::layout::{Asset, AssetKind, Layout, Raid};
use crate::monitor;
use crate::site::{Pattern, Site};
use crate::survival::fixture::{self, LayoutBuilder, RackSpec};
use crate::survival::{evaluate, Domain, ELECTION_STALL_S};
use crate::units::SyncMode;
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self, message::PublishMessage as Publish, stream};
use sandbox::{Netns, Tmpfs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Name of the asset standing for the test streams in the predicted layout.
const ASSET: &str = "natsplan-faults";

/// A fault scenario the runner knows how to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// kill -9 one follower of the stream, restart it after the hold.
    FollowerKill,
    /// kill -9 the stream leader, restart it after the hold.
    LeaderKill,
    /// SIGSTOP the stream leader past the election timeout, then SIGCONT.
    LeaderPause,
    /// kill -9 a majority of the stream's peers, restart them after the hold.
    MajorityKill,
    /// kill -9 every server, restart them all.
    AllKill,
    /// Restart every server in turn, waiting for health in between.
    RollingRestart,
    /// Cut the network of the stream leader's rack (`net:`; in a lab without a plan every server is its
    /// own rack, so this isolates the leader alone), heal after the hold.
    LeaderPartition,
    /// A follower's store on a small tmpfs with `max_file_store` below its size, filled by a stream
    /// placed on it: JetStream refuses writes there; purging makes room again.
    FullLimit,
    /// A follower's store on a small tmpfs with `max_file_store` above its size, filled by a file beside
    /// the store: the disk fills under NATS (ENOSPC).
    FullDisk,
    /// Every server of one rack killed together (`power:RACK`; one scenario per rack of the plan). The
    /// page cache survives a process kill, so only the availability half of a power loss is tested.
    RackPower,
    /// One rack's uplink cut (`net:RACK`; one scenario per rack of the plan).
    RackNet,
    /// kill -9 a follower, empty its store, restart it under a new server name and peer-remove the old
    /// one from the stream (DESIGN.md's recovery for a destroyed store). Last live scenario: the meta group
    /// keeps the old name as an offline peer afterwards.
    Wipe,
    /// Power loss of the whole site: not producible by killing processes.
    PowerLoss,
}

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::FollowerKill,
        Kind::LeaderKill,
        Kind::LeaderPause,
        Kind::MajorityKill,
        Kind::AllKill,
        Kind::RollingRestart,
        Kind::LeaderPartition,
        Kind::FullLimit,
        Kind::FullDisk,
        Kind::RackPower,
        Kind::RackNet,
        Kind::Wipe,
        Kind::PowerLoss,
    ];
    /// The scenarios of a lab without a plan (every server its own rack: no whole-rack scenarios).
    pub fn ladder() -> Vec<Kind> {
        Kind::ALL.into_iter().filter(|k| !k.per_rack()).collect()
    }
    pub fn name(self) -> &'static str {
        match self {
            Kind::FollowerKill => "follower-kill",
            Kind::LeaderKill => "leader-kill",
            Kind::LeaderPause => "leader-pause",
            Kind::MajorityKill => "majority-kill",
            Kind::AllKill => "all-kill",
            Kind::RollingRestart => "rolling-restart",
            Kind::LeaderPartition => "leader-partition",
            Kind::FullLimit => "full-limit",
            Kind::FullDisk => "full-disk",
            Kind::RackPower => "rack-power",
            Kind::RackNet => "rack-net",
            Kind::Wipe => "follower-wipe",
            Kind::PowerLoss => "power-loss",
        }
    }
    pub fn parse(s: &str) -> Result<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
            anyhow!("unknown fault scenario '{s}'; choose from {}", names.join(", "))
        })
    }
    /// Needs the lab in network namespaces.
    fn needs_net(self) -> bool {
        matches!(self, Kind::LeaderPartition | Kind::RackNet)
    }
    /// Runs once per rack.
    fn per_rack(self) -> bool {
        matches!(self, Kind::RackPower | Kind::RackNet)
    }
}

/// A planned layout to run the faults on (`verify --faults --site SITE --layout ID`): the lab runs its
/// servers with their tags, racks map to network segments, and predictions come from its own model.
#[derive(Debug, Clone)]
pub struct PlanTarget {
    /// `SITE.yaml layout ID`, for the report.
    pub label: String,
    pub site: Site,
    pub layout: Layout,
    /// The lab's servers (the layout's, with their emitted tags).
    pub nodes: Vec<NodeSpec>,
    pub cluster_name: String,
    pub unique_tag: Option<String>,
    pub sync: SyncMode,
    /// Replicas of the test stream (the layout's replica count).
    pub replicas: u8,
    /// Placement tag of the test stream when the layout pins streams to replica sets (`set:NAME`).
    pub placement_tag: Option<String>,
}

/// The most lab servers a plan may bring (2 cores run them all).
pub const MAX_PLAN_SERVERS: usize = 9;

impl PlanTarget {
    /// The target for layout `id` of `plan`; an error when the lab could not run it.
    pub fn from_plan(plan: &crate::plan::Plan, id: &str, site_label: &str) -> Result<PlanTarget> {
        let pl = plan
            .layout(id)
            .ok_or_else(|| anyhow!("--layout {id}: no such layout in the plan"))?;
        if pl.servers.len() > MAX_PLAN_SERVERS {
            bail!(
                "--layout {id} has {} servers; --faults runs at most {MAX_PLAN_SERVERS} lab servers on one machine \
                 (choose a smaller layout or use --nodes N)",
                pl.servers.len()
            );
        }
        if pl.replicas < 3 {
            bail!(
                "--layout {id} uses R{}; --faults checks replicated streams (R3 or R5)",
                pl.replicas
            );
        }
        let sync = SyncMode::parse(&plan.sync_interval).unwrap_or(SyncMode::Interval(120));
        let spec = crate::lab::spec::for_layout(plan, pl, sync, PathBuf::new());
        let placement_tag = pl.replica_sets.first().map(|(name, _)| format!("set:{name}"));
        let replicas = match &placement_tag {
            Some(_) => pl.replica_sets[0].1.len() as u8,
            None => pl.replicas,
        };
        Ok(PlanTarget {
            label: format!("{site_label} layout {id}"),
            site: plan.input.clone(),
            layout: pl.layout.clone(),
            nodes: spec.nodes,
            cluster_name: spec.cluster_name,
            unique_tag: spec.unique_tag,
            sync,
            replicas,
            placement_tag,
        })
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// Lab size (3 or more; the stream is R3). Ignored with a `target`.
    pub nodes: usize,
    /// The scenarios, in order (`RackPower`/`RackNet` run once per rack).
    pub scenarios: Vec<Kind>,
    /// nats-server binary; None: `$NATS_SERVER_BIN`, the crate's `.tools/bin`, PATH.
    pub nats_server: Option<PathBuf>,
    /// Publisher rate; low enough that CPU starvation on a small machine does not cause elections.
    pub publish_rate_per_s: u32,
    /// Time to wait for one publish acknowledgement before calling it unknown and retrying.
    pub publish_timeout: Duration,
    /// Writes before the fault.
    pub warmup: Duration,
    /// How long a fault is held before healing (a pause is held past the election timeout regardless).
    pub hold: Duration,
    /// Writes after healing.
    pub after: Duration,
    /// Where findings (logs, `/jsz`) are saved; None: not saved.
    pub findings_dir: Option<PathBuf>,
    /// A planned layout to run on instead of a plain lab.
    pub target: Option<PlanTarget>,
    /// Set (by a Ctrl-C handler) to stop: the lab, mounts and namespaces are removed and the run fails.
    pub interrupt: Option<&'static AtomicBool>,
    /// Whole-rack scenarios only for these racks (site names); empty: every rack of the lab.
    pub racks: Vec<String>,
}

impl FaultOptions {
    /// The full ladder on `nodes` servers.
    pub fn full(nodes: usize) -> FaultOptions {
        FaultOptions {
            nodes,
            scenarios: Kind::ladder(),
            nats_server: None,
            publish_rate_per_s: 200,
            publish_timeout: Duration::from_secs(2),
            warmup: Duration::from_secs(2),
            hold: Duration::from_secs(8),
            after: Duration::from_secs(4),
            findings_dir: None,
            target: None,
            interrupt: None,
            racks: Vec::new(),
        }
    }
    /// A short run of the given scenarios (for the test suite).
    pub fn quick(nodes: usize, scenarios: &[Kind]) -> FaultOptions {
        FaultOptions {
            scenarios: scenarios.to_vec(),
            warmup: Duration::from_secs(1),
            hold: Duration::from_secs(4),
            after: Duration::from_secs(3),
            ..FaultOptions::full(nodes)
        }
    }
    /// Run on a planned layout: its servers, its racks, and the whole-rack scenarios added.
    pub fn on_plan(mut self, target: PlanTarget) -> FaultOptions {
        for k in [Kind::RackPower, Kind::RackNet] {
            if !self.scenarios.contains(&k) {
                let at = self
                    .scenarios
                    .iter()
                    .position(|x| *x == Kind::Wipe || *x == Kind::PowerLoss)
                    .unwrap_or(self.scenarios.len());
                self.scenarios.insert(at, k);
            }
        }
        self.nodes = target.nodes.len();
        self.target = Some(target);
        self
    }
    fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.load(Ordering::SeqCst))
    }
    /// Sleep `d`, returning early with an error when interrupted.
    fn pause(&self, d: Duration) -> Result<()> {
        let end = Instant::now() + d;
        loop {
            if self.interrupted() {
                bail!("interrupted");
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }
}

/// The site and layout the predictions are made on: one rack per lab server (so `power:` or `net:` of one
/// rack is one server), each server with its own RAID 1 group, one free-placed R3 stream, the lab's sync
/// mode.
pub fn model_of_lab(nodes: usize, sync: SyncMode) -> (Site, Layout) {
    let names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
    let racks: Vec<String> = (1..=nodes).map(|i| format!("r{i}")).collect();
    let arrays: Vec<String> = (1..=nodes).map(|i| format!("a{i}")).collect();
    let specs: Vec<RackSpec> = (0..nodes)
        .map(|i| RackSpec {
            name: &racks[i],
            servers: vec![&names[i]],
            arrays: vec![(&arrays[i], 12)],
        })
        .collect();
    let site = fixture::site(&specs, sync);
    let layout = LayoutBuilder::new(&site, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream(ASSET, 3, false)
        .build();
    (site, layout)
}

/// `layout` with the test stream pinned where NATS placed it (`peers`, site server names), so the
/// prediction is for the placement the lab has, not the worst eligible one. Adds the asset if missing.
pub fn pin_test_stream(site: &Site, layout: &Layout, peers: &[String]) -> Result<Layout> {
    let idx = peers
        .iter()
        .map(|p| {
            site.servers
                .iter()
                .position(|s| s.name == *p)
                .ok_or_else(|| anyhow!("stream peer {p} is not a server of the site"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut l = layout.clone();
    l.assets.retain(|a| a.name != ASSET);
    l.assets.push(Asset {
        name: ASSET.into(),
        kind: AssetKind::Stream,
        replicas: idx.len() as u8,
        candidates: idx.clone(),
        unique_rack: false,
        set: None,
        parent: None,
        bytes_per_replica: 0.0,
        expected: idx,
    });
    Ok(l)
}

/// The model's word on one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub status: crate::survival::Status,
    pub stall_s: Option<f64>,
    pub acked_loss_risk: bool,
}

/// Evaluate `steps` (each a set of selectors failed together; a rolling restart has one step per server)
/// and keep the worst.
pub fn predict(site: &Site, layout: &Layout, steps: &[Vec<String>]) -> Result<Prediction> {
    let mut worst: Option<Prediction> = None;
    for sels in steps {
        let failed = sels
            .iter()
            .map(|s| Domain::parse(s, site).map_err(|e| anyhow!(e)))
            .collect::<Result<Vec<_>>>()?;
        let sc = evaluate(site, layout, &failed);
        let a = sc
            .assets
            .iter()
            .find(|a| a.name == ASSET)
            .ok_or_else(|| anyhow!("the model layout has no asset {ASSET}"))?;
        let p = Prediction {
            status: a.status,
            stall_s: a.stall_s,
            acked_loss_risk: a.acked_loss_risk,
        };
        worst = Some(match worst {
            None => p,
            Some(w) => Prediction {
                status: w.status.max(p.status),
                stall_s: match (w.stall_s, p.stall_s) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    _ => None,
                },
                acked_loss_risk: w.acked_loss_risk || p.acked_loss_risk,
            },
        });
    }
    worst.ok_or_else(|| anyhow!("a scenario needs at least one step"))
}

/// One scenario to run: its kind and, for whole-rack kinds, the rack (site index).
#[derive(Debug, Clone, Copy)]
struct Planned {
    kind: Kind,
    rack: Option<usize>,
}

/// Run the scenarios on a lab of our own (started here, stopped and removed before returning, with any
/// tmpfs mounts and network namespaces it needed — also on error, panic or interruption).
pub fn run(opts: &FaultOptions, log: &dyn Fn(&str)) -> Result<FaultReport> {
    let nodes = opts.target.as_ref().map(|t| t.nodes.len()).unwrap_or(opts.nodes);
    if nodes < 3 {
        bail!("--nodes {nodes}: fault verification needs at least 3 servers for an R3 stream");
    }
    if opts.publish_rate_per_s == 0 {
        bail!("the publish rate must be at least 1 message per second");
    }
    for s in sandbox::sweep_stale() {
        log(&format!("removed a stale {s} left by an earlier run"));
    }
    let bin = lab::find_nats_server(opts.nats_server.as_deref())?;
    let (a, b, c) = lab::nats_server_version(&bin)?;
    // Racks of the lab's servers (site indices): the plan's, or one per server.
    let (site, layout, names) = match &opts.target {
        Some(t) => (
            t.site.clone(),
            t.layout.clone(),
            t.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
        ),
        None => {
            let (s, l) = model_of_lab(nodes, SyncMode::Interval(120));
            (s, l, (1..=nodes).map(|i| format!("n{i}")).collect())
        }
    };
    let rack_of = names
        .iter()
        .map(|n| {
            site.servers
                .iter()
                .find(|s| s.name == *n)
                .map(|s| s.rack)
                .ok_or_else(|| anyhow!("lab server {n} is not a server of the site"))
        })
        .collect::<Result<Vec<usize>>>()?;
    let mut planned = Vec::new();
    for &k in &opts.scenarios {
        if k.per_rack() {
            let mut racks: Vec<usize> = rack_of
                .iter()
                .copied()
                .filter(|&r| opts.racks.is_empty() || opts.racks.iter().any(|n| *n == site.racks[r].name))
                .collect();
            racks.sort_unstable();
            racks.dedup();
            planned.extend(racks.into_iter().map(|r| Planned { kind: k, rack: Some(r) }));
        } else {
            planned.push(Planned { kind: k, rack: None });
        }
    }
    for n in &opts.racks {
        if !site.racks.iter().any(|r| r.name == *n) {
            bail!("rack {n} is not a rack of the site");
        }
    }
    let need_net = planned.iter().any(|p| p.kind.needs_net());
    let net_skip = if need_net { sandbox::netns_unavailable() } else { None };
    let netns = match (need_net, &net_skip) {
        (true, None) => Some(Netns::create(&rack_of)?),
        _ => None,
    };
    if let Some(n) = &netns {
        log(&format!(
            "lab network: one namespace per server, racks bridged in {} (10.213.0.0/24, inside the namespaces only)",
            n.hub()
        ));
    }
    let hub = netns.as_ref().map(|n| n.hub().to_string());
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let ctx_parts = (&site, &layout, &rack_of, &bin);
    let result = std::thread::scope(|sc| {
        let netns = netns.as_ref();
        let net_skip = net_skip.as_deref();
        let planned = &planned;
        let h = sc.spawn(move || -> Result<Vec<ScenarioResult>> {
            let tlog = |m: &str| {
                let _ = tx.send(m.to_string());
            };
            // Our connections to the servers come from the hub namespace when the lab runs in namespaces;
            // threads started from here (the async runtime's, the lab's spawner) inherit it.
            if let Some(h) = &hub {
                sandbox::enter_netns(h)?;
            }
            let (site, layout, rack_of, bin) = ctx_parts;
            run_in_lab(opts, site, layout, rack_of, bin, planned, netns, net_skip, &tlog)
        });
        for m in rx {
            log(&m);
        }
        match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
    });
    drop(netns);
    Ok(FaultReport {
        nodes,
        nats_server_version: format!("{a}.{b}.{c}"),
        publish_rate_per_s: opts.publish_rate_per_s,
        publish_timeout_s: opts.publish_timeout.as_secs_f64(),
        target: opts.target.as_ref().map(|t| t.label.clone()),
        scenarios: result?,
    })
}

/// Everything the scenarios share.
struct Ctx<'a> {
    rt: &'a tokio::runtime::Runtime,
    site: &'a Site,
    layout: &'a Layout,
    opts: &'a FaultOptions,
    rack_of: &'a [usize],
    netns: Option<&'a Netns>,
    net_skip: Option<&'a str>,
    replicas: usize,
    placement_tag: Option<String>,
    log: &'a dyn Fn(&str),
}

#[allow(clippy::too_many_arguments)]
fn run_in_lab(
    opts: &FaultOptions,
    site: &Site,
    layout: &Layout,
    rack_of: &[usize],
    bin: &Path,
    planned: &[Planned],
    netns: Option<&Netns>,
    net_skip: Option<&str>,
    log: &dyn Fn(&str),
) -> Result<Vec<ScenarioResult>> {
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{}{}-", sandbox::DIR_PREFIX, std::process::id()))
        .tempdir()
        .context("cannot create a temporary lab folder")?;
    let mut spec = match &opts.target {
        Some(t) => LabSpec {
            nodes: t.nodes.clone(),
            cluster_name: t.cluster_name.clone(),
            sync: t.sync,
            unique_tag: t.unique_tag.clone(),
            dir: tmp.path().to_path_buf(),
            client_tls: None,
        },
        None => LabSpec::plain(opts.nodes, tmp.path()),
    };
    // `node:NAME` lets a scenario place a stream on one chosen server (the full: filler).
    for n in &mut spec.nodes {
        n.tags.push(format!("node:{}", n.name));
    }
    log(&format!(
        "starting a {}-node lab in {}{}",
        spec.nodes.len(),
        tmp.path().display(),
        opts.target
            .as_ref()
            .map(|t| format!(" for {}", t.label))
            .unwrap_or_default()
    ));
    let start = StartOptions {
        net: netns.map(Netns::node_nets),
        ..StartOptions::default()
    };
    let hooks = StartHooks {
        cancel: opts.interrupt,
        on_spawned: None,
    };
    let mut lab = Lab::start_with(spec, bin, &start, &hooks)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let ctx = Ctx {
        rt: &rt,
        site,
        layout,
        opts,
        rack_of,
        netns,
        net_skip,
        replicas: opts.target.as_ref().map(|t| t.replicas as usize).unwrap_or(3),
        placement_tag: opts.target.as_ref().and_then(|t| t.placement_tag.clone()),
        log,
    };
    let mut scenarios = Vec::new();
    for (i, p) in planned.iter().enumerate() {
        if opts.interrupted() {
            bail!("interrupted");
        }
        let label = scenario_name(site, *p);
        log(&format!("scenario {}: {label}", i + 1));
        match run_one(&ctx, &mut lab, *p, i) {
            Ok(s) => {
                match &s.skipped {
                    Some(why) => log(&format!("  skipped: {why}")),
                    None => log(&format!(
                        "  predicted {} / observed {} / agree {} ({})",
                        s.predicted, s.observed, s.agree, s.detail
                    )),
                }
                scenarios.push(s);
            }
            Err(e) if opts.interrupted() => return Err(e.context("interrupted")),
            Err(e) => {
                // A harness failure (lab would not heal, stream not created): report it, never as agreement.
                log(&format!("  could not run: {e:#}"));
                let mut r = not_run(p.kind, format!("the harness failed: {e:#}"));
                r.name = label;
                r.skipped = None;
                r.observed = "harness_failed".into();
                // Evidence of why, as for a loss: logs, /jsz, stores.
                r.finding = save_finding(&lab, opts.findings_dir.as_deref(), &format!("{}-harness", r.name), &r).ok();
                scenarios.push(r);
                if let Some(n) = netns {
                    let _ = n.heal();
                }
                let _ = lab_heal_all(&mut lab);
                // The scenario's stream may be what keeps a server unhealthy: remove it.
                let name = format!("natsplan-faults-{}-{i}", p.kind.name());
                let _g = rt.enter();
                if let Ok(c) = rt.block_on(connect(&lab.client_urls())) {
                    rt.block_on(delete_stream(&jetstream::new(c.clone()), &name));
                    rt.block_on(c.drain()).ok();
                }
            }
        }
    }
    let _ = lab.stop();
    drop(lab);
    drop(tmp);
    Ok(scenarios)
}

fn scenario_name(site: &Site, p: Planned) -> String {
    match p.rack {
        Some(r) => format!("{}:{}", p.kind.name(), site.racks[r].name),
        None => p.kind.name().into(),
    }
}

/// Run with Ctrl-C handling (SIGINT, SIGTERM, SIGHUP stop the run and remove the lab, its mounts and
/// namespaces before returning an error) and, when `out` is given, write one results folder
/// `OUT/<utc>-faults/` (the report and any findings). Returns the report and the folder it wrote.
pub fn run_saved(
    opts: &FaultOptions,
    out: Option<&Path>,
    log: &dyn Fn(&str),
) -> Result<(FaultReport, Option<PathBuf>)> {
    let guard = lab::InterruptGuard::install();
    let mut o = opts.clone();
    o.interrupt = Some(guard.flag());
    // One folder per run, as verify's.
    let folder = out.map(|d| {
        let stamp = format!("{}-faults", crate::verify::utc_now().1);
        let mut f = d.join(&stamp);
        let mut n = 1;
        while f.exists() {
            n += 1;
            f = d.join(format!("{stamp}-{n}"));
        }
        f
    });
    if o.findings_dir.is_none() {
        o.findings_dir = folder.as_ref().map(|f| f.join("findings"));
    }
    let r = match run(&o, log) {
        Err(e) if o.interrupted() => {
            bail!("interrupted: the lab, its mounts and network namespaces were removed ({e:#})")
        }
        r => r?,
    };
    drop(guard);
    if let Some(f) = &folder {
        write_results(f, &r)?;
    }
    Ok((r, folder))
}

fn not_run(k: Kind, why: String) -> ScenarioResult {
    ScenarioResult {
        name: k.name().into(),
        selectors: Vec::new(),
        predicted: String::new(),
        predicted_stall_s: None,
        predicted_acked_loss_risk: false,
        observed: "not_run".into(),
        detail: why.clone(),
        agree: false,
        acked: 0,
        acked_lost: 0,
        unavailable_s: 0.0,
        skipped: Some(why),
        check: Check::default(),
        replicas: Vec::new(),
        finding: None,
    }
}

fn lab_heal_all(lab: &mut Lab) -> Result<()> {
    for i in 0..lab.nodes().len() {
        if !lab.is_running(i) {
            lab.restart(i)?;
        }
    }
    wait_healthy(lab, Duration::from_secs(120))
}

/// `lab.wait_healthy`, with every server's `/healthz` answer in the error (why it is not healthy).
fn wait_healthy(lab: &mut Lab, timeout: Duration) -> Result<()> {
    lab.wait_healthy(timeout).map_err(|e| {
        let why: Vec<String> = lab
            .nodes()
            .iter()
            .map(
                |n| match monitor::get(&n.monitor_url(), "/healthz", Duration::from_secs(2)) {
                    Ok(r) => format!("{}: {} {}", n.name, r.status, r.body.trim()),
                    Err(e) => format!("{}: {e:#}", n.name),
                },
            )
            .collect();
        e.context(format!("/healthz: {}", why.join("; ")))
    })
}

/// The lab index of a stream peer (a wiped server reports under its new name).
fn peer_index(lab: &Lab, p: &str) -> Result<usize> {
    lab.node(p)
        .or_else(|e| lab.node(p.strip_suffix(WIPED_SUFFIX).ok_or(e)?))
}

/// The stream's leader and followers by lab index, asked until a leader with all `replicas` peers shows.
fn stream_roles(lab: &Lab, name: &str, replicas: usize) -> Result<(usize, Vec<usize>)> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = lab.streams().into_iter().find(|s| s.name == name) {
            if let Some(l) = s.leader.as_deref().filter(|_| s.peers.len() == replicas) {
                let li = peer_index(lab, l)?;
                let f = s
                    .peers
                    .iter()
                    .filter(|p| p.as_str() != l)
                    .map(|p| peer_index(lab, p))
                    .collect::<Result<Vec<_>>>()?;
                return Ok((li, f));
            }
        }
        if t0.elapsed() > Duration::from_secs(20) {
            bail!("stream {name} shows no leader with {replicas} peers after 20 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What the fault did and when (seconds since the scenario's start).
struct Timeline {
    inject_s: f64,
    heal_s: f64,
}

/// A follower's store moved onto a small tmpfs (for `full:`); `restore` puts it back on the lab's disk.
struct FullStore {
    server: usize,
    mount: Tmpfs,
    conf_text: String,
    /// The file that fills the tmpfs (`FullDisk`).
    ballast: Option<PathBuf>,
}

/// tmpfs sizes and `max_file_store` for the two `full:` scenarios: below (JetStream's own limit is hit
/// first) and above (the file system fills first).
const FULL_LIMIT_TMPFS_BYTES: u64 = 64 << 20;
const FULL_LIMIT_MAX_FILE_STORE_BYTES: u64 = 16 << 20;
const FULL_DISK_TMPFS_BYTES: u64 = 32 << 20;
const FULL_DISK_MAX_FILE_STORE_BYTES: u64 = 1 << 30;

/// The configuration text with `max_file_store` set (replaced, or added after `store_dir`).
fn set_max_file_store(conf: &str, bytes: u64) -> Option<String> {
    let mut out = Vec::new();
    let mut done = false;
    for l in conf.lines() {
        let t = l.trim_start();
        if t.starts_with("max_file_store") {
            if !done {
                out.push(format!("  max_file_store: {bytes}"));
                done = true;
            }
            continue;
        }
        out.push(l.to_string());
        if t.starts_with("store_dir") && !done {
            out.push(format!("  max_file_store: {bytes}"));
            done = true;
        }
    }
    done.then(|| out.join("\n") + "\n")
}

impl FullStore {
    /// Kill server `v`, mount a tmpfs over its store (contents carried over), set `max_file_store`,
    /// restart it and wait for the cluster to be healthy.
    fn setup(lab: &mut Lab, v: usize, tmpfs_bytes: u64, max_file_store: u64) -> Result<FullStore> {
        let (store, conf) = (lab.nodes()[v].store_dir.clone(), lab.nodes()[v].conf.clone());
        let save = lab.dir().join(format!("{}-store-save", lab.nodes()[v].name));
        let conf_text = std::fs::read_to_string(&conf)?;
        let limited = set_max_file_store(&conf_text, max_file_store)
            .ok_or_else(|| anyhow!("{}: no store_dir line", conf.display()))?;
        lab.kill(v)?;
        let _ = std::fs::remove_dir_all(&save);
        copy_tree(&store, &save)?;
        let mount = Tmpfs::mount(&store, tmpfs_bytes)?;
        copy_tree(&save, &store)?;
        std::fs::remove_dir_all(&save)?;
        std::fs::write(&conf, limited)?;
        let fs = FullStore {
            server: v,
            mount,
            conf_text,
            ballast: None,
        };
        lab.restart(v)?;
        wait_healthy(lab, Duration::from_secs(120))?;
        Ok(fs)
    }

    /// Back on the lab's disk with its old configuration: kill, copy out, unmount, copy back, restart.
    fn restore(mut self, lab: &mut Lab) -> Result<()> {
        let v = self.server;
        let (store, conf) = (lab.nodes()[v].store_dir.clone(), lab.nodes()[v].conf.clone());
        let save = lab.dir().join(format!("{}-store-save", lab.nodes()[v].name));
        if lab.is_running(v) {
            lab.kill(v)?;
        }
        if let Some(b) = self.ballast.take() {
            let _ = std::fs::remove_file(b);
        }
        let _ = std::fs::remove_dir_all(&save);
        copy_tree(&store, &save)?;
        self.mount.unmount()?;
        std::fs::remove_dir_all(&store)?;
        std::fs::rename(&save, &store)?;
        std::fs::write(&conf, &self.conf_text)?;
        lab.restart(v)?;
        wait_healthy(lab, Duration::from_secs(120))
    }
}

/// Fill the file system under `dir` with a file until it is full; returns the file and its size.
fn fill_disk(dir: &Path) -> Result<(PathBuf, u64)> {
    use std::io::Write;
    let p = dir.join("natsplan-ballast");
    let mut f = std::fs::File::create(&p).with_context(|| format!("cannot create {}", p.display()))?;
    let chunk = vec![0u8; 256 << 10];
    let mut n = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => break,
            Ok(k) => n += k as u64,
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => return Err(e).with_context(|| format!("filling {}", p.display())),
        }
    }
    Ok((p, n))
}

/// Lines of a server's log that tell what a full store did (JetStream's own words).
fn full_log_lines(log: &Path, lab_dir: &Path) -> Vec<String> {
    let tail = lab::log_tail(log, 1 << 20);
    let dir = format!("{}/", lab_dir.display());
    let mut v: Vec<String> = tail
        .lines()
        .filter(|l| {
            let x = l.to_lowercase();
            x.contains("out of space")
                || x.contains("out of resources")
                || x.contains("disabled")
                || x.contains("insufficient")
                || x.contains("no space left")
                || x.contains("write error")
        })
        // "[pid] 2026/11/30 08:40:45.172 [ERR] text" → "[ERR] text"
        .map(|l| match l.trim().splitn(4, ' ').collect::<Vec<_>>().as_slice() {
            [pid, _, _, rest] if pid.starts_with('[') => rest.replace(&dir, ""),
            _ => l.trim().replace(&dir, ""),
        })
        // The RAFT layer repeats the file store's write error: keep one of each message.
        .filter(|l| !l.contains("RAFT ["))
        .collect();
    v.dedup();
    v.truncate(4);
    v
}

/// Whether JetStream runs on the server behind `monitor_url` (`/jsz` answers and is not disabled).
fn jetstream_enabled(monitor_url: &str) -> bool {
    match monitor::jsz(monitor_url, "", Duration::from_secs(2)) {
        Ok(j) => j.get("disabled").and_then(|d| d.as_bool()) != Some(true),
        Err(_) => false,
    }
}

/// Publish 256 KiB messages to a one-replica stream placed on server `node` until the server refuses;
/// returns (bytes accepted, the refusal).
async fn fill_with_stream(js: &jetstream::Context, name: &str, node: &str, max_bytes: u64) -> Result<(u64, String)> {
    let subject = format!("natsplan.filler.{name}");
    let cfg = stream::Config {
        name: name.into(),
        subjects: vec![subject.clone()],
        num_replicas: 1,
        storage: stream::StorageType::File,
        placement: Some(stream::Placement {
            cluster: None,
            tags: vec![format!("node:{node}")],
        }),
        ..Default::default()
    };
    let mut last = String::new();
    let mut created = false;
    for _ in 0..20 {
        match js.get_or_create_stream(cfg.clone()).await {
            Ok(_) => {
                created = true;
                break;
            }
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if !created {
        bail!("cannot create the filler stream {name} on {node}: {last}");
    }
    let payload = bytes::Bytes::from(vec![b'x'; 256 << 10]);
    let mut accepted = 0u64;
    let cap = max_bytes * 2 / (256 << 10) + 16;
    // A new stream's subject takes a moment to be known everywhere ("no stream found", timeouts): retry
    // those for a while; the refusal that ends the fill must be JetStream's own storage limit.
    let mut transient = 0;
    let mut sent = 0;
    while sent < cap {
        let r = tokio::time::timeout(Duration::from_secs(5), async {
            js.publish(subject.clone(), payload.clone()).await?.await
        })
        .await;
        let err = match r {
            Ok(Ok(_)) => {
                accepted += payload.len() as u64;
                sent += 1;
                transient = 0;
                continue;
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no acknowledgement within 5 s".to_string(),
        };
        if err.contains("insufficient") || err.contains("resources") || err.contains("storage") {
            return Ok((accepted, err));
        }
        transient += 1;
        if transient > 20 {
            bail!("the filler stream on {node} never filled its store: {err} ({accepted} bytes accepted)");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bail!("{node} never refused the filler stream ({accepted} bytes accepted, max_file_store {max_bytes})")
}

/// Purge the filler, show that it takes writes again, delete it; returns what happened.
async fn purge_and_retry(js: &jetstream::Context, name: &str) -> String {
    let subject = format!("natsplan.filler.{name}");
    let purged = match js.get_stream(name).await {
        Ok(s) => s.purge().await.map(|_| ()).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let retry = tokio::time::timeout(Duration::from_secs(5), async {
        js.publish(subject.clone(), bytes::Bytes::from_static(b"after purge"))
            .await?
            .await
    })
    .await;
    let _ = js.delete_stream(name).await;
    match (purged, retry) {
        (Err(e), _) => format!("purge failed: {e}"),
        (Ok(()), Ok(Ok(_))) => "after a purge it takes writes again".into(),
        (Ok(()), Ok(Err(e))) => format!("after a purge it still refuses: {e}"),
        (Ok(()), Err(_)) => "after a purge a write got no acknowledgement within 5 s".into(),
    }
}

fn run_one(ctx: &Ctx, lab: &mut Lab, p: Planned, idx: usize) -> Result<ScenarioResult> {
    let (rt, site, opts, log) = (ctx.rt, ctx.site, ctx.opts, ctx.log);
    let k = p.kind;
    let rack_name = |r: usize| site.racks[r].name.clone();
    if k == Kind::PowerLoss {
        // The whole site at once: the case where unsynced acknowledged writes are at risk.
        let sels: Vec<String> = site.racks.iter().map(|r| format!("power:{}", r.name)).collect();
        // No stream was placed: any R of the lab's servers (every rack loses power, so placement is moot).
        let names: Vec<String> = lab.nodes().iter().take(ctx.replicas).map(|n| n.name.clone()).collect();
        let layout = pin_test_stream(site, ctx.layout, &names)?;
        let pred = predict(site, &layout, std::slice::from_ref(&sels))?;
        let why = "power loss (unsynced writes dropped) cannot be produced by killing processes: the page \
                   cache survives; needs VMs or machines whose power can be cut";
        let mut res = not_run(k, why.into());
        res.selectors = sels;
        res.predicted = pred.status.as_str().into();
        res.predicted_stall_s = pred.stall_s;
        res.predicted_acked_loss_risk = pred.acked_loss_risk;
        return Ok(res);
    }
    let skip = |why: String| {
        let mut r = not_run(k, why);
        r.name = scenario_name(site, p);
        Ok(r)
    };
    if k.needs_net() {
        if let Some(why) = ctx.net_skip {
            return skip(why.to_string());
        }
    }
    if matches!(k, Kind::FullLimit | Kind::FullDisk) {
        // Probe before touching the lab: a refused mount skips the scenario with the reason.
        let probe = lab.dir().join("tmpfs-probe");
        match Tmpfs::mount(&probe, 1 << 20) {
            Ok(mut m) => {
                m.unmount()?;
                let _ = std::fs::remove_dir(&probe);
            }
            Err(e) => return skip(format!("{e:#}")),
        }
    }
    let name = format!("natsplan-faults-{}-{idx}", k.name());
    let subject = format!("natsplan.faults.{idx}");
    let urls = lab.client_urls();
    // The JetStream context spawns its acker task on creation: it must be made inside the runtime.
    let _rt_guard = rt.enter();
    let client = rt.block_on(connect(&urls))?;
    let js = jetstream::new(client.clone());
    rt.block_on(create_stream(
        &js,
        &name,
        &subject,
        ctx.replicas,
        ctx.placement_tag.as_deref(),
    ))?;
    let (leader, followers) = stream_roles(lab, &name, ctx.replicas)?;
    let nm = |i: usize| lab.nodes()[i].name.clone();
    let mut peers: Vec<String> = followers.iter().map(|&f| nm(f)).collect();
    peers.push(nm(leader));
    let layout = pin_test_stream(site, ctx.layout, &peers)?;
    let sel = |i: usize, kind: &str| format!("{kind}:{}", nm(i));
    let n = lab.nodes().len();
    let quorum = ctx.replicas / 2 + 1;
    let majority: Vec<usize> = std::iter::once(leader)
        .chain(followers.iter().copied())
        .take(quorum)
        .collect();
    let (steps, selectors): (Vec<Vec<String>>, Vec<String>) = match k {
        Kind::FollowerKill => (
            vec![vec![sel(followers[0], "process")]],
            vec![sel(followers[0], "process")],
        ),
        Kind::LeaderKill => (vec![vec![sel(leader, "process")]], vec![sel(leader, "process")]),
        Kind::LeaderPause => (vec![vec![sel(leader, "pause")]], vec![sel(leader, "pause")]),
        Kind::MajorityKill => {
            let s: Vec<String> = majority.iter().map(|&i| sel(i, "process")).collect();
            (vec![s.clone()], s)
        }
        Kind::AllKill => {
            let s: Vec<String> = (0..n).map(|i| sel(i, "process")).collect();
            (vec![s.clone()], s)
        }
        Kind::RollingRestart => {
            let s: Vec<String> = (0..n).map(|i| sel(i, "process")).collect();
            (s.iter().map(|x| vec![x.clone()]).collect(), s)
        }
        Kind::LeaderPartition => {
            let s = vec![format!("net:{}", rack_name(ctx.rack_of[leader]))];
            (vec![s.clone()], s)
        }
        Kind::FullLimit | Kind::FullDisk => (vec![vec![sel(followers[0], "full")]], vec![sel(followers[0], "full")]),
        Kind::RackPower | Kind::RackNet => {
            let r = p.rack.ok_or_else(|| anyhow!("a rack scenario needs its rack"))?;
            let kind = if k == Kind::RackPower { "power" } else { "net" };
            let s = vec![format!("{kind}:{}", rack_name(r))];
            (vec![s.clone()], s)
        }
        Kind::Wipe => (vec![vec![sel(followers[0], "wipe")]], vec![sel(followers[0], "wipe")]),
        Kind::PowerLoss => unreachable!("handled above"),
    };
    let pred = predict(site, &layout, &steps)?;
    let mut res = not_run(k, String::new());
    res.name = scenario_name(site, p);
    res.selectors = selectors;
    res.predicted = pred.status.as_str().into();
    res.predicted_stall_s = pred.stall_s;
    res.predicted_acked_loss_risk = pred.acked_loss_risk;
    res.skipped = None;

    // A full: scenario first moves the follower's store onto its tmpfs (before the workload starts).
    let mut full = match k {
        Kind::FullLimit => Some(FullStore::setup(
            lab,
            followers[0],
            FULL_LIMIT_TMPFS_BYTES,
            FULL_LIMIT_MAX_FILE_STORE_BYTES,
        )?),
        Kind::FullDisk => Some(FullStore::setup(
            lab,
            followers[0],
            FULL_DISK_TMPFS_BYTES,
            FULL_DISK_MAX_FILE_STORE_BYTES,
        )?),
        _ => None,
    };

    // The workload, fault and check; the full store goes back to disk whatever happens in there.
    let outcome = (|| -> Result<ScenarioResult> {
        // Publisher.
        let stop = Arc::new(AtomicBool::new(false));
        let last_ack_ms = Arc::new(AtomicU64::new(0));
        let t0 = Instant::now();
        let pub_handle = rt.spawn(publisher(
            js.clone(),
            subject.clone(),
            format!("{}-{idx}", k.name()),
            opts.publish_rate_per_s,
            opts.publish_timeout,
            stop.clone(),
            last_ack_ms.clone(),
            t0,
        ));
        opts.pause(opts.warmup)?;
        let inject_s = t0.elapsed().as_secs_f64();
        let election_hold = Duration::from_secs_f64(ELECTION_STALL_S + 2.0);
        let mut notes = Vec::new();
        let heal_result = inject_and_heal(
            ctx,
            lab,
            p,
            leader,
            &followers,
            &majority,
            election_hold,
            &js,
            &name,
            full.as_mut(),
            &mut notes,
        );
        let heal_s = t0.elapsed().as_secs_f64();
        // Writes must resume within this bound after healing, or the stall did not end: keep writing until
        // an ack after healing shows (or the bound passes), then for `after` more.
        let resume_bound_s = ELECTION_STALL_S + opts.publish_timeout.as_secs_f64() + 5.0;
        let deadline = Instant::now() + Duration::from_secs_f64(resume_bound_s);
        while Instant::now() < deadline && (last_ack_ms.load(Ordering::SeqCst) as f64 / 1000.0) < heal_s {
            opts.pause(Duration::from_millis(100))?;
        }
        opts.pause(opts.after)?;
        stop.store(true, Ordering::SeqCst);
        let attempts = rt.block_on(pub_handle).context("the publisher task failed")?;
        heal_result?;
        let tl = Timeline { inject_s, heal_s };
        // A replica that never catches up after healing is an outcome (nats-server's), not a harness
        // failure: record it, check what the stream holds, save the evidence.
        let healthy = wait_healthy(lab, Duration::from_secs(90));
        if let Err(e) = &healthy {
            log(&format!("  not healthy after healing: {e:#}"));
        }

        // The final phase, as Jepsen's: everything healed, the replicas converged on at least every
        // acknowledged sequence (each server's own `/jsz`), then read back through the stream leader.
        let max_acked = attempts
            .iter()
            .filter_map(|a| match a.outcome {
                Outcome::Ok { seq, .. } => Some(seq),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        res.replicas = replica_states(lab, &name, max_acked, ctx.replicas);
        let (read, not_found) = rt.block_on(read_all(&js, &name))?;
        let chk = check(&attempts, &read);
        if not_found > 0 {
            notes.push(format!(
                "the read-back got \"not found\" for {not_found} sequences between the stream's first and last"
            ));
        }
        res.acked = chk.acked;
        res.acked_lost = chk.acked_lost;
        res.unavailable_s = longest_gap_s(&attempts, 0.0);
        judge(
            &mut res,
            &pred,
            &attempts,
            &chk,
            &tl,
            opts,
            resume_bound_s,
            ctx.replicas,
        );
        if k == Kind::RackPower && pred.acked_loss_risk {
            notes.push(
                "the model's acknowledged-loss risk (unsynced writes) is not tested: a process kill keeps the page cache"
                    .into(),
            );
        }
        if let Err(e) = &healthy {
            res.agree = false;
            if res.acked_lost == 0 {
                res.observed = "replica_stuck".into();
            }
            notes.push(format!(
                "FINDING: the cluster was not healthy 90 s after healing: {e:#}"
            ));
        }
        if !notes.is_empty() {
            res.detail.push_str(&format!("; {}", notes.join("; ")));
        }
        let problem = chk.acked_lost + chk.unexpected + chk.duplicates + chk.seq_mismatch > 0
            || !replicas_agree(&res.replicas, ctx.replicas)
            || healthy.is_err();
        res.check = chk.clone();
        if problem {
            res.finding = save_finding(lab, opts.findings_dir.as_deref(), &name, &res).ok();
        }
        rt.block_on(delete_stream(&js, &name));
        rt.block_on(client.drain()).ok();
        if healthy.is_err() {
            // With the stuck stream gone the server should be healthy again for the next scenario.
            wait_healthy(lab, Duration::from_secs(60)).context("still not healthy after deleting the stuck stream")?;
        }
        Ok(res)
    })();
    // Interrupted: leave it to the drops (lazy unmount, then the lab's kill) to be quick.
    if let Some(f) = full.take().filter(|_| !opts.interrupted()) {
        let restored = f.restore(lab).context("cannot move the full store back to disk");
        if outcome.is_ok() {
            restored?;
        }
    }
    outcome
}

/// Suffix of a wiped server's new name.
const WIPED_SUFFIX: &str = "-w";

/// The configuration text with `server_name` changed from `old` to `new`, or None if it has no such line.
fn rename_server(conf: &str, old: &str, new: &str) -> Option<String> {
    let mut found = false;
    let out: Vec<String> = conf
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("server_name") && t.contains(old) && !found {
                found = true;
                l.replacen(old, new, 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    found.then(|| out.join("\n") + "\n")
}

/// Remove the wiped server's old name from the stream's peers, so it places a new replica (retried while
/// the cluster settles).
async fn peer_remove(js: &jetstream::Context, stream: &str, peer: &str) -> Result<()> {
    let subject = format!("STREAM.PEER.REMOVE.{stream}");
    let body = serde_json::json!({ "peer": peer });
    let mut last = String::new();
    for _ in 0..30 {
        match js.request::<_, _, serde_json::Value>(subject.clone(), &body).await {
            Ok(v) if v.get("success").and_then(|x| x.as_bool()) == Some(true) => return Ok(()),
            Ok(v) => last = v.to_string(),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    bail!("peer-remove of {peer} from {stream} failed: {last}")
}

#[allow(clippy::too_many_arguments)]
fn inject_and_heal(
    ctx: &Ctx,
    lab: &mut Lab,
    p: Planned,
    leader: usize,
    followers: &[usize],
    majority: &[usize],
    election_hold: Duration,
    js: &jetstream::Context,
    stream: &str,
    full: Option<&mut FullStore>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let (opts, log, rt) = (ctx.opts, ctx.log, ctx.rt);
    let hold = opts.hold;
    let n = lab.nodes().len();
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
    match p.kind {
        Kind::FollowerKill | Kind::LeaderKill => {
            let v = if p.kind == Kind::LeaderKill {
                leader
            } else {
                followers[0]
            };
            log(&format!("  kill -9 {}", nm(lab, v)));
            lab.kill(v)?;
            opts.pause(hold)?;
            lab.restart(v)?;
        }
        Kind::LeaderPause => {
            log(&format!(
                "  SIGSTOP {} for {:.0} s",
                nm(lab, leader),
                election_hold.max(hold).as_secs_f64()
            ));
            lab.sigstop(leader)?;
            let r = opts.pause(election_hold.max(hold));
            lab.sigcont(leader)?;
            r?;
        }
        Kind::MajorityKill => {
            for &v in majority {
                log(&format!("  kill -9 {}", nm(lab, v)));
                lab.kill(v)?;
            }
            opts.pause(hold)?;
            for &v in majority {
                lab.restart(v)?;
            }
        }
        Kind::AllKill => {
            log("  kill -9 every server");
            for v in 0..n {
                lab.kill(v)?;
            }
            opts.pause(hold)?;
            for v in 0..n {
                lab.restart(v)?;
            }
        }
        Kind::RollingRestart => {
            for v in 0..n {
                log(&format!("  restart {}", nm(lab, v)));
                lab.kill(v)?;
                opts.pause(Duration::from_secs(1))?;
                lab.restart(v)?;
                wait_healthy(lab, Duration::from_secs(120))?;
            }
        }
        Kind::LeaderPartition | Kind::RackNet => {
            let net = ctx
                .netns
                .ok_or_else(|| anyhow!("the lab runs without network namespaces"))?;
            let r = match p.rack {
                Some(r) => r,
                None => ctx.rack_of[leader],
            };
            let who: Vec<String> = (0..n).filter(|&i| ctx.rack_of[i] == r).map(|i| nm(lab, i)).collect();
            // An isolated leader keeps its title until it misses a quorum for ~10 s; hold past that.
            let h = hold.max(election_hold);
            log(&format!(
                "  cut the uplink of rack {} ({}) for {:.0} s",
                ctx.site.racks[r].name,
                who.join(", "),
                h.as_secs_f64()
            ));
            net.set_rack(r, false)?;
            let res = opts.pause(h);
            net.set_rack(r, true)?;
            res?;
        }
        Kind::RackPower => {
            let r = p.rack.ok_or_else(|| anyhow!("a rack scenario needs its rack"))?;
            let vs: Vec<usize> = (0..n).filter(|&i| ctx.rack_of[i] == r).collect();
            for &v in &vs {
                log(&format!("  kill -9 {} (rack {})", nm(lab, v), ctx.site.racks[r].name));
                lab.kill(v)?;
            }
            opts.pause(hold)?;
            for &v in &vs {
                lab.restart(v)?;
            }
        }
        Kind::FullLimit => {
            let fs = full.ok_or_else(|| anyhow!("full-limit needs its tmpfs store"))?;
            let v = fs.server;
            let node = nm(lab, v);
            let filler = format!("natsplan-faults-filler-{v}");
            log(&format!(
                "  fill {node}'s store (tmpfs {} MiB, max_file_store {} MiB) with a stream placed on it",
                FULL_LIMIT_TMPFS_BYTES >> 20,
                FULL_LIMIT_MAX_FILE_STORE_BYTES >> 20
            ));
            let (bytes, refusal) =
                rt.block_on(fill_with_stream(js, &filler, &node, FULL_LIMIT_MAX_FILE_STORE_BYTES))?;
            notes.push(format!(
                "{node} at max_file_store: a stream on it took {:.1} MiB, then: {refusal}",
                bytes as f64 / (1u64 << 20) as f64
            ));
            opts.pause(hold)?;
            let after = rt.block_on(purge_and_retry(js, &filler));
            notes.push(format!("{after}; JetStream on {node} {}", js_state(lab, v)));
            let lines = full_log_lines(&lab.nodes()[v].log, lab.dir());
            if !lines.is_empty() {
                notes.push(format!("{node} logged: {}", lines.join(" | ")));
            }
            if !jetstream_enabled(&lab.nodes()[v].monitor_url()) {
                log(&format!("  JetStream is off on {node}: restart it"));
                lab.restart(v)?;
            }
        }
        Kind::FullDisk => {
            let fs = full.ok_or_else(|| anyhow!("full-disk needs its tmpfs store"))?;
            let v = fs.server;
            let node = nm(lab, v);
            let (ballast, bytes) = fill_disk(fs.mount.path())?;
            fs.ballast = Some(ballast.clone());
            log(&format!(
                "  filled {node}'s {} MiB tmpfs with {:.1} MiB beside its store (max_file_store {} MiB above it)",
                FULL_DISK_TMPFS_BYTES >> 20,
                bytes as f64 / (1u64 << 20) as f64,
                FULL_DISK_MAX_FILE_STORE_BYTES >> 20
            ));
            opts.pause(hold)?;
            let state = js_state(lab, v);
            std::fs::remove_file(&ballast)?;
            fs.ballast = None;
            let lines = full_log_lines(&lab.nodes()[v].log, lab.dir());
            notes.push(format!("with the disk full, JetStream on {node} {state}"));
            if !lines.is_empty() {
                notes.push(format!("{node} logged: {}", lines.join(" | ")));
            }
            // JetStream disables itself on a real ENOSPC; it comes back with a restart once there is space.
            if !jetstream_enabled(&lab.nodes()[v].monitor_url()) {
                log(&format!("  space freed; JetStream is off on {node}: restart it"));
                notes.push(format!("{node} restarted after the space was freed"));
                lab.restart(v)?;
            } else {
                notes.push(format!("space freed; {node} carried on without a restart"));
            }
        }
        Kind::Wipe => {
            let v = followers[0];
            let old = nm(lab, v);
            log(&format!(
                "  kill -9 {old}, empty its store, rejoin as {old}{WIPED_SUFFIX}"
            ));
            lab.kill(v)?;
            let store = lab.nodes()[v].store_dir.clone();
            std::fs::remove_dir_all(&store).with_context(|| format!("cannot empty {}", store.display()))?;
            std::fs::create_dir_all(&store)?;
            let conf = lab.nodes()[v].conf.clone();
            let text = std::fs::read_to_string(&conf)?;
            let renamed = rename_server(&text, &old, &format!("{old}{WIPED_SUFFIX}"))
                .ok_or_else(|| anyhow!("{}: no server_name line to rename", conf.display()))?;
            std::fs::write(&conf, renamed)?;
            opts.pause(hold)?;
            lab.restart(v)?;
            rt.block_on(peer_remove(js, stream, &old))?;
        }
        Kind::PowerLoss => bail!("power loss cannot be injected by process control"),
    }
    Ok(())
}

/// "is on" / "is off (disabled)" / "does not answer", from the server's `/jsz`.
fn js_state(lab: &Lab, v: usize) -> &'static str {
    match monitor::jsz(&lab.nodes()[v].monitor_url(), "", Duration::from_secs(2)) {
        Ok(j) if j.get("disabled").and_then(|d| d.as_bool()) == Some(true) => "is off (disabled)",
        Ok(_) => "is on",
        Err(_) => "does not answer on /jsz",
    }
}

/// Set `observed`, `detail` and `agree` from the prediction and the measurements (`want`: replicas that
/// must all report the same stream state).
#[allow(clippy::too_many_arguments)]
fn judge(
    res: &mut ScenarioResult,
    pred: &Prediction,
    attempts: &[Attempt],
    chk: &Check,
    tl: &Timeline,
    opts: &FaultOptions,
    resume_bound_s: f64,
    want: usize,
) {
    let timeout_s = opts.publish_timeout.as_secs_f64();
    let gap = res.unavailable_s;
    let first_after_heal = check::acks(attempts)
        .filter(|t| *t >= tl.heal_s)
        .fold(f64::INFINITY, f64::min);
    let resumed_after_s = first_after_heal - tl.heal_s;
    // Acks that can only have been granted while quorum was lost (in-flight ones get one timeout of grace).
    let during = check::acks(attempts)
        .filter(|t| *t > tl.inject_s + timeout_s && *t < tl.heal_s)
        .count();
    let lost = chk.acked_lost + chk.seq_mismatch;
    if lost > 0 {
        res.observed = "acked_lost".into();
    } else if !replicas_agree(&res.replicas, want) {
        res.observed = "replicas_diverged".into();
    }
    let lost_ok = lost == 0 || pred.acked_loss_risk;
    if pred.status.writable() {
        let bound = pred.stall_s.unwrap_or(0.0) + timeout_s + 5.0;
        let continued = gap <= bound && first_after_heal.is_finite();
        if lost == 0 && replicas_agree(&res.replicas, want) {
            res.observed = if continued {
                "writes_continued"
            } else {
                "stalled_too_long"
            }
            .into();
        }
        res.agree = continued && lost_ok && replicas_agree(&res.replicas, want);
        res.detail = format!(
            "longest write gap {gap:.1} s (bound {bound:.1} s = stall {:.0} s + publish timeout {timeout_s:.0} s + 5 s); \
             {} acked, {} lost, {} unknown ({} found), {} failed; {} tries retried after a timeout, {} after a refusal",
            pred.stall_s.unwrap_or(0.0),
            chk.acked,
            chk.acked_lost,
            chk.unknown,
            chk.unknown_recovered,
            chk.failed,
            chk.tries_unknown,
            chk.tries_refused
        );
    } else {
        let resumed = resumed_after_s <= resume_bound_s;
        let stalled = during == 0;
        if lost == 0 && replicas_agree(&res.replicas, want) {
            res.observed = match (stalled, resumed) {
                (false, _) => "writes_without_quorum",
                (true, true) => "stalled_until_healed",
                (true, false) => "stalled_too_long",
            }
            .into();
        }
        res.agree = stalled && resumed && lost_ok && replicas_agree(&res.replicas, want);
        res.detail = format!(
            "{during} acks while quorum was lost; writes resumed {} after healing (bound {resume_bound_s:.0} s); \
             longest gap {gap:.1} s; {} acked, {} lost, {} unknown ({} found), {} failed; {} tries retried after a \
             timeout, {} after a refusal",
            if resumed_after_s.is_finite() {
                format!("{resumed_after_s:.1} s")
            } else {
                "never".into()
            },
            chk.acked,
            chk.acked_lost,
            chk.unknown,
            chk.unknown_recovered,
            chk.failed,
            chk.tries_unknown,
            chk.tries_refused
        );
    }
    let states: Vec<String> = res
        .replicas
        .iter()
        .map(|r| format!("{} {}@{}..{}", r.server, r.messages, r.first_seq, r.last_seq))
        .collect();
    res.detail.push_str(&format!("; replicas: {}", states.join(", ")));
    if chk.unexpected + chk.duplicates > 0 {
        res.agree = false;
        res.detail.push_str(&format!(
            "; {} read but never attempted, {} duplicated",
            chk.unexpected, chk.duplicates
        ));
    }
}

/// All `want` replicas report the stream, with the same messages and first/last sequence.
fn replicas_agree(r: &[ReplicaState], want: usize) -> bool {
    r.len() == want
        && r.windows(2)
            .all(|w| (w[0].messages, w[0].first_seq, w[0].last_seq) == (w[1].messages, w[1].first_seq, w[1].last_seq))
}

async fn connect(urls: &[String]) -> Result<async_nats::Client> {
    let addrs = urls
        .iter()
        .map(|u| u.parse::<async_nats::ServerAddr>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow!("bad lab url: {e}"))?;
    async_nats::ConnectOptions::new()
        .name("natsplan-faults")
        .connection_timeout(Duration::from_secs(5))
        // A server cut off by a partition answers nothing: notice within a few seconds and reconnect to
        // one that can reach the stream, rather than after the default 2 minutes of missed pings.
        .ping_interval(Duration::from_secs(2))
        .retry_on_initial_connect()
        .connect(addrs)
        .await
        .context("cannot connect to the lab")
}

async fn create_stream(
    js: &jetstream::Context,
    name: &str,
    subject: &str,
    replicas: usize,
    placement_tag: Option<&str>,
) -> Result<()> {
    let cfg = stream::Config {
        name: name.into(),
        subjects: vec![subject.into()],
        num_replicas: replicas,
        placement: placement_tag.map(|t| stream::Placement {
            cluster: None,
            tags: vec![t.to_string()],
        }),
        storage: stream::StorageType::File,
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    };
    let mut last = None;
    for _ in 0..20 {
        match js.get_or_create_stream(cfg.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(anyhow!(
        "cannot create stream {name}: {}",
        last.map(|e| e.to_string()).unwrap_or_default()
    ))
}

async fn delete_stream(js: &jetstream::Context, name: &str) {
    let _ = js.delete_stream(name).await;
}

/// Publish `prefix-NNNNNNN` at `rate` until `stop`; each id retried under the same `Nats-Msg-Id` until it is
/// acknowledged (or the run stops), so every id ends ok / failed / unknown exactly once.
#[allow(clippy::too_many_arguments)]
async fn publisher(
    js: jetstream::Context,
    subject: String,
    prefix: String,
    rate: u32,
    timeout: Duration,
    stop: Arc<AtomicBool>,
    last_ack_ms: Arc<AtomicU64>,
    t0: Instant,
) -> Vec<Attempt> {
    let period = Duration::from_secs_f64(1.0 / rate as f64);
    let mut out = Vec::new();
    let mut next = tokio::time::Instant::now();
    let mut i = 0u64;
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let id = format!("{prefix}-{i:07}");
        let mut maybe_stored = false;
        let (mut tries_refused, mut tries_unknown) = (0u32, 0u32);
        let outcome = loop {
            let msg = Publish::build().payload(id.clone().into()).message_id(&id);
            let r = tokio::time::timeout(timeout, async {
                match js.send_publish(subject.clone(), msg).await {
                    Ok(f) => f.await.map_err(|e| (true, e.kind())),
                    Err(e) => Err((false, e.kind())),
                }
            })
            .await;
            match r {
                Ok(Ok(ack)) => {
                    let at_s = t0.elapsed().as_secs_f64();
                    last_ack_ms.store((at_s * 1000.0) as u64, Ordering::SeqCst);
                    break Outcome::Ok {
                        seq: ack.sequence,
                        at_s,
                    };
                }
                // Sent and then no ack: it may be stored. "No responders" means nobody took it.
                Ok(Err((sent, kind))) => {
                    use async_nats::jetstream::context::PublishErrorKind as K;
                    if sent && !matches!(kind, K::StreamNotFound) {
                        maybe_stored = true;
                        tries_unknown += 1;
                    } else {
                        tries_refused += 1;
                    }
                }
                Err(_) => {
                    maybe_stored = true;
                    tries_unknown += 1;
                }
            }
            if stop.load(Ordering::SeqCst) {
                break if maybe_stored {
                    Outcome::Unknown
                } else {
                    Outcome::Failed
                };
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        out.push(Attempt {
            id,
            outcome,
            tries_refused,
            tries_unknown,
        });
        next += period;
        let now = tokio::time::Instant::now();
        if next > now {
            tokio::time::sleep_until(next).await;
        } else {
            next = now; // behind after a stall: do not burst to catch up
        }
    }
    out
}

/// Every message of the stream as `(sequence, id)`.
/// Also returns how many sequences between the first and the last were answered "not found".
async fn read_all(js: &jetstream::Context, name: &str) -> Result<(Vec<(u64, String)>, u64)> {
    let mut s = None;
    for _ in 0..40 {
        match js.get_stream(name).await {
            Ok(x) => {
                s = Some(x);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
    let mut s = s.ok_or_else(|| anyhow!("stream {name} cannot be read back after healing"))?;
    let info = s.info().await.context("stream info")?;
    let (first, last) = (info.state.first_sequence, info.state.last_sequence);
    let mut out = Vec::new();
    let mut not_found = 0u64;
    if info.state.messages == 0 {
        return Ok((out, 0));
    }
    for seq in first..=last {
        let mut tries = 0;
        loop {
            match s.get_raw_message(seq).await {
                Ok(m) => {
                    out.push((seq, String::from_utf8_lossy(&m.payload).into_owned()));
                    break;
                }
                Err(e) if e.to_string().contains("no message found") || e.to_string().contains("not found") => {
                    not_found += 1;
                    break;
                }
                Err(e) => {
                    tries += 1;
                    if tries > 20 {
                        bail!("cannot read message {seq} of {name}: {e}");
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            }
        }
    }
    Ok((out, not_found))
}

/// Every replica's stream state from its own `/jsz`, waiting (60 s at most) for them to converge on `last`.
fn replica_states(lab: &Lab, name: &str, last: u64, want: usize) -> Vec<ReplicaState> {
    let t0 = Instant::now();
    loop {
        let mut v = Vec::new();
        for n in lab.nodes() {
            let Ok(j) = monitor::jsz(&n.monitor_url(), "accounts=true&streams=true", Duration::from_secs(2)) else {
                continue;
            };
            for acc in j
                .get("account_details")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
            {
                for st in acc
                    .get("stream_detail")
                    .and_then(|a| a.as_array())
                    .into_iter()
                    .flatten()
                {
                    if st.get("name").and_then(|x| x.as_str()) == Some(name) {
                        let g = |k: &str| st.pointer(&format!("/state/{k}")).and_then(|x| x.as_u64()).unwrap_or(0);
                        v.push(ReplicaState {
                            server: n.name.clone(),
                            messages: g("messages"),
                            first_seq: g("first_seq"),
                            last_seq: g("last_seq"),
                        });
                    }
                }
            }
        }
        let done = v.len() == want && replicas_agree(&v, want) && v[0].last_seq >= last;
        if done || t0.elapsed() > Duration::from_secs(60) {
            return v;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Copy a folder tree (a server's store, for a finding's archive); files that vanish meanwhile are skipped.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else if let Err(err) = std::fs::copy(e.path(), &dest) {
            if err.kind() != std::io::ErrorKind::NotFound {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Save every server's log tail, `/jsz` and a copy of its store for a loss or divergence; returns the folder.
fn save_finding(lab: &Lab, dir: Option<&Path>, name: &str, res: &ScenarioResult) -> Result<String> {
    let dir = dir.ok_or_else(|| anyhow!("no findings folder"))?.join(name);
    std::fs::create_dir_all(&dir)?;
    for n in lab.nodes() {
        std::fs::write(dir.join(format!("{}.log", n.name)), lab::log_tail(&n.log, 1 << 20))?;
        if let Ok(j) = monitor::jsz(
            &n.monitor_url(),
            "accounts=true&streams=true&config=true",
            Duration::from_secs(2),
        ) {
            std::fs::write(
                dir.join(format!("{}.jsz.json", n.name)),
                serde_json::to_vec_pretty(&j).unwrap_or_default(),
            )?;
        }
    }
    for n in lab.nodes() {
        copy_tree(&n.store_dir, &dir.join(format!("{}-store", n.name)))
            .with_context(|| format!("cannot archive the store of {}", n.name))?;
    }
    std::fs::write(
        dir.join("scenario.json"),
        serde_json::to_vec_pretty(res).unwrap_or_default(),
    )?;
    Ok(dir.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::survival::Status;

    fn p(nodes: usize, steps: &[&[&str]]) -> Prediction {
        let (site, layout) = model_of_lab(nodes, SyncMode::Interval(120));
        let steps: Vec<Vec<String>> = steps
            .iter()
            .map(|s| s.iter().map(|x| x.to_string()).collect())
            .collect();
        predict(&site, &layout, &steps).unwrap()
    }

    #[test]
    fn the_model_predicts_what_the_ladder_expects() {
        assert!(p(3, &[&["process:n2"]]).status.writable());
        assert!(p(3, &[&["pause:n1"]]).status.writable());
        assert_eq!(p(3, &[&["process:n1", "process:n2"]]).status, Status::Unavailable);
        assert_eq!(
            p(3, &[&["process:n1", "process:n2", "process:n3"]]).status,
            Status::Unavailable
        );
        let rolling = p(3, &[&["process:n1"], &["process:n2"], &["process:n3"]]);
        assert!(rolling.status.writable());
        assert!(!p(3, &[&["process:n1"]]).acked_loss_risk);
        assert!(p(5, &[&["process:n4"]]).status.writable());
        // Whole-site power loss with interval sync: the one case where acknowledged writes are at risk.
        let power = p(3, &[&["power:r1", "power:r2", "power:r3"]]);
        assert!(power.acked_loss_risk, "{power:?}");
        assert!(!p(3, &[&["process:n1", "process:n2", "process:n3"]]).acked_loss_risk);
        let wipe = p(3, &[&["wipe:n2"]]);
        assert!(wipe.status.writable() && !wipe.acked_loss_risk, "{wipe:?}");
    }

    fn acked_every(times: &[f64]) -> Vec<Attempt> {
        times
            .iter()
            .enumerate()
            .map(|(i, t)| Attempt {
                id: format!("m{i}"),
                outcome: Outcome::Ok {
                    seq: i as u64 + 1,
                    at_s: *t,
                },
                tries_refused: 0,
                tries_unknown: 0,
            })
            .collect()
    }

    fn judged(pred: Status, stall_s: Option<f64>, times: &[f64], inject_s: f64, heal_s: f64) -> ScenarioResult {
        let a = acked_every(times);
        let read: Vec<(u64, String)> = a
            .iter()
            .enumerate()
            .map(|(i, x)| (i as u64 + 1, x.id.clone()))
            .collect();
        let chk = check(&a, &read);
        let mut r = not_run(Kind::LeaderKill, String::new());
        r.skipped = None;
        r.replicas = ["n1", "n2", "n3"]
            .iter()
            .map(|s| ReplicaState {
                server: s.to_string(),
                messages: a.len() as u64,
                first_seq: 1,
                last_seq: a.len() as u64,
            })
            .collect();
        r.unavailable_s = longest_gap_s(&a, 0.0);
        let p = Prediction {
            status: pred,
            stall_s,
            acked_loss_risk: false,
        };
        let opts = FaultOptions::full(3);
        judge(&mut r, &p, &a, &chk, &Timeline { inject_s, heal_s }, &opts, 17.0, 3);
        r
    }

    #[test]
    fn judging_compares_gaps_and_stalls_with_the_prediction() {
        // Degraded, one 6 s election gap: agrees. A 30 s gap does not.
        let ok = judged(
            Status::Degraded,
            Some(10.0),
            &[0.5, 1.0, 7.0, 8.0, 20.0, 21.0],
            1.0,
            12.0,
        );
        assert!(ok.agree && ok.observed == "writes_continued", "{ok:?}");
        let slow = judged(Status::Degraded, Some(10.0), &[0.5, 1.0, 31.0, 32.0], 1.0, 12.0);
        assert!(!slow.agree && slow.observed == "stalled_too_long", "{slow:?}");
        // Unavailable: no acks between inject + timeout and heal, resumed soon after: agrees.
        let st = judged(Status::Unavailable, None, &[0.5, 1.0, 1.5, 15.0, 16.0], 1.0, 10.0);
        assert!(st.agree && st.observed == "stalled_until_healed", "{st:?}");
        // Acks while quorum was supposedly lost: disagrees.
        let w = judged(Status::Unavailable, None, &[0.5, 1.0, 5.0, 15.0], 1.0, 10.0);
        assert!(!w.agree && w.observed == "writes_without_quorum", "{w:?}");
        // Never resumed after healing: disagrees.
        let never = judged(Status::Unavailable, None, &[0.5, 1.0], 1.0, 10.0);
        assert!(!never.agree, "{never:?}");
    }

    #[test]
    fn store_archives_copy_the_whole_tree() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("jetstream/$G/streams/s")).unwrap();
        std::fs::write(src.path().join("jetstream/$G/streams/s/1.blk"), b"abc").unwrap();
        let dst = tempfile::tempdir().unwrap();
        copy_tree(src.path(), &dst.path().join("n1-store")).unwrap();
        let got = std::fs::read(dst.path().join("n1-store/jetstream/$G/streams/s/1.blk")).unwrap();
        assert_eq!(got, b"abc");
    }

    #[test]
    fn max_file_store_is_set_in_the_jetstream_block() {
        let c = "jetstream {\n  store_dir: \"/x\"\n  sync_interval: \"2m\"\n}\n";
        let got = set_max_file_store(c, 1024).unwrap();
        assert_eq!(
            got,
            "jetstream {\n  store_dir: \"/x\"\n  max_file_store: 1024\n  sync_interval: \"2m\"\n}\n"
        );
        // An existing limit is replaced, not doubled.
        let again = set_max_file_store(&got, 7).unwrap();
        assert_eq!(again.matches("max_file_store").count(), 1, "{again}");
        assert!(again.contains("max_file_store: 7"));
        assert!(set_max_file_store("listen: 1\n", 5).is_none());
    }

    #[test]
    fn predictions_follow_where_the_stream_was_placed() {
        let (site, layout) = model_of_lab(5, SyncMode::Interval(120));
        let peers: Vec<String> = ["n1", "n2", "n3"].iter().map(|s| s.to_string()).collect();
        let pinned = pin_test_stream(&site, &layout, &peers).unwrap();
        let st = |l: &Layout, sel: &[&str]| {
            let steps = vec![sel.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
            predict(&site, l, &steps).unwrap().status
        };
        // Two servers that hold no replica: the pinned stream is untouched; the free one might have been.
        assert_eq!(st(&pinned, &["process:n4", "process:n5"]), Status::Ok);
        assert_eq!(st(&layout, &["process:n4", "process:n5"]), Status::Unavailable);
        // A partitioned replica holder: degraded (an election if it led); two of them: unavailable.
        assert_eq!(st(&pinned, &["net:r1"]), Status::Degraded);
        assert_eq!(st(&pinned, &["net:r1", "net:r2"]), Status::Unavailable);
        // A full store is that replica out of service.
        assert_eq!(st(&pinned, &["full:n3"]), Status::Degraded);
        assert!(pin_test_stream(&site, &layout, &["x9".to_string()]).is_err());
    }

    #[test]
    fn rack_scenarios_run_only_with_a_plan_or_when_asked() {
        assert!(!Kind::ladder().iter().any(|k| k.per_rack()));
        assert_eq!(Kind::ladder().len(), 11);
        assert!(Kind::ALL.iter().filter(|k| k.per_rack()).count() == 2);
        assert!(Kind::ladder().iter().filter(|k| k.needs_net()).count() == 1);
    }

    #[test]
    fn a_wiped_server_gets_a_new_name_in_its_conf() {
        let c = "# x\nserver_name: n2\nlisten: 127.0.0.1:1\n";
        assert_eq!(
            rename_server(c, "n2", "n2-w").unwrap(),
            "# x\nserver_name: n2-w\nlisten: 127.0.0.1:1\n"
        );
        assert!(rename_server("listen: 1\n", "n2", "n2-w").is_none());
    }

    #[test]
    fn scenario_names_round_trip_and_typos_are_explained() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()).unwrap(), k);
        }
        let e = Kind::parse("leader-kil").unwrap_err().to_string();
        assert!(e.contains("leader-kill"), "{e}");
    }
}
