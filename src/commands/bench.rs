//! `natsplan bench`: not built yet (see the open issue for it).

use crate::cli::Global;
use crate::error::{Failure, Outcome};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Arguments not defined yet.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<String>,
}

pub fn run(_g: &Global, _a: BenchArgs) -> Result<Outcome, Failure> {
    Err(crate::error::cannot_run(anyhow::anyhow!(
        "`natsplan bench` is not available in this build yet"
    )))
}
