//! Heterogeneous sites (issue 16): group limits from the catalog, `raid:` as the level of an array's
//! groups, pattern 4 LUNs sized per server, arrays used from another rack, and mixed layouts where each
//! server gets the storage its hardware offers. Fixed cases from the issue, then properties on random
//! mixed sites: the independent checker (brute force) agrees with the fast tolerance on mixed layouts,
//! capacity is never negative, and a failure never destroys a volume it does not touch.

use natsplan::catalog::Catalog;
use natsplan::layout::Layout;
use natsplan::plan::{build, Plan, PlannedLayout, Verdict};
use natsplan::site::{Pattern, Site};
use natsplan::survival::{brute_force, tolerates, Domain, Model};
use proptest::prelude::*;

fn plan_of(yaml: &str) -> Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "site.yaml", &cat).unwrap_or_else(|e| panic!("{e}"));
    build(&site, &cat)
}

fn usable(p: &Plan) -> Vec<&PlannedLayout> {
    p.layouts.iter().filter(|l| l.verdict != Verdict::Rejected).collect()
}

const STREAM: &str =
    "workload:\n  streams:\n    - { name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h, replicas: 3 }\n";

#[test]
fn fifty_eight_raid6_disks_become_groups_within_the_limit_with_its_source() {
    let p = plan_of(&format!(
        "site: r6\nracks:\n  - name: A\n    servers: [n1, n2, n3]\n    arrays:\n      - {{ name: A1, model: E5700, disk_model: sas-ssd-3.84t, disks: 60, hot_spares: 2, raid: raid6 }}\n{STREAM}policy:\n  patterns: [\"raid6\"]\n"
    ));
    let l = p
        .layouts
        .iter()
        .find(|l| l.pattern == "raid6")
        .expect("a RAID 6 layout");
    let groups = &l.hardware().groups;
    assert!(groups.len() >= 2, "58 data disks in one group: {groups:?}");
    assert!(groups.iter().all(|g| g.disks.len() <= 30 && g.disks.len() >= 5));
    assert_eq!(groups.iter().map(|g| g.disks.len()).sum::<usize>(), 58);
    let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["A1-vg1", "A1-vg2"]);
    let why = l
        .reasons
        .iter()
        .find(|r| r.contains("split into 2 RAID 6 groups"))
        .expect("the split is said");
    assert!(why.contains("at most 30 drives") && why.contains("SANtricity"), "{why}");
}

#[test]
fn an_existing_group_beyond_the_limit_is_refused_naming_limit_and_source() {
    let cat = Catalog::builtin();
    let yaml = format!(
        "site: r6\nracks:\n  - name: A\n    servers: [n1, n2, n3]\n    arrays:\n      - {{ name: A1, model: E5700, disk_model: sas-ssd-3.84t, disks: 60, hot_spares: 2, raid: raid6, existing: true }}\n{STREAM}"
    );
    let e = natsplan::site::parse_str(&yaml, "site.yaml", &cat)
        .unwrap_err()
        .to_string();
    assert!(e.contains("racks[0].arrays[0].existing"), "{e}");
    assert!(
        e.contains("at most 30 drives") && e.contains("has 58") && e.contains("SANtricity"),
        "{e}"
    );
    // Within the limit it is accepted as it stands, one group.
    let ok = yaml.replace("disks: 60, hot_spares: 2", "disks: 14, hot_spares: 2");
    let site = natsplan::site::parse_str(&ok, "site.yaml", &cat).unwrap();
    assert!(site.arrays[0].existing);
}

#[test]
fn seed_figure_one_raid1_on_six_data_disks_is_three_raid1_groups() {
    let p = plan_of(&format!(
        "site: fig1\nracks:\n  - name: A\n    servers: [n1, n2, n3]\n    arrays:\n      - {{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7, hot_spares: 1, raid: raid1 }}\n{STREAM}"
    ));
    let l = p.layouts.iter().find(|l| l.pattern == "1").expect("pattern 1 is built");
    assert_ne!(l.verdict, Verdict::Rejected, "{:?}", l.reasons);
    assert_eq!(l.hardware().groups.len(), 3);
    for g in &l.hardware().groups {
        assert_eq!(g.raid, natsplan::layout::Raid::Raid1);
        assert_eq!(g.disks.len(), 2);
    }
}

#[test]
fn pattern_four_on_two_two_one_is_not_rejected_on_capacity() {
    // Seed 000's 2 + 2 + 1 shape: under unique_tag on rack, echo (alone in rack C) holds a replica of
    // every R3 stream; sized on the average it was rejected ("echo needs 1.92 TiB but its store holds
    // 1.15 TiB").
    let mut y = String::from("site: p4\nnats: { replicas: [3] }\nracks:\n");
    for (r, servers, disks) in [
        ("A", "[alpha, bravo]", 5),
        ("B", "[charlie, delta]", 5),
        ("C", "[echo]", 3),
    ] {
        y += &format!("  - name: {r}\n    servers: {servers}\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: {disks}, hot_spares: 1 }}\n");
    }
    y += "workload:\n  streams:\n";
    for s in ["s1", "s2", "s3"] {
        y += &format!("    - {{ name: {s}, msgs_per_s: 5000, msg_size: 1KiB, retention: 36h }}\n");
    }
    y += "policy:\n  patterns: [\"4\"]\n";
    let p = plan_of(&y);
    let l = p
        .layouts
        .iter()
        .find(|l| l.servers.len() == 5)
        .expect("the 2+2+1 layout");
    assert!(!l.reasons.iter().any(|r| r.contains("capacity")), "{:?}", l.reasons);
    assert_ne!(l.verdict, Verdict::Rejected, "{:?}", l.reasons);
    // Each LUN holds what its own server is expected to store (echo: a replica of every stream), and the
    // rest of the groups is left for other services.
    for s in &l.servers {
        let need: u64 = l
            .per_asset()
            .unwrap()
            .assets
            .iter()
            .filter(|a| a.expected.contains(&s.name))
            .map(|a| a.bytes_per_replica)
            .sum();
        assert!(s.store_bytes >= need, "{}: {} < {need}", s.name, s.store_bytes);
    }
    let echo_need: u64 = l
        .per_asset()
        .unwrap()
        .assets
        .iter()
        .filter(|a| a.expected.iter().any(|e| e == "echo"))
        .map(|a| a.bytes_per_replica)
        .sum();
    let all: u64 = l.per_asset().unwrap().assets.iter().map(|a| a.bytes_per_replica).sum();
    assert_eq!(echo_need, all, "echo is alone in rack C: it holds every R3 stream");
    assert!(l.capacity.left_for_others_bytes > 0);
}

#[test]
fn one_array_serving_three_racks_tolerates_no_rack_and_says_which() {
    let p = plan_of(&format!(
        "site: one-array\nracks:\n  - name: A\n    servers: [a1]\n    arrays:\n      - {{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7, hot_spares: 1 }}\n  - name: B\n    servers: [b1]\n  - name: C\n    servers: [c1]\n{STREAM}"
    ));
    let spread: Vec<&PlannedLayout> = p.layouts.iter().filter(|l| l.servers.len() == 3).collect();
    assert!(
        !spread.is_empty(),
        "b1 and c1 were dropped: {:?}",
        p.layouts.iter().map(|l| &l.id).collect::<Vec<_>>()
    );
    for l in spread {
        assert_eq!(l.tolerates.racks, 0, "{}", l.id);
        assert!(
            l.reasons
                .iter()
                .any(|r| r.contains("use array A1 in rack A") && r.contains("losing rack A")),
            "{}: {:?}",
            l.id,
            l.reasons
        );
    }
}

const MIXED: &str = "site: mixed\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a1]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1, raid: raid1 }\n  - name: B\n    servers: [b1]\n    arrays:\n      - { name: B1, model: EF600, disk_model: nvme-7.68t, disks: 12, raid: ddp }\n  - name: C\n    servers:\n      - name: c1\n        disks: { disk_model: nvme-3.84t, count: 2, raid: raid1 }\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h, replicas: 3 }\npolicy:\n  min_tolerated: { racks: 1 }\n";

#[test]
fn the_mixed_site_gets_an_r3_layout_over_all_three_kinds_that_tolerates_a_rack() {
    let p = plan_of(MIXED);
    let l = usable(&p)
        .into_iter()
        .find(|l| l.pattern == "mixed")
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                p.layouts.iter().map(|l| (&l.id, &l.reasons)).collect::<Vec<_>>()
            )
        });
    assert_eq!(l.replicas, 3);
    assert!(l.tolerates.racks >= 1);
    let raid = |n: &str| l.servers.iter().find(|s| s.name == n).and_then(|s| s.raid.clone());
    assert_eq!(raid("a1").as_deref(), Some("raid1"));
    assert_eq!(raid("b1").as_deref(), Some("ddp-raid1"));
    assert_eq!(raid("c1").as_deref(), Some("raid1"));
    // The DDP pool is used as given: one pool over all its disks, never rebuilt into groups.
    let b1 = l.hardware().groups.iter().find(|g| g.name.starts_with("B1")).unwrap();
    assert_eq!(b1.disks.len(), 12);
    // The id says what differs.
    assert!(l.id.starts_with("mx-raid1+ddp-r3-"), "{}", l.id);
}

#[test]
fn full_reference_has_a_usable_layout() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/full-reference.yaml")).unwrap();
    let p = plan_of(&text);
    assert!(
        !usable(&p).is_empty(),
        "{:?}",
        p.layouts.iter().map(|l| (&l.id, &l.reasons)).collect::<Vec<_>>()
    );
}

#[test]
fn the_mixed_example_plans_cleanly() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/mixed-storage.yaml")).unwrap();
    let p = plan_of(&text);
    assert!(usable(&p)
        .iter()
        .any(|l| l.pattern == "mixed" && l.tolerates.racks >= 1));
}

/// A random three-rack site whose racks store data differently: a fixed RAID 1 pair (+ spare), an
/// existing DDP pool, internal disks, an unfixed array, or nothing (servers then use another rack's).
fn mixed_site(seed: u64) -> String {
    let mut x = seed | 1;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut y = String::from("site: gen\nnats: { replicas: [3] }\nracks:\n");
    for (i, r) in ["A", "B", "C"].iter().enumerate() {
        let kind = if i == 0 { next(4) } else { next(5) };
        let s = format!("{}{}", r.to_lowercase(), 1);
        match kind {
            0 => y += &format!("  - name: {r}\n    servers: [{s}]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1, raid: raid1 }}\n"),
            1 => y += &format!("  - name: {r}\n    servers: [{s}]\n    arrays:\n      - {{ name: {r}1, model: EF600, disk_model: nvme-3.84t, disks: {}, raid: ddp }}\n", 11 + next(4)),
            2 => y += &format!("  - name: {r}\n    servers:\n      - name: {s}\n        disks: {{ disk_model: nvme-3.84t, count: 2, raid: raid{} }}\n", if next(2) == 0 { 1 } else { 0 }),
            3 => y += &format!("  - name: {r}\n    servers: [{s}, {r}2]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: {}, hot_spares: 1 }}\n", 3 + next(4)),
            _ => y += &format!("  - name: {r}\n    servers: [{s}]\n"),
        }
    }
    y += "workload:\n  streams:\n    - { name: orders, msgs_per_s: 2000, msg_size: 1KiB, retention: 12h }\n";
    y
}

fn mixed_layouts(yaml: &str) -> Option<(Site, Vec<Layout>)> {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "gen.yaml", &cat).ok()?;
    let layouts = natsplan::layout::Enumerate::new(&site, &cat).placed();
    Some((site, layouts))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_independent_checker_agrees_on_mixed_layouts(seed in any::<u64>()) {
        let Some((site, layouts)) = mixed_layouts(&mixed_site(seed)) else { return Ok(()); };
        for l in layouts.iter().filter(|l| l.pattern == Pattern::Mixed) {
            prop_assert_eq!(tolerates(&site, l), brute_force(&site, l), "{}", l.id);
        }
    }

    #[test]
    fn capacity_is_never_negative_and_luns_fit_their_groups(seed in any::<u64>()) {
        let cat = Catalog::builtin();
        let Ok(site) = natsplan::site::parse_str(&mixed_site(seed), "gen.yaml", &cat) else { return Ok(()); };
        let plan = build(&site, &cat);
        for pl in &plan.layouts {
            prop_assert!(pl.capacity.headroom <= 1.0 && pl.capacity.headroom.is_finite(), "{}", pl.id);
            for s in &pl.servers {
                prop_assert!(s.store_bytes <= s.lun_bytes);
            }
            let l = pl.hardware();
            for (gi, g) in l.groups.iter().enumerate() {
                let sum: u64 = l.luns.iter().filter(|x| x.group == gi).map(|x| x.size_bytes).sum();
                prop_assert!(sum <= g.usable_bytes, "{} over-allocated in {}", g.name, pl.id);
            }
            prop_assert_eq!(l.luns.len(), l.servers.len());
        }
    }

    #[test]
    fn a_failure_never_destroys_a_volume_it_does_not_touch(seed in any::<u64>()) {
        let Some((site, layouts)) = mixed_layouts(&mixed_site(seed)) else { return Ok(()); };
        for l in &layouts {
            let model = Model::new(&site, l);
            let mut selectors: Vec<String> = Vec::new();
            for r in &site.racks {
                selectors.push(format!("rack:{}", r.name));
            }
            for a in &site.arrays {
                if a.owner.is_none() {
                    selectors.push(format!("array:{}", a.name));
                }
                for d in 1..=a.disks {
                    selectors.push(format!("disk:{}/{d}", a.name));
                }
            }
            for s in &site.servers {
                selectors.push(format!("server:{}", s.name));
            }
            for sel in selectors {
                let d = Domain::parse(&sel, &site).map_err(TestCaseError::fail)?;
                let (eff, _, _) = model.effects(std::slice::from_ref(&d));
                for &s in &l.servers {
                    if !eff[s].destroyed {
                        continue;
                    }
                    // Only a disk of the server's own group can destroy its volume (one disk failure
                    // destroys at most a RAID 0 group); racks, arrays and servers leave data intact.
                    let g = &l.groups[model.group_of(s).expect("a JetStream server has a LUN")];
                    let touches = sel.strip_prefix("disk:").and_then(|x| x.split_once('/')).is_some_and(|(arr, n)| {
                        site.arrays[g.array].name == arr && g.disks.contains(&n.parse::<u32>().unwrap_or(0))
                    });
                    prop_assert!(touches, "{sel} destroyed {}'s volume in {} ({})", site.servers[s].name, l.id, g.name);
                }
            }
        }
    }
}
