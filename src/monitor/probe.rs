//! The cluster probe verify and calibrate share (a floor under both): what they learn about the live
//! cluster before they run anything: each server's name, version, tags
//! and JetStream configuration from `/varz`, the JetStream cluster size from `/jsz`, the store's
//! filesystem where it is visible from here (a loopback server's store dir in `/proc/mounts`: tmpfs makes
//! `sync_interval: always` free), and the NATS versions with known hazards.

use crate::monitor;
use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const HTTP_TIMEOUT: Duration = Duration::from_secs(3);

/// One server as its `/varz` shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ServerFacts {
    pub name: String,
    pub monitor_url: String,
    pub version: String,
    pub tags: Vec<String>,
    pub cluster: Option<String>,
    pub cores: Option<u64>,
    pub jetstream: bool,
    pub max_storage_bytes: Option<u64>,
    pub max_memory_bytes: Option<u64>,
    pub store_dir: Option<String>,
    pub sync_always: bool,
    pub sync_interval_s: Option<f64>,
    pub unique_tag: Option<String>,
    /// Filesystem type under the store dir, when the server runs on this host.
    pub store_fs: Option<String>,
    /// Size of the filesystem under the store dir (bytes), when the server runs on this host and the store
    /// dir is that filesystem's mount point (a volume of its own, as `emit` asks for): what verify's drift
    /// check compares with the planned volume. None for a store on a shared filesystem (a lab's folder).
    pub store_fs_bytes: Option<u64>,
}

/// A hazard known for the running NATS version.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Hazard {
    pub version: String,
    pub text: String,
}

/// Everything detected, as results.json records it.
#[derive(Debug, Clone, Serialize, Default)]
pub struct ClusterFacts {
    /// Servers whose `/varz` answered.
    pub servers: Vec<ServerFacts>,
    /// Monitoring URLs that did not answer, with the error.
    pub unreachable_monitors: Vec<(String, String)>,
    /// The server the client connection reached and its version (from the NATS INFO).
    pub connected_server: Option<String>,
    pub version: Option<String>,
    /// JetStream servers in the meta group (`/jsz meta_cluster.cluster_size`), else the servers seen.
    pub jetstream_servers: u32,
    /// Largest stream replica count this cluster can place (≤ 5).
    pub max_replicas: u8,
    /// `always` or the interval (`2m0s`), as the servers agree; `mixed` when they do not.
    pub sync: String,
    pub sync_always: bool,
    /// True when every visible store dir is on tmpfs (fsync costs nothing there).
    pub store_on_tmpfs: bool,
    pub hazards: Vec<Hazard>,
    pub notes: Vec<String>,
}

fn u(v: &Value, p: &str) -> Option<u64> {
    v.pointer(p).and_then(Value::as_u64)
}

/// Read one server's facts out of its `/varz`.
pub fn server_facts(monitor_url: &str, varz: &Value) -> ServerFacts {
    let js = varz.pointer("/jetstream/config");
    let store_dir = js
        .and_then(|c| c.get("store_dir"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let host_is_loopback = ["127.", "localhost", "[::1]"]
        .iter()
        .any(|h| monitor_url.trim_start_matches("http://").starts_with(h));
    let store_fs = store_dir
        .as_deref()
        .filter(|_| host_is_loopback)
        .and_then(|d| fs_type_of(Path::new(d)));
    let store_fs_bytes = store_dir
        .as_deref()
        .filter(|d| store_fs.is_some() && is_mount_point(Path::new(d)))
        .and_then(|d| fs_size_of(Path::new(d)));
    ServerFacts {
        name: varz
            .get("server_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        monitor_url: monitor_url.to_string(),
        version: varz
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        tags: monitor::tags(varz),
        cluster: varz
            .pointer("/cluster/name")
            .and_then(Value::as_str)
            .map(str::to_string),
        cores: u(varz, "/cores"),
        jetstream: js.is_some(),
        max_storage_bytes: u(varz, "/jetstream/config/max_storage"),
        max_memory_bytes: u(varz, "/jetstream/config/max_memory"),
        store_dir,
        sync_always: js
            .and_then(|c| c.get("sync_always"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        sync_interval_s: u(varz, "/jetstream/config/sync_interval").map(|ns| ns as f64 / 1e9),
        unique_tag: js
            .and_then(|c| c.get("unique_tag"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        store_fs,
        store_fs_bytes,
    }
}

/// Whether `dir` is a mount point (`/proc/mounts`): a filesystem of its own rather than a folder on one.
fn is_mount_point(dir: &Path) -> bool {
    let (Ok(dir), Ok(mounts)) = (std::fs::canonicalize(dir), std::fs::read_to_string("/proc/mounts")) else {
        return false;
    };
    let dir = dir.to_string_lossy();
    mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(dir.as_ref()))
}

/// Total bytes of the filesystem holding `dir` (statvfs: blocks × fragment size). None when it cannot
/// be read.
pub fn fs_size_of(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: zeroed is a valid statvfs; the pointer is to our local.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid C string and a pointer to a statvfs we own.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_blocks as u64).saturating_mul(st.f_frsize as u64))
}

/// The filesystem type of the mount holding `dir` (longest mount point that prefixes it), from
/// `/proc/mounts`. None when it cannot be told (other OS, dir not visible).
pub fn fs_type_of(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let mounts = std::fs::read_to_string("/proc/mounts").ok()?;
    mount_fs(&mounts, &dir.to_string_lossy())
}

fn mount_fs(mounts: &str, dir: &str) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for line in mounts.lines() {
        let mut f = line.split_whitespace();
        let (_, Some(mp), Some(ty)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let inside = mp == "/" || dir == mp || dir.starts_with(&format!("{mp}/"));
        if inside && best.as_ref().is_none_or(|(l, _)| mp.len() > *l) {
            best = Some((mp.len(), ty.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

fn parse_version(v: &str) -> Option<(u32, u32, u32)> {
    let v = v.trim().trim_start_matches('v');
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.').map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// Hazards known for a NATS version (ARCHITECTURE.md "Known hazards").
pub fn hazards(version: &str) -> Vec<Hazard> {
    let mut out = Vec::new();
    let mut add = |t: &str| {
        out.push(Hazard {
            version: version.to_string(),
            text: t.to_string(),
        })
    };
    let Some(v) = parse_version(version) else {
        add("version not recognised: known hazards cannot be checked");
        return out;
    };
    if v.0 == 2 && v.1 == 10 && (20..=22).contains(&v.2) {
        add("2.10.20–2.10.22 can lose a stream after a crash; upgrade to 2.10.23 or later");
    }
    if v < (2, 12, 3) {
        add("peer-remove fixes landed in 2.12.3: removing a dead peer (pattern 2 repairs, wipe:) is unsafe before it");
    }
    if v < (2, 12, 14) || (v.1 == 14 && v < (2, 14, 4)) {
        add("disk I/O concurrency is limited before 2.12.14/2.14.4: object and fsync-bound rates run below later versions");
    }
    add("open Jepsen issues apply to every released version: #7545 (membership changes), #7549 (bit flips), #7567 (one OS crash plus pauses elsewhere)");
    out
}

/// Combine what the servers said into cluster facts.
pub fn summarise(
    servers: Vec<ServerFacts>,
    unreachable: Vec<(String, String)>,
    meta_cluster_size: Option<u32>,
    connected: Option<(String, String)>,
) -> ClusterFacts {
    let mut notes = Vec::new();
    let js: Vec<&ServerFacts> = servers.iter().filter(|s| s.jetstream).collect();
    let jetstream_servers = meta_cluster_size.unwrap_or(js.len() as u32).max(js.len() as u32);
    let (sync, sync_always) = {
        let always = js.iter().filter(|s| s.sync_always).count();
        if js.is_empty() {
            ("unknown".to_string(), false)
        } else if always == js.len() {
            ("always".to_string(), true)
        } else if always == 0 {
            let i = js[0].sync_interval_s.unwrap_or(120.0);
            (
                humantime::format_duration(Duration::from_secs_f64(i)).to_string(),
                false,
            )
        } else {
            notes.push(format!(
                "sync mode differs between servers: {always} of {} fsync always",
                js.len()
            ));
            ("mixed".to_string(), false)
        }
    };
    let fs: Vec<&str> = js.iter().filter_map(|s| s.store_fs.as_deref()).collect();
    let store_on_tmpfs = !fs.is_empty() && fs.len() == js.len() && fs.iter().all(|f| *f == "tmpfs");
    if store_on_tmpfs {
        notes.push("JetStream stores are on tmpfs: fsync costs nothing, so `always` measures as delayed".into());
    }
    let version = connected
        .as_ref()
        .map(|c| c.1.clone())
        .or_else(|| servers.first().map(|s| s.version.clone()));
    let mut versions: Vec<String> = servers.iter().map(|s| s.version.clone()).collect();
    versions.extend(version.clone());
    versions.sort();
    versions.dedup();
    if versions.len() > 1 {
        notes.push(format!("servers run different versions: {}", versions.join(", ")));
    }
    let hazards = versions.iter().flat_map(|v| hazards(v)).collect();
    ClusterFacts {
        max_replicas: jetstream_servers.min(5) as u8,
        jetstream_servers,
        servers,
        unreachable_monitors: unreachable,
        connected_server: connected.as_ref().map(|c| c.0.clone()),
        version,
        sync,
        sync_always,
        store_on_tmpfs,
        hazards,
        notes,
    }
}

/// Ask every monitoring URL for `/varz` and one of them for `/jsz` (the meta group's size).
pub fn detect(monitors: &[String], connected: Option<(String, String)>) -> ClusterFacts {
    let mut servers = Vec::new();
    let mut unreachable = Vec::new();
    let mut meta = None;
    for m in monitors {
        match monitor::varz(m, HTTP_TIMEOUT) {
            Ok(v) => {
                let f = server_facts(m, &v);
                if meta.is_none() && f.jetstream {
                    meta = monitor::jsz(m, "", HTTP_TIMEOUT)
                        .ok()
                        .and_then(|j| j.pointer("/meta_cluster/cluster_size").and_then(Value::as_u64))
                        .map(|n| n as u32);
                }
                if !servers.iter().any(|s: &ServerFacts| s.name == f.name) {
                    servers.push(f);
                }
            }
            Err(e) => unreachable.push((m.clone(), format!("{e:#}"))),
        }
    }
    let mut facts = summarise(servers, unreachable, meta, connected);
    if facts.servers.is_empty() {
        facts.notes.push(
            "no /varz answered: tags, sync mode and store limits are unknown; give --monitor http://HOST:8222 for each server"
                .into(),
        );
    }
    facts
}

/// `/varz cpu` (percent of one core) of each monitored server, by name.
pub fn cpu_percent(monitors: &[String]) -> Vec<(String, f64)> {
    monitors
        .iter()
        .filter_map(|m| {
            let v = monitor::varz(m, Duration::from_secs(1)).ok()?;
            Some((v.get("server_name")?.as_str()?.to_string(), v.get("cpu")?.as_f64()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_hazards_by_version() {
        let t = |v: &str| hazards(v).into_iter().map(|h| h.text).collect::<Vec<_>>().join("\n");
        assert!(t("2.10.21").contains("lose a stream"));
        assert!(!t("2.10.23").contains("lose a stream"));
        assert!(t("2.12.2").contains("peer-remove"));
        assert!(!t("2.12.3").contains("peer-remove"));
        assert!(t("2.15.1").contains("#7545") && t("2.15.1").contains("#7567"));
        assert!(!t("2.15.1").contains("concurrency"));
        assert!(t("2.14.3").contains("concurrency"));
        assert!(t("garbage").contains("not recognised"));
    }

    #[test]
    fn mount_lookup_takes_the_longest_prefix() {
        let m = "/dev/vda / ext4 rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0\ntmpfs /dev/shmx tmpfs rw 0 0\n";
        assert_eq!(mount_fs(m, "/dev/shm/js").as_deref(), Some("tmpfs"));
        assert_eq!(mount_fs(m, "/dev/shmother").as_deref(), Some("ext4"));
        assert_eq!(mount_fs(m, "/tmp/x").as_deref(), Some("ext4"));
    }

    #[test]
    fn varz_is_read_into_facts_and_summarised() {
        let v = serde_json::json!({
            "server_name": "n1", "version": "2.15.1", "tags": ["rack:a"], "cores": 2,
            "cluster": {"name": "c"},
            "jetstream": {"config": {"max_storage": 1000, "store_dir": "/nonexistent/x",
                "sync_interval": 120000000000u64, "sync_always": false, "unique_tag": "rack:"}}
        });
        let f = server_facts("http://10.0.0.1:8222", &v);
        assert_eq!(f.name, "n1");
        assert_eq!(f.unique_tag.as_deref(), Some("rack:"));
        assert_eq!(f.store_fs, None, "a remote server's filesystem is not visible");
        let mut g = f.clone();
        g.name = "n2".into();
        g.sync_always = true;
        let c = summarise(vec![f.clone(), g], vec![], Some(3), None);
        assert_eq!(c.jetstream_servers, 3);
        assert_eq!(c.max_replicas, 3);
        assert_eq!(c.sync, "mixed");
        let c = summarise(vec![f], vec![], None, None);
        assert_eq!((c.sync.as_str(), c.max_replicas), ("2m", 1));
    }
}
