//! One scenario: a set of failed domains, what it does to each JetStream server (down, data destroyed,
//! page cache lost), and the resulting status of every asset and of the meta group on the WORST replica
//! placement NATS could produce under the emitted configuration (ARCHITECTURE.md "Placement that NATS will
//! really produce").

use super::domain::{Domain, DomainKind, DomainTarget};
use crate::layout::{quorum, AssetKind, Layout, Raid};
use crate::site::{ArrayIdx, ServerIdx, Site};
use crate::units::SyncMode;
use serde::Serialize;

mod actions;
mod effects;

#[cfg(test)]
thread_local! {
    /// A deliberate bug for the tests that show the reference catches one: RAID 10 groups treated as
    /// destroyed by any two failed disks, not only both of one mirror pair (issue 33).
    pub(crate) static IGNORE_PAIRS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Upper bound of one RAFT election: 1 s heartbeat + 4–9 s randomised timeout (nats-server raft.go).
pub const ELECTION_STALL_S: f64 = 10.0;

/// Stream (or meta-group) status in a scenario, ordered best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// All replicas up.
    Ok,
    /// Quorum holds; writes go on (after an election if the leader was hit).
    Degraded,
    /// Quorum lost, nothing destroyed beyond what survivors hold: writes wait.
    Unavailable,
    /// Replicas holding committed data destroyed beyond what the survivors hold.
    DataLost,
}

impl Status {
    /// An R`r` group's status with `down` replicas unreachable and `destroyed` of them gone for good
    /// (quorum `q`): the one rule the evaluation and the sweep's classes both apply.
    pub(crate) fn of_counts(r: u32, q: u32, down: u32, destroyed: u32) -> Status {
        if destroyed >= q || (r == 1 && destroyed >= 1) {
            Status::DataLost
        } else if down > r - q {
            Status::Unavailable
        } else if down > 0 {
            Status::Degraded
        } else {
            Status::Ok
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Degraded => "degraded",
            Status::Unavailable => "unavailable",
            Status::DataLost => "data_lost",
        }
    }
    /// Writes still go on (possibly after one election).
    pub fn writable(self) -> bool {
        self <= Status::Degraded
    }
}

/// What a scenario does to one asset (or the meta group).
#[derive(Debug, Clone, Serialize)]
pub struct AssetOutcome {
    pub name: String,
    /// `stream`, `kv`, `object_store`, `consumer` or `meta`.
    pub kind: super::GroupKind,
    pub status: Status,
    /// Upper bound of the write stall in seconds; None when writes wait for `stall_until`.
    pub stall_s: Option<f64>,
    /// The failed domains that must return (or be peer-removed) before writes resume.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stall_until: Vec<String>,
    pub acked_loss_risk: bool,
    /// Why there is an acked-loss risk: `quorum_lost_page_cache` (a quorum of replicas lost unsynced
    /// writes at once; Jepsen, #7564) or `crash_plus_pause` (one lost its page cache while others were
    /// paused or cut off; Jepsen, #7567).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acked_loss_cause: Option<&'static str>,
    /// For `data_lost`: `total` when no replica holding the data survives (restore from backup), `tail`
    /// when a surviving replica holds it up to where it had caught up (the last acknowledged writes may be
    /// gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<&'static str>,
    pub replicas: u32,
    /// Worst-case replicas down / destroyed / with their page cache lost, over eligible placements.
    pub replicas_down: u32,
    pub replicas_destroyed: u32,
    pub replicas_cache_lost: u32,
    /// Replicas no eligible server (rack, under `unique_tag`) can hold: nats-server cannot create the
    /// asset on this layout, so it is `unavailable` whatever fails (and whatever does not). Absent when
    /// every replica has a place.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_placed: Option<u32>,
}

/// The effect of failed domains on one JetStream server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerEffect {
    /// Not serving (crashed, paused, unreachable, store full or gone).
    pub down: bool,
    /// Its store is gone (volume destroyed or wiped): peer-remove and rejoin under a new name.
    pub destroyed: bool,
    /// Unsynced writes in its page cache are lost (OS crash, power, array outage).
    pub cache_lost: bool,
    /// Paused or cut off from its peers with its state intact (SIGSTOP, a VM freeze, its rack's uplinks):
    /// with a crashed peer, the other half of Jepsen's crash + pause (nats-server #7567).
    pub cut_off: bool,
}

/// A volume group's state in a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct GroupEffect {
    pub group: String,
    pub failed_disks: Vec<u32>,
    /// Enough disks failed to destroy its volumes (both disks of one pair for RAID 10).
    pub destroyed: bool,
    /// RAID 10 (and RAID 1 over 4+ disks): its mirror pairs in the modelled order, (1,2), (3,4), ….
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<[u32; 2]>,
    /// The pairs that lost both disks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lost_pairs: Vec<[u32; 2]>,
}

/// The outcome of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub failed: Vec<Domain>,
    pub meta: AssetOutcome,
    /// One per `layout.assets`, in that order.
    pub assets: Vec<AssetOutcome>,
    /// JetStream servers down / destroyed / with page cache lost (site indices).
    pub down: Vec<ServerIdx>,
    pub destroyed: Vec<ServerIdx>,
    pub cache_lost: Vec<ServerIdx>,
    /// Volume groups with failed disks.
    pub groups: Vec<GroupEffect>,
    /// What the operator must do, in order.
    pub actions: Vec<String>,
}

impl Scenario {
    /// The worst status of any asset or the meta group.
    pub fn worst(&self) -> Status {
        self.assets.iter().map(|a| a.status).fold(self.meta.status, Status::max)
    }
    /// The worst status of any asset (the meta group apart: it is the API, not a stream's writes). Without
    /// assets, the meta group's.
    pub fn worst_asset(&self) -> Status {
        if self.assets.is_empty() {
            return self.meta.status;
        }
        self.assets.iter().map(|a| a.status).fold(Status::Ok, Status::max)
    }
    pub fn any_acked_loss_risk(&self) -> bool {
        self.meta.acked_loss_risk || self.assets.iter().any(|a| a.acked_loss_risk)
    }
}

/// A layout prepared for many evaluations: who sits where, which LUN is on which group.
pub struct Model<'a> {
    pub site: &'a Site,
    pub layout: &'a Layout,
    /// Per site server: index into `layout.groups` of its LUN, if it runs JetStream.
    group_of: Vec<Option<usize>>,
    /// Per volume group: the servers with a LUN on it.
    group_servers: Vec<Vec<ServerIdx>>,
    /// Per site array: the volume groups on it.
    array_groups: Vec<Vec<usize>>,
    /// Per asset: the asset whose candidates and rack uniqueness it has (a consumer's parent stream,
    /// else itself). Made when first asked (`placement`): the tolerance for the meta group and the
    /// endurance figures never ask, and it is a pass over every asset.
    placement: std::sync::OnceLock<Vec<usize>>,
    /// The distinct (candidates, replicas, unique rack) of the assets, as `(asset, replicas, unique)`
    /// with the first asset whose placement gives them (`distinct_placements`). Made when first asked.
    distinct: std::sync::OnceLock<Vec<(usize, u8, bool)>>,
    /// Per site server: whether it runs JetStream in this layout.
    in_layout: Vec<bool>,
}

impl<'a> Model<'a> {
    pub fn new(site: &'a Site, layout: &'a Layout) -> Model<'a> {
        let mut group_of = vec![None; site.servers.len()];
        let mut group_servers = vec![Vec::new(); layout.groups.len()];
        for l in &layout.luns {
            if l.server < group_of.len() && l.group < layout.groups.len() {
                group_of[l.server] = Some(l.group);
                group_servers[l.group].push(l.server);
            }
        }
        let mut array_groups = vec![Vec::new(); site.arrays.len()];
        for (gi, g) in layout.groups.iter().enumerate() {
            if g.array < array_groups.len() {
                array_groups[g.array].push(gi);
            }
        }
        let mut in_layout = vec![false; site.servers.len()];
        for &s in &layout.servers {
            in_layout[s] = true;
        }
        Model {
            site,
            layout,
            group_of,
            group_servers,
            array_groups,
            placement: std::sync::OnceLock::new(),
            distinct: std::sync::OnceLock::new(),
            in_layout,
        }
    }

    /// Each distinct placement the assets have — (candidates, replicas, unique rack) — once, in order of
    /// first appearance: (the asset `placement` reads the candidates from, replicas, unique rack). Many
    /// assets share a placement: `tolerates` judges each once per domain kind instead of walking every
    /// asset once per kind. Candidate lists are shared (an
    /// `Arc`), so most assets are told apart by the list's address alone; lists at different addresses
    /// are compared by content.
    pub fn distinct_placements(&self) -> &[(usize, u8, bool)] {
        self.distinct.get_or_init(|| {
            let from = self.placement.get_or_init(|| placement_sources(self.layout));
            // FxHash: one lookup per asset, nothing iterated (see `crate::fxhash`).
            let mut by_addr: crate::fxhash::FxHashSet<(usize, usize, u8, bool)> = Default::default();
            let mut seen: crate::fxhash::FxHashSet<(&[ServerIdx], u8, bool)> = Default::default();
            let mut out = Vec::new();
            for (i, a) in self.layout.assets.iter().enumerate() {
                let p = &self.layout.assets[from[i]];
                let (c, u) = (&*p.candidates, p.unique_rack);
                if by_addr.insert((c.as_ptr() as usize, c.len(), a.replicas, u)) && seen.insert((c, a.replicas, u)) {
                    out.push((from[i], a.replicas, u));
                }
            }
            out
        })
    }

    /// Candidates and rack uniqueness of asset `i` (consumers resolved to their stream).
    /// The asset whose placement asset `i` has: a consumer's stream (the first non-consumer asset of its
    /// parent's name), else itself.
    pub fn source(&self, i: usize) -> usize {
        self.placement.get_or_init(|| placement_sources(self.layout))[i]
    }

    pub fn placement(&self, i: usize) -> (&[ServerIdx], bool) {
        let from = self.placement.get_or_init(|| placement_sources(self.layout));
        let a = &self.layout.assets[from[i]];
        (&a.candidates, a.unique_rack)
    }

    /// The volume group index of a server's LUN.
    pub fn group_of(&self, s: ServerIdx) -> Option<usize> {
        self.group_of.get(s).copied().flatten()
    }
    pub fn group_servers(&self, g: usize) -> &[ServerIdx] {
        &self.group_servers[g]
    }
    /// The layout's volume groups on site array `a`.
    pub fn array_groups(&self, a: ArrayIdx) -> &[usize] {
        &self.array_groups[a]
    }
    pub fn array_of(&self, s: ServerIdx) -> Option<ArrayIdx> {
        self.group_of(s).map(|g| self.layout.groups[g].array)
    }

    /// The fewest disk failures in one group that can destroy its volumes, never more than it has.
    pub fn disks_to_destroy(&self, g: usize) -> u32 {
        let grp = &self.layout.groups[g];
        grp.raid.disks_to_destroy().min(grp.disks.len().max(1) as u32)
    }

    /// Whether a group is made of mirror pairs: RAID 10, and RAID 1 over more than two disks (E-Series
    /// builds RAID 1 over four or more drives as RAID 10). Pairs are the group's disks in order:
    /// (1st, 2nd), (3rd, 4th), … (see `mirror_pairs`).
    pub fn paired(&self, g: usize) -> bool {
        #[cfg(test)]
        if IGNORE_PAIRS.with(|c| c.get()) {
            return false;
        }
        let grp = &self.layout.groups[g];
        matches!(grp.raid, Raid::Raid10) || (grp.raid == Raid::Raid1 && grp.disks.len() > 2)
    }

    /// The group's mirror pairs as disk slots, in the modelled order (empty when not `paired`). The
    /// convention (ARCHITECTURE.md "RAID 10 pairs"): data disks paired in the order the group lists them, (1,2), (3,4), … Software
    /// RAID and internal controllers mirror adjacent members this way; SANtricity's own drive-order rule for
    /// RAID 10 was not found in public documentation, so for E-Series it is an assumption: check the
    /// array's pairing before relying on which two disks are a pair.
    pub fn mirror_pairs(&self, g: usize) -> Vec<[u32; 2]> {
        if !self.paired(g) {
            return Vec::new();
        }
        self.layout.groups[g]
            .disks
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| [c[0], c[1]])
            .collect()
    }

    /// Whether failed slots (of this group) destroy it: both disks of one mirror pair for paired groups,
    /// else `disks_to_destroy` of them.
    pub fn group_destroyed(&self, g: usize, failed: &[u32]) -> bool {
        if self.paired(g) {
            return self
                .mirror_pairs(g)
                .iter()
                .any(|p| failed.contains(&p[0]) && failed.contains(&p[1]));
        }
        failed.len() as u32 >= self.disks_to_destroy(g)
    }

    /// A disk's position in its group (from 0), for pair arithmetic: pair = position / 2.
    pub fn position_in_group(&self, g: usize, slot: u32) -> Option<usize> {
        self.layout.groups[g].disks.iter().position(|&d| d == slot)
    }

    /// Worst case over eligible placements: how many of R replicas can sit on servers with `pred`.
    fn worst_count(&self, cands: &[ServerIdx], r: u32, unique_rack: bool, pred: impl Fn(ServerIdx) -> bool) -> u32 {
        if unique_rack {
            let mut racks: Vec<usize> = cands
                .iter()
                .filter(|&&s| pred(s))
                .map(|&s| self.site.servers[s].rack)
                .collect();
            racks.sort_unstable();
            racks.dedup();
            (racks.len() as u32).min(r)
        } else {
            (cands.iter().filter(|&&s| pred(s)).count() as u32).min(r)
        }
    }

    /// An asset's (or the meta group's) outcome: its `r` replicas on the worst eligible servers of `cands`
    /// (one per rack when `unique_rack`) against what the failed domains did to them.
    fn outcome(
        &self,
        name: &str,
        kind: super::GroupKind,
        cands: &[ServerIdx],
        r: u32,
        unique_rack: bool,
        struck: &Struck,
    ) -> AssetOutcome {
        let Struck { eff, cause, failed } = *struck;
        let q = quorum(r);
        // An asset with fewer eligible servers than replicas is never created (no suitable peers): it
        // takes no writes, and holds no data to lose. It used to be judged on the servers it has, so a
        // failure of all of them read `degraded`.
        let placeable = self.worst_count(cands, r, unique_rack, |_| true);
        if placeable < r {
            return AssetOutcome {
                name: name.to_string(),
                kind,
                status: Status::Unavailable,
                stall_s: None,
                stall_until: Vec::new(),
                acked_loss_risk: false,
                acked_loss_cause: None,
                loss: None,
                replicas: r,
                replicas_down: r,
                replicas_destroyed: 0,
                replicas_cache_lost: 0,
                not_placed: Some(r - placeable),
            };
        }
        let down = self.worst_count(cands, r, unique_rack, |s| eff[s].down);
        let destroyed = self.worst_count(cands, r, unique_rack, |s| eff[s].destroyed);
        let cache = self.worst_count(cands, r, unique_rack, |s| eff[s].cache_lost);
        let status = Status::of_counts(r, q, down, destroyed);
        let (stall_s, stall_until) = match status {
            Status::Ok => (Some(0.0), Vec::new()),
            Status::Degraded => (Some(ELECTION_STALL_S), Vec::new()),
            // Destroyed data never returns: nothing to wait for.
            Status::DataLost => (None, Vec::new()),
            Status::Unavailable => {
                let mut idx: Vec<usize> = cands.iter().flat_map(|&s| cause[s].iter().copied()).collect();
                idx.sort_unstable();
                idx.dedup();
                (None, idx.into_iter().map(|i| failed[i].to_string()).collect())
            }
        };
        // With delayed sync: a quorum lost its page cache (Jepsen, #7564), or one replica did and enough
        // others were paused or cut off meanwhile to make a quorum without the lost writes (#7567).
        let cut = self.worst_count(cands, r, unique_rack, |s| eff[s].cache_lost || eff[s].cut_off);
        let delayed = self.site.nats.sync != SyncMode::Always;
        let acked_loss_cause = if !delayed {
            None
        } else if cache >= q {
            Some("quorum_lost_page_cache")
        } else if cache >= 1 && cut >= q {
            Some("crash_plus_pause")
        } else {
            None
        };
        let acked_loss_risk = acked_loss_cause.is_some();
        let loss = (status == Status::DataLost).then_some(if destroyed >= r { "total" } else { "tail" });
        AssetOutcome {
            name: name.to_string(),
            kind,
            status,
            stall_s,
            stall_until,
            acked_loss_risk,
            acked_loss_cause,
            loss,
            replicas: r,
            replicas_down: down,
            replicas_destroyed: destroyed,
            replicas_cache_lost: cache,
            not_placed: None,
        }
    }

    /// Evaluate one scenario.
    pub fn evaluate(&self, failed: &[Domain]) -> Scenario {
        let (eff, cause, groups) = self.effects(failed);
        let layout = self.layout;
        let n = layout.servers.len() as u32;
        let struck = Struck {
            eff: &eff,
            cause: &cause,
            failed,
        };
        let meta = self.outcome("meta", super::GroupKind::Meta, &layout.servers, n, false, &struck);
        let assets: Vec<AssetOutcome> = layout
            .assets
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (c, u) = self.placement(i);
                self.outcome(&a.name, a.kind.into(), c, a.replicas as u32, u, &struck)
            })
            .collect();
        let pick = |f: fn(&ServerEffect) -> bool| -> Vec<ServerIdx> {
            layout.servers.iter().copied().filter(|&s| f(&eff[s])).collect()
        };
        let down = pick(|e| e.down);
        let destroyed = pick(|e| e.destroyed);
        let cache_lost = pick(|e| e.cache_lost && !e.destroyed);
        let mut sc = Scenario {
            failed: failed.to_vec(),
            meta,
            assets,
            down,
            destroyed,
            cache_lost,
            groups,
            actions: Vec::new(),
        };
        sc.actions = self.actions(&sc, &eff);
        sc
    }
}

/// What works while the meta group has no quorum (the JetStream API is down).
pub const API_DOWN: &str = "the JetStream API is down (the meta group has no quorum): existing streams whose own \
    group keeps its quorum go on taking writes and answer direct gets (KV get too); nothing can be created, \
    updated, deleted or peer-removed, and anything that needs a new consumer fails — KV watch, object get, \
    ordered consumers — because the meta leader assigns consumers";

/// What a scenario's failed domains did: each server's effect, the domains (by index into `failed`) that
/// hit it, and the domains.
#[derive(Clone, Copy)]
struct Struck<'a> {
    eff: &'a [ServerEffect],
    cause: &'a [Vec<usize>],
    failed: &'a [Domain],
}

/// Per asset of `layout`, the asset whose placement it has: a durable consumer lives on a subset of its
/// stream's peers, so its eligible servers are those of the first non-consumer asset of its parent's name;
/// every other asset (and a consumer whose parent is not there) has its own.
fn placement_sources(layout: &Layout) -> Vec<usize> {
    let assets = &layout.assets;
    // A consumer made from the workload knows its stream's index (`Asset::parent_at`); checked by name.
    let known = |a: &crate::layout::Asset| {
        a.parent_at.filter(|&j| {
            assets.get(j).is_some_and(|p| {
                p.kind != AssetKind::Consumer
                    && a.parent
                        .as_ref()
                        .is_some_and(|n| crate::layout::placement::same_name(&p.name, n))
            })
        })
    };
    // Otherwise the first non-consumer asset of each name (a map: a linear search per consumer was
    // quadratic), made only when some consumer needs it. FxHash: looked up only (see `crate::fxhash`).
    let mut first: crate::fxhash::FxHashMap<&str, usize> = Default::default();
    if assets
        .iter()
        .any(|a| a.kind == AssetKind::Consumer && known(a).is_none())
    {
        for (i, a) in assets.iter().enumerate() {
            if a.kind != AssetKind::Consumer {
                first.entry(&*a.name).or_insert(i);
            }
        }
    }
    assets
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if a.kind == AssetKind::Consumer {
                if let Some(j) = known(a).or_else(|| a.parent.as_deref().and_then(|p| first.get(p).copied())) {
                    return j;
                }
            }
            i
        })
        .collect()
}

/// Evaluate `failed` on `layout` (see `Model::evaluate`).
pub fn evaluate(site: &Site, layout: &Layout, failed: &[Domain]) -> Scenario {
    Model::new(site, layout).evaluate(failed)
}
