//! Pattern 4's LUN sizes: each LUN is sized on what its own server will hold, not on the average per
//! server. With `unique_tag` on rack the only server of a rack holds a replica of every R3 asset (seed
//! 000's 2 + 2 + 1 shape: echo in rack C), and a server whose rack-mate is peer-removed takes over that
//! mate's replicas; so the size is the largest of its share under the emulated placement and its share
//! after any one server or one rack is lost and its replicas rebuilt on survivors (the state
//! `plan::capacity` checks), plus the filesystem reserve, and a store (`max_file_store`) of which that
//! share leaves `store_headroom` free, rounded up to 1 GiB and never past its group.

use super::after_failure::Slots;
use super::failure_needs::FailureNeeds;
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

/// The placement pattern 4's first sizing round reads: the layout's assets placed with every LUN its
/// group's full size (as the unsized candidate has them: `Candidate::layout`), and that placement's
/// failure-needs cache, which the round fills. Plan's evaluator gives both from its placement memo (a
/// pattern-1 layout of the same servers has that placement too); `Candidate::size` makes them when not
/// given.
pub struct Whole<'a> {
    pub assets: &'a [Asset],
    pub needs: &'a mut FailureNeeds,
}

/// Size every LUN on its server's need (see the module doc). The first round reads the placement as if
/// every group were one full LUN (`whole`), later rounds place again on the sized LUNs; a LUN only grows
/// after the first round, so this ends within a few rounds.
pub(super) fn size_on_need(
    site: &Site,
    servers: &[ServerIdx],
    groups: &[VolumeGroup],
    luns: &mut [Lun],
    placement: &PlacementRule,
    assets: &[Asset],
    whole: Whole<'_>,
) -> Option<Placed> {
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
    // One copy of the assets for all rounds: each round clears what `emulate` set (back to the bare
    // assets' placement fields) rather than cloning 100,000 names again.
    let mut work = assets.to_vec();
    let none: std::sync::Arc<[ServerIdx]> = Vec::new().into();
    let mut whole = Some(whole);
    for round in 0..6 {
        let stores = stores_of(site, servers, luns);
        for a in &mut work {
            a.candidates = none.clone();
            a.unique_rack = false;
            a.set = None;
            a.expected.clear();
        }
        // The first round reads the placement on whole groups (`whole`, as a pattern-1 layout of these
        // servers places); the later ones place on the LUNs as sized so far.
        let (need, after, problems) = match whole.take().filter(|_| round == 0) {
            Some(w) => (worst_need(site, servers, w.assets, &stores, w.needs), None, Vec::new()),
            None => {
                let (placed, problems) = emulate(site, servers, &stores, placement, work);
                let mut after = FailureNeeds::default();
                let need = worst_need(site, servers, &placed, &stores, &mut after);
                work = placed;
                (need, Some(after), problems)
            }
        };
        let mut grown = false;
        for l in luns.iter_mut() {
            let Some(i) = servers.iter().position(|&s| s == l.server) else {
                continue;
            };
            // `store_headroom` is the share of `max_file_store` kept free (docs/site-format.md): the
            // store is sized so that the need fills the rest of it (issue 38: it was sized to exactly
            // the need, 0 % free now and after a failure, and the layout called recommended).
            let want = ((need[i] / keep / (1.0 - site.policy.store_headroom)).max(floor).ceil() as u64)
                .div_ceil(gib)
                .max(1)
                * gib;
            let size = want.min(groups[l.group].usable_bytes);
            if round == 0 || size > l.size_bytes {
                grown |= round > 0 && size > l.size_bytes;
                l.size_bytes = size;
            }
        }
        if round > 0 && !grown {
            // The LUNs are the ones this round placed on: its placement and needs are the layout's.
            return Some(Placed {
                assets: work,
                problems,
                needs: after.unwrap_or_default(),
            });
        }
    }
    None
}

/// A layout's placement from its LUN sizing, made on the LUNs it has (`Candidate::size`): the assets as
/// `build::placement` places them, the problems it gives, and what each server needs after each failure
/// the sizing covered (its failure-needs cache).
pub struct Placed {
    pub assets: Vec<Asset>,
    pub problems: Vec<Problem>,
    pub needs: FailureNeeds,
}

/// The failures pattern 4's LUNs are sized for: none, any one server, any one rack holding some but not
/// all of `servers`.
fn scenarios(site: &Site, servers: &[ServerIdx]) -> Vec<Vec<ServerIdx>> {
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
    scenarios
}

/// Per server (order of `servers`): the most it holds with everyone up, or after any one server, or any
/// one rack holding some but not all of them, is lost and peer-removed.
fn worst_need(
    site: &Site,
    servers: &[ServerIdx],
    placed: &[Asset],
    stores: &[f64],
    after: &mut FailureNeeds,
) -> Vec<f64> {
    // The all-up needs once per round; a scenario rebuilds only the assets with a replica on its failed
    // servers (scenarios × rounds per layout would otherwise each walk every asset), or is read from
    // `after` when recorded on this placement before.
    let base = Slots::new(site, servers).needs(placed);
    let mut worst = vec![0.0f64; servers.len()];
    for failed in scenarios(site, servers) {
        let need = after.needs(site, servers, placed, stores, &base, &failed);
        for (w, &n) in worst.iter_mut().zip(need) {
            *w = w.max(n);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::super::after_failure::need_after;
    use super::*;

    #[test]
    fn worst_need_by_touched_assets_and_ordered_survivors_is_the_full_scan() {
        // Every pattern-4 layout (and the others' servers and placement) of a 5-rack site of mixed
        // streams: the per-round shortcut (all-up needs once, only the assets on the failed servers, the
        // ordered survivor set) gives each server's worst need bit for bit as the plain per-scenario
        // recomputation with a scan of every candidate.
        let t = crate::sitegen::test_site(
            "site: luns\nnats: { replicas: [3, 5] }\npolicy: { patterns: [\"1\", \"2\", \"4\"] }\n",
            5,
            3,
            |_| crate::sitegen::EF600_12.to_string(),
            40,
            |s| {
                format!(
                    "msgs_per_s: {}, msg_size: 1KiB, retention: 1d, replicas: {}",
                    1 + (s * 37) % 50,
                    [1, 3, 5][s % 3]
                )
            },
        );
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(&t, "luns.yaml", &cat).unwrap();
        let layouts = super::super::Enumerate::new(&site, &cat).placed();
        let mut compared = 0;
        for l in &layouts {
            let stores = stores_of(&site, &l.servers, &l.luns);
            let fast = worst_need(&site, &l.servers, &l.assets, &stores, &mut FailureNeeds::default());
            let mut slow = vec![0.0f64; l.servers.len()];
            for failed in scenarios(&site, &l.servers) {
                for (w, n) in slow
                    .iter_mut()
                    .zip(need_after(&site, &l.servers, &l.assets, &stores, &failed))
                {
                    *w = w.max(n);
                }
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&slow), "{}", l.id);
            compared += usize::from(fast.iter().any(|&x| x > 0.0));
        }
        assert!(compared > 5, "{compared} layouts with needs compared");
    }
}
