//! The performance model: explainable terms fitted from calibration rows, and a prediction for one cluster
//! shape (servers, replicas, sync mode, message or object size, workers, storage volume).
//!
//! A worker's operation costs a fixed time per operation and per message, a time per byte, one RAFT round
//! per commit round when replicated, and — with `sync_interval: always` — fsyncs whose latency is the
//! volume's write latency (disk, RAID level, array write cache) plus the bytes written to the volume's data
//! disks. Object puts are 128 KiB chunks published asynchronously (one commit round) plus a metadata
//! message (a second round). Workers overlap their latencies but contend at the stream leader, which the
//! Universal Scalability Law's σ captures; the fsync's byte transfer does not overlap (one device queue).
//! Consumers on the same server slow publishers. Hard ceilings (disk bandwidth and IOPS with the RAID write
//! penalty and shared groups, array controller limits, NIC with replication fan-out, the stream leader)
//! cap the result, and the lowest one names the bottleneck.
//!
//! Layout: this file holds the shared types; `volume` the storage under a server, `terms` the fitting
//! (calibration rows to terms), `predict` the prediction for one shape.

pub mod always;
pub mod predict;
mod readers;
pub mod terms;
pub mod volume;

pub use predict::predict_shape;
pub use terms::*;
pub use volume::{volume_write_latency_s, VolumeSpec};

use crate::catalog::ServerModel;
use serde::Serialize;

/// Object store chunk size (ADR-20 default, `objDefaultChunkSize`).
pub const CHUNK_BYTES: u64 = 128 * 1024;
/// The catalog disk that stands in for seed 000's unnamed NVMe drives when scaling the per-byte fsync term.
pub const REF_DISK: &str = "nvme-3.84t";
/// The catalog array seed 000 ran on.
pub const REF_ARRAY: &str = "EF600";
/// Consumers per server the consumer-slowdown term is expressed against (seed 000 ran 20).
pub(crate) const REF_CONSUMERS: f64 = 20.0;
/// p99 ÷ average of seed 004's sequential ping (0.734 ms ÷ 0.307 ms): the tail factor for latencies.
pub(crate) const TAIL_P99_OVER_AVG: f64 = 0.734 / 0.307;
/// CPU seconds per replicated message per server: the NATS docs' installation table needed 1 core per
/// server for 100k msgs/s at R3 (reference/nats-facts.md §1.5). Seed 003 (Kafka) shows the shape: linear in
/// rate above a base.
pub(crate) const CPU_S_PER_MSG: f64 = 10e-6;
/// CPU seconds per payload byte per server (copy, checksum, framing): an assumption (~2 GB/s per core).
pub(crate) const CPU_S_PER_BYTE: f64 = 0.5e-9;
/// Idle cores of a nats-server with JetStream on (timers, RAFT heartbeats): an assumption.
pub(crate) const CPU_IDLE_CORES: f64 = 0.05;

/// What kind of operation a prediction is for (the `--kind` flag, `nats bench` style).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Core,
    Js,
    Kv,
    ObjPut,
    ObjGet,
    Ping,
    Flood,
    /// A durable pull consumer read with fetch batches, every message acked (perf::consumer).
    ConsumerFetch,
    /// A durable pull consumer read continuously (`consume`), every message acked.
    ConsumerConsume,
    /// An ordered consumer: no acks, flow-controlled by the server.
    ConsumerOrdered,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::Core,
        Kind::Js,
        Kind::Kv,
        Kind::ObjPut,
        Kind::ObjGet,
        Kind::Ping,
        Kind::Flood,
        Kind::ConsumerFetch,
        Kind::ConsumerConsume,
        Kind::ConsumerOrdered,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Core => "core",
            Kind::Js => "js",
            Kind::Kv => "kv",
            Kind::ObjPut => "obj-put",
            Kind::ObjGet => "obj-get",
            Kind::Ping => "ping",
            Kind::Flood => "flood",
            Kind::ConsumerFetch => "consumer-fetch",
            Kind::ConsumerConsume => "consumer-consume",
            Kind::ConsumerOrdered => "consumer-ordered",
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }
    pub(crate) fn is_jetstream_write(self) -> bool {
        matches!(self, Kind::Js | Kind::Kv | Kind::ObjPut)
    }
    /// A consumer read (perf::consumer prices it).
    pub fn is_consumer(self) -> bool {
        matches!(
            self,
            Kind::ConsumerFetch | Kind::ConsumerConsume | Kind::ConsumerOrdered
        )
    }
}

/// `sync_interval: always` or delayed (any interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncClass {
    Always,
    Delayed,
}

impl SyncClass {
    /// `always` or `delayed`, as reports and calibration files spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncClass::Always => "always",
            SyncClass::Delayed => "delayed",
        }
    }
}

/// What the model needs of a configured `sync_interval` (`units::SyncMode`): whether it fsyncs before
/// every ack. Distinct types because the configuration carries the interval and the model does not.
impl From<crate::units::SyncMode> for SyncClass {
    fn from(m: crate::units::SyncMode) -> SyncClass {
        match m {
            crate::units::SyncMode::Always => SyncClass::Always,
            crate::units::SyncMode::Interval(_) => SyncClass::Delayed,
        }
    }
}

/// One cluster shape to predict.
#[derive(Debug, Clone)]
pub struct Shape {
    pub kind: Kind,
    pub servers: u32,
    pub replicas: u8,
    pub sync: SyncClass,
    pub size_bytes: u64,
    pub workers: u32,
    /// Core: subscribers (each receives every message).
    pub subscribers: u32,
    /// JetStream consumers reading while publishers write, and whether they are spread over the servers.
    pub consumers: u32,
    pub consumers_spread: bool,
    pub volume: VolumeSpec,
    pub server: ServerModel,
    /// A required rate (ops/s) for CPU and utilisation figures.
    pub rate: Option<f64>,
    /// JetStream publishes in flight per worker before it waits for acks (1 = synchronous; `nats bench js
    /// pub --batch`).
    pub batch: u32,
    /// The nats-server version to predict for; None = as calibrated. Another version is scaled (wider
    /// band): seed 000 ran 2.12.11, before the 2.12.14/2.14.4 disk-concurrency fix and 2.15's relaxed
    /// fsync for replicated streams.
    pub nats_version: Option<String>,
    /// Distinct subjects the messages are published on, round-robin (JetStream publishes): past a few
    /// hundred the stream leader does more per message (perf::subjects). None: not given, priced as one
    /// subject and said so (`Prediction::subjects`).
    pub subjects: Option<u64>,
}

/// A shape as `predict --format json` echoes it under `shape`, so a JSON reader can tell what was predicted:
/// its figures, and its array, disk and server models by name (`window` is `batch`). The kind, the rate,
/// the consumers' spread and the version are said elsewhere in that document or not at all, as before.
impl Serialize for Shape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = s.serialize_struct("Shape", 16)?;
        m.serialize_field("servers", &self.servers)?;
        m.serialize_field("replicas", &self.replicas)?;
        m.serialize_field("sync", &self.sync)?;
        m.serialize_field("size_bytes", &self.size_bytes)?;
        m.serialize_field("workers", &self.workers)?;
        m.serialize_field("subscribers", &self.subscribers)?;
        m.serialize_field("consumers", &self.consumers)?;
        m.serialize_field("array", &self.volume.array.name)?;
        m.serialize_field("disk", &self.volume.disk.name)?;
        m.serialize_field("raid", self.volume.raid.as_str())?;
        m.serialize_field("disks", &self.volume.disks)?;
        m.serialize_field("write_cache", &self.volume.write_cache)?;
        m.serialize_field("luns_per_group", &self.volume.luns_on_group)?;
        m.serialize_field("server_model", &self.server.name)?;
        m.serialize_field("window", &self.batch)?;
        if let Some(n) = self.subjects {
            m.serialize_field("subjects", &n)?;
        }
        m.end()
    }
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Band {
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
}

/// One prediction.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub kind: Kind,
    /// Messages, puts, gets or whole objects per second (core: published plus received).
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    pub latency_us: Latency,
    /// Cores busy on the busiest server at `rate` (or at `ops_per_s` when no rate is given).
    pub cpu_per_server: f64,
    pub bottleneck: String,
    pub band: Band,
    /// Calibration files (ids) the terms come from, and how they were carried over.
    pub source: String,
    /// True when the shape's hardware or kind has no calibration of its own (scaled through the catalog).
    pub scaled: bool,
    /// The calibration file (id) whose terms priced the kind's law (for JetStream publishes, the host class
    /// of the stream leader).
    pub calibration: String,
    /// Distance from that calibration's hardware to the shape's (0 = its own host class); the band widens
    /// with it (perf::leader).
    pub extrapolation_distance: f64,
    /// JetStream publishes and KV puts: the stream-leader facts design uses to say what reaches a rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamFacts>,
    /// JetStream publishes: the distinct subjects priced and what they add to the stream leader's work
    /// (perf::subjects), or the one-subject assumption when the shape gave none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subjects: Option<String>,
    pub notes: Vec<String>,
}

/// What a stream's rate rests on, for "what reaches the rate" advice (perf::leader, perf::sync_law).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StreamFacts {
    /// The leader's own ceiling with unlimited clients (msgs/s).
    pub leader_per_s: f64,
    /// One publish's unloaded time to its ack in this sync mode (seconds): the round trip plus, under
    /// `always`, the fsyncs in the commit path.
    pub ack_s: f64,
    /// Publishers × window the prediction assumed.
    pub publishers: f64,
    pub window: f64,
    /// One synchronous client's round trip at delayed sync (τ, seconds), and what each further synchronous
    /// client adds to it (D, seconds; perf::sync_law): publishers ÷ (τ + D·(publishers − 1)).
    pub round_trip_s: f64,
    pub saturation_s: f64,
    /// The law that priced the rate, to solve it for publishers or a window (not serialised).
    #[serde(skip)]
    pub law: Option<StreamLaw>,
}

/// The stream law as the prediction ran it: the leader's time per message, the inputs, and the factor
/// `always` was priced with on a catalog volume (the measured always ÷ delayed ratio; 1 otherwise).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamLaw {
    pub leader_time_s: f64,
    pub input: crate::perf::leader::StreamInput,
    pub ratio: f64,
    /// The leader's time per message in the other publish mode (one in flight against a window) ÷ this
    /// one's: a KV put's factor differs by mode where the class measured asynchronous puts
    /// (`leader::KvPutRatio` for a window, the synchronous rows' ratio for one in flight); 1 otherwise.
    pub other_mode: f64,
}

/// Clients or windows are searched up to this (a site's `publishers` and `window` go to 1,000,000).
const MAX_CLIENTS: f64 = 1_000_000.0;

impl StreamFacts {
    /// The rate the model predicts with `publishers` clients of `window` each (the stream law alone: the
    /// disk and NIC ceilings of the prediction are not in it).
    pub fn rate_with(&self, publishers: f64, window: f64) -> f64 {
        let Some(l) = &self.law else {
            return 0.0;
        };
        let mut i = l.input.clone();
        let same_mode = (window > 1.0) == (i.publish.window > 1.0);
        i.publish.publishers = publishers.max(1.0);
        i.publish.window = window.max(1.0);
        let t = l.leader_time_s * if same_mode { 1.0 } else { l.other_mode };
        crate::perf::leader::stream_rate(t, &i).per_s * l.ratio
    }

    /// The fewest synchronous publishers (window 1) the model says reach `rate`; None when no count does
    /// (each waits for its ack and the leader serves them one operation at a time: the law tends to
    /// 1 ÷ D, or the leader's ceiling).
    pub fn sync_publishers_for(&self, rate: f64) -> Option<f64> {
        least(|p| self.rate_with(p, 1.0) >= rate)
    }

    /// The smallest window per publisher with `publishers` publishers that the model says reaches `rate`;
    /// None when none does (the leader's ceiling).
    pub fn window_for(&self, rate: f64, publishers: f64) -> Option<f64> {
        least(|w| self.rate_with(publishers, w) >= rate)
    }

    /// What synchronous publishers cannot pass however many there are (msgs/s).
    pub fn sync_ceiling_per_s(&self) -> f64 {
        self.rate_with(MAX_CLIENTS, 1.0)
    }
}

/// The least whole n in 1..=MAX_CLIENTS with `ok(n)`, for `ok` false then true as n grows; None if never.
fn least(ok: impl Fn(f64) -> bool) -> Option<f64> {
    if !ok(MAX_CLIENTS) {
        return None;
    }
    let mut hi = 1.0;
    while !ok(hi) {
        hi *= 2.0;
        if hi >= MAX_CLIENTS {
            hi = MAX_CLIENTS;
            break;
        }
    }
    let mut lo = (hi / 2.0).floor().max(0.0);
    // ok(hi) holds; ok(lo) does not (or lo = 0).
    while hi - lo > 1.0 {
        let mid = ((lo + hi) / 2.0).floor();
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Cores busy for `msgs_per_s` JetStream messages of `msg_bytes` on a server doing `units` of work per
/// message (a follower 1; the leader 1 plus ½ per follower, for sending append entries and counting acks).
pub fn cpu_cores(msgs_per_s: f64, msg_bytes: f64, units: f64) -> f64 {
    CPU_IDLE_CORES + msgs_per_s * units * (CPU_S_PER_MSG + CPU_S_PER_BYTE * msg_bytes)
}

pub(crate) fn band(x: f64, rel_log: f64) -> Band {
    Band {
        low: x * (-rel_log).exp(),
        high: x * rel_log.exp(),
    }
}

#[cfg(test)]
mod tests {
    use super::terms::solve3;
    use super::*;
    use crate::catalog::Catalog;
    use crate::layout::Raid;
    use crate::perf::Calibration;

    fn vol(raid: Raid, cache: bool) -> VolumeSpec {
        let mut v = VolumeSpec::seed000(&Catalog::builtin(), raid, 3);
        v.write_cache = cache;
        v
    }

    #[test]
    fn seed000_volumes_get_their_fio_latencies_and_the_cache_evens_them_out() {
        let t = Calibration::builtin().terms;
        let ref_us = Catalog::builtin().disk(REF_DISK).unwrap().write_latency_us;
        let (l0, c0) = volume_write_latency_s(&t, &vol(Raid::Raid0, false), ref_us);
        let (l1, c1) = volume_write_latency_s(&t, &vol(Raid::Raid1, false), ref_us);
        assert!((l0 - 0.16e-3).abs() < 1e-9 && (l1 - 0.30e-3).abs() < 1e-9, "{l0} {l1}");
        assert!(c0 && c1);
        let (w0, k0) = volume_write_latency_s(&t, &vol(Raid::Raid0, true), ref_us);
        let (w1, _) = volume_write_latency_s(&t, &vol(Raid::Raid1, true), ref_us);
        assert_eq!(w0, w1);
        assert!(!k0, "write cache on was never measured");
        let mut hdd = vol(Raid::Raid6, false);
        hdd.disk = Catalog::builtin().disk("nl-sas-8t").unwrap().clone();
        assert!(volume_write_latency_s(&t, &hdd, ref_us).0 > 10e-3);
    }

    #[test]
    fn raid_penalties_and_array_caps_shape_group_bandwidth() {
        let r0 = vol(Raid::Raid0, false);
        let r1 = vol(Raid::Raid1, false);
        assert_eq!(r0.group_write_bytes_per_s(), 2.0 * r0.disk.write_bw_bytes_per_s);
        assert_eq!(r1.group_write_bytes_per_s(), r1.disk.write_bw_bytes_per_s);
        let mut big = vol(Raid::Raid0, false);
        big.disks = 24;
        assert_eq!(big.group_write_bytes_per_s(), big.array.write_bw_bytes_per_s);
        let mut r6 = vol(Raid::Raid6, false);
        r6.disks = 8;
        assert_eq!(r6.write_penalty(), 6.0);
        let mut r6c = r6.clone();
        r6c.write_cache = true;
        assert!(r6c.group_write_bytes_per_s() > r6.group_write_bytes_per_s());
    }

    #[test]
    fn core_terms_reproduce_the_rows_they_come_from() {
        let c = Calibration::builtin().terms.core;
        let agg = |m: f64, s: f64| (1.0 + m) / (c.per_msg_s + c.per_sub_s * m + c.per_byte_s * s * (1.0 + m));
        assert!((agg(1.0, 128.0) / 1.2e6 - 1.0).abs() < 1e-6);
        assert!((agg(8.0, 128.0) / 2.01e6 - 1.0).abs() < 1e-6);
        assert!((agg(4.0, 1024.0) / 630e3 - 1.0).abs() < 1e-6);
        assert_eq!(c.client_max_per_s, 7_671_570.0);
    }

    #[test]
    fn solve3_solves() {
        let x = solve3([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], [3.0, 5.0, 5.0]).unwrap();
        for (a, b) in x.iter().zip([1.0, 1.0, 1.0]) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!(solve3([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]], [1.0, 2.0, 3.0]).is_none());
    }

    #[test]
    fn write_amplification_comes_from_the_dstat_observations() {
        let a = Calibration::builtin().terms.store.write_amplification;
        // 170 MiB/s over ~68.9 MiB/s of R1 payload, 450 MiB/s over 3 x 56.22 MiB/s: about 2.5.
        assert!((2.3..2.8).contains(&a), "{a}");
    }
}
