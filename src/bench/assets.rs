//! The streams, KV buckets and object stores a run creates, fills before the clock starts and removes:
//! `fill` (a stream or bucket) and `put_object` (an object, as nats.go writes it; `obj`'s put workload
//! measures the same writer) are here so creating an asset never reaches back into a workload.

use super::env::*;
use super::exec::Fail;
use super::jetstream::*;
use super::result::LeftBehind;
use super::{BenchError, BenchSpec, BenchWorkload, ConnSpec, ObjOp, PublishMode};
use async_nats::jetstream;
use bytes::Bytes;
use sha2::Digest;
use std::time::{Duration, Instant};

/// Create what a run writes to: the stream (js), bucket (kv) or object store (obj, and for gets the
/// objects to read, written before any clock starts). Retried while a new cluster elects its leaders.
pub(super) async fn create_assets(env: &Env) -> Result<(), BenchError> {
    let spec = &env.spec;
    let admin = env.connect(0, "admin").await?;
    learn_cluster_urls(env, &admin);
    let actx = js_context(admin, env, 1);
    match spec.workload {
        BenchWorkload::Js {
            replicas,
            storage,
            publish,
            ..
        } => {
            let cfg = jetstream::stream::Config {
                name: format!("natsplan-js-{}", env.run_id),
                subjects: vec![spec.subjects.capture(&js_subject(env))],
                // Atomic batches need the stream's consent (ADR-50; natscli's --create sets it too).
                allow_atomic_publish: publish == PublishMode::Atomic,
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create stream", spec.timeout, || actx.create_stream(cfg.clone())).await?;
        }
        BenchWorkload::Kv { replicas, storage, .. } => {
            let cfg = jetstream::kv::Config {
                bucket: format!("natsplan-kv-{}", env.run_id),
                history: 1,
                num_replicas: replicas,
                storage: storage_type(storage),
                ..Default::default()
            };
            retry("create KV bucket", spec.timeout, || actx.create_key_value(cfg.clone())).await?;
        }
        BenchWorkload::Obj {
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
                let pctx = js_context(env.connect(0, "fill").await?, env, PUT_INFLIGHT);
                let put = Put {
                    ctx: &pctx,
                    store: &store,
                    bucket: &cfg.bucket,
                    run: &env.run_id,
                    stream: None,
                };
                for i in 0..total {
                    let name = format!("o{i}");
                    if let Err(e) = put_object(&put, &name, &nuid(&env.run_id, i), &data).await {
                        let why = match e {
                            Fail::Refused(w) | Fail::Unanswered(w) | Fail::Gone(w) => w,
                        };
                        return Err(remove_after_failed_fill(env, cannot(why, "put object for the get run")).await);
                    }
                }
            }
        }
        BenchWorkload::Consume {
            replicas,
            storage,
            target: None,
            ..
        }
        | BenchWorkload::JsGet { replicas, storage, .. } => {
            // The stream a consumer or get run reads, filled before any clock starts; gets need direct
            // gets allowed, as natscli's `--create` makes its stream.
            let cfg = jetstream::stream::Config {
                name: format!("natsplan-js-{}", env.run_id),
                subjects: vec![format!("natsplan.js.{}", env.run_id)],
                num_replicas: replicas,
                storage: storage_type(storage),
                allow_direct: matches!(spec.workload, BenchWorkload::JsGet { .. }),
                ..Default::default()
            };
            retry("create stream", spec.timeout, || actx.create_stream(cfg.clone())).await?;
            let subject = cfg.subjects[0].clone();
            let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(spec.msgs);
            let fctx = js_context(env.connect(0, "fill").await?, env, 512);
            if let Err(e) = fill(&fctx, total, spec.size as usize, |_| subject.clone()).await {
                return Err(remove_after_failed_fill(env, e).await);
            }
        }
        BenchWorkload::KvGet { replicas, storage, .. } => {
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
            if let Err(e) = fill(&fctx, total, spec.size as usize, |i| format!("$KV.{b}.k{i}")).await {
                return Err(remove_after_failed_fill(env, e).await);
            }
        }
        _ => {}
    }
    Ok(())
}

/// The asset `create_assets` makes for this run: its kind (for messages) and name; None for a run
/// that makes none.
fn run_asset(env: &Env) -> Option<(&'static str, String)> {
    Some(match env.spec.workload {
        BenchWorkload::Js { .. } | BenchWorkload::Consume { target: None, .. } | BenchWorkload::JsGet { .. } => {
            ("stream", format!("natsplan-js-{}", env.run_id))
        }
        BenchWorkload::Kv { .. } | BenchWorkload::KvGet { .. } => ("KV bucket", format!("natsplan-kv-{}", env.run_id)),
        BenchWorkload::Obj { .. } => ("object store", format!("natsplan-obj-{}", env.run_id)),
        _ => return None,
    })
}

/// The natscli command that removes an asset of `kind`.
fn remove_command(kind: &str, name: &str) -> String {
    match kind {
        "stream" => format!("nats stream rm {name} -f"),
        "KV bucket" => format!("nats kv del {name} -f"),
        _ => format!("nats object del {name} -f"),
    }
}

/// Keep the cluster's advertised client URLs (INFO `connect_urls`) of a connection, for the clean-up to
/// reach the cluster through when every URL given is down.
pub(super) fn learn_cluster_urls(env: &Env, client: &async_nats::Client) {
    let urls: Vec<String> = client
        .server_info()
        .connect_urls
        .iter()
        .map(|u| env.conn.advertised_url(u))
        .collect();
    if !urls.is_empty() {
        *env.cluster_urls.lock().unwrap_or_else(|e| e.into_inner()) = urls;
    }
}

/// Remove what `create_assets` made, through any server that answers: the one the run used first may
/// be the one that died (issue 17). Tried over every server given in turn, then over the cluster's other
/// servers as the creating connection learned them (one `--server` given, and that one died: issue 41),
/// for as long as creation is (three timeouts, at least 15 s: a meta leader lost with the dead server is
/// re-elected within that). Returns what is left, and how to remove it, when no server removed it.
pub(super) async fn delete_assets(env: &Env) -> Option<LeftBehind> {
    let wait = env.spec.timeout.max(Duration::from_secs(2));
    let until = Instant::now() + (env.spec.timeout * 3).max(Duration::from_secs(15));
    let (kind, name) = run_asset(env)?;
    let host_port = |u: &str| {
        let rest = u.split_once("://").map_or(u, |(_, r)| r);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        rest.trim_end_matches('/').to_string()
    };
    let given: Vec<String> = (0..env.conn.servers.len().max(1))
        .map(|i| env.conn.server_for(i).to_string())
        .collect();
    let mut urls = given.clone();
    for u in env.cluster_urls.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        if !given.iter().any(|g| host_port(g) == host_port(u)) {
            urls.push(u.clone());
        }
    }
    for attempt in 0.. {
        if attempt > 0 && Instant::now() > until {
            break;
        }
        // Every server in turn, whatever `--leader` routed the workers to (the leader's server may be the
        // one that died).
        let url = &urls[attempt % urls.len()];
        let Ok(Ok(admin)) = tokio::time::timeout(
            wait,
            env.conn
                .connect_url(url, attempt, "admin", Some(env.slow_events.clone())),
        )
        .await
        else {
            continue;
        };
        let actx = js_context(admin, env, 1);
        let deleted = tokio::time::timeout(wait, async {
            let r = match env.spec.workload {
                BenchWorkload::Js { .. } | BenchWorkload::Consume { .. } | BenchWorkload::JsGet { .. } => {
                    actx.delete_stream(&name).await.map(|_| ()).map_err(|e| js_failure(&e))
                }
                BenchWorkload::Kv { .. } | BenchWorkload::KvGet { .. } => actx
                    .delete_key_value(&name)
                    .await
                    .map(|_| ())
                    .map_err(|e| js_failure(&e)),
                _ => actx
                    .delete_object_store(&name)
                    .await
                    .map(|_| ())
                    .map_err(|e| js_failure(&e)),
            };
            r
        })
        .await;
        match deleted {
            Ok(Ok(())) => return None,
            // Not found: already gone (or never made); nothing to retry.
            Ok(Err(JsFailure::NotFound)) => return None,
            _ => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
    Some(LeftBehind {
        kind: kind.to_string(),
        remove: remove_command(kind, &name),
        name,
    })
}

/// A run that failed while its asset was being filled: the asset removed (through any server), and the
/// error says whether it is left and how to remove it (`bench consumer` left its stream without a word).
async fn remove_after_failed_fill(env: &Env, e: BenchError) -> BenchError {
    let left = delete_assets(env).await;
    let tail = match left {
        Some(l) => format!("; {}", l.warning()),
        None => match run_asset(env) {
            Some((kind, name)) => format!("; the run's {kind} {name} was removed"),
            None => String::new(),
        },
    };
    with_tail(e, &tail)
}

fn with_tail(e: BenchError, tail: &str) -> BenchError {
    match e {
        BenchError::CannotRun(e) => BenchError::CannotRun(anyhow::anyhow!("{e:#}{tail}")),
        BenchError::BadInput(e) => BenchError::BadInput(anyhow::anyhow!("{e:#}{tail}")),
    }
}

/// A run's outcome with what its clean-up left: said in the result's warnings and `left_behind`, or,
/// when the run failed, at the end of its error.
/// A run on the stream (or the stream under a KV bucket) it owns: create it here unless agents share it,
/// place the stream's leader for `workers`, run, record where the leader was, and remove what was created
/// unless `--keep` (what no server removed is in the result's `left_behind`).
pub(super) async fn on_own_stream<F, Fut>(
    env: &std::sync::Arc<Env>,
    stream: &str,
    workers: usize,
    run: F,
) -> Result<super::BenchResult, BenchError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<super::BenchResult, BenchError>>,
{
    if env.owns_assets() {
        create_assets(env).await?;
    }
    let mut result = match super::leader::place(env, stream, workers).await {
        Ok(placed) => run().await.map(|r| (r, placed)),
        Err(e) => Err(e),
    };
    if let Ok((r, placed)) = &mut result {
        super::leader::record(env, stream, placed.take(), r).await;
    }
    let left = if env.owns_assets() && !env.spec.keep {
        delete_assets(env).await
    } else {
        None
    };
    with_left(result, left, |(r, _)| r).map(|(r, _)| r)
}

pub(super) fn with_left<T>(
    res: Result<T, BenchError>,
    left: Option<LeftBehind>,
    result: impl FnOnce(&mut T) -> &mut super::BenchResult,
) -> Result<T, BenchError> {
    match (res, left) {
        (r, None) => r,
        (Ok(mut v), Some(l)) => {
            let r = result(&mut v);
            r.warnings.push(l.warning());
            r.left_behind.push(l);
            Ok(v)
        }
        (Err(e), Some(l)) => Err(with_tail(e, &format!("; {}", l.warning()))),
    }
}

/// The coordinator's side of a run spread over agents: create the run's stream, bucket or object store
/// (`spec` is the whole run) under `run_id`, which every agent's share then uses.
pub async fn prepare_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) -> Result<(), BenchError> {
    let env = Env::new(conn, spec, run_id.to_string(), None, None);
    create_assets(&env).await
}

/// Remove what `prepare_shared` created (unless `spec.keep`); what no server removed is returned.
pub async fn cleanup_shared(conn: &ConnSpec, spec: &BenchSpec, run_id: &str) -> Option<LeftBehind> {
    if spec.keep {
        return None;
    }
    let env = Env::new(conn, spec, run_id.to_string(), None, None);
    delete_assets(&env).await
}

/// Publish `total` messages of `size` bytes on `subject(i)` through `ctx`, up to 512 in flight, each
/// acknowledged (filling a stream or bucket before a read run's clock starts).
pub(super) async fn fill<F: Fn(u64) -> String>(
    ctx: &jetstream::Context,
    total: u64,
    size: usize,
    subject: F,
) -> Result<(), BenchError> {
    let payload = bytes::Bytes::from(vec![0x5au8; size]);
    let mut acks = Vec::with_capacity(512);
    for i in 0..total {
        let a = ctx
            .publish(subject(i), payload.clone())
            .await
            .map_err(|e| cannot(e, "fill the stream"))?;
        acks.push(a);
        if acks.len() >= 512 || i + 1 == total {
            for a in acks.drain(..) {
                a.await.map_err(|e| cannot(e, "fill the stream"))?;
            }
        }
    }
    Ok(())
}

/// Chunk size of both official clients' object puts (nats.go `objDefaultChunkSize`, async-nats
/// `DEFAULT_CHUNK_SIZE`).
pub(super) const CHUNK_BYTES: usize = 128 * 1024;

/// Acks in flight allowed to one object put (every chunk of a 64 MiB object): nats.go's default for a
/// context is 4,000 (`defaultAsyncPubAckInflight`).
pub(super) const PUT_INFLIGHT: usize = 512;

/// What an object put needs: the context it publishes on (with room for a whole object's acks in
/// flight), the store (for the name lookup both official clients do first), the bucket and the run id
/// (the chunks' unique subject token).
pub(super) struct Put<'a> {
    pub(super) ctx: &'a jetstream::Context,
    pub(super) store: &'a jetstream::object_store::ObjectStore,
    pub(super) bucket: &'a str,
    pub(super) run: &'a str,
    /// The store's stream, for gets.
    pub(super) stream: Option<&'a jetstream::stream::Stream>,
}

/// The chunks' subject token of object `o{j}` of run `run` (unique per put, as a nuid is).
pub(super) fn nuid(run: &str, j: u64) -> String {
    format!("np{run}o{j}")
}

/// One object put as nats.go does it (see the module doc): look the name up, publish the chunks
/// (slices of `data`, no copies) and the meta message without waiting, then await every ack. An object
/// already stored under the name is refused rather than replaced: a run's names are its own.
pub(super) async fn put_object(p: &Put<'_>, name: &str, nuid: &str, data: &Bytes) -> Result<(), Fail> {
    if let Ok(old) = p.store.info(name).await {
        if !old.deleted {
            return Err(Fail::Refused(format!("object {name} exists already")));
        }
    }
    let chunk_subject = async_nats::Subject::from(format!("$O.{}.C.{nuid}", p.bucket));
    let mut acks = Vec::with_capacity(data.len() / CHUNK_BYTES + 2);
    let mut sha = sha2::Sha256::new();
    let mut chunks = 0usize;
    for at in (0..data.len()).step_by(CHUNK_BYTES) {
        let chunk = data.slice(at..(at + CHUNK_BYTES).min(data.len()));
        sha.update(&chunk);
        chunks += 1;
        let ack = p
            .ctx
            .publish(chunk_subject.clone(), chunk)
            .await
            .map_err(|e| Fail::of_publish(&e))?;
        acks.push(ack);
    }
    use base64::Engine;
    let digest = base64::engine::general_purpose::URL_SAFE.encode(sha.finalize());
    let info = serde_json::json!({
        "name": name,
        "bucket": p.bucket,
        "nuid": nuid,
        "size": data.len(),
        "chunks": chunks,
        "mtime": humantime::format_rfc3339_nanos(std::time::SystemTime::now()).to_string(),
        "digest": format!("SHA-256={digest}"),
        "options": { "max_chunk_size": CHUNK_BYTES },
    });
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("Nats-Rollup", "sub");
    let meta = format!(
        "$O.{}.M.{}",
        p.bucket,
        base64::engine::general_purpose::URL_SAFE.encode(name)
    );
    let body = Bytes::from(serde_json::to_vec(&info).map_err(Fail::refused)?);
    let ack = p
        .ctx
        .publish_with_headers(meta, headers, body)
        .await
        .map_err(|e| Fail::of_publish(&e))?;
    acks.push(ack);
    for a in acks {
        a.await.map_err(|e| Fail::of_publish(&e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    #[test]
    fn what_a_clean_up_left_is_said_in_the_result_or_at_the_end_of_the_error() {
        let left = || {
            Some(LeftBehind {
                kind: "stream".into(),
                name: "natsplan-js-x".into(),
                remove: remove_command("stream", "natsplan-js-x"),
            })
        };
        let r = crate::bench::BenchResult::blank("js", "", Default::default(), 1, 1, "x");
        let r = with_left(Ok(r), left(), |r| r).unwrap();
        assert_eq!(r.left_behind, vec![left().unwrap()]);
        assert!(r.warnings[0].contains("natsplan-js-x") && r.warnings[0].contains("nats stream rm natsplan-js-x -f"));
        let v = crate::bench::export::json_value(&r);
        assert_eq!(v["left_behind"][0]["remove"], "nats stream rm natsplan-js-x -f");
        let e = with_left::<()>(
            Err(cannot("connection lost", "fill the stream")),
            left(),
            |_| unreachable!(),
        );
        let text = e.unwrap_err().to_string();
        assert!(
            text.contains("fill the stream: connection lost") && text.contains("nats stream rm natsplan-js-x -f"),
            "{text}"
        );
        assert_eq!(remove_command("KV bucket", "b"), "nats kv del b -f");
        assert_eq!(remove_command("object store", "o"), "nats object del o -f");
    }

    #[tokio::test(start_paused = true)]
    pub(super) async fn asset_creation_retries_unanswered_requests_longer_than_refusals() {
        // Attempts until success or the deadline, on a paused clock (time moves only while sleeping).
        use async_nats::jetstream::context::{CreateStreamError, CreateStreamErrorKind};
        async fn attempts(error: fn() -> CreateStreamError, succeed_at: u32) -> (u32, Result<(), String>) {
            let n = std::sync::atomic::AtomicU32::new(0);
            let t = Duration::from_secs(5);
            let r = retry("create stream", t, || {
                let k = n.fetch_add(1, Ordering::SeqCst) + 1;
                let error = error();
                async move {
                    // Each unanswered attempt costs its timeout.
                    if error.kind() == CreateStreamErrorKind::TimedOut {
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
        fn unanswered() -> CreateStreamError {
            CreateStreamError::new(CreateStreamErrorKind::TimedOut)
        }
        fn refused() -> CreateStreamError {
            let e = r#"{"code":500,"err_code":10023,"description":"insufficient resources"}"#;
            CreateStreamError::new(CreateStreamErrorKind::JetStream(serde_json::from_str(e).unwrap()))
        }
        let (n, r) = attempts(unanswered, 3).await;
        assert_eq!((n, r), (3, Ok(())));
        // Never answered: gives up after 15 s, naming what it was doing.
        let (n, r) = attempts(unanswered, 0).await;
        assert_eq!(n, 3, "5 s per attempt and 250 ms between: the third ends past 15 s");
        assert!(r.unwrap_err().contains("create stream: jetstream request timed out"));
        // Refused at once (no room for the replicas): retried for 5 s only.
        let (n, r) = attempts(refused, 0).await;
        assert!((19..=22).contains(&n), "{n} attempts 250 ms apart");
        assert!(r.unwrap_err().contains("insufficient resources"));
    }
}
