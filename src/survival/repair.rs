//! How long the hardware takes to make whole what failed (issue 31): a disk's rebuild by medium, RAID level
//! and pool, a destroyed group's re-creation (the drives it needs against the spares there are), and a
//! destroyed store's way back (new volume, filesystem, peer-remove, catch-up). Every figure comes from the
//! catalog (`models/failure_rates.yaml`), which names its source or marks it an assumption; rebuild rates
//! carry the catalog's band. The yearly components and whatif's recovery steps both read these, so the
//! exposure windows behind the yearly figures are the times whatif prints.

use super::evaluate::Model;
use super::recovery::repair_s;
use crate::catalog::{Catalog, DiskKind};
use crate::layout::Raid;
use crate::site::Site;

/// The share of an array controller's read bandwidth a rebuild gets while the array serves its hosts.
/// ASSUMPTION: SANtricity publishes no figure (its docs say a degraded volume group loses "up to 40 %" of
/// its performance and that reconstruction "is limited by the IOPs of the drive"); a tenth is assumed, so
/// the controller bounds a rebuild only when it must read many drives (a wide RAID 6 group).
pub const REBUILD_CONTROLLER_SHARE: f64 = 0.1;

/// One disk's rebuild (or a pool's reconstruction of one drive) while serving.
#[derive(Debug, Clone, PartialEq)]
pub struct Rebuild {
    /// Nominal seconds, and the band from the catalog's range of rates.
    pub seconds: f64,
    pub low_s: f64,
    pub high_s: f64,
    /// The catalog key of the rate used (`rebuild_rate`, `hdd_rebuild_rate`, `pool_rebuild_rate`, …).
    pub rate_key: &'static str,
    /// Bytes per second written (nominal).
    pub rate_bytes_per_s: f64,
    /// Drives read per byte rebuilt: 1 for a mirror, n − 2 for a RAID 6 group, 8 for a pool's RAID 6.
    pub drives_read: f64,
    /// The controller's reads bound it, not the target's writes.
    pub controller_bound: bool,
}

impl Rebuild {
    /// "at 47.7 MiB/s, hdd_rebuild_rate; band 3.7 d–8.8 d" for whatif's steps.
    pub fn describe(&self) -> String {
        let by = if self.controller_bound {
            format!(
                "bound by the controller reading {:.0} drives at a tenth of its bandwidth, an assumption",
                self.drives_read
            )
        } else {
            format!(
                "at {}/s, {}",
                crate::units::fmt_bytes(self.rate_bytes_per_s),
                self.rate_key
            )
        };
        if self.high_s <= self.low_s {
            // A site's own rate: its figure, no band.
            return format!("{by}, the site's figure");
        }
        format!(
            "{by}; band {}–{}",
            crate::units::fmt_secs(self.low_s),
            crate::units::fmt_secs(self.high_s)
        )
    }
}

/// Whether a group is a DDP pool (its volumes are pieces spread over every drive of the pool).
pub fn is_pool(raid: Raid) -> bool {
    matches!(raid, Raid::DdpRaid1)
}

/// The rebuild of one failed disk of volume group (or pool) `g` of the layout: the larger of the target's
/// write (the medium's rebuild rate: SSD or HDD, volume group or pool) and the controller's reads of the
/// drives the level needs (one for a mirror, n − 2 for RAID 6) at `REBUILD_CONTROLLER_SHARE` of its read
/// bandwidth. A site's override of a rate has no band (the site knows its figure).
pub fn disk_rebuild(site: &Site, catalog: &Catalog, layout: &crate::layout::Layout, g: usize) -> Rebuild {
    let grp = &layout.groups[g];
    let arr = &site.arrays[grp.array];
    let dm = catalog.disk(&arr.disk_model);
    let disk_bytes = arr.disk_size_bytes.or(dm.map(|d| d.capacity_bytes)).unwrap_or(0) as f64;
    let hdd = dm.is_some_and(|d| d.kind == DiskKind::NlSas);
    let pool = is_pool(grp.raid);
    let rate_key = match (pool, hdd) {
        (false, false) => "rebuild_rate",
        (false, true) => "hdd_rebuild_rate",
        (true, false) => "pool_rebuild_rate",
        (true, true) => "hdd_pool_rebuild_rate",
    };
    let rate = repair_s(site, catalog, rate_key).max(1.0);
    let overridden = site.repair_times.iter().any(|(k, _)| k == rate_key);
    let (lo_rate, hi_rate) = if overridden {
        (rate, rate)
    } else {
        catalog.failures.repair_band(rate_key)
    };
    let n = grp.disks.len() as f64;
    // A mirror (and a pool's RAID 1 pieces) copies one drive; RAID 6 reads n − 2 of the survivors.
    let drives_read = match grp.raid {
        Raid::Raid6 => (n - 2.0).max(1.0),
        _ => 1.0,
    };
    let read_bw = catalog
        .array(&arr.model)
        .map(|m| m.read_bw_bytes_per_s)
        .unwrap_or(f64::INFINITY)
        * REBUILD_CONTROLLER_SHARE;
    let controller_s = drives_read * disk_bytes / read_bw.max(1.0);
    let at = |r: f64| (disk_bytes / r.max(1.0)).max(controller_s);
    Rebuild {
        seconds: at(rate),
        // A faster rate is the short end of the band.
        low_s: at(hi_rate.max(rate)),
        high_s: at(lo_rate.min(rate)),
        rate_key,
        rate_bytes_per_s: rate,
        drives_read,
        controller_bound: controller_s > disk_bytes / rate,
    }
}

/// Drives one destroyed group needs to be built again: the failed ones (the survivors are whole and are
/// reused once the dead group is deleted). A pool's volumes are re-created on the pool itself: no drive.
pub fn drives_to_recreate(raid: Raid, failed: u32) -> u32 {
    if is_pool(raid) {
        0
    } else {
        failed
    }
}

/// The mean time a destroyed group's stores take to come back, for the yearly chain: the operator, the
/// replacement drives when the array keeps fewer hot spares than the group's minimal destroying failures
/// need, a new group and volume (seed 000: 30 s on a spare; bigger redundant groups are assumed usable at
/// once with background initialisation), a filesystem, peer-remove, and the slowest member's catch-up.
pub fn store_rebuild_s(model: &Model, catalog: &Catalog, g: usize) -> f64 {
    let site = model.site;
    let layout = model.layout;
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
    let grp = &layout.groups[g];
    let needed = drives_to_recreate(grp.raid, model.disks_to_destroy(g));
    let spares = layout
        .spares
        .iter()
        .find(|(a, _)| *a == grp.array)
        .map_or(0, |(_, n)| *n);
    let wait = if needed > spares { rep("disk_replace") } else { 0.0 };
    let catch_up = model
        .group_servers(g)
        .iter()
        .map(|&s| super::recovery::catch_up_s(model, catalog, s))
        .fold(0.0, f64::max);
    rep("operator_response") + wait + rep("raid0_new_group") + rep("filesystem") + rep("peer_remove") + catch_up
}
