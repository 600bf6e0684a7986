//! `natsplan powerfs`: one layer in a process of its own, which the lab starts per server.
//!
//! Control is by signal, so the lab needs no socket or protocol: SIGUSR1 cuts the power (the backing
//! directory goes back to what was durable, a JSON [`LossReport`] is written to `--report`, the layer
//! unmounts and the process exits 0); SIGTERM, SIGINT or SIGHUP unmount cleanly. With
//! `--die-with-parent` the kernel sends SIGTERM when the parent dies (PR_SET_PDEATHSIG), so a killed
//! test or verify run still unmounts. A panic on any thread detaches the mount before the process ends.
//! The line `mounted PATH` on stdout tells the parent the mount is up.

use super::{mounts, LossReport, Mounted};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the process was told to do.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub backing: PathBuf,
    pub mountpoint: PathBuf,
    pub expiry: Duration,
    pub metadata: super::Metadata,
    pub report: Option<PathBuf>,
    pub die_with_parent: bool,
}

fn control_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a sigset_t we own.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGUSR1, libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

fn write_report(path: &Path, report: &LossReport) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(report).map_err(io::Error::other)?)?;
    std::fs::rename(tmp, path)
}

/// Mount, then wait for a control signal. Blocks the control signals first, in this thread, so every
/// thread started afterwards (FUSE, flusher) inherits the mask and only `sigwait` sees them.
pub fn serve(opts: &ServeOptions) -> io::Result<Option<LossReport>> {
    let set = control_signals();
    // SAFETY: blocks signals for this thread; the set is initialised.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if opts.die_with_parent {
        // SAFETY: prctl with PR_SET_PDEATHSIG and a signal number takes no pointers.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) };
    }
    let m = Mounted::mount_with(&opts.backing, &opts.mountpoint, opts.expiry, opts.metadata)?;
    let mp = m.mountpoint().to_path_buf();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        let _ = mounts::detach(&mp);
        std::process::exit(101);
    }));
    {
        let mut out = io::stdout().lock();
        writeln!(out, "mounted {}", m.mountpoint().display())?;
        out.flush()?;
    }
    loop {
        let mut sig: libc::c_int = 0;
        // SAFETY: the set is initialised; sig is ours.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            continue;
        }
        if sig == libc::SIGUSR1 {
            let report = m.power_loss()?;
            if let Some(p) = &opts.report {
                write_report(p, &report)?;
            }
            return Ok(Some(report));
        }
        m.unmount()?;
        return Ok(None);
    }
}
