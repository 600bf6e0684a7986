//! Issue 15's review findings as tests: the meta group apart from streams, hot spares, RAID 10 pairs,
//! Jepsen's crash + pause, recovery after quorum loss, standbys outside the failed domains.

use super::fixture::{self, site, LayoutBuilder, RackSpec};
use super::*;
use crate::layout::{Layout, Raid};
use crate::site::{Pattern, Site};
use crate::units::SyncMode;

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

/// The site: racks A(a1, a2, a3), B(b1), C(c1); an R3 stream on distinct racks.
fn a3_b1_c1() -> (Site, Layout) {
    let s = site(
        &[
            rack("A", &["a1", "a2", "a3"], &[("A1", 12)]),
            rack("B", &["b1"], &[("B1", 12)]),
            rack("C", &["c1"], &[("C1", 12)]),
        ],
        SyncMode::Interval(120),
    );
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid1, 3, &[])
        .own_groups(Raid::Raid1, 2)
        .stream("orders", 3, true)
        .build();
    (s, l)
}

#[test]
fn a_rack_holding_a_meta_majority_stops_the_api_not_the_streams() {
    let (s, l) = a3_b1_c1();
    let t = tolerates(&s, &l);
    let m = tolerates_meta(&s, &l);
    assert_eq!(t.racks, 1, "the R3 stream keeps a quorum whichever rack fails");
    assert_eq!(m.racks, 0, "rack A holds 3 of the meta group's 5 peers");
    assert_eq!(t, brute_force(&s, &l));
    assert_eq!(m, brute_force_meta(&s, &l));
    let sc = evaluate(&s, &l, &fail(&s, &["rack:A"]));
    assert!(sc.assets[0].status.writable());
    assert_eq!(sc.meta.status, Status::Unavailable);
    assert!(sc.worst_asset().writable());
}

#[test]
fn yearly_reports_meta_downtime_as_the_apis() {
    let (mut s, l) = a3_b1_c1();
    fixture::add_stream(&mut s, "orders", 100.0);
    let y = yearly(&s, &l, &crate::catalog::Catalog::builtin());
    assert_eq!(y.worst_unavailable, "orders");
    assert!(y.api_unavailable_min_per_year > y.worst_unavailable_min_per_year);
    assert_eq!(y.api_unavailable_min_per_year, y.meta.unavailable_min_per_year);
}

/// One server per rack, each on its own 4-disk RAID 10 group.
fn raid10_three_racks() -> (Site, Layout) {
    let s = site(
        &[
            rack("A", &["n1"], &[("A1", 6)]),
            rack("B", &["n2"], &[("B1", 6)]),
            rack("C", &["n3"], &[("C1", 6)]),
        ],
        SyncMode::Always,
    );
    let l = LayoutBuilder::new(&s, Pattern::P1, Raid::Raid10, 1, &[])
        .own_groups(Raid::Raid10, 4)
        .stream("single", 1, false)
        .build();
    (s, l)
}

#[test]
fn raid10_loses_its_volumes_only_to_both_disks_of_one_pair() {
    let (s, l) = raid10_three_racks();
    let m = Model::new(&s, &l);
    assert_eq!(m.mirror_pairs(0), vec![[1, 2], [3, 4]]);
    let across = m.evaluate(&fail(&s, &["disk:A1/1", "disk:A1/3"]));
    assert!(across.destroyed.is_empty(), "one disk of each pair: degraded, not destroyed");
    assert!(!across.groups[0].destroyed);
    let same = m.evaluate(&fail(&s, &["disk:A1/1", "disk:A1/2"]));
    assert_eq!(same.destroyed.len(), 1);
    assert_eq!(same.groups[0].lost_pairs, vec![[1, 2]]);
    assert!(same.actions.iter().any(|a| a.contains("mirror pair (1,2) lost both disks")));
    // The sweep (signatures) agrees: of the 6 two-disk combinations in a group, 2 destroy it.
    let sw = sweep(&m, &[DomainKind::Disk], 2);
    let lost: u64 = sw
        .classes
        .iter()
        .filter(|c| c.example.failed.len() == 2 && !c.example.destroyed.is_empty())
        .map(|c| c.count)
        .sum();
    assert_eq!(lost, 3 * 2, "two pairs per group, three groups");
}
