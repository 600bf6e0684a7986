//! Object store puts and gets of whole objects.

use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, js::*};
use super::{BenchError, ObjOp, Storage};
use anyhow::anyhow;
use async_nats::jetstream;
use bytes::Bytes;
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
    let res = if env.owns_assets() {
        match create_assets(env).await {
            Ok(()) => obj_run(env, op, clients, &bucket).await,
            Err(e) => Err(e),
        }
    } else {
        obj_run(env, op, clients, &bucket).await
    };
    let left = if env.owns_assets() && !spec.keep {
        delete_assets(env).await
    } else {
        None
    };
    let mut r = res?;
    r.warnings.extend(left);
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
        let octx = js_context(c.clone(), env, 1);
        let s = retry("open object store", spec.timeout, || octx.get_object_store(bucket)).await?;
        if op == ObjOp::Put {
            stream_answers_request(&c, &format!("$O.{bucket}.C.natsplan-probe"), probe_timeout(spec)).await?;
        }
        stores.push((c, s));
    }
    let progress = progress_task(env, spec.msgs, "objects");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    let mut offset = 0u64;
    for (i, (c, store)) in stores.into_iter().enumerate() {
        // On agents the first object of each worker is its place in the whole run.
        let first = env
            .share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.first)
            .unwrap_or(offset);
        let (env, data, n) = (env.clone(), data.clone(), per[i]);
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut d = Drive::ops(n, None);
            d.first = first;
            // An object is many chunks: no bound but the client's own per-chunk timeouts.
            d.give_up_after = u64::MAX;
            let t = drive(&env, d, |k| one_object(&store, op, k.j, &data)).await;
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

/// Put object `o{j}`, or get it and check its size.
async fn one_object(store: &jetstream::object_store::ObjectStore, op: ObjOp, j: u64, data: &Bytes) -> Result<(), Fail> {
    match op {
        ObjOp::Put => {
            let mut rd: &[u8] = data;
            store
                .put(format!("o{j}").as_str(), &mut rd)
                .await
                .map(|_| ())
                .map_err(Fail::refused)
        }
        ObjOp::Get => {
            let mut o = store.get(format!("o{j}")).await.map_err(Fail::refused)?;
            let mut buf = Vec::with_capacity(data.len());
            match tokio::io::AsyncReadExt::read_to_end(&mut o, &mut buf).await {
                Ok(_) if buf.len() == data.len() => Ok(()),
                Ok(_) => Err(Fail::Refused(format!(
                    "object o{j}: read {} bytes, expected {}",
                    buf.len(),
                    data.len()
                ))),
                Err(e) => Err(Fail::refused(e)),
            }
        }
    }
}
