//! Thin entry point: parse the command line, run, map the outcome to an exit code.
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = natsplan::cli::Cli::parse();
    natsplan::main_with(cli)
}
