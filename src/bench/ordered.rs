//! The push ordered consumer (`bench consumer ordered --push`): the legacy JetStream API's ordered
//! consumer, as nats.go 1.22's `js.Subscribe(subject, cb, nats.OrderedConsumer())` runs it and natscli's
//! `nats bench oldjs ordered` measures it. The server pushes the stream to a deliver inbox: an ephemeral
//! R1 memory consumer, no acks, flow control and idle heartbeats (nats.go js.go `Subscribe`).
//!
//! What the client owes the server, and what it checks, as nats.go does:
//! - a flow-control request (a `100 FlowControl Request` status with a reply subject) is answered with
//!   an empty message once every message before it has been handled; the server stops pushing while
//!   one is unanswered. A heartbeat carrying `Nats-Consumer-Stalled` names a request still owed.
//! - every data message's ack reply subject carries its stream and consumer sequences; a consumer
//!   sequence that is not the next one is a gap, and so is a heartbeat whose `Nats-Last-Consumer` is not
//!   the last one read. A gap resets the consumer: a new deliver inbox and a new consumer starting at
//!   the stream sequence after the last one read (nats.go `resetOrderedConsumer`).
//! - no message and no heartbeat for two heartbeat intervals (nats.go `hbcThresh`) resets it too (the
//!   consumer was deleted, or its server is gone).
//!
//! Timing follows natscli's oldjs ordered: the clock runs from before the consumer is created (the
//! server starts pushing as soon as it exists, so it cannot be created before the clock) to the last
//! message of the client's share. Data goes over `raw` (no per-message allocation or channel hop) when
//! the connection allows it; otherwise async-nats's push ordered consumer, the one `obj` gets read with.

use super::client::PushOrderedClient;
use super::raw::{self, Frame, RawConn};
use super::result::{new_hist, ClientSample};
use super::{env::*, exec::*};
use async_nats::jetstream;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// nats.go's `orderedHeartbeatsInterval`.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// How often a waiting client looks at the run's token.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// The sid of a client's JetStream API replies; deliver inboxes take `DELIVER_SID + generation`.
const API_SID: u64 = 1;
const DELIVER_SID: u64 = 100;

/// The idle heartbeat asked of the server: nats.go's 5 s, shortened so that two missed heartbeats (a
/// reset) come well within `--timeout`, after which the client gives up. The server sends heartbeats
/// only while it has nothing to push, so this costs nothing while messages flow.
pub(super) fn heartbeat(timeout: Duration) -> Duration {
    (timeout / 4).clamp(Duration::from_millis(100), HEARTBEAT)
}

/// A data message's stream and consumer sequences from its ack reply subject, as nats.go's
/// `getMetadataFields` reads both layouts: `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<dseq>.<ts>.
/// <pending>` (9 tokens) and `$JS.ACK.<domain>.<account hash>.<stream>.<consumer>.…` (11 or more).
pub(super) fn ack_seqs(reply: &[u8]) -> Option<(u64, u64)> {
    let mut t: [&[u8]; 12] = [&[]; 12];
    let mut n = 0;
    for tok in reply.split(|&b| b == b'.') {
        if n == t.len() {
            break;
        }
        t[n] = tok;
        n += 1;
    }
    if n < 9 || t[0] != b"$JS" || t[1] != b"ACK" {
        return None;
    }
    let (s, d) = if n == 9 {
        (5, 6)
    } else if n >= 11 {
        (7, 8)
    } else {
        return None;
    };
    Some((raw::parse_num(t[s]).ok()?, raw::parse_num(t[d]).ok()?))
}

/// The value of header `name` (case-insensitive) in an HMSG header block.
pub(super) fn header<'a>(headers: &'a [u8], name: &str) -> Option<&'a [u8]> {
    headers.split(|&b| b == b'\n').skip(1).find_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = line.iter().position(|&b| b == b':')?;
        let (k, v) = line.split_at(colon);
        k.eq_ignore_ascii_case(name.as_bytes()).then(|| v[1..].trim_ascii())
    })
}

/// Where and what one client reads: the stream, an optional subject filter, the stream sequence its
/// share starts at and the share's size.
#[derive(Debug, Clone)]
pub(super) struct Share {
    pub(super) stream: String,
    pub(super) filter: String,
    pub(super) start: u64,
    pub(super) n: u64,
}

/// The protocol side of one push ordered consumer, apart from the socket: it reads frames and writes
/// what it owes the server into an output buffer, so that every rule above is tested without a server.
pub(super) struct OrderedState {
    share: Share,
    /// The client's inbox prefix: API replies on `<inbox>r.*`, deliveries on `<inbox>d<generation>`.
    inbox: String,
    api: String,
    name: String,
    hb: Duration,
    /// Consumer generations so far (the first is 1); each reset makes one.
    pub(super) generation: u64,
    /// Whether the current generation's create was answered without an error.
    pub(super) created: bool,
    expect_dseq: u64,
    /// The stream sequence to start from when (re)creating: the one after the last read.
    pub(super) next_sseq: u64,
    pub(super) got: u64,
    pub(super) bytes: u64,
    /// Resets: gaps, missed heartbeats, reconnections.
    pub(super) resets: u64,
    pub(super) fc_answered: u64,
    /// Why the consumer cannot go on (the server refused to create it, or the client is not allowed).
    pub(super) fatal: Option<String>,
    /// A gap seen while reading a buffer: the reset happens once the buffer is read.
    gap: bool,
}

impl OrderedState {
    /// `name` is the run's name of this client's consumers (`-g<generation>` is added); `api` the
    /// JetStream API prefix (`$JS.API`, or a domain's).
    pub(super) fn new(share: Share, inbox: String, api: String, name: String, hb: Duration) -> OrderedState {
        let next_sseq = share.start;
        OrderedState {
            share,
            inbox,
            api,
            name,
            hb,
            generation: 0,
            created: false,
            expect_dseq: 1,
            next_sseq,
            got: 0,
            bytes: 0,
            resets: 0,
            fc_answered: 0,
            fatal: None,
            gap: false,
        }
    }

    pub(super) fn done(&self) -> bool {
        self.got >= self.share.n || self.fatal.is_some()
    }

    fn sid(&self) -> u64 {
        DELIVER_SID + self.generation
    }

    fn consumer(&self, generation: u64) -> String {
        format!("{}-g{generation}", self.name)
    }

    /// Subscribe to the API replies and create the first consumer (also after a reconnection, on the
    /// new connection: the old one's subscriptions went with it).
    pub(super) fn start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("SUB {}r.* {API_SID}\r\n", self.inbox).as_bytes());
        self.open(out);
    }

    /// After a reconnection: subscribe again on the new connection, delete the consumer of the lost
    /// one (it may live on a server still up) and open the next generation.
    pub(super) fn restart(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("SUB {}r.* {API_SID}\r\n", self.inbox).as_bytes());
        self.delete_current(out);
        self.resets += 1;
        self.gap = false;
        self.open(out);
    }

    /// A new generation: its deliver inbox, then the consumer pushing to it from `next_sseq`.
    fn open(&mut self, out: &mut Vec<u8>) {
        self.generation += 1;
        self.created = false;
        self.expect_dseq = 1;
        let deliver = format!("{}d{}", self.inbox, self.generation);
        out.extend_from_slice(format!("SUB {deliver} {}\r\n", self.sid()).as_bytes());
        let mut config = json!({
            "name": self.consumer(self.generation),
            "deliver_subject": deliver,
            "deliver_policy": "by_start_sequence",
            "opt_start_seq": self.next_sseq,
            "ack_policy": "none",
            "max_deliver": 1,
            "replay_policy": "instant",
            "flow_control": true,
            "idle_heartbeat": self.hb.as_nanos() as u64,
            "mem_storage": true,
            "num_replicas": 1,
        });
        if !self.share.filter.is_empty() {
            config["filter_subject"] = json!(self.share.filter);
        }
        let body = json!({ "stream_name": self.share.stream, "config": config }).to_string();
        let subject = format!(
            "{}.CONSUMER.CREATE.{}.{}",
            self.api,
            self.share.stream,
            self.consumer(self.generation)
        );
        pub_msg(
            out,
            &subject,
            &format!("{}r.c{}", self.inbox, self.generation),
            body.as_bytes(),
        );
    }

    /// Drop the current generation (its inbox, and the consumer: nats.go leaves it to expire) and open
    /// the next one from the stream sequence after the last read.
    pub(super) fn reset(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(format!("UNSUB {}\r\n", self.sid()).as_bytes());
        self.delete_current(out);
        self.resets += 1;
        self.gap = false;
        self.open(out);
    }

    /// Ask the server to delete the current generation's consumer (answered on `<inbox>r.d<gen>`).
    pub(super) fn delete_current(&self, out: &mut Vec<u8>) {
        let name = self.consumer(self.generation);
        let subject = format!("{}.CONSUMER.DELETE.{}.{name}", self.api, self.share.stream);
        pub_msg(out, &subject, &format!("{}r.d{}", self.inbox, self.generation), b"");
    }

    /// Whether `f` answers the delete of generation `generation`.
    pub(super) fn is_delete_reply(&self, f: &Frame<'_>, generation: u64) -> bool {
        matches!(f, Frame::Msg { sid: API_SID, subject, .. }
            if *subject == format!("{}r.d{generation}", self.inbox).as_bytes())
    }

    /// Read one frame; true when it shows the consumer is alive (a message or a heartbeat of the
    /// current generation). Call `after_buffer` once the buffer's frames are read.
    pub(super) fn frame(&mut self, f: Frame<'_>, out: &mut Vec<u8>) -> bool {
        match f {
            Frame::Err(e) => {
                self.fatal.get_or_insert_with(|| format!("the server said: {e}"));
                false
            }
            Frame::Msg {
                sid: API_SID,
                subject,
                payload,
                ..
            } => {
                self.api_reply(subject, payload);
                false
            }
            Frame::Msg {
                sid,
                reply,
                headers,
                payload,
                ..
            } if sid == self.sid() && !self.gap && !self.done() => {
                if payload.is_empty() && headers.starts_with(b"NATS/1.0 100") {
                    self.control(reply, headers, out);
                } else {
                    self.data(reply, payload.len());
                }
                true
            }
            // An earlier generation's leftovers, or past the share.
            _ => false,
        }
    }

    fn api_reply(&mut self, subject: &[u8], payload: &[u8]) {
        if subject != format!("{}r.c{}", self.inbox, self.generation).as_bytes() {
            return; // a delete's answer, or an earlier generation's create
        }
        let v: serde_json::Value = serde_json::from_slice(payload).unwrap_or_default();
        match v.get("error") {
            // The cluster cannot place it now (a leader being elected after a server left, 503 "JetStream
            // system temporarily unavailable"): the silence check tries again.
            Some(e) if e.get("code").and_then(|c| c.as_u64()).is_some_and(|c| c >= 500) => {}
            Some(e) => {
                let what = e.get("description").and_then(|d| d.as_str()).unwrap_or("refused");
                self.fatal.get_or_insert_with(|| {
                    format!("creating the ordered consumer on stream {}: {what}", self.share.stream)
                });
            }
            None => self.created = true,
        }
    }

    /// A flow-control request or an idle heartbeat.
    fn control(&mut self, reply: &[u8], headers: &[u8], out: &mut Vec<u8>) {
        if !reply.is_empty() {
            // Everything before it has been read: answer at once.
            pub_msg(out, std::str::from_utf8(reply).unwrap_or(""), "", b"");
            self.fc_answered += 1;
            return;
        }
        if let Some(owed) = header(headers, "Nats-Consumer-Stalled") {
            pub_msg(out, std::str::from_utf8(owed).unwrap_or(""), "", b"");
            self.fc_answered += 1;
        }
        if let Some(last) = header(headers, "Nats-Last-Consumer").and_then(|v| raw::parse_num(v).ok()) {
            if last != self.expect_dseq - 1 {
                self.gap = true;
            }
        }
    }

    fn data(&mut self, reply: &[u8], len: usize) {
        match ack_seqs(reply) {
            Some((sseq, dseq)) if dseq == self.expect_dseq => {
                self.expect_dseq += 1;
                self.next_sseq = sseq + 1;
                self.got += 1;
                self.bytes += len as u64;
            }
            _ => self.gap = true,
        }
    }

    /// After a buffer's frames: a gap seen in it resets the consumer (true when it did).
    pub(super) fn after_buffer(&mut self, out: &mut Vec<u8>) -> bool {
        if self.gap && !self.done() {
            self.reset(out);
            return true;
        }
        self.gap = false;
        false
    }

    /// Two heartbeat intervals without a sign of life.
    pub(super) fn silent_for(&self) -> Duration {
        self.hb * 2
    }
}

/// `PUB subject [reply] len\r\npayload\r\n`.
fn pub_msg(out: &mut Vec<u8>, subject: &str, reply: &str, payload: &[u8]) {
    out.extend_from_slice(b"PUB ");
    out.extend_from_slice(subject.as_bytes());
    if !reply.is_empty() {
        out.push(b' ');
        out.extend_from_slice(reply.as_bytes());
    }
    out.push(b' ');
    raw::push_num(out, payload.len() as u64);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(payload);
    out.extend_from_slice(b"\r\n");
}

/// Per-client settings of a push ordered run.
pub(super) struct Client {
    /// The client's global index (its consumers' names, its sample id).
    pub(super) gi: usize,
    pub(super) share: Share,
    /// Pause after each message (a deliberately slow consumer, nats bench's `--sleep`).
    pub(super) sleep: Option<Duration>,
}

/// The name of global client `gi`'s consumers (each generation adds `-g<n>`).
pub(super) fn consumer_base(env: &Env, gi: usize) -> String {
    format!("natsplan-{}-c{gi}", env.run_id)
}

/// One client's push ordered read on any `PushOrderedClient` (see the module doc); everything from the
/// consumer's creation on is inside the client's measured window. Ends when the share is read, the run
/// is stopped, nothing came for `--timeout`, or the consumer cannot go on. Returns the client's report
/// and its consumer resets.
pub(super) async fn read_push<P: PushOrderedClient>(env: &Env, mut p: P, k: Client) -> (TaskOut, u64) {
    let timeout = env.spec.timeout;
    let t0 = Instant::now();
    let (mut got, mut bytes, mut last_data) = (0u64, 0u64, t0);
    let (mut stopped, mut cancelled) = (None::<String>, false);
    if let Err(e) = p.open().await {
        stopped = Some(e);
    }
    while stopped.is_none() && got < k.share.n {
        if env.cancel.is_cancelled() {
            cancelled = true;
            break;
        }
        let until = (last_data + timeout).min(Instant::now() + CANCEL_POLL);
        match p.recv(until).await {
            Err(e) => stopped = Some(e),
            Ok((0, _)) if Instant::now() >= last_data + timeout => {
                stopped = Some(format!(
                    "no message for {timeout:?} after {got} of {} (the ordered consumer stalled)",
                    k.share.n
                ));
            }
            Ok((0, _)) => {}
            Ok((read, b)) => {
                (got, bytes, last_data) = (got + read, bytes + b, Instant::now());
                env.done.fetch_add(read, Ordering::Relaxed);
                if let Some(s) = k.sleep {
                    // Flow-control answers wait until these messages have been "handled"; the pause is
                    // the client's own, not the consumer's silence.
                    tokio::time::sleep(s.saturating_mul(read.min(u64::from(u32::MAX)) as u32)).await;
                    last_data = Instant::now();
                    p.handled();
                }
            }
        }
    }
    let t1 = last_data;
    p.close().await;
    let (proto_msgs, proto_bytes) = p.proto();
    let sample = ClientSample {
        id: format!("S{}", k.gi + 1),
        msgs: got,
        bytes,
        proto_msgs,
        proto_bytes,
        start_s: env.secs(t0),
        end_s: env.secs(t1.max(t0)),
        latency_us: None,
    };
    let resets = p.resets();
    (out(sample, stopped, cancelled, got < k.share.n, resets), resets)
}

/// The raw protocol push ordered client: `OrderedState` keeps the consumer's protocol; a broken
/// connection is reconnected (to the next server) and the consumer reset, as nats.go reconnects.
pub(super) struct RawPushOrdered<'a> {
    env: &'a Env,
    c: RawConn,
    st: OrderedState,
    server: usize,
    /// When the consumer last showed it is alive (data, a heartbeat, a reset).
    alive: Instant,
    last_data: Instant,
    /// The connection's error, not yet acted on.
    io: Option<String>,
    /// What earlier connections carried.
    proto: (u64, u64),
}

impl<'a> RawPushOrdered<'a> {
    /// `c` is connected (before the clock).
    pub(super) fn new(env: &'a Env, c: RawConn, k: &Client) -> RawPushOrdered<'a> {
        let st = OrderedState::new(
            k.share.clone(),
            format!("_INBOX.natsplan{}o{}.", env.run_id, k.gi),
            env.conn.js_api_prefix(),
            consumer_base(env, k.gi),
            heartbeat(env.spec.timeout),
        );
        let now = Instant::now();
        RawPushOrdered {
            env,
            c,
            st,
            server: k.gi,
            alive: now,
            last_data: now,
            io: None,
            proto: (0, 0),
        }
    }

    /// The connection broke: count what it carried, reconnect and start a new generation.
    async fn recover(&mut self, e: String) -> Result<(), String> {
        self.proto.0 += self.c.msgs_in + self.c.msgs_out;
        self.proto.1 += self.c.bytes_in + self.c.bytes_out;
        let until = self.last_data + self.env.spec.timeout;
        let Some(nc) = reconnect(self.env, &mut self.server, until).await else {
            return Err(format!("the connection broke ({e}) and no server took it back"));
        };
        self.c = nc;
        self.st.restart(&mut self.c.out);
        self.alive = Instant::now();
        self.io = self.c.flush_out().await.err().map(|e| e.to_string());
        Ok(())
    }
}

impl PushOrderedClient for RawPushOrdered<'_> {
    async fn open(&mut self) -> Result<(), String> {
        let now = Instant::now();
        (self.alive, self.last_data) = (now, now);
        self.st.start(&mut self.c.out);
        self.io = self.c.flush_out().await.err().map(|e| e.to_string());
        Ok(())
    }
    async fn recv(&mut self, until: Instant) -> Result<(u64, u64), String> {
        loop {
            if let Some(f) = &self.st.fatal {
                return Err(f.clone());
            }
            if let Some(e) = self.io.take() {
                self.recover(e).await?;
                continue;
            }
            let deadline = (self.alive + self.st.silent_for()).min(until);
            let res = tokio::select! {
                biased;
                r = self.c.fill() => r.map(Some),
                _ = tokio::time::sleep_until(deadline.into()) => Ok(None),
            };
            let now = Instant::now();
            let (before, before_bytes) = (self.st.got, self.st.bytes);
            match res {
                Err(e) => {
                    self.io = Some(e.to_string());
                    continue;
                }
                Ok(None) if now >= until => return Ok((0, 0)),
                Ok(None) => {
                    if now >= self.alive + self.st.silent_for() {
                        self.st.reset(&mut self.c.out);
                        self.alive = now;
                    }
                }
                Ok(Some(_)) => {
                    let (st, mut live) = (&mut self.st, false);
                    if let Err(e) = self.c.drain(|f, out| live |= st.frame(f, out)) {
                        self.io = Some(e.to_string());
                        continue;
                    }
                    if self.st.after_buffer(&mut self.c.out) || live {
                        self.alive = now;
                    }
                }
            }
            self.io = self.c.flush_out().await.err().map(|e| e.to_string());
            let read = self.st.got - before;
            if read > 0 {
                self.last_data = now;
                return Ok((read, self.st.bytes - before_bytes));
            }
        }
    }
    fn handled(&mut self) {
        let now = Instant::now();
        (self.last_data, self.alive) = (now, now);
    }
    async fn close(&mut self) {
        if self.io.is_none() {
            finish_raw(&mut self.c, &self.st, self.env.spec.timeout).await;
        }
    }
    fn resets(&self) -> u64 {
        self.st.resets
    }
    fn proto(&self) -> (u64, u64) {
        (
            self.proto.0 + self.c.msgs_in + self.c.msgs_out,
            self.proto.1 + self.c.bytes_in + self.c.bytes_out,
        )
    }
}

/// The client's report; an unfinished share is one failed read (the reason says why).
fn out(sample: ClientSample, why: Option<String>, cancelled: bool, short: bool, resets: u64) -> TaskOut {
    let failed = short && !cancelled;
    TaskOut {
        sample,
        hist: new_hist(),
        errors: u64::from(failed),
        first_error: why.clone(),
        behind: false,
        max_lag: Duration::ZERO,
        unacked: u64::from(failed),
        stopped: why.map(|w| {
            if resets > 0 {
                format!("{w} ({resets} consumer resets)")
            } else {
                w
            }
        }),
        cancelled,
    }
}

/// Reconnect to the next server (round robin over the run's servers) until `until`.
async fn reconnect(env: &Env, server: &mut usize, until: Instant) -> Option<RawConn> {
    while Instant::now() < until && !env.cancel.is_cancelled() {
        *server += 1;
        let t = env.conn.raw_target(*server)?;
        if let Ok(c) = raw_connect(&t, "natsplan-bench-ordered").await {
            return Some(c);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}

/// After the share: stop the deliveries and delete the consumer, waiting (within `timeout`) for the
/// server's answer so that a run on an existing stream leaves nothing behind.
async fn finish_raw(c: &mut RawConn, st: &OrderedState, timeout: Duration) {
    c.out
        .extend_from_slice(format!("UNSUB {}\r\n", DELIVER_SID + st.generation).as_bytes());
    st.delete_current(&mut c.out);
    if c.flush_out().await.is_err() {
        return;
    }
    let until = Instant::now() + timeout.min(Duration::from_secs(5));
    loop {
        let mut answered = false;
        if c.drain(|f, _| answered |= st.is_delete_reply(&f, st.generation))
            .is_err()
            || answered
        {
            return;
        }
        match tokio::time::timeout_at(until.into(), c.fill()).await {
            Ok(Ok(_)) => {}
            _ => return,
        }
    }
}

/// The async-nats push ordered client (TLS, creds, nkeys, or `--client async-nats`): its push ordered
/// consumer does the flow control, heartbeats and resets; the window is the same.
pub(super) struct NatsPushOrdered {
    c: async_nats::Client,
    ctx: jetstream::Context,
    share: Share,
    stream: Option<jetstream::stream::Stream>,
    /// The first consumer's name, deleted after the read (one made by a reset expires on its own, 5 s
    /// without interest).
    name: Option<String>,
    msgs: Option<jetstream::consumer::push::Ordered>,
}

impl NatsPushOrdered {
    pub(super) fn new(c: async_nats::Client, ctx: jetstream::Context, k: &Client) -> NatsPushOrdered {
        NatsPushOrdered {
            c,
            ctx,
            share: k.share.clone(),
            stream: None,
            name: None,
            msgs: None,
        }
    }
}

impl PushOrderedClient for NatsPushOrdered {
    async fn open(&mut self) -> Result<(), String> {
        let cfg = jetstream::consumer::push::OrderedConfig {
            deliver_subject: self.c.new_inbox(),
            filter_subject: self.share.filter.clone(),
            deliver_policy: jetstream::consumer::DeliverPolicy::ByStartSequence {
                start_sequence: self.share.start,
            },
            ..Default::default()
        };
        let why = |e: String| format!("creating the ordered consumer on stream {}: {e}", self.share.stream);
        let s = self
            .ctx
            .get_stream(&self.share.stream)
            .await
            .map_err(|e| why(e.to_string()))?;
        let consumer = s.create_consumer(cfg).await;
        self.stream = Some(s);
        let consumer = consumer.map_err(|e| why(e.to_string()))?;
        self.name = Some(consumer.cached_info().name.clone());
        self.msgs = Some(consumer.messages().await.map_err(|e| why(e.to_string()))?);
        Ok(())
    }
    async fn recv(&mut self, until: Instant) -> Result<(u64, u64), String> {
        use futures::StreamExt;
        let Some(msgs) = self.msgs.as_mut() else {
            return Err("the ordered consumer ended".into());
        };
        match tokio::time::timeout_at(until.into(), msgs.next()).await {
            Ok(Some(Ok(m))) => Ok((1, m.payload.len() as u64)),
            Ok(Some(Err(e))) => Err(format!("ordered consumer: {e}")),
            Ok(None) => Err("the ordered consumer ended".into()),
            Err(_) => Ok((0, 0)),
        }
    }
    fn handled(&mut self) {}
    async fn close(&mut self) {
        if let (Some(s), Some(name)) = (&self.stream, &self.name) {
            let _ = s.delete_consumer(name).await;
        }
    }
    fn resets(&self) -> u64 {
        0
    }
    fn proto(&self) -> (u64, u64) {
        proto(&self.c)
    }
}

#[cfg(test)]
#[path = "ordered_tests.rs"]
mod tests;
