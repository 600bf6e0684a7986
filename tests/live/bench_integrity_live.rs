//! Live tests of what `natsplan bench` reports when a run does not finish (issue 17, measurement
//! integrity): a killed server mid-run makes the run incomplete (exit 1, `complete: false`, what was
//! asked and done) on either client, never a hang; a SIGINT, SIGTERM or SIGHUP stops the load, reports
//! what was measured marked interrupted and exits 128 + the signal; in every case the run's stream is
//! deleted afterwards.
//! Throttled load (`--rate`) so the 2-core machine does not starve the servers into elections; no timing
//! is asserted beyond the command's own generous timeout.

use natsplan::lab::TestCluster;
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::serial;

/// `natsplan --format json bench js ...` started in the background (stdout and stderr piped).
fn spawn_js(url: &str, extra: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .env_remove("NATS_URL")
        .args(["--format", "json", "bench", "js", "--no-progress", "-s", url])
        .args(["--replicas", "3", "--backlog-cutoff", "120s"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("natsplan runs")
}

/// Wait for the child to end (at most `limit`, then kill it and fail): exit code, JSON, all output.
fn finish(mut child: Child, limit: Duration) -> (i32, Value, String) {
    let t0 = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "natsplan bench still running after {limit:?} (a hang): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, format!("{stdout}\n{stderr}"))
}

/// Messages stored on a server (its `/jsz` total), 0 when it does not answer.
fn stored(c: &TestCluster, i: usize) -> u64 {
    natsplan::monitor::jsz(&c.nodes()[i].monitor_url(), "", Duration::from_secs(2))
        .ok()
        .and_then(|j| j.get("messages").and_then(Value::as_u64))
        .unwrap_or(0)
}

/// Wait until the run's stream holds at least `n` messages on server `i` (the load is running).
fn wait_stored(c: &TestCluster, i: usize, n: u64) {
    let t0 = Instant::now();
    while stored(c, i) < n {
        assert!(t0.elapsed() < Duration::from_secs(90), "the run never started storing");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The `natsplan-js-*` streams the running servers still report.
fn bench_streams(c: &TestCluster) -> Vec<String> {
    c.streams()
        .into_iter()
        .map(|s| s.name)
        .filter(|n| n.starts_with("natsplan-js-"))
        .collect()
}

fn u(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("missing integer {k} in {v}"))
}

/// Start a run on a 3-server cluster, then do `fault` to the server the publisher is connected to
/// (worker 0 uses the first URL) once the stream stores; the run's outcome, and the cluster after it.
fn run_through(client: &str, fault: impl FnOnce(&mut TestCluster)) -> (i32, Value, String, TestCluster) {
    let mut c = TestCluster::start(3).expect("lab starts");
    let child = spawn_js(
        &c.url(),
        &[
            "--client",
            client,
            "--msgs",
            "100000",
            "--rate",
            "4000",
            "--timeout",
            "3s",
        ],
    );
    wait_stored(&c, 1, 2000);
    fault(&mut c);
    // 25 s of load when nothing goes wrong; far beyond that only a hang.
    let (code, v, all) = finish(child, Duration::from_secs(100));
    (code, v, all, c)
}

/// An unfinished run: exit 1, `complete: false`, what was asked and done, said in the report.
fn assert_incomplete(code: i32, v: &Value, all: &str) {
    assert_eq!(code, 1, "an unfinished run is a failed check: {all}");
    assert_eq!(v["complete"], false, "{all}");
    let asked = u(v, "asked");
    assert_eq!(asked, 100_000, "{all}");
    let done = u(v, "done");
    assert!(done < asked, "{all}");
    assert_eq!(done, u(v, "published"), "done is what was acknowledged: {all}");
    assert!(
        v["warnings"].to_string().contains("incomplete"),
        "the report says so: {all}"
    );
    assert!(all.contains("check failed: the run is incomplete"), "{all}");
}

#[test]
fn killing_the_connected_server_makes_a_raw_js_run_incomplete_and_cleans_up() {
    let _s = serial();
    // The raw path does not reconnect: the run cannot finish, and must say so.
    let (code, v, all, c) = run_through("raw", |c| c.kill(0).expect("kill n1"));
    assert_incomplete(code, &v, &all);
    assert!(u(&v, "done") > 0, "{all}");
    assert_eq!(
        bench_streams(&c),
        Vec::<String>::new(),
        "the test stream is deleted: {all}"
    );
}

#[test]
fn with_only_the_connected_server_given_its_death_leaves_no_stream_behind() {
    let _s = serial();
    // Issue 41: one --server given, and it died: the clean-up tried only that URL and left the stream
    // though two servers were up. It now also tries the servers the cluster advertised.
    let mut c = TestCluster::start(3).expect("lab starts");
    let only = c.client_urls()[0].clone();
    let child = spawn_js(
        &only,
        &[
            "--client",
            "raw",
            "--msgs",
            "100000",
            "--rate",
            "4000",
            "--timeout",
            "3s",
        ],
    );
    wait_stored(&c, 1, 2000);
    c.kill(0).expect("kill n1");
    let (code, v, all) = finish(child, Duration::from_secs(100));
    assert_incomplete(code, &v, &all);
    assert_eq!(v["left_behind"], serde_json::json!([]), "{all}");
    assert_eq!(
        bench_streams(&c),
        Vec::<String>::new(),
        "the test stream is deleted through a surviving server: {all}"
    );
}

#[test]
fn killing_the_connected_server_under_async_nats_ends_with_an_honest_count() {
    let _s = serial();
    // async-nats reconnects to a survivor: the run may then finish (every publish acknowledged) or not
    // (acks lost with the server), but it ends, and what it says adds up.
    let (code, v, all, c) = run_through("async-nats", |c| c.kill(0).expect("kill n1"));
    if v["complete"] == true {
        assert_eq!(code, 0, "{all}");
        assert_eq!(
            (u(&v, "done"), u(&v, "failed"), u(&v, "unacknowledged")),
            (100_000, 0, 0),
            "{all}"
        );
    } else {
        assert_incomplete(code, &v, &all);
    }
    assert_eq!(
        bench_streams(&c),
        Vec::<String>::new(),
        "the test stream is deleted: {all}"
    );
}

#[test]
fn a_connected_server_that_stops_answering_ends_an_async_nats_run_instead_of_hanging() {
    let _s = serial();
    // SIGSTOP keeps the connection open and answers nothing: every ack in flight times out. Each used to
    // wait a whole --timeout of its own, one after the other (hundreds in a window of 500).
    for publish in ["async", "sync"] {
        let mut c = TestCluster::start(3).expect("lab starts");
        let child = spawn_js(
            &c.url(),
            &[
                "--client",
                "async-nats",
                "--publish",
                publish,
                "--msgs",
                "100000",
                "--rate",
                "4000",
                "--timeout",
                "3s",
            ],
        );
        wait_stored(&c, 1, 2000);
        c.sigstop(0).expect("pause n1");
        let (code, v, all) = finish(child, Duration::from_secs(100));
        assert_incomplete(code, &v, &all);
        assert!(u(&v, "unacknowledged") >= 1, "{publish}: {all}");
        assert!(u(&v, "failed") >= u(&v, "unacknowledged"), "{publish}: {all}");
        assert_eq!(
            bench_streams(&c),
            Vec::<String>::new(),
            "{publish}: the test stream is deleted: {all}"
        );
        c.sigcont(0).expect("resume n1");
    }
}

#[test]
fn a_stop_signal_reports_what_was_measured_as_interrupted_removes_the_stream_and_exits_as_a_shell_reports_it() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    // 128 + the signal (issue 41: SIGTERM exited 130; SIGHUP, a closed terminal, killed the run with no
    // report and left its stream).
    for (client, sig, code_want) in [
        ("raw", libc::SIGINT, 130),
        ("async-nats", libc::SIGTERM, 143),
        ("raw", libc::SIGHUP, 129),
        ("async-nats", libc::SIGHUP, 129),
    ] {
        let child = spawn_js(&c.url(), &["--client", client, "--msgs", "1000000", "--rate", "3000"]);
        wait_stored(&c, 0, 2000);
        // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped yet.
        let rc = unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        assert_eq!(rc, 0);
        let (code, v, all) = finish(child, Duration::from_secs(60));
        let ctx = format!("{client}, signal {sig}: {all}");
        assert_eq!(code, code_want, "{ctx}");
        assert_eq!(v["interrupted"], true, "{ctx}");
        assert_eq!(v["complete"], false, "{ctx}");
        assert_eq!(u(&v, "asked"), 1_000_000);
        assert!(u(&v, "done") > 0, "what was measured is reported: {ctx}");
        assert!(v["msgs_per_s"].as_f64().unwrap_or(0.0) > 0.0, "{ctx}");
        assert_eq!(bench_streams(&c), Vec::<String>::new(), "the stream is deleted: {ctx}");
    }
}
