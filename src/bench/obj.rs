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

use super::client::OpClient;
use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, jetstream::*};
use super::{BenchError, ObjOp, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
use sha2::Digest;
use std::sync::Arc;

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
    let mut stores = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "obj").await?;
        let octx = js_context(c.clone(), env, PUT_INFLIGHT);
        let s = retry("open object store", spec.timeout, || octx.get_object_store(bucket)).await?;
        if op == ObjOp::Put {
            stream_answers_request(&c, &format!("$O.{bucket}.C.natsplan-probe"), probe_timeout(spec)).await?;
        }
        stores.push(ObjClient {
            client: c,
            ctx: octx,
            store: s,
            bucket: bucket.to_string(),
            run: env.run_id.clone(),
            stream: None,
            op,
            data: data.clone(),
        });
    }
    obj_workers(env, op, stores).await
}

/// An object putter or getter on async-nats: puts write `o{j}` as nats.go does, gets read it back and
/// check its size and digest (see the module doc).
struct ObjClient {
    client: async_nats::Client,
    ctx: jetstream::Context,
    store: jetstream::object_store::ObjectStore,
    bucket: String,
    run: String,
    /// The store's stream, opened by `ready` for gets.
    stream: Option<jetstream::stream::Stream>,
    op: ObjOp,
    data: Bytes,
}

impl OpClient for ObjClient {
    async fn ready(&mut self) {
        if self.op == ObjOp::Get {
            self.stream = self.ctx.get_stream(format!("OBJ_{}", self.bucket)).await.ok();
        }
    }
    async fn op(&self, j: u64) -> Result<(), Fail> {
        let put = Put {
            ctx: &self.ctx,
            store: &self.store,
            bucket: &self.bucket,
            run: &self.run,
            stream: self.stream.as_ref(),
        };
        one_object(&put, self.op, j, &self.data).await
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.client)
    }
}

/// The object run on any client (`OpClient`): the clock, every worker's objects (global numbers on
/// agents), the accounting and the result. Written once for the real client and the mock.
pub(super) async fn obj_workers<C: OpClient>(
    env: &Arc<Env>,
    op: ObjOp,
    conns: Vec<C>,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let clients = conns.len();
    let per = env.per_worker(clients);
    let size = spec.size;
    let progress = progress_task(env, spec.msgs, "objects");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    let mut offset = 0u64;
    for (i, mut c) in conns.into_iter().enumerate() {
        // On agents the first object of each worker is its place in the whole run.
        let first = env
            .share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.first)
            .unwrap_or(offset);
        let (env, n) = (env.clone(), per[i]);
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut d = Drive::ops(n, None);
            d.first = first;
            // An object is many chunks: no bound but the client's own per-chunk timeouts.
            d.give_up_after = u64::MAX;
            c.ready().await;
            let t = drive(&env, d, |k| c.op(k.j)).await;
            let id = format!("{}{}", if op == ObjOp::Put { "P" } else { "S" }, i + 1);
            t.into_out(&env, id, size, c.proto())
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
