//! The core publish/subscribe adapters behind `client::CorePublisher` and `client::CoreSubscriber`: the
//! raw protocol connection (one buffer, a precomputed `PUB` header, one write per 32 KiB, interest probes
//! answered from the read loop) and async-nats. The loops, pacing, stamping and accounting are written
//! once in `pubsub` (`publish`, `subscribe`); what is here only moves bytes.

use super::client::{CorePublisher, CoreSubscriber, PubStop};
use super::exec::{proto, Topic};
use super::raw::{self, RawConn};
use super::stamp::with_word;
use super::Cancel;
use bytes::Bytes;
use futures::StreamExt;

/// The raw path writes once this much is buffered.
const BATCH: usize = 32 * 1024;

/// A core publisher on the raw protocol path.
pub(super) struct RawPublisher {
    c: RawConn,
    header: Vec<u8>,
    template: Bytes,
}

impl RawPublisher {
    pub(super) fn new(c: RawConn, subject: &str, template: Bytes) -> RawPublisher {
        let header = format!("PUB {subject} {}\r\n", template.len()).into_bytes();
        RawPublisher { c, header, template }
    }
}

impl CorePublisher for RawPublisher {
    const BUFFERS: bool = true;
    async fn send(&mut self, _j: u64, stamp: Option<u64>) -> Result<(), PubStop> {
        let out = &mut self.c.out;
        out.extend_from_slice(&self.header);
        match stamp {
            Some(w) => {
                out.extend_from_slice(&w.to_le_bytes());
                out.extend_from_slice(&self.template[8..]);
            }
            None => out.extend_from_slice(&self.template),
        }
        out.extend_from_slice(b"\r\n");
        Ok(())
    }
    async fn settle(&mut self, _sent: u64) -> Result<bool, String> {
        if self.c.out.len() < BATCH {
            return Ok(false);
        }
        let c = &mut self.c;
        let res = async {
            c.flush_out().await?;
            // Answer server PINGs on long runs without ever waiting for input.
            if c.try_fill()? > 0 {
                c.drain(|_, _| {})?;
            }
            std::io::Result::Ok(())
        }
        .await;
        res.map(|_| true).map_err(|e| e.to_string())
    }
    async fn flush(&mut self) -> Result<(), String> {
        self.c.flush_out().await.map_err(|e| e.to_string())
    }
    async fn finish(&mut self, sent: u64, broken: bool) -> Result<(), String> {
        // nats-bench's end of publishing: everything written and a PING answered (the server has it all).
        let res = match broken {
            false => self.c.round_trip().await.map_err(|e| e.to_string()),
            true => Ok(()),
        };
        self.c.msgs_out += sent;
        res
    }
    fn proto(&self) -> (u64, u64) {
        (self.c.msgs_out + self.c.msgs_in, self.c.bytes_out + self.c.bytes_in)
    }
}

/// A core publisher on async-nats; a publish waiting on a full client buffer also ends when the run's
/// token trips.
pub(super) struct NatsPublisher {
    pub(super) c: async_nats::Client,
    pub(super) to: Topic,
    pub(super) template: Bytes,
    pub(super) cancel: Cancel,
}

impl CorePublisher for NatsPublisher {
    const BUFFERS: bool = false;
    async fn send(&mut self, j: u64, stamp: Option<u64>) -> Result<(), PubStop> {
        let payload = match stamp {
            Some(w) => with_word(&self.template, w),
            None => self.template.clone(),
        };
        tokio::select! {
            biased;
            r = self.c.publish(self.to.of(j), payload) => r.map_err(|e| PubStop::Broken(e.to_string())),
            _ = self.cancel.cancelled() => Err(PubStop::Cancelled),
        }
    }
    async fn settle(&mut self, sent: u64) -> Result<bool, String> {
        Ok(sent & 4095 == 0)
    }
    async fn flush(&mut self) -> Result<(), String> {
        Ok(())
    }
    async fn finish(&mut self, _sent: u64, _broken: bool) -> Result<(), String> {
        self.c.flush().await.map_err(|e| e.to_string())
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.c)
    }
}

/// A core subscriber on the raw path: the run's subject is sid 1, its interest probe sid 2 (answered
/// here with an empty reply).
pub(super) struct RawSubscriber(pub(super) RawConn);

impl CoreSubscriber for RawSubscriber {
    const BATCHED: bool = true;
    async fn recv<F: FnMut(&[u8]) + Send>(&mut self, on: &mut F) -> Result<bool, String> {
        let c = &mut self.0;
        c.fill().await.map_err(|e| e.to_string())?;
        c.drain(|f, out| {
            if let raw::Frame::Msg {
                sid, reply, payload, ..
            } = f
            {
                if sid == 1 {
                    on(payload);
                } else if !reply.is_empty() {
                    out.extend_from_slice(b"PUB ");
                    out.extend_from_slice(reply);
                    out.extend_from_slice(b" 0\r\n\r\n");
                }
            }
        })
        .map_err(|e| e.to_string())?;
        c.flush_out().await.map_err(|e| e.to_string())?;
        Ok(true)
    }
    fn proto(&self) -> (u64, u64) {
        (self.0.msgs_in + self.0.msgs_out, self.0.bytes_in + self.0.bytes_out)
    }
}

/// A core subscriber on async-nats (its interest probe is answered by a task of its own, `pubsub`).
pub(super) struct NatsSubscriber {
    pub(super) c: async_nats::Client,
    pub(super) sub: async_nats::Subscriber,
}

impl CoreSubscriber for NatsSubscriber {
    const BATCHED: bool = false;
    async fn recv<F: FnMut(&[u8]) + Send>(&mut self, on: &mut F) -> Result<bool, String> {
        match self.sub.next().await {
            Some(m) => {
                on(&m.payload);
                Ok(true)
            }
            None => Ok(false),
        }
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.c)
    }
}
