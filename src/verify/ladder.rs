//! The rows verify runs: seed 004's table, the KV putter, seed 000's object sizes and a fixed-rate ladder
//! (`full`), or a subset that runs in about a minute (`quick`). Each row carries both the bench workload
//! it runs and the cluster shape the predictor needs, so prediction and measurement describe the same
//! work. Counts start at the seeds' figures and are scaled down to a time budget from the prediction's
//! low edge, so a slow `sync_interval: always` disk still finishes.

use crate::bench::{BenchWorkload, ConsumeMode, ObjOp, PublishMode, Storage};
use crate::perf::{Kind, Prediction};
use crate::text::plural_s;
use serde::Serialize;

/// Which ladder to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ladder {
    Quick,
    Full,
}

/// Unacknowledged JetStream publishes in flight per publisher (bench's async default).
pub const JS_WINDOW: usize = 500;

/// One row of the ladder before it runs.
#[derive(Debug, Clone, Serialize)]
pub struct RowSpec {
    /// Stable identifier, e.g. `core-1p1s-128B`.
    pub id: String,
    /// As the seeds name it, e.g. `Core 1p1s 50k×128 B`.
    pub label: String,
    #[serde(skip)]
    pub workload: BenchWorkload,
    /// The seeds' count (messages, puts or objects).
    pub nominal_msgs: u64,
    /// The count that will run after scaling to the time budget.
    pub msgs: u64,
    pub size_bytes: u64,
    /// Open-loop target (fixed-rate rows).
    pub rate_per_s: Option<f64>,
    pub replicas: u8,
    #[serde(skip)]
    pub kind: Kind,
    /// Publishers, putters or getters.
    pub workers: u32,
    pub subscribers: u32,
    /// Publishes in flight per worker (1 = synchronous).
    pub batch: u32,
    /// Why the row will not run on this cluster.
    pub skip: Option<String>,
    /// A row for the site's durable consumers of one stream (`workload.streams[].consumers`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consumer_of: Option<ConsumerOf>,
}

/// Which of the site's streams a consumer row reads like, and what its consumers need.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ConsumerOf {
    pub stream: String,
    /// Durable consumers the site gives the stream; the row measures one of them.
    pub durables: u32,
    /// The stream's publish rate: each durable reads every message, so each must keep up with it.
    pub required_per_s: f64,
}

impl RowSpec {
    /// Bytes the row stores in JetStream before replication (object gets put their objects first).
    pub fn write_bytes(&self) -> u64 {
        match self.workload.stores_its_msgs() {
            true => self.msgs.saturating_mul(self.size_bytes),
            false => 0,
        }
    }
    /// Bytes on disk over all replicas.
    pub fn write_bytes_replicated(&self) -> u64 {
        self.write_bytes().saturating_mul(self.replicas.max(1) as u64)
    }
    pub fn writes(&self) -> bool {
        self.write_bytes() > 0
    }
    pub fn kind_str(&self) -> &'static str {
        self.kind.as_str()
    }
    /// The smallest count worth measuring: enough work for every worker.
    fn min_msgs(&self) -> u64 {
        let w = self.workers.max(1) as u64;
        match self.kind {
            Kind::ObjPut | Kind::ObjGet => 2 * w,
            Kind::Ping => 50,
            // Two full fetch batches at least.
            k if k.is_consumer() => (2 * self.batch as u64).max(200) * w,
            _ => 200 * w,
        }
    }
}

fn size_label(b: u64) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}

fn count_label(n: u64) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// How much a row moves, and with how many clients: what a ladder row is besides its names and workload.
struct RowLoad {
    /// Messages, puts or objects (the seeds' count; scaled to the time budget later).
    msgs: u64,
    size: u64,
    replicas: u8,
    /// Publishers, putters or getters.
    workers: u32,
    subscribers: u32,
    /// Publishes in flight per worker (1 = synchronous).
    batch: u32,
}

/// A row of `kind` with its names, workload and shape, at its nominal count, closed-loop, not skipped.
fn row(id: String, label: String, workload: BenchWorkload, kind: Kind, shape: RowLoad) -> RowSpec {
    RowSpec {
        id,
        label,
        workload,
        nominal_msgs: shape.msgs,
        msgs: shape.msgs,
        size_bytes: shape.size,
        rate_per_s: None,
        replicas: shape.replicas,
        kind,
        workers: shape.workers,
        subscribers: shape.subscribers,
        batch: shape.batch,
        skip: None,
        consumer_of: None,
    }
}

fn core(pubs: usize, subs: usize, msgs: u64, size: u64) -> RowSpec {
    row(
        format!("core-{pubs}p{subs}s-{size}B"),
        format!("Core {pubs}p{subs}s {}×{}", count_label(msgs), size_label(size)),
        BenchWorkload::Core { pubs, subs },
        Kind::Core,
        RowLoad {
            msgs,
            size,
            replicas: 1,
            workers: pubs as u32,
            subscribers: subs as u32,
            batch: 1,
        },
    )
}

fn js(pubs: usize, msgs: u64, size: u64) -> RowSpec {
    row(
        format!("js-r3-{pubs}p-{size}B"),
        format!("JetStream R3 file {pubs}p {}×{}", count_label(msgs), size_label(size)),
        BenchWorkload::Js {
            pubs,
            replicas: 3,
            storage: Storage::File,
            publish: PublishMode::Async,
            window: JS_WINDOW,
            consumers: 0,
        },
        Kind::Js,
        RowLoad {
            msgs,
            size,
            replicas: 3,
            workers: pubs as u32,
            subscribers: 0,
            batch: JS_WINDOW as u32,
        },
    )
}

fn ping() -> RowSpec {
    row(
        "ping-128B".into(),
        "Ping 1k×128 B".into(),
        BenchWorkload::Ping,
        Kind::Ping,
        RowLoad {
            msgs: 1000,
            size: 128,
            replicas: 1,
            workers: 1,
            subscribers: 0,
            batch: 1,
        },
    )
}

fn flood() -> RowSpec {
    row(
        "flood-8p-128B".into(),
        "Flood 8p 20k×128 B".into(),
        BenchWorkload::Flood { pubs: 8 },
        Kind::Flood,
        RowLoad {
            msgs: 20_000,
            size: 128,
            replicas: 1,
            workers: 8,
            subscribers: 1,
            batch: 1,
        },
    )
}

fn kv() -> RowSpec {
    // The KV putter of NATS's documentation: one client, R1, synchronous puts.
    row(
        "kv-1c-128B".into(),
        "KV putter 1c 100k×128 B".into(),
        BenchWorkload::Kv {
            clients: 1,
            replicas: 1,
            storage: Storage::File,
            publish: PublishMode::Sync,
            window: 1,
        },
        Kind::Kv,
        RowLoad {
            msgs: 100_000,
            size: 128,
            replicas: 1,
            workers: 1,
            subscribers: 0,
            batch: 1,
        },
    )
}

fn obj(op: ObjOp, kib: u64, workers: usize, replicas: u8) -> RowSpec {
    let size = kib * 1024;
    // Seed 000 put 4,000 objects per run; large objects get fewer so the row stays in its budget.
    let objects = if kib >= 1024 { 200 } else { 2000 };
    let (name, kind) = match op {
        ObjOp::Put => ("put", Kind::ObjPut),
        ObjOp::Get => ("get", Kind::ObjGet),
    };
    row(
        format!("obj-{name}-{kib}KiB-r{replicas}"),
        format!(
            "Object {name} R{replicas} {workers}w {}×{}",
            count_label(objects),
            size_label(size)
        ),
        BenchWorkload::Obj {
            op,
            clients: workers,
            replicas: replicas as usize,
            storage: Storage::File,
        },
        kind,
        RowLoad {
            msgs: objects,
            size,
            replicas,
            workers: workers as u32,
            subscribers: 0,
            batch: 1,
        },
    )
}

fn fixed_rate(rate: u64) -> RowSpec {
    let mut r = row(
        format!("rate-{}k-r3-128B", rate / 1000),
        format!("Fixed rate {}k/s JetStream R3 128 B", rate / 1000),
        BenchWorkload::Js {
            pubs: 1,
            replicas: 3,
            storage: Storage::File,
            publish: PublishMode::Async,
            window: JS_WINDOW,
            consumers: 0,
        },
        Kind::Js,
        RowLoad {
            msgs: rate,
            size: 128,
            replicas: 3,
            workers: 1,
            subscribers: 0,
            batch: JS_WINDOW as u32,
        },
    );
    r.rate_per_s = Some(rate as f64);
    r
}

/// Messages per fetch (and buffered by consume) in consumer rows: nats bench's default batch.
pub const CONSUMER_BATCH: usize = 500;
/// Messages a consumer row reads at most (the count is scaled down to the time budget).
const CONSUMER_MSGS: u64 = 50_000;

/// One row per stream of the site with durable consumers: one of its durables read as a pull consumer
/// with fetch batches, every message acked (what `emit` defines: a durable with `ack_policy: explicit`
/// and no deliver subject), at the stream's message size and replicas (`replicas_of`: the planned
/// layout's, else the stream's pinned count, else 3). The bench fills a stream of its own first; it
/// never reads the site's streams.
pub fn site_consumers(site: &crate::site::Site, replicas_of: &dyn Fn(&str) -> Option<u8>) -> Vec<RowSpec> {
    site.workload
        .streams
        .iter()
        .filter(|s| s.consumers > 0)
        .map(|s| {
            let r = replicas_of(&s.name).or(s.replicas).unwrap_or(3).max(1);
            let size = s.msg_size_bytes.max(1);
            let mut row = row(
                format!("consumer-fetch-{}-r{r}-{size}B", s.name),
                format!(
                    "Consumer fetch {} (1 of {} durable{}) R{r} {}",
                    s.name,
                    s.consumers,
                    plural_s(s.consumers),
                    size_label(size)
                ),
                BenchWorkload::Consume {
                    mode: ConsumeMode::Fetch,
                    clients: 1,
                    batch: CONSUMER_BATCH,
                    replicas: r as usize,
                    storage: Storage::File,
                    target: None,
                },
                Kind::ConsumerFetch,
                RowLoad {
                    msgs: CONSUMER_MSGS,
                    size,
                    replicas: r,
                    workers: 1,
                    subscribers: 0,
                    batch: CONSUMER_BATCH as u32,
                },
            );
            row.consumer_of = Some(ConsumerOf {
                stream: s.name.clone(),
                durables: s.consumers,
                required_per_s: s.msgs_per_s,
            });
            row
        })
        .collect()
}

/// Most rows of the plan's own assets a ladder gets: one per distinct shape (kind, replicas, size), in
/// plan order, so a site of many like streams adds a few rows, not one per stream.
pub const SITE_ASSET_ROWS: usize = 6;

/// The plan's own streams, KV buckets and object stores as ladder rows at their shapes (issue 39: the quick
/// ladder measured generic R3 128 B and 64 KiB rows, not the plan's R5 1 KiB streams or 512 B values):
/// a stream's async publish (one publisher, the bench's window) at its message size, a bucket's puts at
/// its value size, an object store's puts at its object size, each at the replicas the planned layout
/// gives it (`replicas_of(kind, name)`: else the pinned count, else 3). One row per distinct shape, at most
/// `SITE_ASSET_ROWS`. The bench writes to streams of its own; it never touches the site's.
pub fn site_assets(site: &crate::site::Site, replicas_of: &dyn Fn(Kind, &str) -> Option<u8>) -> Vec<RowSpec> {
    let w = &site.workload;
    let mut shapes: Vec<(Kind, u8, u64)> = Vec::new();
    let mut out = Vec::new();
    let mut push = |kind: Kind, r: u8, size: u64, row: &dyn Fn() -> RowSpec| {
        if out.len() < SITE_ASSET_ROWS && !shapes.contains(&(kind, r, size)) {
            shapes.push((kind, r, size));
            out.push(row());
        }
    };
    for st in &w.streams {
        let r = replicas_of(Kind::Js, &st.name).or(st.replicas).unwrap_or(3).max(1);
        let size = st.msg_size_bytes.max(1);
        push(Kind::Js, r, size, &|| {
            let mut row = js(1, 50_000, size);
            row.id = format!("site-js-{}-r{r}-{size}B", st.name);
            row.label = format!("Stream {} R{r} file 1p {}", st.name, size_label(size));
            row.replicas = r;
            if let BenchWorkload::Js { replicas, .. } = &mut row.workload {
                *replicas = r as usize;
            }
            row
        });
    }
    for kv in &w.kv {
        let r = replicas_of(Kind::Kv, &kv.name).or(kv.replicas).unwrap_or(3).max(1);
        let size = kv.value_size_bytes.max(1);
        push(Kind::Kv, r, size, &|| {
            let mut row = self::kv();
            row.id = format!("site-kv-{}-r{r}-{size}B", kv.name);
            row.label = format!("KV {} R{r} 1c puts {}", kv.name, size_label(size));
            row.size_bytes = size;
            row.replicas = r;
            if let BenchWorkload::Kv { replicas, .. } = &mut row.workload {
                *replicas = r as usize;
            }
            row
        });
    }
    for o in &w.object_stores {
        let r = replicas_of(Kind::ObjPut, &o.name).or(o.replicas).unwrap_or(3).max(1);
        let kib = o.object_size_bytes.div_ceil(1024).max(1);
        push(Kind::ObjPut, r, kib * 1024, &|| {
            let mut row = obj(ObjOp::Put, kib, 1, r);
            row.id = format!("site-obj-put-{}-r{r}-{kib}KiB", o.name);
            row.label = format!("Object store {} put R{r} 1w {}", o.name, size_label(kib * 1024));
            row
        });
    }
    out
}

/// The disk probe verify runs first under `sync_interval: always`: 100 synchronous 128 B publishes.
pub fn probe_row(replicas: u8) -> RowSpec {
    row(
        format!("probe-r{replicas}-sync-128B"),
        format!("Probe R{replicas} sync 100×128 B"),
        BenchWorkload::Js {
            pubs: 1,
            replicas: replicas as usize,
            storage: Storage::File,
            publish: PublishMode::Sync,
            window: 1,
            consumers: 0,
        },
        Kind::Js,
        RowLoad {
            msgs: 100,
            size: 128,
            replicas,
            workers: 1,
            subscribers: 0,
            batch: 1,
        },
    )
}

/// The rows of a ladder for a cluster of `servers` JetStream servers (`max_replicas` possible).
/// Object workers are spread over the servers (one per server); rows needing more replicas than the
/// cluster has are kept, marked skipped with the reason.
pub fn build(ladder: Ladder, servers: u32, max_replicas: u8) -> Vec<RowSpec> {
    build_with(ladder, servers, max_replicas, Vec::new())
}

/// The ladder's rows followed by `extra` (the site's consumer rows), with the same skip rule.
pub fn build_with(ladder: Ladder, servers: u32, max_replicas: u8, extra: Vec<RowSpec>) -> Vec<RowSpec> {
    build_site(ladder, servers, max_replicas, Vec::new(), extra)
}

/// As `build_with`, with the plan's own asset rows (`site_assets`) first.
pub fn build_site(
    ladder: Ladder,
    servers: u32,
    max_replicas: u8,
    first: Vec<RowSpec>,
    extra: Vec<RowSpec>,
) -> Vec<RowSpec> {
    let obj_r = if max_replicas >= 3 { 3 } else { 1 };
    let obj_w = servers.clamp(1, 8) as usize;
    let mut rows = first;
    match ladder {
        Ladder::Quick => {
            rows.push(core(1, 1, 50_000, 128));
            rows.push(js(1, 50_000, 128));
            rows.push(kv());
            rows.push(obj(ObjOp::Put, 64, obj_w, obj_r));
            rows.push(obj(ObjOp::Get, 64, obj_w, obj_r));
            rows.push(ping());
            rows.push(flood());
            rows.push(fixed_rate(10_000));
        }
        Ladder::Full => {
            rows.push(core(1, 1, 50_000, 128));
            rows.push(core(8, 8, 200_000, 128));
            rows.push(core(4, 4, 50_000, 1024));
            for p in 1..=4 {
                rows.push(js(p, 50_000, 128));
            }
            rows.push(js(4, 50_000, 1024));
            rows.push(ping());
            rows.push(flood());
            rows.push(kv());
            for kib in [1, 4, 8, 16, 32, 64, 1024] {
                rows.push(obj(ObjOp::Put, kib, obj_w, obj_r));
                rows.push(obj(ObjOp::Get, kib, obj_w, obj_r));
            }
            for rate in [10_000, 40_000, 80_000, 100_000] {
                rows.push(fixed_rate(rate));
            }
        }
    }
    rows.extend(extra);
    for r in &mut rows {
        if r.replicas > max_replicas {
            r.skip = Some(format!(
                "R{} needs {} JetStream servers; this cluster has {servers}",
                r.replicas, r.replicas
            ));
        }
    }
    rows
}

/// Scale a row's count to `budget_s` seconds at the low edge of its prediction (and `slowdown`, the
/// measured/predicted ratio of earlier writing rows when they ran slower than predicted), never above
/// the seeds' count nor below a minimum that still gives every worker work. Fixed-rate rows run for the
/// budget at their target rate.
pub fn scale(r: &mut RowSpec, p: &Prediction, budget_s: f64, slowdown: f64) {
    if let Some(rate) = r.rate_per_s {
        r.msgs = ((rate * budget_s).round() as u64).max(r.min_msgs());
        return;
    }
    // Core predictions are published plus received; the count is of published messages.
    let per_pub = match r.kind {
        Kind::Core => 1.0 + r.subscribers as f64,
        _ => 1.0,
    };
    let low_per_s = (p.band.low / per_pub) * if r.writes() { slowdown.min(1.0) } else { 1.0 };
    let affordable = if low_per_s.is_finite() && low_per_s > 0.0 {
        (low_per_s * budget_s).floor() as u64
    } else {
        0
    };
    let w = r.workers.max(1) as u64;
    let n = affordable.min(r.nominal_msgs).max(r.min_msgs());
    // Whole multiples of the workers, so every worker does the same share.
    r.msgs = n.div_ceil(w) * w;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::{Band, Latency};

    fn pred(low: f64) -> Prediction {
        Prediction {
            kind: Kind::Js,
            ops_per_s: low * 2.0,
            bytes_per_s: 0.0,
            latency_us: Latency { p50: 1.0, p99: 2.0 },
            cpu_per_server: 0.1,
            bottleneck: "x".into(),
            band: Band { low, high: low * 4.0 },
            source: "test".into(),
            scaled: false,
            calibration: "test".into(),
            extrapolation_distance: 0.0,
            stream: None,
            subjects: None,
            notes: vec![],
        }
    }

    #[test]
    fn full_ladder_has_the_seed_rows_and_every_object_size_both_ways() {
        let rows = build(Ladder::Full, 3, 3);
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        for id in [
            "core-1p1s-128B",
            "core-8p8s-128B",
            "core-4p4s-1024B",
            "js-r3-1p-128B",
            "js-r3-4p-128B",
            "js-r3-4p-1024B",
            "ping-128B",
            "flood-8p-128B",
            "kv-1c-128B",
            "obj-put-1024KiB-r3",
            "obj-get-1KiB-r3",
            "rate-100k-r3-128B",
        ] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
        assert_eq!(rows.iter().filter(|r| r.kind == Kind::ObjPut).count(), 7);
        assert_eq!(rows.iter().filter(|r| r.rate_per_s.is_some()).count(), 4);
        assert!(rows.iter().all(|r| r.skip.is_none()));
        // Ids are unique: results are keyed by them.
        let mut u = ids.clone();
        u.sort_unstable();
        u.dedup();
        assert_eq!(u.len(), ids.len());
    }

    #[test]
    fn r3_rows_are_skipped_on_one_server_with_the_reason() {
        let rows = build(Ladder::Quick, 1, 1);
        let js = rows.iter().find(|r| r.id == "js-r3-1p-128B").unwrap();
        assert!(js.skip.as_deref().unwrap().contains("R3 needs 3"));
        // Objects fall back to R1 instead of being skipped.
        assert!(rows.iter().any(|r| r.id == "obj-put-64KiB-r1" && r.skip.is_none()));
        assert!(build(Ladder::Quick, 3, 3).len() < build(Ladder::Full, 3, 3).len());
    }

    #[test]
    fn counts_shrink_to_the_budget_but_not_below_the_minimum_nor_above_the_seed() {
        let mut r = build(Ladder::Quick, 3, 3).remove(1); // js R3 1p, 50k nominal
        scale(&mut r, &pred(1000.0), 2.0, 1.0);
        assert_eq!(r.msgs, 2000);
        scale(&mut r, &pred(1e9), 2.0, 1.0);
        assert_eq!(r.msgs, 50_000);
        scale(&mut r, &pred(1e-9), 2.0, 1.0);
        assert_eq!(r.msgs, 200);
        // A slower-than-predicted disk seen on earlier rows shrinks later writing rows.
        scale(&mut r, &pred(1000.0), 2.0, 0.25);
        assert_eq!(r.msgs, 500);
        assert_eq!(r.write_bytes_replicated(), 500 * 128 * 3);
    }

    #[test]
    fn the_sites_durable_consumers_become_consumer_rows_at_their_streams_shape() {
        let text = include_str!("../../examples/three-racks-raid1.yaml");
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(text, "three-racks-raid1.yaml", &cat).unwrap();
        // `events` pins no replicas: the layout's count (here 1) wins over the default of 3.
        let extra = site_consumers(&site, &|n| (n == "events").then_some(1));
        let rows = build_with(Ladder::Quick, 3, 3, extra);
        let c: Vec<&RowSpec> = rows.iter().filter(|r| r.consumer_of.is_some()).collect();
        let ids: Vec<&str> = c.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["consumer-fetch-orders-r3-1024B", "consumer-fetch-events-r1-512B"]);
        let o = c[0];
        assert_eq!(
            (o.kind, o.replicas, o.size_bytes, o.workers),
            (Kind::ConsumerFetch, 3, 1024, 1)
        );
        assert_eq!(o.label, "Consumer fetch orders (1 of 2 durables) R3 1 KiB");
        assert_eq!(
            o.consumer_of,
            Some(ConsumerOf {
                stream: "orders".into(),
                durables: 2,
                required_per_s: 5000.0
            })
        );
        // The stream it fills before reading counts in the write budget.
        assert_eq!(o.write_bytes(), o.msgs * 1024);
        // An R3 stream's row is skipped on one server, with the reason, like the ladder's own.
        let one = build_with(Ladder::Quick, 1, 1, site_consumers(&site, &|_| None));
        let skipped = one.iter().find(|r| r.id == "consumer-fetch-orders-r3-1024B").unwrap();
        assert!(skipped.skip.as_deref().unwrap().contains("R3 needs 3"));
        // No consumers, no rows.
        assert_eq!(
            build(Ladder::Quick, 3, 3)
                .iter()
                .filter(|r| r.consumer_of.is_some())
                .count(),
            0
        );
    }

    #[test]
    fn fixed_rate_rows_run_for_the_budget_and_core_counts_published_messages() {
        let mut rows = build(Ladder::Quick, 3, 3);
        let rate = rows.iter_mut().find(|r| r.rate_per_s.is_some()).unwrap();
        scale(rate, &pred(1.0), 3.0, 1.0);
        assert_eq!(rate.msgs, 30_000);
        let core = rows.iter_mut().find(|r| r.id == "core-1p1s-128B").unwrap();
        scale(core, &pred(10_000.0), 1.0, 0.1);
        // Aggregate 10k/s with one subscriber is 5k/s published; core writes nothing, so no slowdown.
        assert_eq!(core.msgs, 5000);
        assert_eq!(core.write_bytes(), 0);
    }
}
