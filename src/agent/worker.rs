//! The agent process (`natsplan agent`): connect with bench's connection options, announce itself, answer
//! discovery and clock probes, and run one row share at a time with bench's own engine (`bench::
//! run_share`), sending heartbeats while it runs and its result (counts, client samples, V2 histogram)
//! at the end. SIGINT/SIGTERM stop it cleanly: a running share is abandoned and reported as such, a `Bye`
//! is published, the connection drained.

use super::protocol::{self as p, AgentResult, Hello, Progress, Ready, RunAccepted, RunRequest, Start};
use crate::bench::{self, ConnSpec, Gate};
use crate::error::Failure;
use anyhow::{anyhow, Context as _};
use futures::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// What `natsplan agent` was given.
pub struct AgentOptions {
    pub conn: ConnSpec,
    /// Display name (a subject token); the id adds a random suffix.
    pub name: String,
}

/// The row running now, as the control loop sees it.
struct Current {
    row: String,
    report_to: String,
    start_tx: mpsc::Sender<Start>,
    task: tokio::task::JoinHandle<()>,
}

/// Aborts a task when dropped: an aborted row takes its engine and heartbeat tasks down with it.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The host name (for reports): `/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `unknown`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// A default agent name from the host name, made a subject token.
pub fn default_name() -> String {
    let n: String = host_name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    if n.is_empty() {
        "agent".into()
    } else {
        n
    }
}

/// Run the agent until SIGINT/SIGTERM. `log` gets one line per event (the command sends it to stderr).
pub async fn serve(opts: AgentOptions, log: Arc<dyn Fn(&str) + Send + Sync>) -> Result<(), Failure> {
    if !p::is_token(&opts.name) {
        return Err(Failure::BadInput(anyhow!(
            "--name {:?}: an agent name is letters, digits, '-' and '_' (up to 64), e.g. --name client-1",
            opts.name
        )));
    }
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| Failure::CannotRun(anyhow!("cannot handle SIGINT: {e}")))?;
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| Failure::CannotRun(anyhow!("cannot handle SIGTERM: {e}")))?;
    let id = format!("{}-{:08x}", opts.name, rand::random::<u32>());
    let client = connect(&opts, &id).await?;
    let agent = Agent {
        client,
        id,
        opts,
        log,
        current: Arc::new(Mutex::new(None)),
    };
    let (client, id) = (&agent.client, &agent.id);
    let sub = |s: String| {
        let c = client.clone();
        async move {
            c.subscribe(s.clone())
                .await
                .map_err(|e| Failure::CannotRun(anyhow!("subscribe to {s}: {e}")))
        }
    };
    let mut discover = sub(p::discover_subject()).await?;
    let mut clock = sub(p::agent_subject(id, "clock")).await?;
    let mut run = sub(p::agent_subject(id, "run")).await?;
    let mut start = sub(p::agent_subject(id, "start")).await?;
    let mut abort = sub(p::agent_subject(id, "abort")).await?;
    agent.announce().await?;
    let stop_reason: &str = loop {
        tokio::select! {
            _ = sigint.recv() => break "SIGINT",
            _ = sigterm.recv() => break "SIGTERM",
            Some(m) = discover.next() => {
                if let Some(reply) = m.reply {
                    let _ = client.publish(reply, p::encode(&agent.hello(agent.busy()))).await;
                }
            }
            Some(m) = clock.next() => {
                let t1 = p::wall_ns();
                if let (Some(reply), Ok(req)) = (m.reply, p::decode::<p::ClockRequest>("clock", &m.payload)) {
                    let r = p::ClockReply { t0_ns: req.t0_ns, t1_ns: t1, t2_ns: p::wall_ns() };
                    let _ = client.publish(reply, p::encode(&r)).await;
                }
            }
            Some(m) = run.next() => {
                let Some(reply) = m.reply else { continue };
                let answer = agent.take_run(&m.payload);
                let _ = client.publish(reply, p::encode(&answer)).await;
            }
            Some(m) = start.next() => agent.start(&m.payload),
            Some(m) = abort.next() => agent.abort(&m.payload),
            else => break "the connection closed",
        }
    };
    // Leave cleanly: a running share is abandoned and said so; then goodbye. All of it bounded: with the
    // servers gone the client would wait for a reconnect forever, and a stop must stop.
    let farewell = async {
        leave(client, &agent.current, id, stop_reason).await;
    };
    let log = &agent.log;
    if tokio::time::timeout(Duration::from_secs(3), farewell).await.is_err() {
        log(&format!("agent {id}: no server took the goodbye within 3 s"));
    }
    log(&format!("agent {id}: stopped ({stop_reason})"));
    Ok(())
}

/// The agent's control connection, named by its id.
async fn connect(opts: &AgentOptions, id: &str) -> Result<async_nats::Client, Failure> {
    opts.conn
        .connect_control(
            &format!("natsplan-agent-{id}"),
            &format!("{}.{id}._inbox", p::PREFIX),
            true,
        )
        .await
        .map_err(|e| match e {
            bench::conn::ConnectFailure::Setup(e) => Failure::BadInput(e),
            bench::conn::ConnectFailure::Unreachable(e) => Failure::CannotRun(e),
        })
}

/// A running agent: its connection, id, options, log and the row it runs now.
struct Agent {
    client: async_nats::Client,
    id: String,
    opts: AgentOptions,
    log: Arc<dyn Fn(&str) + Send + Sync>,
    current: Arc<Mutex<Option<Current>>>,
}

impl Agent {
    fn hello(&self, busy: bool) -> Hello {
        Hello {
            id: self.id.clone(),
            name: self.opts.name.clone(),
            host: host_name(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            servers: self
                .opts
                .conn
                .servers
                .iter()
                .map(|s| bench::conn::redact_url(s))
                .collect(),
            busy,
        }
    }

    /// Whether a row is running now.
    fn busy(&self) -> bool {
        self.current
            .lock()
            .map(|c| c.as_ref().is_some_and(|c| !c.task.is_finished()))
            .unwrap_or(false)
    }

    /// Say hello (not busy) and that the agent is ready.
    async fn announce(&self) -> Result<(), Failure> {
        let (client, id) = (&self.client, &self.id);
        client
            .publish(p::hello_subject(), p::encode(&self.hello(false)))
            .await
            .map_err(|e| Failure::CannotRun(anyhow!("announce on {}: {e}", p::hello_subject())))?;
        client
            .flush()
            .await
            .map_err(|e| Failure::CannotRun(anyhow!("announce: {e}")))?;
        (self.log)(&format!(
            "agent {id} ready on {} (control subjects {}.{id}.*)",
            self.opts.conn.describe(),
            p::PREFIX
        ));
        Ok(())
    }

    /// A run request: refused unless it is one `natsplan bench` itself would run, for the row's own run
    /// (`RunRequest::check`), as any client on the account can publish here; else its share starts (and
    /// waits for its `Start`).
    fn take_run(&self, payload: &[u8]) -> RunAccepted {
        let (id, log) = (&self.id, &self.log);
        let decoded = p::decode::<RunRequest>("run", payload)
            .map_err(|e| format!("{e:#}"))
            .and_then(|r| r.check().map(|_| r).map_err(|e| format!("refused: {e}")));
        match decoded {
            Err(e) => {
                log(&format!("agent {id}: refused a run request: {e}"));
                RunAccepted {
                    id: id.clone(),
                    accepted: false,
                    error: Some(e),
                }
            }
            Ok(_) if self.busy() => RunAccepted {
                id: id.clone(),
                accepted: false,
                error: Some("busy with another row".into()),
            },
            Ok(req) => {
                log(&format!(
                    "agent {id}: row {} ({} worker(s), {} subscriber(s), {} messages)",
                    req.row,
                    req.share.workers.len(),
                    req.share.subs.len(),
                    req.work.msgs
                ));
                let (start_tx, start_rx) = mpsc::channel(1);
                let (row, report_to) = (req.row.clone(), req.report_to.clone());
                let task = tokio::spawn(run_row(
                    self.client.clone(),
                    id.clone(),
                    self.opts.conn.clone(),
                    req,
                    start_rx,
                    log.clone(),
                ));
                if let Ok(mut c) = self.current.lock() {
                    *c = Some(Current {
                        row,
                        report_to,
                        start_tx,
                        task,
                    });
                }
                RunAccepted {
                    id: id.clone(),
                    accepted: true,
                    error: None,
                }
            }
        }
    }

    /// A `Start`: passed on to the row this agent took only (one naming another is not its coordinator's).
    fn start(&self, payload: &[u8]) {
        if let Ok(s) = p::decode::<Start>("start", payload) {
            let tx = self
                .current
                .lock()
                .ok()
                .and_then(|c| c.as_ref().filter(|c| c.row == s.row).map(|c| c.start_tx.clone()));
            if let Some(tx) = tx {
                let _ = tx.try_send(s);
            }
        }
    }

    /// An `Abort`: stops the row this agent runs only (one naming another leaves it running).
    fn abort(&self, payload: &[u8]) {
        if let Ok(a) = p::decode::<p::Abort>("abort", payload) {
            let cur = self.current.lock().ok().and_then(|mut c| {
                if c.as_ref().is_some_and(|c| c.row == a.row) {
                    c.take()
                } else {
                    None
                }
            });
            if let Some(c) = cur {
                if !c.task.is_finished() {
                    c.task.abort();
                    (self.log)(&format!(
                        "agent {}: row {} aborted by the coordinator: {}",
                        self.id,
                        a.row,
                        crate::input::yaml::clip(&a.reason)
                    ));
                }
            }
        }
    }
}

/// The goodbye of a stopping agent: its running share reported as abandoned, `Bye`, the connection drained.
async fn leave(client: &async_nats::Client, current: &Mutex<Option<Current>>, id: &str, stop_reason: &str) {
    let cur = current.lock().ok().and_then(|mut c| c.take());
    if let Some(c) = cur {
        if !c.task.is_finished() {
            c.task.abort();
            let r = AgentResult {
                id: id.to_string(),
                row: c.row.clone(),
                result: None,
                hist_v2: None,
                start_s: 0.0,
                late_s: 0.0,
                error: Some(format!("the agent was stopped ({stop_reason}) during the row")),
            };
            let _ = client
                .publish(p::report_subject(&c.report_to, id, "result"), p::encode(&r))
                .await;
        }
    }
    let _ = client
        .publish(p::agent_subject(id, "bye"), p::encode(&p::Bye { id: id.to_string() }))
        .await;
    let _ = client.flush().await;
    let _ = client.drain().await;
}

/// One row share: heartbeats from the start, the engine behind a gate, `Ready` once set up, the local
/// start instant from the coordinator's `Start`, and the result (or the error) at the end.
async fn run_row(
    client: async_nats::Client,
    id: String,
    conn: ConnSpec,
    req: RunRequest,
    mut start_rx: mpsc::Receiver<Start>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
) {
    let subject = |what: &str| p::report_subject(&req.report_to, &id, what);
    let done = Arc::new(AtomicU64::new(0));
    let started_at: Arc<Mutex<Option<Instant>>> = Arc::new(Mutex::new(None));
    let is_ready = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _beat = {
        let (client, done, started_at, s) = (client.clone(), done.clone(), started_at.clone(), subject("progress"));
        let is_ready = is_ready.clone();
        let every = Duration::from_millis(req.heartbeat_ms.max(20));
        AbortOnDrop(tokio::spawn(async move {
            loop {
                let elapsed_s = match started_at.lock().ok().and_then(|g| *g) {
                    Some(t) if Instant::now() >= t => t.elapsed().as_secs_f64(),
                    Some(t) => -(t - Instant::now()).as_secs_f64(),
                    None => -1.0,
                };
                let pr = Progress {
                    done: done.load(Ordering::Relaxed),
                    elapsed_s,
                    ready: is_ready.load(Ordering::Relaxed),
                };
                let _ = client.publish(s.clone(), p::encode(&pr)).await;
                let _ = client.flush().await;
                tokio::time::sleep(every).await;
            }
        }))
    };
    let (ready_tx, ready_rx) = oneshot::channel();
    let (go_tx, go_rx) = oneshot::channel();
    let spec = req.work.to_spec();
    let share = req.share.clone();
    let mut engine = {
        let (conn, done) = (conn.clone(), done.clone());
        AbortOnDrop(tokio::spawn(async move {
            bench::run_share(
                &conn,
                &spec,
                share,
                Gate {
                    ready: ready_tx,
                    start: go_rx,
                },
                done,
            )
            .await
        }))
    };
    // Ready → publish; then wait for Start (bounded) and hand the engine its local start instant.
    let gate = async {
        if ready_rx.await.is_err() {
            return; // the engine ended before its setup was done: its error is the result
        }
        is_ready.store(true, Ordering::Relaxed);
        let _ = client
            .publish(
                subject("ready"),
                p::encode(&Ready {
                    id: id.clone(),
                    row: req.row.clone(),
                }),
            )
            .await;
        let _ = client.flush().await;
        let wait = Duration::from_millis(req.start_timeout_ms.max(100));
        if let Ok(Some(s)) = tokio::time::timeout(wait, start_rx.recv()).await {
            let ahead_ns = s.start_at_ns - p::wall_ns();
            let at = if ahead_ns > 0 {
                Instant::now() + Duration::from_nanos(ahead_ns as u64)
            } else {
                Instant::now()
            };
            if let Ok(mut g) = started_at.lock() {
                *g = Some(at);
            }
            let _ = go_tx.send(at);
        }
        // Without a Start the sender drops and the engine ends with "the coordinator did not start".
    };
    gate.await;
    let out = (&mut engine.0).await;
    drop(_beat);
    let r = match out {
        Ok(Ok(o)) => match p::hist_to_v2(&o.hist) {
            Ok(h) => AgentResult {
                id: id.clone(),
                row: req.row.clone(),
                result: Some(o.result),
                hist_v2: Some(h),
                start_s: o.start_s,
                late_s: o.late_s,
                error: None,
            },
            Err(e) => failed(&id, &req.row, format!("{e:#}")),
        },
        Ok(Err(Failure::BadInput(e) | Failure::CannotRun(e))) => failed(&id, &req.row, format!("{e:#}")),
        Err(e) => failed(&id, &req.row, format!("the row's task ended: {e}")),
    };
    log(&format!(
        "agent {id}: row {} {}",
        req.row,
        match &r.error {
            Some(e) => format!("failed: {e}"),
            None => format!("done ({} operations)", done.load(Ordering::Relaxed)),
        }
    ));
    let _ = client.publish(subject("result"), p::encode(&r)).await;
    let _ = client.flush().await;
}

fn failed(id: &str, row: &str, error: String) -> AgentResult {
    AgentResult {
        id: id.to_string(),
        row: row.to_string(),
        result: None,
        hist_v2: None,
        start_s: 0.0,
        late_s: 0.0,
        error: Some(error),
    }
}

/// Blocking entry for the command: a runtime, `serve`, and errors mapped for exit codes.
pub fn run(opts: AgentOptions) -> Result<(), Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(Failure::CannotRun)?;
    let log: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(|s: &str| eprintln!("{s}"));
    let r = rt.block_on(serve(opts, log));
    rt.shutdown_timeout(Duration::from_millis(200));
    r
}
