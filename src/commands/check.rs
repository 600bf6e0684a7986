//! `natsplan check --plan plan.json (--monitor URLS | --lab DIR)`: one read-only pass over the cluster's
//! monitoring endpoints, graded against the plan (`check::grade`), printed as a table, JSON, Nagios plugin
//! output or Prometheus text. Exit codes are a Nagios plugin's (0 ok, 1 warning, 2 critical, 3 unknown),
//! and, unlike every other command, bad input and an unreachable cluster exit 3, never 2: monitoring
//! systems read 2 as "critical" (DESIGN's exit-code table; docs/check.md).

use crate::check::{self, CheckReport, Expected, Thresholds};
use crate::cli::{Format, Global, PlanArgs};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use crate::monitor::observe::Observed;
use anyhow::anyhow;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Read the cluster over NATS instead of monitor ports: --server URLS (and the nats CLI's credential
    /// flags, variables or context) with a user of the system account, which every server answers
    /// `$SYS.REQ.SERVER.PING.VARZ` and `.JSZ` for.
    #[command(flatten)]
    pub conn: crate::bench::ConnArgs,
    /// The plan saved by `natsplan design SITE --layout ID --save FILE` (default: the plan a `--lab`
    /// was started from with `lab up --plan FILE`).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// The layout of the plan the cluster runs (default: the saved plan's choice, else its best).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Monitoring URLs of the servers (http://host:8222), comma separated: give every server's, a silent
    /// one is graded critical.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "URLS",
        required_unless_present_any = ["lab", "server"],
        conflicts_with = "server"
    )]
    pub monitor: Vec<String>,
    /// Check a lab from `natsplan lab up`: its lab.json names the servers and their monitors.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["monitor", "server"])]
    pub lab: Option<PathBuf>,
    /// A stream replica this many operations behind its leader is critical (natscli `check stream
    /// --peer-lag-critical`). Default: per stream, what its planned rate brings in --peer-seen-critical,
    /// at least natscli's 200.
    #[arg(long, value_name = "OPS")]
    pub peer_lag_critical: Option<u64>,
    /// A stream replica its leader has not heard from for this long is critical (natscli `check stream
    /// --peer-seen-critical`).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::units::parse_duration)]
    pub peer_seen_critical: Duration,
    /// A meta group peer this many operations behind is critical (natscli `check meta --lag-critical`).
    #[arg(long, value_name = "OPS", default_value_t = check::NATSCLI_LAG_CRITICAL)]
    pub lag_critical: u64,
    /// A meta group peer not heard from for this long is critical (natscli `check meta --seen-critical`).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = crate::units::parse_duration)]
    pub seen_critical: Duration,
    /// Store use warning, percent of each server's max_file_store (natscli `check jetstream
    /// --store-warn`, there per account).
    #[arg(long, value_name = "PCT", default_value_t = 75.0, value_parser = parse_pct)]
    pub store_warn: f64,
    /// Store use critical, percent of each server's max_file_store (natscli `--store-critical`).
    #[arg(long, value_name = "PCT", default_value_t = 90.0, value_parser = parse_pct)]
    pub store_critical: f64,
    /// Memory store use warning, percent of max_memory_store (natscli `--mem-warn`, there per account).
    #[arg(long, value_name = "PCT", default_value_t = 75.0, value_parser = parse_pct)]
    pub mem_warn: f64,
    /// Memory store use critical, percent of max_memory_store (natscli `--mem-critical`).
    #[arg(long, value_name = "PCT", default_value_t = 90.0, value_parser = parse_pct)]
    pub mem_critical: f64,
    /// HA assets (RAFT groups) per server above which to warn; default: what the plan places there.
    #[arg(long, value_name = "N")]
    pub ha_assets_warn: Option<u64>,
    /// HA assets per server above which it is critical (nats audit CLUSTER_003: 1000; the plan's count
    /// when it places more and --ha-assets-warn is not given).
    #[arg(long, value_name = "N", default_value_t = check::AUDIT_HA_ASSETS)]
    pub ha_assets_critical: u64,
    /// Read the cluster twice this far apart and grade each stream's message rate against the plan's
    /// (0s: one reading, no rate checks).
    #[arg(long, value_name = "DURATION", default_value = "0s", value_parser = crate::units::parse_duration)]
    pub interval: Duration,
    /// A rate above this percent of the plan's rate for the stream warns.
    #[arg(long, value_name = "PCT", default_value_t = 100.0, value_parser = parse_rate_pct)]
    pub rate_warn: f64,
    /// A rate above this percent of the stream's predicted ceiling (design's prediction) is critical.
    #[arg(long, value_name = "PCT", default_value_t = 100.0, value_parser = parse_rate_pct)]
    pub rate_critical: f64,
    /// Check every INTERVAL and serve the latest figures as Prometheus text at --listen until stopped
    /// (rates between consecutive passes).
    #[arg(long, value_name = "INTERVAL", value_parser = crate::units::parse_duration)]
    pub watch: Option<Duration>,
    /// With --watch: where to serve `GET /metrics` (a loopback address unless --listen-any).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Let --listen take an address beyond loopback.
    #[arg(long, requires = "listen")]
    pub listen_any: bool,
    /// How long to wait for each monitoring endpoint.
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = crate::units::parse_duration)]
    pub timeout: Duration,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage; e.g. 75"))?;
    if !(0.0..=100.0).contains(&x) {
        return Err(format!("{s} is not within 0..100"));
    }
    Ok(x)
}

fn parse_rate_pct(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage; e.g. 100"))?;
    if !x.is_finite() || x <= 0.0 {
        return Err(format!("{s} must be above 0"));
    }
    Ok(x)
}

/// Whether `args` (the whole command line, program name first) run `check`: the first word that is not
/// an option nor a global option's value. A parse error of `check` exits 3, not clap's 2.
pub fn is_check_command(args: &[std::ffi::OsString]) -> bool {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let a = a.to_string_lossy();
        if ["--format", "--models", "--width"].contains(&a.as_ref()) {
            it.next();
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        return a == "check";
    }
    false
}

pub fn run(g: &Global, a: CheckArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    let result = run_inner(g, a, format);
    // Nagios shows a plugin's first stdout line: a check that could not run says UNKNOWN there too.
    if let (Err(e), Format::Nagios) = (&result, format) {
        let first = e.render().lines().next().unwrap_or_default().replace('|', "/");
        let _ = super::emit_stdout(format!("NATSPLAN CHECK UNKNOWN: {first}\n").as_bytes());
    }
    // Bad input exits 3 (unknown) for check: 2 means critical to a monitoring system.
    result.map_err(|e| match e {
        Failure::BadInput(e) => Failure::CannotRun(e),
        other => other,
    })
}

/// What every pass needs: the plan's expectations, the thresholds, the monitors.
struct Setup {
    exp: Expected,
    th: Thresholds,
    monitors: Vec<(String, Option<String>)>,
    /// `--server`: read over NATS from the system account instead of `monitors`.
    system: Option<crate::bench::ConnSpec>,
    timeout: Duration,
}

fn setup(g: &Global, a: &CheckArgs, format: Format) -> Result<Setup, Failure> {
    super::refuse_unless::<CheckReport>(format)?;
    if a.store_warn > a.store_critical || a.mem_warn > a.mem_critical {
        return Err(bad_input(anyhow!(
            "--store-warn/--mem-warn must not be above --store-critical/--mem-critical"
        )));
    }
    for m in &a.monitor {
        if !m.starts_with("http://") {
            return Err(bad_input(anyhow!(
                "--monitor '{}': give an http:// URL of a server's monitoring port, e.g. http://127.0.0.1:8222",
                crate::monitor::shown(m)
            )));
        }
    }
    let (monitors, lab_plan): (Vec<(String, Option<String>)>, Option<PathBuf>) = match &a.lab {
        Some(dir) => {
            let st = super::lab_state(dir)?;
            if st.nodes.is_empty() {
                return Err(bad_input(anyhow!("--lab {}: lab.json lists no servers", dir.display())));
            }
            (
                st.nodes
                    .iter()
                    .map(|n| (n.monitor_url(), Some(n.name.clone())))
                    .collect(),
                st.plan.and_then(|p| p.plan),
            )
        }
        None => (a.monitor.iter().map(|m| (m.clone(), None)).collect(), None),
    };
    let plan_file = a.plan.clone().or(lab_plan).ok_or_else(|| {
        bad_input(anyhow!(
            "check needs the plan: --plan FILE, saved by `natsplan design SITE --layout ID --save FILE`"
        ))
    })?;
    let pa = PlanArgs {
        plan: Some(plan_file),
        ..PlanArgs::default()
    };
    let loaded = super::load_plan(g, &pa, None, a.layout.as_deref())?;
    let id = loaded.layout()?.id.clone();
    let plan = &loaded.plan;
    let planned_assets = plan
        .layout(&id)
        .and_then(|l| l.per_asset())
        .map(|d| d.assets.len())
        .unwrap_or(0);
    if planned_assets > MAX_ASSETS {
        return Err(bad_input(anyhow!(
            "layout {id} plans {planned_assets} streams, buckets, stores and consumers; check grades at most \
             {MAX_ASSETS} (one item each, more than a monitoring system shows): check a plan of fewer assets"
        )));
    }
    let exp = Expected::from_plan(plan, &id).map_err(bad_input)?;
    let th = Thresholds {
        peer_lag_critical: a.peer_lag_critical,
        peer_seen_critical: a.peer_seen_critical,
        lag_critical: a.lag_critical,
        seen_critical: a.seen_critical,
        store_warn: a.store_warn,
        store_critical: a.store_critical,
        mem_warn: a.mem_warn,
        mem_critical: a.mem_critical,
        ha_assets_warn: a.ha_assets_warn,
        ha_assets_critical: a.ha_assets_critical,
        rate_warn: a.rate_warn,
        rate_critical: a.rate_critical,
    };
    let system = if a.conn.server.is_empty() {
        None
    } else {
        Some(crate::bench::ConnSpec::resolve(&a.conn).map_err(bad_input)?)
    };
    Ok(Setup {
        exp,
        th,
        monitors,
        system,
        timeout: a.timeout,
    })
}

/// One reading of the cluster: an error when no monitor answered or the cluster is another one.
fn observe(s: &Setup) -> Result<Observed, Failure> {
    let obs = match &s.system {
        Some(spec) => observe_system(spec, s.timeout)?,
        None => crate::monitor::observe::observe(&s.monitors, s.timeout),
    };
    if obs.servers.is_empty() && s.system.is_some() {
        return Err(cannot_run(anyhow!(
            "no server answered $SYS.REQ.SERVER.PING over {}: check reads the cluster over NATS only as a user \
             of the system account (--user/--password, --creds or a context of one); or give --monitor URLS",
            s.system.as_ref().map(|c| c.servers.join(",")).unwrap_or_default()
        )));
    }
    if obs.servers.is_empty() {
        let why: Vec<String> = obs
            .unreachable
            .iter()
            .map(|(u, _, e)| format!("{} ({e})", crate::monitor::shown(u)))
            .collect();
        return Err(cannot_run(anyhow!(
            "no monitoring endpoint answered: {}; is the cluster up, and are these its monitor ports?",
            why.join("; ")
        )));
    }
    if let Some(e) = check::other_cluster(&s.exp, &obs) {
        return Err(cannot_run(anyhow!(e)));
    }
    Ok(obs)
}

/// One reading over NATS: connect, ask every server, close.
fn observe_system(spec: &crate::bench::ConnSpec, wait: Duration) -> Result<Observed, Failure> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(cannot_run)?;
    rt.block_on(async {
        let nc = spec.connect(0, "check", None).await.map_err(|e| match e {
            crate::bench::conn::ConnectFailure::Setup(e) => bad_input(e),
            crate::bench::conn::ConnectFailure::Unreachable(e) => cannot_run(e),
        })?;
        let obs = crate::monitor::observe::observe_system(&nc, wait)
            .await
            .map_err(cannot_run)?;
        let _ = nc.drain().await;
        Ok(obs)
    })
}

fn run_inner(g: &Global, a: CheckArgs, format: Format) -> Result<Outcome, Failure> {
    let listen = match (&a.watch, &a.listen) {
        (Some(_), Some(l)) => Some(listen_addr(l, a.listen_any)?),
        (None, None) => None,
        _ => {
            return Err(bad_input(anyhow!(
                "--watch INTERVAL and --listen ADDR go together: e.g. --watch 30s --listen 127.0.0.1:9849"
            )))
        }
    };
    let s = setup(g, &a, format)?;
    if let (Some(every), Some(addr)) = (a.watch, listen) {
        return watch(&s, every, addr);
    }
    let first = observe(&s)?;
    let (obs, rates) = if a.interval.is_zero() {
        (first, None)
    } else {
        let t0 = std::time::Instant::now();
        std::thread::sleep(a.interval);
        let second = observe(&s)?;
        let r = check::rates(&first, &second, t0.elapsed().as_secs_f64());
        (second, Some(r))
    };
    let rep = check::grade(&s.exp, &obs, rates.as_ref(), &s.th);
    super::print_as(&rep, format, super::width(g))?;
    Ok(Outcome::Exit(rep.exit_code))
}

/// `--listen ADDR`: a socket address, on loopback unless `--listen-any`.
fn listen_addr(l: &str, any: bool) -> Result<std::net::SocketAddr, Failure> {
    let addr: std::net::SocketAddr = l.parse().map_err(|_| {
        bad_input(anyhow!(
            "--listen '{l}': give an address and port, e.g. --listen 127.0.0.1:9849"
        ))
    })?;
    if !addr.ip().is_loopback() && !any {
        return Err(bad_input(anyhow!(
            "--listen {l}: not a loopback address; add --listen-any to serve the figures beyond this host"
        )));
    }
    Ok(addr)
}

/// `--watch INTERVAL --listen ADDR`: a check every INTERVAL (rates between consecutive passes), its
/// Prometheus text served at ADDR until SIGINT/SIGTERM. Only the last text is kept (bounded memory). A
/// cluster that stops answering is served as status 3 with the reason, and said on stderr once; so is its
/// return.
fn watch(s: &Setup, every: Duration, addr: std::net::SocketAddr) -> Result<Outcome, Failure> {
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        cannot_run(anyhow!(
            "--listen {addr}: cannot listen there ({e}); is another process using the port?"
        ))
    })?;
    let bound = listener.local_addr().map_err(cannot_run)?;
    let mut listener = Some(listener);
    let text = Arc::new(Mutex::new(crate::report::check::prometheus_failed(
        &s.exp.cluster,
        &s.exp.layout,
        "no check has finished yet",
    )));
    let guard = crate::signals::InterruptGuard::install();
    let mut previous: Option<(Observed, std::time::Instant)> = None;
    let mut reachable = true;
    let mut passes = 0u64;
    while !guard.interrupted() {
        let started = std::time::Instant::now();
        let body = match observe(s) {
            Ok(obs) => {
                if !reachable {
                    eprintln!("natsplan: check --watch: the cluster answers again");
                    reachable = true;
                }
                let rates = previous
                    .as_ref()
                    .map(|(p, t)| check::rates(p, &obs, started.duration_since(*t).as_secs_f64()));
                let rep = check::grade(&s.exp, &obs, rates.as_ref(), &s.th);
                previous = Some((obs, started));
                crate::report::check::prometheus(&rep)
            }
            Err(e) => {
                let why = e.render().lines().next().unwrap_or_default().to_string();
                if reachable {
                    eprintln!("natsplan: check --watch: {why}; serving status 3 until it answers");
                    reachable = false;
                }
                previous = None;
                crate::report::check::prometheus_failed(&s.exp.cluster, &s.exp.layout, &why)
            }
        };
        *text.lock().unwrap_or_else(|p| p.into_inner()) = body;
        passes += 1;
        // Served from the end of the first pass (a scrape before it waits in the listen queue), so no
        // scrape sees a placeholder.
        if let Some(l) = listener.take() {
            let served = text.clone();
            std::thread::spawn(move || serve(l, served));
            eprintln!(
                "natsplan: check --watch: serving Prometheus text at http://{bound}/metrics every {}",
                humantime::format_duration(every)
            );
        }
        while !guard.interrupted() && started.elapsed() < every {
            std::thread::sleep(Duration::from_millis(50).min(every));
        }
    }
    Ok(Outcome::Interrupted(format!(
        "check --watch stopped by a signal after {passes} pass(es)"
    )))
}

/// Answer each HTTP request with the latest text (`/metrics` or `/`; 404 elsewhere), one at a time,
/// reading at most 8 KiB of a request for at most 2 s.
fn serve(listener: std::net::TcpListener, text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>) {
    use std::io::{Read, Write};
    for conn in listener.incoming() {
        let Ok(mut c) = conn else { continue };
        let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = c.set_write_timeout(Some(Duration::from_secs(5)));
        let mut req = Vec::new();
        let mut buf = [0u8; 1024];
        while req.len() < 8192 && !req.windows(4).any(|w| w == b"\r\n\r\n") {
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => req.extend_from_slice(&buf[..n]),
            }
        }
        let line = String::from_utf8_lossy(&req);
        let path = line.split_whitespace().nth(1).unwrap_or("");
        let path = path.split('?').next().unwrap_or("");
        let (status, body) = if line.starts_with("GET ") && (path == "/metrics" || path == "/") {
            ("200 OK", text.lock().unwrap_or_else(|p| p.into_inner()).clone())
        } else {
            ("404 Not Found", b"natsplan check serves GET /metrics\n".to_vec())
        };
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = c.write_all(head.as_bytes()).and_then(|_| c.write_all(&body));
    }
}

/// Assets one check grades at most (the plan's assets, one or more items each).
pub const MAX_ASSETS: usize = 1_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_word_is_found_past_global_options() {
        let v = |s: &[&str]| s.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(is_check_command(&v(&["natsplan", "check", "--plan", "x"])));
        assert!(is_check_command(&v(&["natsplan", "--format", "nagios", "check"])));
        assert!(is_check_command(&v(&["natsplan", "--width=80", "check"])));
        assert!(!is_check_command(&v(&["natsplan", "--format", "check", "design"])));
        assert!(!is_check_command(&v(&["natsplan", "verify", "check"])));
        assert!(!is_check_command(&v(&["natsplan"])));
    }
}
