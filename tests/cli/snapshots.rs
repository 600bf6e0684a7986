//! Snapshots of every report format at a fixed width (100 columns) for design, whatif (one scenario and
//! `--all 1`), simulate (few trials, fixed seed), predict and emit's files, on the sites in examples/.
//! They pin the bytes a user sees: a refactor must leave them unchanged; a deliberate change of a report
//! is reviewed and accepted with `cargo insta review` (or `INSTA_UPDATE=always`).

use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

const WIDTH: &str = "100";
const FORMATS: [&str; 4] = ["table", "json", "markdown", "html"];

const SITES: [&str; 6] = [
    "full-reference",
    "one-array-raid6",
    "one-rack-raid10",
    "seed-five-servers-raid0",
    "seed004-three-guests-one-host",
    "three-racks-raid1",
];

/// Run the binary; the report on stdout (exit 0 or 1 expected: a reached `--fail-on` is not used here).
fn stdout(args: &[&str]) -> String {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .env_remove("COLUMNS")
        .args(["--width", WIDTH])
        .args(args)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "natsplan {args:?} exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("reports are UTF-8")
}

fn site(name: &str) -> String {
    format!("examples/{name}.yaml")
}

/// The best layout's id and the rack of its first server, from design's JSON.
fn best(site_path: &str) -> (String, String, bool) {
    let plan: serde_json::Value = serde_json::from_str(&stdout(&["--format", "json", "design", site_path])).unwrap();
    let l = &plan["layouts"][0];
    (
        l["id"].as_str().unwrap().to_string(),
        l["servers"][0]["rack"].as_str().unwrap().to_string(),
        l["verdict"] == "rejected",
    )
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

#[test]
fn design_reports() {
    settings().bind(|| {
        for name in SITES {
            for fmt in FORMATS {
                let text = stdout(&["--format", fmt, "design", &site(name)]);
                insta::assert_snapshot!(format!("design-{name}-{fmt}"), text);
            }
        }
    });
}

#[test]
fn whatif_reports() {
    settings().bind(|| {
        for name in SITES {
            let s = site(name);
            let (_, rack, _) = best(&s);
            let fail = format!("rack:{rack}");
            for fmt in FORMATS {
                let one = stdout(&["--format", fmt, "whatif", &s, "--fail", &fail]);
                insta::assert_snapshot!(format!("whatif-{name}-rack-{fmt}"), one);
                let all = stdout(&["--format", fmt, "whatif", &s, "--all", "1"]);
                insta::assert_snapshot!(format!("whatif-{name}-all1-{fmt}"), all);
            }
        }
    });
}

#[test]
fn simulate_reports() {
    settings().bind(|| {
        for name in SITES {
            for fmt in FORMATS {
                let text = stdout(&[
                    "--format",
                    fmt,
                    "simulate",
                    &site(name),
                    "--trials",
                    "2000",
                    "--seed",
                    "7",
                ]);
                insta::assert_snapshot!(format!("simulate-{name}-{fmt}"), text);
            }
        }
    });
}

#[test]
fn predict_reports() {
    let shapes: [(&str, &[&str]); 5] = [
        ("js", &["--kind", "js"]),
        (
            "js-always-r5",
            &["--kind", "js", "--sync", "always", "--replicas", "5", "--servers", "5"],
        ),
        ("kv-batch", &["--kind", "kv", "--workers", "4", "--batch", "32"]),
        (
            "obj-put-1mib",
            &["--kind", "obj-put", "--size", "1MiB", "--raid", "raid0", "--disks", "1"],
        ),
        ("core", &["--kind", "core", "--workers", "2", "--size", "128B"]),
    ];
    settings().bind(|| {
        for (label, args) in shapes {
            for fmt in ["table", "json", "markdown"] {
                let mut a = vec!["--format", fmt, "predict"];
                a.extend_from_slice(args);
                insta::assert_snapshot!(format!("predict-{label}-{fmt}"), stdout(&a));
            }
        }
    });
}

/// Every emitted file, path then content, in path order.
fn tree(dir: &Path) -> String {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|(p, t)| format!("=== {p}\n{t}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn emit_files() {
    settings().bind(|| {
        for name in SITES {
            let s = site(name);
            let (id, _, rejected) = best(&s);
            let tmp = tempfile::tempdir().unwrap();
            let out = tmp.path().join("out");
            let out_s = out.display().to_string();
            let mut args = vec!["--format", "json", "emit", &s, "--layout", &id, "--out", &out_s];
            if rejected {
                args.push("--allow-rejected");
            }
            let report = stdout(&args).replace(&out_s, "OUT");
            insta::assert_snapshot!(format!("emit-{name}-report"), report);
            insta::assert_snapshot!(format!("emit-{name}-files"), tree(&out));
        }
    });
}

/// bench's text, JSON and CSV of recorded results (tests/data/bench-recorded.json: a core pub/sub run
/// with losses and a rate, an incomplete JetStream publish that left its stream, and two direct-get runs
/// recorded on the mock client, one cut short by a signal). The bytes a `natsplan bench` user reads and
/// scripts parse: a refactor of bench must leave them unchanged.
#[test]
fn bench_outputs_of_recorded_results() {
    use natsplan::bench::{export, BenchResult};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bench-recorded.json");
    let recorded: std::collections::BTreeMap<String, BenchResult> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(recorded.len(), 4);
    settings().bind(|| {
        for (name, r) in &recorded {
            for (fmt, bytes) in [
                ("text", export::text(r)),
                ("json", export::json(r)),
                ("csv", export::csv(r)),
            ] {
                let text = String::from_utf8(bytes).expect("bench outputs are UTF-8");
                insta::assert_snapshot!(format!("bench-{name}-{fmt}"), text);
            }
        }
    });
}
