//! Where a server's volume can come from under a pattern, and how big volume groups, LUNs and stores are:
//! the floor `enumerate`, `build` and `optimize` all stand on (so none of them imports another's helpers).

use super::Raid;
use crate::catalog::Catalog;
use crate::site::{ArrayIdx, ArrayRaid, Pattern, RackIdx, ServerIdx, Site};
use crate::text::plural_s;

/// Names sorted case-insensitively, then by index for stability.
pub(super) fn by_name<'a, T>(items: impl Iterator<Item = (usize, &'a T)>, name: impl Fn(&T) -> &str) -> Vec<usize>
where
    T: 'a,
{
    let mut v: Vec<(String, usize)> = items.map(|(i, x)| (name(x).to_ascii_lowercase(), i)).collect();
    v.sort();
    v.into_iter().map(|(_, i)| i).collect()
}

/// Where a server's volume can come from under a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Storage {
    Internal(ArrayIdx),
    Shared,
}

pub(super) fn uses_own_group(p: Pattern) -> bool {
    matches!(p, Pattern::P1 | Pattern::P2 | Pattern::P4)
}

/// The storage pool of the hypervisor host a guest runs on (`arrays[].host` = its `host:`), if the site
/// lists one: the guest's VM disk lives there under every pattern, as a server's internal disks do.
pub(super) fn host_pool(site: &Site, s: ServerIdx) -> Option<ArrayIdx> {
    let srv = &site.servers[s];
    let h = srv.host.as_deref()?;
    site.rack_arrays(srv.rack).find(|&a| {
        site.arrays[a]
            .host
            .as_deref()
            .is_some_and(|x| x.eq_ignore_ascii_case(h))
    })
}

/// Whether a rack has an array its servers can share (a host's pool serves only that host's guests).
pub(super) fn has_shared_arrays(site: &Site, rack: RackIdx) -> bool {
    site.rack_arrays(rack).any(|a| site.arrays[a].host.is_none())
}

pub(super) fn storage_of(site: &Site, s: ServerIdx, pattern: Pattern) -> Option<Storage> {
    let srv = &site.servers[s];
    // A guest's VM disk on its host's pool is fixed storage at the pool's level (like an existing DDP
    // pool): it serves in mixed layouts, where each server gets what its storage offers. One-pattern
    // layouts give the guest a LUN on an array of its rack instead, if there is one.
    if let (None, Pattern::Mixed, Some(a)) = (srv.internal, pattern, host_pool(site, s)) {
        return Some(Storage::Internal(a));
    }
    if let (Some(a), Pattern::Mixed) = (srv.internal, pattern) {
        return array_pattern(site, a).map(|_| Storage::Internal(a));
    }
    if let Some(a) = srv.internal {
        // Internal disks give a server its own group; shared-stripe patterns treat them the same way
        // (a stripe over one server's disks is pattern 2 for that server). A level the site fixes with
        // `raid:` is kept as on an array (`compatible`): `raid: raid1` internal disks are never striped
        // by patterns 2 and 3, `raid: raid0` ones never mirrored by 1 and 4, and `raid: raid6` ones serve
        // as a RAID 6 group of their own in mixed layouts only.
        if (uses_own_group(pattern) || pattern == Pattern::P3) && compatible(&site.arrays[a], pattern) {
            return Some(Storage::Internal(a));
        }
    }
    // A server with internal disks that the pattern does not use only takes an array of its own rack.
    let far_ok = srv.internal.is_none();
    if arrays_for(site, srv.rack, pattern).next().is_some()
        || far_ok && !reachable_arrays(site, srv.rack, pattern).is_empty()
    {
        Some(Storage::Shared)
    } else {
        None
    }
}

/// The shared arrays a server in `rack` takes a volume from under a pattern, in name order: its own
/// rack's, or — when its rack has no array at all — the other racks' (a SAN path to another rack: that
/// array's rack becomes a failure domain of the server, which survival counts and the layout says).
pub(super) fn reachable_arrays(site: &Site, rack: RackIdx, pattern: Pattern) -> Vec<ArrayIdx> {
    let own = by_name(arrays_for(site, rack, pattern).map(|a| (a, &site.arrays[a])), |a| {
        &a.name
    });
    if !own.is_empty() || has_shared_arrays(site, rack) {
        return own;
    }
    let others = (0..site.racks.len())
        .filter(|&r| r != rack)
        .flat_map(|r| arrays_for(site, r, pattern))
        .map(|a| (a, &site.arrays[a]));
    by_name(others, |a| &a.name)
}

/// The patterns a site's layouts may use: `policy.patterns`, plus the baselines when asked for.
pub(super) fn allowed_patterns(site: &Site) -> Vec<Pattern> {
    let mut v = site.policy.patterns.clone();
    if site.policy.baselines {
        for b in [Pattern::DdpRaid1, Pattern::Raid6] {
            if !v.contains(&b) {
                v.push(b);
            }
        }
    }
    v
}

/// What one array (or a server's internal disks) gives its servers in a mixed layout: what its fixed
/// `raid:` level allows (an existing DDP pool RAID 1 volumes on it, used as given; `raid6` a volume on a
/// RAID 6 group, of its own on internal disks; `raid0` a RAID 0 group per server; `raid1`/`raid10` an own
/// mirrored group), or else the
/// first own-group pattern the policy allows (1, then 4, then 2). None when the policy allows nothing it
/// can serve.
pub(super) fn array_pattern(site: &Site, a: ArrayIdx) -> Option<Pattern> {
    let arr = &site.arrays[a];
    let allowed = allowed_patterns(site);
    let ok = |p: Pattern| allowed.contains(&p);
    let pick = |ps: &[Pattern]| ps.iter().copied().find(|&p| ok(p));

    match arr.raid {
        Some(ArrayRaid::Ddp) => pick(&[Pattern::DdpRaid1]),
        // On internal disks: the server's own RAID 6 group over its data disks (`build` carves it as the
        // RAID 6 baseline carves an array's), never a mirror the site did not ask for.
        Some(ArrayRaid::Raid6) => pick(&[Pattern::Raid6]),
        Some(ArrayRaid::Raid0) => pick(&[Pattern::P2]),
        Some(ArrayRaid::Raid1) | Some(ArrayRaid::Raid10) => pick(&[Pattern::P1, Pattern::P4]),
        _ => pick(&[Pattern::P1, Pattern::P4, Pattern::P2]),
    }
}

/// Whether, in a mixed layout, an unfixed shared array (no `raid:`) whose servers get mirrored groups may
/// give a server a RAID 0 disk when there are not disks enough for a pair each (the choice per server:
/// pattern 2 must be allowed). An array with a fixed level serves every server at that level.
pub(super) fn mixed_raid0_fill(site: &Site, a: ArrayIdx, pattern: Pattern) -> bool {
    let arr = &site.arrays[a];
    pattern == Pattern::Mixed
        && arr.raid.is_none()
        && arr.owner.is_none()
        && arr.host.is_none()
        && matches!(array_pattern(site, a), Some(Pattern::P1 | Pattern::P4))
        && allowed_patterns(site).contains(&Pattern::P2)
}

/// Whether the site's storage is heterogeneous: its arrays and internal disks do not all serve the same
/// pattern, so no one-pattern layout can use all of them and a mixed layout is worth building. A host's
/// pool serves only in mixed layouts, so a site with one always is.
pub fn is_heterogeneous(site: &Site) -> bool {
    // Internal disks fixed at RAID 6 serve in mixed layouts only too (no one-pattern layout gives a server
    // a RAID 6 group of its own).
    if site
        .arrays
        .iter()
        .any(|a| a.host.is_some() || (a.owner.is_some() && a.raid == Some(ArrayRaid::Raid6)))
    {
        return true;
    }
    // A host's pool (VM disks for its guests) is a kind of its own: `None` here.
    let mut seen: Vec<Option<Pattern>> = (0..site.arrays.len())
        .filter_map(|a| match site.arrays[a].host {
            Some(_) => Some(None),
            None => array_pattern(site, a).map(Some),
        })
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len() > 1
}

/// Whether an array whose RAID the user already fixed (`arrays[].raid`) can serve a pattern.
fn compatible(arr: &crate::site::Array, pattern: Pattern) -> bool {
    if pattern == Pattern::Mixed {
        // Each array serves its own pattern (`array_pattern`); the caller drops those that serve none.
        return true;
    }
    match arr.raid {
        None => true,
        Some(ArrayRaid::Raid0) => matches!(pattern, Pattern::P2 | Pattern::P3),
        Some(ArrayRaid::Raid1) | Some(ArrayRaid::Raid10) => matches!(pattern, Pattern::P1 | Pattern::P4),
        Some(ArrayRaid::Raid6) => pattern == Pattern::Raid6,
        Some(ArrayRaid::Ddp) => pattern == Pattern::DdpRaid1,
    }
}

/// A rack's shared arrays that can serve a pattern.
pub(super) fn arrays_for(site: &Site, rack: RackIdx, pattern: Pattern) -> impl Iterator<Item = ArrayIdx> + '_ {
    site.rack_arrays(rack).filter(move |&a| {
        site.arrays[a].host.is_none()
            && compatible(&site.arrays[a], pattern)
            && (pattern != Pattern::Mixed || array_pattern(site, a).is_some())
    })
}

/// The pattern an array's groups follow in a layout of `pattern`: the layout's own, or in a mixed
/// layout the array's (`array_pattern`).
pub(super) fn effective(site: &Site, a: ArrayIdx, pattern: Pattern) -> Pattern {
    if pattern == Pattern::Mixed {
        array_pattern(site, a).unwrap_or(Pattern::P1)
    } else {
        pattern
    }
}

/// The RAID level of a server's own group under a pattern, for `disks` disks.
pub(super) fn own_raid(pattern: Pattern, disks: u32) -> Raid {
    match pattern {
        Pattern::P2 | Pattern::P3 => Raid::Raid0,
        Pattern::Raid6 => Raid::Raid6,
        Pattern::DdpRaid1 => Raid::DdpRaid1,
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
    let efficiency = match raid {
        // The pool's own preservation capacity (the site's, or SANtricity's default).
        Raid::DdpRaid1 => {
            let n = disks.max(1) as f64;
            0.5 * ((n - super::pool_reserve(arr, disks) as f64) / n).max(0.0)
        }
        _ => raid.efficiency(disks),
    };
    let bytes = disks as f64 * disk_bytes * efficiency * (1.0 - wear);
    bytes.max(0.0) as u64
}

/// Bytes a server's store must hold on average for this selection, with the headroom natsplan keeps
/// (filesystem reserve, store headroom); the size below which a LUN is too small.
pub(super) fn lun_target_bytes(site: &Site, replica_bytes_total: f64, largest_replica: f64, n: usize) -> f64 {
    let per = (replica_bytes_total / n.max(1) as f64).max(largest_replica);
    per / ((1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom))
}

/// The JetStream store size natsplan emits as `max_file_store` for a LUN: less the filesystem reserve and
/// the store headroom kept free.
pub fn store_bytes(site: &Site, lun_bytes: u64) -> u64 {
    (lun_bytes as f64 * (1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom)) as u64
}

/// What a JetStream server's store sits on (the JSON's `servers[].volume_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VolumeKind {
    /// A LUN on a volume group of a shared array: an own RAID 1/10/0 group, a shared stripe, a RAID 6 group.
    Lun,
    /// A RAID 1 volume on a DDP pool.
    PoolVolume,
    /// The server's internal disks.
    Internal,
    /// A VM disk on its hypervisor host's storage pool (a guest's own disks, or a LUN on the host's
    /// `pool` array): it fails with the host and its pool.
    VmDisk,
}

/// A JetStream server's volume in one line, for the report, emit's READMEs, the lab's record and the
/// drawing: which LUN (or volume, or disks) from which array or pool, its level, drives and size, and
/// the path when the array stands in another rack.
pub fn describe_volume(site: &Site, layout: &super::Layout, s: ServerIdx) -> Option<(VolumeKind, String)> {
    let lun = layout.lun_of(s)?;
    let g = layout.groups.get(lun.group)?;
    let arr = &site.arrays[g.array];
    let srv = &site.servers[s];
    let size = crate::units::fmt_bytes(lun.size_bytes as f64);
    let level = g
        .raid
        .as_str()
        .to_uppercase()
        .replace("RAID", "RAID ")
        .replace("DDP-RAID ", "RAID ");
    let drives = format!("{} drive{}", g.disks.len(), plural_s(g.disks.len()));
    let shared = layout.luns.iter().filter(|l| l.group == lun.group).count();
    if let Some(h) = arr.host.as_deref() {
        return Some((
            VolumeKind::VmDisk,
            format!(
                "VM disk of {size} on host {h}'s pool {} ({level}, {drives}, shared by {shared} guest{})",
                arr.name,
                plural_s(shared)
            ),
        ));
    }
    if arr.owner == Some(s) {
        return Some(match srv.host.as_deref() {
            Some(h) => (
                VolumeKind::VmDisk,
                format!(
                    "VM disk of {size} on host {h}'s storage pool ({}, {level}, {drives})",
                    g.name
                ),
            ),
            None => (
                VolumeKind::Internal,
                format!("its internal disks: {size}, {} ({level}, {drives})", g.name),
            ),
        });
    }
    let far = if arr.rack != srv.rack {
        format!(" over the SAN from rack {}", site.racks[arr.rack].name)
    } else {
        String::new()
    };
    Some(if g.raid == Raid::DdpRaid1 {
        (
            VolumeKind::PoolVolume,
            format!(
                "RAID 1 volume of {size} on DDP pool {} ({drives}) of array {}{far}",
                g.name, arr.name
            ),
        )
    } else {
        let of = if shared > 1 {
            format!(
                ", shared with {} other server{}",
                shared - 1,
                if shared == 2 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        (
            VolumeKind::Lun,
            format!(
                "LUN of {size} on volume group {} ({level}, {drives}{of}) of array {}{far}",
                g.name, arr.name
            ),
        )
    })
}
