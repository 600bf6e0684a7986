//! `natsplan verify` without a cluster: flag errors name the flag (exit 2), an unreachable server exits 3,
//! and a dry run still prints its row plan (exit 0) when nothing answers.

use assert_cmd::Command;
use serde_json::Value;

use crate::common::{dead_url, run};

#[test]
fn an_unreachable_server_exits_3_and_names_it() {
    let url = dead_url();
    let out = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&["verify", "--server", &url, "--out", out.path().to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(std::fs::read_dir(out.path()).unwrap().next().is_none());
}

#[test]
fn a_dry_run_plans_rows_even_when_nothing_answers() {
    let url = dead_url();
    let (code, stdout, err) = run(&["--format", "json", "verify", "--server", &url, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 8);
    assert!(v["notes"][0].as_str().unwrap().contains("not reached"), "{v:#}");
    // One URL: one assumed server, so the R3 rows are skipped with the reason.
    let js = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "js-r3-1p-128B")
        .unwrap();
    assert_eq!(js["status"], "skipped");
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let url = dead_url();
    for (args, needle) in [
        (vec!["--tolerance", "lots"], "--tolerance"),
        (vec!["--tolerance=-1"], "--tolerance"),
        (vec!["--row-seconds", "0"], "--row-seconds"),
        (vec!["--max-bytes", "12 parsecs"], "--max-bytes"),
        (vec!["--monitor", "127.0.0.1:8222"], "--monitor"),
        (vec!["--calibration", "/nonexistent/cal.yaml"], "--calibration"),
        (vec!["--ladder", "medium"], "--ladder"),
        (vec!["--repeat", "0"], "--repeat"),
        (vec!["--repeat", "many"], "--repeat"),
    ] {
        let mut a = vec!["verify", "--server", url.as_str(), "--dry-run"];
        a.extend(args.iter().copied());
        let (code, _, err) = run(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // --site without --layout takes the best-ranked layout and says so (issue 39: one rule for every
    // command; before, verify refused it while whatif took rank 1).
    let (code, _, err) = run(&[
        "verify",
        "--server",
        url.as_str(),
        "--dry-run",
        "--site",
        "examples/three-racks-raid1.yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(": the best of") && err.contains("--layout ID for another"),
        "{err}"
    );
}

#[test]
fn an_unknown_layout_is_bad_input() {
    let url = dead_url();
    let site = format!("{}/examples/three-racks-raid1.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, _, err) = run(&[
        "verify",
        "--server",
        &url,
        "--site",
        &site,
        "--layout",
        "nope",
        "--dry-run",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--layout"), "{err}");
}

#[test]
fn faults_needs_three_nodes() {
    assert_cmd::Command::cargo_bin("natsplan")
        .unwrap()
        .args(["verify", "--faults", "--nodes", "2"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("at least 3 servers"));
}

#[test]
fn an_unknown_rack_for_faults_is_bad_input_naming_the_racks() {
    let out = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "verify",
        "--faults",
        "--nodes",
        "3",
        "--racks",
        "r9",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--racks r9") && err.contains("r1, r2, r3"), "{err}");
    let site = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/four-racks-r3.yaml");
    let plan = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["--format", "json", "design", site, "--top", "1"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&plan.stdout).unwrap();
    let id = v["layouts"][0]["id"].as_str().unwrap().to_string();
    let (code, _, err) = run(&[
        "verify",
        "--faults",
        "--site",
        site,
        "--layout",
        &id,
        "--racks",
        "Z",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--racks Z") && err.contains("A, B, C, D"), "{err}");
}

#[test]
fn repeat_multiplies_the_write_budget() {
    let url = dead_url();
    let bytes = |extra: &[&str]| {
        let mut a = vec!["--format", "json", "verify", "--server", url.as_str(), "--dry-run"];
        a.extend(extra);
        let (code, stdout, err) = run(&a);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&stdout).unwrap();
        (
            v["write_bytes_replicated"].as_u64().unwrap(),
            v["config"]["repeat"].as_u64().unwrap(),
        )
    };
    let (one, r1) = bytes(&[]);
    let (three, r3) = bytes(&["--repeat", "3"]);
    assert_eq!((r1, r3), (1, 3));
    assert!(one > 0);
    assert_eq!(three, 3 * one, "no disk probe without sync always: exactly three times");
}

/// Issue 39: with a plan, the ladder's first rows are the plan's own streams, buckets and object stores at
/// their shapes (before: only the generic `js-r3-1p-128B`, `kv-1c-128B`, 64 KiB object rows).
#[test]
fn the_plans_own_assets_come_first_in_the_ladder() {
    let url = dead_url();
    let (code, stdout, err) = run(&[
        "--format",
        "json",
        "verify",
        "--server",
        &url,
        "--dry-run",
        "--site",
        "examples/three-racks-raid1.yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let ids: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    // orders: R3 1 KiB; events: 512 B at the layout's R3; sessions: 512 B values; blobs: 1 MiB objects.
    assert_eq!(
        &ids[..4],
        &[
            "site-js-orders-r3-1024B",
            "site-js-events-r3-512B",
            "site-kv-sessions-r3-512B",
            "site-obj-put-blobs-r3-1024KiB"
        ],
        "{ids:?}"
    );
    assert!(ids.contains(&"js-r3-1p-128B"), "the generic rows follow: {ids:?}");
}

/// Issue 39: at 120 columns the ten-column table wrapped row ids, bands and reasons inside words. Now
/// every figure is whole on its line, ids break only at their `-` joints, no line is wider than asked,
/// and each reason follows the table whole.
#[test]
fn the_table_at_120_columns_keeps_every_figure_whole() {
    let url = dead_url();
    for width in ["120", "100"] {
        let (code, stdout, err) = run(&[
            "--width",
            width,
            "verify",
            "--site",
            "examples/seed-five-servers-raid0.yaml",
            "--server",
            &url,
            "--dry-run",
        ]);
        assert_eq!(code, 0, "{err}");
        let w: usize = width.parse().unwrap();
        let table: Vec<&str> = stdout.lines().filter(|l| l.starts_with('│')).collect();
        assert!(table.len() > 10, "{stdout}");
        let mut ids = Vec::new();
        for l in &table[2..] {
            assert!(l.chars().count() <= w, "wider than {w}: {l}\n{stdout}");
            let cells: Vec<&str> = l.trim_matches('│').split('┆').map(str::trim).collect();
            assert_eq!(cells.len(), 9, "{l}");
            if cells[1].is_empty() {
                // A continuation line: only the id (at a joint) or the measured cell may go on.
                assert!(
                    cells[2..].iter().enumerate().all(|(i, c)| c.is_empty() || i + 2 == 4),
                    "a figure wrapped: {l}\n{stdout}"
                );
                let last: &mut String = ids.last_mut().unwrap();
                assert!(last.ends_with('-'), "id broken inside a word: {last} / {}", cells[0]);
                last.push_str(cells[0]);
            } else {
                ids.push(cells[0].to_string());
                assert!(cells[3] == "-" || cells[3].split('–').count() == 2, "band: {l}");
            }
        }
        // Each row's reason follows the table, whole, after its whole id.
        assert!(stdout.contains("bottleneck / reason:"), "{stdout}");
        for id in &ids {
            assert!(
                stdout.lines().any(|l| l.starts_with(&format!("  {id}: "))),
                "no reason line for {id}: {stdout}"
            );
        }
        assert!(
            stdout.contains("R3 needs 3 JetStream servers; this cluster has 1"),
            "{stdout}"
        );
    }
}

#[test]
fn recover_without_faults_is_bad_input_naming_both_flags_and_the_fix() {
    let (code, _, err) = run(&["verify", "--recover", "--server", &dead_url()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--recover") && err.contains("--faults"), "{err}");
    assert!(err.contains("natsplan verify --faults --recover"), "{err}");
}

#[test]
fn faults_with_dry_run_is_bad_input_and_starts_no_lab() {
    // --dry-run was ignored with --faults: a real lab started and the faults ran.
    let (code, _, err) = run(&["verify", "--faults", "--dry-run", "--nodes", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--dry-run") && err.contains("--faults"), "{err}");
    assert!(!err.contains("starting a"), "a lab was started: {err}");
}
