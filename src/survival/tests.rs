//! Seed claims as regression tests, and property tests: `tolerates` against the brute-force checker,
//! monotone statuses.

use super::fixture::{site, LayoutBuilder, RackSpec};
use super::*;
use crate::layout::{Layout, Raid};
use crate::site::{Pattern, Site, Tolerance};
use crate::units::SyncMode;
use proptest::prelude::*;

pub(super) fn rack<'a>(name: &'a str, servers: &[&'a str], arrays: &[(&'a str, u32)]) -> RackSpec<'a> {
    RackSpec {
        name,
        servers: servers.to_vec(),
        arrays: arrays.to_vec(),
    }
}

fn fail(site: &Site, sels: &[&str]) -> Vec<Domain> {
    sels.iter().map(|s| Domain::parse(s, site).unwrap()).collect()
}

fn status_of(sc: &Scenario, name: &str) -> Status {
    sc.assets.iter().find(|a| a.name == name).unwrap().status
}

/// Five servers on 2+2+1 racks, each with its own RAID 1 group.
pub(super) fn five_on_221(sync: SyncMode) -> Site {
    site(
        &[
            rack("A", &["n1", "n2"], &[("A1", 12)]),
            rack("B", &["n3", "n4"], &[("B1", 12)]),
            rack("C", &["n5"], &[("C1", 12)]),
        ],
        sync,
    )
}

pub(super) fn three_racks(sync: SyncMode) -> Site {
    site(
        &[
            rack("A", &["n1"], &[("A1", 12)]),
            rack("B", &["n2"], &[("B1", 12)]),
            rack("C", &["n3"], &[("C1", 12)]),
        ],
        sync,
    )
}

#[test]
fn selectors_parse_and_print_back() {
    let s = five_on_221(SyncMode::Interval(120));
    for sel in [
        "rack:A",
        "power:B",
        "net:C",
        "disk:A1/3",
        "array:B1",
        "process:n1",
        "pause:n2",
        "server:n3",
        "wipe:n4",
        "full:n5",
        "full:A1",
    ] {
        assert_eq!(Domain::parse(sel, &s).unwrap().to_string(), sel);
    }
    let e = Domain::parse("rack:Q", &s).unwrap_err();
    assert!(e.contains("rack:A") && e.contains("rack:C"), "{e}");
    let e = Domain::parse("disk:A1/13", &s).unwrap_err();
    assert!(e.contains("1..12"), "{e}");
    let e = Domain::parse("disk:A1", &s).unwrap_err();
    assert!(e.contains("disk:A1/1"), "{e}");
    let e = Domain::parse("meteor:A", &s).unwrap_err();
    assert!(e.contains("rack, array"), "{e}");
    assert!(Domain::parse("rack", &s).unwrap_err().contains("KIND:NAME"));
    assert!(Domain::parse("host:h1", &s).unwrap_err().contains("no shared hosts"));
    // Case-insensitive fallback returns the site's spelling.
    assert_eq!(Domain::parse("rack:a", &s).unwrap().to_string(), "rack:A");
}

#[test]
fn rf5_on_221_survives_any_rack_and_two_servers() {
    let s = five_on_221(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 5, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 5, false)
        .build();
    let t = tolerates(&s, &l);
    assert_eq!(t.racks, 1);
    assert_eq!(t.servers, 2);
    assert_eq!(t.arrays, 1);
    assert_eq!(t, brute_force(&s, &l));
    for r in ["rack:A", "rack:B", "rack:C"] {
        let sc = evaluate(&s, &l, &fail(&s, &[r]));
        assert_eq!(status_of(&sc, "orders"), Status::Degraded, "{r}");
        assert_eq!(sc.meta.status, Status::Degraded, "{r}");
    }
    // Five replicas lose two and keep writing; a third loss stops them.
    let sc = evaluate(&s, &l, &fail(&s, &["server:n1", "server:n3"]));
    assert_eq!(status_of(&sc, "orders"), Status::Degraded);
    let sc = evaluate(&s, &l, &fail(&s, &["server:n1", "server:n3", "server:n5"]));
    assert_eq!(status_of(&sc, "orders"), Status::Unavailable);
    assert!(sc.assets[0].stall_s.is_none());
    assert_eq!(sc.assets[0].stall_until, vec!["server:n1", "server:n3", "server:n5"]);
}

#[test]
fn replica_counts_tolerate_what_quorum_allows() {
    let s = five_on_221(SyncMode::Always);
    for (r, servers) in [(1u8, 0u32), (2, 0), (3, 1), (4, 1), (5, 2)] {
        let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, r, &[])
            .own_groups(Raid::Raid1, 2)
            .stream("s", r, false)
            .build();
        assert_eq!(tolerates(&s, &l).servers, servers, "R{r}");
        assert_eq!(tolerates(&s, &l), brute_force(&s, &l), "R{r}");
    }
    // Three replicas lose one.
    let s3 = three_racks(SyncMode::Always);
    let l = LayoutBuilder::new(&s3, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("s", 3, true)
        .build();
    assert_eq!(
        status_of(&evaluate(&s3, &l, &fail(&s3, &["server:n2"])), "s"),
        Status::Degraded
    );
    assert_eq!(
        status_of(&evaluate(&s3, &l, &fail(&s3, &["server:n2", "server:n3"])), "s"),
        Status::Unavailable
    );
}

#[test]
fn three_racks_r3_unique_survive_one_rack_and_stall_on_two() {
    let s = three_racks(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, true)
        .consumer("orders-c", "orders")
        .build();
    assert_eq!(
        tolerates(&s, &l),
        Tolerance {
            racks: 1,
            arrays: 1,
            servers: 1,
            // Two disks of each of two mirrors.
            disks: 3
        }
    );
    let one = evaluate(&s, &l, &fail(&s, &["rack:A"]));
    assert_eq!(status_of(&one, "orders"), Status::Degraded);
    assert_eq!(status_of(&one, "orders-c"), Status::Degraded);
    assert!(!one.any_acked_loss_risk());
    let two = evaluate(&s, &l, &fail(&s, &["rack:A", "rack:B"]));
    assert_eq!(status_of(&two, "orders"), Status::Unavailable);
    assert_eq!(status_of(&two, "orders-c"), Status::Unavailable);
    assert_eq!(two.meta.status, Status::Unavailable);
    // Two racks' power lost together: a quorum of replicas lost their page cache.
    assert!(two.assets[0].acked_loss_risk);
}

#[test]
fn single_rack_is_one_power_event_from_total_outage() {
    let mk = |sync| site(&[rack("A", &["n1", "n2", "n3"], &[("A1", 12)])], sync);
    for (sync, risk) in [(SyncMode::Interval(120), true), (SyncMode::Always, false)] {
        let s = mk(sync);
        let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
            .own_groups(Raid::Raid1, 2)
            .stream("orders", 3, false)
            .build();
        assert_eq!(tolerates(&s, &l).racks, 0);
        let sc = evaluate(&s, &l, &fail(&s, &["power:A"]));
        assert_eq!(sc.worst(), Status::Unavailable);
        assert_eq!(sc.assets[0].acked_loss_risk, risk, "{sync:?}");
        assert_eq!(sc.meta.acked_loss_risk, risk);
        // The array in the rack went too, but its data is intact: nothing is lost for good.
        assert!(sc.destroyed.is_empty());
    }
}

#[test]
fn pattern3_one_disk_loses_everything() {
    let s = three_racks(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P3, Raid::Raid0, 3, &[])
        .shared_group("A1", Raid::Raid0, 4)
        .stream("orders", 3, true)
        .stream("events", 3, false)
        .build();
    assert_eq!(tolerates(&s, &l).disks, 0);
    assert_eq!(tolerates(&s, &l), brute_force(&s, &l));
    let sc = evaluate(&s, &l, &fail(&s, &["disk:A1/2"]));
    assert!(sc.assets.iter().all(|a| a.status == Status::DataLost));
    assert_eq!(sc.meta.status, Status::DataLost);
    assert_eq!(sc.destroyed.len(), 3);
    assert!(sc.actions.iter().any(|a| a.contains("restore from backup")));
    // A hot spare (slot 12) failing harms nothing.
    let sc = evaluate(&s, &l, &fail(&s, &["disk:A1/12"]));
    assert_eq!(sc.worst(), Status::Ok);
}

#[test]
fn raid1_needs_two_disks_of_one_group() {
    let s = three_racks(SyncMode::Always);
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, false)
        .build();
    // One disk: degraded group, rebuild while serving; nothing down.
    let sc = evaluate(&s, &l, &fail(&s, &["disk:A1/1"]));
    assert_eq!(sc.worst(), Status::Ok);
    assert!(!sc.groups[0].destroyed);
    // Both disks of n1's mirror: n1's store is gone, the stream goes on.
    let sc = evaluate(&s, &l, &fail(&s, &["disk:A1/1", "disk:A1/2"]));
    assert_eq!(status_of(&sc, "orders"), Status::Degraded);
    assert!(sc.actions.iter().any(|a| a.contains("peer-remove n1")));
    // Two mirrors gone: quorum of the stream destroyed.
    let sc = evaluate(&s, &l, &fail(&s, &["disk:A1/1", "disk:A1/2", "disk:B1/1", "disk:B1/2"]));
    assert_eq!(status_of(&sc, "orders"), Status::DataLost);
    assert_eq!(tolerates(&s, &l).disks, 3);
}

#[test]
fn net_never_loses_data() {
    let s = five_on_221(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, false)
        .stream("one", 1, false)
        .build();
    let all = Domain::universe(DomainKind::Net, &s, &l);
    for k in 1..=all.len() {
        for_each_subset(all.len(), k, &mut |idx| {
            let f: Vec<Domain> = idx.iter().map(|&i| all[i].clone()).collect();
            let sc = evaluate(&s, &l, &f);
            assert!(sc.worst() < Status::DataLost);
            assert!(!sc.any_acked_loss_risk());
            true
        });
    }
}

#[test]
fn killing_a_leader_process_stalls_one_election_without_loss() {
    let s = three_racks(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, true)
        .build();
    let sc = evaluate(&s, &l, &fail(&s, &["process:n1"]));
    let o = &sc.assets[0];
    assert_eq!(o.status, Status::Degraded);
    assert_eq!(o.stall_s, Some(ELECTION_STALL_S));
    assert!(!o.acked_loss_risk);
    assert!(sc.destroyed.is_empty());
    // A host crash of one server is one replica's cache: below quorum, no risk either.
    let sc = evaluate(&s, &l, &fail(&s, &["server:n1"]));
    assert!(!sc.any_acked_loss_risk());
    // Wiping a minority is no loss; wiping a quorum is.
    assert_eq!(evaluate(&s, &l, &fail(&s, &["wipe:n1"])).worst(), Status::Degraded);
    assert_eq!(
        evaluate(&s, &l, &fail(&s, &["wipe:n1", "wipe:n2"])).worst(),
        Status::DataLost
    );
}

#[test]
fn pinned_sets_and_consumers_follow_their_servers() {
    let s = five_on_221(SyncMode::Always);
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .pinned("a", "s1", &["n1", "n3", "n5"])
        .consumer("a-c", "a")
        .build();
    // n2 and n4 are not in the set: failing both leaves the stream untouched.
    let sc = evaluate(&s, &l, &fail(&s, &["server:n2", "server:n4"]));
    assert_eq!(status_of(&sc, "a"), Status::Ok);
    assert_eq!(status_of(&sc, "a-c"), Status::Ok);
    let sc = evaluate(&s, &l, &fail(&s, &["server:n1", "server:n3"]));
    assert_eq!(status_of(&sc, "a-c"), Status::Unavailable);
    assert_eq!(tolerates(&s, &l), brute_force(&s, &l));
}

#[test]
fn array_outage_downs_every_lun_on_it_and_counts_as_cache_loss() {
    let s = site(
        &[
            rack("A", &["n1", "n2"], &[("A1", 12)]),
            rack("B", &["n3"], &[("B1", 12)]),
        ],
        SyncMode::Interval(120),
    );
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, false)
        .build();
    let sc = evaluate(&s, &l, &fail(&s, &["array:A1"]));
    assert_eq!(sc.down.len(), 2);
    assert_eq!(status_of(&sc, "orders"), Status::Unavailable);
    assert!(sc.assets[0].acked_loss_risk);
    assert_eq!(tolerates(&s, &l).arrays, 0);
}

#[test]
fn subsets_enumerate_binomially() {
    let mut n = 0;
    for_each_subset(6, 3, &mut |_| {
        n += 1;
        true
    });
    assert_eq!(n, 20);
    let mut n = 0;
    for_each_subset(3, 0, &mut |_| {
        n += 1;
        true
    });
    assert_eq!(n, 1);
}

#[test]
fn large_site_tolerates_is_computed() {
    let (s, l) = fixture::large(24, 4, 2, 12, 500);
    let t = tolerates(&s, &l);
    assert_eq!(t.servers, 1);
    // Streams without rack uniqueness may put a quorum in one rack of four servers: NATS is free to.
    assert_eq!(t.racks, 0);
    assert_eq!(t.disks, 3);
}

/// A random small site and layout, from proptest's numbers.
#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) servers_per_rack: Vec<usize>,
    sync_always: bool,
    shape: u8,
    streams: Vec<(u8, bool)>,
    cross_rack_lun: bool,
}

pub(super) fn build(case: &Case) -> (Site, Layout) {
    let names: Vec<(String, Vec<String>, String)> = case
        .servers_per_rack
        .iter()
        .enumerate()
        .map(|(r, &n)| {
            (
                format!("R{r}"),
                (0..n).map(|i| format!("n{r}{i}")).collect(),
                format!("A{r}"),
            )
        })
        .collect();
    let specs: Vec<RackSpec> = names
        .iter()
        .map(|(r, s, a)| RackSpec {
            name: r,
            servers: s.iter().map(|x| x.as_str()).collect(),
            arrays: vec![(a.as_str(), 12)],
        })
        .collect();
    let sync = if case.sync_always {
        SyncMode::Always
    } else {
        SyncMode::Interval(120)
    };
    let s = site(&specs, sync);
    let n = s.servers.len();
    let racks = s.racks.len();
    let mut b = match case.shape % 4 {
        0 => LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[]).own_groups(Raid::Raid1, 2),
        1 => LayoutBuilder::new(&s, Pattern::P2, Raid::Raid0, 3, &[]).own_groups(Raid::Raid0, 1),
        2 => LayoutBuilder::new(&s, Pattern::P3, Raid::Raid0, 3, &[]).shared_group("A0", Raid::Raid0, 3),
        _ => LayoutBuilder::new(&s, Pattern::Raid6, Raid::Raid6, 3, &[]).shared_group("A0", Raid::Raid6, 6),
    };
    if case.cross_rack_lun && case.shape % 4 < 2 && racks > 1 {
        // Move the first server's LUN to the last rack's array: racks then overlap in what they take down.
        let last = format!("A{}", racks - 1);
        let g = b.group(&last, Raid::Raid1, 2);
        let first = s.servers[0].name.clone();
        let mut l = b.build();
        l.luns.retain(|x| x.server != 0);
        l.luns.push(crate::layout::Lun {
            group: g,
            server: 0,
            size_bytes: 1,
        });
        let _ = first;
        b = LayoutBuilder::from_layout(&s, l);
    }
    for (i, &(r, unique)) in case.streams.iter().enumerate() {
        let r = (r as usize).clamp(1, n) as u8;
        let unique = unique && racks >= r as usize;
        b = b.stream(&format!("s{i}"), r, unique);
        if i == 0 {
            b = b.consumer("s0-c", "s0");
        }
    }
    let l = b.build();
    (s, l)
}

pub(super) fn case_strategy() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(1usize..=3, 1..=3),
        any::<bool>(),
        0u8..4,
        prop::collection::vec((1u8..=5, any::<bool>()), 1..=3),
        any::<bool>(),
    )
        .prop_map(|(servers_per_rack, sync_always, shape, streams, cross_rack_lun)| Case {
            servers_per_rack,
            sync_always,
            shape,
            streams,
            cross_rack_lun,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn tolerates_agrees_with_brute_force(case in case_strategy()) {
        let (s, l) = build(&case);
        prop_assert_eq!(tolerates(&s, &l), brute_force(&s, &l));
    }

    #[test]
    fn status_is_monotone(case in case_strategy(), picks in prop::collection::vec(0usize..1000, 1..5)) {
        let (s, l) = build(&case);
        let all: Vec<Domain> = DomainKind::ALL.iter().flat_map(|&k| Domain::universe(k, &s, &l)).collect();
        let model = Model::new(&s, &l);
        let mut failed: Vec<Domain> = Vec::new();
        let mut prev = model.evaluate(&failed);
        for p in picks {
            failed.push(all[p % all.len()].clone());
            let next = model.evaluate(&failed);
            prop_assert!(next.meta.status >= prev.meta.status);
            prop_assert!(next.meta.acked_loss_risk >= prev.meta.acked_loss_risk);
            for (a, b) in prev.assets.iter().zip(&next.assets) {
                prop_assert!(b.status >= a.status, "{} went from {:?} to {:?} adding {}", a.name, a.status, b.status, failed.last().unwrap());
                prop_assert!(b.acked_loss_risk >= a.acked_loss_risk);
                prop_assert!(b.replicas_down >= a.replicas_down);
            }
            prev = next;
        }
    }
}

#[test]
fn sweep_counts_every_combination_once() {
    let s = five_on_221(SyncMode::Interval(120));
    let l = LayoutBuilder::new(&s, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, false)
        .stream("one", 1, false)
        .build();
    let m = Model::new(&s, &l);
    let kinds = [
        DomainKind::Rack,
        DomainKind::Server,
        DomainKind::Disk,
        DomainKind::Process,
    ];
    let sw = sweep(&m, &kinds, 2);
    let n = sw.domains as u64;
    assert_eq!(sw.combinations, n + n * (n - 1) / 2);
    assert_eq!(sw.classes.iter().map(|c| c.count).sum::<u64>(), sw.combinations);
    assert_eq!(combinations(sw.domains, 2), sw.combinations);
    // Worst first.
    assert!(sw
        .classes
        .windows(2)
        .all(|w| w[0].example.worst() >= w[1].example.worst()));
    assert_eq!(sw.classes[0].example.worst(), Status::DataLost);
}

/// Outcome classes as (outcome key → count), for comparing sweeps.
fn class_counts(sw: &Sweep) -> std::collections::BTreeMap<Vec<(Status, bool)>, u64> {
    sw.classes
        .iter()
        .map(|c| {
            let mut k = vec![(c.example.meta.status, c.example.meta.acked_loss_risk)];
            k.extend(c.example.assets.iter().map(|a| (a.status, a.acked_loss_risk)));
            (k, c.count)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// The signature-based sweep finds the same outcomes with the same counts as evaluating every
    /// combination in full.
    #[test]
    fn sweep_agrees_with_full_enumeration(case in case_strategy(), k in 1usize..=2) {
        let (s, l) = build(&case);
        let m = Model::new(&s, &l);
        let kinds = DomainKind::ALL;
        let fast = sweep(&m, &kinds, k);
        let full = sweep_exhaustive(&m, &kinds, k);
        prop_assert_eq!(fast.combinations, full.combinations);
        prop_assert_eq!(class_counts(&fast), class_counts(&full));
    }

    /// whatif's single failures agree with tolerates: a kind is tolerated at least once exactly when every
    /// single failure of that kind leaves everything writable.
    #[test]
    fn single_failures_agree_with_tolerates(case in case_strategy()) {
        let (s, l) = build(&case);
        let m = Model::new(&s, &l);
        let t = tolerates(&s, &l);
        for (name, kind) in TOLERANCE_KINDS {
            let sw = sweep(&m, &[kind], 1);
            let all_writable = sw.classes.iter().all(|c| c.example.worst_asset().writable());
            let tol = match name { "racks" => t.racks, "arrays" => t.arrays, "servers" => t.servers, _ => t.disks };
            if sw.domains == 0 {
                continue;
            }
            prop_assert_eq!(tol >= 1, all_writable, "{}", name);
        }
    }
}
