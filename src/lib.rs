//! natsplan: plan where NATS JetStream servers, volumes and stream replicas go across racks, arrays and
//! disks; predict what each layout survives and how fast it runs; emit its configuration; and check the
//! predictions against a real cluster.
//!
//! Data flows one way (see ARCHITECTURE.md): `site` + `catalog` → `layout` → `survival`, `perf` → `plan::Plan`
//! → `report` / `emit` → `lab` → `bench` → `verify` → `calibrate`. Models never print; reports never
//! compute.

pub mod catalog;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod error;
pub mod fxhash;
pub mod hostload;
pub mod import;
pub mod input;
pub mod layout;
pub mod monitor;
pub mod perf;
pub mod plan;
pub mod report;
pub mod signals;
pub mod site;
pub mod size;
// Test fixtures, out of the library users build (the `fixtures` feature; tests and benches turn it on).
#[cfg(any(test, feature = "fixtures"))]
pub mod sitegen;
pub mod stats;
pub mod survival;
pub mod text;
pub mod units;

pub mod agent;
pub mod bench;
pub mod calibrate;
pub mod check;
pub mod emit;
pub mod faults;
pub mod lab;
pub mod powerfs;
pub mod verify;

use std::process::ExitCode;

pub use error::{Failure, Outcome};

/// Run a parsed command line; the report goes to stdout, diagnostics to stderr.
pub fn run(cli: cli::Cli) -> Result<Outcome, Failure> {
    commands::dispatch(cli)
}

/// Run and turn the outcome into the documented exit codes (0 ok, 1 failed check, 2 bad input,
/// 3 could not run), printing any error to stderr.
pub fn main_with(cli: cli::Cli) -> ExitCode {
    match run(cli) {
        Ok(Outcome::Ok) => ExitCode::from(0),
        Ok(Outcome::Exit(code)) => ExitCode::from(code),
        Ok(Outcome::CheckFailed(why)) => {
            eprintln!("natsplan: check failed: {}", report::terminal_safe(&why));
            ExitCode::from(1)
        }
        Ok(Outcome::Interrupted(why)) => {
            eprintln!("natsplan: {}", report::terminal_safe(&why));
            // 128 + the signal, as a shell reports a death by it: 130 SIGINT, 143 SIGTERM, 129 SIGHUP.
            ExitCode::from(signals::interrupted_exit_code())
        }
        Err(f) => {
            eprintln!("natsplan: {}", report::terminal_safe(&f.render()));
            ExitCode::from(f.code())
        }
    }
}
