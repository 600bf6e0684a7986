//! Issue 36: every publish mode priced by the hardware. Synchronous publishers and KV putters follow
//! perf::sync_law (fitted to one client and many on the lab, carried to other hardware by what it does) and
//! land on the lab's measurements and in their bands on held-out figures for other hardware; KV puts with
//! `publish: async` are priced by their window; `sync_interval: always` on an array volume is priced from
//! the always ÷ delayed ratios measured for its write-cache setting.

use natsplan::catalog::Catalog;
use natsplan::layout::Raid;
use natsplan::perf::calibration::CalibrationSet;
use natsplan::perf::{predict_shape, Calibration, Kind, Prediction, Shape, SyncClass, VolumeSpec};
use std::path::Path;

fn shape(kind: Kind, server: &str, servers: u32, r: u8, size: u64, clients: u32, window: u32) -> Shape {
    let cat = Catalog::builtin();
    Shape {
        kind,
        servers,
        replicas: r,
        sync: SyncClass::Delayed,
        size_bytes: size,
        workers: clients,
        subscribers: 0,
        consumers: 0,
        consumers_spread: true,
        volume: VolumeSpec::seed000(&cat, Raid::Raid1, 1),
        server: cat.server(server).unwrap().clone(),
        rate: None,
        batch: window,
        nats_version: None,
        subjects: None,
    }
}

fn predict(sh: &Shape) -> Prediction {
    predict_shape(&Calibration::builtin().terms, &Catalog::builtin(), sh)
}

/// Median measured rate of the lab file's sync-ladder rows whose label starts with `prefix`.
fn lab_median(prefix: &str) -> f64 {
    let f = CalibrationSet::from_path(Path::new("calibration/lab-loopback-js.yaml")).unwrap();
    let v: Vec<f64> = f
        .series
        .iter()
        .filter(|s| s.name == "sync-ladder")
        .flat_map(|s| &s.rows)
        .filter(|r| r.label.starts_with(prefix))
        .filter_map(|r| {
            r.values
                .get("durable_pubs_per_s")
                .or(r.values.get("ops_per_s"))
                .copied()
        })
        .collect();
    assert!(v.len() >= 5, "{prefix}: {} rows", v.len());
    crate::stats::median(v)
}

/// On the lab's own host the law meets the lab at both ends: one client and 64 (within 25 %), and every
/// measured client count lands in the band. Before issue 36 the 64-publisher end was 7,746/s against
/// 19,500 measured (σ from four publishers carried to 64).
#[test]
fn sync_clients_on_the_lab_meet_the_lab_at_both_ends() {
    for (kind, prefix, r) in [
        (Kind::Js, "js-r3-sync", 3u8),
        (Kind::Kv, "kv-r3", 3),
        (Kind::Js, "js-r1-sync", 1),
        (Kind::Kv, "kv-r1", 1),
    ] {
        let counts: &[u32] = if r == 3 { &[1, 4, 16, 64] } else { &[1, 64] };
        for &c in counts {
            let unit = if kind == Kind::Js { "p" } else { "c" };
            let m = lab_median(&format!("{prefix}-{c}{unit}-"));
            let p = predict(&shape(kind, "loopback-2c-shared", 3, r, 128, c, 1));
            let err = m / p.ops_per_s - 1.0;
            eprintln!(
                "lab {prefix} {c}: predicted {:.0} ({:.0}–{:.0}), measured {m:.0}, {:+.0} %",
                p.ops_per_s,
                p.band.low,
                p.band.high,
                err * 100.0
            );
            assert!(
                p.band.low <= m && m <= p.band.high,
                "{prefix} {c}: {m:.0} outside {:?}",
                p.band
            );
            if c == 1 || c == 64 {
                assert!(
                    err.abs() <= 0.25,
                    "{prefix} {c}: predicted {:.0}, measured {m:.0}",
                    p.ops_per_s
                );
            }
        }
    }
}

/// Synchronous publishers are not held to one host's ceiling (issue 36: 9.3–9.5 k/s at 64–160 publishers on
/// any server): the many-client end follows the target's leader and cores. A 16-core server takes 160
/// publishers far past the old ceiling; a one-core server (the install guide's) less than it; a faster one
/// more; the same count on the lab's shared 2-core host what the lab measured.
#[test]
fn the_sync_ceiling_follows_the_hardware() {
    let many = |server: &str| predict(&shape(Kind::Js, server, 3, 3, 128, 1000, 1)).ops_per_s;
    let big = many("generic-16c");
    assert!(big > 50_000.0, "generic-16c, 1000 sync publishers: {big:.0}");
    let one_core = many("install-guide-1c");
    assert!(one_core < big, "one core {one_core:.0} vs 16 {big:.0}");
    let lab = many("loopback-2c-shared");
    assert!(lab < one_core && lab < 30_000.0, "lab {lab:.0}");
    let p160 = predict(&shape(Kind::Js, "generic-16c", 3, 3, 128, 160, 1)).ops_per_s;
    assert!(p160 > 5.0 * 9_497.0, "160 sync publishers on generic-16c: {p160:.0}");
    // KV puts too (issue 36: 9,286/s at 64 clients on any server).
    let kv = predict(&shape(Kind::Kv, "generic-16c", 3, 3, 128, 64, 1)).ops_per_s;
    assert!(kv > 3.0 * 9_286.0, "64 KV clients on generic-16c: {kv:.0}");
}

/// Held out: the NATS docs' laptop figures (MacBook Pro M4, nats-server 2.12.1, R1, one client; docs.nats.io
/// "nats bench": JS sync publish 35,734 msgs/s at 16 B to a memory stream, KV put 30,067/s at 128 B), and
/// the install guide's 3-node R3 file cluster at 1000 publishers × 100 msgs/s on one core per server
/// (docs.nats.io "Installing": a minimum sizing, publish mode not stated: as synchronous publishers its band
/// must reach it, and async it is not predicted below it, perf_leader.rs). None of them is fitted: the KV
/// putter row is `fit: false`, and no prediction names it.
#[test]
fn held_out_figures_for_other_hardware_land_in_their_bands() {
    for (kind, size, want) in [(Kind::Js, 16u64, 35_734.0), (Kind::Kv, 128, 30_067.0)] {
        let p = predict(&shape(kind, "macbook-pro-m4", 1, 1, size, 1, 1));
        eprintln!(
            "M4 {kind:?}: predicted {:.0} ({:.0}–{:.0}), docs {want:.0}",
            p.ops_per_s, p.band.low, p.band.high
        );
        assert!(
            p.band.low <= want && want <= p.band.high,
            "{kind:?}: {want} outside {:?}",
            p.band
        );
        assert!(
            !p.source.contains("nats-docs-kv-putter"),
            "held out, not fitted: {}",
            p.source
        );
    }
    let p = predict(&shape(Kind::Js, "install-guide-1c", 3, 3, 128, 1000, 1));
    eprintln!(
        "install guide, 1000 sync publishers: {:.0} ({:.0}–{:.0})",
        p.ops_per_s, p.band.low, p.band.high
    );
    assert!(p.band.low <= 100_000.0 && 100_000.0 <= p.band.high, "{p:?}");
}

/// Issue 36, item 2: a KV bucket with `publish: async` keeps a window of puts in flight; it was priced as
/// one sync put per client and labelled "client round trips (sync publish)".
#[test]
fn kv_puts_published_async_are_priced_by_their_window() {
    let sync = predict(&shape(Kind::Kv, "generic-16c", 3, 3, 512, 8, 1));
    let window = predict(&shape(Kind::Kv, "generic-16c", 3, 3, 512, 8, 64));
    assert!(
        window.ops_per_s > 3.0 * sync.ops_per_s,
        "async {:.0} vs sync {:.0}",
        window.ops_per_s,
        sync.ops_per_s
    );
    assert!(!window.bottleneck.contains("sync publish"), "{}", window.bottleneck);
    assert_eq!(window.stream.as_ref().unwrap().window, 64.0);
    // A put still costs the leader more than a publish: the KV ceiling is below the stream's.
    let js = predict(&shape(Kind::Js, "generic-16c", 3, 3, 512, 8, 64));
    assert!(
        window.ops_per_s < js.ops_per_s,
        "{} vs {}",
        window.ops_per_s,
        js.ops_per_s
    );
}

fn ef600(raid: Raid, cache: bool, sync: SyncClass, size: u64) -> Prediction {
    let cat = Catalog::builtin();
    let mut sh = shape(Kind::Js, "generic-16c", 3, 3, size, 1024, 256);
    sh.sync = sync;
    sh.volume = VolumeSpec::seed000(&cat, raid, 1);
    sh.volume.write_cache = cache;
    predict(&sh)
}

/// Seed 000's always ÷ delayed ratios (Appendix B pairs) measured on EF600 volumes of `raid` with R3.
fn seed_ratios(raid: Raid) -> Vec<f64> {
    Calibration::builtin()
        .terms
        .always_ratios
        .iter()
        .filter(|m| m.raid == raid && m.replicas > 1)
        .map(|m| m.ratio)
        .collect()
}

/// Issue 36, item 4: `always` on an EF600 volume with its write cache off is priced at the ratios seed 000
/// measured there (0.32–0.59 for RAID 1 at R3; the fsync model said 0.84); with the cache on, which nobody
/// measured, between those and the fsync model's (0.89), the band reaching both, and said to be
/// extrapolated.
#[test]
fn always_on_an_array_is_priced_from_what_was_measured_for_its_write_cache() {
    for raid in [Raid::Raid1, Raid::Raid0] {
        let m = seed_ratios(raid);
        let (lo, hi) = (
            m.iter().cloned().fold(1.0, f64::min),
            m.iter().cloned().fold(0.0, f64::max),
        );
        for size in [256u64, 1024] {
            let d = ef600(raid, false, SyncClass::Delayed, size);
            let off = ef600(raid, false, SyncClass::Always, size);
            let r = off.ops_per_s / d.ops_per_s;
            eprintln!("{raid:?} {size} B cache off: always/delayed {r:.2} (measured {lo:.2}–{hi:.2})");
            assert!(lo <= r && r <= hi, "{raid:?} {size}: {r:.2} outside {lo:.2}–{hi:.2}");
            assert!(off.band.low <= d.ops_per_s * lo && off.band.high >= d.ops_per_s * hi);
            assert!(!off.notes.iter().any(|n| n.contains("extrapolated")), "{:?}", off.notes);
            let on = ef600(raid, true, SyncClass::Always, size);
            let ron = on.ops_per_s / d.ops_per_s;
            eprintln!("{raid:?} {size} B cache on: always/delayed {ron:.2}");
            assert!(ron >= r - 1e-9 && ron < 0.95, "{raid:?} {size}: cache on {ron:.2}");
            assert!(
                on.band.low <= d.ops_per_s * lo,
                "reaches the measured ratios: {:?}",
                on.band
            );
            assert!(on.notes.iter().any(|n| n.contains("extrapolated")), "{:?}", on.notes);
        }
    }
}
