//! `natsplan verify --faults` as a process: Ctrl-C in the middle of a fault (a full store on its tmpfs,
//! the lab in network namespaces) stops the lab within seconds, writes the scenarios that finished and
//! leaves nothing behind — no nats-server, no mount, no namespace, no lab folder; and a planned layout's racks fail whole (`--site --layout`). One lab at a time.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn natsplan() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
}

/// Processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                v.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
            }
        }
    }
    v
}

#[test]
fn ctrl_c_during_a_fault_leaves_nothing_behind() {
    let _g = crate::common::serial();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounts and network namespaces need root");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let mut child = natsplan()
        .args([
            "verify",
            "--faults",
            "--scenarios",
            "leader-partition,full-disk",
            "--out",
        ])
        .arg(out.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = tx.send(line);
        }
        all
    });
    // Wait until the disk of the full-disk scenario is full: the lab runs in namespaces and a tmpfs is
    // mounted.
    let t0 = Instant::now();
    let mut seen = false;
    while t0.elapsed() < Duration::from_secs(240) {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(l) if l.contains("filled") && l.contains("tmpfs") => {
                seen = true;
                break;
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let marker = format!("natsplan-faults-{pid}-");
    let ns_before = natsplan::faults::sandbox::namespaces_of(pid);
    let mounts_before: Vec<String> = natsplan::faults::sandbox::our_mounts()
        .into_iter()
        .filter(|m| m.contains(&marker))
        .collect();
    let servers_before = processes_with(&marker);
    // SAFETY: kill(2) on our own child's pid, not yet reaped.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGINT);
    }
    let t1 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t1.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("natsplan did not stop within 60 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = reader.join().unwrap();
    assert!(seen, "the full-disk scenario never filled its tmpfs:\n{stderr}");
    assert!(
        !ns_before.is_empty() && !mounts_before.is_empty() && servers_before.len() >= 3,
        "the run had its namespaces {ns_before:?}, mount {mounts_before:?} and servers {servers_before:?} when \
         interrupted"
    );
    // Exits as a shell reports SIGINT, with the scenario that finished written (issue 41: it used to act
    // about 150 s later, in a wait for the full server to be healthy, exit 3 and write nothing).
    assert_eq!(status.code(), Some(130), "interrupted runs exit 130:\n{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let folders: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(folders.len(), 1, "one results folder: {folders:?}\n{stderr}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folders[0].join("faults.json")).unwrap()).unwrap();
    assert_eq!(saved["interrupted"], true, "{saved:#}");
    let rows = saved["scenarios"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{saved:#}");
    assert_eq!(rows[0]["name"], "leader-partition", "{saved:#}");
    assert!(
        rows[0]["skipped"].is_null(),
        "the finished scenario is reported as run: {saved:#}"
    );
    assert_eq!(rows[1]["observed"], "interrupted", "{saved:#}");
    assert!(
        rows[1]["skipped"].is_string(),
        "the interrupted one is never judged: {saved:#}"
    );
    // Nothing left: servers, namespaces, mounts, lab folders.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(processes_with(&marker), Vec::<String>::new(), "{stderr}");
    assert_eq!(natsplan::faults::sandbox::namespaces_of(pid), Vec::<String>::new());
    let left: Vec<String> = natsplan::faults::sandbox::our_mounts()
        .into_iter()
        .filter(|m| m.contains(&marker))
        .collect();
    assert_eq!(left, Vec::<String>::new());
    let dirs: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&marker))
        .map(|e| e.path())
        .collect();
    assert!(dirs.is_empty(), "lab folders left: {dirs:?}");
}

/// A planned layout (three racks of one server, R3 with unique_tag rack): rack A's network cut and its
/// power (process kill) agree with whatif on that layout, nothing acknowledged is lost.
#[test]
fn a_planned_layout_loses_whole_racks() {
    let _g = crate::common::serial();
    let site = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/four-racks-r3.yaml");
    let design = natsplan().args(["design", site, "--format", "json"]).output().unwrap();
    assert!(design.status.success(), "{}", String::from_utf8_lossy(&design.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&design.stdout).unwrap();
    // The smallest layout: one server in each of three racks.
    let id = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .min_by_key(|l| l["servers"].as_array().unwrap().len())
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = tempfile::tempdir().unwrap();
    let o = natsplan()
        .args(["verify", "--faults", "--site", site, "--layout", &id])
        .args([
            "--scenarios",
            "rack-power,rack-net",
            "--racks",
            "A",
            "--format",
            "json",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    let rep: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_eq!(o.status.code(), Some(0), "{rep:#}\n{stderr}");
    let sc = rep["scenarios"].as_array().unwrap();
    let names: Vec<&str> = sc.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["rack-power:A", "rack-net:A"], "{stderr}");
    for s in sc {
        assert_eq!(s["agree"], true, "{s:#}");
        assert_eq!(s["acked_lost"], 0, "{s:#}");
        assert_eq!(s["predicted"], "degraded", "one rack of three holds one replica: {s:#}");
        assert!(s["skipped"].is_null());
    }
    assert!(rep["target"].as_str().unwrap().contains(&id));
}
