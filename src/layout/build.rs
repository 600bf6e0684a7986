//! Build one candidate layout: a pattern, a default replica count and a server selection become volume
//! groups, LUNs, hot spares, a placement rule and the emulated replica placement. Every choice is made
//! in canonical (name) order, so reordering a site file yields the same layout with the same id.

use super::placement::{choose_rule, emulate};
use super::volumes::{
    arrays_for, by_name, group_usable_bytes, lun_target_bytes, own_raid, storage_of, store_bytes, uses_own_group,
    Storage,
};
use super::*;
use crate::catalog::Catalog;
use crate::site::{ArrayIdx, Pattern, RackIdx, RaidChoice, ServerIdx, Site};
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

/// Build one layout. `hint` is the optimiser's disks per server and servers per array for own-group
/// patterns (otherwise the fewest disks that hold the capacity target, on the emptiest array).
pub(super) fn build(
    site: &Site,
    catalog: &Catalog,
    pattern: Pattern,
    r: u8,
    selection: &[ServerIdx],
    hint: Option<(u32, &[(ArrayIdx, u32)])>,
) -> Layout {
    let disks_hint = hint.map(|h| h.0);
    let mut hinted: BTreeMap<ArrayIdx, u32> = hint.map(|h| h.1.iter().copied().collect()).unwrap_or_default();
    let assets_bare = super::placement::assets(site, r);
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
        let keep_spares = if pattern == Pattern::DdpRaid1 {
            0
        } else {
            arr.hot_spares
        };
        if !internal && keep_spares > 0 {
            c.spares.insert(a, keep_spares);
        }
        if uses_own_group(pattern) || (internal && pattern == Pattern::P3) {
            c.own_groups(site, catalog, pattern, a, on, keep_spares, disks_hint, target);
        } else {
            c.shared_group(site, catalog, pattern, a, on, keep_spares);
        }
    }
    finish(site, pattern, r, servers, c, assets_bare)
}

/// Assign servers to arrays: internal disks first, else the rack's arrays (the optimiser's hint, the
/// emptiest for own groups, round-robin by name for shared ones). Servers with no storage are dropped
/// with a problem saying why.
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
    for &s in servers {
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
    by_array
}

impl Carved {
    /// One group per server on array `a`. Disks per server: the fewest that hold the target, within a
    /// fair share of the array's data disks.
    #[allow(clippy::too_many_arguments)]
    fn own_groups(
        &mut self,
        site: &Site,
        catalog: &Catalog,
        pattern: Pattern,
        a: ArrayIdx,
        on: &[ServerIdx],
        keep_spares: u32,
        disks_hint: Option<u32>,
        target: f64,
    ) {
        let arr = &site.arrays[a];
        let data = arr.disks.saturating_sub(keep_spares);
        let mut next_disk = 1u32;
        let share = data / on.len().max(1) as u32;
        for &s in on {
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
                self.problems.push(dropped(format!(
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
            self.problems.push(info(format!(
                "DDP on {} keeps {} drives' reserve capacity instead of {} hot spare{}",
                arr.name,
                ddp_reserve_disks(data),
                arr.hot_spares,
                plural(arr.hot_spares)
            )));
        }
        let usable = group_usable_bytes(site, catalog, a, raid, data);
        self.groups.push(VolumeGroup {
            name: format!("{}-vg1", arr.name),
            array: a,
            raid,
            disks: (1..1 + data).collect(),
            usable_bytes: usable,
        });
        let g = self.groups.len() - 1;
        let each = usable / on.len().max(1) as u64;
        for &s in on {
            self.luns.push(Lun {
                group: g,
                server: s,
                size_bytes: each,
            });
        }
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
    assets_bare: Vec<Asset>,
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

/// `p1-raid1-r3-Ax2.Bx2.Cx1-3f9a`: pattern, RAID, default replicas, servers per rack (`RACKxN`, racks by
/// name, joined by `.`), and a short hash of the exact servers, volumes and placement (names only, sorted,
/// so input order does not matter). The `x` keeps rack names that end in digits readable (rack R1 with 2
/// servers is `R1x2`; it used to read `R12`): the count is the digits after a segment's last `x`. Every
/// character is a letter, digit, `_`, `.` or `-`, so an id is safe in file names and unquoted in a shell.
pub fn layout_id(site: &Site, l: &Layout) -> String {
    let mut per_rack: BTreeMap<String, usize> = BTreeMap::new();
    for &s in &l.servers {
        *per_rack
            .entry(clean(&site.racks[site.servers[s].rack].name))
            .or_default() += 1;
    }
    let racks: Vec<String> = per_rack.iter().map(|(r, n)| format!("{r}x{n}")).collect();
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

/// The id a layout had before servers per rack were written `RACKxN` (`p1-raid1-r3-A1.B1.C1-fdce` for
/// `p1-raid1-r3-Ax1.Bx1.Cx1-fdce`; the hash is unchanged), so `--layout OLD` can name the new id.
pub fn legacy_layout_id(id: &str) -> String {
    let parts: Vec<&str> = id.split('-').collect();
    if parts.len() < 3 {
        return id.to_string();
    }
    // The rack segment is the one before the hash (the last).
    let i = parts.len() - 2;
    let racks: Vec<String> = parts[i]
        .split('.')
        .map(|seg| match seg.rfind('x') {
            Some(x) if x > 0 && x + 1 < seg.len() && seg[x + 1..].bytes().all(|b| b.is_ascii_digit()) => {
                format!("{}{}", &seg[..x], &seg[x + 1..])
            }
            _ => seg.to_string(),
        })
        .collect();
    let mut out: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    out[i] = racks.join(".");
    out.join("-")
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

#[cfg(test)]
mod tests {
    use super::legacy_layout_id;

    #[test]
    fn legacy_ids_drop_the_x_between_rack_and_count() {
        assert_eq!(
            legacy_layout_id("p1-raid1-r3-Ax1.Bx1.Cx1-fdce"),
            "p1-raid1-r3-A1.B1.C1-fdce"
        );
        assert_eq!(
            legacy_layout_id("p1-raid1-r4-R0x2.R1x2.R2x1-1a2b"),
            "p1-raid1-r4-R02.R12.R21-1a2b"
        );
        assert_eq!(
            legacy_layout_id("ddp-ddp-raid1-r3-xx3-bb5c"),
            "ddp-ddp-raid1-r3-x3-bb5c"
        );
        assert_eq!(legacy_layout_id("p1-raid1-r3-none-0000"), "p1-raid1-r3-none-0000");
    }
}
