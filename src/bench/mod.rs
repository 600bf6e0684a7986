//! `natsplan bench`: one benchmark run against a live cluster, `nats bench`-style, on async-nats and, on
//! the hot paths, a minimal raw protocol client.
//!
//! Every task records latency in its own hdrhistogram; they are merged at the end (no shared lock on the
//! hot path). Everything a run creates on the server is named `natsplan-*` and deleted afterwards unless
//! `keep` is set.
//!
//! What is where, lowest first (a file imports only files above it in this list; `tests/model/layers.rs`
//! fails on an import circle inside this folder):
//!
//! - Connecting: `context` (nats CLI contexts), `conn` (flags, `NATS_URL`, contexts → `ConnSpec`), `raw`
//!   (the raw protocol connection and frame parser), `stamp` (latency stamps in payloads), `varz`,
//!   `cancel` (the run's cancel token).
//! - The run's frame: `result` (`BenchResult` and nats-bench's arithmetic), `env` (the shared `Env`:
//!   clock, counters, spec, an agent's share), `exec` (the shared client loop `drive`, pacing, task tally,
//!   `absorb`/`finish` that assemble a result), `export` (text, JSON, CSV bytes of a result: pure).
//! - The client seam: `client` — `OpClient` (what a worker's client does for a one-operation-at-a-time
//!   workload), `CorePublisher` and `CoreSubscriber` (a core publisher's and subscriber's connection),
//!   `JsPublisher` (a JetStream publisher's connection), `ConsumerClient` (a pull consumer's reads),
//!   `PushOrderedClient` (a push ordered consumer's); `pubsub_clients` and `js_clients` (the raw
//!   protocol and async-nats adapters of the core and JetStream publish ones; the pull consumers'
//!   adapter is `consume::PullReader`, the push ordered ones `ordered::RawPushOrdered` and
//!   `NatsPushOrdered`); `mock` (tests only: deterministic scripted clients behind all six;
//!   `mock_tests`, `mock_pubsub_tests`, `mock_js_tests` and `mock_consume_tests` run workloads on them
//!   without a server).
//! - JetStream: `jetstream` (contexts, retried asset requests, publish probes, opening `--stream`, and
//!   `js_failure`, which reads async-nats error kinds and codes), `leader` (`--leader` placement),
//!   `assets` (create, pre-fill — `fill`, `put_object` — and remove a run's stream, bucket or store).
//! - Workloads, one file each: `pubsub` (core pub/sub and flood: `core_run`, `publish`, `subscribe`,
//!   written once against `CorePublisher`/`CoreSubscriber`), `js` (JetStream publish: `js_pub`,
//!   written once against `JsPublisher`, and atomic batches), `ping`, `kv`, `obj`, `get` (direct
//!   gets; these four written once against `OpClient`), `consume` (pull consumers:
//!   `read_share`, written once against `ConsumerClient`; and the push ordered run) + `ordered` (the
//!   push ordered consumer: `read_push`, written once against `PushOrderedClient`, and its protocol,
//!   `OrderedState`).
//! - `workload`: validation, `run`/`run_with`/`run_share` and `dispatch`, the one `match` from a
//!   `BenchWorkload` to its file.
//!
//! Adding a workload, every place it is said (the compiler lists each `match` on `BenchWorkload` that a new
//! variant leaves out, so none is missed):
//!
//! 1. Its variant in `BenchWorkload` (this file), with its arms in `BenchWorkload::name`, `BenchWorkload::kind` (the
//!    `perf::Kind` it measures), `BenchWorkload::readers_are_workers`, `BenchWorkload::counts` and
//!    `BenchWorkload::with_counts` (its workers and subscribers, which agents split and give back) and
//!    `BenchWorkload::stores_its_msgs` (what verify's ladder counts as stored) and `BenchWorkload::existing` (the
//!    stream it works on that the run did not make, which agents refuse).
//! 2. Its file under Workloads, written against a client seam (`client`): `OpClient` when it does one
//!    operation at a time (as `get::get_workers`, `kv::kv_workers`, `obj::obj_workers` and `ping` are),
//!    the core publisher/subscriber pair when it publishes and subscribes (as `pubsub::core_run`),
//!    `JsPublisher` for pipelined JetStream publishes (`js::js_pub`), `ConsumerClient` for consumer
//!    reads (`consume::read_share`), so the mock runs it; a new kind of client is a new trait in
//!    `client` with its adapters beside the workload (as `pubsub_clients`, `js_clients`) and a mock in
//!    `mock`.
//! 3. Its arms in `workload.rs`: `dispatch` (run it), `validate` and `check_bounds` (its flags).
//! 4. What it creates and removes, in `assets` (`create_assets`, `prepare_shared`), if anything.
//! 5. Outside bench, the `match`es the compiler points to: its subcommand and flags (`commands::bench`),
//!    and, when verify or calibrate measure it, the `perf::Kind` → `BenchWorkload` mapping of
//!    `calibrate::runner::workload` and verify's ladder rows (`verify::ladder`). Agents split and merge
//!    any workload through `counts`/`with_counts` above: `agent` needs no arm of its own.

mod assets;
pub mod cancel;
mod client;
pub mod conn;
mod consume;
pub mod context;
mod env;
mod exec;
pub mod export;
mod get;
mod jetstream;
mod js;
mod js_clients;
mod kv;
mod leader;
#[cfg(test)]
mod mock;
#[cfg(test)]
mod mock_consume_tests;
#[cfg(test)]
mod mock_js_tests;
#[cfg(test)]
mod mock_pubsub_tests;
#[cfg(test)]
mod mock_tests;
mod obj;
mod ordered;
mod ping;
mod pubsub;
mod pubsub_clients;
pub mod raw;
pub mod result;
mod stamp;
pub mod varz;
mod workload;

use std::time::Duration;

pub use assets::{cleanup_shared, prepare_shared};
pub use cancel::Cancel;
pub use conn::{ConnArgs, ConnSpec};
pub use env::{Gate, Share, ShareOutput, Slot};
pub use jetstream::{js_failure, JsFailure};
pub use result::BenchResult;
pub use workload::{check, check_payload, new_run_id, run, run_share, run_with};

/// JetStream storage for streams, KV buckets and object stores the run creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum Storage {
    File,
    Memory,
}

/// How JetStream publishers wait for acks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum PublishMode {
    /// Keep up to `window` publishes in flight, collect acks as they come.
    Async,
    /// Wait for each ack before the next publish.
    Sync,
    /// Atomic batches of `window` messages (ADR-50, nats-server 2.12+, the stream's `allow_atomic`):
    /// natscli's `bench js pub atomic` (alias `batch`). Only each batch's commit is acknowledged.
    #[value(alias = "batch")]
    Atomic,
}

/// serde's default of a count that was not written (a KV run's window before async puts existed).
fn one() -> usize {
    1
}

impl PublishMode {
    /// serde's default of a KV run's publish mode (KV puts were synchronous before async puts existed).
    fn sync() -> PublishMode {
        PublishMode::Sync
    }
    /// What the result's label calls the publisher.
    pub fn label(self) -> &'static str {
        match self {
            PublishMode::Async => "JetStream asynchronous publisher",
            PublishMode::Sync => "JetStream synchronous publisher",
            PublishMode::Atomic => "JetStream atomic batch publisher",
        }
    }
}

/// Where a JetStream run's workers connect relative to the leader of the stream they write to
/// (`--leader`). On a 3-node loopback lab a publisher on the leader's own server measured 1.45x (R3) to
/// 1.7x (R1) the rate of one connected elsewhere, so a run that leaves it to the URL order measures
/// whichever the election gave (`bench::leader`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LeaderPlacement {
    /// Workers round-robin over the servers given, wherever the leader is (as `nats bench`); the result
    /// says how many landed on the leader's server.
    #[default]
    Any,
    /// Workers connect only to servers that are not the leader's: the usual case for a client of an
    /// N-server cluster ((N-1)/N of them), and what `calibrate` measures.
    Remote,
    /// Workers connect only to the leader's server.
    Local,
}

impl LeaderPlacement {
    pub fn as_str(self) -> &'static str {
        match self {
            LeaderPlacement::Any => "any",
            LeaderPlacement::Remote => "remote",
            LeaderPlacement::Local => "local",
        }
    }
}

/// Which client carries the core and JetStream publish/subscribe hot paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ClientChoice {
    /// The raw protocol path when the connection allows it (no TLS, creds or nkey), else async-nats.
    Auto,
    /// Always the raw protocol path (an error when the connection needs TLS, creds or an nkey).
    Raw,
    /// Always async-nats (the official Rust client).
    AsyncNats,
}

/// Object store direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ObjOp {
    Put,
    Get,
}

/// How a JetStream consumer benchmark reads (natscli's `nats bench js fetch|consume|ordered`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
pub enum ConsumeMode {
    /// A pull consumer read with `fetch` batches of `--batch` messages, each acknowledged.
    Fetch,
    /// A pull consumer read as a continuous stream (`messages()`, up to `--batch` buffered),
    /// each message acknowledged.
    Consume,
    /// An ephemeral ordered consumer read with pulls (no acks), as natscli's `nats bench js ordered`.
    Ordered,
    /// The legacy push ordered consumer (no acks; the server pushes, flow controlled, with idle
    /// heartbeats), as nats.go's `nats.OrderedConsumer()` and natscli's `nats bench oldjs ordered`.
    /// Chosen with `bench consumer ordered --push`.
    #[value(skip)]
    OrderedPush,
}

impl ConsumeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ConsumeMode::Fetch => "fetch",
            ConsumeMode::Consume => "consume",
            ConsumeMode::Ordered => "ordered",
            ConsumeMode::OrderedPush => "ordered-push",
        }
    }
}

/// A stream that exists already (`--stream`, `--subject`): a run publishes to or reads from it and
/// never creates or deletes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Existing {
    pub stream: String,
    /// Subject to publish to (default: the stream's first subject) or to filter a consumer on.
    pub subject: Option<String>,
}

/// What a run sends: one bench workload and its counts (`BenchWorkload`; what the site itself carries is
/// `site::Workload`, the one the planner prices).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum BenchWorkload {
    Core {
        pubs: usize,
        subs: usize,
    },
    Flood {
        pubs: usize,
    },
    Ping,
    Js {
        pubs: usize,
        replicas: usize,
        storage: Storage,
        publish: PublishMode,
        window: usize,
        /// Pull consumers reading every message while the publishers write (`bench js --consumers N`,
        /// nats-server #5637: consumers slow publishers), each its own consumer fetching from the
        /// stream's first message; 0: none. Messages written before this field existed read as 0.
        #[serde(default)]
        consumers: usize,
    },
    /// KV puts: synchronous (each waits for its ack, through async-nats's KV API) or asynchronous
    /// (`window` puts in flight per client, published to the bucket's `$KV.<bucket>.<n>` subjects as
    /// async-nats's `put` does, acks collected as they come). Results and agents' messages written before
    /// `publish` existed read as synchronous.
    Kv {
        clients: usize,
        replicas: usize,
        storage: Storage,
        #[serde(default = "PublishMode::sync")]
        publish: PublishMode,
        #[serde(default = "one")]
        window: usize,
    },
    Obj {
        op: ObjOp,
        clients: usize,
        replicas: usize,
        storage: Storage,
    },
    /// JetStream publishing to a stream that exists already (`bench js --stream S`).
    JsExisting {
        pubs: usize,
        publish: PublishMode,
        window: usize,
        target: Existing,
    },
    /// JetStream consumers reading `msgs` messages: from a `natsplan-js-*` stream the run fills before
    /// its clock starts, or from an existing stream (`target`). Clients split the messages.
    Consume {
        mode: ConsumeMode,
        clients: usize,
        /// Messages per fetch (fetch) or buffered in the client (consume, ordered).
        batch: usize,
        replicas: usize,
        storage: Storage,
        target: Option<Existing>,
    },
    /// KV gets of keys the run puts before its clock starts.
    KvGet {
        clients: usize,
        replicas: usize,
        storage: Storage,
    },
    /// Direct gets by sequence (`$JS.API.DIRECT.GET`, one at a time per client, as natscli's `bench js get
    /// sync`) of the messages of a `natsplan-js-*` stream the run fills before its clock starts.
    JsGet {
        clients: usize,
        replicas: usize,
        storage: Storage,
    },
}

impl BenchWorkload {
    /// The workload's kind in the one vocabulary perf, verify and calibrate share (`perf::Kind`).
    /// The workload's own name, as its result's `kind` says it (`core`, `js`, `js-fetch`, `kv-get`, …).
    pub fn name(&self) -> String {
        match self {
            BenchWorkload::Consume { mode, .. } => format!("js-{}", mode.as_str()),
            BenchWorkload::KvGet { .. } => "kv-get".into(),
            BenchWorkload::JsGet { .. } => "js-get".into(),
            w => w.kind().as_str().into(),
        }
    }
    /// Whether the run's readers are its workers, numbered over the whole run as publishers are (object
    /// and KV gets, consumers, direct gets), rather than subscribers beside the publishers.
    pub fn readers_are_workers(&self) -> bool {
        matches!(
            self,
            BenchWorkload::Obj { op: ObjOp::Get, .. }
                | BenchWorkload::KvGet { .. }
                | BenchWorkload::Consume { .. }
                | BenchWorkload::JsGet { .. }
        )
    }
    /// Workers (publishers, putters, getters, consumers) and subscribers of the whole workload: what
    /// agents split (`agent::split`).
    pub fn counts(&self) -> (usize, usize) {
        match *self {
            BenchWorkload::Core { pubs, subs } => (pubs, subs),
            BenchWorkload::Flood { pubs } => (pubs, 1),
            BenchWorkload::Ping => (1, 0),
            BenchWorkload::Js { pubs, .. } => (pubs, 0),
            BenchWorkload::Kv { clients, .. } | BenchWorkload::Obj { clients, .. } => (clients, 0),
            BenchWorkload::JsExisting { pubs, .. } => (pubs, 0),
            BenchWorkload::Consume { clients, .. }
            | BenchWorkload::KvGet { clients, .. }
            | BenchWorkload::JsGet { clients, .. } => (clients, 0),
        }
    }
    /// The same workload with `n` workers (publishers, putters, getters, consumers) and, for core, `subs`
    /// subscribers (`counts` inverted; a flood's one subscriber is not a count of the workload).
    pub fn with_counts(&self, n: usize, subs: usize) -> BenchWorkload {
        match self.clone() {
            BenchWorkload::Core { .. } => BenchWorkload::Core { pubs: n, subs },
            BenchWorkload::Flood { .. } => BenchWorkload::Flood { pubs: n },
            BenchWorkload::Ping => BenchWorkload::Ping,
            BenchWorkload::Js {
                replicas,
                storage,
                publish,
                window,
                consumers,
                ..
            } => BenchWorkload::Js {
                pubs: n,
                replicas,
                storage,
                publish,
                window,
                consumers,
            },
            BenchWorkload::Kv {
                replicas,
                storage,
                publish,
                window,
                ..
            } => BenchWorkload::Kv {
                clients: n,
                replicas,
                storage,
                publish,
                window,
            },
            BenchWorkload::Obj {
                op, replicas, storage, ..
            } => BenchWorkload::Obj {
                op,
                clients: n,
                replicas,
                storage,
            },
            BenchWorkload::JsExisting {
                publish,
                window,
                target,
                ..
            } => BenchWorkload::JsExisting {
                pubs: n,
                publish,
                window,
                target,
            },
            BenchWorkload::Consume {
                mode,
                batch,
                replicas,
                storage,
                target,
                ..
            } => BenchWorkload::Consume {
                mode,
                clients: n,
                batch,
                replicas,
                storage,
                target,
            },
            BenchWorkload::KvGet { replicas, storage, .. } => BenchWorkload::KvGet {
                clients: n,
                replicas,
                storage,
            },
            BenchWorkload::JsGet { replicas, storage, .. } => BenchWorkload::JsGet {
                clients: n,
                replicas,
                storage,
            },
        }
    }
    /// The stream that exists already which the run publishes to or reads from (`--stream`), if any: a
    /// run on it creates and deletes no stream (agents refuse such rows).
    pub fn existing(&self) -> Option<&Existing> {
        match self {
            BenchWorkload::JsExisting { target, .. }
            | BenchWorkload::Consume {
                target: Some(target), ..
            } => Some(target),
            _ => None,
        }
    }
    /// Whether a run stores its messages (or objects) in JetStream: its operations write them (JetStream
    /// publishes, KV puts, objects, which object gets put first) or it fills its own stream with them
    /// before its clock starts (a consumer run on no existing stream). Verify's ladder sizes its rows'
    /// store use by it.
    pub fn stores_its_msgs(&self) -> bool {
        matches!(
            self,
            BenchWorkload::Js { .. }
                | BenchWorkload::Kv { .. }
                | BenchWorkload::Obj { .. }
                | BenchWorkload::Consume { target: None, .. }
        )
    }
    pub fn kind(&self) -> crate::perf::Kind {
        use crate::perf::Kind;
        match self {
            BenchWorkload::Core { .. } => Kind::Core,
            BenchWorkload::Flood { .. } => Kind::Flood,
            BenchWorkload::Ping => Kind::Ping,
            BenchWorkload::Js { .. } => Kind::Js,
            BenchWorkload::Kv { .. } => Kind::Kv,
            BenchWorkload::Obj { op: ObjOp::Put, .. } => Kind::ObjPut,
            BenchWorkload::Obj { op: ObjOp::Get, .. } => Kind::ObjGet,
            // A publish to an existing stream is a JetStream publish; KV gets have no kind of their own
            // yet (named by their result's `kind`, `kv-get`). Consumer reads are perf::consumer's kinds.
            BenchWorkload::JsExisting { .. } => Kind::Js,
            BenchWorkload::Consume { mode, .. } => match mode {
                ConsumeMode::Fetch => Kind::ConsumerFetch,
                ConsumeMode::Consume => Kind::ConsumerConsume,
                ConsumeMode::Ordered | ConsumeMode::OrderedPush => Kind::ConsumerOrdered,
            },
            BenchWorkload::KvGet { .. } => Kind::Kv,
            // A direct get by sequence is a KV get's path (the same request, a sequence for a subject).
            BenchWorkload::JsGet { .. } => Kind::Kv,
        }
    }
}

/// One run's full description (everything but the connection).
#[derive(Debug, Clone)]
pub struct BenchSpec {
    pub workload: BenchWorkload,
    /// Messages (core, flood, js, kv, ping) or objects (obj), split over publishers/clients.
    pub msgs: u64,
    /// Payload or object size in bytes.
    pub size: u64,
    /// Open-loop aggregate rate in messages per second; latency is then measured from the intended send time.
    pub rate_per_s: Option<f64>,
    /// A `--rate` run stops as not sustained once it is this far behind its schedule.
    pub backlog_cutoff: Duration,
    /// Subscribers give up when no message arrived for this long after the publishers finished; also the
    /// JetStream ack and request timeout.
    pub timeout: Duration,
    /// Monitoring URLs (`http://host:8222`) whose `/varz slow_consumers` is read before and after.
    pub monitor: Vec<String>,
    /// Leave created streams, buckets and object stores in place.
    pub keep: bool,
    /// Core subscribers pause this long after each message (nats bench's `--subsleep`): a deliberately
    /// slow consumer.
    pub sub_sleep: Option<Duration>,
    /// Messages the client library buffers per subscription before it drops (default: enough for the run,
    /// capped at 1 Mi).
    pub sub_buffer: Option<usize>,
    /// Client for the hot paths.
    pub client: ClientChoice,
    /// Draw progress bars on stderr (callers pass false when stderr is not a terminal).
    pub progress: bool,
    /// Where JetStream publishers, KV putters and object clients connect relative to the stream leader.
    pub leader: LeaderPlacement,
    /// Where each pull consumer's reader connects relative to its consumer's leader (`--consumer-leader`,
    /// fetch and consume only; `bench::leader`).
    pub consumer_leader: LeaderPlacement,
    /// natscli's positional SUBJECT and `--multisubject` (`bench pub|sub SUBJECT`, `bench js pub MODE
    /// SUBJECT`); the default is the run's own `natsplan.*.<run id>` subject.
    pub subjects: Subjects,
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Where a core or JetStream publishing run sends its messages: natscli's positional SUBJECT and its
/// `--multisubject` mode [cli:cli/bench_command.go `getPublishSubject`, `getSubscribeSubject`]. natsplan
/// still creates and removes its own stream (capturing SUBJECT) unless `--stream` names an existing one;
/// natscli publishes to an existing `benchstream` unless `--create` (docs/bench.md says so).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subjects {
    /// The subject given on the command line; None: the run's own.
    pub subject: Option<String>,
    /// `--multisubject`: each message goes to `SUBJECT.<n>`, n its number modulo this maximum (0: no
    /// maximum), zero padded to the maximum's width, as natscli formats it. None: one subject.
    pub multi: Option<u64>,
}

impl Subjects {
    /// The subject the run uses: the one given, else `own`.
    pub fn base(&self, own: String) -> String {
        self.subject.clone().unwrap_or(own)
    }
    /// What subscribers, and the stream the run creates, listen on: the subject, or `SUBJECT.*` with
    /// `--multisubject`.
    pub fn capture(&self, base: &str) -> String {
        match self.multi {
            Some(_) => format!("{base}.*"),
            None => base.to_string(),
        }
    }
    /// The subject of message number `n` (counted over the run's publishers).
    pub fn of(&self, base: &str, n: u64) -> String {
        let mut out = base.as_bytes().to_vec();
        self.push_suffix(&mut out, n);
        String::from_utf8(out).expect("a subject and ASCII digits")
    }
    /// What message number `n` adds to the base subject (nothing, or `.<n>` as `of` writes it), appended
    /// to `out`: the raw path writes each message's subject with it.
    pub fn push_suffix(&self, out: &mut Vec<u8>, n: u64) {
        let Some(max) = self.multi else { return };
        let (k, width) = match max {
            0 => (n, 0),
            max => (n % max, digits(max)),
        };
        out.push(b'.');
        out.resize(out.len() + width.saturating_sub(digits(k)), b'0');
        raw::push_num(out, k);
    }
    /// Record in a result's params what the run listened on or captured (`subject`) and the
    /// `--multisubject` maximum, when natscli's forms chose them.
    pub fn record(&self, captured: &str, params: &mut std::collections::BTreeMap<String, String>) {
        if self.subject.is_some() || self.multi.is_some() {
            params.insert("subject".into(), captured.to_string());
        }
        if let Some(max) = self.multi {
            params.insert("multisubject".into(), max.to_string());
        }
    }
    /// A subject a publish can carry: non-empty tokens, no wildcard, no white space (NATS subject rules,
    /// docs: nats-concepts/subjects.md).
    pub fn check(&self) -> Result<(), String> {
        let Some(s) = &self.subject else { return Ok(()) };
        let bad = s.is_empty()
            || s.split('.').any(|t| t.is_empty() || t == "*" || t == ">")
            || s.chars().any(|c| c.is_whitespace() || c.is_control());
        if bad {
            return Err(format!(
                "SUBJECT '{s}': not a subject a message can be published to (dot-separated non-empty tokens, \
                 no '*' or '>' wildcard, no white space); e.g. bench.orders"
            ));
        }
        Ok(())
    }
}

/// Why a run could not produce a result.
pub type BenchError = crate::error::Failure;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every workload, one of each shape.
    pub(crate) fn every_workload() -> Vec<BenchWorkload> {
        let s = Storage::Memory;
        let (m, target) = (
            PublishMode::Async,
            Some(Existing {
                stream: "S".into(),
                subject: None,
            }),
        );
        let mut v = vec![
            BenchWorkload::Core { pubs: 1, subs: 1 },
            BenchWorkload::Flood { pubs: 1 },
            BenchWorkload::Ping,
            BenchWorkload::Js {
                pubs: 1,
                replicas: 1,
                storage: s,
                publish: m,
                window: 1,
                consumers: 0,
            },
            BenchWorkload::Kv {
                clients: 1,
                replicas: 1,
                storage: s,
                publish: PublishMode::Sync,
                window: 1,
            },
            BenchWorkload::KvGet {
                clients: 1,
                replicas: 1,
                storage: s,
            },
            BenchWorkload::JsGet {
                clients: 1,
                replicas: 1,
                storage: s,
            },
            BenchWorkload::JsExisting {
                pubs: 1,
                publish: m,
                window: 1,
                target: target.clone().unwrap(),
            },
        ];
        for op in [ObjOp::Put, ObjOp::Get] {
            v.push(BenchWorkload::Obj {
                op,
                clients: 1,
                replicas: 1,
                storage: s,
            });
        }
        for mode in [
            ConsumeMode::Fetch,
            ConsumeMode::Consume,
            ConsumeMode::Ordered,
            ConsumeMode::OrderedPush,
        ] {
            for t in [None, target.clone()] {
                v.push(BenchWorkload::Consume {
                    mode,
                    clients: 1,
                    batch: 1,
                    replicas: 1,
                    storage: s,
                    target: t,
                });
            }
        }
        v
    }

    #[test]
    fn readers_are_workers_for_gets_and_consumers_as_their_result_kinds_said() {
        for w in every_workload() {
            // What the merge of a shared run read from the result's kind before the enum said it.
            let name = w.name();
            let by_name = matches!(name.as_str(), "obj-get" | "kv-get") || name.starts_with("js-");
            assert_eq!(w.readers_are_workers(), by_name, "{w:?} ({name})");
        }
    }
}
