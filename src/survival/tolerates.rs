//! `tolerates`: per domain kind (racks, arrays, servers, disks), the largest k such that ANY k simultaneous
//! failures of that kind keep every existing asset writable; `tolerates_meta`: the same for the meta group
//! (the JetStream API: create, update, delete, consumer create, peer-remove). The two are apart because an
//! existing stream whose own group keeps its quorum goes on taking writes while the meta group has lost its
//! quorum (confirmed on a lab: rack A's three of five servers killed, the R3 stream on a2, b1, c1 kept
//! acknowledging; only the API answered 10008). A layout without assets falls back to the meta group's
//! figure for `tolerates` (any stream created later needs the API).
//!
//! No subsets are enumerated. Each failure of a kind is a *unit* with a cost (a rack, array or server costs
//! 1; a volume group costs the disks that destroy it) and the JetStream servers it takes down. An asset
//! with R replicas and quorum q stops being writable once t = R − q + 1 replicas can be down on the worst
//! eligible placement, i.e. once t candidates are down (free placement) or candidates in t distinct racks
//! are down (`unique_tag` on racks). The cheapest way to get there is a min-cost cover of t items by units:
//! a 0/1 knapsack when units cover disjoint items (the usual case), an exact branch-and-bound otherwise.
//! `tolerates` = min over assets and meta of (min cost − 1). `brute_force` checks it by enumeration.

use super::domain::{Domain, DomainKind};
use super::evaluate::Model;
use crate::layout::{quorum, Layout};
use crate::site::{ServerIdx, Site, Tolerance};

/// The four kinds `Tolerance` reports, and the domain kind each is checked with.
pub const TOLERANCE_KINDS: [(&str, DomainKind); 4] = [
    ("racks", DomainKind::Rack),
    ("arrays", DomainKind::Array),
    ("servers", DomainKind::Server),
    ("disks", DomainKind::Disk),
];

/// One way of failing things of a kind: its cost in domains of that kind and the servers it takes down.
#[derive(Debug, Clone)]
struct Unit {
    cost: u32,
    down: Vec<ServerIdx>,
}

fn units(model: &Model, kind: DomainKind) -> Vec<Unit> {
    let site = model.site;
    let layout = model.layout;
    match kind {
        DomainKind::Rack => (0..site.racks.len())
            .map(|r| {
                // A rack's power takes its servers and its arrays, so servers elsewhere with a LUN in this
                // rack go down too.
                let down = layout
                    .servers
                    .iter()
                    .copied()
                    .filter(|&s| {
                        site.servers[s].rack == r || model.array_of(s).is_some_and(|a| site.arrays[a].rack == r)
                    })
                    .collect();
                Unit { cost: 1, down }
            })
            .collect(),
        DomainKind::Array => {
            let mut arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
            arrays.sort_unstable();
            arrays.dedup();
            arrays
                .into_iter()
                .map(|a| Unit {
                    cost: 1,
                    down: layout
                        .servers
                        .iter()
                        .copied()
                        .filter(|&s| model.array_of(s) == Some(a))
                        .collect(),
                })
                .collect()
        }
        DomainKind::Server => layout
            .servers
            .iter()
            .map(|&s| Unit { cost: 1, down: vec![s] })
            .collect(),
        DomainKind::Disk => (0..layout.groups.len())
            .filter(|&g| !model.group_servers(g).is_empty())
            .map(|g| Unit {
                cost: model.disks_to_destroy(g),
                down: model.group_servers(g).to_vec(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Minimum total cost of units whose covered items number at least `t`; None if even all units fall short.
/// `cover[i]` lists the items unit i covers (deduplicated).
fn min_cost_cover(costs: &[u32], cover: &[Vec<usize>], t: usize) -> Option<u32> {
    if t == 0 {
        return Some(0);
    }
    // Drop units that cover nothing.
    let idx: Vec<usize> = (0..costs.len()).filter(|&i| !cover[i].is_empty()).collect();
    let mut claimed = std::collections::HashSet::new();
    let disjoint = idx.iter().all(|&i| cover[i].iter().all(|&x| claimed.insert(x)));
    if disjoint {
        // 0/1 knapsack: best[j] = cheapest cost to cover at least j items (capped at t).
        let mut best = vec![u32::MAX; t + 1];
        best[0] = 0;
        for &i in &idx {
            let gain = cover[i].len().min(t);
            for j in (1..=t).rev() {
                let from = j.saturating_sub(gain);
                if best[from] != u32::MAX {
                    best[j] = best[j].min(best[from] + costs[i]);
                }
            }
        }
        return (best[t] != u32::MAX).then_some(best[t]);
    }
    // Overlapping covers (a rack whose arrays hold LUNs of servers elsewhere): exact branch and bound.
    // An optimal cover uses at most t units, each adding at least one new item.
    let mut order = idx.clone();
    order.sort_by(|&a, &b| {
        // Most items per cost first: finds a good bound early.
        (cover[b].len() as u64 * costs[a] as u64).cmp(&(cover[a].len() as u64 * costs[b] as u64))
    });
    let max_item = order.iter().flat_map(|&i| cover[i].iter().copied()).max().unwrap_or(0);
    let mut search = CoverSearch {
        t,
        order: &order,
        costs,
        cover,
        count: vec![0u32; max_item + 1],
        best: u32::MAX,
    };
    search.dfs(0, 0, 0);
    (search.best != u32::MAX).then_some(search.best)
}

/// The branch and bound of [`min_cost_cover`] over overlapping covers: `count` is how many chosen units
/// cover each item, `best` the cheapest cover of `t` items found so far.
struct CoverSearch<'a> {
    t: usize,
    order: &'a [usize],
    costs: &'a [u32],
    cover: &'a [Vec<usize>],
    count: Vec<u32>,
    best: u32,
}

impl CoverSearch<'_> {
    fn dfs(&mut self, pos: usize, covered: usize, cost: u32) {
        if covered >= self.t {
            self.best = self.best.min(cost);
            return;
        }
        if pos == self.order.len() || cost.saturating_add(1) >= self.best {
            return;
        }
        // Lower bound: every further unit costs at least the cheapest remaining one.
        let i = self.order[pos];
        let cover = self.cover;
        let gain = cover[i].iter().filter(|&&x| self.count[x] == 0).count();
        if gain > 0 && cost + self.costs[i] < self.best {
            for &x in &cover[i] {
                self.count[x] += 1;
            }
            self.dfs(pos + 1, covered + gain, cost + self.costs[i]);
            for &x in &cover[i] {
                self.count[x] -= 1;
            }
        }
        self.dfs(pos + 1, covered, cost);
    }
}

/// Which groups a tolerance is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judge {
    /// Every existing asset keeps taking writes (`tolerates`).
    Writes,
    /// The meta group keeps its quorum: the JetStream API works (`tolerates_meta`).
    Meta,
}

/// The fewest domains of `kind` whose failure makes some asset unwritable (None: not even all of them do).
/// Without assets, the meta group's figure (see the module doc).
pub fn min_breaking_cost(model: &Model, kind: DomainKind) -> Option<u32> {
    if model.layout.assets.is_empty() {
        return min_breaking_cost_of(model, kind, Judge::Meta);
    }
    min_breaking_cost_of(model, kind, Judge::Writes)
}

/// The fewest domains of `kind` whose failure breaks what `judge` names.
pub fn min_breaking_cost_of(model: &Model, kind: DomainKind, judge: Judge) -> Option<u32> {
    let units = units(model, kind);
    let costs: Vec<u32> = units.iter().map(|u| u.cost).collect();
    let site = model.site;
    let layout = model.layout;
    let mut best: Option<u32> = None;
    let mut consider = |cands: &[ServerIdx], r: u32, unique_rack: bool| {
        // Fewer eligible servers (racks, under unique_tag) than replicas: nats-server cannot create the
        // asset at all, so it takes no writes even with nothing failed (it used to count as surviving
        // every failure: "writes survive 4/1/2/6" on a layout that could place no stream).
        let placeable = if unique_rack {
            let mut racks: Vec<usize> = cands.iter().map(|&s| site.servers[s].rack).collect();
            racks.sort_unstable();
            racks.dedup();
            racks.len()
        } else {
            cands.len()
        };
        if placeable < r as usize {
            best = Some(0);
            return;
        }
        let t = (r - quorum(r) + 1) as usize;
        let cover: Vec<Vec<usize>> = units
            .iter()
            .map(|u| {
                let mut v: Vec<usize> = u
                    .down
                    .iter()
                    .filter(|s| cands.contains(s))
                    .map(|&s| if unique_rack { site.servers[s].rack } else { s })
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        if let Some(c) = min_cost_cover(&costs, &cover, t) {
            best = Some(best.map_or(c, |b| b.min(c)));
        }
    };
    if judge == Judge::Meta {
        consider(&layout.servers, layout.servers.len() as u32, false);
        return best;
    }
    // Many assets share a placement: each distinct (candidates, R, unique) is judged once.
    for &(from, r, u) in model.distinct_placements() {
        let a = &layout.assets[from];
        consider(&a.candidates, r as u32, u);
    }
    best
}

/// What the layout tolerates with every existing asset writable, per kind (see the module doc).
pub fn tolerates(site: &Site, layout: &Layout) -> Tolerance {
    let judge = if layout.assets.is_empty() {
        Judge::Meta
    } else {
        Judge::Writes
    };
    tolerates_by(site, layout, judge)
}

/// What the layout tolerates with the JetStream API (the meta group) working, per kind.
pub fn tolerates_meta(site: &Site, layout: &Layout) -> Tolerance {
    tolerates_by(site, layout, Judge::Meta)
}

fn tolerates_by(site: &Site, layout: &Layout, judge: Judge) -> Tolerance {
    let model = Model::new(site, layout);
    let k = |kind| {
        let total = Domain::universe(kind, site, layout).len() as u32;
        match min_breaking_cost_of(&model, kind, judge) {
            Some(c) => c.saturating_sub(1).min(total),
            None => total,
        }
    };
    Tolerance {
        racks: k(DomainKind::Rack),
        arrays: k(DomainKind::Array),
        servers: k(DomainKind::Server),
        disks: k(DomainKind::Disk),
    }
}

/// Independent checker: the largest k such that every k-subset of the kind's domains (evaluated scenario by
/// scenario) leaves every asset writable (or, without assets, the meta group). Exponential; for small
/// sites and tests.
pub fn brute_force_kind(model: &Model, kind: DomainKind) -> u32 {
    let judge = if model.layout.assets.is_empty() {
        Judge::Meta
    } else {
        Judge::Writes
    };
    brute_force_kind_of(model, kind, judge)
}

/// `brute_force_kind` for what `judge` names.
pub fn brute_force_kind_of(model: &Model, kind: DomainKind, judge: Judge) -> u32 {
    let all = Domain::universe(kind, model.site, model.layout);
    for k in 1..=all.len() {
        let mut broken = false;
        for_each_subset(all.len(), k, &mut |idx| {
            let failed: Vec<Domain> = idx.iter().map(|&i| all[i].clone()).collect();
            let sc = model.evaluate(&failed);
            let ok = match judge {
                Judge::Writes => sc.worst_asset().writable(),
                Judge::Meta => sc.meta.status.writable(),
            };
            if !ok {
                broken = true;
            }
            !broken
        });
        if broken {
            return k as u32 - 1;
        }
    }
    all.len() as u32
}

/// `tolerates` by enumeration (see `brute_force_kind`).
pub fn brute_force(site: &Site, layout: &Layout) -> Tolerance {
    let judge = if layout.assets.is_empty() {
        Judge::Meta
    } else {
        Judge::Writes
    };
    brute_force_by(site, layout, judge)
}

/// `tolerates_meta` by enumeration.
pub fn brute_force_meta(site: &Site, layout: &Layout) -> Tolerance {
    brute_force_by(site, layout, Judge::Meta)
}

fn brute_force_by(site: &Site, layout: &Layout, judge: Judge) -> Tolerance {
    let model = Model::new(site, layout);
    Tolerance {
        racks: brute_force_kind_of(&model, DomainKind::Rack, judge),
        arrays: brute_force_kind_of(&model, DomainKind::Array, judge),
        servers: brute_force_kind_of(&model, DomainKind::Server, judge),
        disks: brute_force_kind_of(&model, DomainKind::Disk, judge),
    }
}

/// Call `f` with every k-subset of 0..n in lexicographic order until it returns false.
pub fn for_each_subset(n: usize, k: usize, f: &mut dyn FnMut(&[usize]) -> bool) {
    if k > n {
        return;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        if !f(&idx) {
            return;
        }
        // The rightmost index that can still move right.
        let Some(i) = (0..k).rev().find(|&i| idx[i] < n - k + i) else {
            return;
        };
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}
