//! `natsplan bench core|js|kv|obj|ping|flood`: one benchmark run against a live cluster, with the flags
//! NATS users know from `nats bench`. Parses flags into a `bench::BenchSpec`, runs it on a tokio runtime,
//! prints the result through one of `bench::export`'s pure exporters.

use crate::bench::{
    self, export, BenchError, BenchSpec, ClientChoice, ConnArgs, ConnSpec, ObjOp, PublishMode, Storage, Workload,
};
use crate::cli::{Format, Global};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use clap::{Args, Subcommand};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: Box<BenchCmd>,
}

#[derive(Debug, Subcommand)]
pub enum BenchCmd {
    /// Core NATS publish/subscribe throughput (fire and forget).
    Core {
        /// Publishers (messages are split over them).
        #[arg(long, default_value_t = 1)]
        pubs: usize,
        /// Subscribers (each expects every message).
        #[arg(long, default_value_t = 1)]
        subs: usize,
        #[command(flatten)]
        common: Common,
    },
    /// JetStream publishing to a `natsplan-js-*` stream.
    Js {
        #[arg(long, default_value_t = 1)]
        pubs: usize,
        #[arg(long, default_value_t = 1)]
        replicas: usize,
        #[arg(long, value_enum, default_value_t = Storage::File)]
        storage: Storage,
        /// async: keep up to --window publishes in flight; sync: wait for each ack.
        #[arg(long, value_enum, default_value_t = PublishMode::Async)]
        publish: PublishMode,
        /// Unacknowledged publishes in flight per publisher (async).
        #[arg(long, default_value_t = 500)]
        window: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Key-value puts to a `natsplan-kv-*` bucket (--msgs puts; rates in operations per second).
    Kv {
        #[arg(long, default_value_t = 1)]
        clients: usize,
        #[arg(long, default_value_t = 1)]
        replicas: usize,
        #[arg(long, value_enum, default_value_t = Storage::File)]
        storage: Storage,
        #[command(flatten)]
        common: Common,
    },
    /// Object store put or get of whole objects in a `natsplan-obj-*` bucket (--size is the object size).
    Obj {
        #[arg(value_enum)]
        op: ObjOp,
        #[arg(long, default_value_t = 1)]
        clients: usize,
        /// Objects to put or get (split over clients).
        #[arg(long, default_value_t = 100)]
        objects: u64,
        #[arg(long, default_value_t = 1)]
        replicas: usize,
        #[arg(long, value_enum, default_value_t = Storage::File)]
        storage: Storage,
        #[command(flatten)]
        common: Common,
    },
    /// Sequential request/reply round trips (the requester and responder on different servers when
    /// several are given).
    Ping {
        #[command(flatten)]
        common: Common,
    },
    /// Burst queueing delay: publishers send everything at once, one subscriber measures send→receive.
    Flood {
        #[arg(long, default_value_t = 8)]
        pubs: usize,
        #[command(flatten)]
        common: Common,
    },
}

/// Flags every bench subcommand takes.
#[derive(Debug, Args)]
pub struct Common {
    /// Messages (or operations) in total.
    #[arg(long, default_value_t = 100_000)]
    pub msgs: u64,
    /// Payload size (128, 1KiB, 1MiB, ...).
    #[arg(long, default_value = "128", value_parser = parse_size)]
    pub size: u64,
    /// Open loop: send at R messages per second in aggregate and measure latency from the intended send time.
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,
    /// With --rate: stop as "not sustained" once this far behind schedule.
    #[arg(long, default_value = "1s", value_parser = parse_dur)]
    pub backlog_cutoff: Duration,
    /// Give up on messages that stopped arriving, acks and requests after this long.
    #[arg(long, default_value = "5s", value_parser = parse_dur)]
    pub timeout: Duration,
    /// Monitoring URLs (http://host:8222, comma separated) to read /varz slow_consumers from.
    #[arg(long, value_delimiter = ',', value_name = "URLS")]
    pub monitor: Vec<String>,
    /// Core subscribers sleep this long after each message (a deliberately slow consumer).
    #[arg(long, value_parser = parse_dur, value_name = "DURATION")]
    pub sub_sleep: Option<Duration>,
    /// Messages buffered per subscription in the client before it drops them.
    #[arg(long, value_name = "N")]
    pub sub_buffer: Option<usize>,
    /// Also write nats bench's CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Keep the streams, buckets and object stores the run created.
    #[arg(long)]
    pub keep: bool,
    /// Client for the hot paths: auto (raw protocol when the connection allows, else async-nats), raw, or
    /// async-nats.
    #[arg(long, value_enum, default_value_t = ClientChoice::Auto)]
    pub client: ClientChoice,
    /// No progress bar even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Run the workers on N `natsplan agent` processes (other client hosts) instead of here; the report
    /// merges their counts and histograms. An incomplete run (an agent lost) exits 1.
    #[arg(long, value_name = "N", value_parser = parse_agents)]
    pub agents: Option<usize>,
    /// With --agents: how long to wait for N idle agents to answer.
    #[arg(long, default_value = "5s", value_parser = parse_dur, value_name = "DURATION", requires = "agents")]
    pub agents_timeout: Duration,
    #[command(flatten)]
    pub conn: ConnArgs,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s)
}

fn parse_dur(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s)
}

/// `--agents N`: a whole number from 1 to 1000.
pub fn parse_agents(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=1000).contains(&n) => Ok(n),
        Ok(_) => Err(format!("{s}: give the number of agents to use, from 1 to 1000")),
        Err(_) => Err(format!("'{s}' is not a number of agents; e.g. --agents 3")),
    }
}

/// Flags → (workload, objects-or-msgs, common flags).
fn workload(cmd: BenchCmd) -> (Workload, Option<u64>, Common) {
    match cmd {
        BenchCmd::Core { pubs, subs, common } => (Workload::Core { pubs, subs }, None, common),
        BenchCmd::Js {
            pubs,
            replicas,
            storage,
            publish,
            window,
            common,
        } => (
            Workload::Js {
                pubs,
                replicas,
                storage,
                publish,
                window,
            },
            None,
            common,
        ),
        BenchCmd::Kv {
            clients,
            replicas,
            storage,
            common,
        } => (
            Workload::Kv {
                clients,
                replicas,
                storage,
            },
            None,
            common,
        ),
        BenchCmd::Obj {
            op,
            clients,
            objects,
            replicas,
            storage,
            common,
        } => (
            Workload::Obj {
                op,
                clients,
                replicas,
                storage,
            },
            Some(objects),
            common,
        ),
        BenchCmd::Ping { common } => (Workload::Ping, None, common),
        BenchCmd::Flood { pubs, common } => (Workload::Flood { pubs }, None, common),
    }
}

pub fn run(g: &Global, a: BenchArgs) -> Result<Outcome, Failure> {
    let format = g.format.unwrap_or(Format::Table);
    if !matches!(format, Format::Table | Format::Json) {
        return Err(super::unsupported_format("bench", format, &["table", "json"]));
    }
    let (workload, objects, common) = workload(*a.what);
    let conn = ConnSpec::resolve(&common.conn).map_err(bad_input)?;
    let spec = BenchSpec {
        workload,
        msgs: objects.unwrap_or(common.msgs),
        size: common.size,
        rate_per_s: common.rate,
        backlog_cutoff: common.backlog_cutoff,
        timeout: common.timeout,
        monitor: common.monitor.clone(),
        keep: common.keep,
        sub_sleep: common.sub_sleep,
        client: common.client,
        sub_buffer: common.sub_buffer,
        progress: !common.no_progress && std::io::stderr().is_terminal(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(cannot_run)?;
    if let Some(n) = common.agents {
        let out = run_on_agents(
            &rt,
            &conn,
            &spec,
            n,
            common.agents_timeout,
            format,
            common.csv.as_deref(),
        );
        rt.shutdown_timeout(Duration::from_millis(100));
        return out;
    }
    let cancel = bench::Cancel::new();
    let result = rt.block_on(async {
        // SIGINT/SIGTERM stop the load; the run then reports what it measured and removes its assets.
        let _signals = cancel.trip_on_signals().map_err(cannot_run)?;
        bench::run_with(&conn, &spec, &cancel).await.map_err(Failure::from)
    })?;
    // Dropping the runtime would wait for background tasks of the clients; they hold nothing we need.
    rt.shutdown_timeout(Duration::from_millis(100));
    if let Some(path) = &common.csv {
        std::fs::write(path, export::csv(&result))
            .map_err(|e| cannot_run(anyhow::anyhow!("--csv {}: cannot write: {e}", path.display())))?;
    }
    let bytes = match format {
        Format::Json => export::json(&result),
        _ => export::text(&result),
    };
    super::emit_stdout(&bytes)?;
    Ok(completion_outcome(&result.completion))
}

/// A run that did not do all it was asked is a failed check (exit 1); one a signal stopped exits 130.
fn completion_outcome(c: &bench::result::Completion) -> Outcome {
    match c.shortfall() {
        None => Outcome::Ok,
        Some(why) if c.interrupted => Outcome::Interrupted(why),
        Some(why) => Outcome::CheckFailed(format!("the run is {why}")),
    }
}

/// `--agents N`: discover, run the spec spread over the agents, print the merged result and each agent's
/// part. Exit 1 when the run is incomplete.
fn run_on_agents(
    rt: &tokio::runtime::Runtime,
    conn: &ConnSpec,
    spec: &BenchSpec,
    n: usize,
    timeout: Duration,
    format: Format,
    csv: Option<&std::path::Path>,
) -> Result<Outcome, Failure> {
    use crate::agent::{report, AgentsOptions, Coordinator};
    let map = Failure::from;
    bench::check(spec).map_err(map)?;
    let mut opts = AgentsOptions::new(n);
    opts.discover_timeout = timeout;
    let cancel = bench::Cancel::new();
    let out = rt.block_on(async {
        // SIGINT/SIGTERM: the agents abort the row, its assets are removed, exit 130.
        let _signals = cancel.trip_on_signals().map_err(|e| BenchError::CannotRun(e.into()))?;
        let mut c = Coordinator::connect(conn, opts).await?;
        c.set_cancel(cancel.clone());
        for l in report::summary_lines(&c.summary) {
            eprintln!("{l}");
        }
        let d = c.run(spec).await?;
        Ok::<_, BenchError>((c.summary.clone(), d))
    });
    let (summary, d) = match out {
        Err(e) if cancel.is_cancelled() => return Ok(Outcome::Interrupted(format!("bench --agents: {e}"))),
        other => other.map_err(map)?,
    };
    if let Some(path) = csv {
        std::fs::write(path, export::csv(&d.result))
            .map_err(|e| cannot_run(anyhow::anyhow!("--csv {}: cannot write: {e}", path.display())))?;
    }
    let bytes = match format {
        Format::Json => {
            let mut v = export::json_value(&d.result);
            v["agents"] = serde_json::to_value(&d.agents).unwrap_or_default();
            v["agents_used"] = serde_json::to_value(&summary).unwrap_or_default();
            let mut b = serde_json::to_vec_pretty(&v).unwrap_or_default();
            b.push(b'\n');
            b
        }
        _ => {
            let mut b = export::text(&d.result);
            let mut lines = report::summary_lines(&summary);
            lines.extend(report::row_lines(&d.agents));
            for l in lines {
                b.extend_from_slice(l.as_bytes());
                b.push(b'\n');
            }
            b
        }
    };
    super::emit_stdout(&bytes)?;
    if !d.agents.complete {
        let lost: Vec<String> = d
            .agents
            .agents
            .iter()
            .filter(|a| a.status != crate::agent::ShareStatus::Completed)
            .map(|a| a.name.clone())
            .collect();
        return Ok(Outcome::CheckFailed(format!(
            "the run is incomplete: agent(s) {} did not finish their share",
            lost.join(", ")
        )));
    }
    Ok(completion_outcome(&d.result.completion))
}
