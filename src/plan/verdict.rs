//! Reasons a storage engineer would accept, the verdict they add up to, and the ranking — one function
//! each, so later evaluations (yearly figures, performance headroom) extend them in one place.

use super::{Capacity, PlannedLayout};
use crate::catalog::Catalog;
use crate::layout::{Layout, PlacementRule, Problem, ProblemCode, Raid, Severity};
use crate::site::{Pattern, Site, Tolerance};
use crate::text::plural_s;
use crate::units::fmt_bytes;
use std::cmp::Ordering;

fn p(severity: Severity, text: impl Into<String>) -> Problem {
    Problem {
        code: ProblemCode::Verdict,
        severity,
        text: text.into(),
    }
}

/// A layout's two tolerances: existing streams' writes, and the meta group (the JetStream API).
#[derive(Debug, Clone, Copy)]
pub struct Tolerances<'t> {
    pub writes: &'t Tolerance,
    pub meta: &'t Tolerance,
}

/// Every reason for a layout's verdict, worst first.
pub fn reasons(
    site: &Site,
    catalog: &Catalog,
    l: &Layout,
    tols: Tolerances,
    cap: &Capacity,
    predicted: Option<&crate::perf::Predicted<impl crate::perf::Entries>>,
) -> Vec<Problem> {
    let mut out: Vec<Problem> = l.problems.clone();
    performance_and_capacity(&mut out, cap, predicted);
    server_needs(&mut out, predicted);
    policy_minimums(&mut out, site, tols);
    pattern_notes(&mut out, site, l, cap);
    domain_notes(&mut out, site, catalog, l, tols);
    write_cache_notes(&mut out, site, l);
    raft_groups(&mut out, site, l);
    out.sort_by_key(|p| std::cmp::Reverse(p.severity));
    out.dedup();
    out
}

/// HA assets (RAFT groups of replicated streams, KV buckets, object stores and durable consumers) one
/// server may carry: the figure NATS maintainers give is about 2,000 per server (nats-server discussion
/// #5128, restated by derekcollison in nats-server issue #8350, 2026: "a recommendation … at least 8 cores
/// and a good amount of memory"); the same thread reports problems with 10,000 RAFT groups. nats-server
/// can cap them itself (`max_ha_assets`, nats-server #3503).
pub const HA_ASSETS_RECOMMENDED: usize = 2_000;
pub const HA_ASSETS_PROBLEMS: usize = 10_000;

/// Each server's HA assets under the expected placement against the figures above.
fn raft_groups(out: &mut Vec<Problem>, site: &Site, l: &Layout) {
    let mut on = vec![0usize; site.servers.len()];
    for a in l.assets.iter().filter(|a| a.replicas > 1) {
        for &s in &a.expected {
            if let Some(n) = on.get_mut(s) {
                *n += 1;
            }
        }
    }
    let Some((s, &n)) = on.iter().enumerate().max_by_key(|&(i, n)| (*n, std::cmp::Reverse(i))) else {
        return;
    };
    if n <= HA_ASSETS_RECOMMENDED {
        return;
    }
    let severity = if n > HA_ASSETS_PROBLEMS {
        Severity::Risk
    } else {
        Severity::Note
    };
    out.push(p(
        severity,
        format!(
            "RAFT groups: {} carries {n} HA assets (replicated streams, buckets and consumers), against about \
             {HA_ASSETS_RECOMMENDED} per server that NATS maintainers recommend (nats-server #5128, #8350; problems \
             reported at {HA_ASSETS_PROBLEMS}): more servers, fewer replicated assets or R1 for some, and at least \
             8 cores each",
            site.servers[s].name
        ),
    ));
}

/// A server model too small for its server's share of the workload (cores, memory or network; perf's
/// `ServerNeeds`) rejects the layout, as capacity does: the first such server named, the others counted.
fn server_needs<S>(out: &mut Vec<Problem>, predicted: Option<&crate::perf::Predicted<S>>) {
    let Some(pr) = predicted else { return };
    let mut short = pr.servers.iter().filter(|s| !s.needs.short.is_empty());
    let Some(first) = short.next() else { return };
    let more = short.count();
    out.push(p(
        Severity::Reject,
        format!(
            "server needs: {} {}{}: a larger server model, or more servers to share the load",
            first.name,
            first.needs.short.join("; "),
            match more {
                0 => String::new(),
                1 => " (and 1 more server)".into(),
                m => format!(" (and {m} more servers)"),
            }
        ),
    ));
}

/// Performance against the workload and capacity, now and after the worst tolerated failure.
fn performance_and_capacity(
    out: &mut Vec<Problem>,
    cap: &Capacity,
    predicted: Option<&crate::perf::Predicted<impl crate::perf::Entries>>,
) {
    // Performance against the workload (perf): beyond the band is a rejection, inside it a risk.
    if let Some(pr) = predicted {
        if let Some(why) = pr.cannot_carry() {
            out.push(p(Severity::Reject, format!("performance: {why}")));
        } else if let Some(why) = pr.at_risk() {
            out.push(p(Severity::Risk, format!("performance: {why}")));
        }
    }
    // Capacity, now and after the worst tolerated failure: by how much it falls short, and the asset
    // that needs the most (a percentage of free space below zero said nothing: "-2383 %").
    if let (Some(f), true) = (&cap.shortfall, cap.headroom < 0.0) {
        let asset = if f.largest_asset.is_empty() {
            String::new()
        } else {
            format!("; {} is {:.0} % of it", f.largest_asset, f.largest_share * 100.0)
        };
        out.push(p(
            Severity::Reject,
            match (&f.server, &cap.fullest_server) {
                (Some(name), Some(s)) => format!(
                    "capacity: {name} is short by {} ({} too small): its replicas need {}, its store holds {}{asset}",
                    fmt_bytes(f.short_bytes as f64),
                    times(f.times_too_small),
                    fmt_bytes(s.needed_bytes as f64),
                    fmt_bytes(s.usable_bytes as f64)
                ),
                _ => format!(
                    "capacity: short by {} ({} too small): the workload needs {}, the stores hold {}{asset}",
                    fmt_bytes(f.short_bytes as f64),
                    times(f.times_too_small),
                    fmt_bytes(cap.needed_bytes as f64),
                    fmt_bytes(cap.usable_bytes as f64)
                ),
            },
        ));
    }
    if let Some(a) = &cap.after_failure {
        if a.headroom < 0.0 && cap.headroom >= 0.0 {
            if let Some(f) = &a.fullest_server {
                out.push(p(
                    Severity::Reject,
                    format!(
                        "capacity after {} and peer-remove: {} would need {} of {}",
                        a.failed.join(" + "),
                        f.name,
                        fmt_bytes(f.needed_bytes as f64),
                        fmt_bytes(f.usable_bytes as f64)
                    ),
                ));
            }
        }
    }
}

/// "24×", "2.4×", or "no store" for an empty one: how many times too small a store (or a rate) is.
pub fn times(x: f64) -> String {
    match x {
        x if !x.is_finite() => "no store, infinitely".into(),
        x if x >= 10.0 => format!("{x:.0}×"),
        x => format!("{x:.1}×"),
    }
}

/// How close a rejected layout comes to usable, lower closer (the ranking among rejected layouts): assets
/// it cannot create at all first (the layout is the wrong shape: more servers or racks are needed), then
/// the failures it tolerates short of `policy.min_tolerated` (summed over kinds), then how many times too
/// small its stores or its predicted rate are, in doublings. So a layout that cannot place an R5 stream
/// ranks below one that only misses capacity, and one 24× short below one 2× short.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Closeness {
    pub not_placed: usize,
    pub policy_short: u32,
    pub doublings: u32,
}

pub fn closeness(
    site: &Site,
    not_placed: Option<&super::NotPlaced>,
    tols: Tolerances,
    cap: &Capacity,
    predicted: Option<&crate::perf::Predicted<impl crate::perf::Entries>>,
) -> Closeness {
    let m = &site.policy.min_tolerated;
    let short = |need: u32, got: u32| need.saturating_sub(got);
    let policy_short = short(m.racks, tols.writes.racks)
        + short(m.arrays, tols.writes.arrays)
        + short(m.servers, tols.writes.servers)
        + short(m.disks, tols.writes.disks);
    let mut factor: f64 = 1.0;
    if let Some(f) = &cap.shortfall {
        factor = factor.max(f.times_too_small);
    }
    if let Some(a) = cap.after_failure.as_ref().filter(|a| a.headroom < 0.0) {
        factor = factor.max(1.0 - a.headroom);
    }
    if let Some(pr) = predicted.filter(|p| p.cannot_carry().is_some() && p.headroom > 0.0) {
        factor = factor.max(1.0 / pr.headroom);
    }
    let doublings = if factor.is_finite() {
        factor.log2().ceil().clamp(0.0, 1e6) as u32
    } else {
        u32::MAX
    };
    Closeness {
        not_placed: not_placed.map_or(0, |n| n.assets),
        policy_short,
        doublings,
    }
}

/// `policy.min_tolerated`, judged on the streams' writes (and the meta group's with `meta: true`).
fn policy_minimums(out: &mut Vec<Problem>, site: &Site, tols: Tolerances) {
    let (tol, meta) = (tols.writes, tols.meta);
    // Policy minimums: judged on the streams' writes, and on the meta group too with `meta: true`.
    let m = &site.policy.min_tolerated;
    for (kind, need, got, got_meta) in [
        ("rack", m.racks, tol.racks, meta.racks),
        ("array", m.arrays, tol.arrays, meta.arrays),
        ("server", m.servers, tol.servers, meta.servers),
        ("disk", m.disks, tol.disks, meta.disks),
    ] {
        let plural = plural_s(need);
        if got < need {
            out.push(p(
                Severity::Reject,
                format!("policy needs {need} {kind} failure{plural} tolerated; this layout tolerates {got}"),
            ));
        } else if site.policy.min_tolerated_meta && got_meta < need {
            out.push(p(
                Severity::Reject,
                format!(
                    "policy needs {need} {kind} failure{plural} tolerated by the meta group (min_tolerated.meta); \
                     the JetStream API survives {got_meta}"
                ),
            ));
        }
    }
}

/// What each storage pattern implies.
fn pattern_notes(out: &mut Vec<Problem>, site: &Site, l: &Layout, cap: &Capacity) {
    // Patterns.
    match l.pattern {
        Pattern::P3 => {
            for (gi, g) in l.groups.iter().enumerate() {
                let on = l.luns.iter().filter(|x| x.group == gi).count();
                if on > 0 {
                    out.push(p(
                        if site.workload.streams.is_empty() && site.workload.kv.is_empty() && site.workload.object_stores.is_empty() {
                            Severity::Note
                        } else {
                            Severity::Risk
                        },
                        format!(
                            "pattern 3: one disk failure destroys {} on {} (a shared RAID 0 stripe); only for ephemeral caches",
                            if on == 1 { "the server's volume".to_string() } else { format!("all {on} servers' volumes") },
                            site.arrays[g.array].name
                        ),
                    ));
                }
            }
        }
        Pattern::P2 => {
            // Arrays of the layout (internal disks have no hot spares to speak of), and those without a
            // spare: there a destroyed volume waits for the drive replacement, not a spare (issue 38: the
            // note said "a new group on a spare" beside "no hot spare in …").
            let mut arrays: Vec<usize> = Vec::new();
            for a in l
                .groups
                .iter()
                .map(|g| g.array)
                .filter(|a| site.arrays[*a].owner.is_none())
            {
                if !arrays.contains(&a) {
                    arrays.push(a);
                }
            }
            let spare_less: Vec<&str> = arrays
                .iter()
                .filter(|a| !l.spares.iter().any(|(x, n)| x == *a && *n > 0))
                .map(|&a| site.arrays[a].name.as_str())
                .collect();
            let recovery = if !arrays.is_empty() && spare_less.len() == arrays.len() {
                "waits for the drive replacement (no hot spare: `disk_replace`), then a new group"
            } else {
                "a new group on a spare (≈30 s)"
            };
            out.push(p(
                Severity::Note,
                format!(
                    "RAID 0 per server: a disk failure destroys that server's volume; recovery {}{recovery}, a filesystem, peer-remove, a rejoin under a new server_name and replica catch-up",
                    if recovery.starts_with('a') { "is " } else { "" }
                ),
            ));
            if !spare_less.is_empty() && spare_less.len() < arrays.len() {
                out.push(p(
                    Severity::Note,
                    format!(
                        "no hot spare in {}: a failed RAID 0 disk waits for a replacement",
                        spare_less.join(", ")
                    ),
                ));
            }
        }
        Pattern::Raid6 => {
            // One group, or several when the array's limit split the disks (the split is said apart).
            let groups = l.groups.len();
            out.push(p(
                Severity::Note,
                format!(
                    "{} on one array in one rack: the array or the rack is a single point of failure for every stream",
                    if groups == 1 {
                        "single RAID 6 group".to_string()
                    } else {
                        format!("{groups} RAID 6 groups")
                    }
                ),
            ))
        }
        Pattern::DdpRaid1 => out.push(p(
            Severity::Info,
            "RAID 1 volumes on a DDP pool: simple to run; a 2-disk failure in the pool can touch every volume",
        )),
        Pattern::P4 if cap.left_for_others_bytes > 0 => out.push(p(
            Severity::Info,
            format!(
                "pattern 4: {} of the volume groups left for other services",
                fmt_bytes(cap.left_for_others_bytes as f64)
            ),
        )),
        _ => {}
    }
}

/// Racks, shared hosts, replica counts, pinned sets and delayed sync: what fails together.
fn domain_notes(out: &mut Vec<Problem>, site: &Site, catalog: &Catalog, l: &Layout, tols: Tolerances) {
    let (tol, meta) = (tols.writes, tols.meta);
    let n = l.servers.len();
    let racks = l.racks_used(site).len();
    // Racks.
    if n > 0 && racks == 1 {
        out.push(p(Severity::Risk, "single rack: one rack outage stops every stream"));
    } else if n > 0 && tol.racks == 0 {
        out.push(p(
            Severity::Risk,
            "one rack outage can stop a stream's writes (a quorum of its replicas shares a rack)",
        ));
    } else if n > 0 && meta.racks == 0 {
        out.push(p(
            Severity::Note,
            "one rack outage stops the JetStream API (a majority of the meta group shares a rack): existing \
             streams keep taking writes and direct gets work, but nothing can be created, changed or \
             peer-removed and no new consumer (KV watch, object get, ordered consumer) starts until it returns",
        ));
    }

    // Shared hypervisor hosts: several JetStream servers that fail together.
    let mut hosts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for &s in &l.servers {
        if let Some(h) = &site.servers[s].host {
            *hosts.entry(h.as_str()).or_default() += 1;
        }
    }
    for (h, k) in hosts {
        if k as u32 > n as u32 - crate::layout::quorum(n as u32) {
            out.push(p(
                Severity::Risk,
                format!("host {h} runs {k} of {n} JetStream servers: one host failure stops the meta group and every stream"),
            ));
        } else if k > 1 {
            out.push(p(
                Severity::Note,
                format!("host {h} runs {k} JetStream servers: they fail together"),
            ));
        }
    }

    // Replica counts.
    let r = l.replicas;
    match r {
        1 => out.push(p(
            Severity::Risk,
            "R1: no redundancy; losing one server or its volume loses the stream",
        )),
        2 => out.push(p(Severity::Risk, "R2 tolerates no server failure (quorum is 2 of 2)")),
        4 => out.push(p(
            Severity::Note,
            "R4 tolerates what R3 does (one server) for a third more resources",
        )),
        _ => {}
    }
    if n > 0 && n.is_multiple_of(2) {
        out.push(p(
            Severity::Info,
            format!(
                "{n} JetStream servers: the meta group's quorum is {}, so it tolerates {}, the same as {} server{}",
                n / 2 + 1,
                match n - (n / 2 + 1) {
                    0 => "no lost server".to_string(),
                    1 => "1 lost server".to_string(),
                    t => format!("{t} lost servers"),
                },
                n - 1,
                plural_s(n - 1)
            ),
        ));
    }
    if let PlacementRule::Pinned { sets } = &l.placement {
        if !sets.is_empty() && n > 1 {
            out.push(p(
                Severity::Info,
                format!(
                    "replica sets pinned with set: tags ({} set{}) because unique_tag on rack cannot place R{} over {racks} rack{}; after `nats server cluster peer-remove` of a lost member, nats-server re-places its replicas only on a live server that carries the set's tag and holds none yet: every other member already holds one, so the set's streams stay a replica short until a server with that tag joins (the host rejoined under a new server_name with the same tags; nats-server 2.15.1)",
                    sets.len(),
                    plural_s(sets.len()),
                    l.assets.iter().map(|a| a.replicas).max().unwrap_or(r),
                    plural_s(racks)
                ),
            ));
        }
    }

    // Acknowledged-write loss with delayed sync when a power event can take a quorum.
    if site.nats.sync.is_delayed() && n > 0 && tol.racks == 0 {
        out.push(p(
            Severity::Risk,
            format!(
                "sync_interval {} with a quorum in one rack: one power event can lose acknowledged writes (up to {:.0} s of them)",
                site.nats.sync,
                site.nats.sync.loss_window_s(catalog.failures.dirty_expire_s.value)
            ),
        ));
    }
}

/// Write cache disabled on mirrored volumes (seed 000 Appendix C).
fn write_cache_notes(out: &mut Vec<Problem>, site: &Site, l: &Layout) {
    // Write cache disabled on RAID 1 volumes (seed 000 Appendix C).
    let mut no_cache: Vec<&str> = l
        .groups
        .iter()
        .filter(|g| matches!(g.raid, Raid::Raid1 | Raid::Raid10 | Raid::Raid6 | Raid::DdpRaid1))
        .map(|g| &site.arrays[g.array])
        .filter(|a| !a.write_cache && a.owner.is_none())
        .map(|a| a.name.as_str())
        .collect();
    no_cache.dedup();
    if !no_cache.is_empty() {
        out.push(p(
            Severity::Info,
            format!("write cache disabled on {}: mirrored writes wait for both disks (the NATS-on-E-Series guide measured 2.2× RAID 0's p50 write latency without the cache)", no_cache.join(", ")),
        ));
    }
}

/// SSD wear within the planning horizon is a risk; worn out before the rating's years but after the
/// horizon, worth knowing (it does not lower the verdict).
pub fn wear(site: &Site, e: &crate::survival::Endurance, out: &mut Vec<Problem>) {
    let (Some(years), Some(group)) = (e.years_to_wear_out, &e.first_worn) else {
        return;
    };
    let g = e.groups.iter().find(|g| &g.group == group);
    let (dwpd, rated) = g.map(|g| (g.dwpd, g.rated_dwpd.unwrap_or(0.0))).unwrap_or((0.0, 0.0));
    let horizon = site.policy.horizon_s / crate::units::YEAR_S;
    if e.within_horizon {
        out.push(p(
            Severity::Risk,
            format!(
                "SSD wear: {group}'s disks take {dwpd:.2} drive writes/day (rated {rated}) and wear out in {years:.1} \
                 years, within the {horizon:.1}-year planning horizon"
            ),
        ));
    } else if years < crate::survival::RATING_YEARS {
        out.push(p(
            Severity::Info,
            format!(
                "SSD wear: {group}'s disks take {dwpd:.2} drive writes/day (rated {rated}): worn out in {years:.1} \
                 years, before the rating's {:.0}",
                crate::survival::RATING_YEARS
            ),
        ));
    }
    out.sort_by_key(|p| std::cmp::Reverse(p.severity));
}

/// Rank: by verdict (recommended, acceptable, risky, rejected; rejected ones among themselves by
/// `closeness` first), then tolerates (racks, arrays, servers, disks), then
/// the yearly figures by order of magnitude (P(data_lost), acked messages lost, unavailable minutes),
/// then predicted performance headroom by order of magnitude (so cost still decides between near-equals),
/// then cost (disks, then arrays used), then spare capacity, then id for determinism.
pub fn rank(layouts: &mut [PlannedLayout]) {
    layouts.sort_by(compare);
    for (i, l) in layouts.iter_mut().enumerate() {
        l.rank = i + 1;
    }
}

fn compare(a: &PlannedLayout, b: &PlannedLayout) -> Ordering {
    // The verdict first: a risky layout never ranks above an acceptable one, whatever it tolerates.
    // Rejected layouts then by how close they come (`closeness`), so the one nearest to usable is first.
    let rejected = a.verdict == super::Verdict::Rejected && b.verdict == super::Verdict::Rejected;
    a.verdict
        .cmp(&b.verdict)
        .then(if rejected {
            a.closeness.cmp(&b.closeness)
        } else {
            Ordering::Equal
        })
        .then(b.tolerates.racks.cmp(&a.tolerates.racks))
        .then(b.tolerates.arrays.cmp(&a.tolerates.arrays))
        .then(b.tolerates.servers.cmp(&a.tolerates.servers))
        .then(b.tolerates.disks.cmp(&a.tolerates.disks))
        .then(yearly_key(a).cmp(&yearly_key(b)))
        .then(perf_bucket(b).cmp(&perf_bucket(a)))
        .then(a.disks_used.cmp(&b.disks_used))
        .then(a.arrays_used.cmp(&b.arrays_used))
        .then(b.capacity.headroom.total_cmp(&a.capacity.headroom))
        .then(a.id.cmp(&b.id))
}

/// Performance headroom (predicted capacity ÷ required rate) in coarse steps: short (0), under 2× (1),
/// 2–4× (2), 4× or more (3). No prediction counts as ample: the workload is empty.
pub fn perf_bucket(l: &PlannedLayout) -> u8 {
    match l.predicted.as_ref().map(|p| p.headroom) {
        None => 3,
        Some(h) if !h.is_finite() => 3,
        Some(h) if h < 1.0 => 0,
        Some(h) if h < 2.0 => 1,
        Some(h) if h < 4.0 => 2,
        Some(_) => 3,
    }
}

/// The yearly figures' ranking key (lower is better); a layout without them sorts after those with.
fn yearly_key(l: &PlannedLayout) -> (i32, i32, i32, i32) {
    l.yearly
        .as_ref()
        .map(|y| y.rank_key())
        .unwrap_or((i32::MAX, i32::MAX, i32::MAX, i32::MAX))
}

#[cfg(test)]
mod raft_group_tests {
    use super::*;

    #[test]
    fn a_server_with_thousands_of_ha_assets_says_so_with_the_figure_and_its_source() {
        let cat = Catalog::builtin();
        let site = crate::site::parse_str(
            "site: t\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a, b, c]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 8 }\n\
             workload:\n  streams:\n    - { name: s, msgs_per_s: 1, msg_size: 1KiB, retention: 1h }\n",
            "t.yaml",
            &cat,
        )
        .unwrap();
        let mut layout = crate::layout::Enumerate::new(&site, &cat)
            .placed()
            .into_iter()
            .find(|l| !l.servers.is_empty())
            .unwrap();
        let one = layout.assets[0].clone();
        let check = |layout: &Layout| {
            let mut out = Vec::new();
            raft_groups(&mut out, &site, layout);
            out
        };
        assert!(check(&layout).is_empty(), "one stream is nothing to say");
        layout.assets = (0..HA_ASSETS_RECOMMENDED + 1).map(|_| one.clone()).collect();
        let note = check(&layout);
        assert_eq!(note.len(), 1);
        assert_eq!(note[0].severity, Severity::Note);
        assert!(
            note[0].text.contains("2001 HA assets") && note[0].text.contains("#8350"),
            "{}",
            note[0].text
        );
        layout.assets = (0..HA_ASSETS_PROBLEMS + 1).map(|_| one.clone()).collect();
        assert_eq!(check(&layout)[0].severity, Severity::Risk);
    }
}
