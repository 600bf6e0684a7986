//! `natsplan size WORKLOAD.yaml` (issue 47): seed 000's workload yields the seed's own shapes with the
//! seed's binding constraints; each candidate's site gives design's figures; a heavier workload or a
//! stricter policy never makes the cheapest candidate cheaper; bad input is refused with its place.

use super::common::{repo_file, run};
use serde_json::Value;

const SEED: &str = "tests/data/seed000-workload.yaml";

fn size_json(args: &[&str]) -> Value {
    let mut all = vec!["size"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "size failed: {err}");
    serde_json::from_str(&out).unwrap()
}

fn point<'a>(s: &'a Value, bill: &str, layout_prefix: &str) -> &'a Value {
    s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["bill"] == bill && p["layout"].as_str().unwrap().starts_with(layout_prefix))
        .unwrap_or_else(|| panic!("no point {bill}/{layout_prefix}*"))
}

#[test]
fn seed_000_yields_its_own_shapes_with_its_binding_constraints_and_design_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let s = size_json(&[&repo_file(SEED), "--out", out, "--exhaustive"]);
    assert_eq!(s["considered"], 18, "every bill of the ranges evaluated");
    assert_eq!(s["pruned"], serde_json::json!([]), "--exhaustive prunes nothing");
    assert_eq!(s["cost_unit"]["unit"], "relative", "no --prices: relative units, said");
    // 2 + 2 + 1 servers on RAID 0 at R5, one EF300 per rack with one disk per server and a spare.
    let raid0 = point(&s, "3r5s-generic-16c-EF300-nvme-3.84tx1", "p2-raid0-r5-Ax2.Bx2.Cx1");
    assert_eq!(raid0["meets_requirements"], true);
    assert_eq!(raid0["tolerates"]["racks"], 1);
    // RAID 1 pairs, one server per rack, at R3: capacity binds.
    let raid1 = point(&s, "3r3s-generic-16c-EF300-nvme-3.84tx2", "p1-raid1-r3-Ax1.Bx1.Cx1");
    assert_eq!(raid1["meets_requirements"], true);
    assert!(
        raid1["binding"]["kind"].as_str().unwrap().starts_with("capacity"),
        "{}",
        raid1["binding"]
    );
    // One big RAID 6 array in one rack: a rack outage binds, and it fails the policy.
    let raid6 = point(&s, "1r3s-generic-16c-EF300-nvme-3.84tx2", "r6-raid6-r3-Ax3");
    assert_eq!(raid6["binding"]["kind"], "tolerance");
    assert_eq!(raid6["binding"]["unit"], "racks");
    assert_eq!(raid6["meets_requirements"], false);
    assert_eq!(raid6["frontier"], false);
    // The cheapest that meets every requirement is on the frontier and meets them.
    let cheapest = s["cheapest"].as_str().unwrap();
    let c = s["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == cheapest)
        .unwrap();
    assert_eq!(c["meets_requirements"], true);
    assert_eq!(c["frontier"], true);
    // Pruned (the default), the one- and two-rack bills are not planned: neither keeps a quorum through a
    // rack outage. The frontier and the cheapest are the brute force's; the big RAID 6 bill says why.
    let pruned = size_json(&[&repo_file(SEED)]);
    assert_eq!(
        (
            pruned["considered"].as_u64(),
            pruned["pruned"].as_array().unwrap().len()
        ),
        (Some(7), 11)
    );
    assert_eq!(
        pruned["references"],
        serde_json::json!(["1r5s-generic-16c-EF300-nvme-3.84tx2"]),
        "the one big array is planned as a reference"
    );
    assert_eq!(pruned["complete"], true);
    let frontier = |s: &Value| {
        let mut v: Vec<String> = s["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["frontier"] == true)
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(frontier(&pruned), frontier(&s));
    assert_eq!(pruned["cheapest"], s["cheapest"]);
    let big = pruned["pruned"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["bill"] == "1r3s-generic-16c-EF300-nvme-3.84tx2")
        .unwrap();
    assert!(big["reason"].as_str().unwrap().starts_with("rack outage"), "{big}");
    assert_eq!(big["kind"], "outage", "{big}");
    // Each shape's site file, through design, gives size's figures.
    for p in [raid0, raid1, raid6] {
        let site = dir.path().join(format!("{}.yaml", p["bill"].as_str().unwrap()));
        assert_eq!(std::fs::read_to_string(&site).unwrap(), p["site"].as_str().unwrap());
        let layout = p["layout"].as_str().unwrap();
        let (code, d, err) = run(&["design", site.to_str().unwrap(), "--layout", layout, "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        let d: Value = serde_json::from_str(&d).unwrap();
        let l = &d["layouts"][0];
        assert_eq!(l["id"], layout);
        assert_eq!(l["tolerates"], p["tolerates"], "{layout}");
        assert_eq!(
            l["yearly"]["p_any_data_lost_per_year"], p["p_any_data_lost_per_year"],
            "{layout}"
        );
        assert_eq!(
            l["yearly"]["worst_unavailable_min_per_year"], p["worst_unavailable_min_per_year"],
            "{layout}"
        );
        assert_eq!(
            l["capacity"]["after_failure"]["headroom"], p["free_after_worst_tolerated_failure"],
            "{layout}"
        );
    }
}

/// The Done-when of issue 47 with the default search (pruning on): seed 000's own shapes are among the
/// candidates, with the seed's binding constraints — 2 + 2 + 1 RAID 0 servers at R5 and RAID 1 pairs per
/// rack at R3 bound by capacity, and one big RAID 6 array (one rack) bound by a rack outage.
#[test]
fn seed_000_default_search_carries_its_three_shapes_with_the_seeds_binding_constraints() {
    let s = size_json(&[&repo_file(SEED)]);
    assert_eq!(s["pruning"], true);
    let binding = |p: &Value| p["binding"]["kind"].as_str().unwrap_or("none").to_string();
    let raid0 = point(&s, "3r5s-generic-16c-EF300-nvme-3.84tx1", "p2-raid0-r5-Ax2.Bx2.Cx1");
    assert_eq!(raid0["meets_requirements"], true);
    assert_eq!(binding(raid0), "capacity", "{}", raid0["binding"]);
    let raid1 = point(&s, "3r3s-generic-16c-EF300-nvme-3.84tx2", "p1-raid1-r3-Ax1.Bx1.Cx1");
    assert_eq!(raid1["meets_requirements"], true);
    assert_eq!(binding(raid1), "capacity", "{}", raid1["binding"]);
    // The one big array: every server of the bill on one EF300 in one rack, RAID 6.
    for layout in ["r6-raid6-r3-Ax3", "r6-raid6-r5-Ax5"] {
        let raid6 = point(&s, "1r5s-generic-16c-EF300-nvme-3.84tx2", layout);
        assert_eq!(binding(raid6), "tolerance", "{layout}: {}", raid6["binding"]);
        assert_eq!(raid6["binding"]["unit"], "racks");
        assert!(
            raid6["binding"]["text"].as_str().unwrap().starts_with("rack outage"),
            "{}",
            raid6["binding"]
        );
        assert_eq!(raid6["meets_requirements"], false);
        assert_eq!(raid6["frontier"], false);
    }
    let listed =
        |key: &str| {
            s[key].as_array().unwrap().iter().any(|p| {
                p == "1r5s-generic-16c-EF300-nvme-3.84tx2" || p["bill"] == "1r5s-generic-16c-EF300-nvme-3.84tx2"
            })
        };
    assert!(listed("references") && !listed("pruned"), "{}", s["references"]);
}

/// A small workload (four bills) to run several times.
fn small(streams: &str, min_tolerated: &str) -> String {
    format!(
        "site: small\nnats: {{ replicas: [3] }}\nsize:\n  racks: [2, 3]\n  servers: [3, 3]\n  disks_per_server: [1, 2]\n  \
         server_models: [generic-16c]\n  storage: [EF300]\n  disk_models: [nvme-3.84t]\nworkload:\n  streams:\n{streams}\
         policy:\n  patterns: [\"1\", \"2\"]\n  min_tolerated: {min_tolerated}\n"
    )
}

const BASE: &str = "    - { name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h }\n    - { name: audit, msgs_per_s: 500, msg_size: 2KiB, retention: 7d }\n";

fn cheapest_cost(dir: &std::path::Path, name: &str, text: &str, prices: &str) -> f64 {
    let w = dir.join(name);
    std::fs::write(&w, text).unwrap();
    let s = size_json(&[w.to_str().unwrap(), "--prices", prices]);
    match s["cheapest"].as_str() {
        None => f64::INFINITY,
        Some(id) => s["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .unwrap()["cost"]["total"]
            .as_f64()
            .unwrap(),
    }
}

#[test]
fn more_load_or_a_stricter_policy_never_makes_the_cheapest_cheaper() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.yaml");
    std::fs::write(
        &prices,
        "currency: EUR\nservers: { generic-16c: 9000 }\narrays: { EF300: 30000 }\ndisks: { nvme-3.84t: 900 }\nrack_unit: 50\n",
    )
    .unwrap();
    let p = prices.to_str().unwrap();
    let base = cheapest_cost(dir.path(), "base.yaml", &small(BASE, "{ racks: 1 }"), p);
    assert!(base.is_finite(), "the small workload has a feasible candidate");
    let doubled_rates = BASE.replace("5000", "10000").replace("500,", "1000,");
    let doubled_retention = BASE.replace("24h", "48h").replace("7d", "14d");
    for (name, text) in [
        ("rates.yaml", small(&doubled_rates, "{ racks: 1 }")),
        ("retention.yaml", small(&doubled_retention, "{ racks: 1 }")),
        ("disks.yaml", small(BASE, "{ racks: 1, disks: 2 }")),
        ("servers.yaml", small(BASE, "{ racks: 1, servers: 1 }")),
        (
            "both.yaml",
            small(
                &doubled_rates.replace("24h", "48h").replace("7d", "14d"),
                "{ racks: 1 }",
            ),
        ),
    ] {
        let c = cheapest_cost(dir.path(), name, &text, p);
        assert!(c >= base, "{name}: cheapest {c} below the base's {base}");
    }
    // The stricter disk policy rules out one-disk RAID 0 servers: the cheapest costs more, not the same.
    let strict = cheapest_cost(dir.path(), "disks2.yaml", &small(BASE, "{ racks: 1, disks: 2 }"), p);
    assert!(strict > base, "{strict} vs {base}");
}

#[test]
fn prices_split_the_cost_and_name_the_currency() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(
        &w,
        small(BASE, "{ racks: 1 }").replace("racks: [2, 3]", "racks: [3, 3]"),
    )
    .unwrap();
    let prices = dir.path().join("prices.yaml");
    std::fs::write(
        &prices,
        "currency: EUR\nservers: { generic-16c: 9000 }\narrays: { EF300: 30000 }\ndisks: { nvme-3.84t: 900 }\nrack_unit: 50\nwatt_year: 2\n",
    )
    .unwrap();
    let s = size_json(&[w.to_str().unwrap(), "--prices", prices.to_str().unwrap()]);
    assert_eq!(s["cost_unit"]["unit"], "EUR");
    let p = point(&s, "3r3s-generic-16c-EF300-nvme-3.84tx1", "p2-");
    let c = &p["cost"];
    // 3 servers, 3 arrays, 3 × (1 + 1 spare) disks, 3 × (1U + 2U) rack units; typical watts 3 × 250 +
    // 3 × 550 + 6 × 12 = 2,472 W at 2 a watt-year.
    assert_eq!(c["servers"], 27000.0);
    assert_eq!(c["arrays"], 90000.0);
    assert_eq!(c["disks"], 5400.0);
    assert_eq!(c["racks"], 450.0);
    assert_eq!(c["power_per_year"], 4944.0);
    assert_eq!(c["total"], 27000.0 + 90000.0 + 5400.0 + 450.0 + 4944.0);
}

fn refused(workload: &str, prices: Option<&str>, wants: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, workload).unwrap();
    let pf = dir.path().join("prices.yaml");
    let mut args = vec!["size".to_string(), w.display().to_string()];
    if let Some(p) = prices {
        std::fs::write(&pf, p).unwrap();
        args.extend(["--prices".into(), pf.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    for want in wants {
        let want = want
            .replace("{W}", &w.display().to_string())
            .replace("{P}", &pf.display().to_string());
        assert!(err.contains(&want), "missing {want:?} in:\n{err}");
    }
    assert!(err.contains("fix:"), "{err}");
}

#[test]
fn bad_workloads_and_prices_are_refused_with_their_place() {
    let ok = small(BASE, "{ racks: 1 }");
    // racks in a workload file.
    refused(
        &format!("{ok}racks:\n  - {{ name: A, servers: [a] }}\n"),
        None,
        &["{W}:17:1: racks: a workload file has no `racks`"],
    );
    // power per rack below one server (generic-16c peaks at 550 W).
    refused(
        &ok.replace("size:\n", "size:\n  rack_watts: 300\n"),
        None,
        &["{W}:4:15: size.rack_watts: 300 W per rack powers no server"],
    );
    // an unknown model, with the nearest one suggested.
    refused(
        &ok.replace("[nvme-3.84t]", "[nvme-3.8t]"),
        None,
        &[
            "{W}:9:17: size.disk_models[0]: unknown model 'nvme-3.8t'",
            "write nvme-3.84t",
        ],
    );
    // an empty range.
    refused(
        &ok.replace("racks: [2, 3]", "racks: [3, 2]"),
        None,
        &["{W}:4:10: size.racks: the range [3, 2] is empty"],
    );
    // a problem in the workload's own keys keeps its place in the workload file.
    refused(
        &ok.replace("retention: 24h", "retention: 24"),
        None,
        &["{W}:12:68: workload.streams[0].retention"],
    );
    // prices: a model size allows without a price, and an unknown one.
    refused(
        &ok,
        Some("currency: EUR\nservers: { generic-16c: 9000, generic-99c: 1 }\narrays: {}\ndisks: { nvme-3.84t: 900 }\n"),
        &[
            "{P}:2:",
            "servers.generic-99c: unknown model",
            "arrays: no price for EF300",
        ],
    );
}

#[test]
fn a_budget_evaluates_the_cheapest_bills_first_and_says_whether_the_cheapest_is_proven() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(&w, small(BASE, "{ racks: 1 }")).unwrap();
    let w = w.to_str().unwrap();
    let all = size_json(&[w, "--exhaustive"]);
    assert_eq!(all["bills"], 4);
    assert_eq!(all["cheapest_proven"], true);
    assert_eq!((all["complete"].as_bool(), all["cut_by"].as_str()), (Some(true), None));
    // Two racks cannot carry R3 through a rack outage: the two cheapest bills (two arrays) fail, so a
    // budget of two finds nothing and says it may have missed the cheapest.
    let two = size_json(&[w, "--exhaustive", "--budget", "2"]);
    assert_eq!(
        (two["considered"].as_u64(), two["over_budget"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(two["cheapest"].is_null());
    assert_eq!(two["cheapest_proven"], false);
    assert_eq!(
        (two["complete"].as_bool(), two["cut_by"].as_str()),
        (Some(false), Some("budget"))
    );
    let three = size_json(&[w, "--exhaustive", "--budget", "3"]);
    assert_eq!(three["cheapest"], all["cheapest"]);
    assert_eq!(three["cheapest_proven"], true);
    // Pruned (the default), the two-rack bills are never planned and spend no budget: one bill planned
    // is the cheapest three-rack one, which holds the cheapest point.
    let one = size_json(&[w, "--budget", "1"]);
    assert_eq!(one["pruned"].as_array().unwrap().len(), 2);
    assert_eq!(
        (one["considered"].as_u64(), one["over_budget"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(one["cheapest"], all["cheapest"]);
    assert_eq!(one["cheapest_proven"], true);
    assert_eq!(one["complete"], false, "a cut run never reads as complete");
    // A CPU-seconds limit: the first bill is planned, then the limit cuts the rest, and the table says so.
    let cpu = size_json(&[w, "--exhaustive", "--cpu-seconds", "0.000001"]);
    assert_eq!(
        (
            cpu["considered"].as_u64(),
            cpu["over_budget"].as_u64(),
            cpu["cut_by"].as_str()
        ),
        (Some(1), Some(3), Some("cpu_seconds"))
    );
    assert_eq!(cpu["complete"], false);
    let (code, table, err) = run(&["size", w, "--exhaustive", "--cpu-seconds", "0.000001"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("INCOMPLETE SEARCH: --cpu-seconds stopped it with 3 bill(s) not planned"),
        "{table}"
    );
    assert!(err.contains("INCOMPLETE"), "{err}");
    let (code, _, err) = run(&["size", w, "--cpu-seconds", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--cpu-seconds 0: give a number of seconds above 0"),
        "{err}"
    );
}

fn write_small(dir: &std::path::Path) -> String {
    let w = dir.join("w.yaml");
    std::fs::write(&w, small(BASE, "{ racks: 1 }")).unwrap();
    w.to_str().unwrap().to_string()
}

/// `--format markdown`: the table report in GitHub Markdown — the frontier and each bill's best point as
/// Markdown tables (the JSON's ids, one row each), the cheapest named, and **INCOMPLETE SEARCH** when a
/// limit cut the search (never when it did not).
#[test]
fn markdown_has_the_tables_of_the_text_report_and_says_incomplete_when_cut() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_small(dir.path());
    let j = size_json(&[&w]);
    let (code, md, err) = run(&["size", &w, "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(md.starts_with("# natsplan size: "), "{md}");
    assert!(
        !md.contains("INCOMPLETE"),
        "a complete search never says INCOMPLETE\n{md}"
    );
    let header =
        "| candidate (bill/layout) | cost | verdict | writes survive r/a/s/d | P(data lost)/yr | down min/yr | \
                  free after failure | binding constraint |";
    assert_eq!(md.matches(header).count(), 2, "the frontier and per-bill tables\n{md}");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with(header))
        .collect();
    let cands = j["candidates"].as_array().unwrap();
    let on: Vec<&str> = cands
        .iter()
        .filter(|p| p["frontier"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(!on.is_empty());
    for id in &on {
        assert!(
            rows.iter().any(|r| r.starts_with(&format!("| {id} |"))),
            "{id} not a row\n{md}"
        );
    }
    assert_eq!(
        rows.len(),
        on.len() + j["considered"].as_u64().unwrap() as usize,
        "{md}"
    );
    let cheapest = j["cheapest"].as_str().unwrap();
    assert!(
        md.contains(&format!("cheapest that meets every requirement: {cheapest} at ")),
        "{md}"
    );
    for p in j["pruned"].as_array().unwrap() {
        assert!(
            md.contains(&format!("- pruned {} (", p["bill"].as_str().unwrap())),
            "{md}"
        );
    }
    let (code, cut, err) = run(&["size", &w, "--exhaustive", "--budget", "1", "--format", "markdown"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        cut.contains("> **INCOMPLETE SEARCH**: --budget stopped it with 3 bill(s) not planned"),
        "{cut}"
    );
}

fn csv_rows(out: &str) -> Vec<Vec<String>> {
    // No field of these records holds a comma inside quotes except binding_text; split by hand on the
    // quotes.
    out.split("\r\n")
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut cells = vec![String::new()];
            let mut quoted = false;
            for ch in l.chars() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => cells.push(String::new()),
                    c => cells.last_mut().unwrap().push(c),
                }
            }
            cells
        })
        .collect()
}

#[test]
fn csv_has_one_record_per_point_and_a_cut_search_never_reads_as_complete() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_small(dir.path());
    let j = size_json(&[&w]);
    let (code, out, err) = run(&["size", &w, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let rows = csv_rows(&out);
    let header = &rows[0];
    assert_eq!(header[0], "id");
    assert_eq!(header.last().unwrap(), "search_complete");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let points = j["candidates"].as_array().unwrap();
    assert_eq!(rows.len() - 1, points.len(), "one record per point");
    for (r, p) in rows[1..].iter().zip(points) {
        assert_eq!(r.len(), header.len(), "{r:?}");
        assert_eq!(r[col("id")], p["id"].as_str().unwrap());
        assert_eq!(
            r[col("cost_total")].parse::<f64>().unwrap(),
            p["cost"]["total"].as_f64().unwrap()
        );
        assert_eq!(r[col("frontier")], p["frontier"].to_string());
        assert_eq!(r[col("search_complete")], "true");
    }
    let cheapest: Vec<&Vec<String>> = rows[1..].iter().filter(|r| r[col("cheapest")] == "true").collect();
    assert_eq!(cheapest.len(), 1);
    assert_eq!(cheapest[0][col("id")], j["cheapest"].as_str().unwrap());
    // Cut by the budget: every record says the search is not complete.
    let (code, out, _) = run(&["size", &w, "--format", "csv", "--exhaustive", "--budget", "1"]);
    assert_eq!(code, 0);
    let rows = csv_rows(&out);
    assert!(rows.len() > 1);
    assert!(rows[1..].iter().all(|r| r[col("search_complete")] == "false"), "{out}");
}

#[test]
fn html_is_one_self_contained_page_with_the_frontier_chart() {
    let dir = tempfile::tempdir().unwrap();
    let w = write_small(dir.path());
    let j = size_json(&[&w]);
    let (code, html, err) = run(&["size", &w, "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&html, opts).unwrap_or_else(|e| panic!("not well-formed: {e}"));
    let lower = html.to_ascii_lowercase();
    for bad in ["http:", "https:", "<script", "<link", "<img", "url("] {
        assert!(!lower.contains(bad), "page references something outside itself: {bad}");
    }
    let svg = doc
        .descendants()
        .find(|n| n.has_tag_name("svg"))
        .expect("the frontier chart is inline SVG");
    // Every frontier point with loss odds is a filled mark, with its id in its tooltip.
    let marks = svg
        .descendants()
        .find(|n| n.attribute("data-marks") == Some("frontier"))
        .expect("frontier marks");
    let tips: Vec<String> = marks
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text().map(str::to_string))
        .collect();
    let frontier: Vec<&str> = j["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["frontier"] == true && p["p_any_data_lost_per_year"].as_f64().is_some_and(|x| x > 0.0))
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(!frontier.is_empty());
    assert_eq!(tips.len(), frontier.len(), "{tips:?}");
    for id in frontier {
        assert!(tips.iter().any(|t| t.starts_with(id)), "{id} not charted: {tips:?}");
    }
    assert!(html.contains("Pruned bills"), "the two-rack bills are listed as pruned");
    // Cut by a limit: the page says so.
    let (_, cut, _) = run(&["size", &w, "--format", "html", "--exhaustive", "--budget", "1"]);
    assert!(cut.contains("INCOMPLETE SEARCH: --budget stopped it"), "{cut}");
}

/// Every point of a small workload: its site through design gives its figures (and with --prices, for a
/// layout on all the bill's servers, the bill's cost: one pricing code).
#[test]
fn every_candidates_site_gives_the_same_figures_and_cost_in_design() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(
        &w,
        small(BASE, "{ racks: 1 }").replace("racks: [2, 3]", "racks: [3, 3]"),
    )
    .unwrap();
    let prices = dir.path().join("prices.yaml");
    std::fs::write(
        &prices,
        "currency: EUR\nservers: { generic-16c: 9000 }\narrays: { EF300: 30000 }\ndisks: { nvme-3.84t: 900 }\nrack_unit: 50\n",
    )
    .unwrap();
    let out = dir.path().join("sites");
    let s = size_json(&[
        w.to_str().unwrap(),
        "--prices",
        prices.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let points = s["candidates"].as_array().unwrap();
    assert!(points.len() >= 3, "{}", points.len());
    let mut whole = 0;
    for bill in points
        .iter()
        .map(|p| p["bill"].as_str().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let site = out.join(format!("{bill}.yaml"));
        let (code, d, err) = run(&[
            "design",
            site.to_str().unwrap(),
            "--prices",
            prices.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let d: Value = serde_json::from_str(&d).unwrap();
        for p in points.iter().filter(|p| p["bill"] == bill) {
            let l = d["layouts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["id"] == p["layout"])
                .unwrap_or_else(|| panic!("design has no {}", p["layout"]));
            assert_eq!(l["tolerates"], p["tolerates"], "{}", p["id"]);
            assert_eq!(l["verdict"], p["verdict"], "{}", p["id"]);
            assert_eq!(
                l["yearly"]["p_any_data_lost_per_year"], p["p_any_data_lost_per_year"],
                "{}",
                p["id"]
            );
            assert_eq!(
                l["yearly"]["worst_unavailable_min_per_year"], p["worst_unavailable_min_per_year"],
                "{}",
                p["id"]
            );
            let cost = &l["cost"];
            assert!(
                cost["total"].as_f64().unwrap() <= p["cost"]["total"].as_f64().unwrap(),
                "{}",
                p["id"]
            );
            if l["unused_servers"].as_array().is_none_or(|u| u.is_empty()) {
                assert_eq!(
                    cost, &p["cost"],
                    "{}: a layout on the whole bill costs the bill",
                    p["id"]
                );
                whole += 1;
            }
        }
    }
    assert!(whole > 0, "some layout uses the whole bill");
    // The table has the cost section; without --prices nothing changes.
    let site = out.join(format!("{}.yaml", points[0]["bill"].as_str().unwrap()));
    let (_, t, _) = run(&["design", site.to_str().unwrap(), "--prices", prices.to_str().unwrap()]);
    assert!(t.contains("cost per layout (EUR: the given prices"), "{t}");
    let (_, j, _) = run(&["design", site.to_str().unwrap(), "--format", "json"]);
    let j: Value = serde_json::from_str(&j).unwrap();
    assert!(j["layouts"][0].get("cost").is_none());
    // A site model with no price is refused with its place.
    std::fs::write(
        &prices,
        "currency: EUR\nservers: { generic-16c: 9000 }\ndisks: { nvme-3.84t: 900 }\n",
    )
    .unwrap();
    let (code, _, err) = run(&["design", site.to_str().unwrap(), "--prices", prices.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no price for EF300, which the site"), "{err}");
}

/// `--omb` as design has it: the streams are merged into every candidate's site, and design given the
/// same flag on a candidate's site file gives its figures.
#[test]
fn omb_streams_are_sized_for_and_design_with_the_same_flag_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(
        &w,
        small(BASE, "{ racks: 1 }").replace("racks: [2, 3]", "racks: [3, 3]"),
    )
    .unwrap();
    let omb = dir.path().join("omb.yaml");
    std::fs::write(
        &omb,
        "name: 2 topics\ntopics: 2\npartitionsPerTopic: 1\nmessageSize: 1024\nproducerRate: 20000\nsubscriptionsPerTopic: 1\n",
    )
    .unwrap();
    let out = dir.path().join("sites");
    let (w, omb, out) = (w.to_str().unwrap(), omb.to_str().unwrap(), out.to_str().unwrap());
    let plain = size_json(&[w]);
    let s = size_json(&[w, "--omb", omb, "--omb-retention", "6h", "--out", out]);
    assert!(
        s["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a.as_str().unwrap().contains("imported with --omb")),
        "{}",
        s["assumptions"]
    );
    let c = |s: &Value| s["candidates"].as_array().unwrap().len();
    assert!(c(&s) > 0);
    // More load: the fullest server needs more than without the imported streams.
    let need = |s: &Value| {
        s["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["free_after_worst_tolerated_failure"].as_f64())
            .fold(f64::INFINITY, f64::min)
    };
    assert!(need(&s) < need(&plain), "{} vs {}", need(&s), need(&plain));
    let p = &s["candidates"][0];
    let site = format!("{out}/{}.yaml", p["bill"].as_str().unwrap());
    let layout = p["layout"].as_str().unwrap();
    let (code, d, err) = run(&[
        "design",
        &site,
        "--omb",
        omb,
        "--omb-retention",
        "6h",
        "--layout",
        layout,
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let d: Value = serde_json::from_str(&d).unwrap();
    let l = &d["layouts"][0];
    assert_eq!(l["tolerates"], p["tolerates"]);
    assert_eq!(l["yearly"]["p_any_data_lost_per_year"], p["p_any_data_lost_per_year"]);
    assert_eq!(
        l["yearly"]["worst_unavailable_min_per_year"],
        p["worst_unavailable_min_per_year"]
    );
}
