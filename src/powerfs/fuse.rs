//! The FUSE side of the power-loss layer: kernel requests mapped onto [`Store`] operations.
//!
//! Writes reach the layer one by one (no FUSE writeback cache is negotiated), so every byte an
//! application writes is seen, kept in the undo state and written through before the call returns.

use super::store::{EntryKind, Store};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    Request, TimeOrNow, WriteFlags,
};
use std::collections::HashMap;
use std::ffi::{CString, OsStr};
use std::fs::{File, Metadata};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long the kernel may cache attributes and entries. Only this layer changes the backing
/// directory while it is mounted, so the kernel's copies stay right; after a power loss the layer is
/// unmounted, so no stale copy outlives it.
const TTL: Duration = Duration::from_secs(1);

/// The store and the open files, behind one lock (FUSE requests are served one at a time anyway).
#[derive(Debug)]
pub struct Inner {
    pub store: Store,
    handles: HashMap<u64, (u64, Arc<File>)>,
    next_fh: u64,
}

impl Inner {
    pub fn new(store: Store) -> Inner {
        Inner {
            store,
            handles: HashMap::new(),
            next_fh: 1,
        }
    }
}

pub type Shared = Arc<Mutex<Inner>>;

/// The `fuser::Filesystem` the session runs.
pub struct PowerFuse {
    pub shared: Shared,
}

fn lock(shared: &Shared) -> MutexGuard<'_, Inner> {
    // A panic while holding the lock leaves the model as it was at the panic; serving on is better
    // than a hung mount.
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn file_type(kind: EntryKind) -> FileType {
    match kind {
        EntryKind::File => FileType::RegularFile,
        EntryKind::Dir => FileType::Directory,
        EntryKind::Symlink => FileType::Symlink,
    }
}

fn time(secs: i64, nsecs: i64) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nsecs as u32)
    } else {
        UNIX_EPOCH
    }
}

fn attr(ino: u64, kind: EntryKind, md: &Metadata) -> FileAttr {
    FileAttr {
        ino: INodeNo(ino),
        size: md.len(),
        blocks: md.blocks(),
        atime: time(md.atime(), md.atime_nsec()),
        mtime: time(md.mtime(), md.mtime_nsec()),
        ctime: time(md.ctime(), md.ctime_nsec()),
        crtime: UNIX_EPOCH,
        kind: file_type(kind),
        perm: (md.mode() & 0o7777) as u16,
        nlink: md.nlink() as u32,
        uid: md.uid(),
        gid: md.gid(),
        rdev: md.rdev() as u32,
        blksize: 4096,
        flags: 0,
    }
}

fn stat(inner: &Inner, ino: u64) -> io::Result<FileAttr> {
    inner.store.check_alive()?;
    let kind = inner.store.kind(ino)?;
    let md = std::fs::symlink_metadata(inner.store.path(ino)?)?;
    Ok(attr(ino, kind, &md))
}

fn handle(inner: &Inner, fh: FileHandle) -> io::Result<(u64, Arc<File>)> {
    inner
        .handles
        .get(&fh.0)
        .cloned()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EBADF))
}

fn add_handle(inner: &mut Inner, ino: u64, file: File) -> u64 {
    let fh = inner.next_fh;
    inner.next_fh += 1;
    inner.handles.insert(fh, (ino, Arc::new(file)));
    fh
}

fn set_times(path: &Path, atime: Option<TimeOrNow>, mtime: Option<TimeOrNow>) -> io::Result<()> {
    let spec = |t: Option<TimeOrNow>| match t {
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        Some(TimeOrNow::Now) => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
        Some(TimeOrNow::SpecificTime(t)) => {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as _,
            }
        }
    };
    let times = [spec(atime), spec(mtime)];
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a valid C string and a two-element timespec array, as utimensat(2) takes.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn statvfs(path: &Path) -> io::Result<libc::statvfs> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: zeroed is a valid statvfs; the pointer is to our local.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a pointer to a statvfs we own.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// Reply to an entry-making request with the new node's attributes.
fn entry(inner: &Inner, ino: io::Result<u64>, reply: ReplyEntry) {
    match ino.and_then(|ino| stat(inner, ino)) {
        Ok(a) => reply.entry(&TTL, &a, Generation(0)),
        Err(e) => reply.error(Errno::from(e)),
    }
}

fn empty(r: io::Result<()>, reply: ReplyEmpty) {
    match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(Errno::from(e)),
    }
}

/// What a `setattr` changes (each `None` left as it is), as fuser passes it.
struct SetAttr {
    mode: Option<u32>,
    uid: Option<u32>,
    gid: Option<u32>,
    size: Option<u64>,
    atime: Option<TimeOrNow>,
    mtime: Option<TimeOrNow>,
}

impl PowerFuse {
    /// Change inode `ino`'s attributes (its size through open handle `fh` when given).
    fn do_setattr(&self, ino: u64, set: SetAttr, fh: Option<FileHandle>) -> io::Result<FileAttr> {
        let SetAttr {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        } = set;
        let mut inner = lock(&self.shared);
        inner.store.check_alive()?;
        let path = inner.store.path(ino)?;
        if let Some(len) = size {
            let file = match fh.map(|fh| handle(&inner, fh)) {
                Some(Ok((_, f))) => f,
                _ => Arc::new(inner.store.open_file(ino)?),
            };
            inner.store.truncate(ino, &file, len)?;
        }
        if let Some(mode) = mode {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o7777))?;
        }
        if uid.is_some() || gid.is_some() {
            std::os::unix::fs::lchown(&path, uid, gid)?;
        }
        if atime.is_some() || mtime.is_some() {
            set_times(&path, atime, mtime)?;
        }
        stat(&inner, ino)
    }
}

impl Filesystem for PowerFuse {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let inner = lock(&self.shared);
        let ino = inner.store.lookup(parent.0, name);
        entry(&inner, ino, reply);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let inner = lock(&self.shared);
        // fstat through an open handle works for an unlinked file too (its stash copy may be gone).
        let by_handle = fh
            .and_then(|fh| handle(&inner, fh).ok())
            .map(|(_, f)| -> io::Result<FileAttr> {
                inner.store.check_alive()?;
                let kind = inner.store.kind(ino.0)?;
                Ok(attr(ino.0, kind, &f.metadata()?))
            });
        match by_handle.unwrap_or_else(|| stat(&inner, ino.0)) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let set = SetAttr {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        };
        match self.do_setattr(ino.0, set, fh) {
            Ok(a) => reply.attr(&TTL, &a),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn readlink(&self, _req: &Request, ino: INodeNo, reply: ReplyData) {
        let inner = lock(&self.shared);
        match inner.store.path(ino.0).and_then(std::fs::read_link) {
            Ok(t) => reply.data(t.as_os_str().as_bytes()),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn mkdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, mode: u32, umask: u32, reply: ReplyEntry) {
        let mut inner = lock(&self.shared);
        let ino = inner
            .store
            .check_alive()
            .and_then(|_| inner.store.mkdir(parent.0, name, mode & !umask));
        entry(&inner, ino, reply);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(lock(&self.shared).store.unlink(parent.0, name), reply);
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(lock(&self.shared).store.rmdir(parent.0, name), reply);
    }

    fn symlink(&self, _req: &Request, parent: INodeNo, link_name: &OsStr, target: &Path, reply: ReplyEntry) {
        let mut inner = lock(&self.shared);
        let ino = inner
            .store
            .check_alive()
            .and_then(|_| inner.store.symlink(parent.0, link_name, target));
        entry(&inner, ino, reply);
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut inner = lock(&self.shared);
        let r = if flags.contains(RenameFlags::RENAME_EXCHANGE) || flags.contains(RenameFlags::RENAME_WHITEOUT) {
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        } else if flags.contains(RenameFlags::RENAME_NOREPLACE) && inner.store.lookup(newparent.0, newname).is_ok() {
            Err(io::Error::from_raw_os_error(libc::EEXIST))
        } else {
            inner.store.rename(parent.0, name, newparent.0, newname)
        };
        empty(r, reply);
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let mut inner = lock(&self.shared);
        let r = inner.store.check_alive().and_then(|_| {
            let file = inner.store.open_file(ino.0)?;
            if flags.0 & libc::O_TRUNC != 0 {
                inner.store.truncate(ino.0, &file, 0)?;
            }
            Ok(add_handle(&mut inner, ino.0, file))
        });
        match r {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        reply: ReplyData,
    ) {
        let r = {
            let inner = lock(&self.shared);
            inner.store.check_alive().and_then(|_| handle(&inner, fh))
        };
        let r = r.and_then(|(_, file)| {
            use std::os::unix::fs::FileExt;
            let mut buf = vec![0u8; size as usize];
            let mut got = 0;
            while got < buf.len() {
                let n = file.read_at(&mut buf[got..], offset + got as u64)?;
                if n == 0 {
                    break;
                }
                got += n;
            }
            buf.truncate(got);
            Ok(buf)
        });
        match r {
            Ok(buf) => reply.data(&buf),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut inner = lock(&self.shared);
        let r = handle(&inner, fh).and_then(|(_, file)| inner.store.write(ino.0, &file, offset, data));
        match r {
            Ok(()) => reply.written(data.len() as u32),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: fuser::LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<fuser::LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        lock(&self.shared).handles.remove(&fh.0);
        reply.ok();
    }

    fn fsync(&self, _req: &Request, ino: INodeNo, fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        let mut inner = lock(&self.shared);
        let r = handle(&inner, fh).and_then(|(_, file)| inner.store.fsync_file(ino.0, &file));
        empty(r, reply);
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        let inner = lock(&self.shared);
        let entries = inner.store.check_alive().and_then(|_| inner.store.entries(ino.0));
        let entries = match entries {
            Ok(e) => e,
            Err(e) => return reply.error(Errno::from(e)),
        };
        let parent = inner.store.parent(ino.0);
        let dots = [
            (OsStr::new(".").to_owned(), ino.0, EntryKind::Dir),
            (OsStr::new("..").to_owned(), parent, EntryKind::Dir),
        ];
        let all = dots.into_iter().chain(entries);
        for (i, (name, child, kind)) in all.enumerate().skip(offset as usize) {
            if reply.add(INodeNo(child), (i + 1) as u64, file_type(kind), &name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        empty(lock(&self.shared).store.fsync_dir(ino.0), reply);
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let inner = lock(&self.shared);
        match statvfs(inner.store.backing()) {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namemax as u32,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(Errno::from(e)),
        }
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        let inner = lock(&self.shared);
        empty(
            inner
                .store
                .check_alive()
                .and_then(|_| inner.store.kind(ino.0).map(|_| ())),
            reply,
        );
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut inner = lock(&self.shared);
        let r = inner.store.check_alive().and_then(|_| {
            let (ino, file) = inner.store.create(parent.0, name, mode & !umask & 0o7777)?;
            let fh = add_handle(&mut inner, ino, file);
            Ok((stat(&inner, ino)?, fh))
        });
        match r {
            Ok((a, fh)) => reply.created(&TTL, &a, Generation(0), FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(Errno::from(e)),
        }
    }
}
