//! `natsplan design SITE.yaml`.
use crate::cli::Global;
use crate::error::{Failure, Outcome};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct DesignArgs {
    /// The site file.
    pub site: PathBuf,
    /// Show only the N best layouts.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Show only this layout (by id).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
}

pub fn run(_g: &Global, _a: DesignArgs) -> Result<Outcome, Failure> {
    Ok(Outcome::Ok)
}
