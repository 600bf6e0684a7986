//! The storage under one server's JetStream store: RAID data disks, write penalty, group bandwidth and IOPS,
//! and the volume's write latency for the fsync terms (seed 000's fio figures, scaled through the catalog).

use super::{Terms, REF_ARRAY};
use crate::catalog::{ArrayModel, Catalog, DiskModel};
use crate::layout::Raid;

use super::REF_DISK;

/// The storage under one server's JetStream store.
#[derive(Debug, Clone)]
pub struct VolumeSpec {
    pub array: ArrayModel,
    pub disk: DiskModel,
    pub raid: Raid,
    /// Disks in the volume group.
    pub disks: u32,
    /// The array's write cache is enabled for the volume (and the array has a mirrored one).
    pub write_cache: bool,
    /// LUNs of this layout's servers on the same group (seed 000 ran 3); they share its disks.
    pub luns_on_group: u32,
}

impl VolumeSpec {
    /// Seed 000's lab volume: an EF600 2-disk group of the given RAID level, write cache off, 3 LUNs.
    pub fn seed000(catalog: &Catalog, raid: Raid, luns_on_group: u32) -> VolumeSpec {
        VolumeSpec {
            array: catalog
                .array(REF_ARRAY)
                .cloned()
                .unwrap_or_else(|| catalog.arrays[0].clone()),
            disk: catalog
                .disk(REF_DISK)
                .cloned()
                .unwrap_or_else(|| catalog.disks[0].clone()),
            raid,
            disks: 2,
            write_cache: false,
            luns_on_group,
        }
    }

    /// Disks whose bandwidth one write stream gets: all of a RAID 0 stripe, half a mirror, n−2 of RAID 6.
    pub fn data_disks(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        match self.raid {
            Raid::Raid0 => n,
            Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => (n / 2.0).max(1.0),
            Raid::Raid6 => (n - 2.0).max(1.0),
        }
    }

    /// Back-end writes per front-end write without a cache to coalesce them (the RAID write penalty).
    pub fn write_penalty(&self) -> f64 {
        match self.raid {
            Raid::Raid0 => 1.0,
            Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => 2.0,
            Raid::Raid6 => 6.0,
        }
    }

    /// Disks an fsync's bytes spread over: the data disks, or with the mirrored write cache on, the whole
    /// group (the cache acknowledges at once and destages full stripes later, hiding the mirror's second
    /// copy as it hides its latency).
    pub fn sync_disks(&self) -> f64 {
        if self.cache_on() {
            self.disks.max(1) as f64
        } else {
            self.data_disks()
        }
    }

    fn cache_on(&self) -> bool {
        self.write_cache && self.array.mirrored_write_cache
    }

    /// Payload bytes/s the whole group absorbs: every disk's bandwidth over the write penalty (a full-stripe
    /// cache flush turns RAID 6's penalty into n/(n−2)), capped by the array's controllers.
    pub fn group_write_bytes_per_s(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        let raw = n * self.disk.write_bw_bytes_per_s;
        let penalty = if self.cache_on() && self.raid == Raid::Raid6 {
            n / (n - 2.0).max(1.0)
        } else {
            self.write_penalty()
        };
        (raw / penalty).min(self.array.write_bw_bytes_per_s)
    }

    /// Small-write IOPS the group absorbs, with the RAID write penalty, capped by the array.
    pub fn group_write_iops(&self) -> f64 {
        let n = self.disks.max(1) as f64;
        (n * self.disk.write_iops / self.write_penalty()).min(self.array.write_iops)
    }
}

/// Volume write latency (seconds) for the model's fsync terms, and whether it was measured (seed 000's
/// EF600 NVMe volumes without write cache) or scaled through the catalog.
pub fn volume_write_latency_s(terms: &Terms, v: &VolumeSpec, catalog_ref_disk_us: f64) -> (f64, bool) {
    let fio = &terms.fio;
    let measured_hw = v.array.name.eq_ignore_ascii_case(REF_ARRAY) && v.disk.kind == crate::catalog::DiskKind::Nvme;
    let disk_s = v.disk.write_latency_us / 1e6;
    let ref_disk_s = catalog_ref_disk_us / 1e6;
    // The array's own path (controller, fabric) measured as RAID 0 latency minus the device's. Internal
    // disks behind an HBA have no controller hop of that size: assume 20 µs.
    let controller_s = if v.array.controllers >= 2 {
        (fio.raid0_write_s - ref_disk_s).max(10e-6)
    } else {
        20e-6
    };
    let mirror_extra = fio.raid1_write_s - fio.raid0_write_s;
    if v.write_cache && v.array.mirrored_write_cache {
        // Seed 000 Appendix C: with the cache on, writes are acknowledged from the mirrored cache and R0 and
        // R1 "would see similar latency": the measured RAID 0 figure is the planning value (not measured).
        return (fio.raid0_write_s, false);
    }
    let lat = match v.raid {
        Raid::Raid0 => controller_s + disk_s,
        Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => {
            controller_s + disk_s + mirror_extra + 0.2 * (disk_s - ref_disk_s).max(0.0)
        }
        // Read-modify-write: two reads, then data and both parities.
        Raid::Raid6 => controller_s + 3.0 * disk_s + 2.0 * mirror_extra,
    };
    let calibrated = measured_hw && matches!(v.raid, Raid::Raid0 | Raid::Raid1);
    (lat, calibrated)
}
