//! VM disks on a hypervisor host's pool (issue 16): `arrays[].host` lists a host's storage pool, each
//! guest on that host gets a VM disk (a LUN) on it in mixed layouts, the pool fails with its host, and
//! the emitted README says so. Also each server's volume line (`servers[].volume`) for mixed layouts.

use natsplan::catalog::Catalog;
use natsplan::layout::VolumeKind;
use natsplan::plan::{build, Plan, Verdict};
use natsplan::survival::{Domain, DomainKind, DomainTarget, Model};

const POOLS: &str = include_str!("../../examples/vm-host-pools.yaml");

fn plan_of(yaml: &str) -> Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "site.yaml", &cat).unwrap_or_else(|e| panic!("{e}"));
    build(&site, &cat)
}

#[test]
fn guests_get_vm_disks_on_their_hosts_pools_and_a_layout_tolerates_a_rack() {
    let p = plan_of(POOLS);
    let best = p
        .layouts
        .iter()
        .find(|l| l.verdict != Verdict::Rejected && l.tolerates.racks >= 1)
        .expect("a usable layout tolerating one rack");
    assert_eq!(best.pattern, "mixed", "{}", best.id);
    assert!(best.id.starts_with("mx-raid1+raid10+raid6-r3-"), "{}", best.id);
    for s in &best.servers {
        assert_eq!(s.volume_kind, Some(VolumeKind::VmDisk), "{}", s.name);
        let host = &s.name[5..6];
        let v = s.volume.as_deref().unwrap();
        assert!(v.contains(&format!("host hv-{host}'s pool hv-{host}-pool")), "{v}");
    }
    // The layout with both guests of host hv-a shares its pool: their VM disks fit it together.
    let both = p
        .layouts
        .iter()
        .find(|l| l.id.contains("-Ax2."))
        .expect("a layout with both A guests");
    let l = both.hardware();
    let g = l.groups.iter().position(|g| g.name == "hv-a-pool-vg1").unwrap();
    let on: Vec<u64> = l.luns.iter().filter(|x| x.group == g).map(|x| x.size_bytes).collect();
    assert_eq!(on.len(), 2);
    assert!(on.iter().sum::<u64>() <= l.groups[g].usable_bytes);
    assert_eq!(l.groups[g].raid, natsplan::layout::Raid::Raid10);
    assert_eq!(
        l.groups[g].disks.len(),
        4,
        "the pool is used as built: one group over all its disks"
    );
}

#[test]
fn the_pool_fails_with_its_host_and_only_its_guests_lose_their_stores() {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(POOLS, "site.yaml", &cat).unwrap();
    let p = build(&site, &cat);
    let pl = p.layouts.iter().find(|l| l.id.contains("-Ax2.")).unwrap();
    let model = Model::new(&site, pl.placed().unwrap());
    let idx = |n: &str| site.servers.iter().position(|s| s.name == n).unwrap();
    let host = Domain::parse("host:hv-a", &site).unwrap();
    // Host down: its guests stop, their disks survive.
    let (eff, _, _) = model.effects(std::slice::from_ref(&host));
    for n in ["nats-a1", "nats-a2"] {
        assert!(eff[idx(n)].down && !eff[idx(n)].destroyed, "{n}");
    }
    assert!(!eff[idx("nats-b1")].down);
    // Host lost for good (its hardware with the pool): every guest's VM disk on that pool goes.
    let lost = Domain {
        kind: DomainKind::Wipe,
        target: DomainTarget::Host("hv-a".into()),
        name: "hv-a".into(),
    };
    let (eff, _, _) = model.effects(std::slice::from_ref(&lost));
    assert!(eff[idx("nats-a1")].destroyed && eff[idx("nats-a2")].destroyed);
    assert!(!eff[idx("nats-b1")].destroyed && !eff[idx("nats-c1")].destroyed);
    // The RAID 1 pool of hv-b: one disk degrades, both destroy nats-b1's disk and nobody else's.
    let d1 = Domain::parse("disk:hv-b-pool/1", &site).unwrap();
    let d2 = Domain::parse("disk:hv-b-pool/2", &site).unwrap();
    let (eff, _, _) = model.effects(std::slice::from_ref(&d1));
    assert!(!eff[idx("nats-b1")].destroyed);
    let (eff, _, _) = model.effects(&[d1, d2]);
    assert!(eff[idx("nats-b1")].destroyed);
    assert!(!eff[idx("nats-a1")].destroyed && !eff[idx("nats-c1")].destroyed);
}

#[test]
fn the_emitted_readme_of_a_guest_names_its_vm_disk_and_host() {
    let p = plan_of(POOLS);
    let l = p.layouts.iter().find(|l| l.pattern == "mixed").unwrap();
    let files = natsplan::emit::render(&p, &l.id, &natsplan::emit::EmitOptions::default()).unwrap();
    let readme = |path: &str| {
        files
            .iter()
            .find(|(f, _)| f.to_string_lossy() == path)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| panic!("no {path}"))
    };
    let r = readme("nats-c1/README.md");
    assert!(
        r.contains("Give this VM the VM disk of") && r.contains("on host hv-c's pool hv-c-pool (RAID 6, 6 drives"),
        "{r}"
    );
    assert!(r.contains("losing that host as losing this store"), "{r}");
    let top = readme("README.md");
    assert!(top.contains("What each server's store sits on:"), "{top}");
    assert!(top.contains("- nats-b1: VM disk of"), "{top}");
}

#[test]
fn a_mixed_layouts_readmes_say_which_lun_from_which_array() {
    let p = plan_of(include_str!("../../examples/mixed-storage.yaml"));
    let l = p.layouts.iter().find(|l| l.pattern == "mixed").unwrap();
    let files = natsplan::emit::render(&p, &l.id, &natsplan::emit::EmitOptions::default()).unwrap();
    let text = |name: &str| {
        files
            .iter()
            .find(|(f, _)| f.to_string_lossy() == format!("{name}/README.md"))
            .map(|(_, t)| t.clone())
            .unwrap()
    };
    let kinds: Vec<(String, Option<VolumeKind>)> = l.servers.iter().map(|s| (s.name.clone(), s.volume_kind)).collect();
    assert_eq!(
        kinds.iter().map(|k| k.1).collect::<Vec<_>>(),
        [
            Some(VolumeKind::Lun),
            Some(VolumeKind::PoolVolume),
            Some(VolumeKind::Internal)
        ],
        "{kinds:?}"
    );
    assert!(text(&kinds[0].0)
        .contains("Give this host the LUN of 2.97 TiB on volume group A1-vg1 (RAID 1, 2 drives) of array A1"));
    assert!(
        text(&kinds[1].0).contains("Give this host the RAID 1 volume of")
            && text(&kinds[1].0).contains("on DDP pool B1-vg1 (12 drives) of array B1")
    );
    let c = text(&kinds[2].0);
    assert!(
        c.contains("Its store is its internal disks:") && c.contains("-internal-vg1 (RAID 1, 2 drives)"),
        "{c}"
    );
}

#[test]
fn a_server_using_another_racks_array_is_told_so() {
    let p = plan_of("site: far\nracks:\n  - name: A\n    servers: [a1]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7, hot_spares: 1 }\n  - name: B\n    servers: [b1]\n  - name: C\n    servers: [c1]\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 500, msg_size: 1KiB, retention: 1h, replicas: 3 }\n");
    let l = p
        .layouts
        .iter()
        .find(|l| l.servers.len() == 3)
        .expect("a layout over all three");
    let b1 = l.servers.iter().find(|s| s.name == "b1").unwrap();
    assert!(
        b1.volume
            .as_deref()
            .unwrap()
            .ends_with("of array A1 over the SAN from rack A"),
        "{:?}",
        b1.volume
    );
    let a1 = l.servers.iter().find(|s| s.name == "a1").unwrap();
    assert!(!a1.volume.as_deref().unwrap().contains("over the SAN"));
}

#[test]
fn a_pool_names_a_host_of_its_rack_and_gives_its_level() {
    let cat = Catalog::builtin();
    let base = "site: e\nracks:\n  - name: A\n    servers:\n      - { name: g1, host: hv1 }\n    arrays:\n      - { name: P, host: HOST, disk_model: nvme-3.84t, disks: 2, raid: raid1 }\n  - name: B\n    servers:\n      - { name: g2, host: hv2 }\nworkload:\n  streams:\n    - { name: s, msgs_per_s: 10, msg_size: 1KiB, retention: 1h }\n";
    let err = |y: &str| natsplan::site::parse_str(y, "site.yaml", &cat).unwrap_err().to_string();
    assert!(natsplan::site::parse_str(&base.replace("HOST", "hv1"), "site.yaml", &cat).is_ok());
    let e = err(&base.replace("HOST", "hv9"));
    assert!(
        e.contains("racks[0].arrays[0].host") && e.contains("no server of this rack runs on host 'hv9'"),
        "{e}"
    );
    let e = err(&base.replace("HOST", "hv2"));
    assert!(e.contains("host 'hv2' stands in rack B"), "{e}");
    let e = err(&base.replace("HOST", "hv1").replace(", raid: raid1", ""));
    assert!(
        e.contains("racks[0].arrays[0].raid") && e.contains("needs the level"),
        "{e}"
    );
    let e = err(&base.replace("HOST", "hv1").replace("raid: raid1", "raid: ddp"));
    assert!(e.contains("cannot be a DDP pool"), "{e}");
}
