//! `natsplan completions SHELL`: shell completions generated from the clap definitions.

use crate::cli::Global;
use crate::error::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: String,
}

pub fn run(_g: &Global, a: CompletionsArgs) -> Result<Outcome, Failure> {
    Err(crate::error::cannot_run(anyhow::anyhow!(
        "completions for '{}' are not available in this build yet",
        a.shell
    )))
}
