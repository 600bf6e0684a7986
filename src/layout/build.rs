//! Build one candidate layout: a pattern, a default replica count and a server selection become volume
//! groups, LUNs, hot spares, a placement rule and the emulated replica placement. Every choice is made
//! in canonical (name) order, so reordering a site file yields the same layout with the same id.

use super::id::layout_id;
use super::lun_size::Whole;
use super::placement::{choose_rule, emulate};
use super::volumes::{
    effective, group_usable_bytes, lun_target_bytes, own_raid, reachable_arrays, storage_of, uses_own_group, Storage,
};
use super::*;
use crate::catalog::Catalog;
use crate::site::{ArrayIdx, ArrayRaid, Pattern, RackIdx, ServerIdx, Site};
use crate::text::plural_s;
use std::collections::{BTreeMap, BTreeSet};

/// The volumes carved so far, with what could not be carved.
#[derive(Default)]
struct Carved {
    groups: Vec<VolumeGroup>,
    luns: Vec<Lun>,
    spares: BTreeMap<ArrayIdx, u32>,
    problems: Vec<Problem>,
    raid: Option<Raid>,
}

/// The disks-per-server hint that asks each server's own group for its whole fair share of its array's
/// data disks (the widest group the array holds for the servers on it), instead of the fewest that hold
/// the capacity target: `enumerate`'s wider twin of the optimiser's choice, so installed disks the
/// smallest layout leaves idle are offered in groups too (issue 38).
pub(super) const WIDEST: u32 = u32::MAX;

/// Build one layout. `hint` is the optimiser's disks per server and servers per array for own-group
/// patterns (otherwise the fewest disks that hold the capacity target, on the emptiest array); a hint of
/// `WIDEST` disks gives each server its fair share of the array's data disks.
pub(super) fn build(
    site: &Site,
    catalog: &Catalog,
    pattern: Pattern,
    r: u8,
    selection: &[ServerIdx],
    hint: Option<(u32, &[(ArrayIdx, u32)])>,
) -> Layout {
    build_with(
        site,
        catalog,
        pattern,
        r,
        selection,
        hint,
        &super::placement::assets(site, r),
    )
}

/// As `build`, with the workload's assets under `r` given (`placement::assets(site, r)`, built once for
/// every layout of that replica count: `BareAssets`).
pub(super) fn build_with(
    site: &Site,
    catalog: &Catalog,
    pattern: Pattern,
    r: u8,
    selection: &[ServerIdx],
    hint: Option<(u32, &[(ArrayIdx, u32)])>,
    assets_bare: &[Asset],
) -> Layout {
    let layout = build_unsized(site, catalog, pattern, r, selection, hint, assets_bare);
    Candidate { layout }.size(site, assets_bare, None).0
}

/// As `build_with`, but pattern 4's LUNs left at their groups' full size (`size` sizes them and gives
/// the id its sizes): the rest of the layout, and so the sizes `size` will choose, is what the id names,
/// so two candidates of one id here are one layout once sized (`enumerate` keeps the first before the
/// costly sizing).
pub(super) fn build_unsized(
    site: &Site,
    catalog: &Catalog,
    pattern: Pattern,
    r: u8,
    selection: &[ServerIdx],
    hint: Option<(u32, &[(ArrayIdx, u32)])>,
    assets_bare: &[Asset],
) -> Layout {
    let disks_hint = hint.map(|h| h.0);
    let mut hinted: BTreeMap<ArrayIdx, u32> = hint.map(|h| h.1.iter().copied().collect()).unwrap_or_default();
    let total: f64 = assets_bare
        .iter()
        .map(|a| a.bytes_per_replica * a.replicas as f64)
        .sum();
    let largest = assets_bare.iter().map(|a| a.bytes_per_replica).fold(0.0, f64::max);
    let target = lun_target_bytes(site, total, largest, selection.len());

    let mut servers: Vec<ServerIdx> = selection.to_vec();
    servers.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
    let mut c = Carved::default();
    let by_array = assign_arrays(site, pattern, &servers, &mut hinted, &mut c.problems);

    let mut arrays_sorted: Vec<ArrayIdx> = by_array.keys().copied().collect();
    arrays_sorted.sort_by_key(|&a| site.arrays[a].name.to_ascii_lowercase());
    for a in arrays_sorted {
        let on = &by_array[&a];
        let arr = &site.arrays[a];
        let internal = arr.owner.is_some();
        if arr.host.is_some() {
            c.host_pool(site, catalog, a, on);
            continue;
        }
        // In a mixed layout each array follows its own pattern (what its hardware and `raid:` allow).
        let p = effective(site, a, pattern);
        let keep_spares = if p == Pattern::DdpRaid1 { 0 } else { arr.hot_spares };
        if !internal && keep_spares > 0 {
            c.spares.insert(a, keep_spares);
        }
        let data = arr.disks.saturating_sub(keep_spares);
        if super::volumes::mixed_raid0_fill(site, a, pattern) && on.len() as u32 * 2 > data && on.len() as u32 <= data {
            // The choice per server: not disks enough for a pair each, so the first servers (by name) get
            // RAID 1 pairs and the rest a RAID 0 disk each, rather than leaving them without a volume.
            let n = on.len() as u32;
            let pairs = data - n;
            let (mirrored, single) = on.split_at(pairs as usize);
            c.own_groups(site, catalog, p, a, mirrored, keep_spares, (1, 2 * pairs), None, target);
            c.own_groups(
                site,
                catalog,
                Pattern::P2,
                a,
                single,
                keep_spares,
                (2 * pairs + 1, n - pairs),
                None,
                target,
            );
            let names = |v: &[ServerIdx]| {
                v.iter()
                    .map(|&s| site.servers[s].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            c.problems.push(info(
                ProblemCode::VolumeNote,
                format!(
                "{} has {data} data disks for {n} servers: {} get{} a RAID 1 pair, {} a RAID 0 disk (one disk failure \
                 destroys that store; its replicas are rebuilt from the others)",
                arr.name,
                if mirrored.is_empty() {
                    "none".to_string()
                } else {
                    names(mirrored)
                },
                if mirrored.len() == 1 { "s" } else { "" },
                names(single)
            ),
            ));
        } else if uses_own_group(p) || (internal && p == Pattern::P3) {
            c.own_groups(site, catalog, p, a, on, keep_spares, (1, data), disks_hint, target);
        } else {
            c.shared_group(site, catalog, p, a, on, keep_spares);
        }
    }
    finish(site, pattern, r, servers, c, assets_bare)
}

/// Assign servers to arrays: internal disks first, else the arrays they reach (the optimiser's hint, the
/// emptiest that can take another group for own groups, round-robin by name for shared ones). Servers of
/// racks with arrays choose before servers borrowing another rack's, so a borrower never takes the group
/// a rack's own server needs (the enumerator counts capacity the same way). Servers with no storage are
/// dropped with a problem saying why.
fn assign_arrays(
    site: &Site,
    pattern: Pattern,
    servers: &[ServerIdx],
    hinted: &mut BTreeMap<ArrayIdx, u32>,
    problems: &mut Vec<Problem>,
) -> BTreeMap<ArrayIdx, Vec<ServerIdx>> {
    let mut by_array: BTreeMap<ArrayIdx, Vec<ServerIdx>> = BTreeMap::new();
    let mut rack_next: BTreeMap<RackIdx, usize> = BTreeMap::new();
    let mut free_disks: BTreeMap<ArrayIdx, u32> = site
        .arrays
        .iter()
        .enumerate()
        .filter(|(_, a)| a.owner.is_none())
        .map(|(i, a)| (i, a.disks.saturating_sub(a.hot_spares)))
        .collect();
    // Disks one more group takes on an own-group array (None: the array's groups are shared).
    let group_disks = |a: ArrayIdx| -> Option<u32> {
        let p = effective(site, a, pattern);
        if !uses_own_group(p) {
            return None;
        }
        Some(match p {
            Pattern::P2 => 1,
            _ if super::volumes::mixed_raid0_fill(site, a, pattern) => 1,
            _ if site.arrays[a].raid == Some(ArrayRaid::Raid10) => 4,
            _ => 2,
        })
    };
    let has_arrays = |s: ServerIdx| super::volumes::has_shared_arrays(site, site.servers[s].rack);
    let ordered = servers
        .iter()
        .filter(|&&s| has_arrays(s))
        .chain(servers.iter().filter(|&&s| !has_arrays(s)));
    for &s in ordered {
        match storage_of(site, s, pattern) {
            Some(Storage::Internal(a)) if pattern != Pattern::Raid6 && pattern != Pattern::DdpRaid1 => {
                by_array.entry(a).or_default().push(s)
            }
            Some(_) => {
                let rack = site.servers[s].rack;
                let arrays = reachable_arrays(site, rack, pattern);
                if arrays.is_empty() {
                    problems.push(dropped(format!(
                        "server {} has no array in rack {} and no internal disks",
                        site.servers[s].name, site.racks[rack].name
                    )));
                    continue;
                }
                // Own groups: the array with the most data disks still free that can take another
                // group (ties by name). Shared groups: round-robin over the arrays reached.
                let from_hint = arrays.iter().copied().find(|a| hinted.get(a).is_some_and(|&c| c > 0));
                if let Some(a) = from_hint {
                    *hinted.get_mut(&a).expect("hinted array") -= 1;
                }
                let free = |a: &ArrayIdx| free_disks.get(a).copied().unwrap_or(0);
                let a = from_hint.or_else(|| {
                    arrays
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| group_disks(**a).is_some_and(|min| free(a) >= min))
                        .max_by_key(|(pos, a)| (free(a), std::cmp::Reverse(*pos)))
                        .map(|(_, a)| *a)
                });
                if let Some(a) = a.filter(|_| from_hint.is_none()) {
                    if let (Some(f), Some(min)) = (free_disks.get_mut(&a), group_disks(a)) {
                        *f -= min;
                    }
                }
                let a = a.unwrap_or_else(|| {
                    // Shared groups first (any number of LUNs), else any array (its groups then say what
                    // they lack).
                    let shared: Vec<ArrayIdx> = arrays.iter().copied().filter(|&a| group_disks(a).is_none()).collect();
                    let pool = if shared.is_empty() { &arrays } else { &shared };
                    let k = rack_next.entry(rack).or_insert(0);
                    let a = pool[*k % pool.len()];
                    *k += 1;
                    a
                });
                by_array.entry(a).or_default().push(s);
            }
            None => problems.push(dropped(
                match (super::volumes::host_pool(site, s), fixed_elsewhere(site, s, pattern)) {
                    (Some(a), _) => format!(
                        "server {}'s only storage is host {}'s pool {}, which serves VM disks in mixed layouts only",
                        site.servers[s].name,
                        site.servers[s].host.as_deref().unwrap_or_default(),
                        site.arrays[a].name
                    ),
                    (None, Some(why)) => why,
                    (None, None) => format!(
                        "server {} has no storage: rack {} has no array and the server lists no disks",
                        site.servers[s].name, site.racks[site.servers[s].rack].name
                    ),
                },
            )),
        }
    }
    // Each array's servers in name order (their groups are numbered so), whichever chose first.
    for on in by_array.values_mut() {
        on.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
    }
    by_array
}

/// Why a server gets no volume under `pattern` although it has storage: its internal disks, or its rack's
/// arrays, are fixed (`raid:`) at levels the pattern does not build (or the pattern never uses internal
/// disks). Worded as "rule; what" so that the plan's note says the rule once for every server it hits.
fn fixed_elsewhere(site: &Site, s: ServerIdx, pattern: Pattern) -> Option<String> {
    let srv = &site.servers[s];
    let p = pattern.as_str();
    let rule = format!("pattern {p} does not build the levels the site fixes with `raid:`");
    if let Some(a) = srv.internal {
        return Some(match site.arrays[a].raid {
            Some(raid) => format!("{rule}; {}'s internal disks {}", srv.name, raid.as_str()),
            None => format!("pattern {p} does not use internal disks; {}'s", srv.name),
        });
    }
    let fixed: Vec<String> = site
        .rack_arrays(srv.rack)
        .filter(|&a| site.arrays[a].host.is_none())
        .filter_map(|a| {
            site.arrays[a]
                .raid
                .map(|r| format!("{} {}", site.arrays[a].name, r.as_str()))
        })
        .collect();
    (!fixed.is_empty()).then(|| format!("{rule}; {}'s {}", srv.name, fixed.join(" and ")))
}

impl Carved {
    /// One group per server on array `a`, over the data disks in `span`. Disks per server: the fewest that
    /// hold the target, within a fair share of those disks.
    // why: one array's carve, called once per array by `carve`: the site and catalog, and six values
    // `carve` works out per array (pattern, array, its servers, spares kept, the disk span, the hint) and
    // the target; a struct of them would live for this one call.
    #[allow(clippy::too_many_arguments)]
    fn own_groups(
        &mut self,
        site: &Site,
        catalog: &Catalog,
        pattern: Pattern,
        a: ArrayIdx,
        on: &[ServerIdx],
        keep_spares: u32,
        span: (u32, u32),
        disks_hint: Option<u32>,
        target: f64,
    ) {
        let arr = &site.arrays[a];
        // The disks these groups take: `span.1` data disks from disk number `span.0`.
        let (mut next_disk, data) = span;
        let share = data / on.len().max(1) as u32;
        for &s in on {
            let (min, even) = match pattern {
                Pattern::P2 | Pattern::P3 => (1, false),
                _ if arr.raid == Some(ArrayRaid::Raid10) => (4, true),
                _ => (2, true),
            };
            let mut max = share;
            if even && max % 2 == 1 {
                max -= 1;
            }
            // `raid: raid1` is the level of the array's groups: each server's group is one mirrored pair
            // (seed 000 figure (1): six data disks, three RAID 1 groups), never a RAID 10 of more.
            if arr.raid == Some(ArrayRaid::Raid1) && pattern != Pattern::P2 && pattern != Pattern::P3 {
                max = max.min(2);
            }
            if max < min {
                self.problems.push(dropped(format!(
                    // "rule; what": the plan's note says the rule once for every array it hits.
                    "{} needs {min} data disks per server; {} has {data}{} for {} server{}",
                    own_raid(pattern, min).as_str().to_uppercase().replace("RAID", "RAID "),
                    arr.name,
                    if keep_spares > 0 {
                        format!(" after {keep_spares} hot spare{}", plural_s(keep_spares))
                    } else {
                        String::new()
                    },
                    on.len(),
                    plural_s(on.len() as u32)
                )));
                continue;
            }
            let step = if even { 2 } else { 1 };
            let mut d = match disks_hint {
                Some(WIDEST) => max,
                h => h.filter(|&h| h >= min && h <= max).unwrap_or(min),
            };
            let fits = |d: u32| {
                group_usable_bytes(site, catalog, a, own_raid(pattern, d), d) as f64 >= target || pattern == Pattern::P4
            };
            while d + step <= max && !fits(d) {
                d += step;
            }
            let raid = own_raid(pattern, d);
            self.raid.get_or_insert(raid);
            let usable = group_usable_bytes(site, catalog, a, raid, d);
            let disks: Vec<u32> = (next_disk..next_disk + d).collect();
            next_disk += d;
            let lun = if pattern == Pattern::P4 {
                // Pattern 4: a LUN just large enough (rounded up to 1 GiB); the rest serves others.
                let gib = 1u64 << 30;
                (((target as u64).div_ceil(gib)) * gib).min(usable)
            } else {
                usable
            };
            self.groups.push(VolumeGroup {
                name: format!("{}-vg{}", arr.name, groups_on(&self.groups, a) + 1),
                array: a,
                raid,
                disks,
                usable_bytes: usable,
            });
            self.luns.push(Lun {
                group: self.groups.len() - 1,
                server: s,
                size_bytes: lun,
            });
        }
    }

    /// One shared group on array `a` with a LUN per server: pattern 3 (RAID 0 stripe), a DDP pool with
    /// RAID 1 volumes, or one RAID 6 group.
    fn shared_group(
        &mut self,
        site: &Site,
        catalog: &Catalog,
        pattern: Pattern,
        a: ArrayIdx,
        on: &[ServerIdx],
        keep_spares: u32,
    ) {
        let arr = &site.arrays[a];
        let data = arr.disks.saturating_sub(keep_spares);
        let raid = match pattern {
            Pattern::P3 => Raid::Raid0,
            Pattern::DdpRaid1 => Raid::DdpRaid1,
            _ => Raid::Raid6,
        };
        self.raid.get_or_insert(raid);
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
            self.problems.push(dropped(what));
            return;
        }
        if raid == Raid::DdpRaid1 && arr.hot_spares > 0 {
            self.problems.push(info(
                ProblemCode::DdpReserve,
                format!(
                    "DDP on {} keeps {} drives' reserve capacity instead of {} hot spare{}",
                    arr.name,
                    super::pool_reserve(arr, data),
                    arr.hot_spares,
                    plural_s(arr.hot_spares)
                ),
            ));
        }
        let sizes = self.split_within_limit(site, catalog, a, raid, data);
        let mut first = 1u32;
        let mut on_group: Vec<usize> = Vec::new();
        for (i, &d) in sizes.iter().enumerate() {
            self.groups.push(VolumeGroup {
                name: format!("{}-vg{}", arr.name, i + 1),
                array: a,
                raid,
                disks: (first..first + d).collect(),
                usable_bytes: group_usable_bytes(site, catalog, a, raid, d),
            });
            first += d;
            on_group.push(self.groups.len() - 1);
        }
        // Servers round-robin over the groups (in name order). One group's capacity is shared evenly; over
        // several, every LUN is the smallest share, so no server's store is smaller than the others'.
        let mut count = vec![0u64; on_group.len()];
        for i in 0..on.len() {
            count[i % on_group.len()] += 1;
        }
        let share = |k: usize| self.groups[on_group[k]].usable_bytes / count[k].max(1);
        let even = (0..on_group.len())
            .filter(|&k| count[k] > 0)
            .map(share)
            .min()
            .unwrap_or(0);
        if (0..on_group.len()).any(|k| count[k] > 0 && share(k) > even) {
            let on_each: Vec<String> = (0..on_group.len())
                .map(|k| format!("{} on {}", count[k], self.groups[on_group[k]].name))
                .collect();
            self.problems.push(info(
                ProblemCode::VolumeNote,
                format!(
                    "{} servers share {} groups unevenly ({}): every LUN is the smallest share, {}; the rest is left \
                 for other services",
                    on.len(),
                    on_group.len(),
                    on_each.join(", "),
                    crate::units::fmt_bytes(even as f64)
                ),
            ));
        }
        for (i, &s) in on.iter().enumerate() {
            let k = i % on_group.len();
            self.luns.push(Lun {
                group: on_group[k],
                server: s,
                size_bytes: if on_group.len() > 1 { even } else { share(k) },
            });
        }
    }

    /// A hypervisor host's storage pool (`arrays[].host`): one group at the pool's level over all its data
    /// disks, as the hypervisor built it, with a VM disk (a LUN) of an even share for each guest on it.
    /// It never sets the layout's level: the pool is the guests', whatever the pattern.
    fn host_pool(&mut self, site: &Site, catalog: &Catalog, a: ArrayIdx, on: &[ServerIdx]) {
        let arr = &site.arrays[a];
        let data = arr.disks.saturating_sub(arr.hot_spares);
        let raid = match arr.raid {
            Some(ArrayRaid::Raid0) => Raid::Raid0,
            Some(ArrayRaid::Raid6) => Raid::Raid6,
            _ if data >= 4 => Raid::Raid10,
            _ => Raid::Raid1,
        };
        if data < raid.disk_rule().0 {
            self.problems.push(dropped(format!(
                "host pool {} has {data} data disk{}: too few for {}",
                arr.name,
                plural_s(data),
                raid.as_str()
            )));
            return;
        }
        let usable = group_usable_bytes(site, catalog, a, raid, data);
        self.groups.push(VolumeGroup {
            name: format!("{}-vg1", arr.name),
            array: a,
            raid,
            disks: (1..=data).collect(),
            usable_bytes: usable,
        });
        let g = self.groups.len() - 1;
        for &s in on {
            self.luns.push(Lun {
                group: g,
                server: s,
                size_bytes: usable / on.len().max(1) as u64,
            });
        }
    }

    /// Group sizes for `data` disks of one shared level on array `a`: one group when the model's limit
    /// allows (a DDP pool is always one: it is the user's, used as given), else as few groups as the
    /// limit allows, of near-equal size, with a problem saying so (the limit and its source).
    fn split_within_limit(&mut self, site: &Site, catalog: &Catalog, a: ArrayIdx, raid: Raid, data: u32) -> Vec<u32> {
        let arr = &site.arrays[a];
        let limits = catalog
            .array(&arr.model)
            .map(|m| m.group_limits.clone())
            .unwrap_or_else(|| crate::catalog::GroupLimits::assumed(arr.disks));
        let (max, what) = match raid {
            Raid::Raid6 => (limits.raid6_max_drives, "a RAID 6 volume group"),
            Raid::DdpRaid1 => return vec![data],
            _ => (limits.raid10_max_drives, "a RAID 0 volume group"),
        };
        let n = data.div_ceil(max.max(1)).max(1);
        let sizes: Vec<u32> = (0..n).map(|i| data / n + u32::from(i < data % n)).collect();
        if n > 1 {
            let list: Vec<String> = sizes
                .iter()
                .enumerate()
                .map(|(i, d)| format!("{}-vg{} of {d}", arr.name, i + 1))
                .collect();
            self.problems.push(info(
                ProblemCode::VolumeNote,
                format!(
                    "{}'s {data} data disks are split into {n} {} groups ({}): {what} on the {} holds at most {max} \
                 drives ({})",
                    arr.name,
                    raid.as_str().to_uppercase().replace("RAID", "RAID "),
                    list.join(", "),
                    arr.model,
                    limits.source
                ),
            ));
        }
        sizes
    }
}

/// The layout from its carved volumes: servers without a LUN are not JetStream servers in it; the
/// placement rule is chosen and the meta leader's placement emulated; the id derived from the content.
fn finish(
    site: &Site,
    pattern: Pattern,
    r: u8,
    mut servers: Vec<ServerIdx>,
    c: Carved,
    assets_bare: &[Asset],
) -> Layout {
    let Carved {
        groups,
        mut luns,
        spares,
        mut problems,
        raid: chosen_raid,
    } = c;
    let with_lun: BTreeSet<ServerIdx> = luns.iter().map(|l| l.server).collect();
    servers.retain(|s| with_lun.contains(s));
    luns.sort_by_key(|l| servers.iter().position(|&s| s == l.server));

    let raid = chosen_raid.unwrap_or(match pattern {
        Pattern::P2 | Pattern::P3 => Raid::Raid0,
        Pattern::DdpRaid1 => Raid::DdpRaid1,
        Pattern::Raid6 => Raid::Raid6,
        _ => Raid::Raid1,
    });
    problems.extend(cross_rack(site, &servers, &groups, &luns));
    let placement = choose_rule(site, &servers, assets_bare);
    if pattern == Pattern::P4 {
        // Unsized: each LUN its group's full size, where `size_on_need` starts.
        for l in luns.iter_mut() {
            l.size_bytes = groups[l.group].usable_bytes;
        }
    }
    // The assets are placed when the layout is evaluated (`place`), not here: placing every layout's
    // assets before any is evaluated would hold them all at once.

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
        assets: Vec::new(),
        problems,
    };
    layout.id = layout_id(site, &layout);
    layout
}

/// Size pattern 4's LUNs on what each server will hold (`lun_size::size_on_need`) and give the id its
/// sizes; other patterns are left as they are. The first sizing round reads `whole` (the layout's
/// placement with every LUN its group's full size, as built). When the sizing's last placement was made
/// on the LUNs it settled on, that placement is returned (`Placed`): what `placement` would give, and
/// the needs after each failure it sized for.
pub(super) fn size(site: &Site, layout: &mut Layout, assets_bare: &[Asset], whole: Whole<'_>) -> Option<Placed> {
    if layout.pattern != Pattern::P4 {
        return None;
    }
    let placed = super::lun_size::size_on_need(
        site,
        &layout.servers,
        &layout.groups,
        &mut layout.luns,
        &layout.placement,
        assets_bare,
        whole,
    );
    layout.id = layout_id(site, layout);
    placed
}

/// Where a built layout's assets go under the configuration natsplan emits: every asset of `bare` (the
/// workload's assets under the layout's replica count, `placement::assets`) with its eligible servers and
/// the meta leader's emulated placement (`placement::emulate` on the layout's stores), and the problems
/// of assets that cannot be placed. Every placement of a built layout is made here, but for pattern 4's
/// LUN sizing, which emulates on the LUNs it is sizing (`lun_size`) and hands its last placement on
/// (`Placed`: the same call on the same stores, so the same result, not made twice).
pub fn placement(site: &Site, layout: &Layout, bare: &[Asset]) -> (Vec<Asset>, Vec<Problem>) {
    let stores = super::lun_size::stores_of(site, &layout.servers, &layout.luns);
    emulate(site, &layout.servers, &stores, &layout.placement, bare.to_vec())
}

/// Place a built layout's assets (`placement`), the problems of assets that cannot be placed at the end
/// of `problems`. Call it once per layout.
pub fn place(site: &Site, layout: &mut Layout) {
    let (assets, problems) = placement(site, layout, &super::placement::assets(site, layout.replicas));
    layout.assets = assets;
    layout.problems.extend(problems);
}

/// Servers whose volume is on an array in another rack: that rack's power (and the SAN path to it) is
/// a failure domain of theirs, which survival counts; the layout says so, naming the array's rack.
fn cross_rack(site: &Site, servers: &[ServerIdx], groups: &[VolumeGroup], luns: &[Lun]) -> Vec<Problem> {
    let mut by_array: BTreeMap<ArrayIdx, Vec<ServerIdx>> = BTreeMap::new();
    for l in luns {
        let a = groups[l.group].array;
        if site.arrays[a].rack != site.servers[l.server].rack && servers.contains(&l.server) {
            by_array.entry(a).or_default().push(l.server);
        }
    }
    by_array
        .into_iter()
        .map(|(a, far)| {
            let arr = &site.arrays[a];
            let rack = &site.racks[arr.rack].name;
            let names: Vec<String> = far
                .iter()
                .map(|&s| {
                    format!(
                        "{} (rack {})",
                        site.servers[s].name, site.racks[site.servers[s].rack].name
                    )
                })
                .collect();
            let on: Vec<&str> = luns
                .iter()
                .filter(|l| groups[l.group].array == a)
                .map(|l| site.servers[l.server].name.as_str())
                .collect();
            Problem {
                code: ProblemCode::CrossRackArray,
                severity: Severity::Risk,
                text: format!(
                    "{} use{} array {} in rack {rack}: rack {rack}'s power takes {} volume{} with it, so losing rack \
                     {rack} stops {} of the JetStream servers at once (the NATS-on-E-Series guide: servers spread over \
                     racks on one array \"can still go down if they lose access to the rack where the storage array \
                     is\")",
                    names.join(", "),
                    if far.len() == 1 { "s" } else { "" },
                    arr.name,
                    on.len(),
                    plural_s(on.len()),
                    if on.len() == servers.len() {
                        "all".to_string()
                    } else {
                        format!("{} of {}", on.len(), servers.len())
                    }
                ),
            }
        })
        .collect()
}

fn groups_on(groups: &[VolumeGroup], a: ArrayIdx) -> usize {
    groups.iter().filter(|g| g.array == a).count()
}

/// A server of the selection that could not get a volume: the layout is the servers that did (its own
/// checks judge it); if none did, the plan says why the pattern does not fit the site.
fn dropped(text: String) -> Problem {
    Problem {
        code: ProblemCode::ServerDropped,
        severity: Severity::Info,
        text,
    }
}

fn info(code: ProblemCode, text: String) -> Problem {
    Problem {
        code,
        severity: Severity::Info,
        text,
    }
}

#[cfg(test)]
#[path = "build_tests.rs"]
mod tests;
