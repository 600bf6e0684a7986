//! `DIR/lab.json`: what a detached lab (`natsplan lab up`) started, so `lab status`, `lab down` and a
//! later `lab up` find its servers, and clean up after natsplan or the machine crashed.
//!
//! A recorded pid is only signalled when `/proc/PID/cmdline` still names nats-server with this lab's
//! configuration file, so a pid reused by another process after a reboot is never touched.

use super::NodeInfo;
use anyhow::{bail, Context, Result};
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

    /// Read `DIR/lab.json`; `Ok(None)` when there is none.
    pub fn load(dir: &Path) -> Result<Option<LabState>> {
        let p = LabState::path(dir);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", p.display())),
        };
        let st = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not a natsplan lab record; remove it, or point --dir at the lab's folder",
                p.display()
            )
        })?;
        Ok(Some(st))
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

    /// Recorded servers whose process is still this lab's nats-server: by the recorded pid, or, for a
    /// server recorded before its pid was (natsplan killed mid-start), by its configuration path.
    pub fn running(&self) -> Vec<NodeInfo> {
        let mut unknown = Vec::new();
        let mut live: Vec<NodeInfo> = Vec::new();
        for n in &self.nodes {
            if is_lab_process(n.pid, &n.conf) {
                live.push(n.clone());
            } else {
                unknown.push(n);
            }
        }
        if !unknown.is_empty() {
            for pid in proc_pids() {
                if let Some(n) = unknown.iter().find(|n| is_lab_process(pid, &n.conf)) {
                    live.push(NodeInfo { pid, ..(*n).clone() });
                }
            }
        }
        live
    }

    /// Kill every recorded server still running (SIGTERM, then SIGKILL after `grace`), then remove the
    /// files the lab made: each server's folder, `lab.json`, and DIR itself when natsplan created it.
    /// Returns the names of the servers that were still running.
    pub fn teardown(&self, grace: Duration) -> Result<Vec<String>> {
        let live: Vec<NodeInfo> = self.running();
        for n in &live {
            signal(n.pid, libc::SIGCONT);
            signal(n.pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while live.iter().any(|n| is_lab_process(n.pid, &n.conf)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        for n in &live {
            if is_lab_process(n.pid, &n.conf) {
                signal(n.pid, libc::SIGKILL);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while live.iter().any(|n| is_lab_process(n.pid, &n.conf)) {
            if Instant::now() > deadline {
                let names: Vec<&str> = live
                    .iter()
                    .filter(|n| is_lab_process(n.pid, &n.conf))
                    .map(|n| n.name.as_str())
                    .collect();
                bail!("lab servers {} did not exit after SIGKILL", names.join(", "));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The servers are gone: stop the stores' power-loss layers (recorded or not) and detach any
        // mount of the layer left under DIR (a killed layer's), so no folder below holds a mount.
        super::power::stop_layers(&self.power_fs, &self.dir, grace)?;
        for n in &self.nodes {
            // Only folders this lab wrote: the one holding its configuration, inside DIR.
            if let Some(folder) = n.conf.parent() {
                if folder.starts_with(&self.dir) && folder != self.dir {
                    remove_dir_if_exists(folder)?;
                }
            }
        }
        let p = LabState::path(&self.dir);
        if p.exists() {
            std::fs::remove_file(&p).with_context(|| format!("cannot remove {}", p.display()))?;
        }
        // A `lab up` killed while saving its record leaves the temp file of `save` behind.
        let _ = std::fs::remove_file(self.dir.join(format!(".{STATE_FILE}.tmp")));
        if self.created_dir {
            // Only if empty now: never delete files a user put there.
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(live.iter().map(|n| n.name.clone()).collect())
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

/// True when `pid` is a live (not zombie) process started with this lab configuration file `conf`.
pub fn is_lab_process(pid: u32, conf: &Path) -> bool {
    if pid == 0 {
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
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let conf = conf.as_os_str().as_encoded_bytes();
    // The configuration path is unique to this lab; the binary may have any name.
    args.contains(&conf)
}
