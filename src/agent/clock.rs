//! Clock offsets between the coordinator and each agent, NTP-style: the coordinator stamps a request
//! (t0), the agent stamps its receipt (t1) and reply (t2), the coordinator stamps the answer (t3), all on
//! wall clocks. offset = ((t1 − t0) + (t2 − t3)) / 2 is the agent's clock minus the coordinator's, exact
//! when the two directions take equally long and otherwise wrong by at most half the round trip;
//! rtt = (t3 − t0) − (t2 − t1). Of several probes the one with the smallest round trip is kept (NTP's
//! clock filter: the least queueing, the least asymmetry). Offsets only place each agent's start and its
//! throughput window on a common timeline; latency is never computed across clocks.

use serde::Serialize;

/// One probe's four timestamps in nanoseconds (t0, t3 on the coordinator; t1, t2 on the agent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockSample {
    pub t0: i128,
    pub t1: i128,
    pub t2: i128,
    pub t3: i128,
}

impl ClockSample {
    /// Agent clock minus coordinator clock, in nanoseconds.
    pub fn offset_ns(&self) -> f64 {
        ((self.t1 - self.t0) + (self.t2 - self.t3)) as f64 / 2.0
    }
    /// Network round trip without the agent's own time, in nanoseconds.
    pub fn rtt_ns(&self) -> f64 {
        ((self.t3 - self.t0) - (self.t2 - self.t1)).max(0) as f64
    }
}

/// The estimate reported per agent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClockEstimate {
    /// Agent clock minus coordinator clock, milliseconds.
    pub offset_ms: f64,
    /// Round trip of the probe kept, milliseconds; the offset is exact to within half of it.
    pub rtt_ms: f64,
    /// Probes answered.
    pub samples: usize,
}

impl ClockEstimate {
    /// The largest error the offset can have: half the round trip.
    pub fn error_bound_ms(&self) -> f64 {
        self.rtt_ms / 2.0
    }
}

/// Keep the probe with the smallest round trip; None without probes.
pub fn estimate(samples: &[ClockSample]) -> Option<ClockEstimate> {
    let best = samples
        .iter()
        .min_by(|a, b| a.rtt_ns().partial_cmp(&b.rtt_ns()).unwrap_or(std::cmp::Ordering::Equal))?;
    Some(ClockEstimate {
        offset_ms: best.offset_ns() / 1e6,
        rtt_ms: best.rtt_ns() / 1e6,
        samples: samples.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A probe sent at `t0` (coordinator clock) to an agent whose clock is `offset` ahead, taking `up`
    /// there, `work` inside the agent and `down` back.
    fn probe(t0: i128, offset: i128, up: i128, work: i128, down: i128) -> ClockSample {
        let t1 = t0 + up + offset;
        let t2 = t1 + work;
        let t3 = t0 + up + work + down;
        ClockSample { t0, t1, t2, t3 }
    }

    #[test]
    fn symmetric_paths_give_the_exact_offset() {
        let s = probe(1_000, 5_000_000, 200_000, 30_000, 200_000);
        assert_eq!(s.offset_ns(), 5_000_000.0);
        assert_eq!(s.rtt_ns(), 400_000.0);
        let behind = probe(1_000, -7_000_000_000, 50_000, 1_000, 50_000);
        assert_eq!(behind.offset_ns(), -7_000_000_000.0);
    }

    #[test]
    fn asymmetry_errs_by_at_most_half_the_round_trip() {
        let s = probe(0, 1_000_000, 900_000, 0, 100_000);
        let e = estimate(&[s]).unwrap();
        assert!((e.offset_ms - 1.0).abs() <= e.error_bound_ms() + 1e-9, "{e:?}");
        assert!(
            (e.offset_ms - 1.4).abs() < 1e-9,
            "(900k − 100k)/2 = 0.4 ms too far: {e:?}"
        );
    }

    #[test]
    fn the_least_queued_probe_wins() {
        // Seeded synthetic probes: a true offset of 3.25 ms, paths of 100 µs plus random queueing on either
        // side; the estimate keeps the probe with the least round trip and lands within its bound.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(10);
        let truth = 3_250_000i128;
        let mut samples = Vec::new();
        for k in 0..16 {
            let up = 100_000 + rng.random_range(0..5_000_000);
            let down = 100_000 + rng.random_range(0..5_000_000);
            samples.push(probe(k * 10_000_000, truth, up, 20_000, down));
        }
        let quiet = probe(200_000_000, truth, 100_000, 20_000, 110_000);
        samples.push(quiet);
        let e = estimate(&samples).unwrap();
        assert_eq!(e.samples, 17);
        assert!((e.rtt_ms - 0.21).abs() < 1e-9, "{e:?}");
        assert!((e.offset_ms - 3.25).abs() <= e.error_bound_ms(), "{e:?}");
        assert!((e.offset_ms - 3.245).abs() < 1e-9);
        assert!(estimate(&[]).is_none());
    }
}
