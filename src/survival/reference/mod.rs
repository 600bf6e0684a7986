//! The reference: a discrete-event simulation of what destroys stores and how long it takes to make them
//! whole, written apart from the yearly chain (issue 33) so that each checks the other. It reads the site
//! document, the layout (which servers hold which replicas, on which groups) and the catalog's figures, and
//! derives on its own — never through `survival::domain`, `evaluate`, `components`, `repair` or the chain —
//! what a failure destroys (RAID rules, mirror pairs, pools, racks and arrays lost for good, servers' own
//! disks and hosts' pools), how spares and a pool's preservation capacity are used up and come back, how long
//! a rebuild, a replacement and a store's rebuild take, and which assets lose data. There is no cap on
//! concurrent failures.
//!
//! What it covers: the data-loss figures (per asset and any asset: data lost, wholly lost, a tail lost) and
//! the read errors met during rebuilds with no redundancy left. Not unavailability (outages, elections,
//! planned maintenance): those are the chain's and the Monte Carlo's alone.
//!
//! Where it differs from the chain on purpose (the chain simplifies; the reference does what the hardware
//! does): a hot spare (or a pool's reserved drive) comes back when the failed drive's replacement arrives,
//! not when the rebuild ends; a destroyed group is rebuilt on the spares there are at that moment; a drive
//! waiting without a spare takes one as soon as one comes back. Durations are exponential with the
//! catalog's means, as in the chain, so the two agree where the model is right.

use crate::catalog::Catalog;
use crate::layout::{Layout, Raid};
use crate::site::Site;
use crate::units::YEAR_S;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use world::*;

mod world;

/// When a spare (a pool's reserved drive) a rebuild took is free again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SparesBack {
    /// When the failed drive's replacement arrives (copyback, or the new drive becomes the spare): what
    /// the hardware does.
    WhenReplaced,
    /// When the rebuild onto it ends: the yearly chain's simplification (it keeps no state for spares
    /// out), so that the two are held to one model where the test is of the implementation.
    WhenRebuilt,
}

/// A rate estimate from the simulation: the mean per year and its 95 % interval (Garwood's, for the count
/// of events it saw).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Estimate {
    pub per_year: f64,
    pub low: f64,
    pub high: f64,
    /// Events seen.
    pub events: u64,
}

impl Estimate {
    fn of(events: u64, years: f64) -> Estimate {
        let (lo, hi) = garwood(events, 1.959_964);
        Estimate {
            per_year: events as f64 / years,
            low: lo / years,
            high: hi / years,
            events,
        }
    }

    /// Whether `x` (another method's figure per year) is consistent with this estimate at the two-sided
    /// normal quantile `z` (Garwood's interval at that level).
    pub fn admits(&self, x: f64, years: f64, z: f64) -> bool {
        let (lo, hi) = garwood(self.events, z);
        lo / years <= x && x <= hi / years
    }
}

/// Garwood's interval for a Poisson count at the two-sided normal quantile `z`, by the Wilson–Hilferty
/// approximation of the χ² quantiles (within a few per cent for counts of one and more; exact at 0 for the
/// lower end).
pub fn garwood(k: u64, z: f64) -> (f64, f64) {
    let q = |shape: f64, z: f64| {
        let k2 = 2.0 * shape;
        let c = 2.0 / (9.0 * k2);
        (k2 * (1.0 - c + z * c.sqrt()).max(0.0).powi(3)) / 2.0
    };
    let lo = if k == 0 { 0.0 } else { q(k as f64, -z) };
    (lo, q(k as f64 + 1.0, z))
}

/// One asset's (or the meta group's) estimates.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReferenceAsset {
    pub name: String,
    pub kind: crate::survival::GroupKind,
    pub data_lost_events_per_year: Estimate,
    pub wholly_lost_events_per_year: Estimate,
    pub tail_lost_events_per_year: Estimate,
}

/// What the reference gives for one layout.
#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    pub method: String,
    pub site_years: f64,
    pub seed: u64,
    /// Every failure rate of the site and catalog multiplied by this (1: as given).
    pub rate_multiplier: f64,
    pub spares_back: SparesBack,
    pub meta: ReferenceAsset,
    /// On the largest sites most of `simulate --format json`'s text (written as it is made).
    pub assets: Vec<ReferenceAsset>,
    /// Years with at least one data loss (wholly lost) of any asset or the meta group, per year.
    pub p_any_data_lost_per_year: Estimate,
    pub p_any_wholly_lost_per_year: Estimate,
    /// Entries into a state where some asset (or the meta group) has lost data (is wholly lost), per
    /// year: the rate the chain's yearly probability is 1 − e^(−rate) of.
    pub any_data_lost_events_per_year: Estimate,
    pub any_wholly_lost_events_per_year: Estimate,
    /// Rebuilds that met an unrecoverable read error with no redundancy left.
    pub corrupt_replica_events_per_year: Estimate,
}

/// What happens next in the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// Drive i fails (if it is up and its group is there).
    DriveFails(usize),
    /// Drive i is whole again (its rebuild ends): valid while `epoch` matches the drive's.
    Rebuilt(usize, u32),
    /// Drive i's own replacement arrives while it waits without a spare (`SparesBack::WhenRebuilt`).
    OwnReplacement(usize, u32),
    /// A destroyed RAID 0 group's new one gives its spare back (`SparesBack::WhenRebuilt`).
    GroupSpareBack(usize),
    /// A replacement drive arrives at array a: it restores a spare (a pool's reserved drive), which a
    /// failed drive waiting there takes at once.
    Arrival(usize),
    /// Group g's stores are back after it was destroyed (`epoch` the group's).
    GroupBack(usize, u32),
    /// Loss source l strikes, and is made good.
    LossStrikes(usize),
    LossBack(usize),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum DriveState {
    Up,
    /// Failed, rebuilding onto a spare (or into the pool's preservation capacity, or its replacement).
    Rebuilding,
    /// Failed, no spare: waiting for a drive.
    Waiting,
}

/// Per-trial counters.
#[derive(Debug, Clone, Default)]
struct Counts {
    dl: Vec<u64>,
    total: Vec<u64>,
    tail: Vec<u64>,
    /// Entries into a state where some class has lost data (is wholly lost), and years with such an entry.
    any_dl: u64,
    any_total: u64,
    any_dl_years: u64,
    any_total_years: u64,
    corrupt: u64,
}

impl Counts {
    fn new(classes: usize) -> Counts {
        Counts {
            dl: vec![0; classes],
            total: vec![0; classes],
            tail: vec![0; classes],
            ..Counts::default()
        }
    }
    fn add(&mut self, o: &Counts) {
        for k in 0..self.dl.len() {
            self.dl[k] += o.dl[k];
            self.total[k] += o.total[k];
            self.tail[k] += o.tail[k];
        }
        self.any_dl += o.any_dl;
        self.any_total += o.any_total;
        self.any_dl_years += o.any_dl_years;
        self.any_total_years += o.any_total_years;
        self.corrupt += o.corrupt;
    }
}

fn exp(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

/// The stores' side of a trial: which are destroyed (and by how many causes), which classes have lost
/// data, and the counts.
struct Ledger<'w> {
    w: &'w World,
    destroyed: Vec<u32>,
    /// Per class: replicas destroyed now, and whether it is lost (quorum or more) / wholly lost.
    down: Vec<u32>,
    lost: Vec<bool>,
    gone: Vec<bool>,
    /// Classes lost and wholly lost now.
    lost_now: usize,
    gone_now: usize,
    slot_classes: Vec<Vec<usize>>,
    last_dl_year: u64,
    last_total_year: u64,
    c: Counts,
}

impl Ledger<'_> {
    /// One event destroys (`on`) or gives back the stores `slots`: each class is judged once the whole
    /// event is applied (a rack lost takes three replicas at once: a whole loss, not a tail first).
    fn apply(&mut self, slots: &[usize], on: bool, t: f64) {
        let mut touched: Vec<usize> = Vec::new();
        for &s in slots {
            let before = self.destroyed[s] > 0;
            if on {
                self.destroyed[s] += 1;
            } else {
                self.destroyed[s] -= 1;
            }
            let after = self.destroyed[s] > 0;
            if before != after {
                for &k in &self.slot_classes[s] {
                    if after {
                        self.down[k] += 1;
                    } else {
                        self.down[k] -= 1;
                    }
                    touched.push(k);
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        let year = (t / YEAR_S) as u64;
        let (was_any, was_gone) = (self.lost_now > 0, self.gone_now > 0);
        for k in touched {
            let cl = &self.w.classes[k];
            let q = cl.r / 2 + 1;
            let d = self.down[k];
            let lost = d >= q || (cl.r == 1 && d >= 1);
            let gone = d >= cl.r;
            if lost && !self.lost[k] {
                self.c.dl[k] += 1;
                if !gone {
                    self.c.tail[k] += 1;
                }
            }
            if gone && !self.gone[k] {
                self.c.total[k] += 1;
            }
            match (self.lost[k], lost) {
                (false, true) => self.lost_now += 1,
                (true, false) => self.lost_now -= 1,
                _ => {}
            }
            match (self.gone[k], gone) {
                (false, true) => self.gone_now += 1,
                (true, false) => self.gone_now -= 1,
                _ => {}
            }
            self.lost[k] = lost;
            self.gone[k] = gone;
        }
        if !was_any && self.lost_now > 0 {
            self.c.any_dl += 1;
            if self.last_dl_year != year {
                self.last_dl_year = year;
                self.c.any_dl_years += 1;
            }
        }
        if !was_gone && self.gone_now > 0 {
            self.c.any_total += 1;
            if self.last_total_year != year {
                self.last_total_year = year;
                self.c.any_total_years += 1;
            }
        }
    }
}

/// The drives' side of a trial.
struct Drives {
    state: Vec<DriveState>,
    /// Whether a failed drive rebuilds onto a spare it took (`SparesBack::WhenRebuilt` gives it back then).
    holds: Vec<bool>,
    epoch: Vec<u32>,
    /// Spares (a pool's reserved drives) free now per array, never more than configured.
    free: Vec<u32>,
    gone: Vec<bool>,
    group_epoch: Vec<u32>,
}

/// The event queue: (time's bits, sequence) order; non-negative f64s order as their bits do.
struct Queue {
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
}

impl Queue {
    fn push(&mut self, t: f64, e: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t.to_bits(), self.seq, e)));
    }
}

/// One trial of `years` years from everything whole.
fn trial(w: &World, years: u64, rng: &mut ChaCha8Rng) -> Counts {
    let horizon = years as f64 * YEAR_S;
    let mut q = Queue {
        heap: BinaryHeap::new(),
        seq: 0,
    };
    for (i, d) in w.drives.iter().enumerate() {
        if d.rate > 0.0 {
            q.push(exp(rng, 1.0 / d.rate), Ev::DriveFails(i));
        }
    }
    for (l, x) in w.losses.iter().enumerate() {
        if x.rate > 0.0 {
            q.push(exp(rng, 1.0 / x.rate), Ev::LossStrikes(l));
        }
    }
    let mut dr = Drives {
        state: vec![DriveState::Up; w.drives.len()],
        holds: vec![false; w.drives.len()],
        epoch: vec![0; w.drives.len()],
        free: w.spares.clone(),
        gone: vec![false; w.groups.len()],
        group_epoch: vec![0; w.groups.len()],
    };
    let mut slot_classes: Vec<Vec<usize>> = vec![Vec::new(); w.slots];
    for (k, cl) in w.classes.iter().enumerate() {
        for &s in &cl.slots {
            slot_classes[s].push(k);
        }
    }
    let mut led = Ledger {
        w,
        destroyed: vec![0; w.slots],
        down: vec![0; w.classes.len()],
        lost: vec![false; w.classes.len()],
        gone: vec![false; w.classes.len()],
        lost_now: 0,
        gone_now: 0,
        slot_classes,
        last_dl_year: u64::MAX,
        last_total_year: u64::MAX,
        c: Counts::new(w.classes.len()),
    };
    let mut loss_on = vec![false; w.losses.len()];
    while let Some(Reverse((tb, _, ev))) = q.heap.pop() {
        let t = f64::from_bits(tb);
        if t >= horizon {
            break;
        }
        match ev {
            Ev::DriveFails(i) => drive_fails(w, i, t, &mut dr, &mut led, &mut q, rng),
            Ev::Rebuilt(i, e) => {
                if e != dr.epoch[i] || dr.state[i] != DriveState::Rebuilding {
                    continue;
                }
                dr.state[i] = DriveState::Up;
                q.push(t + exp(rng, 1.0 / w.drives[i].rate), Ev::DriveFails(i));
                if dr.holds[i] {
                    dr.holds[i] = false;
                    spare_back(w, w.groups[w.drives[i].group].array, t, &mut dr, &mut q, rng);
                }
            }
            Ev::OwnReplacement(i, e) => {
                if e == dr.epoch[i] && dr.state[i] == DriveState::Waiting {
                    dr.state[i] = DriveState::Rebuilding;
                    let mean = w.groups[w.drives[i].group].rebuild_s;
                    q.push(t + exp(rng, mean), Ev::Rebuilt(i, dr.epoch[i]));
                }
            }
            Ev::GroupSpareBack(a) => spare_back(w, a, t, &mut dr, &mut q, rng),
            Ev::Arrival(a) => {
                dr.free[a] = (dr.free[a] + 1).min(w.spares[a]);
                // A drive waiting there takes it (or the replacement itself) and rebuilds now.
                let waiting = (0..w.drives.len())
                    .find(|&x| dr.state[x] == DriveState::Waiting && w.groups[w.drives[x].group].array == a);
                if let Some(x) = waiting {
                    dr.free[a] = dr.free[a].saturating_sub(1);
                    dr.state[x] = DriveState::Rebuilding;
                    let mean = w.groups[w.drives[x].group].rebuild_s;
                    q.push(t + exp(rng, mean), Ev::Rebuilt(x, dr.epoch[x]));
                }
            }
            Ev::GroupBack(g, e) => {
                if e != dr.group_epoch[g] {
                    continue;
                }
                dr.gone[g] = false;
                led.apply(&w.groups[g].stores, false, t);
            }
            Ev::LossStrikes(l) => {
                let x = &w.losses[l];
                if !loss_on[l] {
                    loss_on[l] = true;
                    led.apply(&x.stores, true, t);
                    q.push(t + exp(rng, x.repair_s), Ev::LossBack(l));
                }
            }
            Ev::LossBack(l) => {
                let x = &w.losses[l];
                loss_on[l] = false;
                led.apply(&x.stores, false, t);
                q.push(t + exp(rng, 1.0 / x.rate), Ev::LossStrikes(l));
            }
        }
    }
    led.c
}

/// A spare is free again at array `a` (`SparesBack::WhenRebuilt`): a drive waiting there without one takes
/// it and rebuilds from now on (the exponential's memorylessness lets its time be drawn afresh).
fn spare_back(w: &World, a: usize, t: f64, dr: &mut Drives, q: &mut Queue, rng: &mut ChaCha8Rng) {
    let waiting =
        (0..w.drives.len()).find(|&x| dr.state[x] == DriveState::Waiting && w.groups[w.drives[x].group].array == a);
    match waiting {
        Some(x) => {
            dr.holds[x] = true;
            dr.state[x] = DriveState::Rebuilding;
            dr.epoch[x] += 1;
            q.push(
                t + exp(rng, w.groups[w.drives[x].group].rebuild_s),
                Ev::Rebuilt(x, dr.epoch[x]),
            );
        }
        None => dr.free[a] = (dr.free[a] + 1).min(w.spares[a]),
    }
}

/// Drive `i` fails at `t`: its group is destroyed (as its RAID level says), or it rebuilds onto a spare,
/// or waits for one. Every failed drive's replacement is on its way.
fn drive_fails(w: &World, i: usize, t: f64, dr: &mut Drives, led: &mut Ledger, q: &mut Queue, rng: &mut ChaCha8Rng) {
    let d = &w.drives[i];
    let g = d.group;
    let grp = &w.groups[g];
    if dr.gone[g] || dr.state[i] != DriveState::Up {
        // A dead group's drives are being replaced with it: try again later (memoryless).
        q.push(t + exp(rng, 1.0 / d.rate), Ev::DriveFails(i));
        return;
    }
    let failed = grp.drives.iter().filter(|&&x| dr.state[x] != DriveState::Up).count() as u32;
    let destroys = match grp.rule {
        Rule::Any => true,
        Rule::Pair => d.partner.is_some_and(|p| dr.state[p] != DriveState::Up),
        Rule::Count(k) => failed + 1 >= k,
    };
    let hardware = w.spares_back == SparesBack::WhenReplaced;
    if hardware {
        q.push(t + exp(rng, w.replace_s), Ev::Arrival(grp.array));
    }
    if destroys {
        // The group is gone: its rebuilds stop (the spares they were writing are free again), its
        // stores are rebuilt on a new group of its surviving drives and as many free spares as it lost
        // drives when there are enough, else after the replacement drives; its drives are new from then
        // on.
        let mut released = 0;
        for &x in grp.drives.iter() {
            if (hardware && dr.state[x] == DriveState::Rebuilding) || dr.holds[x] {
                released += 1;
            }
            if dr.state[x] != DriveState::Up || x == i {
                q.push(t + exp(rng, 1.0 / w.drives[x].rate), Ev::DriveFails(x));
            }
            dr.state[x] = DriveState::Up;
            dr.holds[x] = false;
            dr.epoch[x] += 1;
        }
        dr.gone[g] = true;
        dr.group_epoch[g] += 1;
        let a = grp.array;
        let wait = if hardware {
            dr.free[a] = (dr.free[a] + released).min(w.spares[a]);
            if grp.needs > dr.free[a] {
                w.replace_s
            } else {
                dr.free[a] -= grp.needs;
                0.0
            }
        } else {
            for _ in 0..released {
                spare_back(w, a, t, dr, q, rng);
            }
            // As the chain: a one-drive group's new build takes a spare while one is free (given back when
            // the stores are back); a larger one waits for replacements when the array keeps fewer spares
            // than it needs.
            if grp.rule == Rule::Any {
                if dr.free[a] > 0 {
                    dr.free[a] -= 1;
                    // The spare comes back with the stores (pushed below with the same mean).
                    0.0
                } else {
                    w.replace_s
                }
            } else if grp.needs > w.spares[a] {
                w.replace_s
            } else {
                0.0
            }
        };
        let back = t + exp(rng, grp.store_back_s + wait);
        q.push(back, Ev::GroupBack(g, dr.group_epoch[g]));
        if !hardware && grp.rule == Rule::Any && wait == 0.0 {
            q.push(back, Ev::GroupSpareBack(a));
        }
        led.apply(&grp.stores, true, t);
        return;
    }
    // Redundancy left: does this rebuild read the last copy of some data? A mirror's every failure
    // leaves its partner (a pool's RAID 1 pieces their other halves) alone; RAID 6 only its second.
    let last_copy_drives = match grp.raid {
        Raid::Raid6 => (failed == 1).then(|| (grp.drives.len() as f64 - 2.0).max(1.0)),
        _ => Some(1.0),
    };
    if let Some(n) = last_copy_drives {
        let p = -(-(n * grp.bits_per_drive * grp.nre)).exp_m1();
        if rng.random::<f64>() < p {
            led.c.corrupt += 1;
        }
    }
    dr.epoch[i] += 1;
    if dr.free[grp.array] > 0 {
        dr.free[grp.array] -= 1;
        dr.holds[i] = !hardware;
        dr.state[i] = DriveState::Rebuilding;
        q.push(t + exp(rng, grp.rebuild_s), Ev::Rebuilt(i, dr.epoch[i]));
    } else {
        dr.state[i] = DriveState::Waiting;
        if !hardware {
            q.push(t + exp(rng, w.replace_s), Ev::OwnReplacement(i, dr.epoch[i]));
        }
    }
}

/// Trials per work unit: fixed, so the figures do not depend on the number of threads.
const CHUNK: u64 = 64;

/// A reference run's description, each a number a caller sets.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    /// Trials of `years` years each.
    pub trials: u64,
    pub years: u64,
    pub seed: u64,
    /// Every failure rate multiplied by this (1 for the site as given; 100–1,000 to see events the real
    /// rates make too rare to see).
    pub multiplier: f64,
    pub spares_back: SparesBack,
}

/// Run the reference for `layout` as `run` describes.
pub fn reference(site: &Site, layout: &Layout, catalog: &Catalog, run: &RunSpec) -> Reference {
    let RunSpec {
        trials,
        years,
        seed,
        multiplier,
        spares_back,
    } = *run;
    let w = World::new(site, layout, catalog, multiplier, spares_back);
    let chunks = trials.div_ceil(CHUNK);
    let parts: Vec<Counts> = (0..chunks)
        .into_par_iter()
        .map(|ch| {
            let mut c = Counts::new(w.classes.len());
            for tr in ch * CHUNK..((ch + 1) * CHUNK).min(trials) {
                let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x005e_ed0f_4ef5);
                rng.set_stream(tr);
                c.add(&trial(&w, years, &mut rng));
            }
            c
        })
        .collect();
    let mut c = Counts::new(w.classes.len());
    for p in &parts {
        c.add(p);
    }
    let site_years = (trials * years) as f64;
    let est = |k: usize, name: &str, kind: crate::survival::GroupKind| ReferenceAsset {
        name: name.to_string(),
        kind,
        data_lost_events_per_year: Estimate::of(c.dl[k], site_years),
        wholly_lost_events_per_year: Estimate::of(c.total[k], site_years),
        tail_lost_events_per_year: Estimate::of(c.tail[k], site_years),
    };
    let assets = layout
        .assets
        .iter()
        .zip(&w.asset_class)
        .map(|(a, k)| match k {
            Some(k) => est(*k, &a.name, a.kind.into()),
            None => ReferenceAsset {
                name: a.name.to_string(),
                kind: a.kind.into(),
                ..ReferenceAsset::default()
            },
        })
        .collect();
    Reference {
        method: format!(
            "discrete-event simulation (the reference, written apart from the chain): {trials} trials × {years} \
             years, seed {seed}{}; spares back {}",
            if multiplier == 1.0 {
                String::new()
            } else {
                format!(", every failure rate × {multiplier}")
            },
            match spares_back {
                SparesBack::WhenReplaced => "when the failed drive's replacement arrives, as the hardware does",
                SparesBack::WhenRebuilt => "when the rebuild ends, as the chain assumes",
            }
        ),
        site_years,
        seed,
        rate_multiplier: multiplier,
        spares_back,
        meta: est(0, "meta", crate::survival::GroupKind::Meta),
        assets,
        p_any_data_lost_per_year: Estimate::of(c.any_dl_years, site_years),
        p_any_wholly_lost_per_year: Estimate::of(c.any_total_years, site_years),
        any_data_lost_events_per_year: Estimate::of(c.any_dl, site_years),
        any_wholly_lost_events_per_year: Estimate::of(c.any_total, site_years),
        corrupt_replica_events_per_year: Estimate::of(c.corrupt, site_years),
    }
}

/// A copy of the catalog and site with every failure rate (events per year, and the disks' AFRs)
/// multiplied by `k`: the same layout under faster failures, where both methods see events. Probabilities
/// (`not_return_after_power`) and repair times stay.
pub fn inflated(site: &Site, catalog: &Catalog, k: f64) -> (Site, Catalog) {
    let mut s = site.clone();
    let mut c = catalog.clone();
    for (key, v) in c.failures.rates.iter_mut() {
        if key != "not_return_after_power" {
            v.value *= k;
        }
    }
    for d in c.disks.iter_mut() {
        d.afr *= k;
    }
    for (key, v) in s.failure_rates.iter_mut() {
        if key != "not_return_after_power" {
            *v *= k;
        }
    }
    (s, c)
}
