//! `size --have`: the owned site written back is the site the parser read (so the zero bill is the owned
//! site itself), and the enumeration keeps every owned part and prices only what it adds.

use super::grow::{from_site, racks_yaml, Summary};
use super::*;

fn example(name: &str) -> String {
    std::fs::read_to_string(format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The parts of a site that say its hardware, as JSON (what a rewrite must keep).
fn hardware(s: &Site) -> serde_json::Value {
    serde_json::json!({ "racks": s.racks, "servers": s.servers, "arrays": s.arrays })
}

#[test]
fn every_example_site_written_back_is_the_site_the_parser_read() {
    let catalog = Catalog::builtin();
    let mut checked = 0;
    for name in [
        "seed-five-servers-raid0.yaml",
        "mixed-storage.yaml",
        "vm-host-pools.yaml",
        "full-reference.yaml",
        "three-racks-raid1.yaml",
        "one-array-raid6.yaml",
        "seed004-three-guests-one-host.yaml",
    ] {
        let text = example(name);
        let site = crate::site::parse_str(&text, name, &catalog).unwrap();
        let again = format!(
            "{}\n{}",
            crate::size::without_key(&text, "racks", name),
            racks_yaml(&from_site(&site))
        );
        let back = crate::site::parse_str(&again, name, &catalog).unwrap_or_else(|e| panic!("{name}: {e}\n{again}"));
        assert_eq!(hardware(&back), hardware(&site), "{name}");
        checked += 1;
    }
    assert_eq!(checked, 7);
}

fn seed_have(workload: &str) -> (Have, WorkloadFile, Catalog) {
    let catalog = Catalog::builtin();
    let cal = crate::perf::Calibration::builtin();
    let w = crate::size::read_workload(workload, "w.yaml", &catalog).unwrap();
    let site = example("seed-five-servers-raid0.yaml");
    let a = HaveArgs {
        text: &site,
        file: "seed.yaml",
        workload_text: workload,
        layout: None,
    };
    let h = read(&a, &w, &catalog, &cal).unwrap();
    (h, w, catalog)
}

fn workload(size: &str) -> String {
    let t = std::fs::read_to_string(format!(
        "{}/tests/data/seed000-workload.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let start = t.find("size:\n").unwrap();
    let end = t[start..].find("\n\n").unwrap() + start;
    format!("{}size:\n{size}{}", &t[..start], &t[end..])
}

#[test]
fn the_zero_bill_is_first_owns_everything_and_adds_nothing() {
    let (h, w, catalog) = seed_have(&workload(
        "  racks: [3, 4]\n  servers: [5, 6]\n  disks_per_server: [1, 2]\n  server_models: [generic-16c]\n  storage: [EF300]\n  disk_models: [nvme-3.84t]\n",
    ));
    assert_eq!(
        h.owned,
        Summary {
            racks: 3,
            servers: 5,
            arrays: 3,
            disks: 8
        }
    );
    let bills: Vec<Bill> = enumerate(&h, &w.spec, &catalog)
        .into_iter()
        .filter_map(Result::ok)
        .collect();
    let zero = &bills[0];
    assert_eq!(zero.id, ZERO);
    let g = zero.grown.as_ref().unwrap();
    assert_eq!(g.total, h.owned);
    assert!(g.added.items.is_empty() && g.added.parts == Default::default());
    assert_eq!(crate::size::price::cost(zero, None, &catalog).total, 0.0);
    // Every bill keeps every owned part: at least the owned counts, and each owned server and array by name.
    for b in &bills {
        let t = &b.grown.as_ref().unwrap().total;
        assert!(
            t.racks >= 3 && t.servers >= 5 && t.arrays >= 3 && t.disks >= 8,
            "{}",
            b.id
        );
        for name in ["alpha", "bravo", "charlie", "delta", "echo", "A1", "B1", "C1"] {
            assert!(
                b.racks_yaml().contains(&format!("name: {name},")),
                "{} lost {name}",
                b.id
            );
        }
    }
    // The ids are unique (a top-up that adds nothing is the bill without it).
    let mut ids: Vec<&str> = bills.iter().map(|b| b.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), bills.len());
    assert!(ids.contains(&"have+fill2") && ids.contains(&"have+1s-generic-16c-EF300-nvme-3.84tx1+1r"));
}
