//! Seed claims as regression tests, and property tests: `tolerates` against the brute-force checker,
//! monotone statuses.

use super::fixture::{site, LayoutBuilder, RackSpec};
use super::*;
use crate::layout::{Layout, Raid};
use crate::site::{Pattern, Site, Tolerance};
use crate::units::SyncMode;
use proptest::prelude::*;

fn rack<'a>(name: &'a str, servers: &[&'a str], arrays: &[(&'a str, u32)]) -> RackSpec<'a> {
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
fn five_on_221(sync: SyncMode) -> Site {
    site(
        &[
            rack("A", &["n1", "n2"], &[("A1", 12)]),
            rack("B", &["n3", "n4"], &[("B1", 12)]),
            rack("C", &["n5"], &[("C1", 12)]),
        ],
        sync,
    )
}

fn three_racks(sync: SyncMode) -> Site {
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
struct Case {
    servers_per_rack: Vec<usize>,
    sync_always: bool,
    shape: u8,
    streams: Vec<(u8, bool)>,
    cross_rack_lun: bool,
}

fn build(case: &Case) -> (Site, Layout) {
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

fn case_strategy() -> impl Strategy<Value = Case> {
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

/// A copy of the site with failure rates raised so that a few thousand simulated years see every kind of
/// event (the model is the same; only the numbers are bigger).
fn stressed(mut s: Site) -> Site {
    s.failure_rates = vec![
        ("server_crash_per_year".into(), 20.0),
        ("process_crash_per_year".into(), 10.0),
        ("server_afr".into(), 2.0),
        ("disk_afr".into(), 5.0),
        ("array_outage_per_year".into(), 5.0),
        ("rack_power_per_year".into(), 5.0),
        ("rack_net_per_year".into(), 5.0),
        ("not_return_after_power".into(), 0.3),
    ];
    s
}

#[test]
fn yearly_figures_follow_the_seed_claims() {
    let cat = crate::catalog::Catalog::builtin();
    // One rack: every rack power event is an outage and, with delayed sync, an acked-loss event.
    let mut one = site(
        &[rack("A", &["n1", "n2", "n3"], &[("A1", 12)])],
        SyncMode::Interval(120),
    );
    fixture::add_stream(&mut one, "orders", 1000.0);
    let l1 = LayoutBuilder::new(&one, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, false)
        .build();
    let y1 = yearly(&one, &l1, &cat);
    assert_eq!(y1.method, "exact");
    let mut three = three_racks(SyncMode::Interval(120));
    fixture::add_stream(&mut three, "orders", 1000.0);
    let l3 = LayoutBuilder::new(&three, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, true)
        .build();
    let y3 = yearly(&three, &l3, &cat);
    // A rack per replica is far more available than one rack.
    assert!(y1.assets[0].unavailable_min_per_year > 10.0 * y3.assets[0].unavailable_min_per_year);
    assert!(
        y1.assets[0].acked_msgs_lost_per_year > 100.0 * y3.assets[0].acked_msgs_lost_per_year,
        "{} vs {}",
        y1.assets[0].acked_msgs_lost_per_year,
        y3.assets[0].acked_msgs_lost_per_year
    );
    // 0.1 power events a year × 30 s × 1000 msg/s ≈ 3,000 messages a year, plus array outages.
    assert!(y1.assets[0].acked_msgs_lost_per_year > 2000.0);
    // ≈ 0.1 power events per year × 1 h 5 min ≈ 6.5 min/yr, plus the rest.
    assert!(
        y1.assets[0].unavailable_min_per_year > 5.0,
        "{}",
        y1.assets[0].unavailable_min_per_year
    );
    // With sync always, nothing acknowledged is lost.
    let mut one_always = one.clone();
    one_always.nats.sync = SyncMode::Always;
    assert_eq!(yearly(&one_always, &l1, &cat).acked_msgs_lost_per_year, 0.0);
    // R1 is unavailable during every planned restart of its server.
    let lr1 = LayoutBuilder::new(&three, Pattern::P1, Raid::Raid1, 1, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("single", 1, false)
        .build();
    let yr1 = yearly(&three, &lr1, &cat);
    assert!(yr1.assets[0].planned_unavailable_min_per_year > 0.0);
    assert_eq!(y3.assets[0].planned_unavailable_min_per_year, 0.0);
    // Pattern 2 (RAID 0 per server) loses data more often than pattern 1 (RAID 1 per server).
    let l2 = LayoutBuilder::new(&three, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, true)
        .build();
    let y2 = yearly(&three, &l2, &cat);
    assert!(y2.assets[0].data_lost_events_per_year > y3.assets[0].data_lost_events_per_year);
    assert!(y2.assets[0].mttdl_years.is_some());
}

#[test]
fn monte_carlo_is_the_same_on_any_number_of_threads() {
    let cat = crate::catalog::Catalog::builtin();
    let s = stressed(five_on_221(SyncMode::Interval(120)));
    let l = LayoutBuilder::new(&s, Pattern::P2, Raid::Raid0, 3, &[])
        .own_groups(Raid::Raid0, 1)
        .stream("orders", 3, false)
        .build();
    let m = Model::new(&s, &l);
    let rel = Reliability::new(&m, &cat);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| monte_carlo(&rel, 350, 2, 42, None))
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    assert_ne!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&monte_carlo(&rel, 350, 2, 43, None)).unwrap()
    );
}

/// Seed 004's example site and its plan (three guests on one host).
pub(super) fn seed004_plan() -> (crate::catalog::Catalog, crate::site::Site, crate::plan::Plan) {
    let cat = crate::catalog::Catalog::builtin();
    let site = crate::site::load(
        std::path::Path::new("examples/seed004-three-guests-one-host.yaml"),
        &cat,
    )
    .unwrap();
    let plan = crate::plan::build(&site, &cat);
    (cat, site, plan)
}

/// The meta group holds no messages: its acknowledged-loss estimate and interval are 0 (seed004's simulate
/// printed 0 with an interval of 2.19-2.22: the unscaled event rate).
#[test]
fn the_meta_group_loses_no_acked_messages_and_its_interval_says_so() {
    let (cat, site, plan) = seed004_plan();
    let l = &plan.layouts[0].layout;
    let m = Model::new(&site, l);
    let rel = Reliability::new(&m, &cat);
    let y = monte_carlo(&rel, 2000, 1, 42, None);
    let lossy = y.assets.iter().find(|a| a.acked_msgs_lost_per_year > 0.0);
    assert!(lossy.is_some(), "the site must lose acked messages");
    assert_eq!(y.meta.acked_msgs_lost_per_year, 0.0);
    assert_eq!(y.meta.ci95.as_ref().unwrap().acked_msgs_lost_per_year, (0.0, 0.0));
}

/// Bonferroni-corrected z: two-sided α = 1e-7 over up to 1,000 comparisons.
const Z: f64 = 7.0;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 6,
        rng_seed: proptest::test_runner::RngSeed::Fixed(20_261_130),
        ..ProptestConfig::default()
    })]

    /// The Monte Carlo and the exact chain agree (same truncation) within corrected intervals. The MC's
    /// standard error is floored by a conservative bound from the exact mean (compound Poisson with
    /// exponential episodes: variance ≤ 2 × longest mean repair × mean), so a lucky run with no events
    /// cannot fail the test.
    #[test]
    fn exact_and_monte_carlo_agree(case in case_strategy().prop_filter("small", |c| c.servers_per_rack.iter().sum::<usize>() <= 5)) {
        let cat = crate::catalog::Catalog::builtin();
        let (s, l) = build(&case);
        let s = stressed(s);
        let m = Model::new(&s, &l);
        let rel = Reliability::new(&m, &cat);
        let cap = 3;
        let ex = exact(&rel, cap, 1_000_000).unwrap();
        let years = 3000;
        let mc = monte_carlo(&rel, years, 1, 7, Some(cap));
        let n = years as f64;
        let d_max = rel.components.iter().map(|c| c.repair_s).fold(0.0, f64::max);
        for (e, m) in std::iter::once((&ex.meta, &mc.meta)).chain(ex.assets.iter().zip(&mc.assets)) {
            let ci = m.ci95.as_ref().unwrap();
            // Unavailable minutes (unplanned part is random; planned is identical in both).
            let mc_se = (ci.unavailable_min_per_year.1 - ci.unavailable_min_per_year.0) / (2.0 * 1.96);
            let floor = (2.0 * d_max / 60.0 * e.unavailable_min_per_year / n).sqrt();
            let tol = Z * mc_se.max(floor) + 1e-9;
            prop_assert!((e.unavailable_min_per_year - m.unavailable_min_per_year).abs() <= tol,
                "{}: exact {} vs mc {} (tol {})", e.name, e.unavailable_min_per_year, m.unavailable_min_per_year, tol);
            // Data-lost events per year (counts: variance at least the mean for Poisson-like counts; clusters
            // of up to all assets at once bound it by 4 × mean here).
            let mc_se = (ci.data_lost_events_per_year.1 - ci.data_lost_events_per_year.0) / (2.0 * 1.96);
            let floor = (4.0 * e.data_lost_events_per_year / n).sqrt();
            let tol = Z * mc_se.max(floor) + 1e-9;
            prop_assert!((e.data_lost_events_per_year - m.data_lost_events_per_year).abs() <= tol,
                "{}: exact dl {} vs mc {} (tol {})", e.name, e.data_lost_events_per_year, m.data_lost_events_per_year, tol);
        }
        // Acked-loss events (any asset): compare the totals via the meta group and assets' message counts.
        prop_assert!((ex.acked_msgs_lost_per_year - mc.acked_msgs_lost_per_year).abs()
            <= Z * (ex.acked_msgs_lost_per_year.max(mc.acked_msgs_lost_per_year) * 4.0 * 30.0 * 2000.0 / n).sqrt() + 1e-9,
            "acked exact {} vs mc {}", ex.acked_msgs_lost_per_year, mc.acked_msgs_lost_per_year);
    }
}

#[test]
fn chain_size_and_design_fallback() {
    assert_eq!(chain_states(4, 2), 1 + 4 + 6);
    assert_eq!(chain_states(3, 5), 8);
    // A large site is beyond the exact chain: design gets a Monte Carlo estimate.
    let (s, l) = fixture::large(12, 4, 2, 12, 10);
    let y = yearly(&s, &l, &crate::catalog::Catalog::builtin());
    assert_eq!(y.method, "monte_carlo");
    assert_eq!(y.assets.len(), l.assets.len());
}

#[test]
fn rank_key_compares_orders_of_magnitude() {
    let mut a = Yearly {
        p_any_data_lost_per_year: 3e-6,
        acked_msgs_lost_per_year: 0.0,
        worst_unavailable_min_per_year: 12.0,
        ..Yearly::default()
    };
    let b = Yearly {
        p_any_data_lost_per_year: 7e-6,
        acked_msgs_lost_per_year: 0.0,
        worst_unavailable_min_per_year: 19.0,
        ..Yearly::default()
    };
    assert_eq!(a.rank_key(), b.rank_key());
    a.p_any_data_lost_per_year = 0.0;
    assert!(a.rank_key() < b.rank_key());
}

#[test]
fn election_stalls_by_group_are_each_assets_own_sum() {
    // Every layout of a site of R1/R3/R5 streams with consumers on mirrored and striped volumes: the
    // stall per asset, summed once per group of assets with the same class and expected servers, is bit
    // for bit the plain sum over every component for each asset; and the placement classes are numbered
    // as a map of each asset's sorted server set numbers them.
    let t = crate::sitegen::test_site(
        "site: stalls\nnats: { replicas: [3, 5] }\npolicy: { patterns: [\"1\", \"2\"] }\n",
        3,
        2,
        |_| "model: EF600, disk_model: nvme-3.84t, disks: 6".to_string(),
        24,
        |s| {
            format!(
                "msgs_per_s: 10, msg_size: 1KiB, retention: 1h, consumers: {}, replicas: {}",
                s % 3,
                [1, 3, 5][s % 3]
            )
        },
    );
    let cat = crate::catalog::Catalog::builtin();
    let site = crate::site::parse_str(&t, "stalls.yaml", &cat).unwrap();
    let mut compared = 0;
    for l in crate::layout::enumerate(&site, &cat)
        .iter()
        .filter(|l| !l.servers.is_empty())
    {
        let model = Model::new(&site, l);
        let rel = Reliability::new(&model, &cat);
        // Classes: the first appearance of each (sorted expected servers, replicas) numbers it.
        let mut seen: std::collections::HashMap<(Vec<usize>, u8, bool), usize> = Default::default();
        for (i, a) in l.assets.iter().enumerate() {
            let src = &l.assets[model.source(i)];
            let expected = if a.expected.is_empty() {
                &src.expected
            } else {
                &a.expected
            };
            let (mut key, u) = if expected.len() == a.replicas as usize {
                (expected.to_vec(), false)
            } else {
                let (c, u) = model.placement(i);
                (c.to_vec(), u)
            };
            key.sort_unstable();
            let next = seen.len() + 1;
            assert_eq!(
                rel.prep.asset_class[i],
                *seen.entry((key, a.replicas, u)).or_insert(next),
                "{}",
                l.id
            );
        }
        // Stalls: each asset's own sum, component by component.
        for (i, a) in l.assets.iter().enumerate() {
            let mut want = 0.0f64;
            for (c, comp) in rel.components.iter().enumerate() {
                if comp.rate_per_s <= 0.0 || a.expected.is_empty() {
                    continue;
                }
                let k = rel.prep.asset_class[i];
                if rel.single[c][2 * k] != Status::Degraded as u8 {
                    continue;
                }
                let (eff, _, _) = model.effects(std::slice::from_ref(&comp.domain));
                let per_year = comp.rate_per_s * crate::units::YEAR_S * ELECTION_STALL_S;
                let down = a.expected.iter().filter(|&&s| eff[s].down).count();
                want += per_year * down as f64 / a.expected.len() as f64;
            }
            assert_eq!(
                rel.election_stall_s[1 + i].to_bits(),
                want.to_bits(),
                "{} {}",
                l.id,
                a.name
            );
            compared += usize::from(want > 0.0);
        }
    }
    assert!(compared > 50, "{compared} assets with a stall");
}
