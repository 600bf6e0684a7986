//! Where a server's volume can come from under a pattern, and how big volume groups, LUNs and stores are:
//! the floor `enumerate`, `build` and `optimize` all stand on (so none of them imports another's helpers).

use super::Raid;
use crate::catalog::Catalog;
use crate::site::{ArrayIdx, Pattern, RackIdx, RaidChoice, ServerIdx, Site};

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

pub(super) fn storage_of(site: &Site, s: ServerIdx, pattern: Pattern) -> Option<Storage> {
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
pub(super) fn arrays_for(site: &Site, rack: RackIdx, pattern: Pattern) -> impl Iterator<Item = ArrayIdx> + '_ {
    site.rack_arrays(rack)
        .filter(move |&a| compatible(&site.arrays[a], pattern))
}

/// The RAID level of a server's own group under a pattern, for `disks` disks.
pub(super) fn own_raid(pattern: Pattern, disks: u32) -> Raid {
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
pub(super) fn lun_target_bytes(site: &Site, replica_bytes_total: f64, largest_replica: f64, n: usize) -> f64 {
    let per = (replica_bytes_total / n.max(1) as f64).max(largest_replica);
    per / ((1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom))
}

/// The JetStream store size natsplan emits as `max_file_store` for a LUN: less the filesystem reserve and
/// the store headroom kept free.
pub fn store_bytes(site: &Site, lun_bytes: u64) -> u64 {
    (lun_bytes as f64 * (1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom)) as u64
}
