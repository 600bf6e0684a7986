//! Reports in operators' words (issue 19): no calibration file ids in table rows, units in headers, no
//! figure wrapped at the default width, whole sentences, the servers a layout leaves out, verdicts
//! defined in `--help`, "N layouts evaluated" equal to what JSON lists, layout ids that rack names
//! ending in digits cannot garble, and the per-asset table largest first.

use crate::common::run;
use std::io::Write;

const EXAMPLES: [&str; 6] = [
    "full-reference",
    "one-array-raid6",
    "one-rack-raid10",
    "seed-five-servers-raid0",
    "seed004-three-guests-one-host",
    "three-racks-raid1",
];

/// The built-in calibration files' ids (file stems), which tables must not show.
fn calibration_ids() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration");
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "yaml").then(|| p.file_stem().unwrap().to_string_lossy().to_string())
        })
        .collect();
    ids.sort();
    assert!(ids.len() >= 5, "{ids:?}");
    ids
}

fn example(name: &str) -> String {
    crate::common::repo_file(&format!("examples/{name}.yaml"))
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "natsplan {args:?}: {err}");
    out
}

fn site_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

/// Table rows (not headers) whose cell continues a figure of the row above: a cell that starts with a
/// digit or is a lone unit, on a line whose first cell is empty (a wrapped row), under a non-empty cell.
fn wrapped_figures(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut in_header = false;
    let mut out = Vec::new();
    let cells = |l: &str| -> Vec<String> { l.trim_matches('│').split('┆').map(|c| c.trim().to_string()).collect() };
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with('┌') {
            in_header = true;
        }
        if l.starts_with('╞') {
            in_header = false;
        }
        if in_header || !l.starts_with('│') || i == 0 {
            continue;
        }
        let (now, above) = (cells(l), cells(lines[i - 1]));
        if now.first().is_some_and(|c| !c.is_empty()) {
            continue;
        }
        for (j, c) in now.iter().enumerate() {
            let figure = c.starts_with(|ch: char| ch.is_ascii_digit() || "–.%×".contains(ch))
                || ["B", "KiB", "MiB", "GiB", "TiB", "s", "min", "h", "y"].contains(&c.as_str());
            if figure && above.get(j).is_some_and(|a| !a.is_empty()) {
                out.push(format!("{} / {}", above[j], c));
            }
        }
    }
    out
}

#[test]
fn tables_name_sources_in_words_and_keep_the_ids_in_json() {
    let ids = calibration_ids();
    for name in EXAMPLES {
        let text = ok(&["--width", "120", "design", &example(name)]);
        for line in text.lines().filter(|l| l.starts_with('│')) {
            for id in &ids {
                assert!(!line.contains(id.as_str()), "{name}: a table row shows {id}: {line}");
            }
        }
        let json = ok(&["--format", "json", "design", &example(name)]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let cal = v["layouts"][0]["predicted"]["streams"][0]["calibration"]
            .as_str()
            .unwrap();
        assert!(ids.iter().any(|i| i == cal), "{name}: JSON keeps the id, got {cal}");
    }
    let text = ok(&["--width", "120", "design", &example("seed004-three-guests-one-host")]);
    assert!(text.contains("3 LXC guests on one host"), "{text}");
}

#[test]
fn headers_carry_units() {
    let text = ok(&["--width", "120", "design", &example("three-racks-raid1")]);
    assert!(text.contains("min/yr"), "{text}");
    assert!(!text.contains("down/yr"), "{text}");
    for h in ["required", "ops/s", "predicted", "band ops/s", "perf ×"] {
        assert!(text.contains(h), "header {h} missing:\n{text}");
    }
    let sim = ok(&[
        "--width",
        "120",
        "simulate",
        &example("three-racks-raid1"),
        "--trials",
        "2000",
    ]);
    assert!(
        sim.contains("unavailable min/yr") && sim.contains("MTTDL years"),
        "{sim}"
    );
}

#[test]
fn no_figure_wraps_at_the_default_width_or_at_100() {
    for name in EXAMPLES {
        let site = example(name);
        for width in ["120", "100"] {
            let mut texts = vec![
                ok(&["--width", width, "design", &site]),
                ok(&["--width", width, "whatif", &site, "--all", "1"]),
                ok(&["--width", width, "simulate", &site, "--trials", "2000"]),
            ];
            let (_, one, _) = run(&["--width", width, "whatif", &site, "--fail", "rack:A"]);
            texts.push(one);
            for t in texts {
                let w = wrapped_figures(&t);
                assert!(w.is_empty(), "{name} at {width}: wrapped figures {w:?}\n{t}");
                for l in t.lines().filter(|l| l.starts_with(['│', '┌', '└'])) {
                    let n = l.chars().count();
                    assert!(n <= width.parse().unwrap(), "{name}: a table {n} wide at {width}: {l}");
                }
            }
        }
    }
}

/// Racks whose names end in digits, one server with no storage, extra servers beside the arrays.
const DIGITS: &str = r#"
site: words
nats: { replicas: [3] }
racks:
  - name: R1
    servers: [s1, s2]
    arrays: [{ name: R1a, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }]
  - name: R2
    servers: [s3, s4]
    arrays: [{ name: R2a, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }]
  - name: R3
    servers: [s5]
  - name: R4
    servers: [s6]
    arrays: [{ name: R4a, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 0 }]
workload:
  streams: [{ name: orders, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }]
policy: { patterns: ["1", "3", "ddp-raid1"] }
"#;

#[test]
fn sentences_are_whole() {
    let f = site_file(DIGITS);
    let site = f.path().to_str().unwrap();
    let text = ok(&["--width", "120", "--format", "json", "design", site]);
    assert!(!text.contains("server' volumes"), "{text}");
    assert!(text.contains("destroys the server's volume on R4a"), "{text}");
    assert!(text.contains("destroys all 2 servers' volumes on R1a"), "{text}");
    let table = ok(&["--width", "120", "design", site]);
    // The DDP rule once, with every array it rules out.
    assert_eq!(table.matches("DDP needs at least 11 disks").count(), 1, "{table}");
    assert!(
        table.contains("DDP needs at least 11 disks: R1a has 4, R2a has 4, R4a has 2"),
        "{table}"
    );
    // An even JetStream server count: what it tolerates, in words.
    // Racks R1 and R2 only (R3's server would borrow R1's array, R4 is a fifth server): 4 servers.
    let even = DIGITS
        .replace("  - name: R4\n    servers: [s6]\n    arrays: [{ name: R4a, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 0 }]\n", "")
        .replace("  - name: R3\n    servers: [s5]\n", "");
    let g = site_file(&even);
    let json = ok(&["--format", "json", "design", g.path().to_str().unwrap()]);
    assert!(!json.contains("no more than"), "{json}");
    assert!(
        json.contains("so it tolerates 1 lost server, the same as 3 servers"),
        "{json}"
    );
    let predict = ok(&[
        "--width",
        "120",
        "predict",
        "--kind",
        "obj-put",
        "--size",
        "1MiB",
        "--workers",
        "1",
    ]);
    assert!(predict.contains("· 1 worker "), "{predict}");
    assert!(
        !predict.contains("1 workers") && !predict.contains("LUN(s)"),
        "{predict}"
    );
}

#[test]
fn servers_left_out_are_named_with_a_role() {
    let f = site_file(DIGITS);
    let site = f.path().to_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&["--format", "json", "design", site])).unwrap();
    let best = &v["layouts"][0];
    let unused: Vec<(String, String)> = best["unused_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["name"].as_str().unwrap().into(), u["role"].as_str().unwrap().into()))
        .collect();
    assert!(unused.contains(&("s5".into(), "core-only".into())), "{unused:?}");
    assert!(unused.iter().any(|(_, r)| r == "standby"), "{unused:?}");
    for (name, _) in &unused {
        assert!(
            !best["servers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == name.as_str()),
            "{name} is both used and unused"
        );
    }
    let text = ok(&["--width", "120", "design", site]);
    assert!(
        text.contains("Not in this layout: s5 (core-only): no storage; run nats-server without JetStream"),
        "{text}"
    );
    assert!(text.contains("(standby): they share arrays R1a, R2a"), "{text}");
    // A layout with every server in use lists none.
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["--format", "json", "design", &example("three-racks-raid1")])).unwrap();
    assert_eq!(v["layouts"][0]["unused_servers"], serde_json::json!([]));
}

#[test]
fn verdicts_are_defined_in_help_and_top_shows_its_default() {
    let help = ok(&["design", "--help"]);
    for v in ["recommended", "acceptable", "risky", "rejected"] {
        assert!(
            help.lines().any(|l| l.trim_start().starts_with(v)),
            "{v} not defined:\n{help}"
        );
    }
    assert!(help.contains("[default: all of them]"), "{help}");
    let docs = std::fs::read_to_string(crate::common::repo_file("docs/reports.md")).unwrap();
    for v in ["`recommended`", "`acceptable`", "`risky`", "`rejected`"] {
        assert!(docs.contains(v), "docs/reports.md does not define {v}");
    }
}

#[test]
fn layouts_evaluated_is_what_json_lists() {
    for name in EXAMPLES {
        let v: serde_json::Value = serde_json::from_str(&ok(&["--format", "json", "design", &example(name)])).unwrap();
        let listed = v["layouts"].as_array().unwrap().len();
        assert_eq!(v["evaluated"].as_u64(), Some(listed as u64), "{name}");
        let text = ok(&["--width", "120", "design", &example(name)]);
        let want = format!("— {listed} layout{} evaluated", if listed == 1 { "" } else { "s" });
        assert!(text.lines().next().unwrap().contains(&want), "{name}: {want}\n{text}");
        if listed > 1 {
            let top = ok(&["--width", "120", "design", &example(name), "--top", "1"]);
            assert!(
                top.lines()
                    .next()
                    .unwrap()
                    .contains(&format!("{listed} layouts evaluated, 1 shown")),
                "{top}"
            );
        }
    }
}

#[test]
fn layout_ids_keep_rack_names_ending_in_digits_readable() {
    let f = site_file(DIGITS);
    let site = f.path().to_str().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&["--format", "json", "design", site])).unwrap();
    let ids: Vec<String> = v["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.iter().any(|i| i.contains("-R1x2.R2x2")), "{ids:?}");
    for id in &ids {
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)),
            "{id}: not safe in a file name or a shell"
        );
        // --layout accepts every new id.
        let (code, out, err) = run(&["--format", "json", "design", site, "--layout", id]);
        assert_eq!(code, 0, "{id}: {err}");
        assert!(out.contains(id.as_str()));
    }
    // The old form is gone; asking for it names the new id.
    let new = ids.iter().find(|i| i.contains("-R1x2.R2x2")).unwrap();
    let old = ["R1", "R2", "R3", "R4"]
        .iter()
        .fold(new.clone(), |id, r| id.replace(&format!("{r}x"), r));
    assert!(old.contains("R12.R22"), "{old}");
    let (code, _, err) = run(&["design", site, "--layout", &old]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("RACKxN") && err.contains(new.as_str()), "{err}");
}

#[test]
fn the_asset_that_decides_capacity_is_never_cut_off() {
    // 24 small streams first in the file, then a large one: a terminal shows 20 asset rows.
    let mut yaml = String::from("site: many\nnats: { replicas: [3] }\nracks:\n");
    for r in ["A", "B", "C"] {
        yaml.push_str(&format!(
            "  - name: {r}\n    servers: [n{r}]\n    arrays: [{{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}]\n"
        ));
    }
    yaml.push_str("workload:\n  streams:\n");
    for i in 0..24 {
        yaml.push_str(&format!(
            "    - {{ name: small{i:02}, msgs_per_s: 1, msg_size: 100B, retention: 1h }}\n"
        ));
    }
    yaml.push_str("    - { name: zz-biggest, msgs_per_s: 2000, msg_size: 1KiB, retention: 24h }\n");
    let f = site_file(&yaml);
    let text = ok(&["--width", "120", "design", f.path().to_str().unwrap()]);
    let first_asset_row = text
        .lines()
        .skip_while(|l| !l.starts_with("│ asset"))
        .find(|l| l.starts_with("│ ") && !l.starts_with("│ asset"))
        .unwrap_or("");
    assert!(first_asset_row.contains("zz-biggest"), "{first_asset_row}\n{text}");
    assert!(text.contains("… and 5 more assets"), "{text}");
}
