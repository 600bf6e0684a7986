//! Writing the emitted files all or nothing: `write_atomically`, its staging folder, the lock beside
//! `--out` and the sweep of staging folders whose writer is gone. Moved out of emit/mod.rs whole.

use super::*;

/// A write that SIGINT, SIGTERM or SIGHUP stopped: the staging folder was removed, `--out` is as it was.
#[derive(Debug, thiserror::Error)]
#[error("interrupted while writing: nothing was written, {0} is as it was")]
pub struct Interrupted(pub String);

/// Write `files` into `out`, all or nothing: into a staging folder beside it, then renamed into place. A
/// non-empty `out` is refused unless `force`; then the staged folder and `out` swap places in one
/// `renameat2(RENAME_EXCHANGE)`, so `out` exists at every moment (the old one is removed after). `private`
/// files (a literal password) are written 0600.
///
/// Nothing is left behind: a stop signal during the write removes the staging folder (`Interrupted`); one
/// that could not be caught (SIGKILL, a crash) leaves it, and the next emit into the same folder's parent
/// removes staging folders whose writer is gone. Two emits into one `out` at once: the second fails (a
/// lock beside `out`) rather than both claiming the folder.
pub fn write_atomically(out: &Path, files: &[(PathBuf, String)], force: bool, private: &[PathBuf]) -> Result<()> {
    if out.exists() && !out.is_dir() {
        bail!("--out {} is a file, not a folder; choose a folder", out.display());
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("--out: cannot create {}", parent.display()))?;
    let _lock = OutLock::take(&parent, out)?;
    sweep_staging(&parent);
    let non_empty = match std::fs::read_dir(out) {
        Ok(mut it) => it.next().is_some(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(e).with_context(|| format!("--out {}: cannot read it", out.display())),
    };
    if non_empty && !force {
        bail!(
            "--out {} is not empty; choose an empty or new folder, or pass --force to replace it",
            out.display()
        );
    }
    let guard = crate::signals::InterruptGuard::install();
    let tmp = tempfile::Builder::new()
        .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
        .tempdir_in(&parent)
        .with_context(|| format!("--out: cannot create a temporary folder in {}", parent.display()))?;
    let interrupted = || Interrupted(out.display().to_string());
    for (rel, text) in files {
        if guard.interrupted() {
            return Err(interrupted().into()); // `tmp` is removed as it drops
        }
        if rel.is_absolute() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            bail!("internal: emitted path {} escapes the output folder", rel.display());
        }
        let p = tmp.path().join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        write_file(&p, text, private.contains(rel)).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if guard.interrupted() {
        return Err(interrupted().into());
    }
    let staged = tmp.keep();
    let result = if non_empty {
        // Swap: `out` is the new folder and `staged` the old one, in one step; then the old one goes.
        exchange(&staged, out).map(|_| {
            let _ = std::fs::remove_dir_all(&staged);
        })
    } else {
        // rename(2) replaces an empty folder.
        std::fs::rename(&staged, out)
    };
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&staged);
        return Err(e).with_context(|| format!("cannot move the output into {}", out.display()));
    }
    Ok(())
}

/// Write one file, 0600 when `private`: created with that mode, so it is never readable by others, even
/// for a moment.
pub(super) fn write_file(p: &Path, text: &str, private: bool) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    if private {
        o.mode(0o600);
    }
    o.open(p)?.write_all(text.as_bytes())
}

/// Swap two folders in one step (`renameat2(RENAME_EXCHANGE)`, Linux 3.15): both names exist before and
/// after. Where the file system cannot (EINVAL), the old way: move `out` aside, the new folder in, then
/// (on success) the old one to `staged`'s name.
pub(super) fn exchange(staged: &Path, out: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(staged)?, c(out)?);
    // SAFETY: two NUL-terminated paths, relative to the working folder (AT_FDCWD).
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) && e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    let aside = staged.with_extension("old");
    std::fs::rename(out, &aside)?;
    if let Err(e) = std::fs::rename(staged, out) {
        let _ = std::fs::rename(&aside, out);
        return Err(e);
    }
    std::fs::rename(&aside, staged)
}

/// Staging folders beside `--out` whose writer is gone (killed before it could clean up), removed; one
/// whose pid still runs is left alone. Folders of natsplan versions that did not name their pid
/// (`.natsplan-emit-XXXXXX`, `.natsplan-emit-old-NAME`) are removed when untouched for an hour.
pub(super) fn sweep_staging(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(STAGING_PREFIX) else {
            continue;
        };
        if !e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let stale = match rest.split_once('-').and_then(|(pid, _)| pid.parse::<i32>().ok()) {
            Some(pid) => !pid_alive(pid),
            None => e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(3600)),
        };
        if stale {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Whether a process with this pid exists (ours or another user's).
pub(super) fn pid_alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// An exclusive lock on writing one `--out` folder: `flock` on a file beside it, removed when released.
pub(super) struct OutLock {
    path: PathBuf,
    _file: std::fs::File,
}

impl OutLock {
    pub(super) fn take(parent: &Path, out: &Path) -> Result<OutLock> {
        use std::hash::{Hash, Hasher};
        use std::os::unix::fs::MetadataExt;
        use std::os::unix::io::AsRawFd;
        let mut h = crate::fxhash::FxHasher::default();
        out.file_name().unwrap_or(out.as_os_str()).hash(&mut h);
        let path = parent.join(format!("{STAGING_PREFIX}lock-{:016x}", h.finish()));
        loop {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("cannot create the lock {}", path.display()))?;
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                bail!(
                    "another natsplan emit is writing {} now (it holds {}); wait for it to finish, then run this \
                     again",
                    out.display(),
                    path.display()
                );
            }
            // The holder before us may have removed the file between our open and our lock: then the lock is
            // on a file nobody else will open; take the one at the path.
            let same = std::fs::metadata(&path)
                .ok()
                .zip(file.metadata().ok())
                .is_some_and(|(a, b)| a.ino() == b.ino() && a.dev() == b.dev());
            if same {
                return Ok(OutLock { path, _file: file });
            }
        }
    }
}

impl Drop for OutLock {
    fn drop(&mut self) {
        // Removed while still locked, so whoever opens the path next gets a new file (see `take`).
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The prefix of the folders `write_atomically` stages into, beside `--out`; the writer's pid follows it
/// (`.natsplan-emit-<pid>-XXXXXX`), so a later run can tell one whose writer is gone from one in use.
pub(super) const STAGING_PREFIX: &str = ".natsplan-emit-";
