//! JetStream direct gets by sequence (natscli's `nats bench js get sync`): each client reads its share of
//! the messages of a stream the run fills before its clock starts (`assets::create_assets`), one direct get
//! at a time, so any current replica may answer (`allow_direct`).

use super::result::BenchResult;
use super::BenchError;
use super::{assets::*, env::*, exec::*, jetstream::*};
use anyhow::anyhow;
use std::sync::Arc;
use std::time::Duration;

pub(super) async fn js_get(env: &Arc<Env>, clients: usize) -> Result<BenchResult, BenchError> {
    let stream = format!("natsplan-js-{}", env.run_id);
    let mut r = on_own_stream(env, &stream, clients, || get_run(env, clients, &stream)).await?;
    r.params.insert("stream".into(), stream);
    if let super::Workload::JsGet { replicas, .. } = env.spec.workload {
        r.params.insert("replicas".into(), replicas.to_string());
    }
    Ok(r)
}

async fn get_run(env: &Arc<Env>, clients: usize, name: &str) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let per = env.per_worker(clients);
    let size = spec.size as usize;
    let mut conns = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "get").await?;
        let ctx = js_context(c.clone(), env, 1);
        let stream = retry("open stream", spec.timeout, || ctx.get_stream(name)).await?;
        conns.push((c, stream));
    }
    let progress = progress_task(env, spec.msgs, "gets");
    let mut offset = 0u64;
    env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, (c, stream)) in conns.into_iter().enumerate() {
        let (env, n) = (env.clone(), per[i]);
        // Each client reads its own stretch of sequences (1-based), as natscli splits the messages.
        let first = offset;
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut d = Drive::ops(n, None);
            // A get's wait is bounded like an ack (async-nats's request timeout is the same).
            d.bound = Some(env.spec.timeout + Duration::from_millis(500));
            d.first = first;
            let t = drive(&env, d, |k| {
                let stream = &stream;
                async move {
                    match stream.direct_get(k.j + 1).await {
                        Ok(m) if m.payload.len() == size => Ok(()),
                        Ok(m) => Err(Fail::Refused(format!(
                            "sequence {}: {} bytes, expected {size}",
                            k.j + 1,
                            m.payload.len()
                        ))),
                        Err(e) => Err(Fail::refused(e)),
                    }
                }
            })
            .await;
            // Getters are the reading side (`S` in nats bench's CSV), as KV getters are.
            t.into_out(&env, format!("S{}", i + 1), size as u64, proto(&c))
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "get task"))?);
    }
    stop_progress(progress).await;
    let mut r = blank_result(
        env,
        "js-get",
        "JetStream direct get",
        params(env, &[("clients", clients.to_string())]),
    );
    r.ops = true;
    let mut hists = Vec::new();
    absorb(env, &mut r, outs, true, &mut hists);
    r.latency_us = env.summary(&hists);
    finish(env, &mut r);
    if r.received() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no direct get succeeded: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}
