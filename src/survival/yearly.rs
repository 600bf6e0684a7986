//! Yearly odds: expected unavailable minutes per year per asset and for the meta group, probability per
//! year of any `data_lost`, expected acknowledged messages lost per year, and MTTDL (for reference only).
//!
//! The model: independent *components* (a disk, a server's OS, its nats-server process, the server for good,
//! an array, a rack's power, a rack's uplinks, a PDU, a shared host) fail at their catalog rate (events per
//! year, overridable in the site) and are repaired after an exponentially distributed time with the
//! catalog's mean (RAID 0 disks: the whole new-group / peer-remove / catch-up chain; redundant groups: the
//! rebuild onto a hot spare). Correlation: a rack power event takes the rack's servers and arrays together
//! (through its domain), and each server in the rack independently fails to return with probability
//! `not_return_after_power` (then it is down until replaced). A state is the set of failed components; its
//! outcome is `evaluate`'s on the corresponding domains (worst eligible placement).
//!
//! * Exact: a continuous-time Markov chain over states with at most `max_concurrent` failed components
//!   (failures that would exceed it are dropped; their probability is of the order (rate × repair time)^(m+1)),
//!   solved for its stationary distribution by Gauss–Seidel (sums of positive terms only, so tiny
//!   probabilities keep their precision). Unavailable time is the stationary mass of unavailable states;
//!   data loss and acked-loss events are the stationary flows into such states.
//! * Monte Carlo: the same chain simulated year by year (`simulate`), seeded per trial so that the numbers do
//!   not depend on the number of threads, with 95 % confidence intervals.
//! * Planned maintenance (rolling restarts and upgrades, one server at a time with a lame-duck step-down) is
//!   added in closed form to both: it makes R1/R2 assets unavailable for each restart of a replica's server,
//!   and costs larger ones one short leader hand-off per event. Array firmware updates are non-disruptive
//!   with multipath and are not counted.

// Per-class figures live in parallel vectors indexed by class; index loops read clearer than zips of four.
#![allow(clippy::needless_range_loop)]

use super::chain::Chain;
use super::chain::Chains;
use super::components::{array_components, disk_components, planned_maintenance, server_components, shared_components};
use super::domain::Domain;
use super::evaluate::Model;
use super::solve::SigInfo;
use super::sweep::Prepared;
use crate::catalog::Catalog;
use crate::layout::AssetKind;
use crate::site::{ServerIdx, Site};
use crate::units::YEAR_S;
use serde::Serialize;

/// Yearly availability and durability figures for a layout.
///
/// `assets` is the per-asset figures: a list (`yearly`, `simulate`), a list or per class as asked
/// (`YearlyEntries`, from `yearly_with`), or `()` where the plan keeps them apart from the summary
/// (`plan::Detail`: a layout's per-asset lists in one place, so none is read empty by accident).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Yearly<A = Vec<YearlyAsset>> {
    /// `exact` (CTMC) or `monte_carlo`, with the details in `method_detail`.
    pub method: String,
    pub method_detail: String,
    pub meta: YearlyAsset,
    pub assets: A,
    /// Probability per year that any asset (or the meta group) reaches `data_lost`: wholly lost or its
    /// acknowledged tail lost.
    pub p_any_data_lost_per_year: f64,
    /// Probability per year that some asset (or the meta group) is wholly lost: no replica survives, and
    /// only a backup brings it back (issue 32).
    pub p_any_wholly_lost_per_year: f64,
    /// From the exact chain: a first-order upper bound on the yearly probability of the data-loss events
    /// it cannot see because they need more concurrent failures than it keeps (none from the Monte Carlo,
    /// which keeps every failure). A figure of 0 beside a bound says "at most this", never "none".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_any_data_lost_beyond_cap_per_year: Option<f64>,
    /// Expected rebuilds per year that meet an unrecoverable read error where no redundancy is left to
    /// correct it (a mirror's last copy, a RAID 6 group two disks down): each corrupts blocks of one
    /// replica's store (nats-server #7549: corruption on a minority can lose acknowledged writes).
    pub corrupt_replica_events_per_year: f64,
    /// Probability per year that the whole site is lost (fire, flood: catalog `site_lost_per_year`),
    /// shown apart from the layout's own figures: only a second site or backups protect against it.
    pub p_site_lost_per_year: f64,
    /// Expected acknowledged messages lost per year, all assets: window losses plus data-loss events.
    pub acked_msgs_lost_per_year: f64,
    /// Of which in sync windows, and in data-loss events (see `YearlyAsset`).
    pub window_msgs_lost_per_year: f64,
    pub data_lost_msgs_per_year: f64,
    /// The highest expected unavailable minutes per year of any asset, and which (the meta group apart
    /// since issue 15: its downtime is the API's, `api_unavailable_min_per_year`; a layout without assets
    /// reports the meta group here).
    pub worst_unavailable_min_per_year: f64,
    pub worst_unavailable: String,
    /// Expected minutes per year the JetStream API (the meta group) is down: no stream or consumer can be
    /// created, changed or peer-removed; existing streams with their own quorum keep taking writes.
    pub api_unavailable_min_per_year: f64,
    /// What the figures assume.
    pub assumptions: Vec<String>,
    /// The same layout with its hot spares taken away (or one added per array when it has none), from
    /// `yearly` (design); None from `simulate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spare_effect: Option<SpareEffect>,
}

impl<A> Yearly<A> {
    /// The same figures with `assets` in place of the per-asset ones, and those.
    pub fn with_assets<B>(self, assets: B) -> (Yearly<B>, A) {
        let Yearly {
            method,
            method_detail,
            meta,
            assets: old,
            p_any_data_lost_per_year,
            p_any_wholly_lost_per_year,
            p_any_data_lost_beyond_cap_per_year,
            corrupt_replica_events_per_year,
            p_site_lost_per_year,
            acked_msgs_lost_per_year,
            window_msgs_lost_per_year,
            data_lost_msgs_per_year,
            worst_unavailable_min_per_year,
            worst_unavailable,
            api_unavailable_min_per_year,
            assumptions,
            spare_effect,
        } = self;
        let y = Yearly {
            method,
            method_detail,
            meta,
            assets,
            p_any_data_lost_per_year,
            p_any_wholly_lost_per_year,
            p_any_data_lost_beyond_cap_per_year,
            corrupt_replica_events_per_year,
            p_site_lost_per_year,
            acked_msgs_lost_per_year,
            window_msgs_lost_per_year,
            data_lost_msgs_per_year,
            worst_unavailable_min_per_year,
            worst_unavailable,
            api_unavailable_min_per_year,
            assumptions,
            spare_effect,
        };
        (y, old)
    }

    /// Orders of magnitude for ranking (lower is better), compared after `tolerates` so that cost and spare
    /// capacity still decide between near-equals: P(some asset wholly lost)/yr, P(any data_lost)/yr with
    /// what the exact chain could not see added (issue 32: a truncated figure never ranks as a zero),
    /// acked messages lost/yr, worst unavailable minutes/yr, each as ⌊log10⌋ (zero ranks below any
    /// positive figure).
    pub fn rank_key(&self) -> (i32, i32, i32, i32) {
        let mag = |x: f64| {
            if x > 0.0 && x.is_finite() {
                x.log10().floor() as i32
            } else {
                i32::MIN
            }
        };
        (
            mag(self.p_any_wholly_lost_per_year),
            mag(self.p_any_data_lost_per_year + self.p_any_data_lost_beyond_cap_per_year.unwrap_or(0.0)),
            mag(self.acked_msgs_lost_per_year),
            mag(self.worst_unavailable_min_per_year),
        )
    }
}

/// Figures for one asset (or the meta group).
#[derive(Debug, Clone, Default, Serialize)]
pub struct YearlyAsset {
    pub name: String,
    pub kind: super::GroupKind,
    /// Expected unavailable minutes per year (unplanned + planned).
    pub unavailable_min_per_year: f64,
    /// Of which planned maintenance.
    pub planned_unavailable_min_per_year: f64,
    /// Expected write stall per year from planned leader hand-offs (seconds).
    pub planned_stall_s_per_year: f64,
    /// Probability per year of a `data_lost` event: wholly lost, or a tail lost while a replica survives.
    pub p_data_lost_per_year: f64,
    /// Expected number of data_lost events per year (the rate behind the probability).
    pub data_lost_events_per_year: f64,
    /// Probability per year that no replica survives (restore from backup), and the events behind it.
    pub p_wholly_lost_per_year: f64,
    pub wholly_lost_events_per_year: f64,
    /// Expected data-loss events per year in which a replica survives: peer-remove the destroyed peers and
    /// the asset re-forms on it; only the acknowledged tail it had not received is lost.
    pub tail_lost_events_per_year: f64,
    /// Expected acknowledged messages lost per year: `window_msgs_lost_per_year` +
    /// `data_lost_msgs_per_year` (since issue 15; before, the window losses only).
    pub acked_msgs_lost_per_year: f64,
    /// Of which lost in a sync window (a quorum lost unsynced writes at once).
    pub window_msgs_lost_per_year: f64,
    /// Of which lost in `data_lost` events: a wholly lost asset loses every message it holds, a tail loss
    /// the messages of the survivor's lag (`replica_lag`; before issue 32 every event counted the whole).
    pub data_lost_msgs_per_year: f64,
    /// Expected write stall per year from leader elections after unplanned failures that leave the quorum
    /// standing (seconds; `ELECTION_STALL_S` each time the failed server held the leader, 1/R of the time).
    pub election_stall_s_per_year: f64,
    /// Mean time to data loss in years (reference only; None when no modelled event loses data).
    pub mttdl_years: Option<f64>,
    /// 95 % confidence intervals (Monte Carlo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
}

impl YearlyAsset {
    /// Its figures but the name, kind, MTTDL and intervals, as bits (equal entries are bit-equal).
    pub fn bits(&self) -> [u64; 12] {
        [
            self.unavailable_min_per_year.to_bits(),
            self.planned_unavailable_min_per_year.to_bits(),
            self.planned_stall_s_per_year.to_bits(),
            self.p_data_lost_per_year.to_bits(),
            self.data_lost_events_per_year.to_bits(),
            self.p_wholly_lost_per_year.to_bits(),
            self.wholly_lost_events_per_year.to_bits(),
            self.tail_lost_events_per_year.to_bits(),
            self.acked_msgs_lost_per_year.to_bits(),
            self.window_msgs_lost_per_year.to_bits(),
            self.data_lost_msgs_per_year.to_bits(),
            self.election_stall_s_per_year.to_bits(),
        ]
    }

    /// Its confidence intervals as bits.
    pub fn ci_bits(&self) -> Option<[u64; 12]> {
        self.ci95.as_ref().map(|c| {
            let b = |p: (f64, f64)| [p.0.to_bits(), p.1.to_bits()];
            let [a, b2, c2, d, e, g] = [
                b(c.unavailable_min_per_year),
                b(c.p_data_lost_per_year),
                b(c.data_lost_events_per_year),
                b(c.acked_msgs_lost_per_year),
                b(c.p_wholly_lost_per_year),
                b(c.wholly_lost_events_per_year),
            ];
            [
                a[0], a[1], b2[0], b2[1], c2[0], c2[1], d[0], d[1], e[0], e[1], g[0], g[1],
            ]
        })
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Ci95 {
    pub unavailable_min_per_year: (f64, f64),
    pub p_data_lost_per_year: (f64, f64),
    pub data_lost_events_per_year: (f64, f64),
    pub acked_msgs_lost_per_year: (f64, f64),
    pub p_wholly_lost_per_year: (f64, f64),
    pub wholly_lost_events_per_year: (f64, f64),
}

/// What a solve (the exact chain or the Monte Carlo) gives per class (class 0 the meta group) and for any
/// asset, before `Reliability::figures` turns it into the report.
#[derive(Debug, Clone, Default)]
pub struct Flows {
    /// Fraction of the time a class cannot take writes.
    pub unavail: Vec<f64>,
    /// Events per year: any data loss (wholly or a tail), wholly lost (no replica survives), a tail lost
    /// (the first loss, with a replica surviving), and a quorum losing unsynced writes at once.
    pub dl: Vec<f64>,
    pub total: Vec<f64>,
    pub tail: Vec<f64>,
    pub risk: Vec<f64>,
    /// Events per year and probability per year for any class: a data loss, a whole loss.
    pub any_dl: f64,
    pub any_total: f64,
    pub p_any_dl: f64,
    pub p_any_total: f64,
}

impl Flows {
    pub fn new(classes: usize) -> Flows {
        Flows {
            unavail: vec![0.0; classes],
            dl: vec![0.0; classes],
            total: vec![0.0; classes],
            tail: vec![0.0; classes],
            risk: vec![0.0; classes],
            ..Flows::default()
        }
    }
}

/// One independently failing component.
#[derive(Debug, Clone)]
pub struct Component {
    pub what: String,
    pub domain: Domain,
    pub rate_per_s: f64,
    /// Mean repair time (with a hot spare, for a disk).
    pub repair_s: f64,
    /// Components this one may take with it (servers that do not return after a power event).
    pub triggers: Vec<usize>,
    /// A disk: the array whose hot spares its repair draws on (index into `Reliability::spares`), and its
    /// repair when no spare is left (the drive replacement, `disk_replace`, first).
    pub spare_pool: Option<usize>,
    pub repair_no_spare_s: f64,
    /// A disk: the layout's volume group it belongs to.
    pub group: Option<usize>,
    /// The stand-in for volume group g destroyed: never fails on its own (rate 0); a disk failure that
    /// completes a destroying set of g's disks takes the chain to it instead (`Reliability::latched`), and
    /// it is repaired as the group's stores are rebuilt (`repair::store_rebuild_s`).
    pub latch_of: Option<usize>,
}

impl Component {
    pub fn new(what: String, domain: Domain, rate_per_s: f64, repair_s: f64) -> Component {
        Component {
            what,
            domain,
            rate_per_s,
            repair_s,
            triggers: Vec::new(),
            spare_pool: None,
            repair_no_spare_s: repair_s,
            group: None,
            latch_of: None,
        }
    }

    /// A component whose failure destroys stores (a disk, a group's latch, a server's own disks or a
    /// host's pool lost for good, a rack or array lost for good): the only ones the data-loss figures need.
    pub fn destroys(&self) -> bool {
        use super::domain::DomainKind;
        matches!(
            self.domain.kind,
            DomainKind::Disk | DomainKind::Wipe | DomainKind::LostRack | DomainKind::LostArray
        )
    }
}

/// The failure model of a layout: components, classes, message rates, planned maintenance.
pub struct Reliability<'m, 'a> {
    pub components: Vec<Component>,
    pub(super) prep: Prepared<'m, 'a>,
    pub(super) model: &'m Model<'a>,
    pub(super) p_not_return: f64,
    /// Acked messages per second per class (summed over its assets) and per asset.
    pub(super) asset_msgs_per_s: Vec<f64>,
    /// Messages each asset holds (what a data-loss event loses).
    pub(super) asset_msgs_held: Vec<f64>,
    /// Election stall seconds per year: the meta group first, then per asset.
    pub(super) election_stall_s: Vec<f64>,
    pub(super) window_s: f64,
    /// Per class: planned unavailable seconds per year and planned stall seconds per year.
    pub(super) planned_unavail_s: Vec<f64>,
    pub(super) planned_stall_s: Vec<f64>,
    /// Hot spares per spare pool (an array the layout uses), as `Component::spare_pool` indexes them.
    pub(super) spares: Vec<u32>,
    /// Per spare pool: its disks as a bit set over component indices (components past 128 are left out;
    /// the exact chain refuses such sites anyway).
    pub(super) pool_masks: Vec<u128>,
    /// Outcome of the empty state and of each single component (the common cases).
    pub(super) empty: Vec<u8>,
    pub(super) single: Vec<Vec<u8>>,
    /// The same with flags: id 0 is the empty state, id 1 + c the single component c.
    pub(super) base: Vec<SigInfo>,
    /// What `figures` gives per asset.
    pub(super) entries: Entries,
    /// Per volume group: its latch component (redundant groups), the failed disks that destroy it, and
    /// its disks as a bit set over component indices.
    pub(super) group_latch: Vec<Option<usize>>,
    pub(super) group_need: Vec<u32>,
    pub(super) group_mask: Vec<u128>,
    pub(super) group_members: Vec<Vec<usize>>,
    /// Per component: the other disk of its mirror pair (paired groups).
    pub(super) partner: Vec<Option<usize>>,
    /// How far a surviving replica lags when the newest entries are destroyed with the others (a tail loss).
    pub(super) replica_lag_s: f64,
    /// Probability per year that the whole site is lost (shown apart).
    pub(super) p_site_lost: f64,
    /// Per volume group: its disks' capacity in bytes and unrecoverable read errors per bit.
    pub(super) nre: Vec<(f64, f64)>,
}

/// An entry's kind and figures as bits: equal keys, equal entries but for the name.
type EntryKey = (&'static str, [u64; 12], Option<u64>, Option<[u64; 12]>);

/// The per-asset figures `Reliability::figures` gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// One `YearlyAsset` per asset (`YearlyEntries::List`).
    List,
    /// Per class (`YearlyEntries::Classes`): equal entries but for the name said once.
    Classes,
    /// None: the totals only (the hot-spare comparison reads three of them).
    Totals,
}

/// The per-asset figures as `Entries` asked for them: one per asset (none for `Totals`), or per class.
#[derive(Debug, Clone)]
pub enum YearlyEntries {
    List(Vec<YearlyAsset>),
    Classes(Vec<YearlyClass>),
}

impl Yearly<YearlyEntries> {
    /// The figures with their list (`Entries::List` or `Totals`: only `yearly_with` asks for classes).
    pub fn listed(self) -> Yearly {
        let (y, entries) = self.with_assets(());
        match entries {
            YearlyEntries::List(list) => y.with_assets(list).0,
            YearlyEntries::Classes(_) => unreachable!("only yearly_with asks for classes"),
        }
    }
}

/// Yearly entries equal in every field but the name, said once: the class's size, its first and last
/// asset in plan order, and the first one's entry.
#[derive(Debug, Clone)]
pub struct YearlyClass {
    pub count: usize,
    pub first: std::sync::Arc<str>,
    pub last: std::sync::Arc<str>,
    pub entry: YearlyAsset,
}

/// A failure rate per year: the site's override, else the catalog's.
pub fn rate_per_year(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.failure_rates
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.rate(key))
}

pub(super) fn maintenance(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.maintenance
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.maintenance(key))
}

/// Messages (or KV revisions, or object chunks) an asset holds at its retention.
fn msgs_held(w: &crate::layout::lookup::Specs, a: &crate::layout::Asset) -> f64 {
    match a.kind {
        AssetKind::Stream => w.stream_for(a).map(|(_, s)| {
            let by_age = s.msgs_per_s * s.retention_s;
            match s.max_bytes {
                Some(b) => by_age.min(b as f64 / (s.msg_size_bytes + s.subject_bytes).max(1) as f64),
                None => by_age,
            }
        }),
        AssetKind::Kv => w.kv_for(a).map(|(_, k)| (k.keys * k.history.max(1) as u64) as f64),
        AssetKind::ObjectStore => w.object_store_for(a).map(|(_, o)| {
            let chunks = (o.object_size_bytes as f64 / 131_072.0).ceil().max(1.0) + 1.0;
            let objects = o
                .objects
                .map(|n| n as f64)
                .or(o.retention_s.map(|r| o.puts_per_s * r))
                .unwrap_or(0.0);
            objects * chunks
        }),
        AssetKind::Consumer => None,
    }
    .unwrap_or(0.0)
}

/// Expected election stall seconds per year, the meta group first, then per asset: each single failure
/// that leaves the group writable but takes k of its R replicas down costs one election k/R of the time
/// (the leader sits on any replica alike).
fn election_stalls(rel_comps: &[Component], model: &Model, prep: &Prepared, single: &[Vec<u8>]) -> Vec<f64> {
    let layout = model.layout;
    let mut out = vec![0.0; 1 + layout.assets.len()];
    // Assets of one placement class whose expected servers are the same (as a set with repeats) get the
    // same stall from every component: each group's sum is made once, adding the same terms in the same
    // order as each member's own sum would (a sum per member is components × assets per layout).
    // Groups by (class, expected servers sorted, inline for up to five); an asset with more gets its own.
    struct Group {
        class: usize,
        of: usize,
        sum: f64,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut group_of: Vec<Option<usize>> = vec![None; layout.assets.len()];
    let mut at: crate::fxhash::FxHashMap<(usize, [ServerIdx; 5]), usize> = Default::default();
    for (i, a) in layout.assets.iter().enumerate() {
        if a.expected.is_empty() || i >= prep.asset_class.len() {
            continue;
        }
        let class = prep.asset_class[i];
        let mut new = || {
            groups.push(Group { class, of: i, sum: 0.0 });
            groups.len() - 1
        };
        let g = if a.expected.len() <= 5 {
            let mut key = [ServerIdx::MAX; 5];
            key[..a.expected.len()].copy_from_slice(&a.expected);
            key.sort_unstable();
            *at.entry((class, key)).or_insert_with(new)
        } else {
            new()
        };
        group_of[i] = Some(g);
    }
    for (c, comp) in rel_comps.iter().enumerate() {
        if comp.rate_per_s <= 0.0 {
            continue;
        }
        let (eff, _, _) = model.effects(std::slice::from_ref(&comp.domain));
        let per_year = comp.rate_per_s * YEAR_S * super::evaluate::ELECTION_STALL_S;
        let degraded = |k: usize| single[c][2 * k] == super::evaluate::Status::Degraded as u8;
        if degraded(0) {
            let n = layout.servers.len().max(1);
            out[0] += per_year * layout.servers.iter().filter(|&&s| eff[s].down).count() as f64 / n as f64;
        }
        for g in groups.iter_mut().filter(|g| degraded(g.class)) {
            let expected = &layout.assets[g.of].expected;
            let k = expected.iter().filter(|&&s| eff[s].down).count();
            g.sum += per_year * k as f64 / expected.len() as f64;
        }
    }
    for (i, g) in group_of.iter().enumerate() {
        if let Some(g) = g {
            out[1 + i] = groups[*g].sum;
        }
    }
    out
}

/// Messages (or puts, or object chunks) per second an asset acknowledges.
fn msgs_per_s(w: &crate::layout::lookup::Specs, a: &crate::layout::Asset) -> f64 {
    match a.kind {
        AssetKind::Stream => w.stream_for(a).map(|(_, s)| s.msgs_per_s),
        AssetKind::Kv => w.kv_for(a).map(|(_, k)| k.puts_per_s),
        // Objects are stored as 128 KiB chunks plus a metadata message.
        AssetKind::ObjectStore => w
            .object_store_for(a)
            .map(|(_, o)| o.puts_per_s * ((o.object_size_bytes as f64 / 131_072.0).ceil().max(1.0) + 1.0)),
        AssetKind::Consumer => None,
    }
    .unwrap_or(0.0)
}

mod reliability;

/// One chain over `rel`'s components at `cap` concurrent failures, data-loss flows included: what a Monte
/// Carlo truncated at the same cap estimates (the tests that hold the two methods together use it).
pub fn exact_at(rel: &Reliability, cap: usize, max_states: usize) -> Option<Yearly> {
    Chain::build(rel, cap, max_states).map(|c| {
        let f = c.solve(rel);
        let mut y = rel.figures("exact", f.detail, &f.flows, None).listed();
        y.p_any_data_lost_beyond_cap_per_year =
            (f.cap < rel.components.len()).then(|| -(-f.beyond_cap_per_year).exp_m1());
        y
    })
}

/// States of the chain truncated at `cap` concurrent failures of `n` components (an upper bound: power
/// events may add several at once, but never more than `cap`).
pub fn chain_states(n: usize, cap: usize) -> u64 {
    1 + super::sweep::combinations(n, cap)
}

/// Most states of the chain `design` and `simulate` solve for unavailability, stalls and window losses
/// (at most 3, else 2, concurrent failures within it).
pub const CHAIN_STATES: usize = 60_000;
/// Most states of the chain over the store-destroying components alone, from which the data-loss figures
/// come (as many concurrent failures as fit, up to `DESTROYER_CAP_MAX`).
pub const DESTROYER_STATES: usize = 100_000;
/// The most concurrent failures the destroyer chain keeps.
pub const DESTROYER_CAP_MAX: usize = 6;

/// The yearly figures `design` shows: exact when the chains are small enough (see `Chains`), else a
/// 4,000-year Monte Carlo with seed 1 for what the full chain cannot hold.
pub fn yearly(site: &Site, layout: &crate::layout::Layout, catalog: &Catalog) -> Yearly {
    yearly_with(site, layout, catalog, Entries::List).listed()
}

/// As `yearly`, with the per-asset figures as `entries` says (per class for a layout given per class).
pub fn yearly_with(
    site: &Site,
    layout: &crate::layout::Layout,
    catalog: &Catalog,
    entries: Entries,
) -> Yearly<YearlyEntries> {
    let model = Model::new(site, layout);
    let mut rel = Reliability::new(&model, catalog);
    let mut rel_d = Reliability::destroyers(&model, catalog);
    rel.entries = entries;
    let chains = Chains::build(&rel, &rel_d);
    let mut y = chains.solve(&rel, &rel_d);
    // The comparison reads three totals: no per-asset entries for it.
    rel.entries = Entries::Totals;
    // What a hot spare buys: the same layout without its spares (or with one per array when it has none).
    // Spares set repair rates only (`Reliability::spares`, one pool per array the layout's groups use):
    // the components, the chains' states and their outcomes are the layout's own, so they are reused. A
    // DDP pool keeps its preservation capacity either way (SANtricity: hot spares "cannot be used for
    // pools"), and a layout of pools only gets no comparison.
    let pools: Vec<bool> = spare_pool_is_ddp(&rel);
    let has = layout.hot_spares_total() > 0;
    if pools.iter().any(|p| !p) {
        for r in [&mut rel, &mut rel_d] {
            for (s, &pool) in r.spares.iter_mut().zip(&pools) {
                if !pool {
                    *s = if has { 0 } else { 1 };
                }
            }
        }
        let o = chains.solve(&rel, &rel_d);
        y.spare_effect = Some(SpareEffect {
            compared_with: if has {
                "no_hot_spares"
            } else {
                "one_hot_spare_per_array"
            },
            p_any_data_lost_per_year: o.p_any_data_lost_per_year,
            acked_msgs_lost_per_year: o.acked_msgs_lost_per_year,
            worst_unavailable_min_per_year: o.worst_unavailable_min_per_year,
        });
    }
    y
}

/// Per spare pool of `rel` (one per array its groups use): whether it is a DDP pool's preservation
/// capacity rather than hot spares.
fn spare_pool_is_ddp(rel: &Reliability) -> Vec<bool> {
    let mut out = vec![false; rel.spares.len()];
    for c in &rel.components {
        if let (Some(p), Some(g)) = (c.spare_pool, c.group) {
            out[p] = super::repair::is_pool(rel.model.layout.groups[g].raid);
        }
    }
    out
}

/// `yearly` without the spare comparison.
pub fn yearly_only(site: &Site, layout: &crate::layout::Layout, catalog: &Catalog) -> Yearly {
    let model = Model::new(site, layout);
    let rel = Reliability::new(&model, catalog);
    let rel_d = Reliability::destroyers(&model, catalog);
    Chains::build(&rel, &rel_d).solve(&rel, &rel_d).listed()
}

/// The exact figures of `rel` (built with `Reliability::new`) and `rel_d` (`Reliability::destroyers`), as
/// `design` gives them: what `simulate` prints as exact. None when the full chain does not fit.
pub fn exact(rel: &Reliability, rel_d: &Reliability) -> Option<Yearly> {
    let chains = Chains::build(rel, rel_d);
    chains.full.as_ref()?;
    Some(chains.solve(rel, rel_d).listed())
}

/// The same figures for the layout with its hot spares changed: what a spare buys.
#[derive(Debug, Clone, Serialize)]
pub struct SpareEffect {
    /// `no_hot_spares` (the layout keeps some) or `one_hot_spare_per_array` (it keeps none).
    pub compared_with: &'static str,
    pub p_any_data_lost_per_year: f64,
    pub acked_msgs_lost_per_year: f64,
    pub worst_unavailable_min_per_year: f64,
}

/// What `natsplan simulate` reports: the Monte Carlo figures for one layout, beside the exact chain's.
#[derive(Debug, Clone, Serialize)]
pub struct SimulateReport {
    pub site: String,
    pub layout: String,
    pub sync_interval: String,
    pub site_years: u64,
    pub seed: u64,
    pub monte_carlo: Yearly,
    /// The exact figures `design` shows for this layout (its two chains), when small enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<Yearly>,
    /// The reference simulation, written apart from the chain: at the site's rates, and held against the
    /// exact chain at inflated rates (issue 33). None with `--no-reference`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<super::agreement::ReferenceCheck>,
    /// Open NATS issues these figures do not cover.
    pub known_hazards: Vec<super::Hazard>,
}

/// Asset `a`'s entry `e` into its class of equal entries (a new class named after it, else one more in
/// the class it matches).
fn add_to_class(
    classes: &mut Vec<YearlyClass>,
    class_at: &mut crate::fxhash::FxHashMap<EntryKey, usize>,
    a: &crate::layout::Asset,
    mut e: YearlyAsset,
) {
    let key = (a.kind.as_str(), e.bits(), e.mttdl_years.map(f64::to_bits), e.ci_bits());
    match class_at.entry(key) {
        std::collections::hash_map::Entry::Occupied(c) => {
            let c = &mut classes[*c.get()];
            c.count += 1;
            c.last = a.name.clone();
        }
        std::collections::hash_map::Entry::Vacant(v) => {
            v.insert(classes.len());
            e.name = a.name.to_string();
            e.kind = a.kind.into();
            classes.push(YearlyClass {
                count: 1,
                first: a.name.clone(),
                last: a.name.clone(),
                entry: e,
            });
        }
    }
}
