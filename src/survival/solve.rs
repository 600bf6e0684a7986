//! Solving the yearly chain built in `yearly` by a seeded Monte Carlo (the exact solve, a truncated
//! continuous-time Markov chain, is `chain`'s). Both return `Yearly` through `Reliability::figures`.

// Per-class figures live in parallel vectors indexed by class; index loops read clearer than zips of four.
#![allow(clippy::needless_range_loop)]

use super::evaluate::Status;
use super::yearly::{Ci95, Flows, Reliability, Yearly};
use crate::site::ServerIdx;
use crate::text::plural_s;
use crate::units::YEAR_S;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::HashMap;

pub(super) const UNAV: u8 = Status::Unavailable as u8;
pub(super) const DL: u8 = Status::DataLost as u8;
/// In the yearly signatures: data lost with no replica left (`DL` then means a tail loss).
pub(super) const DL_TOTAL: u8 = DL + 1;

/// Status and acked-loss flag of class `k` in an outcome signature.
pub(super) fn st(sig: &[u8], k: usize) -> (u8, bool) {
    (sig[2 * k], sig[2 * k + 1] != 0)
}

/// Per-trial tallies of the Monte Carlo, per class.
#[derive(Debug, Clone)]
struct Tally {
    /// Sums and sums of squares over trials.
    unavail_s: Vec<(f64, f64)>,
    dl: Vec<(f64, f64)>,
    total: Vec<(f64, f64)>,
    tail: Vec<(f64, f64)>,
    risk: Vec<(f64, f64)>,
    /// Years with at least one data_lost entry (and one whole loss), per class and for any asset.
    dl_years: Vec<u64>,
    total_years: Vec<u64>,
    any_dl_years: u64,
    any_total_years: u64,
    trials: u64,
}

impl Tally {
    fn new(nc: usize) -> Tally {
        Tally {
            unavail_s: vec![(0.0, 0.0); nc],
            dl: vec![(0.0, 0.0); nc],
            total: vec![(0.0, 0.0); nc],
            tail: vec![(0.0, 0.0); nc],
            risk: vec![(0.0, 0.0); nc],
            dl_years: vec![0; nc],
            total_years: vec![0; nc],
            any_dl_years: 0,
            any_total_years: 0,
            trials: 0,
        }
    }
    fn merge(&mut self, o: &Tally) {
        let add = |a: &mut (f64, f64), b: (f64, f64)| {
            a.0 += b.0;
            a.1 += b.1;
        };
        for k in 0..self.unavail_s.len() {
            add(&mut self.unavail_s[k], o.unavail_s[k]);
            add(&mut self.dl[k], o.dl[k]);
            add(&mut self.total[k], o.total[k]);
            add(&mut self.tail[k], o.tail[k]);
            add(&mut self.risk[k], o.risk[k]);
            self.dl_years[k] += o.dl_years[k];
            self.total_years[k] += o.total_years[k];
        }
        self.any_dl_years += o.any_dl_years;
        self.any_total_years += o.any_total_years;
        self.trials += o.trials;
    }
}

/// A 95 % interval for the mean of `n` non-negative per-trial totals with sum `s` and sum of squares `s2`,
/// valid for rare, heavy-tailed contributions (a few outages of days among many of seconds), where the
/// normal interval is far too narrow. The total is treated as a scaled Poisson count: its effective number
/// of independent contributions is s²/s2 (for a compound Poisson sum, n/(1 + CV²) of its episodes), and the
/// Garwood interval for that count — gamma quantiles at shape n_eff and n_eff + 1 — is scaled back. With
/// nothing seen, the upper bound is the rule of three for one contribution of size `unseen`.
/// Returns (mean, low, high).
pub(crate) fn scaled_poisson_ci(s: f64, s2: f64, n: f64, unseen: f64) -> (f64, f64, f64) {
    let m = s / n.max(1.0);
    if s <= 0.0 || s2 <= 0.0 {
        return (0.0, 0.0, 3.0 * unseen / n.max(1.0));
    }
    let n_eff = s * s / s2;
    let scale = m / n_eff;
    let lo = gamma_quantile(n_eff, -1.959_964) * scale;
    let hi = gamma_quantile(n_eff + 1.0, 1.959_964) * scale;
    (m, lo.max(0.0), hi)
}

/// The quantile of a unit-scale gamma distribution of `shape` at the standard normal quantile `z`, by the
/// Wilson–Hilferty cube-root approximation of χ² with 2·shape degrees of freedom (within a few per cent for
/// shape ≥ 0.5 at the 2.5 % and 97.5 % points; the lower end errs low, which only widens the interval).
fn gamma_quantile(shape: f64, z: f64) -> f64 {
    let k = 2.0 * shape;
    let c = 2.0 / (9.0 * k);
    let x = 1.0 - c + z * c.sqrt();
    (k * x.max(0.0).powi(3)) / 2.0
}

/// A disk that held a hot spare is whole again: the spare counts as back (see `Reliability::repair_rate`),
/// so a disk of the same pool waiting for a replacement drive takes it and rebuilds from now on (the
/// exponential's memorylessness lets its remaining time be drawn afresh). This keeps the simulation the
/// same chain as the exact one.
fn hand_on_spare(rel: &Reliability, active: &mut [(usize, f64, bool)], done: usize, t: f64, rng: &mut ChaCha8Rng) {
    let pool = rel.components[done].spare_pool;
    if let Some(w) = active
        .iter_mut()
        .find(|a| !a.2 && pool.is_some() && rel.components[a.0].spare_pool == pool)
    {
        w.2 = true;
        w.1 = t + exp_sample(rng, rel.components[w.0].repair_s);
    }
}

fn exp_sample(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    // 1 - u is in (0, 1], so the logarithm is finite.
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

/// An outcome signature with flags that let the simulation skip per-class work in the common cases.
#[derive(Debug, Clone)]
pub(super) struct SigInfo {
    sig: Vec<u8>,
    any_unav: bool,
    any_dl: bool,
    any_total: bool,
    any_risk: bool,
}

impl SigInfo {
    pub(super) fn new(sig: Vec<u8>) -> SigInfo {
        SigInfo {
            any_unav: sig.chunks(2).any(|c| c[0] >= UNAV),
            any_dl: sig.chunks(2).any(|c| c[0] >= DL),
            any_total: sig.chunks(2).any(|c| c[0] == DL_TOTAL),
            any_risk: sig.chunks(2).any(|c| c[1] != 0),
            sig,
        }
    }
}

fn info<'x>(base: &'x [SigInfo], extra: &'x [SigInfo], id: u32) -> &'x SigInfo {
    let id = id as usize;
    if id < base.len() {
        &base[id]
    } else {
        &extra[id - base.len()]
    }
}

/// The interned outcome id of a sorted set of failed components.
fn intern(
    rel: &Reliability,
    extra: &mut Vec<SigInfo>,
    cache: &mut HashMap<Vec<usize>, u32>,
    set: &[usize],
    hit: &mut Vec<(ServerIdx, super::evaluate::ServerEffect)>,
    disks: &mut Vec<super::sweep::GroupHits>,
) -> u32 {
    match set.len() {
        0 => 0,
        1 => 1 + set[0] as u32,
        _ => {
            if let Some(&id) = cache.get(set) {
                return id;
            }
            let id = (rel.base.len() + extra.len()) as u32;
            extra.push(SigInfo::new(rel.prep.signature(set, hit, disks)));
            cache.insert(set.to_vec(), id);
            id
        }
    }
}

/// Walker's alias table: picks index i with probability weight[i] / Σ weight from one uniform number in
/// constant time (the Monte Carlo picks a failing component hundreds of times per simulated year).
struct Alias {
    prob: Vec<f64>,
    alias: Vec<usize>,
}

impl Alias {
    fn new(weights: &[f64]) -> Alias {
        let n = weights.len().max(1);
        let total: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights
            .iter()
            .map(|w| if total > 0.0 { w / total * n as f64 } else { 1.0 })
            .collect();
        prob.resize(n, 0.0);
        let mut alias: Vec<usize> = (0..n).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers are 1 up to rounding.
        for i in large.into_iter().chain(small) {
            prob[i] = 1.0;
        }
        Alias { prob, alias }
    }

    /// `u` uniform in [0, 1).
    fn sample(&self, u: f64) -> usize {
        let x = u * self.prob.len() as f64;
        let i = (x as usize).min(self.prob.len() - 1);
        if x - (i as f64) < self.prob[i] {
            i
        } else {
            self.alias[i]
        }
    }
}

/// The events `monte_carlo` steps through for `site_years` (years × trials) on average: every component
/// failure (their rates summed, per year) and its repair. The work of a run grows with these, not only
/// with the site-years: a rate of 10⁹ a year makes one site-year 10⁹ events.
pub fn expected_events(rel: &Reliability, site_years: u64) -> f64 {
    let per_year: f64 = rel.components.iter().map(|c| c.rate_per_s).sum::<f64>() * YEAR_S;
    2.0 * per_year * site_years as f64
}

/// Trials per work unit: fixed, so results do not depend on the number of threads.
const CHUNK: u64 = 2048;

/// Simulate `trials` independent runs of `years_per_trial` years each of the chain (optionally truncated at
/// `cap` concurrent failures, as the exact chain is), starting with everything up. Means and intervals
/// are per year over trials; yearly probabilities are the fraction of simulated years with a loss. Same
/// seed, same numbers, whatever the number of threads.
pub fn monte_carlo(rel: &Reliability, trials: u64, years_per_trial: u64, seed: u64, cap: Option<usize>) -> Yearly {
    let (parts, per, cap) = simulate(rel, trials, years_per_trial, seed, cap);
    summarise(rel, &parts, per, seed, cap)
}

/// The Monte Carlo's flows alone (no intervals), and how they were made: `design`'s stand-in for a chain
/// too large to solve.
pub(super) fn monte_carlo_flows(
    rel: &Reliability,
    trials: u64,
    years_per_trial: u64,
    seed: u64,
    cap: Option<usize>,
) -> (Flows, String) {
    let (parts, per, cap) = simulate(rel, trials, years_per_trial, seed, cap);
    let (flows, _, detail) = flows_of(rel, &parts, per, seed, cap);
    (flows, detail)
}

fn simulate(
    rel: &Reliability,
    trials: u64,
    years_per_trial: u64,
    seed: u64,
    cap: Option<usize>,
) -> (Vec<Tally>, u64, usize) {
    let per = years_per_trial.max(1);
    let rates: Vec<f64> = rel.components.iter().map(|c| c.rate_per_s).collect();
    let run = Run {
        rel,
        total_rate: rates.iter().sum(),
        alias: Alias::new(&rates),
        horizon: per as f64 * YEAR_S,
        years: trials,
        per,
        seed,
        cap: cap.unwrap_or(usize::MAX),
    };
    let chunks = run.years.div_ceil(CHUNK);
    let parts: Vec<Tally> = (0..chunks).into_par_iter().map(|ch| Chunk::new(&run).run(ch)).collect();
    (parts, per, run.cap)
}

/// What every chunk of [`simulate`] runs with.
struct Run<'r, 'm, 'a> {
    rel: &'r Reliability<'m, 'a>,
    /// Failures per second, all components together, and which one fails by its share.
    total_rate: f64,
    alias: Alias,
    /// Seconds of one trial.
    horizon: f64,
    /// Trials, and years per trial.
    years: u64,
    per: u64,
    seed: u64,
    /// The most concurrent failures (`usize::MAX`: no cap).
    cap: usize,
}

/// Interned outcomes: ids below `rel.base.len()` are the empty state and single components; others are
/// this chunk's multi-failure states.
struct Outcomes {
    extra: Vec<SigInfo>,
    cache: HashMap<Vec<usize>, u32>,
    hit: Vec<(ServerIdx, super::evaluate::ServerEffect)>,
    disks: Vec<super::sweep::GroupHits>,
}

impl Outcomes {
    fn id(&mut self, rel: &Reliability, set: &[usize]) -> u32 {
        intern(
            rel,
            &mut self.extra,
            &mut self.cache,
            set,
            &mut self.hit,
            &mut self.disks,
        )
    }

    fn info<'x>(&'x self, rel: &'x Reliability, id: u32) -> &'x SigInfo {
        info(&rel.base, &self.extra, id)
    }
}

/// One trial's counts per class, and the classes it touched: per-trial work stays proportional to what
/// happened, not to the number of classes (hundreds on large sites).
struct Counts {
    un: Vec<f64>,
    dl: Vec<f64>,
    tot: Vec<f64>,
    tl: Vec<f64>,
    rk: Vec<f64>,
    last_dl_year: Vec<u64>,
    last_total_year: Vec<u64>,
    touched: Vec<usize>,
    is_touched: Vec<bool>,
    last_any_year: u64,
    last_any_total_year: u64,
}

impl Counts {
    fn new(nc: usize) -> Counts {
        Counts {
            un: vec![0.0; nc],
            dl: vec![0.0; nc],
            tot: vec![0.0; nc],
            tl: vec![0.0; nc],
            rk: vec![0.0; nc],
            last_dl_year: vec![u64::MAX; nc],
            last_total_year: vec![u64::MAX; nc],
            touched: Vec::new(),
            is_touched: vec![false; nc],
            last_any_year: u64::MAX,
            last_any_total_year: u64::MAX,
        }
    }

    /// Zero the classes the last trial touched, for the next.
    fn reset(&mut self) {
        for &k in &self.touched {
            self.un[k] = 0.0;
            self.dl[k] = 0.0;
            self.tot[k] = 0.0;
            self.tl[k] = 0.0;
            self.rk[k] = 0.0;
            self.last_dl_year[k] = u64::MAX;
            self.last_total_year[k] = u64::MAX;
            self.is_touched[k] = false;
        }
        self.touched.clear();
        self.last_any_year = u64::MAX;
        self.last_any_total_year = u64::MAX;
    }

    fn touch(&mut self, k: usize) {
        touch(k, &mut self.is_touched, &mut self.touched);
    }

    /// The step from outcome `a` to `b` (which has a data loss) in `year`: count each class's new data
    /// loss and whole loss, and the years with one.
    fn losses(&mut self, a: &SigInfo, b: &SigInfo, year: u64, tally: &mut Tally) {
        for k in 0..self.un.len() {
            let (x, y) = (st(&a.sig, k).0, st(&b.sig, k).0);
            if x < DL && y >= DL {
                self.dl[k] += 1.0;
                if y == DL {
                    self.tl[k] += 1.0;
                }
                self.touch(k);
                if self.last_dl_year[k] != year {
                    self.last_dl_year[k] = year;
                    tally.dl_years[k] += 1;
                }
            }
            if x < DL_TOTAL && y == DL_TOTAL {
                self.tot[k] += 1.0;
                self.touch(k);
                if self.last_total_year[k] != year {
                    self.last_total_year[k] = year;
                    tally.total_years[k] += 1;
                }
            }
        }
        if !a.any_dl && self.last_any_year != year {
            self.last_any_year = year;
            tally.any_dl_years += 1;
        }
        if !a.any_total && b.any_total && self.last_any_total_year != year {
            self.last_any_total_year = year;
            tally.any_total_years += 1;
        }
    }
}

/// One chunk of trials of [`simulate`] and its working state.
struct Chunk<'c, 'm, 'a> {
    run: &'c Run<'c, 'm, 'a>,
    tally: Tally,
    out: Outcomes,
    counts: Counts,
    /// Failed components: (index, repair time, holds a hot spare).
    active: Vec<(usize, f64, bool)>,
    ids: Vec<usize>,
    newly: Vec<usize>,
}

impl<'c, 'm, 'a> Chunk<'c, 'm, 'a> {
    fn new(run: &'c Run<'c, 'm, 'a>) -> Self {
        let nc = run.rel.classes();
        Chunk {
            run,
            tally: Tally::new(nc),
            out: Outcomes {
                extra: Vec::new(),
                cache: HashMap::new(),
                hit: Vec::new(),
                disks: Vec::new(),
            },
            counts: Counts::new(nc),
            active: Vec::new(),
            ids: Vec::new(),
            newly: Vec::new(),
        }
    }

    /// The trials of chunk `ch`, each on its own random stream.
    fn run(mut self, ch: u64) -> Tally {
        for trial in ch * CHUNK..((ch + 1) * CHUNK).min(self.run.years) {
            let mut rng = ChaCha8Rng::seed_from_u64(self.run.seed);
            rng.set_stream(trial);
            self.active.clear();
            self.counts.reset();
            self.trial(&mut rng);
            let c = &mut self.counts;
            add_trial(
                &mut self.tally,
                &mut c.touched,
                [&c.un, &c.dl, &c.tot, &c.tl, &c.rk],
                self.run.per,
            );
        }
        self.tally
    }

    /// One trial: failures and repairs until the horizon, starting with everything up.
    fn trial(&mut self, rng: &mut ChaCha8Rng) {
        let run = self.run;
        let mut t = 0.0;
        let mut cur: u32 = 0;
        let mut next_fail = if run.total_rate > 0.0 {
            exp_sample(rng, 1.0 / run.total_rate)
        } else {
            f64::INFINITY
        };
        loop {
            let (ri, next_rep) = self
                .active
                .iter()
                .enumerate()
                .map(|(i, a)| (i, a.1))
                .fold((usize::MAX, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b });
            let next = next_fail.min(next_rep);
            let end = next.min(run.horizon);
            self.unavailable(cur, end - t);
            if next >= run.horizon {
                break;
            }
            t = next;
            if next_rep <= next_fail {
                let (x, _, held) = self.active.swap_remove(ri);
                if held {
                    hand_on_spare(run.rel, &mut self.active, x, t, rng);
                }
            } else {
                next_fail = t + exp_sample(rng, 1.0 / run.total_rate);
                if !self.fail(t, rng) {
                    continue;
                }
            }
            cur = self.step(cur, t);
        }
    }

    /// `dt` seconds in outcome `cur`: its unavailable classes count them.
    fn unavailable(&mut self, cur: u32, dt: f64) {
        let ci = self.out.info(self.run.rel, cur);
        if ci.any_unav {
            for k in 0..self.counts.un.len() {
                if ci.sig[2 * k] >= UNAV {
                    self.counts.un[k] += dt;
                    self.counts.touch(k);
                }
            }
        }
    }

    /// A component fails at `t` (with those it triggers): false when nothing changes (it had failed
    /// already, or the cap on concurrent failures holds it back).
    fn fail(&mut self, t: f64, rng: &mut ChaCha8Rng) -> bool {
        let rel = self.run.rel;
        // Which component: by its share of the total rate.
        let c = self.run.alias.sample(rng.random::<f64>());
        if self.active.iter().any(|a| a.0 == c) {
            return false; // already failed: no transition (the chain's rate is zero there)
        }
        self.newly.clear();
        self.newly.push(c);
        for &tr in &rel.components[c].triggers {
            if !self.active.iter().any(|a| a.0 == tr) && rng.random::<f64>() < rel.p_not_return {
                self.newly.push(tr);
            }
        }
        // A disk that completes a destroying set of its group: the group goes as a whole
        // (its failed disks give way to its latch), as in the exact chain.
        let latch = rel.completes_destroy(c, |i| self.active.iter().any(|a| a.0 == i));
        let gone = latch.map_or(0, |(g, _)| {
            self.active
                .iter()
                .filter(|a| rel.components[a.0].group == Some(g))
                .count()
        });
        if self.active.len() + self.newly.len() - gone > self.run.cap {
            return false;
        }
        if let Some((g, l)) = latch {
            let mut i = 0;
            while i < self.active.len() {
                if rel.components[self.active[i].0].group == Some(g) {
                    let (x, _, held) = self.active.swap_remove(i);
                    if held {
                        hand_on_spare(rel, &mut self.active, x, t, rng);
                    }
                } else {
                    i += 1;
                }
            }
            self.newly[0] = l;
        }
        self.newly.sort_unstable();
        let ev = self.out.id(rel, &self.newly);
        let ei = self.out.info(rel, ev);
        if ei.any_risk {
            for k in 0..self.counts.un.len() {
                if st(&ei.sig, k).1 {
                    self.counts.rk[k] += 1.0;
                    self.counts.touch(k);
                }
            }
        }
        start_repairs(rel, &mut self.active, &self.newly, t, rng);
        true
    }

    /// The step at `t` from outcome `cur` to the failed set now active: its losses counted; the new
    /// outcome's id.
    fn step(&mut self, cur: u32, t: f64) -> u32 {
        let rel = self.run.rel;
        self.ids.clear();
        self.ids.extend(self.active.iter().map(|a| a.0));
        self.ids.sort_unstable();
        let next_id = self.out.id(rel, &self.ids);
        let (a, b) = (self.out.info(rel, cur), self.out.info(rel, next_id));
        if b.any_dl {
            self.counts.losses(a, b, (t / YEAR_S) as u64, &mut self.tally);
        }
        next_id
    }
}

/// Mark class `k` as touched by this trial (once).
fn touch(k: usize, is_touched: &mut [bool], touched: &mut Vec<usize>) {
    if !is_touched[k] {
        is_touched[k] = true;
        touched.push(k);
    }
}

/// Start the repair of each newly failed component: with a hot spare of its pool still free the spare
/// takes the failure (`repair_s`), else the drive replacement first (`repair_no_spare_s`).
fn start_repairs(
    rel: &Reliability,
    active: &mut Vec<(usize, f64, bool)>,
    newly: &[usize],
    t: f64,
    rng: &mut ChaCha8Rng,
) {
    for &x in newly {
        let comp = &rel.components[x];
        let held = comp.spare_pool.is_some_and(|p| {
            let taken = active
                .iter()
                .filter(|a| a.2 && rel.components[a.0].spare_pool == Some(p))
                .count() as u32;
            taken < rel.spares[p]
        });
        let mean = if held || comp.spare_pool.is_none() {
            comp.repair_s
        } else {
            comp.repair_no_spare_s
        };
        active.push((x, t + exp_sample(rng, mean), held));
    }
}

/// Add one trial's per-year figures of the classes it touched to the tally: unavailable seconds, data-loss,
/// whole-loss, tail-loss and window events.
fn add_trial(tally: &mut Tally, touched: &mut [usize], v: [&[f64]; 5], per: u64) {
    // Per-year figures of this trial.
    let pf = per as f64;
    // Untouched classes add zero to both sums; sorted so float sums keep a fixed order.
    touched.sort_unstable();
    for &k in touched.iter() {
        let sums = [
            &mut tally.unavail_s[k],
            &mut tally.dl[k],
            &mut tally.total[k],
            &mut tally.tail[k],
            &mut tally.risk[k],
        ];
        for (sum, x) in sums.into_iter().zip(v) {
            let y = x[k] / pf;
            sum.0 += y;
            sum.1 += y * y;
        }
    }
    tally.trials += 1;
}

/// The yearly figures and their intervals from the chunks' tallies.
/// The flows, their 95 % intervals and the method's description from the chunks' tallies.
fn flows_of(rel: &Reliability, parts: &[Tally], per: u64, seed: u64, cap: usize) -> (Flows, Vec<Ci95>, String) {
    let nc = rel.classes();
    let n = rel.components.len();
    let mut tally = Tally::new(nc);
    for p in parts {
        tally.merge(p);
    }
    let nt = tally.trials.max(1) as f64;
    let site_years = (tally.trials * per).max(1) as f64;
    // The longest mean repair: what one unseen outage could last (bounds the interval when none was seen).
    let d_max = rel
        .components
        .iter()
        .map(|c| c.repair_s.max(c.repair_no_spare_s))
        .fold(0.0, f64::max);
    let mean_ci = |(s, s2): (f64, f64), unseen: f64| scaled_poisson_ci(s, s2, nt, unseen);
    // Unavailable time: episodes end with a repair (exponential, mean at most d_max), so a year's variance
    // is at most 2·d_max·mean; the sample alone misses the long outages it did not happen to see.
    let unavail_ci = |(s, s2): (f64, f64)| {
        let m = s / nt;
        let bound = 2.0 * d_max / per as f64 * m * nt;
        scaled_poisson_ci(s, s2.max(bound), nt, d_max / per as f64)
    };
    // Wilson interval for a yearly probability; with no event, the rule of three bounds it.
    let prop_ci = |x: u64| {
        let nt = site_years;
        let p = x as f64 / nt;
        let z = 1.96f64;
        let denom = 1.0 + z * z / nt;
        let centre = (p + z * z / (2.0 * nt)) / denom;
        let half = z * ((p * (1.0 - p) / nt) + z * z / (4.0 * nt * nt)).sqrt() / denom;
        if x == 0 {
            (0.0, 3.0 / nt)
        } else {
            ((centre - half).max(0.0), (centre + half).min(1.0))
        }
    };
    let mut f = Flows::new(nc);
    let mut cis = Vec::with_capacity(nc);
    let unseen = 1.0 / per as f64;
    for k in 0..nc {
        let (um, ulo, uhi) = unavail_ci(tally.unavail_s[k]);
        let (dm, dlo, dhi) = mean_ci(tally.dl[k], unseen);
        let (tm, tlo, thi) = mean_ci(tally.total[k], unseen);
        let (rm, rlo, rhi) = mean_ci(tally.risk[k], unseen);
        f.unavail[k] = um / YEAR_S;
        f.dl[k] = dm;
        f.total[k] = tm;
        f.tail[k] = tally.tail[k].0 / nt;
        f.risk[k] = rm;
        let planned = rel.planned_unavail_s[k] / 60.0;
        cis.push(Ci95 {
            unavailable_min_per_year: (ulo / 60.0 + planned, uhi / 60.0 + planned),
            p_data_lost_per_year: prop_ci(tally.dl_years[k]),
            data_lost_events_per_year: (dlo, dhi),
            // Scaled to messages per asset in `figures`.
            acked_msgs_lost_per_year: (rlo, rhi),
            p_wholly_lost_per_year: prop_ci(tally.total_years[k]),
            wholly_lost_events_per_year: (tlo, thi),
        });
    }
    // The yearly probabilities are observed directly (fraction of years with a loss).
    f.p_any_dl = tally.any_dl_years as f64 / site_years;
    f.p_any_total = tally.any_total_years as f64 / site_years;
    let detail = format!(
        "Monte Carlo: {} trials × {per} year{} over {n} components, seed {seed}{}",
        tally.trials,
        plural_s(per),
        if cap == usize::MAX {
            String::new()
        } else {
            format!(", at most {cap} concurrent failures")
        }
    );
    (f, cis, detail)
}

fn summarise(rel: &Reliability, parts: &[Tally], per: u64, seed: u64, cap: usize) -> Yearly {
    let mut tally = Tally::new(rel.classes());
    for p in parts {
        tally.merge(p);
    }
    let site_years = (tally.trials * per).max(1) as f64;
    let (flows, cis, detail) = flows_of(rel, parts, per, seed, cap);
    let mut y = rel.figures("monte_carlo", detail, &flows, Some(&cis)).listed();
    // The yearly probabilities are observed directly (fraction of years with a loss).
    let observed = |years: &[u64], k: usize| years[k] as f64 / site_years;
    y.meta.p_data_lost_per_year = observed(&tally.dl_years, 0);
    y.meta.p_wholly_lost_per_year = observed(&tally.total_years, 0);
    for (i, a) in y.assets.iter_mut().enumerate() {
        let k = rel.prep.asset_class[i];
        a.p_data_lost_per_year = observed(&tally.dl_years, k);
        a.p_wholly_lost_per_year = observed(&tally.total_years, k);
    }
    y
}

#[cfg(test)]
mod alias_tests {
    use super::Alias;

    #[test]
    fn alias_table_reproduces_the_weights() {
        let w = [0.0, 1.0, 3.0, 0.5, 0.0, 5.5];
        let a = Alias::new(&w);
        let n = 200_000;
        let mut counts = [0u32; 6];
        for i in 0..n {
            // A fine deterministic grid over [0, 1) exercises every column evenly.
            counts[a.sample((i as f64 + 0.5) / n as f64)] += 1;
        }
        let total: f64 = w.iter().sum();
        for (c, wi) in counts.iter().zip(w) {
            let expect = wi / total;
            assert!((*c as f64 / n as f64 - expect).abs() < 1e-3, "{counts:?}");
        }
    }
}
