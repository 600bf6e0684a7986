//! `natsplan check` without a cluster (issue 49): bad input, bad flags and an unreachable cluster exit 3
//! (Nagios "unknown"), never 2, and say what to fix; with `--format nagios` the plugin's status line says
//! UNKNOWN on stdout too. nagios and prometheus are refused by every other command (exit 2).

use crate::common::{dead_url, repo_file, run};

/// A plan saved from the three-racks example, in a temporary folder.
fn saved_plan(dir: &std::path::Path) -> String {
    let p = dir.join("plan.json");
    let (code, _, err) = run(&[
        "design",
        &repo_file("examples/three-racks-raid1.yaml"),
        "--save",
        p.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    p.to_str().unwrap().to_string()
}

fn dead_monitor() -> String {
    dead_url().replace("nats://", "http://")
}

#[test]
fn an_unreachable_cluster_is_unknown_exit_3_and_nagios_says_so_on_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = saved_plan(tmp.path());
    let m = dead_monitor();
    let (code, out, err) = run(&["check", "--plan", &plan, "--monitor", &m]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        err.contains("no monitoring endpoint answered") && err.contains(&m),
        "{err}"
    );
    let (code, out, err) = run(&["--format", "nagios", "check", "--plan", &plan, "--monitor", &m]);
    assert_eq!(code, 3, "{err}");
    assert!(
        out.starts_with("NATSPLAN CHECK UNKNOWN: no monitoring endpoint answered"),
        "{out}"
    );
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[test]
fn bad_input_and_usage_exit_3_naming_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = saved_plan(tmp.path());
    let m = dead_monitor();
    let missing = tmp.path().join("nope.json");
    let missing = missing.to_str().unwrap();
    for (args, needle) in [
        (vec!["check", "--plan", &plan], "--monitor"),
        (vec!["check", "--plan", missing, "--monitor", &m], "nope.json"),
        (vec!["check", "--monitor", &m], "--plan FILE"),
        (
            vec!["check", "--plan", &plan, "--monitor", "https://h:8222"],
            "--monitor",
        ),
        (
            vec!["check", "--plan", &plan, "--monitor", &m, "--store-warn", "120"],
            "--store-warn",
        ),
        (
            vec!["check", "--plan", &plan, "--monitor", &m, "--store-warn", "95"],
            "--store-warn",
        ),
        (
            vec![
                "check",
                "--plan",
                &plan,
                "--monitor",
                &m,
                "--peer-seen-critical",
                "soon",
            ],
            "--peer-seen-critical",
        ),
        (
            vec!["check", "--plan", &plan, "--monitor", &m, "--layout", "p9-nothing"],
            "--layout p9-nothing",
        ),
        (
            vec!["--format", "markdown", "check", "--plan", &plan, "--monitor", &m],
            "nagios, prometheus",
        ),
        (
            vec!["--format", "nagioss", "check", "--plan", &plan, "--monitor", &m],
            "nagioss",
        ),
        (
            vec!["check", "--plan", &plan, "--lab", tmp.path().to_str().unwrap()],
            "no lab there",
        ),
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, 3, "{args:?}: {out}\n{err}");
        assert!(err.contains(needle), "{args:?}: wanted {needle} in {err}");
    }
}

/// A monitor port that answers `/varz` as a server of cluster `cluster` and `/jsz` with no JetStream
/// figures, for as long as the test runs.
fn fake_monitor(cluster: &'static str) -> String {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let mut buf = [0u8; 2048];
            let n = c.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let body = if req.starts_with("GET /varz") {
                format!(r#"{{"server_name":"stranger","cluster":{{"name":"{cluster}"}}}}"#)
            } else {
                "{}".to_string()
            };
            let _ = c.write_all(format!("HTTP/1.0 200 OK\r\n\r\n{body}").as_bytes());
        }
    });
    url
}

#[test]
fn a_cluster_of_another_name_is_a_clear_error_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = saved_plan(tmp.path());
    let m = fake_monitor("elsewhere");
    let (code, out, err) = run(&["check", "--plan", &plan, "--monitor", &m]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(
        err.contains("the plan is for cluster 'natsplan'") && err.contains("'elsewhere'"),
        "{err}"
    );
    // The planned cluster's name, but none of its servers and no JetStream: graded, critical (exit 2).
    let m = fake_monitor("natsplan");
    let (code, out, err) = run(&["--format", "nagios", "check", "--plan", &plan, "--monitor", &m]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.starts_with("NATSPLAN CHECK CRITICAL"), "{out}");
    assert!(
        out.contains("WARNING server stranger: stranger: a server the plan does not have"),
        "{out}"
    );
}

#[test]
fn a_listen_port_in_use_is_a_clear_error_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = saved_plan(tmp.path());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, _, err) = run(&[
        "check",
        "--plan",
        &plan,
        "--monitor",
        &dead_monitor(),
        "--watch",
        "1s",
        "--listen",
        &addr,
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains(&format!("--listen {addr}: cannot listen there")), "{err}");
}

#[test]
fn nagios_and_prometheus_are_refused_by_other_commands() {
    for f in ["nagios", "prometheus"] {
        let (code, _, err) = run(&["--format", f, "design", &repo_file("examples/three-racks-raid1.yaml")]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains(&format!("--format {f} is for `natsplan check` only")),
            "{err}"
        );
    }
    // A usage error of another command keeps clap's 2.
    let (code, _, _) = run(&["design", "--no-such-flag"]);
    assert_eq!(code, 2);
}

#[test]
fn a_plan_of_more_than_a_thousand_assets_is_a_clear_error_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = String::from("site: many\nnats: { replicas: [3] }\nracks:\n");
    for r in ["A", "B", "C"] {
        t.push_str(&format!(
            "  - name: {r}\n    servers: [n{r}]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}\n"
        ));
    }
    t.push_str("workload:\n  streams:\n");
    for s in 0..1001 {
        t.push_str(&format!(
            "    - {{ name: s{s}, msgs_per_s: 1, msg_size: 1KiB, retention: 1h }}\n"
        ));
    }
    let site = tmp.path().join("many.yaml");
    std::fs::write(&site, t).unwrap();
    let plan = tmp.path().join("plan.json");
    let (code, _, err) = run(&["design", site.to_str().unwrap(), "--save", plan.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["check", "--plan", plan.to_str().unwrap(), "--monitor", &dead_monitor()]);
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains("plans 1001 streams") && err.contains("at most 1000"),
        "{err}"
    );
}
