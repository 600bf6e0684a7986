//! `natsplan size WORKLOAD.yaml --have SITE.yaml` (issue 48): seed 000's own site against its workload
//! gets a zero-cost candidate first; against twice the workload it fails on capacity, named first, and the
//! additions size proposes pass in design; every candidate lists its migration; the growth path's month is
//! the one design agrees with; bad input is refused with its place and a fix.

use super::common::{repo_file, run};
use serde_json::Value;

const SITE: &str = "examples/seed-five-servers-raid0.yaml";

/// A seed 000 workload (`tests/data/NAME`) with the `size:` ranges and two patterns (fewer layouts: a
/// faster test), written to `dir`.
fn workload(dir: &std::path::Path, name: &str, size: &str) -> String {
    let t = std::fs::read_to_string(repo_file(&format!("tests/data/{name}"))).unwrap();
    let start = t.find("size:\n").unwrap();
    let end = t[start..].find("\n\n").unwrap() + start;
    let t = format!("{}size:\n{size}{}", &t[..start], &t[end..])
        .replace(r#"patterns: ["1", "2", "3", "4", "raid6"]"#, r#"patterns: ["1", "2"]"#);
    let p = dir.join(name);
    std::fs::write(&p, t).unwrap();
    p.display().to_string()
}

const RANGES: &str =
    "  racks: [3, 3]\n  servers: [5, 6]\n  disks_per_server: [2, 2]\n  server_models: [generic-16c]\n  \
                      storage: [EF300]\n  disk_models: [nvme-3.84t]\n";

fn have_json(args: &[&str]) -> Value {
    let site = repo_file(SITE);
    let mut all = vec!["size"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--have", &site, "--format", "json"]);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "size --have failed: {err}");
    serde_json::from_str(&out).unwrap()
}

fn find<'a>(s: &'a Value, id: &str) -> &'a Value {
    s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap()
}

/// Design on a candidate's site file: its layout `id`.
fn design_layout(site: &std::path::Path, id: &str) -> Value {
    let (code, d, err) = run(&["design", site.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let d: Value = serde_json::from_str(&d).unwrap();
    d["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("design has no {id}"))
}

#[test]
fn a_site_that_meets_its_workload_is_its_own_zero_cost_cheapest() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(dir.path(), "seed000-workload.yaml", &RANGES.replace("[5, 6]", "[5, 5]"));
    let s = have_json(&[&w]);
    let first = &s["candidates"][0];
    assert_eq!(
        (first["bill"].as_str(), first["cost"]["total"].as_f64()),
        (Some("have"), Some(0.0))
    );
    let cheapest = find(&s, s["cheapest"].as_str().unwrap());
    assert_eq!(cheapest["bill"], "have", "nothing to buy: {}", cheapest["id"]);
    assert_eq!(cheapest["cost"]["total"], 0.0);
    assert_eq!(s["have"]["today_meets_requirements"], true);
    assert!(s["have"]["today_text"]
        .as_str()
        .unwrap()
        .starts_with("today's site meets every requirement"));
    assert_eq!(
        s["have"]["owned"],
        serde_json::json!({"racks": 3, "servers": 5, "arrays": 3, "disks": 8})
    );
    assert_eq!(s["have"]["today_layout"]["assumed"], true);
    // 30 % a year over a 1-year horizon: it meets through the horizon.
    assert_eq!(s["have"]["growth"]["meets_until_month"], 12);
    for p in s["candidates"].as_array().unwrap() {
        assert_eq!(p["owned"], s["have"]["owned"], "{}", p["id"]);
        assert!(
            p["added"]["items"].is_array() && p["migration"]["steps"].is_array(),
            "{}",
            p["id"]
        );
    }
    // The zero bill on today's layout changes nothing.
    let today = s["have"]["today_layout"]["layout"].as_str().unwrap();
    if let Some(p) = s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == format!("have/{today}"))
    {
        assert_eq!(p["migration"]["layout_change"], false);
        assert_eq!(p["migration"]["rolling"], "no_rebuild");
    }
    // Plain size keeps its contract: no --have keys.
    let (_, plain, _) = run(&["size", &w, "--format", "json", "--budget", "1"]);
    let plain: Value = serde_json::from_str(&plain).unwrap();
    assert!(plain.get("have").is_none() && plain["candidates"][0].get("owned").is_none());
}

#[test]
fn twice_the_workload_fails_on_capacity_and_the_additions_pass_in_design() {
    let dir = tempfile::tempdir().unwrap();
    let w = workload(dir.path(), "seed000-have-2x.yaml", RANGES);
    let out = dir.path().join("sites");
    let s = have_json(&[&w, "--out", out.to_str().unwrap()]);
    let h = &s["have"];
    assert_eq!(h["today_meets_requirements"], false);
    assert!(
        h["today_binding"]["kind"].as_str().unwrap().starts_with("capacity"),
        "{}",
        h["today_binding"]
    );
    assert!(
        h["today_text"]
            .as_str()
            .unwrap()
            .starts_with("today's site fails on capacity"),
        "{}",
        h["today_text"]
    );
    // No zero-cost point meets the requirements; the cheapest adds something and design agrees it passes.
    for p in s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["bill"] == "have")
    {
        assert_eq!(p["meets_requirements"], false, "{}", p["id"]);
    }
    let c = find(&s, s["cheapest"].as_str().unwrap());
    assert!(c["cost"]["total"].as_f64().unwrap() > 0.0);
    assert!(!c["added"]["items"].as_array().unwrap().is_empty());
    let l = design_layout(
        &out.join(format!("{}.yaml", c["bill"].as_str().unwrap())),
        c["layout"].as_str().unwrap(),
    );
    assert!(
        matches!(l["verdict"].as_str(), Some("recommended" | "acceptable")),
        "{}",
        l["verdict"]
    );
    assert!(l["tolerates"]["racks"].as_u64().unwrap() >= 1);
    assert!(l.get("not_placed").is_none());
    // Its migration: the disks go in first, and every rebuild keeps every stream's quorum.
    let m = &c["migration"];
    assert_eq!(m["keeps_quorum"], true, "{m}");
    assert!(m["steps"][0].as_str().unwrap().starts_with("install "), "{m}");
    for p in s["candidates"].as_array().unwrap() {
        let rolling = p["migration"]["rolling"].as_str().unwrap();
        assert!(
            ["no_rebuild", "one_rack_at_a_time", "one_server_at_a_time", "not_online"].contains(&rolling),
            "{rolling}"
        );
        assert_eq!(
            p["migration"]["layout_change"],
            !p["migration"]["rebuild"].as_array().unwrap().is_empty()
                || p["migration"]["steps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x.as_str().unwrap().starts_with("retire"))
        );
    }
    // The growth path: the owned site meets the requirements until a month design agrees with, and fails
    // the month after (planned at those horizons, 730.5 h a month).
    let g = &h["growth"];
    let m = g["meets_until_month"]
        .as_u64()
        .expect("it meets them today (before growth)");
    assert!(m < 12, "{g}");
    assert_eq!(g["add_by_then"], s["cheapest"]);
    let zero = std::fs::read_to_string(out.join("have.yaml")).unwrap();
    let at = |hours: u64| {
        let p = dir.path().join(format!("have-{hours}h.yaml"));
        std::fs::write(&p, zero.replace("horizon: 1y", &format!("horizon: {hours}h"))).unwrap();
        let (code, d, err) = run(&["design", p.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let d: Value = serde_json::from_str(&d).unwrap();
        d["layouts"].as_array().unwrap().iter().any(|l| {
            matches!(l["verdict"].as_str(), Some("recommended" | "acceptable"))
                && l["tolerates"]["racks"].as_u64() >= Some(1)
        })
    };
    assert!(
        at((730.5 * m as f64).floor() as u64),
        "design: the owned site meets them at month {m}"
    );
    assert!(
        !at((730.5 * (m + 1) as f64).ceil() as u64),
        "design: it fails them at month {}",
        m + 1
    );
    // The table names today's site first.
    let (_, t, _) = run(&["size", &w, "--have", &repo_file(SITE)]);
    let owned = t.find("owned (").unwrap();
    assert!(
        t[owned..]
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("today's site fails on capacity"),
        "{t}"
    );
    assert!(t.contains("growth path: at 30 % a year the owned site meets every requirement until month"));
    assert!(t.contains("    migration: "), "{t}");
}

const HAVE: &str = "site: small\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a1]\n    arrays:\n      - { name: A1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }\n  - name: B\n    servers: [b1]\n    arrays:\n      - { name: B1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }\n  - name: C\n    servers: [c1, c2]\n    arrays:\n      - { name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 500, msg_size: 1KiB, retention: 1h }\npolicy:\n  patterns: [\"2\"]\n  min_tolerated: { racks: 1 }\n";

const WORK: &str = "site: small\nnats: { replicas: [3] }\nsize:\n  racks: [3, 3]\n  servers: [4, 4]\n  disks_per_server: [1, 1]\n  server_models: [generic-16c]\n  storage: [EF300]\n  disk_models: [nvme-3.84t]\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 1h }\npolicy:\n  patterns: [\"2\"]\n  min_tolerated: { racks: 1 }\n";

/// Exit 2, nothing on stdout, each wanted text on stderr (`{H}` the site file, `{W}` the workload file).
fn refused(have: &str, work: &str, extra: &[&str], wants: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (h, w) = (dir.path().join("h.yaml"), dir.path().join("w.yaml"));
    std::fs::write(&h, have).unwrap();
    std::fs::write(&w, work).unwrap();
    let (hs, ws) = (h.display().to_string(), w.display().to_string());
    let mut args = vec!["size", ws.as_str(), "--have", hs.as_str()];
    args.extend_from_slice(extra);
    let (code, out, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    for want in wants {
        let want = want.replace("{H}", &hs).replace("{W}", &ws);
        assert!(err.contains(&want), "missing {want:?} in:\n{err}");
    }
    assert!(err.contains("fix:"), "{err}");
}

#[test]
fn bad_have_sites_and_conflicting_workloads_are_refused_with_their_place() {
    // The baseline is accepted (else the refusals below prove nothing).
    let dir = tempfile::tempdir().unwrap();
    let (h, w) = (dir.path().join("h.yaml"), dir.path().join("w.yaml"));
    std::fs::write(&h, HAVE).unwrap();
    std::fs::write(&w, WORK).unwrap();
    let (code, _, err) = run(&[
        "size",
        w.to_str().unwrap(),
        "--have",
        h.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    // Hardware not in the catalog: the site parser's place.
    refused(
        &HAVE.replace(
            "disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }\n  - name: B",
            "disk_model: nvme-3.8t, disks: 2, hot_spares: 1 }\n  - name: B",
        ),
        WORK,
        &[],
        &[
            "{H}:7:",
            "racks[0].arrays[0].disk_model: unknown disk model 'nvme-3.8t'",
            "nvme-3.84t",
        ],
    );
    refused(
        &HAVE.replace("servers: [a1]", "servers: [{ name: a1, model: huge-64c }]"),
        WORK,
        &[],
        &["{H}:5:", "racks[0].servers[0].model"],
    );
    // size: ranges that cannot hold the owned racks and servers: the workload's place.
    refused(
        HAVE,
        &WORK.replace("servers: [4, 4]", "servers: [3, 3]"),
        &[],
        &[
            "{W}:5:",
            "size.servers: the --have site",
            "has 4 servers",
            "raise size.servers",
        ],
    );
    refused(
        HAVE,
        &WORK.replace("racks: [3, 3]", "racks: [1, 2]"),
        &[],
        &["{W}:4:", "size.racks", "has 3 racks"],
    );
    // Another site, or other failure figures: the site's place.
    refused(
        &HAVE.replace("site: small", "site: other"),
        WORK,
        &[],
        &["{H}:1:", "the --have site is 'other' but the workload"],
    );
    refused(
        &format!("{HAVE}failure_rates: {{ disk_afr: 0.02 }}\n"),
        WORK,
        &[],
        &["{H}:22:", "failure_rates", "differs from the workload's"],
    );
    // Today's layout named wrong.
    refused(
        HAVE,
        WORK,
        &["--have-layout", "p9-nothing"],
        &["--have-layout p9-nothing: no layout of", "p2-raid0-r3"],
    );
}

#[test]
fn prices_count_only_what_is_added() {
    let dir = tempfile::tempdir().unwrap();
    let (h, w, p) = (
        dir.path().join("h.yaml"),
        dir.path().join("w.yaml"),
        dir.path().join("p.yaml"),
    );
    std::fs::write(&h, HAVE).unwrap();
    std::fs::write(
        &w,
        WORK.replace("servers: [4, 4]", "servers: [4, 5]")
            .replace("racks: [3, 3]", "racks: [3, 4]"),
    )
    .unwrap();
    std::fs::write(
        &p,
        "currency: EUR\nservers: { generic-16c: 9000 }\narrays: { EF300: 30000 }\ndisks: { nvme-3.84t: 900 }\n",
    )
    .unwrap();
    let (code, out, err) = run(&[
        "size",
        w.to_str().unwrap(),
        "--have",
        h.to_str().unwrap(),
        "--prices",
        p.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    let cost = |bill: &str| {
        let p = s["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["bill"] == bill)
            .unwrap_or_else(|| panic!("no {bill}"));
        (p["cost"]["total"].as_f64().unwrap(), p["added"]["items"].clone())
    };
    assert_eq!(cost("have").0, 0.0, "owned hardware costs nothing");
    // One server into rack A (A and B have one each, A first), its data disk into the owned A1.
    let (c, items) = cost("have+1s-generic-16c-EF300-nvme-3.84tx1");
    assert_eq!(c, 9000.0 + 900.0);
    assert_eq!(
        items,
        serde_json::json!([
            "server n1 (generic-16c) in rack A",
            "1 × nvme-3.84t into A1 (2 → 3 disks)"
        ])
    );
    // A layout that leaves the bought server out of JetStream says so; one with both servers of rack A
    // in JetStream (`Ax2`) uses it.
    let points: Vec<&Value> = s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["bill"] == "have+1s-generic-16c-EF300-nvme-3.84tx1")
        .collect();
    let mut idle_seen = false;
    for p in points {
        let m = &p["migration"];
        let idle = m["idle_added"].as_array().unwrap();
        let noted = m["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_str().unwrap().starts_with("note: n1 is bought"));
        assert_eq!(idle.is_empty(), !noted, "{}", p["id"]);
        if p["layout"].as_str().unwrap().contains("Ax2") {
            assert!(idle.is_empty(), "{}", p["id"]);
        }
        idle_seen |= idle == &vec![serde_json::json!("n1")];
    }
    assert!(idle_seen, "some layout of that bill leaves n1 idle");
    // The same server in a new rack brings its own array: 9000 + 30000 + 2 disks (data and spare).
    assert_eq!(
        cost("have+1s-generic-16c-EF300-nvme-3.84tx1+1r").0,
        9000.0 + 30000.0 + 2.0 * 900.0
    );
}
