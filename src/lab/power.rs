//! Store directories on the power-loss layer (`powerfs`, issue 20): each server's store is a FUSE
//! mount over a "disk" folder beside it (`DIR/NAME/disk`), so a simulated power cut drops exactly the
//! writes nats-server never fsynced. A lab that dies with this process (tests, `verify --faults`) holds
//! the layers in-process ([`Disks`]); a detached lab (`lab up --power-loss-fs`) runs one hidden
//! `natsplan powerfs` process per server, recorded in `lab.json` so `lab down` stops them, and every
//! mount of the layer left under the lab folder is detached (a killed run's too).

use crate::powerfs::{
    self,
    disks::{DiskDirs, Disks},
    LossReport, Metadata,
};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How the lab's stores sit on the layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerFs {
    /// Dirty data older than this counts as written back (the kernel's `vm.dirty_expire_centisecs`).
    pub expiry: Duration,
    /// When directory entries become durable.
    pub metadata: Metadata,
}

impl Default for PowerFs {
    fn default() -> Self {
        PowerFs {
            expiry: powerfs::DEFAULT_EXPIRY,
            metadata: Metadata::Journal,
        }
    }
}

/// One detached `natsplan powerfs` process of a `lab up --power-loss-fs`, as `lab.json` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerFsProcess {
    pub pid: u32,
    /// The server's store directory, where the layer is mounted.
    pub mountpoint: PathBuf,
    /// The folder holding the data (what survives a power cut).
    pub backing: PathBuf,
}

/// The layers a running lab has.
#[derive(Debug, Default)]
pub(super) enum Layers {
    #[default]
    None,
    /// Mounted by this process; unmounted when dropped (after the servers are dead: `Lab`'s `Drop`
    /// kills them before its fields drop).
    InProcess(Disks),
    /// One `natsplan powerfs` process per server, outliving this process once detached.
    Detached(Vec<(PowerFsProcess, Option<Child>)>),
}

impl Layers {
    /// Mount one layer per store (each store directory freshly created and empty).
    pub(super) fn mount(stores: &[PathBuf], pf: PowerFs, detached: bool) -> Result<Layers> {
        let dirs: Vec<DiskDirs> = stores.iter().map(|s| DiskDirs::beside(s)).collect();
        if !detached {
            let d = Disks::mount(dirs, pf.expiry, pf.metadata)
                .context("cannot mount the power-loss layer (powerfs) on the lab's stores")?;
            return Ok(Layers::InProcess(d));
        }
        let mut procs = Vec::new();
        for d in &dirs {
            match spawn_detached(d, pf) {
                Ok(p) => procs.push(p),
                Err(e) => {
                    let mut partial = Layers::Detached(procs);
                    partial.stop();
                    return Err(e);
                }
            }
        }
        Ok(Layers::Detached(procs))
    }

    pub(super) fn records(&self) -> Vec<PowerFsProcess> {
        match self {
            Layers::Detached(v) => v.iter().map(|(p, _)| p.clone()).collect(),
            _ => Vec::new(),
        }
    }

    /// Leave detached layers running (their records stay in `lab.json`).
    pub(super) fn forget(&mut self) {
        if let Layers::Detached(v) = self {
            for (_, c) in v.iter_mut() {
                c.take();
            }
        }
    }

    /// Server `i`'s power cut (the server must be dead): its unsynced writes are dropped and the layer
    /// is mounted again over the same disk.
    pub(super) fn cut(&mut self, i: usize) -> Result<LossReport> {
        match self {
            Layers::InProcess(d) => d.cut(i).with_context(|| format!("power cut of disk {i}")),
            Layers::Detached(_) => {
                bail!("a detached lab's layers are cut by SIGUSR1 to their `natsplan powerfs` process, not from here")
            }
            Layers::None => bail!("the lab's stores are not on the power-loss layer (start it with powerfs)"),
        }
    }

    /// Unmount everything (SIGTERM to detached layer processes still owned here).
    pub(super) fn stop(&mut self) {
        match std::mem::take(self) {
            Layers::InProcess(d) => {
                if let Err(e) = d.unmount() {
                    eprintln!("natsplan lab: unmounting the power-loss layer: {e}");
                }
            }
            Layers::Detached(v) => {
                let owned: Vec<Child> = v.into_iter().filter_map(|(_, c)| c).collect();
                stop_children(owned);
            }
            Layers::None => {}
        }
    }
}

fn stop_children(mut owned: Vec<Child>) {
    for c in &owned {
        // SAFETY: kill(2) on a child we have not reaped.
        unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for c in owned.iter_mut() {
        super::process::reap_or_kill(c, deadline, Duration::from_millis(20));
    }
}

/// Start `natsplan powerfs` for one store, in a session of its own (it outlives `lab up`), and wait for
/// its `mounted PATH` line.
fn spawn_detached(d: &DiskDirs, pf: PowerFs) -> Result<(PowerFsProcess, Option<Child>)> {
    let exe = std::env::current_exe().context("cannot find the natsplan binary to run the power-loss layer")?;
    if d.disk.exists() {
        std::fs::remove_dir_all(&d.disk).with_context(|| format!("cannot empty {}", d.disk.display()))?;
    }
    std::fs::create_dir_all(&d.disk).with_context(|| format!("cannot create {}", d.disk.display()))?;
    let base = d.store.parent().unwrap_or(&d.store);
    let log_path = base.join("powerfs.log");
    let log = std::fs::File::create(&log_path).with_context(|| format!("cannot write {}", log_path.display()))?;
    let mut cmd = Command::new(exe);
    cmd.arg("powerfs")
        .arg("--backing")
        .arg(&d.disk)
        .arg("--mount")
        .arg(&d.store)
        .arg("--dirty-expire")
        .arg(format!("{}ms", pf.expiry.as_millis()))
        .arg("--metadata")
        .arg(match pf.metadata {
            Metadata::Journal => "journal",
            Metadata::Strict => "strict",
        })
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    // SAFETY: setsid is async-signal-safe; the closure runs in the child before exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().context("cannot start `natsplan powerfs`")?;
    let out = child
        .stdout
        .take()
        .ok_or_else(|| anyhow!("no stdout from natsplan powerfs"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
    if !line.starts_with("mounted ") {
        let _ = child.kill();
        let _ = child.wait();
        bail!(
            "the power-loss layer did not mount {}: {}",
            d.store.display(),
            super::log_tail(&log_path, 2000).trim()
        );
    }
    let rec = PowerFsProcess {
        pid: child.id(),
        mountpoint: d.store.clone(),
        backing: d.disk.clone(),
    };
    Ok((rec, Some(child)))
}

fn cmdline(pid: u32) -> Option<Vec<String>> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let state = stat.rsplit(')').next()?.split_whitespace().next()?.to_string();
    if state == "Z" || state == "X" {
        return None;
    }
    Some(
        raw.split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// The `--mount` of a live `natsplan powerfs` process, or None.
fn powerfs_mount(pid: u32) -> Option<PathBuf> {
    let args = cmdline(pid)?;
    if args.get(1).map(String::as_str) != Some("powerfs") {
        return None;
    }
    let at = args.iter().position(|a| a == "--mount")?;
    args.get(at + 1).map(PathBuf::from)
}

/// Stop every `natsplan powerfs` process serving a mount under `dir` (the recorded ones, and any a
/// `lab up` killed before it could record them), then detach every mount of the layer left under
/// `dir`. Returns the mountpoints that were served or mounted.
pub fn stop_layers(recorded: &[PowerFsProcess], dir: &Path, grace: Duration) -> Result<Vec<PathBuf>> {
    let mut pids: Vec<(u32, PathBuf)> = recorded
        .iter()
        .filter(|p| powerfs_mount(p.pid).is_some_and(|m| m == p.mountpoint))
        .map(|p| (p.pid, p.mountpoint.clone()))
        .collect();
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    for pid in std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
    {
        if let Some(m) = powerfs_mount(pid).filter(|m| m.starts_with(&dir)) {
            if !pids.iter().any(|(p, _)| *p == pid) {
                pids.push((pid, m));
            }
        }
    }
    let send = |sig| {
        for (pid, _) in &pids {
            // SAFETY: plain kill(2) on a pid just checked to be a powerfs process of this lab.
            unsafe { libc::kill(*pid as libc::pid_t, sig) };
        }
    };
    send(libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while pids.iter().any(|(p, _)| powerfs_mount(*p).is_some()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    if pids.iter().any(|(p, _)| powerfs_mount(*p).is_some()) {
        send(libc::SIGKILL);
    }
    let mut gone: Vec<PathBuf> = pids.into_iter().map(|(_, m)| m).collect();
    for m in powerfs::disks::clean_lab(&dir).context("cannot detach the power-loss layer's mounts")? {
        if !gone.contains(&m) {
            gone.push(m);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_an_old_lab_json_has_none() {
        let p = PowerFsProcess {
            pid: 7,
            mountpoint: "/x/n1/store".into(),
            backing: "/x/n1/disk".into(),
        };
        let back: PowerFsProcess = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert_eq!(back, p);
        // Our own pid is not a powerfs process: never signalled.
        assert!(powerfs_mount(std::process::id()).is_none());
    }

    #[test]
    fn stopping_layers_of_an_empty_folder_finds_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let rec = PowerFsProcess {
            pid: std::process::id(),
            mountpoint: tmp.path().join("n1/store"),
            backing: tmp.path().join("n1/disk"),
        };
        assert!(stop_layers(&[rec], tmp.path(), Duration::from_millis(10))
            .unwrap()
            .is_empty());
    }
}
