//! Fitting: calibration rows to the model's terms (object puts and gets, JetStream, core NATS, the store),
//! with where each term came from. Nothing here predicts a shape (see `predict`).

use super::{band, Band, Kind, CHUNK_BYTES, REF_CONSUMERS};
use crate::layout::Raid;
use crate::perf::calibration::{CalibrationFile, CalibrationSet, Row};
use crate::perf::fit::minimise;
use crate::perf::leader::{fit_classes, LeaderClass};
use serde::Serialize;

mod obj;
pub(crate) use obj::{consumer_factor, obj_time, usl};
pub use obj::{fit_obj, leave_one_out, obj_row_rate, obj_rows, LooRow};

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
    /// Per operation at R1 with delayed sync, one client (1 ÷ rate of a KV putter run): synchronous clients'
    /// round trip only where no calibration measured synchronous clients (perf::sync_law prices them).
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
    /// Stream-leader host classes, one per file with delayed-sync JetStream rows (perf::leader).
    pub leaders: Vec<LeaderClass>,
    /// Synchronous clients (sync publishes, KV puts), one host per file that measured them (perf::sync_law).
    pub sync_hosts: Vec<crate::perf::sync_law::SyncHost>,
    /// Consumer-read laws, one per file, read mode and replica count (perf::consumer).
    pub consumer: crate::perf::consumer::ConsumerTerms,
    /// always ÷ delayed measured on array volumes with the write cache off (seed 000's object-put pairs),
    /// which price `always` on catalog volumes (model::always).
    pub always_ratios: Vec<AlwaysRatio>,
}

/// One measured always ÷ delayed ratio: the same shape under both sync modes on a volume whose write cache
/// was off (`hardware.write_cache: false`).
#[derive(Debug, Clone, Serialize)]
pub struct AlwaysRatio {
    pub raid: Raid,
    pub replicas: u8,
    pub size_bytes: u64,
    pub workers: u32,
    pub ratio: f64,
    pub source: String,
}

/// The always ÷ delayed pairs of fittable object-put rows (same label, servers, size, workers and
/// consumers under both sync modes) in files measured with the array's write cache off.
fn always_ratios(set: &CalibrationSet) -> Vec<AlwaysRatio> {
    let mut out = Vec::new();
    for f in &set.files {
        if f.hardware.get("write_cache").and_then(|v| v.as_bool()) != Some(false) {
            continue;
        }
        let rows: Vec<&Row> = f
            .rows()
            .filter(|r| r.is(Kind::ObjPut) && r.fit && !r.flags.iter().any(|x| x == "duplicate_label"))
            .collect();
        for a in rows.iter().filter(|r| r.sync_always() == Some(true)) {
            let twin = rows.iter().find(|d| {
                d.sync_always() == Some(false)
                    && d.label == a.label
                    && d.servers == a.servers
                    && d.size == a.size
                    && d.workers == a.workers
                    && d.consumers == a.consumers
                    && d.consumers_placement == a.consumers_placement
            });
            let (Some(d), Some(raid)) = (twin, a.raid.as_deref().and_then(Raid::parse)) else {
                continue;
            };
            if let (Some(x), Some(y), Some(size)) =
                (a.measured("put_obj_per_s"), d.measured("put_obj_per_s"), a.size_bytes())
            {
                if y > 0.0 {
                    out.push(AlwaysRatio {
                        raid,
                        replicas: a.replicas.unwrap_or(1),
                        size_bytes: size,
                        workers: a.workers.unwrap_or(1),
                        ratio: x / y,
                        source: f.id.clone(),
                    });
                }
            }
        }
    }
    out
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
        .rows_of(Kind::ObjGet)
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
    f.rows_named(kind)
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
        .rows_named(kind)
        .find(|(_, r)| r.fit && r.measured(key).is_some())
        .map(|(file, _)| file.id.clone())?;
    let xs: Vec<f64> = f
        .rows_named(kind)
        .filter(|(file, r)| file.id == first && r.fit)
        .filter_map(|(_, r)| r.measured(key))
        .collect();
    Some((xs.iter().sum::<f64>() / xs.len() as f64, first))
}

/// A synchronous KV row with a rate: fitted, not an asynchronous put.
fn is_sync_kv(r: &Row) -> bool {
    r.fit && !r.async_put() && r.measured("ops_per_s").is_some()
}

/// A KV putter row: a synchronous KV row of one client at R1.
fn is_putter(r: &Row) -> bool {
    is_sync_kv(r) && r.replicas.unwrap_or(1) <= 1 && r.workers.unwrap_or(1) <= 1
}

/// The mean rate of the KV rows `keep` takes in the first file that has one.
fn kv_mean(f: &CalibrationSet, keep: fn(&Row) -> bool) -> Option<(f64, String)> {
    let first = f
        .rows_of(Kind::Kv)
        .find(|(_, r)| keep(r))
        .map(|(file, _)| file.id.clone())?;
    let xs: Vec<f64> = f
        .rows_of(Kind::Kv)
        .filter(|(file, r)| file.id == first && keep(r))
        .filter_map(|(_, r)| r.measured("ops_per_s"))
        .collect();
    Some((xs.iter().sum::<f64>() / xs.len() as f64, first))
}

fn need(v: Option<(f64, String)>, what: &str) -> anyhow::Result<(f64, String)> {
    v.ok_or_else(|| anyhow::anyhow!("calibration: no row gives {what}; add it or keep the built-in file that has it"))
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
            let mut ids: Vec<String> = set.rows_of(Kind::ObjPut).map(|(f, _)| f.id.clone()).collect();
            ids.dedup();
            ids.join("+")
        };
        let obj = fit_obj(&obj_rows, &src);

        // The putter: one client at R1 (a calibrate file also has a replicated KV row, which
        // perf::leader prices on its own host).
        // The per-operation time of a synchronous client where no calibration measured synchronous clients
        // (perf::sync_law prices them wherever one did): fitted rows first; the NATS docs' laptop putter
        // (held out, `fit: false`) only when nothing else gives one.
        let (kv_rate, kv_src) = need(
            kv_mean(set, is_putter)
                // A file with replicated KV rows only: their mean, as before calibrate measured R3
                // (synchronous puts only: an asynchronous put is no client's round trip).
                .or_else(|| kv_mean(set, is_sync_kv))
                .or_else(|| val(set, Kind::Kv.as_str(), "kv-put-1-client", "ops_per_s")),
            "the KV putter rate",
        )?;
        // A putter measured under `sync_interval: always` already paid its fsync, which predictions add
        // from the object terms: take it out of the per-operation time (at least a tenth remains).
        let kv_row = set
            .rows_of(Kind::Kv)
            .find(|(f, r)| f.id == kv_src && is_putter(r))
            .or_else(|| set.rows_of(Kind::Kv).find(|(f, r)| f.id == kv_src && is_sync_kv(r)))
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
            .rows_of(Kind::Js)
            .filter(|(_, r)| r.fit && r.one_subject())
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
            .rows_of(Kind::ObjPut)
            .map(|(f, _)| f.nats_version.clone())
            .next()
            .unwrap_or_else(|| "unknown".into());
        let obj_get = fit_get(set, obj.sigma);
        // Named server models resolve through the shipped catalog (a calibration names the hardware it ran
        // on, not a user's --models override).
        let leaders = fit_classes(set, &crate::catalog::Catalog::builtin());
        if leaders.is_empty() {
            anyhow::bail!(
                "calibration: no delayed-sync js rows with durable_pubs_per_s and async publishing; the stream-leader model needs one"
            );
        }
        let consumer = crate::perf::consumer::ConsumerTerms::fit(set, &crate::catalog::Catalog::builtin());
        let sync_hosts = crate::perf::sync_law::fit_hosts(set, &crate::catalog::Catalog::builtin());
        Ok(Terms {
            sync_hosts,
            always_ratios: always_ratios(set),
            leaders,
            consumer,
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
        .rows_of(Kind::Core)
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
    // Rows of one message size (seed 002: 16 B throughout) cannot separate the per-byte term from the
    // per-message one: fit a + b·subscribers alone and leave the per-byte term at zero (folded into a).
    let sol = match solve3(ata, atb) {
        Some(x) => x,
        None => solve_without_bytes(&pick).ok_or_else(|| {
            anyhow::anyhow!(
                "calibration: the core rows cannot be fitted: they need at least two subscriber counts (rows with subscribers > 0 and aggregate_msgs_per_s)"
            )
        })?,
    };
    let (a, b, c) = (sol[0].max(0.01) * 1e-6, sol[1].max(0.0) * 1e-6, sol[2].max(0.0) * 1e-9);
    let client_max = set
        .rows_of(Kind::Core)
        .filter_map(|(_, r)| {
            (r.subscribers == Some(0))
                .then(|| r.measured("pub_msgs_per_s"))
                .flatten()
        })
        .fold(0.0f64, f64::max);
    let (ping_avg, ping_src) = need(
        val_or_any(set, Kind::Ping.as_str(), "Ping 1k×128 B", "rtt_avg_ms"),
        "ping rtt_avg_ms",
    )?;
    let (ping_p99, _) = need(
        val_or_any(set, Kind::Ping.as_str(), "Ping 1k×128 B", "rtt_p99_ms"),
        "ping rtt_p99_ms",
    )?;
    let (flood_ms, _) = need(
        val_or_any(set, Kind::Flood.as_str(), "Flood 8p 20k×128 B", "delay_avg_ms"),
        "flood delay_avg_ms",
    )?;
    let flood_row = set.rows_of(Kind::Flood).next().map(|(_, r)| r.clone());
    let pubs = flood_row.as_ref().and_then(|r| r.publishers).unwrap_or(8) as f64;
    let burst = flood_row.as_ref().and_then(|r| r.msgs).unwrap_or(20_000) as f64;
    // A burst of Q messages drained at D per second waits Q ÷ 2D on average (uniform queue position). A
    // measured drain rate (the subscriber's, from `natsplan calibrate`) is used as it is.
    let drain = mean_of(set, Kind::Flood.as_str(), "drain_msgs_per_s")
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

/// Least squares of µs per published message on `a + b·subscribers` (no per-byte term), as `[a, b, 0]`.
fn solve_without_bytes(rows: &[&(f64, f64, f64, String)]) -> Option<[f64; 3]> {
    let n = rows.len() as f64;
    let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
    for r in rows {
        let (x, y) = (r.0, (1.0 + r.0) / r.2 * 1e6);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    let det = n * sxx - sx * sx;
    if det.abs() < 1e-12 {
        return None;
    }
    let b = (n * sxy - sx * sy) / det;
    Some([(sy - b * sx) / n, b, 0.0])
}

#[allow(clippy::needless_range_loop)] // Gaussian elimination reads best with indices.
pub(crate) fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
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
        .rows_of(Kind::ObjPut)
        .filter(|(_, r)| r.label == "r0-single" && r.size.as_deref() == Some("1024KiB") && r.workers == Some(1))
        .filter_map(|(_, r)| r.measured("put_obj_per_s"))
        .collect();
    let r3_rate = set
        .rows_of(Kind::ObjPut)
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
