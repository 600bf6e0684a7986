//! The durability model behind the power-loss layer: a pass-through view of a backing directory plus
//! just enough undo state to put that directory back the way a disk would hold it after a power cut.
//!
//! Every write goes straight to the backing directory (so reads, sizes and listings are the live ones),
//! but before a page of a file is changed for the first time since the file's last fsync, its old
//! contents are kept; a file's length at its last fsync is kept too. Directories work the same way:
//! the first change to a directory's entries after its last fsync keeps a copy of the entries it had.
//! Unlinked files whose old directory entry may still come back are moved to a hidden stash instead of
//! being deleted. [`Store::power_loss`] then rebuilds the tree from the durable entries and rolls every
//! file back to its synced length and pages — page-cache semantics as fsync(2) states them: a file's
//! fsync makes its data durable, not its directory entry; a directory's fsync makes its entries durable.
//!
//! Directory entries follow one of two [`Metadata`] rules. `Strict` is what POSIX promises and no more:
//! only a directory's own fsync makes its entries durable. `Journal` is what ext4 (data=ordered) and XFS
//! do: an fsync of any file or directory commits the journal, which holds every namespace change made
//! before it, and the journal is committed on its own every 5 s (ext4's `commit=` default,
//! Documentation/filesystems/ext4.rst) — file data still needs its own fsync or the flusher.
//!
//! Like the kernel's flusher (`vm.dirty_expire_centisecs`, 3000 by default; checked every
//! `vm.dirty_writeback_centisecs`, 500), [`Store::expire`] treats data and entries dirty for longer
//! than the expiry as written back. Metadata other than sizes and entries (modes, times) passes through
//! and is not rolled back.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The unit the undo state is kept in; the kernel's page cache works in 4 KiB pages too.
pub const PAGE: u64 = 4096;
/// The hidden folder inside the backing directory that holds unlinked files which may come back.
pub const STASH: &str = ".natsplan-powerfs-stash";
/// The root's inode number (FUSE's).
pub const ROOT: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
}

/// When directory entries become durable (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metadata {
    /// Any fsync commits every earlier namespace change; a commit every 5 s too (ext4, XFS).
    #[default]
    Journal,
    /// Only a directory's fsync (or the flusher's expiry) makes its entries durable.
    Strict,
}

/// ext4's default journal commit interval (`commit=5`).
pub const JOURNAL_COMMIT: Duration = Duration::from_secs(5);

/// What a file looked like at its last fsync, kept while it is dirty.
#[derive(Debug)]
struct FileUndo {
    synced_len: u64,
    /// Page index → the page's bytes (clipped to `synced_len`) as of the last fsync.
    pages: BTreeMap<u64, Vec<u8>>,
    since: Instant,
}

#[derive(Debug)]
struct Node {
    kind: EntryKind,
    /// Where the node is now; `None` once unlinked (a file then lives at `stash/<ino>`).
    place: Option<(u64, OsString)>,
    /// A directory's current entries.
    entries: BTreeMap<OsString, u64>,
    /// A dirty directory's entries as of its last fsync, and since when it has been dirty.
    durable_entries: Option<(BTreeMap<OsString, u64>, Instant)>,
    undo: Option<FileUndo>,
}

impl Node {
    fn new(kind: EntryKind, place: Option<(u64, OsString)>) -> Node {
        Node {
            kind,
            place,
            entries: BTreeMap::new(),
            durable_entries: None,
            undo: None,
        }
    }
}

/// What a power loss threw away.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LossReport {
    /// Files whose data was rolled back to their last fsync.
    pub files_rolled_back: usize,
    /// Bytes beyond a file's synced length that were cut off.
    pub bytes_truncated: u64,
    /// Pages restored to their synced contents.
    pub pages_restored: usize,
    /// Directories whose entries went back to their last fsync.
    pub dirs_rolled_back: usize,
    /// Files that no durable entry names any more (created, or renamed, and never made durable).
    pub files_dropped: usize,
}

impl LossReport {
    /// Add another cut's figures (several servers' power cut in one scenario).
    pub fn add(&mut self, o: &LossReport) {
        self.files_rolled_back += o.files_rolled_back;
        self.bytes_truncated += o.bytes_truncated;
        self.pages_restored += o.pages_restored;
        self.dirs_rolled_back += o.dirs_rolled_back;
        self.files_dropped += o.files_dropped;
    }
}

/// The model and the backing directory it keeps. Not thread-safe by itself; the FUSE layer holds it
/// behind one mutex.
#[derive(Debug)]
pub struct Store {
    backing: PathBuf,
    nodes: HashMap<u64, Node>,
    next_ino: u64,
    expiry: Duration,
    metadata: Metadata,
    lost: bool,
}

fn enoent() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOENT)
}

impl Store {
    /// Take over `backing` as it is now (all of it counts as durable). A stash left by a killed run is
    /// removed: its files were unlinked before that run ended.
    pub fn open(backing: &Path, expiry: Duration, metadata: Metadata) -> io::Result<Store> {
        let backing = backing.canonicalize()?;
        let stash = backing.join(STASH);
        if stash.exists() {
            fs::remove_dir_all(&stash)?;
        }
        fs::create_dir(&stash)?;
        let mut s = Store {
            backing,
            nodes: HashMap::new(),
            next_ino: ROOT + 1,
            expiry,
            metadata,
            lost: false,
        };
        s.nodes.insert(ROOT, Node::new(EntryKind::Dir, None));
        s.scan(ROOT)?;
        Ok(s)
    }

    fn scan(&mut self, dir: u64) -> io::Result<()> {
        let path = self.path(dir)?;
        for entry in fs::read_dir(&path)? {
            let entry = entry?;
            let name = entry.file_name();
            if dir == ROOT && name == STASH {
                continue;
            }
            let ft = entry.file_type()?;
            let kind = if ft.is_dir() {
                EntryKind::Dir
            } else if ft.is_symlink() {
                EntryKind::Symlink
            } else {
                EntryKind::File
            };
            let ino = self.alloc(kind, dir, &name);
            if kind == EntryKind::Dir {
                self.scan(ino)?;
            }
        }
        Ok(())
    }

    fn alloc(&mut self, kind: EntryKind, parent: u64, name: &OsStr) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.nodes.insert(ino, Node::new(kind, Some((parent, name.to_owned()))));
        self.nodes
            .get_mut(&parent)
            .expect("parent exists")
            .entries
            .insert(name.to_owned(), ino);
        ino
    }

    pub fn backing(&self) -> &Path {
        &self.backing
    }

    pub fn expiry(&self) -> Duration {
        self.expiry
    }

    /// After a power loss every operation fails with EIO until the layer is mounted anew.
    pub fn check_alive(&self) -> io::Result<()> {
        if self.lost {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        Ok(())
    }

    pub fn kind(&self, ino: u64) -> io::Result<EntryKind> {
        self.nodes.get(&ino).map(|n| n.kind).ok_or_else(enoent)
    }

    /// The backing path of a node: where it is, or its stash file once unlinked.
    pub fn path(&self, ino: u64) -> io::Result<PathBuf> {
        let mut parts = Vec::new();
        let mut cur = ino;
        while cur != ROOT {
            let node = self.nodes.get(&cur).ok_or_else(enoent)?;
            match &node.place {
                Some((parent, name)) => {
                    parts.push(name.clone());
                    cur = *parent;
                }
                None if cur == ino => return Ok(self.stash_path(ino)),
                None => return Err(enoent()),
            }
        }
        let mut p = self.backing.clone();
        p.extend(parts.iter().rev());
        Ok(p)
    }

    fn stash_path(&self, ino: u64) -> PathBuf {
        self.backing.join(STASH).join(ino.to_string())
    }

    pub fn lookup(&self, parent: u64, name: &OsStr) -> io::Result<u64> {
        let node = self.nodes.get(&parent).ok_or_else(enoent)?;
        node.entries.get(name).copied().ok_or_else(enoent)
    }

    pub fn parent(&self, ino: u64) -> u64 {
        self.nodes
            .get(&ino)
            .and_then(|n| n.place.as_ref())
            .map(|p| p.0)
            .unwrap_or(ROOT)
    }

    /// A directory's entries with their kinds, in name order.
    pub fn entries(&self, dir: u64) -> io::Result<Vec<(OsString, u64, EntryKind)>> {
        let node = self.nodes.get(&dir).ok_or_else(enoent)?;
        Ok(node
            .entries
            .iter()
            .map(|(n, i)| (n.clone(), *i, self.nodes[i].kind))
            .collect())
    }

    /// Keep a directory's entries before its first change since its last fsync.
    fn dirty_dir(&mut self, dir: u64) {
        let node = self.nodes.get_mut(&dir).expect("dir exists");
        if node.durable_entries.is_none() {
            node.durable_entries = Some((node.entries.clone(), Instant::now()));
        }
    }

    fn new_node(&mut self, kind: EntryKind, parent: u64, name: &OsStr) -> u64 {
        self.dirty_dir(parent);
        let ino = self.alloc(kind, parent, name);
        let node = self.nodes.get_mut(&ino).expect("just made");
        match kind {
            // Nothing of a new directory's entries is durable until it is fsynced.
            EntryKind::Dir => node.durable_entries = Some((BTreeMap::new(), Instant::now())),
            // A new file's synced length is 0.
            _ => {
                node.undo = Some(FileUndo {
                    synced_len: 0,
                    pages: BTreeMap::new(),
                    since: Instant::now(),
                })
            }
        }
        ino
    }

    fn ensure_absent(&self, parent: u64, name: &OsStr) -> io::Result<()> {
        if self.lookup(parent, name).is_ok() {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        if self.kind(parent)? != EntryKind::Dir {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        if parent == ROOT && name == STASH {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        Ok(())
    }

    /// Create a regular file (mode as given) and open it read-write.
    pub fn create(&mut self, parent: u64, name: &OsStr, mode: u32) -> io::Result<(u64, File)> {
        self.ensure_absent(parent, name)?;
        let path = self.path(parent)?.join(name);
        let file = {
            use std::os::unix::fs::OpenOptionsExt;
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)?
        };
        Ok((self.new_node(EntryKind::File, parent, name), file))
    }

    pub fn mkdir(&mut self, parent: u64, name: &OsStr, mode: u32) -> io::Result<u64> {
        self.ensure_absent(parent, name)?;
        let path = self.path(parent)?.join(name);
        {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new().mode(mode).create(&path)?;
        }
        Ok(self.new_node(EntryKind::Dir, parent, name))
    }

    pub fn symlink(&mut self, parent: u64, name: &OsStr, target: &Path) -> io::Result<u64> {
        self.ensure_absent(parent, name)?;
        std::os::unix::fs::symlink(target, self.path(parent)?.join(name))?;
        let ino = self.new_node(EntryKind::Symlink, parent, name);
        // A symlink's target is written with it; only its entry can be lost.
        self.nodes.get_mut(&ino).expect("just made").undo = None;
        Ok(ino)
    }

    /// Open a node's backing file read-write (whatever the caller asked: the layer reads old pages).
    pub fn open_file(&self, ino: u64) -> io::Result<File> {
        OpenOptions::new().read(true).write(true).open(self.path(ino)?)
    }

    fn begin_dirty(&mut self, ino: u64, file: &File) -> io::Result<()> {
        let node = self.nodes.get_mut(&ino).ok_or_else(enoent)?;
        if node.undo.is_none() {
            let synced_len = file.metadata()?.len();
            node.undo = Some(FileUndo {
                synced_len,
                pages: BTreeMap::new(),
                since: Instant::now(),
            });
        }
        Ok(())
    }

    /// Keep the synced contents of the pages in `[from, to)` that are not kept yet.
    fn save_pages(&mut self, ino: u64, file: &File, from: u64, to: u64) -> io::Result<()> {
        self.begin_dirty(ino, file)?;
        let undo = self.nodes.get_mut(&ino).and_then(|n| n.undo.as_mut()).expect("dirty");
        let to = to.min(undo.synced_len);
        if from >= to {
            return Ok(());
        }
        for page in from / PAGE..to.div_ceil(PAGE) {
            if undo.pages.contains_key(&page) {
                continue;
            }
            let start = page * PAGE;
            let len = (PAGE.min(undo.synced_len - start)) as usize;
            let mut buf = vec![0u8; len];
            let mut got = 0;
            while got < len {
                let n = file.read_at(&mut buf[got..], start + got as u64)?;
                if n == 0 {
                    break; // shorter now than at the last sync: the rest was kept at truncation
                }
                got += n;
            }
            undo.pages.insert(page, buf);
        }
        Ok(())
    }

    /// Write through to the backing file, keeping the synced contents of what it overwrites.
    pub fn write(&mut self, ino: u64, file: &File, offset: u64, data: &[u8]) -> io::Result<()> {
        self.check_alive()?;
        self.save_pages(ino, file, offset, offset + data.len() as u64)?;
        file.write_all_at(data, offset)
    }

    /// Change a file's length, keeping the synced contents of what a shrink cuts off.
    pub fn truncate(&mut self, ino: u64, file: &File, len: u64) -> io::Result<()> {
        self.check_alive()?;
        self.save_pages(ino, file, len, u64::MAX)?;
        file.set_len(len)
    }

    /// fsync(2) or fdatasync(2) on a file: its data is durable (its directory entry is not).
    pub fn fsync_file(&mut self, ino: u64, file: &File) -> io::Result<()> {
        self.check_alive()?;
        let node = self.nodes.get_mut(&ino).ok_or_else(enoent)?;
        if node.undo.take().is_some() {
            file.sync_data()?;
        }
        self.journal_commit()
    }

    /// Under `Journal`, an fsync commits every namespace change made so far.
    fn journal_commit(&mut self) -> io::Result<()> {
        if self.metadata != Metadata::Journal {
            return Ok(());
        }
        for node in self.nodes.values_mut() {
            node.durable_entries = None;
        }
        self.collect_stash()
    }

    /// fsync(2) on a directory: its entries as they are now are durable.
    pub fn fsync_dir(&mut self, ino: u64) -> io::Result<()> {
        self.check_alive()?;
        let node = self.nodes.get_mut(&ino).ok_or_else(enoent)?;
        node.durable_entries = None;
        self.journal_commit()?;
        self.collect_stash()
    }

    fn detach(&mut self, parent: u64, name: &OsStr) -> io::Result<u64> {
        let ino = self.lookup(parent, name)?;
        self.dirty_dir(parent);
        self.nodes.get_mut(&parent).expect("exists").entries.remove(name);
        self.nodes.get_mut(&ino).expect("exists").place = None;
        Ok(ino)
    }

    pub fn unlink(&mut self, parent: u64, name: &OsStr) -> io::Result<()> {
        self.check_alive()?;
        let ino = self.lookup(parent, name)?;
        if self.kind(ino)? == EntryKind::Dir {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        let from = self.path(ino)?;
        fs::rename(&from, self.stash_path(ino))?;
        self.detach(parent, name)?;
        self.collect_stash()
    }

    pub fn rmdir(&mut self, parent: u64, name: &OsStr) -> io::Result<()> {
        self.check_alive()?;
        let ino = self.lookup(parent, name)?;
        if self.kind(ino)? != EntryKind::Dir {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        if !self.nodes[&ino].entries.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ENOTEMPTY));
        }
        fs::remove_dir(self.path(ino)?)?;
        self.detach(parent, name)?;
        Ok(())
    }

    pub fn rename(&mut self, parent: u64, name: &OsStr, to: u64, to_name: &OsStr) -> io::Result<()> {
        self.check_alive()?;
        let ino = self.lookup(parent, name)?;
        if to == ROOT && to_name == STASH {
            return Err(io::Error::from_raw_os_error(libc::EPERM));
        }
        if self.kind(to)? != EntryKind::Dir {
            return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
        }
        let mut up = to;
        while up != ROOT {
            if up == ino {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            up = self.parent(up);
        }
        if let Ok(old) = self.lookup(to, to_name) {
            if old == ino {
                return Ok(());
            }
            match (self.kind(ino)?, self.kind(old)?) {
                (EntryKind::Dir, EntryKind::Dir) => self.rmdir(to, to_name)?,
                (EntryKind::Dir, _) => return Err(io::Error::from_raw_os_error(libc::ENOTDIR)),
                (_, EntryKind::Dir) => return Err(io::Error::from_raw_os_error(libc::EISDIR)),
                _ => self.unlink(to, to_name)?,
            }
        }
        fs::rename(self.path(ino)?, self.path(to)?.join(to_name))?;
        self.detach(parent, name)?;
        self.dirty_dir(to);
        self.nodes
            .get_mut(&to)
            .expect("exists")
            .entries
            .insert(to_name.to_owned(), ino);
        self.nodes.get_mut(&ino).expect("exists").place = Some((to, to_name.to_owned()));
        Ok(())
    }

    /// Inodes that some durable directory entry still names.
    fn durably_named(&self) -> std::collections::HashSet<u64> {
        let mut named = std::collections::HashSet::new();
        for node in self.nodes.values() {
            if let Some((entries, _)) = &node.durable_entries {
                named.extend(entries.values().copied());
            }
        }
        named
    }

    /// Delete stashed files that no durable entry can bring back.
    fn collect_stash(&mut self) -> io::Result<()> {
        let named = self.durably_named();
        let gone: Vec<u64> = self
            .nodes
            .iter()
            .filter(|(ino, n)| n.place.is_none() && n.kind != EntryKind::Dir && !named.contains(ino))
            .filter(|(ino, _)| self.stash_path(**ino).exists())
            .map(|(ino, _)| *ino)
            .collect();
        for ino in gone {
            fs::remove_file(self.stash_path(ino))?;
        }
        Ok(())
    }

    /// The flusher: data and entries dirty for longer than the expiry count as written back.
    pub fn expire(&mut self, now: Instant) -> io::Result<()> {
        if self.lost {
            return Ok(());
        }
        let expiry = self.expiry;
        let entries_expiry = match self.metadata {
            Metadata::Journal => JOURNAL_COMMIT.min(expiry),
            Metadata::Strict => expiry,
        };
        let old = |since: Instant, after: Duration| now.saturating_duration_since(since) >= after;
        for node in self.nodes.values_mut() {
            if node.undo.as_ref().is_some_and(|u| old(u.since, expiry)) {
                node.undo = None;
            }
            if node
                .durable_entries
                .as_ref()
                .is_some_and(|(_, since)| old(*since, entries_expiry))
            {
                node.durable_entries = None;
            }
        }
        self.collect_stash()
    }

    /// Whether anything is dirty (unsynced data or entries).
    pub fn dirty(&self) -> bool {
        self.nodes
            .values()
            .any(|n| n.undo.is_some() || n.durable_entries.is_some())
    }

    /// The power cut: put the backing directory back to what fsyncs (and the flusher) made durable.
    /// Afterwards every operation fails with EIO; the layer is meant to be unmounted and mounted anew.
    pub fn power_loss(&mut self) -> io::Result<LossReport> {
        self.check_alive()?;
        self.lost = true;
        let mut report = LossReport::default();
        // 1. Park every file and symlink of the live tree in the stash, by inode; drop the directories.
        let live: Vec<u64> = self.walk(ROOT, false);
        for &ino in &live {
            if self.nodes[&ino].kind != EntryKind::Dir {
                fs::rename(self.path(ino)?, self.stash_path(ino))?;
            }
        }
        for &ino in live.iter().rev() {
            if self.nodes[&ino].kind == EntryKind::Dir {
                fs::remove_dir(self.path(ino)?)?;
            }
        }
        for node in self.nodes.values_mut() {
            if node.place.is_some() {
                node.place = None;
            }
        }
        // 2. Rebuild the durable tree from the root down.
        report.dirs_rolled_back = self.nodes.values().filter(|n| n.durable_entries.is_some()).count();
        let mut todo = vec![ROOT];
        let mut placed = std::collections::HashSet::from([ROOT]);
        while let Some(dir) = todo.pop() {
            let dir_path = self.path(dir)?;
            let node = &self.nodes[&dir];
            let entries = match &node.durable_entries {
                Some((e, _)) => e.clone(),
                None => node.entries.clone(),
            };
            for (name, ino) in entries {
                let path = dir_path.join(&name);
                let kind = self.nodes[&ino].kind;
                if !placed.insert(ino) {
                    // Durable under two names (moved, and both directories synced at different times):
                    // a file's second name gets a copy; a directory keeps its first place (no cycles).
                    if kind != EntryKind::Dir {
                        fs::copy(self.path(ino)?, &path)?;
                    }
                    continue;
                }
                if kind == EntryKind::Dir {
                    fs::create_dir(&path)?;
                    todo.push(ino);
                } else {
                    fs::rename(self.stash_path(ino), &path)?;
                    self.roll_back(ino, &path, &mut report)?;
                }
                self.nodes.get_mut(&ino).expect("exists").place = Some((dir, name));
            }
        }
        let stash = self.backing.join(STASH);
        report.files_dropped = fs::read_dir(&stash)?.count();
        fs::remove_dir_all(&stash)?;
        fs::create_dir(&stash)?;
        Ok(report)
    }

    fn roll_back(&mut self, ino: u64, path: &Path, report: &mut LossReport) -> io::Result<()> {
        let Some(undo) = self.nodes.get_mut(&ino).and_then(|n| n.undo.take()) else {
            return Ok(());
        };
        if self.nodes[&ino].kind != EntryKind::File {
            return Ok(());
        }
        let file = OpenOptions::new().write(true).open(path)?;
        let len = file.metadata()?.len();
        report.files_rolled_back += 1;
        report.bytes_truncated += len.saturating_sub(undo.synced_len);
        report.pages_restored += undo.pages.len();
        if len < undo.synced_len {
            file.set_len(undo.synced_len)?;
        }
        for (page, bytes) in &undo.pages {
            file.write_all_at(bytes, page * PAGE)?;
        }
        file.set_len(undo.synced_len)?;
        file.sync_all()
    }

    /// Nodes of the live tree under `dir`, parents before children (`dir` itself included if asked).
    fn walk(&self, dir: u64, include_self: bool) -> Vec<u64> {
        let mut out = Vec::new();
        if include_self {
            out.push(dir);
        }
        let mut todo = vec![dir];
        while let Some(d) = todo.pop() {
            for &ino in self.nodes[&d].entries.values() {
                out.push(ino);
                if self.nodes[&ino].kind == EntryKind::Dir {
                    todo.push(ino);
                }
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
