//! The work itself: connect, create `natsplan-*` assets, run publishers/subscribers/clients as tokio tasks
//! each with its own histogram, stop cleanly (subscribers never wait forever for dropped messages, `--rate`
//! runs stop when they fall behind), clean up, and assemble a `BenchResult`.

use super::result::{new_hist, BenchResult};
use super::{consume::*, env::*, exec::*, js::*, kv::*, obj::*, ping::*, pubsub::*};
use super::{BenchError, BenchSpec, BenchWorkload, ConnSpec, Existing};
use anyhow::anyhow;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// Run one benchmark. Errors: bad input (exit 2) or cannot run (exit 3); everything else is a result
/// with warnings.
pub async fn run(conn: &ConnSpec, spec: &BenchSpec) -> Result<BenchResult, BenchError> {
    run_with(conn, spec, &super::Cancel::new()).await
}

/// `run`, stopped early when `cancel` trips: the load stops at each worker's next operation, the
/// assets are removed, and the result holds what was measured, marked interrupted (`completion`). A
/// run stopped before its clock started is an empty result marked interrupted.
pub async fn run_with(conn: &ConnSpec, spec: &BenchSpec, cancel: &super::Cancel) -> Result<BenchResult, BenchError> {
    validate(spec)?;
    let mut env = Env::new(conn, spec, new_run_id(), None, None);
    env.cancel = cancel.clone();
    let env = Arc::new(env);
    match dispatch(&env).await {
        Err(_) if cancel.is_cancelled() => {
            let kind = spec.workload.name();
            let mut r = blank_result(&env, &kind, &kind, params(&env, &[]));
            r.completion.interrupted = true;
            finish(&env, &mut r);
            Ok(r)
        }
        other => other,
    }
}

/// A fresh run id: seconds since the epoch and the pid, so runs from different processes do not collide.
pub fn new_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "{:x}{:04x}{:02x}",
        now.as_secs(),
        std::process::id() & 0xffff,
        now.subsec_nanos() & 0xff
    )
}

/// Every count, size, rate and wait of `spec` against the one table of bounds (`input::limits`), before
/// anything is allocated from them: the flags of `bench` and `verify`, and an agent's run request, which
/// is checked by this same function. The error names the flag as `natsplan bench` takes it.
fn check_bounds(spec: &BenchSpec) -> Result<(), String> {
    use crate::input::limits::*;
    let flag = |name: &str, v: String, r: Result<(), String>| r.map_err(|e| format!("{name} {v}: {e}"));
    let obj = matches!(spec.workload, BenchWorkload::Obj { .. });
    let (workers, subs, replicas, batch) = match &spec.workload {
        BenchWorkload::Core { pubs, subs } => (*pubs, *subs, None, None),
        BenchWorkload::Flood { pubs } => (*pubs, 0, None, None),
        BenchWorkload::Ping => (1, 0, None, None),
        BenchWorkload::Js {
            pubs,
            replicas,
            window,
            consumers,
            ..
        } => (*pubs, *consumers, Some(*replicas), Some(*window)),
        BenchWorkload::JsExisting { pubs, window, .. } => (*pubs, 0, None, Some(*window)),
        BenchWorkload::Kv {
            clients,
            replicas,
            publish,
            window,
            ..
        } => (
            *clients,
            0,
            Some(*replicas),
            (*publish == super::PublishMode::Async).then_some(*window),
        ),
        BenchWorkload::KvGet { clients, replicas, .. } | BenchWorkload::JsGet { clients, replicas, .. } => {
            (*clients, 0, Some(*replicas), None)
        }
        BenchWorkload::Obj { clients, replicas, .. } => (*clients, 0, Some(*replicas), None),
        BenchWorkload::Consume {
            clients,
            batch,
            replicas,
            target,
            ..
        } => (*clients, 0, target.is_none().then_some(*replicas), Some(*batch)),
    };
    let count = |b: &Bound, v: usize| b.check_usize(v).map(|_| ());
    // Core subscribers alone (`bench sub`, --clients 0) are `validate`'s to judge.
    if !matches!(spec.workload, BenchWorkload::Core { pubs: 0, .. }) {
        flag("--clients", workers.to_string(), count(&CLIENTS, workers))?;
    }
    // A js run's readers are bounded as subscribers are (each reads every message).
    let subs_flag = if matches!(spec.workload, BenchWorkload::Js { .. }) {
        "--consumers"
    } else {
        "--subs"
    };
    flag(subs_flag, subs.to_string(), count(&SUBSCRIBERS, subs))?;
    if let Some(r) = replicas {
        flag("--replicas", r.to_string(), count(&REPLICAS, r))?;
    }
    if let Some(b) = batch {
        flag("--batch", b.to_string(), count(&BATCH, b))?;
    }
    let (msgs_flag, msgs_bound, size_bound) = if obj {
        ("--objects", &OBJECTS, &OBJECT_BYTES)
    } else {
        ("--msgs", &MSGS, &PAYLOAD_BYTES)
    };
    flag(
        msgs_flag,
        spec.msgs.to_string(),
        msgs_bound.check_u64(spec.msgs).map(|_| ()),
    )?;
    let size = format!("{} ({})", spec.size, crate::units::fmt_bytes(spec.size as f64));
    flag("--size", size, size_bound.check_u64(spec.size).map(|_| ()))?;
    if let Some(r) = spec.rate_per_s {
        flag("--rate", format!("{r:?}"), RATE_PER_S.check_f64(r).map(|_| ()))?;
    }
    if let Some(b) = spec.sub_buffer {
        flag("--sub-buffer", b.to_string(), count(&SUB_BUFFER, b))?;
    }
    let wait = |name: &str, d: std::time::Duration| {
        flag(
            name,
            humantime::format_duration(d).to_string(),
            BENCH_WAIT_S.check_duration(d).map(|_| ()),
        )
    };
    wait("--timeout", spec.timeout)?;
    wait("--backlog-cutoff", spec.backlog_cutoff)?;
    if let Some(d) = spec.sub_sleep {
        let name = if matches!(spec.workload, BenchWorkload::Consume { .. }) {
            "--sleep"
        } else {
            "--sub-sleep"
        };
        wait(name, d)?;
    }
    Ok(())
}

/// Check a whole run's spec (the coordinator does, before splitting it over agents).
pub fn check(spec: &BenchSpec) -> Result<(), BenchError> {
    validate(spec)
}

/// Run this process's share of a run spread over agents: `spec` holds the local worker counts and the
/// share's messages; the streams, buckets and object stores exist already (`prepare_shared`). The clock
/// starts when `gate` says so. `progress` counts completed operations as they happen.
pub async fn run_share(
    conn: &ConnSpec,
    spec: &BenchSpec,
    share: Share,
    gate: Gate,
    progress: Arc<AtomicU64>,
) -> Result<ShareOutput, BenchError> {
    let mut env = Env::new(conn, spec, share.run_id.clone(), Some(share), Some(gate));
    env.done = progress;
    let env = Arc::new(env);
    let result = dispatch(&env).await?;
    Ok(share_output(&env, result))
}

/// What a share hands back: its result with clients named by their index in the whole run, the merged
/// histogram and when its clock started.
pub(super) fn share_output(env: &Env, mut result: BenchResult) -> ShareOutput {
    let spec = &env.spec;
    // Name clients by their index in the whole run, so the merged report lists P1..Pn once each.
    let renumber = |c: &mut crate::bench::result::ClientSample, n: usize| {
        let prefix: String = c.id.chars().take_while(|ch| ch.is_ascii_alphabetic()).collect();
        c.id = format!("{prefix}{}", n + 1);
    };
    for (k, c) in result.publishers.clients.iter_mut().enumerate() {
        renumber(c, env.worker(k));
    }
    let readers_are_workers = spec.workload.readers_are_workers();
    for (k, c) in result.subscribers.clients.iter_mut().enumerate() {
        renumber(c, if readers_are_workers { env.worker(k) } else { env.sub(k) });
    }
    let hist = env.hist.lock().ok().and_then(|mut h| h.take()).unwrap_or_else(new_hist);
    let start = env.started.get().copied().unwrap_or(env.anchor);
    let first_start = result
        .publishers
        .start_s()
        .into_iter()
        .chain(result.subscribers.start_s())
        .reduce(f64::min);
    let start_s = env.secs(start);
    ShareOutput {
        result,
        hist,
        start_s,
        late_s: first_start.map(|f| (f - start_s).max(0.0)).unwrap_or(0.0),
    }
}

/// A message over the server's `max_payload` is refused by the server, which closes the connection:
/// check `--size` against the `max_payload` of the INFO the first server sends, before any payload is
/// made. Object stores send 128 KiB chunks, so `bench obj` is bounded by `OBJECT_BYTES` alone.
async fn check_max_payload(env: &Env) -> Result<(), BenchError> {
    if matches!(env.spec.workload, BenchWorkload::Obj { .. }) {
        return Ok(());
    }
    let c = env.connect(0, "info").await?;
    let max = c.server_info().max_payload as u64;
    let url = env
        .conn
        .servers
        .first()
        .map(|s| super::conn::redact_url(s))
        .unwrap_or_default();
    drop(c);
    if max > 0 && env.spec.size > max {
        return Err(BenchError::BadInput(anyhow!(
            "--size {}: over the server's max_payload of {} bytes ({}, from the INFO of {url}); it refuses a \
             larger message and closes the connection: use --size {} or less, or raise max_payload in \
             nats-server.conf",
            env.spec.size,
            max,
            crate::units::fmt_bytes(max as f64),
            max
        )));
    }
    Ok(())
}

/// `check_max_payload` for a run spread over agents (the coordinator, before it creates the row's assets).
pub async fn check_payload(conn: &ConnSpec, spec: &BenchSpec) -> Result<(), BenchError> {
    check_max_payload(&Env::new(conn, spec, new_run_id(), None, None)).await
}

pub(super) async fn dispatch(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
    check_max_payload(env).await?;
    let spec = &env.spec;
    match spec.workload.clone() {
        BenchWorkload::Core { pubs, subs } => core(env, pubs, subs, false).await,
        BenchWorkload::Flood { pubs } => {
            let subs = env.share.as_ref().map(|s| s.subs.len()).unwrap_or(1);
            core(env, pubs, subs, true).await
        }
        BenchWorkload::Ping => ping(env).await,
        BenchWorkload::Js {
            pubs,
            replicas,
            storage,
            publish,
            window,
            consumers,
        } => {
            let load = JsLoad {
                pubs,
                mode: publish,
                window,
                readers: consumers,
            };
            js(env, load, replicas, storage).await
        }
        BenchWorkload::Kv {
            clients,
            replicas,
            storage,
            publish,
            window,
        } => kv(env, clients, replicas, storage, KvRun::Put { publish, window }).await,
        BenchWorkload::KvGet {
            clients,
            replicas,
            storage,
        } => kv(env, clients, replicas, storage, KvRun::Get).await,
        BenchWorkload::JsGet { clients, .. } => super::get::js_get(env, clients).await,
        BenchWorkload::JsExisting {
            pubs,
            publish,
            window,
            target,
        } => js_existing(env, pubs, publish, window, &target).await,
        BenchWorkload::Consume {
            mode,
            clients,
            batch,
            target,
            ..
        } => consume(env, mode, clients, batch, &target).await,
        BenchWorkload::Obj {
            op,
            clients,
            replicas,
            storage,
        } => obj(env, op, clients, replicas, storage).await,
    }
}

pub(super) fn validate(spec: &BenchSpec) -> Result<(), BenchError> {
    check_bounds(spec).map_err(|m| BenchError::BadInput(anyhow!(m)))?;
    let bad = |m: String| Err(BenchError::BadInput(anyhow!(m)));
    if spec.msgs == 0 {
        return bad("--msgs must be at least 1".into());
    }
    spec.subjects.check().map_err(|m| BenchError::BadInput(anyhow!(m)))?;
    if let BenchWorkload::Js { publish, .. } | BenchWorkload::JsExisting { publish, .. } = spec.workload {
        if publish == super::PublishMode::Atomic && spec.rate_per_s.is_some() {
            return bad("--rate with atomic batches: a batch is one operation; drop --rate, or publish async".into());
        }
    }
    if let BenchWorkload::Kv {
        publish: super::PublishMode::Atomic,
        ..
    } = spec.workload
    {
        return bad(
            "--publish atomic: KV puts are not published in atomic batches; use --publish sync or async".into(),
        );
    }
    if let Some(r) = spec.rate_per_s {
        if !(r.is_finite() && r > 0.0) {
            return bad(format!("--rate {r}: give a positive messages-per-second rate"));
        }
        match spec.workload {
            BenchWorkload::Core { .. }
            | BenchWorkload::Js { .. }
            | BenchWorkload::JsExisting { .. }
            | BenchWorkload::Kv { .. }
            | BenchWorkload::KvGet { .. } => {}
            _ => {
                return bad(format!(
                    "--rate applies to core, js and kv; `{}` does not take it",
                    spec.workload.name()
                ))
            }
        }
    }
    let workers = match spec.workload {
        BenchWorkload::Core { pubs, subs } => {
            if pubs == 0 && subs == 0 {
                return bad("--pubs and --subs are both 0: nothing to run".into());
            }
            // Subscribers alone wait for someone else's publishers: only on a subject those know.
            match (pubs, &spec.subjects.subject) {
                (0, None) => {
                    return bad(
                        "--clients 0: subscribers alone need a subject other publishers use: `bench sub SUBJECT`"
                            .into(),
                    )
                }
                (0, Some(_)) => subs,
                _ => pubs,
            }
        }
        BenchWorkload::Flood { pubs } | BenchWorkload::Js { pubs, .. } | BenchWorkload::JsExisting { pubs, .. } => pubs,
        BenchWorkload::Kv { clients, .. }
        | BenchWorkload::KvGet { clients, .. }
        | BenchWorkload::JsGet { clients, .. }
        | BenchWorkload::Obj { clients, .. }
        | BenchWorkload::Consume { clients, .. } => clients,
        BenchWorkload::Ping => 1,
    };
    if workers == 0 {
        return bad("--clients must be at least 1".into());
    }
    let needs_stamp = spec.rate_per_s.is_some() || matches!(spec.workload, BenchWorkload::Flood { .. });
    if needs_stamp && matches!(spec.workload, BenchWorkload::Core { .. } | BenchWorkload::Flood { .. }) && spec.size < 8
    {
        return bad(format!(
            "--size {}: latency runs (flood, --rate) carry an 8-byte send time; use --size 8 or more",
            spec.size
        ));
    }
    let (replicas, window) = match &spec.workload {
        BenchWorkload::Js { replicas, window, .. } => (*replicas, *window),
        BenchWorkload::JsExisting { window, .. } => (1, *window),
        BenchWorkload::Consume { replicas, batch, .. } => (*replicas, *batch),
        BenchWorkload::Kv {
            replicas,
            publish,
            window,
            ..
        } => (
            *replicas,
            if *publish == super::PublishMode::Async {
                *window
            } else {
                1
            },
        ),
        BenchWorkload::KvGet { replicas, .. }
        | BenchWorkload::JsGet { replicas, .. }
        | BenchWorkload::Obj { replicas, .. } => (*replicas, 1),
        _ => (1, 1),
    };
    if let BenchWorkload::Consume {
        clients,
        target: Some(Existing { subject: Some(s), .. }),
        ..
    } = &spec.workload
    {
        if *clients > 1 {
            return bad(format!(
                "--subject {s} with --clients {clients}: clients split a stream by sequence, which a subject \
                 filter does not follow; use --clients 1 with --subject"
            ));
        }
    }
    consumer_placement(spec).map_err(|m| BenchError::BadInput(anyhow!(m)))?;
    if !(1..=5).contains(&replicas) {
        return bad(format!("--replicas {replicas}: JetStream allows 1 to 5 replicas"));
    }
    if window == 0 {
        return bad("--batch must be at least 1".into());
    }
    Ok(())
}

/// `--consumer-leader local|remote` where it can be had: pull consumers that acknowledge (fetch, consume),
/// whose consumer exists before the clock starts. An ordered consumer recreates itself on any gap (a new
/// consumer, a new leader) and a push ordered one is created after the clock starts.
pub(super) fn consumer_placement(spec: &BenchSpec) -> Result<(), String> {
    use super::{ConsumeMode, LeaderPlacement};
    let want = spec.consumer_leader;
    if want == LeaderPlacement::Any {
        return Ok(());
    }
    match &spec.workload {
        BenchWorkload::Consume {
            mode: ConsumeMode::Fetch | ConsumeMode::Consume,
            ..
        } => Ok(()),
        BenchWorkload::Consume { mode, .. } => Err(format!(
            "--consumer-leader {}: `{}` cannot be placed (an ordered consumer is recreated, with a new leader, on \
             every gap; a push ordered one is created after the clock starts); use it with fetch or consume, or \
             leave --consumer-leader out",
            want.as_str(),
            mode.as_str()
        )),
        w => Err(format!(
            "--consumer-leader {}: only consumer runs (fetch, consume) read through a consumer's leader; leave \
             --consumer-leader out for `{}`{}",
            want.as_str(),
            w.name(),
            match w {
                BenchWorkload::Js { .. }
                | BenchWorkload::JsExisting { .. }
                | BenchWorkload::Kv { .. }
                | BenchWorkload::Obj { .. } => {
                    " (its stream leader is placed with --leader)"
                }
                _ => "",
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::{ConsumeMode, LeaderPlacement, Storage};

    fn consume(mode: ConsumeMode) -> BenchWorkload {
        BenchWorkload::Consume {
            mode,
            clients: 1,
            batch: 10,
            replicas: 3,
            storage: Storage::File,
            target: None,
        }
    }

    #[test]
    fn consumer_leader_is_taken_by_fetch_and_consume_and_refused_elsewhere_with_the_flag_named() {
        let t = std::time::Duration::from_secs(1);
        for want in [LeaderPlacement::Local, LeaderPlacement::Remote] {
            for mode in [ConsumeMode::Fetch, ConsumeMode::Consume] {
                let mut s = crate::bench::mock::spec(consume(mode), 10, 8, t);
                s.consumer_leader = want;
                assert!(validate(&s).is_ok(), "{mode:?}");
            }
            let mut s = crate::bench::mock::spec(consume(ConsumeMode::Ordered), 10, 8, t);
            s.consumer_leader = want;
            let e = validate(&s).unwrap_err().to_string();
            assert!(
                e.starts_with("--consumer-leader") && e.contains("use it with fetch or consume"),
                "{e}"
            );
            let js = BenchWorkload::Js {
                pubs: 1,
                replicas: 3,
                storage: Storage::File,
                publish: crate::bench::PublishMode::Sync,
                window: 1,
                consumers: 0,
            };
            let mut s = crate::bench::mock::spec(js, 10, 8, t);
            s.consumer_leader = want;
            let e = validate(&s).unwrap_err().to_string();
            assert!(
                e.contains("leave --consumer-leader out for `js`") && e.contains("--leader"),
                "{e}"
            );
        }
        // `any` is every workload's default.
        let s = crate::bench::mock::spec(consume(ConsumeMode::Ordered), 10, 8, t);
        assert!(validate(&s).is_ok());
    }
}
