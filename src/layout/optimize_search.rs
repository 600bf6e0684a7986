//! The exact combinatorial search that replaces the MILP solve of one (disks per server d, rack-failure
//! target t) model (see the top of optimize.rs). The model's only coupling between racks is through a
//! few sums, so it is solved exactly by a dynamic programme over the racks (in name order):
//!
//! - the meta quorum surviving any t racks (Σ_{r∈S} n_r ≤ N − ⌊N/2⌋ − 1 for every set S of t racks) is
//!   "the t largest n_r sum to at most ⌈N/2⌉ − 1", i.e. N ≥ 2·(sum of the t largest) + 1;
//! - capacity after losing any one rack (t ≥ 1) is N − (largest n_r) ≥ the servers the stores need;
//! - the replica counts' rules are "at least R racks used" (t ≥ 2, and `unique_tag`) or, for t = 1,
//!   Σ_r min(n_r, f) ≥ R with f = R − quorum(R) (f = 1 is again "R racks used"; f = 2 for R5).
//!
//! So for every profile p₁ ≥ … ≥ p_t of the t largest counts (an upper bound on them: every rack ≤ p₁,
//! at most j racks above p_{j+1}), every rule is a lower bound on the servers N, the racks used and
//! Σ min(n_r, 2); the programme's states are those sums, capped at what is needed. Each rack costs the
//! MILP's own objective for its count: d disks per server, then for each array used its hot spares, an
//! array's weight and its name-order tie, then a tie for racks earlier by name — in exact integers
//! (disks, arrays, tie), so the minimum is the MILP's optimum without its mip gap.

use super::{capacity, quorum, Inputs};
use crate::site::ArrayIdx;

/// (disks with spares, arrays, tie): the MILP's objective, lexicographically and exactly.
type Cost = (u32, u32, u128);

/// One way to seat a rack's count: its cost and the servers per array (positions in the rack's list).
#[derive(Clone)]
struct RackUse {
    cost: Cost,
    fill: Vec<(usize, u32)>,
}

/// The search's answer: servers per rack and the arrays used, with the cost.
pub(super) struct Found {
    pub per_rack: Vec<u32>,
    pub per_array: Vec<(ArrayIdx, u32)>,
    pub disks: u32,
    pub arrays: u32,
}

/// Greatest common divisor (for the tie weights' common denominator).
fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Per rack and count, the cheapest array use under the MILP's objective (None: cannot be seated).
/// `rank` is the rack's position in name order; ties are scaled to integers: a server in rack of rank
/// q weighs 10·q·L and an array at position j of a rack with m − 1 arrays j·K·L/m (K = racks × servers,
/// L the common multiple of every m), the MILP's 0.1·w·q/K and 0.01·w·j/m times 100·K·L/w.
fn rack_uses(inp: &Inputs, d: u32, ranks: &[usize], caps: &[u32]) -> Vec<Vec<Option<RackUse>>> {
    let k = inp.racks.len();
    let servers_total = u128::from(inp.servers.iter().sum::<u32>().max(1));
    let kk = k.max(1) as u128 * servers_total;
    let l = inp
        .arrays
        .iter()
        .map(|a| a.len() as u128 + 1)
        .fold(1u128, |acc, m| acc / gcd(acc, m) * m);
    (0..k)
        .map(|i| {
            let arrs = &inp.arrays[i];
            let m = arrs.len().min(16);
            let per_array_tie = kk * l / (arrs.len() as u128 + 1);
            let mut best: Vec<Option<RackUse>> = vec![None; caps[i] as usize + 1];
            best[0] = Some(RackUse {
                cost: (0, 0, 0),
                fill: Vec::new(),
            });
            for mask in 1u32..(1 << m) {
                let chosen: Vec<usize> = (0..m).filter(|j| mask & (1 << j) != 0).collect();
                if chosen.iter().any(|&j| arrs[j].1 / d == 0) {
                    continue;
                }
                let hold: u32 = chosen.iter().map(|&j| arrs[j].1 / d).sum();
                let spares: u32 = chosen.iter().map(|&j| arrs[j].2).sum();
                let tie: u128 = chosen.iter().map(|&j| j as u128 * per_array_tie).sum();
                for v in 1..=hold.min(caps[i]) {
                    let rack_tie = 10 * ranks[i] as u128 * l * u128::from(v);
                    let cost = (v * d + spares, chosen.len() as u32, tie + rack_tie);
                    if best[v as usize].as_ref().is_some_and(|b| b.cost <= cost) {
                        continue;
                    }
                    // Fill the chosen arrays in name order, each as full as it goes (alike arrays then
                    // hold non-increasing counts, as the MILP's symmetry rule requires).
                    let mut left = v;
                    let mut fill = Vec::with_capacity(chosen.len());
                    for &j in &chosen {
                        let put = (arrs[j].1 / d).min(left);
                        fill.push((j, put));
                        left -= put;
                    }
                    best[v as usize] = Some(RackUse { cost, fill });
                }
            }
            // A count whose cheapest use leaves an array empty is no array use the MILP could pick at
            // that cost (an empty array costs its weight for nothing): drop the empty entries.
            for u in best.iter_mut().flatten() {
                u.fill.retain(|&(_, n)| n > 0);
            }
            best
        })
        .collect()
}

/// The lower bounds the rules put on (servers, racks used, Σ min(n_r, 2)) for target t, or None when
/// some replica count cannot survive t racks at all. `need_servers` is the servers the stores need.
fn floors(inp: &Inputs, t: u32, need_servers: u32) -> Option<(u32, u32, u32)> {
    let k = inp.racks.len() as u32;
    let n_lo = inp.r_max.max(need_servers);
    let mut u_lo = if inp.r_max <= k && inp.r_max > 1 { inp.r_max } else { 0 };
    let mut s_lo = 0;
    if t >= 1 {
        for &r in &inp.counts {
            let f = r - quorum(r);
            if t > f {
                return None;
            }
            if t >= 2 {
                if r > k {
                    return None;
                }
                u_lo = u_lo.max(r);
            } else if f == 1 {
                u_lo = u_lo.max(r);
            } else {
                // f = 2 (R5, the most replicas nats-server allows); f ≥ 3 cannot occur.
                debug_assert_eq!(f, 2, "R{r}");
                s_lo = s_lo.max(r);
            }
        }
    }
    Some((n_lo, u_lo, s_lo))
}

/// The exact optimum of the (d, t) model, or None when it has no solution (as the MILP's "infeasible").
pub(super) fn search(inp: &Inputs, d: u32, t: u32, store: f64) -> Option<Found> {
    let k = inp.racks.len();
    let need_servers = if store.is_finite() && store > 0.0 {
        let x = (inp.need_bytes / store).ceil();
        if x > f64::from(u32::MAX) {
            return None;
        }
        x.max(0.0) as u32
    } else if inp.need_bytes > 0.0 {
        return None;
    } else {
        0
    };
    let (n_floor, u_lo, s_lo) = floors(inp, t, need_servers)?;
    let mut by_name: Vec<usize> = (0..k).collect();
    by_name.sort_by_key(|&i| inp.names[i].to_ascii_lowercase());
    let mut ranks = vec![0usize; k];
    for (q, &i) in by_name.iter().enumerate() {
        ranks[i] = q;
    }
    let caps: Vec<u32> = (0..k).map(|i| capacity(inp, i, d).0).collect();
    let uses = rack_uses(inp, d, &ranks, &caps);
    let total: u32 = caps.iter().sum();
    let max_cap = caps.iter().copied().max().unwrap_or(0);
    let mut best: Option<(Cost, Vec<u32>)> = None;
    for profile in profiles(t, max_cap) {
        let top: u32 = profile.iter().sum();
        let mut n_lo = n_floor;
        if t >= 1 {
            n_lo = n_lo.max(2 * top + 1).max(need_servers + profile[0]);
        }
        if n_lo > total || n_lo > most_servers(&caps, &profile) {
            continue;
        }
        // Every server costs d disks: a profile that needs more servers than the best answer's disks
        // could pay for cannot beat it (nor tie it), so skipping it changes nothing.
        if best
            .as_ref()
            .is_some_and(|(b, _)| u64::from(n_lo) * u64::from(d) > u64::from(b.0))
        {
            continue;
        }
        let dims = Dims {
            n: n_lo,
            u: u_lo,
            s: s_lo,
        };
        if let Some((cost, per_rack)) = programme(&uses, &caps, &by_name, &profile, dims) {
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                best = Some((cost, per_rack));
            }
        }
    }
    let (cost, per_rack) = best?;
    let mut per_array = Vec::new();
    for (i, &cnt) in per_rack.iter().enumerate() {
        let u = uses[i][cnt as usize]
            .as_ref()
            .expect("the programme only picks seatable counts");
        per_array.extend(u.fill.iter().map(|&(j, n)| (inp.arrays[i][j].0, n)));
    }
    Some(Found {
        per_rack,
        per_array,
        disks: cost.0,
        arrays: cost.1,
    })
}

/// The most servers a profile allows: every rack at most p_t, and t − 1 of them up to p_j more.
fn most_servers(caps: &[u32], profile: &[u32]) -> u32 {
    let Some(&low) = profile.last() else {
        return caps.iter().sum();
    };
    let above: u32 = profile[..profile.len() - 1].iter().map(|&p| p - low).sum();
    caps.iter().map(|&c| c.min(low)).sum::<u32>() + above
}

/// Every non-increasing profile (p₁, …, p_t) of values ≤ `max` (one empty profile for t = 0).
fn profiles(t: u32, max: u32) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new()];
    for _ in 0..t {
        out = out
            .into_iter()
            .flat_map(|p: Vec<u32>| {
                let hi = p.last().copied().unwrap_or(max);
                (0..=hi).map(move |v| {
                    let mut q = p.clone();
                    q.push(v);
                    q
                })
            })
            .collect();
    }
    out
}

/// What the programme must reach: servers, racks used and Σ min(n_r, 2), each at least this.
#[derive(Clone, Copy)]
struct Dims {
    n: u32,
    u: u32,
    s: u32,
}

/// The cheapest counts per rack whose sorted values x₁ ≥ x₂ ≥ … keep x_j ≤ p_j for j ≤ t (so the t
/// largest sum to at most Σp and the largest is at most p₁), reaching `dims`. States: (servers, racks
/// used, Σ min(n_r, 2), and for j = 2..t how many racks are above p_j, at most j − 1), the sums capped at
/// what is needed. Racks in name order, counts ascending; the first of equal costs is kept.
fn programme(
    uses: &[Vec<Option<RackUse>>],
    caps: &[u32],
    by_name: &[usize],
    profile: &[u32],
    dims: Dims,
) -> Option<(Cost, Vec<u32>)> {
    let t = profile.len();
    // Mixed radix over j = 2..t: digit j − 2 counts racks above p_j, in 0..j.
    let radix: Vec<usize> = (2..=t).collect();
    let sa: usize = radix.iter().product();
    let (sn, su, ss) = (dims.n as usize + 1, dims.u as usize + 1, dims.s as usize + 1);
    let states = sn * su * ss * sa;
    let idx = |n: usize, u: usize, s: usize, a: usize| ((n * su + u) * ss + s) * sa + a;
    // The "above" state after a rack of count v, or None when v breaks the profile.
    let step = |a: usize, v: u32| -> Option<usize> {
        if t >= 1 && v > profile[0] {
            return None;
        }
        let (mut rest, mut out, mut scale) = (a, 0, 1);
        for (digit, &r) in radix.iter().enumerate() {
            let mut c = rest % r;
            rest /= r;
            if v > profile[digit + 1] {
                c += 1;
                if c >= r {
                    return None;
                }
            }
            out += c * scale;
            scale *= r;
        }
        Some(out)
    };
    let mut cur: Vec<Option<Cost>> = vec![None; states];
    cur[0] = Some((0, 0, 0));
    // Back-pointers per rack layer: (previous state, count).
    let mut back: Vec<Vec<(u32, u32)>> = Vec::with_capacity(by_name.len());
    for &i in by_name {
        let mut next: Vec<Option<Cost>> = vec![None; states];
        let mut from: Vec<(u32, u32)> = vec![(u32::MAX, 0); states];
        for (here, base) in cur.iter().enumerate() {
            let Some(base) = *base else { continue };
            let a = here % sa;
            let s = (here / sa) % ss;
            let u = (here / (sa * ss)) % su;
            let n = here / (sa * ss * su);
            for v in 0..=caps[i] {
                let Some(ru) = &uses[i][v as usize] else { continue };
                let Some(a2) = step(a, v) else { continue };
                let n2 = (n + v as usize).min(sn - 1);
                let u2 = (u + usize::from(v > 0)).min(su - 1);
                let s2 = (s + v.min(2) as usize).min(ss - 1);
                let c = (base.0 + ru.cost.0, base.1 + ru.cost.1, base.2 + ru.cost.2);
                let to = idx(n2, u2, s2, a2);
                if next[to].is_none_or(|x| c < x) {
                    next[to] = Some(c);
                    from[to] = (here as u32, v);
                }
            }
        }
        cur = next;
        back.push(from);
    }
    // Any "above" state is fine at the end: take the cheapest (the first of equals).
    let (mut state, cost) = (0..sa)
        .filter_map(|a| {
            let at = idx(sn - 1, su - 1, ss - 1, a);
            cur[at].map(|c| (at, c))
        })
        .min_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)))?;
    let mut per_rack = vec![0u32; by_name.len()];
    for (layer, &i) in by_name.iter().enumerate().rev() {
        let (prev, v) = back[layer][state];
        per_rack[i] = v;
        state = prev as usize;
    }
    Some((cost, per_rack))
}

#[cfg(test)]
mod tests {
    use super::super::bound::tests::brute_min;
    use super::super::*;

    fn small_sites(n: u64) -> impl Iterator<Item = (Site, Catalog)> {
        (0..n).filter_map(|seed| {
            let cat = Catalog::builtin();
            let g = crate::sitegen::small(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed);
            let site = crate::site::parse_str(&g.to_yaml(false), "gen.yaml", &cat).ok()?;
            Some((site, cat))
        })
    }

    #[test]
    fn every_model_gets_the_solvers_choice_and_the_brute_force_cost() {
        // On random small sites, for every (pattern, R, d, t) model: the search's answer passes the
        // checker and costs what brute force's cheapest accepted choice costs, and it is the Choice the
        // MILP (microlp) gives for the same model, servers per rack and per array alike.
        let (mut compared, mut same_as_solver) = (0, 0);
        for (site, cat) in small_sites(100) {
            for pattern in [Pattern::P1, Pattern::P2] {
                for &r in &site.nats.replicas {
                    let inp = inputs(&site, pattern, r);
                    let max_data = inp.arrays.iter().flatten().map(|&(_, data, _)| data).max().unwrap_or(0);
                    for d in disk_options(pattern, max_data) {
                        let store = store_for(&site, &cat, &inp, pattern, d);
                        for t in 0..=2 {
                            let found = exact(&inp, d, t, store).filter(|c| check(&site, &cat, pattern, r, c).is_ok());
                            let brute = brute_min(&site, &cat, pattern, r, d, t);
                            assert_eq!(found.as_ref().map(|c| (c.disks, c.arrays)), brute, "d {d} t {t}");
                            let solved = solve(&inp, d, t, store).filter(|c| check(&site, &cat, pattern, r, c).is_ok());
                            if let (Some(f), Some(s)) = (&found, &solved) {
                                assert_eq!((f.disks, f.arrays), (s.disks, s.arrays), "d {d} t {t}");
                                same_as_solver += usize::from(f == s);
                            }
                            compared += usize::from(brute.is_some());
                        }
                    }
                }
            }
        }
        assert!(compared > 100, "too few valid models compared: {compared}");
        assert_eq!(
            same_as_solver, compared,
            "models where the search's Choice is the solver's"
        );
    }

    #[test]
    fn a_profile_allows_every_rack_up_to_its_lowest_level_and_t_minus_one_above() {
        // Racks of 5, 5 and 3 under (4, 2): each at most 2, and one of them up to 4.
        assert_eq!(super::most_servers(&[5, 5, 3], &[4, 2]), 8);
        assert_eq!(super::most_servers(&[1, 5, 3], &[3]), 7);
        assert_eq!(super::most_servers(&[1, 5, 3], &[]), 9);
    }

    #[test]
    fn profiles_list_every_non_increasing_tuple() {
        assert_eq!(super::profiles(0, 3), vec![Vec::<u32>::new()]);
        assert_eq!(super::profiles(2, 1), vec![vec![0, 0], vec![1, 0], vec![1, 1]]);
        assert_eq!(super::profiles(3, 4).len(), 35);
    }
}
