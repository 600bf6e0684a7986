//! The search: every bill the ranges allow (up to a budget), each written as a site, read back with the
//! site parser and planned by `plan::build_with` as design plans it; each (bill, layout) pair a point with
//! its cost, design's figures, its binding constraint, and whether it is on the frontier.

use super::bill::{self, Bill, Skip};
use super::price::{self, Cost, CostUnit, Prices};
use super::{StorageKind, WorkloadFile};
use crate::catalog::Catalog;
use crate::plan::{PlannedLayout, Verdict};
use crate::site::{Site, Tolerance};
use serde::Serialize;
use std::sync::Arc;

mod frontier;
pub use frontier::{binding, constraints, mark_frontier, meets};

const TIB: f64 = 1024.0 * 1024.0 * 1024.0 * 1024.0;

/// The frontier's axes, as the JSON names them: cost (lower is better), design's
/// `p_any_data_lost_per_year` and `worst_unavailable_min_per_year` (lower), and the free capacity on the
/// fullest server after the worst tolerated failure (higher).
pub const AXES: [&str; 4] = [
    "cost.total",
    "p_any_data_lost_per_year",
    "worst_unavailable_min_per_year",
    "free_after_worst_tolerated_failure",
];

/// The tightest of a point's constraints: what it is, its demand and what the candidate has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Binding {
    /// `placement`, `tolerance`, `capacity`, `capacity_after_failure`, `throughput`, `server_cpu`,
    /// `server_memory`, `server_network_in`, `server_network_out`.
    pub kind: String,
    /// Demand and capacity in `unit`; capacity ÷ demand below 1 means the requirement is not met.
    pub demand: f64,
    pub capacity: f64,
    pub unit: String,
    /// One line, e.g. `capacity after rack:A on s3: 1.58 of 1.69 TiB`.
    pub text: String,
}

impl Binding {
    pub fn ratio(&self) -> f64 {
        if self.demand > 0.0 {
            self.capacity / self.demand
        } else {
            f64::INFINITY
        }
    }
}

/// One (bill, layout) pair.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// `BILL/LAYOUT`.
    pub id: String,
    pub bill: String,
    /// The layout's id, as `design --layout` takes it on the bill's site file.
    pub layout: String,
    pub verdict: Verdict,
    /// Verdict recommended or acceptable, and every asset placed.
    pub meets_requirements: bool,
    pub cost: Cost,
    /// What may fail at once with every stream still taking writes (design's `tolerates`).
    pub tolerates: Tolerance,
    /// Design's `yearly.p_any_data_lost_per_year` and `yearly.worst_unavailable_min_per_year` (None when
    /// design computes none: a layout that cannot place its assets).
    pub p_any_data_lost_per_year: Option<f64>,
    pub worst_unavailable_min_per_year: Option<f64>,
    /// Fraction free on the fullest server after the worst tolerated failure (design's
    /// `capacity.after_failure.headroom`; `capacity.headroom` when no failure is tolerated).
    pub free_after_worst_tolerated_failure: f64,
    /// That failure, as whatif selectors (empty: none tolerated).
    pub worst_tolerated_failure: Vec<String>,
    pub binding: Option<Binding>,
    /// On the non-dominated set of the points that meet every requirement.
    pub frontier: bool,
    /// The bill's site file (what `--out DIR` writes and `design` reads).
    pub site: Arc<str>,
    /// `size --have`: the owned hardware (kept, cost 0) and what this bill adds; absent without --have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owned: Option<super::have::grow::Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added: Option<super::have::grow::Added>,
    /// `size --have`: what changes on owned hardware from today's layout, and how (absent without --have).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub migration: Option<super::have::migrate::Migration>,
}

/// Everything `size` found.
#[derive(Debug, Clone, Serialize)]
pub struct Sizing {
    pub workload: String,
    pub cost_unit: CostUnit,
    pub axes: [&'static str; 4],
    /// Combinations of the ranges, bills among them, bills evaluated (the budget stops it), and the
    /// combinations that do not fit a rack or an array, by reason.
    pub combinations: usize,
    pub bills: usize,
    pub budget: usize,
    /// `--cpu-seconds`, when given.
    pub cpu_seconds_budget: Option<f64>,
    /// Whether bills that provably cannot meet the requirements were pruned (false with `--exhaustive`).
    pub pruning: bool,
    /// Bills planned, and the (bill, layout) points they gave.
    pub considered: usize,
    pub points: usize,
    /// Bills not planned because none of their points can meet the requirements.
    pub pruned: Vec<Pruned>,
    /// Single-array reference bills (seed 000's one big array): planned though the pruning rule would
    /// skip them, outside the limits (`references`); empty with `--exhaustive`, where every bill is planned.
    pub references: Vec<String>,
    /// Bills a limit (`--budget` or `--cpu-seconds`) left unevaluated.
    pub over_budget: usize,
    /// Which limit cut the search first (`budget`, `cpu_seconds`), or None.
    pub cut_by: Option<&'static str>,
    /// True when every bill was planned or pruned: the frontier is the whole search's. False: a limit cut
    /// it, and the frontier and cheapest are those of the bills evaluated.
    pub complete: bool,
    /// CPU-seconds the search spent (every thread).
    pub cpu_seconds: f64,
    pub skipped: Vec<(String, usize)>,
    /// Every (bill, layout) point, cheapest first.
    pub candidates: Vec<Point>,
    /// The cheapest point that meets every requirement (ties: the lowest loss odds).
    pub cheapest: Option<String>,
    /// True when no bill left out by the budget could be cheaper than `cheapest` (bills are evaluated
    /// cheapest first, so one costing no more than the first bill left out is the cheapest of all).
    pub cheapest_proven: bool,
    /// Bills whose generated site the parser refused (a bug in size; never expected).
    pub invalid: Vec<String>,
    /// What the figures assume, said.
    pub assumptions: Vec<String>,
    /// `size --have`: today's site against the workload, today's layout and the growth path; absent
    /// without --have.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub have: Option<super::have::HaveReport>,
    /// The bills evaluated, for `--out DIR`.
    #[serde(skip)]
    pub sites: Vec<(String, Arc<str>)>,
}

/// A bill's site: its text read by the site parser. A bill with no more racks (arrays, servers) than
/// `policy.min_tolerated` asks to survive losing is a site design refuses ("no layout can"); it is still a
/// candidate — seed 000's one big array in one rack is one — so its file lowers that requirement to what
/// the bill can be asked (said in a comment there), and it is planned against the workload's own
/// requirement (returned beside the site), which it fails: its binding constraint is that outage. Its
/// figures are design's on that file.
pub fn site_of(
    b: &Bill,
    text: &Arc<str>,
    catalog: &Catalog,
) -> Result<(Arc<str>, Site, Tolerance), crate::input::InputErrors> {
    let file = format!("{}.yaml", b.id);
    let e = match crate::site::parse_str(text, &file, catalog) {
        Ok(s) => {
            let required = s.policy.min_tolerated;
            return Ok((text.clone(), s, required));
        }
        Err(e) => e,
    };
    let have = |key: &str| match key {
        "racks" => Some(b.rack_count()),
        "servers" => Some(b.servers()),
        "arrays" => Some(b.array_domains().unwrap_or(b.servers())),
        _ => None,
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut notes = Vec::new();
    let mut wanted = Vec::new();
    for x in &e.errors {
        let key = x.path.strip_prefix("policy.min_tolerated.");
        let (Some(key), Some(l), Some(c)) = (key, x.line, x.column) else {
            return Err(e);
        };
        let (Some(have), Some(line)) = (have(key), lines.get_mut(l - 1)) else {
            return Err(e);
        };
        let start = line
            .char_indices()
            .nth(c - 1)
            .map(|(i, _)| i)
            .ok_or_else(|| e.clone())?;
        let len = line[start..].chars().take_while(char::is_ascii_digit).count();
        let Ok(want) = line[start..start + len].parse::<u32>() else {
            return Err(e);
        };
        let lowered = have.saturating_sub(1);
        line.replace_range(start..start + len, &lowered.to_string());
        notes.push(format!(
            "# natsplan size: policy.min_tolerated.{key} lowered from {want} to {lowered} in this file only: design \
             refuses a site of {have} {key} asked to survive losing {want}; size judged this bill against {want}, \
             which it fails\n"
        ));
        wanted.push((key.to_string(), want));
    }
    let mut fixed = notes.concat();
    for l in lines {
        fixed.push_str(&l);
        fixed.push('\n');
    }
    let site = crate::site::parse_str(&fixed, &file, catalog)?;
    let mut required = site.policy.min_tolerated;
    for (key, want) in wanted {
        match key.as_str() {
            "racks" => required.racks = want,
            "servers" => required.servers = want,
            _ => required.arrays = want,
        }
    }
    Ok((fixed.into(), site, required))
}

/// How far the search may go: bills evaluated, CPU-seconds spent, and whether bills that provably cannot
/// meet the requirements are pruned (`--exhaustive` turns pruning off: the brute force the pruning is
/// tested against).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// At most this many bills planned (pruned bills do not count).
    pub budget: usize,
    /// Stop starting bills once the process has spent this many CPU-seconds in the search (all threads;
    /// checked between bills, so the bill under way finishes; the first bill is always planned).
    pub cpu_seconds: Option<f64>,
    pub prune: bool,
}

impl Limits {
    /// Every bill, no pruning, no CPU limit: the brute force.
    pub fn exhaustive() -> Limits {
        Limits {
            budget: usize::MAX,
            cpu_seconds: None,
            prune: false,
        }
    }
}

/// A bill left unplanned because none of its points can meet the requirements (`prune_reason`,
/// `capacity_reason`).
#[derive(Debug, Clone, Serialize)]
pub struct Pruned {
    pub bill: String,
    pub cost: Cost,
    /// Why no layout of it can meet the requirements, in words.
    pub reason: String,
    /// Which rule pruned it: `outage` (quorum arithmetic, `prune_reason`) or `capacity` (raw capacity below
    /// the bytes stored at the fewest replicas, `capacity_reason`).
    pub kind: &'static str,
}

/// Whether some replica count (1..5) over `domains` failure domains can keep its quorum after the worst
/// `lost` of them fail. However the replicas are spread, the `lost` fullest domains hold at least
/// ⌈R·lost/domains⌉ of them (pigeonhole), so R keeps its quorum only if R − ⌈R·lost/domains⌉ ≥ ⌊R/2⌋ + 1.
/// False means no stream on these domains can survive that outage, whatever the layout and placement.
pub fn quorum_can_survive(domains: u32, lost: u32) -> bool {
    lost == 0 || (domains > 0 && (1..=5u32).any(|r| r.saturating_sub((r * lost).div_ceil(domains)) > r / 2))
}

/// Why no point of `b` can meet `required` (so it is neither on the frontier nor the cheapest), or None
/// when one might. Only outages are used: losing `t` of a bill's racks (its arrays, its servers) with no
/// replica count that keeps a quorum is a fact of quorum arithmetic, not of design's model, so the pruned
/// search's frontier and cheapest are the brute force's (tested on small workloads).
pub fn prune_reason(b: &Bill, required: &Tolerance) -> Option<String> {
    let domains = [
        ("rack", Some(b.rack_count()), required.racks),
        ("array", b.array_domains(), required.arrays),
        ("server", Some(b.servers()), required.servers),
    ];
    domains.into_iter().find_map(|(what, have, lost)| {
        let have = have?;
        (!quorum_can_survive(have, lost)).then(|| {
            format!(
                "{what} outage: no replica count keeps a quorum over {have} {what}(s) after losing {lost} \
                 (policy.min_tolerated.{what}s), whatever the layout"
            )
        })
    })
}

/// The least the workload can store on any layout: every stream, KV bucket and object store at the fewest
/// replicas it may have (its own `replicas`, else the smallest of `nats.replicas`), each replica its
/// bytes as design sizes them (`layout::sizing`: compression, growth over the horizon, caps, RAFT log).
/// Consumers' few bytes are left out: a lower bound.
pub fn least_stored_bytes(site: &Site) -> f64 {
    use crate::layout::sizing;
    let fewest = site.nats.replicas.iter().copied().min().unwrap_or(1);
    let at = |own: Option<u8>| own.unwrap_or(fewest);
    let w = &site.workload;
    let streams = w
        .streams
        .iter()
        .map(|s| sizing::stream_bytes(site, s, at(s.replicas)) * f64::from(at(s.replicas)));
    let kv =
        w.kv.iter()
            .map(|k| sizing::kv_bytes(site, k, at(k.replicas)) * f64::from(at(k.replicas)));
    let objs = w
        .object_stores
        .iter()
        .map(|o| sizing::object_store_bytes(site, o, at(o.replicas)) * f64::from(at(o.replicas)));
    streams.chain(kv).chain(objs).sum()
}

/// Why no point of `b` can hold the workload, or None when one might: every disk the bill buys (spares
/// included), at its full raw capacity (RAID 0, no wear headroom: the most any pattern could make of it),
/// holds less than `least` (`least_stored_bytes`). Every layout's servers then need more than their stores
/// hold in all, so one server at least is short and design rejects the layout (capacity). Not applied to
/// `--have` bills (owned arrays of other disk models).
pub fn capacity_reason(b: &Bill, least: f64, catalog: &Catalog) -> Option<String> {
    if b.grown.is_some() || least <= 0.0 {
        return None;
    }
    let disk = catalog.disk(&b.disk_model)?;
    let raw = f64::from(b.disks()) * disk.capacity_bytes as f64;
    (raw < least).then(|| {
        format!(
            "capacity: its {} {} disk(s) hold {:.2} TiB raw (spares included, RAID 0, no wear headroom), below the \
             {:.2} TiB the workload stores at its fewest replicas, whatever the layout",
            b.disks(),
            b.disk_model,
            raw / TIB,
            least / TIB
        )
    })
}

/// The process's CPU time so far (user + system, every thread), in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// Combinations of the ranges, the bills among them priced, and the skipped combinations by reason.
type Priced = (usize, Vec<(Cost, Bill)>, Vec<(String, usize)>);

/// Every bill of the ranges, priced, cheapest first (ties keep the enumeration's order), and the
/// combinations that are no bill, by reason.
fn priced_bills(w: &WorkloadFile, catalog: &Catalog, prices: Option<&Prices>) -> Priced {
    let all = match &w.have {
        Some(h) => super::have::enumerate(h, &w.spec, catalog),
        None => bill::enumerate(&w.spec, catalog),
    };
    let combinations = all.len();
    let mut skipped: std::collections::BTreeMap<Skip, usize> = Default::default();
    let mut bills: Vec<(Cost, Bill)> = Vec::new();
    for b in all {
        match b {
            Ok(b) => bills.push((price::cost(&b, prices, catalog), b)),
            Err(s) => *skipped.entry(s).or_default() += 1,
        }
    }
    bills.sort_by(|a, b| a.0.total.total_cmp(&b.0.total));
    let skipped = skipped.into_iter().map(|(k, v)| (k.as_str().to_string(), v)).collect();
    (combinations, bills, skipped)
}

/// Plan one bill as design would and add its points.
fn evaluate(
    out: &mut Sizing,
    w: &WorkloadFile,
    b: &Bill,
    cost: &Cost,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
) {
    let text: Arc<str> = format!("{}{}", w.base, b.racks_yaml()).into();
    let (text, mut site, required) = match site_of(b, &text, catalog) {
        Ok(x) => x,
        Err(e) => {
            out.invalid.push(format!("{}: {e}", b.id));
            return;
        }
    };
    for imp in &w.imports {
        crate::import::merge(&mut site.workload, imp);
    }
    let plan = crate::plan::build_with(&site, catalog, cal);
    for l in &plan.layouts {
        let mut p = point(b, l, &required, cost, &text);
        if let (Some(h), Some(g)) = (&w.have, &b.grown) {
            p.owned = Some(g.owned.clone());
            p.added = Some(g.added.clone());
            p.migration = Some(super::have::migrate::migration(&h.today, l, &g.added));
        }
        out.candidates.push(p);
    }
    out.sites.push((b.id.clone(), text));
    out.considered += 1;
}

/// The single-array reference bills: for each server model, array model and disk model, the one-rack bill
/// with the most servers and data disks per server (seed 000's "one big array", its RAID 6 among the
/// layouts). Pruning would skip them (a rack outage no layout survives), but the seed's argument is
/// made against that shape, so they are planned: their points carry design's figures and binding
/// constraint (`tolerance`: the rack outage). They cannot meet the requirements the pruning rule names,
/// so they never change the frontier or the cheapest; they are planned outside `--budget` and
/// `--cpu-seconds` (one per model combination).
fn references(bills: &[(Cost, Bill)]) -> std::collections::BTreeSet<String> {
    let mut best: std::collections::BTreeMap<(&str, &str, &str), &Bill> = Default::default();
    for (_, b) in bills {
        let StorageKind::Array(array) = &b.storage else {
            continue;
        };
        if b.grown.is_some() || b.rack_count() != 1 {
            continue;
        }
        let e = best
            .entry((b.server_model.as_str(), array.as_str(), b.disk_model.as_str()))
            .or_insert(b);
        if (b.servers(), b.disks_per_server) > (e.servers(), e.disks_per_server) {
            *e = b;
        }
    }
    best.values().map(|b| b.id.clone()).collect()
}

/// What a bill's turn in the search does: plan it, prune it (why), or leave it to a limit.
enum Turn {
    Plan,
    Reference,
    Prune(&'static str, String),
    Cut(&'static str),
}

/// What the search reads: the workload, catalog, calibration and limits.
struct Ctx<'a> {
    w: &'a WorkloadFile,
    catalog: &'a Catalog,
    cal: &'a crate::perf::Calibration,
    limits: Limits,
    cpu0: f64,
    /// `least_stored_bytes` of the workload (imports merged), 0 when it cannot be worked out.
    least: f64,
}

fn turn(ctx: &Ctx, b: &Bill, references: &std::collections::BTreeSet<String>, searched: usize) -> Turn {
    let limits = ctx.limits;
    // The zero bill of --have (the owned site as it is) is always planned: it is what today's site is
    // judged by.
    let prune = limits.prune && b.id != super::have::ZERO;
    if let Some(reason) = prune.then(|| prune_reason(b, &ctx.w.required)).flatten() {
        return if references.contains(&b.id) {
            Turn::Reference
        } else {
            Turn::Prune("outage", reason)
        };
    }
    if let Some(reason) = prune.then(|| capacity_reason(b, ctx.least, ctx.catalog)).flatten() {
        return Turn::Prune("capacity", reason);
    }
    if searched >= limits.budget {
        Turn::Cut("budget")
    } else if searched > 0 && limits.cpu_seconds.is_some_and(|s| cpu_seconds() - ctx.cpu0 >= s) {
        Turn::Cut("cpu_seconds")
    } else {
        Turn::Plan
    }
}

/// `least_stored_bytes` of the workload as every candidate's site has it (the probe site, imports
/// merged); 0 (no capacity pruning) when the probe cannot be read.
fn least_of(w: &WorkloadFile, catalog: &Catalog) -> f64 {
    let Ok(mut site) = super::probe_site(w, catalog) else {
        return 0.0;
    };
    for imp in &w.imports {
        crate::import::merge(&mut site.workload, imp);
    }
    least_stored_bytes(&site)
}

/// The bills cheapest first: each planned, pruned, planned as a reference, or left out by a limit.
/// Returns the cost of the first bill a limit left out.
fn search(out: &mut Sizing, ctx: &Ctx, bills: Vec<(Cost, Bill)>, progress: &dyn Fn(usize, usize)) -> Option<f64> {
    let references = references(&bills);
    let n = bills.len();
    let mut first_left_out = None;
    let mut searched = 0;
    for (i, (cost, b)) in bills.into_iter().enumerate() {
        progress(i, n);
        match turn(ctx, &b, &references, searched) {
            Turn::Prune(kind, reason) => out.pruned.push(Pruned {
                bill: b.id.clone(),
                cost,
                reason,
                kind,
            }),
            Turn::Cut(c) => {
                out.cut_by.get_or_insert(c);
                first_left_out.get_or_insert(cost.total);
                out.over_budget += 1;
            }
            Turn::Reference => {
                out.references.push(b.id.clone());
                evaluate(out, ctx.w, &b, &cost, ctx.catalog, ctx.cal);
            }
            Turn::Plan => {
                searched += 1;
                evaluate(out, ctx.w, &b, &cost, ctx.catalog, ctx.cal);
            }
        }
    }
    progress(n, n);
    first_left_out
}

/// Evaluate the bills cheapest first within `limits`, pruning those that provably cannot meet the
/// requirements, telling `progress` (bills done, bills in all).
pub fn run(
    w: &WorkloadFile,
    catalog: &Catalog,
    cal: &crate::perf::Calibration,
    prices: Option<&Prices>,
    limits: Limits,
    progress: &dyn Fn(usize, usize),
) -> Sizing {
    let (combinations, bills, skipped) = priced_bills(w, catalog, prices);
    let mut out = Sizing {
        workload: w.file.clone(),
        cost_unit: price::unit(prices),
        axes: AXES,
        combinations,
        bills: bills.len(),
        budget: limits.budget,
        cpu_seconds_budget: limits.cpu_seconds,
        pruning: limits.prune,
        considered: 0,
        points: 0,
        pruned: Vec::new(),
        references: Vec::new(),
        over_budget: 0,
        cut_by: None,
        complete: true,
        cpu_seconds: 0.0,
        skipped,
        candidates: Vec::new(),
        cheapest: None,
        cheapest_proven: false,
        invalid: Vec::new(),
        assumptions: assumptions(w),
        have: None,
        sites: Vec::new(),
    };
    let cpu0 = cpu_seconds();
    let ctx = Ctx {
        w,
        catalog,
        cal,
        limits,
        cpu0,
        least: least_of(w, catalog),
    };
    let first_left_out = search(&mut out, &ctx, bills, progress);
    out.cpu_seconds = cpu_seconds() - cpu0;
    out.complete = out.over_budget == 0;
    out.points = out.candidates.len();
    finish(&mut out, first_left_out);
    if let Some(h) = &w.have {
        out.have = Some(super::have::report(h, w, &out, catalog, cal));
    }
    out
}

/// The frontier, the order, the cheapest and whether it is proven.
fn finish(out: &mut Sizing, first_left_out: Option<f64>) {
    mark_frontier(&mut out.candidates);
    out.candidates
        .sort_by(|a, b| a.cost.total.total_cmp(&b.cost.total).then_with(|| a.id.cmp(&b.id)));
    out.cheapest = out
        .candidates
        .iter()
        .filter(|p| p.meets_requirements)
        .min_by(|a, b| {
            a.cost.total.total_cmp(&b.cost.total).then_with(|| {
                let l = |p: &Point| p.p_any_data_lost_per_year.unwrap_or(f64::INFINITY);
                l(a).total_cmp(&l(b))
            })
        })
        .map(|p| p.id.clone());
    out.cheapest_proven = match (&out.cheapest, first_left_out) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(id), Some(next)) => out
            .candidates
            .iter()
            .find(|p| &p.id == id)
            .is_some_and(|p| p.cost.total <= next),
    };
}

fn assumptions(w: &WorkloadFile) -> Vec<String> {
    let s = &w.spec;
    let mut a = vec![
        format!(
            "rack fit: each rack's parts at peak watts (typical when the catalog gives no peak) within {} W and {} \
             rack units{}",
            s.rack_watts,
            s.rack_units,
            if (s.rack_watts, s.rack_units) == (super::DEFAULT_RACK_WATTS, super::DEFAULT_RACK_UNITS) {
                " (assumption: size.rack_watts and size.rack_units not given, 8 kW and 42U assumed)"
            } else {
                ""
            }
        ),
        "watts and rack units from the catalog (models/*.yaml `hardware_source`; most are marked assumptions \
         there)"
            .into(),
        format!(
            "one array per rack shared by its servers, {} hot spare(s) per array; internal disks have no spares; \
             arrays use their controller shelf's drive slots only",
            s.hot_spares
        ),
        "servers spread over the racks as evenly as can be, the first racks taking one more (5 over 3: 2 + 2 + 1)"
            .into(),
    ];
    if let Some(h) = &w.have {
        a.extend(super::have::assumptions(h));
    }
    if !w.imports.is_empty() {
        let n: usize = w.imports.iter().map(|i| i.streams.len()).sum();
        a.push(format!(
            "{n} stream(s) imported with --omb / --from-cluster are merged into every candidate's site; its site \
             file does not hold them, so give design the same flags on it"
        ));
    }
    a.push(
        "figures are design's for each candidate's site (plan::build, the built-in or given calibration); their \
         sources are design's"
            .into(),
    );
    a
}

fn point(b: &Bill, l: &PlannedLayout, required: &Tolerance, cost: &Cost, text: &Arc<str>) -> Point {
    let binding = binding(l, required);
    let (free, failed) = match &l.capacity.after_failure {
        Some(a) => (a.headroom, a.failed.clone()),
        None => (l.capacity.headroom, Vec::new()),
    };
    Point {
        id: format!("{}/{}", b.id, l.id),
        bill: b.id.clone(),
        layout: l.id.clone(),
        verdict: l.verdict,
        meets_requirements: meets(l, binding.as_ref()),
        cost: cost.clone(),
        tolerates: l.tolerates,
        p_any_data_lost_per_year: l.yearly.as_ref().map(|y| y.p_any_data_lost_per_year),
        worst_unavailable_min_per_year: l.yearly.as_ref().map(|y| y.worst_unavailable_min_per_year),
        free_after_worst_tolerated_failure: free,
        worst_tolerated_failure: failed,
        binding,
        frontier: false,
        site: text.clone(),
        owned: None,
        added: None,
        migration: None,
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
