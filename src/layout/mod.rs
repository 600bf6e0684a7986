//! Layouts: the planner's choices for a site — which servers run JetStream, their volume groups and
//! LUNs, hot spares kept, the default replica count, and where every stream's replicas may go under the
//! configuration natsplan will emit. Layout proposes candidates (`Enumerate`, `Candidate`) and places
//! them (`placement`), and nothing else: evaluation lives in `survival` (what it tolerates), `perf` (how
//! fast) and `plan` (capacity, verdict, rank: `plan::evaluator`, which owns the caches of placements and
//! of needs after failures).

mod after_failure;
mod build;
mod enumerate;
mod failure_needs;
mod id;
pub mod lookup;
mod lun_size;
pub mod optimize;
pub mod optimize_mixed;
pub mod placement;
pub mod sizing;
mod volumes;

pub use after_failure::{rebuild_lost, touched_by, Packed, Slots};
pub use build::{place, placement};
pub use failure_needs::FailureNeeds;
pub use id::{layout_id, legacy_layout_id, short_layout_id, SHORT_ID_RACKS};
pub use lun_size::{Placed, Whole};
pub use placement::BareAssets;
pub use volumes::{describe_volume, group_usable_bytes, store_bytes, VolumeKind};

use crate::site::{ArrayIdx, Pattern, ServerIdx, Site};
use serde::Serialize;

/// Every candidate layout of a site: the one way to ask for them.
/// `Enumerate::new(site, catalog)`, optionally `.assets(bare)` (the workload's assets per replica count,
/// built once by the caller, who places with the same), then one of
/// - `.candidates()`: every candidate as built, in the enumeration's order, not sized or placed yet: the
///   caller sizes each (`Candidate::size`) where it evaluates it, so memory holds the per-asset placement
///   of the layouts being evaluated, not of all of them (plan's evaluator does);
/// - `.unplaced()`: every layout sized, `assets` empty (`place` gives them and their placement problems);
/// - `.placed()`: every layout with its assets placed (`place`).
#[derive(Clone, Copy)]
pub struct Enumerate<'a> {
    site: &'a Site,
    catalog: &'a crate::catalog::Catalog,
    bare: Option<&'a BareAssets>,
}

impl<'a> Enumerate<'a> {
    pub fn new(site: &'a Site, catalog: &'a crate::catalog::Catalog) -> Enumerate<'a> {
        Enumerate {
            site,
            catalog,
            bare: None,
        }
    }

    /// Build the layouts from `bare` (`placement` places them from the same); without it, the
    /// workload's assets are built here for the site's replica counts.
    pub fn assets(self, bare: &'a BareAssets) -> Enumerate<'a> {
        Enumerate {
            bare: Some(bare),
            ..self
        }
    }

    /// Every candidate, its assets placed.
    pub fn placed(self) -> Vec<Layout> {
        let site = self.site;
        let mut layouts = self.unplaced();
        for l in &mut layouts {
            place(site, l);
        }
        layouts
    }

    /// Every candidate sized (in parallel), its assets not placed yet; the first of each id.
    pub fn unplaced(self) -> Vec<Layout> {
        use rayon::prelude::*;
        let own;
        let bare = match self.bare {
            Some(b) => b,
            None => {
                own = BareAssets::new(self.site, self.site.nats.replicas.iter().copied());
                &own
            }
        };
        let site = self.site;
        let sized: Vec<Layout> = enumerate::candidates(site, self.catalog, bare)
            .into_par_iter()
            .map(|c| {
                let r = c.layout.replicas;
                match bare.get(r) {
                    Some(b) => c.size(site, b, None).0,
                    None => c.size(site, &placement::assets(site, r), None).0,
                }
            })
            .collect();
        // Sized ids are as distinct as the unsized ones; the first of each is kept all the same.
        let mut seen = std::collections::HashSet::new();
        sized.into_iter().filter(|l| seen.insert(l.id.clone())).collect()
    }

    /// Every candidate as built, in the enumeration's order (see `Candidate`).
    pub fn candidates(self) -> Vec<Candidate> {
        match self.bare {
            Some(bare) => enumerate::candidates(self.site, self.catalog, bare),
            None => {
                let bare = BareAssets::new(self.site, self.site.nats.replicas.iter().copied());
                enumerate::candidates(self.site, self.catalog, &bare)
            }
        }
    }
}

/// A candidate layout as `Enumerate::candidates` proposes it: built, its assets not placed, and pattern
/// 4's LUNs each its group's full size until `size` sizes them on what each server will hold (the sizes
/// are part of the layout and of its id). No other pattern has anything left to size.
pub struct Candidate {
    layout: Layout,
}

impl Candidate {
    /// The layout as built: what `size`'s first round places on (`Whole`); its `PlacementKey` in plan.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The layout, pattern 4's LUNs sized (`build::size`), and the sizing's last placement when it made
    /// one on the LUNs it settled on (`Placed`). `bare` is the workload's assets under the layout's
    /// replica count; `whole` the placement of `layout()` and its failure-needs cache, which the sizing's
    /// first round reads and fills (None: it is made here, for a pattern-4 layout).
    pub fn size(self, site: &Site, bare: &[Asset], whole: Option<Whole<'_>>) -> (Layout, Option<Placed>) {
        let mut layout = self.layout;
        if layout.pattern != Pattern::P4 {
            return (layout, None);
        }
        let placed = match whole {
            Some(w) => build::size(site, &mut layout, bare, w),
            None => {
                let (assets, _) = placement(site, &layout, bare);
                let needs = &mut FailureNeeds::default();
                build::size(site, &mut layout, bare, Whole { assets: &assets, needs })
            }
        };
        (layout, placed)
    }
}

/// RAID level of a volume group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Raid {
    Raid0,
    Raid1,
    Raid10,
    Raid6,
    DdpRaid1,
}

impl Raid {
    pub const ALL: [Raid; 5] = [Raid::Raid0, Raid::Raid1, Raid::Raid10, Raid::Raid6, Raid::DdpRaid1];

    /// The one parser of a volume group's RAID level: `raid10`, `RAID 10`, `raid-10`, `ddp-raid1` (case,
    /// spaces, `-` and `_` ignored). The site's array-level choice (`raid: ddp`) is `site::ArrayRaid`.
    pub fn parse(s: &str) -> Option<Raid> {
        let norm = |t: &str| -> String {
            t.chars()
                .filter(|c| !matches!(c, ' ' | '-' | '_'))
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let want = norm(s);
        Raid::ALL.into_iter().find(|r| norm(r.as_str()) == want)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Raid::Raid0 => "raid0",
            Raid::Raid1 => "raid1",
            Raid::Raid10 => "raid10",
            Raid::Raid6 => "raid6",
            Raid::DdpRaid1 => "ddp-raid1",
        }
    }

    /// Fraction of raw capacity that holds data, for a group of `disks` disks. DDP also keeps reserve
    /// capacity instead of hot spares (see `ddp_reserve_disks`).
    pub fn efficiency(self, disks: u32) -> f64 {
        let n = disks.max(1) as f64;
        match self {
            Raid::Raid0 => 1.0,
            Raid::Raid1 | Raid::Raid10 => 0.5,
            Raid::Raid6 => ((n - 2.0) / n).max(0.0),
            Raid::DdpRaid1 => 0.5 * ((n - ddp_reserve_disks(disks) as f64) / n).max(0.0),
        }
    }

    /// The fewest simultaneous disk failures in the group that can destroy its volumes (worst case:
    /// both halves of one mirror pair; three disks of a RAID 6; two pieces of a DDP RAID 1 volume).
    pub fn disks_to_destroy(self) -> u32 {
        match self {
            Raid::Raid0 => 1,
            Raid::Raid1 | Raid::Raid10 | Raid::DdpRaid1 => 2,
            Raid::Raid6 => 3,
        }
    }

    /// Minimum disks in a group, and whether the count must be even.
    pub fn disk_rule(self) -> (u32, bool) {
        match self {
            Raid::Raid0 => (1, false),
            Raid::Raid1 => (2, false),
            Raid::Raid10 => (4, true),
            Raid::Raid6 => (5, false),
            Raid::DdpRaid1 => (11, false),
        }
    }
}

/// Preservation capacity (in drives) a DDP pool keeps for reconstruction by default, used instead of hot
/// spares: "for every six drives in a pool, System Manager reserves one drive for preservation capacity"
/// (NetApp SANtricity 11.6 docs, "Create pool manually"); a site gives its own with
/// `arrays[].reserved_drives` (SANtricity's `reservedDriveCount`), see `pool_reserve`. (Before issue 31
/// natsplan subtracted 2 drives for 11–30, 3 for 31–60: a table with no source.)
pub fn ddp_reserve_disks(disks: u32) -> u32 {
    if disks < 11 {
        0
    } else {
        disks / 6
    }
}

/// The preservation capacity of a DDP array in drives: the site's `reserved_drives`, else SANtricity's
/// default for the pool's data disks.
pub fn pool_reserve(arr: &crate::site::Array, data_disks: u32) -> u32 {
    arr.reserved_drives.unwrap_or_else(|| ddp_reserve_disks(data_disks))
}

/// A volume group (E-Series' name for a RAID group) or DDP pool.
#[derive(Debug, Clone, Serialize)]
pub struct VolumeGroup {
    /// e.g. `A1-vg1`.
    pub name: String,
    pub array: ArrayIdx,
    pub raid: Raid,
    /// Disk numbers in the array, from 1 (as `disk:A1/N` selectors count them).
    pub disks: Vec<u32>,
    /// Capacity the group can present as LUNs: data disks × disk size × RAID efficiency × (1 − wear
    /// headroom on SSDs).
    pub usable_bytes: u64,
}

/// One LUN presented to one JetStream server.
#[derive(Debug, Clone, Serialize)]
pub struct Lun {
    /// Index into `Layout::groups`.
    pub group: usize,
    pub server: ServerIdx,
    pub size_bytes: u64,
}

/// How the emitted configuration steers NATS's replica placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum PlacementRule {
    /// `jetstream.unique_tag: "rack:"`: every replica of a stream on a different rack.
    UniqueTag { prefix: String },
    /// Servers tagged `set:NAME`; each stream placed on one set with `placement.tags`.
    Pinned { sets: Vec<ReplicaSet> },
    /// No constraint: NATS may put replicas anywhere (worst case assumed).
    Free,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaSet {
    /// Tag value, e.g. `r5-1` (emitted as `set:r5-1`).
    pub name: String,
    pub servers: Vec<ServerIdx>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AssetKind {
    Stream,
    Kv,
    ObjectStore,
    Consumer,
}

impl AssetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AssetKind::Stream => "stream",
            AssetKind::Kv => "kv",
            AssetKind::ObjectStore => "object_store",
            AssetKind::Consumer => "consumer",
        }
    }
}

/// A RAFT group the plan creates (stream, KV bucket, object store, durable consumer) and the servers its
/// replicas may land on under the emitted configuration.
#[derive(Debug, Clone, Serialize)]
pub struct Asset {
    /// Shared (`Arc<str>`): every layout's copy of an asset names it, and a copy per layout costs time.
    pub name: std::sync::Arc<str>,
    pub kind: AssetKind,
    pub replicas: u8,
    /// Servers NATS may choose from (all JetStream servers, or a pinned set). Shared, not copied: every
    /// asset of a layout has one of a few candidate lists, and a copy per asset costs memory.
    #[serde(serialize_with = "serialize_slice")]
    pub candidates: std::sync::Arc<[ServerIdx]>,
    /// Replicas must be on distinct racks (`unique_tag: "rack:"`).
    pub unique_rack: bool,
    /// The pinned set's name, when pinned.
    pub set: Option<std::sync::Arc<str>>,
    /// For a consumer: the stream it belongs to (it lives on a subset of that stream's peers).
    pub parent: Option<std::sync::Arc<str>>,
    /// For a consumer made from the workload (`placement::assets`): the index, in the assets as that
    /// lists them, of the stream it was made with (asset names are unique in a site, so that is the first
    /// non-consumer asset of `parent`'s name). Readers check the name and otherwise look the name up;
    /// None for other assets (no name hashed per consumer per layout to find its stream).
    #[serde(skip)]
    pub parent_at: Option<usize>,
    /// The spec it was made from: its index in the site's list of its kind (`workload.streams`, `kv` or
    /// `object_stores`), the first of its name there. None for consumers and assets not made from the
    /// workload. `layout::lookup::Specs` reads it (checking the name) instead of hashing the name for
    /// every asset of every layout.
    #[serde(skip)]
    pub spec: Option<usize>,
    /// Bytes one replica stores at the end of the planning horizon (with growth, RAFT log).
    pub bytes_per_replica: f64,
    /// The servers the emulated meta leader picks (balanced, deterministic); survivability does not
    /// rely on it, capacity does.
    #[serde(serialize_with = "serialize_expected")]
    pub expected: Expected,
}

/// An asset's expected servers: inline up to five (every replica count), on the heap beyond.
pub type Expected = smallvec::SmallVec<[ServerIdx; 5]>;

fn serialize_expected<S: serde::Serializer>(v: &Expected, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&v[..], s)
}

fn serialize_slice<S: serde::Serializer>(v: &std::sync::Arc<[ServerIdx]>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&v[..], s)
}

impl Asset {
    pub fn quorum(&self) -> u32 {
        quorum(self.replicas as u32)
    }

    /// How many of its replicas nats-server can place under the emitted configuration: its eligible
    /// servers, or their distinct racks under `unique_tag`, at most its replicas. Below `replicas` the asset
    /// cannot be created at all ("no suitable peers").
    pub fn placeable(&self, site: &Site) -> u32 {
        let n = if self.unique_rack {
            let mut racks: Vec<usize> = self.candidates.iter().map(|&s| site.servers[s].rack).collect();
            racks.sort_unstable();
            racks.dedup();
            racks.len()
        } else {
            self.candidates.len()
        };
        (n as u32).min(self.replicas as u32)
    }
}

/// RAFT quorum of a group of `n` voters: ⌊n/2⌋ + 1.
pub fn quorum(n: u32) -> u32 {
    n / 2 + 1
}

/// A structural problem or remark found while building a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What the problem is about, so code picks problems by it and never by their text (not serialised:
    /// the JSON keeps `severity` and `text`).
    #[serde(skip)]
    pub code: ProblemCode,
    pub severity: Severity,
    pub text: String,
}

/// What a `Problem` is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemCode {
    /// A server of the selection could not get a volume (`build`); the layout is the servers that did.
    ServerDropped,
    /// DDP keeps a pool's reserve capacity instead of hot spares (`build`).
    DdpReserve,
    /// Any other remark on how volumes were laid out: uneven groups, mixed RAID 1/RAID 0 (`build`).
    VolumeNote,
    /// Servers use an array in another rack, whose power takes their volumes with it (`build`).
    CrossRackArray,
    /// An asset cannot be placed: "no suitable peers" (`placement`).
    NoSuitablePeers,
    /// A reason for the layout's verdict (`plan::verdict`).
    Verdict,
}

/// How much a reason weighs in the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; does not lower the verdict below `recommended`.
    Info,
    /// Lowers the verdict to `acceptable`.
    Note,
    /// Lowers the verdict to `risky`.
    Risk,
    /// The layout cannot be used.
    Reject,
}

/// One candidate layout.
#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    /// Content-derived id, e.g. `p1-raid1-r3-Ax2.Bx2.Cx1-3f9a`.
    pub id: String,
    pub pattern: Pattern,
    pub raid: Raid,
    /// Default replica count for assets that do not pin their own.
    pub replicas: u8,
    /// JetStream servers, in site order.
    pub servers: Vec<ServerIdx>,
    pub groups: Vec<VolumeGroup>,
    /// One LUN per JetStream server, in the order of `servers`.
    pub luns: Vec<Lun>,
    /// Hot spares kept per array the layout uses.
    pub spares: Vec<(ArrayIdx, u32)>,
    pub placement: PlacementRule,
    /// Every asset with its eligible and expected servers, in plan order; empty until placed (`place`,
    /// `placement`; a layout from `Enumerate::unplaced`), and in a plan for the layouts given per class
    /// (`plan::classes`) until the plan expands them (`plan::evaluator`).
    pub assets: Vec<Asset>,
    pub problems: Vec<Problem>,
}

impl Layout {
    /// The LUN of a JetStream server.
    pub fn lun_of(&self, server: ServerIdx) -> Option<&Lun> {
        self.luns.iter().find(|l| l.server == server)
    }
    /// The array a JetStream server's volume lives on.
    pub fn array_of(&self, server: ServerIdx) -> Option<ArrayIdx> {
        self.lun_of(server).map(|l| self.groups[l.group].array)
    }
    /// The layout's RAID level as ids and reports name it: its level, or for a mixed layout every level
    /// its servers' volumes use, in `Raid::ALL` order joined by `+` (`raid1+ddp-raid1`), so a mixed id
    /// says what differs.
    ///
    /// `raid` itself is the level of the first group built (arrays by name): in a one-pattern layout
    /// that can differ from a server's (pattern 1 on a RAID 10 array beside a server's internal RAID 1
    /// pair says `raid10`). A mixed layout whose volumes all share one level is labelled that level (a
    /// host's pool sets no group level first, so a layout of RAID 10 pools only said `raid1`).
    pub fn raid_label(&self) -> String {
        let used = self.raid_levels();
        if self.pattern == Pattern::Mixed && used.len() == 1 {
            return used[0].as_str().to_string();
        }
        if self.pattern != Pattern::Mixed || used.len() <= 1 {
            return self.raid.as_str().to_string();
        }
        used.iter().map(|r| r.as_str()).collect::<Vec<_>>().join("+")
    }
    /// Every RAID level the servers' volumes use, in `Raid::ALL` order (the JSON's `raid_levels`).
    pub fn raid_levels(&self) -> Vec<Raid> {
        let mut used: Vec<Raid> = self.luns.iter().map(|lun| self.groups[lun.group].raid).collect();
        used.sort_by_key(|r| Raid::ALL.iter().position(|x| x == r));
        used.dedup();
        used
    }
    pub fn hot_spares_total(&self) -> u32 {
        self.spares.iter().map(|(_, n)| n).sum()
    }
    /// Disks the layout uses (in groups) plus spares kept for it.
    pub fn disks_used(&self) -> u32 {
        self.groups.iter().map(|g| g.disks.len() as u32).sum::<u32>() + self.hot_spares_total()
    }
    pub fn arrays_used(&self) -> u32 {
        let mut a: Vec<ArrayIdx> = self.groups.iter().map(|g| g.array).collect();
        a.sort_unstable();
        a.dedup();
        a.len() as u32
    }
    /// Racks that hold at least one JetStream server.
    pub fn racks_used(&self, site: &Site) -> Vec<usize> {
        let mut r: Vec<usize> = self.servers.iter().map(|&s| site.servers[s].rack).collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

#[cfg(test)]
mod raid_tests {
    use super::Raid;

    #[test]
    fn every_level_parses_from_its_own_name_and_the_usual_spellings() {
        for r in Raid::ALL {
            assert_eq!(Raid::parse(r.as_str()), Some(r));
            assert_eq!(Raid::parse(&r.as_str().to_uppercase()), Some(r));
        }
        assert_eq!(Raid::parse("RAID 10"), Some(Raid::Raid10));
        assert_eq!(Raid::parse("ddp_raid1"), Some(Raid::DdpRaid1));
        assert_eq!(Raid::parse("raid5"), None);
        assert_eq!(Raid::parse(""), None);
    }
}
