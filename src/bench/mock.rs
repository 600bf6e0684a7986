//! A deterministic in-process client behind `client::OpClient` (hyperfine's `MockExecutor` is the model):
//! each operation is answered from a script, so the accounting of a workload written against the seam,
//! its cut-short paths (a signal mid-run, operations nobody answers, a worker that never succeeds) and
//! its output are tested without a server. What only a real nats-server shows stays in tests/live.

use super::client::OpClient;
use super::exec::Fail;
use super::{BenchSpec, Cancel, ClientChoice, LeaderPlacement, Workload};
use std::time::Duration;

/// How the mock answers one operation.
#[derive(Debug, Clone)]
pub(super) enum Answer {
    /// Answered after this long (a real sleep: latency is measured on the host clock).
    Ok(Duration),
    /// The server refused it (an error ack, a get of the wrong size).
    Refused(&'static str),
    /// Nothing answered: the operation fails at once as unanswered.
    Unanswered(&'static str),
    /// Never answered: only the run's bound or its cancel token ends the wait.
    Hang,
    /// Trip the run's cancel token (a signal arriving), then never answer.
    Signal,
}

/// One worker's scripted client: operation `j` of the worker (counted from its first) gets
/// `script[j]`, and `rest` after the script ends.
pub(super) struct MockClient {
    pub(super) first: u64,
    pub(super) script: Vec<Answer>,
    pub(super) rest: Answer,
    /// Bytes each answered operation moved on the wire, for the protocol counters.
    pub(super) wire_bytes: u64,
    pub(super) cancel: Cancel,
    pub(super) answered: std::sync::atomic::AtomicU64,
}

impl MockClient {
    /// A client that answers every operation after `latency`.
    pub(super) fn steady(first: u64, latency: Duration, cancel: &Cancel) -> MockClient {
        MockClient {
            first,
            script: Vec::new(),
            rest: Answer::Ok(latency),
            wire_bytes: 0,
            cancel: cancel.clone(),
            answered: Default::default(),
        }
    }
    /// The same with `script` first.
    pub(super) fn scripted(mut self, script: Vec<Answer>) -> MockClient {
        self.script = script;
        self
    }
}

impl OpClient for MockClient {
    async fn op(&self, j: u64) -> Result<(), Fail> {
        let k = j
            .checked_sub(self.first)
            .expect("an operation before the client's first") as usize;
        match self.script.get(k).unwrap_or(&self.rest).clone() {
            Answer::Ok(d) => {
                tokio::time::sleep(d).await;
                self.answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
            Answer::Refused(m) => Err(Fail::Refused(m.to_string())),
            Answer::Unanswered(m) => Err(Fail::Unanswered(m.to_string())),
            Answer::Hang => std::future::pending().await,
            Answer::Signal => {
                self.cancel.cancel();
                std::future::pending().await
            }
        }
    }
    fn proto(&self) -> (u64, u64) {
        let n = self.answered.load(std::sync::atomic::Ordering::Relaxed);
        (n, n * self.wire_bytes)
    }
}

/// A spec for mock runs: `workload`, `msgs` operations of `size` bytes, `timeout` per operation.
pub(super) fn spec(workload: Workload, msgs: u64, size: u64, timeout: Duration) -> BenchSpec {
    BenchSpec {
        workload,
        msgs,
        size,
        rate_per_s: None,
        backlog_cutoff: Duration::from_secs(1),
        timeout,
        monitor: vec![],
        keep: false,
        sub_sleep: None,
        sub_buffer: None,
        client: ClientChoice::AsyncNats,
        progress: false,
        leader: LeaderPlacement::Any,
        subjects: Default::default(),
    }
}
