//! JetStream consumer benchmarks, as natscli's `nats bench js fetch|consume|ordered`: clients read
//! `msgs` messages from a stream, each acknowledging what it reads (fetch, consume) or not (ordered).
//!
//! Each client has its own consumer starting at its share's first message (stream sequence `first +
//! share offset`), so clients split the messages without a shared durable handing a client's buffered
//! read-ahead to nobody until its ack wait runs out. The stream is a `natsplan-js-*` one the run fills
//! before its clock starts (deleted after), or an existing one (`Existing`: only the run's consumers are
//! created and deleted). Results are subscriber samples (`S0..` in the CSV), as nats bench's.

use super::client::ConsumerClient;
use super::leader::{consumer_leaders, leader_of, place_reader, record_readers, ConsumerPlacer, ReaderSeat};
use super::result::BenchResult;
use super::{assets::*, env::*, exec::*, jetstream::*};
use super::{ordered, BenchError, ConsumeMode, Existing, LeaderPlacement};
use anyhow::anyhow;
use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Name of global client `i`'s consumer.
fn consumer_name(env: &Env, i: usize) -> String {
    format!("natsplan-{}-c{i}", env.run_id)
}

pub(super) async fn consume(
    env: &Arc<Env>,
    mode: ConsumeMode,
    clients: usize,
    batch: usize,
    target: &Option<Existing>,
) -> Result<BenchResult, BenchError> {
    let (stream, owned) = stream_name(env, target);
    if owned && env.owns_assets() {
        create_assets(env).await?;
    }
    let res = match mode {
        ConsumeMode::OrderedPush => push_run(env, clients, &stream, target).await,
        _ => consume_run(env, mode, clients, batch, &stream, target).await,
    };
    let (mut left, mut consumers_left) = (None, None);
    if !env.spec.keep {
        if owned && env.owns_assets() {
            left = delete_assets(env).await;
        } else {
            consumers_left = delete_consumers(env, &stream, clients).await;
        }
    }
    let mut r = with_left(res, left, |r| r)?;
    r.warnings.extend(consumers_left);
    r.params.insert("stream".into(), stream);
    if mode != ConsumeMode::OrderedPush {
        r.params.insert("batch".into(), batch.to_string());
    }
    if let Some(s) = target.as_ref().and_then(|t| t.subject.clone()) {
        r.params.insert("filter".into(), s);
    }
    Ok(r)
}

/// Remove the consumers the run made on an existing stream.
async fn delete_consumers(env: &Env, stream: &str, clients: usize) -> Option<String> {
    let admin = env.connect(0, "admin").await.ok()?;
    let ctx = js_context(admin, env, 1);
    let s = ctx.get_stream(stream).await.ok()?;
    let mut left = Vec::new();
    for i in 0..clients {
        let name = consumer_name(env, env.worker(i));
        if let Err(e) = s.delete_consumer(&name).await {
            if js_failure(&e) != JsFailure::NotFound {
                left.push(name);
            }
        }
    }
    (!left.is_empty()).then(|| {
        format!(
            "could not delete the run's consumers {} on stream {stream}; delete them by hand",
            left.join(", ")
        )
    })
}

/// What one client reads from (one per client, so the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Reader {
    Fetch {
        consumer: consumer::PullConsumer,
        batch: usize,
        left: u64,
        cur: Option<consumer::pull::Batch>,
    },
    Consume(consumer::pull::Stream),
    Ordered(consumer::pull::Ordered),
}

/// A pull consumer client on async-nats: the `ConsumerClient` adapter of fetch, consume and (pull)
/// ordered reads.
pub(super) struct PullReader {
    c: async_nats::Client,
    r: Reader,
}

impl ConsumerClient for PullReader {
    async fn next(&mut self, wait: Duration) -> Result<u64, Fail> {
        self.r.next(wait).await
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.c)
    }
}

impl Reader {
    /// The next message (acknowledged, but for ordered consumers) and its payload length.
    async fn next(&mut self, wait: Duration) -> Result<u64, Fail> {
        let m = match self {
            Reader::Fetch {
                consumer,
                batch,
                left,
                cur,
            } => loop {
                if cur.is_none() {
                    // Never ask for more than this client's share: nothing is read and left unacked.
                    let want = (*batch as u64).min((*left).max(1)) as usize;
                    let b = consumer
                        .fetch()
                        .max_messages(want)
                        .expires(wait)
                        .messages()
                        .await
                        .map_err(|e| Fail::Unanswered(format!("fetch: {e}")))?;
                    *cur = Some(b);
                }
                match cur.as_mut().expect("set above").next().await {
                    Some(Ok(m)) => {
                        *left = left.saturating_sub(1);
                        break m;
                    }
                    Some(Err(e)) => return Err(Fail::refused(e)),
                    // The batch ended (all delivered or it expired): fetch the next one.
                    None => *cur = None,
                }
            },
            Reader::Consume(s) => match s.next().await {
                Some(Ok(m)) => m,
                Some(Err(e)) => return Err(Fail::refused(e)),
                None => return Err(Fail::Unanswered("the consumer's message stream ended".into())),
            },
            Reader::Ordered(s) => {
                return match s.next().await {
                    Some(Ok(m)) => Ok(m.payload.len() as u64),
                    Some(Err(e)) => Err(Fail::refused(e)),
                    None => Err(Fail::Unanswered("the ordered consumer ended".into())),
                }
            }
        };
        let n = m.payload.len() as u64;
        m.ack().await.map_err(|e| Fail::Unanswered(format!("ack: {e}")))?;
        Ok(n)
    }
}

/// One client's consumer: how it reads, where it starts (stream sequence), how many it reads, its
/// global index (its consumer's name) and the subject filter ("" for none).
struct ReaderSpec {
    mode: ConsumeMode,
    batch: usize,
    start: u64,
    n: u64,
    gi: usize,
    filter: String,
}

/// Client `r.gi`'s reader: its consumer created through `c`, elected, and for pull consumers with acks
/// placed by `--consumer-leader` (`leader::place_reader`, which may hand back another connection). The
/// seat says where its consumer's leader and its server are (None for ordered consumers).
async fn reader(
    env: &Env,
    c: async_nats::Client,
    stream: &str,
    r: ReaderSpec,
    placer: &ConsumerPlacer,
) -> Result<(PullReader, Option<ReaderSeat>), BenchError> {
    let ctx = js_context(c.clone(), env, 1);
    let ReaderSpec {
        mode,
        batch,
        start,
        n,
        gi,
        filter,
    } = r;
    let s = retry("open stream", env.spec.timeout, || ctx.get_stream(stream)).await?;
    let deliver_policy = consumer::DeliverPolicy::ByStartSequence { start_sequence: start };
    let name = consumer_name(env, gi);
    if mode == ConsumeMode::Ordered {
        let cfg = consumer::pull::OrderedConfig {
            name: Some(name),
            filter_subject: filter,
            deliver_policy,
            ..Default::default()
        };
        let oc = retry("create ordered consumer", env.spec.timeout, || {
            s.create_consumer(cfg.clone())
        })
        .await?;
        let m = oc.messages().await.map_err(|e| cannot(e, "ordered consumer"))?;
        return Ok((
            PullReader {
                c,
                r: Reader::Ordered(m),
            },
            None,
        ));
    }
    let cfg = consumer::pull::Config {
        name: Some(name),
        filter_subject: filter,
        deliver_policy,
        ack_policy: consumer::AckPolicy::Explicit,
        max_ack_pending: (2 * batch).max(1000) as i64,
        // Removed by the server if the run dies before deleting it.
        inactive_threshold: Duration::from_secs(60),
        ..Default::default()
    };
    let mut pc: consumer::PullConsumer =
        retry("create consumer", env.spec.timeout, || s.create_consumer(cfg.clone())).await?;
    await_leader(env, &mut pc).await?;
    let (c, pc, seat) = place_reader(env, placer, gi, c, pc, stream).await?;
    let r = match mode {
        ConsumeMode::Fetch => Reader::Fetch {
            consumer: pc,
            batch,
            left: n,
            cur: None,
        },
        _ => {
            let st = pc
                .stream()
                .max_messages_per_batch(batch)
                .messages()
                .await
                .map_err(|e| cannot(e, "consume"))?;
            Reader::Consume(st)
        }
    };
    Ok((PullReader { c, r }, Some(seat)))
}

/// Wait until a replicated consumer has elected its leader: a pull request sent before that gets "no
/// responders" (an R3 consume run on the lab failed so, reading nothing). An R1 consumer has no RAFT
/// group and answers at once.
async fn await_leader(env: &Env, c: &mut consumer::PullConsumer) -> Result<(), BenchError> {
    let t0 = std::time::Instant::now();
    loop {
        let info = c.info().await.map_err(|e| cannot(e, "consumer info"))?;
        if info.cluster.as_ref().is_none_or(|k| k.leader.is_some()) {
            return Ok(());
        }
        if t0.elapsed() >= env.spec.timeout {
            return Err(BenchError::CannotRun(anyhow!(
                "consumer {} has no leader after {:?}",
                info.name.clone(),
                env.spec.timeout
            )));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `bench js --consumers N`'s readers: `n` pull consumers on the run's own `stream` (empty: the run's
/// first message is sequence 1), each reading every one of the run's messages as the publishers write
/// them, fetching `READ_BATCH` at a time and acknowledging each, as `bench consumer fetch` reads. Client
/// `i` connects as worker `i` (the run's `--leader` route); its consumer, named without a durable name on
/// a limits stream, is R1 (nats-server consumer.go `ConsumerConfig::replicas`, main 1787eee), on a stream
/// peer the cluster picks (not placed: `--consumer-leader` takes consumer runs only). A site's durable
/// consumers replicate their ack state too; these readers do not measure that.
pub(super) async fn concurrent_readers(env: &Env, stream: &str, n: usize) -> Result<Vec<PullReader>, BenchError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let placer = ConsumerPlacer::new(env).await?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let c = env.connect(i, "sub").await?;
        let spec = ReaderSpec {
            mode: ConsumeMode::Fetch,
            batch: READ_BATCH,
            start: 1,
            n: env.spec.msgs,
            gi: i,
            filter: String::new(),
        };
        out.push(reader(env, c, stream, spec, &placer).await?.0);
    }
    Ok(out)
}

/// Messages per fetch of `bench js --consumers`'s readers (`bench consumer fetch`'s default `--batch`).
const READ_BATCH: usize = 500;

/// The stream's first sequence, checked to hold the messages the run reads (all agents' together).
async fn first_sequence(env: &Env, ctx: &jetstream::Context, stream: &str) -> Result<u64, BenchError> {
    let s = open_existing(env, ctx, stream).await?;
    let info = s.get_info().await.map_err(|e| cannot(e, "stream info"))?;
    let count = info.state.messages;
    let total = env.share.as_ref().map(|s| s.total_msgs).unwrap_or(env.spec.msgs);
    if count < total {
        return Err(BenchError::BadInput(anyhow!(
            "stream {stream} holds {count} messages but the run reads {total}: lower --msgs to {count} or \
             publish more first (natsplan bench js --stream {stream})"
        )));
    }
    Ok(info.state.first_sequence.max(1))
}

/// Where local client `i` starts in the run's messages (its place among all agents' clients), given
/// the local clients before it read `offset`.
fn share_first(env: &Env, i: usize, offset: u64) -> u64 {
    env.share
        .as_ref()
        .and_then(|s| s.workers.get(i))
        .map(|w| w.first)
        .unwrap_or(offset)
}

async fn consume_run(
    env: &Arc<Env>,
    mode: ConsumeMode,
    clients: usize,
    batch: usize,
    stream: &str,
    target: &Option<Existing>,
) -> Result<BenchResult, BenchError> {
    let spec = &env.spec;
    let per = env.per_worker(clients);
    let filter = target.as_ref().and_then(|t| t.subject.clone()).unwrap_or_default();
    let placer = ConsumerPlacer::new(env).await?;
    let (mut readers, mut seats) = (Vec::new(), Vec::new());
    let mut offset = 0u64;
    let mut base = 1;
    for (i, &n) in per.iter().enumerate().take(clients) {
        let c = env.connect(env.worker(i), "sub").await?;
        if i == 0 {
            base = first_sequence(env, &js_context(c.clone(), env, 1), stream).await?;
        }
        let first = share_first(env, i, offset);
        offset += n;
        let spec = ReaderSpec {
            mode,
            batch,
            start: base + first,
            n,
            gi: env.worker(i),
            filter: filter.clone(),
        };
        let (r, seat) = reader(env, c, stream, spec, &placer).await?;
        readers.push(r);
        seats.extend(seat);
    }
    let progress = progress_task(env, spec.msgs, "read");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    for (i, r) in readers.into_iter().enumerate() {
        let (env, n) = (env.clone(), per[i]);
        tasks.push(tokio::spawn(async move { read_share(&env, env.worker(i), r, n).await }));
    }
    let mut outs = Vec::new();
    for t in tasks {
        outs.push(t.await.map_err(|e| cannot(e, "consumer task"))?);
    }
    stop_progress(progress).await;
    let mut r = consumer_result(env, mode, clients, outs)?;
    record_placement(env, stream, &placer, &seats, &mut r).await;
    Ok(r)
}

/// Record where the readers' consumers led (`leader::record_readers`): the stream's leader read once, and
/// for `--consumer-leader local|remote` each consumer's leader again after the run.
async fn record_placement(env: &Env, stream: &str, placer: &ConsumerPlacer, seats: &[ReaderSeat], r: &mut BenchResult) {
    if seats.is_empty() || env.share.is_some() {
        return;
    }
    let t = env.spec.timeout;
    let stream_leader = tokio::time::timeout(t, leader_of(env, stream, false))
        .await
        .ok()
        .and_then(Result::ok)
        .flatten();
    let after = match placer.want {
        LeaderPlacement::Any => Vec::new(),
        _ => {
            let names: Vec<String> = (0..seats.len()).map(|i| consumer_name(env, env.worker(i))).collect();
            tokio::time::timeout(t, consumer_leaders(env, stream, &names))
                .await
                .unwrap_or_default()
        }
    };
    record_readers(placer.want, seats, stream_leader, &after, r);
}

/// One consumer client reads its share of `n` messages; `gi` is its number in the whole run. A message
/// that does not come within --timeout ends the client (the stream ran dry).
pub(super) async fn read_share<R: ConsumerClient>(env: &Env, gi: usize, mut r: R, n: u64) -> TaskOut {
    let mut d = Drive::ops(n, None);
    d.bound = Some(env.spec.timeout);
    d.stall_ends = true;
    d.record = false;
    let bytes = AtomicU64::new(0);
    let (wait, sleep) = (env.spec.timeout, env.spec.sub_sleep);
    let t = {
        // `drive` may hold more than one operation's future; one reads at a time.
        let lock = tokio::sync::Mutex::new(&mut r);
        let (lock, bytes) = (&lock, &bytes);
        drive(env, d, move |_| async move {
            let b = lock.lock().await.next(wait).await?;
            bytes.fetch_add(b, Ordering::Relaxed);
            if let Some(s) = sleep {
                tokio::time::sleep(s).await;
            }
            Ok(())
        })
        .await
    };
    let mut out = t.into_out(env, format!("S{}", gi + 1), 0, r.proto());
    out.sample.bytes = bytes.load(Ordering::Relaxed);
    out
}

/// The run's result from its clients' reports (subscriber samples, no latency).
pub(super) fn consumer_result(
    env: &Env,
    mode: ConsumeMode,
    clients: usize,
    outs: Vec<TaskOut>,
) -> Result<BenchResult, BenchError> {
    // natscli's labels (its consumers are durable; these are named and removed after the run).
    let label = match mode {
        ConsumeMode::Fetch => "JetStream durable consumer (fetch)",
        ConsumeMode::Consume => "JetStream durable consumer (callback)",
        ConsumeMode::Ordered => "JetStream ordered ephemeral consumer",
        ConsumeMode::OrderedPush => "JetStream ordered ephemeral consumer (push, legacy API)",
    };
    let kind = format!("js-{}", mode.as_str());
    let mut r = blank_result(env, &kind, label, params(env, &[("clients", clients.to_string())]));
    let mut hists = Vec::new();
    absorb(env, &mut r, outs, true, &mut hists);
    r.latency_us = None;
    finish(env, &mut r);
    if r.received() == 0 && !r.completion.interrupted {
        return Err(BenchError::CannotRun(anyhow!(
            "no message was read: {}",
            r.warnings.join("; ")
        )));
    }
    Ok(r)
}

/// A push ordered client's connection: the raw path, or async-nats (TLS, creds, nkeys).
enum PushConn {
    Raw(super::raw::RawConn),
    Nats(async_nats::Client),
}

/// `ordered --push`: every client's connection is made and the stream checked before the clock; each
/// client's consumer is created after it (see `ordered`).
async fn push_run(
    env: &Arc<Env>,
    clients: usize,
    stream: &str,
    target: &Option<Existing>,
) -> Result<BenchResult, BenchError> {
    let raw = use_raw(env, true)?;
    let filter = target.as_ref().and_then(|t| t.subject.clone()).unwrap_or_default();
    let per = env.per_worker(clients);
    let admin = env.connect(env.worker(0), "admin").await?;
    let base = first_sequence(env, &js_context(admin, env, 1), stream).await?;
    let mut conns = Vec::new();
    for i in 0..clients {
        let gi = env.worker(i);
        conns.push(match env.conn.raw_target(gi) {
            Some(t) if raw => PushConn::Raw(raw_connect(&t, &format!("natsplan-bench-sub{i}")).await?),
            _ => PushConn::Nats(env.connect(gi, "sub").await?),
        });
    }
    let progress = progress_task(env, env.spec.msgs, "read");
    env.start_clock().await?;
    let mut tasks = Vec::new();
    let mut offset = 0u64;
    for (i, c) in conns.into_iter().enumerate() {
        let k = ordered::Client {
            gi: env.worker(i),
            share: ordered::Share {
                stream: stream.to_string(),
                filter: filter.clone(),
                start: base + share_first(env, i, offset),
                n: per[i],
            },
            sleep: env.spec.sub_sleep,
        };
        offset += per[i];
        let env = env.clone();
        tasks.push(tokio::spawn(async move {
            match c {
                PushConn::Raw(c) => {
                    let p = ordered::RawPushOrdered::new(&env, c, &k);
                    ordered::read_push(&env, p, k).await
                }
                PushConn::Nats(c) => {
                    let ctx = js_context(c.clone(), &env, 1);
                    let p = ordered::NatsPushOrdered::new(c, ctx, &k);
                    ordered::read_push(&env, p, k).await
                }
            }
        }));
    }
    let (mut outs, mut resets) = (Vec::new(), 0);
    for t in tasks {
        let (o, n) = t.await.map_err(|e| cannot(e, "consumer task"))?;
        outs.push(o);
        resets += n;
    }
    stop_progress(progress).await;
    let mut r = consumer_result(env, ConsumeMode::OrderedPush, clients, outs)?;
    r.params.insert("consumer".into(), "push".into());
    r.params
        .insert("client".into(), if raw { "raw" } else { "async-nats" }.into());
    r.params.insert("consumer_resets".into(), resets.to_string());
    Ok(r)
}
