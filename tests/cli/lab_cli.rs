//! `natsplan lab up|status|down` end to end: the servers outlive `lab up`, are recorded in lab.json,
//! shown by `status`, and removed by `down`; a later `up` cleans up after a crash.

use crate::common::{natsplan, serial};
use assert_cmd::Command;
use predicates::str::contains;

/// Run a command that must succeed and return its JSON on stdout.
fn ok_json(c: &mut Command) -> serde_json::Value {
    let out = c.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out)))
}

fn pids(dir: &std::path::Path) -> Vec<u32> {
    let st: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).unwrap()).unwrap();
    st["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["pid"].as_u64().unwrap() as u32)
        .collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn up_status_down() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let _down = crate::common::LabDown(dir.clone());
    let up = ok_json(
        natsplan()
            .args(["lab", "up", "--nodes", "3", "--format", "json", "--dir"])
            .arg(&dir),
    );
    assert_eq!(up["client_urls"].as_array().unwrap().len(), 3);
    assert!(up["meta_leader"].is_string());
    let p = pids(&dir);
    assert!(p.iter().all(|&x| alive(x)), "servers must outlive `lab up`");

    let st = ok_json(
        natsplan()
            .args(["lab", "status", "--format", "json", "--dir"])
            .arg(&dir),
    );
    assert_eq!(
        st["servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["running"] == true)
            .count(),
        3
    );
    assert_eq!(st["servers"][1]["tags"][0], "rack:r2");
    assert!(st["meta_leader"].is_string());

    // A second `up` on the same DIR (as after a crash) stops the old servers first.
    natsplan()
        .args(["lab", "up", "--nodes", "3", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .stderr(contains("stopped 3 server(s) of the earlier lab"));
    assert!(p.iter().all(|&x| !alive(x)), "old servers still running");
    let p2 = pids(&dir);

    natsplan()
        .args(["lab", "down", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("stopped 3 server(s)"));
    assert!(p2.iter().all(|&x| !alive(x)));
    assert!(!dir.exists(), "lab down removes the folder it created");
    natsplan()
        .args(["lab", "down", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(contains("nothing to stop"));
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn down_removes_only_what_the_lab_made() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mine.txt"), "keep me").unwrap();
    let _down = crate::common::LabDown(tmp.path().to_path_buf());
    natsplan()
        .args(["lab", "up", "--nodes", "1", "--dir"])
        .arg(tmp.path())
        .assert()
        .success();
    natsplan()
        .args(["lab", "down", "--dir"])
        .arg(tmp.path())
        .assert()
        .success();
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["mine.txt"]);

    // Issue 39: `lab down --keep-logs` keeps each server's log (before: the flag did not exist, and the
    // logs went with the lab).
    natsplan()
        .args(["lab", "up", "--nodes", "1", "--dir"])
        .arg(tmp.path())
        .assert()
        .success();
    natsplan()
        .args(["lab", "down", "--keep-logs", "--dir"])
        .arg(tmp.path())
        .assert()
        .success()
        .stdout(contains("kept 1 log(s)"));
    let log = std::fs::read_to_string(tmp.path().join("logs").join("n1.log")).unwrap();
    assert!(log.contains("Server is ready"), "{log}");
    assert!(!tmp.path().join("n1").exists(), "the rest of the lab is removed");
}

#[test]
fn bad_flags_and_a_missing_binary_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    natsplan()
        .args(["lab", "up", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(contains("--nodes N"));
    natsplan()
        .args(["lab", "up", "--nodes", "3", "--sync", "sometimes", "--dir"])
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(contains("--sync"));
    natsplan()
        .args([
            "lab",
            "up",
            "--nodes",
            "3",
            "--nats-server",
            "/nonexistent/nats-server",
            "--dir",
        ])
        .arg(tmp.path())
        .assert()
        .code(3)
        .stderr(contains("scripts/install-nats-server"));
    natsplan()
        .args(["lab", "status", "--dir"])
        .arg(tmp.path().join("nothing"))
        .assert()
        .code(2)
        .stderr(contains("no lab there"));
}

#[test]
fn ctrl_c_during_start_up_leaves_nothing_running() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    // A "nats-server" that passes the version check and then never becomes healthy, so start-up waits.
    let fake = tmp.path().join("nats-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nats-server: v2.15.1'; exit 0; fi\nexec sleep 300\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("lab");
    let _down = crate::common::LabDown(dir.clone());
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .args(["lab", "up", "--nodes", "3", "--timeout", "60s", "--nats-server"])
        .arg(&fake)
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The record is written before any server starts (pid 0) and again after each spawn: wait until it
    // names all three servers' processes.
    let t0 = std::time::Instant::now();
    let spawned = |dir: &std::path::Path| {
        let p = std::fs::read_to_string(dir.join("lab.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|_| pids(dir))?;
        (p.len() == 3 && p.iter().all(|&x| x != 0)).then_some(p)
    };
    let p = loop {
        if let Some(p) = spawned(&dir) {
            break p;
        }
        assert!(
            t0.elapsed().as_secs() < 20,
            "lab.json never named three started servers"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(p.iter().all(|&x| alive(x)));
    // SAFETY: SIGINT to the natsplan process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    assert!(p.iter().all(|&x| !alive(x)), "servers left running after Ctrl-C");
    assert!(!dir.exists(), "lab files left after Ctrl-C");
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn up_runs_a_planned_layout_with_its_tags() {
    let _s = serial();
    let site = format!("{}/tests/data/four-racks-r3.yaml", env!("CARGO_MANIFEST_DIR"));
    let design = ok_json(natsplan().args(["design", &site, "--format", "json"]));
    let layout = design["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["unique_tag"] == "rack:")
        .unwrap()
        .clone();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let _down = crate::common::LabDown(dir.clone());
    natsplan()
        .args([
            "lab",
            "up",
            &site,
            "--layout",
            layout["id"].as_str().unwrap(),
            "--sync",
            "always",
            "--dir",
        ])
        .arg(&dir)
        .assert()
        .success();
    // An R3 stream created as an application would; status must show it on three servers.
    let lab: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("lab.json")).unwrap()).unwrap();
    let url = format!("nats://127.0.0.1:{}", lab["nodes"][0]["client_port"]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let created: serde_json::Value = rt.block_on(async {
        let nc = async_nats::ConnectOptions::new()
            .request_timeout(Some(std::time::Duration::from_secs(30)))
            .connect(url)
            .await
            .unwrap();
        let cfg = serde_json::json!({"name": "app", "subjects": ["app.>"], "num_replicas": 3, "storage": "file"});
        let r = nc
            .request("$JS.API.STREAM.CREATE.app", cfg.to_string().into())
            .await
            .unwrap();
        serde_json::from_slice(&r.payload).unwrap()
    });
    assert!(created.get("error").is_none(), "{created}");
    let mut st = serde_json::Value::Null;
    for _ in 0..100 {
        let out = natsplan()
            .args(["lab", "status", "--format", "json", "--dir"])
            .arg(&dir)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        st = serde_json::from_slice(&out).unwrap();
        if st["streams"][0]["peers"].as_array().is_some_and(|p| p.len() == 3) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(st["streams"][0]["name"], "app", "{st}");
    assert_eq!(st["streams"][0]["replicas"], 3);
    let racks: std::collections::BTreeSet<String> = st["streams"][0]["peers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = st["servers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == *p)
                .unwrap();
            s["tags"][0].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(racks.len(), 3, "unique_tag rack: spreads it: {st}");
    let st = natsplan()
        .args(["lab", "status", "--format", "json", "--dir"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    natsplan().args(["lab", "down", "--dir"]).arg(&dir).assert().success();
    let st: serde_json::Value = serde_json::from_slice(&st).unwrap();
    let planned = layout["servers"].as_array().unwrap();
    let live = st["servers"].as_array().unwrap();
    assert_eq!(live.len(), planned.len());
    for (p, l) in planned.iter().zip(live) {
        assert_eq!(p["name"], l["name"]);
        assert!(l["running"].as_bool().unwrap());
        assert_eq!(
            p["tags"], l["tags"],
            "tags as the server reports them (/varz) must be the planned ones"
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn up_with_streams_creates_the_plan_and_reports_what_cannot_place() {
    let _s = serial();
    let site = format!("{}/examples/seed-five-servers-raid0.yaml", env!("CARGO_MANIFEST_DIR"));
    let design = ok_json(natsplan().args(["design", &site, "--format", "json"]));
    let layouts = design["layouts"].as_array().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let _down = crate::common::LabDown(dir.clone());

    // The seed's RF5 layout: every planned stream is created.
    let good = layouts
        .iter()
        .find(|l| l["servers"].as_array().unwrap().len() == 5 && l["replicas"] == 5)
        .unwrap();
    let out = natsplan()
        .args([
            "lab",
            "up",
            &site,
            "--layout",
            good["id"].as_str().unwrap(),
            "--streams",
            "--format",
            "json",
        ])
        .arg("--dir")
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let up: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let created = up["streams"].as_array().unwrap();
    assert_eq!(created.len(), 4);
    assert!(created.iter().all(|c| c["error"].is_null()), "{up}");
    // The site's `consumers: 2` on orders (R5 here) and `1` on audit (R3): created as emit writes them.
    let consumers: Vec<(String, String, u64)> = up["consumers"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|c| assert!(c["error"].is_null(), "{up}"))
        .map(|c| {
            (
                c["stream"].as_str().unwrap().into(),
                c["name"].as_str().unwrap().into(),
                c["replicas"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        consumers,
        [
            ("orders".to_string(), "orders-c1".to_string(), 5),
            ("orders".into(), "orders-c2".into(), 5),
            ("audit".into(), "audit-c1".into(), 3)
        ]
    );

    // A layout of two servers: NATS refuses the R3 streams, as the plan said it would (exit 1, lab up).
    let bad = layouts
        .iter()
        .find(|l| l["servers"].as_array().unwrap().len() == 2)
        .expect("a two-server layout");
    natsplan()
        .args(["lab", "up", &site, "--layout", bad["id"].as_str().unwrap(), "--streams"])
        .arg("--dir")
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(contains("COULD NOT CREATE"))
        .stderr(contains("no suitable peers"));
    assert!(dir.join("lab.json").exists(), "the lab stays up for a look");
    natsplan().args(["lab", "down", "--dir"]).arg(&dir).assert().success();
}

/// A `sh` that sleeps, with `extra` among its arguments: a process that merely mentions a path.
fn bystander(extra: &std::ffi::OsStr) -> std::process::Child {
    std::process::Command::new("sh")
        .args(["-c", "sleep 300", "bystander"])
        .arg(extra)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// A lab record as `lab up` writes it, for a lab in `dir` whose one server `name` has `conf` and `pid`.
fn record(dir: &std::path::Path, name: &str, conf: &std::path::Path, pid: u32) -> serde_json::Value {
    serde_json::json!({
        "cluster_name": "lab", "nats_server": "/bin/sh", "dir": dir, "unique_tag": null, "sync": "2m",
        "created_dir": false,
        "nodes": [{"name": name, "host": "127.0.0.1", "tags": [], "client_port": 4222, "cluster_port": 6222,
                   "monitor_port": 8222, "conf": conf, "store_dir": dir.join(name).join("store"),
                   "log": dir.join(name).join("nats-server.log"), "pid": pid}]
    })
}

/// Issue 40, item 1: a crafted `lab.json` deleted a folder outside the lab (a conf of
/// `DIR/../victim/x.conf` passed a component-wise `starts_with`) and signalled a process because one of
/// its arguments equalled a recorded conf, with exit 0. Now a record whose files are not exactly
/// `DIR/<name>/nats-server.conf` (and store, log) is refused whole (exit 2, nothing touched), and a pid is
/// signalled only when it runs the recorded nats-server with exactly `-c CONF`. The bystander here
/// carries a unique path, not `-c`, so the old code could only ever signal it, never this machine's
/// other `sh -c` processes.
#[test]
fn a_crafted_lab_record_deletes_and_signals_nothing_outside_the_lab() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let lab = root.join("lab");
    let victim = root.join("victim");
    std::fs::create_dir_all(&lab).unwrap();
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "mine").unwrap();
    let mentioned = root.join("bystander-token");
    let mut bystander_a = bystander(mentioned.as_os_str());
    let pid_a = bystander_a.id();
    // The conf escapes the lab; the pid is the bystander; a second record names it by its argument.
    let escaping = lab.join("../victim/x.conf");
    let mut st = record(&lab, "a", &escaping, pid_a);
    let mut second = st["nodes"][0].clone();
    second["name"] = "b".into();
    second["conf"] = mentioned.display().to_string().into();
    second["pid"] = 0.into();
    st["nodes"].as_array_mut().unwrap().push(second);
    std::fs::write(lab.join("lab.json"), st.to_string()).unwrap();
    // A "nats-server" that passes the version check (`lab up` refuses the record before starting it).
    let fake = root.join("nats-server");
    std::fs::write(&fake, "#!/bin/sh\necho 'nats-server: v2.15.1'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    for action in ["down", "status", "up"] {
        let mut c = natsplan();
        c.args(["lab", action, "--dir"]).arg(&lab);
        if action == "up" {
            c.args(["--nodes", "1", "--nats-server"]).arg(&fake);
        }
        let out = c.timeout(std::time::Duration::from_secs(60)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "lab {action}: {err}");
        assert!(
            err.contains("nodes[0].conf") && err.contains("nothing it names was stopped or removed"),
            "lab {action}: {err}"
        );
        assert!(
            victim.join("keep.txt").exists(),
            "lab {action} deleted a folder outside the lab"
        );
        assert!(
            bystander_a.try_wait().unwrap().is_none(),
            "lab {action} signalled a bystander"
        );
    }
    // A record of the right shape whose pid is a process that only mentions the conf: not signalled,
    // and only the lab's own server folder is removed.
    let conf = lab.join("a").join("nats-server.conf");
    std::fs::create_dir_all(lab.join("a")).unwrap();
    let mut bystander_b = bystander(conf.as_os_str());
    std::fs::write(
        lab.join("lab.json"),
        record(&lab, "a", &conf, bystander_b.id()).to_string(),
    )
    .unwrap();
    natsplan()
        .args(["lab", "down", "--dir"])
        .arg(&lab)
        .assert()
        .success()
        .stdout(contains("none were running"));
    assert!(
        bystander_b.try_wait().unwrap().is_none(),
        "lab down signalled a process naming its conf"
    );
    assert!(!lab.join("a").exists() && victim.join("keep.txt").exists());
    for mut b in [bystander_a, bystander_b] {
        let _ = b.kill();
        let _ = b.wait();
    }
}

/// Issue 40, item 1: `cp -r lab lab.bak; natsplan lab down --dir lab.bak` stopped and deleted the original
/// lab (the root came from lab.json). The copy's record names another folder: refused, nothing touched.
#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn lab_down_on_a_copy_leaves_the_original_lab_running() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("lab");
    let copy = tmp.path().join("lab.bak");
    let _down = crate::common::LabDown(dir.clone());
    natsplan()
        .args(["lab", "up", "--nodes", "1", "--dir"])
        .arg(&dir)
        .assert()
        .success();
    let p = pids(&dir);
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(&dir)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    for action in ["down", "status", "up"] {
        let mut c = natsplan();
        c.args(["lab", action, "--dir"]).arg(&copy);
        if action == "up" {
            c.args(["--nodes", "1"]);
        }
        let out = c.timeout(std::time::Duration::from_secs(120)).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "lab {action} on the copy: {err}");
        assert!(err.contains("a copied or moved lab folder"), "{err}");
        assert!(
            p.iter().all(|&x| alive(x)),
            "lab {action} on a copy stopped the original"
        );
        assert!(dir.join("lab.json").exists() && copy.join("lab.json").exists());
    }
    natsplan().args(["lab", "down", "--dir"]).arg(&dir).assert().success();
    assert!(p.iter().all(|&x| !alive(x)));
}

/// Issue 40, item 1: two `lab up` on one --dir at once both exited 0 and the second tore down what the
/// first was starting. The folder is locked while one natsplan starts or stops its lab: the second is
/// refused (exit 3) and the first's servers run on. A "nats-server" that never becomes healthy keeps the
/// first one starting for as long as the test needs.
#[test]
fn a_second_lab_up_on_a_folder_being_started_is_refused() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let fake = tmp.path().join("nats-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nats-server: v2.15.1'; exit 0; fi\nexec sleep 300\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("lab");
    let _down = crate::common::LabDown(dir.clone());
    let first = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .args(["lab", "up", "--nodes", "2", "--timeout", "120s", "--nats-server"])
        .arg(&fake)
        .arg("--dir")
        .arg(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    let p = loop {
        let p = std::fs::read_to_string(dir.join("lab.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|_| pids(&dir))
            .filter(|p| p.len() == 2 && p.iter().all(|&x| x != 0));
        if let Some(p) = p {
            break p;
        }
        assert!(
            t0.elapsed().as_secs() < 30,
            "the first lab up never recorded its servers"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let second_up = [
        "lab",
        "up",
        "--nodes",
        "2",
        "--timeout",
        "2s",
        "--nats-server",
        fake.to_str().unwrap(),
    ];
    for args in [&second_up[..], &["lab", "down"]] {
        let out = natsplan()
            .args(args)
            .arg("--dir")
            .arg(&dir)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("another natsplan is starting or stopping the lab"),
            "{err}"
        );
        assert!(p.iter().all(|&x| alive(x)), "{args:?} stopped the first lab's servers");
    }
    // SAFETY: SIGINT to the natsplan process this test started.
    unsafe { libc::kill(first.id() as i32, libc::SIGINT) };
    let out = first.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(p.iter().all(|&x| !alive(x)) && !dir.exists());
}
