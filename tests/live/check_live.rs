//! `natsplan check` on a loopback lab built from a saved plan (issue 49): as `lab up --streams` leaves it
//! (streams, buckets, stores and the planned durable consumers) every check is ok (exit 0) in each format,
//! from monitor ports and over NATS as the system user; then drifts made in sequence on the one lab: a
//! planned consumer deleted (warning) and made again at R1 (critical), stores filled past a threshold
//! (ok before the fill, critical after), a rate above the plan (warning), a stream created by hand
//! (unplanned: warning, exit 1), a planned stream's replicas lowered (critical, exit 2), a server
//! paused (critical), a server stopped (critical for that server, exit 2); `--watch --listen` serves
//! the figures as Prometheus text, scraped before, during and after that server's restart. Nothing here
//! asserts a time.

use crate::common::serial;
use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn natsplan(args: &[&str]) -> (i32, String, String) {
    let home = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .env_remove("NATS_CONTEXT")
        .env("XDG_CONFIG_HOME", home.path())
        .args(args)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

struct Down<'a>(&'a Path);
impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = natsplan(&["lab", "down", "--dir", self.0.to_str().unwrap()]);
    }
}

/// `check --lab DIR` as JSON: exit code and report.
fn check_json(lab: &str) -> (i32, Value, String) {
    let (code, out, err) = natsplan(&["--format", "json", "check", "--lab", lab]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    (code, v, err)
}

/// The (check, subject) pairs of a given status.
fn with_status(v: &Value, status: &str) -> Vec<(String, String)> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] == status)
        .map(|i| {
            (
                i["check"].as_str().unwrap().into(),
                i["subject"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn js<T>(url: &str, f: impl AsyncFnOnce(async_nats::jetstream::Context) -> T) -> T {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(url).await.unwrap();
        f(async_nats::jetstream::new(nc)).await
    })
}

#[test]
fn check_grades_a_lab_as_planned_then_each_drift() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let site = format!("{}/examples/three-racks-raid1.yaml", env!("CARGO_MANIFEST_DIR"));
    let plan = tmp.path().join("plan.json");
    let (code, out, err) = natsplan(&["--format", "json", "design", &site]);
    assert_eq!(code, 0, "{err}");
    let id = serde_json::from_str::<Value>(&out).unwrap()["layouts"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, _, err) = natsplan(&["design", &site, "--layout", &id, "--save", plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let dir = tmp.path().join("lab");
    let d = dir.to_str().unwrap();
    let (code, out, err) = natsplan(&["lab", "up", "--plan", plan.to_str().unwrap(), "--dir", d, "--streams"]);
    let _down = Down(&dir);
    assert_eq!(code, 0, "{out}\n{err}");
    // The site plans 2 durable consumers on orders and 3 on events; `lab up --streams` creates the ones emit
    // writes, each with its stream's replicas.
    for c in [
        "orders/orders-c1",
        "orders/orders-c2",
        "events/events-c1",
        "events/events-c3",
    ] {
        assert!(out.contains(&format!("created consumer {c} (R3)")), "{c}: {out}");
    }
    let state: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).unwrap()).unwrap();
    let client = format!(
        "nats://{}:{}",
        state["nodes"][0]["host"].as_str().unwrap(),
        state["nodes"][0]["client_port"]
    );

    // As planned: all ok, in every format (the lab's record names the plan: no --plan needed).
    let (code, v, err) = check_json(d);
    assert_eq!(code, 0, "{v:#}\n{err}");
    assert_eq!(v["status"], "ok");
    assert_eq!(v["layout"], id.as_str());
    for c in [
        "server",
        "meta",
        "asset",
        "replicas",
        "placement",
        "replica_current",
        "consumers",
        "consumer_replicas",
        "consumer_current",
        "store",
        "ha_assets",
    ] {
        assert!(
            v["checks"].as_array().unwrap().iter().any(|i| i["check"] == c),
            "no {c}: {v:#}"
        );
    }
    let (code, out, err) = natsplan(&["--format", "nagios", "check", "--lab", d]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NATSPLAN CHECK OK: 0 critical, 0 warning"), "{out}");
    let (code, out, err) = natsplan(&["--format", "prometheus", "check", "--lab", d]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "natsplan_check_status{{cluster=\"natsplan\",layout=\"{id}\"}} 0\n"
        )),
        "{out}"
    );
    let (code, out, err) = natsplan(&["check", "--lab", d, "--plan", plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("check OK"), "{out}");

    // The same over NATS from the system account (--server with the lab's system user), and the error a
    // user of another account gets.
    let plan_s = plan.to_str().unwrap();
    let sys = [
        state["system_user"]["user"].as_str().unwrap(),
        state["system_user"]["password"].as_str().unwrap(),
    ];
    let (code, out, err) = natsplan(&[
        "--format",
        "json",
        "check",
        "--plan",
        plan_s,
        "--server",
        &client,
        "--user",
        sys[0],
        "--password",
        sys[1],
    ]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!((code, v["status"].as_str()), (0, Some("ok")), "{v:#}\n{err}");
    assert_eq!(v["counts"]["ok"], v["checks"].as_array().unwrap().len());
    let (code, _, err) = natsplan(&["check", "--plan", plan_s, "--server", &client]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("system account"), "{err}");

    // A planned consumer deleted: its stream's consumer count warns (exit 1); made again at R1 on the R3
    // stream: critical for that consumer; made again as emit writes it: all ok.
    let make = |replicas: usize| {
        js(&client, async move |j| {
            let s = j.get_stream("orders").await.unwrap();
            let _ = s.delete_consumer("orders-c1").await;
            if replicas > 0 {
                s.create_consumer(async_nats::jetstream::consumer::pull::Config {
                    durable_name: Some("orders-c1".into()),
                    num_replicas: replicas,
                    ..Default::default()
                })
                .await
                .unwrap();
            }
        })
    };
    make(0);
    let (code, v, err) = check_json(d);
    assert_eq!(code, 1, "{v:#}\n{err}");
    assert_eq!(
        with_status(&v, "warning"),
        vec![("consumers".to_string(), "orders".to_string())],
        "{v:#}"
    );
    graded_everywhere(d, &[], "consumers", "orders", "warning");
    make(1);
    let (code, v, err) = check_json(d);
    assert_eq!(code, 2, "{v:#}\n{err}");
    assert_eq!(
        with_status(&v, "critical"),
        vec![("consumer_replicas".to_string(), "orders/orders-c1".to_string())],
        "{v:#}"
    );
    graded_everywhere(d, &[], "consumer_replicas", "orders/orders-c1", "critical");
    make(3);
    let (code, v, err) = check_json(d);
    assert_eq!(code, 0, "{v:#}\n{err}");

    // A store filled past its threshold. 2 MiB into `events` (R3: on every server), then a threshold half
    // as high again as the fullest store: ok; 2 MiB more: every server's store past it, critical.
    let fill = |n: usize| {
        js(&client, async move |j| {
            let body = bytes::Bytes::from(vec![b's'; 2048]);
            for _ in 0..n {
                j.publish("events.fill", body.clone()).await.unwrap().await.unwrap();
            }
        })
    };
    let store_pct = |v: &Value| -> Vec<f64> {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["check"] == "store")
            .map(|i| i["value"].as_f64().unwrap())
            .collect()
    };
    fill(1024);
    // Followers apply what the leader acknowledged a moment later: read until every store shows the fill.
    let mut first = Vec::new();
    for _ in 0..40 {
        first = store_pct(&check_json(d).1);
        if first.len() == 3 && first.iter().all(|&p| p > 0.0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let top = first.iter().cloned().fold(0.0, f64::max);
    assert!(top > 0.0 && first.len() == 3, "{first:?}");
    let thr = format!("{}", top * 1.5);
    let store_check = |thr: &str| {
        let (code, v, err) = natsplan(&[
            "--format",
            "json",
            "check",
            "--lab",
            d,
            "--store-warn",
            thr,
            "--store-critical",
            thr,
        ]);
        let v: Value = serde_json::from_str(&v).unwrap_or_else(|e| panic!("{e}: {v}\n{err}"));
        (code, v)
    };
    let (code, v) = store_check(&thr);
    assert_eq!((code, with_status(&v, "critical")), (0, vec![]), "{thr}: {v:#}");
    fill(1024);
    let mut v = Value::Null;
    for _ in 0..40 {
        v = store_check(&thr).1;
        if with_status(&v, "critical").len() == 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let crit = with_status(&v, "critical");
    for n in state["nodes"].as_array().unwrap() {
        let n = n["name"].as_str().unwrap();
        assert!(crit.contains(&("store".to_string(), n.to_string())), "{n}: {v:#}");
    }
    let (code, out, _) = natsplan(&[
        "--format",
        "nagios",
        "check",
        "--lab",
        d,
        "--store-warn",
        &thr,
        "--store-critical",
        &thr,
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(out.starts_with("NATSPLAN CHECK CRITICAL: "), "{out}");
    let th = ["--store-warn", &thr, "--store-critical", &thr];
    graded_everywhere(d, &th, "store", state["nodes"][0]["name"].as_str().unwrap(), "critical");

    // A rate above the plan: messages published to `events` while check reads twice 2 s apart, graded
    // with --rate-warn 0.5 (0.5 % of the planned 2,000/s: 10/s).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let publisher = {
        let (stop, sent, client) = (stop.clone(), sent.clone(), client.clone());
        std::thread::spawn(move || {
            js(&client, async move |j| {
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    j.publish("events.x", "e".into()).await.unwrap().await.unwrap();
                    sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        })
    };
    // Publishing before the first reading (connecting may take a while on a busy machine).
    while sent.load(std::sync::atomic::Ordering::SeqCst) < 20 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, out, err) = natsplan(&[
        "--format",
        "json",
        "check",
        "--lab",
        d,
        "--interval",
        "2s",
        "--rate-warn",
        "0.5",
    ]);
    graded_everywhere(
        d,
        &["--interval", "2s", "--rate-warn", "0.5"],
        "rate",
        "events",
        "warning",
    );
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    publisher.join().unwrap();
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    // The rate check of events warns and no other rate check does. (Replicas catching up under the load
    // on a shared machine may add their own grade, so the exit code is read from the report.)
    let rate = |s: &str| {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["check"] == "rate" && i["subject"] == s)
            .map(|i| i["status"].as_str().unwrap().to_string())
    };
    assert_eq!(rate("events").as_deref(), Some("warning"), "{v:#}");
    for s in ["orders", "KV_sessions", "OBJ_blobs"] {
        assert_eq!(rate(s).as_deref(), Some("ok"), "{s}: {v:#}");
    }
    assert!(
        code >= 1 && i64::from(code) == v["exit_code"].as_i64().unwrap(),
        "{code}: {v:#}"
    );
    let others: Vec<(String, String)> = with_status(&v, "warning")
        .into_iter()
        .chain(with_status(&v, "critical"))
        .filter(|(c, _)| c != "rate")
        .collect();
    if !others.is_empty() {
        eprintln!("check_live: besides the rate, under load: {others:?}");
    }

    // A stream made by hand, with nothing but a name and a subject: unplanned, R1, no limits.
    js(&client, async |j| {
        j.create_stream(async_nats::jetstream::stream::Config {
            name: "by-hand".into(),
            subjects: vec!["hand.>".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    });
    let (code, v, err) = check_json(d);
    assert_eq!(code, 1, "{v:#}\n{err}");
    assert_eq!(
        with_status(&v, "warning"),
        vec![("unplanned".to_string(), "by-hand".to_string())]
    );
    let (code, out, _) = natsplan(&["--format", "nagios", "check", "--lab", d]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("NATSPLAN CHECK WARNING") && out.contains("by-hand"),
        "{out}"
    );
    graded_everywhere(d, &[], "unplanned", "by-hand", "warning");

    // A planned stream scaled down to R1: critical.
    js(&client, async |j| {
        let mut cfg = j.get_stream("orders").await.unwrap().cached_info().config.clone();
        cfg.num_replicas = 1;
        j.update_stream(cfg).await.unwrap();
    });
    let (code, v, err) = check_json(d);
    assert_eq!(code, 2, "{v:#}\n{err}");
    assert!(
        with_status(&v, "critical").contains(&("replicas".to_string(), "orders".to_string())),
        "{v:#}"
    );
    graded_everywhere(d, &[], "replicas", "orders", "critical");

    // --watch serves the same figures as Prometheus text, and keeps serving through a server restart.
    let mut watch = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .args(["check", "--lab", d, "--watch", "1s", "--listen", "127.0.0.1:0"])
        .env_remove("NATS_URL")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // stderr read on a thread, so that a line that never comes fails the test instead of hanging it.
    let (tx, said) = std::sync::mpsc::channel::<String>();
    let stderr = watch.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let _watch = Kill(watch);
    let next_said = || {
        said.recv_timeout(Duration::from_secs(120))
            .expect("check --watch said nothing more")
    };
    let first = next_said();
    let addr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {first}"))
        .to_string();
    let text = scrape(&addr);
    assert!(
        text.contains(&format!(
            "natsplan_check_status{{cluster=\"natsplan\",layout=\"{id}\"}} 2\n"
        )),
        "{text}"
    );

    // A server stopped: critical for it (and its monitor named), whatever else its absence does.
    let victim = &state["nodes"][2];
    let name = victim["name"].as_str().unwrap();
    let pid = victim["pid"].as_i64().unwrap() as i32;
    // SAFETY: the lab's own nats-server, started by this test's `lab up`.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let (code, v, err) = check_json(d);
    assert_eq!(code, 2, "{v:#}\n{err}");
    let crit = with_status(&v, "critical");
    for c in ["server", "store", "ha_assets"] {
        assert!(crit.contains(&(c.to_string(), name.to_string())), "{c} {name}: {v:#}");
    }
    graded_everywhere(d, &[], "server", name, "critical");
    let (code, out, _) = natsplan(&["--format", "prometheus", "check", "--lab", d]);
    assert_eq!(code, 2);
    assert!(
        out.contains(&format!("check=\"server\",subject=\"{name}\"}} 2\n")),
        "{out}"
    );
    let down = format!("check=\"server\",subject=\"{name}\"}} 2\n");
    let t = scrape_until(&addr, &down);
    assert!(t.contains(&down), "{t}");
    // The same server started again on its own configuration: the endpoint sees it back.
    let conf = dir.join(name).join("nats-server.conf");
    let again = std::process::Command::new(state["nats_server"].as_str().unwrap())
        .arg("-c")
        .arg(&conf)
        // The lab's servers read the system account's password from their environment (lab.json has it).
        .env(
            "NATS_SYSTEM_PASSWORD",
            state["system_user"]["password"].as_str().unwrap(),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let again_pid = again.id() as i32;
    let _again = Kill(again);
    let up = format!("check=\"server\",subject=\"{name}\"}} 0\n");
    let t = scrape_until(&addr, &up);
    assert!(t.contains(&up), "{t}");

    // A server paused (SIGSTOP: a long GC stall, a frozen VM): its monitor does not answer within
    // --timeout, so it is critical as a stopped one is.
    let paused = &state["nodes"][1];
    let pname = paused["name"].as_str().unwrap();
    let ppid = paused["pid"].as_i64().unwrap() as i32;
    // SAFETY: the lab's own nats-server; `Cont` resumes it however the test ends.
    unsafe { libc::kill(ppid, libc::SIGSTOP) };
    let _cont = Cont(ppid);
    let (code, out, err) = natsplan(&["--format", "json", "check", "--lab", d, "--timeout", "1s"]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert_eq!(code, 2, "{v:#}");
    assert!(
        with_status(&v, "critical").contains(&("server".to_string(), pname.to_string())),
        "{v:#}"
    );
    graded_everywhere(d, &["--timeout", "1s"], "server", pname, "critical");

    // The whole cluster gone (every server paused: no monitor answers): the endpoint serves status 3 and
    // check --watch says so once on stderr; every server resumed: it says the cluster answers again and
    // serves graded figures (status 0..2) again.
    let pids = [state["nodes"][0]["pid"].as_i64().unwrap() as i32, again_pid];
    let _cont_all: Vec<Cont> = pids.iter().map(|&p| Cont(p)).collect();
    for &p in &pids {
        // SAFETY: the lab's own nats-servers (the third one restarted by this test); `Cont` resumes them.
        unsafe { libc::kill(p, libc::SIGSTOP) };
    }
    let gone = format!("natsplan_check_status{{cluster=\"natsplan\",layout=\"{id}\"}} 3\n");
    let t = scrape_until(&addr, &gone);
    assert!(t.contains(&gone), "{t}");
    let line = next_said();
    assert!(line.contains("serving status 3 until it answers"), "{line}");
    for p in pids.iter().chain([&ppid]) {
        // SAFETY: as above.
        unsafe { libc::kill(*p, libc::SIGCONT) };
    }
    let line = next_said();
    assert!(line.contains("the cluster answers again"), "{line}");
    let t = scrape_until(
        &addr,
        &format!("natsplan_check_status{{cluster=\"natsplan\",layout=\"{id}\"}} 2\n"),
    );
    assert!(!t.contains(&gone), "{t}");
}

/// The item (check, subject) is graded `status` in every format, each run read on its own: JSON's item,
/// the Nagios long-output line, the Prometheus item series and the table's row; the exit code is the
/// report's (at least as bad as this item).
fn graded_everywhere(lab: &str, extra: &[&str], check: &str, subject: &str, status: &str) {
    let code = match status {
        "ok" => 0,
        "warning" => 1,
        "critical" => 2,
        _ => 3,
    };
    let run = |fmt: &str| {
        let mut a = vec!["--format", fmt, "--width", "400", "check", "--lab", lab];
        a.extend_from_slice(extra);
        natsplan(&a)
    };
    let (c, out, err) = run("json");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    assert!(
        with_status(&v, status).contains(&(check.to_string(), subject.to_string())),
        "json: {check} {subject} not {status}: {v:#}"
    );
    assert!(
        c >= code && i64::from(c) == v["exit_code"].as_i64().unwrap(),
        "json exit {c}: {v:#}"
    );
    let (c, out, _) = run("nagios");
    let line = format!("{} {check} {subject}: ", status.to_uppercase());
    assert!(c >= code && out.contains(&line), "nagios exit {c}, no '{line}': {out}");
    let (c, out, _) = run("prometheus");
    let series = format!("check=\"{check}\",subject=\"{subject}\"}} {code}\n");
    assert!(
        c >= code && out.contains("natsplan_check_item_status{") && out.contains(&series),
        "prometheus exit {c}, no '{series}': {out}"
    );
    let (c, out, _) = run("table");
    assert!(
        c >= code
            && out.lines().any(|l| {
                let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
                cells.len() > 3 && cells[1] == status && cells[2] == check && cells[3] == subject
            }),
        "table exit {c}, no row {status} {check} {subject}: {out}"
    );
}

/// SIGCONT to a paused process when the test ends.
struct Cont(i32);
impl Drop for Cont {
    fn drop(&mut self) {
        // SAFETY: the pid this test paused.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// A child process killed when the test ends, however it ends.
struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// GET /metrics from `addr`: the body.
fn scrape(addr: &str) -> String {
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    c.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    assert!(s.starts_with("HTTP/1.1 200 OK"), "{s}");
    s.split("\r\n\r\n").nth(1).unwrap_or_default().to_string()
}

/// Scrape until the text has `want` (the watch re-checks every second), for at most 90 s: the last text.
fn scrape_until(addr: &str, want: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let t = scrape(addr);
        if t.contains(want) || std::time::Instant::now() > deadline {
            return t;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}
