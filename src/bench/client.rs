//! The client seam of the workloads that do one operation at a time: a worker's client is anything that
//! can carry out operation `j` of the run and say its protocol counters. A workload writes its loop,
//! accounting and result once against `OpClient`; the real client (async-nats, or the raw protocol path)
//! and the in-process mock (`bench::mock`, tests only) are both behind it.
//!
//! Today direct gets (`get::get_workers`), KV puts and gets (`kv::kv_workers`) and object puts and gets
//! (`obj::obj_workers`) run through it. Request/reply (`ping`) and the publish/subscribe paths (`pubsub`,
//! `js`, whose raw and async-nats halves are still written twice, `pubsub_raw` and `js_raw`) pick their
//! client inside and are to follow.

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
