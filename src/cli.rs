//! The command line. Doc comments are the help text. Each command's arguments live beside the code that
//! runs it (`commands/*.rs`), so this file only lists the commands and the options they share.

use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// Report format (table on a terminal by default).
    #[arg(long, global = true, value_enum)]
    pub format: Option<Format>,
    /// Read array, disk, server and failure-rate models from DIR instead of the built-in catalog.
    #[arg(long, global = true, value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Width of tables in characters (default: the terminal's, or 120).
    #[arg(long, global = true, value_name = "N")]
    pub width: Option<u16>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Markdown,
    Html,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Enumerate, check and rank storage and placement layouts for a site (no server needed).
    Design(crate::commands::design::DesignArgs),
    /// What a layout survives: one failure scenario, or every combination up to K failures.
    Whatif(crate::commands::whatif::WhatifArgs),
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
    /// Measure a cluster and write a calibration file the predictor uses.
    Calibrate(crate::commands::calibrate::CalibrateArgs),
    /// A load-generating worker on a client host, coordinated over NATS by `bench --agents` and
    /// `verify --agents`.
    Agent(crate::commands::agent::AgentArgs),
    /// Print shell completions.
    Completions(crate::commands::completions::CompletionsArgs),
    /// Print the man page (or write one per command with --out DIR); for packagers.
    #[command(hide = true)]
    Man(crate::commands::completions::ManArgs),
    /// One power-loss layer (FUSE) over a server's store directory; the lab starts these.
    #[command(hide = true)]
    Powerfs(crate::commands::powerfs::PowerfsArgs),
}
