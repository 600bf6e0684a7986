//! The exact yearly figures: a continuous-time Markov chain over the site's components truncated at a
//! number of concurrent failures, its stationary distribution by Gauss–Seidel.
//!
//! The chain is built once (`Chain::build`: the reachable states, their edges and outcomes) and solved
//! for a set of repair rates (`Chain::solve`). Hot spares change repair rates only, never which states
//! exist or what a state's failures do, so the spare comparison `design` shows for every layout solves
//! the chain it built for the layout's own figures: building costs more than solving.

// Per-class figures live in parallel vectors indexed by class; index loops read clearer than zips of four.
#![allow(clippy::needless_range_loop)]

use super::solve::monte_carlo_flows;
use super::solve::{st, DL, DL_TOTAL, UNAV};
use super::yearly::{chain_states, Flows, Reliability, Yearly, CHAIN_STATES, DESTROYER_CAP_MAX, DESTROYER_STATES};
use crate::units::YEAR_S;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hash for the chain's state keys (u128 bit sets of failed components): SipHash's DoS resistance is
/// not needed for keys the programme makes itself, and these maps are hashed per state per solve. Only
/// lookups use these maps (nothing iterates them), so the figures do not
/// depend on the hash.
#[derive(Default)]
struct StateHasher(u64);

impl Hasher for StateHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u128(&mut self, n: u128) {
        // splitmix64's finaliser over both halves.
        let mut x = self.0 ^ (n as u64) ^ ((n >> 64) as u64).rotate_left(31).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = x ^ (x >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by chain states.
type StateMap<V> = HashMap<u128, V, BuildHasherDefault<StateHasher>>;

fn any_dl(sig: &[u8]) -> bool {
    sig.chunks(2).any(|c| c[0] >= DL)
}

fn any_total(sig: &[u8]) -> bool {
    sig.chunks(2).any(|c| c[0] == DL_TOTAL)
}

/// Most slots a dense state index may hold (4 bytes each).
const DENSE_MAX: u64 = 1 << 22;

/// The number of each state found so far. A state of the truncated chain is a set of at most `cap` of
/// `n` components, so when those sets are few (`design` keeps chains within 60,000 states) each has a
/// slot by its rank among them (sets of fewer components first, then colexicographic): an array read
/// where a hash lookup cost more than the rest of the search. Else a hash map.
enum StateIndex {
    Dense {
        slot: Vec<u32>,
        /// C(c, i) for c < n, i ≤ cap.
        binom: Vec<Vec<u64>>,
        /// Sets of fewer than k components, per k ≤ cap.
        below: Vec<u64>,
    },
    Hashed(StateMap<usize>),
}

impl StateIndex {
    fn new(n: usize, cap: usize) -> StateIndex {
        let cap = cap.min(n);
        let mut binom = vec![vec![0u64; cap + 1]; n + 1];
        for c in 0..=n {
            binom[c][0] = 1;
            for i in 1..=cap.min(c) {
                binom[c][i] = binom[c - 1][i - 1].saturating_add(if i < c { binom[c - 1][i] } else { 0 });
            }
        }
        let mut below = vec![0u64; cap + 2];
        for k in 0..=cap {
            below[k + 1] = below[k].saturating_add(binom[n][k]);
        }
        let total = below[cap + 1];
        if total > DENSE_MAX {
            return StateIndex::Hashed(StateMap::default());
        }
        StateIndex::Dense {
            slot: vec![u32::MAX; total as usize],
            binom,
            below,
        }
    }

    /// The slot of `state` (a set of at most `cap` components).
    fn rank(binom: &[Vec<u64>], below: &[u64], state: u128) -> usize {
        let k = state.count_ones() as usize;
        let mut r = below[k];
        let (mut rest, mut i) = (state, 1);
        while rest != 0 {
            let c = rest.trailing_zeros() as usize;
            r += binom[c][i];
            rest &= rest - 1;
            i += 1;
        }
        r as usize
    }

    fn get(&self, state: u128) -> Option<usize> {
        match self {
            StateIndex::Dense { slot, binom, below } => {
                let v = slot[Self::rank(binom, below, state)];
                (v != u32::MAX).then_some(v as usize)
            }
            StateIndex::Hashed(m) => m.get(&state).copied(),
        }
    }

    fn insert(&mut self, state: u128, number: usize) {
        match self {
            StateIndex::Dense { slot, binom, below } => slot[Self::rank(binom, below, state)] = number as u32,
            StateIndex::Hashed(m) => {
                m.insert(state, number);
            }
        }
    }
}

/// Transitions out of one state of the truncated chain: (target state, rate per second), into `out`;
/// `free` is scratch space (the triggers not yet failed). The targets and their order depend on the
/// components and `cap` only, never on the repair rates.
fn transitions(rel: &Reliability, state: u128, cap: usize, out: &mut Vec<(u128, f64)>, free: &mut Vec<usize>) {
    out.clear();
    let n = rel.components.len();
    let size = state.count_ones() as usize;
    let repair = |c: usize| {
        let comp = &rel.components[c];
        let in_pool = comp.spare_pool.map_or(1, |p| (state & rel.pool_masks[p]).count_ones());
        (state & !(1u128 << c), rel.repair_rate(c, in_pool))
    };
    if size >= cap {
        // Only repairs leave a state with `cap` components down: its set bits in ascending order, as the
        // loop below would give them (most states of the chain are such).
        let mut rest = state;
        while rest != 0 {
            out.push(repair(rest.trailing_zeros() as usize));
            rest &= rest - 1;
        }
        return;
    }
    for c in 0..n {
        let bit = 1u128 << c;
        let comp = &rel.components[c];
        if state & bit != 0 {
            out.push(repair(c));
            continue;
        }
        if comp.rate_per_s <= 0.0 {
            continue;
        }
        free.clear();
        free.extend(comp.triggers.iter().copied().filter(|&t| state & (1u128 << t) == 0));
        if free.is_empty() || rel.p_not_return <= 0.0 {
            out.push((rel.latched(state | bit, c), comp.rate_per_s));
            continue;
        }
        let p = rel.p_not_return;
        for mask in 0u32..(1u32 << free.len()) {
            let k = mask.count_ones() as usize;
            if size + 1 + k > cap {
                continue;
            }
            let mut target = state | bit;
            for (i, &t) in free.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    target |= 1u128 << t;
                }
            }
            let prob = p.powi(k as i32) * (1.0 - p).powi((free.len() - k) as i32);
            out.push((rel.latched(target, c), comp.rate_per_s * prob));
        }
    }
}

/// The truncated chain's reachable states (in the order a breadth-first search finds them), their
/// edges and the outcome of each state.
pub struct Chain {
    cap: usize,
    states: Vec<u128>,
    /// State i's edges are `target[start[i]..start[i + 1]]`, in `transitions`' order.
    start: Vec<usize>,
    target: Vec<usize>,
    sigs: Vec<Vec<u8>>,
}

impl Chain {
    /// The chain truncated at `cap` concurrent failed components. None when the site has more components
    /// than the chain can index (128) or more than `max_states` states.
    pub fn build(rel: &Reliability, cap: usize, max_states: usize) -> Option<Chain> {
        let n = rel.components.len();
        if n > 128 {
            return None;
        }
        let mut index = StateIndex::new(n, cap);
        let mut states: Vec<u128> = vec![0];
        index.insert(0, 0);
        let (mut out, mut free) = (Vec::new(), Vec::new());
        let mut start = vec![0usize];
        let mut target = Vec::new();
        let mut i = 0;
        while i < states.len() {
            transitions(rel, states[i], cap, &mut out, &mut free);
            for &(t, _) in &out {
                let j = match index.get(t) {
                    Some(j) => j,
                    None => {
                        if states.len() >= max_states {
                            return None;
                        }
                        states.push(t);
                        index.insert(t, states.len() - 1);
                        states.len() - 1
                    }
                };
                target.push(j);
            }
            start.push(target.len());
            i += 1;
        }
        let (mut hit, mut disks, mut active) = (Vec::new(), Vec::new(), Vec::new());
        let sigs = states
            .iter()
            .map(|&s| {
                active.clear();
                active.extend((0..n).filter(|&c| s & (1u128 << c) != 0));
                rel.outcome(&active, &mut hit, &mut disks)
            })
            .collect();
        Some(Chain {
            cap,
            states,
            start,
            target,
            sigs,
        })
    }

    /// The exact flows with `rel`'s repair rates. `rel` must have the components the chain was built
    /// from (its hot spares may differ).
    pub fn solve(&self, rel: &Reliability) -> ChainFlows {
        let (n, ns, cap) = (rel.components.len(), self.states.len(), self.cap);
        let rate = self.rates(rel);
        let pi = self.stationary(&rate);
        let mut f = self.flows(rel, &rate, &pi);
        f.p_any_dl = -(-f.any_dl).exp_m1();
        f.p_any_total = -(-f.any_total).exp_m1();
        ChainFlows {
            flows: f,
            detail: format!(
                "continuous-time Markov chain over {n} components, {ns} states (at most {cap} concurrent failures)"
            ),
            cap,
            components: n,
            states: ns,
            beyond_cap_per_year: self.beyond_cap(rel, &pi),
        }
    }

    /// The rate of each edge with `rel`'s repair rates, in the order of `target`.
    fn rates(&self, rel: &Reliability) -> Vec<f64> {
        let (ns, cap, start) = (self.states.len(), self.cap, &self.start);
        let mut rate = vec![0.0f64; self.target.len()];
        let (mut out, mut free) = (Vec::new(), Vec::new());
        for i in 0..ns {
            transitions(rel, self.states[i], cap, &mut out, &mut free);
            debug_assert_eq!(
                out.len(),
                start[i + 1] - start[i],
                "the chain was built from other components"
            );
            for (r, &(_, x)) in rate[start[i]..start[i + 1]].iter_mut().zip(&out) {
                *r = x;
            }
        }
        rate
    }

    /// State `i`'s edges: (target state, rate).
    fn edges<'x>(&'x self, rate: &'x [f64], i: usize) -> impl Iterator<Item = (usize, f64)> + 'x {
        (self.start[i]..self.start[i + 1]).map(move |e| (self.target[e], rate[e]))
    }

    /// Stationary distribution by Gauss–Seidel on the balance equations π_j q_j = Σ_i π_i q_ij.
    fn stationary(&self, rate: &[f64]) -> Vec<f64> {
        let (ns, start, target) = (self.states.len(), &self.start, &self.target);
        let out_rate: Vec<f64> = (0..ns).map(|i| rate[start[i]..start[i + 1]].iter().sum()).collect();
        // Incoming edges of each state in one flat array (state j's are at into[j]..into[j + 1]), by
        // source state, then edge.
        let mut into = vec![0usize; ns + 1];
        for &j in target {
            into[j + 1] += 1;
        }
        for j in 0..ns {
            into[j + 1] += into[j];
        }
        let mut fill = into.clone();
        let mut flat: Vec<(usize, f64)> = vec![(0, 0.0); into[ns]];
        for i in 0..ns {
            for (j, r) in self.edges(rate, i) {
                flat[fill[j]] = (i, r);
                fill[j] += 1;
            }
        }
        let incoming = |j: usize| &flat[into[j]..into[j + 1]];
        let mut pi = vec![0.0f64; ns];
        pi[0] = 1.0;
        for _ in 0..100_000 {
            let mut change = 0.0f64;
            for j in 1..ns {
                let v: f64 =
                    incoming(j).iter().map(|&(i, r)| pi[i] * r).sum::<f64>() / out_rate[j].max(f64::MIN_POSITIVE);
                let d = (v - pi[j]).abs() / v.max(f64::MIN_POSITIVE);
                if v > 0.0 && d > change {
                    change = d;
                }
                pi[j] = v;
            }
            // State 0 from its own balance, then renormalise.
            pi[0] = incoming(0).iter().map(|&(i, r)| pi[i] * r).sum::<f64>() / out_rate[0].max(f64::MIN_POSITIVE);
            let total: f64 = pi.iter().sum();
            for p in pi.iter_mut() {
                *p /= total;
            }
            if change < 1e-12 {
                break;
            }
        }
        pi
    }

    /// The yearly flows at stationary distribution `pi` (without the yearly probabilities).
    fn flows(&self, rel: &Reliability, rate: &[f64], pi: &[f64]) -> Flows {
        let (n, ns, sigs) = (rel.components.len(), self.states.len(), &self.sigs);
        let nc = rel.classes();
        let mut f = Flows::new(nc);
        // Per failure event (the components it adds), the classes whose quorum it alone makes lose
        // unsynced writes. Edges between states of the same signature cannot make a class lose data, and
        // states are tested for any loss once: the same sums, in the same order, as testing every edge
        // and class.
        let mut event_risks: StateMap<Vec<usize>> = StateMap::default();
        let (mut hit, mut disks) = (Vec::new(), Vec::new());
        let lost_any: Vec<bool> = sigs.iter().map(|s| any_dl(s)).collect();
        let lost_all: Vec<bool> = sigs.iter().map(|s| any_total(s)).collect();
        for i in 0..ns {
            for k in 0..nc {
                if st(&sigs[i], k).0 >= UNAV {
                    f.unavail[k] += pi[i];
                }
            }
            for (j, r) in self.edges(rate, i) {
                let flow = pi[i] * r * YEAR_S;
                if sigs[i] != sigs[j] {
                    class_losses(&mut f, &sigs[i], &sigs[j], flow);
                }
                // A failure event: does it, on its own, make a quorum lose unsynced writes? (A repair
                // takes bits away; a latched group's disks give way to its one latch bit, so a failure
                // is told by the bits it adds.)
                let newly = self.states[j] & !self.states[i];
                if newly != 0 {
                    let classes = event_risks.entry(newly).or_insert_with(|| {
                        let active: Vec<usize> = (0..n).filter(|&c| newly & (1u128 << c) != 0).collect();
                        let ev = rel.outcome(&active, &mut hit, &mut disks);
                        (0..nc).filter(|&k| st(&ev, k).1).collect()
                    });
                    for &k in classes.iter() {
                        f.risk[k] += flow;
                    }
                }
                if !lost_any[i] && lost_any[j] {
                    f.any_dl += flow;
                }
                if !lost_all[i] && lost_all[j] {
                    f.any_total += flow;
                }
            }
        }
        f
    }

    /// What the truncation leaves out: every event that needs more than `cap` components down at once
    /// passes through a state with `cap` down and then a failure the chain drops. The flow of those
    /// dropped failures bounds (to first order in the failure rates) the yearly rate of all such
    /// events, losses included.
    fn beyond_cap(&self, rel: &Reliability, pi: &[f64]) -> f64 {
        let n = rel.components.len();
        let mut beyond = 0.0;
        for i in 0..self.states.len() {
            let s = self.states[i];
            if s.count_ones() as usize >= self.cap {
                let dropped: f64 = (0..n)
                    .filter(|&c| s & (1u128 << c) == 0)
                    .map(|c| rel.components[c].rate_per_s)
                    .sum();
                beyond += pi[i] * dropped * YEAR_S;
            }
        }
        beyond
    }

    /// The most concurrent failed components the chain keeps.
    pub fn cap(&self) -> usize {
        self.cap
    }
}

/// What one chain solve gives: the flows, how it was made, and the bound on what its cap leaves out.
#[derive(Debug, Clone)]
pub struct ChainFlows {
    pub flows: Flows,
    pub detail: String,
    pub cap: usize,
    pub components: usize,
    pub states: usize,
    /// Events per year that need more than `cap` concurrent failed components (a first-order upper bound:
    /// the flow of the failures the truncated chain drops).
    pub beyond_cap_per_year: f64,
}

/// The flows of the chain truncated at `cap` concurrent failed components. None when the site has more
/// components than the chain can index (128) or more than `max_states` states.
pub fn exact_flows(rel: &Reliability, cap: usize, max_states: usize) -> Option<ChainFlows> {
    Chain::build(rel, cap, max_states).map(|c| c.solve(rel))
}

/// Years of the Monte Carlo that stands in for a chain too large to build.
const DESIGN_MC_YEARS: u64 = 4_000;

/// The two chains behind the exact figures, one shape for `design` and `simulate` (issue 32: they gave
/// two "exact" answers for one layout):
/// * the full chain over every component, at most 3, else 2, concurrent failures within `CHAIN_STATES`:
///   unavailability, write stalls, window losses;
/// * the chain over the store-destroying components alone (`Reliability::destroyers`), with as many
///   concurrent failures as fit in `DESTROYER_STATES` (at most `DESTROYER_CAP_MAX`): the data-loss
///   figures, with a bound on what its cap leaves out.
///
/// Either may not fit (more than 128 components, or too many states); the full chain's figures then come
/// from a 4,000-year Monte Carlo (seed 1), the data-loss ones from the full chain or that Monte Carlo.
pub struct Chains {
    pub full: Option<Chain>,
    pub destroyers: Option<Chain>,
}

impl Chains {
    pub fn build(rel: &Reliability, rel_d: &Reliability) -> Chains {
        let n = rel.components.len();
        let full = [3, 2]
            .into_iter()
            .filter(|&cap| n <= 128 && chain_states(n, cap) <= CHAIN_STATES as u64)
            .find_map(|cap| Chain::build(rel, cap, CHAIN_STATES));
        Chains {
            full,
            destroyers: Chains::destroyer_chain(rel_d),
        }
    }

    /// The chain over the store-destroying components (`rel_d`), with as many concurrent failures as fit.
    pub fn destroyer_chain(rel_d: &Reliability) -> Option<Chain> {
        let nd = rel_d.components.len();
        (1..=DESTROYER_CAP_MAX.min(nd.max(1)))
            .rev()
            .filter(|&cap| nd <= 128 && chain_states(nd, cap) <= DESTROYER_STATES as u64)
            .find_map(|cap| Chain::build(rel_d, cap, DESTROYER_STATES))
    }

    /// Design's data-loss figures alone (the destroyer chain's), with every other figure zero: what the
    /// reference simulation checks, without the full chain's cost.
    pub fn data_loss(rel_d: &Reliability) -> Option<Yearly> {
        let c = Chains::destroyer_chain(rel_d)?;
        let d = c.solve(rel_d);
        let mut y = rel_d.figures("exact", d.detail, &d.flows, None).listed();
        y.p_any_data_lost_beyond_cap_per_year =
            (d.cap < rel_d.components.len()).then(|| -(-d.beyond_cap_per_year).exp_m1());
        Some(y)
    }

    pub fn solve(&self, rel: &Reliability, rel_d: &Reliability) -> Yearly<super::yearly::YearlyEntries> {
        let (mut flows, mut method, mut detail) = match &self.full {
            Some(c) => {
                let f = c.solve(rel);
                (f.flows, "exact", f.detail)
            }
            None => {
                let mc = monte_carlo_flows(rel, DESIGN_MC_YEARS, 1, 1, None);
                (mc.0, "monte_carlo", mc.1)
            }
        };
        let mut beyond = None;
        if let Some(c) = &self.destroyers {
            let d = c.solve(rel_d);
            flows.dl = d.flows.dl;
            flows.total = d.flows.total;
            flows.tail = d.flows.tail;
            flows.any_dl = d.flows.any_dl;
            flows.any_total = d.flows.any_total;
            flows.p_any_dl = d.flows.p_any_dl;
            flows.p_any_total = d.flows.p_any_total;
            let capped = d.cap < rel_d.components.len();
            beyond = capped.then(|| -(-d.beyond_cap_per_year).exp_m1());
            detail = format!(
                "{detail}; data loss from a chain over the {} store-destroying components, {} states (at most {} \
                 concurrent failures)",
                d.components, d.states, d.cap
            );
            if self.full.is_none() {
                method = "monte_carlo+exact_data_loss";
            }
        }
        if self.destroyers.is_none() {
            // Too many store-destroying components for a chain: the data-loss figures are the Monte Carlo's,
            // which at real rates sees no event in its years. Never a bare zero (issue 32): the bound is the
            // 95 % upper end of the event count's interval (Garwood; 3 per span when none was seen) less the
            // figure itself.
            let k = (flows.p_any_dl * DESIGN_MC_YEARS as f64).round() as u64;
            let upper = super::reference::garwood(k, 1.96).1 / DESIGN_MC_YEARS as f64;
            let b = (upper - flows.p_any_dl).max(0.0);
            beyond = Some(b);
            detail = format!(
                "{detail}; data loss estimated by that Monte Carlo ({} store-destroying components: too many for \
                 a chain), bounded by its 95 % interval",
                rel_d.components.len()
            );
        }
        let mut y = rel.figures(method, detail, &flows, None);
        y.p_any_data_lost_beyond_cap_per_year = beyond;
        if let (Some(b), None) = (beyond, &self.destroyers) {
            y.assumptions.push(format!(
                "data-loss figures from a {DESIGN_MC_YEARS}-year Monte Carlo (too many store-destroying components \
                 for a chain): up to {} per year more lies within its 95 % interval",
                crate::units::fmt_sci(b)
            ));
        } else if let Some(b) = beyond {
            y.assumptions.push(format!(
                "data-loss figures exact up to {} concurrent store-destroying failures; events that need more are \
                 left out, at most {} per year (first order: the flow of the failures the chain drops)",
                self.destroyers.as_ref().map_or(0, Chain::cap),
                crate::units::fmt_sci(b)
            ));
        }
        y
    }
}

/// An edge of `flow` per year from signature `a` to `b`: each class it makes lose data (and lose it whole,
/// or only its tail).
fn class_losses(f: &mut Flows, a: &[u8], b: &[u8], flow: f64) {
    for k in 0..f.dl.len() {
        let (x, y) = (st(a, k).0, st(b, k).0);
        if x < DL && y >= DL {
            f.dl[k] += flow;
            if y == DL {
                f.tail[k] += flow;
            }
        }
        if x < DL_TOTAL && y == DL_TOTAL {
            f.total[k] += flow;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every set of at most `cap` of `n` components has its own slot, inside the array.
    #[test]
    fn dense_ranks_are_a_bijection() {
        for (n, cap) in [(1, 1), (5, 2), (7, 3), (12, 4), (60, 3)] {
            let StateIndex::Dense { slot, binom, below } = StateIndex::new(n, cap) else {
                panic!("{n} choose ≤ {cap} fits the dense index");
            };
            let mut seen = vec![false; slot.len()];
            let mut count = 0;
            for s in 0u128..(1u128 << n.min(20)) {
                if s.count_ones() as usize > cap {
                    continue;
                }
                let r = StateIndex::rank(&binom, &below, s);
                assert!(!seen[r], "rank {r} given twice (n {n}, cap {cap})");
                seen[r] = true;
                count += 1;
            }
            if n <= 20 {
                assert_eq!(count, slot.len(), "every slot used (n {n}, cap {cap})");
            }
        }
    }

    /// An index too large for an array falls back to the hash map, with the same answers.
    #[test]
    fn large_indexes_are_hashed() {
        let mut ix = StateIndex::new(128, 6);
        assert!(matches!(ix, StateIndex::Hashed(_)));
        ix.insert(0b1011, 7);
        assert_eq!(ix.get(0b1011), Some(7));
        assert_eq!(ix.get(0b111), None);
    }
}
