//! `natsplan calibrate` without a cluster: bad flags name the flag and exit 2 (budget unreadable or too
//! small, --out in a missing folder, an unknown --sync), an unreachable server exits 3, and nothing is
//! written in any of these cases.

use crate::common::{dead_url, run};

#[test]
fn an_unreachable_server_exits_3_and_writes_nothing() {
    let url = dead_url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.yaml");
    let (code, _, err) = run(&[
        "calibrate",
        "--server",
        &url,
        "--budget",
        "2m",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("127.0.0.1"), "{err}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn a_budget_too_small_exits_2_with_the_minimum_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.yaml");
    // The server is unreachable too: the budget is refused first.
    let (code, _, err) = run(&[
        "calibrate",
        "--server",
        &dead_url(),
        "--budget",
        "3s",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--budget") && err.contains("at least"), "{err}");
    let (code, _, err) = run(&["calibrate", "--budget", "soon", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--budget 'soon'"), "{err}");
    assert!(!out.exists());
}

#[test]
fn an_unwritable_out_exits_2_naming_the_flag() {
    let (code, _, err) = run(&[
        "calibrate",
        "--server",
        &dead_url(),
        "--out",
        "/nonexistent-natsplan-dir/c.yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out") && err.contains("does not exist"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "calibrate",
        "--server",
        &dead_url(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("folder"), "{err}");
}

#[test]
fn bad_sync_and_monitor_flags_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.yaml");
    let (code, _, err) = run(&["calibrate", "--sync", "sometimes", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--sync 'sometimes'"), "{err}");
    let (code, _, err) = run(&[
        "calibrate",
        "--monitor",
        "127.0.0.1:8222",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--monitor"), "{err}");
    let (code, _, err) = run(&["calibrate", "--server", &dead_url()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--out"), "{err}");
}
