//! Enumerate candidate layouts for a site: patterns × default replica counts × server selections, each
//! with its volume groups, LUNs, hot spares, placement rule and emulated replica placement.
//!
//! Every choice is made in canonical (name) order, never input order, so reordering a site file yields
//! the same layouts with the same ids.

use super::placement::{choose_rule, emulate};
use super::*;
use crate::catalog::Catalog;
use crate::site::{ArrayIdx, Pattern, RackIdx, RaidChoice, ServerIdx, Site};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashSet};

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
    let pairs: Vec<(Pattern, u8)> = patterns
        .iter()
        .flat_map(|&p| site.nats.replicas.iter().map(move |&r| (p, r)))
        .collect();
    let mut choices: Vec<Option<super::optimize::Choice>> = pairs
        .par_iter()
        .map(|&(p, r)| super::optimize::optimise(site, catalog, p, r))
        .collect();
    let mut choices = choices.drain(..);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for &pattern in &patterns {
        for &r in &site.nats.replicas {
            for selection in selections(site, pattern, r) {
                let layout = build(site, catalog, pattern, r, &selection, None);
                if seen.insert(layout.id.clone()) {
                    out.push(layout);
                }
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

/// Names sorted case-insensitively, then by index for stability.
fn by_name<'a, T>(items: impl Iterator<Item = (usize, &'a T)>, name: impl Fn(&T) -> &str) -> Vec<usize>
where
    T: 'a,
{
    let mut v: Vec<(String, usize)> = items.map(|(i, x)| (name(x).to_ascii_lowercase(), i)).collect();
    v.sort();
    v.into_iter().map(|(_, i)| i).collect()
}

/// Where a server's volume can come from under a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    Internal(ArrayIdx),
    Shared,
}

fn uses_own_group(p: Pattern) -> bool {
    matches!(p, Pattern::P1 | Pattern::P2 | Pattern::P4)
}

fn storage_of(site: &Site, s: ServerIdx, pattern: Pattern) -> Option<Storage> {
    let srv = &site.servers[s];
    if let Some(a) = srv.internal {
        // Internal disks give a server its own group; shared-stripe patterns treat them the same way
        // (a stripe over one server's disks is pattern 2 for that server).
        if uses_own_group(pattern) || pattern == Pattern::P3 {
            return Some(Storage::Internal(a));
        }
    }
    if arrays_for(site, srv.rack, pattern).next().is_some() {
        Some(Storage::Shared)
    } else {
        None
    }
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

/// Whether an array whose RAID the user already fixed (`arrays[].raid`) can serve a pattern.
fn compatible(arr: &crate::site::Array, pattern: Pattern) -> bool {
    match arr.raid {
        None => true,
        Some(RaidChoice::Raid0) => matches!(pattern, Pattern::P2 | Pattern::P3),
        Some(RaidChoice::Raid1) | Some(RaidChoice::Raid10) => matches!(pattern, Pattern::P1 | Pattern::P4),
        Some(RaidChoice::Raid6) => pattern == Pattern::Raid6,
        Some(RaidChoice::Ddp) => pattern == Pattern::DdpRaid1,
    }
}

/// A rack's shared arrays that can serve a pattern.
fn arrays_for(site: &Site, rack: RackIdx, pattern: Pattern) -> impl Iterator<Item = ArrayIdx> + '_ {
    site.rack_arrays(rack)
        .filter(move |&a| compatible(&site.arrays[a], pattern))
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
    arrays_for(site, rack, pattern)
        .map(|a| {
            let arr = &site.arrays[a];
            let data = arr.disks.saturating_sub(arr.hot_spares);
            match pattern {
                Pattern::P1 | Pattern::P4 if arr.raid == Some(RaidChoice::Raid10) => (data / 4) as usize,
                Pattern::P1 | Pattern::P4 => (data / 2) as usize,
                Pattern::P2 => data as usize,
                // Shared groups: any number of LUNs; one per server of the rack.
                Pattern::P3 | Pattern::DdpRaid1 | Pattern::Raid6 => usize::MAX / 4,
            }
        })
        .sum()
}

/// The RAID level of a server's own group under a pattern, for `disks` disks.
fn own_raid(pattern: Pattern, disks: u32) -> Raid {
    match pattern {
        Pattern::P2 | Pattern::P3 => Raid::Raid0,
        _ if disks >= 4 => Raid::Raid10,
        _ => Raid::Raid1,
    }
}

/// Capacity of a group of `disks` disks of an array under a RAID level, before filesystem reserve.
pub fn group_usable_bytes(site: &Site, catalog: &Catalog, array: ArrayIdx, raid: Raid, disks: u32) -> u64 {
    let arr = &site.arrays[array];
    let model = catalog.disk(&arr.disk_model);
    let disk_bytes = arr.disk_size_bytes.or(model.map(|m| m.capacity_bytes)).unwrap_or(0) as f64;
    let ssd = model.map(|m| m.kind.is_ssd()).unwrap_or(false);
    let wear = if ssd { site.policy.wear_headroom } else { 0.0 };
    let bytes = disks as f64 * disk_bytes * raid.efficiency(disks) * (1.0 - wear);
    bytes.max(0.0) as u64
}

/// Bytes a server's store must hold on average for this selection, with the headroom natsplan keeps
/// (filesystem reserve, store headroom); the size below which a LUN is too small.
fn lun_target_bytes(site: &Site, replica_bytes_total: f64, largest_replica: f64, n: usize) -> f64 {
    let per = (replica_bytes_total / n.max(1) as f64).max(largest_replica);
    per / ((1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom))
}

/// Build one layout for a pattern, default replica count and server selection.
/// Build one layout. `hint` is the optimiser's disks per server and servers per array for own-group
/// patterns (otherwise the fewest disks that hold the capacity target, on the emptiest array).
fn build(
    site: &Site,
    catalog: &Catalog,
    pattern: Pattern,
    r: u8,
    selection: &[ServerIdx],
    hint: Option<(u32, &[(ArrayIdx, u32)])>,
) -> Layout {
    let disks_hint = hint.map(|h| h.0);
    let mut hinted: BTreeMap<ArrayIdx, u32> = hint.map(|h| h.1.iter().copied().collect()).unwrap_or_default();
    let mut problems: Vec<Problem> = Vec::new();
    let assets_bare = super::placement::assets(site, r);
    let total: f64 = assets_bare
        .iter()
        .map(|a| a.bytes_per_replica * a.replicas as f64)
        .sum();
    let largest = assets_bare.iter().map(|a| a.bytes_per_replica).fold(0.0, f64::max);
    let target = lun_target_bytes(site, total, largest, selection.len());

    let mut groups: Vec<VolumeGroup> = Vec::new();
    let mut luns: Vec<Lun> = Vec::new();
    let mut spares: BTreeMap<ArrayIdx, u32> = BTreeMap::new();
    let mut servers: Vec<ServerIdx> = selection.to_vec();
    servers.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());

    // Assign servers to arrays: internal disks first, else the rack's arrays round-robin (by name).
    let mut by_array: BTreeMap<ArrayIdx, Vec<ServerIdx>> = BTreeMap::new();
    let mut rack_next: BTreeMap<RackIdx, usize> = BTreeMap::new();
    let mut free_disks: BTreeMap<ArrayIdx, u32> = site
        .arrays
        .iter()
        .enumerate()
        .filter(|(_, a)| a.owner.is_none())
        .map(|(i, a)| (i, a.disks.saturating_sub(a.hot_spares)))
        .collect();
    for &s in &servers {
        match storage_of(site, s, pattern) {
            Some(Storage::Internal(a)) if pattern != Pattern::Raid6 && pattern != Pattern::DdpRaid1 => {
                by_array.entry(a).or_default().push(s)
            }
            Some(_) => {
                let rack = site.servers[s].rack;
                let arrays = by_name(arrays_for(site, rack, pattern).map(|a| (a, &site.arrays[a])), |a| {
                    &a.name
                });
                if arrays.is_empty() {
                    problems.push(dropped(format!(
                        "server {} has no array in rack {} and no internal disks",
                        site.servers[s].name, site.racks[rack].name
                    )));
                    continue;
                }
                // Own groups: the array with the most data disks still free that can take another
                // group (ties by name). Shared groups: round-robin over the rack's arrays.
                let from_hint = arrays.iter().copied().find(|a| hinted.get(a).is_some_and(|&c| c > 0));
                if let Some(a) = from_hint {
                    *hinted.get_mut(&a).expect("hinted array") -= 1;
                }
                let a = if from_hint.is_some() {
                    from_hint
                } else if uses_own_group(pattern) {
                    let min = match pattern {
                        Pattern::P2 => 1,
                        _ => 2,
                    };
                    arrays
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| free_disks.get(a).copied().unwrap_or(0) >= min)
                        .max_by_key(|(pos, a)| (free_disks.get(a).copied().unwrap_or(0), std::cmp::Reverse(*pos)))
                        .map(|(_, a)| *a)
                        .inspect(|a| {
                            if let Some(f) = free_disks.get_mut(a) {
                                *f -= min;
                            }
                        })
                } else {
                    None
                };
                let a = a.unwrap_or_else(|| {
                    let k = rack_next.entry(rack).or_insert(0);
                    let a = arrays[*k % arrays.len()];
                    *k += 1;
                    a
                });
                by_array.entry(a).or_default().push(s);
            }
            None => problems.push(dropped(format!(
                "server {} has no storage: rack {} has no array and the server lists no disks",
                site.servers[s].name, site.racks[site.servers[s].rack].name
            ))),
        }
    }

    let mut arrays_sorted: Vec<ArrayIdx> = by_array.keys().copied().collect();
    arrays_sorted.sort_by_key(|&a| site.arrays[a].name.to_ascii_lowercase());
    let mut chosen_raid = None;
    for a in arrays_sorted {
        let on = &by_array[&a];
        let arr = &site.arrays[a];
        let internal = arr.owner.is_some();
        let keep_spares = if pattern == Pattern::DdpRaid1 {
            0
        } else {
            arr.hot_spares
        };
        let data = arr.disks.saturating_sub(keep_spares);
        if !internal && keep_spares > 0 {
            spares.insert(a, keep_spares);
        }
        let mut next_disk = 1u32;
        let mut take = |n: u32| -> Vec<u32> {
            let v: Vec<u32> = (next_disk..next_disk + n).collect();
            next_disk += n;
            v
        };
        let vg_name = |i: usize| format!("{}-vg{}", arr.name, i + 1);
        if uses_own_group(pattern) || (internal && pattern == Pattern::P3) {
            // One group per server. Disks per server: the fewest that hold the target, within a fair share.
            let share = data / on.len().max(1) as u32;
            for (i, &s) in on.iter().enumerate() {
                let (min, even) = match pattern {
                    Pattern::P2 | Pattern::P3 => (1, false),
                    _ if arr.raid == Some(RaidChoice::Raid10) => (4, true),
                    _ => (2, true),
                };
                let mut max = share;
                if even && max % 2 == 1 {
                    max -= 1;
                }
                if max < min {
                    problems.push(dropped(format!(
                        "{} has {} data disk{} after {} hot spare{}: {} servers need {} each for {}",
                        arr.name,
                        data,
                        plural(data),
                        keep_spares,
                        plural(keep_spares),
                        on.len(),
                        min,
                        own_raid(pattern, min).as_str().to_uppercase()
                    )));
                    continue;
                }
                let step = if even { 2 } else { 1 };
                let mut d = disks_hint.filter(|&h| h >= min && h <= max).unwrap_or(min);
                let fits = |d: u32| {
                    group_usable_bytes(site, catalog, a, own_raid(pattern, d), d) as f64 >= target
                        || pattern == Pattern::P4
                };
                while d + step <= max && !fits(d) {
                    d += step;
                }
                let raid = own_raid(pattern, d);
                chosen_raid.get_or_insert(raid);
                let usable = group_usable_bytes(site, catalog, a, raid, d);
                let disks = take(d);
                let lun = if pattern == Pattern::P4 {
                    // Pattern 4: a LUN just large enough (rounded up to 1 GiB); the rest serves others.
                    let gib = 1u64 << 30;
                    (((target as u64).div_ceil(gib)) * gib).min(usable)
                } else {
                    usable
                };
                groups.push(VolumeGroup {
                    name: vg_name(groups_on(&groups, a)),
                    array: a,
                    raid,
                    disks,
                    usable_bytes: usable,
                });
                let _ = i;
                luns.push(Lun {
                    group: groups.len() - 1,
                    server: s,
                    size_bytes: lun,
                });
            }
        } else {
            // Shared group: pattern 3 (RAID 0 stripe), DDP pool with RAID 1 volumes, or one RAID 6 group.
            let raid = match pattern {
                Pattern::P3 => Raid::Raid0,
                Pattern::DdpRaid1 => Raid::DdpRaid1,
                _ => Raid::Raid6,
            };
            chosen_raid.get_or_insert(raid);
            let (min, _) = raid.disk_rule();
            if data < min {
                let what = match raid {
                    Raid::Raid6 => format!(
                        "RAID 6 needs at least 5 disks; {} has {data} after hot spares",
                        arr.name
                    ),
                    Raid::DdpRaid1 => format!("DDP needs at least 11 disks; {} has {}", arr.name, arr.disks),
                    _ => format!("{} has no data disks after hot spares", arr.name),
                };
                problems.push(dropped(what));
                continue;
            }
            if raid == Raid::DdpRaid1 && arr.hot_spares > 0 {
                problems.push(info(format!(
                    "DDP on {} keeps {} drives' reserve capacity instead of {} hot spare{}",
                    arr.name,
                    ddp_reserve_disks(data),
                    arr.hot_spares,
                    plural(arr.hot_spares)
                )));
            }
            let usable = group_usable_bytes(site, catalog, a, raid, data);
            let disks = take(data);
            groups.push(VolumeGroup {
                name: vg_name(0),
                array: a,
                raid,
                disks,
                usable_bytes: usable,
            });
            let g = groups.len() - 1;
            let each = usable / on.len().max(1) as u64;
            for &s in on {
                luns.push(Lun {
                    group: g,
                    server: s,
                    size_bytes: each,
                });
            }
        }
    }

    // Servers that got no LUN are not JetStream servers in this layout.
    let with_lun: BTreeSet<ServerIdx> = luns.iter().map(|l| l.server).collect();
    servers.retain(|s| with_lun.contains(s));
    luns.sort_by_key(|l| servers.iter().position(|&s| s == l.server));

    let raid = chosen_raid.unwrap_or(match pattern {
        Pattern::P2 | Pattern::P3 => Raid::Raid0,
        Pattern::DdpRaid1 => Raid::DdpRaid1,
        Pattern::Raid6 => Raid::Raid6,
        _ => Raid::Raid1,
    });
    let store = |s: ServerIdx| -> f64 {
        luns.iter()
            .find(|l| l.server == s)
            .map(|l| store_bytes(site, l.size_bytes) as f64)
            .unwrap_or(0.0)
    };
    let stores: Vec<f64> = servers.iter().map(|&s| store(s)).collect();
    let placement = choose_rule(site, &servers, &assets_bare);
    let (assets, placement_problems) = emulate(site, &servers, &stores, &placement, assets_bare);
    problems.extend(placement_problems);

    let mut layout = Layout {
        id: String::new(),
        pattern,
        raid,
        replicas: r,
        servers,
        groups,
        luns,
        spares: spares.into_iter().collect(),
        placement,
        assets,
        problems,
    };
    layout.id = layout_id(site, &layout);
    layout
}

fn groups_on(groups: &[VolumeGroup], a: ArrayIdx) -> usize {
    groups.iter().filter(|g| g.array == a).count()
}

/// The JetStream store size natsplan emits as `max_file_store` for a LUN: less the filesystem reserve and
/// the store headroom kept free.
pub fn store_bytes(site: &Site, lun_bytes: u64) -> u64 {
    (lun_bytes as f64 * (1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom)) as u64
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A server of the selection that could not get a volume: the layout is the servers that did (its own
/// checks judge it); if none did, the plan says why the pattern does not fit the site.
fn dropped(text: String) -> Problem {
    Problem {
        severity: Severity::Info,
        text,
    }
}

fn info(text: String) -> Problem {
    Problem {
        severity: Severity::Info,
        text,
    }
}

/// `p1-raid1-r3-A2.B2.C1-3f9a`: pattern, RAID, default replicas, servers per rack, and a short hash of the
/// exact servers, volumes and placement (names only, sorted, so input order does not matter).
pub fn layout_id(site: &Site, l: &Layout) -> String {
    let mut per_rack: BTreeMap<String, usize> = BTreeMap::new();
    for &s in &l.servers {
        *per_rack
            .entry(clean(&site.racks[site.servers[s].rack].name))
            .or_default() += 1;
    }
    let racks: Vec<String> = per_rack.iter().map(|(r, n)| format!("{r}{n}")).collect();
    let mut canon: Vec<String> = l
        .luns
        .iter()
        .map(|lun| {
            let g = &l.groups[lun.group];
            format!(
                "{}@{}:{}x{}:{}",
                site.servers[lun.server].name.to_ascii_lowercase(),
                site.arrays[g.array].name.to_ascii_lowercase(),
                g.raid.as_str(),
                g.disks.len(),
                lun.size_bytes
            )
        })
        .collect();
    canon.sort();
    canon.push(match &l.placement {
        PlacementRule::UniqueTag { prefix } => format!("unique:{prefix}"),
        PlacementRule::Free => "free".into(),
        PlacementRule::Pinned { sets } => {
            let mut v: Vec<String> = sets
                .iter()
                .map(|s| {
                    let mut n: Vec<String> = s
                        .servers
                        .iter()
                        .map(|&x| site.servers[x].name.to_ascii_lowercase())
                        .collect();
                    n.sort();
                    n.join("+")
                })
                .collect();
            v.sort();
            format!("pinned:{}", v.join("|"))
        }
    });
    let h = crate::units::fnv1a64(canon.join(";").as_bytes());
    format!(
        "{}-{}-r{}-{}-{:04x}",
        l.pattern.id_tag(),
        l.raid.as_str(),
        l.replicas,
        if racks.is_empty() {
            "none".to_string()
        } else {
            racks.join(".")
        },
        (h & 0xffff) as u16
    )
}

fn clean(name: &str) -> String {
    let s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    if s.is_empty() {
        "x".into()
    } else {
        s
    }
}
