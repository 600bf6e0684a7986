//! Thin entry point: parse the command line, run, map the outcome to an exit code.
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match natsplan::cli::Cli::try_parse_from(&args) {
        Ok(cli) => natsplan::main_with(cli),
        Err(e) => {
            // clap's message (help and version go to stdout, exit 0), then a hint where one helps.
            let _ = e.print();
            if let Some(hint) = natsplan::cli::parse_hint(&e, &args) {
                eprintln!("{hint}");
            }
            // `check` is run by monitoring systems, which read 2 as critical: its usage errors are 3
            // (unknown), as its bad input is.
            let code = if e.use_stderr() && natsplan::commands::check::is_check_command(&args) {
                3
            } else {
                e.exit_code().clamp(0, 255) as u8
            };
            ExitCode::from(code)
        }
    }
}
