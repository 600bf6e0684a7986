//! Live tests of Ctrl-C in `natsplan verify` and `natsplan calibrate` (issue 17, measurement integrity):
//! a SIGINT mid-run stops the load, exits 130 and leaves no natsplan test stream on the cluster; verify
//! still writes its finished rows with the run marked `interrupted`, calibrate writes no file (an existing
//! one stays as it was). The signal is sent once the run has shown progress on stderr; no timing is
//! asserted beyond generous limits.

use crate::common::serial;
use natsplan::lab::TestCluster;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `natsplan ARGS` in the background; its stderr lines arrive on the returned channel.
fn spawn(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .env_remove("NATS_URL")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("natsplan runs");
    let err = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Read stderr lines until `ready` has said yes (at most `limit`); every line read.
fn wait_for(rx: &mpsc::Receiver<String>, limit: Duration, mut ready: impl FnMut(&str) -> bool) -> Vec<String> {
    let t0 = Instant::now();
    let mut seen = Vec::new();
    loop {
        let left = limit.saturating_sub(t0.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) => {
                let done = ready(&l);
                seen.push(l);
                if done {
                    return seen;
                }
            }
            Err(_) => panic!("the run never got there within {limit:?}: {seen:#?}"),
        }
    }
}

/// SIGINT the child, wait for it (at most `limit`): exit code, stdout, the rest of stderr.
fn interrupt(child: Child, rx: &mpsc::Receiver<String>, limit: Duration) -> (i32, String, String) {
    signal(child, rx, libc::SIGINT, limit)
}

/// Send `sig` to the child, wait for it (at most `limit`): exit code, stdout, the rest of stderr.
fn signal(mut child: Child, rx: &mpsc::Receiver<String>, sig: i32, limit: Duration) -> (i32, String, String) {
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped yet.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("still running {limit:?} after signal {sig} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let code = child.wait().unwrap().code().unwrap_or(-1);
    std::thread::sleep(Duration::from_millis(200));
    let err: Vec<String> = rx.try_iter().collect();
    (code, out, err.join("\n"))
}

/// Streams on the cluster whose name holds `natsplan-` (KV and object stores too), after deletions had
/// a few seconds to reach every server.
fn assert_no_test_streams(c: &TestCluster, ctx: &str) {
    let t0 = Instant::now();
    loop {
        let left: Vec<String> = c
            .streams()
            .into_iter()
            .map(|s| s.name)
            .filter(|n| n.contains("natsplan-"))
            .collect();
        if left.is_empty() {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "natsplan-* streams left behind: {left:?}\n{ctx}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn sigint_mid_ladder_writes_the_finished_rows_marked_interrupted_cleans_up_and_exits_130() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let out = tempfile::tempdir().unwrap();
    let cal = format!("{}/tests/data/verify-cal-huge-bands.yaml", env!("CARGO_MANIFEST_DIR"));
    let monitors = c.monitor_urls().join(",");
    let url = c.url();
    let (child, rx) = spawn(&[
        "--format",
        "json",
        "verify",
        "--server",
        &url,
        "--monitor",
        &monitors,
        "--calibration",
        &cal,
        "--row-seconds",
        "3",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    // One row measured, and the next one started: interrupt it.
    let mut measured = false;
    let seen = wait_for(&rx, Duration::from_secs(180), |l| {
        if l.contains(" measured ") {
            measured = true;
            return false;
        }
        measured && l.starts_with("verify: ") && l.ends_with("...")
    });
    std::thread::sleep(Duration::from_millis(150));
    let (code, stdout, err) = interrupt(child, &rx, Duration::from_secs(90));
    let ctx = format!("{}\n{err}\n{stdout}", seen.join("\n"));
    assert_eq!(code, 130, "{ctx}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {ctx}"));
    assert_eq!(v["interrupted"], true, "{ctx}");
    // The results folder holds the same report.
    let dirs: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(dirs[0].join("results.json")).unwrap()).unwrap();
    assert_eq!(saved["interrupted"], true);
    let md = std::fs::read_to_string(dirs[0].join("BENCH.md")).unwrap();
    assert!(md.contains("INTERRUPTED"), "{md}");
    let rows = saved["rows"].as_array().unwrap();
    let status = |r: &Value| r["status"].as_str().unwrap_or_default().to_string();
    let finished = rows
        .iter()
        .filter(|r| r["measured"].is_object() && status(r) != "interrupted")
        .count();
    assert!(finished >= 1, "the finished rows are written: {rows:#?}");
    // The finished rows, then (when the signal came during a row rather than between two) the row it
    // hit, marked interrupted and never passed, then rows not run, each saying why.
    let not_run = |r: &Value| status(r) == "skipped" && r["reason"] == "not run: interrupted";
    let first_open = rows
        .iter()
        .position(|r| status(r) == "interrupted" || not_run(r))
        .unwrap_or_else(|| panic!("no row interrupted or left unrun: {rows:#?}"));
    let rest = if status(&rows[first_open]) == "interrupted" {
        &rows[first_open + 1..]
    } else {
        &rows[first_open..]
    };
    assert!(!rest.is_empty(), "the signal came mid-ladder: {rows:#?}");
    for r in rest {
        assert!(r["measured"].is_null(), "{r}");
        assert!(r["skip"].is_string() || not_run(r), "{r}");
    }
    assert_no_test_streams(&c, &ctx);
}

#[test]
fn sighup_mid_ladder_is_an_interruption_with_the_rows_written_and_the_assets_removed() {
    // A closed terminal or SSH session (issue 41: SIGHUP killed verify with no report and left the run's
    // stream or bucket).
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let out = tempfile::tempdir().unwrap();
    let cal = format!("{}/tests/data/verify-cal-huge-bands.yaml", env!("CARGO_MANIFEST_DIR"));
    let monitors = c.monitor_urls().join(",");
    let url = c.url();
    let (child, rx) = spawn(&[
        "--format",
        "json",
        "verify",
        "--server",
        &url,
        "--monitor",
        &monitors,
        "--calibration",
        &cal,
        "--row-seconds",
        "3",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    let mut measured = false;
    let seen = wait_for(&rx, Duration::from_secs(180), |l| {
        if l.contains(" measured ") {
            measured = true;
            return false;
        }
        measured && l.starts_with("verify: ") && l.ends_with("...")
    });
    std::thread::sleep(Duration::from_millis(150));
    let (code, stdout, err) = signal(child, &rx, libc::SIGHUP, Duration::from_secs(90));
    let ctx = format!("{}\n{err}\n{stdout}", seen.join("\n"));
    assert_eq!(code, 129, "{ctx}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {ctx}"));
    assert_eq!(v["interrupted"], true, "{ctx}");
    let dirs: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(dirs[0].join("results.json")).unwrap()).unwrap();
    assert_eq!(saved["interrupted"], true);
    assert_no_test_streams(&c, &ctx);
}

#[test]
fn a_row_the_signal_hits_is_interrupted_with_what_it_measured_never_judged() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let out = tempfile::tempdir().unwrap();
    let cal = format!("{}/tests/data/verify-cal-huge-bands.yaml", env!("CARGO_MANIFEST_DIR"));
    let monitors = c.monitor_urls().join(",");
    let url = c.url();
    let (child, rx) = spawn(&[
        "--format",
        "json",
        "verify",
        "--server",
        &url,
        "--monitor",
        &monitors,
        "--calibration",
        &cal,
        "--row-seconds",
        "5",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    // The fixed-rate row paces itself (10,000/s for the row's budget): interrupt it while it runs.
    let seen = wait_for(&rx, Duration::from_secs(180), |l| l.starts_with("verify: Fixed rate"));
    std::thread::sleep(Duration::from_millis(1000));
    let (code, stdout, err) = interrupt(child, &rx, Duration::from_secs(90));
    let ctx = format!("{}\n{err}\n{stdout}", seen.join("\n"));
    assert_eq!(code, 130, "{ctx}");
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {ctx}"));
    assert_eq!(v["interrupted"], true, "{ctx}");
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"].as_str().unwrap_or_default().starts_with("rate-10k"))
        .expect("the rate row");
    assert_eq!(row["status"], "interrupted", "{row:#}");
    assert!(
        row["reason"].as_str().unwrap_or_default().contains("interrupted"),
        "{row:#}"
    );
    assert!(row["measured"].is_object(), "what it measured is kept: {row:#}");
    assert_no_test_streams(&c, &ctx);
}

#[test]
fn sigint_mid_calibrate_writes_no_file_leaves_the_old_one_and_no_streams_and_exits_130() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("lab.yaml");
    std::fs::write(&out, "an earlier calibration\n").unwrap();
    let monitors = c.monitor_urls().join(",");
    let url = c.url();
    let (child, rx) = spawn(&[
        "--format",
        "json",
        "calibrate",
        "--server",
        &url,
        "--monitor",
        &monitors,
        "--budget",
        "120s",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The second run has started: interrupt it.
    let seen = wait_for(&rx, Duration::from_secs(120), |l| l.starts_with("calibrate: [2/"));
    std::thread::sleep(Duration::from_millis(500));
    let (code, stdout, err) = interrupt(child, &rx, Duration::from_secs(90));
    let ctx = format!("{}\n{err}\n{stdout}", seen.join("\n"));
    assert_eq!(code, 130, "{ctx}");
    assert!(err.contains("no calibration file written"), "{ctx}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "an earlier calibration\n",
        "the old file is untouched"
    );
    let others: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(others, vec![out.clone()], "no temporary file left beside it");
    assert_no_test_streams(&c, &ctx);
}

/// A `natsplan agent` child logging to `log` (dies with the test process; killed on drop).
struct Agent(Child, std::path::PathBuf);

impl Agent {
    fn start(url: &str, name: &str, dir: &std::path::Path) -> Agent {
        let log = dir.join(format!("{name}.log"));
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("natsplan"));
        cmd.args(["agent", "--server", url, "--name", name])
            .env_remove("NATS_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        // SAFETY: prctl in the child before exec, async-signal-safe.
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let a = Agent(cmd.spawn().unwrap(), log);
        a.wait_log("ready on", Duration::from_secs(20));
        a
    }
    fn log(&self) -> String {
        std::fs::read_to_string(&self.1).unwrap_or_default()
    }
    fn wait_log(&self, what: &str, limit: Duration) {
        let t0 = Instant::now();
        while !self.log().contains(what) {
            assert!(t0.elapsed() < limit, "agent log never said {what:?}: {}", self.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn sigint_of_bench_on_agents_aborts_their_rows_cleans_up_and_exits_130() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let dir = tempfile::tempdir().unwrap();
    let agents: Vec<Agent> = (1..=2)
        .map(|i| Agent::start(&c.url(), &format!("i{i}"), dir.path()))
        .collect();
    let url = c.url();
    // Paced: 100 s of work when nothing stops it.
    let (child, rx) = spawn(&[
        "--format",
        "json",
        "bench",
        "js",
        "--pubs",
        "2",
        "--msgs",
        "200000",
        "--rate",
        "2000",
        "--replicas",
        "1",
        "--agents",
        "2",
        "--server",
        &url,
        "--no-progress",
    ]);
    agents[0].wait_log(": row ", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(1500));
    let (code, stdout, err) = interrupt(child, &rx, Duration::from_secs(60));
    let ctx = format!("{err}\n{stdout}\n{}\n{}", agents[0].log(), agents[1].log());
    assert_eq!(code, 130, "{ctx}");
    assert!(err.contains("interrupted"), "{ctx}");
    for a in &agents {
        a.wait_log("aborted by the coordinator", Duration::from_secs(10));
    }
    assert_no_test_streams(&c, &ctx);
}
