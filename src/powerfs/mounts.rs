//! Finding and removing this layer's mounts, so that no mount outlives the run that made it: a killed
//! `natsplan powerfs` leaves its mount behind ("Transport endpoint is not connected"); the next
//! `lab down` (or test guard) finds it in /proc/self/mountinfo by its file-system name and detaches it.

use super::FSNAME;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Undo mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c)) {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Mount points of this layer in a mountinfo text (proc(5): `id parent maj:min root mountpoint opts
/// [optional...] - fstype source superopts`).
pub fn parse_mountinfo(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(fstype), Some(source), Some(mp)) = (fields.get(dash + 1), fields.get(dash + 2), fields.get(4)) else {
            continue;
        };
        if fstype.starts_with("fuse") && *source == FSNAME {
            out.push(PathBuf::from(unescape(mp)));
        }
    }
    out
}

/// This layer's mounts at or under `dir` (every one when `dir` is `/`).
pub fn under(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let text = std::fs::read_to_string("/proc/self/mountinfo")?;
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    Ok(parse_mountinfo(&text)
        .into_iter()
        .filter(|p| p.starts_with(&dir))
        .collect())
}

/// Detach a mount lazily (umount2 MNT_DETACH): works on a dead FUSE mount and on a busy one.
pub fn detach(mountpoint: &Path) -> io::Result<()> {
    let c = CString::new(mountpoint.as_os_str().as_bytes())?;
    // SAFETY: a valid C string; umount2 takes no other memory.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
        let e = io::Error::last_os_error();
        // EINVAL: not a mount point (already gone), which is what we wanted.
        if e.raw_os_error() != Some(libc::EINVAL) && e.raw_os_error() != Some(libc::ENOENT) {
            return Err(e);
        }
    }
    Ok(())
}

/// Detach every mount of this layer under `dir`; returns the ones it removed.
pub fn clean_under(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let found = under(dir)?;
    // Deepest first, in case one sits inside another.
    let mut sorted = found.clone();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for p in &sorted {
        detach(p)?;
    }
    Ok(found)
}

/// Detach every dead mount of this layer on the machine (its process was killed: any access fails
/// with ENOTCONN, "Transport endpoint is not connected"); live mounts of other runs are left alone.
/// Returns the ones removed.
pub fn clean_dead() -> io::Result<Vec<PathBuf>> {
    let mut gone = Vec::new();
    for p in under(Path::new("/"))? {
        let dead = std::fs::metadata(&p).err().and_then(|e| e.raw_os_error()) == Some(libc::ENOTCONN);
        if dead {
            detach(&p)?;
            gone.push(p);
        }
    }
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_this_layers_mounts_and_unescapes_spaces() {
        let text = "\
36 35 98:0 / /mnt1 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
90 29 0:45 / /tmp/lab\\040a/servers/n1/store rw,nosuid,nodev,noatime - fuse.natsplan-powerfs natsplan-powerfs rw,user_id=0,group_id=0
91 29 0:46 / /tmp/other rw - fuse.sshfs someone@host: rw
92 29 0:47 / /tmp/x rw shared:5 - fuse natsplan-powerfs rw
";
        assert_eq!(
            parse_mountinfo(text),
            vec![PathBuf::from("/tmp/lab a/servers/n1/store"), PathBuf::from("/tmp/x")]
        );
    }

    #[test]
    fn detaching_a_path_that_is_not_a_mount_is_fine() {
        let tmp = tempfile::tempdir().unwrap();
        detach(tmp.path()).unwrap();
    }
}
