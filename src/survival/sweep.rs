//! `whatif --all K`: every combination of up to K failures over chosen domain kinds, aggregated by outcome.
//!
//! Evaluating every combination in full is too slow on large sites (a thousand domains, a thousand assets),
//! so each combination is reduced to its *signature*: for every distinct placement class (assets with the
//! same candidates, replica count and rack rule behave identically) and for the meta group, the worst-case
//! numbers of replicas down, destroyed and with their page cache lost. Statuses are a function of the
//! signature alone, so combinations with one signature are interchangeable under the plan. Effects of
//! domains are unions of per-domain server effects, except disks, which destroy a group only together;
//! both are computed sparsely from precomputed per-domain effects. Only one example per signature is then
//! evaluated in full. `sweep_exhaustive` evaluates every combination in full, for the tests that check the
//! two agree.

use super::domain::{Domain, DomainKind, DomainTarget};
use super::evaluate::{Model, Scenario, ServerEffect, Status};
use super::tolerates::for_each_subset;
use crate::layout::{quorum, AssetKind};
use crate::site::ServerIdx;
use crate::units::SyncMode;
use rayon::prelude::*;
use std::collections::HashMap;

/// Scenarios with the same outcome (every asset's status and `acked_loss_risk`, and the meta group's).
#[derive(Debug, Clone)]
pub struct OutcomeClass {
    /// How many combinations give this outcome.
    pub count: u64,
    /// One of them (the fewest failures, then first in domain order), evaluated in full.
    pub example: Scenario,
}

/// The result of a sweep.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub kinds: Vec<DomainKind>,
    pub max_failures: usize,
    /// Domains swept.
    pub domains: usize,
    /// Combinations evaluated (all sizes 1..=K).
    pub combinations: u64,
    /// Distinct signatures found (how far the equivalence classes reduced the work).
    pub signatures: usize,
    /// Worst first.
    pub classes: Vec<OutcomeClass>,
}

/// The outcome key classes are aggregated by.
fn outcome_key(sc: &Scenario) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + 2 * sc.assets.len());
    k.push(sc.meta.status as u8);
    k.push(sc.meta.acked_loss_risk as u8);
    for a in &sc.assets {
        k.push(a.status as u8);
        k.push(a.acked_loss_risk as u8);
    }
    k
}

/// Order classes worst first: worst status, then how many assets reach it, then acked-loss risk, then
/// how often it happens.
fn sort_classes(classes: &mut [OutcomeClass]) {
    let rank = |c: &OutcomeClass| {
        let w = c.example.worst();
        let n = c.example.assets.iter().filter(|a| a.status == w).count() + (c.example.meta.status == w) as usize;
        let risk =
            c.example.assets.iter().filter(|a| a.acked_loss_risk).count() + c.example.meta.acked_loss_risk as usize;
        (w, n, risk, c.count)
    };
    classes.sort_by(|a, b| {
        rank(b)
            .cmp(&rank(a))
            .then_with(|| a.example.failed.len().cmp(&b.example.failed.len()))
            .then_with(|| a.example.failed.cmp(&b.example.failed))
    });
}

/// A placement class: the servers assets of the class may land on, R, and the rack rule.
struct Class {
    member: Vec<bool>,
    r: u32,
    unique_rack: bool,
}

/// One domain's precomputed effect: the servers it hits (with flags) or the disk slot it fails.
enum Effect {
    Servers(Vec<(ServerIdx, ServerEffect)>),
    /// The volume group the failed slot belongs to and its position in it (None: a spare or unused slot).
    Disk(Option<(usize, usize)>),
    /// Volume group g destroyed as a whole (the yearly chain's stand-in for a destroyed group, `latch`).
    Group(usize),
}

/// The failed disks of one volume group in a combination: how many, and for mirror-pair groups (RAID 10)
/// which pairs have lost a disk and whether one has lost both. Pairs past the 128th share bits (groups of
/// more than 256 disks): that can only count a group destroyed too early, never too late.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupHits {
    group: usize,
    count: u32,
    half: u128,
    pair_lost: bool,
}

pub(crate) struct Prepared<'m, 'a> {
    model: &'m Model<'a>,
    classes: Vec<Class>,
    /// Per asset: its class (class 0 is the meta group).
    pub(crate) asset_class: Vec<usize>,
    /// Per site server: the classes it is a member of.
    server_classes: Vec<Vec<usize>>,
    effects: Vec<Effect>,
    rack_of: Vec<usize>,
    sync_always: bool,
    /// Classes whose every replica is destroyed are marked `DL_TOTAL` apart from a tail loss (the yearly
    /// figures, on fixed placements); whatif's sweeps keep one data-loss status.
    fixed: bool,
}

impl<'m, 'a> Prepared<'m, 'a> {
    /// With `fixed`, an asset's class is the fixed set of servers the emulated placement puts it on
    /// (`Asset::expected`, a consumer's from its stream when it has none) instead of its eligible servers
    /// under the worst placement: over years a placement stays put, so the worst placement per failure
    /// state would count every pair of servers anywhere against an R3 stream.
    pub(crate) fn new(model: &'m Model<'a>, domains: &[Domain], fixed: bool) -> Prepared<'m, 'a> {
        let site = model.site;
        let (classes, asset_class) = classes_of(model, fixed);
        let mut server_classes = vec![Vec::new(); site.servers.len()];
        for (k, c) in classes.iter().enumerate() {
            for (s, &m) in c.member.iter().enumerate() {
                if m {
                    server_classes[s].push(k);
                }
            }
        }
        Prepared {
            model,
            classes,
            asset_class,
            server_classes,
            effects: effects_of(model, domains),
            rack_of: site.servers.iter().map(|s| s.rack).collect(),
            sync_always: site.nats.sync == SyncMode::Always,
            fixed,
        }
    }

    /// Domain `d` stands for volume group `g` destroyed as a whole (see `Component::latch_of`).
    pub(crate) fn latch(&mut self, d: usize, g: usize) {
        self.effects[d] = Effect::Group(g);
    }

    /// Number of placement classes (class 0 is the meta group).
    pub(crate) fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// The signature of a combination (see the module doc): per class, its status and its acked-loss flag;
    /// `hit` and `disks` are scratch space.
    pub(crate) fn signature(
        &self,
        combo: &[usize],
        hit: &mut Vec<(ServerIdx, ServerEffect)>,
        disks: &mut Vec<GroupHits>,
    ) -> Vec<u8> {
        self.hits(combo, hit, disks);
        let merged = merged(hit);
        // Classes no hit server belongs to stay ok; only the touched ones are counted.
        let mut sig = [Status::Ok as u8, 0u8].repeat(self.classes.len());
        let mut touched: Vec<usize> = merged
            .iter()
            .flat_map(|&(s, _)| self.server_classes[s].iter().copied())
            .collect();
        touched.sort_unstable();
        touched.dedup();
        let mut racks_seen = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        for k in touched {
            let c = &self.classes[k];
            let counts = if c.unique_rack {
                self.rack_counts(c, &merged, &mut racks_seen)
            } else {
                let mut counts = [0u32; 4];
                for &(s, e) in &merged {
                    if c.member[s] {
                        counts[0] += e.down as u32;
                        counts[1] += e.destroyed as u32;
                        counts[2] += e.cache_lost as u32;
                        counts[3] += (e.cache_lost || e.cut_off) as u32;
                    }
                }
                counts
            };
            (sig[2 * k], sig[2 * k + 1]) = self.class_state(c, counts);
        }
        sig
    }

    /// The servers a combination hits, each with its flags (a server may appear more than once), and
    /// the servers of the volume groups it destroys; `disks` gathers the failed disks per group.
    fn hits(&self, combo: &[usize], hit: &mut Vec<(ServerIdx, ServerEffect)>, disks: &mut Vec<GroupHits>) {
        hit.clear();
        disks.clear();
        for &d in combo {
            match &self.effects[d] {
                Effect::Servers(v) => hit.extend_from_slice(v),
                Effect::Disk(Some((g, pos))) => {
                    let bit = 1u128 << ((pos / 2) % 128);
                    match disks.iter_mut().find(|x| x.group == *g) {
                        Some(h) => {
                            h.count = h.count.saturating_add(1);
                            h.pair_lost |= h.half & bit != 0;
                            h.half |= bit;
                        }
                        None => disks.push(GroupHits {
                            group: *g,
                            count: 1,
                            half: bit,
                            pair_lost: false,
                        }),
                    }
                }
                Effect::Disk(None) => {}
                // As many failed disks as destroy it (paired: a whole pair).
                Effect::Group(g) => disks.push(GroupHits {
                    group: *g,
                    count: u32::MAX,
                    half: 0,
                    pair_lost: true,
                }),
            }
        }
        for h in disks.iter() {
            let g = h.group;
            let gone = if self.model.paired(g) {
                h.pair_lost
            } else {
                h.count >= self.model.disks_to_destroy(g)
            };
            if gone {
                for &s in self.model.group_servers(g) {
                    hit.push((
                        s,
                        ServerEffect {
                            down: true,
                            destroyed: true,
                            cache_lost: true,
                            cut_off: false,
                        },
                    ));
                }
            }
        }
    }

    /// A unique-rack class's counts: racks with a member down, destroyed, cache lost, and cache lost or
    /// cut off (`racks_seen` is scratch space).
    fn rack_counts(
        &self,
        c: &Class,
        merged: &[(ServerIdx, ServerEffect)],
        racks_seen: &mut [Vec<usize>; 4],
    ) -> [u32; 4] {
        for r in racks_seen.iter_mut() {
            r.clear();
        }
        for &(s, e) in merged {
            if c.member[s] {
                let flags = [e.down, e.destroyed, e.cache_lost, e.cache_lost || e.cut_off];
                for (i, f) in flags.into_iter().enumerate() {
                    if f && !racks_seen[i].contains(&self.rack_of[s]) {
                        racks_seen[i].push(self.rack_of[s]);
                    }
                }
            }
        }
        let mut counts = [0u32; 4];
        for i in 0..4 {
            counts[i] = racks_seen[i].len() as u32;
        }
        counts
    }

    /// The status and the acked-loss flag of a class from its counts: all an outcome keeps of them.
    fn class_state(&self, c: &Class, counts: [u32; 4]) -> (u8, u8) {
        let (r, q) = (c.r, quorum(c.r));
        let (down, destroyed) = (counts[0].min(r), counts[1].min(r));
        let status = Status::of_counts(r, q, down, destroyed);
        let state = if self.fixed && status == Status::DataLost && destroyed >= r {
            super::solve::DL_TOTAL
        } else {
            status as u8
        };
        // As `Model::outcome`: a quorum lost its page cache, or one did with enough others cut off (#7567).
        let (cache, cut) = (counts[2].min(r), counts[3].min(r));
        (
            state,
            (!self.sync_always && (cache >= q || (cache >= 1 && cut >= q))) as u8,
        )
    }
}

/// Merge a combination's hits on the same server: flags OR together (destroyed loses the cache).
fn merged(hit: &mut [(ServerIdx, ServerEffect)]) -> Vec<(ServerIdx, ServerEffect)> {
    hit.sort_unstable_by_key(|x| x.0);
    let mut merged: Vec<(ServerIdx, ServerEffect)> = Vec::with_capacity(hit.len());
    for &(s, e) in hit.iter() {
        match merged.last_mut() {
            Some((t, f)) if *t == s => {
                f.down |= e.down;
                f.destroyed |= e.destroyed;
                f.cache_lost |= e.cache_lost || e.destroyed;
                f.cut_off |= e.cut_off;
            }
            _ => merged.push((
                s,
                ServerEffect {
                    cache_lost: e.cache_lost || e.destroyed,
                    ..e
                },
            )),
        }
    }
    merged
}

/// Each domain's precomputed effect.
fn effects_of(model: &Model, domains: &[Domain]) -> Vec<Effect> {
    let layout = model.layout;
    domains
        .iter()
        .map(|d| match d.target {
            DomainTarget::Disk(a, slot) => Effect::Disk(
                (0..layout.groups.len())
                    .find(|&g| layout.groups[g].array == a && layout.groups[g].disks.contains(&slot))
                    .and_then(|g| model.position_in_group(g, slot).map(|p| (g, p))),
            ),
            _ => {
                let (eff, _, _) = model.effects(std::slice::from_ref(d));
                Effect::Servers(
                    eff.iter()
                        .enumerate()
                        .filter(|(_, e)| e.down || e.destroyed || e.cache_lost)
                        .map(|(s, e)| (s, *e))
                        .collect(),
                )
            }
        })
        .collect()
}

/// Classes by (servers as a set, replicas, unique rack), numbered in order of first appearance.
/// Sets of up to five servers (every replica set) are keyed inline; longer ones (candidate lists,
/// shared by many assets) by their address first, then by content. FxHash: looked up only. No Vec
/// allocated per asset and no map of every name: this runs once per asset per layout.
#[derive(Default)]
struct Numbering {
    seen: HashMap<(Vec<ServerIdx>, u8, bool), usize>,
    small: crate::fxhash::FxHashMap<([ServerIdx; 5], u8, bool), usize>,
    by_addr: crate::fxhash::FxHashMap<(usize, usize, u8, bool), usize>,
}

impl Numbering {
    /// The number of class (`c`, `r`, `u`); `next` when it is new.
    fn number(&mut self, c: &[ServerIdx], r: u8, u: bool, next: usize) -> usize {
        let seen = &mut self.seen;
        if c.len() <= 5 {
            let mut key = [ServerIdx::MAX; 5];
            key[..c.len()].copy_from_slice(c);
            key[..c.len()].sort_unstable();
            // The length is in the key (unused places are MAX, after any server).
            *self.small.entry((key, r, u)).or_insert_with(|| {
                let mut v = c.to_vec();
                v.sort_unstable();
                *seen.entry((v, r, u)).or_insert(next)
            })
        } else {
            *self
                .by_addr
                .entry((c.as_ptr() as usize, c.len(), r, u))
                .or_insert_with(|| {
                    let mut v = c.to_vec();
                    v.sort_unstable();
                    *seen.entry((v, r, u)).or_insert(next)
                })
        }
    }
}

/// The placement classes (class 0 is the meta group) and each asset's class; `fixed` as in
/// [`Prepared::new`].
fn classes_of(model: &Model, fixed: bool) -> (Vec<Class>, Vec<usize>) {
    let layout = model.layout;
    let n = model.site.servers.len();
    let member_of = |v: &[ServerIdx]| {
        let mut m = vec![false; n];
        for &s in v {
            m[s] = true;
        }
        m
    };
    let mut classes = vec![Class {
        member: member_of(&layout.servers),
        r: layout.servers.len() as u32,
        unique_rack: false,
    }];
    let mut numbering = Numbering::default();
    let mut asset_class = Vec::with_capacity(layout.assets.len());
    // The first non-consumer asset of each name, for an asset not a consumer that names a parent (none
    // that `placement::assets` makes); consumers find theirs through the model.
    let first: std::sync::OnceLock<HashMap<&str, usize>> = std::sync::OnceLock::new();
    let first = || {
        first.get_or_init(|| {
            let mut m = HashMap::new();
            for (i, a) in layout.assets.iter().enumerate() {
                if a.kind != AssetKind::Consumer {
                    m.entry(&*a.name).or_insert(i);
                }
            }
            m
        })
    };
    for (i, a) in layout.assets.iter().enumerate() {
        let (mut c, mut u) = model.placement(i);
        if fixed {
            let parent = match a.kind {
                _ if a.parent.is_none() => None,
                AssetKind::Consumer => Some(model.source(i)).filter(|&j| j != i),
                _ => a.parent.as_deref().and_then(|p| first().get(p).copied()),
            }
            .map(|j| &layout.assets[j]);
            let expected = if a.expected.is_empty() {
                parent.map(|p| p.expected.as_slice()).unwrap_or(&[])
            } else {
                a.expected.as_slice()
            };
            if expected.len() == a.replicas as usize {
                c = expected;
                u = false;
            }
        }
        let next = classes.len();
        let k = numbering.number(c, a.replicas, u, next);
        if k == next {
            classes.push(Class {
                member: member_of(c),
                r: a.replicas as u32,
                unique_rack: u,
            });
        }
        asset_class.push(k);
    }
    (classes, asset_class)
}

/// Sweep every combination of 1..=`k` domains of the given kinds.
pub fn sweep(model: &Model, kinds: &[DomainKind], k: usize) -> Sweep {
    let domains: Vec<Domain> = kinds
        .iter()
        .flat_map(|&kind| Domain::universe(kind, model.site, model.layout))
        .collect();
    let prep = Prepared::new(model, &domains, false);
    let n = domains.len();
    let k = k.min(n);
    // Work split by the first domain of each combination; merged in index order, so the example kept for
    // a signature (the lexicographically first combination of the fewest failures) and every count are
    // the same whatever the number of threads.
    type Acc = HashMap<Vec<u8>, (u64, Vec<usize>)>;
    let keep = |acc: &mut Acc, sig: Vec<u8>, combo: &[usize]| {
        let e = acc.entry(sig).or_insert_with(|| (0, combo.to_vec()));
        e.0 += 1;
        if (combo.len(), combo) < (e.1.len(), e.1.as_slice()) {
            e.1 = combo.to_vec();
        }
    };
    let parts: Vec<(Acc, u64)> = (0..n)
        .into_par_iter()
        .map(|first| {
            let mut acc: Acc = HashMap::new();
            let mut total = 0u64;
            let mut hit = Vec::new();
            let mut disks = Vec::new();
            let mut combo = Vec::with_capacity(k);
            for size in 1..=k {
                // Combinations whose smallest index is `first`: first + (size-1)-subsets of the rest.
                let rest = n - first - 1;
                for_each_subset(rest, size - 1, &mut |idx| {
                    combo.clear();
                    combo.push(first);
                    combo.extend(idx.iter().map(|&i| first + 1 + i));
                    let sig = prep.signature(&combo, &mut hit, &mut disks);
                    keep(&mut acc, sig, &combo);
                    total += 1;
                    true
                });
            }
            (acc, total)
        })
        .collect();
    let mut all: Acc = HashMap::new();
    let mut combinations = 0;
    for (acc, total) in parts {
        combinations += total;
        for (sig, (count, ex)) in acc {
            let e = all.entry(sig).or_insert_with(|| (0, ex.clone()));
            e.0 += count;
            if (ex.len(), ex.as_slice()) < (e.1.len(), e.1.as_slice()) {
                e.1 = ex;
            }
        }
    }
    let signatures = all.len();
    let mut sigs: Vec<(u64, Vec<usize>)> = all.into_values().collect();
    sigs.sort_by(|a, b| (a.1.len(), &a.1).cmp(&(b.1.len(), &b.1)));
    let evaluated: Vec<(u64, Scenario)> = sigs
        .into_par_iter()
        .map(|(count, ex)| {
            let failed: Vec<Domain> = ex.iter().map(|&i| domains[i].clone()).collect();
            (count, model.evaluate(&failed))
        })
        .collect();
    let classes = aggregate(evaluated);
    Sweep {
        kinds: kinds.to_vec(),
        max_failures: k,
        domains: n,
        combinations,
        signatures,
        classes,
    }
}

/// Group evaluated scenarios (with their counts) by outcome; examples in input order win ties.
fn aggregate(evaluated: Vec<(u64, Scenario)>) -> Vec<OutcomeClass> {
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut classes: Vec<OutcomeClass> = Vec::new();
    for (count, sc) in evaluated {
        let key = outcome_key(&sc);
        match index.get(&key) {
            Some(&i) => {
                classes[i].count += count;
                let ex = &classes[i].example;
                if (sc.failed.len(), &sc.failed) < (ex.failed.len(), &ex.failed) {
                    classes[i].example = sc;
                }
            }
            None => {
                index.insert(key, classes.len());
                classes.push(OutcomeClass { count, example: sc });
            }
        }
    }
    sort_classes(&mut classes);
    classes
}

/// The same sweep by evaluating every combination in full (slow; the reference the tests compare with).
pub fn sweep_exhaustive(model: &Model, kinds: &[DomainKind], k: usize) -> Sweep {
    let domains: Vec<Domain> = kinds
        .iter()
        .flat_map(|&kind| Domain::universe(kind, model.site, model.layout))
        .collect();
    let n = domains.len();
    let k = k.min(n);
    let mut evaluated = Vec::new();
    for size in 1..=k {
        for_each_subset(n, size, &mut |idx| {
            let failed: Vec<Domain> = idx.iter().map(|&i| domains[i].clone()).collect();
            evaluated.push((1, model.evaluate(&failed)));
            true
        });
    }
    let combinations = evaluated.len() as u64;
    let signatures = evaluated.len();
    Sweep {
        kinds: kinds.to_vec(),
        max_failures: k,
        domains: n,
        combinations,
        signatures,
        classes: aggregate(evaluated),
    }
}

/// Number of combinations of 1..=k out of n (saturating), to refuse sweeps that would not finish.
pub fn combinations(n: usize, k: usize) -> u64 {
    let mut total: u64 = 0;
    let mut c: u128 = 1;
    for i in 1..=k.min(n) {
        c = c * (n - i + 1) as u128 / i as u128;
        total = total.saturating_add(c.min(u64::MAX as u128) as u64);
    }
    total
}
