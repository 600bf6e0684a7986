//! Thin entry point: parse the command line, run, map the outcome to an exit code.
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match natsplan::cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // `check` is run by monitoring systems, which read 2 as critical: its usage errors are 3
            // (unknown), as its bad input is.
            let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
            let code = if e.use_stderr() && natsplan::commands::check::is_check_command(&args) {
                3
            } else {
                e.exit_code()
            };
            return ExitCode::from(code as u8);
        }
    };
    natsplan::main_with(cli)
}
