//! JetStream KV puts and gets (gets read keys `k0..` put before the clock starts, `assets::create_assets`).
//! Synchronous puts go through async-nats's KV API, one at a time per client; asynchronous puts keep
//! `--batch` in flight per client through the JetStream publishers (`js::js_run`, the raw path where it
//! can), to the bucket's key subjects, as async-nats's `put` publishes them.

use super::client::OpClient;
use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, jetstream::*};
use super::{BenchError, PublishMode, Storage, Subjects};
use anyhow::anyhow;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;

/// What a KV run does: puts (synchronous, or `window` in flight per client) or gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KvRun {
    Put { publish: PublishMode, window: usize },
    Get,
}

pub(super) async fn kv(
    env: &Arc<Env>,
    clients: usize,
    replicas: usize,
    storage: Storage,
    what: KvRun,
) -> Result<BenchResult, BenchError> {
    // Created by `create_assets` from the spec (here or, on agents, by the coordinator).
    let _ = storage;
    let bucket = format!("natsplan-kv-{}", env.run_id);
    let stream = format!("KV_{bucket}");
    let mut r = match what {
        KvRun::Put {
            publish: PublishMode::Async,
            window,
        } => on_own_stream(env, &stream, clients, || kv_async(env, clients, &bucket, window)).await?,
        KvRun::Put { .. } => on_own_stream(env, &stream, clients, || kv_run(env, clients, &bucket, false)).await?,
        KvRun::Get => on_own_stream(env, &stream, clients, || kv_run(env, clients, &bucket, true)).await?,
    };
    r.params.insert("replicas".into(), replicas.to_string());
    r.params.insert("bucket".into(), bucket);
    Ok(r)
}

/// Asynchronous KV puts: each client keeps `window` puts in flight, message n of this host's clients
/// putting key `c<first worker>.<n>` (`$KV.<bucket>.c<w>.<n>`, the subject async-nats's `put` publishes a
/// key to): every put a new key, as the synchronous putters' `c<worker>.k<j>`, and none shared with
/// another agent's clients. The result is a KV putter's (`kind: kv`, operations per second).
async fn kv_async(env: &Arc<Env>, clients: usize, bucket: &str, window: usize) -> Result<BenchResult, BenchError> {
    let base = format!("$KV.{bucket}.c{}", env.worker(0));
    // No maximum: keys are numbered 0, 1, ... over the run's messages, never reused.
    let keys = Subjects {
        subject: None,
        multi: Some(0),
    };
    let mut r = super::js::js_run(env, clients, &base, &keys, PublishMode::Async, window, Vec::new()).await?;
    r.kind = "kv".into();
    r.label = "JetStream KV asynchronous putter".into();
    r.ops = true;
    r.params.remove("pubs");
    r.params.insert("clients".into(), clients.to_string());
    r.params.insert("publish".into(), "async".into());
    r.params.insert("window".into(), window.to_string());
    Ok(r)
}

async fn kv_run(env: &Arc<Env>, clients: usize, bucket: &str, get: bool) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let payload = Bytes::from(vec![0u8; spec.size as usize]);
    let mut conns = Vec::new();
    for i in 0..clients {
        let c = env.connect(env.worker(i), "kv").await?;
        let kctx = js_context(c.clone(), env, 1);
        let store = retry("open KV bucket", spec.timeout, || kctx.get_key_value(bucket)).await?;
        if !get {
            stream_answers_request(&c, &format!("$KV.{bucket}.natsplan-probe"), probe_timeout(spec)).await?;
        }
        conns.push(KvClient {
            client: c,
            store,
            payload: payload.clone(),
            get,
            // Keys carry the global worker index: agents sharing a bucket never write each other's keys.
            worker: env.worker(i),
        });
    }
    kv_workers(env, conns, get).await
}

/// A KV putter or getter on async-nats: puts write `c{worker}.k{j}`, gets read `k{j}` (put before the
/// clock starts) and check its size.
struct KvClient {
    client: async_nats::Client,
    store: async_nats::jetstream::kv::Store,
    payload: Bytes,
    get: bool,
    worker: usize,
}

impl OpClient for KvClient {
    async fn op(&self, j: u64) -> Result<(), Fail> {
        if !self.get {
            let key = format!("c{}.k{j}", self.worker);
            return self
                .store
                .put(key, self.payload.clone())
                .await
                .map(|_| ())
                .map_err(Fail::refused);
        }
        match self.store.get(format!("k{j}")).await {
            Ok(Some(v)) if v.len() == self.payload.len() => Ok(()),
            Ok(Some(v)) => Err(Fail::Refused(format!(
                "key k{j}: {} bytes, expected {}",
                v.len(),
                self.payload.len()
            ))),
            Ok(None) => Err(Fail::Refused(format!("key k{j}: no value"))),
            Err(e) => Err(Fail::refused(e)),
        }
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.client)
    }
}

/// The KV run on any client (`OpClient`): the clock and pacing, every worker's operations, the
/// accounting and the result. Written once for the real client and the mock.
pub(super) async fn kv_workers<C: OpClient>(
    env: &Arc<Env>,
    conns: Vec<C>,
    get: bool,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let clients = conns.len();
    let per = env.per_worker(clients);
    let size = spec.size;
    let progress = progress_task(env, spec.msgs, if get { "gets" } else { "puts" });
    let mut offset = 0u64;
    let start = env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, c) in conns.into_iter().enumerate() {
        let (env, n) = (env.clone(), per[i]);
        let rate = env.worker_rate(clients);
        // Gets read the keys of this worker's share of the run (its global first item on agents).
        let first = env
            .share
            .as_ref()
            .and_then(|s| s.workers.get(i))
            .map(|w| w.first)
            .unwrap_or(offset);
        offset += n;
        let i = env.worker(i);
        tasks.push(tokio::spawn(async move {
            let pacer = rate.map(|r| Pacer::new(start, r, env.spec.backlog_cutoff));
            let mut d = Drive::ops(n, pacer);
            // A put's (or get's) wait is bounded like its ack (async-nats's own timeout is the same).
            d.bound = Some(env.spec.timeout + Duration::from_millis(500));
            if get {
                d.first = first;
            }
            let t = drive(&env, d, |k| c.op(k.j)).await;
            // Getters are the subscribing side, as nats bench's KV getter (`S` in its CSV).
            let id = format!("{}{}", if get { "S" } else { "P" }, i + 1);
            t.into_out(&env, id, size, c.proto())
        }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "KV task"))?);
    }
    stop_progress(progress).await;
    kv_result(env, clients, get, outs)
}

/// The KV run's result from its workers' outputs.
fn kv_result(env: &Env, clients: usize, get: bool, outs: Vec<TaskOut>) -> Result<BenchResult, BenchError> {
    let (kind, label) = if get {
        ("kv-get", "JetStream KV getter")
    } else {
        ("kv", "JetStream KV putter")
    };
    let mut r = blank_result(env, kind, label, params(env, &[("clients", clients.to_string())]));
    r.ops = true;
    let mut hists = Vec::new();
    let (behind, lag) = absorb(env, &mut r, outs, get, &mut hists);
    r.latency_us = env.summary(&hists);
    r.rate = rate_outcome(env, &r, behind, lag);
    if behind {
        r.warnings.push("the requested rate was not sustained".into());
    }
    finish(env, &mut r);
    if r.published() + r.received() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no KV {} succeeded: {}",
            if get { "get" } else { "put" },
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}
