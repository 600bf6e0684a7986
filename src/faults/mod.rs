//! Fault verification (`verify --faults`, issue 8): start a lab cluster of our own, inject real failures
//! (kill -9, SIGSTOP, restarts) while a throttled publisher writes uniquely-identified messages, heal, read
//! everything back and check it as Jepsen does, then compare the outcome with what `survival::evaluate`
//! predicts for the same failure-domain selectors on a layout shaped like the lab.

mod check;
mod report;

pub use check::{check, longest_gap_s, Attempt, Outcome};
pub use report::{json, table, write_results, Check, FaultReport, ReplicaState, ScenarioResult};

use crate::lab::{self, Lab, LabSpec};
use crate::layout::{Layout, Raid};
use crate::monitor;
use crate::site::{Pattern, Site};
use crate::survival::fixture::{self, LayoutBuilder, RackSpec};
use crate::survival::{evaluate, Domain, ELECTION_STALL_S};
use crate::units::SyncMode;
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self, message::PublishMessage as Publish, stream};
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
    /// kill -9 a follower, empty its store, restart it under a new server name and peer-remove the old
    /// one from the stream (DESIGN.md's recovery for a destroyed store). Last live scenario: the meta group
    /// keeps the old name as an offline peer afterwards.
    Wipe,
    /// Power loss of the whole site: not producible by killing processes.
    PowerLoss,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::FollowerKill,
        Kind::LeaderKill,
        Kind::LeaderPause,
        Kind::MajorityKill,
        Kind::AllKill,
        Kind::RollingRestart,
        Kind::Wipe,
        Kind::PowerLoss,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Kind::FollowerKill => "follower-kill",
            Kind::LeaderKill => "leader-kill",
            Kind::LeaderPause => "leader-pause",
            Kind::MajorityKill => "majority-kill",
            Kind::AllKill => "all-kill",
            Kind::RollingRestart => "rolling-restart",
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
}

/// What to run.
#[derive(Debug, Clone)]
pub struct FaultOptions {
    /// Lab size (3 or more; the stream is R3).
    pub nodes: usize,
    /// The scenarios, in order.
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
}

impl FaultOptions {
    /// The full ladder on `nodes` servers.
    pub fn full(nodes: usize) -> FaultOptions {
        FaultOptions {
            nodes,
            scenarios: Kind::ALL.to_vec(),
            nats_server: None,
            publish_rate_per_s: 200,
            publish_timeout: Duration::from_secs(2),
            warmup: Duration::from_secs(2),
            hold: Duration::from_secs(8),
            after: Duration::from_secs(4),
            findings_dir: None,
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
}

/// The site and layout the predictions are made on: one rack per lab server (so `power:` of one rack
/// is one server), each server with its own RAID 1 group, one free-placed R3 stream, the lab's sync mode.
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

/// Run the scenarios on a lab of our own (started here, stopped and removed before returning).
pub fn run(opts: &FaultOptions, log: &dyn Fn(&str)) -> Result<FaultReport> {
    if opts.nodes < 3 {
        bail!(
            "--nodes {}: fault verification needs at least 3 servers for an R3 stream",
            opts.nodes
        );
    }
    if opts.publish_rate_per_s == 0 {
        bail!("the publish rate must be at least 1 message per second");
    }
    let bin = lab::find_nats_server(opts.nats_server.as_deref())?;
    let (a, b, c) = lab::nats_server_version(&bin)?;
    let tmp = tempfile::Builder::new()
        .prefix("natsplan-faults-")
        .tempdir()
        .context("cannot create a temporary lab folder")?;
    let spec = LabSpec::plain(opts.nodes, tmp.path());
    let sync = spec.sync;
    log(&format!(
        "starting a {}-node lab in {}",
        opts.nodes,
        tmp.path().display()
    ));
    let mut lab = Lab::start(spec, &bin)?;
    let (site, layout) = model_of_lab(opts.nodes, sync);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut scenarios = Vec::new();
    for (i, k) in opts.scenarios.iter().enumerate() {
        log(&format!("scenario {}: {}", i + 1, k.name()));
        let r = run_one(&rt, &mut lab, &site, &layout, *k, i, opts, log);
        match r {
            Ok(s) => {
                log(&format!(
                    "  predicted {} / observed {} / agree {} ({})",
                    s.predicted, s.observed, s.agree, s.detail
                ));
                scenarios.push(s);
            }
            Err(e) => {
                // A harness failure (lab would not heal, stream not created): report it, never as agreement.
                log(&format!("  could not run: {e:#}"));
                scenarios.push(not_run(*k, format!("the harness failed: {e:#}")));
                let _ = lab_heal_all(&mut lab);
            }
        }
    }
    let _ = lab.stop();
    drop(lab);
    drop(tmp);
    Ok(FaultReport {
        nodes: opts.nodes,
        nats_server_version: format!("{a}.{b}.{c}"),
        publish_rate_per_s: opts.publish_rate_per_s,
        publish_timeout_s: opts.publish_timeout.as_secs_f64(),
        scenarios,
    })
}

/// The CLI entry: run, print the table (or JSON), write the results folder when `out` is given.
/// Returns whether the run failed (exit 1).
pub fn run_cli(opts: &FaultOptions, json_out: bool, out: Option<&Path>) -> Result<(Vec<u8>, bool)> {
    let log = |m: &str| eprintln!("{m}");
    let mut o = opts.clone();
    // One folder per run, as verify's: DIR/<utc>-faults/ with the report and any findings.
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
    let r = run(&o, &log)?;
    if let Some(f) = &folder {
        write_results(f, &r)?;
        eprintln!("results in {}", f.display());
    }
    Ok((if json_out { json(&r) } else { table(&r) }, r.failed()))
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
    lab.wait_healthy(Duration::from_secs(60))
}

/// The stream's leader and followers by lab index, asked until a leader shows.
fn stream_roles(lab: &Lab, name: &str) -> Result<(usize, Vec<usize>)> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = lab.streams().into_iter().find(|s| s.name == name) {
            if let (Some(l), 3) = (s.leader.as_deref(), s.peers.len()) {
                let idx = |p: &str| {
                    lab.node(p)
                        .or_else(|e| lab.node(p.strip_suffix(WIPED_SUFFIX).ok_or(e)?))
                };
                let li = idx(l)?;
                let f = s
                    .peers
                    .iter()
                    .filter(|p| p.as_str() != l)
                    .map(|p| idx(p))
                    .collect::<Result<Vec<_>>>()?;
                return Ok((li, f));
            }
        }
        if t0.elapsed() > Duration::from_secs(20) {
            bail!("stream {name} shows no leader with 3 peers after 20 s");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What the fault did and when (seconds since the scenario's start).
struct Timeline {
    inject_s: f64,
    heal_s: f64,
}

#[allow(clippy::too_many_arguments)]
fn run_one(
    rt: &tokio::runtime::Runtime,
    lab: &mut Lab,
    site: &Site,
    layout: &Layout,
    k: Kind,
    idx: usize,
    opts: &FaultOptions,
    log: &dyn Fn(&str),
) -> Result<ScenarioResult> {
    if k == Kind::PowerLoss {
        // The whole site at once: the case where unsynced acknowledged writes are at risk.
        let sels: Vec<String> = site.racks.iter().map(|r| format!("power:{}", r.name)).collect();
        let pred = predict(site, layout, std::slice::from_ref(&sels))?;
        let why = "power loss (unsynced writes dropped) cannot be produced by killing processes: the page \
                   cache survives; needs VMs or machines whose power can be cut";
        let mut res = not_run(k, why.into());
        res.selectors = sels;
        res.predicted = pred.status.as_str().into();
        res.predicted_stall_s = pred.stall_s;
        res.predicted_acked_loss_risk = pred.acked_loss_risk;
        return Ok(res);
    }
    let name = format!("natsplan-faults-{}-{idx}", k.name());
    let subject = format!("natsplan.faults.{idx}");
    let urls = lab.client_urls();
    // The JetStream context spawns its acker task on creation: it must be made inside the runtime.
    let _rt_guard = rt.enter();
    let client = rt.block_on(connect(&urls))?;
    let js = jetstream::new(client.clone());
    rt.block_on(create_stream(&js, &name, &subject))?;
    let (leader, followers) = stream_roles(lab, &name)?;
    let sel = |i: usize, kind: &str| format!("{kind}:{}", lab.nodes()[i].name);
    let n = lab.nodes().len();
    let (steps, selectors): (Vec<Vec<String>>, Vec<String>) = match k {
        Kind::FollowerKill => (
            vec![vec![sel(followers[0], "process")]],
            vec![sel(followers[0], "process")],
        ),
        Kind::LeaderKill => (vec![vec![sel(leader, "process")]], vec![sel(leader, "process")]),
        Kind::LeaderPause => (vec![vec![sel(leader, "pause")]], vec![sel(leader, "pause")]),
        Kind::MajorityKill => {
            let s = vec![sel(leader, "process"), sel(followers[0], "process")];
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
        Kind::Wipe => (vec![vec![sel(followers[0], "wipe")]], vec![sel(followers[0], "wipe")]),
        Kind::PowerLoss => unreachable!("handled above"),
    };
    let pred = predict(site, layout, &steps)?;
    let mut res = not_run(k, String::new());
    res.selectors = selectors;
    res.predicted = pred.status.as_str().into();
    res.predicted_stall_s = pred.stall_s;
    res.predicted_acked_loss_risk = pred.acked_loss_risk;
    res.skipped = None;

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
    std::thread::sleep(opts.warmup);
    let inject_s = t0.elapsed().as_secs_f64();
    let election_hold = Duration::from_secs_f64(ELECTION_STALL_S + 2.0);
    let heal_result = inject_and_heal(
        lab,
        k,
        leader,
        &followers,
        opts.hold,
        election_hold,
        Some((rt, &js, &name)),
        log,
    );
    let heal_s = t0.elapsed().as_secs_f64();
    // Writes must resume within this bound after healing, or the stall did not end: keep writing until
    // an ack after healing shows (or the bound passes), then for `after` more.
    let resume_bound_s = ELECTION_STALL_S + opts.publish_timeout.as_secs_f64() + 5.0;
    let deadline = Instant::now() + Duration::from_secs_f64(resume_bound_s);
    while Instant::now() < deadline && (last_ack_ms.load(Ordering::SeqCst) as f64 / 1000.0) < heal_s {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(opts.after);
    stop.store(true, Ordering::SeqCst);
    let attempts = rt.block_on(pub_handle).context("the publisher task failed")?;
    heal_result?;
    let tl = Timeline { inject_s, heal_s };
    lab.wait_healthy(Duration::from_secs(60))?;

    // Read back and check.
    let read = rt.block_on(read_all(&js, &name))?;
    let chk = check(&attempts, &read);
    res.replicas = replica_states(lab, &name, read.last().map(|r| r.0).unwrap_or(0));
    res.acked = chk.acked;
    res.acked_lost = chk.acked_lost;
    res.unavailable_s = longest_gap_s(&attempts, 0.0);
    judge(&mut res, &pred, &attempts, &chk, &tl, opts, resume_bound_s);
    let problem =
        chk.acked_lost + chk.unexpected + chk.duplicates + chk.seq_mismatch > 0 || !replicas_agree(&res.replicas);
    if problem {
        res.finding = save_finding(lab, opts.findings_dir.as_deref(), &name, &res).ok();
    }
    res.check = chk;
    rt.block_on(delete_stream(&js, &name));
    rt.block_on(client.drain()).ok();
    Ok(res)
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
    lab: &mut Lab,
    k: Kind,
    leader: usize,
    followers: &[usize],
    hold: Duration,
    election_hold: Duration,
    wipe_ctx: Option<(&tokio::runtime::Runtime, &jetstream::Context, &str)>,
    log: &dyn Fn(&str),
) -> Result<()> {
    let n = lab.nodes().len();
    match k {
        Kind::FollowerKill | Kind::LeaderKill => {
            let v = if k == Kind::LeaderKill { leader } else { followers[0] };
            log(&format!("  kill -9 {}", lab.nodes()[v].name));
            lab.kill(v)?;
            std::thread::sleep(hold);
            lab.restart(v)?;
        }
        Kind::LeaderPause => {
            log(&format!(
                "  SIGSTOP {} for {:.0} s",
                lab.nodes()[leader].name,
                election_hold.as_secs_f64()
            ));
            lab.sigstop(leader)?;
            std::thread::sleep(election_hold.max(hold));
            lab.sigcont(leader)?;
        }
        Kind::MajorityKill => {
            for v in [leader, followers[0]] {
                log(&format!("  kill -9 {}", lab.nodes()[v].name));
                lab.kill(v)?;
            }
            std::thread::sleep(hold);
            lab.restart(leader)?;
            lab.restart(followers[0])?;
        }
        Kind::AllKill => {
            log("  kill -9 every server");
            for v in 0..n {
                lab.kill(v)?;
            }
            std::thread::sleep(hold);
            for v in 0..n {
                lab.restart(v)?;
            }
        }
        Kind::RollingRestart => {
            for v in 0..n {
                log(&format!("  restart {}", lab.nodes()[v].name));
                lab.kill(v)?;
                std::thread::sleep(Duration::from_secs(1));
                lab.restart(v)?;
                lab.wait_healthy(Duration::from_secs(60))?;
            }
        }
        Kind::Wipe => {
            let v = followers[0];
            let old = lab.nodes()[v].name.clone();
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
            std::thread::sleep(hold);
            lab.restart(v)?;
            let (rt, js, stream) = wipe_ctx.ok_or_else(|| anyhow!("wipe needs the stream's client"))?;
            rt.block_on(peer_remove(js, stream, &old))?;
        }
        Kind::PowerLoss => bail!("power loss cannot be injected by process control"),
    }
    Ok(())
}

/// Set `observed`, `detail` and `agree` from the prediction and the measurements.
fn judge(
    res: &mut ScenarioResult,
    pred: &Prediction,
    attempts: &[Attempt],
    chk: &Check,
    tl: &Timeline,
    opts: &FaultOptions,
    resume_bound_s: f64,
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
    } else if !replicas_agree(&res.replicas) {
        res.observed = "replicas_diverged".into();
    }
    let lost_ok = lost == 0 || pred.acked_loss_risk;
    if pred.status.writable() {
        let bound = pred.stall_s.unwrap_or(0.0) + timeout_s + 5.0;
        let continued = gap <= bound && first_after_heal.is_finite();
        if lost == 0 && replicas_agree(&res.replicas) {
            res.observed = if continued {
                "writes_continued"
            } else {
                "stalled_too_long"
            }
            .into();
        }
        res.agree = continued && lost_ok && replicas_agree(&res.replicas);
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
        if lost == 0 && replicas_agree(&res.replicas) {
            res.observed = match (stalled, resumed) {
                (false, _) => "writes_without_quorum",
                (true, true) => "stalled_until_healed",
                (true, false) => "stalled_too_long",
            }
            .into();
        }
        res.agree = stalled && resumed && lost_ok && replicas_agree(&res.replicas);
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

/// All three replicas report the stream, with the same messages and first/last sequence.
fn replicas_agree(r: &[ReplicaState]) -> bool {
    r.len() == 3
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
        .retry_on_initial_connect()
        .connect(addrs)
        .await
        .context("cannot connect to the lab")
}

async fn create_stream(js: &jetstream::Context, name: &str, subject: &str) -> Result<()> {
    let cfg = stream::Config {
        name: name.into(),
        subjects: vec![subject.into()],
        num_replicas: 3,
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
async fn read_all(js: &jetstream::Context, name: &str) -> Result<Vec<(u64, String)>> {
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
    if info.state.messages == 0 {
        return Ok(out);
    }
    for seq in first..=last {
        let mut tries = 0;
        loop {
            match s.get_raw_message(seq).await {
                Ok(m) => {
                    out.push((seq, String::from_utf8_lossy(&m.payload).into_owned()));
                    break;
                }
                Err(e) if e.to_string().contains("no message found") || e.to_string().contains("not found") => break,
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
    Ok(out)
}

/// Every replica's stream state from its own `/jsz`, waiting (20 s at most) for them to converge on `last`.
fn replica_states(lab: &Lab, name: &str, last: u64) -> Vec<ReplicaState> {
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
        let done = v.len() == 3 && replicas_agree(&v) && v[0].last_seq >= last;
        if done || t0.elapsed() > Duration::from_secs(20) {
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
        judge(&mut r, &p, &a, &chk, &Timeline { inject_s, heal_s }, &opts, 17.0);
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
