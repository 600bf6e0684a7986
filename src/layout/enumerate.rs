//! Enumerate candidate layouts for a site: patterns × default replica counts × server selections, each
//! with its volume groups, LUNs, hot spares, placement rule and emulated replica placement.
//!
//! Every choice is made in canonical (name) order, never input order, so reordering a site file yields
//! the same layouts with the same ids.

use super::build::build;
use super::volumes::{arrays_for, by_name, own_raid, reachable_arrays, storage_of, Storage};
use super::*;
use crate::catalog::Catalog;
use crate::site::{Pattern, RackIdx, RaidChoice, ServerIdx, Site};
use rayon::prelude::*;
use std::collections::HashSet;

/// Every sensible layout for the site (patterns × replica counts × server selections), including those
/// that fail a hard rule (they carry `Severity::Reject` problems so the report can say why).
pub fn enumerate(site: &Site, catalog: &Catalog) -> Vec<Layout> {
    let mut patterns = site.policy.patterns.clone();
    if site.policy.baselines {
        for b in [Pattern::DdpRaid1, Pattern::Raid6] {
            if !patterns.contains(&b) {
                patterns.push(b);
            }
        }
    }
    // The optimiser's selections (most tolerated racks, then fewest disks and arrays) are the costly part:
    // solve them in parallel up front, then assemble in the fixed pattern × R order.
    // Patterns 1 and 4 pose the optimiser the same model (4 differs only in LUN size), so it is solved once.
    let model_of = |p: Pattern| if p == Pattern::P4 { Pattern::P1 } else { p };
    let pairs: Vec<(Pattern, u8)> = patterns
        .iter()
        .flat_map(|&p| site.nats.replicas.iter().map(move |&r| (p, r)))
        .collect();
    let mut models: Vec<(Pattern, u8)> = pairs.iter().map(|&(p, r)| (model_of(p), r)).collect();
    models.sort_unstable();
    models.dedup();
    let solved: Vec<Option<super::optimize::Choice>> = models
        .par_iter()
        .map(|&(p, r)| super::optimize::optimise(site, catalog, p, r))
        .collect();
    let mut choices = pairs.iter().map(|&(p, r)| {
        let i = models
            .iter()
            .position(|&m| m == (model_of(p), r))
            .expect("every pair has a model");
        solved[i].clone()
    });
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    // Heterogeneous storage (a fixed RAID 1 pair here, an existing DDP pool there, internal disks): each
    // server gets what its hardware offers, in one mixed layout per replica count and selection.
    if super::volumes::is_heterogeneous(site) {
        patterns.push(Pattern::Mixed);
    }
    for &pattern in &patterns {
        for &r in &site.nats.replicas {
            for selection in selections(site, pattern, r) {
                let layout = build(site, catalog, pattern, r, &selection, None);
                if seen.insert(layout.id.clone()) {
                    out.push(layout);
                }
            }
            if pattern == Pattern::Mixed {
                continue;
            }
            if let Some(choice) = choices.next().flatten() {
                let selection = optimised_servers(site, &choice.per_rack);
                let layout = build(
                    site,
                    catalog,
                    pattern,
                    r,
                    &selection,
                    Some((choice.disks_per_server, &choice.per_array)),
                );
                if seen.insert(layout.id.clone()) {
                    out.push(layout);
                }
            }
        }
    }
    out
}

/// The replica count each asset will have under default replica count `r`.
fn max_asset_replicas(site: &Site, r: u8) -> u8 {
    let w = &site.workload;
    w.streams
        .iter()
        .map(|s| s.replicas.unwrap_or(r))
        .chain(w.kv.iter().map(|k| k.replicas.unwrap_or(r)))
        .chain(w.object_stores.iter().map(|o| o.replicas.unwrap_or(r)))
        .chain(std::iter::once(r))
        .max()
        .unwrap_or(r)
}

/// Candidate JetStream server sets for a pattern and replica count: all servers that can get storage,
/// the smallest rack-balanced set that can hold the largest replica count, and one per rack.
fn selections(site: &Site, pattern: Pattern, r: u8) -> Vec<Vec<ServerIdx>> {
    let need = max_asset_replicas(site, r) as usize;
    let racks = by_name(site.racks.iter().enumerate(), |r| &r.name);
    let mut out: Vec<Vec<ServerIdx>> = Vec::new();
    if pattern == Pattern::Raid6 {
        // The RAID 6 baseline: one large group on one array, serving the servers of its rack.
        let mut best: Option<(u32, ArrayIdx)> = None;
        for &rk in &racks {
            for a in by_name(arrays_for(site, rk, pattern).map(|a| (a, &site.arrays[a])), |a| &a.name) {
                let data = site.arrays[a].disks.saturating_sub(site.arrays[a].hot_spares);
                if best.is_none_or(|(d, _)| data > d) {
                    best = Some((data, a));
                }
            }
        }
        if let Some((_, a)) = best {
            let rack = site.arrays[a].rack;
            let all = by_name(site.rack_servers(rack).map(|s| (s, &site.servers[s])), |s| &s.name);
            if !all.is_empty() {
                out.push(all.iter().copied().take(need.max(1)).collect());
                out.push(all);
            }
        }
    } else {
        // Per rack, the servers that can get a volume, capped by what the rack's disks allow.
        let mut per_rack: Vec<Vec<ServerIdx>> = Vec::new();
        for &rk in &racks {
            let servers = by_name(site.rack_servers(rk).map(|s| (s, &site.servers[s])), |s| &s.name);
            let mut internal: Vec<ServerIdx> = Vec::new();
            let mut shared: Vec<ServerIdx> = Vec::new();
            for s in servers {
                match storage_of(site, s, pattern) {
                    Some(Storage::Internal(a)) => {
                        let arr = &site.arrays[a];
                        let (min, _) = own_raid(pattern, arr.disks).disk_rule();
                        if arr.disks >= min {
                            internal.push(s);
                        }
                    }
                    Some(Storage::Shared) => shared.push(s),
                    None => {}
                }
            }
            let cap = shared_capacity(site, rk, pattern);
            shared.truncate(cap);
            let mut v = internal;
            v.extend(shared);
            v.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
            per_rack.push(v);
        }
        let all: Vec<ServerIdx> = per_rack.iter().flatten().copied().collect();
        if all.is_empty() {
            return out;
        }
        out.push(all.clone());
        // Round-robin over racks (most servers first) until `need` servers are chosen.
        let mut order: Vec<usize> = (0..per_rack.len()).filter(|&i| !per_rack[i].is_empty()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(per_rack[i].len()));
        let mut balanced = Vec::new();
        let mut depth = 0;
        while balanced.len() < need.min(all.len()) {
            for &i in &order {
                if depth < per_rack[i].len() && balanced.len() < need {
                    balanced.push(per_rack[i][depth]);
                }
            }
            depth += 1;
        }
        balanced.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
        out.push(balanced);
        let one_per_rack: Vec<ServerIdx> = order.iter().map(|&i| per_rack[i][0]).collect();
        if one_per_rack.len() >= need {
            let mut v = one_per_rack;
            v.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
            out.push(v);
        }
    }
    // Canonical order (by server names), so which selection is built first never follows input order.
    let key = |v: &Vec<ServerIdx>| {
        v.iter()
            .map(|&s| site.servers[s].name.to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    out.sort_by_key(key);
    out.dedup();
    out
}

/// The servers behind an optimiser choice: in each rack, the first ones by name that use shared arrays.
fn optimised_servers(site: &Site, per_rack: &[u32]) -> Vec<ServerIdx> {
    let mut v = Vec::new();
    for (rk, &n) in per_rack.iter().enumerate() {
        let names = by_name(site.rack_servers(rk).map(|s| (s, &site.servers[s])), |s| &s.name);
        v.extend(
            names
                .into_iter()
                .filter(|&s| site.servers[s].internal.is_none())
                .take(n as usize),
        );
    }
    v.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
    v
}

/// How many servers a rack's shared arrays can give a volume to under a pattern.
fn shared_capacity(site: &Site, rack: RackIdx, pattern: Pattern) -> usize {
    reachable_arrays(site, rack, pattern)
        .into_iter()
        .map(|a| {
            let arr = &site.arrays[a];
            let data = arr.disks.saturating_sub(arr.hot_spares);
            match super::volumes::effective(site, a, pattern) {
                Pattern::P1 | Pattern::P4 if arr.raid == Some(RaidChoice::Raid10) => (data / 4) as usize,
                Pattern::P1 | Pattern::P4 => (data / 2) as usize,
                Pattern::P2 => data as usize,
                // Shared groups: any number of LUNs; one per server of the rack.
                Pattern::P3 | Pattern::DdpRaid1 | Pattern::Raid6 | Pattern::Mixed => usize::MAX / 4,
            }
        })
        // Saturating: shared groups count as unbounded, and a rack without arrays counts every other rack's.
        .fold(0usize, usize::saturating_add)
}
