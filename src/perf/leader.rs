//! The stream leader. A stream has one leader, so its publish rate is bounded by what the leader's host does
//! per message (CPU, scaled from the nearest calibrated host class), by what the clients keep in flight
//! (sync publishes or an async window), and under `sync_interval: always` by the fsyncs in the commit path.
//!
//! What `always` costs, read from nats-server 2.15 (main, 2026-08-21):
//! - R>1: the RAFT WAL is a filestore with `AsyncFlush: false, SyncAlways: <opt>` (jetstream_cluster.go,
//!   the WAL's `FileStoreConfig` in `createRaftGroup`), so every append entry stored by `storeToWAL`
//!   (raft.go; the leader in `sendAppendEntryLocked` before it sends, each follower in
//!   `processAppendEntry` before it acks) ends in `flushPendingMsgsLocked` → `mb.mfd.Sync()`
//!   (filestore.go): one fsync per append entry on the leader, then one on the follower, in series. The
//!   leader loop (`runAsLeader`) batches every queued proposal into one entry, up to 256 KiB or 4096
//!   entries (`maxBatch`, `maxEntries`), so a busy leader pays one fsync for many messages.
//! - R>1: the stream's own store relaxes `SyncAlways` to `SyncOnFlush` (stream.go, the store setup in
//!   `addStreamWithAssignment`; filestore.go `updateDurabilitySettingsLocked`, #8447) and fsyncs only
//!   around snapshots, but it loses the async flush (`AsyncFlush = !SyncAlways && Replicas > 1`), so each
//!   applied message is written with its own `write` (filestore.go `writeMsgRecordLocked`: `flush &&
//!   fip` → `flushPendingMsgsLocked`) on every replica: a per-message cost (`write_s` of the store probe).
//! - R1: the stream store keeps `SyncAlways`: every stored message is fsynced (`flushPendingMsgsLocked`
//!   → `mb.mfd.Sync()`) before the ack.
//!
//! Host classes: each calibration file with JetStream rows describes one host class (its
//! `hardware.server_model`, else its cores). A prediction uses the class nearest to the target server model
//! and scales the per-message work by single-thread speed and by the cores the leader can use; the band
//! widens with that distance (`distance`).

use crate::catalog::{Catalog, ServerModel};
use crate::perf::band::{distance_width, own_and_carried};
use crate::perf::calibration::{CalibrationFile, CalibrationSet};
use crate::perf::subjects::{self, SubjectsTerm};
use crate::perf::Kind;
use crate::stats::median_or_zero;
use serde::Serialize;

#[path = "leader_shape.rs"]
mod shape;
pub use shape::SizeShape;

/// RAFT append-entry caps in the leader loop (raft.go `runAsLeader`: `maxBatch`, `maxEntries`).
const AE_MAX_BYTES: f64 = 256.0 * 1024.0;
const AE_MAX_ENTRIES: f64 = 4096.0;
/// Bytes of RAFT and stream framing per message in an append entry (subject, headers, entry header): an
/// assumption of the order of filestore.go's record overhead.
const AE_MSG_OVERHEAD: f64 = 64.0;
/// A store `write` per message when no probe measured one: 5 µs of a reference core (an assumption; the
/// loopback lab's probe measured 2–7 µs for a small write into the page cache).
const DEFAULT_WRITE_S: f64 = 5e-6;
/// What nats-server spends on each replica per message when `always` makes a replicated stream's store
/// write in place, as a multiple of the store probe's bare `write` on the same host. Measured on the quiet
/// loopback lab (calibration/lab-loopback-js-quiet.yaml, R3, 2 publishers × window 500): always − delayed
/// time per message, less the synced bytes (`sync_copies`), over the 3 replicas on 2 cores, is 3.3, 3.7
/// and 3.8 µs at 64 B, 512 B and 4 KiB against the probe's 0.707 µs bare write (4.7–5.4×). Held out: a
/// later 3-round ladder on the same lab gave 3.45 and 3.1 µs at 64 B and 512 B against a 0.7 µs probe.
/// The R1 rows do not identify it: their in-place write reads 0.5–2 µs on the same host (nats-server's R1
/// path is inline in the read loop, the R>1 one adds the apply loop's locking and a write per replica).
const ALWAYS_WRITE_PER_PROBE_WRITE: f64 = 5.0;
/// Half-width (log units) every leader prediction carries for the model's form (what it leaves out), on
/// top of the class's own fit residuals: an assumption.
pub const FORM_WIDTH: f64 = 0.15;

/// Work units per message on the leader: its own store plus half a unit per follower (append entries out,
/// acks in); the CPU model of `cpu_cores` uses the same units.
pub fn leader_units(r: u8) -> f64 {
    1.0 + 0.5 * (r.max(1) as f64 - 1.0)
}

/// Work units per message on one host running the whole cluster and the publisher (the loopback lab).
fn box_units(r: u8) -> f64 {
    leader_units(r) + (r.max(1) as f64 - 1.0) + 1.0
}

/// Pipeline stages one stream's leader work spreads over: R1 runs inline in the publisher's read loop
/// (stream.go `processJetStreamMsg` under the stream lock); R>1 splits it between the proposing read loop,
/// the RAFT leader loop and the apply loop, unevenly (2 is an assumption).
pub fn stream_parallelism(r: u8) -> f64 {
    if r > 1 {
        2.0
    } else {
        1.0
    }
}

/// The hardware a stream leader runs on, as the model sees it.
#[derive(Debug, Clone, Serialize)]
pub struct HostClass {
    pub server_model: String,
    pub cores: f64,
    pub cpu_speed: f64,
    pub co_located: u32,
}

impl HostClass {
    pub fn of(m: &ServerModel) -> HostClass {
        HostClass {
            server_model: m.name.clone(),
            cores: m.cores.max(1) as f64,
            cpu_speed: m.cpu_speed.max(0.05),
            co_located: m.co_located.max(1),
        }
    }

    /// Messages/s per unit of per-message work (1 ÷ speed-1 core-seconds): the lower of the host's cores
    /// over all the work on it and the stream's parallel stages over the leader's work.
    fn capacity(&self, r: u8) -> f64 {
        let (host_units, own) = self.units(r);
        self.cpu_speed * (self.cores / host_units).min(stream_parallelism(r) / own)
    }

    /// Work units per message on the whole host, and on the leader.
    pub(crate) fn units(&self, r: u8) -> (f64, f64) {
        let host = if self.co_located > 1 {
            box_units(r)
        } else {
            leader_units(r)
        };
        (host, leader_units(r))
    }

    /// Reference-core equivalents the leader gets (for the distance between classes).
    fn leader_cores(&self, r: u8) -> f64 {
        self.capacity(r) * leader_units(r)
    }

    /// Distance from this (calibrated) host to a target host (`LeaderClass::distance`; `assumed` when the
    /// calibration did not state this host's figures).
    pub fn distance(&self, assumed: bool, to: &HostClass, r: u8) -> f64 {
        let assumed = if assumed { 0.2 } else { 0.0 };
        if to.server_model.eq_ignore_ascii_case(&self.server_model) {
            return assumed / 2.0;
        }
        let speed = (to.cpu_speed / self.cpu_speed).ln().abs();
        let cores = 0.5 * (to.leader_cores(r) / self.leader_cores(r)).ln().abs();
        let shared = if (to.co_located > 1) != (self.co_located > 1) {
            0.3
        } else {
            0.0
        };
        0.1 + speed + cores + shared + assumed
    }
}

/// Store write and fsync latency measured on a class's host (`store-probe` rows, `natsplan calibrate`).
#[derive(Debug, Clone, Serialize)]
pub struct StoreProbe {
    /// One small `write` into the page cache (seconds).
    pub write_s: f64,
    /// One small write followed by `fsync` (seconds): the leader's WAL fsync per append entry.
    pub fsync_s: f64,
    /// One RAFT commit's fsync chain with the whole cluster on the host (leader, then two followers at
    /// once), when the probe measured it (seconds).
    pub commit_s: Option<f64>,
    /// Seconds per byte the device spends on a synced write beyond a small one (the probe's 256 KiB and
    /// 4 KiB fsyncs), when the probe measured it.
    pub sync_byte_s: Option<f64>,
    pub source: String,
}

/// One calibrated host class: the per-message work law fitted from its delayed-sync JetStream rows.
#[derive(Debug, Clone, Serialize)]
pub struct LeaderClass {
    /// The calibration file (id) that measured it; predictions name it.
    pub id: String,
    pub host: HostClass,
    /// True when the host's figures were not stated by the file (taken from the catalog or assumed).
    pub host_assumed: bool,
    /// Per-message work in reference-core seconds: `unit_s + unit_byte_s × bytes` (the line; also what
    /// `perf::servers` spreads over a site's servers), unless `shape` prices it.
    pub unit_s: f64,
    pub unit_byte_s: f64,
    /// Where leaving each measured size out prices it better by its neighbours' chord than by the line
    /// (classes fitted to `always` rows: `SizeShape`): the work per message by
    /// size through the rows' medians, and its band. None: the line prices it.
    pub shape: Option<SizeShape>,
    /// The stream store's in-place write per message (reference-core seconds): fitted from the class's R1
    /// rows (R1 always flushes in place) when it has them, else the probe's bare write, else 5 µs.
    pub write_s: f64,
    pub write_source: String,
    /// What each replica spends writing a message in place under `always` at R>1 (reference-core seconds):
    /// the probe's bare write × `ALWAYS_WRITE_PER_PROBE_WRITE` when the class has a probe, else `write_s`.
    pub always_write_s: f64,
    pub always_write_source: String,
    /// True when the class measured R1 publishes (the cap "R>1 never above R1" then rests on data).
    pub r1_measured: bool,
    /// True when the file says its publishers connected to servers other than the stream leader's
    /// (`conditions.leader: remote…`, what `calibrate` writes since `bench --leader`): its predictions are
    /// for that case, and say so.
    pub leader_remote: bool,
    pub probe: Option<StoreProbe>,
    /// The closed-loop base latency of async publishing (seconds), when the file measured a small window
    /// (rows with `window` below `SMALL_WINDOW`): `n` publishes in flight carry `n ÷ (a + n·t_l)` per
    /// second, `t_l` the leader's time per message. Without it the window is priced against the
    /// synchronous round trip (before issue 37). The matrix's run 1 (2026-12-05, R3 1 KiB, 2 publishers)
    /// read 1.0 ms at 32 in flight and 6.5 ms at 512: a straight line of slope ≈ t_l (11 µs against the
    /// leader's 12.4 µs) through about 0.6 ms.
    pub async_base_s: Option<f64>,
    /// The replica counts of the rows, when the class was fitted to rows measured under `sync_interval:
    /// always` (a file with no delayed-sync rows; empty otherwise): its leader's time and base latency hold
    /// the fsyncs, so an `always` target at one of these counts is priced as measured, with no fsync cycle
    /// added (`predict::js`); at another count it is not.
    pub always_replicas: Vec<u8>,
    /// What many distinct subjects add to the per-message work (`SubjectsTerm`): measured by the file's
    /// many-subjects rows, else assumed.
    pub subjects: SubjectsTerm,
    /// What an asynchronous KV put costs the stream leader against an asynchronous publish, read off the
    /// file's asynchronous KV rows and its publish rows of the same shape (`KvPutRatio`); None when the file
    /// measured no such pair (the synchronous rows' ratio, `sync_law::op_factor`, prices it then).
    pub kv_put: Option<KvPutRatio>,
    /// What each reader adds to a synchronous publisher's round trip on the file's host, read off its readers
    /// rows against its synchronous publish rows of the same shape (`ReadersStretch`); None when the file
    /// measured no such pair (perf::model::readers' loopback-lab figure prices it then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readers_stretch: Option<ReadersStretch>,
    /// Root-mean-square of log(predicted ÷ measured) over the rows the law was fitted to, and how many.
    pub rms_log: f64,
    pub rows: usize,
}

/// The median asynchronous publish rate over the median asynchronous KV put rate, at one shape (replicas,
/// size, clients, window) measured both ways by one file under one sync mode (calibrate's `kvasync` point
/// beside its async publish point of the same shape): the leader's work per KV put over its work per
/// publish, both through the same publish path, so the ratio holds neither a synchronous client's round
/// trip nor, under `always`, a fsync wait — which the synchronous rows' ratio (`sync_law::op_factor`) does.
/// The prediction matrix (runs 12-17, `always`) priced asynchronous KV puts with that ratio 25-55 % low.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KvPutRatio {
    pub ratio: f64,
    pub replicas: u8,
    pub bytes: f64,
    pub clients: f64,
    pub window: f64,
    /// KV rows and publish rows read.
    pub kv_rows: usize,
    pub publish_rows: usize,
    /// The standard error of ln(ratio) from the two sets of rows' scatter (√(s²_kv/n_kv + s²_pub/n_pub),
    /// s the sample standard deviation of the logarithms; 0 for a set of one row).
    pub se_log: f64,
}

/// What readers add to a synchronous publisher's round trip, as a share of it, from the median publish rate
/// of a file's synchronous rows of one shape (replicas, size, publishers) without readers (`base`) and with
/// consumers reading every message as it is written (`with`, calibrate's readers points, row kind
/// `js-readers`). A synchronous publisher's rate is its round trip's inverse while the host has cores to
/// spare (calibrate's points: four publishers, far below the stream's ceiling), so `base ÷ with` is the
/// stretch `k(n)` the readers' deliveries put on each round trip. With one reader count measured the stretch
/// is linear in the readers, `(k − 1) ÷ n` each (`per_reader` = `further_reader`); with two counts, the first
/// reader's share and what each further one adds are read apart (`further_measured`): the loopback lab
/// (2026-12-07, R3 1 KiB, 1/4/16/64 synchronous publishers with 0-3 readers, medians of 3 passes) read the
/// first reader at 0.34-0.37 at every publisher count and each further one at 0.07-0.41 (mean 0.21), so a
/// linear stretch from one reader priced three readers 20 % low.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadersStretch {
    /// What the first reader adds (with one reader count measured: each reader, `(k − 1) ÷ n`).
    pub per_reader: f64,
    /// What each reader beyond the first adds (`per_reader` unless two reader counts were measured).
    pub further_reader: f64,
    /// Whether `further_reader` was measured (two reader counts) or carried from `per_reader`.
    pub further_measured: bool,
    pub replicas: u8,
    pub bytes: f64,
    pub publishers: f64,
    /// The readers the stretch was read at: the most the rows measured where two counts are read apart,
    /// else the fewest.
    pub readers: f64,
    /// Readers rows and publish rows read.
    pub readers_rows: usize,
    pub publish_rows: usize,
}

impl ReadersStretch {
    /// What `n` readers multiply a synchronous client's round trip by: `1 + per_reader + further_reader ×
    /// (n − 1)` (1 without readers).
    pub fn stretch(&self, n: f64) -> f64 {
        if n <= 0.0 {
            return 1.0;
        }
        if !self.further_measured {
            return 1.0 + self.per_reader * n;
        }
        1.0 + self.per_reader + self.further_reader * (n - 1.0)
    }
}

#[cfg(test)]
impl LeaderClass {
    /// A class for unit tests: `unit_s` per message (no per-byte term), `write_s` per in-place write (delayed
    /// and `always`), nothing measured beyond them, `rows` rows and no residual.
    pub(crate) fn for_tests(id: &str, host: &HostClass, unit_s: f64, write_s: f64, rows: usize) -> LeaderClass {
        LeaderClass {
            id: id.into(),
            host: host.clone(),
            host_assumed: false,
            unit_s,
            unit_byte_s: 0.0,
            shape: None,
            write_s,
            write_source: String::new(),
            always_write_s: write_s,
            always_write_source: String::new(),
            r1_measured: false,
            leader_remote: false,
            probe: None,
            async_base_s: None,
            subjects: crate::perf::subjects::SubjectsTerm::assumed(0.0),
            kv_put: None,
            readers_stretch: None,
            always_replicas: Vec::new(),
            rms_log: 0.0,
            rows,
        }
    }
}

impl LeaderClass {
    /// Per-message work (reference-core seconds) for `bytes`.
    pub fn unit(&self, bytes: f64) -> f64 {
        match &self.shape {
            Some(s) => s.unit(bytes),
            None => self.unit_s + self.unit_byte_s * bytes,
        }
    }

    /// Distance from this class to a target host. The class's own server model is distance 0 (0.1 when the
    /// file did not state the host's cores itself); any other host adds 0.1 for being another machine, the
    /// log speed ratio, half the log ratio of the cores the leader gets, 0.3 when one shares its cores with
    /// the whole cluster and the other does not, and 0.2 when the class's host was not stated.
    pub fn distance(&self, to: &HostClass, r: u8) -> f64 {
        self.host.distance(self.host_assumed, to, r)
    }

    /// Half-width (log units) of the class's own fit at `bytes`: a 90 % interval of the rows' scatter about
    /// the line (inflated for the two terms it spent), or the shape's (`SizeShape::width`: the repeats'
    /// scatter and the interpolation error at the target's distance from a measured size).
    pub fn fit_width(&self, bytes: f64) -> f64 {
        if let Some(s) = &self.shape {
            return s.width(bytes);
        }
        let n = self.rows.max(3) as f64;
        1.645 * self.rms_log * (n / (n - 2.0)).sqrt()
    }
}

impl LeaderClass {
    /// The class's own host as a catalog server model (to predict for the machine a file measured).
    pub fn server_model(&self) -> ServerModel {
        ServerModel {
            name: self.host.server_model.clone(),
            cores: self.host.cores.round().max(1.0) as u32,
            memory_bytes: 8 << 30,
            nic_bits_per_s: 10e9,
            source: format!("the host calibration {} measured", self.id),
            cpu_speed: self.host.cpu_speed,
            co_located: self.host.co_located,
            perf_source: format!("the host calibration {} measured", self.id),
            hardware: Default::default(),
        }
    }
}

#[path = "leader_fit.rs"]
mod fit;
pub(crate) use fit::host_of;
pub use fit::{fit_classes, weighted_line, SMALL_WINDOW};

/// The class nearest to a target host, and its distance; None without any class.
pub fn nearest<'a>(classes: &'a [LeaderClass], to: &HostClass, r: u8) -> Option<(&'a LeaderClass, f64)> {
    classes
        .iter()
        .map(|c| (c, c.distance(to, r)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// How clients publish to the stream.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Publish {
    /// Publishers (connections) publishing to the stream.
    pub publishers: f64,
    /// Publishes in flight per publisher (1 = synchronous).
    pub window: f64,
    /// Synchronous publishers only (window 1): what each other publisher in flight adds to one's round trip
    /// (seconds; perf::sync_law's D): rate = publishers ÷ (round trip + D·(publishers − 1)).
    pub saturation_s: f64,
}

/// What one stream's leader, publish mode and sync mode allow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamInput {
    pub replicas: u8,
    pub bytes: f64,
    pub always: bool,
    pub publish: Publish,
    /// One fsync of the leader's (and each follower's) store: seconds.
    pub fsync_s: f64,
    /// The fsync chain of one commit (leader then a follower) when measured on the host; None = 2 × fsync.
    pub commit_s: Option<f64>,
    /// Seconds per byte an fsync spends writing the message out (1 ÷ the volume's write bandwidth, or the
    /// store probe's per-byte figure on the calibrated host).
    pub fsync_byte_s: f64,
    /// Copies of each message the synced device writes under `always` (`sync_copies`).
    pub sync_copies: f64,
    /// One small store write: reference-core seconds.
    pub write_s: f64,
    /// Unloaded round trip of one synchronous publish at delayed sync: seconds.
    pub round_trip_s: f64,
    /// The class's closed-loop base latency of async publishing (`LeaderClass::async_base_s`), when
    /// measured: a window of async publishes is then priced `n ÷ (a + n·t_l)` under delayed sync.
    pub async_base_s: Option<f64>,
    /// Distinct subjects the stream's messages are published on (1: one subject; `SubjectsTerm`).
    pub subjects: f64,
    /// Reference-core seconds per message the stream's readers (consumers reading every message while
    /// the publishers write) spend on the leader's host (`predict::readers_work`): on the host's cores,
    /// beside the leader's own work, not in the stream's own stages. 0: no readers.
    pub readers_s: f64,
    /// Reference-core seconds per message the readers spend under the store's lock (`predict::readers_work`):
    /// an R1 stream's one stage waits behind it, beside the leader's work per message (`leader_time_s`
    /// applies it at R1 only). 0: no readers, or none priced.
    pub readers_serial_s: f64,
}

/// What binds a stream's rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Binding {
    LeaderCpu,
    SyncRoundTrips,
    /// Synchronous publishers past the knee: each waits behind the others' operations (perf::sync_law's D).
    SyncSaturation,
    AsyncWindow,
    Fsync,
}

impl Binding {
    pub fn label(self) -> &'static str {
        match self {
            Binding::LeaderCpu => "stream leader CPU (one leader per stream)",
            Binding::SyncRoundTrips => "client round trips (sync publish)",
            Binding::SyncSaturation => "sync publishers queue at the stream leader (more add little)",
            Binding::AsyncWindow => "async publish window (publishes in flight)",
            Binding::Fsync => "fsync latency (sync always: WAL fsync per append entry)",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamRate {
    pub per_s: f64,
    pub binding: Binding,
    /// Mean time from publish to ack at that rate (seconds).
    pub latency_s: f64,
    /// The leader's own ceiling (CPU, and the fsync cycle under `always`) with unlimited clients.
    pub leader_per_s: f64,
}

/// Whether the stream store writes every message with its own `write` ("flush in place"): stream.go sets
/// `AsyncFlush = !SyncAlways && Replicas > 1`, and filestore.go's `writeMsgRecordLocked` flushes in place
/// when `fip = !AsyncFlush`; so R1 always does, and R>1 only under `always`.
pub fn flushes_in_place(replicas: u8, always: bool) -> bool {
    replicas <= 1 || always
}

/// The two CPU bounds on a host for per-message work `u` (reference-core seconds), with `write_s` per
/// in-place store write: (the host's cores over all its work, the stream's stages over the leader's work),
/// each as (numerator, units of u, writes) so a rate is `speed × numerator ÷ (units·u + writes·write_s)`.
fn bounds(host: &HostClass, r: u8, always: bool) -> [(f64, f64, f64); 2] {
    let (host_units, own) = host.units(r);
    let fip = flushes_in_place(r, always);
    let w_own = if fip { 1.0 } else { 0.0 };
    let w_host = if fip && host.co_located > 1 { r as f64 } else { w_own };
    [(host.cores, host_units, w_host), (stream_parallelism(r), own, w_own)]
}

/// Per-message work (reference-core seconds) that makes `host` carry `rate` (the fit's inverse of
/// `leader_time_s`): the smaller of the two bounds' solutions.
fn unit_for(host: &HostClass, r: u8, always: bool, write_s: f64, rate: f64) -> f64 {
    bounds(host, r, always)
        .iter()
        .map(|(num, units, writes)| ((host.cpu_speed * num / rate) - writes * write_s) / units)
        .fold(f64::INFINITY, f64::min)
        .max(1e-9)
}

/// Seconds of leader time per message on `host` (the reciprocal of its CPU ceiling): the per-message work
/// plus, where the store flushes in place, a store write per message on every replica (a host running the
/// whole cluster pays all of them, a dedicated leader its own).
pub fn leader_time_s(class: &LeaderClass, host: &HostClass, inp: &StreamInput) -> f64 {
    let u = class.unit(inp.bytes) + class.subjects.work_s(inp.subjects);
    let [host_bound, own] = bounds(host, inp.replicas, inp.always);
    // The readers' work shares the host's cores (`bounds`' first); at R1 it is in the stream's one stage
    // too (`StreamInput::readers_serial_s`).
    let serial = if inp.replicas <= 1 { inp.readers_serial_s } else { 0.0 };
    let x = [(host_bound, inp.readers_s), (own, serial)]
        .iter()
        .map(|((num, units, writes), readers)| host.cpu_speed * num / (units * u + writes * inp.write_s + readers))
        .fold(f64::INFINITY, f64::min);
    1.0 / x
}

/// The rate one stream sustains: closed loop of `publishers × window` messages in flight against the
/// leader's time per message, and under `always` the fsync cycle of the leader loop.
pub fn stream_rate(t_l: f64, inp: &StreamInput) -> StreamRate {
    let n = (inp.publish.publishers * inp.publish.window).max(1.0);
    let p = inp.publish.publishers.max(1.0);
    let sync_pub = inp.publish.window <= 1.0;
    let tau = inp.round_trip_s.max(1e-6)
        + if sync_pub {
            inp.publish.saturation_s.max(0.0) * (p - 1.0)
        } else {
            0.0
        };
    let client = if !sync_pub {
        Binding::AsyncWindow
    } else if inp.publish.saturation_s * (p - 1.0) > inp.round_trip_s {
        Binding::SyncSaturation
    } else {
        Binding::SyncRoundTrips
    };
    if !inp.always {
        if let (false, Some(a)) = (sync_pub, inp.async_base_s) {
            // Closed loop: each of the n publishes in flight waits the base latency and the leader's time
            // for the n ahead of it. What binds is the window while it keeps the leader under 80 % busy.
            let x = n / (a + n * t_l);
            let b = if x * t_l < 0.8 { client } else { Binding::LeaderCpu };
            return StreamRate {
                per_s: x,
                binding: b,
                latency_s: n / x,
                leader_per_s: 1.0 / t_l,
            };
        }
        let (x, b) = if n / tau < 1.0 / t_l {
            (n / tau, client)
        } else {
            (1.0 / t_l, Binding::LeaderCpu)
        };
        return StreamRate {
            per_s: x,
            binding: b,
            latency_s: n / x,
            leader_per_s: 1.0 / t_l,
        };
    }
    let f = inp.fsync_s;
    // Every copy of the message the device writes (`sync_copies`) is device time the commit waits behind.
    let device = inp.sync_copies.max(1.0) * (inp.bytes + AE_MSG_OVERHEAD) * inp.fsync_byte_s;
    let t_l = t_l + device;
    if inp.replicas <= 1 {
        // R1: an fsync per stored message, in the publisher's read loop.
        let leader = 1.0 / (t_l + f);
        let window = n / (tau + f + device);
        let (x, b) = if window < leader {
            (window, client)
        } else {
            (leader, Binding::Fsync)
        };
        return StreamRate {
            per_s: x,
            binding: b,
            latency_s: n / x,
            leader_per_s: leader,
        };
    }
    // R>1: the leader loop's cycle T = f + B·t_l takes the B messages that arrived during the previous one
    // (B = x·T, so T = f ÷ (1 − x·t_l)); a message waits in the queue (T − f), then for the fsync chain
    // (the leader's WAL fsync, then a follower's: 2f, or the probe's measured chain) before the ack:
    // L = τ + chain + (T − f). Closed loop: x = n ÷ L(x), solved by bisection on (0, 1 ÷ t_l).
    let bmax = (AE_MAX_BYTES / (inp.bytes + AE_MSG_OVERHEAD)).clamp(1.0, AE_MAX_ENTRIES);
    let leader = bmax / (f + bmax * t_l);
    let chain = inp.commit_s.unwrap_or(2.0 * f);
    let latency = |x: f64| tau + chain + f * x * t_l / (1.0 - x * t_l).max(1e-9);
    let (mut lo, mut hi) = (0.0, (1.0 / t_l).min(leader));
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if n / latency(mid) > mid {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let x = lo;
    // Name what binds: the fsync cycle when removing it would raise the rate by more than a quarter.
    let without = (n / tau).min(1.0 / t_l);
    let b = if x < 0.75 * without {
        Binding::Fsync
    } else if n / tau < 1.0 / t_l {
        client
    } else {
        Binding::LeaderCpu
    };
    StreamRate {
        per_s: x,
        binding: b,
        latency_s: latency(x),
        leader_per_s: leader.min(1.0 / t_l),
    }
}

/// Copies of each message a synced device writes under `always`: at R>1 the RAFT WAL's (fsynced per append
/// entry) and the stream store's in-place write (written back meanwhile on the same device), at R1 the
/// store's; times the replicas sharing the device (`co_located`: a host running the whole cluster on one
/// disk). Under `always` each commit waits for a device that must keep up with all of them. The quiet
/// loopback lab (calibration/lab-loopback-js-quiet.yaml) measured 5.9 ns per payload byte more under
/// `always` than under delayed sync at R3 (64 B → 4 KiB), 6.8 × the store probe's 0.86 ns per synced
/// byte: the 6 copies (3 WALs, 3 stores) this counts.
pub fn sync_copies(replicas: u8, co_located: bool) -> f64 {
    let per_replica = if replicas > 1 { 2.0 } else { 1.0 };
    per_replica * if co_located { replicas.max(1) as f64 } else { 1.0 }
}

/// Band half-width (log units) for a prediction from `class` at `distance` for messages of `bytes`: its fit
/// residuals at that size and the
/// model's form, in quadrature on the class's own host, summed with the distance's allowance elsewhere (a
/// shift of the whole host that nothing measured on the class's host bounds; perf::band says why both).
pub fn width(class: &LeaderClass, distance: f64, bytes: f64) -> f64 {
    own_and_carried(&[class.fit_width(bytes), FORM_WIDTH], distance_width(distance))
}

/// The store's in-place write per message (reference-core seconds) the class measured or assumed, at
/// `replicas` under the sync mode: R>1 writes in place only under `always` (`flushes_in_place`), at the
/// cost measured for that path.
pub fn write_s(class: &LeaderClass, replicas: u8, always: bool) -> f64 {
    if replicas > 1 && always {
        class.always_write_s
    } else {
        class.write_s
    }
}

#[cfg(test)]
#[path = "leader_tests.rs"]
mod tests;
