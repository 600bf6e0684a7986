//! `natsplan completions SHELL` and `natsplan man`: shell completions and man pages generated from the
//! clap definitions, so they never drift from the real flags.
//!
//! The man pages come from the `man` subcommand rather than build.rs or an xtask: the command tree lives
//! in the library (`cli.rs` plus each command's args in `commands/*.rs`), which a build script cannot
//! import without moving it into a separate crate, and an xtask would be a second crate to keep. A
//! subcommand uses the exact `Cli` the binary parses and ships with every installed binary (`natsplan man |
//! man -l -` to read, `natsplan man --out DIR` for packagers). Each page adds EXAMPLES, EXIT STATUS and
//! ENVIRONMENT to clap_mangen's sections (`man_sections.rs`).

use crate::cli::{Cli, Global};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::PathBuf;

#[path = "man_sections.rs"]
mod man_sections;

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: String,
}

/// The completion script for `shell` (a name as clap_complete spells it, any case).
pub fn script(shell: &str) -> Result<Vec<u8>, Failure> {
    let sh: Shell = shell.parse().map_err(|_| {
        bad_input(anyhow::anyhow!(
            "completions: unknown shell '{shell}'; use one of bash, zsh, fish, elvish, powershell"
        ))
    })?;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(sh, &mut cmd, "natsplan", &mut out);
    Ok(out)
}

pub fn run(_g: &Global, a: CompletionsArgs) -> Result<Outcome, Failure> {
    let bytes = script(&a.shell.to_ascii_lowercase())?;
    super::emit_stdout(&bytes)?;
    Ok(Outcome::Ok)
}

#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write natsplan.1 and one natsplan-COMMAND.1 per command into DIR (default: print natsplan.1).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The man page of the top-level command (roff).
pub fn man_page() -> Vec<u8> {
    man_pages().pop().map(|(_, bytes)| bytes).unwrap_or_default()
}

/// Every page: one per visible command and subcommand, `natsplan.1` last. (file name, roff)
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    man_sections::all_pages(Cli::command())
}

pub fn run_man(_g: &Global, a: ManArgs) -> Result<Outcome, Failure> {
    match a.out {
        None => {
            super::emit_stdout(&man_page())?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| cannot_run(anyhow::anyhow!("--out {}: cannot create: {e}", dir.display())))?;
            let pages = man_pages();
            for (name, bytes) in &pages {
                let p = dir.join(name);
                std::fs::write(&p, bytes)
                    .map_err(|e| cannot_run(anyhow::anyhow!("--out {}: cannot write: {e}", p.display())))?;
            }
            eprintln!("natsplan: {} man pages written to {}", pages.len(), dir.display());
        }
    }
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_naming_the_commands() {
        for sh in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let s = String::from_utf8(script(sh).unwrap()).unwrap();
            assert!(s.contains("natsplan"), "{sh}");
            assert!(s.contains("design") && s.contains("whatif"), "{sh}");
        }
        assert!(script("tcsh").is_err());
    }

    #[test]
    fn the_man_page_is_roff_with_the_commands() {
        let m = String::from_utf8(man_page()).unwrap();
        assert!(
            m.starts_with(".ie") || m.contains(".TH natsplan"),
            "{}",
            &m[..80.min(m.len())]
        );
        assert!(m.contains("design"));
    }

    #[test]
    fn every_page_has_examples_exit_status_and_environment() {
        let pages = man_pages();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "natsplan.1",
            "natsplan-bench-js.1",
            "natsplan-verify.1",
            "natsplan-man.1",
            "natsplan-lab-up.1",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        assert!(!names.contains(&"natsplan-powerfs.1"), "hidden commands get no page");
        for (name, bytes) in &pages {
            let m = String::from_utf8(bytes.clone()).unwrap();
            assert!(m.contains(".SH \"EXIT STATUS\""), "{name}");
            assert!(m.contains(".SH ENVIRONMENT"), "{name}");
            assert!(m.contains("NATS_SERVER_BIN"), "{name}");
        }
        let page = |n: &str| String::from_utf8(pages.iter().find(|(x, _)| x == n).unwrap().1.clone()).unwrap();
        let js = page("natsplan-bench-js.1");
        assert!(
            js.contains(".SH EXAMPLES") && js.contains("\\-\\-tlsfirst"),
            "bench js examples"
        );
        assert!(
            js.contains("NATS_CONTEXT") && js.contains("NATS_CREDS"),
            "bench connects: the nats CLI's variables"
        );
        assert!(
            !page("natsplan-design.1").contains("NATS_CREDS"),
            "design does not connect"
        );
        let top = page("natsplan.1");
        assert!(top.contains(".SH EXAMPLES") && top.contains("130"), "{top}");
    }
}
