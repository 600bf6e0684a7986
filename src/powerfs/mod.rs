//! Power loss for real: a FUSE layer that a server's store directory sits on, which forgets every
//! write not yet fsynced when told the power went out.
//!
//! Killing a process cannot test acknowledged-write loss under delayed sync, because the page cache
//! survives a kill. Jepsen tested NATS 2.12.1 with LazyFS, a FUSE file system with its own page cache
//! (nats-server #7564, #7567; `shared/reference/reliability.md` §3). This module is natsplan's own:
//! [`store::Store`] is the durability model (what an fsync, a directory fsync and the kernel's flusher
//! make durable), [`fuse`] maps kernel requests onto it, and [`Mounted`] mounts it, runs the flusher
//! and cuts the power. [`disks`] holds one layer per lab server and cuts a server's power; [`mounts`] finds and removes
//! mounts a killed run left behind; [`serve`] is the
//! hidden `natsplan powerfs` subcommand the lab runs one of per server, controlled by signals.

pub mod disks;
pub mod fuse;
pub mod mounts;
pub mod store;

pub use store::{LossReport, Metadata, Store};

use fuser::{BackgroundSession, MountOption};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The name every mount of this layer carries (the `source` column of /proc/self/mountinfo), so a
/// leftover mount is told apart from anyone else's.
pub const FSNAME: &str = "natsplan-powerfs";

/// The kernel's default dirty expiry: `vm.dirty_expire_centisecs` = 3000 (Documentation/admin-guide/
/// sysctl/vm.rst). Jepsen lost about 30 s of writes with NATS's default 2-minute sync for this reason.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(30);

/// How often the flusher looks for expired dirty data: a tenth of the expiry, at most 1 s. The kernel
/// wakes every `vm.dirty_writeback_centisecs` (500) for data, but jbd2 commits on a timer of its own;
/// checking often keeps the loss window within a second of the model's.
fn flusher_tick(expiry: Duration) -> Duration {
    (expiry / 10).clamp(Duration::from_millis(50), Duration::from_secs(1))
}

/// One mounted layer. Dropping it unmounts (the data stays as written: a clean shutdown).
pub struct Mounted {
    shared: fuse::Shared,
    session: Option<BackgroundSession>,
    mountpoint: PathBuf,
    stop: Arc<AtomicBool>,
    flusher: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mounted").field("mountpoint", &self.mountpoint).finish()
    }
}

impl Mounted {
    /// Mount a layer over `backing` at `mountpoint` (both existing directories). Everything in
    /// `backing` now counts as durable.
    pub fn mount(backing: &Path, mountpoint: &Path, expiry: Duration) -> io::Result<Mounted> {
        Mounted::mount_with(backing, mountpoint, expiry, Metadata::Journal)
    }

    /// [`Mounted::mount`] with the directory-entry rule spelled out.
    pub fn mount_with(backing: &Path, mountpoint: &Path, expiry: Duration, metadata: Metadata) -> io::Result<Mounted> {
        let store = Store::open(backing, expiry, metadata)?;
        let shared: fuse::Shared = Arc::new(Mutex::new(fuse::Inner::new(store)));
        let mut cfg = fuser::Config::default();
        cfg.mount_options = vec![
            MountOption::FSName(FSNAME.into()),
            MountOption::Subtype(FSNAME.into()),
            MountOption::NoAtime,
        ];
        let mountpoint = mountpoint.canonicalize()?;
        let session = fuser::spawn_mount(fuse::PowerFuse { shared: shared.clone() }, &mountpoint, &cfg)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flusher = {
            let (shared, stop) = (Arc::downgrade(&shared), stop.clone());
            std::thread::Builder::new()
                .name("powerfs-flusher".into())
                .spawn(move || {
                    // The journal's 5 s commit is checked as closely as the data expiry.
                    let tick = flusher_tick(match metadata {
                        Metadata::Journal => expiry.min(store::JOURNAL_COMMIT),
                        Metadata::Strict => expiry,
                    });
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(tick);
                        let Some(shared) = shared.upgrade() else { break };
                        let mut inner = shared.lock().unwrap_or_else(|e| e.into_inner());
                        if let Err(e) = inner.store.expire(Instant::now()) {
                            eprintln!("natsplan powerfs: flusher: {e}");
                        }
                    }
                })?
        };
        Ok(Mounted {
            shared,
            session: Some(session),
            mountpoint,
            stop,
            flusher: Some(flusher),
        })
    }

    pub fn mountpoint(&self) -> &Path {
        &self.mountpoint
    }

    /// Whether any data or directory entry is not durable yet.
    pub fn dirty(&self) -> bool {
        self.shared.lock().unwrap_or_else(|e| e.into_inner()).store.dirty()
    }

    /// Cut the power: the backing directory goes back to what was durable, and the layer unmounts.
    /// Stop the processes using it first (SIGKILL): their late writes would fail with EIO anyway.
    pub fn power_loss(mut self) -> io::Result<LossReport> {
        let report = self.shared.lock().unwrap_or_else(|e| e.into_inner()).store.power_loss();
        self.unmount_inner()?;
        report
    }

    /// Unmount cleanly (the data stays as written, as after a clean shutdown).
    pub fn unmount(mut self) -> io::Result<()> {
        self.unmount_inner()
    }

    fn unmount_inner(&mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(f) = self.flusher.take() {
            let _ = f.join();
        }
        let Some(session) = self.session.take() else {
            return Ok(());
        };
        match session.umount_and_join() {
            Ok(()) => Ok(()),
            // Busy (a process still has a file open): detach it lazily so no mount is left behind.
            Err(_) => mounts::detach(&self.mountpoint),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Err(e) = self.unmount_inner() {
            eprintln!("natsplan powerfs: unmount {}: {e}", self.mountpoint.display());
        }
    }
}

/// The name every probe's temp folder starts with, so a probe killed mid-way (its mount left dead)
/// is found and cleaned by the next probe, `lab up` or `lab down` ([`mounts::clean_dead_probes`]).
pub const PROBE_PREFIX: &str = "natsplan-fuse-probe-";

/// Whether this machine can mount the layer: a real mount of an empty directory, then unmounted.
/// Dead mounts earlier probes left (killed mid-way) are detached first; `Ok` lists them, for the
/// caller to say so. `Err` says what is missing and how to get it.
pub fn probe() -> Result<Vec<PathBuf>, String> {
    if !Path::new("/dev/fuse").exists() {
        return Err(
            "/dev/fuse is missing (FUSE needs the fuse kernel module; in a container, \
                    pass --device /dev/fuse)"
                .into(),
        );
    }
    let cleaned =
        mounts::clean_dead_probes().map_err(|e| format!("removing the dead mount a killed earlier probe left: {e}"))?;
    let tmp = tempfile::Builder::new()
        .prefix(PROBE_PREFIX)
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let (backing, mnt) = (tmp.path().join("b"), tmp.path().join("m"));
    for d in [&backing, &mnt] {
        std::fs::create_dir(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let m = Mounted::mount(&backing, &mnt, DEFAULT_EXPIRY).map_err(|e| {
        format!(
            "mounting a FUSE file system failed ({e}); run as root, or install fusermount3 \
                 (scripts/install-fuse)"
        )
    })?;
    std::fs::write(mnt.join("probe"), b"ok").map_err(|e| format!("writing through FUSE: {e}"))?;
    m.unmount().map_err(|e| format!("unmounting the probe: {e}"))?;
    Ok(cleaned)
}

pub mod serve;
