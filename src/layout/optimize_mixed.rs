//! Server selection for mixed layouts (issue 16): on a heterogeneous site each JetStream server gets the
//! volume its own hardware offers (`build` decides it: a group on its rack's array, a volume on an
//! existing pool, its internal disks, a VM disk on its host's pool), so what is left to choose is *which*
//! servers run JetStream. `optimise_mixed` chooses them so that the layout tolerates as many
//! simultaneous rack failures as it can, then uses the fewest disks, then the fewest arrays — the uniform
//! optimiser's order (`optimize.rs`), under the same rules:
//!
//! - every chosen server gets a volume (a selection `build` cannot serve whole is not a choice), and no
//!   asset is left without suitable peers;
//! - N ≥ R_max servers (the largest replica count of the assets and the default R); when the site has at least R_max racks (and R_max > 1), R_max racks are used, so
//!   the layout emits `unique_tag`;
//! - tolerating t racks: for every set of t racks, the meta group keeps its quorum and every replicated
//!   asset keeps its quorum on the worst placement its emitted rule allows (distinct racks under
//!   `unique_tag`, any of its candidates otherwise), where a rack takes down its own servers and every
//!   server whose volume is on an array in it (a cross-rack array);
//! - capacity: the servers' *actual* stores (they differ per server here) hold every replica, each
//!   server's store holds the replicas the emulated meta leader puts on it (with unequal stores the
//!   total alone can hide one server that is short), and when t ≥ 1 the survivors of any one rack still
//!   hold every replica;
//! - t ≥ `policy.min_tolerated.racks`, else there is no choice.
//!
//! Unlike the uniform model's default replica count, a layout is judged on the assets the workload
//! creates and on the meta group, as `survival::tolerates` and `tolerates_meta` judge it.
//!
//! The search is exact: every subset of the servers that have storage in a mixed layout, each built as
//! the enumerator builds it and evaluated on that layout. Mixed sites are small, but the count of
//! subsets doubles with each server: beyond `MAX_CANDIDATES` servers (or when the workload makes each
//! build costly, `MAX_WORK`) the search is refused and the enumerator's own selections stand alone.
//! Subsets are visited best bound first (a rack-count bound on t that needs no build) and a subset whose
//! bound cannot reach the best t found is never built.
//!
//! `check_mixed` re-verifies a choice against these rules from the built layout and the site alone,
//! without the search's evaluation; `brute_force` builds every subset and judges each with the checker's
//! evaluation (small sites, for tests).

use super::build::{build, place};
use super::volumes::{by_name, effective, is_heterogeneous, own_raid, storage_of, store_bytes, Storage};
use super::{quorum, Layout, Severity};
use crate::catalog::Catalog;
use crate::site::{Pattern, ServerIdx, Site};
use rayon::prelude::*;

/// The most servers the exact search considers: 2^12 = 4,096 selections, each built and evaluated (a few
/// tens of microseconds each on a small workload). Above it the enumerator's selections stand alone.
pub const MAX_CANDIDATES: usize = 12;

/// The most selections × assets the search builds (each build emulates every asset's placement): with
/// 4,096 selections, up to 256 assets. Above it the search is refused like an oversized site.
pub const MAX_WORK: usize = 1 << 20;

/// A mixed layout's server selection the optimiser chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixedChoice {
    /// The JetStream servers, in name order (each gets the volume its hardware offers).
    pub servers: Vec<ServerIdx>,
    /// Simultaneous rack failures the meta group and every replicated asset survive, with the survivors'
    /// stores holding every replica.
    pub tolerated_racks: u32,
    /// Disks in the layout's groups plus the hot spares kept (`Layout::disks_used`).
    pub disks: u32,
    /// Arrays (and internal disk sets, host pools) the layout uses (`Layout::arrays_used`).
    pub arrays: u32,
}

impl MixedChoice {
    /// Lexicographic order: most tolerated racks, then fewest disks, then fewest arrays, then servers by
    /// name (so equal choices are told apart the same way on every machine and input order).
    fn key(&self, site: &Site) -> (std::cmp::Reverse<u32>, u32, u32, Vec<String>) {
        (
            std::cmp::Reverse(self.tolerated_racks),
            self.disks,
            self.arrays,
            names(site, &self.servers),
        )
    }
}

fn names(site: &Site, servers: &[ServerIdx]) -> Vec<String> {
    servers
        .iter()
        .map(|&s| site.servers[s].name.to_ascii_lowercase())
        .collect()
}

/// The servers that can get a volume in a mixed layout, in name order: those whose own storage serves
/// (internal disks with disks enough for their level, a host's pool) or that reach a shared array.
pub fn candidates(site: &Site) -> Vec<ServerIdx> {
    let all = by_name(site.servers.iter().enumerate(), |s| &s.name);
    all.into_iter()
        .filter(|&s| match storage_of(site, s, Pattern::Mixed) {
            Some(Storage::Internal(a)) => {
                let arr = &site.arrays[a];
                let (min, _) = own_raid(effective(site, a, Pattern::Mixed), arr.disks).disk_rule();
                arr.disks >= min || arr.host.is_some()
            }
            Some(Storage::Shared) => true,
            None => false,
        })
        .collect()
}

/// The largest replica count in use: every asset's under default R, and R itself (a layout with default
/// R has at least R servers, as the one-pattern optimiser and enumeration's selections require).
fn r_max(site: &Site, r: u8) -> u32 {
    super::placement::assets(site, r)
        .iter()
        .map(|a| a.replicas as u32)
        .chain([r as u32])
        .max()
        .unwrap_or(r as u32)
}

/// Whether the exact search may run on this site: heterogeneous (mixed layouts are built at all), and
/// within `MAX_CANDIDATES` servers and `MAX_WORK`.
pub fn searchable(site: &Site, r: u8) -> bool {
    let n = candidates(site).len();
    let assets = super::placement::assets(site, r).len() + 1;
    is_heterogeneous(site) && n <= MAX_CANDIDATES && (1usize << n).saturating_mul(assets) <= MAX_WORK
}

/// The built layout of a selection, if `build` serves every server of it.
fn built(site: &Site, catalog: &Catalog, r: u8, servers: &[ServerIdx]) -> Option<Layout> {
    Some(placed(site, catalog, r, servers)).filter(|l| l.servers.len() == servers.len())
}

/// `build` then `place`: the search judges the emulated placement of every asset (build leaves `assets`
/// empty since the plan places each layout when it evaluates it).
fn placed(site: &Site, catalog: &Catalog, r: u8, servers: &[ServerIdx]) -> Layout {
    let mut l = build(site, catalog, Pattern::Mixed, r, servers, None);
    place(site, &mut l);
    l
}

/// The optimiser's mixed selection for default replica count r, or None when the site is not
/// heterogeneous, is beyond the search's bounds (`searchable`), or no selection meets the rules.
pub fn optimise_mixed(site: &Site, catalog: &Catalog, r: u8) -> Option<MixedChoice> {
    if !searchable(site, r) {
        return None;
    }
    let cand = candidates(site);
    let need = r_max(site, r);
    let t_min = site.policy.min_tolerated.racks;
    let f_min = super::placement::assets(site, r)
        .iter()
        .map(|a| u32::from(a.replicas) - quorum(u32::from(a.replicas)))
        .min();
    // Every subset with servers enough, by its bound on t (most first); the bound needs no build.
    let mut buckets: std::collections::BTreeMap<std::cmp::Reverse<u32>, Vec<Vec<ServerIdx>>> = Default::default();
    for mask in 1u32..(1u32 << cand.len()) {
        if mask.count_ones() < need {
            continue;
        }
        let sel: Vec<ServerIdx> = (0..cand.len())
            .filter(|&i| mask & (1 << i) != 0)
            .map(|i| cand[i])
            .collect();
        let ub = rack_bound(site, &sel, f_min);
        if ub >= t_min {
            buckets.entry(std::cmp::Reverse(ub)).or_default().push(sel);
        }
    }
    let mut best: Option<MixedChoice> = None;
    for (std::cmp::Reverse(ub), sels) in buckets {
        if best.as_ref().is_some_and(|b| b.tolerated_racks > ub) {
            break;
        }
        let found: Vec<MixedChoice> = sels
            .par_iter()
            .filter_map(|sel| {
                let l = built(site, catalog, r, sel)?;
                let (t, ok) = search_eval(site, &l, need);
                (ok && t >= t_min).then(|| MixedChoice {
                    servers: sel.clone(),
                    tolerated_racks: t,
                    disks: l.disks_used(),
                    arrays: l.arrays_used(),
                })
            })
            .collect();
        for c in found {
            if best.as_ref().is_none_or(|b| c.key(site) < b.key(site)) {
                best = Some(c);
            }
        }
    }
    best
}

/// An upper bound on the racks a selection can tolerate, from its servers' own racks alone (a rack also
/// takes down servers elsewhere whose volume is on its arrays, which only lowers the figure): the meta
/// group's quorum must survive the t fullest racks, and no asset of R replicas survives more than
/// f = R − quorum(R) racks (f + 1 racks holding its candidates can hold f + 1 of its replicas on the worst
/// placement, and with candidates in f racks or fewer, losing them all loses it). `f_min` is the
/// smallest f over the workload's assets (None without assets).
fn rack_bound(site: &Site, sel: &[ServerIdx], f_min: Option<u32>) -> u32 {
    let mut per: Vec<u32> = vec![0; site.racks.len()];
    for &s in sel {
        per[site.servers[s].rack] += 1;
    }
    per.sort_unstable_by(|a, b| b.cmp(a));
    let n = sel.len() as u32;
    let mut t = 0;
    let mut down = 0;
    for &c in per.iter().filter(|&&c| c > 0) {
        down += c;
        if n - down < quorum(n) {
            break;
        }
        t += 1;
    }
    f_min.map_or(t, |f| t.min(f))
}

/// The search's evaluation of a built layout: the racks it tolerates under the rules of the module doc,
/// and whether it is a valid choice at all (placement and capacity with every server up). Servers are
/// bits of a mask (a layout has at most `MAX_CANDIDATES` of them); every set of the racks that take
/// something down is a mask too, each evaluated once.
fn search_eval(site: &Site, l: &Layout, r_max: u32) -> (u32, bool) {
    let n = l.servers.len();
    if (n as u32) < r_max || l.problems.iter().any(|p| p.severity == Severity::Reject) {
        return (0, false);
    }
    let mut used: Vec<usize> = l.servers.iter().map(|&s| site.servers[s].rack).collect();
    used.sort_unstable();
    used.dedup();
    if r_max as usize <= site.racks.len() && r_max > 1 && used.len() < r_max as usize {
        return (0, false);
    }
    // Per rack, the servers (bits) it takes down: its own and those with a volume on its arrays.
    let mut down: Vec<u64> = vec![0; site.racks.len()];
    for (i, &s) in l.servers.iter().enumerate() {
        down[site.servers[s].rack] |= 1 << i;
        if let Some(a) = l.array_of(s) {
            down[site.arrays[a].rack] |= 1 << i;
        }
    }
    let racks: Vec<u64> = down.iter().copied().filter(|&m| m != 0).collect();
    let stores: Vec<f64> = l.servers.iter().map(|&s| store_of(site, l, s)).collect();
    let need: f64 = l.assets.iter().map(|a| a.bytes_per_replica * a.replicas as f64).sum();
    let held = |alive: u64| -> f64 { (0..n).filter(|&i| alive & (1 << i) != 0).map(|i| stores[i]).sum() };
    let everyone = (1u64 << n) - 1;
    if need > 0.0 && held(everyone) < need {
        return (0, false);
    }
    let mut on = vec![0.0f64; n];
    for a in &l.assets {
        for e in &a.expected {
            if let Some(i) = l.servers.iter().position(|s| s == e) {
                on[i] += a.bytes_per_replica;
            }
        }
    }
    if (0..n).any(|i| on[i] > stores[i]) {
        return (0, false);
    }
    // Each distinct placement once: (candidate bits, replicas, distinct racks).
    let rack_bit = |i: usize| site.servers[l.servers[i]].rack;
    let mut groups: Vec<(u64, u32, bool)> = l
        .assets
        .iter()
        .map(|a| {
            let bits = a
                .candidates
                .iter()
                .filter_map(|c| l.servers.iter().position(|s| s == c))
                .fold(0u64, |m, i| m | 1 << i);
            (bits, a.replicas as u32, a.unique_rack)
        })
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let breaks = |dead: u64| -> bool {
        let alive = (n - dead.count_ones() as usize) as u32;
        if alive < quorum(n as u32) {
            return true;
        }
        groups.iter().any(|&(bits, rr, unique)| {
            let hit = dead & bits;
            let lost = if unique {
                let mut rk: Vec<usize> = (0..n).filter(|&i| hit & (1 << i) != 0).map(rack_bit).collect();
                rk.sort_unstable();
                rk.dedup();
                rk.len() as u32
            } else {
                hit.count_ones()
            };
            lost > rr - quorum(rr)
        })
    };
    // The fewest racks whose failure breaks something, less one.
    let mut t = racks.len() as u32;
    for set in 1u32..(1u32 << racks.len()) {
        let k = set.count_ones();
        if k > t {
            continue;
        }
        let dead = (0..racks.len())
            .filter(|&j| set & (1 << j) != 0)
            .fold(0u64, |m, j| m | racks[j]);
        if breaks(dead) {
            t = k - 1;
        }
    }
    if t >= 1 && need > 0.0 && racks.iter().any(|&d| held(everyone & !d) < need) {
        t = 0;
    }
    (t, true)
}

/// A server's JetStream store (`max_file_store`) in a layout, from its LUN.
fn store_of(site: &Site, l: &Layout, s: ServerIdx) -> f64 {
    l.lun_of(s)
        .map(|x| store_bytes(site, x.size_bytes) as f64)
        .unwrap_or(0.0)
}

/// The checker's evaluation of a layout, from the site and the layout alone (no search code): None when
/// it is no valid choice, else the racks it tolerates. Rack sets are enumerated in increasing size;
/// the figure is the largest size all of whose sets leave the meta group, every asset's quorum and (from
/// one rack on) the survivors' stores whole.
pub fn judge(site: &Site, l: &Layout, r: u8) -> Option<u32> {
    let want = r_max(site, r) as usize;
    if l.servers.len() < want {
        return None;
    }
    if l.problems.iter().any(|p| p.severity == Severity::Reject) {
        return None;
    }
    let mut racks_used: Vec<usize> = l.servers.iter().map(|&s| site.servers[s].rack).collect();
    racks_used.sort_unstable();
    racks_used.dedup();
    if want > 1 && want <= site.racks.len() && racks_used.len() < want {
        return None;
    }
    let need: f64 = l
        .assets
        .iter()
        .map(|a| a.bytes_per_replica * f64::from(a.replicas))
        .sum();
    let survivors_hold = |failed: &[usize]| -> bool {
        let left: f64 = l
            .servers
            .iter()
            .filter(|&&s| !goes_down(site, l, s, failed))
            .map(|&s| store_of(site, l, s))
            .sum();
        need <= 0.0 || left >= need
    };
    if !survivors_hold(&[]) {
        return None;
    }
    // Each server's store holds the replicas the emulated meta leader puts on it.
    for &s in &l.servers {
        let held: f64 = l
            .assets
            .iter()
            .filter(|a| a.expected.contains(&s))
            .map(|a| a.bytes_per_replica)
            .sum();
        if held > store_of(site, l, s) {
            return None;
        }
    }
    let ok = |k: usize| -> bool {
        let all: Vec<usize> = (0..site.racks.len()).collect();
        every_subset(&all, k, &mut |failed| rack_set_survives(site, l, failed))
            && (k == 0 || (0..site.racks.len()).all(|rk| survivors_hold(&[rk])))
    };
    let mut t = 0;
    while t < site.racks.len() && ok(t + 1) {
        t += 1;
    }
    Some(t as u32)
}

/// Whether a server goes down with these racks: its own, or the rack of the array its volume is on.
fn goes_down(site: &Site, l: &Layout, s: ServerIdx, failed: &[usize]) -> bool {
    failed.contains(&site.servers[s].rack) || l.array_of(s).is_some_and(|a| failed.contains(&site.arrays[a].rack))
}

/// The meta group and every asset keep a quorum when these racks fail, on each asset's worst placement.
fn rack_set_survives(site: &Site, l: &Layout, failed: &[usize]) -> bool {
    let dead: Vec<ServerIdx> = l
        .servers
        .iter()
        .copied()
        .filter(|&s| goes_down(site, l, s, failed))
        .collect();
    let n = l.servers.len() as u32;
    if n - (dead.len() as u32) < quorum(n) {
        return false;
    }
    l.assets.iter().all(|a| {
        let hit: Vec<ServerIdx> = a.candidates.iter().copied().filter(|s| dead.contains(s)).collect();
        // The worst placement puts a replica on each down candidate (one per rack under unique_tag).
        let lost = if a.unique_rack {
            let mut racks: Vec<usize> = hit.iter().map(|&s| site.servers[s].rack).collect();
            racks.sort_unstable();
            racks.dedup();
            racks.len()
        } else {
            hit.len()
        };
        let r = u32::from(a.replicas);
        (lost.min(r as usize) as u32) + quorum(r) <= r
    })
}

/// Call `f` on every k-subset of `items` until it returns false; true when it never did.
fn every_subset(items: &[usize], k: usize, f: &mut dyn FnMut(&[usize]) -> bool) -> bool {
    fn go(items: &[usize], k: usize, start: usize, cur: &mut Vec<usize>, f: &mut dyn FnMut(&[usize]) -> bool) -> bool {
        if cur.len() == k {
            return f(cur);
        }
        for i in start..items.len() {
            cur.push(items[i]);
            let ok = go(items, k, i + 1, cur, f);
            cur.pop();
            if !ok {
                return false;
            }
        }
        true
    }
    k > items.len() || go(items, k, 0, &mut Vec::new(), f)
}

/// Is this choice what the rules allow, and are its figures the built layout's? Independent of the
/// search: the layout is built again from the servers and judged by `judge`.
pub fn check_mixed(site: &Site, catalog: &Catalog, r: u8, c: &MixedChoice) -> Result<(), String> {
    if !is_heterogeneous(site) {
        return Err("the site's storage is not heterogeneous: no mixed layout is built".into());
    }
    let mut sorted = c.servers.clone();
    sorted.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
    if sorted != c.servers {
        return Err("the servers are not in name order".into());
    }
    let l = placed(site, catalog, r, &c.servers);
    if l.servers.len() != c.servers.len() {
        let missing: Vec<&str> = c
            .servers
            .iter()
            .filter(|s| !l.servers.contains(s))
            .map(|&s| site.servers[s].name.as_str())
            .collect();
        return Err(format!("{} get no volume in the built layout", missing.join(", ")));
    }
    if (l.disks_used(), l.arrays_used()) != (c.disks, c.arrays) {
        return Err(format!(
            "the layout uses {} disks in {} arrays, the choice says {} in {}",
            l.disks_used(),
            l.arrays_used(),
            c.disks,
            c.arrays
        ));
    }
    let t = judge(site, &l, r).ok_or_else(|| format!("{} is not a valid mixed layout", l.id))?;
    if t != c.tolerated_racks {
        return Err(format!(
            "{} tolerates {t} racks, the choice says {}",
            l.id, c.tolerated_racks
        ));
    }
    if t < site.policy.min_tolerated.racks {
        return Err(format!(
            "{} tolerates {t} racks, below policy.min_tolerated.racks = {}",
            l.id, site.policy.min_tolerated.racks
        ));
    }
    Ok(())
}

/// The optimum by building every subset of the candidates and judging each with `judge` (no bound, no
/// search evaluation): small sites only (for tests). None where `optimise_mixed` refuses the site too.
pub fn brute_force(site: &Site, catalog: &Catalog, r: u8) -> Option<MixedChoice> {
    if !searchable(site, r) {
        return None;
    }
    let cand = candidates(site);
    let mut best: Option<MixedChoice> = None;
    for mask in 1u32..(1u32 << cand.len()) {
        let sel: Vec<ServerIdx> = (0..cand.len())
            .filter(|&i| mask & (1 << i) != 0)
            .map(|i| cand[i])
            .collect();
        let l = placed(site, catalog, r, &sel);
        if l.servers.len() != sel.len() {
            continue;
        }
        let Some(t) = judge(site, &l, r) else { continue };
        if t < site.policy.min_tolerated.racks {
            continue;
        }
        let c = MixedChoice {
            servers: sel,
            tolerated_racks: t,
            disks: l.disks_used(),
            arrays: l.arrays_used(),
        };
        if best.as_ref().is_none_or(|b| c.key(site) < b.key(site)) {
            best = Some(c);
        }
    }
    best
}
