//! The components of a layout's failure model: each server, array, disk, rack path, PDU and host that
//! fails on its own, with its rate and repair time (split out of `yearly`).

use super::domain::{Domain, DomainKind};
use super::evaluate::Model;
use super::recovery::repair_s;
use super::sweep::Prepared;
use super::yearly::{maintenance, rate_per_year, Component};
use crate::catalog::Catalog;
use crate::layout::{quorum, Raid};
use crate::site::{ServerIdx, Site};
use crate::units::YEAR_S;
use std::collections::HashMap;

/// A rack's redundant paths: its power feeds or its uplinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Power,
    Net,
}

/// Events per year, beyond the catalog's rack rate (rack-wide causes that no redundancy helps, for a rack
/// with the default two feeds and two uplinks), in which all of a rack's `n` feeds (or uplinks) are down
/// at once: each path fails at `power_feed_per_year` (`uplink_per_year`) and is back after the rack's
/// restore time, so all n are down together at about n·λ·(λ·t)^(n−1) per year: λ for one path (the feed
/// failure is the rack's), next to nothing for two. A single-fed rack whose PDUs the site lists is left
/// out here: its PDU components already take the rack down.
fn redundant_paths_rate(site: &Site, catalog: &Catalog, r: usize, path: Path) -> f64 {
    let rack = &site.racks[r];
    let (n, lambda, restore) = match path {
        Path::Power => {
            if rack.power_feeds <= 1 && !rack.pdus.is_empty() {
                return 0.0;
            }
            (
                rack.power_feeds,
                rate_per_year(site, catalog, "power_feed_per_year"),
                repair_s(site, catalog, "rack_power_restore"),
            )
        }
        Path::Net => (
            rack.uplinks,
            rate_per_year(site, catalog, "uplink_per_year"),
            repair_s(site, catalog, "rack_net_restore"),
        ),
    };
    let n = n.max(1);
    n as f64 * lambda * (lambda * restore / YEAR_S).powi(n as i32 - 1)
}

fn add(comps: &mut Vec<Component>, what: String, domain: Domain, rate_per_s: f64, repair_s: f64) -> usize {
    comps.push(Component::new(what, domain, rate_per_s, repair_s));
    comps.len() - 1
}

/// Each JetStream server's crash, process crash, permanent loss and not-returning-after-power components;
/// returns the not-returning component of each server (rack power events trigger them).
pub(super) fn server_components(
    model: &Model,
    catalog: &Catalog,
    comps: &mut Vec<Component>,
) -> HashMap<ServerIdx, usize> {
    let site = model.site;
    let layout = model.layout;
    let rate = |k: &str| rate_per_year(site, catalog, k) / YEAR_S;
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
    let mut not_return: HashMap<ServerIdx, usize> = HashMap::new();
    for &s in &layout.servers {
        let name = &site.servers[s].name;
        add(
            comps,
            format!("{name} OS crash"),
            Domain::server(DomainKind::Server, site, s),
            rate("server_crash_per_year"),
            rep("server_restart"),
        );
        add(
            comps,
            format!("{name} nats-server crash"),
            Domain::server(DomainKind::Process, site, s),
            rate("process_crash_per_year"),
            rep("process_restart"),
        );
        // A server lost for good: its LUN on a shared array survives; its own disks do not. A guest is
        // lost for good only with its host (below): its own disks are the host's pool.
        let internal = model.array_of(s).is_some_and(|a| site.arrays[a].owner == Some(s));
        if !(internal && site.servers[s].host.is_some()) {
            add(
                comps,
                format!("{name} lost for good"),
                Domain::server(if internal { DomainKind::Wipe } else { DomainKind::Server }, site, s),
                rate("server_afr"),
                rep("server_replace"),
            );
        }
        let nr = add(
            comps,
            format!("{name} does not return after power loss"),
            Domain::server(DomainKind::Server, site, s),
            0.0,
            rep("server_replace"),
        );
        not_return.insert(s, nr);
    }
    not_return
}

/// The shared arrays of the layout and one outage component each.
pub(super) fn array_components(model: &Model, catalog: &Catalog, comps: &mut Vec<Component>) -> Vec<usize> {
    let site = model.site;
    let layout = model.layout;
    let rate = |k: &str| rate_per_year(site, catalog, k) / YEAR_S;
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
    let mut arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
    arrays.sort_unstable();
    arrays.dedup();
    for &a in &arrays {
        // A host's pool has no controller of its own: the host's components below are its outages.
        if site.arrays[a].owner.is_none() && site.arrays[a].host.is_none() {
            add(
                comps,
                format!("array {} outage", site.arrays[a].name),
                Domain::array(DomainKind::Array, site, a),
                rate("array_outage_per_year"),
                rep("array_repair"),
            );
            // Every volume on it lost for good (issue 32): back once the array is repaired and its groups'
            // stores are rebuilt. A server's own disks and a host's pool are lost with their server or
            // host (`server_components`, `shared_components`).
            let rebuild = model
                .array_groups(a)
                .iter()
                .map(|&g| super::repair::store_rebuild_s(model, catalog, g))
                .fold(0.0, f64::max);
            add(
                comps,
                format!("array {} lost for good (every volume)", site.arrays[a].name),
                Domain::array(DomainKind::LostArray, site, a),
                rate("array_lost_per_year"),
                rep("array_repair") + rebuild,
            );
        }
    }
    arrays
}

/// Rack power and uplinks, PDUs and hypervisor hosts.
pub(super) fn shared_components(
    model: &Model,
    catalog: &Catalog,
    comps: &mut Vec<Component>,
    arrays: &[usize],
    not_return: &HashMap<ServerIdx, usize>,
) {
    let site = model.site;
    let layout = model.layout;
    let rate = |k: &str| rate_per_year(site, catalog, k) / YEAR_S;
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
    for r in 0..site.racks.len() {
        let servers: Vec<ServerIdx> = site.rack_servers(r).filter(|s| not_return.contains_key(s)).collect();
        let arrays_here = arrays.iter().any(|&a| site.arrays[a].rack == r);
        if servers.is_empty() && !arrays_here {
            continue;
        }
        let p = add(
            comps,
            format!("rack {} power", site.racks[r].name),
            Domain::rack(DomainKind::Power, site, r),
            rate("rack_power_per_year") + redundant_paths_rate(site, catalog, r, Path::Power) / YEAR_S,
            rep("rack_power_restore") + rep("server_restart"),
        );
        comps[p].triggers = servers.iter().map(|s| not_return[s]).collect();
        add(
            comps,
            format!("rack {} uplinks", site.racks[r].name),
            Domain::rack(DomainKind::Net, site, r),
            rate("rack_net_per_year") + redundant_paths_rate(site, catalog, r, Path::Net) / YEAR_S,
            rep("rack_net_restore"),
        );
        // Destroyed for good (fire, flood): every store in the rack, until the rack is rebuilt (issue 32).
        add(
            comps,
            format!("rack {} lost for good (fire, flood)", site.racks[r].name),
            Domain::rack(DomainKind::LostRack, site, r),
            rate("rack_lost_per_year"),
            rep("rack_rebuild"),
        );
    }
    for d in Domain::universe(DomainKind::Pdu, site, layout) {
        add(
            comps,
            format!("PDU {}", d.name),
            d,
            rate("pdu_per_year"),
            rep("rack_power_restore"),
        );
    }
    for d in Domain::universe(DomainKind::Host, site, layout) {
        // Guests whose stores are their own (virtual) disks share the host's storage pool unless the
        // site gives them LUNs elsewhere: losing the host's hardware or pool destroys them all.
        let pooled = layout.servers.iter().any(|&s| {
            site.servers[s].host.as_deref() == Some(d.name.as_str())
                && model
                    .array_of(s)
                    .is_some_and(|a| site.arrays[a].owner == Some(s) || site.arrays[a].host.is_some())
        });
        if pooled {
            add(
                comps,
                format!(
                    "host {} lost for good with its storage pool (every guest's store)",
                    d.name
                ),
                Domain {
                    kind: DomainKind::Wipe,
                    ..d.clone()
                },
                rate("server_afr"),
                rep("server_replace"),
            );
        }
        add(
            comps,
            format!("host {}", d.name),
            d,
            rate("host_per_year"),
            rep("server_restart"),
        );
    }
}

/// Planned maintenance per outcome class, closed form (see the module doc): (unavailable s, stalled s).
pub(super) fn planned_maintenance(model: &Model, catalog: &Catalog, prep: &Prepared) -> (Vec<f64>, Vec<f64>) {
    let site = model.site;
    let layout = model.layout;
    let nclass = prep.class_count();
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
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
    (planned_unavail_s, planned_stall_s)
}

/// Add one component per disk of the layout's volume groups, and for each redundant group one that stands
/// for the group destroyed (its "latch", entered only when a disk failure completes a destroying set: see
/// `Reliability::latched`); returns the spares of each spare pool (one pool per array used: its hot spares,
/// or a DDP pool's preservation capacity in drives). A disk's repair is the time until its group is whole
/// again: with a spare (or the pool's reserve) left, the rebuild onto it (`repair::disk_rebuild`: by
/// medium, level and pool) or, where one disk destroys the volume, a new group on it, a filesystem,
/// peer-remove and the replicas' catch-up; without one, the drive replacement (`disk_replace`) first. A
/// destroyed redundant group comes back as a whole (`repair::store_rebuild_s`), not disk by disk.
pub(super) fn disk_components(model: &Model, catalog: &Catalog, comps: &mut Vec<Component>) -> Vec<u32> {
    let site = model.site;
    let layout = model.layout;
    let rep = |k: &str| repair_s(site, catalog, k).max(1.0);
    let site_disk_afr = site
        .failure_rates
        .iter()
        .find(|(k, _)| k == "disk_afr")
        .map(|(_, v)| *v);
    let mut pools: Vec<(usize, u32)> = Vec::new();
    for (gi, g) in layout.groups.iter().enumerate() {
        let arr = &site.arrays[g.array];
        let pool = match pools.iter().position(|(a, _)| *a == g.array) {
            Some(p) => p,
            None => {
                let n = if super::repair::is_pool(g.raid) {
                    // A pool's reserve plays the part of hot spares (SANtricity: "Pools use preservation
                    // capacity during reconstruction, whereas volume groups use hot spare drives").
                    crate::layout::pool_reserve(arr, g.disks.len() as u32)
                } else {
                    layout
                        .spares
                        .iter()
                        .find(|(a, _)| *a == g.array)
                        .map(|(_, n)| *n)
                        .unwrap_or(0)
                };
                pools.push((g.array, n));
                pools.len() - 1
            }
        };
        let dm = catalog.disk(&arr.disk_model);
        let afr = site_disk_afr
            .or(dm.map(|d| d.afr))
            .unwrap_or_else(|| catalog.failures.rate("disk_afr"));
        let one_destroys = g.raid == Raid::Raid0 || model.disks_to_destroy(gi) <= 1;
        let repair = if one_destroys {
            // The volume is gone: new group, filesystem, peer-remove, catch-up from peers.
            let catch_up = model
                .group_servers(gi)
                .iter()
                .map(|&s| super::recovery::catch_up_s(model, catalog, s))
                .fold(0.0, f64::max);
            rep("operator_response") + rep("raid0_new_group") + rep("filesystem") + rep("peer_remove") + catch_up
        } else {
            super::repair::disk_rebuild(site, catalog, layout, gi).seconds
        };
        for &slot in &g.disks {
            let mut c = Component::new(
                format!("disk {}/{slot}", arr.name),
                Domain::disk(site, g.array, slot),
                afr / YEAR_S,
                repair.max(1.0),
            );
            c.spare_pool = Some(pool);
            c.repair_no_spare_s = (rep("disk_replace") + repair).max(1.0);
            c.group = Some(gi);
            comps.push(c);
        }
        if !one_destroys {
            let first = g.disks.first().copied().unwrap_or(1);
            let mut c = Component::new(
                format!("volume group {} destroyed", g.name),
                Domain::disk(site, g.array, first),
                0.0,
                super::repair::store_rebuild_s(model, catalog, gi).max(1.0),
            );
            c.latch_of = Some(gi);
            comps.push(c);
        }
    }
    pools.into_iter().map(|(_, n)| n).collect()
}
