//! Issue 17's lab leftovers: a `lab up` killed between starting a server and recording its pid leaves
//! nothing `lab down` cannot find; a nats-server binary that never answers `--version` cannot hang
//! `lab up`; `verify --faults` stopped by a signal leaves no network namespace or lab folder behind.

use assert_cmd::Command;
use natsplan::lab::{self, LabSpec, LabState, NodeInfo, StartHooks, StartOptions};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::common::serial;

fn nats_server() -> std::path::PathBuf {
    lab::find_nats_server(None).expect("nats-server (NATS_SERVER_BIN)")
}

/// A live (not zombie) process.
fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !matches!(
        stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()),
        Some("Z" | "X") | None
    )
}

#[test]
fn every_record_of_a_start_is_written_before_the_server_it_names_runs() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let seen = Mutex::new(Vec::<Vec<u32>>::new());
    let record = |st: &LabState| -> anyhow::Result<()> {
        seen.lock().unwrap().push(st.nodes.iter().map(|n| n.pid).collect());
        Ok(())
    };
    let hooks = StartHooks {
        cancel: None,
        on_spawned: Some(&record),
    };
    let lab = lab::Lab::start_with(
        LabSpec::plain(3, dir.path()),
        &nats_server(),
        &StartOptions::default(),
        &hooks,
    )
    .expect("lab starts");
    let seen = seen.into_inner().unwrap();
    // Before the first fork: every server recorded, no pid yet; then one more pid after each spawn.
    assert_eq!(seen.first().cloned(), Some(vec![0, 0, 0]), "{seen:?}");
    for (k, pids) in seen.iter().enumerate().take(4) {
        assert_eq!(pids.iter().filter(|p| **p != 0).count(), k, "{seen:?}");
    }
    drop(lab);
}

#[test]
fn lab_down_stops_a_server_whose_pid_was_never_recorded() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().canonicalize().unwrap();
    // What a `lab up` SIGKILLed right after forking leaves: the record written before the spawn (pid 0)
    // and a detached server running that record's configuration.
    let ports = lab::free_ports(3).unwrap();
    let folder = d.join("n1");
    std::fs::create_dir_all(folder.join("store")).unwrap();
    let conf = folder.join("nats-server.conf");
    std::fs::write(
        &conf,
        format!(
            "server_name: n1\nlisten: 127.0.0.1:{}\nhttp: 127.0.0.1:{}\njetstream {{ store_dir: \"{}\" }}\n",
            ports[0],
            ports[2],
            folder.join("store").display()
        ),
    )
    .unwrap();
    let st = LabState {
        cluster_name: "natsplan".into(),
        nats_server: nats_server(),
        dir: d.clone(),
        unique_tag: None,
        sync: "2m".into(),
        nodes: vec![NodeInfo {
            name: "n1".into(),
            host: "127.0.0.1".into(),
            tags: vec![],
            client_port: ports[0],
            cluster_port: ports[1],
            monitor_port: ports[2],
            conf: conf.clone(),
            store_dir: folder.join("store"),
            log: folder.join("nats-server.log"),
            pid: 0,
            volume: None,
        }],
        created_dir: false,
        power_fs: Vec::new(),
        system_user: None,
        plan: None,
    };
    st.save().unwrap();
    let mut server = std::process::Command::new(nats_server())
        .arg("-c")
        .arg(&conf)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = server.id();
    std::thread::sleep(Duration::from_millis(300));
    assert!(alive(pid), "the orphaned server runs");
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["lab", "down", "--dir"])
        .arg(&d)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let t0 = Instant::now();
    while server.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "lab down did not stop the server it had no pid for"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!folder.exists(), "its folder is removed too");
}

#[test]
fn lab_up_refuses_a_binary_that_never_answers_version_instead_of_hanging() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("nats-server");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 300\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["lab", "up", "--nodes", "1", "--timeout", "2s", "--nats-server"])
        .arg(&fake)
        .arg("--dir")
        .arg(dir.path().join("lab"))
        // Far beyond the 10 s bound: only a hang reaches it.
        .timeout(Duration::from_secs(90))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("did not answer"), "{err}");
}

/// Network namespaces and lab folders named for process `pid`.
fn leftovers_of(pid: u32) -> Vec<String> {
    let mut v = Vec::new();
    for d in [Path::new("/var/run/netns").to_path_buf(), std::env::temp_dir()] {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(&format!("npf{pid}")) || n.starts_with(&format!("natsplan-faults-{pid}-")) {
                v.push(e.path().display().to_string());
            }
        }
    }
    v
}

#[test]
fn verify_faults_stopped_by_a_signal_leaves_no_namespace_or_lab_folder() {
    let _s = serial();
    // Its results go to a temp folder, not the repository's (the default `natsplan-verify` in the cwd).
    let results = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .args(["verify", "--faults", "--scenarios", "leader-partition,follower-kill"])
        .arg("--out")
        .arg(results.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the run has made what it must clean up (its lab folder, and namespaces when it can).
    let t0 = Instant::now();
    while leftovers_of(pid).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(60), "the fault run never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped yet.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new(), "{err}");
}
