//! HTML reports: the page parses (well-formed XHTML-style markup), is self-contained (nothing outside the
//! file is referenced), and the layout drawing contains every rack, array, server and stream of the plan;
//! whatif greys the failed domains and colours streams by status; the CLI writes it with `--format html`.

use assert_cmd::Command;
use natsplan::catalog::Catalog;
use natsplan::report::design::Selection;
use natsplan::report::html;
use std::collections::BTreeSet;
use std::io::Write;

/// Three racks, one with two servers and an internal-disk server, one array per rack, a server that the
/// planner may leave out, and a workload of every kind.
const SITE: &str = r#"
site: html-test
nats: { replicas: [3], sync_interval: 2m }
racks:
  - name: A
    servers: [alpha, bravo]
    arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 5, hot_spares: 1 }]
  - name: B
    servers: [charlie]
    arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }]
  - name: C
    servers:
      - name: echo
        disks: { disk_model: nvme-1.92t, count: 2 }
workload:
  streams:
    - { name: orders, msgs_per_s: 2000, msg_size: 1KiB, retention: 24h, consumers: 2 }
    - { name: "audit-log", msgs_per_s: 50, msg_size: 4KiB, retention: 7d }
  kv: [{ name: sessions, puts_per_s: 300, value_size: 512B, keys: 100000, history: 1 }]
  object_stores: [{ name: blobs, puts_per_s: 5, object_size: 1MiB, retention: 1h }]
policy: { patterns: ["1", "2", "3", "4"] }
"#;

fn plan() -> natsplan::plan::Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(SITE, "html-test.yaml", &cat).expect("test site parses");
    natsplan::plan::build(&site, &cat)
}

/// Parse as XML; every element closed and every text escaped, or this fails.
fn parse(html: &str) -> roxmltree::Document<'_> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(html, opts).unwrap_or_else(|e| panic!("HTML does not parse: {e}"))
}

/// Nothing outside the file: no URLs, no scripts, no external images, styles or fonts.
fn assert_self_contained(html: &str, doc: &roxmltree::Document) {
    let lower = html.to_ascii_lowercase();
    for bad in [
        "http:", "https:", "@import", "url(", "//cdn", "<script", "<link", "<iframe", "<img",
    ] {
        assert!(!lower.contains(bad), "page references something outside itself: {bad}");
    }
    for n in doc.descendants().filter(|n| n.is_element()) {
        for a in n.attributes() {
            if matches!(a.name(), "src" | "href" | "xlink:href") {
                assert!(
                    a.value().starts_with('#'),
                    "<{} {}=\"{}\"> points outside the page",
                    n.tag_name().name(),
                    a.name(),
                    a.value()
                );
            }
        }
    }
}

/// Values of a `data-*` attribute inside the first SVG under `root`.
fn data(root: roxmltree::Node, attr: &str) -> BTreeSet<String> {
    root.descendants()
        .filter_map(|n| n.attribute(attr))
        .map(str::to_string)
        .collect()
}

#[test]
fn design_html_parses_is_self_contained_and_draws_everything() {
    let plan = plan();
    assert!(!plan.layouts.is_empty());
    let sel = Selection::default();
    let out = html::design(&plan, &sel, None);
    let doc = parse(&out);
    assert_self_contained(&out, &doc);
    assert_eq!(doc.root_element().tag_name().name(), "html");
    let svgs: Vec<roxmltree::Node> = doc.descendants().filter(|n| n.has_tag_name("svg")).collect();
    // One drawing per detailed layout (up to three).
    assert_eq!(svgs.len(), plan.layouts.len().min(3));
    let site = &plan.input;
    for (svg, l) in svgs.iter().zip(&plan.layouts) {
        let racks = data(*svg, "data-rack");
        let arrays = data(*svg, "data-array");
        let servers = data(*svg, "data-server");
        let assets = data(*svg, "data-asset");
        for r in &site.racks {
            assert!(racks.contains(&r.name), "{}: rack {} not drawn", l.id, r.name);
        }
        for a in &site.arrays {
            assert!(arrays.contains(&a.name), "{}: array {} not drawn", l.id, a.name);
        }
        for s in &site.servers {
            assert!(servers.contains(&s.name), "{}: server {} not drawn", l.id, s.name);
        }
        for a in l
            .per_asset()
            .unwrap()
            .assets
            .iter()
            .filter(|a| a.kind != natsplan::layout::AssetKind::Consumer)
        {
            assert!(
                assets.contains(&a.name),
                "{}: stream {} not in the drawing",
                l.id,
                a.name
            );
        }
        // Every disk of every array is a rectangle; every LUN names its server.
        let disks = data(*svg, "data-disk");
        let total: u32 = site.arrays.iter().map(|a| a.disks).sum();
        assert_eq!(disks.len() as u32, total, "{}: disks drawn", l.id);
        let luns = data(*svg, "data-lun");
        for sv in &l.servers {
            assert!(luns.contains(&sv.name), "{}: no LUN bar for {}", l.id, sv.name);
        }
        // Replica chips: one per expected replica.
        let chips = svg
            .descendants()
            .filter(|n| n.attribute("class") == Some("replica"))
            .count();
        let expected: usize = l
            .per_asset()
            .unwrap()
            .assets
            .iter()
            .filter(|a| a.kind != natsplan::layout::AssetKind::Consumer)
            .map(|a| a.expected.len())
            .sum();
        assert_eq!(chips, expected, "{}: replica chips", l.id);
    }
}

#[test]
fn hot_spares_are_marked_on_the_last_disks() {
    let plan = plan();
    let l = plan
        .layouts
        .iter()
        .find(|l| l.hot_spares > 0)
        .expect("a layout keeps hot spares");
    let out = html::design(
        &plan,
        &Selection {
            top: None,
            layout: Some(l.id.clone()),
        },
        None,
    );
    let doc = parse(&out);
    let spare_titles: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("title"))
        .filter_map(|n| n.text())
        .filter(|t| t.ends_with("hot spare"))
        .map(str::to_string)
        .collect();
    assert_eq!(spare_titles.len() as u32, l.hot_spares, "{spare_titles:?}");
    assert!(
        spare_titles.iter().any(|t| t.starts_with("disk A1/5")),
        "{spare_titles:?}"
    );
}

#[test]
fn names_are_escaped() {
    let mut plan = plan();
    plan.site = "<script>alert(1)</script> & co".into();
    let out = html::design(&plan, &Selection::default(), None);
    let doc = parse(&out);
    assert_self_contained(&out, &doc);
    assert!(out.contains("&lt;script&gt;"));
}

#[test]
fn the_perf_chart_has_a_curve_per_layout_and_sync_mode_and_the_seed_points() {
    let plan = plan();
    let sel = Selection {
        top: Some(2),
        layout: None,
    };
    let cat = Catalog::builtin();
    let shown: Vec<(&str, &natsplan::layout::Layout)> = natsplan::report::design::selected(&plan, &sel)
        .into_iter()
        .map(|l| (l.id.as_str(), l.hardware()))
        .collect();
    let curves =
        natsplan::perf::curves::PerfCurves::build(&plan.input, &shown, &cat, &natsplan::perf::Calibration::builtin());
    let out = html::design(&plan, &sel, Some(&curves));
    let doc = parse(&out);
    assert_self_contained(&out, &doc);
    let series = data(doc.root(), "data-series");
    for l in plan.layouts.iter().take(2) {
        for mode in ["always", "delayed"] {
            assert!(
                series.contains(&format!("{} {mode}", l.id)),
                "{} {mode} missing: {series:?}",
                l.id
            );
        }
    }
    for shape in ["r0-single", "r0-rf3", "r1-rf3"] {
        assert!(series.contains(&format!("{shape} always")), "{series:?}");
    }
    let marks = data(doc.root(), "data-marks");
    assert!(marks.contains("E-Series guide rows, always") && marks.contains("E-Series guide rows, delayed"));
    // The published rows are the points: 1,036.38 puts/s is r1-rf3 delayed 8 KiB, second batch.
    assert!(out.contains("1036 puts/s"), "seed point missing");
    // Curves fall with object size (bigger objects, fewer puts/s).
    for c in &curves.panels[0].curves {
        let first = c.points.first().unwrap().1;
        let last = c.points.last().unwrap().1;
        assert!(first > last, "{}: {first} ≤ {last}", c.label);
    }
}

fn site_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

#[test]
fn cli_design_writes_html() {
    let f = site_file(SITE);
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("design")
        .arg(f.path())
        .args(["--format", "html", "--top", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    let doc = parse(&text);
    assert_self_contained(&text, &doc);
    assert!(text.contains("id=\"perf\""), "design html carries the perf chart");
}

#[test]
fn cli_whatif_greys_failed_domains_and_colours_streams_by_status() {
    let f = site_file(SITE);
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("whatif")
        .arg(f.path())
        .args(["--fail", "rack:A", "--fail", "disk:B1/1", "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let doc = parse(&text);
    assert_self_contained(&text, &doc);
    let rack_a = doc
        .descendants()
        .find(|n| n.attribute("data-rack") == Some("A"))
        .expect("rack A drawn");
    assert!(rack_a.descendants().any(|n| n.text() == Some("rack A — FAILED")));
    let disk = doc
        .descendants()
        .find(|n| n.attribute("data-disk") == Some("B1/1"))
        .expect("disk B1/1 drawn");
    assert!(disk
        .descendants()
        .any(|n| n.text().is_some_and(|t| t.ends_with("FAILED"))));
    let rack_b = doc
        .descendants()
        .find(|n| n.attribute("data-rack") == Some("B"))
        .unwrap();
    assert!(!rack_b.descendants().any(|n| n.text() == Some("rack B — FAILED")));
    // Every stream chip has a status tooltip.
    let chips: Vec<String> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("replica"))
        .filter_map(|n| n.descendants().find(|c| c.has_tag_name("title")).and_then(|t| t.text()))
        .map(str::to_string)
        .collect();
    assert!(!chips.is_empty());
    for c in &chips {
        assert!(
            ["ok", "degraded", "unavailable", "data_lost"]
                .iter()
                .any(|s| c.ends_with(&format!(": {s}"))),
            "chip without status: {c}"
        );
    }
}

#[test]
fn cli_simulate_writes_html_with_the_chart_and_drawing() {
    let f = site_file(SITE);
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("simulate")
        .arg(f.path())
        .args(["--trials", "500", "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let doc = parse(&text);
    assert_self_contained(&text, &doc);
    let bars = data(doc.root(), "data-bar");
    assert!(bars.contains("meta"), "{bars:?}");
    for name in ["orders", "audit-log", "sessions", "blobs"] {
        assert!(bars.contains(name), "{name} has no bar: {bars:?}");
    }
    assert!(!data(doc.root(), "data-rack").is_empty(), "the layout is drawn");
}
