//! Cancellation of a run: one token that the command's signal watcher (SIGINT, SIGTERM, SIGHUP) trips and every
//! worker loop, wait and row loop checks. A tripped token stops the load at the next operation; what was
//! measured up to then is reported, marked interrupted, and the run's assets are removed as after a
//! finished run. Verify and calibrate can hand the same token to each row (`bench::run_with`) and check
//! `is_cancelled` between rows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A cheap, clonable cancellation token: an atomic flag for the hot paths (one relaxed load) and a
/// `Notify` for waits that must wake as soon as it trips.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Cancel {
    /// A token that nothing has tripped.
    pub fn new() -> Cancel {
        Cancel::default()
    }
    /// Trip the token: every loop stops at its next check, every `cancelled()` wait returns.
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::Relaxed)
    }
    /// Resolves once the token is tripped (at once if it already is).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Register before checking, so a `cancel` between the check and the await is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
    /// Trip this token on the first SIGINT, SIGTERM or SIGHUP (from inside a tokio runtime; SIGHUP is a
    /// closed terminal or SSH session, which must not kill the run before it reports and removes its
    /// assets). The signal is recorded (`signals::note`), so the command exits 128 + its number as a shell
    /// would report it. A second signal ends the process at once with that code, for a user who does not
    /// want to wait for the cleanup. The returned task runs until the runtime shuts down.
    pub fn trip_on_signals(&self) -> std::io::Result<tokio::task::JoinHandle<()>> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let mut hup = signal(SignalKind::hangup())?;
        let me = self.clone();
        Ok(tokio::spawn(async move {
            let mut seen = 0;
            loop {
                let sig = tokio::select! {
                    _ = int.recv() => libc::SIGINT,
                    _ = term.recv() => libc::SIGTERM,
                    _ = hup.recv() => libc::SIGHUP,
                };
                seen += 1;
                crate::signals::note(sig);
                if seen == 1 {
                    eprintln!(
                        "natsplan: {}: stopping the load and removing the run's assets (again to quit at once)",
                        crate::signals::name(sig)
                    );
                    me.cancel();
                } else {
                    std::process::exit(crate::signals::interrupted_exit_code().into());
                }
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wait_wakes_when_the_token_trips_and_returns_at_once_after() {
        let c = Cancel::new();
        assert!(!c.is_cancelled());
        let c2 = c.clone();
        let waiter = tokio::spawn(async move { c2.cancelled().await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished(), "nothing tripped it yet");
        c.cancel();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("the wait wakes")
            .unwrap();
        assert!(c.is_cancelled());
        tokio::time::timeout(Duration::from_millis(100), c.cancelled())
            .await
            .expect("already tripped: returns at once");
    }
}
