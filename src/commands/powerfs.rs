//! `natsplan powerfs` (hidden): one power-loss layer in its own process, started by the lab for each
//! server whose store should lose unsynced writes on a simulated power cut. See `powerfs::serve`.

use crate::cli::Global;
use crate::error::{cannot_run, Failure, Outcome};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct PowerfsArgs {
    /// The directory that holds the data (the "disk").
    #[arg(long, value_name = "DIR")]
    pub backing: PathBuf,
    /// Where to mount the layer (the server's store directory).
    #[arg(long, value_name = "DIR")]
    pub mount: PathBuf,
    /// Dirty data older than this counts as written back, like the kernel's vm.dirty_expire_centisecs.
    #[arg(long, default_value = "30s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub dirty_expire: Duration,
    /// Where to write the JSON report of what a power loss (SIGUSR1) threw away.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Unmount when the parent process dies (PR_SET_PDEATHSIG).
    #[arg(long)]
    pub die_with_parent: bool,
}

pub fn run(_g: &Global, a: PowerfsArgs) -> Result<Outcome, Failure> {
    let opts = crate::powerfs::serve::ServeOptions {
        backing: a.backing,
        mountpoint: a.mount,
        expiry: a.dirty_expire,
        report: a.report,
        die_with_parent: a.die_with_parent,
    };
    crate::powerfs::serve::serve(&opts).map_err(|e| {
        cannot_run(anyhow::anyhow!(
            "powerfs: {} on {}: {e}",
            opts.mountpoint.display(),
            opts.backing.display()
        ))
    })?;
    Ok(Outcome::Ok)
}
