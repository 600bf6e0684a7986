//! `natsplan bench core|js|kv|obj|ping|flood`: one benchmark run against a live cluster, with the flags
//! NATS users know from `nats bench`. Parses flags into a `bench::BenchSpec`, runs it on a tokio runtime,
//! prints the result through the render seam (`report::bench`, on `bench::export`'s pure exporters).

use crate::bench::{
    self, BenchSpec, BenchWorkload, ClientChoice, ConnArgs, ConnSpec, ConsumeMode, Existing, ObjOp, PublishMode,
    Storage,
};
use crate::cli::{Format, Global};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: Box<BenchCmd>,
}

/// The flags follow the current `nats bench` (natscli): `--clients` for the workers of every workload
/// (`--pubs`, the name used before, stays as a hidden alias), `--batch` for async publishes in flight
/// and consumer batches (`--window` stays as a hidden alias), `--msgs` for the count (`bench obj` counts
/// `--objects`, `--msgs` a hidden alias there).
// One value parsed once per process (and boxed in `BenchArgs`): the size of its largest variant costs
// nothing, and boxing `bench js`'s natscli form would only complicate matching it.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Core NATS publish/subscribe throughput (fire and forget).
    Core {
        /// Publishers (messages are split over them).
        #[arg(long, alias = "pubs", default_value_t = 1, value_name = "N")]
        clients: usize,
        /// Subscribers (each expects every message).
        #[arg(long, default_value_t = 1, value_name = "N")]
        subs: usize,
        #[command(flatten)]
        multi: Multi,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        core: CoreOpts,
        #[command(flatten)]
        rate: RateOpts,
        #[command(flatten)]
        client: ClientOpt,
        #[command(flatten)]
        common: Common,
    },
    /// natscli's `nats bench pub SUBJECT`: core publishers only, on SUBJECT (run `natsplan bench sub
    /// SUBJECT` or `nats bench sub SUBJECT` elsewhere to receive).
    Pub {
        /// The subject to publish to.
        subject: String,
        /// Publishers (messages are split over them).
        #[arg(long, default_value_t = 1, value_name = "N")]
        clients: usize,
        #[command(flatten)]
        multi: Multi,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        rate: RateOpts,
        #[command(flatten)]
        client: ClientOpt,
        #[command(flatten)]
        common: Common,
    },
    /// natscli's `nats bench sub SUBJECT`: core subscribers only, each waiting for --msgs messages on
    /// SUBJECT from publishers elsewhere (until --timeout passes with nothing new).
    Sub {
        /// The subject to subscribe to (SUBJECT.* with --multisubject).
        subject: String,
        /// Subscribers (each expects every message).
        #[arg(long, default_value_t = 1, value_name = "N")]
        clients: usize,
        /// The publishers use --multisubject: subscribe to SUBJECT.*.
        #[arg(long)]
        multisubject: bool,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        core: CoreOpts,
        #[command(flatten)]
        client: ClientOpt,
        #[command(flatten)]
        common: Common,
    },
    /// JetStream publishing: to a `natsplan-js-*` stream the run creates and deletes, or to an existing
    /// stream (`--stream`, `--subject`). natscli's forms work too: `bench js pub sync|async SUBJECT`,
    /// `bench js ordered|consume|fetch`.
    #[command(args_conflicts_with_subcommands = true)]
    Js {
        #[command(subcommand)]
        form: Option<JsForm>,
        /// async: keep up to --batch publishes in flight; sync: wait for each ack.
        #[arg(long, value_enum, default_value_t = PublishMode::Async)]
        publish: PublishMode,
        #[command(flatten)]
        args: JsArgs,
    },
    /// JetStream consumers: a pull consumer read with fetch or consume, or an ordered consumer,
    /// reading --msgs messages from a `natsplan-js-*` stream the run fills first, or from an existing
    /// stream (`--stream`, `--subject`).
    Consumer {
        /// fetch, consume (pull consumers, every message acknowledged) or ordered (no acks; pulled, as
        /// `nats bench js ordered`, or pushed with --push).
        #[arg(value_enum)]
        mode: ConsumeMode,
        #[command(flatten)]
        args: ConsumerArgs,
    },
    /// Key-value puts to, or gets from, a `natsplan-kv-*` bucket (--msgs operations; rates in
    /// operations per second). Gets read keys the run puts before its clock starts.
    Kv {
        /// put (default) or get.
        #[arg(value_enum, default_value_t = KvOp::Put)]
        op: KvOp,
        /// Clients (operations are split over them).
        #[arg(long, default_value_t = 1, value_name = "N")]
        clients: usize,
        /// Puts: sync (each client waits for its put's ack, as async-nats's KV `put`) or async (--batch
        /// puts in flight per client, each to a new key).
        #[arg(long, value_enum, default_value_t = PublishMode::Sync)]
        publish: PublishMode,
        /// With --publish async: puts in flight per client before waiting for acks (default 500, as
        /// `bench js`).
        #[arg(long, alias = "window", value_name = "N")]
        batch: Option<usize>,
        #[command(flatten)]
        stream: StreamOpts,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        rate: RateOpts,
        #[command(flatten)]
        common: Common,
    },
    /// Object store put or get of whole objects in a `natsplan-obj-*` bucket (--size is the object size).
    Obj {
        /// put or get (gets read objects the run puts before its clock starts).
        #[arg(value_enum)]
        op: ObjOp,
        /// Clients (objects are split over them).
        #[arg(long, default_value_t = 1, value_name = "N")]
        clients: usize,
        /// Objects to put or get (split over clients).
        #[arg(long, alias = "msgs", default_value_t = 100, value_name = "N")]
        objects: u64,
        #[command(flatten)]
        stream: StreamOpts,
        #[command(flatten)]
        common: Common,
    },
    /// Sequential request/reply round trips (the requester and responder on different servers when
    /// several are given).
    Ping {
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        client: ClientOpt,
        #[command(flatten)]
        common: Common,
    },
    /// Burst queueing delay: publishers send everything at once, one subscriber measures send→receive.
    Flood {
        /// Publishers (messages are split over them).
        #[arg(long, alias = "pubs", default_value_t = 8, value_name = "N")]
        clients: usize,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        core: CoreOpts,
        #[command(flatten)]
        client: ClientOpt,
        #[command(flatten)]
        common: Common,
    },
}

/// `bench kv put|get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KvOp {
    Put,
    Get,
}

/// natscli's `nats bench js …` forms (docs/bench.md, "natscli's forms").
#[derive(Debug, Subcommand)]
pub enum JsForm {
    /// `nats bench js pub sync|async SUBJECT`: publish to a stream the run creates on SUBJECT (or to
    /// the existing stream --stream names, on SUBJECT).
    Pub {
        /// sync (wait for each ack) or async (--batch in flight); natscli's atomic and fast batch
        /// publishers have no natsplan workload yet.
        #[arg(value_enum)]
        mode: NatsPubMode,
        /// The subject to publish to (default: the run's own).
        #[arg(id = "positional_subject", value_name = "SUBJECT")]
        subject: Option<String>,
        #[command(flatten)]
        args: JsArgs,
    },
    /// `nats bench js ordered`: `natsplan bench consumer ordered`.
    Ordered(ConsumerArgs),
    /// `nats bench js consume`: `natsplan bench consumer consume`.
    Consume(ConsumerArgs),
    /// `nats bench js fetch`: `natsplan bench consumer fetch`.
    Fetch(ConsumerArgs),
    /// `nats bench js get sync`: direct gets by sequence of a `natsplan-js-*` stream the run fills first
    /// (natscli's `batch`, batched direct gets, is not a natsplan workload yet).
    Get {
        /// sync: one direct get at a time per client.
        #[arg(value_enum)]
        mode: GetMode,
        /// Clients (the messages are split over them).
        #[arg(long, default_value_t = 1, value_name = "N")]
        clients: usize,
        #[command(flatten)]
        stream: StreamOpts,
        #[command(flatten)]
        count: Msgs,
        #[command(flatten)]
        common: Common,
    },
}

/// `bench js get MODE`: natscli's get modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GetMode {
    Sync,
    /// natscli's batched direct get: no natsplan workload yet.
    Batch,
}

/// `bench js pub MODE`: natscli's publish modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum NatsPubMode {
    Sync,
    Async,
    /// natscli's atomic batch publish (`atomic`, alias `batch`): `--publish atomic`.
    #[value(alias = "atomic")]
    Batch,
    /// natscli's fast batch publish: no natsplan workload yet.
    Fast,
}

/// `bench js`'s flags (and `bench js pub MODE SUBJECT`'s).
#[derive(Debug, Args)]
pub struct JsArgs {
    /// Publishers (messages are split over them).
    #[arg(long, alias = "pubs", default_value_t = 1, value_name = "N")]
    pub clients: usize,
    #[command(flatten)]
    pub stream: StreamOpts,
    /// Unacknowledged publishes in flight per publisher with --publish async (nats bench js pub
    /// async --batch).
    #[arg(long, alias = "window", default_value_t = 500, value_name = "N")]
    pub batch: usize,
    /// Publish to this existing stream instead of creating one (it is neither created nor deleted).
    #[arg(long = "stream", value_name = "STREAM")]
    pub existing_stream: Option<String>,
    /// With --stream: the subject to publish to (default: the stream's first subject).
    #[arg(long, value_name = "SUBJECT", requires = "existing_stream")]
    pub subject: Option<String>,
    /// Pull consumers reading every message while the publishers write (each its own consumer, fetching
    /// batches of 500 and acknowledging each message; nats-server #5637: consumers slow publishers). The
    /// publishers' rate is `pub_msgs_per_s`, the readers' `sub_msgs_per_s`.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub consumers: usize,
    #[command(flatten)]
    pub multi: Multi,
    #[command(flatten)]
    pub count: Msgs,
    #[command(flatten)]
    pub rate: RateOpts,
    #[command(flatten)]
    pub client: ClientOpt,
    #[command(flatten)]
    pub common: Common,
}

/// `bench consumer MODE`'s flags (and `bench js ordered|consume|fetch`'s).
#[derive(Debug, Args)]
pub struct ConsumerArgs {
    /// Consumers (messages are split over them; each has its own consumer on the stream).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub clients: usize,
    /// Messages per fetch (fetch) or buffered in the client (consume, ordered). A push consumer
    /// has no batch: the server pushes, flow controlled.
    #[arg(long, default_value_t = 500, value_name = "N", conflicts_with = "push")]
    pub batch: usize,
    /// ordered only: the legacy push ordered consumer (server-pushed, flow control and idle
    /// heartbeats), as nats.go's `nats.OrderedConsumer()` and `nats bench oldjs ordered` read; the
    /// default is the pull ordered consumer of `nats bench js ordered`.
    #[arg(long)]
    pub push: bool,
    /// Pause this long after each message read (nats bench's --sleep: a deliberately slow consumer).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub sleep: Option<Duration>,
    /// Client for ordered --push: auto (raw protocol when the connection allows, else async-nats),
    /// raw, or async-nats. Pull consumers always read through async-nats.
    #[arg(long, value_enum, default_value_t = ClientChoice::Auto)]
    pub client: ClientChoice,
    #[command(flatten)]
    pub stream: StreamOpts,
    /// Read this existing stream instead of creating and filling one (it is neither changed nor
    /// deleted; the run's consumers are).
    #[arg(long = "stream", value_name = "STREAM")]
    pub existing_stream: Option<String>,
    /// With --stream: read only messages on this subject (a consumer filter).
    #[arg(long, value_name = "SUBJECT", requires = "existing_stream")]
    pub subject: Option<String>,
    /// fetch, consume: connect each reader to a server other than its consumer's leader's (remote), to
    /// the leader's own server (local), or wherever the URL order puts it (any, the default; the result
    /// says where each consumer's leader was). See docs/bench.md.
    #[arg(long, value_enum, value_name = "WHERE")]
    pub consumer_leader: Option<bench::LeaderPlacement>,
    #[command(flatten)]
    pub count: Msgs,
    #[command(flatten)]
    pub common: Common,
}

/// natscli's `--multisubject` for publishers [cli:cli/bench_command.go `addPubFlags`].
#[derive(Debug, Args)]
pub struct Multi {
    /// Publish each message on SUBJECT.N, N the message's number over the run (natscli's
    /// --multisubject; subscribers and the stream the run creates listen on SUBJECT.*). Publishes
    /// through async-nats.
    #[arg(long)]
    pub multisubject: bool,
    /// With --multisubject: how many subjects (n modulo this, zero padded to its width; 0: no maximum).
    #[arg(long, default_value_t = 100_000, value_name = "N", requires = "multisubject")]
    pub multisubjectmax: u64,
}

impl Multi {
    fn max(&self) -> Option<u64> {
        self.multisubject.then_some(self.multisubjectmax)
    }
}

/// `--msgs`: the count of every workload but `obj` (which counts `--objects`).
#[derive(Debug, Args)]
pub struct Msgs {
    /// Messages (or operations) in total, split over the clients.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub msgs: u64,
}

/// Replicas and storage of the stream, bucket or object store a run creates.
#[derive(Debug, Args)]
pub struct StreamOpts {
    /// Replicas of the stream, bucket or object store the run creates (1..5).
    #[arg(long, default_value_t = 1, value_name = "R")]
    pub replicas: usize,
    /// Storage of the stream, bucket or object store the run creates.
    #[arg(long, value_enum, default_value_t = Storage::File)]
    pub storage: Storage,
}

/// Open-loop pacing (core, js, kv).
#[derive(Debug, Args)]
pub struct RateOpts {
    /// Open loop: send at R messages per second in aggregate and measure latency from the intended send
    /// time (nats bench's --throughput).
    #[arg(long, visible_alias = "throughput", value_name = "R")]
    pub rate: Option<f64>,
    /// With --rate: stop as "not sustained" once this far behind schedule.
    #[arg(long, default_value = "1s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub backlog_cutoff: Duration,
}

/// Core subscribers' options (core, flood).
#[derive(Debug, Args)]
pub struct CoreOpts {
    /// Monitoring URLs (http://host:8222, comma separated) to read /varz slow_consumers from.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub monitor: Vec<String>,
    /// Core subscribers sleep this long after each message (a deliberately slow consumer).
    #[arg(long, value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub sub_sleep: Option<Duration>,
    /// Messages buffered per subscription in the client before it drops them.
    #[arg(long, value_name = "N")]
    pub sub_buffer: Option<usize>,
}

/// The client of the hot paths (core, js, ping, flood).
#[derive(Debug, Args)]
pub struct ClientOpt {
    /// Client for the hot paths: auto (raw protocol when the connection allows, else async-nats), raw, or
    /// async-nats.
    #[arg(long, value_enum, default_value_t = ClientChoice::Auto)]
    pub client: ClientChoice,
}

/// Flags every bench subcommand takes.
#[derive(Debug, Args)]
pub struct Common {
    /// Payload size (128, 1KiB, 1MiB, ...).
    #[arg(long, default_value = "128", value_parser = parse_size, value_name = "SIZE")]
    pub size: u64,
    /// Give up on messages that stopped arriving, acks and requests after this long.
    #[arg(long, default_value = "5s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub timeout: Duration,
    /// Also write nats bench's CSV to FILE (see docs/bench.md for its columns).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Keep the streams, buckets and object stores the run created.
    #[arg(long)]
    pub keep: bool,
    /// No progress bar even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// js, kv, obj: connect the workers to servers other than the stream leader's (remote), to the
    /// leader's own server (local), or round-robin over the servers given (any, the default; the result
    /// says how many landed on the leader's server). See docs/bench.md.
    #[arg(long, value_enum, value_name = "WHERE")]
    pub leader: Option<bench::LeaderPlacement>,
    /// Run the workers on N `natsplan agent` processes (other client hosts) instead of here; the report
    /// merges their counts and histograms. An incomplete run (an agent lost) exits 1.
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    pub agents: Option<usize>,
    /// With --agents: how long to wait for N idle agents to answer.
    #[arg(long, default_value = "5s", value_parser = crate::units::parse_duration, value_name = "DURATION", requires = "agents")]
    pub agents_timeout: Duration,
    #[command(flatten)]
    pub conn: ConnArgs,
    /// A lab from `natsplan lab up`: its folder (or its lab.json) gives the servers (and for core and
    /// flood the monitors); nats CLI contexts are not read unless --context names one.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["server", "agents"])]
    pub lab: Option<PathBuf>,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s)
}

/// `--agents N`: a whole number within the table's bound (`input::limits::AGENTS`).
pub fn parse_agents(s: &str) -> Result<usize, String> {
    let b = crate::input::limits::AGENTS;
    match s.trim().parse::<u64>() {
        Ok(n) => b
            .check_u64(n)
            .map(|n| n as usize)
            .map_err(|e| format!("{s}: {e}; give the number of agents to use, from 1 to {}", b.max)),
        Err(_) => Err(format!("'{s}' is not a number of agents; e.g. --agents 3")),
    }
}

/// What a subcommand's flags ask for: the workload, its count and the options that only some take
/// (absent ones at their defaults).
struct Parsed {
    workload: BenchWorkload,
    msgs: u64,
    rate: Option<f64>,
    backlog_cutoff: Duration,
    core: CoreOpts,
    client: ClientChoice,
    common: Common,
    subjects: bench::Subjects,
    /// `--consumer-leader` (consumer runs only).
    consumer_leader: Option<bench::LeaderPlacement>,
}

impl Parsed {
    fn new(
        workload: BenchWorkload,
        msgs: u64,
        rate: RateOpts,
        core: CoreOpts,
        client: ClientOpt,
        common: Common,
    ) -> Parsed {
        Parsed {
            workload,
            msgs,
            rate: rate.rate,
            backlog_cutoff: rate.backlog_cutoff,
            core,
            client: client.client,
            common,
            subjects: bench::Subjects::default(),
            consumer_leader: None,
        }
    }
    fn on(mut self, subject: Option<String>, multi: Option<u64>) -> Parsed {
        self.subjects = bench::Subjects { subject, multi };
        self
    }
}

fn existing(stream: Option<String>, subject: Option<String>) -> Option<Existing> {
    stream.map(|stream| Existing { stream, subject })
}

/// `bench js`: to a stream the run creates, or to an existing one.
fn js_workload(
    clients: usize,
    stream: StreamOpts,
    publish: PublishMode,
    batch: usize,
    target: Option<Existing>,
    consumers: usize,
) -> Result<BenchWorkload, Failure> {
    Ok(match target {
        Some(target) if consumers > 0 => {
            return Err(bad_input(anyhow::anyhow!(
                "--consumers {consumers} with --stream {}: readers run on the stream the run creates (each \
                 reads it from its first message); drop --stream, or run `bench consumer fetch --stream {}` \
                 beside the publishers",
                target.stream,
                target.stream
            )))
        }
        Some(target) => BenchWorkload::JsExisting {
            pubs: clients,
            publish,
            window: batch,
            target,
        },
        None => BenchWorkload::Js {
            pubs: clients,
            replicas: stream.replicas,
            storage: stream.storage,
            publish,
            window: batch,
            consumers,
        },
    })
}

/// `bench kv put|get`: `--publish` is a put's (a get waits for its value).
fn kv_workload(
    op: KvOp,
    clients: usize,
    publish: PublishMode,
    batch: Option<usize>,
    stream: StreamOpts,
) -> Result<BenchWorkload, Failure> {
    let (replicas, storage) = (stream.replicas, stream.storage);
    let name = |m: PublishMode| clap::ValueEnum::to_possible_value(&m).map_or("?".into(), |v| v.get_name().to_string());
    if let (Some(b), false) = (batch, op == KvOp::Put && publish == PublishMode::Async) {
        return Err(bad_input(anyhow::anyhow!(
            "--batch {b}: only asynchronous puts keep puts in flight; use `bench kv put --publish async --batch {b}`, or drop --batch"
        )));
    }
    Ok(match op {
        KvOp::Put => BenchWorkload::Kv {
            clients,
            replicas,
            storage,
            publish,
            window: batch.unwrap_or(500),
        },
        KvOp::Get if publish != PublishMode::Sync => {
            return Err(bad_input(anyhow::anyhow!(
                "--publish {}: a KV get waits for its value; --publish applies to `bench kv put`",
                name(publish)
            )))
        }
        KvOp::Get => BenchWorkload::KvGet {
            clients,
            replicas,
            storage,
        },
    })
}

/// The options a workload does not take, at their defaults.
fn no_core() -> CoreOpts {
    CoreOpts {
        monitor: vec![],
        sub_sleep: None,
        sub_buffer: None,
    }
}

fn no_rate() -> RateOpts {
    RateOpts {
        rate: None,
        backlog_cutoff: Duration::from_secs(1),
    }
}

fn auto() -> ClientOpt {
    ClientOpt {
        client: ClientChoice::Auto,
    }
}

/// `bench consumer MODE [--push] [--client C]`: the consumer to read with, or what is wrong with the
/// combination.
fn consumer_mode(mode: ConsumeMode, push: bool, client: ClientChoice) -> Result<ConsumeMode, Failure> {
    let mode = match (mode, push) {
        (ConsumeMode::Ordered, true) => ConsumeMode::OrderedPush,
        (m, true) => {
            return Err(bad_input(anyhow::anyhow!(
                "--push: only the ordered consumer has a push mode here (`bench consumer ordered --push`); \
                 {} reads a pull consumer",
                m.as_str()
            )))
        }
        (m, false) => m,
    };
    if client == ClientChoice::Raw && mode != ConsumeMode::OrderedPush {
        return Err(bad_input(anyhow::anyhow!(
            "--client raw: only `bench consumer ordered --push` has a raw protocol path; {} reads through \
             async-nats (drop --client, or add --push to an ordered run)",
            mode.as_str()
        )));
    }
    Ok(mode)
}

/// Flags → what to run.
fn parse(cmd: BenchCmd) -> Result<Parsed, Failure> {
    Ok(match cmd {
        BenchCmd::Core {
            clients,
            subs,
            multi,
            count,
            core,
            rate,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: clients, subs },
            count.msgs,
            rate,
            core,
            client,
            common,
        )
        .on(None, multi.max()),
        BenchCmd::Pub {
            subject,
            clients,
            multi,
            count,
            rate,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: clients, subs: 0 },
            count.msgs,
            rate,
            no_core(),
            client,
            common,
        )
        .on(Some(subject), multi.max()),
        BenchCmd::Sub {
            subject,
            clients,
            multisubject,
            count,
            core,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Core { pubs: 0, subs: clients },
            count.msgs,
            no_rate(),
            core,
            client,
            common,
        )
        // A subscriber only listens: any maximum gives the same SUBJECT.* subscription.
        .on(Some(subject), multisubject.then_some(0)),
        BenchCmd::Js {
            form: None,
            publish,
            args,
        } => js_parsed(publish, args, None)?,
        BenchCmd::Js { form: Some(form), .. } => js_form_parsed(form)?,
        BenchCmd::Consumer { mode, args } => consumer_parsed(mode, args)?,
        BenchCmd::Kv {
            op,
            clients,
            publish,
            batch,
            stream,
            count,
            rate,
            common,
        } => Parsed::new(
            kv_workload(op, clients, publish, batch, stream)?,
            count.msgs,
            rate,
            no_core(),
            auto(),
            common,
        ),
        BenchCmd::Obj {
            op,
            clients,
            objects,
            stream,
            common,
        } => Parsed::new(
            BenchWorkload::Obj {
                op,
                clients,
                replicas: stream.replicas,
                storage: stream.storage,
            },
            objects,
            no_rate(),
            no_core(),
            auto(),
            common,
        ),
        BenchCmd::Ping { count, client, common } => {
            Parsed::new(BenchWorkload::Ping, count.msgs, no_rate(), no_core(), client, common)
        }
        BenchCmd::Flood {
            clients,
            count,
            core,
            client,
            common,
        } => Parsed::new(
            BenchWorkload::Flood { pubs: clients },
            count.msgs,
            no_rate(),
            core,
            client,
            common,
        ),
    })
}

/// natscli's `nats bench js …` forms → what to run.
fn js_form_parsed(form: JsForm) -> Result<Parsed, Failure> {
    Ok(match form {
        JsForm::Pub { mode, subject, args } => js_parsed(natscli_publish(mode)?, args, subject)?,
        JsForm::Ordered(a) => consumer_parsed(ConsumeMode::Ordered, a)?,
        JsForm::Consume(a) => consumer_parsed(ConsumeMode::Consume, a)?,
        JsForm::Fetch(a) => consumer_parsed(ConsumeMode::Fetch, a)?,
        JsForm::Get {
            mode: GetMode::Batch, ..
        } => {
            return Err(bad_input(anyhow::anyhow!(
                "`bench js get batch`: natsplan has no batched direct get yet; `bench js get sync` times \
                 one direct get at a time per client (--clients N for more in parallel)"
            )))
        }
        JsForm::Get {
            mode: GetMode::Sync,
            clients,
            stream,
            count,
            common,
        } => Parsed::new(
            BenchWorkload::JsGet {
                clients,
                replicas: stream.replicas,
                storage: stream.storage,
            },
            count.msgs,
            no_rate(),
            no_core(),
            auto(),
            common,
        ),
    })
}

/// natscli's publish modes: sync and async are natsplan's; its atomic and fast batch publishers are not
/// yet (a clear error, not a different measurement under the same name).
fn natscli_publish(mode: NatsPubMode) -> Result<PublishMode, Failure> {
    match mode {
        NatsPubMode::Sync => Ok(PublishMode::Sync),
        NatsPubMode::Async => Ok(PublishMode::Async),
        NatsPubMode::Batch => Ok(PublishMode::Atomic),
        NatsPubMode::Fast => Err(bad_input(anyhow::anyhow!(
            "`bench js pub fast`: natsplan has no fast batch publisher yet (nats-server 2.14's flow-controlled \
             batches); `bench js pub async SUBJECT --batch N` keeps N publishes in flight per client, `bench js \
             pub atomic SUBJECT --batch N` commits atomic batches of N"
        ))),
    }
}

/// `bench js` and `bench js pub MODE [SUBJECT]`: SUBJECT names the subject of the stream the run creates,
/// or with --stream the subject to publish to on that existing stream (as --subject does).
fn js_parsed(publish: PublishMode, a: JsArgs, positional: Option<String>) -> Result<Parsed, Failure> {
    let (subject, created_on) = match (positional, a.subject, &a.existing_stream) {
        (Some(p), Some(f), _) => {
            return Err(bad_input(anyhow::anyhow!(
                "SUBJECT {p} and --subject {f}: give the subject once (the positional SUBJECT is natscli's form)"
            )))
        }
        (Some(p), None, Some(_)) => (Some(p), None),
        (Some(p), None, None) => (None, Some(p)),
        (None, f, _) => (f, None),
    };
    let w = js_workload(
        a.clients,
        a.stream,
        publish,
        a.batch,
        existing(a.existing_stream, subject),
        a.consumers,
    )?;
    Ok(Parsed::new(w, a.count.msgs, a.rate, no_core(), a.client, a.common).on(created_on, a.multi.max()))
}

/// `bench consumer MODE` and natscli's `bench js ordered|consume|fetch`.
fn consumer_parsed(mode: ConsumeMode, a: ConsumerArgs) -> Result<Parsed, Failure> {
    let w = BenchWorkload::Consume {
        mode: consumer_mode(mode, a.push, a.client)?,
        clients: a.clients,
        batch: a.batch,
        replicas: a.stream.replicas,
        storage: a.stream.storage,
        target: existing(a.existing_stream, a.subject),
    };
    let core = CoreOpts {
        sub_sleep: a.sleep,
        ..no_core()
    };
    let mut p = Parsed::new(
        w,
        a.count.msgs,
        no_rate(),
        core,
        ClientOpt { client: a.client },
        a.common,
    );
    p.consumer_leader = a.consumer_leader;
    Ok(p)
}

/// `--leader` where it means something: runs that write to a stream (js, kv, obj), in one process.
fn leader_placement(
    w: &bench::BenchWorkload,
    leader: Option<bench::LeaderPlacement>,
    agents: bool,
) -> Result<bench::LeaderPlacement, Failure> {
    use bench::{BenchWorkload, LeaderPlacement};
    let Some(l) = leader.filter(|&l| l != LeaderPlacement::Any) else {
        return Ok(LeaderPlacement::Any);
    };
    if !matches!(
        w,
        BenchWorkload::Js { .. }
            | BenchWorkload::JsExisting { .. }
            | BenchWorkload::Kv { .. }
            | BenchWorkload::KvGet { .. }
            | BenchWorkload::Obj { .. }
    ) {
        let hint = match w {
            BenchWorkload::Consume { .. } => "; to place each reader by its consumer's leader, use --consumer-leader",
            _ => "",
        };
        return Err(bad_input(anyhow::anyhow!(
            "--leader {}: only js, kv and obj runs write to a stream leader; leave --leader out for `{}`{hint}",
            l.as_str(),
            w.name()
        )));
    }
    if agents {
        return Err(bad_input(anyhow::anyhow!(
            "--leader {} with --agents: agents connect by worker index; run without --agents, or leave --leader out",
            l.as_str()
        )));
    }
    Ok(l)
}

pub fn run(g: &Global, a: BenchArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    super::refuse_unless::<bench::result::BenchResult>(format)?;
    let p = parse(*a.what)?;
    let common = p.common;
    let (conn, lab_monitors) = super::connect_to(&common.conn, &p.core.monitor, common.lab.as_deref())?;
    // The lab's monitors serve the runs that read /varz (core and flood: slow consumers).
    let monitor = match p.workload {
        BenchWorkload::Core { .. } | BenchWorkload::Flood { .. } => lab_monitors,
        _ => p.core.monitor.clone(),
    };
    let leader = leader_placement(&p.workload, common.leader, common.agents.is_some())?;
    let consumer_leader = p.consumer_leader.unwrap_or_default();
    if consumer_leader != bench::LeaderPlacement::Any && common.agents.is_some() {
        return Err(bad_input(anyhow::anyhow!(
            "--consumer-leader {} with --agents: agents connect by worker index; run without --agents, or leave \
             --consumer-leader out",
            consumer_leader.as_str()
        )));
    }
    let spec = BenchSpec {
        workload: p.workload,
        msgs: p.msgs,
        size: common.size,
        rate_per_s: p.rate,
        backlog_cutoff: p.backlog_cutoff,
        timeout: common.timeout,
        monitor,
        keep: common.keep,
        sub_sleep: p.core.sub_sleep,
        client: p.client,
        sub_buffer: p.core.sub_buffer,
        progress: !common.no_progress && std::io::stderr().is_terminal(),
        leader,
        consumer_leader,
        subjects: p.subjects,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(cannot_run)?;
    if let Some(n) = common.agents {
        let out = run_on_agents(
            &rt,
            &conn,
            &spec,
            n,
            common.agents_timeout,
            format,
            common.csv.as_deref(),
        );
        rt.shutdown_timeout(Duration::from_millis(100));
        return out;
    }
    let cancel = bench::Cancel::new();
    let result = rt.block_on(async {
        // SIGINT/SIGTERM stop the load; the run then reports what it measured and removes its assets.
        let _signals = cancel.trip_on_signals().map_err(cannot_run)?;
        bench::run_with(&conn, &spec, &cancel).await
    })?;
    // Dropping the runtime would wait for background tasks of the clients; they hold nothing we need.
    rt.shutdown_timeout(Duration::from_millis(100));
    if let Some(path) = &common.csv {
        super::save_as("--csv", path, &crate::report::bench::CsvFile(&result), Format::Csv)?;
    }
    super::print(g, &result)?;
    Ok(completion_outcome(&result.completion))
}

/// A run that did not do all it was asked is a failed check (exit 1); one a signal stopped exits 130.
fn completion_outcome(c: &bench::result::Completion) -> Outcome {
    match c.shortfall() {
        None => Outcome::Ok,
        Some(why) if c.interrupted => Outcome::Interrupted(why),
        Some(why) => Outcome::CheckFailed(format!("the run is {why}")),
    }
}

/// `--agents N`: discover, run the spec spread over the agents, print the merged result and each agent's
/// part. Exit 1 when the run is incomplete.
fn run_on_agents(
    rt: &tokio::runtime::Runtime,
    conn: &ConnSpec,
    spec: &BenchSpec,
    n: usize,
    timeout: Duration,
    format: Format,
    csv: Option<&std::path::Path>,
) -> Result<Outcome, Failure> {
    use crate::agent::{report, AgentsOptions, Coordinator};
    bench::check(spec)?;
    if spec.subjects != bench::Subjects::default() {
        return Err(bad_input(anyhow::anyhow!(
            "--agents with a SUBJECT or --multisubject: agents run on the run's own subjects; drop --agents, \
             or the SUBJECT and --multisubject"
        )));
    }
    if matches!(
        spec.workload,
        BenchWorkload::Consume { .. }
            | BenchWorkload::KvGet { .. }
            | BenchWorkload::JsGet { .. }
            | BenchWorkload::JsExisting { .. }
    ) {
        return Err(bad_input(anyhow::anyhow!(
            "--agents runs publishers, KV puts and object operations; consumer, KV get, stream get and --stream runs \
             run here only (drop --agents)"
        )));
    }
    if let BenchWorkload::Js { consumers: n @ 1.., .. } = spec.workload {
        return Err(bad_input(anyhow::anyhow!(
            "--consumers {n} with --agents: the readers run here only (each reads every message of the whole run); \
             drop --agents or --consumers"
        )));
    }
    let mut opts = AgentsOptions::new(n);
    opts.discover_timeout = timeout;
    let cancel = bench::Cancel::new();
    let out = rt.block_on(async {
        // SIGINT/SIGTERM: the agents abort the row, its assets are removed, exit 130.
        let _signals = cancel.trip_on_signals().map_err(|e| Failure::CannotRun(e.into()))?;
        let mut c = Coordinator::connect(conn, opts).await?;
        c.set_cancel(cancel.clone());
        for l in report::summary_lines(&c.summary) {
            eprintln!("{l}");
        }
        let d = c.run(spec).await?;
        Ok::<_, Failure>((c.summary.clone(), d))
    });
    let (summary, d) = match out {
        Err(e) if cancel.is_cancelled() => return Ok(Outcome::Interrupted(format!("bench --agents: {e}"))),
        other => other?,
    };
    if let Some(path) = csv {
        super::save_as("--csv", path, &crate::report::bench::CsvFile(&d.result), Format::Csv)?;
    }
    let shown = crate::report::bench::OnAgents {
        run: &d,
        summary: &summary,
    };
    super::print_as(&shown, format, 120)?;
    if !d.agents.complete {
        let lost: Vec<String> = d
            .agents
            .agents
            .iter()
            .filter(|a| a.status != crate::agent::ShareStatus::Completed)
            .map(|a| a.name.clone())
            .collect();
        return Ok(Outcome::CheckFailed(format!(
            "the run is incomplete: agent(s) {} did not finish their share",
            lost.join(", ")
        )));
    }
    Ok(completion_outcome(&d.result.completion))
}
