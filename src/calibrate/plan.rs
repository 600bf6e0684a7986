//! Which points `calibrate` measures, and how many times, within a time budget.
//!
//! The points are chosen to separate the performance model's terms (perf::model), avoiding the regression
//! traps Cruise Control documents (narrow sample bands, collinear inputs):
//! - object puts vary ONE factor at a time around a base (R3 when the cluster allows, 2 workers): object
//!   size in ×4 log steps across the 128 KiB chunk boundary (fixed vs per-chunk vs per-byte time), replicas
//!   (R1 vs R3 at a small and a large size: replication round vs per-follower bytes), workers (1, 2, 4 at a
//!   small and a large size: USL σ vs the serial fsync transfer);
//! - JetStream async publishes vary the message size in log steps (the stream leader's `a + b·bytes`);
//! - core pub/sub varies subscribers and size independently (`a + b·subs + c·bytes·(1+subs)`);
//! - a fixed-rate sweep in ×3 steps finds the knee of the leader's capacity;
//! - one KV putter, one ping and one flood row feed the terms that need them.
//!
//! Every point runs `repeats` times (interleaved: all points once, then again) so the noise can be told
//! from the model's error. A few points are held out of the fit and predicted from the others
//! (cross-validation). Sizes are deliberately off verify's ladder (1, 4, 8, 16, 32, 64, 1024 KiB; 128 B
//! and 1 KiB messages) so verify's rows test the calibration on shapes it has not seen.
//!
//! The plan is pure: it only says what to run. A budget too small for the minimum is an error that says
//! what the minimum is; a budget between the minimum and the full plan shortens runs, then repeats, then
//! drops optional points, and lists what it dropped.

use crate::perf::Kind;
use serde::Serialize;

/// Seconds of setup and teardown per run (connect, create and delete the stream or store): an estimate
/// the runner corrects from the runs it has done.
pub const RUN_OVERHEAD_S: f64 = 0.6;
/// Run length bounds (seconds of measured work per run).
pub const MIN_RUN_S: f64 = 0.4;
pub const MAX_RUN_S: f64 = 4.0;
/// Fit rows the object model needs (perf: ten terms, at least twelve rows).
pub const MIN_OBJ_FIT_ROWS: usize = 12;

/// One measurement point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// Stable id, e.g. `obj-r3-w2-12KiB`.
    pub id: String,
    /// The model kind it calibrates (`js` for the fixed-rate sweep too).
    #[serde(skip)]
    pub kind: Kind,
    pub size_bytes: u64,
    pub replicas: u8,
    /// Publishers, putters or clients.
    pub workers: u32,
    pub subscribers: u32,
    /// Open-loop target for the fixed-rate sweep.
    pub rate_per_s: Option<f64>,
    /// Held out of the fit and predicted from the rest.
    pub holdout: bool,
    /// Optional points are dropped first when the budget is short.
    pub optional: bool,
    /// Async publishes in flight per publisher when not the runner's `JS_WINDOW` (the small-window point
    /// that prices the leader's closed-loop base latency, perf::leader); on a KV point, the asynchronous
    /// puts in flight per client (none: synchronous puts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// Distinct subjects the messages round-robin over (`bench --multisubject`): the many-subjects point
    /// (perf::subjects). None: one subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subjects: Option<u32>,
    /// Consumers reading every message while the publishers write (`bench js --consumers`): the readers
    /// point (perf::leader::ReadersStretch). None: no readers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readers: Option<u32>,
    /// Which factor this point varies from the base (`size`, `replicas`, `workers`, `subscribers`, `rate`,
    /// `base`, `combined` for held-out points that vary two at once).
    pub varies: String,
}

impl Point {
    /// A JetStream point published synchronously (one publish in flight per publisher): its rate is the
    /// round trip of one publish, which prices sync publishing and KV puts at R>1 (perf::leader).
    pub fn sync_publish(&self) -> bool {
        self.kind == Kind::Js && self.id.starts_with("jssync-")
    }

    /// One operation in flight per client: a synchronous publish or KV put (its rate is a round trip per
    /// operation: a run is never sized from an async window's rate, nor one from it).
    pub fn one_in_flight(&self) -> bool {
        self.sync_publish() || (self.kind == Kind::Kv && self.window.is_none())
    }

    /// The shape key verify's rows are compared with (kind, size, replicas, workers, subscribers, rate).
    pub fn key(&self) -> (Kind, u64, u8, u32, u32, Option<u64>) {
        (
            self.kind,
            self.size_bytes,
            self.replicas,
            self.workers,
            self.subscribers,
            self.rate_per_s.map(|r| r as u64),
        )
    }
}

/// The plan: points, repeats, run length, and what the budget made it drop.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurePlan {
    pub points: Vec<Point>,
    /// Runs per point (interleaved passes).
    pub repeats: u32,
    /// Measured seconds per run.
    pub run_s: f64,
    pub budget_s: f64,
    /// Estimated wall time of the whole plan.
    pub estimated_s: f64,
    /// What the budget made the plan leave out, in words.
    pub dropped: Vec<String>,
}

impl MeasurePlan {
    pub fn runs(&self) -> usize {
        self.points.len() * self.repeats as usize
    }
}

fn size_label(b: u64) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}KiB", b / 1024)
    } else {
        format!("{b}B")
    }
}

/// A point of `kind` (its id from `prefix` and the shape) that varies `varies`, fitted and not optional
/// unless [`Point::flags`] says otherwise.
fn pt(kind: Kind, prefix: &str, size: u64, replicas: u8, workers: u32, subs: u32, varies: &str) -> Point {
    let id = match kind {
        Kind::ObjPut | Kind::ObjGet => format!("{prefix}-r{replicas}-w{workers}-{}", size_label(size)),
        Kind::Js | Kind::Kv | Kind::ConsumerFetch => format!("{prefix}-r{replicas}-{workers}p-{}", size_label(size)),
        Kind::Core => format!("{prefix}-{workers}p{subs}s-{}", size_label(size)),
        _ => format!("{prefix}-{workers}p-{}", size_label(size)),
    };
    Point {
        id,
        kind,
        size_bytes: size,
        replicas,
        workers,
        subscribers: subs,
        rate_per_s: None,
        holdout: false,
        optional: false,
        window: None,
        subjects: None,
        readers: None,
        varies: varies.into(),
    }
}

impl Point {
    /// This point held out of the fit (`holdout`) and dropped first when the budget is short (`optional`).
    fn flags(self, holdout: bool, optional: bool) -> Point {
        Point {
            holdout,
            optional,
            ..self
        }
    }

    fn held_out(self) -> Point {
        Point { holdout: true, ..self }
    }

    fn optional(self) -> Point {
        Point { optional: true, ..self }
    }
}

/// Every point for a cluster whose streams can have up to `max_replicas` replicas.
pub fn all_points(max_replicas: u8) -> Vec<Point> {
    let rb = if max_replicas >= 3 { 3 } else { 1 };
    let mut v = Vec::new();
    object_points(rb, &mut v);
    js_points(rb, &mut v);
    other_points(rb, &mut v);
    v
}

/// Object puts and gets, around base R`rb`.
fn object_points(rb: u8, v: &mut Vec<Point>) {
    let k = 1024u64;
    // Object puts: base R{rb}, 2 workers; sizes ×4 from 512 B to 768 KiB (across the 128 KiB chunk).
    for (size, optional) in [
        (512, false),
        (2 * k, false),
        (12 * k, false),
        (48 * k, false),
        (192 * k, false),
        (768 * k, false),
    ] {
        let varies = if size == 12 * k { "base" } else { "size" };
        v.push(pt(Kind::ObjPut, "obj", size, rb, 2, 0, varies).flags(false, optional));
    }
    // Replicas: R1 at a small and a large size (only when R3 is the base).
    if rb == 3 {
        v.push(pt(Kind::ObjPut, "obj", 2 * k, 1, 2, 0, "replicas"));
        v.push(pt(Kind::ObjPut, "obj", 192 * k, 1, 2, 0, "replicas"));
    }
    // Workers: 1 and 4 at the base size, 1 at a large size (the serial part shows when workers grow).
    v.push(pt(Kind::ObjPut, "obj", 12 * k, rb, 1, 0, "workers"));
    v.push(pt(Kind::ObjPut, "obj", 12 * k, rb, 4, 0, "workers"));
    v.push(pt(Kind::ObjPut, "obj", 192 * k, rb, 1, 0, "workers"));
    v.push(pt(Kind::ObjPut, "obj", 192 * k, rb, 4, 0, "workers"));
    if rb == 1 {
        // No replica lever on one server: two more worker points keep twelve fit rows.
        v.push(pt(Kind::ObjPut, "obj", 2 * k, rb, 4, 0, "workers"));
        v.push(pt(Kind::ObjPut, "obj", 768 * k, rb, 1, 0, "workers"));
    }
    // Held out: shapes that vary two factors at once, inside the measured ranges.
    v.push(pt(Kind::ObjPut, "obj", 24 * k, rb, 3, 0, "combined").held_out());
    v.push(
        pt(Kind::ObjPut, "obj", 96 * k, 1, 1, 0, "combined")
            .held_out()
            .optional(),
    );
    // Object gets (each run puts its objects first, off the clock): sizes as the puts; 1, 2 and 4 getters
    // at 12 KiB for the getters' own contention.
    for (size, optional) in [
        (2 * k, false),
        (12 * k, false),
        (48 * k, true),
        (192 * k, false),
        (768 * k, false),
    ] {
        v.push(pt(Kind::ObjGet, "get", size, rb, 2, 0, "size").flags(false, optional));
    }
    v.push(pt(Kind::ObjGet, "get", 12 * k, rb, 1, 0, "workers"));
    v.push(pt(Kind::ObjGet, "get", 12 * k, rb, 4, 0, "workers"));
    v.push(
        pt(Kind::ObjGet, "get", 24 * k, rb, 3, 0, "combined")
            .held_out()
            .optional(),
    );
}

/// JetStream publishes, async and sync, at R`rb` and R1.
fn js_points(rb: u8, v: &mut Vec<Point>) {
    let k = 1024u64;
    // JetStream async publishes (window 500, 2 publishers) at R{rb}: the leader's per-message and per-byte
    // time. Sizes ×8 from 64 B.
    for (size, optional, holdout) in [
        (64, false, false),
        (512, false, false),
        (4 * k, false, false),
        (16 * k, true, false),
    ] {
        v.push(pt(Kind::Js, "js", size, rb, 2, 0, "size").flags(holdout, optional));
    }
    v.push(pt(Kind::Js, "js", 2 * k, rb, 3, 0, "combined").held_out().optional());
    // Two publishers with 8 publishes in flight each: the leader's closed-loop base latency, which binds a
    // small window long before the leader's CPU does (the prediction matrix, 2026-12-05: 2 publishers with
    // a window of 16 carried 32 k/s at R3 1 KiB against 79 k/s with 256, priced alike before).
    let mut small = pt(Kind::Js, "jswin8", 512, rb, 2, 0, "window").optional();
    small.window = Some(8);
    v.push(small);
    // The base point's shape over 16,384 subjects (perf::subjects::PLATEAU): what many subjects add to the
    // leader's work per message (nats-server #4043; the matrix's 10,000-subjects cell missed by 32-43 %
    // with no term for it).
    let mut many = pt(Kind::Js, "jssubj16k", 512, rb, 2, 0, "subjects").optional();
    many.subjects = Some(crate::perf::subjects::PLATEAU as u32);
    v.push(many);
    // One synchronous publisher at R{rb}: the unloaded round trip of one publish (issue 14: without it the
    // round trip came from the KV putter plus the object fit's replication round, 2.5x too long).
    v.push(pt(Kind::Js, "jssync", 128, rb, 1, 0, "base").optional());
    // Four synchronous publishers: how publishers waiting on their acks contend for the host
    // (perf::sync_law's D, what each further publisher adds); without it, the object fit's σ stands in.
    v.push(pt(Kind::Js, "jssync", 128, rb, 4, 0, "workers").optional());
    // Sixteen and 48: what each further publisher adds falls as more are in flight (the prediction matrix,
    // 2026-12-05: one D from 1 and 4 publishers capped 64-160 publishers at half what they carried), so
    // perf::sync_law reads D off the measured counts when there are three or more.
    v.push(pt(Kind::Js, "jssync", 128, rb, 16, 0, "workers").optional());
    v.push(pt(Kind::Js, "jssync", 128, rb, 48, 0, "workers").optional());
    // Four synchronous publishers again with one consumer reading every message as it is written (a cluster
    // only): what a reader adds to a synchronous publisher's round trip on this host
    // (perf::leader::ReadersStretch). Without it the loopback lab's figure from 2026-12-06 (22 % per reader,
    // read on another machine) priced it, and prediction matrix runs 21-22 on a faster host read the
    // synchronous publishers with readers 11-23 % below their prices.
    // And with two readers: what each reader beyond the first adds, which is less (the loopback lab,
    // 2026-12-07, R3 1 KiB, 1-64 publishers: the first reader 0.34-0.37 of a round trip, each further one
    // 0.21 on average; a linear stretch from one reader priced matrix run 24's cells with 2-3 readers and
    // 16-64 publishers 16-28 % low).
    if rb > 1 {
        for n in [1, 2] {
            let mut readers = pt(Kind::Js, "jssync", 128, rb, 4, 0, "readers").optional();
            readers.readers = Some(n);
            readers.id.push_str(&format!("-{n}c"));
            v.push(readers);
        }
    }
    // R1 at 1 and 12 publishers: an R1 publish has no replication round (the matrix: R1 one publisher at
    // 128 B took 131 µs against R3's 292 µs, which the R3 rows priced R1 at).
    if rb > 1 {
        v.push(pt(Kind::Js, "jssync", 256, 1, 1, 0, "replicas").optional());
        v.push(pt(Kind::Js, "jssync", 256, 1, 12, 0, "replicas").optional());
    }
    // One async publisher at R1: R1 writes every message in place (stream.go: no async flush below R2),
    // which prices the in-place write `always` adds to every replica at R>1 (perf::leader).
    if rb > 1 {
        v.push(pt(Kind::Js, "js", 128, 1, 1, 0, "replicas").optional());
    }
}

/// KV puts, consumer fetches, core pub/sub, ping, flood and the fixed-rate sweep.
fn other_points(rb: u8, v: &mut Vec<Point>) {
    let k = 1024u64;
    // The KV putter: one client, R1, synchronous puts.
    v.push(pt(Kind::Kv, "kv", 512, 1, 1, 0, "base"));
    // And at R{rb}: a replicated KV put's round trip (issue 14: composed from the R1 putter plus the object
    // fit's replication round, KV R3 with two clients came out 10-27 % fast in five held-out runs).
    // The replicated putters are measured at 128 B, the synchronous publishers' size: perf::sync_law carries
    // a round trip up in size (each byte's time) and never down, so rows at 512 B priced 128 B values as
    // 512 B ones (the prediction matrix under `always`: 64 putters at 128 B a median +24 % over runs 6-19;
    // measured on the lab 2026-12-07, 3 interleaved passes under `always`, 128 B 5-12 % faster than 512 B
    // at 1, 4, 16 and 64 putters).
    // On one server (R1 only) the putters stay at the base putter's 512 B: one law per replica count reads
    // its round trip from the fewest clients and D from the rest, which must be one size.
    let putters = if rb > 1 {
        v.push(pt(Kind::Kv, "kv", 128, rb, 1, 0, "replicas"));
        128
    } else {
        512
    };
    // Putters at R{rb}: how KV clients contend (perf::sync_law's D for KV puts), from their own rows, at
    // the synchronous publishers' counts (4, 16, 48: with three or more counts D is read off the measured
    // curve, and 64 putters are priced from 48 rather than carried by a power law from 16).
    v.push(pt(Kind::Kv, "kv", putters, rb, 4, 0, "workers").optional());
    v.push(pt(Kind::Kv, "kv", putters, rb, 16, 0, "workers").optional());
    v.push(pt(Kind::Kv, "kv", putters, rb, 48, 0, "workers").optional());
    // Asynchronous puts in the async publish point's own shape (512 B, two clients, the runner's window, at
    // R{rb}): what a KV put costs the stream leader against a publish, read off two rows of one shape
    // (perf::leader::KvPutRatio). The synchronous rows' ratio holds the KV client's round trip and, under
    // `always`, the fsync waits: from it the prediction matrix priced asynchronous KV puts under `always`
    // 25-55 % low (runs 12-17).
    let mut kv_async = pt(Kind::Kv, "kvasync", 512, rb, 2, 0, "window").optional();
    kv_async.window = Some(super::runner::JS_WINDOW as u32);
    v.push(kv_async);
    // Consumer reads (issue 37: verify's consumer rows were priced from another host's bench-consumers
    // file): one client fetching at two sizes, for perf::consumer's `msg_s + byte_s × size` on this host.
    v.push(pt(Kind::ConsumerFetch, "fetch", 256, rb, 1, 0, "base").optional());
    v.push(pt(Kind::ConsumerFetch, "fetch", 12 * k, rb, 1, 0, "size").optional());
    // And at R1 (a cluster only): what an R1 stream's readers cost is priced from this host's R1 fetch rate
    // (perf::model::readers); from the R{rb} rows it carried a replica count no row measured and a band
    // 2.8x wide on the prediction matrix's R1 readers' cell (runs 21-22). One size: the per-byte time is
    // the R{rb} rows' (perf::consumer borrows it).
    if rb > 1 {
        v.push(pt(Kind::ConsumerFetch, "fetch", 256, 1, 1, 0, "replicas").optional());
    }
    // Core: subscribers 1, 3, 6 at 64 B and 2 KiB with two publishers; one publisher alone for its ceiling.
    v.push(pt(Kind::Core, "core", 64, 1, 2, 1, "base"));
    v.push(pt(Kind::Core, "core", 64, 1, 2, 6, "subscribers"));
    v.push(pt(Kind::Core, "core", 2 * k, 1, 2, 1, "size"));
    v.push(pt(Kind::Core, "core", 2 * k, 1, 2, 3, "subscribers").optional());
    v.push(pt(Kind::Core, "core", 64, 1, 1, 0, "subscribers"));
    v.push(pt(Kind::Core, "core", 256, 1, 3, 3, "combined").held_out().optional());
    v.push(pt(Kind::Ping, "ping", 128, 1, 1, 0, "base"));
    v.push(pt(Kind::Flood, "flood", 128, 1, 4, 1, "base"));
    // Fixed-rate sweep at R{rb}, 128 B, one publisher: ×3 steps to find the knee.
    for (i, rate) in [6_000.0, 18_000.0, 54_000.0, 160_000.0].into_iter().enumerate() {
        let mut p = pt(Kind::Js, "rate", 128, rb, 1, 0, "rate").flags(false, i == 0);
        p.id = format!("rate-{}k-r{rb}-128B", rate as u64 / 1000);
        p.rate_per_s = Some(rate);
        v.push(p);
    }
}

/// Wall time of `points` run `repeats` times at `run_s` seconds each.
pub fn estimate_s(points: usize, repeats: u32, run_s: f64) -> f64 {
    points as f64 * repeats as f64 * (run_s + RUN_OVERHEAD_S)
}

/// Fit the points into `budget_s`: shorten runs (down to `MIN_RUN_S`), then cut repeats (3 → 2 → 1),
/// then drop the optional points (the required ones alone keep twelve object-put fit points, so the file
/// always loads). Errors when even the required points once at the shortest run length do not fit.
pub fn plan(budget_s: f64, max_replicas: u8) -> Result<MeasurePlan, String> {
    let all = all_points(max_replicas);
    let required: Vec<Point> = all.iter().filter(|p| !p.optional).cloned().collect();
    let min_s = estimate_s(required.len(), 1, MIN_RUN_S);
    if !(budget_s.is_finite() && budget_s >= min_s) {
        return Err(format!(
            "--budget {budget_s:.0}s is too small to measure anything worth fitting: the {} required points need \
             at least {:.0}s (one run each of {MIN_RUN_S} s plus about {RUN_OVERHEAD_S} s of setup); give --budget {}s or more",
            required.len(),
            min_s,
            min_s.ceil()
        ));
    }
    let mut dropped = Vec::new();
    // Try the richest plan that fits: all points or the required ones, 3, 2 or 1 repeats, longest run.
    for (points, label) in [(&all, "all"), (&required, "required")] {
        for repeats in [3u32, 2, 1] {
            let per_run = budget_s / (points.len() as f64 * repeats as f64) - RUN_OVERHEAD_S;
            if per_run >= MIN_RUN_S {
                let run_s = per_run.min(MAX_RUN_S);
                if label == "required" {
                    let names: Vec<String> = all.iter().filter(|p| p.optional).map(|p| p.id.clone()).collect();
                    dropped.push(format!("optional points {}", names.join(", ")));
                }
                if repeats < 3 {
                    dropped.push(format!(
                        "repeats cut to {repeats} (3 wanted){}",
                        if repeats == 1 {
                            ": no noise estimate from repeats"
                        } else {
                            ""
                        }
                    ));
                }
                let points = points.clone();
                let estimated_s = estimate_s(points.len(), repeats, run_s);
                return Ok(MeasurePlan {
                    points,
                    repeats,
                    run_s,
                    budget_s,
                    estimated_s,
                    dropped,
                });
            }
        }
    }
    Err(format!(
        "--budget {budget_s:.0}s: no plan fits; give --budget {}s or more",
        min_s.ceil()
    ))
}

/// Indices of pairs of factors that move together over the object-put fit points (|correlation| > 0.9
/// between log size, replicas and log workers): the property the plan must not have.
pub fn collinear_factors(points: &[Point]) -> Vec<(&'static str, &'static str, f64)> {
    let obj: Vec<&Point> = points.iter().filter(|p| p.kind == Kind::ObjPut && !p.holdout).collect();
    let cols: [(&str, Vec<f64>); 3] = [
        ("size", obj.iter().map(|p| (p.size_bytes as f64).ln()).collect()),
        ("replicas", obj.iter().map(|p| p.replicas as f64).collect()),
        ("workers", obj.iter().map(|p| (p.workers as f64).ln()).collect()),
    ];
    let mut out = Vec::new();
    for i in 0..cols.len() {
        for j in i + 1..cols.len() {
            if let Some(r) = correlation(&cols[i].1, &cols[j].1) {
                if r.abs() > 0.9 {
                    out.push((cols[i].0, cols[j].0, r));
                }
            }
        }
    }
    out
}

/// Pearson correlation; None when a column is constant.
pub fn correlation(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len()) as f64;
    if n < 2.0 {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let syy: f64 = y.iter().map(|b| (b - my).powi(2)).sum();
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_full_plan_separates_the_object_terms() {
        let pts = all_points(3);
        assert!(collinear_factors(&pts).is_empty(), "{:?}", collinear_factors(&pts));
        let obj: Vec<&Point> = pts.iter().filter(|p| p.kind == Kind::ObjPut && !p.holdout).collect();
        // Sizes on both sides of the chunk boundary, both replica counts, at least three worker counts.
        assert!(obj.iter().any(|p| p.size_bytes < 128 * 1024) && obj.iter().any(|p| p.size_bytes > 256 * 1024));
        let mut w: Vec<u32> = obj.iter().map(|p| p.workers).collect();
        w.sort_unstable();
        w.dedup();
        assert!(w.len() >= 3, "{w:?}");
        assert!(obj.iter().any(|p| p.replicas == 1) && obj.iter().any(|p| p.replicas == 3));
        // Sizes are log-spread: each step at least ×2.
        let mut sizes: Vec<u64> = obj.iter().map(|p| p.size_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        assert!(sizes.windows(2).all(|w| w[1] >= 2 * w[0]), "{sizes:?}");
        // Core points do not tie subscribers to size.
        let core: Vec<&Point> = pts
            .iter()
            .filter(|p| p.kind == Kind::Core && p.subscribers > 0)
            .collect();
        let r = correlation(
            &core.iter().map(|p| p.subscribers as f64).collect::<Vec<_>>(),
            &core.iter().map(|p| (p.size_bytes as f64).ln()).collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(r.abs() < 0.9, "{r}");
        // Holdouts exist for cross-validation and ids are unique.
        assert!(pts.iter().filter(|p| p.holdout).count() >= 2);
        let mut ids: Vec<&str> = pts.iter().map(|p| p.id.as_str()).collect();
        ids.sort_unstable();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }

    #[test]
    fn a_single_server_plan_stays_at_r1() {
        let pts = all_points(1);
        assert!(pts.iter().all(|p| p.replicas == 1));
        let fit_obj = pts
            .iter()
            .filter(|p| p.kind == Kind::ObjPut && !p.optional && !p.holdout)
            .count();
        assert!(fit_obj >= MIN_OBJ_FIT_ROWS, "{fit_obj}");
    }

    /// Issue 37 (2026-12-07): the replicated synchronous KV putters are measured at the synchronous
    /// publishers' size and counts, so perf::sync_law carries their round trip up in size only (rows at
    /// 512 B priced 128 B puts as 512 B ones: 64 putters a median +24 % over matrix runs 6-19) and reads D
    /// off three or more counts as it does the publishers'.
    #[test]
    fn replicated_kv_putters_are_measured_at_the_sync_publishers_size_and_counts() {
        let pts = all_points(3);
        let sync = |kind: Kind| -> Vec<(u64, u32)> {
            pts.iter()
                .filter(|p| p.kind == kind && p.replicas == 3 && p.one_in_flight() && p.readers.is_none())
                .map(|p| (p.size_bytes, p.workers))
                .collect()
        };
        let (kv, js) = (sync(Kind::Kv), sync(Kind::Js));
        assert_eq!(kv, js, "KV putters {kv:?} against publishers {js:?}");
        assert!(kv.iter().all(|(size, _)| *size == 128) && kv.len() >= 4, "{kv:?}");
        // The R1 putter (the object model's per-operation term) stays at 512 B: what older files measured.
        assert!(pts
            .iter()
            .any(|p| p.kind == Kind::Kv && p.replicas == 1 && !p.optional && p.size_bytes == 512));
        // One server: every synchronous putter (one law: the round trip from the fewest, D from the rest) is
        // one size, the base putter's.
        let one: Vec<u64> = all_points(1)
            .iter()
            .filter(|p| p.kind == Kind::Kv && p.one_in_flight())
            .map(|p| p.size_bytes)
            .collect();
        assert!(one.len() >= 4 && one.iter().all(|s| *s == 512), "{one:?}");
    }

    /// Issue 37 (2026-12-07): a cluster's plan measures an R1 fetch beside the R{rb} fetches, so an R1
    /// stream's readers are priced from this host's R1 reads (their band was 2.8x wide, carried from R3).
    #[test]
    fn a_cluster_measures_an_r1_fetch_beside_the_replicated_ones() {
        let fetch = |pts: &[Point]| -> Vec<(u8, u64)> {
            pts.iter()
                .filter(|p| p.kind == Kind::ConsumerFetch)
                .map(|p| (p.replicas, p.size_bytes))
                .collect()
        };
        let three = fetch(&all_points(3));
        assert!(three.contains(&(1, 256)), "{three:?}");
        assert_eq!(three.iter().filter(|(r, _)| *r == 3).count(), 2, "{three:?}");
        // One server: its fetches are R1 already, at two sizes, and no point is repeated.
        assert_eq!(fetch(&all_points(1)), vec![(1, 256), (1, 12 * 1024)]);
    }

    /// Issue 37 (2026-12-07): a cluster's plan measures synchronous publishers with one reader and with two
    /// beside the same publishers without one (perf::leader::ReadersStretch pairs the two); one server has none.
    #[test]
    fn a_cluster_measures_sync_publishers_with_a_reader_beside_the_same_publishers_without() {
        let pts = all_points(3);
        let with: Vec<&Point> = pts.iter().filter(|p| p.readers.is_some()).collect();
        // One reader and two, at one shape: the first reader's share and each further one's apart.
        assert_eq!(
            with.iter().map(|p| p.readers).collect::<Vec<_>>(),
            vec![Some(1), Some(2)],
            "{with:?}"
        );
        for r in &with {
            assert!(r.sync_publish() && r.replicas == 3, "{r:?}");
            assert_eq!((r.size_bytes, r.workers), (with[0].size_bytes, with[0].workers));
            assert!(pts.iter().any(|p| p.sync_publish()
                && p.readers.is_none()
                && (p.size_bytes, p.replicas, p.workers) == (r.size_bytes, r.replicas, r.workers)));
        }
        assert!(all_points(1).iter().all(|p| p.readers.is_none()));
    }

    #[test]
    fn a_tiny_budget_is_refused_with_the_minimum() {
        let e = plan(5.0, 3).unwrap_err();
        assert!(e.contains("--budget") && e.contains("at least"), "{e}");
    }

    #[test]
    fn a_short_budget_drops_optional_points_and_says_so() {
        let min = estimate_s(all_points(3).iter().filter(|p| !p.optional).count(), 1, MIN_RUN_S);
        let p = plan(min + 1.0, 3).unwrap();
        assert!(p.points.iter().all(|p| !p.optional));
        assert_eq!(p.repeats, 1);
        assert!(p.dropped.iter().any(|d| d.contains("optional")), "{:?}", p.dropped);
        let big = plan(600.0, 3).unwrap();
        assert_eq!(big.repeats, 3);
        assert!(big.dropped.is_empty());
        assert!(big.points.iter().any(|p| p.optional));
    }

    proptest! {
        #[test]
        fn plans_respect_the_budget_and_keep_the_object_model_fittable(budget in 1.0f64..2000.0, r in 1u8..=5) {
            match plan(budget, r) {
                Ok(p) => {
                    prop_assert!(p.estimated_s <= budget * 1.0001, "{} > {budget}", p.estimated_s);
                    prop_assert!(p.run_s >= MIN_RUN_S && p.run_s <= MAX_RUN_S);
                    let obj_fit = p.points.iter().filter(|q| q.kind == Kind::ObjPut && !q.holdout).count();
                    // The object model needs twelve fit rows: points × repeats, or the file will not load.
                    prop_assert!(obj_fit >= MIN_OBJ_FIT_ROWS, "{obj_fit} object fit points");
                    prop_assert!(collinear_factors(&p.points).is_empty());
                    if budget >= 200.0 {
                        prop_assert!(p.repeats >= 2, "repeats {}", p.repeats);
                    }
                }
                Err(e) => prop_assert!(e.contains("at least")),
            }
        }
    }
}
