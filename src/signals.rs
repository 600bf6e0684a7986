//! The stop signals (SIGINT, SIGTERM, SIGHUP) as natsplan handles them, for every command: which one
//! stopped the run, so the process exits as a shell reports a death by that signal (128 + its number:
//! 130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP), and `InterruptGuard`, which turns them into a
//! flag for code that is not async (lab start, `verify --faults`, emit's write) so it can stop and clean
//! up instead of dying half-way. SIGHUP is a closed terminal or SSH session: treated as the other two.
//! (Async runs watch the same signals through `bench::Cancel::trip_on_signals`, which records them here.)

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signals that stop a run cleanly.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The first stop signal received (0: none yet).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Record that `sig` stopped the run (the first one counts). Async-signal-safe: one atomic.
pub fn note(sig: libc::c_int) {
    let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// The exit code of a run a signal stopped: 128 + the signal's number, as shells report it (130 when no
/// signal was recorded: an interruption reported some other way).
pub fn interrupted_exit_code() -> u8 {
    match RECEIVED.load(Ordering::SeqCst) {
        s @ 1..=127 => 128 + s as u8,
        _ => 130,
    }
}

/// The name of a stop signal, for messages.
pub fn name(sig: libc::c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Set by the handler `InterruptGuard` installs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(sig: libc::c_int) {
    // Only atomic stores: async-signal-safe.
    note(sig);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether a stop signal arrived while an `InterruptGuard` was installed (for waits deep inside a run that
/// has one, such as `verify --faults`; false when none is).
pub fn stop_requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// While alive, SIGINT, SIGTERM and SIGHUP set a flag (`flag()`) instead of killing natsplan, so work in
/// progress can undo what it started and leave nothing behind. Drop restores the previous handlers.
pub struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let mut previous = Vec::new();
        for sig in STOP_SIGNALS {
            // SAFETY: sigaction with a handler that only stores to atomics; the old action is kept and
            // restored on drop.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_interrupt as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut new.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &new, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        InterruptGuard { previous }
    }

    pub fn flag(&self) -> &'static AtomicBool {
        &INTERRUPTED
    }

    pub fn interrupted(&self) -> bool {
        INTERRUPTED.load(Ordering::SeqCst)
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        INTERRUPTED.store(false, Ordering::SeqCst);
        for (sig, old) in self.previous.drain(..) {
            // SAFETY: restores the action saved by `install`.
            unsafe {
                libc::sigaction(sig, &old, std::ptr::null_mut());
            }
        }
    }
}
