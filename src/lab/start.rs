//! Starting a lab: configurations, spawns (recorded before and after each), readiness.

use super::*;
use crate::emit::conf::{self, ServerConf};
use crate::monitor;
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Attempts when a port was taken between choosing it and the server binding it.
pub(super) const BIND_ATTEMPTS: usize = 4;

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
        // Recorded resolved: `lab down` signals a process only when its executable is this binary.
        let nats_server = &nats_server.canonicalize().unwrap_or_else(|_| nats_server.to_path_buf());
        // Each server's folder is the lab's to overwrite and, on `lab down`, to delete: never take over one
        // that already holds something, nor write through a symbolic link to a folder elsewhere.
        for node in &spec.nodes {
            let folder = spec.dir.join(&node.name);
            if folder.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
                bail!(
                    "{} is a symbolic link; the lab writes and later deletes its server folders, so it only uses \
                     real folders inside --dir (remove the link, or use another --dir)",
                    folder.display()
                );
            }
            if std::fs::read_dir(&folder).is_ok_and(|mut it| it.next().is_some()) {
                bail!(
                    "{} already exists and is not empty; the lab would overwrite it (use another --dir, or                      `natsplan lab down --dir {}` if an earlier lab left it)",
                    folder.display(),
                    spec.dir.display()
                );
            }
        }
        let mut last_err = None;
        // The system account user's password: random per lab, given to each server in its environment.
        let system_password = {
            use rand::distr::{Alphanumeric, SampleString};
            Alphanumeric.sample_string(&mut rand::rng(), 24)
        };
        for attempt in 0..BIND_ATTEMPTS {
            let mut lab = Lab {
                spec: spec.clone(),
                nats_server: nats_server.to_path_buf(),
                opts: opts.clone(),
                nodes: Vec::new(),
                children: Vec::new(),
                spawner: Spawner::new(),
                startup: Duration::ZERO,
                system_password: system_password.clone(),
                layers: power::Layers::None,
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

    pub(super) fn try_start(&mut self, hooks: &StartHooks) -> std::result::Result<(), StartError> {
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
                volume: node.volume.clone(),
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
        // The stores go on the power-loss layer now: made and empty, and no server has opened them yet.
        if let Some(pf) = self.opts.power_fs {
            let stores: Vec<PathBuf> = self.nodes.iter().map(|n| n.store_dir.clone()).collect();
            self.layers = power::Layers::mount(&stores, pf, self.opts.detached).map_err(StartError::Other)?;
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
    pub(super) fn render_conf(&self, i: usize) -> String {
        let info = &self.nodes[i];
        let spec = &self.spec.nodes[i];
        let routes = self
            .nodes
            .iter()
            .filter(|o| o.name != info.name)
            .map(|o| format!("nats-route://{}:{}", o.host, o.cluster_port))
            .collect();
        // The system account `emit` writes (anonymous clients keep the global account and its JetStream).
        let text = conf::render_secured(
            &ServerConf {
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
            },
            &conf::Security::system_only(),
        );
        match self.opts.route_ping {
            Some((every, max)) => with_route_ping(&text, every, max),
            None => text,
        }
    }

    pub(super) fn spawn(&mut self, i: usize) -> Result<()> {
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
            .env(conf::SYSTEM_PASSWORD_ENV, &self.system_password)
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
    pub(super) fn wait_ready(
        &mut self,
        t0: Instant,
        cancel: Option<&AtomicBool>,
    ) -> std::result::Result<(), StartError> {
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

    pub(super) fn ready_check(&self, probe: Duration) -> Result<()> {
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
            .find(|x| x.name == leader || x.server_name() == leader)
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
}

/// The configuration with the route ping settings at the top of its `cluster` block.
pub(super) fn with_route_ping(conf: &str, every: Duration, max: u32) -> String {
    conf.replacen(
        "\ncluster {\n",
        &format!(
            "\ncluster {{\n  ping_interval: \"{}ms\"\n  ping_max: {max}\n",
            every.as_millis()
        ),
        1,
    )
}

/// How long after its servers start a multi-server lab's route mesh has settled: the route connect
/// delay (1 s) after which refused first dials are retried, and a margin for the duplicates to close.
pub(super) const ROUTE_SETTLE: Duration = Duration::from_millis(1500);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_ping_settings_go_into_the_cluster_block_only() {
        let conf = "server_name: n1\nping_interval: \"2m\"\n\ncluster {\n  name: \"lab\"\n  routes: [\n  ]\n}\n";
        let got = with_route_ping(conf, Duration::from_secs(1), 3);
        assert_eq!(
            got,
            "server_name: n1\nping_interval: \"2m\"\n\ncluster {\n  ping_interval: \"1000ms\"\n  ping_max: 3\n  name: \"lab\"\n  routes: [\n  ]\n}\n"
        );
        // No cluster block (a single server): unchanged.
        assert_eq!(with_route_ping("listen: 1\n", Duration::from_secs(1), 3), "listen: 1\n");
    }
}
