//! Object store puts and gets of whole objects.
//!
//! Gets are written here as nats.go's `ObjectStore.Get` reads (object.go): the object's info, then an
//! ordered push consumer on its chunks, every chunk read and the SHA-256 digest checked, and the consumer
//! deleted (nats.go's `Unsubscribe`). async-nats 0.51's reader leaves its consumer to expire after 30 s of
//! inactivity, so a run of more than about a thousand gets in 30 s met "maximum consumers limit reached".
//! Puts are written here too, as nats.go's `ObjectStore.Put` writes them
//! (object.go): the 128 KiB chunks published without waiting for each one's ack, the meta message (a
//! subject rollup) after them, then every ack awaited. async-nats 0.51's `ObjectStore::put` awaits each
//! chunk's ack before it publishes the next, one replicated round trip per chunk, which held a 1 MiB R3
//! put at 0.70–0.78× the Go client on the same lab. The stored chunks and meta are the object store's own
//! format, so any client reads them back.

use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, js::*};
use super::{BenchError, ObjOp, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
use sha2::Digest;
use std::sync::Arc;

/// Chunk size of both official clients' object puts (nats.go `objDefaultChunkSize`, async-nats
/// `DEFAULT_CHUNK_SIZE`).
pub(super) const CHUNK_BYTES: usize = 128 * 1024;

/// Acks in flight allowed to one object put (every chunk of a 64 MiB object): nats.go's default for a
/// context is 4,000 (`defaultAsyncPubAckInflight`).
pub(super) const PUT_INFLIGHT: usize = 512;

pub(super) async fn obj(
    env: &Arc<Env>,
    op: ObjOp,
    clients: usize,
    replicas: usize,
    storage: Storage,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let bucket = format!("natsplan-obj-{}", env.run_id);
    let _ = storage;
    let stream = format!("OBJ_{bucket}");
    let created = match env.owns_assets() {
        true => create_assets(env).await,
        false => Ok(()),
    };
    let mut res = match created {
        Ok(()) => match super::leader::place(env, &stream, clients).await {
            Ok(placed) => obj_run(env, op, clients, &bucket).await.map(|r| (r, placed)),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    if let Ok((r, placed)) = &mut res {
        super::leader::record(env, &stream, placed.take(), r).await;
    }
    let left = if env.owns_assets() && !spec.keep {
        delete_assets(env).await
    } else {
        None
    };
    let (mut r, _) = with_left(res, left, |(r, _)| r)?;
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("bucket".into(), bucket);
    Ok(r)
}

pub(super) async fn obj_run(
    env: &Arc<Env>,
    op: ObjOp,
    clients: usize,
    bucket: &str,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let data = Bytes::from(vec![0x5au8; spec.size as usize]);
    let per = env.per_worker(clients);
    let mut stores = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "obj").await?;
        let octx = js_context(c.clone(), env, PUT_INFLIGHT);
        let s = retry("open object store", spec.timeout, || octx.get_object_store(bucket)).await?;
        if op == ObjOp::Put {
            stream_answers_request(&c, &format!("$O.{bucket}.C.natsplan-probe"), probe_timeout(spec)).await?;
        }
        stores.push((c, s, octx));
    }
    let progress = progress_task(env, spec.msgs, "objects");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    let mut offset = 0u64;
    for (i, (c, store, octx)) in stores.into_iter().enumerate() {
        // On agents the first object of each worker is its place in the whole run.
        let first = env
            .share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.first)
            .unwrap_or(offset);
        let (env, data, n) = (env.clone(), data.clone(), per[i]);
        let bucket = bucket.to_string();
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut d = Drive::ops(n, None);
            d.first = first;
            // An object is many chunks: no bound but the client's own per-chunk timeouts.
            d.give_up_after = u64::MAX;
            let stream = match op {
                ObjOp::Get => octx.get_stream(format!("OBJ_{bucket}")).await.ok(),
                ObjOp::Put => None,
            };
            let put = Put {
                ctx: &octx,
                store: &store,
                bucket: &bucket,
                run: &env.run_id,
                stream,
            };
            let t = drive(&env, d, |k| one_object(&put, op, k.j, &data)).await;
            let id = format!("{}{}", if op == ObjOp::Put { "P" } else { "S" }, i + 1);
            t.into_out(&env, id, data.len() as u64, proto(&c))
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "object task"))?);
    }
    stop_progress(progress).await;
    let (kind, label) = match op {
        ObjOp::Put => ("obj-put", "JetStream object putter"),
        ObjOp::Get => ("obj-get", "JetStream object getter"),
    };
    let mut r = blank_result(env, kind, label, params(env, &[("clients", clients.to_string())]));
    r.ops = true;
    let mut hists = Vec::new();
    absorb(env, &mut r, outs, op == ObjOp::Get, &mut hists);
    r.latency_us = env.summary(&hists);
    finish(env, &mut r);
    if r.published() + r.received() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no object operation succeeded: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

/// What an object put needs: the context it publishes on (with room for a whole object's acks in
/// flight), the store (for the name lookup both official clients do first), the bucket and the run id
/// (the chunks' unique subject token).
pub(super) struct Put<'a> {
    pub(super) ctx: &'a jetstream::Context,
    pub(super) store: &'a jetstream::object_store::ObjectStore,
    pub(super) bucket: &'a str,
    pub(super) run: &'a str,
    /// The store's stream, for gets.
    pub(super) stream: Option<jetstream::stream::Stream>,
}

/// Get object `name` as nats.go does (see the module doc) and check its size and digest against the
/// info; `stream` is the store's stream (`OBJ_<bucket>`).
async fn get_object(p: &Put<'_>, stream: &jetstream::stream::Stream, name: &str, size: usize) -> Result<(), Fail> {
    let info = p.store.info(name).await.map_err(Fail::refused)?;
    if info.deleted || info.size != size {
        return Err(Fail::Refused(format!(
            "object {name}: {} bytes stored{}, expected {size}",
            info.size,
            if info.deleted { " (deleted)" } else { "" }
        )));
    }
    let cfg = jetstream::consumer::push::OrderedConfig {
        deliver_subject: p.ctx.client().new_inbox(),
        filter_subject: format!("$O.{}.C.{}", p.bucket, info.nuid),
        ..Default::default()
    };
    let consumer = stream.create_consumer(cfg).await.map_err(Fail::refused)?;
    let consumer_name = consumer.cached_info().name.clone();
    let read = async {
        let mut msgs = consumer.messages().await.map_err(Fail::refused)?;
        let (mut sha, mut got, mut chunks) = (sha2::Sha256::new(), 0usize, 0usize);
        while chunks < info.chunks {
            match futures::StreamExt::next(&mut msgs).await {
                Some(Ok(m)) => {
                    sha.update(&m.payload);
                    got += m.payload.len();
                    chunks += 1;
                }
                Some(Err(e)) => return Err(Fail::refused(e)),
                None => return Err(Fail::Unanswered(format!("object {name}: chunks stopped coming"))),
            }
        }
        use base64::Engine;
        let digest = format!(
            "SHA-256={}",
            base64::engine::general_purpose::URL_SAFE.encode(sha.finalize())
        );
        if got != size || info.digest.as_deref().is_some_and(|d| d != digest) {
            return Err(Fail::Refused(format!(
                "object {name}: read {got} bytes (digest {digest}), expected {size} ({:?})",
                info.digest
            )));
        }
        Ok(())
    };
    let res = read.await;
    // The consumer goes with the read, as nats.go's Unsubscribe deletes it.
    let _ = stream.delete_consumer(&consumer_name).await;
    res
}

/// Put object `o{j}`, or get it and check its size.
async fn one_object(p: &Put<'_>, op: ObjOp, j: u64, data: &Bytes) -> Result<(), Fail> {
    match op {
        ObjOp::Put => put_object(p, &format!("o{j}"), &nuid(p.run, j), data).await,
        ObjOp::Get => {
            let stream = p
                .stream
                .as_ref()
                .ok_or_else(|| Fail::Refused(format!("cannot open the stream OBJ_{}", p.bucket)))?;
            get_object(p, stream, &format!("o{j}"), data.len()).await
        }
    }
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
