//! `sync_interval: always` on a catalog volume: what it costs against delayed sync, priced from what was
//! measured for the volume's write-cache setting (issue 36).
//!
//! The fsync model of perf::leader (one fsync per RAFT append entry, many messages per entry when many are
//! in flight) is checked on the loopback lab against its own store probe. On an array volume it says that
//! `always` is nearly free (EF600 RAID 1, R3, 1 KiB: 0.89×), while seed 000 measured 0.32–0.78× on EF600
//! volumes with the array's write cache off (Appendix B; Appendix C says the cache was off). So on a
//! catalog volume `always` is priced from those measurements, as time added per message: a measured ratio
//! r says `always` adds (1/r − 1) × the delayed time per message at the measured volume's write latency
//! f_ref, and a volume of write latency f adds that × f/f_ref:
//!   always = delayed ÷ (1 + (1/r − 1)·f/f_ref),
//! never above what the fsync model says on the volume. r is the nearest measured RAID level's (RAID 0, or
//! the mirrored RAID 1 for every other level) at R1 or replicated as the stream is: the median the point,
//! the measured spread the band.
//! - write cache off: f is the volume's write latency (seed 000's own volumes: the measured ratios as they
//!   are);
//! - write cache on: never measured on a separate array volume. Appendix C says RAID 0 and RAID 1 "would
//!   see similar latency" with the cache: f is then RAID 0's measured latency (the catalog's planning value),
//!   which gives a mid value; the band reaches down to the ratios measured with the cache off and up to the
//!   fsync model's, and the prediction says it is extrapolated.
//!
//! Seed 000 ran object puts (a few messages in flight per worker) on nats-server 2.12.11, before 2.15
//! relaxed the stream store's fsync for replicated streams (#8447): the measured ratios may overstate what
//! `always` costs a 2.15 stream with many publishes in flight. They are what was measured, and the
//! prediction says where they come from.

use super::{AlwaysRatio, VolumeSpec};
use crate::layout::Raid;

/// The RAID level seed 000 measured that stands for `raid`: RAID 0 for itself, RAID 1 for every other
/// level (mirrored and parity volumes write more per fsync, which the fsync model's scaling carries).
pub fn measured_raid(raid: Raid) -> Raid {
    match raid {
        Raid::Raid0 => Raid::Raid0,
        _ => Raid::Raid1,
    }
}

/// How `always` is priced against delayed sync on one volume.
#[derive(Debug, Clone)]
pub struct AlwaysPrice {
    /// always ÷ delayed: the point, and the band's ends.
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    pub extrapolated: bool,
    pub note: String,
    pub source: String,
    pub bottleneck: &'static str,
}

/// The volume's write latency as configured, with its write cache off, and seed 000's measured volume's of
/// the stood-for RAID level (seconds): what scales the measured time `always` adds.
#[derive(Debug, Clone, Copy)]
pub struct Latencies {
    pub volume_s: f64,
    pub cache_off_s: f64,
    pub measured_s: f64,
}

/// always ÷ delayed on a volume whose fsync takes `k` × the measured volume's, from a measured ratio `r`.
fn scaled(r: f64, k: f64) -> f64 {
    1.0 / (1.0 + (1.0 / r.max(1e-3) - 1.0) * k)
}

/// Price `always` on `volume` at `replicas` from the measured ratios. `mech` is the fsync model's always ÷
/// delayed on this volume (the point never goes above it). None when no ratio was measured.
pub fn price(
    measured: &[AlwaysRatio],
    volume: &VolumeSpec,
    replicas: u8,
    lat: Latencies,
    mech: f64,
) -> Option<AlwaysPrice> {
    let raid = measured_raid(volume.raid);
    let of_raid: Vec<&AlwaysRatio> = measured.iter().filter(|m| m.raid == raid).collect();
    let same_r: Vec<&AlwaysRatio> = of_raid
        .iter()
        .copied()
        .filter(|m| (m.replicas > 1) == (replicas > 1))
        .collect();
    let rows = if same_r.is_empty() { of_raid } else { same_r };
    if rows.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = rows.iter().map(|m| m.ratio).collect();
    v.sort_by(f64::total_cmp);
    let med = crate::stats::median_sorted(&v);
    let (lo, hi) = (v[0], v[v.len() - 1]);
    let mech = mech.clamp(0.0, 1.0);
    let k = lat.volume_s / lat.measured_s.max(1e-9);
    let k_off = lat.cache_off_s / lat.measured_s.max(1e-9);
    let cache_on = volume.write_cache && volume.array.mirrored_write_cache;
    let what = format!(
        "{} always ÷ delayed ratios measured on EF600 {} volumes with the write cache off ({:.2}–{:.2}, median {:.2}; object puts, nats-server 2.12.11)",
        rows.len(),
        if raid == Raid::Raid0 { "RAID 0" } else { "RAID 1" },
        lo,
        hi,
        med
    );
    let source = format!(
        "{} (always ÷ delayed, write cache off)",
        rows.first().map(|m| m.source.as_str()).unwrap_or("seed 000")
    );
    let point = scaled(med, k).min(mech.max(1e-3));
    let fsync = |k: f64| {
        if (k - 1.0).abs() < 0.02 {
            String::new()
        } else {
            format!(
                ", at this volume's fsync latency ({:.0} µs, {k:.2} × the measured volume's)",
                lat.volume_s * 1e6
            )
        }
    };
    if !cache_on {
        return Some(AlwaysPrice {
            ratio: point,
            low: scaled(lo, k).min(point),
            high: scaled(hi, k).min(mech).max(point),
            extrapolated: false,
            note: format!(
                "sync always: {point:.2} × the delayed-sync rate, from the {what}{}",
                fsync(k)
            ),
            source,
            bottleneck: "fsync latency (sync always: measured always ÷ delayed on array volumes, write cache off)",
        });
    }
    Some(AlwaysPrice {
        ratio: point,
        low: scaled(lo, k_off).min(point),
        high: mech.max(point),
        extrapolated: true,
        note: format!(
            "sync always with the array's write cache on: {point:.2} × the delayed-sync rate, extrapolated (no array volume was measured with its write cache on): the {what}, at the latency the cache gives ({:.0} µs, RAID 0's measured latency: seed 000 Appendix C expects RAID 0 and RAID 1 alike with the cache); the band reaches down to the cache-off ratios ({:.2}) and up to the fsync model's ({mech:.2})",
            lat.volume_s * 1e6,
            scaled(lo, k_off),
        ),
        source,
        bottleneck: "fsync latency (sync always, write cache on: extrapolated from measurements with it off)",
    })
}
