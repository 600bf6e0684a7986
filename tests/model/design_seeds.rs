//! The seed's arguments as regression tests: each seed example gives the verdict seed 000 argues for.

use natsplan::catalog::Catalog;
use natsplan::plan::{build, Plan, PlannedLayout, Verdict};

fn plan_file(path: &str) -> Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::load(std::path::Path::new(path), &cat).expect("example parses");
    build(&site, &cat)
}

fn plan_text(yaml: &str) -> Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "inline.yaml", &cat).expect("site parses");
    build(&site, &cat)
}

fn find<'a>(plan: &'a Plan, prefix: &str) -> &'a PlannedLayout {
    plan.layouts
        .iter()
        .find(|l| l.id.starts_with(prefix))
        .unwrap_or_else(|| {
            panic!(
                "no layout {prefix}*; have {:?}",
                plan.layouts.iter().map(|l| &l.id).collect::<Vec<_>>()
            )
        })
}

/// Seed 000's table: alpha…echo on racks A (2), B (2), C (1), RAID 0 with a spare per array.
const FIVE: &str = r#"
site: seed-five
nats: { replicas: [3, 5] }
racks:
  - { name: A, servers: [alpha, bravo], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [charlie, delta], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [echo], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }] }
workload:
  streams: [{ name: events, msgs_per_s: 500, msg_size: 1KiB, retention: 24h }]
policy: { patterns: ["2"], min_tolerated: { racks: 1 } }
"#;

#[test]
fn rf5_on_two_two_one_survives_any_rack_and_two_servers() {
    let plan = plan_text(FIVE);
    let l = find(&plan, "p2-raid0-r5-Ax2.Bx2.Cx1");
    assert_eq!(l.servers.len(), 5);
    assert_eq!(l.disks_used, 8, "5 RAID 0 disks + 3 spares, as in the seed's table");
    assert_eq!(l.hot_spares, 3);
    assert!(l.tolerates.racks >= 1, "{:?}", l.tolerates);
    assert_eq!(l.tolerates.servers, 2);
    assert_eq!(l.tolerates.disks, 2, "each RAID 0 disk is one server");
    assert_ne!(l.verdict, Verdict::Rejected, "{:?}", l.reasons);
    // R5 over 3 racks cannot use unique_tag: replica sets are pinned.
    assert!(l.unique_tag.is_none());
    assert!(!l.replica_sets.is_empty());
    // RF3 on the same five servers tolerates one server.
    let r3 = find(&plan, "p2-raid0-r3-Ax2.Bx2.Cx1");
    assert_eq!(r3.tolerates.servers, 1);
    assert_eq!(r3.unique_tag.as_deref(), Some("rack:"));
    // R5 outranks R3 here: it tolerates more servers at the same rack tolerance.
    assert!(l.rank < r3.rank);
}

#[test]
fn r2_tolerates_no_server() {
    let plan = plan_text(&FIVE.replace("replicas: [3, 5]", "replicas: [2]"));
    for l in &plan.layouts {
        assert_eq!(l.tolerates.servers, 0, "{}", l.id);
        assert!(
            l.reasons.iter().any(|r| r.contains("R2 tolerates no server failure")),
            "{:?}",
            l.reasons
        );
        assert_ne!(l.verdict, Verdict::Recommended);
    }
}

#[test]
fn single_rack_tolerates_no_rack() {
    let plan = plan_file("examples/one-rack-raid10.yaml");
    assert!(!plan.layouts.is_empty());
    for l in &plan.layouts {
        assert_eq!(l.tolerates.racks, 0, "{}", l.id);
        assert!(
            l.reasons
                .iter()
                .any(|r| r.contains("single rack: one rack outage stops every stream")),
            "{:?}",
            l.reasons
        );
    }
    // The fixed RAID 10 input is respected: three RAID 10 groups of four disks.
    let l = find(&plan, "p1-raid10-r3-Ax3");
    assert_eq!(l.hardware().groups.len(), 3);
    assert!(l.hardware().groups.iter().all(|g| g.disks.len() == 4));
}

#[test]
fn pattern3_shared_stripe_tolerates_no_disk() {
    let yaml = r#"
site: stripe
nats: { replicas: [3] }
racks:
  - { name: A, servers: [n1, n2, n3], arrays: [{ name: A1, model: EF600, disk_model: nvme-3.84t, disks: 4, hot_spares: 1 }] }
workload:
  streams: [{ name: cache, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }]
policy: { patterns: ["3"] }
"#;
    let plan = plan_text(yaml);
    let l = find(&plan, "p3-raid0-r3-Ax3");
    assert_eq!(l.tolerates.disks, 0);
    assert_eq!(l.hardware().groups.len(), 1, "one shared stripe");
    assert!(
        l.reasons
            .iter()
            .any(|r| r.contains("one disk failure destroys all 3 servers' volumes")),
        "{:?}",
        l.reasons
    );
    assert_eq!(l.verdict, Verdict::Risky);
}

#[test]
fn three_racks_raid1_is_recommended_and_survives_a_rack() {
    let plan = plan_file("examples/three-racks-raid1.yaml");
    let best = &plan.layouts[0];
    assert_eq!(best.pattern, "1");
    assert_eq!(best.verdict, Verdict::Recommended, "{:?}", best.reasons);
    assert_eq!(best.tolerates.racks, 1);
    assert_eq!(best.tolerates.servers, 1);
    assert_eq!(best.unique_tag.as_deref(), Some("rack:"));
}

#[test]
fn rf3_tolerates_one_server_rf5_two() {
    let yaml = r#"
site: five-racks
nats: { replicas: [3, 5] }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: D, servers: [d1], arrays: [{ name: D1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: E, servers: [e1], arrays: [{ name: E1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
workload:
  streams: [{ name: events, msgs_per_s: 200, msg_size: 1KiB, retention: 24h }]
policy: { patterns: ["1"] }
"#;
    let plan = plan_text(yaml);
    let r3 = find(&plan, "p1-raid1-r3-Ax1.Bx1.Cx1.Dx1.Ex1");
    let r5 = find(&plan, "p1-raid1-r5-Ax1.Bx1.Cx1.Dx1.Ex1");
    assert_eq!(r3.tolerates.servers, 1);
    assert_eq!(r5.tolerates.servers, 2);
    assert_eq!(r5.tolerates.racks, 2, "unique_tag puts R5 on five racks");
    assert_eq!(r5.unique_tag.as_deref(), Some("rack:"));
}

#[test]
fn raid6_baseline_is_one_array_in_one_rack() {
    let plan = plan_file("examples/one-array-raid6.yaml");
    let r6 = find(&plan, "r6-raid6");
    assert_eq!(r6.tolerates.racks, 0);
    assert_eq!(r6.tolerates.arrays, 0);
    assert_eq!(r6.tolerates.disks, 2, "RAID 6 survives two disks");
    assert!(r6
        .reasons
        .iter()
        .any(|r| r.contains("single RAID 6 group on one array")));
}

#[test]
fn shared_host_is_called_out() {
    let plan = plan_file("examples/seed004-three-guests-one-host.yaml");
    let l = &plan.layouts[0];
    assert!(
        l.reasons
            .iter()
            .any(|r| r.contains("one host failure stops the meta group")),
        "{:?}",
        l.reasons
    );
    assert_ne!(l.verdict, Verdict::Recommended);
}

#[test]
fn capacity_too_small_is_rejected_with_numbers() {
    let plan = plan_text(&FIVE.replace(
        "msgs_per_s: 500, msg_size: 1KiB, retention: 24h",
        "msgs_per_s: 50000, msg_size: 4KiB, retention: 7d",
    ));
    for l in &plan.layouts {
        assert_eq!(l.verdict, Verdict::Rejected, "{}", l.id);
        assert!(
            l.reasons
                .iter()
                .any(|r| r.starts_with("capacity:") && r.contains("short")),
            "{:?}",
            l.reasons
        );
    }
}

#[test]
fn every_example_plans() {
    for e in std::fs::read_dir("examples").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let plan = plan_file(p.to_str().unwrap());
            assert!(!plan.layouts.is_empty(), "{} has no layouts", p.display());
        }
    }
}
