//! The JetStream publish adapters behind `client::JsPublisher`: the raw protocol connection (one
//! buffer, a precomputed `PUB <subject> <inbox>` header with the message's number as the reply
//! subject's last token, one write per 64 KiB, acks matched by that number) and async-nats (a publish
//! per message, its ack future awaited beside the others). The window, pacing, timeouts and accounting
//! are written once in `js::js_pub`; what is here only moves bytes.

use super::client::{Ack, JsPublisher};
use super::exec::{proto, Fail, Topic};
use super::raw::{self, RawConn};
use super::Subjects;
use async_nats::jetstream;
use bytes::Bytes;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

/// The raw path writes once this much is buffered.
const BATCH: usize = 64 * 1024;

/// A JetStream publisher on the raw protocol path. Its connection is already subscribed to `inbox*`
/// and its path to the stream proven (`js::js_run`). With `--multisubject` each message's subject is
/// written as `Subjects::of` names it (numbered from the publisher's first message), the rest of the
/// header precomputed.
pub(super) struct RawJsPublisher {
    c: RawConn,
    payload: Bytes,
    inbox: String,
    /// `PUB <subject>`.
    prefix: Vec<u8>,
    /// The `--multisubject` numbering and this publisher's first message number over the run.
    multi: Option<(Subjects, u64)>,
    /// ` <inbox>` (the message's number follows).
    reply: Vec<u8>,
    len_suffix: Vec<u8>,
    sent: u64,
}

impl RawJsPublisher {
    pub(super) fn new(c: RawConn, to: &Topic, inbox: String, payload: Bytes) -> RawJsPublisher {
        RawJsPublisher {
            c,
            prefix: format!("PUB {}", to.base()).into_bytes(),
            multi: to.numbering(),
            reply: format!(" {inbox}").into_bytes(),
            len_suffix: format!(" {}\r\n", payload.len()).into_bytes(),
            inbox,
            payload,
            sent: 0,
        }
    }
}

impl JsPublisher for RawJsPublisher {
    async fn send(&mut self, j: u64) -> Result<(), String> {
        let out = &mut self.c.out;
        out.extend_from_slice(&self.prefix);
        if let Some((subjects, first)) = &self.multi {
            subjects.push_suffix(out, first + j);
        }
        out.extend_from_slice(&self.reply);
        raw::push_num(out, j);
        out.extend_from_slice(&self.len_suffix);
        out.extend_from_slice(&self.payload);
        out.extend_from_slice(b"\r\n");
        self.sent += 1;
        if self.c.out.len() >= BATCH {
            self.c.flush_out().await.map_err(|e| e.to_string())?;
        }
        Ok(())
    }
    async fn flush(&mut self) -> Result<(), String> {
        self.c.flush_out().await.map_err(|e| e.to_string())
    }
    async fn acks<F: FnMut(u64, Ack) + Send>(&mut self, until: Instant, on: &mut F) -> Result<bool, String> {
        let read = tokio::select! {
            r = self.c.fill() => r.map(|_| true),
            _ = tokio::time::sleep_until(until.into()) => Ok(false),
        };
        if !read.map_err(|e| e.to_string())? {
            return Ok(false);
        }
        let inbox = &self.inbox;
        self.c
            .drain(|f, _| {
                if let raw::Frame::Msg { subject, payload, .. } = f {
                    let Some(j) = subject.get(inbox.len()..).and_then(|d| raw::parse_num(d).ok()) else {
                        return;
                    };
                    // A JetStream publish ack is JSON; a refusal carries an "error" object.
                    let ack = match payload.windows(7).any(|w| w == b"\"error\"") {
                        true => Ack::Refused(String::from_utf8_lossy(payload).into_owned()),
                        false => Ack::Stored,
                    };
                    on(j, ack);
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(true)
    }
    fn proto(&self) -> (u64, u64) {
        (self.sent + self.c.msgs_in, self.c.bytes_in + self.c.bytes_out)
    }
}

type PendingAck = Pin<Box<dyn Future<Output = (u64, Ack)> + Send>>;

/// A JetStream publisher on async-nats: each message is a JetStream publish whose ack future waits
/// beside the others until `acks` collects it.
pub(super) struct NatsJsPublisher {
    client: async_nats::Client,
    ctx: jetstream::Context,
    to: Topic,
    payload: Bytes,
    pending: FuturesUnordered<PendingAck>,
}

impl NatsJsPublisher {
    pub(super) fn new(client: async_nats::Client, ctx: jetstream::Context, to: Topic, payload: Bytes) -> Self {
        NatsJsPublisher {
            client,
            ctx,
            to,
            payload,
            pending: FuturesUnordered::new(),
        }
    }
}

/// An async-nats publish ack as the seam says it: its own timeout is no answer, any other error one.
fn ack_of(r: Result<jetstream::publish::PublishAck, jetstream::context::PublishError>) -> Ack {
    match r {
        Ok(_) => Ack::Stored,
        Err(e) => match Fail::of_publish(&e) {
            Fail::Unanswered(_) => Ack::Unanswered,
            _ => Ack::Refused(e.to_string()),
        },
    }
}

impl JsPublisher for NatsJsPublisher {
    async fn send(&mut self, j: u64) -> Result<(), String> {
        let f = self
            .ctx
            .publish(self.to.of(j), self.payload.clone())
            .await
            .map_err(|e| e.to_string())?;
        self.pending.push(Box::pin(async move { (j, ack_of(f.await)) }));
        Ok(())
    }
    async fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    async fn acks<F: FnMut(u64, Ack) + Send>(&mut self, until: Instant, on: &mut F) -> Result<bool, String> {
        let first = tokio::select! {
            a = self.pending.next(), if !self.pending.is_empty() => a,
            _ = tokio::time::sleep_until(until.into()) => None,
        };
        let Some((j, ack)) = first else {
            return Ok(false);
        };
        on(j, ack);
        while let Some(Some((j, ack))) = self.pending.next().now_or_never() {
            on(j, ack);
        }
        Ok(true)
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.client)
    }
}
