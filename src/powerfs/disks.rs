//! A lab's power-loss disks: one layer per server, each over `DIR/NAME/disk` and mounted at the
//! server's store directory, held by the process that runs the faults. [`Disks::cut`] is the power
//! loss of one server's host: its layer forgets what was not durable and is mounted again over the same
//! disk, ready for the restarted server. Dropping [`Disks`] unmounts every layer; [`clean_lab`] removes
//! what a killed run left (dead mounts under the lab folder).

use super::{mounts, LossReport, Metadata, Mounted};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One server's disk and the mount its store directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskDirs {
    /// The backing directory (what survives a power loss).
    pub disk: PathBuf,
    /// The server's store directory, where the layer is mounted.
    pub store: PathBuf,
}

impl DiskDirs {
    /// The lab's convention: the disk beside the store, `BASE/disk` for `BASE/store`.
    pub fn beside(store: &Path) -> DiskDirs {
        let base = store.parent().unwrap_or(store);
        DiskDirs {
            disk: base.join("disk"),
            store: store.to_path_buf(),
        }
    }
}

/// The layers of a lab, in server order.
#[derive(Debug)]
pub struct Disks {
    dirs: Vec<DiskDirs>,
    mounted: Vec<Option<Mounted>>,
    expiry: Duration,
    metadata: Metadata,
}

impl Disks {
    /// Mount one layer per server. Each store directory must be empty (a fresh lab); each disk is
    /// created empty. On an error, whatever was mounted is unmounted again.
    pub fn mount(dirs: Vec<DiskDirs>, expiry: Duration, metadata: Metadata) -> io::Result<Disks> {
        let mut d = Disks {
            mounted: Vec::new(),
            dirs,
            expiry,
            metadata,
        };
        for i in 0..d.dirs.len() {
            let DiskDirs { disk, store } = &d.dirs[i];
            if disk.exists() {
                std::fs::remove_dir_all(disk)?;
            }
            std::fs::create_dir_all(disk)?;
            std::fs::create_dir_all(store)?;
            let m = Mounted::mount_with(disk, store, expiry, metadata)?;
            d.mounted.push(Some(m));
        }
        Ok(d)
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    pub fn dirs(&self, i: usize) -> &DiskDirs {
        &self.dirs[i]
    }

    /// Server `i`'s host loses power: its unsynced writes are dropped and the layer is mounted again
    /// (the server must be stopped first). Returns what was lost.
    pub fn cut(&mut self, i: usize) -> io::Result<LossReport> {
        let m = self.mounted[i]
            .take()
            .ok_or_else(|| io::Error::other(format!("disk {i} is not mounted")))?;
        let report = m.power_loss()?;
        let DiskDirs { disk, store } = &self.dirs[i];
        self.mounted[i] = Some(Mounted::mount_with(disk, store, self.expiry, self.metadata)?);
        Ok(report)
    }

    /// Unmount every layer (data stays as written).
    pub fn unmount(mut self) -> io::Result<()> {
        for m in self.mounted.iter_mut().filter_map(Option::take) {
            m.unmount()?;
        }
        Ok(())
    }
}

/// Remove the layer's mounts a killed run left under a lab folder; returns the ones removed.
pub fn clean_lab(dir: &Path) -> io::Result<Vec<PathBuf>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    mounts::clean_under(dir)
}
