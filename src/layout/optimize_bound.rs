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
