//! `DIR/lab.json`: what a detached lab (`natsplan lab up`) started, so `lab status`, `lab down` and a
//! later `lab up` find its servers, and clean up after natsplan or the machine crashed.
//!
//! A lab folder is not trusted: it may be a copy (`cp -r lab lab.bak`), moved, or written by anyone. So
//! the root is always `--dir` itself (canonicalised), never a path from the file; a `lab.json` that
//! records another folder, or any server whose files are not exactly `DIR/<name>/nats-server.conf`,
//! `DIR/<name>/store` and `DIR/<name>/nats-server.log`, or that listens off loopback, is refused whole
//! before anything is signalled or removed. A pid is signalled only while its executable is the recorded
//! nats-server and its arguments are exactly `-c DIR/<name>/nats-server.conf` (what `lab up` starts), so a
//! pid reused by another process, or a process that merely mentions the file, is never touched; pid 0
//! names no process. Only `DIR/<name>` folders of validated servers are removed. `LabLock` keeps two
//! natsplan processes from starting or stopping one lab folder at the same time.

use super::NodeInfo;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const STATE_FILE: &str = "lab.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabState {
    pub cluster_name: String,
    pub nats_server: PathBuf,
    pub dir: PathBuf,
    pub unique_tag: Option<String>,
    pub sync: String,
    pub nodes: Vec<NodeInfo>,
    /// natsplan created DIR itself, so `lab down` removes DIR too (otherwise only what it put inside).
    pub created_dir: bool,
    /// The `natsplan powerfs` processes of a `lab up --power-loss-fs` (empty otherwise; absent in an
    /// older lab.json).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power_fs: Vec<super::PowerFsProcess>,
    /// The system account's user and the password its servers were given in `$NATS_SYSTEM_PASSWORD`
    /// (absent in an older lab.json, whose servers have no system account user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_user: Option<SystemUser>,
    /// The planned layout this lab runs (`lab up SITE --layout ID` or `--plan FILE`), so `verify --lab DIR`
    /// compares with it without --site/--plan (issue 39); absent for `--nodes N` and in an older lab.json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<LabPlan>,
}

/// What a lab was planned from: the layout and the files to read the plan again (absolute paths). `site`
/// and `plan` are absent when the plan came from what files cannot give again (`--omb`, `--from-cluster`):
/// verify then needs --site or --plan as before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabPlan {
    pub layout: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<PathBuf>,
}

/// A lab's system account user (`emit::conf::SYSTEM_USER`) and password: a loopback lab's, random per lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemUser {
    pub user: String,
    pub password: String,
}

impl LabState {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// Read `DIR/lab.json` (`Ok(None)` when there is none) and hold it to `DIR`: see `validate`. The
    /// record comes back with `dir` the canonical `DIR`. An error is bad input: nothing was touched.
    pub fn load(dir: &Path) -> Result<Option<LabState>> {
        // `verify --lab lab.json` gives the empty parent: the current folder.
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let root = match dir.canonicalize() {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("--dir {}: cannot resolve the folder", dir.display())),
        };
        let p = LabState::path(&root);
        match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            _ => {}
        }
        // The one bounded reader (regular files only, size cap, no wait on a FIFO).
        let text = crate::input::read_text(&p, "lab record").map_err(|e| anyhow!("{e}"))?;
        let st: LabState = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a natsplan lab record; remove it, or point --dir at the lab's folder",
                p.display()
            )
        })?;
        st.validate(&root)
            .with_context(|| format!("{}: refused; nothing it names was stopped or removed", p.display()))?;
        Ok(Some(st))
    }

    /// The record held to the folder it was read from (`root`, canonical): it must name `root` itself,
    /// at most `LAB_SERVERS` servers with lab folder names, each with exactly the files `lab up` writes
    /// under `root/<name>/` and a loopback address, and power-loss layers only on those servers' stores.
    /// The first problem, with its field.
    pub fn validate(&self, root: &Path) -> Result<()> {
        if self.dir != root {
            bail!(
                "dir: the record is of the lab in {}, not of this folder {} (a copied or moved lab folder?); stop \
                 that lab with `natsplan lab down --dir {}`, and remove this folder by hand",
                self.dir.display(),
                root.display(),
                self.dir.display()
            );
        }
        crate::input::limits::LAB_SERVERS
            .check_usize(self.nodes.len().max(1))
            .map_err(|e| anyhow!("nodes: {} servers: {e}", self.nodes.len()))?;
        let mut seen = std::collections::HashSet::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if !super::is_folder_name(&n.name) {
                bail!("nodes[{i}].name: {:?} is not a lab server's folder name", n.name);
            }
            if !seen.insert(n.name.as_str()) {
                bail!("nodes[{i}].name: server {} appears twice", n.name);
            }
            let base = root.join(&n.name);
            for (field, got, want) in [
                ("conf", &n.conf, base.join("nats-server.conf")),
                ("store_dir", &n.store_dir, base.join("store")),
                ("log", &n.log, base.join("nats-server.log")),
            ] {
                if *got != want {
                    bail!(
                        "nodes[{i}].{field}: {} is not {}, the file lab up writes for server {}",
                        got.display(),
                        want.display(),
                        n.name
                    );
                }
            }
            if !n.host.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback()) {
                bail!(
                    "nodes[{i}].host: {:?} is not a loopback address; a lab listens on 127.0.0.1",
                    n.host
                );
            }
        }
        for (i, l) in self.power_fs.iter().enumerate() {
            let ok = self.nodes.iter().any(|n| {
                l.mountpoint == root.join(&n.name).join("store") && l.backing == root.join(&n.name).join("disk")
            });
            if !ok {
                bail!(
                    "power_fs[{i}]: the layer on {} is not on a store of this lab's servers",
                    l.mountpoint.display()
                );
            }
        }
        Ok(())
    }

    /// Write `DIR/lab.json` atomically (temp file, then rename).
    pub fn save(&self) -> Result<()> {
        let p = LabState::path(&self.dir);
        let tmp = self.dir.join(format!(".{STATE_FILE}.tmp"));
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &p))
            .with_context(|| format!("cannot write {}", p.display()))
    }

    /// Whether `pid` is this lab's server `n`: see `is_lab_process`.
    pub fn is_server(&self, pid: u32, n: &NodeInfo) -> bool {
        is_lab_process(pid, &n.conf, &self.nats_server)
    }

    /// Recorded servers whose process is still this lab's nats-server: by the recorded pid, or, for a
    /// server recorded before its pid was (natsplan killed between the fork and the record), the process
    /// whose executable is the recorded nats-server and whose arguments are exactly `-c` and that server's
    /// configuration (a strict match: nothing else is started that way).
    pub fn running(&self) -> Vec<NodeInfo> {
        let mut unknown = Vec::new();
        let mut live: Vec<NodeInfo> = Vec::new();
        for n in &self.nodes {
            if self.is_server(n.pid, n) {
                live.push(n.clone());
            } else {
                unknown.push(n);
            }
        }
        if !unknown.is_empty() {
            for pid in proc_pids() {
                if let Some(n) = unknown.iter().find(|n| self.is_server(pid, n)) {
                    live.push(NodeInfo { pid, ..(*n).clone() });
                }
            }
        }
        live
    }

    /// Kill every recorded server still running (SIGTERM, then SIGKILL after `grace`), then remove the
    /// files the lab made: each server's folder, `lab.json`, and DIR itself when natsplan created it and
    /// `remove_dir` (a `lab up` that starts a new lab in DIR keeps it). Returns the names of the servers
    /// that were still running. Call it on a record from `load` (validated against DIR).
    pub fn teardown(&self, grace: Duration, remove_dir: bool) -> Result<Vec<String>> {
        self.teardown_keeping(grace, remove_dir, false)
            .map(|(stopped, _)| stopped)
    }

    /// As `teardown`; with `keep_logs`, each server's log is first copied to `DIR/logs/NAME.log` (once the
    /// servers have stopped, so it ends with their shutdown), and the copies are returned beside the
    /// servers stopped (`lab down --keep-logs`, issue 39).
    pub fn teardown_keeping(
        &self,
        grace: Duration,
        remove_dir: bool,
        keep_logs: bool,
    ) -> Result<(Vec<String>, Vec<PathBuf>)> {
        let live: Vec<NodeInfo> = self.running();
        let alive = |n: &NodeInfo| self.is_server(n.pid, n);
        for n in &live {
            signal(n.pid, libc::SIGCONT);
            signal(n.pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while live.iter().any(alive) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for n in &live {
            if alive(n) {
                signal(n.pid, libc::SIGKILL);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while live.iter().any(alive) {
            if Instant::now() > deadline {
                let names: Vec<&str> = live.iter().filter(|n| alive(n)).map(|n| n.name.as_str()).collect();
                bail!("lab servers {} did not exit after SIGKILL", names.join(", "));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The servers are gone: stop the stores' power-loss layers (recorded or not) and detach any
        // mount of the layer left under DIR (a killed layer's), so no folder below holds a mount.
        super::power::stop_layers(&self.power_fs, &self.dir, grace)?;
        let mut kept = Vec::new();
        if keep_logs {
            let logs = self.dir.join("logs");
            for n in self
                .nodes
                .iter()
                .filter(|n| super::is_folder_name(&n.name) && n.log.is_file())
            {
                std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
                let to = logs.join(format!("{}.log", n.name));
                std::fs::copy(&n.log, &to)
                    .with_context(|| format!("cannot keep {} as {}", n.log.display(), to.display()))?;
                kept.push(to);
            }
        }
        for n in &self.nodes {
            // Only folders this lab wrote: DIR/<name>, a validated folder name (`load`). A symlink there is
            // removed, never followed (remove_dir_all does not follow it).
            if super::is_folder_name(&n.name) {
                remove_dir_if_exists(&self.dir.join(&n.name))?;
            }
        }
        let p = LabState::path(&self.dir);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("cannot remove {}", p.display()))?;
        }
        // A `lab up` killed while saving its record leaves the temp file of `save` behind.
        let _ = std::fs::remove_file(self.dir.join(format!(".{STATE_FILE}.tmp")));
        if self.created_dir && remove_dir {
            // Only if empty now: never delete files a user put there.
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok((live.iter().map(|n| n.name.clone()).collect(), kept))
    }
}

fn remove_dir_if_exists(p: &Path) -> Result<()> {
    match std::fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", p.display())),
    }
}

fn signal(pid: u32, sig: libc::c_int) {
    if pid > 0 {
        // SAFETY: plain kill(2); the pid was just checked to be this lab's nats-server.
        unsafe {
            libc::kill(pid as libc::pid_t, sig);
        }
    }
}

/// Every process id under /proc.
fn proc_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// True when `pid` is a live (not zombie) nats-server of a lab: its executable is `nats_server` (both
/// resolved) and its arguments are exactly `-c CONF`, what `lab up` starts. Pid 0 (not started yet) is
/// none. Another user's process cannot be read and is never matched. A server whose binary was replaced
/// or removed since it started (`scripts/install-nats-server` again) still matches: the kernel names its
/// executable `PATH (deleted)`, and PATH is the recorded one.
pub fn is_lab_process(pid: u32, conf: &Path, nats_server: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    if pid == 0 {
        return false;
    }
    let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
        return false;
    };
    let exe = exe.as_os_str().as_bytes();
    let exe = exe.strip_suffix(b" (deleted)").unwrap_or(exe);
    // The record holds the resolved path (`lab up`); resolving again covers an older record.
    let binary = nats_server.canonicalize().unwrap_or_else(|_| nats_server.to_path_buf());
    if exe != binary.as_os_str().as_bytes() {
        return false;
    }
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // Field 3 (after the parenthesised name) is the state; Z = zombie, X = dead.
        if let Some(state) = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next()) {
            if state == "Z" || state == "X" {
                return false;
            }
        }
    }
    // NUL-terminated arguments: argv[0] (the binary as it was named), `-c`, the configuration.
    let args: Vec<&[u8]> = cmdline
        .strip_suffix(&[0])
        .unwrap_or(&cmdline)
        .split(|b| *b == 0)
        .collect();
    matches!(&args[..], [_, flag, c] if *flag == b"-c" && *c == conf.as_os_str().as_encoded_bytes())
}

/// A lock on a lab folder held while `lab up` or `lab down` works in it, so two natsplan processes never
/// start or stop one lab at once (the second would tear down what the first is starting). An advisory
/// `flock` on the folder itself: nothing is left behind, and the kernel drops it when natsplan exits,
/// however it exits.
pub struct LabLock {
    _dir: std::fs::File,
}

impl LabLock {
    /// Lock `dir` (it must exist), or say another natsplan holds it.
    pub fn take(dir: &Path) -> Result<LabLock> {
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        // A folder removed and made again between the open and the lock is another folder: try again.
        for _ in 0..3 {
            let f =
                std::fs::File::open(dir).with_context(|| format!("--dir {}: cannot open the folder", dir.display()))?;
            // SAFETY: flock(2) on a descriptor this function owns.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                    bail!(
                        "--dir {}: another natsplan is starting or stopping the lab in this folder; wait for it to \
                         finish (then `natsplan lab status --dir {}`), or use another --dir",
                        dir.display(),
                        dir.display()
                    );
                }
                return Err(e).with_context(|| format!("--dir {}: cannot lock the folder", dir.display()));
            }
            let (held, now) = (f.metadata()?, std::fs::metadata(dir));
            if now.is_ok_and(|m| m.dev() == held.dev() && m.ino() == held.ino()) {
                return Ok(LabLock { _dir: f });
            }
        }
        bail!("--dir {}: the folder keeps being replaced; try again", dir.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(root: &Path, name: &str) -> NodeInfo {
        let base = root.join(name);
        NodeInfo {
            name: name.into(),
            host: "127.0.0.1".into(),
            tags: vec![],
            client_port: 1,
            cluster_port: 2,
            monitor_port: 3,
            conf: base.join("nats-server.conf"),
            store_dir: base.join("store"),
            log: base.join("nats-server.log"),
            pid: 0,
            volume: None,
        }
    }

    fn state(root: &Path) -> LabState {
        LabState {
            cluster_name: "lab".into(),
            nats_server: "/bin/sh".into(),
            dir: root.to_path_buf(),
            unique_tag: None,
            sync: "2m".into(),
            nodes: vec![node(root, "n1"), node(root, "n2")],
            created_dir: false,
            power_fs: vec![],
            system_user: None,
            plan: None,
        }
    }

    #[test]
    fn a_record_is_held_to_the_folder_it_was_read_from() {
        let root = Path::new("/labs/a");
        state(root).validate(root).unwrap();
        let refused = |edit: &dyn Fn(&mut LabState), says: &str| {
            let mut st = state(root);
            edit(&mut st);
            let e = format!("{:#}", st.validate(root).unwrap_err());
            assert!(e.contains(says), "{says}: {e}");
        };
        refused(&|s| s.dir = "/labs/b".into(), "a copied or moved lab folder");
        refused(
            &|s| s.nodes[0].conf = "/labs/a/../victim/x.conf".into(),
            "nodes[0].conf",
        );
        refused(&|s| s.nodes[1].conf = "-c".into(), "nodes[1].conf");
        refused(&|s| s.nodes[0].store_dir = "/".into(), "nodes[0].store_dir");
        refused(&|s| s.nodes[0].log = "/etc/passwd".into(), "nodes[0].log");
        refused(&|s| s.nodes[0].name = "..".into(), "nodes[0].name");
        refused(&|s| s.nodes[1] = node(root, "n1"), "appears twice");
        refused(&|s| s.nodes[0].host = "10.0.0.1".into(), "not a loopback address");
        refused(
            &|s| s.nodes = (0..16).map(|i| node(root, &format!("n{i}"))).collect(),
            "at most 15 lab servers",
        );
        refused(
            &|s| {
                s.power_fs = vec![crate::lab::PowerFsProcess {
                    pid: 1,
                    mountpoint: "/home".into(),
                    backing: "/labs/a/n1/disk".into(),
                }]
            },
            "power_fs[0]",
        );
    }

    #[test]
    fn only_the_recorded_binary_run_with_exactly_that_conf_is_a_lab_server() {
        let conf = Path::new("/labs/a/n1/nats-server.conf");
        let mut c = std::process::Command::new("sleep").arg("300").spawn().unwrap();
        let sleep_bin = std::fs::read_link(format!("/proc/{}/exe", c.id())).unwrap();
        // The right binary, not started with `-c CONF`: no.
        assert!(!is_lab_process(c.id(), conf, &sleep_bin));
        let _ = c.kill();
        let _ = c.wait();
        // `sh -c ... CONF` mentions the conf, but is not the recorded binary run with `-c CONF`.
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 300"])
            .arg(conf)
            .spawn()
            .unwrap();
        assert!(!is_lab_process(sh.id(), conf, Path::new("/nonexistent/nats-server")));
        assert!(!is_lab_process(sh.id(), Path::new("-c"), Path::new("/bin/sh")));
        let _ = sh.kill();
        let _ = sh.wait();
        assert!(!is_lab_process(0, conf, Path::new("/bin/sh")), "pid 0 names no process");
        // And the match itself: `sh -c SCRIPT` is "the binary /bin/sh run with exactly -c SCRIPT".
        let script = "sleep 300; true";
        let mut exact = std::process::Command::new("/bin/sh")
            .args(["-c", script])
            .spawn()
            .unwrap();
        // Until its exec is done (a forked child is this test binary for a moment, and mid-exec its
        // executable is new while its arguments are not there yet).
        let sh = Path::new("/bin/sh").canonicalize().unwrap();
        for _ in 0..500 {
            let exe = std::fs::read_link(format!("/proc/{}/exe", exact.id()));
            let args = std::fs::read(format!("/proc/{}/cmdline", exact.id())).unwrap_or_default();
            if exe.is_ok_and(|e| e == sh) && !args.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(is_lab_process(exact.id(), Path::new(script), Path::new("/bin/sh")));
        assert!(!is_lab_process(exact.id(), Path::new(script), &sleep_bin));
        let _ = exact.kill();
        let _ = exact.wait();
    }

    /// A lab server whose binary was replaced or removed while it ran (the kernel then names its executable
    /// `PATH (deleted)`) is still the lab's: before, `lab down` left it running and deleted its folder.
    #[test]
    fn a_server_whose_binary_was_replaced_is_still_the_labs() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().canonicalize().unwrap().join("nats-server");
        std::fs::copy("/bin/sh", &bin).unwrap();
        let script = "sleep 300; true";
        let mut c = std::process::Command::new(&bin).args(["-c", script]).spawn().unwrap();
        for _ in 0..500 {
            let exe = std::fs::read_link(format!("/proc/{}/exe", c.id()));
            let args = std::fs::read(format!("/proc/{}/cmdline", c.id())).unwrap_or_default();
            if exe.is_ok_and(|e| e == bin) && !args.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(is_lab_process(c.id(), Path::new(script), &bin));
        std::fs::remove_file(&bin).unwrap();
        assert!(is_lab_process(c.id(), Path::new(script), &bin), "removed binary");
        std::fs::copy("/bin/sh", &bin).unwrap();
        assert!(is_lab_process(c.id(), Path::new(script), &bin), "replaced binary");
        assert!(!is_lab_process(c.id(), Path::new(script), Path::new("/bin/sh")));
        let _ = c.kill();
        let _ = c.wait();
    }
}
