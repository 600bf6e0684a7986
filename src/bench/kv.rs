//! JetStream KV puts.

use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, js::*};
use super::{BenchError, Storage};
use anyhow::anyhow;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

pub(super) async fn kv(
    env: &Arc<Env>,
    clients: usize,
    replicas: usize,
    storage: Storage,
) -> Result<BenchResult, BenchError> {
    // Created by `create_assets` from the spec (here or, on agents, by the coordinator).
    let _ = storage;
    let bucket = format!("natsplan-kv-{}", env.run_id);
    if env.owns_assets() {
        create_assets(env).await?;
    }
    let result = kv_run(env, clients, &bucket).await;
    let left = if env.owns_assets() && !env.spec.keep {
        delete_assets(env).await
    } else {
        None
    };
    let mut r = result?;
    r.warnings.extend(left);
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("bucket".into(), bucket);
    Ok(r)
}

async fn kv_run(env: &Arc<Env>, clients: usize, bucket: &str) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let per = env.per_worker(clients);
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    let mut conns = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "kv").await?;
        let kctx = js_context(c.clone(), env, 1);
        let store = retry("open KV bucket", spec.timeout, || kctx.get_key_value(bucket)).await?;
        stream_answers_request(&c, &format!("$KV.{bucket}.natsplan-probe"), probe_timeout(spec)).await?;
        conns.push((c, store));
    }
    let progress = progress_task(env, spec.msgs, "puts");
    let start = env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, (c, store)) in conns.into_iter().enumerate() {
        let (env, payload, n) = (env.clone(), payload.clone(), per[i]);
        let rate = env.worker_rate(clients);
        // Keys carry the global worker index: agents sharing a bucket never write each other's keys.
        let i = env.worker(i);
        tasks.push(tokio::spawn(async move {
            let pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
            let mut d = Drive::ops(n, pacer);
            // A put's wait is bounded like its ack (async-nats's own timeout is the same).
            d.bound = Some(env.spec.timeout + Duration::from_millis(500));
            let t = drive(&env, d, |k| {
                let (store, payload) = (&store, payload.clone());
                async move {
                    store
                        .put(format!("c{i}.k{}", k.j), payload)
                        .await
                        .map(|_| ())
                        .map_err(Fail::refused)
                }
            })
            .await;
            t.into_out(&env, format!("P{}", i + 1), payload.len() as u64, proto(&c))
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "KV task"))?);
    }
    stop_progress(progress).await;
    let mut r = blank_result(
        env,
        "kv",
        "JetStream KV putter",
        params(env, &[("clients", clients.to_string())]),
    );
    r.ops = true;
    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, &mut r, outs, false, &mut hists);
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, &r, behind, lag);
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    finish(env, &mut r);
    if r.published() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no KV put succeeded: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}
