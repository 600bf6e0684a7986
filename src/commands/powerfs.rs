//! `natsplan powerfs` (hidden): one power-loss layer in its own process, started by the lab for each
//! server whose store should lose unsynced writes on a simulated power cut. See `powerfs::serve`.

use crate::cli::Global;
use crate::error::{cannot_run, Failure, Outcome};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct PowerfsArgs {
    /// The directory that holds the data (the "disk").
    #[arg(long, value_name = "DIR", required_unless_present = "probe")]
    pub backing: Option<PathBuf>,
    /// Where to mount the layer (the server's store directory).
    #[arg(long, value_name = "DIR", required_unless_present = "probe")]
    pub mount: Option<PathBuf>,
    /// Dirty data older than this counts as written back, like the kernel's vm.dirty_expire_centisecs.
    #[arg(long, default_value = "30s", value_parser = crate::units::parse_duration, value_name = "DURATION")]
    pub dirty_expire: Duration,
    /// When directory entries become durable: `journal` (any fsync commits earlier ones, and a commit
    /// every 5 s: ext4, XFS) or `strict` (only the directory's own fsync: POSIX's minimum).
    #[arg(long, value_enum, default_value = "journal")]
    pub metadata: MetadataArg,
    /// Where to write the JSON report of what a power loss (SIGUSR1) threw away.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Unmount when the parent process dies (PR_SET_PDEATHSIG).
    #[arg(long)]
    pub die_with_parent: bool,
    /// Only check that this machine can mount the layer (mount, write, unmount a temp dir); exit 3 if not.
    #[arg(long, conflicts_with_all = ["backing", "mount"])]
    pub probe: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum MetadataArg {
    Journal,
    Strict,
}

pub fn run(_g: &Global, a: PowerfsArgs) -> Result<Outcome, Failure> {
    if a.probe {
        let cleaned = crate::powerfs::probe().map_err(|e| cannot_run(anyhow::anyhow!("powerfs: {e}")))?;
        super::lab::say_probes_cleaned(&cleaned);
        eprintln!("powerfs: FUSE mounts work here");
        return Ok(Outcome::Ok);
    }
    let (Some(backing), Some(mountpoint)) = (a.backing, a.mount) else {
        unreachable!("clap requires --backing and --mount without --probe")
    };
    let opts = crate::powerfs::serve::ServeOptions {
        backing,
        mountpoint,
        expiry: a.dirty_expire,
        metadata: match a.metadata {
            MetadataArg::Journal => crate::powerfs::Metadata::Journal,
            MetadataArg::Strict => crate::powerfs::Metadata::Strict,
        },
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
