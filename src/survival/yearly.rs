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

use super::domain::{Domain, DomainKind};
use super::evaluate::{Model, Status};
use super::recovery::repair_s;
use super::sweep::Prepared;
use crate::catalog::Catalog;
use crate::layout::{quorum, AssetKind, Raid};
use crate::site::{ServerIdx, Site};
use crate::units::YEAR_S;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

/// Yearly availability and durability figures for a layout.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Yearly {
    /// `exact` (CTMC) or `monte_carlo`, with the details in `method_detail`.
    pub method: String,
    pub method_detail: String,
    pub meta: YearlyAsset,
    pub assets: Vec<YearlyAsset>,
    /// Probability per year that any asset (or the meta group) reaches `data_lost`.
    pub p_any_data_lost_per_year: f64,
    /// Expected acknowledged messages lost per year, all assets.
    pub acked_msgs_lost_per_year: f64,
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
}

impl Yearly {
    /// Orders of magnitude for ranking (lower is better), compared after `tolerates` so that cost and spare
    /// capacity still decide between near-equals: P(any data_lost)/yr, acked messages lost/yr, worst
    /// unavailable minutes/yr, each as ⌊log10⌋ (zero ranks below any positive figure).
    pub fn rank_key(&self) -> (i32, i32, i32) {
        let mag = |x: f64| {
            if x > 0.0 && x.is_finite() {
                x.log10().floor() as i32
            } else {
                i32::MIN
            }
        };
        (
            mag(self.p_any_data_lost_per_year),
            mag(self.acked_msgs_lost_per_year),
            mag(self.worst_unavailable_min_per_year),
        )
    }
}

/// Figures for one asset (or the meta group).
#[derive(Debug, Clone, Default, Serialize)]
pub struct YearlyAsset {
    pub name: String,
    pub kind: String,
    /// Expected unavailable minutes per year (unplanned + planned).
    pub unavailable_min_per_year: f64,
    /// Of which planned maintenance.
    pub planned_unavailable_min_per_year: f64,
    /// Expected write stall per year from planned leader hand-offs (seconds).
    pub planned_stall_s_per_year: f64,
    pub p_data_lost_per_year: f64,
    /// Expected number of data_lost events per year (the rate behind the probability).
    pub data_lost_events_per_year: f64,
    pub acked_msgs_lost_per_year: f64,
    /// Mean time to data loss in years (reference only; None when no modelled event loses data).
    pub mttdl_years: Option<f64>,
    /// 95 % confidence intervals (Monte Carlo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<Ci95>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Ci95 {
    pub unavailable_min_per_year: (f64, f64),
    pub p_data_lost_per_year: (f64, f64),
    pub data_lost_events_per_year: (f64, f64),
    pub acked_msgs_lost_per_year: (f64, f64),
}

/// One independently failing component.
#[derive(Debug, Clone)]
pub struct Component {
    pub what: String,
    pub domain: Domain,
    pub rate_per_s: f64,
    pub repair_s: f64,
    /// Components this one may take with it (servers that do not return after a power event).
    pub triggers: Vec<usize>,
}

/// The failure model of a layout: components, classes, message rates, planned maintenance.
pub struct Reliability<'m, 'a> {
    pub components: Vec<Component>,
    prep: Prepared<'m, 'a>,
    model: &'m Model<'a>,
    p_not_return: f64,
    /// Acked messages per second per class (summed over its assets) and per asset.
    asset_msgs_per_s: Vec<f64>,
    window_s: f64,
    /// Per class: planned unavailable seconds per year and planned stall seconds per year.
    planned_unavail_s: Vec<f64>,
    planned_stall_s: Vec<f64>,
    /// Outcome of the empty state and of each single component (the common cases).
    empty: Vec<u8>,
    single: Vec<Vec<u8>>,
    /// The same with flags: id 0 is the empty state, id 1 + c the single component c.
    base: Vec<SigInfo>,
}

/// A failure rate per year: the site's override, else the catalog's.
pub fn rate_per_year(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.failure_rates
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.rate(key))
}

fn maintenance(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.maintenance
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.maintenance(key))
}

/// Messages (or puts, or object chunks) per second an asset acknowledges.
fn msgs_per_s(site: &Site, name: &str, kind: AssetKind) -> f64 {
    let w = &site.workload;
    match kind {
        AssetKind::Stream => w.streams.iter().find(|s| s.name == name).map(|s| s.msgs_per_s),
        AssetKind::Kv => w.kv.iter().find(|k| k.name == name).map(|k| k.puts_per_s),
        // Objects are stored as 128 KiB chunks plus a metadata message.
        AssetKind::ObjectStore => w
            .object_stores
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.puts_per_s * ((o.object_size_bytes as f64 / 131_072.0).ceil().max(1.0) + 1.0)),
        AssetKind::Consumer => None,
    }
    .unwrap_or(0.0)
}

impl<'m, 'a> Reliability<'m, 'a> {
    pub fn new(model: &'m Model<'a>, catalog: &Catalog) -> Reliability<'m, 'a> {
        let site = model.site;
        let layout = model.layout;
        let rate = |k: &str| rate_per_year(site, catalog, k) / YEAR_S;
        let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
        let mut comps: Vec<Component> = Vec::new();
        fn add(comps: &mut Vec<Component>, what: String, domain: Domain, rate_per_s: f64, repair_s: f64) -> usize {
            comps.push(Component {
                what,
                domain,
                rate_per_s,
                repair_s,
                triggers: Vec::new(),
            });
            comps.len() - 1
        }
        let mut not_return: HashMap<ServerIdx, usize> = HashMap::new();
        let server_bytes = |s: ServerIdx| -> f64 {
            layout
                .assets
                .iter()
                .filter(|a| a.expected.contains(&s))
                .map(|a| a.bytes_per_replica)
                .sum()
        };
        for &s in &layout.servers {
            let name = &site.servers[s].name;
            add(
                &mut comps,
                format!("{name} OS crash"),
                Domain::server(DomainKind::Server, site, s),
                rate("server_crash_per_year"),
                rep("server_restart"),
            );
            add(
                &mut comps,
                format!("{name} nats-server crash"),
                Domain::server(DomainKind::Process, site, s),
                rate("process_crash_per_year"),
                rep("process_restart"),
            );
            // A server lost for good: its LUN on a shared array survives; its own disks do not.
            let internal = model.array_of(s).is_some_and(|a| site.arrays[a].owner == Some(s));
            add(
                &mut comps,
                format!("{name} lost for good"),
                Domain::server(if internal { DomainKind::Wipe } else { DomainKind::Server }, site, s),
                rate("server_afr"),
                rep("server_replace"),
            );
            let nr = add(
                &mut comps,
                format!("{name} does not return after power loss"),
                Domain::server(DomainKind::Server, site, s),
                0.0,
                rep("server_replace"),
            );
            not_return.insert(s, nr);
        }
        let mut arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
        arrays.sort_unstable();
        arrays.dedup();
        for &a in &arrays {
            if site.arrays[a].owner.is_none() {
                add(
                    &mut comps,
                    format!("array {} outage", site.arrays[a].name),
                    Domain::array(DomainKind::Array, site, a),
                    rate("array_outage_per_year"),
                    rep("array_repair"),
                );
            }
        }
        let site_disk_afr = site
            .failure_rates
            .iter()
            .find(|(k, _)| k == "disk_afr")
            .map(|(_, v)| *v);
        for (gi, g) in layout.groups.iter().enumerate() {
            let arr = &site.arrays[g.array];
            let dm = catalog.disk(&arr.disk_model);
            let afr = site_disk_afr
                .or(dm.map(|d| d.afr))
                .unwrap_or_else(|| catalog.failures.rate("disk_afr"));
            let disk_bytes = arr.disk_size_bytes.or(dm.map(|d| d.capacity_bytes)).unwrap_or(0) as f64;
            let repair = if g.raid == Raid::Raid0 || model.disks_to_destroy(gi) <= 1 {
                // The volume is gone: new group, filesystem, peer-remove, catch-up from peers.
                let catch_up = model
                    .group_servers(gi)
                    .iter()
                    .map(|&s| server_bytes(s) / 1.25e9)
                    .fold(0.0, f64::max);
                rep("operator_response") + rep("raid0_new_group") + rep("filesystem") + rep("peer_remove") + catch_up
            } else {
                disk_bytes / rep("rebuild_rate")
            };
            for &slot in &g.disks {
                add(
                    &mut comps,
                    format!("disk {}/{slot}", arr.name),
                    Domain::disk(site, g.array, slot),
                    afr / YEAR_S,
                    repair.max(1.0),
                );
            }
        }
        for r in 0..site.racks.len() {
            let servers: Vec<ServerIdx> = site.rack_servers(r).filter(|s| not_return.contains_key(s)).collect();
            let arrays_here = arrays.iter().any(|&a| site.arrays[a].rack == r);
            if servers.is_empty() && !arrays_here {
                continue;
            }
            let p = add(
                &mut comps,
                format!("rack {} power", site.racks[r].name),
                Domain::rack(DomainKind::Power, site, r),
                rate("rack_power_per_year"),
                rep("rack_power_restore") + rep("server_restart"),
            );
            comps[p].triggers = servers.iter().map(|s| not_return[s]).collect();
            add(
                &mut comps,
                format!("rack {} uplinks", site.racks[r].name),
                Domain::rack(DomainKind::Net, site, r),
                rate("rack_net_per_year"),
                rep("rack_net_restore"),
            );
        }
        for d in Domain::universe(DomainKind::Pdu, site, layout) {
            add(
                &mut comps,
                format!("PDU {}", d.name),
                d,
                rate("pdu_per_year"),
                rep("rack_power_restore"),
            );
        }
        for d in Domain::universe(DomainKind::Host, site, layout) {
            add(
                &mut comps,
                format!("host {}", d.name),
                d,
                rate("host_per_year"),
                rep("server_restart"),
            );
        }
        let domains: Vec<Domain> = comps.iter().map(|c| c.domain.clone()).collect();
        let prep = Prepared::new(model, &domains, true);
        let nclass = prep.class_count();
        let asset_msgs_per_s: Vec<f64> = layout
            .assets
            .iter()
            .map(|a| msgs_per_s(site, &a.name, a.kind))
            .collect();
        // Planned maintenance, closed form (see the module doc).
        let events =
            maintenance(site, catalog, "rolling_restarts_per_year") + maintenance(site, catalog, "upgrades_per_year");
        let restart = rep("process_restart");
        let stall = maintenance(site, catalog, "restart_stall");
        let mut planned_unavail_s = vec![0.0; nclass];
        let mut planned_stall_s = vec![0.0; nclass];
        let mut class_r = vec![layout.servers.len() as u32; nclass];
        for (i, a) in layout.assets.iter().enumerate() {
            class_r[prep.asset_class[i]] = a.replicas as u32;
        }
        for k in 0..nclass {
            let r = class_r[k];
            if r == 0 {
                continue;
            }
            if r - quorum(r) == 0 {
                planned_unavail_s[k] = events * r as f64 * restart;
            } else {
                planned_stall_s[k] = events * stall;
            }
        }
        let mut hit = Vec::new();
        let mut disks = Vec::new();
        let empty = prep.signature(&[], &mut hit, &mut disks);
        let single: Vec<Vec<u8>> = (0..comps.len())
            .map(|c| prep.signature(&[c], &mut hit, &mut disks))
            .collect();
        let base = std::iter::once(&empty)
            .chain(single.iter())
            .map(|s| SigInfo::new(s.clone()))
            .collect();
        Reliability {
            components: comps,
            prep,
            model,
            p_not_return: rate_per_year(site, catalog, "not_return_after_power").clamp(0.0, 1.0),
            asset_msgs_per_s,
            window_s: site.nats.sync.loss_window_s(catalog.failures.dirty_expire_s.value),
            planned_unavail_s,
            planned_stall_s,
            empty,
            single,
            base,
        }
    }

    fn classes(&self) -> usize {
        self.prep.class_count()
    }

    /// Outcome of a set of failed components (sorted indices).
    fn outcome(
        &self,
        active: &[usize],
        hit: &mut Vec<(ServerIdx, super::evaluate::ServerEffect)>,
        disks: &mut Vec<super::sweep::GroupHits>,
    ) -> Vec<u8> {
        match active.len() {
            0 => self.empty.clone(),
            1 => self.single[active[0]].clone(),
            _ => self.prep.signature(active, hit, disks),
        }
    }

    /// Turn per-class rates into the per-asset report.
    #[allow(clippy::too_many_arguments)]
    fn figures(
        &self,
        method: &str,
        detail: String,
        unavail_frac: &[f64],
        dl_per_year: &[f64],
        risk_per_year: &[f64],
        any_dl_per_year: f64,
        p_any_dl: f64,
        ci: Option<&[Ci95]>,
    ) -> Yearly {
        let layout = self.model.layout;
        let mk = |name: &str, kind: &str, k: usize, msgs: f64, ci: Option<Ci95>| {
            let planned = self.planned_unavail_s[k] / 60.0;
            YearlyAsset {
                name: name.to_string(),
                kind: kind.to_string(),
                unavailable_min_per_year: unavail_frac[k] * YEAR_S / 60.0 + planned,
                planned_unavailable_min_per_year: planned,
                planned_stall_s_per_year: self.planned_stall_s[k],
                p_data_lost_per_year: -(-dl_per_year[k]).exp_m1(),
                data_lost_events_per_year: dl_per_year[k],
                acked_msgs_lost_per_year: risk_per_year[k] * self.window_s * msgs,
                mttdl_years: (dl_per_year[k] > 0.0).then(|| 1.0 / dl_per_year[k]),
                ci95: ci,
            }
        };
        let meta = mk("meta", "meta", 0, 0.0, ci.map(|c| c[0].clone()));
        let assets: Vec<YearlyAsset> = layout
            .assets
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let k = self.prep.asset_class[i];
                let msgs = self.asset_msgs_per_s[i];
                let ci = ci.map(|c| {
                    let mut x = c[k].clone();
                    x.acked_msgs_lost_per_year.0 *= self.window_s * msgs;
                    x.acked_msgs_lost_per_year.1 *= self.window_s * msgs;
                    x
                });
                mk(&a.name, a.kind.as_str(), k, msgs, ci)
            })
            .collect();
        let judged: Vec<&YearlyAsset> = if assets.is_empty() {
            vec![&meta]
        } else {
            assets.iter().collect()
        };
        let (worst_unavailable, worst) = judged
            .iter()
            .map(|a| (a.name.clone(), a.unavailable_min_per_year))
            .fold((String::new(), -1.0), |b, x| if x.1 > b.1 { x } else { b });
        let _ = any_dl_per_year;
        Yearly {
            method: method.into(),
            method_detail: detail,
            acked_msgs_lost_per_year: assets.iter().map(|a| a.acked_msgs_lost_per_year).sum(),
            p_any_data_lost_per_year: p_any_dl,
            worst_unavailable_min_per_year: worst.max(0.0),
            worst_unavailable,
            api_unavailable_min_per_year: meta.unavailable_min_per_year,
            meta,
            assets,
            assumptions: self.assumptions(),
        }
    }

    fn assumptions(&self) -> Vec<String> {
        vec![
            "each asset on the servers the emulated placement gives it (a placement stays put over years); \
             `whatif` and `tolerates` use the worst eligible placement instead"
                .into(),
            "components fail independently at catalog rates (site overrides win); repairs exponential with the \
             catalog's mean times"
                .into(),
            format!(
                "rack power takes the rack's servers and arrays together; each server fails to return with p = {}",
                self.p_not_return
            ),
            "planned rolling restarts and upgrades one server at a time: R1/R2 assets unavailable for each restart of \
             a replica's server, larger ones pay one leader hand-off; array firmware updates non-disruptive"
                .into(),
            format!(
                "acknowledged messages lost: each single event (a crash, power, array outage with what it takes \
                 along) that on its own makes a quorum of replicas lose unsynced writes loses {:.0} s of the asset's \
                 messages (shorter of sync_interval and dirty-page expiry); independent crashes within one window \
                 are neglected",
                self.window_s
            ),
            "MTTDL assumes a constant loss rate: for reference only".into(),
        ]
    }
}

/// Status and acked-loss flag of class `k` in an outcome signature.
fn st(sig: &[u8], k: usize) -> (u8, bool) {
    (sig[2 * k], sig[2 * k + 1] != 0)
}

const UNAV: u8 = Status::Unavailable as u8;
const DL: u8 = Status::DataLost as u8;

fn any_dl(sig: &[u8]) -> bool {
    sig.chunks(2).any(|c| c[0] == DL)
}

/// Transitions out of one state of the truncated chain: (target state, rate per second).
fn transitions(rel: &Reliability, state: u128, cap: usize, out: &mut Vec<(u128, f64)>) {
    out.clear();
    let n = rel.components.len();
    let size = state.count_ones() as usize;
    for c in 0..n {
        let bit = 1u128 << c;
        let comp = &rel.components[c];
        if state & bit != 0 {
            out.push((state & !bit, 1.0 / comp.repair_s));
            continue;
        }
        if comp.rate_per_s <= 0.0 {
            continue;
        }
        let free: Vec<usize> = comp
            .triggers
            .iter()
            .copied()
            .filter(|&t| state & (1u128 << t) == 0)
            .collect();
        if free.is_empty() || rel.p_not_return <= 0.0 {
            if size < cap {
                out.push((state | bit, comp.rate_per_s));
            }
            continue;
        }
        let p = rel.p_not_return;
        for mask in 0u32..(1u32 << free.len()) {
            let k = mask.count_ones() as usize;
            if size + 1 + k > cap {
                continue;
            }
            let mut target = state | bit;
            for (i, &t) in free.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    target |= 1u128 << t;
                }
            }
            let prob = p.powi(k as i32) * (1.0 - p).powi((free.len() - k) as i32);
            out.push((target, comp.rate_per_s * prob));
        }
    }
}

/// Exact figures from the chain truncated at `cap` concurrent failed components. None when the site has
/// more components than the chain can index (128) or more than `max_states` states.
pub fn exact(rel: &Reliability, cap: usize, max_states: usize) -> Option<Yearly> {
    let n = rel.components.len();
    if n > 128 {
        return None;
    }
    // Reachable states by breadth-first search.
    let mut index: HashMap<u128, usize> = HashMap::new();
    let mut states: Vec<u128> = vec![0];
    index.insert(0, 0);
    let mut out = Vec::new();
    let mut edges: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut i = 0;
    while i < states.len() {
        transitions(rel, states[i], cap, &mut out);
        let mut e = Vec::with_capacity(out.len());
        for &(t, r) in &out {
            let j = match index.get(&t) {
                Some(&j) => j,
                None => {
                    if states.len() >= max_states {
                        return None;
                    }
                    states.push(t);
                    index.insert(t, states.len() - 1);
                    states.len() - 1
                }
            };
            e.push((j, r));
        }
        edges.push(e);
        i += 1;
    }
    let ns = states.len();
    let mut hit = Vec::new();
    let mut disks = Vec::new();
    let sigs: Vec<Vec<u8>> = states
        .iter()
        .map(|&s| {
            let active: Vec<usize> = (0..n).filter(|&c| s & (1u128 << c) != 0).collect();
            rel.outcome(&active, &mut hit, &mut disks)
        })
        .collect();
    // Stationary distribution by Gauss–Seidel on the balance equations π_j q_j = Σ_i π_i q_ij.
    let out_rate: Vec<f64> = edges.iter().map(|e| e.iter().map(|x| x.1).sum()).collect();
    let mut incoming: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ns];
    for (i, e) in edges.iter().enumerate() {
        for &(j, r) in e {
            incoming[j].push((i, r));
        }
    }
    let mut pi = vec![0.0f64; ns];
    pi[0] = 1.0;
    for _ in 0..100_000 {
        let mut change = 0.0f64;
        for j in 1..ns {
            let v: f64 = incoming[j].iter().map(|&(i, r)| pi[i] * r).sum::<f64>() / out_rate[j].max(f64::MIN_POSITIVE);
            let d = (v - pi[j]).abs() / v.max(f64::MIN_POSITIVE);
            if v > 0.0 && d > change {
                change = d;
            }
            pi[j] = v;
        }
        // State 0 from its own balance, then renormalise.
        pi[0] = incoming[0].iter().map(|&(i, r)| pi[i] * r).sum::<f64>() / out_rate[0].max(f64::MIN_POSITIVE);
        let total: f64 = pi.iter().sum();
        for p in pi.iter_mut() {
            *p /= total;
        }
        if change < 1e-12 {
            break;
        }
    }
    let nc = rel.classes();
    let mut unavail = vec![0.0; nc];
    let mut dl = vec![0.0; nc];
    let mut risk = vec![0.0; nc];
    let mut any = 0.0;
    let mut event_sigs: HashMap<u128, Vec<u8>> = HashMap::new();
    for (i, e) in edges.iter().enumerate() {
        for k in 0..nc {
            if st(&sigs[i], k).0 >= UNAV {
                unavail[k] += pi[i];
            }
        }
        for &(j, r) in e {
            let flow = pi[i] * r * YEAR_S;
            for k in 0..nc {
                if st(&sigs[i], k).0 < DL && st(&sigs[j], k).0 == DL {
                    dl[k] += flow;
                }
            }
            // A failure event: does it, on its own, make a quorum lose unsynced writes?
            let newly = states[j] & !states[i];
            if newly != 0 {
                let ev = event_sigs.entry(newly).or_insert_with(|| {
                    let active: Vec<usize> = (0..n).filter(|&c| newly & (1u128 << c) != 0).collect();
                    rel.outcome(&active, &mut hit, &mut disks)
                });
                for k in 0..nc {
                    if st(ev, k).1 {
                        risk[k] += flow;
                    }
                }
            }
            if !any_dl(&sigs[i]) && any_dl(&sigs[j]) {
                any += flow;
            }
        }
    }
    let detail =
        format!("continuous-time Markov chain over {n} components, {ns} states (at most {cap} concurrent failures)");
    let mut y = rel.figures("exact", detail, &unavail, &dl, &risk, any, -(-any).exp_m1(), None);
    y.assumptions.push(format!(
        "exact chain truncated at {cap} concurrent failed components: losses that need more (e.g. both disks of \
         several mirrors at once) count as 0; their odds are of the order (rate × repair time)^{}",
        cap + 1
    ));
    Some(y)
}

/// Per-trial tallies of the Monte Carlo, per class.
#[derive(Debug, Clone)]
struct Tally {
    /// Sums and sums of squares over trials.
    unavail_s: Vec<(f64, f64)>,
    dl: Vec<(f64, f64)>,
    risk: Vec<(f64, f64)>,
    /// Trials with at least one data_lost entry, per class and for any asset.
    dl_years: Vec<u64>,
    any_dl_years: u64,
    trials: u64,
}

impl Tally {
    fn new(nc: usize) -> Tally {
        Tally {
            unavail_s: vec![(0.0, 0.0); nc],
            dl: vec![(0.0, 0.0); nc],
            risk: vec![(0.0, 0.0); nc],
            dl_years: vec![0; nc],
            any_dl_years: 0,
            trials: 0,
        }
    }
    fn merge(&mut self, o: &Tally) {
        for k in 0..self.unavail_s.len() {
            self.unavail_s[k].0 += o.unavail_s[k].0;
            self.unavail_s[k].1 += o.unavail_s[k].1;
            self.dl[k].0 += o.dl[k].0;
            self.dl[k].1 += o.dl[k].1;
            self.risk[k].0 += o.risk[k].0;
            self.risk[k].1 += o.risk[k].1;
            self.dl_years[k] += o.dl_years[k];
        }
        self.any_dl_years += o.any_dl_years;
        self.trials += o.trials;
    }
}

fn exp_sample(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    // 1 - u is in (0, 1], so the logarithm is finite.
    let u: f64 = rng.random();
    -mean * (1.0 - u).ln()
}

/// An outcome signature with flags that let the simulation skip per-class work in the common cases.
#[derive(Debug, Clone)]
struct SigInfo {
    sig: Vec<u8>,
    any_unav: bool,
    any_dl: bool,
    any_risk: bool,
}

impl SigInfo {
    fn new(sig: Vec<u8>) -> SigInfo {
        SigInfo {
            any_unav: sig.chunks(2).any(|c| c[0] >= UNAV),
            any_dl: sig.chunks(2).any(|c| c[0] == DL),
            any_risk: sig.chunks(2).any(|c| c[1] != 0),
            sig,
        }
    }
}

fn info<'x>(base: &'x [SigInfo], extra: &'x [SigInfo], id: u32) -> &'x SigInfo {
    let id = id as usize;
    if id < base.len() {
        &base[id]
    } else {
        &extra[id - base.len()]
    }
}

/// The interned outcome id of a sorted set of failed components.
fn intern(
    rel: &Reliability,
    extra: &mut Vec<SigInfo>,
    cache: &mut HashMap<Vec<usize>, u32>,
    set: &[usize],
    hit: &mut Vec<(ServerIdx, super::evaluate::ServerEffect)>,
    disks: &mut Vec<super::sweep::GroupHits>,
) -> u32 {
    match set.len() {
        0 => 0,
        1 => 1 + set[0] as u32,
        _ => {
            if let Some(&id) = cache.get(set) {
                return id;
            }
            let id = (rel.base.len() + extra.len()) as u32;
            extra.push(SigInfo::new(rel.prep.signature(set, hit, disks)));
            cache.insert(set.to_vec(), id);
            id
        }
    }
}

/// Walker's alias table: picks index i with probability weight[i] / Σ weight from one uniform number in
/// constant time (the Monte Carlo picks a failing component hundreds of times per simulated year).
struct Alias {
    prob: Vec<f64>,
    alias: Vec<usize>,
}

impl Alias {
    fn new(weights: &[f64]) -> Alias {
        let n = weights.len().max(1);
        let total: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights
            .iter()
            .map(|w| if total > 0.0 { w / total * n as f64 } else { 1.0 })
            .collect();
        prob.resize(n, 0.0);
        let mut alias: Vec<usize> = (0..n).collect();
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers are 1 up to rounding.
        for i in large.into_iter().chain(small) {
            prob[i] = 1.0;
        }
        Alias { prob, alias }
    }

    /// `u` uniform in [0, 1).
    fn sample(&self, u: f64) -> usize {
        let x = u * self.prob.len() as f64;
        let i = (x as usize).min(self.prob.len() - 1);
        if x - (i as f64) < self.prob[i] {
            i
        } else {
            self.alias[i]
        }
    }
}

/// Trials per work unit: fixed, so results do not depend on the number of threads.
const CHUNK: u64 = 2048;

/// Simulate `trials` independent runs of `years_per_trial` years each of the chain (optionally truncated at
/// `cap` concurrent failures, as the exact chain is), starting with everything up. Means and intervals
/// are per year over trials; yearly probabilities are the fraction of simulated years with a loss. Same
/// seed, same numbers, whatever the number of threads.
pub fn monte_carlo(rel: &Reliability, trials: u64, years_per_trial: u64, seed: u64, cap: Option<usize>) -> Yearly {
    let years = trials;
    let per = years_per_trial.max(1);
    let horizon = per as f64 * YEAR_S;
    let nc = rel.classes();
    let n = rel.components.len();
    let rates: Vec<f64> = rel.components.iter().map(|c| c.rate_per_s).collect();
    let total_rate: f64 = rates.iter().sum();
    let alias = Alias::new(&rates);
    let cap = cap.unwrap_or(usize::MAX);
    let chunks = years.div_ceil(CHUNK);
    let parts: Vec<Tally> = (0..chunks)
        .into_par_iter()
        .map(|ch| {
            let mut tally = Tally::new(nc);
            // Outcomes interned: ids below `base.len()` are the empty state and single components; others
            // are this chunk's multi-failure states.
            let mut extra: Vec<SigInfo> = Vec::new();
            let mut cache: HashMap<Vec<usize>, u32> = HashMap::new();
            let mut hit = Vec::new();
            let mut disks = Vec::new();
            let mut active: Vec<(usize, f64)> = Vec::new();
            let mut ids: Vec<usize> = Vec::new();
            let mut newly: Vec<usize> = Vec::new();
            let mut un = vec![0.0; nc];
            let mut dl = vec![0.0; nc];
            let mut rk = vec![0.0; nc];
            let mut last_dl_year = vec![u64::MAX; nc];
            // Classes this trial touched: per-trial work stays proportional to what happened, not to the
            // number of classes (hundreds on large sites).
            let mut touched: Vec<usize> = Vec::new();
            let mut is_touched = vec![false; nc];
            for trial in ch * CHUNK..((ch + 1) * CHUNK).min(years) {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(trial);
                active.clear();
                for &k in &touched {
                    un[k] = 0.0;
                    dl[k] = 0.0;
                    rk[k] = 0.0;
                    last_dl_year[k] = u64::MAX;
                    is_touched[k] = false;
                }
                touched.clear();
                let mut last_any_year = u64::MAX;
                let mut t = 0.0;
                let mut cur: u32 = 0;
                let mut next_fail = if total_rate > 0.0 {
                    exp_sample(&mut rng, 1.0 / total_rate)
                } else {
                    f64::INFINITY
                };
                loop {
                    let (ri, next_rep) = active
                        .iter()
                        .enumerate()
                        .map(|(i, a)| (i, a.1))
                        .fold((usize::MAX, f64::INFINITY), |b, x| if x.1 < b.1 { x } else { b });
                    let next = next_fail.min(next_rep);
                    let end = next.min(horizon);
                    let ci = info(&rel.base, &extra, cur);
                    if ci.any_unav {
                        for k in 0..nc {
                            if ci.sig[2 * k] >= UNAV {
                                un[k] += end - t;
                                if !is_touched[k] {
                                    is_touched[k] = true;
                                    touched.push(k);
                                }
                            }
                        }
                    }
                    if next >= horizon {
                        break;
                    }
                    t = next;
                    if next_rep <= next_fail {
                        active.swap_remove(ri);
                    } else {
                        next_fail = t + exp_sample(&mut rng, 1.0 / total_rate);
                        // Which component: by its share of the total rate.
                        let c = alias.sample(rng.random::<f64>());
                        if active.iter().any(|a| a.0 == c) {
                            continue; // already failed: no transition (the chain's rate is zero there)
                        }
                        newly.clear();
                        newly.push(c);
                        for &tr in &rel.components[c].triggers {
                            if !active.iter().any(|a| a.0 == tr) && rng.random::<f64>() < rel.p_not_return {
                                newly.push(tr);
                            }
                        }
                        if active.len() + newly.len() > cap {
                            continue;
                        }
                        newly.sort_unstable();
                        let ev = intern(rel, &mut extra, &mut cache, &newly, &mut hit, &mut disks);
                        let ei = info(&rel.base, &extra, ev);
                        if ei.any_risk {
                            for k in 0..nc {
                                if st(&ei.sig, k).1 {
                                    rk[k] += 1.0;
                                    if !is_touched[k] {
                                        is_touched[k] = true;
                                        touched.push(k);
                                    }
                                }
                            }
                        }
                        for &x in &newly {
                            let d = exp_sample(&mut rng, rel.components[x].repair_s);
                            active.push((x, t + d));
                        }
                    }
                    ids.clear();
                    ids.extend(active.iter().map(|a| a.0));
                    ids.sort_unstable();
                    let next_id = intern(rel, &mut extra, &mut cache, &ids, &mut hit, &mut disks);
                    let (a, b) = (info(&rel.base, &extra, cur), info(&rel.base, &extra, next_id));
                    if b.any_dl {
                        let year = (t / YEAR_S) as u64;
                        for k in 0..nc {
                            if st(&a.sig, k).0 < DL && st(&b.sig, k).0 == DL {
                                dl[k] += 1.0;
                                if !is_touched[k] {
                                    is_touched[k] = true;
                                    touched.push(k);
                                }
                                if last_dl_year[k] != year {
                                    last_dl_year[k] = year;
                                    tally.dl_years[k] += 1;
                                }
                            }
                        }
                        if !a.any_dl && last_any_year != year {
                            last_any_year = year;
                            tally.any_dl_years += 1;
                        }
                    }
                    cur = next_id;
                }
                // Per-year figures of this trial.
                let pf = per as f64;
                // Untouched classes add zero to both sums; sorted so float sums keep a fixed order.
                touched.sort_unstable();
                for &k in &touched {
                    let (u, d, r) = (un[k] / pf, dl[k] / pf, rk[k] / pf);
                    tally.unavail_s[k].0 += u;
                    tally.unavail_s[k].1 += u * u;
                    tally.dl[k].0 += d;
                    tally.dl[k].1 += d * d;
                    tally.risk[k].0 += r;
                    tally.risk[k].1 += r * r;
                }
                tally.trials += 1;
            }
            tally
        })
        .collect();
    let mut tally = Tally::new(nc);
    for p in &parts {
        tally.merge(p);
    }
    let nt = tally.trials.max(1) as f64;
    let site_years = (tally.trials * per).max(1) as f64;
    let mean_ci = |(s, s2): (f64, f64)| {
        let m = s / nt;
        let var = (s2 / nt - m * m).max(0.0) * nt / (nt - 1.0).max(1.0);
        let h = 1.96 * (var / nt).sqrt();
        (m, (m - h).max(0.0), m + h)
    };
    // Wilson interval for a yearly probability; with no event, the rule of three bounds it.
    let prop_ci = |x: u64| {
        let nt = site_years;
        let p = x as f64 / nt;
        let z = 1.96f64;
        let denom = 1.0 + z * z / nt;
        let centre = (p + z * z / (2.0 * nt)) / denom;
        let half = z * ((p * (1.0 - p) / nt) + z * z / (4.0 * nt * nt)).sqrt() / denom;
        if x == 0 {
            (0.0, 3.0 / nt)
        } else {
            ((centre - half).max(0.0), (centre + half).min(1.0))
        }
    };
    let mut unavail = vec![0.0; nc];
    let mut dl = vec![0.0; nc];
    let mut risk = vec![0.0; nc];
    let mut cis = Vec::with_capacity(nc);
    for k in 0..nc {
        let (um, ulo, uhi) = mean_ci(tally.unavail_s[k]);
        let (dm, dlo, dhi) = mean_ci(tally.dl[k]);
        let (rm, rlo, rhi) = mean_ci(tally.risk[k]);
        unavail[k] = um / YEAR_S;
        dl[k] = dm;
        risk[k] = rm;
        let planned = rel.planned_unavail_s[k] / 60.0;
        cis.push(Ci95 {
            unavailable_min_per_year: (ulo / 60.0 + planned, uhi / 60.0 + planned),
            p_data_lost_per_year: prop_ci(tally.dl_years[k]),
            data_lost_events_per_year: (dlo, dhi),
            // Scaled to messages per asset in `figures`.
            acked_msgs_lost_per_year: (rlo, rhi),
        });
    }
    let detail = format!(
        "Monte Carlo: {} trials × {per} year(s) over {n} components, seed {seed}{}",
        tally.trials,
        if cap == usize::MAX {
            String::new()
        } else {
            format!(", at most {cap} concurrent failures")
        }
    );
    let mut y = rel.figures(
        "monte_carlo",
        detail,
        &unavail,
        &dl,
        &risk,
        0.0,
        tally.any_dl_years as f64 / site_years,
        Some(&cis),
    );
    // The yearly probability is observed directly (fraction of years with a loss).
    y.meta.p_data_lost_per_year = tally.dl_years[0] as f64 / site_years;
    for (i, a) in y.assets.iter_mut().enumerate() {
        a.p_data_lost_per_year = tally.dl_years[rel.prep.asset_class[i]] as f64 / site_years;
    }
    y
}

/// States of the chain truncated at `cap` concurrent failures of `n` components (an upper bound: power
/// events may add several at once, but never more than `cap`).
pub fn chain_states(n: usize, cap: usize) -> u64 {
    1 + super::sweep::combinations(n, cap)
}

/// The yearly figures `design` shows: exact when the chain is small enough (at most 3, else 2, concurrent
/// failures within 60,000 states), else a 4,000-year Monte Carlo with seed 1.
pub fn yearly(site: &Site, layout: &crate::layout::Layout, catalog: &Catalog) -> Yearly {
    let model = Model::new(site, layout);
    let rel = Reliability::new(&model, catalog);
    let n = rel.components.len();
    [3, 2]
        .into_iter()
        .filter(|&cap| n <= 128 && chain_states(n, cap) <= 60_000)
        .find_map(|cap| exact(&rel, cap, 60_000))
        .unwrap_or_else(|| monte_carlo(&rel, 4_000, 1, 1, None))
}

#[cfg(test)]
mod alias_tests {
    use super::Alias;

    #[test]
    fn alias_table_reproduces_the_weights() {
        let w = [0.0, 1.0, 3.0, 0.5, 0.0, 5.5];
        let a = Alias::new(&w);
        let n = 200_000;
        let mut counts = [0u32; 6];
        for i in 0..n {
            // A fine deterministic grid over [0, 1) exercises every column evenly.
            counts[a.sample((i as f64 + 0.5) / n as f64)] += 1;
        }
        let total: f64 = w.iter().sum();
        for (c, wi) in counts.iter().zip(w) {
            let expect = wi / total;
            assert!((*c as f64 / n as f64 - expect).abs() < 1e-3, "{counts:?}");
        }
    }
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
    /// The exact chain (at most 3 concurrent failures), when small enough.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<Yearly>,
}
