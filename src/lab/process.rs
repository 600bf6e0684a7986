//! Process plumbing: the spawner thread children die with, process states, free ports, log tails, and
//! the Ctrl-C guard.

use anyhow::{Context, Result};
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::mpsc;

/// Starts children from one long-lived thread: PR_SET_PDEATHSIG fires when the *thread* that forked
/// the child ends, so spawning from whatever thread calls `restart` (a tokio blocking thread that retires
/// after 10 s idle, say) would kill servers at random. This thread lives exactly as long as the `Lab`.
pub(super) struct Spawner {
    tx: Option<mpsc::Sender<(Command, mpsc::Sender<std::io::Result<Child>>)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spawner {
    pub(super) fn new() -> Spawner {
        let (tx, rx) = mpsc::channel::<(Command, mpsc::Sender<std::io::Result<Child>>)>();
        let thread = std::thread::Builder::new()
            .name("lab-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("cannot start the lab spawner thread");
        Spawner {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    pub(super) fn spawn(&self, cmd: Command) -> std::io::Result<Child> {
        let (rtx, rrx) = mpsc::channel();
        self.tx
            .as_ref()
            .expect("spawner alive")
            .send((cmd, rtx))
            .map_err(|_| std::io::Error::other("lab spawner thread is gone"))?;
        rrx.recv()
            .map_err(|_| std::io::Error::other("lab spawner thread is gone"))?
    }
}

impl Drop for Spawner {
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A process's state letter (R, S, T, Z, ...), `None` when it is gone. For a stop, every thread counts:
/// the process reads as stopped (`T`) only once all its threads are.
pub(super) fn proc_state(pid: u32) -> Option<char> {
    let letter = |path: String| -> Option<char> {
        let stat = std::fs::read_to_string(path).ok()?;
        stat.rsplit(')').next()?.split_whitespace().next()?.chars().next()
    };
    let main = letter(format!("/proc/{pid}/stat"))?;
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    for t in tasks.flatten() {
        if let Some(st) = letter(format!("{}/stat", t.path().display())) {
            if st != 'T' && st != 't' {
                // Some thread still runs (or has resumed): report that.
                return Some(if main == 'T' || main == 't' { st } else { main });
            }
        }
    }
    Some(main)
}

/// `n` distinct free TCP ports on 127.0.0.1. All listeners are held until every port is chosen, so the
/// ports differ; another process may still take one before nats-server binds it (hence the retry).
/// Wait for `c` to exit until `deadline`, polling every `poll`; past it, SIGKILL and reap it. Never
/// leaves a zombie: every path ends in a reaped child (or one the OS already reaped).
pub fn reap_or_kill(c: &mut Child, deadline: std::time::Instant, poll: std::time::Duration) {
    loop {
        match c.try_wait() {
            Ok(Some(_)) | Err(_) => return,
            Ok(None) if std::time::Instant::now() > deadline => {
                let _ = c.kill();
                let _ = c.wait();
                return;
            }
            Ok(None) => std::thread::sleep(poll),
        }
    }
}

pub fn free_ports(n: usize) -> Result<Vec<u16>> {
    let mut held = Vec::with_capacity(n);
    for _ in 0..n {
        let l = TcpListener::bind(("127.0.0.1", 0)).context("cannot bind a free port on 127.0.0.1")?;
        held.push(l);
    }
    held.iter()
        .map(|l| Ok(l.local_addr()?.port()))
        .collect::<std::io::Result<Vec<u16>>>()
        .map_err(Into::into)
}

/// The last `max` bytes of a log file (for error messages).
pub fn log_tail(path: &Path, max: u64) -> String {
    // Not blocking on a FIFO, and only a regular file (a device would read without end).
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let Ok(mut f) = opened else {
        return String::from("(no log)");
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return String::from("(the log is not a regular file)");
    }
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut s = String::new();
    let _ = f.read_to_string(&mut s);
    s
}

pub use crate::signals::InterruptGuard;
