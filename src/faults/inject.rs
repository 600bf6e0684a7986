//! Injecting faults into the lab and healing them: kills, pauses, restarts, partitions, a wiped store
//! rejoining under a new name; and the lab helpers they need.

use super::*;
use crate::lab::Lab;
use crate::monitor;
use anyhow::{anyhow, bail, Context, Result};
use async_nats::jetstream::{self};
use std::time::{Duration, Instant};

pub(super) fn lab_heal_all(lab: &mut Lab) -> Result<()> {
    for i in 0..lab.nodes().len() {
        if !lab.is_running(i) {
            lab.restart(i)?;
        }
    }
    wait_healthy(lab, Duration::from_secs(120))
}

/// `lab.wait_healthy`, with every server's `/healthz` answer in the error (why it is not healthy). Waits in
/// one-second steps so that a stop signal (the run's `InterruptGuard`) ends the wait within about a
/// second instead of after the whole timeout (a full store can keep a server unhealthy for minutes).
pub(super) fn wait_healthy(lab: &mut Lab, timeout: Duration) -> Result<()> {
    let t0 = Instant::now();
    let step = Duration::from_secs(1);
    let r = loop {
        if crate::signals::stop_requested() {
            bail!("interrupted");
        }
        let left = timeout.saturating_sub(t0.elapsed());
        match lab.wait_healthy(left.min(step)) {
            Ok(()) => break Ok(()),
            Err(_) if left > step => continue,
            Err(e) => {
                break Err(e.context(format!(
                    "the lab cluster was not healthy after {:.0} s",
                    timeout.as_secs_f64()
                )))
            }
        }
    };
    r.map_err(|e| {
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
pub(super) fn peer_index(lab: &Lab, p: &str) -> Result<usize> {
    // A server rejoined more than once is NAME-w2, NAME-w3, ...
    lab.node(p).or_else(|e| {
        let base = p.trim_end_matches(|c: char| c.is_ascii_digit());
        lab.node(base.strip_suffix(WIPED_SUFFIX).ok_or(e)?)
    })
}

pub(super) use crate::lab::conf_server_name;

/// The name a server rejoins under after `current` (its site name `base`): `base-w`, then `base-w2`, ...
pub(super) fn next_wiped_name(base: &str, current: &str) -> String {
    let first = format!("{base}{WIPED_SUFFIX}");
    match current.strip_prefix(&first) {
        None => first,
        Some("") => format!("{first}2"),
        Some(n) => format!("{first}{}", n.parse::<u32>().unwrap_or(1) + 1),
    }
}

/// The stream's leader and followers by lab index, asked until a leader with all `replicas` peers shows.
pub(super) fn stream_roles(lab: &Lab, name: &str, replicas: usize) -> Result<(usize, Vec<usize>)> {
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
pub(super) struct Timeline {
    pub(super) inject_s: f64,
    pub(super) heal_s: f64,
}

/// Suffix of a wiped server's new name.
pub(super) const WIPED_SUFFIX: &str = "-w";

/// The configuration text with `server_name` changed from `old` to `new`, or None if it has no such line.
pub(super) fn rename_server(conf: &str, old: &str, new: &str) -> Option<String> {
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
pub(super) async fn peer_remove(js: &jetstream::Context, stream: &str, peer: &str) -> Result<()> {
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

/// The fault a scenario injects: its kind (and rack), the roles of the test stream's servers, the stream
/// it strikes and how long a fault meant to force an election is held at least.
pub(super) struct Fault<'a> {
    pub(super) p: Planned,
    pub(super) roles: &'a Roles,
    pub(super) js: &'a jetstream::Context,
    pub(super) stream: &'a str,
    pub(super) election_hold: Duration,
}

/// Inject the fault, hold it and heal it; `full`: the follower's small store for the full-store kinds,
/// `notes` what the injection saw, `marks` a power scenario's cut and power-on. Returns the API probe of
/// `meta-majority-kill`.
pub(super) fn inject_and_heal(
    ctx: &Ctx,
    lab: &mut Lab,
    f: &Fault,
    full: Option<&mut FullStore>,
    notes: &mut Vec<String>,
    marks: &mut power::PowerMarks,
) -> Result<Option<ApiProbe>> {
    let (p, roles, js, stream, election_hold) = (f.p, f.roles, f.js, f.stream, f.election_hold);
    let (leader, followers, majority) = (roles.leader, &roles.followers[..], &roles.majority[..]);
    let (opts, log) = (ctx.opts, ctx.log);
    let hold = opts.hold;
    let n = lab.nodes().len();
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
    match p.kind {
        FaultKind::FollowerKill | FaultKind::LeaderKill => {
            let v = if p.kind == FaultKind::LeaderKill {
                leader
            } else {
                followers[0]
            };
            log(&format!("  kill -9 {}", nm(lab, v)));
            lab.kill(v)?;
            opts.pause(hold)?;
            lab.restart(v)?;
        }
        FaultKind::LeaderPause => {
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
        FaultKind::MajorityKill => {
            for &v in majority {
                log(&format!("  kill -9 {}", nm(lab, v)));
                lab.kill(v)?;
            }
            opts.pause(hold)?;
            for &v in majority {
                lab.restart(v)?;
            }
        }
        FaultKind::MetaMajorityKill => {
            for &v in &roles.meta_majority {
                log(&format!("  kill -9 {} (meta group)", nm(lab, v)));
                lab.kill(v)?;
            }
            let api = probe_api(ctx, js, stream, hold.max(election_hold));
            for &v in &roles.meta_majority {
                lab.restart(v)?;
            }
            let api = api?;
            notes.push(format!(
                "with the meta group's majority down, the JetStream API: {}",
                api.answers.join("; ")
            ));
            return Ok(Some(api));
        }
        FaultKind::AllKill => {
            log("  kill -9 every server");
            for v in 0..n {
                lab.kill(v)?;
            }
            opts.pause(hold)?;
            for v in 0..n {
                lab.restart(v)?;
            }
        }
        FaultKind::RollingRestart => {
            for v in 0..n {
                log(&format!("  restart {}", nm(lab, v)));
                lab.kill(v)?;
                opts.pause(Duration::from_secs(1))?;
                lab.restart(v)?;
                wait_healthy(lab, Duration::from_secs(120))?;
            }
        }
        FaultKind::LeaderPartition | FaultKind::RackNet => partition(ctx, lab, p, leader, election_hold)?,
        FaultKind::RackPower => {
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
        FaultKind::FullLimit => fill_to_limit(ctx, lab, js, full, notes)?,
        FaultKind::FullDisk => fill_disk_under(ctx, lab, full, notes)?,
        FaultKind::Wipe => wipe_follower(ctx, lab, followers[0], js, stream)?,
        FaultKind::StoresLost => destroy_stores(ctx, lab, &followers[..2.min(followers.len())])?,
        FaultKind::LeaderReplace => destroy_stores(ctx, lab, &[leader])?,
        FaultKind::MetaLost => destroy_stores(ctx, lab, &roles.meta_majority)?,
        FaultKind::PowerServer
        | FaultKind::PowerQuorum
        | FaultKind::PowerAll
        | FaultKind::PowerCrashPause
        | FaultKind::PowerRack => power::inject(ctx, lab, p, roles, marks)?,
    }
    Ok(None)
}

/// `full-limit`: fill the follower's store to its `max_file_store` with a stream placed on it, hold,
/// purge, and note what the server said and did.
fn fill_to_limit(
    ctx: &Ctx,
    lab: &mut Lab,
    js: &jetstream::Context,
    full: Option<&mut FullStore>,
    notes: &mut Vec<String>,
) -> Result<()> {
    let (opts, log, rt, hold) = (ctx.opts, ctx.log, ctx.rt, ctx.opts.hold);
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
    let fs = full.ok_or_else(|| anyhow!("full-limit needs its tmpfs store"))?;
    let v = fs.server;
    let node = nm(lab, v);
    let filler = format!("natsplan-faults-filler-{v}");
    log(&format!(
        "  fill {node}'s store (tmpfs {} MiB, max_file_store {} MiB) with a stream placed on it",
        FULL_LIMIT_TMPFS_BYTES >> 20,
        FULL_LIMIT_MAX_FILE_STORE_BYTES >> 20
    ));
    let (bytes, refusal) = rt.block_on(fill_with_stream(js, &filler, &node, FULL_LIMIT_MAX_FILE_STORE_BYTES))?;
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
    Ok(())
}

/// `full-disk`: fill the follower's tmpfs beside its store until not one byte fits (ENOSPC under NATS), hold,
/// then carry out whatif's recovery step for a full store in every run: free the space, then restart
/// nats-server on the server. Whether the replica stopped for good before the restart (its stream's write
/// error) or JetStream disabled itself depends on which write met ENOSPC first; either way only the restart
/// brings it back (docs/faults.md), so the step does not depend on what is seen.
fn fill_disk_under(ctx: &Ctx, lab: &mut Lab, full: Option<&mut FullStore>, notes: &mut Vec<String>) -> Result<()> {
    let (opts, log, hold) = (ctx.opts, ctx.log, ctx.opts.hold);
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
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
    if opts.recover {
        // `--recover`: whatif's own steps free the space and restart (`drill::run_drill`).
        notes.push(format!("with the disk full, JetStream on {node} {state}"));
        return Ok(());
    }
    std::fs::remove_file(&ballast)?;
    fs.ballast = None;
    let effect = full_disk_effect(&lab.nodes()[v].monitor_url());
    let lines = full_log_lines(&lab.nodes()[v].log, lab.dir());
    notes.push(format!("with the disk full, JetStream on {node} {state}"));
    if !lines.is_empty() {
        notes.push(format!("{node} logged: {}", lines.join(" | ")));
    }
    notes.push(format!("space freed: {}", effect.describe(&node)));
    log(&format!(
        "  space freed; restart nats-server on {node} (whatif's step for a full store)"
    ));
    lab.restart(v)?;
    notes.push(format!("{FULL_DISK_STEP_DONE} {node}"));
    Ok(())
}

/// How the notes say that whatif's step for a full store was carried out (the judge looks for it).
pub(super) const FULL_DISK_STEP_DONE: &str =
    "carried out whatif's step: freed the space, then restarted nats-server on";

/// `follower-wipe`: kill the follower, empty its store, rename it, restart it and peer-remove the old
/// name from the stream.
fn wipe_follower(ctx: &Ctx, lab: &mut Lab, v: usize, js: &jetstream::Context, stream: &str) -> Result<()> {
    let (opts, log, rt, hold) = (ctx.opts, ctx.log, ctx.rt, ctx.opts.hold);
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
    let old = nm(lab, v);
    log(&format!(
        "  kill -9 {old}, empty its store, rejoin as {old}{WIPED_SUFFIX}"
    ));
    lab.kill(v)?;
    let store = lab.nodes()[v].store_dir.clone();
    std::fs::remove_dir_all(&store).with_context(|| format!("cannot empty {}", store.display()))?;
    std::fs::create_dir_all(&store)?;
    let conf = lab.nodes()[v].conf.clone();
    let text = crate::input::read_text(&conf, "server config").map_err(|e| anyhow!("{e}"))?;
    let renamed = rename_server(&text, &old, &format!("{old}{WIPED_SUFFIX}"))
        .ok_or_else(|| anyhow!("{}: no server_name line to rename", conf.display()))?;
    opts.pause(hold)?;
    if opts.recover {
        // `--recover`: whatif's own steps bring the server back (`drill::run_drill`).
        return Ok(());
    }
    std::fs::write(&conf, renamed)?;
    lab.restart(v)?;
    rt.block_on(peer_remove(js, stream, &old))?;
    Ok(())
}

/// `two-stores-lost` and `leader-replace`: kill the servers and empty their stores, hold; whatif's steps
/// (`--recover`) bring them back.
fn destroy_stores(ctx: &Ctx, lab: &mut Lab, vs: &[usize]) -> Result<()> {
    for &v in vs {
        let store = lab.nodes()[v].store_dir.clone();
        (ctx.log)(&format!("  kill -9 {}, destroy its store", lab.nodes()[v].name));
        lab.kill(v)?;
        std::fs::remove_dir_all(&store).with_context(|| format!("cannot empty {}", store.display()))?;
        std::fs::create_dir_all(&store)?;
    }
    ctx.opts.pause(ctx.opts.hold)
}

/// `leader-partition` and `rack-net`: cut a rack's uplink (the leader's, or the scenario's rack) past an
/// election, then restore it.
fn partition(ctx: &Ctx, lab: &mut Lab, p: Planned, leader: usize, election_hold: Duration) -> Result<()> {
    let (opts, log, hold) = (ctx.opts, ctx.log, ctx.opts.hold);
    let n = lab.nodes().len();
    let nm = |lab: &Lab, i: usize| lab.nodes()[i].name.clone();
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
    Ok(())
}

/// What the JetStream API answered while the meta group had lost its quorum.
pub(super) struct ApiProbe {
    /// No stream or consumer could be created (every create answered an error or nothing).
    pub(super) refused: bool,
    /// One line per request kind: its distinct answers in order, e.g. `stream create: no answer within
    /// 3 s, then 10008 JetStream system temporarily unavailable`.
    pub(super) answers: Vec<String>,
}

/// Ask the JetStream API to create a stream and a consumer, and for the stream's info, once a second
/// for `hold` (at least three rounds); a create that succeeds is undone. The API is refused when no
/// create ever succeeded.
fn probe_api(ctx: &Ctx, js: &jetstream::Context, stream: &str, hold: Duration) -> Result<ApiProbe> {
    let (opts, rt) = (ctx.opts, ctx.rt);
    let probe = format!("{stream}-meta-probe");
    let asks: [(&str, String, String); 3] = [
        (
            "stream create",
            format!("STREAM.CREATE.{probe}"),
            serde_json::json!({ "name": probe, "subjects": [format!("natsplan.meta.{probe}")], "num_replicas": 1 })
                .to_string(),
        ),
        (
            "consumer create",
            format!("CONSUMER.CREATE.{stream}.natsplan-meta-probe"),
            serde_json::json!({ "stream_name": stream, "config": { "durable_name": "natsplan-meta-probe", "ack_policy": "explicit" } })
                .to_string(),
        ),
        ("stream info", format!("STREAM.INFO.{stream}"), String::new()),
    ];
    // Each request's distinct answers, in the order they first came.
    let mut seen: Vec<Vec<String>> = vec![Vec::new(); asks.len()];
    let mut created = false;
    let end = Instant::now() + hold;
    let mut rounds = 0;
    while rounds < 3 || Instant::now() < end {
        rounds += 1;
        for (k, (_, subject, body)) in asks.iter().enumerate() {
            let answer = rt.block_on(api_request(js, subject, body.clone()));
            if k < 2 && answer == "ok" {
                created = true;
            }
            if !seen[k].contains(&answer) {
                seen[k].push(answer);
            }
        }
        opts.pause(Duration::from_secs(1))?;
    }
    if created {
        let _ = rt.block_on(js.delete_stream(&probe));
        let _ = rt.block_on(api_request(
            js,
            &format!("CONSUMER.DELETE.{stream}.natsplan-meta-probe"),
            String::new(),
        ));
    }
    let answers = asks
        .iter()
        .zip(&seen)
        .map(|((what, ..), a)| format!("{what}: {}", a.join(", then ")))
        .collect();
    Ok(ApiProbe {
        refused: !created,
        answers,
    })
}

/// One `$JS.API` request (3 s at most): `ok`, `CODE description` of a JetStream error, or `no answer`.
async fn api_request(js: &jetstream::Context, subject: &str, body: String) -> String {
    let subject = format!("$JS.API.{subject}");
    let client = js.client();
    let ask = client.request(subject, body.into());
    match tokio::time::timeout(Duration::from_secs(3), ask).await {
        Err(_) => "no answer within 3 s".into(),
        Ok(Err(e)) => format!("request failed: {e}"),
        Ok(Ok(m)) => {
            let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap_or_default();
            match v.get("error") {
                None => "ok".into(),
                Some(e) => format!(
                    "{} {}",
                    e.get("err_code").and_then(|c| c.as_u64()).unwrap_or(0),
                    e.get("description").and_then(|d| d.as_str()).unwrap_or("")
                ),
            }
        }
    }
}
