//! The command line. Doc comments are the help text. Each command's arguments live beside the code that
//! runs it (`commands/*.rs`), so this file only lists the commands and the options they share.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "natsplan", version, about = "Plan, predict and verify NATS JetStream layouts on real hardware", long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
pub struct Global {
    /// Report format (table by default). csv: design, whatif, simulate and verify (docs/reports.md lists
    /// the columns); html: design, whatif, simulate and verify; nagios and prometheus: check only.
    #[arg(long, global = true, value_enum)]
    pub format: Option<Format>,
    /// Read array, disk, server and failure-rate models from DIR instead of the built-in catalog.
    #[arg(long, global = true, value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Width of tables in characters (default: the terminal's, or 120).
    #[arg(long, global = true, value_name = "N")]
    pub width: Option<u16>,
}

/// The report formats; each command's result says which it has (`report::render`).
pub use crate::report::render::Format;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Enumerate, check and rank storage and placement layouts for a site (no server needed).
    Design(crate::commands::design::DesignArgs),
    /// What a layout survives: one failure scenario, or every combination up to K failures.
    Whatif(crate::commands::whatif::WhatifArgs),
    /// What to buy for a workload: candidate bills of materials planned as design plans them, priced,
    /// on the cost × survival × headroom frontier (docs/size.md).
    Size(crate::commands::size::SizeArgs),
    /// Seeded Monte Carlo of failures and repairs over years.
    Simulate(crate::commands::simulate::SimulateArgs),
    /// One-off performance prediction for a cluster shape.
    Predict(Box<crate::commands::predict::PredictArgs>),
    /// Write nats-server.conf per server and stream/KV/object-store definitions for a layout.
    Emit(crate::commands::emit::EmitArgs),
    /// Run a plan's cluster locally with real nats-server processes on loopback.
    Lab(crate::commands::lab::LabArgs),
    /// One benchmark run against a live cluster, `nats bench`-style.
    Bench(crate::commands::bench::BenchArgs),
    /// Benchmark ladder and drift check on a live cluster, compared with the prediction.
    Verify(Box<crate::commands::verify::VerifyArgs>),
    /// A live cluster held against its plan, read-only: ok, warning, critical or unknown per check, as
    /// a table, JSON, Nagios plugin output or Prometheus text; exits as a Nagios plugin (0..3).
    Check(Box<crate::commands::check::CheckArgs>),
    /// Measure a cluster and write a calibration file the predictor uses.
    Calibrate(crate::commands::calibrate::CalibrateArgs),
    /// A load-generating worker on a client host, coordinated over NATS by `bench --agents` and
    /// `verify --agents`.
    Agent(crate::commands::agent::AgentArgs),
    /// Print shell completions.
    Completions(crate::commands::completions::CompletionsArgs),
    /// Print the man page (`natsplan man | man -l -`), or write one per command with --out DIR.
    Man(crate::commands::completions::ManArgs),
    /// One power-loss layer (FUSE) over a server's store directory; the lab starts these.
    #[command(hide = true)]
    Powerfs(crate::commands::powerfs::PowerfsArgs),
}

/// The inputs of a plan, the same for every command that plans (design, whatif, simulate, emit, lab up,
/// verify): `plan::inputs::Inputs` loads them.
#[derive(Debug, Clone, Default, Args)]
pub struct PlanArgs {
    /// Calibration file to predict with besides the built-in seed calibrations (its rows replace theirs
    /// by kind).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Take the streams from an OpenMessaging Benchmark workload file (one stream per topic, as OMB's NATS
    /// driver creates them); they replace same-named streams of the site file and add to the rest.
    #[arg(long, value_name = "FILE")]
    pub omb: Option<PathBuf>,
    /// How long OMB streams keep messages when the workload file does not say (`retention: 24h`).
    #[arg(long, value_name = "DURATION", requires = "omb")]
    pub omb_retention: Option<String>,
    /// Messages/s of the whole OMB workload to size for, replacing its producerRate; needed for OMB's
    /// max-rate files (producerRate 0 or 10000000: "as fast as possible" is no rate to size storage for).
    #[arg(long, value_name = "R", requires = "omb")]
    pub omb_rate: Option<f64>,
    /// Take the streams from a live cluster: its monitor URLs (comma-separated, every server's for full
    /// coverage), read twice --interval apart for the rates; or, offline, files the nats CLI wrote
    /// (`nats stream info NAME --json`, `nats stream ls --json`, `nats server request jetstream --all`).
    #[arg(long, value_name = "URL|FILE", value_delimiter = ',')]
    pub from_cluster: Vec<String>,
    /// How long to measure a --from-cluster cluster's message rates.
    #[arg(long, value_name = "DURATION", default_value = "10s", requires = "from_cluster")]
    pub interval: String,
    /// A plan saved by `natsplan design SITE --save FILE`, in place of SITE.yaml: its site, models,
    /// calibration and imported streams are used as saved (refused if from another natsplan version, or
    /// if a SITE.yaml, --models or --calibration given beside it differs from what it was built from).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["omb", "from_cluster"])]
    pub plan: Option<PathBuf>,
}

impl PlanArgs {
    /// Where the loader reads from: these flags, the site file and `--models`.
    pub fn sources(&self, g: &Global, site: Option<&std::path::Path>) -> crate::plan::inputs::Sources {
        crate::plan::inputs::Sources {
            site: site.map(|p| p.to_path_buf()),
            models: g.models.clone(),
            calibration: self.calibration.clone(),
            omb: self.omb.clone(),
            omb_retention: self.omb_retention.clone(),
            omb_rate: self.omb_rate,
            from_cluster: self.from_cluster.clone(),
            interval: self.interval.clone(),
            plan: self.plan.clone(),
        }
    }
}

/// What `natsplan bench` takes of natscli's `nats bench` forms, printed after a command-line error in a
/// `bench` command (an unknown form, a natscli v0.1 flag) so muscle memory finds its way.
const BENCH_FORMS: &str = "\
hint: natsplan bench takes natscli's forms (docs/bench.md, \"natscli's forms\"):
  nats bench pub|sub SUBJECT             natsplan bench pub|sub SUBJECT [--multisubject]
  nats bench js pub sync|async|atomic S  natsplan bench js pub sync|async|atomic S (creates and removes its own
                                         stream on SUBJECT; --stream NAME publishes to an existing one)
  nats bench js ordered|consume|fetch    natsplan bench js ordered|consume|fetch (= bench consumer MODE)
  nats bench js get sync                 natsplan bench js get sync (a stream it fills, read back by sequence)
  nats bench kv put|get                  natsplan bench kv put|get
  nats bench service request|serve       natsplan bench ping (request/reply round trips)
  (object store)                         natsplan bench obj put|get
  nats bench SUBJECT --pub N --sub M     natsplan bench core --clients N --subs M (natscli v0.1)
  --js --syncpub                         natsplan bench js --publish sync
natsplan's own forms: natsplan bench --help";

/// A hint to print after clap's own error, when one helps: natscli's bench forms for a `bench` command.
pub fn parse_hint(e: &clap::Error, args: &[std::ffi::OsString]) -> Option<&'static str> {
    use clap::error::ErrorKind as K;
    let usage = matches!(
        e.kind(),
        K::InvalidSubcommand
            | K::UnknownArgument
            | K::InvalidValue
            | K::MissingRequiredArgument
            | K::MissingSubcommand
            | K::DisplayHelpOnMissingArgumentOrSubcommand
            | K::ArgumentConflict
            | K::TooManyValues
    );
    (usage && args.iter().skip(1).any(|a| a == "bench")).then_some(BENCH_FORMS)
}
