//! Replica placement under the configuration natsplan emits.
//!
//! Placement tags only confine; `unique_tag` spreads replicas over distinct tag values but caps every
//! stream at the number of values. So: when every planned asset's replica count fits the racks that hold
//! JetStream servers, emit `unique_tag: "rack:"`; otherwise pin replica sets (servers tagged `set:NAME`,
//! each chosen to spread over racks and arrays) and place each asset on one set.
//!
//! `emulate` reproduces what nats-server's meta leader does when the streams are created in plan order
//! (`selectPeerGroup`: eligible peers, then fewest HA assets for R>1, then most available storage): that
//! "expected" placement is used for capacity. Survivability never relies on it: `survival` assumes the
//! worst placement among the eligible ones.

use super::sizing;
use super::*;
use crate::site::{ServerIdx, Site};
use std::collections::BTreeMap;

/// The assets a site's workload creates under default replica count `r`, without placement yet.
pub fn assets(site: &Site, r: u8) -> Vec<Asset> {
    let mut v = Vec::new();
    let mut push = |name: &str, kind: AssetKind, replicas: u8, bytes: f64, parent: Option<String>| {
        v.push(Asset {
            name: name.to_string(),
            kind,
            replicas,
            candidates: Vec::new(),
            unique_rack: false,
            set: None,
            parent,
            bytes_per_replica: bytes,
            expected: Vec::new(),
        })
    };
    // Canonical order (by name within each kind), so the emulated placement — and so capacity and
    // ranking — does not depend on the order of the site file. emit lists the streams in this order.
    let mut streams: Vec<_> = site.workload.streams.iter().collect();
    streams.sort_by_key(|s| s.name.to_ascii_lowercase());
    let mut kvs: Vec<_> = site.workload.kv.iter().collect();
    kvs.sort_by_key(|k| k.name.to_ascii_lowercase());
    let mut objs: Vec<_> = site.workload.object_stores.iter().collect();
    objs.sort_by_key(|o| o.name.to_ascii_lowercase());
    for s in streams {
        let rr = s.replicas.unwrap_or(r);
        push(&s.name, AssetKind::Stream, rr, sizing::stream_bytes(site, s, rr), None);
        for c in 0..s.consumers {
            push(
                &format!("{}/c{}", s.name, c + 1),
                AssetKind::Consumer,
                rr,
                sizing::CONSUMER_BYTES,
                Some(s.name.clone()),
            );
        }
    }
    for k in kvs {
        let rr = k.replicas.unwrap_or(r);
        push(&k.name, AssetKind::Kv, rr, sizing::kv_bytes(site, k, rr), None);
    }
    for o in objs {
        let rr = o.replicas.unwrap_or(r);
        push(
            &o.name,
            AssetKind::ObjectStore,
            rr,
            sizing::object_store_bytes(site, o, rr),
            None,
        );
    }
    v
}

fn distinct_racks(site: &Site, servers: &[ServerIdx]) -> usize {
    let mut r: Vec<usize> = servers.iter().map(|&s| site.servers[s].rack).collect();
    r.sort_unstable();
    r.dedup();
    r.len()
}

/// Decide how the emitted configuration steers placement for these JetStream servers.
pub fn choose_rule(site: &Site, servers: &[ServerIdx], assets: &[Asset]) -> PlacementRule {
    let racks = distinct_racks(site, servers);
    let max_r = assets.iter().map(|a| a.replicas as usize).max().unwrap_or(1);
    if racks >= 2 && max_r <= racks {
        return PlacementRule::UniqueTag { prefix: "rack:".into() };
    }
    if servers.is_empty() {
        return PlacementRule::Free;
    }
    // One set family per replica count in use.
    let mut counts: Vec<usize> = assets.iter().map(|a| a.replicas as usize).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut sets = Vec::new();
    for r in counts {
        if r > servers.len() {
            continue;
        }
        if r == servers.len() || r == 1 && servers.len() == 1 {
            sets.push(ReplicaSet {
                name: format!("r{r}-1"),
                servers: servers.to_vec(),
            });
            continue;
        }
        for (i, set) in spread_sets(site, servers, r).into_iter().enumerate() {
            sets.push(ReplicaSet {
                name: format!("r{r}-{}", i + 1),
                servers: set,
            });
        }
    }
    PlacementRule::Pinned { sets }
}

/// ⌈N/R⌉ sets of R servers that use every server at least once, each spread as evenly as possible over
/// racks, then arrays (greedy: the next member is the one sharing the fewest racks/arrays with the set).
fn spread_sets(site: &Site, servers: &[ServerIdx], r: usize) -> Vec<Vec<ServerIdx>> {
    let n = servers.len();
    let mut usage: BTreeMap<ServerIdx, usize> = servers.iter().map(|&s| (s, 0)).collect();
    let mut out: Vec<Vec<ServerIdx>> = Vec::new();
    for _ in 0..n.div_ceil(r) {
        let mut set: Vec<ServerIdx> = Vec::new();
        while set.len() < r {
            let best = servers
                .iter()
                .copied()
                .filter(|s| !set.contains(s))
                .min_by_key(|&s| {
                    let same_rack = set
                        .iter()
                        .filter(|&&x| site.servers[x].rack == site.servers[s].rack)
                        .count();
                    let same_host = set
                        .iter()
                        .filter(|&&x| site.servers[s].host.is_some() && site.servers[x].host == site.servers[s].host)
                        .count();
                    (
                        same_rack,
                        same_host,
                        usage[&s],
                        site.servers[s].name.to_ascii_lowercase(),
                    )
                })
                .expect("r <= n");
            *usage.get_mut(&best).expect("known server") += 1;
            set.push(best);
        }
        set.sort_by_key(|&s| site.servers[s].name.to_ascii_lowercase());
        if !out.contains(&set) {
            out.push(set);
        }
    }
    out
}

/// Give every asset its eligible servers and the placement the meta leader would produce, in plan
/// order. Problems: assets that cannot be placed at all ("no suitable peers").
pub fn emulate(
    site: &Site,
    servers: &[ServerIdx],
    stores: &[f64],
    rule: &PlacementRule,
    mut assets: Vec<Asset>,
) -> (Vec<Asset>, Vec<Problem>) {
    let mut problems = Vec::new();
    // Position of each site server in `servers` (a Vec, not a map: it sits inside sort comparators).
    let mut idx = vec![usize::MAX; servers.iter().max().map_or(0, |m| m + 1)];
    for (i, &s) in servers.iter().enumerate() {
        idx[s] = i;
    }
    let mut reserved = vec![0.0f64; servers.len()];
    let mut ha = vec![0usize; servers.len()];
    let mut streams_on = vec![0usize; servers.len()];
    let mut parent_expected: BTreeMap<String, Vec<ServerIdx>> = BTreeMap::new();
    let mut parent_candidates: BTreeMap<String, (Vec<ServerIdx>, bool, Option<String>)> = BTreeMap::new();
    // Sets are assigned to assets of their replica count round-robin by bytes (largest to least loaded).
    let mut set_load: BTreeMap<String, f64> = BTreeMap::new();
    let racks_available = distinct_racks(site, servers);
    // Canonical (name) order of servers, computed once: comparators run millions of times on big sites.
    let mut by_name: Vec<ServerIdx> = servers.to_vec();
    by_name.sort_by_cached_key(|&s| site.servers[s].name.to_ascii_lowercase());
    let mut name_rank = vec![0usize; servers.iter().max().map_or(0, |m| m + 1)];
    for (i, &s) in by_name.iter().enumerate() {
        name_rank[s] = i;
    }

    for a in assets.iter_mut() {
        if a.kind == AssetKind::Consumer {
            // A durable consumer lives on its stream's peers (same replica count here).
            let parent = a.parent.clone().unwrap_or_default();
            if let Some((c, u, set)) = parent_candidates.get(&parent) {
                a.candidates = c.clone();
                a.unique_rack = *u;
                a.set = set.clone();
            }
            a.expected = parent_expected.get(&parent).cloned().unwrap_or_default();
            for s in &a.expected {
                if a.replicas > 1 {
                    ha[idx[*s]] += 1;
                }
            }
            continue;
        }
        eligible(a, rule, servers, &mut set_load);
        let r = a.replicas as usize;
        if a.candidates.len() < r || (a.unique_rack && racks_available < r) {
            problems.push(no_peers(a, racks_available));
            parent_candidates.insert(a.name.clone(), (a.candidates.clone(), a.unique_rack, a.set.clone()));
            continue;
        }
        // selectPeerGroup: online peers by most available storage, ties by fewest streams; for R > 1 a
        // stable sort by fewest HA assets on top. Ties beyond that are random in NATS; here, by name.
        let mut order: Vec<ServerIdx> = a.candidates.clone();
        order.sort_by(|&x, &y| {
            let (ix, iy) = (idx[x], idx[y]);
            let avail_x = stores[ix] - reserved[ix];
            let avail_y = stores[iy] - reserved[iy];
            avail_y
                .total_cmp(&avail_x)
                .then(streams_on[ix].cmp(&streams_on[iy]))
                .then(
                    site.servers[x]
                        .name
                        .to_ascii_lowercase()
                        .cmp(&site.servers[y].name.to_ascii_lowercase()),
                )
        });
        if r > 1 {
            order.sort_by_key(|&x| ha[idx[x]]);
        }
        let mut chosen: Vec<ServerIdx> = Vec::new();
        for s in order {
            if chosen.len() == r {
                break;
            }
            if a.unique_rack && chosen.iter().any(|&c| site.servers[c].rack == site.servers[s].rack) {
                continue;
            }
            chosen.push(s);
        }
        for &s in &chosen {
            let i = idx[s];
            reserved[i] += a.bytes_per_replica;
            streams_on[i] += 1;
            if r > 1 {
                ha[i] += 1;
            }
        }
        chosen.sort_by_key(|&s| name_rank[s]);
        a.expected = chosen.clone();
        parent_expected.insert(a.name.clone(), chosen);
        parent_candidates.insert(a.name.clone(), (a.candidates.clone(), a.unique_rack, a.set.clone()));
    }
    (assets, problems)
}

/// The servers an asset may go on under the placement rule; a pinned asset takes the least-loaded set
/// of its replica count (by bytes, ties by name), which `set_load` tracks.
fn eligible(a: &mut Asset, rule: &PlacementRule, servers: &[ServerIdx], set_load: &mut BTreeMap<String, f64>) {
    match rule {
        PlacementRule::UniqueTag { .. } => {
            a.candidates = servers.to_vec();
            a.unique_rack = true;
        }
        PlacementRule::Free => a.candidates = servers.to_vec(),
        PlacementRule::Pinned { sets } => {
            let fam: Vec<&ReplicaSet> = sets.iter().filter(|s| s.servers.len() == a.replicas as usize).collect();
            if let Some(set) = fam.iter().min_by(|x, y| {
                let lx = set_load.get(&x.name).copied().unwrap_or(0.0);
                let ly = set_load.get(&y.name).copied().unwrap_or(0.0);
                lx.total_cmp(&ly).then(x.name.cmp(&y.name))
            }) {
                *set_load.entry(set.name.clone()).or_default() += a.bytes_per_replica;
                a.candidates = set.servers.clone();
                a.set = Some(set.name.clone());
            } else {
                a.candidates = servers.to_vec();
            }
        }
    }
}

/// "no suitable peers": the asset has fewer eligible servers (or racks, under `unique_tag`) than replicas.
fn no_peers(a: &Asset, racks_available: usize) -> Problem {
    let r = a.replicas as usize;
    Problem {
        severity: Severity::Reject,
        text: if a.unique_rack {
            format!(
                "no suitable peers for placement: {} {} needs {r} replicas on distinct racks; JetStream servers span {racks_available} rack{}",
                a.kind.as_str(),
                a.name,
                if racks_available == 1 { "" } else { "s" }
            )
        } else {
            format!(
                "no suitable peers for placement: {} {} needs {r} replicas; {} JetStream server{} eligible",
                a.kind.as_str(),
                a.name,
                a.candidates.len(),
                if a.candidates.len() == 1 { " is" } else { "s are" }
            )
        },
    }
}
