//! Pattern 4's LUN sizes: each LUN is sized on what its own server will hold, not on the average per
//! server. With `unique_tag` on rack the only server of a rack holds a replica of every R3 asset (seed
//! 000's 2 + 2 + 1 shape: echo in rack C), and a server whose rack-mate is peer-removed takes over that
//! mate's replicas; so the size is the largest of its share under the emulated placement and its share
//! after any one server or one rack is lost and its replicas rebuilt on survivors (the state
//! `plan::capacity` checks), plus the filesystem reserve and store headroom, rounded up to 1 GiB and never
//! past its group.

use super::placement::emulate;
use super::volumes::store_bytes;
use super::*;
use crate::site::{ServerIdx, Site};

/// The JetStream store of each server (in the order of `servers`) from its LUN.
pub(super) fn stores_of(site: &Site, servers: &[ServerIdx], luns: &[Lun]) -> Vec<f64> {
    servers
        .iter()
        .map(|&s| {
            luns.iter()
                .find(|l| l.server == s)
                .map(|l| store_bytes(site, l.size_bytes) as f64)
                .unwrap_or(0.0)
        })
        .collect()
}

/// Size every LUN on its server's need (see the module doc). The placement is first emulated as if
/// every group were one full LUN, then again on the sized LUNs; a LUN only grows after the first round,
/// so this ends within a few rounds.
pub(super) fn size_on_need(
    site: &Site,
    servers: &[ServerIdx],
    groups: &[VolumeGroup],
    luns: &mut [Lun],
    placement: &PlacementRule,
    assets: &[Asset],
) {
    let gib = 1u64 << 30;
    let keep = (1.0 - site.policy.fs_reserve) * (1.0 - site.policy.store_headroom);
    // Never below the average share (the size pattern 4 used before): a server the emulation leaves
    // empty (an asset that cannot be placed at all) still gets a LUN that could take a fair share.
    let total: f64 = assets.iter().map(|a| a.bytes_per_replica * a.replicas as f64).sum();
    let largest = assets.iter().map(|a| a.bytes_per_replica).fold(0.0, f64::max);
    let floor = super::volumes::lun_target_bytes(site, total, largest, servers.len());
    for l in luns.iter_mut() {
        l.size_bytes = groups[l.group].usable_bytes;
    }
    for round in 0..6 {
        let stores = stores_of(site, servers, luns);
        let (placed, _) = emulate(site, servers, &stores, placement, assets.to_vec());
        let need = worst_need(site, servers, &placed, &stores);
        let mut grown = false;
        for l in luns.iter_mut() {
            let Some(i) = servers.iter().position(|&s| s == l.server) else {
                continue;
            };
            let want = ((need[i] / keep).max(floor).ceil() as u64).div_ceil(gib).max(1) * gib;
            let size = want.min(groups[l.group].usable_bytes);
            if round == 0 || size > l.size_bytes {
                grown |= round > 0 && size > l.size_bytes;
                l.size_bytes = size;
            }
        }
        if round > 0 && !grown {
            break;
        }
    }
}

/// Per server (order of `servers`): the most it holds with everyone up, or after any one server, or any
/// one rack holding some but not all of them, is lost and peer-removed.
fn worst_need(site: &Site, servers: &[ServerIdx], placed: &[Asset], stores: &[f64]) -> Vec<f64> {
    let mut scenarios: Vec<Vec<ServerIdx>> = vec![Vec::new()];
    scenarios.extend(servers.iter().map(|&s| vec![s]));
    let mut racks: Vec<usize> = servers.iter().map(|&s| site.servers[s].rack).collect();
    racks.sort_unstable();
    racks.dedup();
    for r in racks {
        let on: Vec<ServerIdx> = servers.iter().copied().filter(|&s| site.servers[s].rack == r).collect();
        if on.len() > 1 && on.len() < servers.len() {
            scenarios.push(on);
        }
    }
    let mut worst = vec![0.0f64; servers.len()];
    for failed in scenarios {
        for (w, n) in worst.iter_mut().zip(need_after(site, servers, placed, stores, &failed)) {
            *w = w.max(n);
        }
    }
    worst
}

/// What each server holds once `failed` are peer-removed: each replica they held is rebuilt on the
/// least-full eligible survivor (by need over store; a distinct rack under `unique_tag`; inside the set
/// when pinned), as `plan::capacity::needs_after` models it.
pub(super) fn need_after(
    site: &Site,
    servers: &[ServerIdx],
    placed: &[Asset],
    stores: &[f64],
    failed: &[ServerIdx],
) -> Vec<f64> {
    // Slot of each site server in `servers` (the first, as a linear search would find): an index, since
    // this runs for every asset and replica of every failure scenario (issue 18: most of a 30-rack design).
    let mut slot: Vec<Option<usize>> = vec![None; site.servers.len()];
    for (i, &s) in servers.iter().enumerate().rev() {
        slot[s] = Some(i);
    }
    let pos = |s: ServerIdx| slot.get(s).copied().flatten();
    let mut need = vec![0.0f64; servers.len()];
    for a in placed {
        for &s in &a.expected {
            if let (Some(i), false) = (pos(s), failed.contains(&s)) {
                need[i] += a.bytes_per_replica;
            }
        }
    }
    for a in placed {
        let lost = a.expected.iter().filter(|s| failed.contains(s)).count();
        if lost > 0 {
            rebuild_lost(site, a, lost, failed, &pos, &mut need, stores);
        }
    }
    need
}

/// Rebuild the `lost` replicas of `a` (held on `failed`) on the least-full eligible survivors, by need
/// over store (a distinct rack under `unique_tag`; only its candidates, so inside its set when pinned),
/// adding each to `need`. `pos` maps a site server to its slot in `need`/`stores`. The one rule behind
/// pattern 4's LUN sizing (`need_after`) and `plan::capacity::needs_after`.
pub fn rebuild_lost(
    site: &Site,
    a: &Asset,
    lost: usize,
    failed: &[ServerIdx],
    pos: &dyn Fn(ServerIdx) -> Option<usize>,
    need: &mut [f64],
    stores: &[f64],
) {
    let mut holders: Vec<ServerIdx> = a.expected.iter().copied().filter(|s| !failed.contains(s)).collect();
    for _ in 0..lost {
        let pick = a
            .candidates
            .iter()
            .copied()
            .filter(|s| !failed.contains(s) && !holders.contains(s))
            .filter(|&s| !a.unique_rack || holders.iter().all(|&h| site.servers[h].rack != site.servers[s].rack))
            .filter_map(|s| pos(s).map(|i| (s, i)))
            .min_by(|&(_, i), &(_, j)| {
                (need[i] / stores[i].max(1.0))
                    .total_cmp(&(need[j] / stores[j].max(1.0)))
                    .then(i.cmp(&j))
            });
        if let Some((s, i)) = pick {
            need[i] += a.bytes_per_replica;
            holders.push(s);
        }
    }
}
