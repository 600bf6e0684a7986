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

pub mod state;

use crate::emit::conf::{self, ServerConf};
use crate::monitor;
use crate::units::SyncMode;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub use state::LabState;

/// The oldest nats-server the lab and the emitted configuration support (`unique_tag` semantics,
/// `/healthz` options and the placement behaviour natsplan plans around).
pub const MIN_VERSION: (u32, u32) = (2, 10);

/// The command that installs a suitable nats-server, named in every "not found" error.
pub const INSTALL_HINT: &str = "scripts/install-nats-server";

/// Find the nats-server binary: `explicit` (`--nats-server PATH`), `$NATS_SERVER_BIN`, the project-local
/// install (`.tools/bin/nats-server` beside the crate, or beside the running binary's `../..`), then `PATH`.
/// The first candidate that exists is checked for its version; a missing or too-old binary is an error
/// naming the install script.
pub fn find_nats_server(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return check_binary(p, "--nats-server");
    }
    if let Some(p) = std::env::var_os("NATS_SERVER_BIN").filter(|v| !v.is_empty()) {
        return check_binary(Path::new(&p), "$NATS_SERVER_BIN");
    }
    for p in local_installs() {
        if p.is_file() {
            return check_binary(&p, "the project-local install");
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("nats-server");
            if p.is_file() {
                return check_binary(&p, "PATH");
            }
        }
    }
    bail!(
        "nats-server not found (looked at --nats-server, $NATS_SERVER_BIN, .tools/bin/nats-server and PATH); \
         install it with `{INSTALL_HINT}` (it prints the path) or pass --nats-server PATH"
    )
}

/// Where the project-local install may be: beside the crate, or found from the running binary
/// (`target/{debug,release}/natsplan` → `../../.tools`, an installed `bin/natsplan` → `../.tools`).
fn local_installs() -> Vec<PathBuf> {
    let mut v = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/nats-server")];
    if let Ok(exe) = std::env::current_exe() {
        let mut dir = exe.parent().map(Path::to_path_buf);
        for _ in 0..3 {
            let Some(d) = dir else { break };
            v.push(d.join(".tools/bin/nats-server"));
            dir = d.parent().map(Path::to_path_buf);
        }
    }
    v
}

fn check_binary(p: &Path, source: &str) -> Result<PathBuf> {
    if !p.is_file() {
        bail!(
            "nats-server from {source} ({}) does not exist; install it with `{INSTALL_HINT}` or pass --nats-server PATH",
            p.display()
        );
    }
    let v = nats_server_version(p).with_context(|| {
        format!(
            "nats-server from {source} ({}) does not run; reinstall it with `{INSTALL_HINT}`",
            p.display()
        )
    })?;
    if (v.0, v.1) < MIN_VERSION {
        bail!(
            "nats-server from {source} ({}) is v{}.{}.{}, older than the v{}.{} natsplan needs; \
             install a current one with `{INSTALL_HINT}`",
            p.display(),
            v.0,
            v.1,
            v.2,
            MIN_VERSION.0,
            MIN_VERSION.1
        );
    }
    Ok(p.to_path_buf())
}

/// How long `nats-server --version` may take: it answers in milliseconds; a binary that does not within
/// this is not a usable nats-server (a wrapper waiting for input, a hung mount).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// The version `nats-server --version` prints (`nats-server: v2.15.1`), asked within `VERSION_TIMEOUT`.
pub fn nats_server_version(p: &Path) -> Result<(u32, u32, u32)> {
    nats_server_version_within(p, VERSION_TIMEOUT)
}

/// `nats_server_version` with its own bound: the binary is killed (and reaped) once `limit` passes.
pub fn nats_server_version_within(p: &Path, limit: Duration) -> Result<(u32, u32, u32)> {
    let mut child = Command::new(p)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {} --version", p.display()))?;
    let t0 = Instant::now();
    while child.try_wait()?.is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{} --version did not answer within {:.0} s; is it a nats-server binary?",
                p.display(),
                limit.as_secs_f64()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    parse_version(&text).ok_or_else(|| anyhow!("cannot read a version from `{}`", text.trim()))
}

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let v = text.split_whitespace().find_map(|w| w.strip_prefix('v'))?;
    let mut it = v.split(['.', '-', '+']).map(|p| p.parse::<u32>().ok());
    Some((it.next()??, it.next()??, it.next().flatten().unwrap_or(0)))
}

/// One server of the lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSpec {
    /// `server_name`; also the folder under the lab dir.
    pub name: String,
    /// Placement tags as emitted (lower case).
    pub tags: Vec<String>,
    /// `max_file_store`; `None` leaves nats-server's default.
    pub max_file_store_bytes: Option<u64>,
}

impl NodeSpec {
    pub fn new(name: impl Into<String>, tags: &[&str]) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            max_file_store_bytes: None,
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
        let mut names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        for w in names.windows(2) {
            if w[0] == w[1] {
                bail!("server name '{}' appears twice in the lab", w[0]);
            }
        }
        for n in &self.nodes {
            let ok = !n.name.is_empty()
                && n.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
                && !n.name.starts_with('.');
            if !ok {
                bail!(
                    "server name '{}' cannot be a lab folder name; use letters, digits, '-', '_' or '.'",
                    n.name
                );
            }
        }
        Ok(())
    }
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
}

fn loopback() -> String {
    "127.0.0.1".into()
}

impl NodeInfo {
    pub fn client_url(&self) -> String {
        format!("nats://{}:{}", self.host, self.client_port)
    }
    pub fn monitor_url(&self) -> String {
        format!("http://{}:{}", self.host, self.monitor_port)
    }
}

/// Starts children from one long-lived thread: PR_SET_PDEATHSIG fires when the *thread* that forked
/// the child ends, so spawning from whatever thread calls `restart` (a tokio blocking thread that retires
/// after 10 s idle, say) would kill servers at random. This thread lives exactly as long as the `Lab`.
struct Spawner {
    tx: Option<mpsc::Sender<(Command, mpsc::Sender<std::io::Result<Child>>)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spawner {
    fn new() -> Spawner {
        let (tx, rx) = mpsc::channel::<(Command, mpsc::Sender<std::io::Result<Child>>)>();
        let thread = std::thread::Builder::new()
            .name("lab-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("cannot start the lab spawner thread");
        Spawner {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    fn spawn(&self, cmd: Command) -> std::io::Result<Child> {
        let (rtx, rrx) = mpsc::channel();
        self.tx
            .as_ref()
            .expect("spawner alive")
            .send((cmd, rtx))
            .map_err(|_| std::io::Error::other("lab spawner thread is gone"))?;
        rrx.recv()
            .map_err(|_| std::io::Error::other("lab spawner thread is gone"))?
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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
}

/// Attempts when a port was taken between choosing it and the server binding it.
const BIND_ATTEMPTS: usize = 4;

impl Lab {
    /// Start the cluster; servers die with this process. Waits for a meta leader (60 s at most).
    pub fn start(spec: LabSpec, nats_server: &Path) -> Result<Lab> {
        Lab::start_with(spec, nats_server, &StartOptions::default(), &StartHooks::default())
    }

    /// Start with options. `hooks.cancel` (set from a Ctrl-C handler) aborts the wait, killing what
    /// started; `hooks.on_spawned` sees the record of every attempt before its processes start and after
    /// each one has.
    pub fn start_with(spec: LabSpec, nats_server: &Path, opts: &StartOptions, hooks: &StartHooks) -> Result<Lab> {
        spec.validate()?;
        std::fs::create_dir_all(&spec.dir).with_context(|| format!("cannot create lab dir {}", spec.dir.display()))?;
        let dir = spec
            .dir
            .canonicalize()
            .with_context(|| format!("cannot resolve lab dir {}", spec.dir.display()))?;
        let spec = LabSpec { dir, ..spec };
        // Each server's folder is the lab's to overwrite and, on `lab down`, to delete: never take over one
        // that already holds something.
        for node in &spec.nodes {
            let folder = spec.dir.join(&node.name);
            if std::fs::read_dir(&folder).is_ok_and(|mut it| it.next().is_some()) {
                bail!(
                    "{} already exists and is not empty; the lab would overwrite it (use another --dir, or                      `natsplan lab down --dir {}` if an earlier lab left it)",
                    folder.display(),
                    spec.dir.display()
                );
            }
        }
        let mut last_err = None;
        for attempt in 0..BIND_ATTEMPTS {
            let mut lab = Lab {
                spec: spec.clone(),
                nats_server: nats_server.to_path_buf(),
                opts: opts.clone(),
                nodes: Vec::new(),
                children: Vec::new(),
                spawner: Spawner::new(),
                startup: Duration::ZERO,
            };
            match lab.try_start(hooks) {
                Ok(()) => return Ok(lab),
                Err(StartError::BindRace(e)) => {
                    // `lab` drops here: everything it started is killed before the retry.
                    last_err = Some(e.context(format!("port taken while starting (attempt {})", attempt + 1)));
                }
                Err(StartError::Other(e)) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| anyhow!("lab did not start")))
    }

    fn try_start(&mut self, hooks: &StartHooks) -> std::result::Result<(), StartError> {
        let n = self.spec.nodes.len();
        let ports = free_ports(3 * n).map_err(StartError::Other)?;
        for (i, node) in self.spec.nodes.iter().enumerate() {
            let base = self.spec.dir.join(&node.name);
            let host = match &self.opts.net {
                Some(net) => net
                    .get(i)
                    .map(|x| x.host.clone())
                    .ok_or_else(|| StartError::Other(anyhow!("no network namespace for server {}", node.name)))?,
                None => loopback(),
            };
            self.nodes.push(NodeInfo {
                name: node.name.clone(),
                host,
                tags: node.tags.iter().map(|t| t.trim().to_lowercase()).collect(),
                client_port: ports[3 * i],
                cluster_port: ports[3 * i + 1],
                monitor_port: ports[3 * i + 2],
                conf: base.join("nats-server.conf"),
                store_dir: base.join("store"),
                log: base.join("nats-server.log"),
                pid: 0,
            });
        }
        for i in 0..n {
            let text = self.render_conf(i);
            let info = &self.nodes[i];
            if info.store_dir.is_dir() {
                std::fs::remove_dir_all(&info.store_dir)
                    .with_context(|| format!("cannot empty {}", info.store_dir.display()))
                    .map_err(StartError::Other)?;
            }
            std::fs::create_dir_all(&info.store_dir)
                .and_then(|_| std::fs::write(&info.conf, text))
                .with_context(|| format!("cannot write {}", info.conf.display()))
                .map_err(StartError::Other)?;
            // A fresh log per start, so a bind error from an earlier attempt is not read again, and an
            // empty store, so no meta state from an earlier attempt or lab is replayed.
            let _ = std::fs::remove_file(&info.log);
        }
        let t0 = Instant::now();
        // The record exists before any process can outlive it: first with every server's configuration
        // (pid 0; `lab down` finds a server by its configuration path), then again after each spawn with
        // its pid. A natsplan killed between a fork and the next record leaves nothing `lab down` misses.
        if let Some(f) = hooks.on_spawned {
            f(&self.state()).map_err(StartError::Other)?;
        }
        for i in 0..n {
            self.spawn(i).map_err(StartError::Other)?;
            if let Some(f) = hooks.on_spawned {
                f(&self.state()).map_err(StartError::Other)?;
            }
        }
        self.wait_ready(t0, hooks.cancel)?;
        // Servers start together, so their first route dials to peers not yet listening are refused and
        // retried 1 s later (nats-server's route connect delay); the duplicates that retry makes are
        // closed at once, and traffic or interest riding on them is lost. Measured with three agents
        // publishing into an R1 stream right after start: 2 runs in 58 lost publishes or a stream
        // create, none in 26 that began 1 s later. So a multi-server lab is ready only once that round
        // is over.
        if n > 1 {
            while t0.elapsed() < ROUTE_SETTLE {
                if hooks.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                    return Err(StartError::Other(anyhow!("interrupted while the lab was starting")));
                }
                std::thread::sleep(Duration::from_millis(50).min(ROUTE_SETTLE.saturating_sub(t0.elapsed())));
            }
        }
        self.startup = t0.elapsed();
        Ok(())
    }

    /// The configuration of server `i` with its loopback ports.
    fn render_conf(&self, i: usize) -> String {
        let info = &self.nodes[i];
        let spec = &self.spec.nodes[i];
        let routes = self
            .nodes
            .iter()
            .filter(|o| o.name != info.name)
            .map(|o| format!("nats-route://{}:{}", o.host, o.cluster_port))
            .collect();
        conf::render(&ServerConf {
            server_name: info.name.clone(),
            client_listen: format!("{}:{}", info.host, info.client_port),
            monitor_listen: Some(format!("{}:{}", info.host, info.monitor_port)),
            tags: info.tags.clone(),
            store_dir: info.store_dir.to_string_lossy().into_owned(),
            max_file_store_bytes: spec.max_file_store_bytes,
            max_memory_store_bytes: self.opts.max_memory_store_bytes,
            unique_tag: self.spec.unique_tag.clone(),
            sync: self.spec.sync,
            max_ha_assets: None,
            cluster_name: self.spec.cluster_name.clone(),
            cluster_listen: format!("{}:{}", info.host, info.cluster_port),
            routes,
            header: vec![format!("natsplan lab server {} (loopback only)", info.name)],
            client_tls: self.spec.client_tls.clone(),
        })
    }

    fn spawn(&mut self, i: usize) -> Result<()> {
        let info = &self.nodes[i];
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&info.log)
            .with_context(|| format!("cannot open {}", info.log.display()))?;
        let log2 = log.try_clone()?;
        let mut cmd = Command::new(&self.nats_server);
        cmd.arg("-c")
            .arg(&info.conf)
            .stdin(Stdio::null())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log2));
        let detached = self.opts.detached;
        // The namespace path, made before the fork: the child only opens it.
        let netns = match self.opts.net.as_ref().and_then(|n| n.get(i)) {
            Some(n) => Some(
                std::ffi::CString::new(format!("/var/run/netns/{}", n.netns))
                    .map_err(|_| anyhow!("bad network namespace name {:?}", n.netns))?,
            ),
            None => None,
        };
        // SAFETY: the closure runs in the forked child before exec and only calls async-signal-safe
        // functions (setsid, prctl, getppid, open, setns, close).
        unsafe {
            use std::os::unix::process::CommandExt;
            cmd.pre_exec(move || {
                // Own session: a Ctrl-C in the terminal reaches natsplan, which cleans up, not the servers
                // directly (and `lab up` servers survive the terminal closing).
                libc::setsid();
                if !detached {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The parent may have died between fork and prctl.
                    if libc::getppid() == 1 {
                        return Err(std::io::Error::other("parent exited during spawn"));
                    }
                }
                if let Some(path) = &netns {
                    let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let r = libc::setns(fd, libc::CLONE_NEWNET);
                    libc::close(fd);
                    if r != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = self
            .spawner
            .spawn(cmd)
            .with_context(|| format!("cannot start {}", self.nats_server.display()))?;
        self.nodes[i].pid = child.id();
        if self.children.len() <= i {
            self.children.resize_with(i + 1, || None);
        }
        self.children[i] = Some(child);
        Ok(())
    }

    /// Wait until every server is healthy and they agree on a meta leader that sees all peers current.
    fn wait_ready(&mut self, t0: Instant, cancel: Option<&AtomicBool>) -> std::result::Result<(), StartError> {
        let probe = Duration::from_millis(500);
        loop {
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(StartError::Other(anyhow!("interrupted while the lab was starting")));
            }
            for i in 0..self.nodes.len() {
                if let Some(status) = self.children[i].as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                    let tail = log_tail(&self.nodes[i].log, 2000);
                    let e = anyhow!(
                        "nats-server {} exited during start-up ({status}); its log ({}) ends:\n{}",
                        self.nodes[i].name,
                        self.nodes[i].log.display(),
                        tail.trim_end()
                    );
                    let lower = tail.to_lowercase();
                    if lower.contains("address already in use") || lower.contains("bind:") {
                        return Err(StartError::BindRace(e));
                    }
                    return Err(StartError::Other(e));
                }
            }
            let last = match self.ready_check(probe) {
                Ok(()) => return Ok(()),
                Err(e) => format!("{e:#}"),
            };
            if t0.elapsed() > self.opts.timeout {
                return Err(StartError::Other(anyhow!(
                    "the lab cluster was not ready after {:.0} s: {last}; server logs are under {}",
                    self.opts.timeout.as_secs_f64(),
                    self.spec.dir.display()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn ready_check(&self, probe: Duration) -> Result<()> {
        let n = self.nodes.len();
        if n == 1 {
            // Standalone: no meta group to wait for.
            let node = &self.nodes[0];
            if !monitor::healthz(&node.monitor_url(), "", probe)? {
                bail!("{} is not healthy yet", node.name);
            }
            return Ok(());
        }
        // The meta leader first (/jsz is silent), /healthz last: every failed health check is a warning
        // in the server's log, and polling it from the start fills the logs.
        let mut leader: Option<String> = None;
        for node in &self.nodes {
            let jsz = monitor::jsz(&node.monitor_url(), "", probe)?;
            let l = monitor::meta_leader(&jsz).ok_or_else(|| anyhow!("{} sees no meta leader yet", node.name))?;
            match &leader {
                Some(prev) if *prev != l => bail!("servers disagree on the meta leader ({prev} vs {l})"),
                _ => leader = Some(l),
            }
        }
        let leader = leader.ok_or_else(|| anyhow!("no servers"))?;
        let node = self
            .nodes
            .iter()
            .find(|x| x.name == leader)
            .ok_or_else(|| anyhow!("meta leader {leader} is not a lab server"))?;
        let jsz = monitor::jsz(&node.monitor_url(), "", probe)?;
        let current = jsz
            .pointer("/meta_cluster/replicas")
            .and_then(|r| r.as_array())
            .map(|r| {
                r.iter()
                    .filter(|p| p.get("current").and_then(|c| c.as_bool()) == Some(true))
                    .count()
            })
            .unwrap_or(0);
        if current + 1 < n {
            bail!("meta leader {leader} sees {} of {} peers current", current + 1, n);
        }
        for node in &self.nodes {
            if !monitor::healthz(&node.monitor_url(), "", probe)? {
                bail!("{} is not healthy yet", node.name);
            }
        }
        Ok(())
    }

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
            .map(|(_, n)| (n.name.clone(), n.monitor_url()))
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
                loop {
                    match c.try_wait() {
                        Ok(Some(_)) | Err(_) => break,
                        Ok(None) if Instant::now() > deadline => {
                            let _ = c.kill();
                            let _ = c.wait();
                            break;
                        }
                        Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                    }
                }
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
        }
    }

    /// Leave the servers running after this value is gone (for `lab up`); returns their record.
    /// Only meaningful for a lab started detached: otherwise they die with this process anyway.
    pub fn detach(mut self) -> LabState {
        let st = self.state();
        for c in self.children.iter_mut() {
            c.take(); // dropping a Child neither kills nor waits
        }
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

/// How long after its servers start a multi-server lab's route mesh has settled: the route connect
/// delay (1 s) after which refused first dials are retried, and a margin for the duplicates to close.
const ROUTE_SETTLE: Duration = Duration::from_millis(1500);

/// A process's state letter (R, S, T, Z, ...), `None` when it is gone. For a stop, every thread counts:
/// the process reads as stopped (`T`) only once all its threads are.
fn proc_state(pid: u32) -> Option<char> {
    let letter = |path: String| -> Option<char> {
        let stat = std::fs::read_to_string(path).ok()?;
        stat.rsplit(')').next()?.split_whitespace().next()?.chars().next()
    };
    let main = letter(format!("/proc/{pid}/stat"))?;
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    for t in tasks.flatten() {
        if let Some(st) = letter(format!("{}/stat", t.path().display())) {
            if st != 'T' && st != 't' {
                // Some thread still runs (or has resumed): report that.
                return Some(if main == 'T' || main == 't' { st } else { main });
            }
        }
    }
    Some(main)
}

/// `n` distinct free TCP ports on 127.0.0.1. All listeners are held until every port is chosen, so the
/// ports differ; another process may still take one before nats-server binds it (hence the retry).
pub fn free_ports(n: usize) -> Result<Vec<u16>> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let l = TcpListener::bind(("127.0.0.1", 0)).context("cannot bind a free port on 127.0.0.1")?;
        held.push(l);
    }
    held.iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect::<std::io::Result<Vec<u16>>>()
        .map_err(Into::into)
}

/// The last `max` bytes of a log file (for error messages).
pub fn log_tail(path: &Path, max: u64) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::from("(no log)");
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    s
}

/// Set by the signal handler `InterruptGuard` installs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// While alive, SIGINT, SIGTERM and SIGHUP set a flag (`flag()`) instead of killing natsplan, so a start
/// in progress can kill what it started and leave nothing running. Drop restores the previous handlers.
pub struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let mut previous = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: sigaction with a handler that only stores to an atomic; the old action is kept and
            // restored on drop.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &new, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        InterruptGuard { previous }
    }

    pub fn flag(&self) -> &'static AtomicBool {
        &INTERRUPTED
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for (sig, old) in self.previous.drain(..) {
            // SAFETY: restores the action saved by `install`.
            unsafe {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
        }
    }
}

/// An RAII lab for tests: a temporary directory and a running cluster, both gone when it drops; its
/// servers die with the test process even if the test is killed.
pub struct TestCluster {
    // Field order matters: the lab (servers) drops before the directory it writes to.
    pub lab: Lab,
    _dir: tempfile::TempDir,
}

impl TestCluster {
    /// `nodes` untagged servers `n1`..`nN`.
    pub fn start(nodes: usize) -> Result<TestCluster> {
        TestCluster::start_spec(|dir| LabSpec::plain(nodes, dir))
    }

    /// A cluster from a spec built for the temporary directory it is given. With
    /// `NATSPLAN_KEEP_TEST_LABS` set, the directory (configurations, stores, server logs) is left behind
    /// for a look after a failed test; its path goes to stderr.
    pub fn start_spec(make: impl FnOnce(PathBuf) -> LabSpec) -> Result<TestCluster> {
        let mut dir = tempfile::Builder::new()
            .prefix("natsplan-lab-")
            .tempdir()
            .context("cannot create a temporary lab dir")?;
        if std::env::var_os("NATSPLAN_KEEP_TEST_LABS").is_some() {
            dir.disable_cleanup(true);
            eprintln!("test lab kept in {}", dir.path().display());
        }
        let bin = find_nats_server(None)?;
        let lab = Lab::start(make(dir.path().to_path_buf()), &bin)?;
        Ok(TestCluster { lab, _dir: dir })
    }

    /// Client URLs joined with commas (the `NATS_URL` / `nats --server` form).
    pub fn url(&self) -> String {
        self.lab.client_urls().join(",")
    }
}

impl std::ops::Deref for TestCluster {
    type Target = Lab;
    fn deref(&self) -> &Lab {
        &self.lab
    }
}

impl std::ops::DerefMut for TestCluster {
    fn deref_mut(&mut self) -> &mut Lab {
        &mut self.lab
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
