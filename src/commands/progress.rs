//! A progress bar on stderr for the steps of a command that can pass a second (evaluating the layouts of
//! a large site). Shown only when stderr is a terminal, and only once the step has run a second, so
//! pipes, logs, tests and quick runs never see it.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a step runs before its bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Counts done out of a total; `tick` is safe to call from parallel workers.
pub struct Progress {
    what: &'static str,
    started: Instant,
    tty: bool,
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Progress {
    pub fn new(what: &'static str) -> Progress {
        Progress {
            what,
            started: Instant::now(),
            tty: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    /// `done` of `total` finished.
    pub fn tick(&self, done: usize, total: usize) {
        if !self.tty || self.started.elapsed() < SHOW_AFTER {
            return;
        }
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let b = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(total as u64);
            b.set_style(
                indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b.set_message(self.what);
            b
        });
        b.set_length(total as u64);
        b.set_position(done as u64);
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_bar_off_a_terminal_or_before_a_second() {
        let p = Progress::new("layouts");
        p.tick(1, 2);
        assert!(p.bar.lock().unwrap().is_none());
        let late = Progress {
            what: "layouts",
            started: Instant::now() - Duration::from_secs(5),
            tty: false,
            bar: Mutex::new(None),
        };
        late.tick(1, 2);
        assert!(late.bar.lock().unwrap().is_none(), "never on a pipe");
    }
}
