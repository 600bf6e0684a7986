//! How a command ends, mapped to exit codes: 0 success, 1 a failed check (a verify row out of band, a
//! `--fail-on` condition met), 2 bad input or usage, 3 could not run (cluster unreachable, nats-server
//! missing).

/// A command that ran to the end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// The report was produced but a check the user asked for failed (exit 1).
    CheckFailed(String),
    /// A signal (SIGINT, SIGTERM) stopped the command; what was measured was reported (exit 130).
    Interrupted(String),
    /// The report was produced and says itself how it ended: exit with this code and print nothing more
    /// (`check`: a Nagios plugin's 0 ok, 1 warning, 2 critical, 3 unknown).
    Exit(u8),
}

/// A command, or an operation against a cluster (bench, verify, calibrate, agents), that could not produce
/// its report or result: the input or request is wrong (exit 2), or the environment is (exit 3). One enum
/// for both: the top level prints it with `render` (the cause chain on its own lines); anywhere else its
/// `Display` is anyhow's one-line `{:#}` (outer: inner: cause).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The input is wrong: a site file, a flag, a layout id, a request (exit 2).
    #[error("{0:#}")]
    BadInput(anyhow::Error),
    /// The environment is wrong: a server unreachable, a binary missing, a cluster that refused the work
    /// (exit 3).
    #[error("{0:#}")]
    CannotRun(anyhow::Error),
}

impl Failure {
    pub fn code(&self) -> u8 {
        match self {
            Failure::BadInput(_) => 2,
            Failure::CannotRun(_) => 3,
        }
    }
    pub fn render(&self) -> String {
        let e = match self {
            Failure::BadInput(e) | Failure::CannotRun(e) => e,
        };
        // The whole chain: the outer context names the place, the inner the cause.
        let mut s = e.to_string();
        for cause in e.chain().skip(1) {
            s.push_str(&format!("\n  caused by: {cause}"));
        }
        s
    }
}

/// Shorthand: wrap an error as bad input.
pub fn bad_input(e: impl Into<anyhow::Error>) -> Failure {
    Failure::BadInput(e.into())
}

/// Shorthand: wrap an error as "could not run".
pub fn cannot_run(e: impl Into<anyhow::Error>) -> Failure {
    Failure::CannotRun(e.into())
}
