//! `natsplan bench`'s flags: the clap types `parse` turns into a `bench::BenchSpec`. Moved out of
//! commands/bench.rs whole.

use super::*;

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
    pub(super) fn max(&self) -> Option<u64> {
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

pub(super) fn parse_size(s: &str) -> Result<u64, String> {
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
