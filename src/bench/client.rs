//! The client seam of the workloads that do one operation at a time: a worker's client is anything that
//! can carry out operation `j` of the run and say its protocol counters. A workload writes its loop,
//! accounting and result once against `OpClient`; the real client (async-nats, or the raw protocol path)
//! and the in-process mock (`bench::mock`, tests only) are both behind it.
//!
//! Today ping (`ping::ping_run`), direct gets (`get::get_workers`), KV puts and gets
//! (`kv::kv_workers`) and object puts and gets (`obj::obj_workers`) run through it. Core publish/subscribe and flood run through `CorePublisher`
//! and `CoreSubscriber` below (`pubsub::core_run`; adapters in `pubsub_clients`), JetStream publishing
//! through `JsPublisher` (`js::js_pub`; adapters in `js_clients`), pull consumers through
//! `ConsumerClient` (`consume::read_share`), the push ordered consumer through `PushOrderedClient`
//! (`ordered::read_push`). Every workload is written once against one of them.

use super::exec::Fail;
use std::future::Future;

/// One worker's client for a one-operation-at-a-time workload.
pub(super) trait OpClient: Send + Sync + 'static {
    /// What the client does once the run's clock has started and before its first operation (an object
    /// getter opens the store's stream here, as it always has); nothing by default.
    fn ready(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
    /// Operation `j` (its index in the whole run: agents' workers carry their global numbers). An error
    /// says whether the server answered (`Fail::Refused`, data) or nothing did (`Fail::Unanswered`).
    fn op(&self, j: u64) -> impl Future<Output = Result<(), Fail>> + Send;
    /// The connection's protocol counters (messages, bytes) for the worker's client sample.
    fn proto(&self) -> (u64, u64);
}

/// Why a core publisher stopped before its last message.
pub(super) enum PubStop {
    /// The connection is gone (a failed publish or write): the message was not sent.
    Broken(String),
    /// The run's token tripped while the publish waited (async-nats's buffer was full); it is counted as
    /// a failed, unacknowledged operation, as `exec::drive` counts an operation it abandons.
    Cancelled,
}

/// One core publisher's connection (`pubsub::publish` runs the loop, pacing and stamping once; the raw
/// protocol connection and async-nats are the adapters in `pubsub_clients`, the mock is
/// `mock::MockPublisher`). Static dispatch: the loop is compiled once per adapter.
pub(super) trait CorePublisher: Send + 'static {
    /// Whether the adapter buffers writes itself, so the loop flushes before a pacing sleep (the raw path).
    const BUFFERS: bool;
    /// Put message `j` (of this publisher, from 0) on its way, with the 8-byte send-time stamp `stamp`
    /// (`stamp::stamp_word`'s nanoseconds) in front when given.
    fn send(&mut self, j: u64, stamp: Option<u64>) -> impl Future<Output = Result<(), PubStop>> + Send;
    /// After a send (`sent` so far): write out a full buffer when there is one. Ok(true) when a batch
    /// went out, which is when the loop reports progress.
    fn settle(&mut self, sent: u64) -> impl Future<Output = Result<bool, String>> + Send;
    /// Before a pacing sleep (`BUFFERS` only): put what is buffered on the wire.
    fn flush(&mut self) -> impl Future<Output = Result<(), String>> + Send;
    /// After the last message (`sent` of them; `broken`: the loop ended on a broken connection): the
    /// server has everything written.
    fn finish(&mut self, sent: u64, broken: bool) -> impl Future<Output = Result<(), String>> + Send;
    /// The connection's protocol counters (messages, bytes).
    fn proto(&self) -> (u64, u64);
}

/// One core subscriber's connection, subscribed to the run's subject and its interest probe
/// (`pubsub::subscribe` runs the loop and the accounting once).
pub(super) trait CoreSubscriber: Send + 'static {
    /// Whether one `recv` hands over a batch of messages (the raw path: one read's frames), so the
    /// subscriber's last-message time is refreshed once a batch rather than every 64 messages.
    const BATCHED: bool;
    /// Wait for the next message(s) of the run's subject and hand each payload to `on` (answering
    /// interest probes on the way). Ok(false): the subscription ended; Err: the connection broke.
    fn recv<F: FnMut(&[u8]) + Send>(&mut self, on: &mut F) -> impl Future<Output = Result<bool, String>> + Send;
    /// The connection's protocol counters (messages, bytes).
    fn proto(&self) -> (u64, u64);
}

/// What came back for one JetStream publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ack {
    /// The stream stored it.
    Stored,
    /// The server answered with an error (data: the run goes on).
    Refused(String),
    /// The client gave up waiting (its own ack timeout): not an answer. The publish stays in flight and
    /// `js::js_pub` counts it unacknowledged when nothing answers for `--timeout`, as for an ack that
    /// never came.
    Unanswered,
}

/// One JetStream publisher's connection (`js::js_pub` runs the window, pacing, ack matching and the
/// accounting once, for the asynchronous and the synchronous (a window of 1) publisher; the raw
/// protocol connection and async-nats are the adapters in `js_clients`, the mock is
/// `mock::MockJsPublisher`). Messages are numbered from 0 per publisher.
pub(super) trait JsPublisher: Send + 'static {
    /// Queue message `j` for the wire (it may go out at once, or at the next `flush`). Err: the
    /// connection is gone and the message was not sent.
    fn send(&mut self, j: u64) -> impl Future<Output = Result<(), String>> + Send;
    /// Put what is queued on the wire.
    fn flush(&mut self) -> impl Future<Output = Result<(), String>> + Send;
    /// Wait until at least one ack came or `until` passed, then hand every ack there is to `on`, with
    /// its message's number. Ok(false): nothing came by `until`; Err: the connection broke.
    fn acks<F: FnMut(u64, Ack) + Send>(
        &mut self,
        until: std::time::Instant,
        on: &mut F,
    ) -> impl Future<Output = Result<bool, String>> + Send;
    /// The connection's protocol counters (messages, bytes).
    fn proto(&self) -> (u64, u64);
}

/// One JetStream consumer client (`consume::read_share` runs the loop, the `--timeout` stall rule, the
/// `--subsleep` pause and the accounting once; async-nats's pull consumers are the adapter,
/// `consume::PullReader`, the mock is `mock::MockReader`).
pub(super) trait ConsumerClient: Send + 'static {
    /// The next message, acknowledged where the mode acknowledges, waiting at most `wait` for it: its
    /// payload's length. An error says whether the server answered (`Fail::Refused`) or nothing did.
    fn next(&mut self, wait: std::time::Duration) -> impl Future<Output = Result<u64, Fail>> + Send;
    /// The connection's protocol counters (messages, bytes).
    fn proto(&self) -> (u64, u64);
}

/// One push ordered consumer client (`ordered::read_push` runs the loop, the `--timeout` stall rule,
/// the `--subsleep` pause and the accounting once; the raw protocol client, which keeps the consumer's
/// protocol in `ordered::OrderedState`, and async-nats's push ordered consumer are the adapters in
/// `ordered`, the mock is `mock::MockPushOrdered`). The run's clock is running from `open` on.
pub(super) trait PushOrderedClient: Send {
    /// Create the consumer; Err says why it could not be.
    fn open(&mut self) -> impl Future<Output = Result<(), String>> + Send;
    /// Wait until messages came or `until` passed: the messages and payload bytes read (0 when none
    /// came). Resets and reconnections are the client's own business. Err: why the consumer cannot go on.
    fn recv(&mut self, until: std::time::Instant) -> impl Future<Output = Result<(u64, u64), String>> + Send;
    /// The messages read so far were handled after a pause (`--subsleep`): the consumer's silence, and
    /// the wait for the next message, run from now.
    fn handled(&mut self);
    /// After the share (or a stop): stop the deliveries and delete the consumer.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
    /// Consumer resets so far (a gap, missed heartbeats, a reconnection; async-nats does not say).
    fn resets(&self) -> u64;
    /// The connection's protocol counters (messages, bytes).
    fn proto(&self) -> (u64, u64);
}
