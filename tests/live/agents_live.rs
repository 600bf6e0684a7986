//! Live tests of distributed load generation: a lab cluster and three `natsplan agent` processes on
//! loopback (children killed when the test ends, even if it is killed), one cluster at a time, small counts.
//! `verify --agents 3 --ladder quick`: every row's counts are the sum of the agents' and its merged
//! percentiles are those of one histogram holding every agent's samples; an agent killed mid-row makes
//! the run incomplete (exit 1) with what each agent did; too few agents is a clear error (exit 3).

use crate::common::serial;
use assert_cmd::Command;
use natsplan::agent::protocol::hist_from_v2;
use natsplan::bench::result::{merge_hists, LatencySummary};
use natsplan::lab::TestCluster;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A `natsplan agent` child: dies with the test process (PR_SET_PDEATHSIG), killed and reaped on drop.
struct Agent {
    child: Child,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    fn start(urls: &str, name: &str) -> Agent {
        Agent::start_with(&["--server", urls, "--name", name], &[])
    }

    fn start_with(args: &[&str], env: &[(&str, &str)]) -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("agent.log");
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"));
        cmd.arg("agent")
            .args(args)
            .envs(env.iter().copied())
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
        let child = cmd.spawn().unwrap();
        let a = Agent { child, log, _dir: dir };
        a.wait_log("ready on", Duration::from_secs(20));
        a
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn wait_log(&self, what: &str, timeout: Duration) {
        let t0 = Instant::now();
        while !self.log().contains(what) {
            assert!(t0.elapsed() < timeout, "agent log never said {what:?}: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.kill();
    }
}

fn natsplan() -> Command {
    let mut c = Command::cargo_bin("natsplan").unwrap();
    c.env_remove("NATS_URL");
    c
}

fn data(f: &str) -> String {
    format!("{}/tests/data/{f}", env!("CARGO_MANIFEST_DIR"))
}

/// The latency summary of every agent's histogram of a row, merged here from their V2 encodings.
fn merged_from_agents(agents: &Value) -> Option<LatencySummary> {
    let hists: Vec<_> = agents["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["latency_hist_v2"].as_str())
        .map(|s| hist_from_v2(s).unwrap())
        .collect();
    LatencySummary::from_hist_ns(&merge_hists(&hists))
}

#[test]
fn verify_quick_on_three_agents_adds_up_to_one_large_client() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    // No agent yet: a clear error naming how many answered (exit 3).
    let out = natsplan()
        .args([
            "bench",
            "ping",
            "--msgs",
            "10",
            "--agents",
            "2",
            "--agents-timeout",
            "1s",
        ])
        .args(["--server", &c.url()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("--agents 2: 0 idle agent(s) answered"), "{err}");

    let agents: Vec<Agent> = (1..=3).map(|i| Agent::start(&c.url(), &format!("a{i}"))).collect();
    let dir = tempfile::tempdir().unwrap();
    let out = natsplan()
        .args(["--format", "json", "verify", "--agents", "3", "--ladder", "quick"])
        .args(["--server", &c.url(), "--monitor", &c.monitor_urls().join(",")])
        .args([
            "--calibration",
            &data("verify-cal-huge-bands.yaml"),
            "--row-seconds",
            "0.3",
        ])
        .args(["--out", dir.path().to_str().unwrap()])
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{err}\n{v:#}");
    let used = v["agents"]["agents"].as_array().expect("agents in the report");
    assert_eq!(used.len(), 3);
    for a in used {
        assert!(a["clock"]["rtt_ms"].as_f64().unwrap() >= 0.0);
        assert!(
            a["clock"]["offset_ms"].as_f64().unwrap().abs() < 100.0,
            "same host: {a}"
        );
    }
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let mut spread = 0;
    for r in rows {
        let id = r["id"].as_str().unwrap();
        assert_eq!(r["status"], "inside", "{r:#}");
        let a = &r["agents"];
        assert_eq!(a["complete"], true, "{id}");
        let parts = a["agents"].as_array().unwrap();
        if parts.len() > 1 {
            spread += 1;
        }
        let sum = |k: &str| parts.iter().map(|p| p[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(a["published"].as_u64(), Some(sum("published")), "{id}");
        assert_eq!(a["received"].as_u64(), Some(sum("received")), "{id}");
        let msgs = r["msgs"].as_u64().unwrap();
        let subs = r["subscribers"].as_u64().unwrap();
        if id.starts_with("obj-get") {
            assert_eq!(sum("received"), msgs, "{id}: every object read once");
        } else {
            assert_eq!(
                sum("published"),
                msgs,
                "{id}: the row's count is the sum of the agents'"
            );
        }
        if id.starts_with("core") {
            assert_eq!(sum("received"), msgs * subs, "{id}");
        }
        assert_eq!(sum("assigned_msgs"), msgs, "{id}: every message assigned once");
        // The report's percentiles are those of one histogram holding every agent's samples.
        let merged = merged_from_agents(a);
        let measured = &r["measured"]["latency_us"];
        match merged {
            Some(m) => {
                for (k, x) in [
                    ("count", m.count as f64),
                    ("p50", m.p50),
                    ("p99", m.p99),
                    ("max", m.max),
                ] {
                    assert!(
                        (measured[k].as_f64().unwrap() - x).abs() < 1e-6,
                        "{id} {k}: {measured} vs {m:?}"
                    );
                }
            }
            None => assert!(measured.is_null(), "{id}"),
        }
    }
    assert!(spread >= 3, "object rows and the flood run on several agents");
    // The agents logged their rows and are still serving.
    for a in &agents {
        assert!(a.log().contains("done ("), "{}", a.log());
    }
}

#[test]
fn an_agent_killed_mid_row_makes_the_run_incomplete() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let mut agents: Vec<Agent> = (1..=3).map(|i| Agent::start(&c.url(), &format!("k{i}"))).collect();
    // Three paced publishers, 4 s of work; k2 is killed once its share has run for a while.
    let cmd = std::thread::spawn({
        let url = c.url();
        move || {
            natsplan()
                .args([
                    "--format", "json", "bench", "js", "--pubs", "3", "--msgs", "12000", "--rate", "3000",
                ])
                .args(["--replicas", "1", "--agents", "3", "--server", &url, "--no-progress"])
                .timeout(Duration::from_secs(120))
                .output()
                .unwrap()
        }
    });
    agents[1].wait_log(": row ", Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(1500));
    agents[1].kill();
    let out = cmd.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(1), "incomplete is a failed check: {err}\n{v:#}");
    assert!(err.contains("incomplete"), "{err}");
    let a = &v["agents"];
    assert_eq!(a["complete"], false, "{v:#}");
    let parts = a["agents"].as_array().unwrap();
    let lost: Vec<&Value> = parts.iter().filter(|p| p["status"] == "lost").collect();
    assert_eq!(lost.len(), 1, "{a:#}");
    assert_eq!(lost[0]["name"], "k2");
    let done = lost[0]["done_at_last_heartbeat"].as_u64().unwrap();
    assert!(
        done > 0 && done < 4000,
        "what the lost agent did before it vanished: {done}"
    );
    let survivors: Vec<&Value> = parts.iter().filter(|p| p["status"] == "completed").collect();
    assert_eq!(survivors.len(), 2);
    // The figures are the two survivors', never presented as the whole run: every one of their 8,000
    // publishes is either acknowledged (published) or counted as failed (an ack that never came is
    // data, which a loaded machine does produce), and none of the lost agent's are counted.
    for p in &survivors {
        let (done, failed) = (p["published"].as_u64().unwrap(), p["failed"].as_u64().unwrap());
        assert_eq!(done + failed, 4000, "{p:#}");
    }
    let (published, failed) = (v["published"].as_u64().unwrap(), v["failed"].as_u64().unwrap());
    assert_eq!(published + failed, 8000, "{v:#}");
    assert_eq!(a["published"].as_u64(), Some(published));
    assert_eq!(a["failed"].as_u64(), Some(failed));
    assert!(
        published >= 7000,
        "most of the survivors' publishes are acknowledged: {v:#}"
    );
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("INCOMPLETE")));
    assert_eq!(v["params"]["agents"], "3");
}

#[test]
fn agents_and_coordinator_take_bench_connection_options() {
    // A nats CLI context (as bench reads it) is the only place the servers are named: the agent's
    // control and data connections and the coordinator's both come from it.
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let cfg = tempfile::tempdir().unwrap();
    let ctx_dir = cfg.path().join("nats").join("context");
    std::fs::create_dir_all(&ctx_dir).unwrap();
    std::fs::write(ctx_dir.join("lab.json"), format!(r#"{{"url":"{}"}}"#, c.url())).unwrap();
    let xdg = cfg.path().to_str().unwrap();
    let _a = Agent::start_with(&["--context", "lab", "--name", "ctx"], &[("XDG_CONFIG_HOME", xdg)]);
    let out = natsplan()
        .env("XDG_CONFIG_HOME", xdg)
        .args([
            "--format",
            "json",
            "bench",
            "kv",
            "--clients",
            "2",
            "--msgs",
            "200",
            "--agents",
            "1",
        ])
        .args(["--context", "lab", "--no-progress"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{err}\n{v:#}");
    assert_eq!(v["published"].as_u64(), Some(200));
    assert_eq!(v["agents"]["agents"][0]["name"], "ctx");
    assert_eq!(v["agents_used"]["agents"][0]["servers"].as_array().unwrap().len(), 3);
}

#[test]
fn an_agent_gone_between_verify_rows_leaves_the_later_rows_incomplete() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let mut agents: Vec<Agent> = (1..=2).map(|i| Agent::start(&c.url(), &format!("g{i}"))).collect();
    let dir = tempfile::tempdir().unwrap();
    let cmd = std::thread::spawn({
        let (url, monitors, out) = (c.url(), c.monitor_urls().join(","), dir.path().to_path_buf());
        move || {
            natsplan()
                .args(["--format", "json", "verify", "--agents", "2", "--ladder", "quick"])
                .args(["--server", &url, "--monitor", &monitors])
                .args([
                    "--calibration",
                    &data("verify-cal-huge-bands.yaml"),
                    "--row-seconds",
                    "0.3",
                ])
                .arg("--out")
                .arg(out)
                .timeout(Duration::from_secs(240))
                .output()
                .unwrap()
        }
    });
    // g2 finishes its share of the first row, then goes away.
    agents[1].wait_log("done (", Duration::from_secs(60));
    agents[1].kill();
    let out = cmd.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an incomplete row fails the check: {err}\n{v:#}"
    );
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 8, "{v:#}");
    let status: Vec<String> = rows
        .iter()
        .map(|r| r["status"].as_str().unwrap().to_ascii_uppercase())
        .collect();
    let reasons: Vec<&str> = rows.iter().map(|r| r["reason"].as_str().unwrap_or("-")).collect();
    assert!(
        !status.iter().any(|s| s == "ERROR"),
        "a vanished agent is not a cluster error: {status:?}\n{reasons:#?}\n{err}"
    );
    let first = status
        .iter()
        .position(|s| s == "INCOMPLETE")
        .unwrap_or_else(|| panic!("{status:?}"));
    assert!(first >= 1, "the first row ran on both agents: {status:?}");
    assert!(status[first..].iter().all(|s| s == "INCOMPLETE"), "{status:?}");
    let last = rows.last().unwrap()["reason"].as_str().unwrap_or_default();
    assert!(last.contains("g2"), "the reason names the agent: {last}");
}

/// A throwaway CA and a server certificate for 127.0.0.1 (PEM files in `dir`): (ca, cert, key).
fn tls_files(dir: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "natsplan test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    let paths = (dir.join("ca.pem"), dir.join("server.pem"), dir.join("server-key.pem"));
    std::fs::write(&paths.0, ca.pem()).unwrap();
    std::fs::write(&paths.1, cert.pem()).unwrap();
    std::fs::write(&paths.2, key.serialize_pem()).unwrap();
    (paths.0, paths.1, paths.2)
}

#[test]
fn agents_and_coordinator_work_over_tls() {
    // Every server requires TLS on its client port: the agent's control and data connections and the
    // coordinator's all need --tls-ca, and a client without it is refused.
    let _s = serial();
    let certs = tempfile::tempdir().unwrap();
    let (ca, cert, key) = tls_files(certs.path());
    let c = TestCluster::start_spec(|dir| natsplan::lab::LabSpec {
        client_tls: Some(natsplan::emit::conf::ClientTls {
            cert_file: cert.to_string_lossy().into_owned(),
            key_file: key.to_string_lossy().into_owned(),
        }),
        ..natsplan::lab::LabSpec::plain(3, dir)
    })
    .unwrap();
    let ca = ca.to_str().unwrap();
    let out = natsplan()
        .args([
            "--format",
            "json",
            "bench",
            "js",
            "--msgs",
            "10",
            "--server",
            &c.url(),
            "--no-progress",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let _a = Agent::start_with(&["--server", &c.url(), "--tls-ca", ca, "--name", "secure"], &[]);
    for (kind, extra) in [("js", ["--pubs", "2"]), ("kv", ["--clients", "2"])] {
        let out = natsplan()
            .args(["--format", "json", "bench", kind, "--msgs", "300", "--agents", "1"])
            .args(extra)
            .args(["--server", &c.url(), "--tls-ca", ca, "--no-progress"])
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(out.status.code(), Some(0), "{kind}: {err}\n{v:#}");
        assert_eq!(v["published"].as_u64(), Some(300), "{kind}: {v:#}");
        assert_eq!(v["failed"].as_u64(), Some(0), "{kind}: {v:#}");
        assert_eq!(v["agents"]["agents"][0]["name"], "secure", "{kind}");
        assert_eq!(v["agents"]["complete"], true, "{kind}");
    }
}

#[test]
fn an_agent_stops_on_sigterm_even_when_its_servers_are_gone() {
    // The goodbye is bounded: with no server left the client would wait for a reconnect forever.
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let mut a = Agent::start(&c.url(), "orphan");
    drop(c);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: SIGTERM to the agent this test started.
    unsafe { libc::kill(a.child.id() as i32, libc::SIGTERM) };
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = a.child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the agent did not stop: {}",
            a.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        status.success(),
        "a requested stop is a clean exit: {status:?}\n{}",
        a.log()
    );
    assert!(a.log().contains("stopped ("), "{}", a.log());
}

/// A run request as a coordinator makes it for a one-agent JetStream row of 2 publishers (the valid
/// starting point the hostile ones are edited from).
fn valid_request() -> Value {
    use natsplan::agent::protocol::{row_subject, RunRequest, WorkSpec};
    use natsplan::bench::{BenchSpec, BenchWorkload, ClientChoice, LeaderPlacement, PublishMode, Share, Storage};
    let spec = BenchSpec {
        workload: BenchWorkload::Js {
            pubs: 2,
            replicas: 1,
            storage: Storage::File,
            publish: PublishMode::Async,
            window: 64,
            consumers: 0,
        },
        msgs: 100,
        size: 128,
        rate_per_s: None,
        backlog_cutoff: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        monitor: vec![],
        keep: false,
        sub_sleep: None,
        sub_buffer: None,
        client: ClientChoice::Auto,
        progress: false,
        leader: LeaderPlacement::Any,
        consumer_leader: LeaderPlacement::Any,
        subjects: Default::default(),
    };
    let a = &natsplan::agent::split::split(&spec.workload, spec.msgs, 1, 0)[0];
    let row = "19aa0c0ffee0001".to_string();
    let req = RunRequest {
        row: row.clone(),
        report_to: row_subject(&row),
        work: WorkSpec::from_spec(
            &spec,
            natsplan::agent::split::local_workload(&spec.workload, a),
            a.msgs(),
            None,
        ),
        share: Share {
            run_id: row,
            origin: 1,
            workers: a.workers.clone(),
            subs: a.subs.clone(),
            total_workers: 2,
            total_subs: 0,
            total_msgs: 100,
        },
        heartbeat_ms: 250,
        start_timeout_ms: 30_000,
    };
    serde_json::to_value(&req).unwrap()
}

/// Issue 40, item 4: any client on the account can send an agent work. 19 of 19 hostile requests were
/// accepted unchecked and `work.size: 1e12` aborted the agent at once. Now each is refused with the reason
/// (what `natsplan bench` would say, or that the work is outside the row's own run), the agent keeps
/// running, and it still runs a coordinator's row afterwards.
#[test]
fn an_agent_refuses_hostile_run_requests_and_keeps_serving() {
    use natsplan::agent::protocol::RunAccepted;
    let _s = serial();
    let c = TestCluster::start(1).unwrap();
    let mut agent = Agent::start(&c.url(), "guarded");
    let id = agent
        .log()
        .split_whitespace()
        .skip_while(|w| *w != "agent")
        .nth(1)
        .expect("the agent logs its id")
        .to_string();
    let set = |path: &str, v: Value| {
        let mut r = valid_request();
        *r.pointer_mut(path).unwrap_or_else(|| panic!("{path}")) = v;
        r
    };
    let huge = Value::from(u64::MAX);
    let hostile: Vec<(Value, &str)> = vec![
        (
            set("/work/size", serde_json::json!(1e12)),
            "not a natsplan agent run message",
        ),
        (
            set("/work/size", Value::from(1_000_000_000_000u64)),
            "--size 1000000000000",
        ),
        (set("/work/size", huge.clone()), "--size"),
        (set("/work/msgs", huge.clone()), "work.msgs"),
        (set("/share/total_msgs", huge.clone()), "--msgs"),
        (set("/share/total_workers", Value::from(20_000)), "--clients 20000"),
        (set("/heartbeat_ms", Value::from(0)), "heartbeat_ms 0"),
        (set("/start_timeout_ms", huge.clone()), "start_timeout_ms"),
        (set("/work/workload/Js/replicas", Value::from(0)), "--replicas 0"),
        (set("/work/workload/Js/window", huge.clone()), "--batch"),
        (set("/work/timeout_ms", huge.clone()), "--timeout"),
        (set("/work/sub_buffer", huge.clone()), "--sub-buffer"),
        (set("/row", Value::from(">")), "row"),
        (set("/share/run_id", Value::from(">")), "share.run_id"),
        (set("/report_to", Value::from(">")), "report_to"),
        (set("/report_to", Value::from("orders.eu")), "report_to"),
        (set("/share/workers/0/index", Value::from(99)), "share.workers[0]"),
        (set("/share/origin", Value::from(0)), "share.origin"),
        (Value::from("not a request"), "not a natsplan agent run message"),
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(c.lab.client_urls()[0].clone()).await.unwrap();
        for (req, says) in &hostile {
            let m = tokio::time::timeout(
                Duration::from_secs(10),
                nc.request(format!("natsplan.agents.{id}.run"), req.to_string().into()),
            )
            .await
            .unwrap_or_else(|_| panic!("no answer to {says}: {}", agent.log()))
            .unwrap();
            let a: RunAccepted = serde_json::from_slice(&m.payload).unwrap();
            assert!(!a.accepted, "{says}: accepted");
            let why = a.error.unwrap_or_default();
            assert!(why.contains(says), "{says}: {why}");
        }
    });
    assert!(
        agent.child.try_wait().unwrap().is_none(),
        "the agent died: {}",
        agent.log()
    );
    // Still a working agent: a coordinator's row runs on it.
    let out = natsplan()
        .args([
            "bench",
            "js",
            "--agents",
            "1",
            "--msgs",
            "200",
            "--no-progress",
            "--server",
        ])
        .arg(c.url())
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        agent.log()
    );
}
