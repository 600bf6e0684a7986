//! Capacity of a layout against the workload: per server from the emulated placement, in total, and
//! after the worst tolerated failure once the failed peers are removed and their replicas rebuilt on
//! the survivors that the placement rules allow.

use super::{AfterFailure, Capacity, ServerCapacity, Shortfall};
use crate::layout::{store_bytes, Layout, Packed};
use crate::site::{ServerIdx, Site, Tolerance};

/// Bytes each JetStream server (in `layout.servers` order) must hold under the expected placement.
pub fn needs(layout: &Layout) -> Vec<f64> {
    let mut slot = vec![usize::MAX; layout.servers.iter().max().map_or(0, |m| m + 1)];
    for (i, &s) in layout.servers.iter().enumerate() {
        slot[s] = i;
    }
    let mut need = vec![0.0; layout.servers.len()];
    for a in &layout.assets {
        for &s in &a.expected {
            if let Some(&i) = slot.get(s).filter(|&&i| i != usize::MAX) {
                need[i] += a.bytes_per_replica;
            }
        }
    }
    need
}

/// `max_file_store` of each JetStream server.
pub fn stores(site: &Site, layout: &Layout) -> Vec<f64> {
    layout
        .servers
        .iter()
        .map(|&s| {
            layout
                .lun_of(s)
                .map(|l| store_bytes(site, l.size_bytes) as f64)
                .unwrap_or(0.0)
        })
        .collect()
}

/// Fraction of a store left free (negative when short). A zero-size store with no need is full, not free.
fn headroom_of(usable: f64, need: f64) -> f64 {
    if usable <= 0.0 {
        if need <= 0.0 {
            0.0
        } else {
            -1.0
        }
    } else {
        1.0 - need / usable
    }
}

/// The fullest server (lowest headroom) among those alive.
fn fullest(
    site: &Site,
    layout: &Layout,
    stores: &[f64],
    need: &[f64],
    alive: &[bool],
) -> (Option<ServerCapacity>, f64) {
    let mut best: Option<(f64, usize)> = None;
    for i in 0..layout.servers.len() {
        if !alive[i] {
            continue;
        }
        let h = headroom_of(stores[i], need[i]);
        if best.is_none_or(|(bh, _)| h < bh) {
            best = Some((h, i));
        }
    }
    match best {
        None => (None, 0.0),
        Some((h, i)) => (
            Some(ServerCapacity {
                name: site.servers[layout.servers[i]].name.clone(),
                usable_bytes: stores[i] as u64,
                needed_bytes: need[i].ceil() as u64,
            }),
            h,
        ),
    }
}

/// Per-server needs after `failed` servers are peer-removed: each replica they held is rebuilt on the
/// least-full eligible survivor (distinct rack under unique_tag; inside the pinned set otherwise), or
/// stays missing when no survivor is eligible (NATS then reports the stream under-replicated).
pub fn needs_after(site: &Site, layout: &Layout, stores: &[f64], failed: &[ServerIdx]) -> Vec<f64> {
    let packed = Packed::new(site, &layout.servers, &layout.assets);
    needs_after_with(site, layout, stores, failed, &needs(layout), &packed)
}

/// `needs_after` from the no-failure needs, with the assets packed per server (`Packed::new`, once for
/// every scenario of a layout). The rule is `layout::rebuild_lost`'s (the one pattern 4's LUN sizing
/// uses).
fn needs_after_with(
    site: &Site,
    layout: &Layout,
    stores: &[f64],
    failed: &[ServerIdx],
    base: &[f64],
    packed: &Packed,
) -> Vec<f64> {
    let mut need = base.to_vec();
    for (i, s) in layout.servers.iter().enumerate() {
        if failed.contains(s) {
            need[i] = 0.0;
        }
    }
    packed.rebuild(site, &layout.servers, &layout.assets, stores, failed, &mut need);
    need
}

/// Bytes the workload needs: the placed replicas' sum, or, when some replicas found no server (a layout
/// rejected for too few eligible servers), every replica the workload asks for — never the 0 B such a
/// layout printed before.
fn needed_bytes(layout: &Layout, need: &[f64]) -> u64 {
    let placed = need.iter().sum::<f64>();
    if layout.assets.iter().all(|a| a.expected.len() >= a.replicas as usize) {
        return placed.ceil() as u64;
    }
    let asked: f64 = layout
        .assets
        .iter()
        .map(|a| a.bytes_per_replica * a.replicas as f64)
        .sum();
    placed.max(asked).ceil() as u64
}

/// Capacity figures; `tolerates` decides which failures the after-failure check covers (every rack when
/// one rack is tolerated, every server when one server is). The needs after a failure are read from
/// `after` where it has them (pattern 4's LUN sizing rebuilt them on this placement and these stores:
/// `layout::Placed`) and rebuilt for the others.
pub fn evaluate(
    site: &Site,
    layout: &Layout,
    tolerates: &Tolerance,
    after: &mut crate::layout::FailureNeeds,
) -> Capacity {
    let stores = stores(site, layout);
    let need = needs(layout);
    let alive = vec![true; layout.servers.len()];
    let (fullest_server, headroom) = fullest(site, layout, &stores, &need, &alive);
    let left: u64 = layout
        .luns
        .iter()
        .map(|l| layout.groups[l.group].usable_bytes.saturating_sub(l.size_bytes))
        .sum::<u64>()
        * u64::from(layout.pattern == crate::site::Pattern::P4);
    let mut cap = Capacity {
        usable_bytes: stores.iter().sum::<f64>() as u64,
        needed_bytes: needed_bytes(layout, &need),
        headroom,
        fullest_server,
        after_failure: None,
        left_for_others_bytes: left,
        shortfall: None,
    };
    if layout.assets.iter().any(|a| a.placeable(site) < a.replicas as u32) {
        // Some asset cannot be created (too few eligible servers): the placement is empty where it should
        // be, so per-server figures ("fullest server 0 B of 3.81 TiB", "100 % free") would be read off
        // nothing. The whole layout's figures instead, and no after-failure check.
        cap.fullest_server = None;
        cap.headroom = headroom_of(cap.usable_bytes as f64, cap.needed_bytes as f64);
        cap.shortfall = shortfall(site, layout, &stores, &need, cap.needed_bytes as f64, None);
        return cap;
    }
    for (name, failed) in tolerated_failures(site, layout, tolerates) {
        let need = after.needs(site, &layout.servers, &layout.assets, &stores, &need, &failed);
        let alive: Vec<bool> = layout.servers.iter().map(|s| !failed.contains(s)).collect();
        let (f, h) = fullest(site, layout, &stores, need, &alive);
        if cap.after_failure.as_ref().is_none_or(|a| h < a.headroom) {
            cap.after_failure = Some(AfterFailure {
                failed: vec![name],
                fullest_server: f,
                headroom: h,
            });
        }
    }
    if cap.headroom < 0.0 {
        let fullest = (0..layout.servers.len()).min_by(|&a, &b| {
            headroom_of(stores[a], need[a])
                .total_cmp(&headroom_of(stores[b], need[b]))
                .then(a.cmp(&b))
        });
        cap.shortfall = shortfall(site, layout, &stores, &need, cap.needed_bytes as f64, fullest);
    }
    cap
}

/// By how much the stores fall short, when they do: of the whole layout when the workload needs more than
/// all stores hold, else of server `fullest` (index in `layout.servers`) when it needs more than its store.
/// With the asset that needs the most there.
fn shortfall(
    site: &Site,
    layout: &Layout,
    stores: &[f64],
    need: &[f64],
    needed: f64,
    fullest: Option<usize>,
) -> Option<Shortfall> {
    let usable: f64 = stores.iter().sum();
    let assets = layout
        .assets
        .iter()
        .filter(|a| a.kind != crate::layout::AssetKind::Consumer);
    fn largest<'a>(it: impl Iterator<Item = (&'a str, f64)>) -> (&'a str, f64) {
        it.fold(("", 0.0), |best, (n, b)| if b > best.1 { (n, b) } else { best })
    }
    if needed > usable {
        let (name, bytes) = largest(assets.map(|a| (&*a.name, a.bytes_per_replica * a.replicas as f64)));
        return Some(Shortfall {
            short_bytes: (needed - usable).ceil() as u64,
            times_too_small: if usable > 0.0 { needed / usable } else { f64::INFINITY },
            server: None,
            largest_asset: name.to_string(),
            largest_share: if needed > 0.0 { bytes / needed } else { 0.0 },
        });
    }
    let i = fullest?;
    let (store, n) = (stores[i], need[i]);
    if n <= store {
        return None;
    }
    let s = layout.servers[i];
    let (name, bytes) = largest(
        assets
            .filter(|a| a.expected.contains(&s))
            .map(|a| (&*a.name, a.bytes_per_replica)),
    );
    Some(Shortfall {
        short_bytes: (n - store).ceil() as u64,
        times_too_small: if store > 0.0 { n / store } else { f64::INFINITY },
        server: Some(site.servers[s].name.clone()),
        largest_asset: name.to_string(),
        largest_share: bytes / n,
    })
}

/// The failures capacity is checked after (and `check` prices fail-over room for): each rack the layout
/// uses when one rack is tolerated, each JetStream server when one server is; named `rack:R` / `server:S`
/// with the servers they take down.
pub fn tolerated_failures(site: &Site, layout: &Layout, tolerates: &Tolerance) -> Vec<(String, Vec<ServerIdx>)> {
    let mut scenarios: Vec<(String, Vec<ServerIdx>)> = Vec::new();
    if tolerates.racks >= 1 {
        for r in layout.racks_used(site) {
            let on: Vec<ServerIdx> = layout
                .servers
                .iter()
                .copied()
                .filter(|&s| site.servers[s].rack == r)
                .collect();
            scenarios.push((format!("rack:{}", site.racks[r].name), on));
        }
    }
    if tolerates.servers >= 1 {
        for &s in &layout.servers {
            scenarios.push((format!("server:{}", site.servers[s].name), vec![s]));
        }
    }
    scenarios
}

/// Per server of `layout` (in its order): the bytes it must still take on when the worst tolerated failure's
/// replicas are placed again after peer-remove (`needs_after` over `tolerated_failures`), and that
/// failure's name (`rack:A`); `(0, None)` when no tolerated failure re-places anything on it. `check`
/// warns above the store this leaves free and `emit --monitoring` alerts on it.
pub fn failover_room(site: &Site, layout: &Layout, tolerates: &Tolerance) -> Vec<(f64, Option<String>)> {
    let need = needs(layout);
    let stores = stores(site, layout);
    let mut failover: Vec<(f64, Option<String>)> = vec![(0.0, None); layout.servers.len()];
    for (name, failed) in &tolerated_failures(site, layout, tolerates) {
        let after = needs_after(site, layout, &stores, failed);
        for (i, &s) in layout.servers.iter().enumerate() {
            if failed.contains(&s) {
                continue;
            }
            let extra = after.get(i).copied().unwrap_or(0.0) - need.get(i).copied().unwrap_or(0.0);
            if extra > failover[i].0 + 0.5 {
                failover[i] = (extra, Some(name.clone()));
            }
        }
    }
    failover
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::rebuild_lost;

    #[test]
    fn a_layout_that_cannot_place_its_replicas_still_needs_their_bytes() {
        // Two servers for an R3 stream: the layout is rejected, and its capacity said "0 B needed".
        let t = "site: few\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a1, a2]\n    arrays:\n      - { name: A1, model: EF600, disk_model: nvme-3.84t, disks: 12 }\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 100, msg_size: 1KiB, retention: 1d }\n";
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(t, "few.yaml", &cat).unwrap();
        let plan = crate::plan::build(&site, &cat);
        let short = plan
            .layouts
            .iter()
            .find(|p| p.layout.assets.iter().any(|a| a.expected.len() < a.replicas as usize))
            .expect("a layout with unplaced replicas");
        let a = &short.layout.assets[0];
        let want = (a.bytes_per_replica * 3.0).ceil() as u64;
        assert!(want > 0);
        assert!(
            short.capacity.needed_bytes >= want,
            "{} < {want}",
            short.capacity.needed_bytes
        );
    }

    #[test]
    fn a_layout_evaluated_with_a_placement_made_before_is_the_layout_evaluated_afresh() {
        // Design evaluates each pattern-4 layout with the placement and the needs after failures its LUN
        // sizing made on the LUNs it settled on (`layout::Placed`), and layouts of one placement key
        // (patterns 1 and 2 of one selection, pattern 4's first sizing round) with the placement and the
        // needs the first of them made (`plan::placement_memo`), instead of placing and rebuilding again: every
        // layout of the plan is what placing and evaluating it afresh gives, key for key.
        let t = crate::sitegen::test_site(
            "site: reuse\nnats: { replicas: [3, 5] }\npolicy: { patterns: [\"1\", \"2\", \"4\"] }\n",
            5,
            3,
            |_| crate::sitegen::EF600_12.to_string(),
            40,
            |s| {
                format!(
                    "msgs_per_s: {}, msg_size: 1KiB, retention: 1d, consumers: {}, replicas: {}",
                    1 + (s * 37) % 50,
                    s % 3,
                    [1, 3, 5, 3][s % 4]
                )
            },
        );
        let cat = crate::catalog::Catalog::builtin();
        let cal = crate::perf::Calibration::builtin();
        let site = crate::site::parse_str(&t, "reuse.yaml", &cat).unwrap();
        // Some pattern-4 layouts come with their placement, and some layouts share one key with another.
        let bare = crate::layout::BareAssets::new(&site, site.nats.replicas.iter().copied());
        let candidates = crate::layout::Enumerate::new(&site, &cat).assets(&bare).candidates();
        let keys: Vec<_> = candidates
            .iter()
            .map(|c| super::super::placement_memo::PlacementKey::of(&site, c.layout()))
            .collect();
        let shared = keys
            .iter()
            .filter(|k| keys.iter().filter(|o| o == k).count() > 1)
            .count();
        assert!(shared >= 4, "{shared} layouts share their first placement");
        let p4_placed = candidates
            .into_iter()
            .filter(|c| c.layout().pattern == crate::site::Pattern::P4)
            .map(|c| {
                let b = bare.get(c.layout().replicas).unwrap();
                let (assets, _) = crate::layout::placement(&site, c.layout(), b);
                let whole = crate::layout::Whole {
                    assets: &assets,
                    needs: &mut Default::default(),
                };
                let (l, placed) = c.size(&site, b, Some(whole));
                placed.is_some() && l.pattern == crate::site::Pattern::P4
            })
            .filter(|&p| p)
            .count();
        assert!(p4_placed >= 2, "{p4_placed} pattern-4 layouts with their placement");
        let plan = crate::plan::build(&site, &cat);
        let fresh = crate::layout::Enumerate::new(&site, &cat).placed();
        for p in &plan.layouts {
            let f = fresh.iter().find(|l| l.id == p.id).expect("the same layouts");
            let mut e = crate::plan::plan_layout(&site, &cat, &cal, f.clone());
            e.rank = p.rank;
            // Like the rank, the wider twin is found among the plan's layouts, not in one layout.
            e.wider_layout = p.wider_layout.clone();
            assert_eq!(
                serde_json::to_string(p).unwrap(),
                serde_json::to_string(&e).unwrap(),
                "{}",
                p.id
            );
            assert_eq!(
                serde_json::to_string(&p.layout.assets).unwrap(),
                serde_json::to_string(&f.assets).unwrap()
            );
        }
    }

    #[test]
    fn the_ordered_rebuild_picks_what_the_scan_picks() {
        // Every layout of a site of two stream shapes (unique_tag and others), every server and every
        // pair of servers failed: the same needs, bit for bit, by either path.
        let t = crate::sitegen::test_site(
            "site: rebuild\nnats: { replicas: [3, 5] }\n",
            5,
            3,
            |_| crate::sitegen::EF600_12.to_string(),
            40,
            |s| {
                format!(
                    "msgs_per_s: {}, msg_size: 1KiB, retention: 1d, consumers: {}",
                    1 + (s * 37) % 50,
                    s % 2
                )
            },
        );
        let cat = crate::catalog::Catalog::builtin();
        let site = crate::site::parse_str(&t, "rebuild.yaml", &cat).unwrap();
        let plan = crate::plan::build(&site, &cat);
        let (mut checked, mut moved) = (0, 0);
        for l in plan.layouts.iter().map(|p| &p.layout) {
            let stores = stores(&site, l);
            let base = needs(l);
            let every: Vec<usize> = (0..l.assets.len()).collect();
            let packed = Packed::new(&site, &l.servers, &l.assets);
            for (x, &a) in l.servers.iter().enumerate() {
                for &b in &l.servers[x..] {
                    let failed = if a == b { vec![a] } else { vec![a, b] };
                    let bits = |n: Vec<f64>| n.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                    let fast = bits(needs_after_with(&site, l, &stores, &failed, &base, &packed));
                    // The plain rule: every asset, a scan of its candidates per lost replica.
                    let mut slow = base.clone();
                    for (i, s) in l.servers.iter().enumerate() {
                        if failed.contains(s) {
                            slow[i] = 0.0;
                        }
                    }
                    rebuild_lost(&site, &l.servers, &l.assets, &stores, &failed, &every, &mut slow, false);
                    assert_eq!(fast, bits(slow), "{} failed {failed:?}", l.id);
                    checked += 1;
                    moved += (fast != base.iter().map(|v| v.to_bits()).collect::<Vec<_>>()) as usize;
                }
            }
        }
        assert!(
            checked > 100 && moved > 100,
            "{checked} scenarios, {moved} with replicas rebuilt"
        );
    }
}
