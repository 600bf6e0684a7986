//! The capacity-after-failure engine: what each server of a layout holds once some servers are lost,
//! peer-removed and their replicas rebuilt on the least-full eligible survivors (`rebuild_lost`, and
//! `Packed::rebuild` on packed per-server lists). What it rebuilt is recorded per set of failed servers
//! in the failure-needs cache (`failure_needs::FailureNeeds`), which pattern 4's LUN sizing (`lun_size`)
//! fills while it sizes and `plan::capacity` reads.

use super::*;
use crate::site::{ServerIdx, Site};

/// The slot of each site server in a layout's server list (the first, as a linear search would find).
pub struct Slots {
    slot: Vec<Option<usize>>,
    len: usize,
}

impl Slots {
    pub fn new(site: &Site, servers: &[ServerIdx]) -> Slots {
        let len = servers
            .iter()
            .map(|&s| s + 1)
            .max()
            .unwrap_or(0)
            .max(site.servers.len());
        let mut slot: Vec<Option<usize>> = vec![None; len];
        for (i, &s) in servers.iter().enumerate().rev() {
            slot[s] = Some(i);
        }
        Slots {
            slot,
            len: servers.len(),
        }
    }

    pub fn pos(&self, s: ServerIdx) -> Option<usize> {
        self.slot.get(s).copied().flatten()
    }

    /// Bytes each server (by slot) holds under the assets' expected placement, in asset order.
    pub fn needs(&self, assets: &[Asset]) -> Vec<f64> {
        let mut need = vec![0.0f64; self.len];
        for a in assets {
            for &s in &a.expected {
                if let Some(i) = self.pos(s) {
                    need[i] += a.bytes_per_replica;
                }
            }
        }
        need
    }

    /// The assets (indices, in order) with a replica expected on each server (by slot).
    pub fn assets_on(&self, assets: &[Asset]) -> Vec<Vec<usize>> {
        let mut on = vec![Vec::new(); self.len];
        for (ai, a) in assets.iter().enumerate() {
            for &s in &a.expected {
                if let Some(i) = self.pos(s) {
                    on[i].push(ai);
                }
            }
        }
        on
    }
}

/// The assets (in order, each once) with a replica on one of `failed`, from `Slots::assets_on`.
pub fn touched_by(slots: &Slots, on: &[Vec<usize>], failed: &[ServerIdx]) -> Vec<usize> {
    let mut touched: Vec<usize> = failed
        .iter()
        .filter_map(|&s| slots.pos(s))
        .flat_map(|i| on[i].iter().copied())
        .collect();
    touched.sort_unstable();
    touched.dedup();
    touched
}

/// What each server holds once `failed` are peer-removed: each replica they held is rebuilt on the
/// least-full eligible survivor (by need over store; a distinct rack under `unique_tag`; inside the set
/// when pinned), as `plan::capacity::needs_after` models it.
#[cfg(test)]
pub(super) fn need_after(
    site: &Site,
    servers: &[ServerIdx],
    placed: &[Asset],
    stores: &[f64],
    failed: &[ServerIdx],
) -> Vec<f64> {
    let slots = Slots::new(site, servers);
    let mut need = vec![0.0f64; servers.len()];
    for a in placed {
        for &s in &a.expected {
            if let (Some(i), false) = (slots.pos(s), failed.contains(&s)) {
                need[i] += a.bytes_per_replica;
            }
        }
    }
    let every: Vec<usize> = (0..placed.len()).collect();
    rebuild_lost(site, servers, placed, stores, failed, &every, &mut need, false);
    need
}

/// Rebuild the replicas that `touched` assets (indices into `assets`, in order) held on `failed` on the
/// least-full eligible survivors, by need over store, then slot (a distinct rack under `unique_tag`;
/// only the asset's candidates, so inside its set when pinned), adding each to `need` (by slot in
/// `servers`; `stores` likewise). The one rule behind pattern 4's LUN sizing (`worst_need`) and
/// `plan::capacity`'s needs after a failure.
///
/// With `ordered`, when every touched asset may go on any of `servers`, the survivors are kept in that
/// preference order (a sorted Vec): each pick walks from the least full past the few ineligible ones
/// (holders, their racks) instead of scanning every candidate. The same picks: the order is `total_cmp`
/// of need over store, then slot, and for need and store ≥ 0 the bits of an f64 order as `total_cmp`
/// does. A test compares both paths bit for bit. `Packed::rebuild` is this rule for the assets on some
/// failed servers, read from per-server packed lists.
// why: the inner step of capacity after failure, called once per failure set by `worst_need` and
// `Packed::rebuild` with slices each borrows from its own owner (the layout's servers and assets, the
// stores, the set, the touched assets, the needs it fills): a struct of borrows would be rebuilt per call.
#[allow(clippy::too_many_arguments)]
pub fn rebuild_lost(
    site: &Site,
    servers: &[ServerIdx],
    assets: &[Asset],
    stores: &[f64],
    failed: &[ServerIdx],
    touched: &[usize],
    need: &mut [f64],
    ordered: bool,
) {
    if ordered && touched.iter().all(|&i| assets[i].candidates.len() == servers.len()) {
        rebuild_ordered(site, servers, assets, stores, failed, touched, need);
        return;
    }
    let slots = Slots::new(site, servers);
    for a in touched.iter().map(|&i| &assets[i]) {
        let lost = a.expected.iter().filter(|s| failed.contains(s)).count();
        if lost > 0 {
            rebuild_one(site, a, lost, failed, &slots, need, stores);
        }
    }
}

/// `rebuild_lost` for one asset by a scan of its candidates.
fn rebuild_one(
    site: &Site,
    a: &Asset,
    lost: usize,
    failed: &[ServerIdx],
    slots: &Slots,
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
            .filter_map(|s| slots.pos(s).map(|i| (s, i)))
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

/// Most replicas an asset has (R ∈ 1..5): `Packed` holds its expected servers inline.
const PACKED_REPLICAS: usize = 5;

/// One asset as `Packed::rebuild` reads it (32 bytes).
#[derive(Debug, Clone, Copy)]
struct PackedAsset {
    bytes_per_replica: f64,
    /// Its index in the layout's assets (the order a scenario rebuilds them in).
    at: u32,
    /// Its expected servers as slots (positions in the layout's servers).
    expected: [u16; PACKED_REPLICAS],
    n: u8,
    unique_rack: bool,
    /// Every server of the layout is a candidate.
    all_eligible: bool,
}

/// A layout's placed assets packed for the scenarios of one server or one rack lost (`rebuild`): per
/// server (slot), the assets with a replica on it, in asset order, each 32 bytes with its expected
/// servers inline. A scenario reads its failed servers' lists front to back instead of looking up each
/// touched asset among all of them (such a walk waits on memory more than it computes), and no touched
/// list is built and sorted per scenario.
pub struct Packed {
    lists: Lists,
}

enum Lists {
    /// Per slot: the packed assets on it, and whether every one of them may go on any server.
    Packed(Vec<(Vec<PackedAsset>, bool)>),
    /// Assets that do not pack (more than 5 expected servers, one not among `servers`, a server listed
    /// twice, more than 65,535 servers): per slot the indices of the assets on it (`Slots::assets_on`).
    Indices(Slots, Vec<Vec<usize>>),
}

impl Packed {
    pub fn new(site: &Site, servers: &[ServerIdx], assets: &[Asset]) -> Packed {
        let fallback = || Packed {
            lists: {
                let slots = Slots::new(site, servers);
                let on = slots.assets_on(assets);
                Lists::Indices(slots, on)
            },
        };
        let mut slot = vec![u16::MAX; servers.iter().max().map_or(0, |m| m + 1)];
        for (i, &s) in servers.iter().enumerate() {
            if slot[s] != u16::MAX || i >= usize::from(u16::MAX) {
                return fallback();
            }
            slot[s] = i as u16;
        }
        if u32::try_from(assets.len()).is_err() {
            return fallback();
        }
        let mut lists: Vec<(Vec<PackedAsset>, bool)> = vec![(Vec::new(), true); servers.len()];
        for (at, a) in assets.iter().enumerate() {
            if a.expected.len() > PACKED_REPLICAS {
                return fallback();
            }
            let mut expected = [0u16; PACKED_REPLICAS];
            for (e, &s) in expected.iter_mut().zip(&a.expected) {
                match slot.get(s).copied().filter(|&i| i != u16::MAX) {
                    Some(i) => *e = i,
                    None => return fallback(),
                }
            }
            let p = PackedAsset {
                bytes_per_replica: a.bytes_per_replica,
                at: at as u32,
                expected,
                n: a.expected.len() as u8,
                unique_rack: a.unique_rack,
                all_eligible: a.candidates.len() == servers.len(),
            };
            for &e in &expected[..a.expected.len()] {
                let (list, all) = &mut lists[usize::from(e)];
                list.push(p);
                *all &= p.all_eligible;
            }
        }
        Packed {
            lists: Lists::Packed(lists),
        }
    }

    /// Rebuild the replicas `failed` held on the survivors, adding them to `need` (by slot; the failed
    /// servers' own entries are the caller's): `rebuild_lost` for the assets with a replica on `failed`,
    /// in asset order, with the ordered survivors when every one of them may go on any server. `assets`
    /// are the ones this was packed from.
    pub fn rebuild(
        &self,
        site: &Site,
        servers: &[ServerIdx],
        assets: &[Asset],
        stores: &[f64],
        failed: &[ServerIdx],
        need: &mut [f64],
    ) {
        match &self.lists {
            Lists::Indices(slots, on) => {
                let touched = touched_by(slots, on, failed);
                rebuild_lost(site, servers, assets, stores, failed, &touched, need, true);
            }
            Lists::Packed(lists) => {
                // The failed servers' slots, each once (a server listed twice in `failed` adds nothing).
                let mut at: Vec<usize> = servers
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| failed.contains(s))
                    .map(|(i, _)| i)
                    .collect();
                at.retain(|&i| !lists[i].0.is_empty());
                let on: Vec<&[PackedAsset]> = at.iter().map(|&i| lists[i].0.as_slice()).collect();
                if at.iter().all(|&i| lists[i].1) {
                    rebuild_packed(site, servers, &on, stores, failed, need);
                } else {
                    let mut touched = Vec::new();
                    merged(&on, |a| touched.push(a.at as usize));
                    rebuild_lost(site, servers, assets, stores, failed, &touched, need, false);
                }
            }
        }
    }
}

/// Call `f` with the assets of sorted lists `on` in asset order, each once (an asset on two of the
/// failed servers is in both lists).
fn merged(on: &[&[PackedAsset]], mut f: impl FnMut(&PackedAsset)) {
    match on {
        [] => return,
        [one] => {
            one.iter().for_each(f);
            return;
        }
        _ => {}
    }
    // Each list's next asset index (u32::MAX once it is spent): the least is the next in order; an asset
    // met again (it is on two failed servers) is skipped.
    let mut pos = vec![0usize; on.len()];
    let mut cur: Vec<u32> = on.iter().map(|l| l.first().map_or(u32::MAX, |a| a.at)).collect();
    let mut last = u32::MAX;
    loop {
        let mut k = 0;
        for j in 1..cur.len() {
            if cur[j] < cur[k] {
                k = j;
            }
        }
        let a = cur[k];
        if a == u32::MAX {
            return;
        }
        if a != last {
            f(&on[k][pos[k]]);
            last = a;
        }
        pos[k] += 1;
        cur[k] = on[k].get(pos[k]).map_or(u32::MAX, |x| x.at);
    }
}

/// `rebuild_ordered` on the packed lists of the failed servers (`Packed::rebuild`): the same steps, the
/// same picks.
fn rebuild_packed(
    site: &Site,
    servers: &[ServerIdx],
    on: &[&[PackedAsset]],
    stores: &[f64],
    failed: &[ServerIdx],
    need: &mut [f64],
) {
    let key = |need: &[f64], i: usize| ((need[i] / stores[i].max(1.0)).to_bits(), i);
    // By slot: failed or not, and the rack (the packed assets' servers are slots).
    let down: Vec<bool> = servers.iter().map(|s| failed.contains(s)).collect();
    let rack: Vec<usize> = servers.iter().map(|&s| site.servers[s].rack).collect();
    let mut order: Vec<(u64, usize)> = (0..servers.len()).filter(|&i| !down[i]).map(|i| key(need, i)).collect();
    order.sort_unstable();
    merged(on, |a| {
        let expected = a.expected[..a.n as usize].iter().map(|&s| usize::from(s));
        let lost = expected.clone().filter(|&s| down[s]).count();
        if lost == 0 {
            return;
        }
        // The holders and, under `unique_tag`, their racks (looked up once per asset, not per candidate).
        let mut holders = [usize::MAX; PACKED_REPLICAS];
        let mut racks = [usize::MAX; PACKED_REPLICAS];
        let mut held = 0;
        for s in expected.filter(|&s| !down[s]) {
            holders[held] = s;
            racks[held] = rack[s];
            held += 1;
        }
        for _ in 0..lost {
            let pick = order.iter().position(|&(_, i)| {
                !holders[..held].contains(&i) && (!a.unique_rack || !racks[..held].contains(&rack[i]))
            });
            if let Some(at) = pick {
                let (old, i) = order[at];
                need[i] += a.bytes_per_replica;
                let k = key(need, i);
                if k >= (old, i) {
                    // The key grew (bytes ≥ 0): move the entry right, past the keys now below it, which
                    // is `remove` then `insert` at the partition point without shifting the rest. Most
                    // entries move a few places (a consumer's bytes) or far: look at the next four first.
                    let tail = &order[at + 1..];
                    let near = tail.iter().take(4).position(|&x| x >= k);
                    let to = at + near.unwrap_or_else(|| tail.partition_point(|&x| x < k));
                    for j in at..to {
                        order[j] = order[j + 1];
                    }
                    order[to] = k;
                } else {
                    order.remove(at);
                    order.insert(order.partition_point(|&x| x < k), k);
                }
                holders[held] = i;
                racks[held] = rack[i];
                held += 1;
            }
        }
    });
}

/// `rebuild_lost`'s ordered path (see there).
fn rebuild_ordered(
    site: &Site,
    servers: &[ServerIdx],
    assets: &[Asset],
    stores: &[f64],
    failed: &[ServerIdx],
    touched: &[usize],
    need: &mut [f64],
) {
    // A sorted Vec (keys are unique: the slot is part of each): a few hundred servers at most, where a
    // shift of the Vec costs less than a BTreeSet's nodes.
    let key = |need: &[f64], i: usize| ((need[i] / stores[i].max(1.0)).to_bits(), i);
    let mut order: Vec<(u64, usize)> = (0..servers.len())
        .filter(|&i| !failed.contains(&servers[i]))
        .map(|i| key(need, i))
        .collect();
    order.sort_unstable();
    let rack = |s: ServerIdx| site.servers[s].rack;
    for a in touched.iter().map(|&i| &assets[i]) {
        let lost = a.expected.iter().filter(|s| failed.contains(s)).count();
        if lost == 0 {
            continue;
        }
        let mut holders: Vec<ServerIdx> = a.expected.iter().copied().filter(|s| !failed.contains(s)).collect();
        for _ in 0..lost {
            let pick = order.iter().position(|&(_, i)| {
                let s = servers[i];
                !holders.contains(&s) && (!a.unique_rack || holders.iter().all(|&h| rack(h) != rack(s)))
            });
            if let Some(at) = pick {
                let (_, i) = order.remove(at);
                need[i] += a.bytes_per_replica;
                let k = key(need, i);
                order.insert(order.partition_point(|&x| x < k), k);
                holders.push(servers[i]);
            }
        }
    }
}
