//! `natsplan predict`: a one-off performance prediction for a cluster shape (servers, replicas, sync mode,
//! size, workers, kind of load, and the volume under each server), with its bottleneck, error band and
//! calibration source. The defaults describe seed 000's lab volume (EF600, 2-disk group, write cache off)
//! so a seed row can be predicted by giving only what varies.

use crate::catalog::Catalog;
use crate::cli::Global;
use crate::error::{bad_input, Failure, Outcome};
use crate::layout::Raid;
use crate::perf::{predict_shape, Calibration, Kind, Shape, SyncClass, VolumeSpec};
use crate::report::predict::PredictReport;
use crate::units::{parse_size, SyncMode};
use anyhow::anyhow;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct PredictArgs {
    /// Calibration file to use besides the built-in seed calibrations (its rows replace theirs by kind).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// NATS servers in the cluster.
    #[arg(long, default_value = "3", value_name = "N")]
    pub servers: String,
    /// Stream replicas (1..5).
    #[arg(long, default_value = "3", value_name = "R")]
    pub replicas: String,
    /// `always` (fsync before every ack) or `delayed` (or an interval such as 2m, which is delayed).
    #[arg(long, default_value = "delayed", value_name = "MODE")]
    pub sync: String,
    /// Message, value or object size (8KiB, 1MiB, 128B).
    #[arg(long, default_value = "8KiB", value_name = "SIZE")]
    pub size: String,
    /// Concurrent clients (publishers, putters, getters), spread across the servers.
    #[arg(long, default_value = "1", value_name = "W")]
    pub workers: String,
    /// core, js, kv, obj-put, obj-get, ping, flood, or a consumer read: consumer-fetch, consumer-consume,
    /// consumer-ordered.
    #[arg(long, value_name = "KIND")]
    pub kind: String,
    /// A required rate (ops/s) for the CPU figure; the prediction says if it exceeds capacity, and the run
    /// exits 1 when it does (after the report).
    #[arg(long, value_name = "R")]
    pub rate: Option<String>,
    /// Core: subscribers, each receiving every message (default: as many as workers).
    #[arg(long, value_name = "M")]
    pub subscribers: Option<String>,
    /// JetStream consumers reading while publishers write (seed 000 ran 20).
    #[arg(long, default_value = "0", value_name = "C")]
    pub consumers: String,
    /// `spread` consumers over the servers, or keep them all on the `first` server.
    #[arg(long, default_value = "spread", value_name = "WHERE")]
    pub consumers_on: String,
    /// Array model from the catalog.
    #[arg(long, default_value = "EF600", value_name = "MODEL")]
    pub array: String,
    /// Disk model from the catalog.
    #[arg(long, default_value = "nvme-3.84t", value_name = "MODEL")]
    pub disk: String,
    /// RAID level of each server's volume group: raid0, raid1, raid10, raid6, ddp-raid1.
    #[arg(long, default_value = "raid1", value_name = "LEVEL")]
    pub raid: String,
    /// Disks in the volume group.
    #[arg(long, default_value = "2", value_name = "N")]
    pub disks: String,
    /// Array write cache for the volumes: on or off. On by default, as a site's `write_cache` is (since
    /// 2026-12-05; it was off): the NATS-on-E-Series guide's runs had it off, so pass `--write-cache off`
    /// to compare with them.
    #[arg(long, default_value = "on", value_name = "ON|OFF")]
    pub write_cache: String,
    /// Servers' LUNs sharing one volume group (seed 000: 3; pattern 1: 1).
    #[arg(long, default_value = "1", value_name = "N")]
    pub luns_per_group: String,
    /// js/kv: publishes in flight per worker before waiting for acks, as `--batch` of `nats bench js pub
    /// async` and `natsplan bench js` (1 = synchronous). Default: 1, or 256 with --publish async.
    /// `--window` is the same flag.
    #[arg(long, alias = "window", value_name = "N")]
    pub batch: Option<String>,
    /// js/kv: `sync` (each publisher waits for its ack) or `async` (--batch publishes in flight).
    /// Default: sync with --batch 1 or none, else async.
    #[arg(long, value_name = "sync|async")]
    pub publish: Option<String>,
    /// nats-server version to predict for (default: as calibrated); another version widens the band.
    #[arg(long, value_name = "VERSION")]
    pub nats_version: Option<String>,
    /// Server model from the catalog (cores, memory, NIC).
    #[arg(long, value_name = "MODEL")]
    pub server_model: Option<String>,
    /// js: distinct subjects the messages go to, round-robin (as `bench js --multisubject
    /// --multisubjectmax N`; a site's `distinct_subjects:`). Default: one subject, and the prediction says
    /// what many would cost.
    #[arg(long, value_name = "N")]
    pub subjects: Option<String>,
}

/// `--subjects`: a whole number of subjects, js only.
fn subjects(a: &PredictArgs, kind: Kind) -> Result<Option<u64>, Failure> {
    let Some(v) = &a.subjects else { return Ok(None) };
    if kind != Kind::Js {
        return Err(bad_input(anyhow!(
            "--subjects prices JetStream publishes over many subjects; drop it for {} (a KV put's key is its subject: bench's KV rows put a new key each)",
            kind.as_str()
        )));
    }
    let n: u64 = num("subjects", v, "give the distinct subjects, e.g. --subjects 10000")?;
    let bound = crate::input::limits::DISTINCT_SUBJECTS;
    if !(bound.min..=bound.max).contains(&(n as f64)) {
        return Err(bad_input(anyhow!(
            "--subjects {n} is out of range; use {:.0}..{:.0} ({})",
            bound.min,
            bound.max,
            bound.why
        )));
    }
    Ok(Some(n))
}

/// `--consumers` and `--consumers-on`, refused where the kind does not price them (they were ignored
/// silently before: `--kind kv --consumers 3` priced the puts as if nothing read them).
fn consumers(a: &PredictArgs, kind: Kind) -> Result<(u32, bool), Failure> {
    let n: u32 = num("consumers", &a.consumers, "give a whole number, e.g. --consumers 20")?;
    let spread = match a.consumers_on.to_ascii_lowercase().as_str() {
        "spread" => true,
        "first" => false,
        other => {
            return Err(bad_input(anyhow!(
                "--consumers-on '{other}' is unknown; use spread or first"
            )))
        }
    };
    let objects = matches!(kind, Kind::ObjPut | Kind::ObjGet);
    if n > 0 && !(objects || kind == Kind::Js) {
        return Err(bad_input(anyhow!(
            "--consumers {n}: --kind {} does not price consumers reading (only js, obj-put and obj-get do; a KV bucket's watchers are not modelled); drop --consumers, or price the stream they read with --kind js --consumers {n}",
            kind.as_str()
        )));
    }
    if !spread && !objects {
        return Err(bad_input(anyhow!(
            "--consumers-on first: where consumers sit is priced for obj-put and obj-get only (a js stream's readers are priced on its leader's host); drop --consumers-on for --kind {}",
            kind.as_str()
        )));
    }
    Ok((n, spread))
}

fn num<T: std::str::FromStr>(flag: &str, v: &str, fix: &str) -> Result<T, Failure> {
    v.trim()
        .replace('_', "")
        .parse::<T>()
        .map_err(|_| bad_input(anyhow!("--{flag} '{v}' is not valid; {fix}")))
}

/// The volume under each server, from the array, disk, RAID and cache flags.
fn volume(a: &PredictArgs, catalog: &Catalog) -> Result<VolumeSpec, Failure> {
    let array = catalog.array(&a.array).cloned().ok_or_else(|| {
        bad_input(anyhow!(
            "--array '{}' is not in the catalog; use one of: {}",
            a.array,
            catalog.array_names().join(", ")
        ))
    })?;
    let disk = catalog.disk(&a.disk).cloned().ok_or_else(|| {
        bad_input(anyhow!(
            "--disk '{}' is not in the catalog; use one of: {}",
            a.disk,
            catalog.disk_names().join(", ")
        ))
    })?;
    let raid = Raid::parse(&a.raid).ok_or_else(|| {
        bad_input(anyhow!(
            "--raid '{}' is unknown; use raid0, raid1, raid10, raid6 or ddp-raid1",
            a.raid
        ))
    })?;
    let disks: u32 = num("disks", &a.disks, "give the disks in the volume group, e.g. --disks 2")?;
    let (min, even) = raid.disk_rule();
    // Past 1024 (natsplan's bound, not an array's) the old message said "needs at least 2" (issue 41).
    if disks > 1024 {
        return Err(bad_input(anyhow!(
            "--disks {disks} is more than natsplan models in one volume group (at most 1024); give the disks \
             in the volume group, e.g. --disks 8"
        )));
    }
    if disks < min.max(1) || (even && !disks.is_multiple_of(2)) {
        return Err(bad_input(anyhow!(
            "--disks {disks} does not fit {}: it needs at least {min}{}",
            raid.as_str(),
            if even { ", an even number" } else { "" }
        )));
    }
    let write_cache = match a.write_cache.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" => true,
        "off" | "false" | "no" => false,
        other => return Err(bad_input(anyhow!("--write-cache '{other}' is not on or off"))),
    };
    let luns_on_group: u32 = num("luns-per-group", &a.luns_per_group, "give a whole number, e.g. 1 or 3")?;
    if luns_on_group == 0 {
        return Err(bad_input(anyhow!("--luns-per-group must be at least 1")));
    }
    Ok(VolumeSpec {
        array,
        disk,
        raid,
        disks,
        write_cache,
        luns_on_group,
    })
}

/// Turn the flags into a shape, naming the flag and the fix on any error.
/// A calibration's own host as a server model (`--server-model ID` with `--calibration FILE`): predict for
/// the machine the file measured, with its probe and round trips.
fn calibrated_host(cal: &Calibration, name: &str) -> Option<crate::catalog::ServerModel> {
    cal.terms
        .leaders
        .iter()
        .find(|c| c.host.server_model.eq_ignore_ascii_case(name))
        .map(|c| c.server_model())
}

pub fn shape(a: &PredictArgs, catalog: &Catalog, cal: &Calibration) -> Result<Shape, Failure> {
    let kind = Kind::parse(&a.kind).ok_or_else(|| {
        bad_input(anyhow!(
            "--kind '{}' is unknown; use one of: {}",
            a.kind,
            Kind::ALL.map(|k| k.as_str()).join(", ")
        ))
    })?;
    let servers: u32 = num(
        "servers",
        &a.servers,
        "give a whole number of servers, e.g. --servers 3",
    )?;
    if !(1..=64).contains(&servers) {
        return Err(bad_input(anyhow!("--servers {servers} is out of range; use 1..64")));
    }
    let replicas: u8 = num("replicas", &a.replicas, "use 1..5, e.g. --replicas 3")?;
    if !(1..=5).contains(&replicas) {
        return Err(bad_input(anyhow!(
            "--replicas {replicas} is out of range; NATS allows 1..5"
        )));
    }
    if replicas as u32 > servers && !matches!(kind, Kind::Core | Kind::Ping | Kind::Flood) {
        return Err(bad_input(anyhow!(
            "--replicas {replicas} needs at least {replicas} servers but --servers is {servers}; raise --servers or lower --replicas"
        )));
    }
    let sync = if a.sync.eq_ignore_ascii_case("delayed") {
        SyncClass::Delayed
    } else {
        SyncMode::parse(&a.sync)
            .map(SyncClass::from)
            .map_err(|e| bad_input(anyhow!("--sync '{}': {e}; or write delayed", a.sync)))?
    };
    let size_bytes = parse_size(&a.size).map_err(|e| bad_input(anyhow!("--size: {e}")))?;
    if size_bytes == 0 || size_bytes > 1 << 40 {
        return Err(bad_input(anyhow!("--size {} is out of range; use 1B..1TiB", a.size)));
    }
    let workers: u32 = num(
        "workers",
        &a.workers,
        "give a whole number of clients, e.g. --workers 3",
    )?;
    if !(1..=100_000).contains(&workers) {
        return Err(bad_input(anyhow!("--workers {workers} is out of range; use 1..100000")));
    }
    let rate = match &a.rate {
        Some(r) => {
            let v: f64 = num("rate", r, "give operations per second, e.g. --rate 500")?;
            if !v.is_finite() || v <= 0.0 {
                return Err(bad_input(anyhow!(
                    "--rate {r} must be a positive number of operations per second"
                )));
            }
            crate::input::limits::REQUIRED_RATE_PER_S
                .check_f64(v)
                .map_err(|why| bad_input(anyhow!("--rate {r}: {why}")))?;
            Some(v)
        }
        None => None,
    };
    let subscribers: u32 = match &a.subscribers {
        Some(s) => num("subscribers", s, "give a whole number, e.g. --subscribers 5")?,
        None if kind == Kind::Core => workers,
        None => 0,
    };
    let (consumers, consumers_spread) = consumers(a, kind)?;
    let volume = volume(a, catalog)?;
    let batch = publish_window(a)?;
    let subjects = subjects(a, kind)?;
    let server_name = a.server_model.clone().unwrap_or_else(|| catalog.default_server.clone());
    let server = match catalog.server(&server_name) {
        Some(m) => m.clone(),
        None => calibrated_host(cal, &server_name).ok_or_else(|| {
            bad_input(anyhow!(
                "--server-model '{server_name}' is neither in the catalog nor a calibrated host; use one of: {}{}",
                catalog.server_names().join(", "),
                cal.terms
                    .leaders
                    .iter()
                    .map(|c| format!(", {}", c.host.server_model))
                    .collect::<String>()
            ))
        })?,
    };
    Ok(Shape {
        kind,
        servers,
        replicas,
        sync,
        size_bytes,
        workers,
        subscribers,
        consumers,
        consumers_spread,
        volume,
        server,
        rate,
        batch,
        nats_version: a.nats_version.clone(),
        subjects,
    })
}

/// The window the publish flags ask for: `--batch` (alias `--window`), else 1 (synchronous), or 256 (the
/// planner's default window) with `--publish async`; `--publish sync` is 1 and takes no larger batch.
fn publish_window(a: &PredictArgs) -> Result<u32, Failure> {
    let batch = match &a.batch {
        Some(b) => {
            let v: u32 = num(
                "batch",
                b,
                "give publishes in flight per worker, e.g. --batch 500 (1 = sync)",
            )?;
            if !(1..=1_000_000).contains(&v) {
                return Err(bad_input(anyhow!("--batch {v} is out of range; use 1..1000000")));
            }
            Some(v)
        }
        None => None,
    };
    match a.publish.as_deref().map(|p| p.to_ascii_lowercase()) {
        None => Ok(batch.unwrap_or(1)),
        Some(p) if p == "sync" => {
            if batch.is_some_and(|b| b > 1) {
                return Err(bad_input(anyhow!(
                    "--publish sync waits for each ack, so it takes no --batch above 1; drop it or use --publish async"
                )));
            }
            Ok(1)
        }
        Some(p) if p == "async" => Ok(batch.unwrap_or(256)),
        Some(p) => Err(bad_input(anyhow!("--publish '{p}' is unknown; use sync or async"))),
    }
}

pub fn run(g: &Global, a: PredictArgs) -> Result<Outcome, Failure> {
    let catalog = super::catalog(g)?;
    let (cal, _) = crate::plan::inputs::load_calibration(a.calibration.as_deref())?;
    if let Some(n) = cal.set.busy_note() {
        eprintln!("natsplan: {n}");
    }
    let sh = shape(&a, &catalog, &cal)?;
    let p = predict_shape(&cal.terms, &catalog, &sh);
    let report = PredictReport {
        prediction: p,
        shape: sh,
    };
    super::print(g, &report)?;
    // `--rate` is a check the user asked for: a rate above the prediction fails it (exit 1, issue 39), as
    // the report's note says; before, the note alone and exit 0.
    let p = &report.prediction;
    match report.shape.rate {
        Some(req) if req > p.ops_per_s => Ok(Outcome::CheckFailed(format!(
            "--rate {req:.0}/s is above the predicted {:.0}/s (band {:.0}–{:.0}, bound by {})",
            p.ops_per_s, p.band.low, p.band.high, p.bottleneck
        ))),
        _ => Ok(Outcome::Ok),
    }
}
