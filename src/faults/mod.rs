//! Fault verification (`verify --faults`, issue 8): start a lab cluster of our own, inject real failures
//! (kill -9, SIGSTOP, restarts, a wiped store, a full store on a small tmpfs, network partitions between
//! per-server network namespaces) while a throttled publisher writes uniquely-identified messages, heal,
//! read everything back and check it as Jepsen does, then compare the outcome with what
//! `survival::evaluate` predicts for the same failure-domain selectors — on a layout shaped like the lab,
//! or on a planned layout whose servers the lab runs (`--site --layout`), with whole racks failed.

mod check;
mod drill;
mod full;
mod inject;
mod judge;
mod one;
mod power;
mod predict;
pub mod recover;
mod report;
pub mod sandbox;
mod scenario;
mod traffic;

#[allow(unused_imports)]
use self::{full::*, inject::*, judge::*, one::*, traffic::*};
pub use crate::survival::AckedLoss;
pub use check::{check, longest_gap_s, Attempt, PublishFate};
pub use predict::{model_of_lab, pin_test_stream, predict, ScenarioPrediction, OPERATOR_DELAYS};
pub use recover::RecoveryStep;
pub use report::{json, table, write_results, Check, FaultReport, ReplicaState, ScenarioResult};
pub use scenario::{
    FaultKind, FaultOptions, FullDiskAt, PlanTarget, MAX_PLAN_SERVERS, POWER_EXPIRY, POWER_ROUTE_PING, POWER_TRIES,
};

use crate::lab::{self, Lab, LabSpec, StartHooks, StartOptions};
use crate::layout::Layout;
use crate::site::Site;
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self};
use sandbox::Netns;
use std::path::{Path, PathBuf};

/// Name of the asset standing for the test streams in the predicted layout.
const ASSET: &str = "natsplan-faults";

/// Scenarios with their place in the run.
type Numbered = Vec<(usize, Planned)>;

/// One scenario to run: its kind and, for whole-rack kinds, the rack (site index).
#[derive(Debug, Clone, Copy)]
struct Planned {
    kind: FaultKind,
    rack: Option<usize>,
}
/// Run the scenarios on a lab of our own (started here, stopped and removed before returning, with any
/// tmpfs mounts and network namespaces it needed — also on error, panic or interruption).
pub fn run(opts: &FaultOptions, log: &dyn Fn(&str)) -> Result<FaultReport> {
    let nodes = lab_size(opts)?;
    for s in sandbox::sweep_stale() {
        log(&format!("removed a stale {s} left by an earlier run"));
    }
    let bin = lab::find_nats_server(opts.nats_server.as_deref())?;
    let (a, b, c) = lab::nats_server_version(&bin)?;
    let (site, layout, rack_of) = lab_racks(opts, nodes)?;
    let planned = plan_scenarios(opts, &site, &rack_of)?;
    let (netns, net_skip) = lab_network(&planned, &rack_of, log)?;
    let power_skip = power_skip(&planned, log);
    let hub = netns.as_ref().map(|n| n.hub().to_string());
    let result = on_hub_thread(hub, log, |tlog| {
        let setup = Setup {
            opts,
            site: &site,
            layout: &layout,
            rack_of: &rack_of,
            bin: &bin,
            netns: netns.as_ref(),
            net_skip: net_skip.as_deref(),
            log: tlog,
        };
        setup.run_groups(&planned, power_skip.as_deref())
    });
    drop(netns);
    Ok(FaultReport {
        nodes,
        nats_server_version: format!("{a}.{b}.{c}"),
        publish_rate_per_s: opts.publish_rate_per_s,
        publish_timeout_s: opts.publish_timeout.as_secs_f64(),
        target: opts.target.as_ref().map(|t| t.label.clone()),
        scenarios: result?,
        interrupted: opts.interrupted(),
    })
}

/// The number of lab servers (the plan's, or `--nodes`), checked with the publish rate before anything
/// starts.
fn lab_size(opts: &FaultOptions) -> Result<usize> {
    let nodes = opts.target.as_ref().map(|t| t.nodes.len()).unwrap_or(opts.nodes);
    if nodes < 3 {
        bail!("--nodes {nodes}: fault verification needs at least 3 servers for an R3 stream");
    }
    crate::input::limits::FAULT_LAB_SERVERS
        .check_usize(nodes)
        .map_err(|e| anyhow!("--nodes {nodes}: {e}"))?;
    if opts.publish_rate_per_s == 0 {
        bail!("the publish rate must be at least 1 message per second");
    }
    Ok(nodes)
}

/// The site and layout the lab stands for (the plan's, or a model of a lab of `nodes` servers) and the
/// rack of each lab server (site indices): the plan's, or one per server.
fn lab_racks(opts: &FaultOptions, nodes: usize) -> Result<(Site, Layout, Vec<usize>)> {
    let (site, layout, names) = match &opts.target {
        Some(t) => (
            t.site.clone(),
            t.layout.clone(),
            t.nodes.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
        ),
        None => {
            let (s, l) = model_of_lab(nodes, opts.sync);
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
    Ok((site, layout, rack_of))
}

/// The scenarios in the run's order: each asked kind once, a whole-rack kind once per rack of the lab
/// (those of `--racks` only, when given; each of them must be a rack of the site).
fn plan_scenarios(opts: &FaultOptions, site: &Site, rack_of: &[usize]) -> Result<Vec<Planned>> {
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
    Ok(planned)
}

/// The lab's network namespaces, when a scenario needs them and they can be made; else none, with why
/// the scenarios that need them are skipped.
fn lab_network(planned: &[Planned], rack_of: &[usize], log: &dyn Fn(&str)) -> Result<(Option<Netns>, Option<String>)> {
    let need_net = planned.iter().any(|p| p.kind.needs_net());
    let net_skip = if need_net { sandbox::netns_unavailable() } else { None };
    let netns = match (need_net, &net_skip) {
        (true, None) => Some(Netns::create(rack_of)?),
        _ => None,
    };
    if let Some(n) = &netns {
        log(&format!(
            "lab network: one namespace per server, racks bridged in {} (10.213.0.0/24, inside the namespaces only)",
            n.hub()
        ));
    }
    Ok((netns, net_skip))
}

/// Why the planned power scenarios are skipped: the power-loss layer cannot mount here (FUSE); none
/// when it mounts (dead mounts a killed probe left are removed first) or no power scenario is planned.
/// Power scenarios run on a second lab whose stores sit on the power-loss layer, after the others
/// (whose results the layer's cost must not touch).
fn power_skip(planned: &[Planned], log: &dyn Fn(&str)) -> Option<String> {
    if !planned.iter().any(|p| p.kind.is_power()) {
        return None;
    }
    match crate::powerfs::probe() {
        Ok(cleaned) => {
            if !cleaned.is_empty() {
                log(&format!(
                    "unmounted {} dead FUSE mount(s) a killed power-loss probe left",
                    cleaned.len()
                ));
            }
            None
        }
        Err(e) => Some(format!("the power-loss layer cannot mount here (FUSE): {e}")),
    }
}

/// Run `f` on a thread of its own, in the hub namespace `hub` when the lab runs in namespaces (our
/// connections to the servers come from there; threads started from it, the async runtime's and the
/// lab's spawner, inherit it), its log lines passed on to `log` as they come.
fn on_hub_thread<T: Send>(
    hub: Option<String>,
    log: &dyn Fn(&str),
    f: impl FnOnce(&dyn Fn(&str)) -> Result<T> + Send,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::scope(|sc| {
        let h = sc.spawn(move || -> Result<T> {
            let tlog = |m: &str| {
                let _ = tx.send(m.to_string());
            };
            if let Some(h) = &hub {
                sandbox::enter_netns(h)?;
            }
            f(&tlog)
        });
        for m in rx {
            log(&m);
        }
        match h.join() {
            Ok(r) => r,
            Err(p) => std::panic::resume_unwind(p),
        }
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

/// What every lab of a run shares: the options, the site and layout the lab stands for, the rack of each
/// lab server (site indices), the nats-server binary, the lab's network namespaces (or why the scenarios
/// needing them are skipped) and the log.
struct Setup<'a> {
    opts: &'a FaultOptions,
    site: &'a Site,
    layout: &'a Layout,
    rack_of: &'a [usize],
    bin: &'a Path,
    netns: Option<&'a Netns>,
    net_skip: Option<&'a str>,
    log: &'a dyn Fn(&str),
}

impl Setup<'_> {
    /// The plain scenarios on one lab, then the power scenarios on a second lab whose stores sit on the
    /// power-loss layer (or all skipped with `power_skip`); results in the run's order.
    fn run_groups(&self, planned: &[Planned], power_skip: Option<&str>) -> Result<Vec<ScenarioResult>> {
        let (opts, site) = (self.opts, self.site);
        let (power, plain): (Numbered, Numbered) = planned
            .iter()
            .copied()
            .enumerate()
            .partition(|(_, p)| p.kind.is_power());
        // A lab that a stop signal kept from starting: its scenarios are reported as not run.
        let or_interrupted = |r: Result<Vec<(usize, ScenarioResult)>>, group: &Numbered| match r {
            Err(_) if opts.interrupted() => Ok(group
                .iter()
                .map(|&(i, p)| (i, interrupted(site, p, "not run: interrupted")))
                .collect()),
            r => r,
        };
        let mut out = Vec::new();
        if !plain.is_empty() {
            out.extend(or_interrupted(self.run_in_lab(&plain, None), &plain)?);
        }
        match (power_skip, power.is_empty()) {
            (_, true) => {}
            _ if opts.interrupted() => {
                out.extend(
                    power
                        .iter()
                        .map(|&(i, p)| (i, interrupted(site, p, "not run: interrupted"))),
                );
            }
            (Some(why), false) => {
                for &(i, p) in &power {
                    (self.log)(&format!("scenario {}: {}", i + 1, scenario_name(site, p)));
                    (self.log)(&format!("  skipped: {why}"));
                    let mut r = not_run(p.kind, why.to_string());
                    r.name = scenario_name(site, p);
                    out.push((i, r));
                }
            }
            (None, false) => {
                let pf = lab::PowerFs {
                    expiry: POWER_EXPIRY,
                    metadata: crate::powerfs::Metadata::Journal,
                };
                out.extend(or_interrupted(self.run_in_lab(&power, Some(pf)), &power)?);
            }
        }
        out.sort_by_key(|(i, _)| *i);
        Ok(out.into_iter().map(|(_, r)| r).collect())
    }

    /// Start a lab (its stores on the power-loss layer with `power_fs`), run `planned` on it in order and
    /// stop it.
    fn run_in_lab(
        &self,
        planned: &[(usize, Planned)],
        power_fs: Option<lab::PowerFs>,
    ) -> Result<Vec<(usize, ScenarioResult)>> {
        let opts = self.opts;
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{}{}-", sandbox::DIR_PREFIX, std::process::id()))
            .tempdir()
            .context("cannot create a temporary lab folder")?;
        let spec = lab_spec(opts, tmp.path());
        (self.log)(&starting(spec.nodes.len(), tmp.path(), power_fs, opts));
        let start = StartOptions {
            net: self.netns.map(Netns::node_nets),
            power_fs,
            route_ping: power_fs.map(|_| POWER_ROUTE_PING),
            ..StartOptions::default()
        };
        let hooks = StartHooks {
            cancel: opts.interrupt,
            on_spawned: None,
        };
        let mut lab = Lab::start_with(spec, self.bin, &start, &hooks)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        let ctx = Ctx {
            rt: &rt,
            site: self.site,
            layout: self.layout,
            opts,
            rack_of: self.rack_of,
            netns: self.netns,
            net_skip: self.net_skip,
            replicas: opts.target.as_ref().map(|t| t.replicas as usize).unwrap_or(3),
            placement_tag: opts.target.as_ref().and_then(|t| t.placement_tag.clone()),
            log: self.log,
        };
        let scenarios = planned
            .iter()
            .map(|&(i, p)| (i, scenario(&ctx, &mut lab, i, p)))
            .collect();
        if !opts.interrupted() {
            // A clean stop; after a signal the lab is killed as it drops (quicker: a full store can hold a
            // server's shutdown).
            let _ = lab.stop();
        }
        drop(lab);
        drop(tmp);
        Ok(scenarios)
    }
}

/// The lab's servers in `dir`: the plan's, or `--nodes` plain ones. Each is tagged `node:NAME`, which
/// lets a scenario place a stream on one chosen server (the full: filler).
fn lab_spec(opts: &FaultOptions, dir: &Path) -> LabSpec {
    let mut spec = match &opts.target {
        Some(t) => LabSpec {
            nodes: t.nodes.clone(),
            cluster_name: t.cluster_name.clone(),
            sync: t.sync,
            unique_tag: t.unique_tag.clone(),
            dir: dir.to_path_buf(),
            client_tls: None,
        },
        None => LabSpec {
            sync: opts.sync,
            ..LabSpec::plain(opts.nodes, dir)
        },
    };
    for n in &mut spec.nodes {
        n.tags.push(format!("node:{}", n.name));
    }
    spec
}

/// The log line of a lab starting: its size, folder, power-loss layer and plan.
fn starting(servers: usize, dir: &Path, power_fs: Option<lab::PowerFs>, opts: &FaultOptions) -> String {
    format!(
        "starting a {servers}-node lab in {}{}{}",
        dir.display(),
        match power_fs {
            Some(pf) => format!(
                " with its stores on the power-loss layer (dirty expiry {} s)",
                pf.expiry.as_secs_f64()
            ),
            None => String::new(),
        },
        opts.target
            .as_ref()
            .map(|t| format!(" for {}", t.label))
            .unwrap_or_default()
    )
}

/// Scenario `i` (`p`) on the lab, logged: its result; not run after a stop signal; interrupted when a
/// signal came while it ran; a harness failure otherwise when it could not run.
fn scenario(ctx: &Ctx, lab: &mut Lab, i: usize, p: Planned) -> ScenarioResult {
    let (opts, site, log) = (ctx.opts, ctx.site, ctx.log);
    if opts.interrupted() {
        // A stop signal: what finished is kept, this one and the rest are reported as not run.
        return interrupted(site, p, "not run: interrupted");
    }
    let label = scenario_name(site, p);
    log(&format!("scenario {}: {label}", i + 1));
    match run_one(ctx, lab, p, i) {
        Ok(s) => {
            match &s.skipped {
                Some(why) => log(&format!("  skipped: {why}")),
                None => log(&format!(
                    "  predicted {} / observed {} / agree {} ({})",
                    s.predicted, s.observed, s.agree, s.detail
                )),
            }
            s
        }
        Err(e) if opts.interrupted() => {
            log("  interrupted: stopping the lab");
            let why = format!("interrupted while it ran, not judged ({e:#})");
            interrupted(site, p, &why)
        }
        Err(e) => harness_failed(ctx, lab, i, p, label, &e),
    }
}

/// A harness failure (lab would not heal, stream not created): reported, never as agreement, with its
/// evidence saved; then the lab is healed and the scenario's stream removed for the next scenario.
fn harness_failed(ctx: &Ctx, lab: &mut Lab, i: usize, p: Planned, label: String, e: &anyhow::Error) -> ScenarioResult {
    let rt = ctx.rt;
    (ctx.log)(&format!("  could not run: {e:#}"));
    let mut r = not_run(p.kind, format!("the harness failed: {e:#}"));
    r.name = label;
    r.skipped = None;
    r.observed = "harness_failed".into();
    // Evidence of why, as for a loss: logs, /jsz, stores.
    r.finding = save_finding(
        lab,
        ctx.opts.findings_dir.as_deref(),
        &format!("{}-harness", r.name),
        &r,
    )
    .ok();
    if let Some(n) = ctx.netns {
        let _ = n.heal();
    }
    let _ = lab_heal_all(lab);
    // The scenario's stream may be what keeps a server unhealthy: remove it.
    let name = format!("natsplan-faults-{}-{i}", p.kind.name());
    let _g = rt.enter();
    if let Ok(c) = rt.block_on(connect(&lab.client_urls())) {
        rt.block_on(delete_stream(&jetstream::new(c.clone()), &name));
        rt.block_on(c.drain()).ok();
    }
    r
}

/// A scenario a stop signal kept from finishing: skipped (never judged), observed `interrupted`.
fn interrupted(site: &Site, p: Planned, why: &str) -> ScenarioResult {
    let mut r = not_run(p.kind, why.to_string());
    r.name = scenario_name(site, p);
    r.observed = "interrupted".into();
    r
}

fn scenario_name(site: &Site, p: Planned) -> String {
    match p.rack {
        Some(r) => format!("{}:{}", p.kind.name(), site.racks[r].name),
        None => p.kind.name().into(),
    }
}

/// Run with Ctrl-C handling (SIGINT, SIGTERM, SIGHUP stop the scenario running within about a second and
/// remove the lab, its mounts and namespaces; the scenarios that finished are reported, the rest marked
/// `interrupted`, and `FaultReport::interrupted` is set) and, when `out` is given, write one results folder
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
    let folder = out.map(|d| crate::report::render::unused_folder(d, &format!("{}-faults", crate::clock::utc_now().1)));
    if o.findings_dir.is_none() {
        o.findings_dir = folder.as_ref().map(|f| f.join("findings"));
    }
    let r = match run(&o, log) {
        // Before the first scenario (the lab or its namespaces were being set up): nothing to report.
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

#[cfg(test)]
mod tests;
