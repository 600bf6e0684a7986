//! Live tests of the lab against real nats-server processes on loopback: start-up, meta leader, tags as
//! configured, process control, and that nothing outlives the guard. One cluster at a time (2 cores).

use crate::common::serial;
use natsplan::lab::{self, LabSpec, NodeSpec, TestCluster};
use natsplan::monitor;
use std::time::{Duration, Instant};

/// Live tests in this file run one cluster at a time.
fn pid_alive(pid: u32) -> bool {
    // A zombie still has /proc/PID; Drop reaps, so absent means gone.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn three_nodes_start_with_a_meta_leader_and_die_with_the_guard() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    assert_eq!(c.client_urls().len(), 3);
    let leader = c.meta_leader().unwrap();
    assert!(["n1", "n2", "n3"].contains(&leader.as_str()), "{leader}");
    // Every server sees the same leader and a 3-peer meta group.
    for m in c.monitor_urls() {
        let j = monitor::jsz(&m, "", Duration::from_secs(2)).unwrap();
        assert_eq!(monitor::meta_leader(&j).as_deref(), Some(leader.as_str()));
        assert_eq!(
            j.pointer("/meta_cluster/cluster_size").and_then(|v| v.as_u64()),
            Some(3)
        );
    }
    let pids: Vec<u32> = c.nodes().iter().map(|n| n.pid).collect();
    let dir = c.dir().to_path_buf();
    assert!(pids.iter().all(|&p| pid_alive(p)));
    drop(c);
    assert!(pids.iter().all(|&p| !pid_alive(p)), "servers outlived the guard");
    assert!(!dir.exists(), "temporary lab dir left behind");
}

#[test]
fn tags_unique_tag_store_size_and_sync_reach_the_servers() {
    let _s = serial();
    let c = TestCluster::start_spec(|dir| LabSpec {
        nodes: vec![
            NodeSpec {
                name: "a1".into(),
                tags: vec!["rack:A".into(), "array:a1".into()],
                max_file_store_bytes: Some(3 << 30),
                volume: None,
            },
            NodeSpec::new("b1", &["rack:b", "array:b1"]),
            NodeSpec::new("c1", &["rack:c", "array:c1"]),
        ],
        cluster_name: "c-test".into(),
        sync: natsplan::units::SyncMode::Always,
        unique_tag: Some("rack:".into()),
        dir,
        client_tls: None,
    })
    .unwrap();
    let v = monitor::varz(&c.nodes()[0].monitor_url(), Duration::from_secs(2)).unwrap();
    assert_eq!(monitor::tags(&v), vec!["rack:a", "array:a1"], "tags are lower-cased");
    assert_eq!(
        v.pointer("/jetstream/config/unique_tag").and_then(|x| x.as_str()),
        Some("rack:")
    );
    assert_eq!(
        v.pointer("/jetstream/config/max_storage").and_then(|x| x.as_u64()),
        Some(3 << 30)
    );
    assert_eq!(
        v.pointer("/jetstream/config/sync_always").and_then(|x| x.as_bool()),
        Some(true)
    );
    assert_eq!(v.pointer("/cluster/name").and_then(|x| x.as_str()), Some("c-test"));
}

#[test]
fn kill_stop_and_restart_a_server() {
    let _s = serial();
    let mut c = TestCluster::start(3).unwrap();
    let old = c.nodes()[0].pid;
    c.kill(0).unwrap();
    assert!(!pid_alive(old));
    assert!(!c.is_running(0));
    assert!(c.kill(0).is_err(), "killing a dead server is an error");
    c.restart(0).unwrap();
    assert!(c.is_running(0));
    assert_ne!(c.nodes()[0].pid, old);
    c.wait_healthy(Duration::from_secs(30)).unwrap();

    // A SIGSTOPped server stops answering its monitor port; SIGCONT brings it back.
    c.sigstop(1).unwrap();
    let m = c.nodes()[1].monitor_url();
    assert!(monitor::varz(&m, Duration::from_millis(300)).is_err());
    c.sigcont(1).unwrap();
    let t0 = Instant::now();
    while monitor::varz(&m, Duration::from_millis(500)).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(10), "server did not resume");
    }
    c.stop().unwrap();
    assert!((0..3).all(|i| !c.is_running(i)));
}

#[test]
fn a_server_that_cannot_start_is_reported_with_its_log() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // A "nats-server" that passes the version check, then fails the way a bad configuration does.
    let fake = dir.path().join("nats-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'nats-server: v2.15.1'; exit 0; fi\n\
         echo '[FTL] something is wrong with this configuration' >&2; exit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = match lab::Lab::start(LabSpec::plain(3, dir.path().join("lab")), &fake) {
        Ok(_) => panic!("started with a server that exits"),
        Err(e) => format!("{e:#}"),
    };
    assert!(
        e.contains("exited during start-up") && e.contains("something is wrong"),
        "{e}"
    );
}

#[test]
fn a_lab_never_takes_over_a_folder_that_holds_something() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("n2")).unwrap();
    std::fs::write(dir.path().join("n2/notes.txt"), "mine").unwrap();
    let bin = lab::find_nats_server(None).unwrap();
    let e = match lab::Lab::start(LabSpec::plain(3, dir.path()), &bin) {
        Ok(_) => panic!("took over n2/"),
        Err(e) => format!("{e:#}"),
    };
    assert!(e.contains("n2") && e.contains("not empty"), "{e}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n2/notes.txt")).unwrap(),
        "mine"
    );
    assert!(!dir.path().join("n1").exists(), "nothing was started or written");
}

/// Run only as a child of `servers_die_when_the_test_process_is_killed`: start a cluster, record its pids
/// in the file `LAB_CHILD_PIDS` names, then wait to be killed.
#[test]
#[ignore = "helper process for servers_die_when_the_test_process_is_killed"]
fn child_mode_holds_a_cluster() {
    let Some(out) = std::env::var_os("LAB_CHILD_PIDS") else {
        return;
    };
    let c = TestCluster::start(3).unwrap();
    let pids: Vec<String> = c.nodes().iter().map(|n| n.pid.to_string()).collect();
    std::fs::write(&out, pids.join(" ")).unwrap();
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn servers_die_when_the_test_process_is_killed() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let pid_file = tmp.path().join("pids");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        // The test's name in this binary: its module path less the crate's name.
        .args(["--exact", &child_test_name(), "--ignored", "--nocapture"])
        .env("LAB_CHILD_PIDS", &pid_file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let pids: Vec<u32> = loop {
        if let Ok(t) = std::fs::read_to_string(&pid_file) {
            if !t.is_empty() {
                break t.split_whitespace().map(|p| p.parse().unwrap()).collect();
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "child never started its cluster"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|&p| pid_alive(p)));
    child.kill().unwrap(); // SIGKILL: no destructor runs, only PR_SET_PDEATHSIG can clean up
    child.wait().unwrap();
    let t0 = Instant::now();
    while pids.iter().any(|&p| pid_alive(p)) {
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "servers outlived a SIGKILLed test process"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The child's temporary lab dir survives a SIGKILL (no destructor ran); remove it.
    if let Some(dir) = std::fs::read_dir(std::env::temp_dir()).ok().and_then(|it| {
        it.filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.join("n1/nats-server.conf").exists() && pids_in(p, &pids))
    }) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `child_mode_holds_a_cluster` as the test harness names it (`module::test`).
fn child_test_name() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    if module.is_empty() {
        "child_mode_holds_a_cluster".into()
    } else {
        format!("{module}::child_mode_holds_a_cluster")
    }
}

/// Whether a lab dir's n1 log names one of `pids` (it was the child's).
fn pids_in(dir: &std::path::Path, pids: &[u32]) -> bool {
    std::fs::read_to_string(dir.join("n1/nats-server.log"))
        .map(|l| pids.iter().any(|p| l.contains(&format!("[{p}]"))))
        .unwrap_or(false)
}

#[test]
fn a_port_taken_between_choosing_and_binding_is_retried_on_fresh_ports() {
    let _s = serial();
    let tmp = tempfile::tempdir().unwrap();
    let real = lab::find_nats_server(None).unwrap();
    // A wrapper that, the first time it starts a server, fails exactly as nats-server does when its port
    // was taken in the meantime; afterwards it runs the real binary.
    let marker = tmp.path().join("failed-once");
    let wrapper = tmp.path().join("nats-server");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nif [ \"$1\" = -c ] && [ ! -e '{m}' ]; then touch '{m}'; \
             echo '[FTL] Error listening on port: 127.0.0.1:4222, \"listen tcp 127.0.0.1:4222: bind: address already in use\"' >&2; \
             exit 1; fi\nexec '{r}' \"$@\"\n",
            m = marker.display(),
            r = real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("lab");
    let c = lab::Lab::start(LabSpec::plain(3, &dir), &wrapper).expect("retried after the bind failure");
    assert!(marker.exists(), "the wrapper's failure path never ran");
    assert!(c.meta_leader().is_ok());
}
