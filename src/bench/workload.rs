//! The work itself: connect, create `natsplan-*` assets, run publishers/subscribers/clients as tokio tasks
//! each with its own histogram, stop cleanly (subscribers never wait forever for dropped messages, `--rate`
//! runs stop when they fall behind), clean up, and assemble a `BenchResult`.

use super::result::{new_hist, BenchResult};
use super::{consume::*, env::*, exec::*, js::*, kv::*, obj::*, ping::*, pubsub::*};
use super::{BenchError, BenchSpec, ConnSpec, Existing, Workload};
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
    let mut result = dispatch(&env).await?;
    // Name clients by their index in the whole run, so the merged report lists P1..Pn once each.
    let renumber = |c: &mut crate::bench::result::ClientSample, n: usize| {
        let prefix: String = c.id.chars().take_while(|ch| ch.is_ascii_alphabetic()).collect();
        c.id = format!("{prefix}{}", n + 1);
    };
    for (k, c) in result.publishers.clients.iter_mut().enumerate() {
        renumber(c, env.worker(k));
    }
    let subs_are_workers = matches!(result.kind.as_str(), "obj-get" | "kv-get") || result.kind.starts_with("js-");
    for (k, c) in result.subscribers.clients.iter_mut().enumerate() {
        renumber(c, if subs_are_workers { env.worker(k) } else { env.sub(k) });
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
    Ok(ShareOutput {
        result,
        hist,
        start_s,
        late_s: first_start.map(|f| (f - start_s).max(0.0)).unwrap_or(0.0),
    })
}

pub(super) async fn dispatch(env: &Arc<Env>) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    match spec.workload.clone() {
        Workload::Core { pubs, subs } => core(env, pubs, subs, false).await,
        Workload::Flood { pubs } => {
            let subs = env.share.as_ref().map(|s| s.subs.len()).unwrap_or(1);
            core(env, pubs, subs, true).await
        }
        Workload::Ping => ping(env).await,
        Workload::Js {
            pubs,
            replicas,
            storage,
            publish,
            window,
        } => js(env, pubs, replicas, storage, publish, window).await,
        Workload::Kv {
            clients,
            replicas,
            storage,
        } => kv(env, clients, replicas, storage, false).await,
        Workload::KvGet {
            clients,
            replicas,
            storage,
        } => kv(env, clients, replicas, storage, true).await,
        Workload::JsExisting {
            pubs,
            publish,
            window,
            target,
        } => js_existing(env, pubs, publish, window, &target).await,
        Workload::Consume {
            mode,
            clients,
            batch,
            target,
            ..
        } => consume(env, mode, clients, batch, &target).await,
        Workload::Obj {
            op,
            clients,
            replicas,
            storage,
        } => obj(env, op, clients, replicas, storage).await,
    }
}

pub(super) fn validate(spec: &BenchSpec) -> Result<(), BenchError> {
    let bad = |m: String| Err(BenchError::BadInput(anyhow!(m)));
    if spec.msgs == 0 {
        return bad("--msgs must be at least 1".into());
    }
    if let Some(r) = spec.rate_per_s {
        if !(r.is_finite() && r > 0.0) {
            return bad(format!("--rate {r}: give a positive messages-per-second rate"));
        }
        match spec.workload {
            Workload::Core { .. }
            | Workload::Js { .. }
            | Workload::JsExisting { .. }
            | Workload::Kv { .. }
            | Workload::KvGet { .. } => {}
            _ => {
                return bad(format!(
                    "--rate applies to core, js and kv; `{}` does not take it",
                    spec.workload.name()
                ))
            }
        }
    }
    let workers = match spec.workload {
        Workload::Core { pubs, subs } => {
            if pubs == 0 && subs == 0 {
                return bad("--pubs and --subs are both 0: nothing to run".into());
            }
            pubs
        }
        Workload::Flood { pubs } | Workload::Js { pubs, .. } | Workload::JsExisting { pubs, .. } => pubs,
        Workload::Kv { clients, .. }
        | Workload::KvGet { clients, .. }
        | Workload::Obj { clients, .. }
        | Workload::Consume { clients, .. } => clients,
        Workload::Ping => 1,
    };
    if workers == 0 {
        return bad("--clients must be at least 1".into());
    }
    let needs_stamp = spec.rate_per_s.is_some() || matches!(spec.workload, Workload::Flood { .. });
    if needs_stamp && matches!(spec.workload, Workload::Core { .. } | Workload::Flood { .. }) && spec.size < 8 {
        return bad(format!(
            "--size {}: latency runs (flood, --rate) carry an 8-byte send time; use --size 8 or more",
            spec.size
        ));
    }
    let (replicas, window) = match &spec.workload {
        Workload::Js { replicas, window, .. } => (*replicas, *window),
        Workload::JsExisting { window, .. } => (1, *window),
        Workload::Consume { replicas, batch, .. } => (*replicas, *batch),
        Workload::Kv { replicas, .. } | Workload::KvGet { replicas, .. } | Workload::Obj { replicas, .. } => {
            (*replicas, 1)
        }
        _ => (1, 1),
    };
    if let Workload::Consume {
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
    if !(1..=5).contains(&replicas) {
        return bad(format!("--replicas {replicas}: JetStream allows 1 to 5 replicas"));
    }
    if window == 0 {
        return bad("--batch must be at least 1".into());
    }
    Ok(())
}
