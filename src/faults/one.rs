//! One scenario from start to end: stream, prediction, workload, fault, heal, read-back, judgement.

use super::*;
use crate::lab::Lab;
use crate::survival::ELECTION_STALL_S;
use anyhow::{anyhow, Context, Result};
use async_nats::jetstream::{self};
use sandbox::Tmpfs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn not_run(k: FaultKind, why: String) -> ScenarioResult {
    ScenarioResult {
        name: k.name().into(),
        selectors: Vec::new(),
        predicted: String::new(),
        predicted_stall_s: None,
        predicted_acked_loss_risk: false,
        predicted_acked_loss: AckedLoss::None,
        observed: "not_run".into(),
        detail: why.clone(),
        agree: false,
        acked: 0,
        acked_lost: None,
        unavailable_s: 0.0,
        skipped: Some(why),
        check: Check::default(),
        replicas: Vec::new(),
        finding: None,
        predicted_meta: None,
        observed_meta: None,
        power_runs: None,
        power_cut: None,
        predicted_recovery: Vec::new(),
        predicted_recovery_actions: Vec::new(),
        recovery_steps: None,
        acked_republished: None,
    }
}

/// The stream's roles in the lab (indices) and the servers a kill-several scenario kills.
pub(super) struct Roles {
    pub(super) leader: usize,
    pub(super) followers: Vec<usize>,
    /// The first quorum of the stream's peers, leader first (`majority-kill`).
    pub(super) majority: Vec<usize>,
    /// A meta-group majority that spares the stream's quorum and leader (`meta-majority-kill`): the
    /// servers without a replica, then followers; empty when the lab cannot have one.
    pub(super) meta_majority: Vec<usize>,
}

impl Roles {
    fn new(n: usize, leader: usize, followers: Vec<usize>, replicas: usize) -> Roles {
        let quorum = replicas / 2 + 1;
        let majority = std::iter::once(leader)
            .chain(followers.iter().copied())
            .take(quorum)
            .collect();
        let meta_quorum = n / 2 + 1;
        let spare_followers = replicas.saturating_sub(quorum);
        let outside = (0..n).filter(|i| *i != leader && !followers.contains(i));
        let mut meta: Vec<usize> = outside.chain(followers.iter().copied().take(spare_followers)).collect();
        meta.truncate(meta_quorum);
        if meta.len() < meta_quorum {
            meta.clear();
        }
        Roles {
            leader,
            followers,
            majority,
            meta_majority: meta,
        }
    }
}

/// The scenario's steps (selector sets failed together) and the selectors it reports.
fn plan_steps(ctx: &Ctx, lab: &Lab, p: Planned, roles: &Roles) -> Result<(Vec<Vec<String>>, Vec<String>)> {
    let (k, site) = (p.kind, ctx.site);
    let nm = |i: usize| lab.nodes()[i].name.clone();
    let sel = |i: usize, kind: &str| format!("{kind}:{}", nm(i));
    let rack_name = |r: usize| site.racks[r].name.clone();
    let n = lab.nodes().len();
    let (leader, f0) = (roles.leader, roles.followers[0]);
    let together = |s: Vec<String>| (vec![s.clone()], s);
    Ok(match k {
        FaultKind::FollowerKill => together(vec![sel(f0, "process")]),
        FaultKind::LeaderKill => together(vec![sel(leader, "process")]),
        FaultKind::LeaderPause => together(vec![sel(leader, "pause")]),
        FaultKind::MajorityKill => together(roles.majority.iter().map(|&i| sel(i, "process")).collect()),
        FaultKind::MetaMajorityKill => together(roles.meta_majority.iter().map(|&i| sel(i, "process")).collect()),
        FaultKind::AllKill => together((0..n).map(|i| sel(i, "process")).collect()),
        FaultKind::RollingRestart => {
            let s: Vec<String> = (0..n).map(|i| sel(i, "process")).collect();
            (s.iter().map(|x| vec![x.clone()]).collect(), s)
        }
        FaultKind::LeaderPartition => together(vec![format!("net:{}", rack_name(ctx.rack_of[leader]))]),
        FaultKind::FullLimit | FaultKind::FullDisk => together(vec![sel(f0, "full")]),
        FaultKind::RackPower | FaultKind::RackNet => {
            let r = p.rack.ok_or_else(|| anyhow!("a rack scenario needs its rack"))?;
            let kind = if k == FaultKind::RackPower { "power" } else { "net" };
            together(vec![format!("{kind}:{}", rack_name(r))])
        }
        FaultKind::Wipe => together(vec![sel(f0, "wipe")]),
        FaultKind::StoresLost => together(roles.followers.iter().take(2).map(|&i| sel(i, "wipe")).collect()),
        FaultKind::LeaderReplace => together(vec![sel(leader, "wipe")]),
        FaultKind::MetaLost => together(roles.meta_majority.iter().map(|&i| sel(i, "wipe")).collect()),
        FaultKind::PowerServer => together(vec![sel(leader, "server")]),
        FaultKind::PowerQuorum => together(roles.majority.iter().map(|&i| sel(i, "server")).collect()),
        FaultKind::PowerAll => together((0..n).map(|i| sel(i, "server")).collect()),
        FaultKind::PowerRack => {
            let r = p.rack.ok_or_else(|| anyhow!("a rack scenario needs its rack"))?;
            together(vec![format!("power:{}", rack_name(r))])
        }
        FaultKind::PowerCrashPause => {
            // First a minority paused (writes go on), then the leader's power and the rest paused.
            let (first, rest) = power::pause_sides(roles, ctx.replicas);
            let paused: Vec<String> = first.iter().map(|&i| sel(i, "pause")).collect();
            let mut all = paused.clone();
            all.push(sel(leader, "server"));
            all.extend(rest.iter().map(|&i| sel(i, "pause")));
            (vec![paused, all.clone()], all)
        }
    })
}

/// Why the scenario cannot run here (before the lab is touched), or None.
fn cannot_run_here(ctx: &Ctx, lab: &Lab, k: FaultKind) -> Result<Option<String>> {
    if k.needs_net() {
        if let Some(why) = ctx.net_skip {
            return Ok(Some(why.to_string()));
        }
    }
    if k.recover_only() && !ctx.opts.recover {
        return Ok(Some(format!(
            "{} runs only with --recover: nothing but whatif's recovery brings its destroyed stores back",
            k.name()
        )));
    }
    if k == FaultKind::StoresLost && (lab.nodes().len() < 5 || ctx.replicas != 3) {
        return Ok(Some(format!(
            "two of three stores lost needs an R3 stream on 5 or more servers (here R{} on {}): on 3 the meta \
             group loses its quorum with them, and whatif's steps then wait for a quorum only the lost servers \
             could bring back",
            ctx.replicas,
            lab.nodes().len()
        )));
    }
    if k == FaultKind::MetaLost {
        if let Some(why) = meta_rescue_unavailable(lab)? {
            return Ok(Some(why));
        }
    }
    if matches!(k, FaultKind::MetaMajorityKill | FaultKind::MetaLost) && lab.nodes().len() < 5 {
        return Ok(Some(format!(
            "a meta-group majority cannot fail without the R{} stream's quorum on {} servers: needs 5 or more",
            ctx.replicas,
            lab.nodes().len()
        )));
    }
    if matches!(k, FaultKind::FullLimit | FaultKind::FullDisk) {
        // Probe before touching the lab: a refused mount skips the scenario with the reason.
        let probe = lab.dir().join("tmpfs-probe");
        match Tmpfs::mount(&probe, 1 << 20) {
            Ok(mut m) => {
                m.unmount()?;
                let _ = std::fs::remove_dir(&probe);
            }
            Err(e) => return Ok(Some(format!("{e:#}"))),
        }
    }
    Ok(None)
}

/// Why `meta-quorum-lost` cannot be drilled with this nats-server: `$JS.API.META.RESCUE` came in 2.15
/// (nats-server 6b81579b2, "Meta peer set rescue for disaster recovery").
fn meta_rescue_unavailable(lab: &Lab) -> Result<Option<String>> {
    let (a, b, c) = crate::lab::nats_server_version(lab.nats_server())?;
    Ok(((a, b) < (2, 15)).then(|| {
        format!("meta-quorum-lost needs $JS.API.META.RESCUE, which nats-server has from 2.15; this one is {a}.{b}.{c}")
    }))
}

pub(super) fn run_one(ctx: &Ctx, lab: &mut Lab, p: Planned, idx: usize) -> Result<ScenarioResult> {
    let k = p.kind;
    if let Some(why) = cannot_run_here(ctx, lab, k)? {
        let mut r = not_run(k, why);
        r.name = scenario_name(ctx.site, p);
        return Ok(r);
    }
    if !k.is_power() {
        return run_once(ctx, lab, p, idx, 0);
    }
    // A power scenario made to lose writes runs again until a predicted loss shows (POWER_TRIES at most).
    let mut runs = Vec::new();
    loop {
        let r = run_once(ctx, lab, p, idx, runs.len() as u32)?;
        let again = k.designed_to_lose()
            && r.predicted_acked_loss_risk
            && r.acked_lost == Some(0)
            && (runs.len() as u32 + 1) < POWER_TRIES;
        runs.push(r);
        if !again {
            break;
        }
        (ctx.log)(&format!(
            "  no acknowledged write lost although the model predicts the risk ({}): run {} of at most {POWER_TRIES}",
            runs[0].predicted_acked_loss.as_str(),
            runs.len() + 1
        ));
    }
    let lost: Vec<(u64, u64)> = runs.iter().map(|r| (r.acked_lost.unwrap_or(0), r.acked)).collect();
    let mut res = runs.pop().expect("at least one run");
    judge_power_runs(&mut res, k.designed_to_lose(), &lost);
    Ok(res)
}

/// One run of a scenario (`attempt` > 0: a power scenario's repeat, on a stream of its own).
fn run_once(ctx: &Ctx, lab: &mut Lab, p: Planned, idx: usize, attempt: u32) -> Result<ScenarioResult> {
    let (rt, site) = (ctx.rt, ctx.site);
    let k = p.kind;
    let (name, subject) = match attempt {
        0 => (
            format!("natsplan-faults-{}-{idx}", k.name()),
            format!("natsplan.faults.{idx}"),
        ),
        a => (
            format!("natsplan-faults-{}-{idx}-{a}", k.name()),
            format!("natsplan.faults.{idx}.{a}"),
        ),
    };
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
    let roles = Roles::new(lab.nodes().len(), leader, followers, ctx.replicas);
    let nm = |i: usize| lab.nodes()[i].name.clone();
    let mut peers: Vec<String> = roles.followers.iter().map(|&f| nm(f)).collect();
    peers.push(nm(leader));
    let layout = pin_test_stream(site, ctx.layout, &peers)?;
    if matches!(k, FaultKind::MetaMajorityKill | FaultKind::MetaLost) && roles.meta_majority.is_empty() {
        bail!("no meta-group majority spares the stream's quorum on this lab");
    }
    let (steps, selectors) = plan_steps(ctx, lab, p, &roles)?;
    let pred = predict(site, &layout, &steps)?;

    let mut res = not_run(k, String::new());
    res.name = scenario_name(site, p);
    res.selectors = selectors;
    res.predicted = pred.status.as_str().into();
    res.predicted_stall_s = pred.stall_s;
    res.predicted_acked_loss_risk = pred.acked_loss_risk;
    res.predicted_acked_loss = pred.acked_loss;
    res.predicted_recovery = pred.recovery.clone();
    res.predicted_recovery_actions = pred.recovery_actions.clone();
    res.skipped = None;
    if k == FaultKind::MetaMajorityKill {
        res.predicted_meta = Some(pred.meta_status.as_str().into());
    }

    // A full: scenario first moves the follower's store onto its tmpfs (before the workload starts).
    let f0 = roles.followers[0];
    let mut full = match k {
        FaultKind::FullLimit => Some(FullStore::setup(
            lab,
            f0,
            FULL_LIMIT_TMPFS_BYTES,
            FULL_LIMIT_MAX_FILE_STORE_BYTES,
            None,
        )?),
        FaultKind::FullDisk => {
            // The anonymous clients' account is the global one (`$G`), also with the lab's system account.
            let msgs = PathBuf::from(format!("jetstream/$G/streams/{name}/msgs"));
            let inside = (ctx.opts.full_disk_at == FullDiskAt::StreamMessages).then_some(msgs.as_path());
            Some(FullStore::setup(
                lab,
                f0,
                FULL_DISK_TMPFS_BYTES,
                FULL_DISK_MAX_FILE_STORE_BYTES,
                inside,
            )?)
        }
        _ => None,
    };
    // The workload, fault and check; the full store goes back to disk whatever happens in there.
    let producer = drill::Producer::new(&js, &subject);
    let scenario = Scenario {
        p,
        idx,
        roles: &roles,
        js: &js,
        client: &client,
        name: &name,
        subject: &subject,
        pred: &pred,
        producer: &producer,
    };
    let outcome = observe(ctx, lab, &scenario, res, full.as_mut());
    // Interrupted: leave it to the drops (lazy unmount, then the lab's kill) to be quick.
    if let Some(f) = full.take().filter(|_| !ctx.opts.interrupted()) {
        let restored = f.restore(lab).context("cannot move the full store back to disk");
        if outcome.is_ok() {
            restored?;
        }
    }
    outcome
}

/// What one running scenario works on.
struct Scenario<'a> {
    p: Planned,
    idx: usize,
    roles: &'a Roles,
    js: &'a jetstream::Context,
    client: &'a async_nats::Client,
    name: &'a str,
    subject: &'a str,
    pred: &'a ScenarioPrediction,
    /// What the publisher has had acknowledged, and what the drill re-published.
    producer: &'a drill::Producer,
}

/// Warm up, inject the fault and heal it: the injection's result (the API probe of
/// `meta-majority-kill`), when it began and when it was healed (seconds since `t0`), and what power cuts
/// threw away.
#[allow(clippy::type_complexity)]
fn fault_phase(
    ctx: &Ctx,
    lab: &mut Lab,
    sc: &Scenario,
    mut full: Option<&mut FullStore>,
    last_ack_ms: &Arc<AtomicU64>,
    t0: Instant,
    notes: &mut Vec<String>,
) -> Result<(
    Result<Option<ApiProbe>>,
    f64,
    f64,
    Option<crate::powerfs::LossReport>,
    Option<Drilled>,
)> {
    let opts = ctx.opts;
    // Before a power cut the stream gets a history older than the layer's dirty expiry, as any stream
    // that has run for a while has: its configuration and first writes are on disk, only the writes of
    // the last expiry are not. (A store whose whole log is lost votes as an empty log, which nats-server
    // does not count towards a quorum: the young-stream case, not the one tested here.)
    let warmup = match sc.p.kind.is_power() {
        true => POWER_EXPIRY + opts.warmup + Duration::from_secs(1),
        false => opts.warmup,
    };
    opts.pause(warmup)?;
    let inject_s = t0.elapsed().as_secs_f64();
    let election_hold = Duration::from_secs_f64(ELECTION_STALL_S + 2.0);
    let mut marks = power::PowerMarks::new(last_ack_ms.clone(), t0);
    let fault = Fault {
        p: sc.p,
        roles: sc.roles,
        js: sc.js,
        stream: sc.name,
        election_hold,
    };
    let heal_result = inject_and_heal(ctx, lab, &fault, full.as_deref_mut(), notes, &mut marks);
    // `--recover`: whatif's own steps bring back what the fault destroyed.
    let steps = match (&heal_result, opts.recover && sc.p.kind.recovers()) {
        (Ok(_), true) => {
            // Healed from when the recovery starts (quorum may come back at any of its steps), unless the
            // fault marked its own heal (a power scenario's power-on, which its writes are judged against).
            marks.heal.get_or_insert_with(Instant::now);
            let steps = drill::run_drill(ctx, lab, full, sc.pred, sc.name, sc.producer);
            if sc.p.kind == FaultKind::FullDisk {
                let node = lab.nodes()[sc.roles.followers[0]].name.clone();
                let restarted = steps.iter().any(|s| {
                    s.ok && matches!(&s.action, crate::survival::Action::Restart { servers } if servers.contains(&node))
                });
                if restarted {
                    notes.push(format!("{FULL_DISK_STEP_DONE} {node}"));
                }
            }
            Some(steps)
        }
        _ => None,
    };
    let heal_s = marks
        .heal
        .map(|h| (h - t0).as_secs_f64())
        .unwrap_or_else(|| t0.elapsed().as_secs_f64());
    let inject_s = marks.inject.map(|i| (i - t0).as_secs_f64()).unwrap_or(inject_s);
    // `--recover`: the end state under load (every replica back and current, then a sustained publish).
    let drilled = match steps {
        Some(steps) => Some(Drilled {
            steps,
            end: end_state(ctx, lab, sc.name, t0)?,
        }),
        None => None,
    };
    Ok((heal_result, inject_s, heal_s, marks.cut.take(), drilled))
}

/// `--recover`: the steps carried out and the end state ([`end_state`]).
struct Drilled {
    steps: Vec<RecoveryStep>,
    end: (Result<f64>, f64, f64),
}

/// How long after healing writes may take to resume (seconds): an election, a publish timeout and 5 s of
/// slack; under `--recover` "healing" is the start of the recovery, so whatif's own predicted time for it
/// (its longest chain, with operator delays 0: e.g. reconcile's lost-quorum interval and election) is added.
fn resume_bound_s(timeout_s: f64, recovery_s: Option<f64>) -> f64 {
    ELECTION_STALL_S + timeout_s + 5.0 + recovery_s.unwrap_or(0.0)
}

/// Writes must resume within [`resume_bound_s`] after healing, or the stall did not end: keep writing until
/// an ack after healing shows (or the bound passes), then for `after` more. Returns the bound.
fn wait_resumed(opts: &FaultOptions, recovery_s: Option<f64>, last_ack_ms: &AtomicU64, heal_s: f64) -> Result<f64> {
    let bound_s = resume_bound_s(opts.publish_timeout.as_secs_f64(), recovery_s);
    let deadline = Instant::now() + Duration::from_secs_f64(bound_s);
    while Instant::now() < deadline && (last_ack_ms.load(Ordering::SeqCst) as f64 / 1000.0) < heal_s {
        opts.pause(Duration::from_millis(100))?;
    }
    opts.pause(opts.after)?;
    Ok(bound_s)
}

/// The checker's verdict after `--recover`'s `republish_acked`: the ids it re-published and the read-back
/// found count as `acked_republished`, not as lost or at another sequence.
///
/// Returns the checker's own verdict (`acked_lost`: still missing at the end) and `Some(re-published)` for
/// a drilled scenario made to lose writes (0 when whatif's `republish_acked` was left out or found nothing).
fn check_recovered(
    attempts: &[Attempt],
    read: &[(u64, String)],
    producer: &drill::Producer,
    republishes: bool,
) -> (Check, Option<u64>) {
    let ids = producer.republished();
    let chk = check::check_republished(attempts, read, &ids.iter().map(String::as_str).collect());
    let re = chk.acked_republished;
    (chk, republishes.then_some(re))
}

/// `--recover`'s verdict on a judged scenario: its steps, the replicas back, the sustained publish.
fn judge_drilled(res: &mut ScenarioResult, d: Option<&Drilled>, attempts: &[Attempt], opts: &FaultOptions) {
    let Some(Drilled {
        steps,
        end: (back, from_s, to_s),
    }) = d
    else {
        return;
    };
    let times: Vec<f64> = check::acks(attempts).collect();
    let sus = drill::Sustained::of(&times, *from_s, *to_s, opts.publish_rate_per_s as f64);
    drill::judge_recovery(res, steps, back, &sus, opts.publish_timeout.as_secs_f64());
}

/// `--recover`'s end state: wait for every replica back and current, then publish on for
/// `FaultOptions::sustain`: whether the replicas came back, and the sustained window (seconds since `t0`).
fn end_state(ctx: &Ctx, lab: &Lab, name: &str, t0: Instant) -> Result<(Result<f64>, f64, f64)> {
    let back = drill::replicas_back(lab, name, ctx.replicas, Duration::from_secs(60));
    let from_s = t0.elapsed().as_secs_f64();
    ctx.opts.pause(ctx.opts.sustain)?;
    Ok((back, from_s, t0.elapsed().as_secs_f64()))
}

/// Read the stream back through its leader and check it against the attempts: the checker's verdict and
/// the fault's (the writes `--recover` re-published were lost by the fault too); sets `acked`, `acked_lost`
/// and `acked_republished`.
fn read_back(
    ctx: &Ctx,
    sc: &Scenario,
    res: &mut ScenarioResult,
    attempts: &[Attempt],
    drilled: bool,
    notes: &mut Vec<String>,
) -> Result<(Check, Check)> {
    let (rt, k, js, name) = (ctx.rt, sc.p.kind, sc.js, sc.name);
    let (read, not_found) = match rt.block_on(read_all(js, name)) {
        // After a power cut the stream itself may be gone (nats-server #7564), or a recovery left it
        // without a leader: nothing acknowledged can be read back.
        Err(e) if k.is_power() || drilled => {
            notes.push(format!("the stream could not be read back ({e:#})"));
            (Vec::new(), 0)
        }
        r => r?,
    };
    let republishes = drilled && k.designed_to_lose();
    let (chk, republished) = check_recovered(attempts, &read, sc.producer, republishes);
    res.acked_republished = republished;
    // What the fault lost, for the verdict: the re-published writes were lost by it too.
    let mut fault = chk.clone();
    fault.acked_lost += fault.acked_republished;
    if not_found > 0 {
        notes.push(format!(
            "the read-back got \"not found\" for {not_found} sequences between the stream's first and last"
        ));
    }
    res.acked = chk.acked;
    res.acked_lost = Some(fault.acked_lost);
    Ok((chk, fault))
}

/// Publish, inject, heal, read everything back and judge.
fn observe(
    ctx: &Ctx,
    lab: &mut Lab,
    sc: &Scenario,
    mut res: ScenarioResult,
    full: Option<&mut FullStore>,
) -> Result<ScenarioResult> {
    let (rt, opts, log) = (ctx.rt, ctx.opts, ctx.log);
    let (k, idx, js, name, pred) = (sc.p.kind, sc.idx, sc.js, sc.name, sc.pred);
    let (client, subject) = (sc.client, sc.subject.to_string());
    // Publisher.
    let stop = Arc::new(AtomicBool::new(false));
    let last_ack_ms = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let pub_handle = rt.spawn(publisher(Publisher {
        js: js.clone(),
        subject: subject.clone(),
        prefix: format!("{}-{idx}", k.name()),
        rate: opts.publish_rate_per_s,
        timeout: opts.publish_timeout,
        stop: stop.clone(),
        last_ack_ms: last_ack_ms.clone(),
        acked: sc.producer.acked.clone(),
        t0,
    }));
    let mut notes = Vec::new();
    let (heal_result, inject_s, heal_s, cut, drilled) = fault_phase(ctx, lab, sc, full, &last_ack_ms, t0, &mut notes)?;
    (res.power_cut, res.recovery_steps) = (cut, drilled.as_ref().map(|d| d.steps.clone()));
    let recovery_s = drilled.as_ref().map(|_| pred.recovery_longest_chain_s());
    let resume_bound_s = wait_resumed(opts, recovery_s, &last_ack_ms, heal_s)?;
    stop.store(true, Ordering::SeqCst);
    let attempts = rt.block_on(pub_handle).context("the publisher task failed")?;
    let api = heal_result?;
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
            PublishFate::Ok { seq, .. } => Some(seq),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    res.replicas = replica_states(lab, name, max_acked, ctx.replicas);
    let (chk, fault) = read_back(ctx, sc, &mut res, &attempts, drilled.is_some(), &mut notes)?;
    res.unavailable_s = longest_gap_s(&attempts, 0.0);
    let measured = Measured {
        attempts: &attempts,
        chk: &fault,
        tl: &tl,
    };
    judge(&mut res, pred, &measured, opts, resume_bound_s, ctx.replicas);
    if k == FaultKind::MetaMajorityKill {
        judge_meta(&mut res, api.as_ref());
    }
    if k == FaultKind::FullDisk {
        judge_full_disk_step(&mut res, &notes, &lab.nodes()[sc.roles.followers[0]].name);
    }
    judge_drilled(&mut res, drilled.as_ref(), &attempts, opts);
    if k == FaultKind::RackPower && pred.acked_loss_risk {
        notes.push(
            "the model's acknowledged-loss risk (unsynced writes) is not tested: a process kill keeps the page cache"
                .into(),
        );
    }
    if let Err(e) = &healthy {
        // After a predicted acknowledged-write loss, a stream left unhealthy by its diverged replicas
        // is the same hazard (#7567): a finding, not a disagreement.
        if !(pred.acked_loss_risk && fault.acked_lost > 0) {
            res.agree = false;
        }
        if res.acked_lost == Some(0) {
            res.observed = "replica_stuck".into();
        }
        notes.push(format!(
            "FINDING: the cluster was not healthy 90 s after healing: {e:#}"
        ));
    }
    if !notes.is_empty() {
        res.detail.push_str(&format!("; {}", notes.join("; ")));
    }
    let problem = fault.acked_lost + chk.unexpected + chk.duplicates + chk.seq_mismatch > 0
        || !replicas_agree(&res.replicas, ctx.replicas)
        || healthy.is_err();
    res.check = chk.clone();
    if problem {
        res.finding = save_finding(lab, opts.findings_dir.as_deref(), name, &res).ok();
    }
    rt.block_on(delete_stream(js, name));
    rt.block_on(client.drain()).ok();
    if healthy.is_err() {
        // With the stuck stream gone (and a server a failed recovery left down started) the lab should be
        // healthy. When it is not, the scenario is judged already: keep its result and its steps, and say so
        // (the next scenario's own start fails as the harness's if the lab stays broken).
        if let Err(e) = lab_heal_all(lab) {
            log(&format!("  the lab did not heal after the scenario: {e:#}"));
            res.detail.push_str(&format!(
                "; after the judgement the lab did not heal, even with the scenario's stream deleted: {e:#}"
            ));
        }
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_may_resume_after_the_recoverys_longest_chain_as_well_as_an_election() {
        // Without --recover: an election, the publish timeout and 5 s.
        assert_eq!(resume_bound_s(2.0, None), ELECTION_STALL_S + 7.0);
        // With it: plus whatif's longest chain (the lab's two-stores-lost drill resumed 22.2 s after the
        // recovery began, past the 17 s bound without it). Chains run in parallel: not summed.
        let p = ScenarioPrediction {
            status: crate::survival::Status::Unavailable,
            stall_s: None,
            acked_loss_risk: false,
            acked_loss: AckedLoss::None,
            meta_status: crate::survival::Status::Ok,
            recovery: Vec::new(),
            recovery_actions: Vec::new(),
            recovery_drill_s: vec![Some(300.0), Some(20.0), Some(300.0), None],
            recovery_chains: ["a", "a", "b", "lost data"].map(String::from).to_vec(),
        };
        assert_eq!(p.recovery_longest_chain_s(), 320.0);
        assert_eq!(
            resume_bound_s(2.0, Some(p.recovery_longest_chain_s())),
            ELECTION_STALL_S + 7.0 + 320.0
        );
    }
}
