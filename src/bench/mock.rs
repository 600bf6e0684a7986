//! A deterministic in-process client behind `client::OpClient` (hyperfine's `MockExecutor` is the model):
//! each operation is answered from a script, so the accounting of a workload written against the seam,
//! its cut-short paths (a signal mid-run, operations nobody answers, a worker that never succeeds) and
//! its output are tested without a server. What only a real nats-server shows stays in tests/live.

use super::client::{Ack, CorePublisher, CoreSubscriber, JsPublisher, OpClient, PubStop};
use super::exec::Fail;
use super::{BenchSpec, BenchWorkload, Cancel, ClientChoice, LeaderPlacement};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
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
pub(super) fn spec(workload: BenchWorkload, msgs: u64, size: u64, timeout: Duration) -> BenchSpec {
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
        consumer_leader: LeaderPlacement::Any,
        subjects: Default::default(),
    }
}

/// A scripted core publisher behind `client::CorePublisher`: every message it sends reaches each of its
/// subscribers' channels (`MockSubscriber`), so a core run's accounting is tested end to end.
pub(super) struct MockPublisher {
    pub(super) subs: Vec<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>,
    pub(super) size: usize,
    /// The connection breaks at this message of the publisher (it is not sent).
    pub(super) broken_at: Option<u64>,
    /// A signal arrives while this message waits on a full buffer (it is abandoned).
    pub(super) signal_at: Option<u64>,
    pub(super) cancel: Cancel,
    pub(super) sent: u64,
}

impl MockPublisher {
    pub(super) fn new(subs: Vec<tokio::sync::mpsc::UnboundedSender<Vec<u8>>>, size: usize, cancel: &Cancel) -> Self {
        MockPublisher {
            subs,
            size,
            broken_at: None,
            signal_at: None,
            cancel: cancel.clone(),
            sent: 0,
        }
    }
}

impl CorePublisher for MockPublisher {
    const BUFFERS: bool = false;
    async fn send(&mut self, j: u64, stamp: Option<u64>) -> Result<(), PubStop> {
        if self.broken_at == Some(j) {
            return Err(PubStop::Broken("connection reset by peer".into()));
        }
        if self.signal_at == Some(j) {
            self.cancel.cancel();
            self.cancel.cancelled().await;
            return Err(PubStop::Cancelled);
        }
        let mut p = vec![0u8; self.size];
        if let Some(w) = stamp {
            p[..8].copy_from_slice(&w.to_le_bytes());
        }
        for s in &self.subs {
            let _ = s.send(p.clone());
        }
        self.sent += 1;
        // Let subscribers run now and then, as a real publisher's writes would.
        if self.sent.is_multiple_of(64) {
            tokio::task::yield_now().await;
        }
        Ok(())
    }
    async fn settle(&mut self, sent: u64) -> Result<bool, String> {
        Ok(sent.is_multiple_of(100))
    }
    async fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    async fn finish(&mut self, _sent: u64, _broken: bool) -> Result<(), String> {
        Ok(())
    }
    fn proto(&self) -> (u64, u64) {
        (self.sent, self.sent * self.size as u64)
    }
}

/// A core subscriber fed by `MockPublisher`s; it loses every `lose_every`-th message it is sent (a
/// slow-consumer cut-off) when set.
pub(super) struct MockSubscriber {
    pub(super) rx: tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>,
    pub(super) lose_every: Option<u64>,
    pub(super) seen: u64,
}

impl CoreSubscriber for MockSubscriber {
    const BATCHED: bool = false;
    async fn recv<F: FnMut(&[u8]) + Send>(&mut self, on: &mut F) -> Result<bool, String> {
        loop {
            let Some(p) = self.rx.recv().await else {
                return Ok(false);
            };
            self.seen += 1;
            if self.lose_every.is_some_and(|k| self.seen.is_multiple_of(k)) {
                continue;
            }
            on(&p);
            return Ok(true);
        }
    }
    fn proto(&self) -> (u64, u64) {
        (self.seen, 0)
    }
}

/// `pubs` mock publishers each wired to every one of `subs` mock subscribers.
pub(super) fn core_clients(
    pubs: usize,
    subs: usize,
    size: usize,
    cancel: &Cancel,
) -> (Vec<MockPublisher>, Vec<MockSubscriber>) {
    let (mut txs, mut rxs) = (Vec::new(), Vec::new());
    for _ in 0..subs {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        txs.push(tx);
        rxs.push(MockSubscriber {
            rx,
            lose_every: None,
            seen: 0,
        });
    }
    let pubs = (0..pubs)
        .map(|_| MockPublisher::new(txs.clone(), size, cancel))
        .collect();
    (pubs, rxs)
}

/// A scripted JetStream publisher behind `client::JsPublisher`: the ack of message `j` is `answer(j)`
/// (None: it never comes), ready as soon as the message is flushed.
pub(super) struct MockJsPublisher {
    pub(super) answer: fn(u64) -> Option<Ack>,
    /// The connection breaks at this message (it is not sent).
    pub(super) broken_at: Option<u64>,
    /// A signal arrives as this message is sent.
    pub(super) signal_at: Option<u64>,
    /// This message's ack is held back until a read finds no other ack to hand over (acks out of order,
    /// as async-nats can hand them over).
    pub(super) late: Option<u64>,
    /// This message's ack is handed over twice (a stray second answer).
    pub(super) twice: Option<u64>,
    /// The most messages sent and not yet answered at any time (shared, to read after the run).
    pub(super) max_in_flight: Arc<AtomicU64>,
    pub(super) cancel: Cancel,
    held: Vec<u64>,
    answered: u64,
    queued: Vec<u64>,
    flushed: Vec<u64>,
    sent: u64,
}

impl MockJsPublisher {
    pub(super) fn new(answer: fn(u64) -> Option<Ack>, cancel: &Cancel) -> MockJsPublisher {
        MockJsPublisher {
            answer,
            broken_at: None,
            signal_at: None,
            late: None,
            twice: None,
            max_in_flight: Arc::default(),
            cancel: cancel.clone(),
            held: Vec::new(),
            answered: 0,
            queued: Vec::new(),
            flushed: Vec::new(),
            sent: 0,
        }
    }
}

impl JsPublisher for MockJsPublisher {
    async fn send(&mut self, j: u64) -> Result<(), String> {
        if self.broken_at == Some(j) {
            return Err("connection reset by peer".into());
        }
        if self.signal_at == Some(j) {
            self.cancel.cancel();
        }
        self.queued.push(j);
        self.sent += 1;
        self.max_in_flight
            .fetch_max(self.sent - self.answered, Ordering::Relaxed);
        Ok(())
    }
    async fn flush(&mut self) -> Result<(), String> {
        self.flushed.append(&mut self.queued);
        Ok(())
    }
    async fn acks<F: FnMut(u64, Ack) + Send>(&mut self, until: std::time::Instant, on: &mut F) -> Result<bool, String> {
        let mut any = false;
        for j in std::mem::take(&mut self.flushed) {
            if self.late == Some(j) {
                self.held.push(j);
                continue;
            }
            if let Some(a) = (self.answer)(j) {
                if self.twice == Some(j) {
                    on(j, a.clone());
                }
                on(j, a);
                self.answered += 1;
                any = true;
            }
        }
        if !any {
            for j in std::mem::take(&mut self.held) {
                if let Some(a) = (self.answer)(j) {
                    on(j, a);
                    self.answered += 1;
                    any = true;
                }
            }
        }
        if !any {
            tokio::time::sleep_until(until.into()).await;
        }
        Ok(any)
    }
    fn proto(&self) -> (u64, u64) {
        (self.sent, 0)
    }
}

/// A scripted consumer client behind `client::ConsumerClient`: read `k` (counted from 0) gets
/// `script[k]`, and `rest` after the script ends; an answered read hands over `size` bytes.
pub(super) struct MockReader {
    pub(super) script: Vec<Answer>,
    pub(super) rest: Answer,
    pub(super) size: u64,
    pub(super) cancel: Cancel,
    pub(super) reads: u64,
    pub(super) answered: u64,
}

impl MockReader {
    pub(super) fn steady(size: u64, latency: Duration, cancel: &Cancel) -> MockReader {
        MockReader {
            script: Vec::new(),
            rest: Answer::Ok(latency),
            size,
            cancel: cancel.clone(),
            reads: 0,
            answered: 0,
        }
    }
}

impl super::client::ConsumerClient for MockReader {
    async fn next(&mut self, wait: Duration) -> Result<u64, Fail> {
        let k = self.reads as usize;
        self.reads += 1;
        match self.script.get(k).unwrap_or(&self.rest).clone() {
            Answer::Ok(d) => {
                tokio::time::sleep(d).await;
                self.answered += 1;
                Ok(self.size)
            }
            Answer::Refused(m) => Err(Fail::Refused(m.to_string())),
            Answer::Unanswered(m) => Err(Fail::Unanswered(m.to_string())),
            // A stream run dry: the client's own wait ends first.
            Answer::Hang => {
                tokio::time::sleep(wait * 2).await;
                Err(Fail::Unanswered("no message".into()))
            }
            Answer::Signal => {
                self.cancel.cancel();
                std::future::pending().await
            }
        }
    }
    fn proto(&self) -> (u64, u64) {
        (self.answered, self.answered * self.size)
    }
}

/// A scripted push ordered client behind `client::PushOrderedClient`: each `recv` hands over `per_recv`
/// messages of `size` bytes (never more than the share), until `stall_after` messages, after which
/// nothing comes; `refuse` makes `open` fail.
pub(super) struct MockPushOrdered {
    pub(super) share: u64,
    pub(super) size: u64,
    pub(super) per_recv: u64,
    pub(super) stall_after: Option<u64>,
    pub(super) refuse: Option<&'static str>,
    pub(super) got: u64,
    pub(super) closed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl super::client::PushOrderedClient for MockPushOrdered {
    async fn open(&mut self) -> Result<(), String> {
        self.refuse.map_or(Ok(()), |why| Err(why.to_string()))
    }
    async fn recv(&mut self, until: std::time::Instant) -> Result<(u64, u64), String> {
        let cap = self.stall_after.unwrap_or(u64::MAX).min(self.share);
        let n = self.per_recv.min(cap.saturating_sub(self.got));
        if n == 0 {
            tokio::time::sleep_until(until.into()).await;
            return Ok((0, 0));
        }
        self.got += n;
        Ok((n, n * self.size))
    }
    fn handled(&mut self) {}
    async fn close(&mut self) {
        self.closed.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    fn resets(&self) -> u64 {
        0
    }
    fn proto(&self) -> (u64, u64) {
        (self.got, self.got * self.size)
    }
}
