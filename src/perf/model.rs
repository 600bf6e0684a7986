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

use super::calibration::{CalibrationFile, CalibrationSet, Row};
use super::fit::minimise;
use crate::catalog::{ArrayModel, Catalog, DiskModel, ServerModel};
use crate::layout::Raid;
use serde::Serialize;

/// Object store chunk size (ADR-20 default, `objDefaultChunkSize`).
pub const CHUNK_BYTES: u64 = 128 * 1024;
/// The catalog disk that stands in for seed 000's unnamed NVMe drives when scaling the per-byte fsync term.
pub const REF_DISK: &str = "nvme-3.84t";
/// The catalog array seed 000 ran on.
pub const REF_ARRAY: &str = "EF600";
/// Consumers per server the consumer-slowdown term is expressed against (seed 000 ran 20).
const REF_CONSUMERS: f64 = 20.0;
/// p99 ÷ average of seed 004's sequential ping (0.734 ms ÷ 0.307 ms): the tail factor for latencies.
const TAIL_P99_OVER_AVG: f64 = 0.734 / 0.307;
/// CPU seconds per replicated message per server: the NATS docs' installation table needed 1 core per
/// server for 100k msgs/s at R3 (reference/nats-facts.md §1.5). Seed 003 (Kafka) shows the shape: linear in
/// rate above a base.
const CPU_S_PER_MSG: f64 = 10e-6;
/// CPU seconds per payload byte per server (copy, checksum, framing): an assumption (~2 GB/s per core).
const CPU_S_PER_BYTE: f64 = 0.5e-9;
/// Idle cores of a nats-server with JetStream on (timers, RAFT heartbeats): an assumption.
const CPU_IDLE_CORES: f64 = 0.05;

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
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Core,
        Kind::Js,
        Kind::Kv,
        Kind::ObjPut,
        Kind::ObjGet,
        Kind::Ping,
        Kind::Flood,
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
        }
    }
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }
    fn is_jetstream_write(self) -> bool {
        matches!(self, Kind::Js | Kind::Kv | Kind::ObjPut)
    }
}

/// The storage under one server's JetStream store.
#[derive(Debug, Clone)]
pub struct VolumeSpec {
    pub array: ArrayModel,
    pub disk: DiskModel,
    pub raid: Raid,
    /// Disks in the volume group.
    pub disks: u32,
    /// The array's write cache is enabled for the volume (and the array has a mirrored one).
    pub write_cache: bool,
    /// LUNs of this layout's servers on the same group (seed 000 ran 3); they share its disks.
    pub luns_on_group: u32,
}

impl VolumeSpec {
    /// Seed 000's lab volume: an EF600 2-disk group of the given RAID level, write cache off, 3 LUNs.
    pub fn seed000(catalog: &Catalog, raid: Raid, luns_on_group: u32) -> VolumeSpec {
        VolumeSpec {
            array: catalog
                .array(REF_ARRAY)
                .cloned()
                .unwrap_or_else(|| catalog.arrays[0].clone()),
            disk: catalog
                .disk(REF_DISK)
                .cloned()
                .unwrap_or_else(|| catalog.disks[0].clone()),
            raid,
            disks: 2,
            write_cache: false,
            luns_on_group,
        }
    }

    /// Disks whose bandwidth one write stream gets: all of a RAID 0 stripe, half a mirror, n−2 of RAID 6.
    pub fn data_disks(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        match self.raid {
            Raid::Raid0 => n,
            Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => (n / 2.0).max(1.0),
            Raid::Raid6 => (n - 2.0).max(1.0),
        }
    }

    /// Back-end writes per front-end write without a cache to coalesce them (the RAID write penalty).
    pub fn write_penalty(&self) -> f64 {
        match self.raid {
            Raid::Raid0 => 1.0,
            Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => 2.0,
            Raid::Raid6 => 6.0,
        }
    }

    /// Disks an fsync's bytes spread over: the data disks, or with the mirrored write cache on, the whole
    /// group (the cache acknowledges at once and destages full stripes later, hiding the mirror's second
    /// copy as it hides its latency).
    pub fn sync_disks(&self) -> f64 {
        if self.cache_on() {
            self.disks.max(1) as f64
        } else {
            self.data_disks()
        }
    }

    fn cache_on(&self) -> bool {
        self.write_cache && self.array.mirrored_write_cache
    }

    /// Payload bytes/s the whole group absorbs: every disk's bandwidth over the write penalty (a full-stripe
    /// cache flush turns RAID 6's penalty into n/(n−2)), capped by the array's controllers.
    pub fn group_write_bytes_per_s(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        let raw = n * self.disk.write_bw_bytes_per_s;
        let penalty = if self.cache_on() && self.raid == Raid::Raid6 {
            n / (n - 2.0).max(1.0)
        } else {
            self.write_penalty()
        };
        (raw / penalty).min(self.array.write_bw_bytes_per_s)
    }

    /// Small-write IOPS the group absorbs, with the RAID write penalty, capped by the array.
    pub fn group_write_iops(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        (n * self.disk.write_iops / self.write_penalty()).min(self.array.write_iops)
    }
}

/// Write latencies measured by fio on seed 000's volumes (Appendix C), the anchor of every fsync term.
#[derive(Debug, Clone, Serialize)]
pub struct FioRef {
    pub raid0_write_s: f64,
    pub raid1_write_s: f64,
    pub source: String,
}

/// Fitted terms of the object-store put model (times in seconds, sizes in bytes).
#[derive(Debug, Clone, Serialize)]
pub struct ObjTerms {
    /// Per object: client work, the metadata message, digest, acks.
    pub obj_fixed_s: f64,
    /// Per 128 KiB chunk message.
    pub chunk_s: f64,
    /// Per payload byte (client copy and hash, network, page cache).
    pub byte_s: f64,
    /// One RAFT replication round per commit round when R > 1.
    pub rep_round_s: f64,
    /// Per payload byte per follower (the leader's fan-out).
    pub rep_byte_s: f64,
    /// Volume write latencies per commit round under `always`, at R1 and at R > 1 (fsyncs in series).
    pub fsync_lat_r1: f64,
    pub fsync_lat_rn: f64,
    /// Per byte per data disk of the reference disk under `always` (the fsync's transfer; not overlapped).
    pub sync_byte_s: f64,
    /// USL contention between workers at the stream leader.
    pub sigma: f64,
    /// Slowdown per `REF_CONSUMERS` consumers on the busiest server.
    pub consumer_gamma: f64,
    /// Root-mean-square of log(predicted ÷ measured) over the fitted rows, and how many rows.
    pub rms_log: f64,
    pub rows: usize,
    pub source: String,
}

impl ObjTerms {
    const N: usize = 10;

    /// Half-width of a ~90 % error band in log units: the fit's residual spread inflated for the ten
    /// parameters it spent (the leave-one-out test checks how often measured rows fall inside).
    pub fn band_log_width(&self) -> f64 {
        let n = self.rows.max(Self::N + 1) as f64;
        1.645 * self.rms_log * (n / (n - Self::N as f64)).sqrt()
    }

    fn from_vec(p: &[f64], source: &str) -> ObjTerms {
        let e: Vec<f64> = p.iter().map(|x| x.exp()).collect();
        ObjTerms {
            obj_fixed_s: e[0],
            chunk_s: e[1],
            byte_s: e[2],
            rep_round_s: e[3],
            rep_byte_s: e[4],
            fsync_lat_r1: e[5],
            fsync_lat_rn: e[6],
            sync_byte_s: e[7],
            sigma: e[8].min(1.0),
            consumer_gamma: e[9],
            rms_log: 0.0,
            rows: 0,
            source: source.to_string(),
        }
    }

    fn start() -> Vec<f64> {
        [1.5e-3, 0.2e-3, 5e-9, 0.5e-3, 1e-9, 5.0, 5.0, 1e-8, 0.3, 0.5]
            .iter()
            .map(|v: &f64| v.ln())
            .collect()
    }
}

/// A calibration row reduced to what the object-put fit needs.
#[derive(Debug, Clone, Serialize)]
pub struct ObjRow {
    pub label: String,
    pub servers: u32,
    pub replicas: u8,
    pub raid: Raid,
    pub always: bool,
    pub size_bytes: u64,
    pub workers: u32,
    pub consumers: u32,
    pub consumers_spread: bool,
    pub put_obj_per_s: f64,
    /// Volume write latency of the row's volume (fio, Appendix C).
    pub volume_write_s: f64,
    pub data_disks: f64,
}

/// Terms for synchronous JetStream publishes and KV puts.
#[derive(Debug, Clone, Serialize)]
pub struct JsTerms {
    /// Per operation at R1 with delayed sync, one client (1 ÷ rate of the KV putter run).
    pub op_s: f64,
    pub op_source: String,
    /// The stream leader's time per message and per byte at R3 (seed 004's flat 1–4 publisher rows).
    pub leader_op_s: f64,
    pub leader_byte_s: f64,
    pub leader_source: String,
}

/// Terms for core NATS: server time per published message `a + b·subscribers + c·bytes·(1+subscribers)`.
#[derive(Debug, Clone, Serialize)]
pub struct CoreTerms {
    pub per_msg_s: f64,
    pub per_sub_s: f64,
    pub per_byte_s: f64,
    /// One publisher's own ceiling with nobody subscribed.
    pub client_max_per_s: f64,
    pub ping_avg_s: f64,
    pub ping_p99_s: f64,
    /// Flood: messages drained per second while a burst queues.
    pub flood_drain_per_s: f64,
    pub flood_burst_msgs: f64,
    pub source: String,
}

/// Terms for restart, bursts and write amplification, from seed 000's monitoring observations.
#[derive(Debug, Clone, Serialize)]
pub struct StoreTerms {
    /// Re-read rate per server after an unclean stop (seed 000: ~1 GiB/s).
    pub restart_read_bytes_per_s: f64,
    /// Seed 000's observed periodic flush interval (10–20 s).
    pub flush_interval_low_s: f64,
    pub flush_interval_high_s: f64,
    /// Disk bytes written per payload byte per replica (dstat vs object rate).
    pub write_amplification: f64,
    pub source: String,
}

/// Every fitted term, with where it came from.
#[derive(Debug, Clone, Serialize)]
pub struct Terms {
    pub fio: FioRef,
    pub obj: ObjTerms,
    pub js: JsTerms,
    pub core: CoreTerms,
    pub store: StoreTerms,
    /// Object-put rows used for the fit (for leave-one-out and reports).
    pub obj_rows: Vec<ObjRow>,
    /// nats-server version the object-put rows were measured on.
    pub obj_nats_version: String,
    /// Object-get terms, when some file measured gets (`natsplan calibrate`); None keeps the put terms.
    pub obj_get: Option<GetTerms>,
}

/// Fitted object-get terms: per object, per chunk and per byte (a get reads, it neither replicates nor
/// fsyncs), and the contention between getters: fitted when the rows have two worker counts or more, else
/// the put fit's σ spread over the replicas that can serve (allow_direct).
#[derive(Debug, Clone, Serialize)]
pub struct GetTerms {
    pub obj_fixed_s: f64,
    pub chunk_s: f64,
    pub byte_s: f64,
    /// USL σ of getters at the replicas (already divided by the replicas when taken from the put fit).
    pub sigma: Option<f64>,
    /// Root-mean-square of log(predicted ÷ measured) over the fitted rows, and how many rows.
    pub rms_log: f64,
    pub rows: usize,
    pub source: String,
}

/// Gets/s of `workers` workers on objects of `size` bytes at R`replicas`.
pub fn get_rate(g: &GetTerms, sigma: f64, size: u64, replicas: u8, workers: u32) -> f64 {
    let chunks = size.div_ceil(CHUNK_BYTES).max(1) as f64;
    let par = g.obj_fixed_s + chunks * g.chunk_s + size as f64 * g.byte_s;
    let s = g.sigma.unwrap_or(sigma / replicas.max(1) as f64);
    usl(par, 0.0, workers.max(1) as f64, s)
}

/// Fit the get terms to measured `obj-get` rows (`get_obj_per_s`, not derived); None with fewer than four.
fn fit_get(set: &CalibrationSet, sigma: f64) -> Option<GetTerms> {
    let rows: Vec<(u64, u8, u32, f64, String)> = set
        .rows_of("obj-get")
        .filter(|(_, r)| r.fit)
        .filter_map(|(f, r)| {
            Some((
                r.size_bytes()?,
                r.replicas.unwrap_or(1),
                r.workers.unwrap_or(1),
                r.measured("get_obj_per_s")?,
                f.id.clone(),
            ))
        })
        .collect();
    if rows.len() < 4 {
        return None;
    }
    // σ only when the rows vary the number of getters; otherwise it cannot be told from the fixed time.
    let mut ws: Vec<u32> = rows.iter().map(|r| r.2).collect();
    ws.sort_unstable();
    ws.dedup();
    let own_sigma = ws.len() >= 2;
    let make = |p: &[f64]| GetTerms {
        obj_fixed_s: p[0].exp(),
        chunk_s: p[1].exp(),
        byte_s: p[2].exp(),
        sigma: own_sigma.then(|| p[3].exp().min(1.0)),
        rms_log: 0.0,
        rows: 0,
        source: String::new(),
    };
    let loss = |p: &[f64]| -> f64 {
        let g = make(p);
        rows.iter()
            .map(|r| (get_rate(&g, sigma, r.0, r.1, r.2).ln() - r.3.ln()).powi(2))
            .sum::<f64>()
    };
    let mut start: Vec<f64> = [0.5e-3f64, 0.2e-3, 2e-9].iter().map(|v| v.ln()).collect();
    if own_sigma {
        start.push(0.1f64.ln());
    }
    let (p, v) = minimise(&loss, &start, 0.7, 3000, 5);
    let mut ids: Vec<String> = rows.iter().map(|r| r.4.clone()).collect();
    ids.dedup();
    Some(GetTerms {
        rms_log: (v / rows.len() as f64).sqrt(),
        rows: rows.len(),
        source: ids.join("+"),
        ..make(&p)
    })
}

fn val(f: &CalibrationSet, kind: &str, label: &str, key: &str) -> Option<(f64, String)> {
    f.rows_of(kind)
        .find(|(_, r)| r.label == label)
        .and_then(|(file, r)| r.measured(key).map(|v| (v, file.id.clone())))
}

/// `val`, else the mean over the fittable rows of the kind with the key (from the first file that has
/// them): a measured file (`natsplan calibrate`) names its rows after what it ran, not after the seed rows,
/// and repeats a point several times.
fn val_or_any(f: &CalibrationSet, kind: &str, label: &str, key: &str) -> Option<(f64, String)> {
    val(f, kind, label, key).or_else(|| mean_of(f, kind, key))
}

fn mean_of(f: &CalibrationSet, kind: &str, key: &str) -> Option<(f64, String)> {
    let first = f
        .rows_of(kind)
        .find(|(_, r)| r.fit && r.measured(key).is_some())
        .map(|(file, _)| file.id.clone())?;
    let xs: Vec<f64> = f
        .rows_of(kind)
        .filter(|(file, r)| file.id == first && r.fit)
        .filter_map(|(_, r)| r.measured(key))
        .collect();
    Some((xs.iter().sum::<f64>() / xs.len() as f64, first))
}

fn need(v: Option<(f64, String)>, what: &str) -> anyhow::Result<(f64, String)> {
    v.ok_or_else(|| anyhow::anyhow!("calibration: no row gives {what}; add it or keep the built-in file that has it"))
}

fn parse_raid(s: &str) -> Option<Raid> {
    match s {
        "raid0" => Some(Raid::Raid0),
        "raid1" => Some(Raid::Raid1),
        "raid10" => Some(Raid::Raid10),
        "raid6" => Some(Raid::Raid6),
        "ddp-raid1" => Some(Raid::DdpRaid1),
        _ => None,
    }
}

impl Terms {
    /// Fit every term from the calibration rows.
    pub fn fit(set: &CalibrationSet) -> anyhow::Result<Terms> {
        let (r0, fio_src) = need(
            val(set, "fio", "raid0", "write_lat_mean_ms"),
            "fio raid0 write_lat_mean_ms",
        )?;
        let (r1, _) = need(
            val(set, "fio", "raid1", "write_lat_mean_ms"),
            "fio raid1 write_lat_mean_ms",
        )?;
        let fio = FioRef {
            raid0_write_s: r0 / 1e3,
            raid1_write_s: r1 / 1e3,
            source: fio_src,
        };
        let obj_rows = obj_rows(set, &fio);
        if obj_rows.len() < ObjTerms::N + 2 {
            anyhow::bail!(
                "calibration: {} fittable obj-put rows; the object model needs at least {}",
                obj_rows.len(),
                ObjTerms::N + 2
            );
        }
        let src = {
            let mut ids: Vec<String> = set.rows_of("obj-put").map(|(f, _)| f.id.clone()).collect();
            ids.dedup();
            ids.join("+")
        };
        let obj = fit_obj(&obj_rows, &src);

        let (kv_rate, kv_src) = need(
            val_or_any(set, "kv", "kv-put-1-client", "ops_per_s"),
            "the KV putter rate",
        )?;
        // A putter measured under `sync_interval: always` already paid its fsync, which predictions add
        // from the object terms: take it out of the per-operation time (at least a tenth remains).
        let kv_row = set
            .rows_of("kv")
            .find(|(f, r)| f.id == kv_src && r.fit && r.measured("ops_per_s").is_some())
            .map(|(_, r)| r.clone());
        let kv_fsync_s = match &kv_row {
            Some(r) if r.sync_always() == Some(true) => {
                let lat = if r.raid.as_deref() == Some("raid0") {
                    fio.raid0_write_s
                } else {
                    fio.raid1_write_s
                };
                let f = if r.replicas.unwrap_or(1) > 1 {
                    obj.fsync_lat_rn
                } else {
                    obj.fsync_lat_r1
                };
                f * lat
            }
            _ => 0.0,
        };
        let js_rows: Vec<(f64, f64, String)> = set
            .rows_of("js")
            .filter(|(_, r)| r.fit)
            .filter_map(|(f, r)| Some((r.size_bytes()? as f64, r.measured("durable_pubs_per_s")?, f.id.clone())))
            .collect();
        let (leader_op_s, leader_byte_s, leader_source) = leader_law(&js_rows)?;
        let js = JsTerms {
            op_s: (1.0 / kv_rate - kv_fsync_s).max(0.1 / kv_rate),
            op_source: kv_src,
            leader_op_s,
            leader_byte_s,
            leader_source,
        };
        let core = core_terms(set)?;
        let store = store_terms(set)?;
        let obj_nats_version = set
            .rows_of("obj-put")
            .map(|(f, _)| f.nats_version.clone())
            .next()
            .unwrap_or_else(|| "unknown".into());
        let obj_get = fit_get(set, obj.sigma);
        Ok(Terms {
            obj_nats_version,
            obj_get,
            fio,
            obj,
            js,
            core,
            store,
            obj_rows,
        })
    }
}

/// The object-put rows fit to use: measured `put_obj_per_s`, known sync mode, `fit: true`.
pub fn obj_rows(set: &CalibrationSet, fio: &FioRef) -> Vec<ObjRow> {
    let mut out = Vec::new();
    for (file, r) in set.rows_of("obj-put") {
        if let Some(o) = obj_row(file, r, fio) {
            out.push(o);
        }
    }
    out
}

fn obj_row(file: &CalibrationFile, r: &Row, fio: &FioRef) -> Option<ObjRow> {
    if !r.fit || r.flags.iter().any(|f| f == "duplicate_label") {
        return None;
    }
    let raid = parse_raid(r.raid.as_deref()?)?;
    let disks = file
        .hardware
        .get("disks_per_group")
        .and_then(|v| v.as_f64())
        .unwrap_or(2.0);
    let data_disks = match raid {
        Raid::Raid0 => disks,
        Raid::Raid6 => (disks - 2.0).max(1.0),
        _ => (disks / 2.0).max(1.0),
    };
    Some(ObjRow {
        label: format!(
            "{} {} {} {}w",
            r.label,
            r.sync.as_deref().unwrap_or("?"),
            r.size.as_deref().unwrap_or("?"),
            r.workers.unwrap_or(1)
        ),
        servers: r.servers.unwrap_or(1),
        replicas: r.replicas.unwrap_or(1),
        raid,
        always: r.sync_always()?,
        size_bytes: r.size_bytes()?,
        workers: r.workers.unwrap_or(1),
        consumers: r.consumers.unwrap_or(0),
        consumers_spread: r.consumers_placement.as_deref() == Some("spread"),
        put_obj_per_s: r.measured("put_obj_per_s")?,
        volume_write_s: if matches!(raid, Raid::Raid0) {
            fio.raid0_write_s
        } else {
            fio.raid1_write_s
        },
        data_disks,
    })
}

/// Seconds of one object put by one worker, split into the part workers overlap and the part they do not
/// (the fsync's byte transfer through one device queue).
fn obj_time(t: &ObjTerms, size: u64, replicas: u8, always: bool, lat_s: f64, data_disks: f64) -> (f64, f64) {
    let chunks = size.div_ceil(CHUNK_BYTES).max(1) as f64;
    let s = size as f64;
    // Chunks go out asynchronously and commit in one round; the metadata message is a second round.
    let rounds = 2.0;
    let mut par = t.obj_fixed_s + chunks * t.chunk_s + s * t.byte_s;
    if replicas > 1 {
        par += t.rep_round_s * rounds + t.rep_byte_s * (replicas as f64 - 1.0) * s;
    }
    let mut ser = 0.0;
    if always {
        let fs = if replicas > 1 { t.fsync_lat_rn } else { t.fsync_lat_r1 };
        par += fs * lat_s * rounds;
        ser = t.sync_byte_s * s / data_disks.max(1.0);
    }
    (par, ser)
}

/// Consumer slowdown factor on the busiest server.
fn consumer_factor(t: &ObjTerms, consumers: u32, servers: u32, spread: bool) -> f64 {
    let on_busiest = if spread {
        (consumers as f64 / servers.max(1) as f64).ceil()
    } else {
        consumers as f64
    };
    1.0 + t.consumer_gamma * on_busiest / REF_CONSUMERS
}

/// USL throughput of `workers` workers whose operation takes `par` (overlappable) + `ser` (serial) seconds.
fn usl(par: f64, ser: f64, workers: f64, sigma: f64) -> f64 {
    1.0 / (par * (1.0 + sigma * (workers - 1.0)) / workers + ser)
}

/// Predicted puts/s for a fit row (no hard ceilings: none bound in seed 000, per its author).
pub fn obj_row_rate(t: &ObjTerms, r: &ObjRow) -> f64 {
    let (par, ser) = obj_time(t, r.size_bytes, r.replicas, r.always, r.volume_write_s, r.data_disks);
    let f = consumer_factor(t, r.consumers, r.servers, r.consumers_spread);
    usl(par * f, ser, r.workers as f64, t.sigma)
}

/// Least squares on log rates (errors are multiplicative), parameters in log space (all positive).
pub fn fit_obj(rows: &[ObjRow], source: &str) -> ObjTerms {
    let loss = |p: &[f64]| -> f64 {
        let t = ObjTerms::from_vec(p, "");
        rows.iter()
            .map(|r| {
                let x = obj_row_rate(&t, r);
                if !x.is_finite() || x <= 0.0 {
                    1e6
                } else {
                    (x.ln() - r.put_obj_per_s.ln()).powi(2)
                }
            })
            .sum::<f64>()
            // A faint pull toward the starting point keeps terms the rows cannot separate from wandering.
            + 1e-4 * p.iter().zip(ObjTerms::start()).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
    };
    let (p, _) = minimise(&loss, &ObjTerms::start(), 0.7, 3000, 5);
    let mut t = ObjTerms::from_vec(&p, source);
    let ss: f64 = rows
        .iter()
        .map(|r| (obj_row_rate(&t, r).ln() - r.put_obj_per_s.ln()).powi(2))
        .sum();
    t.rms_log = (ss / rows.len() as f64).sqrt();
    t.rows = rows.len();
    t
}

/// One leave-one-out result: the row predicted by a fit to all the others, with that fit's band.
#[derive(Debug, Clone, Serialize)]
pub struct LooRow {
    pub label: String,
    pub predicted: f64,
    pub measured: f64,
    pub band: Band,
}

/// Leave-one-out: predict each row from a fit to all the others.
pub fn leave_one_out(rows: &[ObjRow]) -> Vec<LooRow> {
    (0..rows.len())
        .map(|i| {
            let rest: Vec<ObjRow> = rows
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, r)| r.clone())
                .collect();
            let t = fit_obj(&rest, "loo");
            let x = obj_row_rate(&t, &rows[i]);
            LooRow {
                label: rows[i].label.clone(),
                predicted: x,
                measured: rows[i].put_obj_per_s,
                band: band(x, t.band_log_width()),
            }
        })
        .collect()
}

/// Leader time per message = a + b·bytes through the leader-bound JetStream rows (rate = 1 ÷ time).
fn leader_law(rows: &[(f64, f64, String)]) -> anyhow::Result<(f64, f64, String)> {
    if rows.is_empty() {
        anyhow::bail!("calibration: no js rows with durable_pubs_per_s; the stream-leader ceiling needs one");
    }
    let src = rows[0].2.clone();
    if rows.len() == 1 {
        return Ok((1.0 / rows[0].1, 0.0, src));
    }
    // Least squares of time on size, weighted by 1 ÷ time² so every row counts by its relative error (a
    // measured ladder spans sizes whose times differ tenfold; with two sizes the line is the same).
    let w = |r: &(f64, f64, String)| r.1 * r.1;
    let n: f64 = rows.iter().map(w).sum();
    let mx = rows.iter().map(|r| w(r) * r.0).sum::<f64>() / n;
    let my = rows.iter().map(|r| w(r) / r.1).sum::<f64>() / n;
    let sxx: f64 = rows.iter().map(|r| w(r) * (r.0 - mx).powi(2)).sum();
    let sxy: f64 = rows.iter().map(|r| w(r) * (r.0 - mx) * (1.0 / r.1 - my)).sum();
    let b = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let a = (my - b * mx).max(1e-9);
    Ok((a, b, src))
}

fn core_terms(set: &CalibrationSet) -> anyhow::Result<CoreTerms> {
    // Seed 004's three core rows (a 3-server cluster, closest to a deployment) fix a, b and c exactly:
    // seconds per published message = (1 + subscribers) ÷ aggregate rate.
    let rows: Vec<(f64, f64, f64, String)> = set
        .rows_of("core")
        .filter(|(_, r)| r.fit)
        .filter_map(|(f, r)| {
            Some((
                r.subscribers? as f64,
                r.size_bytes()? as f64,
                r.measured("aggregate_msgs_per_s")?,
                f.id.clone(),
            ))
        })
        .filter(|r| r.0 > 0.0)
        .collect();
    // Prefer the multi-server file; fall back to any three rows.
    let pick: Vec<&(f64, f64, f64, String)> = {
        let multi: Vec<_> = rows.iter().filter(|r| r.3.contains("seed004")).collect();
        if multi.len() >= 3 {
            multi
        } else {
            rows.iter().collect()
        }
    };
    if pick.len() < 3 {
        anyhow::bail!("calibration: the core model needs three core rows with subscribers and aggregate_msgs_per_s");
    }
    // Least squares over (a, b, c) with the normal equations (3×3).
    let mut ata = [[0.0f64; 3]; 3];
    let mut atb = [0.0f64; 3];
    for r in &pick {
        let x = [1.0, r.0, r.1 * (1.0 + r.0) * 1e-3];
        let y = (1.0 + r.0) / r.2 * 1e6;
        for i in 0..3 {
            for j in 0..3 {
                ata[i][j] += x[i] * x[j];
            }
            atb[i] += x[i] * y;
        }
    }
    let sol = solve3(ata, atb).ok_or_else(|| anyhow::anyhow!("calibration: core rows are degenerate"))?;
    let (a, b, c) = (sol[0].max(0.01) * 1e-6, sol[1].max(0.0) * 1e-6, sol[2].max(0.0) * 1e-9);
    let client_max = set
        .rows_of("core")
        .filter_map(|(_, r)| {
            (r.subscribers == Some(0))
                .then(|| r.measured("pub_msgs_per_s"))
                .flatten()
        })
        .fold(0.0f64, f64::max);
    let (ping_avg, ping_src) = need(
        val_or_any(set, "ping", "Ping 1k×128 B", "rtt_avg_ms"),
        "ping rtt_avg_ms",
    )?;
    let (ping_p99, _) = need(
        val_or_any(set, "ping", "Ping 1k×128 B", "rtt_p99_ms"),
        "ping rtt_p99_ms",
    )?;
    let (flood_ms, _) = need(
        val_or_any(set, "flood", "Flood 8p 20k×128 B", "delay_avg_ms"),
        "flood delay_avg_ms",
    )?;
    let flood_row = set.rows_of("flood").next().map(|(_, r)| r.clone());
    let pubs = flood_row.as_ref().and_then(|r| r.publishers).unwrap_or(8) as f64;
    let burst = flood_row.as_ref().and_then(|r| r.msgs).unwrap_or(20_000) as f64;
    // A burst of Q messages drained at D per second waits Q ÷ 2D on average (uniform queue position). A
    // measured drain rate (the subscriber's, from `natsplan calibrate`) is used as it is.
    let drain = mean_of(set, "flood", "drain_msgs_per_s")
        .map(|(d, _)| d)
        .filter(|d| *d > 0.0)
        .unwrap_or(pubs * burst / (2.0 * flood_ms / 1e3));
    Ok(CoreTerms {
        per_msg_s: a,
        per_sub_s: b,
        per_byte_s: c,
        client_max_per_s: if client_max > 0.0 { client_max } else { 5e6 },
        ping_avg_s: ping_avg / 1e3,
        ping_p99_s: ping_p99 / 1e3,
        flood_drain_per_s: drain,
        flood_burst_msgs: burst,
        source: ping_src,
    })
}

#[allow(clippy::needless_range_loop)] // Gaussian elimination reads best with indices.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-15 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in 0..3 {
            if r != col {
                let f = a[r][col] / a[col][col];
                for k in 0..3 {
                    a[r][k] -= f * a[col][k];
                }
                b[r] -= f * b[col];
            }
        }
    }
    Some([b[0] / a[0][0], b[1] / a[1][1], b[2] / a[2][2]])
}

fn store_terms(set: &CalibrationSet) -> anyhow::Result<StoreTerms> {
    let (read, src) = need(
        val(set, "restart", "restart-reread", "read_bytes_per_s_per_server"),
        "restart read_bytes_per_s_per_server",
    )?;
    let (lo, _) = need(
        val(set, "writeback", "periodic-flush", "flush_interval_s_low"),
        "flush_interval_s_low",
    )?;
    let (hi, _) = need(
        val(set, "writeback", "periodic-flush", "flush_interval_s_high"),
        "flush_interval_s_high",
    )?;
    // Write amplification: disk bytes/s seen by dstat ÷ (payload bytes/s × replicas), with the payload rate
    // of the matching Appendix B batch-1 rows (1 worker, as when the screenshots were taken). The R1 row has
    // only the two duplicate-labelled rates; their mean is used here, for this ratio alone.
    let mib = 1024.0 * 1024.0;
    let r1_rates: Vec<f64> = set
        .rows_of("obj-put")
        .filter(|(_, r)| r.label == "r0-single" && r.size.as_deref() == Some("1024KiB") && r.workers == Some(1))
        .filter_map(|(_, r)| r.measured("put_obj_per_s"))
        .collect();
    let r3_rate = set
        .rows_of("obj-put")
        .find(|(_, r)| {
            r.label == "r0-rf3"
                && r.sync.as_deref() == Some("always")
                && r.size.as_deref() == Some("1024KiB")
                && r.workers == Some(1)
        })
        .and_then(|(_, r)| r.measured("put_obj_per_s"));
    let mut amps = Vec::new();
    if let (Some((d1, _)), false) = (
        val(set, "disk-write", "single-1m-immediate-disk", "disk_write_bytes_per_s"),
        r1_rates.is_empty(),
    ) {
        amps.push(d1 / (r1_rates.iter().sum::<f64>() / r1_rates.len() as f64 * mib));
    }
    if let (Some((d3, _)), Some(x)) = (
        val(set, "disk-write", "rf3-1m-immediate-disk", "disk_write_bytes_per_s"),
        r3_rate,
    ) {
        amps.push(d3 / (x * mib * 3.0));
    }
    let amp = if amps.is_empty() {
        2.0
    } else {
        amps.iter().sum::<f64>() / amps.len() as f64
    };
    Ok(StoreTerms {
        restart_read_bytes_per_s: read,
        flush_interval_low_s: lo,
        flush_interval_high_s: hi,
        write_amplification: amp,
        source: src,
    })
}

// ---------------------------------------------------------------------------------------------------
// Prediction for one shape.

/// `sync_interval: always` or delayed (any interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sync {
    Always,
    Delayed,
}

/// One cluster shape to predict.
#[derive(Debug, Clone)]
pub struct Shape {
    pub kind: Kind,
    pub servers: u32,
    pub replicas: u8,
    pub sync: Sync,
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
    pub notes: Vec<String>,
}

/// Volume write latency (seconds) for the model's fsync terms, and whether it was measured (seed 000's
/// EF600 NVMe volumes without write cache) or scaled through the catalog.
pub fn volume_write_latency_s(terms: &Terms, v: &VolumeSpec, catalog_ref_disk_us: f64) -> (f64, bool) {
    let fio = &terms.fio;
    let measured_hw = v.array.name.eq_ignore_ascii_case(REF_ARRAY) && v.disk.kind == crate::catalog::DiskKind::Nvme;
    let disk_s = v.disk.write_latency_us / 1e6;
    let ref_disk_s = catalog_ref_disk_us / 1e6;
    // The array's own path (controller, fabric) measured as RAID 0 latency minus the device's. Internal
    // disks behind an HBA have no controller hop of that size: assume 20 µs.
    let controller_s = if v.array.controllers >= 2 {
        (fio.raid0_write_s - ref_disk_s).max(10e-6)
    } else {
        20e-6
    };
    let mirror_extra = fio.raid1_write_s - fio.raid0_write_s;
    if v.write_cache && v.array.mirrored_write_cache {
        // Seed 000 Appendix C: with the cache on, writes are acknowledged from the mirrored cache and R0 and
        // R1 "would see similar latency": the measured RAID 0 figure is the planning value (not measured).
        return (fio.raid0_write_s, false);
    }
    let lat = match v.raid {
        Raid::Raid0 => controller_s + disk_s,
        Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => {
            controller_s + disk_s + mirror_extra + 0.2 * (disk_s - ref_disk_s).max(0.0)
        }
        // Read-modify-write: two reads, then data and both parities.
        Raid::Raid6 => controller_s + 3.0 * disk_s + 2.0 * mirror_extra,
    };
    let calibrated = measured_hw && matches!(v.raid, Raid::Raid0 | Raid::Raid1);
    (lat, calibrated)
}

/// Cores busy for `msgs_per_s` JetStream messages of `msg_bytes` on a server doing `units` of work per
/// message (a follower 1; the leader 1 plus ½ per follower, for sending append entries and counting acks).
pub fn cpu_cores(msgs_per_s: f64, msg_bytes: f64, units: f64) -> f64 {
    CPU_IDLE_CORES + msgs_per_s * units * (CPU_S_PER_MSG + CPU_S_PER_BYTE * msg_bytes)
}

fn band(x: f64, rel_log: f64) -> Band {
    Band {
        low: x * (-rel_log).exp(),
        high: x * rel_log.exp(),
    }
}

/// Predict one shape.
pub fn predict_shape(terms: &Terms, catalog: &Catalog, sh: &Shape) -> Prediction {
    let ref_disk_us = catalog.disk(REF_DISK).map(|d| d.write_latency_us).unwrap_or(20.0);
    let ref_disk_bw = catalog.disk(REF_DISK).map(|d| d.write_bw_bytes_per_s).unwrap_or(4e9);
    let (lat_s, lat_measured) = volume_write_latency_s(terms, &sh.volume, ref_disk_us);
    let always = sh.sync == Sync::Always;
    let s = sh.size_bytes.max(1) as f64;
    let w = sh.workers.max(1) as f64;
    let r = sh.replicas.clamp(1, 5);
    let o = &terms.obj;
    let mut notes = Vec::new();
    let mut scaled = false;
    let mut sources: Vec<String> = Vec::new();
    // Width of the error band in log units: the fit's residual spread, inflated for the parameters it used
    // and widened (×2) whenever anything is carried over from other hardware or kinds.
    let fit_w = o.band_log_width();
    let mut width = fit_w;
    // Per-byte fsync term scaled from the reference disk to this one.
    let sync_byte = o.sync_byte_s * ref_disk_bw / sh.volume.disk.write_bw_bytes_per_s.max(1.0);
    let dd = sh.volume.sync_disks();
    let cf = consumer_factor(o, sh.consumers, sh.servers, sh.consumers_spread);

    // (ops/s, label) ceilings; the lowest binds.
    let mut ceilings: Vec<(f64, String)> = Vec::new();
    // Full duplex: the leader's outbound carries (R−1) copies of each payload, its inbound one.
    let nic_bytes = sh.server.nic_bits_per_s / 8.0;
    let group_bw = sh.volume.group_write_bytes_per_s();
    let group_iops = sh.volume.group_write_iops();
    let luns = sh.volume.luns_on_group.max(1) as f64;
    // All replicas may sit on one group (seed 000: three LUNs on one 2-disk group).
    let replicas_on_group = (r as f64).min(luns);
    let amp = terms.store.write_amplification;

    let (ops, msgs_per_op, msg_bytes, lat_p50_s, base_bottleneck) = match sh.kind {
        Kind::ObjPut | Kind::ObjGet => {
            let put = sh.kind == Kind::ObjPut;
            let chunks = sh.size_bytes.div_ceil(CHUNK_BYTES).max(1) as f64;
            let x = if put {
                let (par, ser) = obj_time(o, sh.size_bytes, r, always, lat_s, dd);
                // The fsync's byte transfer scales with the disk's bandwidth against the reference disk's.
                let (par, ser) = (
                    par * cf,
                    ser * ref_disk_bw / sh.volume.disk.write_bw_bytes_per_s.max(1.0),
                );
                sources.push(o.source.clone());
                usl(par, ser, w, o.sigma)
            } else {
                // Gets: no replication, no fsync; served from the page cache by any replica (allow_direct),
                // so workers spread over the replicas contend less. Seed 000's Get column is 0.400 × Put
                // (derived), so nothing calibrates this: the put terms are carried over and the band is wide.
                if let Some(g) = &terms.obj_get {
                    // Measured gets: their own terms, the band from their own residuals.
                    let k = if g.sigma.is_some() { 4.0 } else { 3.0 };
                    let n = (g.rows as f64).max(k + 1.0);
                    width = width.max(1.645 * g.rms_log * (n / (n - k)).sqrt());
                    sources.push(format!("{} (get terms)", g.source));
                    get_rate(g, o.sigma, sh.size_bytes, r, sh.workers) / cf
                } else {
                    let par = (o.obj_fixed_s + chunks * o.chunk_s + s * o.byte_s) * cf;
                    scaled = true;
                    width = width.max(0.7);
                    notes.push(
                        "gets are uncalibrated: seed 000's Get column is derived (0.400 × Put), not measured".into(),
                    );
                    sources.push(format!("{} (put terms, no get calibration)", o.source));
                    usl(par, 0.0, w, o.sigma / r as f64)
                }
            };
            if put {
                // Per object: (chunks + meta) × (payload share) on every replica's volume.
                let disk_bytes = s * amp * replicas_on_group;
                ceilings.push((group_bw / disk_bytes, "disk bandwidth (volume group)".into()));
                let ios = if always {
                    2.0 * o.fsync_lat_rn.max(1.0) + chunks
                } else {
                    (s * amp / 1_048_576.0).max(0.05)
                };
                ceilings.push((
                    group_iops / (ios * replicas_on_group),
                    "disk IOPS (volume group)".into(),
                ));
                if r > 1 {
                    ceilings.push((
                        nic_bytes / (s * (r as f64 - 1.0).max(1.0)),
                        "NIC (replication fan-out at the leader)".into(),
                    ));
                }
            } else {
                ceilings.push((nic_bytes / s, "NIC (object delivery)".into()));
            }
            (
                x,
                chunks + 1.0,
                s / chunks,
                w / x,
                if always && put {
                    "fsync latency (sync always)"
                } else {
                    "stream leader (worker concurrency)"
                },
            )
        }
        Kind::Js | Kind::Kv => {
            // One synchronous publish per worker at a time: the KV putter's per-operation time, plus the seed
            // 000 replication round and fsync terms; the stream leader caps it (seed 004).
            let mut par = terms.js.op_s + s * o.byte_s;
            if r > 1 {
                par += o.rep_round_s + o.rep_byte_s * (r as f64 - 1.0) * s;
            }
            let mut ser = 0.0;
            if always {
                par += (if r > 1 { o.fsync_lat_rn } else { o.fsync_lat_r1 }) * lat_s;
                ser = sync_byte * s / dd;
            }
            par *= cf;
            // The leader's per-message time scales with its followers: each adds half the base work
            // (append entries out, acks in); seed 004 measured R3.
            let rep_scale = (1.0 + 0.5 * (r as f64 - 1.0)) / 2.0;
            // Under `always` the leader's own fsync transfer is part of its per-message time (one WAL).
            let leader_s = (terms.js.leader_op_s + terms.js.leader_byte_s * s) * rep_scale + ser;
            let leader = 1.0 / leader_s;
            // With B publishes in flight a worker pays one round trip per B messages; the rest pipeline at
            // the leader's pace.
            let b = sh.batch.max(1) as f64;
            let x = if b > 1.0 {
                usl((par + (b - 1.0) * leader_s) / b, ser, w, o.sigma)
            } else {
                usl(par, ser, w, o.sigma)
            };
            ceilings.push((leader, "stream leader (one leader per stream)".into()));
            ceilings.push((
                group_bw / (s * amp * replicas_on_group),
                "disk bandwidth (volume group)".into(),
            ));
            let ios = if always {
                o.fsync_lat_rn.max(1.0)
            } else {
                (s * amp / 1_048_576.0).max(0.001)
            };
            ceilings.push((
                group_iops / (ios * replicas_on_group),
                "disk IOPS (volume group)".into(),
            ));
            if r > 1 {
                ceilings.push((
                    nic_bytes / (s * (r as f64 - 1.0).max(1.0)),
                    "NIC (replication fan-out at the leader)".into(),
                ));
            }
            sources.push(format!("{} (per-op)", terms.js.op_source));
            sources.push(format!("{} (leader ceiling)", terms.js.leader_source));
            sources.push(format!("{} (replication, fsync)", o.source));
            scaled = true;
            width = width.max(fit_w * 2.0).max(0.35);
            notes.push(
                "per-op time from a laptop at R1 (the KV putter), replication and fsync from seed 000, leader ceiling from seed 004 (publish mode unknown; its rate exceeds 1 ÷ RTT, so it is read as leader-bound)".into(),
            );
            (
                x,
                1.0,
                s,
                w / x,
                if always {
                    "fsync latency (sync always)"
                } else {
                    "client round trips (sync publish)"
                },
            )
        }
        Kind::Core => {
            let c = &terms.core;
            let m = sh.subscribers as f64;
            let per_pub = c.per_msg_s + c.per_sub_s * m + c.per_byte_s * s * (1.0 + m);
            let client_pub = w * c.client_max_per_s * 128.0 / s.max(128.0);
            let (server_pub, server_why) = if sh.subscribers == 0 {
                // Nobody subscribed: the server parses and drops, with no fan-out to price. The fan-out
                // fit's intercept would say 4-5x too little (lab: 0.83M predicted, 3.4-4.1M measured at
                // 64 B), so the calibrated publisher-only rate is taken as what one server parses;
                // publishers beyond one per server share servers, which no row measured.
                if w > sh.servers as f64 {
                    width = width.max(0.5);
                    notes.push(format!(
                        "core with no subscribers: {w} publishers on {} servers share servers; \
                         the calibrated publisher-only rate is per server",
                        sh.servers
                    ));
                }
                (
                    (sh.servers as f64) * c.client_max_per_s * 128.0 / s.max(128.0),
                    "server parsing (no subscribers)",
                )
            } else {
                (1.0 / per_pub, "server routing (message fan-out)")
            };
            let (p, b) = if client_pub <= server_pub {
                (client_pub, "publisher clients")
            } else {
                (server_pub, server_why)
            };
            ceilings.push((nic_bytes / (s * (1.0 + m)) * (1.0 + m), "NIC".into()));
            sources.push(c.source.clone());
            width = width.max(0.3);
            if sh.servers != 3 {
                scaled = true;
                width = width.max(0.5);
                notes.push(
                    "core terms come from a 3-server cluster (seed 004); other cluster sizes are not modelled".into(),
                );
            }
            // Aggregate as bench reports it: published plus received.
            // Latency: half the calibrated round trip plus the server's time for the message.
            (p * (1.0 + m), 1.0, s, c.ping_avg_s / 2.0 + per_pub, b)
        }
        Kind::Ping => {
            let c = &terms.core;
            let rtt = c.ping_avg_s + 2.0 * c.per_byte_s * s;
            sources.push(c.source.clone());
            width = width.max(0.3);
            (w / rtt, 1.0, s, rtt, "network round trip")
        }
        Kind::Flood => {
            let c = &terms.core;
            let t128 = c.per_msg_s + c.per_sub_s + c.per_byte_s * 128.0 * 2.0;
            let ts = c.per_msg_s + c.per_sub_s + c.per_byte_s * s * 2.0;
            let drain = c.flood_drain_per_s * t128 / ts;
            let delay = w * c.flood_burst_msgs / (2.0 * drain);
            sources.push(c.source.clone());
            width = width.max(0.5);
            notes.push(format!(
                "flood: {} publishers × {} messages queued at once; latency is the average queueing delay",
                w, c.flood_burst_msgs
            ));
            (drain, 1.0, s, delay, "server queue drain")
        }
    };
    if sh.kind.is_jetstream_write() {
        // Cores: the leader's CPU per message (see `cpu_cores`) must fit the server.
        let units = 1.0 + 0.5 * (r as f64 - 1.0);
        let per_op = msgs_per_op * units * (CPU_S_PER_MSG + CPU_S_PER_BYTE * msg_bytes);
        ceilings.push((sh.server.cores as f64 / per_op, "leader CPU (server cores)".into()));
    }
    if let Some(v) = &sh.nats_version {
        let calibrated = &terms.obj_nats_version;
        if v.trim() != calibrated.as_str() && sh.kind != Kind::Core && sh.kind != Kind::Ping && sh.kind != Kind::Flood {
            scaled = true;
            width *= 1.5;
            notes.push(format!(
                "nats-server {v} has no calibration of its own (object and fsync terms: {calibrated}); known changes since: disk I/O concurrency limit lifted in 2.12.14/2.14.4, replicated streams fsync only the RAFT log under `always` from 2.15"
            ));
        }
    }
    if sh.kind.is_jetstream_write() || sh.kind == Kind::ObjGet {
        if always && !lat_measured {
            scaled = true;
            width = width.max(fit_w * 2.0).max(0.3);
            notes.push(format!(
                "fsync latency scaled through the catalog ({} / {} / {}{}): no fio calibration for this volume",
                sh.volume.array.name,
                sh.volume.disk.name,
                sh.volume.raid.as_str(),
                if sh.volume.write_cache { ", write cache on" } else { "" }
            ));
        }
        if r > 1 && sh.servers < r as u32 {
            notes.push(format!("R{r} needs {r} servers; the shape has {}", sh.servers));
        }
    }
    let mut x = ops;
    let mut bottleneck = base_bottleneck.to_string();
    for (cap, label) in &ceilings {
        if cap.is_finite() && *cap < x {
            x = *cap;
            bottleneck = label.clone();
        }
    }
    let p50_s = if x < ops { lat_p50_s * ops / x } else { lat_p50_s };
    let op_rate = sh.rate.unwrap_or(x);
    let cpu = match sh.kind {
        Kind::Core | Kind::Ping | Kind::Flood => {
            let c = &terms.core;
            let m = sh.subscribers as f64;
            CPU_IDLE_CORES + op_rate / (1.0 + m) * (c.per_msg_s + c.per_sub_s * m + c.per_byte_s * s * (1.0 + m))
        }
        _ => cpu_cores(op_rate * msgs_per_op, msg_bytes, 1.0 + 0.5 * (r as f64 - 1.0)),
    };
    if let Some(req) = sh.rate {
        if req > x {
            notes.push(format!("the required {req:.0}/s exceeds the predicted {x:.0}/s"));
        }
    }
    let bytes_per_s = x * s;
    sources.dedup();
    Prediction {
        kind: sh.kind,
        ops_per_s: x,
        bytes_per_s,
        latency_us: Latency {
            p50: p50_s * 1e6,
            p99: p50_s * 1e6 * TAIL_P99_OVER_AVG,
        },
        cpu_per_server: cpu,
        bottleneck,
        band: band(x, width),
        source: sources.join("; "),
        scaled,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
