//! A lower bound on the optimiser's cost for one (disks per server d, rack-failure target t), found by a
//! small dynamic programme over a relaxation of `check`'s rules. It never decides a layout: it only tells
//! `optimise` which MILP solves cannot beat (or tie) the best answer found so far, and which targets t
//! have no valid choice at all, so those solves are skipped and the answer is the one the full set of
//! solves would pick.
//!
//! The relaxation keeps, for every largest rack count M: n_r ≤ min(capacity_r(d), M), and
//! - N ≥ R_max, and the stores hold every replica (N ≥ n_cap, the fewest servers whose stores hold it);
//! - for t ≥ 1: the survivors of the fullest rack hold every replica (N ≥ n_cap + M); the meta quorum
//!   survives the t fullest racks, whose counts sum to at least M + t − 1 (N ≥ 2(M + t − 1) + 1);
//! - racks used ≥ R_max (unique_tag, when the site has that many racks); for t ≥ 1 at least 2t + 1 (with
//!   fewer, the t fullest racks hold half the servers or more); for each replica count R with f = R −
//!   quorum(R) losable replicas: t = 1 needs ⌈R/f⌉ racks (each holds at most f replicas), t ≥ 2 with
//!   t + 1 > f needs R racks (otherwise some rack holds two of them and t racks hold t + 1);
//!
//! and each rack costs the cheapest array use for its count (`best_arrays`), which is at most what any
//! solver's answer for that count costs. Every choice `check` accepts satisfies the relaxation, so its
//! minimum is a lower bound on every accepted choice's (disks, arrays); None means no choice is valid.

use super::{best_arrays, capacity, quorum, Inputs};

/// Lexicographic cost: disks (with spares), then arrays.
pub(super) type Cost = (u32, u32);

/// The smallest server count whose stores hold every replica, by the same comparison `check` makes.
fn servers_for_capacity(inp: &Inputs, store: f64, most: u32) -> Option<u32> {
    (0..=most).find(|&x| !(inp.need_bytes > 0.0 && store * f64::from(x) < inp.need_bytes))
}

/// A lower bound on the (disks, arrays) of every choice `check` accepts for (d, t), or None when there is
/// none. Also None when the bound cannot be trusted (a rack with more arrays than `best_arrays` tries),
/// in which case the caller solves every model as before — see `trusted`.
pub(super) fn lower_bound(inp: &Inputs, d: u32, t: u32, store: f64) -> Option<Cost> {
    let k = inp.racks.len();
    let caps: Vec<u32> = (0..k).map(|i| capacity(inp, i, d).0).collect();
    let total: u32 = caps.iter().sum();
    // Per rack, the cheapest array use for each count (None: that count cannot be seated).
    let costs: Vec<Vec<Option<Cost>>> = (0..k)
        .map(|i| {
            (0..=caps[i])
                .map(|v| best_arrays(inp, i, v, d).map(|(disks, arrays, _)| (disks, arrays)))
                .collect()
        })
        .collect();
    let n_cap = servers_for_capacity(inp, store, total)?;
    let n_lo = inp.r_max.max(n_cap);
    let mut u_lo = if inp.r_max as usize <= k && inp.r_max > 1 {
        inp.r_max
    } else {
        0
    };
    if t >= 1 {
        u_lo = u_lo.max(2 * t + 1);
        for &r in &inp.counts {
            let f = r - quorum(r);
            if t > f {
                return None;
            }
            if t == 1 {
                u_lo = u_lo.max(r.div_ceil(f));
            } else if t + 1 > f {
                u_lo = u_lo.max(r);
            }
        }
    }
    if u_lo as usize > k {
        return None;
    }
    let max_cap = caps.iter().copied().max().unwrap_or(0);
    let levels: Vec<u32> = if t == 0 { vec![max_cap] } else { (1..=max_cap).collect() };
    levels
        .into_iter()
        .filter_map(|m| {
            let need = if t == 0 {
                n_lo
            } else {
                n_lo.max(n_cap + m).max(2 * (m + t - 1) + 1)
            };
            if need > total {
                return None;
            }
            cheapest(&costs, &caps, m, need, u_lo)
        })
        .min()
}

/// The cheapest sum of per-rack costs with every count ≤ min(cap, m), at least `need` servers and at
/// least `u_need` racks used. States: (servers, racks used), each capped at what is needed.
fn cheapest(costs: &[Vec<Option<Cost>>], caps: &[u32], m: u32, need: u32, u_need: u32) -> Option<Cost> {
    let (sn, su) = (need as usize + 1, u_need as usize + 1);
    let mut cur: Vec<Option<Cost>> = vec![None; sn * su];
    cur[0] = Some((0, 0));
    for (rack, &cap) in costs.iter().zip(caps) {
        let mut next: Vec<Option<Cost>> = vec![None; sn * su];
        for n in 0..sn {
            for u in 0..su {
                let Some(base) = cur[n * su + u] else { continue };
                for v in 0..=cap.min(m) {
                    let Some(c) = rack[v as usize] else { continue };
                    let n2 = (n + v as usize).min(sn - 1);
                    let u2 = (u + usize::from(v > 0)).min(su - 1);
                    let cost = (base.0 + c.0, base.1 + c.1);
                    let slot = &mut next[n2 * su + u2];
                    if slot.is_none_or(|s| cost < s) {
                        *slot = Some(cost);
                    }
                }
            }
        }
        cur = next;
    }
    cur[sn * su - 1]
}

/// Whether the bound may be used to skip solves: `best_arrays` tries every subset of a rack's arrays only
/// up to 16 arrays per rack.
pub(super) fn trusted(inp: &Inputs) -> bool {
    inp.arrays.iter().all(|a| a.len() <= 16)
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::*;
    use super::lower_bound;

    /// The optimiser as it was before `bound`: every (t, d) model solved, the best taken in d order.
    fn optimise_solving_every_model(site: &Site, catalog: &Catalog, pattern: Pattern, r: u8) -> Option<Choice> {
        let inp = inputs(site, pattern, r);
        let max_data = inp.arrays.iter().flatten().map(|&(_, data, _)| data).max().unwrap_or(0);
        let t_top = inp.t_cap.min(inp.racks.len().saturating_sub(1) as u32).min(3);
        for t in (inp.t_min..=t_top).rev() {
            let mut best: Option<Choice> = None;
            for d in disk_options(pattern, max_data) {
                let store = store_for(site, catalog, &inp, pattern, d);
                let Some(c) = solve(&inp, d, t, store).filter(|c| check(site, catalog, pattern, r, c).is_ok()) else {
                    continue;
                };
                if best.as_ref().is_none_or(|b| better(&c, b)) {
                    best = Some(c);
                }
            }
            if best.is_some() {
                return best;
            }
        }
        None
    }

    /// The cheapest choice `check` accepts for one (d, t), by enumerating every servers-per-rack vector
    /// (also the search's reference: optimize_search.rs).
    pub(in crate::layout) fn brute_min(
        site: &Site,
        cat: &Catalog,
        pattern: Pattern,
        r: u8,
        d: u32,
        t: u32,
    ) -> Option<(u32, u32)> {
        let inp = inputs(site, pattern, r);
        let caps: Vec<u32> = (0..inp.racks.len()).map(|i| capacity(&inp, i, d).0).collect();
        let mut v = vec![0u32; caps.len()];
        let mut best: Option<(u32, u32)> = None;
        loop {
            if let Some(c) = finish(&inp, v.clone(), d, t) {
                if check(site, cat, pattern, r, &c).is_ok() && best.is_none_or(|b| (c.disks, c.arrays) < b) {
                    best = Some((c.disks, c.arrays));
                }
            }
            let mut i = 0;
            while i < v.len() && v[i] == caps[i] {
                v[i] = 0;
                i += 1;
            }
            if i == v.len() {
                return best;
            }
            v[i] += 1;
        }
    }

    fn small_sites(n: u64) -> impl Iterator<Item = (Site, Catalog)> {
        (0..n).filter_map(|seed| {
            let cat = Catalog::builtin();
            let g = crate::sitegen::small(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let site = crate::site::parse_str(&g.to_yaml(false), "gen.yaml", &cat).ok()?;
            Some((site, cat))
        })
    }

    #[test]
    fn the_bound_is_below_every_accepted_choice_and_none_only_without_one() {
        // On random small sites, for every (pattern, R, d, t): the bound never exceeds the cheapest choice
        // `check` accepts (brute force), and says "none" only when there is none. Otherwise optimise
        // would skip a model that could have won.
        let mut compared = 0;
        for (site, cat) in small_sites(60) {
            for pattern in [Pattern::P1, Pattern::P2] {
                for &r in &site.nats.replicas {
                    let inp = inputs(&site, pattern, r);
                    let max_data = inp.arrays.iter().flatten().map(|&(_, data, _)| data).max().unwrap_or(0);
                    for d in disk_options(pattern, max_data) {
                        let store = store_for(&site, &cat, &inp, pattern, d);
                        for t in 0..=2 {
                            let lb = lower_bound(&inp, d, t, store);
                            let brute = brute_min(&site, &cat, pattern, r, d, t);
                            match (lb, brute) {
                                (Some(lb), Some(b)) => assert!(lb <= b, "bound {lb:?} above {b:?} (d {d}, t {t})"),
                                (None, Some(b)) => panic!("bound says none, brute force found {b:?} (d {d}, t {t})"),
                                _ => {}
                            }
                            compared += usize::from(brute.is_some());
                        }
                    }
                }
            }
        }
        assert!(compared > 100, "too few valid (site, d, t) cases compared: {compared}");
    }

    #[test]
    fn skipping_models_by_their_bound_keeps_every_choice() {
        // The same Choice (servers per rack and array, disks per server) as solving every model.
        for (site, cat) in small_sites(40) {
            for pattern in [Pattern::P1, Pattern::P2] {
                for &r in &site.nats.replicas {
                    assert_eq!(
                        optimise(&site, &cat, pattern, r),
                        optimise_solving_every_model(&site, &cat, pattern, r)
                    );
                }
            }
        }
    }

    /// 30 alike racks of 5 servers and two 12-disk EF600 arrays, as `scripts/gen-large-site --racks 30
    /// --servers 5` (issue 18's site), with `streams` streams of 50 msgs/s × 1 KiB kept a day.
    fn site_30_racks(streams: usize) -> (Site, Catalog) {
        let cat = Catalog::builtin();
        let mut yaml = String::from("site: t\nnats: { replicas: [3, 5] }\nracks:\n");
        for rk in 0..30 {
            let servers: Vec<String> = (0..5).map(|s| format!("n{}", rk * 5 + s)).collect();
            yaml.push_str(&format!(
                "  - name: R{rk}\n    servers: [{}]\n    arrays:\n",
                servers.join(", ")
            ));
            for a in 1..=2 {
                yaml.push_str(&format!(
                    "      - {{ name: A{rk}-{a}, model: EF600, disk_model: nvme-3.84t, disks: 12 }}\n"
                ));
            }
        }
        yaml.push_str("workload:\n  streams:\n");
        for s in 0..streams {
            yaml.push_str(&format!(
                "    - {{ name: s{s}, msgs_per_s: 50, msg_size: 1KiB, retention: 1d }}\n"
            ));
        }
        let site = crate::site::parse_str(&yaml, "t.yaml", &cat).expect("a valid site");
        (site, cat)
    }

    #[test]
    fn on_thirty_alike_racks_the_bound_is_tight_for_the_winning_model() {
        // What makes the 800-stream site fast: the winner's bound equals its cost, and most other
        // disk counts' bounds are above it, so their models are never solved.
        let (site, cat) = site_30_racks(200);
        for pattern in [Pattern::P1, Pattern::P2] {
            for r in [3, 5] {
                let c = optimise(&site, &cat, pattern, r).expect("a layout");
                let inp = inputs(&site, pattern, r);
                let d = c.disks_per_server;
                let store = store_for(&site, &cat, &inp, pattern, d);
                let lb = lower_bound(&inp, d, c.tolerated_racks, store);
                assert_eq!(lb, Some((c.disks, c.arrays)), "{pattern:?} R{r}: {c:?}");
            }
        }
    }
}
