//! Issue 15: one replica catch-up figure. whatif's rebuild step and design's per-server `catch_up_s` price
//! the same replica with the same rate (perf::catch_up_bytes_per_s: the lab-measured RAFT catch-up rate,
//! the NIC share and the volume's write rate), and a site's `repair_times.catch_up_rate` moves both.

use natsplan::catalog::Catalog;
use natsplan::survival::{evaluate, recovery, Domain, Model};

const SITE: &str = "examples/seed-five-servers-raid0.yaml";
const LAYOUT: &str = "p2-raid0-r3-Ax1.Bx1.Cx1-de5c";

/// (whatif's catch-up step for the rebuilt server, design's catch_up_s for it), in seconds.
fn both(site: &natsplan::site::Site, cat: &Catalog) -> (f64, f64) {
    let plan = natsplan::plan::build(site, cat);
    let pl = plan
        .layouts
        .iter()
        .find(|l| l.id == LAYOUT)
        .expect("the R3 RAID 0 layout");
    let model = Model::new(site, pl.placed().unwrap());
    let failed = [Domain::parse("disk:A1/1", site).unwrap()];
    let sc = evaluate(site, pl.placed().unwrap(), &failed);
    let rec = recovery(&model, cat, &sc);
    let step = rec
        .steps
        .iter()
        .find(|s| s.what.contains("catch up from surviving peers"))
        .unwrap_or_else(|| panic!("no catch-up step in {:?}", rec.steps));
    let server = step.chain.trim_start_matches("rebuild ").to_string();
    let pred = pl.predicted.as_ref().expect("design predicts the layout");
    let sp = pred
        .servers
        .iter()
        .find(|s| s.name == server)
        .expect("the rebuilt server is predicted");
    (step.seconds, sp.catch_up_s)
}

#[test]
fn whatif_and_design_give_one_catch_up_time_for_the_same_replica() {
    let cat = Catalog::builtin();
    let site = natsplan::site::load(std::path::Path::new(SITE), &cat).unwrap();
    let (whatif, design) = both(&site, &cat);
    assert!(whatif > 0.0);
    assert!(
        (whatif - design).abs() <= 1e-6 * design,
        "whatif {whatif} s, design {design} s"
    );
}

#[test]
fn the_measured_raft_rate_bounds_catch_up_and_a_site_override_moves_both() {
    let cat = Catalog::builtin();
    let raft = cat.failures.repair_s("catch_up_rate");
    assert!(raft > 1e8 && raft < 1e9, "catalog catch_up_rate {raft} B/s");
    let text = std::fs::read_to_string(SITE).unwrap();
    // Without the cost per message (issue 34), to see the per-byte part alone.
    let bytes_only = format!("{text}\nrepair_times: {{ catch_up_per_msg: 0s }}\n");
    let site = natsplan::site::parse_str(&bytes_only, SITE, &cat).unwrap_or_else(|e| panic!("{e}"));
    let (w1, d1) = both(&site, &cat);
    // Half the RAFT rate: both figures double (the NIC share and the array are faster than the lab rate).
    let slower = format!(
        "{text}\nrepair_times: {{ catch_up_rate: {}B/s, catch_up_per_msg: 0s }}\n",
        (raft / 2.0) as u64
    );
    let site2 = natsplan::site::parse_str(&slower, SITE, &cat).unwrap_or_else(|e| panic!("{e}"));
    let (w2, d2) = both(&site2, &cat);
    assert!((w2 / w1 - 2.0).abs() < 1e-3, "whatif {w1} -> {w2}");
    assert!((d2 / d1 - 2.0).abs() < 1e-3, "design {d1} -> {d2}");
    // The catalog's cost per message adds to both alike, and a site's override of it moves both.
    let site3 = natsplan::site::parse_str(&text, SITE, &cat).unwrap();
    let (w3, d3) = both(&site3, &cat);
    assert!(
        w3 > w1 && (w3 - d3).abs() <= 1e-6 * d3,
        "whatif {w3}, design {d3}, bytes only {w1}"
    );
    let per_msg = cat.failures.repair_s("catch_up_per_msg");
    let dearer = format!(
        "{text}\nrepair_times: {{ catch_up_per_msg: {}ns }}\n",
        (per_msg * 3e9) as u64
    );
    let site4 = natsplan::site::parse_str(&dearer, SITE, &cat).unwrap_or_else(|e| panic!("{e}"));
    let (w4, d4) = both(&site4, &cat);
    // Three times the cost per message: the per-message part triples.
    assert!(((w4 - w1) / (w3 - w1) - 3.0).abs() < 1e-2, "whatif {w1} {w3} {w4}");
    assert!(((d4 - d1) / (d3 - d1) - 3.0).abs() < 1e-2, "design {d1} {d3} {d4}");
}
