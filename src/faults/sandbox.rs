//! The fault runner's private plumbing beyond process control: network namespaces for `net:` partitions
//! and small tmpfs mounts for `full:` stores. Everything here is created under names and paths that carry
//! our pid, removed by an RAII guard on every path out (return, error, panic, Ctrl-C turned into an
//! error), and swept at the next start if a natsplan was SIGKILLed mid-run. Nothing touches the host's own
//! interfaces or routes: every link lives inside namespaces created here, addresses come from a private test
//! range that exists only inside them, and natsplan's own traffic reaches the servers from a thread that
//! joined the "hub" namespace.
//!
//! Topology (`Netns::create`): a hub namespace holds a core bridge (with the client address) and one bridge
//! per rack, each rack bridge joined to the core by an uplink veth pair; every server has its own namespace
//! whose `eth0` is a veth into its rack's bridge. Setting a rack's uplink down is `net:RACK`: the rack's
//! servers still reach each other but nobody else, and nobody reaches them.

use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Prefix of every namespace this module creates: `npf<pid>h` (hub), `npf<pid>s<i>` (server i).
const NS_PREFIX: &str = "npf";
/// Prefix of the temporary lab folders the fault runner creates (tmpfs mounts live under them).
pub const DIR_PREFIX: &str = "natsplan-faults-";
/// The private test range used inside the namespaces; the hub's client address is .254.
const SUBNET: &str = "10.213.0";

fn ip(args: &[&str]) -> Result<()> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run `ip {}`", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The pid in a name made by this module (`npf<pid>…`, `natsplan-faults-<pid>-…`), if it is one.
fn owner_pid(name: &str, prefix: &str) -> Option<u32> {
    let rest = name.strip_prefix(prefix)?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

/// Remove namespaces and tmpfs mounts left by a natsplan that died without cleaning up (its pid is gone).
/// Returns what was removed, for the log.
pub fn sweep_stale() -> Vec<String> {
    let mut removed = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/var/run/netns") {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = owner_pid(&name, NS_PREFIX) {
                if !pid_alive(pid) && ip(&["netns", "del", &name]).is_ok() {
                    removed.push(format!("network namespace {name}"));
                }
            }
        }
    }
    if let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") {
        for line in mounts.lines() {
            let mut f = line.split_whitespace();
            let (Some(fs), Some(point)) = (f.next(), f.next()) else {
                continue;
            };
            if fs != "natsplan-faults" {
                continue;
            }
            let stale = point
                .split('/')
                .find_map(|c| owner_pid(c, DIR_PREFIX))
                .is_some_and(|pid| !pid_alive(pid));
            if stale && unmount(Path::new(point)).is_ok() {
                removed.push(format!("tmpfs {point}"));
            }
        }
    }
    // The power-loss layers of dead runs' labs (a SIGKILLed run leaves dead FUSE mounts behind).
    for point in crate::powerfs::mounts::under(Path::new("/")).unwrap_or_default() {
        let stale = point
            .components()
            .find_map(|c| owner_pid(&c.as_os_str().to_string_lossy(), DIR_PREFIX))
            .is_some_and(|pid| !pid_alive(pid));
        if stale && crate::powerfs::mounts::detach(&point).is_ok() {
            removed.push(format!("power-loss layer {}", point.display()));
        }
    }
    // The lab folders of dead runs (`$TMPDIR/natsplan-faults-<pid>-*`), once nothing is mounted in them.
    removed.extend(sweep_stale_dirs(&std::env::temp_dir()));
    removed
}

/// Remove `DIR_PREFIX<pid>-*` folders under `tmp` whose run (pid) is gone; a folder something is still
/// mounted in is left alone (the mount sweep above goes first).
fn sweep_stale_dirs(tmp: &Path) -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let mut removed = Vec::new();
    for e in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name, DIR_PREFIX) else {
            continue;
        };
        let path = e.path();
        let mounted = mounts
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .any(|m| Path::new(m).starts_with(&path));
        if !pid_alive(pid)
            && !mounted
            && e.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::remove_dir_all(&path).is_ok()
        {
            removed.push(format!("lab folder {}", path.display()));
        }
    }
    removed
}

/// Why `net:` scenarios cannot run here, or None when network namespaces work.
pub fn netns_unavailable() -> Option<String> {
    let probe = format!("{NS_PREFIX}{}probe", std::process::id());
    match ip(&["netns", "add", &probe]) {
        Ok(()) => {
            let _ = ip(&["netns", "del", &probe]);
            None
        }
        Err(e) => Some(format!(
            "network namespaces are not available ({e:#}); net: partitions need `ip netns` and CAP_SYS_ADMIN"
        )),
    }
}

/// A lab's network: hub, rack bridges, one namespace per server. Dropping it deletes every namespace (and
/// with them every veth and bridge); servers must be killed first (the lab drops before this guard).
pub struct Netns {
    hub: String,
    servers: Vec<String>,
    /// Rack index of each server.
    rack_of: Vec<usize>,
    racks: usize,
    alive: bool,
}

impl Netns {
    /// Build the topology for servers `rack_of[i]` ∈ 0..racks. On any error, what was made is removed.
    pub fn create(rack_of: &[usize]) -> Result<Netns> {
        let pid = std::process::id();
        let racks = rack_of.iter().copied().max().map(|m| m + 1).unwrap_or(0);
        if rack_of.len() > 250 {
            bail!("at most 250 servers fit the namespace test range");
        }
        let mut n = Netns {
            hub: format!("{NS_PREFIX}{pid}h"),
            servers: Vec::new(),
            rack_of: rack_of.to_vec(),
            racks,
            alive: true,
        };
        n.build()
            .map_err(|e| e.context("cannot set up the network namespaces for net: partitions"))?;
        Ok(n)
    }

    fn build(&mut self) -> Result<()> {
        let pid = std::process::id();
        let hub = self.hub.clone();
        ip(&["netns", "add", &hub])?;
        let inh = |args: &[&str]| -> Result<()> {
            let mut v = vec!["-n", hub.as_str()];
            v.extend_from_slice(args);
            ip(&v)
        };
        inh(&["link", "set", "lo", "up"])?;
        inh(&["link", "add", "core", "type", "bridge"])?;
        inh(&["addr", "add", &format!("{SUBNET}.254/24"), "dev", "core"])?;
        inh(&["link", "set", "core", "up"])?;
        for r in 0..self.racks {
            let (br, up, down) = (format!("r{r}"), format!("u{r}"), format!("u{r}r"));
            inh(&["link", "add", &br, "type", "bridge"])?;
            inh(&["link", "set", &br, "up"])?;
            inh(&["link", "add", &up, "type", "veth", "peer", "name", &down])?;
            inh(&["link", "set", &up, "master", "core", "up"])?;
            inh(&["link", "set", &down, "master", &br, "up"])?;
        }
        for (i, &r) in self.rack_of.clone().iter().enumerate() {
            let ns = format!("{NS_PREFIX}{pid}s{i}");
            ip(&["netns", "add", &ns])?;
            self.servers.push(ns.clone());
            let port = format!("s{i}");
            inh(&[
                "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            inh(&["link", "set", &port, "master", &format!("r{r}"), "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&["-n", &ns, "addr", "add", &format!("{}/24", self.host(i)), "dev", "eth0"])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
        }
        Ok(())
    }

    /// Server `i`'s namespace and address, as the lab takes them.
    pub fn node_nets(&self) -> Vec<crate::lab::NodeNet> {
        (0..self.servers.len())
            .map(|i| crate::lab::NodeNet {
                netns: self.servers[i].clone(),
                host: self.host(i),
            })
            .collect()
    }

    fn host(&self, i: usize) -> String {
        format!("{SUBNET}.{}", i + 1)
    }

    /// The hub namespace, where natsplan's own connections must come from.
    pub fn hub(&self) -> &str {
        &self.hub
    }

    /// Cut (`up = false`) or restore rack `r`'s uplink.
    pub fn set_rack(&self, r: usize, up: bool) -> Result<()> {
        if r >= self.racks {
            bail!("no rack {r} in the lab network");
        }
        ip(&[
            "-n",
            &self.hub,
            "link",
            "set",
            &format!("u{r}"),
            if up { "up" } else { "down" },
        ])
    }

    pub fn rack_of(&self, server: usize) -> usize {
        self.rack_of[server]
    }

    /// Every uplink up again.
    pub fn heal(&self) -> Result<()> {
        for r in 0..self.racks {
            self.set_rack(r, true)?;
        }
        Ok(())
    }

    fn remove(&mut self) {
        if !self.alive {
            return;
        }
        self.alive = false;
        for ns in self.servers.iter().chain(std::iter::once(&self.hub)) {
            let _ = ip(&["netns", "del", ns]);
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Move the calling thread into namespace `name` (threads it starts afterwards inherit it). Only network
/// namespaces: the process's other threads stay where they are.
pub fn enter_netns(name: &str) -> Result<()> {
    let path = format!("/var/run/netns/{name}");
    let f = std::fs::File::open(&path).with_context(|| format!("cannot open {path}"))?;
    use std::os::fd::AsRawFd;
    // SAFETY: setns on a namespace file we hold open; affects only this thread's network namespace.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error()).with_context(|| format!("cannot enter {path}"));
    }
    Ok(())
}

/// A tmpfs mounted at a folder; unmounted (lazily if busy) when dropped.
pub struct Tmpfs {
    point: PathBuf,
    /// The mount's device number: it finds the mount again when something renamed the folder it sits on
    /// (nats-server renames a stream's folder away before deleting it, carrying a mount inside along).
    dev: u64,
    mounted: bool,
}

impl Tmpfs {
    /// Mount a `size_bytes` tmpfs at `point` (created if needed). The error says why (e.g. not permitted).
    pub fn mount(point: &Path, size_bytes: u64) -> Result<Tmpfs> {
        std::fs::create_dir_all(point).with_context(|| format!("cannot create {}", point.display()))?;
        let c = |s: &str| std::ffi::CString::new(s).map_err(|_| anyhow!("bad mount argument {s:?}"));
        let target = c(&point.to_string_lossy())?;
        let (src, fstype, data) = (c("natsplan-faults")?, c("tmpfs")?, c(&format!("size={size_bytes}"))?);
        // SAFETY: mount(2) with NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::mount(
                src.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                data.as_ptr() as *const libc::c_void,
            )
        };
        if r != 0 {
            return Err(anyhow!(
                "cannot mount a {size_bytes}-byte tmpfs at {}: {} (full: scenarios need CAP_SYS_ADMIN)",
                point.display(),
                std::io::Error::last_os_error()
            ));
        }
        use std::os::unix::fs::MetadataExt;
        let dev = match std::fs::metadata(point) {
            Ok(m) => m.dev(),
            Err(e) => {
                let _ = unmount(point);
                return Err(e).with_context(|| format!("cannot stat the tmpfs at {}", point.display()));
            }
        };
        Ok(Tmpfs {
            point: point.to_path_buf(),
            dev,
            mounted: true,
        })
    }

    /// Where it was mounted.
    pub fn path(&self) -> &Path {
        &self.point
    }

    /// Where it is now: where it was mounted, or where a rename of a folder above it moved it.
    pub fn current_path(&self) -> PathBuf {
        mount_point_of(self.dev).unwrap_or_else(|| self.point.clone())
    }

    /// Unmount now, wherever it went (the drop does the same, silently).
    pub fn unmount(&mut self) -> Result<()> {
        if self.mounted {
            self.mounted = false;
            unmount(&self.current_path())?;
        }
        Ok(())
    }
}

/// The mount point of the mount with device number `dev`, from `/proc/self/mountinfo` (field 3 is
/// `major:minor`, field 5 the mount point with space, tab, newline and backslash octal-escaped).
fn mount_point_of(dev: u64) -> Option<PathBuf> {
    let (major, minor) = (
        ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff),
        (dev & 0xff) | ((dev >> 12) & !0xff),
    );
    let want = format!("{major}:{minor}");
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let line = info.lines().find(|l| l.split(' ').nth(2) == Some(want.as_str()))?;
    Some(PathBuf::from(unescape_mount_path(line.split(' ').nth(4)?)))
}

/// `/proc` mount paths escape space, tab, newline and backslash as `\ooo`.
fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = |c: u8| (b'0'..=b'7').contains(&c);
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(|&c| octal(c)) {
            let v = u32::from(b[i + 1] - b'0') * 64 + u32::from(b[i + 2] - b'0') * 8 + u32::from(b[i + 3] - b'0');
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = self.unmount();
    }
}

fn unmount(point: &Path) -> Result<()> {
    let t = std::ffi::CString::new(point.to_string_lossy().as_bytes()).map_err(|_| anyhow!("bad path"))?;
    // SAFETY: umount2(2) on a NUL-terminated path; MNT_DETACH as a fallback when something still holds it.
    unsafe {
        if libc::umount2(t.as_ptr(), 0) == 0 || libc::umount2(t.as_ptr(), libc::MNT_DETACH) == 0 {
            return Ok(());
        }
    }
    Err(anyhow!(
        "cannot unmount {}: {}",
        point.display(),
        std::io::Error::last_os_error()
    ))
}

/// Whether `point` is currently a mount point of ours (for tests and the leave-nothing-behind check).
pub fn our_mounts() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("natsplan-faults "))
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .collect()
}

/// Namespaces of ours owned by `pid` (for the leave-nothing-behind check).
pub fn namespaces_of(pid: u32) -> Vec<String> {
    std::fs::read_dir("/var/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| owner_pid(n, NS_PREFIX) == Some(pid))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pids_are_read_from_our_names_only() {
        assert_eq!(owner_pid("npf1234h", NS_PREFIX), Some(1234));
        assert_eq!(owner_pid("npf77s3", NS_PREFIX), Some(77));
        assert_eq!(owner_pid("natsplan-faults-99-abc", DIR_PREFIX), Some(99));
        assert_eq!(owner_pid("other", NS_PREFIX), None);
        assert_eq!(owner_pid("npfx", NS_PREFIX), None);
    }

    #[test]
    fn a_tmpfs_is_found_and_unmounted_after_a_rename_moves_it() {
        assert_eq!(unescape_mount_path(r"/a\040b/\134c/$G"), "/a b/\\c/$G");
        let tmp = tempfile::tempdir().unwrap();
        let at = tmp.path().join("stream/msgs");
        let mut m = match Tmpfs::mount(&at, 1 << 20) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("skipped: {e:#}");
                return;
            }
        };
        assert_eq!(m.current_path(), at);
        // As nats-server deletes a stream: its folder renamed away first, the mount inside goes along.
        let moved = tmp.path().join(".stream");
        std::fs::rename(tmp.path().join("stream"), &moved).unwrap();
        assert_eq!(m.current_path(), moved.join("msgs"));
        m.unmount().unwrap();
        assert!(!our_mounts()
            .iter()
            .any(|p| p.starts_with(&tmp.path().display().to_string())));
    }

    /// A pid that no process has now.
    fn dead_pid() -> u32 {
        (4_000_000..4_100_000).find(|p| !pid_alive(*p)).unwrap()
    }

    #[test]
    fn stale_namespaces_of_dead_runs_are_swept_and_live_ones_kept() {
        if netns_unavailable().is_some() {
            eprintln!("skipped: no network namespaces here");
            return;
        }
        let stale = format!("{NS_PREFIX}{}h", dead_pid());
        ip(&["netns", "add", &stale]).unwrap();
        let net = Netns::create(&[0, 1]).unwrap();
        let removed = sweep_stale();
        assert!(removed.iter().any(|r| r.contains(&stale)), "{removed:?}");
        assert!(
            !namespaces_of(std::process::id()).is_empty(),
            "our own live namespaces stay"
        );
        drop(net);
        assert!(namespaces_of(std::process::id()).is_empty());
    }

    #[test]
    fn lab_folders_of_dead_runs_are_swept_and_live_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let stale = tmp.path().join(format!("{DIR_PREFIX}{}-abc", dead_pid()));
        let live = tmp.path().join(format!("{DIR_PREFIX}{}-def", std::process::id()));
        let other = tmp.path().join("natsplan-lab-xyz");
        for d in [&stale, &live, &other] {
            std::fs::create_dir_all(d.join("n1/store")).unwrap();
            std::fs::write(d.join("n1/nats-server.log"), "x").unwrap();
        }
        let removed = sweep_stale_dirs(tmp.path());
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert!(!stale.exists(), "the dead run's folder is removed");
        assert!(live.exists() && other.exists(), "a live run's and other folders stay");
    }

    #[test]
    fn a_tmpfs_is_unmounted_when_its_guard_drops() {
        let d = tempfile::Builder::new()
            .prefix(&format!("{DIR_PREFIX}{}-", std::process::id()))
            .tempdir()
            .unwrap();
        let point = d.path().join("store");
        let Ok(m) = Tmpfs::mount(&point, 1 << 20) else {
            eprintln!("skipped: mounting a tmpfs is not permitted here");
            return;
        };
        let here = point.to_string_lossy().into_owned();
        assert!(our_mounts().contains(&here));
        // Full at its size: the filesystem refuses more.
        let big = vec![0u8; 2 << 20];
        assert!(std::fs::write(point.join("f"), big).is_err());
        drop(m);
        assert!(!our_mounts().contains(&here));
    }
}
