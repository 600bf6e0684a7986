//! SSD endurance: drive writes per day (DWPD) each disk of a layout takes from the workload, against the
//! disk model's rating (`endurance_dwpd`), and the years until the rating is used up.
//!
//! Per JetStream server, the bytes written to its store per second are the client writes of every asset it
//! holds a replica of (expected placement; payload, subject and the 30 B record overhead, as capacity
//! counts them), times
//! * 2 for a replicated (R > 1) asset: each entry goes to its RAFT group's write-ahead log — a file store
//!   of its own under `$SYS/_js_/` — before the stream's store applies it (nats-server
//!   `jetstream_cluster.go`, `createRaftGroup`, "filestore WAL"; v2.15.0-dev @1787eee);
//! * 1 + `KV_COMPACTION_REWRITE` for KV buckets: every put supersedes an older revision, and the file store
//!   rewrites blocks whose messages are mostly deleted (`compact`), so a bucket's bytes are written about
//!   twice over their life (ASSUMPTION: no public figure; streams with age or size limits drop whole blocks
//!   and rewrite nothing).
//!
//! Per volume group, RAID multiplies them: RAID 0 ×1, RAID 1/10 and DDP RAID 1 ×2, RAID 6 ×n/(n−2) for
//! full-stripe appends (ASSUMPTION: the array's cache coalesces NATS's appends; with `sync_interval:
//! always` each fsync may be a partial stripe, so ×3), spread evenly over the group's disks. Growth: the
//! rate at the end of the planning horizon. Years to wear-out = rating × `RATING_YEARS` ÷ predicted DWPD.

use super::evaluate::Model;
use super::recovery::asset_in_bytes;
use crate::catalog::Catalog;
use crate::layout::{AssetKind, Raid};
use crate::units::{SyncMode, YEAR_S};
use serde::Serialize;

/// Years an SSD's DWPD rating covers: enterprise ratings are stated over a 5-year warranty.
pub const RATING_YEARS: f64 = 5.0;

/// KV compaction: extra bytes rewritten per byte put (ASSUMPTION, see the module doc).
pub const KV_COMPACTION_REWRITE: f64 = 1.0;

/// One volume group's disks.
#[derive(Debug, Clone, Serialize)]
pub struct GroupWear {
    pub group: String,
    pub disk_model: String,
    /// Bytes written per second to each disk of the group (after RAID).
    pub disk_write_bytes_per_s: f64,
    /// Predicted drive writes per day at the end of the planning horizon.
    pub dwpd: f64,
    /// The model's rating; None for models without one.
    pub rated_dwpd: Option<f64>,
    /// Years until the rated writes are used up (None without a rating or without writes).
    pub years_to_wear_out: Option<f64>,
}

/// The layout's endurance figures.
#[derive(Debug, Clone, Serialize)]
pub struct Endurance {
    pub groups: Vec<GroupWear>,
    /// The group that wears out first, and when.
    pub first_worn: Option<String>,
    pub years_to_wear_out: Option<f64>,
    /// Whether that is within the planning horizon.
    pub within_horizon: bool,
    pub assumptions: Vec<String>,
}

/// Bytes per second written to each site server's store (indexed by site server), in one pass over the
/// assets (a pass per server was servers × assets). Each server's sum adds its assets in plan order, as
/// a per-server sum would.
fn server_write_bytes_per_s(model: &Model) -> Vec<f64> {
    let site = model.site;
    let specs = crate::layout::lookup::Specs::new(site);
    let zero: f64 = std::iter::empty::<f64>().sum();
    let mut out = vec![zero; site.servers.len()];
    for a in model.layout.assets.iter().filter(|a| a.kind != AssetKind::Consumer) {
        let raft = if a.replicas > 1 { 2.0 } else { 1.0 };
        let compaction = if a.kind == AssetKind::Kv {
            1.0 + KV_COMPACTION_REWRITE
        } else {
            1.0
        };
        let w = asset_in_bytes(&specs, a) * raft * compaction;
        let mut seen: Vec<usize> = Vec::with_capacity(a.expected.len());
        for &s in &a.expected {
            if s < out.len() && !seen.contains(&s) {
                seen.push(s);
                out[s] += w;
            }
        }
    }
    out
}

/// RAID write amplification of a group of `n` disks.
fn raid_factor(raid: Raid, n: usize, sync: SyncMode) -> f64 {
    match raid {
        Raid::Raid0 => 1.0,
        Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => 2.0,
        Raid::Raid6 if sync == SyncMode::Always => 3.0,
        Raid::Raid6 => n as f64 / (n as f64 - 2.0).max(1.0),
    }
}

/// Endurance of every SSD group of the layout.
pub fn endurance(model: &Model, catalog: &Catalog) -> Endurance {
    let site = model.site;
    let layout = model.layout;
    let horizon_years = site.policy.horizon_s / YEAR_S;
    let growth = (1.0 + site.policy.growth.max(0.0)).powf(horizon_years.max(0.0));
    let mut groups = Vec::new();
    let written = server_write_bytes_per_s(model);
    for (g, grp) in layout.groups.iter().enumerate() {
        let arr = &site.arrays[grp.array];
        let dm = catalog.disk(&arr.disk_model);
        // SSDs only: NL-SAS HDDs and virtual disks have no write rating.
        if !dm.is_some_and(|d| d.kind.is_ssd()) || grp.disks.is_empty() {
            continue;
        }
        let host: f64 = model
            .group_servers(g)
            .iter()
            .map(|&s| written.get(s).copied().unwrap_or(0.0))
            .sum();
        let per_disk = host * growth * raid_factor(grp.raid, grp.disks.len(), site.nats.sync) / grp.disks.len() as f64;
        let capacity = arr.disk_size_bytes.or(dm.map(|d| d.capacity_bytes)).unwrap_or(0) as f64;
        let dwpd = if capacity > 0.0 {
            per_disk * 86_400.0 / capacity
        } else {
            0.0
        };
        let rated = dm.and_then(|d| d.endurance_dwpd);
        let years = rated.filter(|_| dwpd > 0.0).map(|r| r * RATING_YEARS / dwpd);
        groups.push(GroupWear {
            group: grp.name.clone(),
            disk_model: arr.disk_model.clone(),
            disk_write_bytes_per_s: per_disk,
            dwpd,
            rated_dwpd: rated,
            years_to_wear_out: years,
        });
    }
    let first = groups
        .iter()
        .filter_map(|g| g.years_to_wear_out.map(|y| (g.group.clone(), y)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    Endurance {
        within_horizon: first.as_ref().is_some_and(|f| f.1 < horizon_years),
        first_worn: first.as_ref().map(|f| f.0.clone()),
        years_to_wear_out: first.map(|f| f.1),
        groups,
        assumptions: vec![
            "store writes = client writes × 2 for replicated assets (RAFT write-ahead log, nats-server \
             createRaftGroup) × 2 for KV (compaction rewrites; assumption)"
                .into(),
            "RAID 1/10 ×2, RAID 6 ×n/(n−2) for full-stripe appends (×3 with sync always; assumption), spread \
             evenly over the group's disks; the workload's rate at the end of the horizon"
                .into(),
            format!("SSD ratings are drive writes per day over {RATING_YEARS:.0} years (enterprise warranty)"),
        ],
    }
}
