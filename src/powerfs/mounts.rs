//! Finding and removing this layer's mounts, so that no mount outlives the run that made it: a killed
//! `natsplan powerfs` leaves its mount behind ("Transport endpoint is not connected"); the next
//! `lab down` (or test guard) finds it in /proc/self/mountinfo by its file-system name and detaches it.
//! A killed probe (`lab up --power-loss-fs` checks FUSE with a mount of its own in a temp folder named
//! `PROBE_PREFIX…`) leaves a dead mount too: every probe, `lab up` and `lab down` detach those first
//! ([`clean_dead_probes`]) and remove their folders.

use super::{FSNAME, PROBE_PREFIX};
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

/// Detach a mount lazily (umount2 MNT_DETACH): works on a dead FUSE mount and on a busy one. Without
/// the right to unmount (not root: the mount was made through fusermount3), `fusermount3 -u -z` does it.
pub fn detach(mountpoint: &Path) -> io::Result<()> {
    let c = CString::new(mountpoint.as_os_str().as_bytes())?;
    // SAFETY: a valid C string; umount2 takes no other memory.
    if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            // EINVAL: not a mount point (already gone), which is what we wanted.
            Some(libc::EINVAL) | Some(libc::ENOENT) => {}
            Some(libc::EPERM) => {
                for tool in ["fusermount3", "fusermount"] {
                    let ran = std::process::Command::new(tool)
                        .args(["-u", "-z"])
                        .arg(mountpoint)
                        .stdin(std::process::Stdio::null())
                        .stdout(std::process::Stdio::null())
                        .stderr(std::process::Stdio::null())
                        .status();
                    if ran.is_ok_and(|s| s.success()) {
                        return Ok(());
                    }
                }
                return Err(e);
            }
            _ => return Err(e),
        }
    }
    Ok(())
}

/// Whether a mount of this layer is dead: its process is gone, so any access fails with ENOTCONN
/// ("Transport endpoint is not connected").
fn is_dead(mountpoint: &Path) -> bool {
    std::fs::metadata(mountpoint).err().and_then(|e| e.raw_os_error()) == Some(libc::ENOTCONN)
}

/// The probe folder (named `PROBE_PREFIX…`) a mount point sits in, if it sits in one.
fn probe_folder(mountpoint: &Path) -> Option<&Path> {
    mountpoint.ancestors().find(|a| {
        a.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(PROBE_PREFIX))
    })
}

/// Detach the dead mounts a killed FUSE probe left (mounts of this layer inside a `PROBE_PREFIX…`
/// folder whose process is gone) and remove their folders; a probe still running is left alone.
/// Returns the mount points removed.
pub fn clean_dead_probes() -> io::Result<Vec<PathBuf>> {
    let mut gone = Vec::new();
    for p in under(Path::new("/"))? {
        let Some(folder) = probe_folder(&p) else { continue };
        if !is_dead(&p) {
            continue;
        }
        detach(&p)?;
        // The folder is the probe's own temp folder (an empty backing and mount point).
        let _ = std::fs::remove_dir_all(folder);
        gone.push(p);
    }
    Ok(gone)
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
        if is_dead(&p) {
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
    fn a_probe_folder_is_found_by_its_prefix() {
        let p = PathBuf::from(format!("/tmp/{PROBE_PREFIX}x1y2/m"));
        assert_eq!(probe_folder(&p), Some(Path::new(&format!("/tmp/{PROBE_PREFIX}x1y2"))));
        assert_eq!(probe_folder(Path::new("/tmp/lab/n1/store")), None);
    }

    #[test]
    fn detaching_a_path_that_is_not_a_mount_is_fine() {
        let tmp = tempfile::tempdir().unwrap();
        detach(tmp.path()).unwrap();
    }
}
