//! Server placement as an optimisation: how many JetStream servers to run on which array of which rack,
//! solved with good_lp (pure-Rust `microlp` backend) — maximise the rack failures the cluster tolerates,
//! then minimise the disks (server groups plus the hot spares of every array used), then the arrays —
//! subject to the disks each array has, the servers each rack has, capacity (also after the worst tolerated
//! failure, once the lost replicas are rebuilt on the survivors) and room for the largest replica.
//!
//! "Tolerates t rack failures" means: for every set of t racks, (1) the meta group keeps its quorum,
//! (2) a stream of the largest replica count R spread as evenly as the servers allow keeps its quorum,
//! (3) the survivors' stores can hold every replica again (conservative: with fewer survivors than R,
//! fewer replicas are rebuilt). The spread in (2) is what
//! `unique_tag` (one replica per rack) or a pinned replica set (servers chosen across racks) produce.
//!
//! `evaluate` is an independent checker: it computes the same figures by direct enumeration, without the
//! solver's formulation, and re-verifies every solution; property tests compare the solver with it and
//! with `brute_force` on small problems.

use crate::catalog::Catalog;
use crate::layout::{group_usable_bytes, quorum, store_bytes, Raid};
use crate::site::Site;
use good_lp::{constraint, microlp, variable, Expression, ProblemVariables, Solution as _, SolverModel, Variable};

/// One array as the optimiser sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayInput {
    pub name: String,
    /// Server volume groups its data disks (disks less hot spares) can hold.
    pub max_groups: u32,
    /// Hot spares kept on it when it is used.
    pub spares: u32,
    /// One server's JetStream store on a group of this array (`max_file_store`).
    pub store_bytes: u64,
}

/// One rack: the servers that may run JetStream and the arrays that can give them volumes.
#[derive(Debug, Clone, PartialEq)]
pub struct RackInput {
    pub name: String,
    pub servers: u32,
    pub arrays: Vec<ArrayInput>,
}

/// A selection problem for one pattern (group size) and replica count.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub racks: Vec<RackInput>,
    /// Disks in each server's volume group.
    pub group_disks: u32,
    /// The largest replica count of any planned asset.
    pub replicas: u32,
    /// Bytes of all replicas of all assets.
    pub needed_bytes: u64,
    /// Bytes of the largest single replica (every server must be able to hold one).
    pub largest_replica_bytes: u64,
}

/// Servers per array, rack by rack, in problem order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub servers_per_array: Vec<Vec<u32>>,
}

/// What a choice achieves, computed by `evaluate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluation {
    pub servers: u32,
    pub tolerated_racks: u32,
    /// Group disks plus the hot spares of every array used.
    pub disks: u32,
    pub arrays: u32,
}

impl Evaluation {
    /// Lexicographic order of the objective: more tolerated rack failures, then fewer disks, then fewer
    /// arrays, then fewer servers.
    pub fn better_than(&self, o: &Evaluation) -> bool {
        (
            std::cmp::Reverse(self.tolerated_racks),
            self.disks,
            self.arrays,
            self.servers,
        ) < (std::cmp::Reverse(o.tolerated_racks), o.disks, o.arrays, o.servers)
    }
}

/// Every `k`-subset of `0..n`, as index lists.
fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if k <= n {
        go(0, n, k, &mut Vec::new(), &mut out);
    }
    out
}

/// The most even spread of `r` replicas over racks holding `caps` servers (water-filling): it minimises
/// the replicas any set of racks holds, so it is the best a `unique_tag` or pinned set can do.
fn spread(caps: &[u32], r: u32) -> Option<Vec<u32>> {
    let mut s = vec![0u32; caps.len()];
    let mut left = r;
    while left > 0 {
        // Give the next replica to the rack with the fewest so far that still has a free server.
        let i = (0..caps.len()).filter(|&i| s[i] < caps[i]).min_by_key(|&i| (s[i], i))?;
        s[i] += 1;
        left -= 1;
    }
    Some(s)
}

/// Independent checker: validate `c` against the problem's limits and compute what it achieves by
/// enumerating every set of failed racks. `Err` says which limit is broken.
pub fn evaluate(p: &Problem, c: &Choice) -> Result<Evaluation, String> {
    if c.servers_per_array.len() != p.racks.len() {
        return Err(format!(
            "{} racks in the choice, {} in the problem",
            c.servers_per_array.len(),
            p.racks.len()
        ));
    }
    let mut per_rack = Vec::new();
    let mut store_per_rack = Vec::new();
    let (mut disks, mut arrays, mut total_store) = (0u32, 0u32, 0u128);
    for (rack, ms) in p.racks.iter().zip(&c.servers_per_array) {
        if ms.len() != rack.arrays.len() {
            return Err(format!(
                "rack {}: {} arrays in the choice, {}",
                rack.name,
                ms.len(),
                rack.arrays.len()
            ));
        }
        let n: u32 = ms.iter().sum();
        if n > rack.servers {
            return Err(format!(
                "rack {}: {n} servers chosen, it has {}",
                rack.name, rack.servers
            ));
        }
        let mut store = 0u128;
        for (a, &m) in rack.arrays.iter().zip(ms) {
            if m > a.max_groups {
                return Err(format!(
                    "array {}: {m} groups chosen, its disks hold {}",
                    a.name, a.max_groups
                ));
            }
            if m > 0 {
                if a.store_bytes < p.largest_replica_bytes {
                    return Err(format!(
                        "array {}: a store of {} B cannot hold the largest replica",
                        a.name, a.store_bytes
                    ));
                }
                disks += m * p.group_disks + a.spares;
                arrays += 1;
                store += m as u128 * a.store_bytes as u128;
            }
        }
        per_rack.push(n);
        store_per_rack.push(store);
        total_store += store;
    }
    let n: u32 = per_rack.iter().sum();
    if n < p.replicas || n == 0 {
        return Err(format!("{n} servers cannot hold an R{} stream", p.replicas));
    }
    if total_store < p.needed_bytes as u128 {
        return Err(format!(
            "{total_store} B of stores cannot hold the {} B needed",
            p.needed_bytes
        ));
    }
    let s = spread(&per_rack, p.replicas).ok_or("no spread")?;
    let survives = |failed: &[usize]| -> bool {
        let lost: u32 = failed.iter().map(|&i| per_rack[i]).sum();
        let lost_replicas: u32 = failed.iter().map(|&i| s[i]).sum();
        let store_left: u128 = total_store - failed.iter().map(|&i| store_per_rack[i]).sum::<u128>();
        n - lost >= quorum(n)
            && p.replicas - lost_replicas >= quorum(p.replicas)
            && store_left >= p.needed_bytes as u128
    };
    let mut t = 0;
    for k in 1..=p.racks.len() {
        if subsets(p.racks.len(), k).iter().all(|f| survives(f)) {
            t = k as u32;
        } else {
            break;
        }
    }
    Ok(Evaluation {
        servers: n,
        tolerated_racks: t,
        disks,
        arrays,
    })
}

/// The best choice by trying every one (small problems only; the property tests' oracle).
pub fn brute_force(p: &Problem) -> Option<(Choice, Evaluation)> {
    let bounds: Vec<u32> = p
        .racks
        .iter()
        .flat_map(|r| r.arrays.iter().map(move |a| a.max_groups.min(r.servers)))
        .collect();
    let mut cur = vec![0u32; bounds.len()];
    let mut best: Option<(Choice, Evaluation)> = None;
    loop {
        let mut it = cur.iter();
        let c = Choice {
            servers_per_array: p
                .racks
                .iter()
                .map(|r| r.arrays.iter().map(|_| *it.next().unwrap()).collect())
                .collect(),
        };
        if let Ok(e) = evaluate(p, &c) {
            if best.as_ref().is_none_or(|(_, b)| e.better_than(b)) {
                best = Some((c, e));
            }
        }
        // Next combination (odometer).
        let mut i = 0;
        loop {
            if i == cur.len() {
                return best;
            }
            if cur[i] < bounds[i] {
                cur[i] += 1;
                break;
            }
            cur[i] = 0;
            i += 1;
        }
    }
}

/// Solve with good_lp: for each number of tolerated rack failures from the most down, and each cluster
/// size, a small integer program minimising disks then arrays; the first tolerance level with a solution
/// wins. Every solution is re-checked by `evaluate`; one the checker rejects is dropped (and would be a bug).
pub fn solve(p: &Problem) -> Option<(Choice, Evaluation)> {
    let total_servers: u32 = p
        .racks
        .iter()
        .map(|r| r.servers.min(r.arrays.iter().map(|a| a.max_groups).sum()))
        .sum();
    for t in (0..p.racks.len()).rev() {
        let mut best: Option<(Choice, Evaluation)> = None;
        for n in p.replicas.max(1)..=total_servers {
            if let Some(c) = solve_fixed(p, t, n) {
                match evaluate(p, &c) {
                    Ok(e) if e.tolerated_racks as usize >= t => {
                        if best.as_ref().is_none_or(|(_, b)| e.better_than(b)) {
                            best = Some((c, e));
                        }
                    }
                    _ => debug_assert!(false, "solver returned a choice the checker rejects: {c:?}"),
                }
            }
        }
        if best.is_some() {
            return best;
        }
    }
    None
}

/// One integer program: exactly `n` servers, tolerating every set of `t` failed racks.
fn solve_fixed(p: &Problem, t: usize, n: u32) -> Option<Choice> {
    let mut vars = ProblemVariables::new();
    let r = p.replicas;
    // Capacities in units of the bytes needed keep the coefficients near 1 for the LP.
    let unit = p.needed_bytes.max(1) as f64;
    let mut m: Vec<Vec<Variable>> = Vec::new();
    let mut z: Vec<Vec<Variable>> = Vec::new();
    for rack in &p.racks {
        let mut mr = Vec::new();
        let mut zr = Vec::new();
        for a in &rack.arrays {
            let ub = if a.store_bytes < p.largest_replica_bytes {
                0
            } else {
                a.max_groups.min(rack.servers)
            };
            mr.push(vars.add(variable().integer().min(0).max(ub)));
            zr.push(vars.add(variable().binary()));
        }
        m.push(mr);
        z.push(zr);
    }
    let s: Vec<Variable> = p
        .racks
        .iter()
        .map(|_| vars.add(variable().integer().min(0).max(r)))
        .collect();
    let rack_n = |i: usize| -> Expression { m[i].iter().copied().map(Expression::from).sum() };
    let rack_store = |i: usize| -> Expression {
        p.racks[i]
            .arrays
            .iter()
            .zip(&m[i])
            .map(|(a, &v)| (a.store_bytes as f64 / unit) * v)
            .sum()
    };
    let arrays_total = p.racks.iter().map(|r| r.arrays.len()).sum::<usize>() as f64;
    let objective: Expression = p
        .racks
        .iter()
        .zip(&z)
        .flat_map(|(rack, zr)| {
            rack.arrays
                .iter()
                .zip(zr)
                .map(|(a, &zv)| (a.spares as f64 * (arrays_total + 1.0) + 1.0) * zv)
        })
        .sum();
    let mut model = vars.minimise(objective).using(microlp);
    let all_n: Expression = (0..p.racks.len()).map(rack_n).sum();
    model = model.with(constraint!(all_n == n as f64));
    let all_s: Expression = s.iter().copied().map(Expression::from).sum();
    model = model.with(constraint!(all_s == r as f64));
    for (i, rack) in p.racks.iter().enumerate() {
        model = model.with(constraint!(rack_n(i) <= rack.servers as f64));
        model = model.with(constraint!(s[i] <= rack_n(i)));
        for (a, (&mv, &zv)) in rack.arrays.iter().zip(m[i].iter().zip(&z[i])) {
            model = model.with(constraint!(mv <= (a.max_groups.max(1) as f64) * zv));
        }
    }
    let all_store: Expression = (0..p.racks.len()).map(rack_store).sum();
    model = model.with(constraint!(all_store.clone() >= p.needed_bytes as f64 / unit));
    if t > 0 {
        let meta_loss = (n - quorum(n)) as f64;
        let stream_loss = (r - quorum(r)) as f64;
        for f in subsets(p.racks.len(), t) {
            let lost_n: Expression = f.iter().map(|&i| rack_n(i)).sum();
            let lost_s: Expression = f.iter().map(|&i| Expression::from(s[i])).sum();
            let lost_store: Expression = f.iter().map(|&i| rack_store(i)).sum();
            model = model.with(constraint!(lost_n <= meta_loss));
            model = model.with(constraint!(lost_s <= stream_loss));
            model = model.with(constraint!(
                all_store.clone() - lost_store >= p.needed_bytes as f64 / unit
            ));
        }
    }
    let sol = model.solve().ok()?;
    Some(Choice {
        servers_per_array: m
            .iter()
            .map(|mr| mr.iter().map(|&v| sol.value(v).round().max(0.0) as u32).collect())
            .collect(),
    })
}

/// The selection problem of a site for a RAID level, group size and largest replica count `r`: every
/// rack's servers without internal disks and its shared arrays.
pub fn problem_from_site(site: &Site, catalog: &Catalog, raid: Raid, group_disks: u32, r: u8) -> Problem {
    let assets = crate::layout::placement::assets(site, r);
    let needed: f64 = assets.iter().map(|a| a.bytes_per_replica * a.replicas as f64).sum();
    let largest = assets.iter().map(|a| a.bytes_per_replica).fold(0.0, f64::max);
    let replicas = assets
        .iter()
        .map(|a| a.replicas as u32)
        .max()
        .unwrap_or(r as u32)
        .max(r as u32);
    let racks = (0..site.racks.len())
        .map(|ri| RackInput {
            name: site.racks[ri].name.clone(),
            servers: site
                .rack_servers(ri)
                .filter(|&s| site.servers[s].internal.is_none())
                .count() as u32,
            arrays: site
                .rack_arrays(ri)
                .map(|a| {
                    let arr = &site.arrays[a];
                    ArrayInput {
                        name: arr.name.clone(),
                        max_groups: arr.disks.saturating_sub(arr.hot_spares) / group_disks.max(1),
                        spares: arr.hot_spares,
                        store_bytes: store_bytes(site, group_usable_bytes(site, catalog, a, raid, group_disks)),
                    }
                })
                .collect(),
        })
        .collect();
    Problem {
        racks,
        group_disks,
        replicas,
        needed_bytes: needed.ceil() as u64,
        largest_replica_bytes: largest.ceil() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rack(name: &str, servers: u32, arrays: &[(u32, u32, u64)]) -> RackInput {
        RackInput {
            name: name.into(),
            servers,
            arrays: arrays
                .iter()
                .enumerate()
                .map(|(i, &(max_groups, spares, store_bytes))| ArrayInput {
                    name: format!("{name}{}", i + 1),
                    max_groups,
                    spares,
                    store_bytes,
                })
                .collect(),
        }
    }

    #[test]
    fn seed_five_servers_on_three_racks_survive_a_rack_with_r5() {
        // Seed 000: racks A and B with two servers and 2 data disks + 1 spare, rack C with one server.
        let p = Problem {
            racks: vec![
                rack("A", 2, &[(2, 1, 100)]),
                rack("B", 2, &[(2, 1, 100)]),
                rack("C", 1, &[(1, 1, 100)]),
            ],
            group_disks: 1,
            replicas: 5,
            needed_bytes: 250,
            largest_replica_bytes: 10,
        };
        let (c, e) = solve(&p).unwrap();
        assert_eq!(c.servers_per_array, vec![vec![2], vec![2], vec![1]]);
        assert_eq!(e.tolerated_racks, 1);
        assert_eq!(e.disks, 8, "5 group disks + 3 spares, as the seed's table");
        assert_eq!(Some(e), brute_force(&p).map(|(_, e)| e));
    }

    #[test]
    fn r3_uses_one_server_per_rack_and_prefers_fewer_disks() {
        let p = Problem {
            racks: vec![
                rack("A", 2, &[(2, 1, 100)]),
                rack("B", 2, &[(2, 1, 100)]),
                rack("C", 1, &[(1, 1, 100)]),
            ],
            group_disks: 1,
            replicas: 3,
            needed_bytes: 150,
            largest_replica_bytes: 10,
        };
        let (c, e) = solve(&p).unwrap();
        assert_eq!(e.tolerated_racks, 1);
        assert_eq!(e.servers, 3);
        assert_eq!(c.servers_per_array, vec![vec![1], vec![1], vec![1]]);
        assert_eq!(e.disks, 6);
    }

    #[test]
    fn capacity_after_a_rack_failure_can_force_more_servers() {
        // 3 servers of 100 B hold 250 B, but after losing a rack only 200 B are left: a fourth is needed.
        let p = Problem {
            racks: vec![
                rack("A", 2, &[(2, 0, 100)]),
                rack("B", 2, &[(2, 0, 100)]),
                rack("C", 2, &[(2, 0, 100)]),
                rack("D", 2, &[(2, 0, 100)]),
            ],
            group_disks: 1,
            replicas: 3,
            needed_bytes: 250,
            largest_replica_bytes: 10,
        };
        let (c, e) = solve(&p).unwrap();
        assert_eq!(e.tolerated_racks, 1);
        assert_eq!(e.servers, 4, "{c:?}");
        assert_eq!(evaluate(&p, &c), Ok(e));
    }

    #[test]
    fn checker_rejects_what_breaks_a_limit() {
        let p = Problem {
            racks: vec![rack("A", 1, &[(1, 0, 100)])],
            group_disks: 2,
            replicas: 1,
            needed_bytes: 50,
            largest_replica_bytes: 10,
        };
        assert!(evaluate(
            &p,
            &Choice {
                servers_per_array: vec![vec![2]]
            }
        )
        .is_err());
        assert!(evaluate(
            &p,
            &Choice {
                servers_per_array: vec![vec![0]]
            }
        )
        .is_err());
        let e = evaluate(
            &p,
            &Choice {
                servers_per_array: vec![vec![1]],
            },
        )
        .unwrap();
        assert_eq!((e.servers, e.tolerated_racks, e.disks, e.arrays), (1, 0, 2, 1));
    }

    #[test]
    fn spread_is_even_within_caps() {
        assert_eq!(spread(&[2, 2, 1], 5), Some(vec![2, 2, 1]));
        assert_eq!(spread(&[3, 3, 3], 3), Some(vec![1, 1, 1]));
        assert_eq!(spread(&[5, 0, 1], 3), Some(vec![2, 0, 1]));
        assert_eq!(spread(&[1, 1], 3), None);
    }

    #[test]
    fn seed_site_through_the_catalog() {
        let cat = Catalog::builtin();
        let text = include_str!("../../examples/seed-five-servers-raid0.yaml");
        let site = crate::site::parse_str(text, "seed", &cat).unwrap();
        let p = problem_from_site(&site, &cat, Raid::Raid0, 1, 5);
        let (c, e) = solve(&p).unwrap();
        assert_eq!(c.servers_per_array, vec![vec![2], vec![2], vec![1]]);
        assert_eq!(e.tolerated_racks, 1);
    }

    fn small_problem() -> impl Strategy<Value = Problem> {
        // Mostly sites where surviving a rack is possible (2-4 racks, 1-3 servers each), some where not.
        let array = (0u32..=3, 0u32..=2, 1u64..=4);
        let rack = (0u32..=3, prop::collection::vec(array, 1..=2));
        let rich_array = (1u32..=3, 0u32..=2, 1u64..=4);
        let rich_rack = (1u32..=3, prop::collection::vec(rich_array, 1..=2));
        let racks = prop_oneof![
            prop::collection::vec(rack, 1..=4),
            prop::collection::vec(rich_rack, 3..=4),
        ];
        (
            racks,
            prop::sample::select(vec![1u32, 2, 3, 3, 3, 5]),
            0u64..=8,
            0u64..=2,
            1u32..=2,
        )
            .prop_map(|(racks, replicas, needed, largest, group_disks)| Problem {
                racks: racks
                    .into_iter()
                    .enumerate()
                    .map(|(i, (servers, arrays))| RackInput {
                        name: format!("r{i}"),
                        servers,
                        arrays: arrays
                            .into_iter()
                            .enumerate()
                            .map(|(j, (max_groups, spares, store))| ArrayInput {
                                name: format!("r{i}a{j}"),
                                max_groups,
                                spares,
                                store_bytes: store * 100,
                            })
                            .collect(),
                    })
                    .collect(),
                group_disks,
                replicas,
                needed_bytes: needed * 100,
                largest_replica_bytes: largest * 100,
            })
            .prop_filter("brute force stays small", |p| {
                p.racks
                    .iter()
                    .flat_map(|r| &r.arrays)
                    .map(|a| a.max_groups as u64 + 1)
                    .product::<u64>()
                    <= 4096
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        /// The solver's choice passes the independent checker and is as good as the best of all choices.
        #[test]
        fn solver_matches_checker_and_brute_force(p in small_problem()) {
            let solved = solve(&p);
            let brute = brute_force(&p);
            prop_assert_eq!(solved.is_some(), brute.is_some(), "feasibility differs");
            if let (Some((c, e)), Some((_, b))) = (solved, brute) {
                prop_assert_eq!(evaluate(&p, &c), Ok(e));
                prop_assert_eq!((e.tolerated_racks, e.disks, e.arrays), (b.tolerated_racks, b.disks, b.arrays));
            }
        }
    }
}
