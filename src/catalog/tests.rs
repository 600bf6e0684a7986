use super::*;

#[test]
fn builtin_catalog_parses_and_has_the_required_models() {
    let c = Catalog::builtin();
    for a in ["EF600", "EF300", "E5700", "E4000"] {
        assert!(c.array(a).is_some(), "{a}");
    }
    let d = c.disk("nvme-3.84t").unwrap();
    assert_eq!(d.capacity_bytes, 3_840_000_000_000);
    assert!(d.kind.is_ssd());
    assert!(!c.disk("nl-sas-8t").unwrap().kind.is_ssd());
    assert_eq!(c.failures.repair_s("raid0_new_group"), 30.0);
    assert!(c.failures.rate("disk_afr") > 0.0);
    assert_eq!(c.failures.dirty_expire_s.value, 30.0);
    for (k, v) in &c.failures.rates {
        assert!(!v.source.is_empty(), "{k} has no source");
    }
}

#[test]
fn every_eseries_model_carries_sourced_group_limits() {
    let c = Catalog::builtin();
    for a in ["EF600", "EF300", "E5700", "E4000"] {
        let g = &c.array(a).unwrap().group_limits;
        assert_eq!(g.raid6_max_drives, 30, "{a}");
        assert_eq!(g.ddp_min_drives, 11, "{a}");
        assert!(!g.assumed, "{a}");
        assert!(g.source.contains("SANtricity"), "{a}: {}", g.source);
    }
    // Internal disks are not E-Series: their limits are said to be assumed.
    assert!(c.array("internal").unwrap().group_limits.assumed);
}

/// Issue 46: the lab and document artefacts cannot be bought; every model that can carries its rack units
/// (servers, arrays), typical and peak watts and their source, an assumption marked as one.
#[test]
fn the_catalog_marks_what_can_be_bought_with_rack_units_watts_and_their_source() {
    let c = Catalog::builtin();
    for s in ["loopback-2c-shared", "lxc-guest", "macbook-pro-m4", "install-guide-1c"] {
        assert!(!c.server(s).unwrap().hardware.purchasable, "{s}");
    }
    assert!(!c.disk("virtual").unwrap().hardware.purchasable);
    assert!(!c.array("internal").unwrap().hardware.purchasable);
    let mut bought = 0;
    let check = |name: &str, h: &Hardware, racked: bool| {
        if racked {
            assert!(h.rack_units.is_some_and(|u| u > 0), "{name}: rack units");
        }
        let (t, p) = (h.watts_typical.unwrap(), h.watts_peak.unwrap());
        assert!(t > 0.0 && p >= t, "{name}: {t} W typical, {p} W peak");
        assert!(!h.source.trim().is_empty(), "{name}: no source");
        let vendor = ["data sheet", "datasheet", "Hardware Universe"]
            .iter()
            .any(|v| h.source.contains(v));
        assert!(
            h.assumed || vendor,
            "{name}: neither a data sheet nor an assumption: {}",
            h.source
        );
        assert_eq!(
            h.assumed,
            h.source.to_ascii_lowercase().contains("assumption"),
            "{name}"
        );
    };
    for m in c.servers.iter().filter(|m| m.hardware.purchasable) {
        check(&m.name, &m.hardware, true);
        bought += 1;
    }
    for m in c.arrays.iter().filter(|m| m.hardware.purchasable) {
        check(&m.name, &m.hardware, true);
        let (shelves, drives) = (m.max_shelves.unwrap(), m.max_drives.unwrap());
        assert!(shelves >= 1 && drives >= m.drive_slots, "{}", m.name);
        bought += 1;
    }
    for m in c.disks.iter().filter(|m| m.hardware.purchasable) {
        check(&m.name, &m.hardware, false);
        bought += 1;
    }
    assert_eq!(
        bought,
        3 + 4 + 8,
        "generic servers, E-Series arrays and the physical drives"
    );
}

#[test]
fn a_purchasable_model_without_rack_units_or_watts_is_refused_at_its_field() {
    let servers = "servers:\n  - { name: s1, cores: 4, memory: 8GiB, nic_bps: 1e10, source: s, purchasable: true, \
                       watts_typical: 200, watts_peak: 100 }\ndefault_server: s1\n";
    let e = Catalog::from_texts(ARRAYS, DISKS, servers, FAILURES)
        .unwrap_err()
        .to_string();
    assert!(e.contains("servers[0].rack_units"), "{e}");
    assert!(
        e.contains("servers[0].watts_peak") && e.contains("below typical"),
        "{e}"
    );
    assert!(e.contains("servers[0].hardware_source"), "{e}");
    // Not purchasable: nothing asked; a catalog written before these fields still reads.
    let old = "servers:\n  - { name: s1, cores: 4, memory: 8GiB, nic_bps: 1e10, source: s }\ndefault_server: s1\n";
    let c = Catalog::from_texts(ARRAYS, DISKS, old, FAILURES).unwrap();
    assert_eq!(c.servers[0].hardware, Hardware::default());
}

#[test]
fn a_model_without_group_limits_gets_labelled_assumptions() {
    let arrays = "arrays:\n  - { name: X1, class: c, drive_slots: 12, controllers: 2, read_bw: 1GB, write_bw: 1GB, \
                      read_iops: 1, write_iops: 1, mirrored_write_cache: true, supports: [raid6], source: s }\n";
    let c = Catalog::from_texts(arrays, DISKS, SERVERS, FAILURES).unwrap();
    let g = &c.array("X1").unwrap().group_limits;
    assert!(g.assumed && g.source.starts_with("assumption"));
    assert_eq!(
        (g.raid6_max_drives, g.raid10_max_drives, g.ddp_max_drives),
        (30, 12, 12)
    );
}
