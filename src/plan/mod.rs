//! The Plan: one serialisable value carrying the site's ranked layouts with every evaluation. Commands
//! build it once; reports, emit and verify read it.

mod capacity;
mod choose;
pub mod classes;
mod detail;
mod evaluator;
pub mod inputs;
mod placement_memo;
mod rates;
mod unused;
mod verdict;

pub use capacity::{failover_room, needs, needs_after, stores, tolerated_failures};
pub use choose::Selection;
pub use detail::{Detail, PerAsset};
pub use rates::{stream_rates, StreamRate, OBJECT_CHUNK_BYTES};
pub use unused::{idle_disks, unused_servers, IdleDisks, UnusedRole, UnusedServer};
pub use verdict::{perf_bucket, rank, reasons, times, wear as wear_check, Closeness, Tolerances};

use crate::catalog::Catalog;
use crate::layout::{Layout, PlacementRule, ProblemCode, Severity};
use crate::site::{Site, Tolerance};
use serde::Serialize;

/// A layout's verdict, worst reason first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Recommended,
    Acceptable,
    Risky,
    Rejected,
}

impl Verdict {
    pub fn from_severity(s: Option<Severity>) -> Verdict {
        match s {
            None | Some(Severity::Info) => Verdict::Recommended,
            Some(Severity::Note) => Verdict::Acceptable,
            Some(Severity::Risk) => Verdict::Risky,
            Some(Severity::Reject) => Verdict::Rejected,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Recommended => "recommended",
            Verdict::Acceptable => "acceptable",
            Verdict::Risky => "risky",
            Verdict::Rejected => "rejected",
        }
    }
}

/// Capacity of a layout against the workload at the end of the planning horizon.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Capacity {
    /// Sum of the JetStream store sizes (`max_file_store`) of all servers.
    pub usable_bytes: u64,
    /// Sum of all replicas' bytes (with growth, RAFT logs).
    pub needed_bytes: u64,
    /// Fraction of usable left free on the fullest server (the binding one); negative means short.
    pub headroom: f64,
    /// The fullest server and its figures.
    pub fullest_server: Option<ServerCapacity>,
    /// The same after the worst tolerated failure, once the failed peers are removed and their replicas
    /// rebuilt on the survivors (NATS moves nothing before a peer-remove).
    pub after_failure: Option<AfterFailure>,
    /// Bytes of each volume group left for other services (pattern 4), total.
    pub left_for_others_bytes: u64,
    /// When the workload does not fit (`headroom` < 0): by how much, and the asset that needs the most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<Shortfall>,
}

/// How far a layout's stores fall short of what the workload needs at the end of the horizon.
#[derive(Debug, Clone, Serialize)]
pub struct Shortfall {
    /// Bytes missing: what is needed less what the stores hold — of the whole layout (`server` absent),
    /// or of the fullest server (`server` names it) when the layout as a whole would hold the workload but
    /// the placement puts more on that server than its store holds.
    pub short_bytes: u64,
    /// Needed ÷ held, of the same (2.0: the stores are half what is needed).
    pub times_too_small: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The asset that needs the most bytes there (all its replicas; on a server, its replica there), and
    /// its share of what is needed there (0..1).
    pub largest_asset: String,
    pub largest_share: f64,
}

/// Assets nats-server cannot create on a layout: more replicas than eligible servers (or racks, under
/// `unique_tag`).
#[derive(Debug, Clone, Serialize)]
pub struct NotPlaced {
    /// How many such assets (streams, KV buckets, object stores; their durable consumers not counted).
    pub assets: usize,
    /// The first of them with the most replicas, its replicas, and how many of them can be placed.
    pub first: String,
    pub replicas: u8,
    pub placeable: u32,
}

impl NotPlaced {
    /// The layout's assets that cannot be placed, when there are any.
    pub fn of(site: &Site, layout: &Layout) -> Option<NotPlaced> {
        let mut out: Option<NotPlaced> = None;
        for a in layout
            .assets
            .iter()
            .filter(|a| a.kind != crate::layout::AssetKind::Consumer)
        {
            let p = a.placeable(site);
            if p >= a.replicas as u32 {
                continue;
            }
            match &mut out {
                None => {
                    out = Some(NotPlaced {
                        assets: 1,
                        first: a.name.to_string(),
                        replicas: a.replicas,
                        placeable: p,
                    })
                }
                Some(n) => {
                    n.assets += 1;
                    if a.replicas > n.replicas {
                        (n.first, n.replicas, n.placeable) = (a.name.to_string(), a.replicas, p);
                    }
                }
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerCapacity {
    pub name: String,
    pub usable_bytes: u64,
    pub needed_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AfterFailure {
    /// The failure, as whatif selectors (e.g. `rack:A`).
    pub failed: Vec<String>,
    pub fullest_server: Option<ServerCapacity>,
    pub headroom: f64,
}

/// One JetStream server of a layout as the JSON contract shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedServer {
    pub name: String,
    pub rack: String,
    pub array: Option<String>,
    pub volume_group: Option<String>,
    /// The volume group's RAID level and its drives (slots from 1) in the order survival models them: for
    /// RAID 10 the mirror pairs are (1st, 2nd), (3rd, 4th), … of this list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raid: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drives: Vec<u32>,
    pub lun_bytes: u64,
    /// What the store sits on (`lun`, `pool_volume`, `internal`, `vm_disk`) and that in one line: which
    /// LUN or volume from which array or pool (`layout::describe_volume`).
    pub volume_kind: Option<crate::layout::VolumeKind>,
    pub volume: Option<String>,
    /// `max_file_store` natsplan will emit for it.
    pub store_bytes: u64,
    /// The server's tags as emitted (lower case).
    pub tags: Vec<String>,
}

/// Where one asset's replicas go.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedAsset {
    pub name: String,
    pub kind: crate::layout::AssetKind,
    pub replicas: u8,
    /// Where the emulated meta leader puts it (balanced; NATS breaks ties at random).
    pub expected: Vec<String>,
    /// The pinned replica set it is placed on; None = any JetStream server (distinct racks when the
    /// layout has a `unique_tag`).
    pub set: Option<String>,
    pub bytes_per_replica: u64,
}

/// One evaluated layout of the plan. Its per-asset lists (placement, predictions, yearly figures) are in
/// `detail`, per asset or per class (`Detail`); the rest is the same either way.
///
/// A per-asset list is read only through `per_asset` (or `placed` for the placed layout), which says
/// when the layout is per class; none is a field to read empty by accident:
///
/// ```
/// fn assets(l: &natsplan::plan::PlannedLayout) -> Option<usize> {
///     l.per_asset().map(|d| d.assets.len())
/// }
/// ```
/// ```compile_fail
/// fn assets(l: &natsplan::plan::PlannedLayout) -> usize {
///     l.assets.len()
/// }
/// ```
/// ```compile_fail
/// fn streams(l: &natsplan::plan::PlannedLayout) -> usize {
///     l.predicted.as_ref().map_or(0, |p| p.streams.len())
/// }
/// ```
/// ```compile_fail
/// fn yearly(l: &natsplan::plan::PlannedLayout) -> usize {
///     l.yearly.as_ref().map_or(0, |y| y.assets.len())
/// }
/// ```
/// ```compile_fail
/// fn placed(l: &natsplan::plan::PlannedLayout) -> usize {
///     l.layout.assets.len()
/// }
/// ```
#[derive(Debug, Clone)]
pub struct PlannedLayout {
    pub id: String,
    pub rank: usize,
    pub pattern: String,
    /// The layout's RAID label (`Layout::raid_label`): in a mixed layout every level its volumes use,
    /// joined by `+`; in a one-pattern layout the level of its first group (arrays by name).
    pub raid: String,
    /// Every RAID level the servers' volumes use, in the order raid0, raid1, raid10, raid6, ddp-raid1.
    pub raid_levels: Vec<crate::layout::Raid>,
    pub replicas: u8,
    pub servers: Vec<PlannedServer>,
    /// The site's servers this layout leaves out of JetStream, each with what to do with it.
    pub unused_servers: Vec<UnusedServer>,
    /// Installed data disks of the arrays this layout uses that none of its groups takes (issue 38);
    /// absent when there are none.
    pub idle_disks: Vec<IdleDisks>,
    /// Another layout of this plan on the same servers and pattern whose groups take more of those idle
    /// disks (wider groups); absent when there is none.
    pub wider_layout: Option<String>,
    pub hot_spares: u32,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    /// Assets this layout cannot create (a rejection): `tolerates` is then 0 of every kind and the
    /// capacity figures are the whole layout's (no per-server placement to judge).
    pub not_placed: Option<NotPlaced>,
    /// How far a rejected layout is from usable, for ranking rejected layouts among themselves
    /// (`verdict::closeness`); not in the JSON.
    pub closeness: verdict::Closeness,
    /// Failures per kind that every existing stream survives with its writes going on (the meta group
    /// apart since issue 15: see `tolerates_meta`).
    pub tolerates: Tolerance,
    /// Failures per kind the meta group survives: the JetStream API (create, update, delete, consumer
    /// create, peer-remove) keeps working.
    pub tolerates_meta: Tolerance,
    pub capacity: Capacity,
    pub disks_used: u32,
    pub arrays_used: u32,
    pub racks_used: u32,
    /// `unique_tag` to emit, when that is how placement is steered.
    pub unique_tag: Option<String>,
    pub replica_sets: Vec<(String, Vec<String>)>,
    /// SSD wear: predicted drive writes per day per group against the disks' rating (survival).
    pub endurance: crate::survival::Endurance,
    /// Yearly availability and durability figures (survival), when computed; the per-asset figures
    /// (`yearly.assets` in JSON) are in `detail`.
    pub yearly: Option<crate::survival::Yearly<()>>,
    /// Performance predictions for the site's workload (perf), when computed; the per-asset predictions
    /// (`predicted.streams` in JSON) are in `detail`.
    pub predicted: Option<crate::perf::Predicted<()>>,
    /// The per-asset lists, or the same per class (`Detail`): read through `per_asset` and `classes`.
    detail: Detail,
    /// The layout itself, for emit, whatif and verify. While the layout is per class its placed assets
    /// are not kept (memory: 100,000 placed assets per layout): `placed` gives it only per asset.
    layout: Layout,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub site: String,
    pub generator: String,
    pub sync_interval: String,
    /// Ranked, best first.
    pub layouts: Vec<PlannedLayout>,
    /// Layouts evaluated in all (the report may show only the top ones).
    pub evaluated: usize,
    /// What the reader must know before reading the figures (issue 39: a `--calibration` carried far from
    /// where it was measured), printed above the tables; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Remarks about the site as a whole.
    pub notes: Vec<String>,
    /// Open NATS issues the figures do not cover (survival::known_hazards).
    pub known_hazards: Vec<crate::survival::Hazard>,
    #[serde(skip)]
    pub input: Site,
}

impl Plan {
    pub fn layout(&self, id: &str) -> Option<&PlannedLayout> {
        self.layouts.iter().find(|l| l.id == id)
    }

    /// Give layout `id` its per-asset lists when it has them per class (`Detail::PerClass`, `--layout
    /// ID` on a site of more than 1,000 assets): the same evaluation, so the same entries
    /// (`Evaluator::materialise`). Commands never call it: `Inputs::choose` does, for the layout the
    /// command takes.
    pub(super) fn materialise(&mut self, id: &str, catalog: &Catalog, cal: &crate::perf::Calibration) {
        let site = &self.input;
        if let Some(l) = self.layouts.iter_mut().find(|l| l.id == id) {
            evaluator::Evaluator::new(site, catalog, cal, [l.layout.replicas]).materialise(l);
        }
    }
}

/// Evaluate and rank every candidate layout of a site with the built-in calibration. Pure: no printing,
/// no I/O.
pub fn build(site: &Site, catalog: &Catalog) -> Plan {
    build_with(site, catalog, &crate::perf::Calibration::builtin())
}

/// As `build`, with a given calibration (`--calibration FILE`).
pub fn build_with(site: &Site, catalog: &Catalog, cal: &crate::perf::Calibration) -> Plan {
    build_progress(site, catalog, cal, &|_, _| {})
}

/// As `build_with`, telling `progress` (layouts evaluated, layouts in all) as it goes; layouts are
/// evaluated in parallel (each is independent; the order of the result is the enumeration's).
pub fn build_progress(
    site: &Site,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Plan {
    // Each layout is sized, placed and evaluated in one task (`evaluator`), in parallel; the result comes
    // in the enumeration's order.
    let evaluator = evaluator::Evaluator::new(site, catalog, cal, site.nats.replicas.iter().copied());
    let candidates = evaluator.evaluate_all(progress);
    let mut notes = Vec::new();
    let mut planned: Vec<PlannedLayout> = Vec::new();
    for c in candidates {
        match c {
            evaluator::Evaluated::Planned(p) => planned.push(*p),
            evaluator::Evaluated::Empty(l) => {
                // Say once why the pattern does not fit.
                let why = once_each(
                    l.problems
                        .iter()
                        .filter(|p| !matches!(p.code, ProblemCode::NoSuitablePeers | ProblemCode::DdpReserve))
                        .map(|p| p.text.as_str()),
                );
                let note = format!("pattern {} does not fit this site: {why}", l.pattern.as_str());
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    if planned
        .iter()
        .any(|l| l.yearly.is_none() && l.verdict != Verdict::Rejected)
    {
        notes.push(format!(
            "yearly figures are computed for layouts of up to {YEARLY_MAX_SERVERS} servers and {YEARLY_MAX_DISKS} disks; \
             for larger ones run `natsplan simulate SITE --layout ID`"
        ));
    }
    rank(&mut planned);
    link_wider(&mut planned);
    // The top-ranked layout is shown per asset.
    if let Some(top) = planned.first_mut() {
        evaluator.materialise(top);
    }
    // What JSON lists (`layouts`): candidates with no JetStream server are not layouts (see the notes).
    let evaluated = planned.len();
    if planned.is_empty() {
        notes.push("no layout could be built: no server has storage (an array in its rack or its own disks)".into());
    }
    notes.push(crate::survival::hazards_line());
    if site.nats.sync.is_delayed() {
        notes.push(format!(
            "sync_interval {}: acknowledged writes can sit in the page cache for up to {:.0} s (the sooner of \
             the next sync and the kernel's {:.0} s dirty-page write-back); a power event that takes a quorum of a \
             stream's replicas can lose them (Jepsen NATS 2.12.1, nats-server #7564)",
            site.nats.sync,
            site.nats.sync.loss_window_s(catalog.failures.dirty_expire_s.value),
            catalog.failures.dirty_expire_s.value
        ));
    }
    Plan {
        site: site.name.clone(),
        generator: format!("natsplan {}", env!("CARGO_PKG_VERSION")),
        sync_interval: site.nats.sync.config_value(),
        layouts: planned,
        evaluated,
        warnings: Vec::new(),
        notes,
        known_hazards: crate::survival::known_hazards(),
        input: site.clone(),
    }
}

/// Problems joined with "; ", a rule said once for all the arrays it hits: "DDP needs at least 11 disks;
/// A1 has 3" and "…; B1 has 3" become "DDP needs at least 11 disks: A1 has 3, B1 has 3".
fn once_each<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for t in texts {
        let (rule, what) = match t.split_once("; ") {
            Some((rule, what)) => (rule, Some(what)),
            None => (t, None),
        };
        match groups.iter_mut().find(|(r, _)| *r == rule) {
            Some((_, v)) => v.extend(what),
            None => groups.push((rule, what.into_iter().collect())),
        }
    }
    groups
        .into_iter()
        .map(|(rule, what)| match what.is_empty() {
            true => rule.to_string(),
            false => format!("{rule}: {}", what.join(", ")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a layout a command takes has its per-asset lists: `Inputs::choose` materialises it
/// (`PlannedLayout::placed`, `per_asset`).
pub const MATERIALISED: &str = "the layout a command takes is given per asset (Inputs::choose materialises it)";

/// Layouts up to this size get yearly figures in `design`; larger ones say to run `simulate`.
pub const YEARLY_MAX_SERVERS: usize = 12;
pub const YEARLY_MAX_DISKS: u32 = 96;

/// Evaluate one layout: tolerance, capacity, reasons, verdict (rank is set by `rank`).
pub fn plan_layout(site: &Site, catalog: &Catalog, cal: &crate::perf::Calibration, layout: Layout) -> PlannedLayout {
    plan_layout_with(site, catalog, cal, layout, true, &mut Default::default())
}

/// As `plan_layout`; with `expected` false the layout is per class (`Detail::PerClass`) at once: no
/// planned asset, prediction or yearly entry is built per asset (`classes::detail` groups the placed
/// assets by kind, replicas, set and size: 100,000 planned assets were built only to be grouped and
/// dropped).
fn plan_layout_with(
    site: &Site,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
    layout: Layout,
    expected: bool,
    after: &mut crate::layout::FailureNeeds,
) -> PlannedLayout {
    let tolerates = crate::survival::tolerates(site, &layout);
    let tolerates_meta = crate::survival::tolerates_meta(site, &layout);
    let capacity = capacity::evaluate(site, &layout, &tolerates, after);
    // A layout given per class gets its predictions per class (the same entries, grouped as made).
    let predicted = (!layout.servers.is_empty()).then(|| match expected {
        true => crate::perf::predict_layout(site, &layout, catalog, cal).map_streams(crate::perf::Streams::List),
        false => {
            crate::perf::predict_layout_by_class(site, &layout, catalog, cal).map_streams(crate::perf::Streams::Classes)
        }
    });
    let endurance = crate::survival::endurance(&crate::survival::Model::new(site, &layout), catalog);
    let tol = verdict::Tolerances {
        writes: &tolerates,
        meta: &tolerates_meta,
    };
    let mut problems = reasons(site, catalog, &layout, tol, &capacity, predicted.as_ref());
    verdict::wear(site, &endurance, &mut problems);
    let verdict = Verdict::from_severity(problems.iter().map(|p| p.severity).max());
    let not_placed = NotPlaced::of(site, &layout);
    let closeness = verdict::closeness(site, not_placed.as_ref(), tol, &capacity, predicted.as_ref());
    // Yearly odds for every layout that can be used (a rejected one ranks last whatever its odds).
    // Large layouts are left to `natsplan simulate` (the chain or the Monte Carlo grows with them and design
    // must stay interactive).
    let small = layout.servers.len() <= YEARLY_MAX_SERVERS && layout.disks_used() <= YEARLY_MAX_DISKS;
    let entries = match expected {
        true => crate::survival::Entries::List,
        false => crate::survival::Entries::Classes,
    };
    let yearly =
        (verdict != Verdict::Rejected && small).then(|| crate::survival::yearly_with(site, &layout, catalog, entries));
    let stores = stores(site, &layout);
    let servers = layout
        .servers
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let srv = &site.servers[s];
            let lun = layout.lun_of(s);
            let group = lun.map(|l| &layout.groups[l.group]);
            let volume = crate::layout::describe_volume(site, &layout, s);
            PlannedServer {
                name: srv.name.clone(),
                rack: site.racks[srv.rack].name.clone(),
                array: group.map(|g| site.arrays[g.array].name.clone()),
                volume_group: group.map(|g| g.name.clone()),
                raid: group.map(|g| g.raid.as_str().to_string()),
                drives: group.map(|g| g.disks.clone()).unwrap_or_default(),
                lun_bytes: lun.map(|l| l.size_bytes).unwrap_or(0),
                volume_kind: volume.as_ref().map(|v| v.0),
                volume: volume.map(|v| v.1),
                store_bytes: stores[i] as u64,
                tags: server_tags(site, &layout, s),
            }
        })
        .collect();
    let names = |v: &[usize]| v.iter().map(|&s| site.servers[s].name.clone()).collect::<Vec<_>>();
    let (unique_tag, replica_sets) = match &layout.placement {
        PlacementRule::UniqueTag { prefix } => (Some(prefix.clone()), Vec::new()),
        PlacementRule::Pinned { sets } => (None, sets.iter().map(|s| (s.name.clone(), names(&s.servers))).collect()),
        PlacementRule::Free => (None, Vec::new()),
    };
    // The summaries apart from their per-asset lists, which go to `detail`, per asset or per class.
    let (predicted, streams) = predicted.map(|p| p.with_streams(())).unzip();
    let (yearly, yearly_entries) = yearly.map(|y| y.with_assets(())).unzip();
    let detail = classes::detail(site, &layout, expected, streams, yearly_entries);
    PlannedLayout {
        id: layout.id.clone(),
        rank: 0,
        pattern: layout.pattern.as_str().to_string(),
        raid: layout.raid_label(),
        raid_levels: layout.raid_levels(),
        replicas: layout.replicas,
        servers,
        unused_servers: unused_servers(site, &layout),
        idle_disks: idle_disks(site, &layout),
        wider_layout: None,
        hot_spares: layout.hot_spares_total(),
        verdict,
        reasons: problems.into_iter().map(|p| p.text).collect(),
        not_placed,
        closeness,
        tolerates,
        tolerates_meta,
        capacity,
        disks_used: layout.disks_used(),
        arrays_used: layout.arrays_used(),
        racks_used: layout.racks_used(site).len() as u32,
        unique_tag,
        replica_sets,
        yearly,
        endurance,
        predicted,
        detail,
        layout,
    }
}

/// When the best layout's predictions rest on a user's calibration carried beyond `perf::FAR_CALIBRATION`,
/// the note design puts first: how far, and the built-in calibration's verdicts beside this plan's
/// (`builtin`: the same site planned with the built-in calibration only). None otherwise (issue 39: a lab
/// calibration of two shared cores "scaled" to 16-core servers rejected every layout of a production site).
pub fn far_calibration_note(plan: &Plan, builtin: &Plan) -> Option<String> {
    let best = plan.layouts.first()?;
    let (id, distance) = crate::perf::far_user_calibration(best.prediction_entries())?;
    let rejected = |p: &Plan| p.layouts.iter().filter(|l| l.verdict == Verdict::Rejected).count();
    let other = builtin.layouts.first();
    Some(format!(
        "calibration \"{id}\" is carried far to this site's servers (distance {distance:.2}, beyond {:.2}: more than \
         about twice the cores, or a shared host against a dedicated one), so its verdicts rest on a long \
         extrapolation; with it the best layout is {} ({}), {} of {} rejected; with the built-in calibration instead \
         {}; calibrate on hardware like the site's for figures to buy on",
        crate::perf::FAR_CALIBRATION,
        best.id,
        best.verdict.as_str(),
        rejected(plan),
        plan.layouts.len(),
        match other {
            Some(o) => format!(
                "the best is {} ({}), {} of {} rejected",
                o.id,
                o.verdict.as_str(),
                rejected(builtin),
                builtin.layouts.len()
            ),
            None => "no layout could be built".to_string(),
        }
    ))
}

/// For each layout that leaves data disks idle, the best-ranked other layout of the same pattern, default
/// replica count and servers that leaves fewer idle (`layouts[].wider_layout`): the one with wider groups
/// on the disks installed. Layout ids, not positions: the ranking is already done.
fn link_wider(planned: &mut [PlannedLayout]) {
    let idle = |l: &PlannedLayout| l.idle_disks.iter().map(|i| i.disks.len()).sum::<usize>();
    let servers = |l: &PlannedLayout| l.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    let links: Vec<Option<String>> = planned
        .iter()
        .map(|l| {
            if l.idle_disks.is_empty() {
                return None;
            }
            planned
                .iter()
                .find(|o| {
                    o.id != l.id
                        && o.pattern == l.pattern
                        && o.replicas == l.replicas
                        && idle(o) < idle(l)
                        && servers(o) == servers(l)
                })
                .map(|o| o.id.clone())
        })
        .collect();
    for (l, w) in planned.iter_mut().zip(links) {
        l.wider_layout = w;
    }
}

/// Where each of a layout's assets goes, as JSON shows it (server names).
fn planned_assets(site: &Site, layout: &Layout) -> Vec<PlannedAsset> {
    layout
        .assets
        .iter()
        .map(|a| PlannedAsset {
            name: a.name.to_string(),
            kind: a.kind,
            replicas: a.replicas,
            expected: a.expected.iter().map(|&s| site.servers[s].name.clone()).collect(),
            set: a.set.as_deref().map(str::to_string),
            bytes_per_replica: a.bytes_per_replica.ceil() as u64,
        })
        .collect()
}

/// The lower-case tags a JetStream server gets: its rack, its array, and every replica set it is in.
pub fn server_tags(site: &Site, layout: &Layout, server: usize) -> Vec<String> {
    let srv = &site.servers[server];
    let mut tags = vec![format!("rack:{}", site.racks[srv.rack].name.to_ascii_lowercase())];
    if let Some(a) = layout.array_of(server) {
        tags.push(format!("array:{}", site.arrays[a].name.to_ascii_lowercase()));
    }
    if let Some(h) = &srv.host {
        tags.push(format!("host:{}", h.to_ascii_lowercase()));
    }
    if let PlacementRule::Pinned { sets } = &layout.placement {
        for s in sets.iter().filter(|s| s.servers.contains(&server)) {
            tags.push(format!("set:{}", s.name.to_ascii_lowercase()));
        }
    }
    tags
}
