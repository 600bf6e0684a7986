//! The streams, KV buckets and object stores a run creates and removes.

use super::env::*;
use super::exec::Fail;
use super::{BenchError, BenchSpec, ConnSpec, ObjOp, Storage, Workload};
use async_nats::jetstream;
use std::time::{Duration, Instant};

pub(super) fn storage_type(s: Storage) -> jetstream::stream::StorageType {
    match s {
        Storage::File => jetstream::stream::StorageType::File,
        Storage::Memory => jetstream::stream::StorageType::Memory,
    }
}

/// JetStream asset creation retried: right after a cluster starts the meta leader may not be elected
/// yet, and a request can go unanswered (seen on a fresh 3-server loopback cluster: "create stream:
/// jetstream request timed out"). Each attempt waits `timeout`; attempts go on for three of them (at least
/// 15 s). An answer that refuses the asset (no room for its replicas, say) is retried for 5 s only, since
/// it is usually final. Creating with the same configuration again is harmless: the server answers with
/// what exists.
pub(super) async fn retry<T, E: std::fmt::Display, F, Fut>(
    what: &str,
    timeout: Duration,
    mut f: F,
) -> Result<T, BenchError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let t0 = tokio::time::Instant::now();
    let unanswered = (timeout * 3).max(Duration::from_secs(15));
    let refused = timeout.max(Duration::from_secs(5));
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) => {
                let text = e.to_string().to_lowercase();
                let transient = text.contains("timed out") || text.contains("no responders");
                if t0.elapsed() > if transient { unanswered } else { refused } {
                    return Err(cannot(e, what));
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        }
    }
}

pub(super) fn js_context(c: async_nats::Client, env: &Env, window: usize) -> jetstream::Context {
    jetstream::context::ContextBuilder::new()
        .api_prefix(env.conn.js_api_prefix())
        .timeout(env.spec.timeout)
        .ack_timeout(env.spec.timeout)
        .max_ack_inflight(window.max(1))
        .backpressure_on_inflight(true)
        .build(c)
}

/// Create what a run writes to: the stream (js), bucket (kv) or object store (obj, and for gets the
/// objects to read, written before any clock starts). Retried while a new cluster elects its leaders.
pub(super) async fn create_assets(env: &Env) -> Result<(), BenchError> {
    let spec = &env.spec;
    let admin = env.connect(0, "admin").await?;
    let actx = js_context(admin, env, 1);
    match spec.workload {
        Workload::Js { replicas, storage, .. } => {
            let cfg = jetstream::stream::Config {
                name: format!("natsplan-js-{}", env.run_id),
                subjects: vec![format!("natsplan.js.{}", env.run_id)],
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create stream", spec.timeout, || actx.create_stream(cfg.clone())).await?;
        }
        Workload::Kv { replicas, storage, .. } => {
            let cfg = jetstream::kv::Config {
                bucket: format!("natsplan-kv-{}", env.run_id),
                history: 1,
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create KV bucket", spec.timeout, || actx.create_key_value(cfg.clone())).await?;
        }
        Workload::Obj {
            op, replicas, storage, ..
        } => {
            let cfg = jetstream::object_store::Config {
                bucket: format!("natsplan-obj-{}", env.run_id),
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            let store = retry("create object store", spec.timeout, || {
                actx.create_object_store(cfg.clone())
            })
            .await?;
            if op == ObjOp::Get {
                // Written as the put run writes them (`obj::put_object`); every get then checks the
                // object's SHA-256 digest (async-nats does), so the get run also proves that format.
                let data = bytes::Bytes::from(vec![0x5au8; spec.size as usize]);
                let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs);
                let pctx = js_context(env.connect(0, "fill").await?, env, super::obj::PUT_INFLIGHT);
                let put = super::obj::Put {
                    ctx: &pctx,
                    store: &store,
                    bucket: &cfg.bucket,
                    run: &env.run_id,
                    stream: None,
                };
                for i in 0..total {
                    let name = format!("o{i}");
                    if let Err(e) = super::obj::put_object(&put, &name, &super::obj::nuid(&env.run_id, i), &data).await
                    {
                        let _ = actx.delete_object_store(&cfg.bucket).await;
                        let why = match e {
                            Fail::Refused(w) | Fail::Unanswered(w) => w,
                        };
                        return Err(cannot(why, "put object for the get run"));
                    }
                }
            }
        }
        Workload::Consume {
            replicas,
            storage,
            target: None,
            ..
        } => {
            // The stream a consumer run reads, filled before any clock starts.
            let cfg = jetstream::stream::Config {
                name: format!("natsplan-js-{}", env.run_id),
                subjects: vec![format!("natsplan.js.{}", env.run_id)],
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create stream", spec.timeout, || actx.create_stream(cfg.clone())).await?;
            let subject = cfg.subjects[0].clone();
            let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs);
            let fctx = js_context(env.connect(0, "fill").await?, env, 512);
            if let Err(e) = super::consume::fill(&fctx, total, spec.size as usize, |_| subject.clone()).await {
                let _ = actx.delete_stream(&cfg.name).await;
                return Err(e);
            }
        }
        Workload::KvGet { replicas, storage, .. } => {
            let cfg = jetstream::kv::Config {
                bucket: format!("natsplan-kv-{}", env.run_id),
                history: 1,
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create KV bucket", spec.timeout, || actx.create_key_value(cfg.clone())).await?;
            // The keys the getters read (`k0..`), put before any clock starts.
            let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs);
            let fctx = js_context(env.connect(0, "fill").await?, env, 512);
            let b = cfg.bucket.clone();
            if let Err(e) = super::consume::fill(&fctx, total, spec.size as usize, |i| format!("$KV.{b}.k{i}")).await {
                let _ = actx.delete_key_value(&cfg.bucket).await;
                return Err(e);
            }
        }
        _ => {}
    }
    Ok(())
}

/// Remove what `create_assets` made, through any server that answers: the one the run used first may
/// be the one that died (issue 17). Tried over every server in turn for as long as creation is (three
/// timeouts, at least 15 s: a meta leader lost with the dead server is re-elected within that). Returns a
/// warning naming what is left when no server removed it.
pub(super) async fn delete_assets(env: &Env) -> Option<String> {
    let wait = env.spec.timeout.max(Duration::from_secs(2));
    let until = Instant::now() + (env.spec.timeout * 3).max(Duration::from_secs(15));
    let (kind, name) = match env.spec.workload {
        Workload::Js { .. } | Workload::Consume { target: None, .. } => {
            ("stream", format!("natsplan-js-{}", env.run_id))
        }
        Workload::Kv { .. } | Workload::KvGet { .. } => ("KV bucket", format!("natsplan-kv-{}", env.run_id)),
        Workload::Obj { .. } => ("object store", format!("natsplan-obj-{}", env.run_id)),
        _ => return None,
    };
    let servers = env.conn.servers.len().max(1);
    for attempt in 0.. {
        if attempt > 0 && Instant::now() > until {
            break;
        }
        // Every server in turn, whatever `--leader` routed the workers to (the leader's server may be the
        // one that died).
        let at = attempt % servers;
        let Ok(Ok(admin)) = tokio::time::timeout(
            wait,
            env.conn.connect_via(at, at, "admin", Some(env.slow_events.clone())),
        )
        .await
        else {
            continue;
        };
        let actx = js_context(admin, env, 1);
        let deleted = tokio::time::timeout(wait, async {
            let r = match env.spec.workload {
                Workload::Js { .. } | Workload::Consume { .. } => {
                    actx.delete_stream(&name).await.map(|_| ()).map_err(|e| e.to_string())
                }
                Workload::Kv { .. } | Workload::KvGet { .. } => actx
                    .delete_key_value(&name)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                _ => actx
                    .delete_object_store(&name)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            };
            r
        })
        .await;
        match deleted {
            Ok(Ok(())) => return None,
            // Not found: already gone (or never made); nothing to retry.
            Ok(Err(e)) if e.to_lowercase().contains("not found") => return None,
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
    Some(format!(
        "could not delete the run's {kind} {name} (no server removed it); delete it by hand"
    ))
}

/// The coordinator's side of a run spread over agents: create the run's stream, bucket or object store
/// (`spec` is the whole run) under `run_id`, which every agent's share then uses.
pub async fn prepare_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) -> Result<(), BenchError> {
    let env = Env::new(conn, spec, run_id.to_string(), None, None);
    create_assets(&env).await
}

/// Remove what `prepare_shared` created (unless `spec.keep`).
pub async fn cleanup_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) {
    if !spec.keep {
        let env = Env::new(conn, spec, run_id.to_string(), None, None);
        let _ = delete_assets(&env).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    #[tokio::test(start_paused = true)]
    pub(super) async fn asset_creation_retries_unanswered_requests_longer_than_refusals() {
        // Attempts until success or the deadline, on a paused clock (time moves only while sleeping).
        async fn attempts(error: &'static str, succeed_at: u32) -> (u32, Result<(), String>) {
            let n = std::sync::atomic::AtomicU32::new(0);
            let t = Duration::from_secs(5);
            let r = retry("create stream", t, || {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    // Each unanswered attempt costs its timeout.
                    if error.contains("timed out") {
                        tokio::time::sleep(t).await;
                    }
                    if k == succeed_at {
                        Ok(())
                    } else {
                        Err(error)
                    }
                }
            })
            .await;
            (n.load(Ordering::SeqCst), r.map_err(|e| e.to_string()))
        }
        // Unanswered twice (10 s), then created: within the 15 s allowed for unanswered requests.
        let (n, r) = attempts("jetstream request timed out", 3).await;
        assert_eq!((n, r), (3, Ok(())));
        // Never answered: gives up after 15 s, naming what it was doing.
        let (n, r) = attempts("jetstream request timed out", 0).await;
        assert_eq!(n, 3, "5 s per attempt and 250 ms between: the third ends past 15 s");
        assert!(r.unwrap_err().contains("create stream: jetstream request timed out"));
        // Refused at once (no room for the replicas): retried for 5 s only.
        let (n, r) = attempts("insufficient resources", 0).await;
        assert!((19..=22).contains(&n), "{n} attempts 250 ms apart");
        assert!(r.unwrap_err().contains("insufficient resources"));
    }
}
