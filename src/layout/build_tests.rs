use super::super::legacy_layout_id;
use crate::catalog::Catalog;
use crate::site::Pattern;

#[test]
fn a_mixed_layout_gives_a_server_raid0_when_its_array_has_no_pair_left_for_it() {
    // Rack A: 3 data disks for a1 and a2. Per array (pairs only) A served one server, so no mixed R5
    // layout had five servers; per server a1 gets a pair and a2 a RAID 0 disk.
    let cat = Catalog::builtin();
    let yaml = "site: choice\nnats: { replicas: [5] }\nracks:\n  - name: A\n    servers: [a1, a2]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 1 }\n  - name: B\n    servers: [b1, b2]\n    arrays:\n      - { name: B1, model: EF600, disk_model: nvme-3.84t, disks: 12, raid: ddp }\n  - name: C\n    servers:\n      - name: c1\n        disks: { disk_model: nvme-3.84t, count: 2, raid: raid1 }\nworkload:\n  streams:\n    - { name: s, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\npolicy:\n  patterns: [\"1\", \"2\"]\n";
    let site = crate::site::parse_str(yaml, "site.yaml", &cat).unwrap();
    let layouts = super::super::Enumerate::new(&site, &cat).placed();
    let l = layouts
        .iter()
        .find(|l| l.pattern == Pattern::Mixed && l.servers.len() == 5)
        .unwrap_or_else(|| {
            panic!(
                "no mixed layout over all five: {:?}",
                layouts.iter().map(|l| &l.id).collect::<Vec<_>>()
            )
        });
    let raid_of = |n: &str| {
        let s = site.servers.iter().position(|x| x.name == n).unwrap();
        l.groups[l.lun_of(s).unwrap().group].raid
    };
    assert_eq!(raid_of("a1"), crate::layout::Raid::Raid1);
    assert_eq!(raid_of("a2"), crate::layout::Raid::Raid0);
    let a1 = l
        .groups
        .iter()
        .filter(|g| site.arrays[g.array].name == "A1")
        .collect::<Vec<_>>();
    assert_eq!(
        a1.iter().map(|g| g.disks.clone()).collect::<Vec<_>>(),
        [vec![1, 2], vec![3]]
    );
    assert!(l.id.starts_with("mx-raid0+raid1+ddp-r5-"), "{}", l.id);
    assert!(
        l.problems
            .iter()
            .any(|p| p.text.contains("a1 gets a RAID 1 pair, a2 a RAID 0 disk")),
        "{:?}",
        l.problems
    );
}

#[test]
fn three_servers_on_two_raid6_groups_get_equal_luns() {
    let cat = Catalog::builtin();
    let yaml = "site: r6\nracks:\n  - name: A\n    servers: [n1, n2, n3]\n    arrays:\n      - { name: A1, model: E5700, disk_model: sas-ssd-3.84t, disks: 60, hot_spares: 2, raid: raid6 }\nworkload:\n  streams:\n    - { name: s, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\n";
    let site = crate::site::parse_str(yaml, "site.yaml", &cat).unwrap();
    let l = super::build(&site, &cat, Pattern::Raid6, 3, &[0, 1, 2], None);
    assert_eq!(l.groups.len(), 2);
    let sizes: Vec<u64> = l.luns.iter().map(|x| x.size_bytes).collect();
    assert_eq!(sizes.len(), 3);
    // Round-robin puts two servers on A1-vg1 and one on A1-vg2: all three get the smaller share.
    assert!(sizes.iter().all(|&b| b == sizes[0] && b > 0), "{sizes:?}");
    assert_eq!(sizes[0], l.groups[0].usable_bytes / 2);
    assert!(
        l.problems
            .iter()
            .any(|p| p.text.contains("unevenly (2 on A1-vg1, 1 on A1-vg2)")),
        "{:?}",
        l.problems
    );
}

#[test]
fn legacy_ids_drop_the_x_between_rack_and_count() {
    assert_eq!(
        legacy_layout_id("p1-raid1-r3-Ax1.Bx1.Cx1-fdce"),
        "p1-raid1-r3-A1.B1.C1-fdce"
    );
    assert_eq!(
        legacy_layout_id("p1-raid1-r4-R0x2.R1x2.R2x1-1a2b"),
        "p1-raid1-r4-R02.R12.R21-1a2b"
    );
    assert_eq!(
        legacy_layout_id("ddp-ddp-raid1-r3-xx3-bb5c"),
        "ddp-ddp-raid1-r3-x3-bb5c"
    );
    assert_eq!(legacy_layout_id("p1-raid1-r3-none-0000"), "p1-raid1-r3-none-0000");
}
