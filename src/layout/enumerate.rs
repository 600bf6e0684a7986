//! Enumerate candidate layouts for a site: patterns × default replica counts × server selections, each
//! with its volume groups, LUNs, hot spares, placement rule and emulated replica placement. Beside the
//! fixed selections, each pattern gets its optimiser's choice: `optimize` for patterns 1, 2 and 4,
//! `optimize_mixed` for mixed layouts (when the site is small enough for its exact search).
//!
//! Every choice is made in canonical (name) order, never input order, so reordering a site file yields
//! the same layouts with the same ids.

#[cfg(test)]
use super::build::build;
use super::build::build_unsized;
use super::placement::BareAssets;
use super::volumes::{arrays_for, by_name, own_raid, reachable_arrays, storage_of, Storage};
use super::*;
use crate::catalog::Catalog;
use crate::site::{ArrayRaid, Pattern, RackIdx, ServerIdx, Site};
use rayon::prelude::*;
use std::collections::HashSet;

/// One layout to build: its pattern, replica count, servers and the optimiser's disks per server and per
/// array when it chose them.
struct Job {
    pattern: Pattern,
    r: u8,
    selection: Vec<ServerIdx>,
    hint: Option<(u32, Vec<(ArrayIdx, u32)>)>,
}

/// The layouts to build, in the fixed pattern × R × selection order: each pattern's selections, the
/// optimiser's (solved in parallel up front) and, for pattern 1, the same servers with the widest groups.
fn jobs(site: &Site, catalog: &Catalog) -> Vec<Job> {
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
    // The builds are independent (each places and sizes on its own): list them in the fixed pattern × R ×
    // selection order, build them in parallel, then keep the first of each id in that order.
    let mut jobs: Vec<Job> = Vec::new();
    // Heterogeneous storage (a fixed RAID 1 pair here, an existing DDP pool there, internal disks): each
    // server gets what its hardware offers, in one mixed layout per replica count and selection.
    if super::volumes::is_heterogeneous(site) {
        patterns.push(Pattern::Mixed);
    }
    for &pattern in &patterns {
        for &r in &site.nats.replicas {
            for selection in selections(site, pattern, r) {
                jobs.push(Job {
                    pattern,
                    r,
                    selection,
                    hint: None,
                });
            }
            if pattern == Pattern::Mixed {
                // The optimiser's mixed selection (most tolerated racks, then fewest disks and arrays) as
                // one more candidate: the selections above are fixed shapes that can miss it.
                if let Some(choice) = super::optimize_mixed::optimise_mixed(site, catalog, r) {
                    jobs.push(Job {
                        pattern,
                        r,
                        selection: choice.servers,
                        hint: None,
                    });
                }
                continue;
            }
            if let Some(choice) = choices.next().flatten() {
                let selection = optimised_servers(site, &choice.per_rack);
                jobs.push(Job {
                    pattern,
                    r,
                    selection: selection.clone(),
                    hint: Some((choice.disks_per_server, choice.per_array.clone())),
                });
                if pattern == Pattern::P1 {
                    // The same servers with each mirrored group as wide as its array allows: the installed
                    // data disks the fewest-disks choice leaves idle, put to use (more store and more
                    // drives per volume). Where no disk is left over it is the same layout (same id) and
                    // is dropped below. Pattern 2 is left narrow (a wider RAID 0 stripe only adds disks
                    // whose failure destroys it) and pattern 4 sizes its LUNs to the need either way.
                    jobs.push(Job {
                        pattern,
                        r,
                        selection,
                        hint: Some((super::build::WIDEST, choice.per_array)),
                    });
                }
            }
        }
    }
    jobs
}

/// Every sensible layout for the site (patterns × replica counts × server selections), including those
/// that fail a hard rule (they carry `Severity::Reject` problems so the report can say why); callers ask
/// through `layout::Enumerate`.
///
/// The candidates are carved (cheap) and the first of each id kept, in the enumeration's order, before
/// pattern 4's LUNs are sized (the costly part, and it gives the id its sizes, which follow from the
/// rest): so no layout is sized twice, and whoever evaluates a candidate sizes it in the task that
/// evaluates it (`Candidate::size`).
pub(super) fn candidates(site: &Site, catalog: &Catalog, bare: &BareAssets) -> Vec<Candidate> {
    let jobs = jobs(site, catalog);
    // The workload's assets once per replica count, not once per layout (100,000 names each).
    let own: Vec<(u8, Vec<Asset>)> = jobs
        .iter()
        .map(|j| j.r)
        .filter(|&r| bare.get(r).is_none())
        .collect::<std::collections::BTreeSet<u8>>()
        .into_iter()
        .map(|r| (r, super::placement::assets(site, r)))
        .collect();
    let assets_of = |r: u8| -> &[Asset] {
        bare.get(r).unwrap_or_else(|| {
            own.iter()
                .find(|(x, _)| *x == r)
                .map(|(_, v)| v.as_slice())
                .unwrap_or_default()
        })
    };
    let carved: Vec<Layout> = jobs
        .par_iter()
        .map(|j| {
            let hint = j.hint.as_ref().map(|(d, a)| (*d, a.as_slice()));
            build_unsized(site, catalog, j.pattern, j.r, &j.selection, hint, assets_of(j.r))
        })
        .collect();
    let mut seen = HashSet::new();
    carved
        .into_iter()
        .filter(|l| seen.insert(l.id.clone()))
        .map(|layout| Candidate { layout })
        .collect()
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
        // Per rack, the servers that can get a volume, capped by what the arrays they reach can serve.
        let mut internal_of: Vec<Vec<ServerIdx>> = Vec::new();
        let mut shared_of: Vec<Vec<ServerIdx>> = Vec::new();
        for &rk in &racks {
            let servers = by_name(site.rack_servers(rk).map(|s| (s, &site.servers[s])), |s| &s.name);
            let mut internal: Vec<ServerIdx> = Vec::new();
            let mut shared: Vec<ServerIdx> = Vec::new();
            for s in servers {
                match storage_of(site, s, pattern) {
                    Some(Storage::Internal(a)) => {
                        let arr = &site.arrays[a];
                        let (min, _) = own_raid(super::volumes::effective(site, a, pattern), arr.disks).disk_rule();
                        // A host's pool is the guest's whatever the pattern (its level is the pool's).
                        if arr.disks >= min || arr.host.is_some() {
                            internal.push(s);
                        }
                    }
                    Some(Storage::Shared) => shared.push(s),
                    None => {}
                }
            }
            internal_of.push(internal);
            shared_of.push(shared);
        }
        let wanted: Vec<usize> = shared_of.iter().map(Vec::len).collect();
        let caps = shared_caps(site, &racks, pattern, &wanted);
        let mut per_rack: Vec<Vec<ServerIdx>> = Vec::new();
        for ((mut v, mut shared), cap) in internal_of.into_iter().zip(shared_of).zip(caps) {
            shared.truncate(cap);
            v.extend(shared);
            v.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
            per_rack.push(v);
        }
        let all: Vec<ServerIdx> = per_rack.iter().flatten().copied().collect();
        if all.is_empty() {
            // No server gets a volume under a pattern the policy asks for (internal disks fixed at another
            // level, say): every server, so that the build drops each with the reason and the plan says
            // why the pattern does not fit rather than leaving it out without a word.
            if site.policy.patterns.contains(&pattern) {
                out.push(by_name(site.servers.iter().enumerate(), |s| &s.name));
            }
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

/// How many servers one shared array can give a volume to under a pattern (its effective one in a mixed
/// layout): a group per server for own-group patterns (RAID 10 groups of 4 when `raid: raid10` is fixed,
/// else pairs; a disk each for RAID 0), any number of LUNs on a shared group.
fn array_slots(site: &Site, a: ArrayIdx, pattern: Pattern) -> usize {
    let arr = &site.arrays[a];
    let data = arr.disks.saturating_sub(arr.hot_spares);
    if super::volumes::mixed_raid0_fill(site, a, pattern) {
        // Pairs while the disks last, then a RAID 0 disk each (`build`): one disk per server at least.
        return data as usize;
    }
    match super::volumes::effective(site, a, pattern) {
        Pattern::P1 | Pattern::P4 if arr.raid == Some(ArrayRaid::Raid10) => (data / 4) as usize,
        Pattern::P1 | Pattern::P4 => (data / 2) as usize,
        Pattern::P2 => data as usize,
        // Shared groups: any number of LUNs; one per server that reaches it.
        Pattern::P3 | Pattern::DdpRaid1 | Pattern::Raid6 | Pattern::Mixed => usize::MAX / 4,
    }
}

/// How many of `wanted[i]` servers (of rack `racks[i]`, needing a shared array) the arrays can serve
/// under a pattern. An array serves each server once: racks with arrays take from their own first, then
/// racks without any take what is left of the other racks' arrays, in rack name order — so an array
/// borrowed by two racks is not counted for each (which offered selections the arrays could not serve).
fn shared_caps(site: &Site, racks: &[RackIdx], pattern: Pattern, wanted: &[usize]) -> Vec<usize> {
    let mut left: Vec<usize> = (0..site.arrays.len()).map(|a| array_slots(site, a, pattern)).collect();
    let mut caps = vec![0usize; racks.len()];
    for own_first in [true, false] {
        for (i, &rk) in racks.iter().enumerate() {
            if super::volumes::has_shared_arrays(site, rk) != own_first {
                continue;
            }
            let mut need = wanted[i];
            for a in reachable_arrays(site, rk, pattern) {
                let take = need.min(left[a]);
                left[a] -= take;
                need -= take;
                caps[i] += take;
            }
        }
    }
    caps
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str =
        "workload:\n  streams:\n    - { name: orders, msgs_per_s: 500, msg_size: 1KiB, retention: 1h, replicas: 3 }\n";

    fn site(racks: &str) -> (Site, Catalog) {
        let cat = Catalog::builtin();
        let yaml = format!("site: t\nnats: {{ replicas: [3] }}\nracks:\n{racks}{STREAM}");
        let site = crate::site::parse_str(&yaml, "site.yaml", &cat).unwrap_or_else(|e| panic!("{e}"));
        (site, cat)
    }

    /// Every selection the enumerator offers is served whole: each of its servers gets a volume.
    fn assert_served(site: &Site, cat: &Catalog, patterns: &[Pattern]) {
        for &p in patterns {
            for sel in selections(site, p, 3) {
                let l = build(site, cat, p, 3, &sel, None);
                let names = |v: &[ServerIdx]| v.iter().map(|&s| site.servers[s].name.clone()).collect::<Vec<_>>();
                assert_eq!(
                    names(&l.servers),
                    names(&sel),
                    "pattern {p:?} offered {:?} but built {} ({:?})",
                    names(&sel),
                    l.id,
                    l.problems
                );
            }
        }
    }

    #[test]
    fn an_array_borrowed_by_two_racks_is_counted_once() {
        // A1 has one pair after its spare: a1 takes it, so b1 and c1 (racks without arrays) get nothing.
        // Counting A1 for each rack offered [a1, b1, c1] and built a one-server layout.
        let (s, cat) = site(
            "  - name: A\n    servers: [a1]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }\n  - name: B\n    servers: [b1]\n  - name: C\n    servers: [c1]\n",
        );
        assert_served(&s, &cat, &[Pattern::P1, Pattern::P2, Pattern::P4]);
        let all = selections(&s, Pattern::P1, 3);
        assert!(all.iter().all(|v| v.len() == 1), "{all:?}");
    }

    #[test]
    fn borrowers_take_what_the_owning_racks_leave() {
        // A1: 3 pairs; a1 and a2 take two, so one of b1, b2 (rack B, no array) gets the third.
        let (s, cat) = site(
            "  - name: A\n    servers: [a1, a2]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7, hot_spares: 1 }\n  - name: B\n    servers: [b1, b2]\n  - name: C\n    servers: [c1, c2]\n    arrays:\n      - { name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1, raid: raid1 }\n",
        );
        assert_served(&s, &cat, &[Pattern::P1, Pattern::P2, Pattern::P3, Pattern::P4]);
        let widest = selections(&s, Pattern::P1, 3).into_iter().map(|v| v.len()).max();
        // a1, a2, c1 on their own racks' pairs, b1 on A1's third pair and b2 on none.
        assert_eq!(widest, Some(4));
    }

    #[test]
    fn fixed_raid10_arrays_are_filled_a_group_of_four_at_a_time() {
        // X1 holds two RAID 10 groups, Y1 one: counting pairs put a third server on X1, which dropped it.
        let (s, cat) = site(
            "  - name: A\n    servers: [a1, a2, a3]\n    arrays:\n      - { name: X1, model: EF300, disk_model: nvme-3.84t, disks: 8, hot_spares: 0, raid: raid10 }\n      - { name: Y1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0, raid: raid10 }\n",
        );
        assert_served(&s, &cat, &[Pattern::P1, Pattern::P4]);
    }

    #[test]
    fn mixed_selections_with_a_borrowing_rack_are_served_whole() {
        let (s, cat) = site(
            "  - name: A\n    servers: [a1, a2]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 5, hot_spares: 1, raid: raid1 }\n  - name: B\n    servers: [b1, b2]\n  - name: C\n    servers:\n      - name: c1\n        disks: { disk_model: nvme-3.84t, count: 1, raid: raid0 }\n",
        );
        assert!(super::super::volumes::is_heterogeneous(&s));
        assert_served(&s, &cat, &[Pattern::Mixed, Pattern::P1]);
    }
}
