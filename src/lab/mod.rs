//! The lab: a plan's cluster run locally with real nats-server processes on loopback.
//!
//! `Lab::start` writes one configuration per server (rendered by `emit::conf`, so the lab runs exactly the
//! tags, `unique_tag`, store size and sync mode that `emit` writes), starts the servers on free ports on
//! 127.0.0.1 (retrying the whole start on a bind race), and waits until every server is healthy and the
//! meta group has a leader that sees every peer. Servers started for a test die with the test process
//! (PR_SET_PDEATHSIG from a spawner thread that lives as long as the `Lab`), and `Drop` kills and reaps
//! them; `natsplan lab up` starts them detached and records their pids in `DIR/lab.json` so `lab down`
//! (or the next `lab up`) can clean up after a crash. Process control (`kill`, `sigstop`, `sigcont`,
//! `restart`) is here for fault injection.

mod binary;
pub mod power;
mod process;
pub mod spec;
mod start;
pub mod state;
pub mod status;
mod test_cluster;

#[allow(unused_imports)]
use self::{binary::*, process::*, start::*};
pub use binary::{
    find_nats_server, nats_server_version, nats_server_version_within, INSTALL_HINT, MIN_VERSION, VERSION_TIMEOUT,
};
pub use power::{PowerFs, PowerFsProcess};
pub use process::{free_ports, log_tail, InterruptGuard};
pub use test_cluster::TestCluster;

use crate::monitor;
use crate::units::SyncMode;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use state::{LabLock, LabPlan, LabState};

/// One server of the lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// `server_name`; also the folder under the lab dir.
    pub name: String,
    /// Placement tags as emitted (lower case).
    pub tags: Vec<String>,
    /// `max_file_store`; `None` leaves nats-server's default.
    pub max_file_store_bytes: Option<u64>,
    /// The planned volume this server stands for (`servers[].volume` of the layout), when the lab runs one.
    pub volume: Option<String>,
}

impl NodeSpec {
    pub fn new(name: impl Into<String>, tags: &[&str]) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            max_file_store_bytes: None,
            volume: None,
        }
    }
}

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabSpec {
    pub nodes: Vec<NodeSpec>,
    pub cluster_name: String,
    pub sync: SyncMode,
    /// `jetstream.unique_tag`, e.g. `rack:`.
    pub unique_tag: Option<String>,
    /// Configurations, stores and logs go under `dir/<server>/`.
    pub dir: PathBuf,
    /// TLS on every server's client port (the live TLS tests).
    pub client_tls: Option<crate::emit::conf::ClientTls>,
}

impl LabSpec {
    /// `n` untagged servers `n1`..`nN` in cluster `lab`, default sync.
    pub fn plain(nodes: usize, dir: impl Into<PathBuf>) -> LabSpec {
        LabSpec {
            nodes: (1..=nodes).map(|i| NodeSpec::new(format!("n{i}"), &[])).collect(),
            cluster_name: "lab".into(),
            sync: SyncMode::Interval(120),
            unique_tag: None,
            dir: dir.into(),
            client_tls: None,
        }
    }

    fn validate(&self) -> Result<()> {
        if self.nodes.is_empty() {
            bail!("a lab needs at least one server");
        }
        crate::input::limits::LAB_SERVERS
            .check_usize(self.nodes.len())
            .map_err(|e| anyhow!("a lab of {} servers: {e}", self.nodes.len()))?;
        let mut names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        for w in names.windows(2) {
            if w[0] == w[1] {
                bail!("server name '{}' appears twice in the lab", w[0]);
            }
        }
        for n in &self.nodes {
            if !is_folder_name(&n.name) {
                bail!(
                    "server name '{}' cannot be a lab folder name; use letters, digits, '-', '_' or '.'",
                    n.name
                );
            }
        }
        Ok(())
    }
}

/// Whether `name` can be a lab server's folder under the lab folder: letters, digits, `-`, `_` and `.`,
/// not starting with `.` (so never `..` or a hidden file), at most `MAX_NAME_BYTES`.
pub(crate) fn is_folder_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= crate::input::limits::MAX_NAME_BYTES
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.')
}

/// How `start_with` runs.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// Children outlive this process (for `natsplan lab up`); otherwise they die with it.
    pub detached: bool,
    /// Give up waiting for a healthy cluster after this long.
    pub timeout: Duration,
    /// Write a configuration with this `max_memory_store` (keeps many lab servers from each claiming
    /// 75 % of RAM); `None` leaves nats-server's default.
    pub max_memory_store_bytes: Option<u64>,
    /// One network namespace per server (fault injection's `net:` partitions): server `i` starts inside
    /// `net[i].netns` and listens on `net[i].host`. `None`: every server on 127.0.0.1 in our namespace.
    pub net: Option<Vec<NodeNet>>,
    /// Each server's store on the power-loss layer (`powerfs`), mounted after the store folder is made
    /// and before nats-server starts: in this process, or (detached) one `natsplan powerfs` per server.
    pub power_fs: Option<PowerFs>,
    /// The routes' failure detection (`cluster { ping_interval, ping_max }`): a peer that answers no
    /// ping for about interval × (max + 1) is dropped. None: nats-server's (2 min, at most 30 s for
    /// routes, and 2 pings).
    pub route_ping: Option<(Duration, u32)>,
}

/// Where one server lives on the network when the lab runs in network namespaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeNet {
    /// Name under /var/run/netns (as `ip netns` shows it).
    pub netns: String,
    /// The server's address inside it (a private test range the caller set up).
    pub host: String,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            detached: false,
            timeout: Duration::from_secs(60),
            max_memory_store_bytes: Some(256 << 20),
            net: None,
            power_fs: None,
            route_ping: None,
        }
    }
}

/// Called with the lab's record before its processes are started (pids 0) and after each one is.
pub type OnSpawned<'a> = dyn Fn(&LabState) -> Result<()> + 'a;

/// Callbacks into a start: see `Lab::start_with`.
#[derive(Default)]
pub struct StartHooks<'a> {
    pub cancel: Option<&'a AtomicBool>,
    pub on_spawned: Option<&'a OnSpawned<'a>>,
}

/// A running server's addresses and files; what `DIR/lab.json` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub name: String,
    /// Address the server listens on: 127.0.0.1, or its network namespace's address.
    #[serde(default = "loopback")]
    pub host: String,
    pub tags: Vec<String>,
    pub client_port: u16,
    pub cluster_port: u16,
    pub monitor_port: u16,
    pub conf: PathBuf,
    pub store_dir: PathBuf,
    pub log: PathBuf,
    /// 0 while stopped.
    pub pid: u32,
    /// The planned volume this server stands for, when the lab runs a layout (absent otherwise, and in an
    /// older lab.json): the lab's store is a folder, this says what it would be on the site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
}

fn loopback() -> String {
    "127.0.0.1".into()
}

/// The `server_name` a configuration gives (unquoted), or None.
pub fn conf_server_name(conf: &str) -> Option<String> {
    conf.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix("server_name")?;
        let v = rest.trim_start().strip_prefix([':', '='])?.trim();
        Some(v.trim_matches(|c| c == '"' || c == '\'').to_string()).filter(|v| !v.is_empty())
    })
}

impl NodeInfo {
    /// The name the cluster knows this server by: its configuration's `server_name`, which a fault drill's
    /// rejoin changes (`n4` runs as `n4-w` after `rejoin_as_new`), else the folder's name. The meta leader,
    /// stream leaders and peers are reported under it.
    pub fn server_name(&self) -> String {
        std::fs::read_to_string(&self.conf)
            .ok()
            .and_then(|t| conf_server_name(&t))
            .unwrap_or_else(|| self.name.clone())
    }
    pub fn client_url(&self) -> String {
        format!("nats://{}:{}", self.host, self.client_port)
    }
    pub fn monitor_url(&self) -> String {
        format!("http://{}:{}", self.host, self.monitor_port)
    }
}

/// A running lab cluster. Dropping it kills and reaps every server (unless `detach` was called).
pub struct Lab {
    spec: LabSpec,
    nats_server: PathBuf,
    opts: StartOptions,
    nodes: Vec<NodeInfo>,
    children: Vec<Option<Child>>,
    spawner: Spawner,
    /// Time from the first spawn to a healthy cluster with a meta leader.
    startup: Duration,
    /// The system account user's password (`emit::conf::SYSTEM_USER`): the configurations name
    /// `$NATS_SYSTEM_PASSWORD`, and every server gets this value in that variable when it is spawned.
    system_password: String,
    /// The stores' power-loss layers (last: they unmount after the servers are dead).
    layers: power::Layers,
}

impl Lab {
    pub fn spec(&self) -> &LabSpec {
        &self.spec
    }
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }
    pub fn dir(&self) -> &Path {
        &self.spec.dir
    }
    pub fn nats_server(&self) -> &Path {
        &self.nats_server
    }
    /// Time from the first spawn until the cluster was ready.
    pub fn startup(&self) -> Duration {
        self.startup
    }
    /// The system account's user and password (the lab carries the system account `emit` writes, so the
    /// cluster's recovery requests — `$JS.API.SERVER.REMOVE` and the like — can be made on it).
    pub fn system_user(&self) -> (&str, &str) {
        (crate::emit::conf::SYSTEM_USER, &self.system_password)
    }
    pub fn client_urls(&self) -> Vec<String> {
        self.nodes.iter().map(NodeInfo::client_url).collect()
    }
    pub fn monitor_urls(&self) -> Vec<String> {
        self.nodes.iter().map(NodeInfo::monitor_url).collect()
    }
    /// Index of a server by name.
    pub fn node(&self, name: &str) -> Result<usize> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| anyhow!("no lab server named '{name}'"))
    }

    /// Every stream with its leader and peers, as the running servers report it (`/jsz`).
    pub fn streams(&self) -> Vec<monitor::StreamPlacement> {
        let live: Vec<(String, String)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, _)| self.children.get(*i).is_some_and(Option::is_some))
            .map(|(_, n)| (n.server_name(), n.monitor_url()))
            .collect();
        monitor::cluster_streams(&live, Duration::from_secs(2))
    }

    /// Each running server's tags as it reports them (`/varz`), by server name.
    pub fn live_tags(&self) -> Result<Vec<(String, Vec<String>)>> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            if self.children.get(i).is_some_and(Option::is_some) {
                let varz = monitor::varz(&n.monitor_url(), Duration::from_secs(2))?;
                v.push((n.name.clone(), monitor::tags(&varz)));
            }
        }
        Ok(v)
    }

    /// The current meta leader, asked of the first server that answers.
    pub fn meta_leader(&self) -> Result<String> {
        let mut last = anyhow!("no server is running");
        for (i, n) in self.nodes.iter().enumerate() {
            if self.children.get(i).map(Option::is_none).unwrap_or(true) {
                continue;
            }
            match monitor::jsz(&n.monitor_url(), "", Duration::from_secs(2)) {
                Ok(j) => {
                    if let Some(l) = monitor::meta_leader(&j) {
                        return Ok(l);
                    }
                    last = anyhow!("{} sees no meta leader", n.name);
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// Wait (up to `timeout`) until the cluster is healthy again, e.g. after a restart.
    pub fn wait_healthy(&mut self, timeout: Duration) -> Result<()> {
        let saved = self.opts.timeout;
        self.opts.timeout = timeout;
        let r = self.wait_ready(Instant::now(), None);
        self.opts.timeout = saved;
        r.map_err(StartError::into_inner)
    }

    fn signal(&self, i: usize, sig: libc::c_int) -> Result<()> {
        let pid = self.nodes.get(i).map(|n| n.pid).unwrap_or(0);
        if pid == 0 || self.children.get(i).map(Option::is_none).unwrap_or(true) {
            bail!("lab server {i} is not running");
        }
        // SAFETY: kill(2) on a pid we spawned and have not reaped yet (so it cannot be reused).
        if unsafe { libc::kill(pid as libc::pid_t, sig) } != 0 {
            return Err(std::io::Error::last_os_error()).context(format!("cannot signal {}", self.nodes[i].name));
        }
        Ok(())
    }

    /// SIGKILL server `i` and reap it (a crash: page cache survives, store intact).
    pub fn kill(&mut self, i: usize) -> Result<()> {
        self.signal(i, libc::SIGCONT).ok(); // a stopped process dies on SIGKILL anyway; harmless
        self.signal(i, libc::SIGKILL)?;
        if let Some(mut c) = self.children[i].take() {
            let _ = c.wait();
        }
        self.nodes[i].pid = 0;
        Ok(())
    }

    /// SIGSTOP server `i` (a stall: GC pause, VM freeze). Returns once the kernel reports it stopped:
    /// signal delivery is asynchronous, and a thread already running could otherwise answer one more request.
    pub fn sigstop(&mut self, i: usize) -> Result<()> {
        self.signal(i, libc::SIGSTOP)?;
        self.wait_state(i, |st| st == 'T' || st == 't')
    }

    /// SIGCONT server `i`; returns once it runs again.
    pub fn sigcont(&mut self, i: usize) -> Result<()> {
        self.signal(i, libc::SIGCONT)?;
        self.wait_state(i, |st| st != 'T' && st != 't')
    }

    fn wait_state(&self, i: usize, ok: impl Fn(char) -> bool) -> Result<()> {
        let pid = self.nodes[i].pid;
        let t0 = Instant::now();
        loop {
            match proc_state(pid) {
                Some(st) if ok(st) => return Ok(()),
                Some(_) => {}
                None => bail!("lab server {} exited", self.nodes[i].name),
            }
            if t0.elapsed() > Duration::from_secs(5) {
                bail!("lab server {} did not change state after a signal", self.nodes[i].name);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Kill server `i` if it runs, then start it again on the same ports and store.
    pub fn restart(&mut self, i: usize) -> Result<()> {
        if i >= self.nodes.len() {
            bail!("no lab server {i}");
        }
        if self.children[i].is_some() {
            self.kill(i)?;
        }
        self.spawn(i)
    }

    /// Server `i`'s host loses power: SIGKILL (if it runs), then its store's layer drops every write not
    /// yet durable and is mounted again. Restart it with `restart`. Only for a lab started with
    /// `power_fs` in this process.
    pub fn power_cut(&mut self, i: usize) -> Result<crate::powerfs::LossReport> {
        if i >= self.nodes.len() {
            bail!("no lab server {i}");
        }
        if self.is_running(i) {
            self.kill(i)?;
        }
        self.layers.cut(i)
    }

    /// Whether the stores sit on the power-loss layer.
    pub fn on_power_fs(&self) -> bool {
        !matches!(self.layers, power::Layers::None)
    }

    /// Whether server `i` has a live process (reaping it if it exited).
    pub fn is_running(&mut self, i: usize) -> bool {
        match self.children.get_mut(i).and_then(Option::as_mut) {
            Some(c) => match c.try_wait() {
                Ok(None) => true,
                _ => {
                    self.children[i] = None;
                    self.nodes[i].pid = 0;
                    false
                }
            },
            None => false,
        }
    }

    /// Stop every server: SIGTERM (a clean shutdown), SIGKILL after 5 s, reap.
    pub fn stop(&mut self) -> Result<()> {
        for i in 0..self.children.len() {
            if self.children[i].is_some() {
                let _ = self.signal(i, libc::SIGCONT);
                let _ = self.signal(i, libc::SIGTERM);
            }
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        for i in 0..self.children.len() {
            if let Some(mut c) = self.children[i].take() {
                reap_or_kill(&mut c, deadline, Duration::from_millis(50));
                self.nodes[i].pid = 0;
            }
        }
        Ok(())
    }

    /// What `DIR/lab.json` records.
    pub fn state(&self) -> LabState {
        LabState {
            cluster_name: self.spec.cluster_name.clone(),
            nats_server: self.nats_server.clone(),
            dir: self.spec.dir.clone(),
            unique_tag: self.spec.unique_tag.clone(),
            sync: self.spec.sync.config_value(),
            nodes: self.nodes.clone(),
            created_dir: false,
            power_fs: self.layers.records(),
            system_user: Some(state::SystemUser {
                user: crate::emit::conf::SYSTEM_USER.into(),
                password: self.system_password.clone(),
            }),
            plan: None,
        }
    }

    /// Leave the servers running after this value is gone (for `lab up`); returns their record.
    /// Only meaningful for a lab started detached: otherwise they die with this process anyway.
    pub fn detach(mut self) -> LabState {
        let st = self.state();
        for c in self.children.iter_mut() {
            c.take(); // dropping a Child neither kills nor waits
        }
        self.layers.forget();
        st
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in self.children.iter_mut() {
            if let Some(mut c) = c.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        // The servers are dead: nothing uses the stores any more.
        self.layers.stop();
    }
}

enum StartError {
    /// A server could not bind its port: retry on fresh ports.
    BindRace(anyhow::Error),
    Other(anyhow::Error),
}

impl StartError {
    fn into_inner(self) -> anyhow::Error {
        match self {
            StartError::BindRace(e) | StartError::Other(e) => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_goes_by_its_configurations_server_name_once_a_drill_renames_it() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("nats-server.conf");
        let node = NodeInfo {
            name: "n4".into(),
            host: loopback(),
            tags: vec![],
            client_port: 1,
            cluster_port: 2,
            monitor_port: 3,
            conf: conf.clone(),
            store_dir: "s".into(),
            log: "l".into(),
            pid: 0,
            volume: None,
        };
        // No file (or no server_name line): the folder's name.
        assert_eq!(node.server_name(), "n4");
        std::fs::write(&conf, "listen: 127.0.0.1:1\nserver_name: n4\n").unwrap();
        assert_eq!(node.server_name(), "n4");
        // A rejoin under a new name (faults' `rejoin_as_new`): the meta leader is reported as n4-w (the full
        // `verify --faults --recover --nodes 5` of 5 December failed leader-replace on "meta leader n4-w is
        // not a lab server" after follower-wipe renamed n4).
        std::fs::write(&conf, "listen: 127.0.0.1:1\nserver_name: \"n4-w\"\n").unwrap();
        assert_eq!(node.server_name(), "n4-w");
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("nats-server: v2.15.1\n"), Some((2, 15, 1)));
        assert_eq!(parse_version("nats-server: v2.9.25"), Some((2, 9, 25)));
        assert_eq!(parse_version("nats-server: v2.12.0-RC.1"), Some((2, 12, 0)));
        assert_eq!(parse_version("garbage"), None);
    }

    #[test]
    fn a_missing_binary_names_the_install_script() {
        let e = find_nats_server(Some(Path::new("/nonexistent/nats-server"))).unwrap_err();
        let t = format!("{e:#}");
        assert!(t.contains("--nats-server") && t.contains(INSTALL_HINT), "{t}");
    }

    #[test]
    fn a_too_old_binary_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("nats-server");
        std::fs::write(&fake, "#!/bin/sh\necho 'nats-server: v2.9.25'\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let t = format!("{:#}", find_nats_server(Some(&fake)).unwrap_err());
        assert!(
            t.contains("v2.9.25") && t.contains("older") && t.contains(INSTALL_HINT),
            "{t}"
        );
    }

    #[test]
    fn specs_reject_duplicate_and_unsafe_names() {
        let mut s = LabSpec::plain(2, "/tmp/x");
        s.nodes[1].name = "n1".into();
        assert!(s.validate().unwrap_err().to_string().contains("twice"));
        s.nodes[1].name = "../evil".into();
        assert!(s.validate().unwrap_err().to_string().contains("folder"));
        assert!(LabSpec::plain(0, "/tmp/x").validate().is_err());
    }

    #[test]
    fn free_ports_are_distinct() {
        let mut p = free_ports(12).unwrap();
        p.sort_unstable();
        p.dedup();
        assert_eq!(p.len(), 12);
    }
}
