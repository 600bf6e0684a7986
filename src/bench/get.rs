//! JetStream direct gets by sequence (natscli's `nats bench js get sync`): each client reads its share of
//! the messages of a stream the run fills before its clock starts (`assets::create_assets`), one direct get
//! at a time, so any current replica may answer (`allow_direct`).

use super::client::OpClient;
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
    if let super::BenchWorkload::JsGet { replicas, .. } = env.spec.workload {
        r.params.insert("replicas".into(), replicas.to_string());
    }
    Ok(r)
}

async fn get_run(env: &Arc<Env>, clients: usize, name: &str) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let mut getters = Vec::new();
    for i in 0..clients {
        let client = env.connect(env.worker(i), "get").await?;
        let ctx = js_context(client.clone(), env, 1);
        let stream = retry("open stream", spec.timeout, || ctx.get_stream(name)).await?;
        getters.push(DirectGetter {
            client,
            stream,
            size: spec.size as usize,
        });
    }
    get_workers(env, getters).await
}

/// A direct getter on async-nats: its client and the stream it reads; a get of the wrong size is refused.
struct DirectGetter {
    client: async_nats::Client,
    stream: async_nats::jetstream::stream::Stream,
    size: usize,
}

impl OpClient for DirectGetter {
    async fn op(&self, j: u64) -> Result<(), Fail> {
        // Sequences are 1-based.
        match self.stream.direct_get(j + 1).await {
            Ok(m) if m.payload.len() == self.size => Ok(()),
            Ok(m) => Err(Fail::Refused(format!(
                "sequence {}: {} bytes, expected {}",
                j + 1,
                m.payload.len(),
                self.size
            ))),
            Err(e) => Err(Fail::refused(e)),
        }
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.client)
    }
}

/// The direct-get run on any client (`OpClient`): the clock, every getter's stretch of sequences, the
/// accounting and the result. Written once for the real client and the mock.
pub(super) async fn get_workers<G: OpClient>(env: &Arc<Env>, getters: Vec<G>) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let clients = getters.len();
    let per = env.per_worker(clients);
    let size = spec.size;
    let progress = progress_task(env, spec.msgs, "gets");
    let mut offset = 0u64;
    env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, g) in getters.into_iter().enumerate() {
        let (env, n) = (env.clone(), per[i]);
        // Each client reads its own stretch of sequences, as natscli splits the messages.
        let first = offset;
        offset += n;
        tasks.push(tokio::spawn(async move {
            let mut d = Drive::ops(n, None);
            // A get's wait is bounded like an ack (async-nats's request timeout is the same).
            d.bound = Some(env.spec.timeout + Duration::from_millis(500));
            d.first = first;
            let t = drive(&env, d, |k| g.op(k.j)).await;
            // Getters are the reading side (`S` in nats bench's CSV), as KV getters are.
            t.into_out(&env, format!("S{}", i + 1), size, g.proto())
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
