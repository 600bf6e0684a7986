//! A minimal NATS protocol connection for the hot paths (core publish/subscribe, async JetStream
//! publishing), so that the load generator is never the bottleneck: publishes are appended to one
//! buffer with a precomputed `PUB` header (no per-message allocation, no channel hop, one write per
//! batch), and incoming `MSG` frames are parsed in place from a large read buffer.
//!
//! It speaks plain TCP with user/password or token auth only; runs that need TLS, a creds file or an
//! nkey go through async-nats instead (`ConnSpec::raw_target`). Server PINGs are answered so that long
//! runs stay connected.

use serde_json::json;
use std::io;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// Where and how to connect on the raw path.
#[derive(Debug, Clone)]
pub struct RawTarget {
    pub addr: String,
    /// The URL as it may be shown (credentials stripped).
    pub display: String,
    pub user: Option<String>,
    pub pass: Option<String>,
    pub token: Option<String>,
}

/// One frame from the server, borrowed from the read buffer.
#[derive(Debug, PartialEq)]
pub enum Frame<'a> {
    Msg {
        subject: &'a [u8],
        sid: u64,
        reply: &'a [u8],
        /// The header block of an HMSG (`NATS/1.0 …` through the blank line); empty for a MSG.
        headers: &'a [u8],
        payload: &'a [u8],
    },
    Ping,
    Pong,
    Ok,
    Err(&'a str),
    Info,
}

fn bad(m: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, m.into())
}

/// A decimal number from protocol bytes.
pub fn parse_num(b: &[u8]) -> io::Result<u64> {
    if b.is_empty() {
        return Err(bad("empty number in protocol line"));
    }
    let mut n = 0u64;
    for &c in b {
        if !c.is_ascii_digit() {
            return Err(bad("bad number in protocol line"));
        }
        n = n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(c - b'0')))
            .ok_or_else(|| bad("number too large"))?;
    }
    Ok(n)
}

/// Parse one frame from the front of `buf`: Ok(None) when more bytes are needed.
pub fn parse(buf: &[u8]) -> io::Result<Option<(Frame<'_>, usize)>> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > 64 * 1024 {
            return Err(bad("protocol line longer than 64 KiB"));
        }
        return Ok(None);
    };
    let line = buf[..nl].strip_suffix(b"\r").unwrap_or(&buf[..nl]);
    let msg = match (line.strip_prefix(b"MSG "), line.strip_prefix(b"HMSG ")) {
        (Some(rest), _) => Some((rest, false)),
        (_, Some(rest)) => Some((rest, true)),
        _ => None,
    };
    if let Some((rest, headers)) = msg {
        // `MSG subject sid [reply] len` or `HMSG subject sid [reply] hdr_len total_len`; the payload given
        // is the body after any headers. Fields go to a fixed array: no allocation on the hot path.
        let mut t: [&[u8]; 5] = [&[]; 5];
        let mut n = 0;
        for tok in rest.split(|&b| b == b' ').filter(|t| !t.is_empty()) {
            if n == t.len() {
                return Err(bad("too many fields in a MSG line"));
            }
            t[n] = tok;
            n += 1;
        }
        let sizes = if headers { 2 } else { 1 };
        if n != 2 + sizes && n != 3 + sizes {
            return Err(bad("short MSG line"));
        }
        let reply = if n == 3 + sizes { t[2] } else { &t[0][..0] };
        let total = parse_num(t[n - 1])? as usize;
        let hdr = if headers { parse_num(t[n - 2])? as usize } else { 0 };
        if hdr > total || total > 1 << 30 {
            return Err(bad(
                "MSG sizes out of range (headers beyond the message, or over 1 GiB)",
            ));
        }
        let start = nl + 1;
        if buf.len() < start + total + 2 {
            return Ok(None);
        }
        let frame = Frame::Msg {
            subject: t[0],
            sid: parse_num(t[1])?,
            reply,
            headers: &buf[start..start + hdr],
            payload: &buf[start + hdr..start + total],
        };
        return Ok(Some((frame, start + total + 2)));
    }
    let frame = if line.starts_with(b"PING") {
        Frame::Ping
    } else if line.starts_with(b"PONG") {
        Frame::Pong
    } else if line.starts_with(b"+OK") {
        Frame::Ok
    } else if line.starts_with(b"-ERR") {
        Frame::Err(std::str::from_utf8(&line[4..]).unwrap_or("?").trim())
    } else if line.starts_with(b"INFO") {
        Frame::Info
    } else {
        return Err(bad(format!(
            "unexpected protocol line {:?}",
            String::from_utf8_lossy(&line[..line.len().min(80)])
        )));
    };
    Ok(Some((frame, nl + 1)))
}

/// Append a decimal number without going through `fmt`.
pub fn push_num(out: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

pub struct RawConn {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    /// Bytes to send at the next `flush_out`.
    pub out: Vec<u8>,
    pub msgs_in: u64,
    pub bytes_in: u64,
    pub msgs_out: u64,
    pub bytes_out: u64,
}

impl RawConn {
    /// Connect, read INFO, send CONNECT and wait for the PONG that proves the server accepted it.
    pub async fn connect(t: &RawTarget, name: &str) -> io::Result<RawConn> {
        let s = TcpStream::connect(&t.addr).await?;
        s.set_nodelay(true)?;
        let (rd, wr) = s.into_split();
        let mut c = RawConn {
            rd,
            wr,
            rbuf: vec![0; 1 << 20],
            rstart: 0,
            rend: 0,
            out: Vec::with_capacity(1 << 17),
            msgs_in: 0,
            bytes_in: 0,
            msgs_out: 0,
            bytes_out: 0,
        };
        // INFO comes first; its JSON says whether TLS is required.
        loop {
            if let Some(nl) = c.rbuf[c.rstart..c.rend].iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&c.rbuf[c.rstart..c.rstart + nl]).to_string();
                c.rstart += nl + 1;
                let info: serde_json::Value = serde_json::from_str(line.trim_start_matches("INFO").trim())
                    .map_err(|e| bad(format!("bad INFO: {e}")))?;
                if info.get("tls_required").and_then(|v| v.as_bool()) == Some(true) {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "the server requires TLS; give --tls-ca",
                    ));
                }
                break;
            }
            c.fill().await?;
        }
        let mut connect = json!({
            "verbose": false, "pedantic": false, "tls_required": false, "name": name, "lang": "rust-natsplan",
            "version": env!("CARGO_PKG_VERSION"), "protocol": 1, "echo": true, "headers": true, "no_responders": false,
        });
        if let (Some(u), Some(m)) = (&t.user, connect.as_object_mut()) {
            m.insert("user".into(), json!(u));
            m.insert("pass".into(), json!(t.pass.clone().unwrap_or_default()));
        }
        if let (Some(tok), Some(m)) = (&t.token, connect.as_object_mut()) {
            m.insert("auth_token".into(), json!(tok));
        }
        c.out.extend_from_slice(b"CONNECT ");
        c.out.extend_from_slice(connect.to_string().as_bytes());
        c.out.extend_from_slice(b"\r\nPING\r\n");
        c.flush_out().await?;
        c.wait_pong().await?;
        Ok(c)
    }

    /// Send everything in `out`.
    pub async fn flush_out(&mut self) -> io::Result<()> {
        if !self.out.is_empty() {
            self.wr.write_all(&self.out).await?;
            self.bytes_out += self.out.len() as u64;
            self.out.clear();
        }
        Ok(())
    }

    /// PING and wait for the PONG: everything sent before has been processed by the server.
    pub async fn round_trip(&mut self) -> io::Result<()> {
        self.out.extend_from_slice(b"PING\r\n");
        self.flush_out().await?;
        self.wait_pong().await
    }

    async fn wait_pong(&mut self) -> io::Result<()> {
        loop {
            let mut got = false;
            let mut err = None;
            self.drain(|f, _| match f {
                Frame::Pong => got = true,
                Frame::Err(e) => err = Some(e.to_string()),
                _ => {}
            })?;
            if let Some(e) = err {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("server said: {e}"),
                ));
            }
            if got {
                return self.flush_out().await;
            }
            self.fill().await?;
        }
    }

    /// Read whatever is available (waits for at least one byte). Cancel-safe: the only await is the read.
    pub async fn fill(&mut self) -> io::Result<usize> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        } else if self.rend == self.rbuf.len() {
            // Move the partial frame to the front; grow if one frame fills the buffer.
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
            if self.rend == self.rbuf.len() {
                self.rbuf.resize(self.rbuf.len() * 2, 0);
            }
        }
        let n = self.rd.read(&mut self.rbuf[self.rend..]).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        self.rend += n;
        self.bytes_in += n as u64;
        Ok(n)
    }

    /// Read without waiting (to answer PINGs from a publisher that never waits for input).
    pub fn try_fill(&mut self) -> io::Result<usize> {
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        if self.rend == self.rbuf.len() {
            return Ok(0);
        }
        match self.rd.try_read(&mut self.rbuf[self.rend..]) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            )),
            Ok(n) => {
                self.rend += n;
                self.bytes_in += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Parse every complete frame buffered, answering PINGs; `f` gets each frame and the output buffer.
    pub fn drain(&mut self, mut f: impl FnMut(Frame<'_>, &mut Vec<u8>)) -> io::Result<()> {
        loop {
            let Some((frame, used)) = parse(&self.rbuf[self.rstart..self.rend])? else {
                return Ok(());
            };
            match frame {
                Frame::Ping => self.out.extend_from_slice(b"PONG\r\n"),
                Frame::Msg { .. } => {
                    self.msgs_in += 1;
                    f(frame, &mut self.out)
                }
                other => f(other, &mut self.out),
            }
            self.rstart += used;
        }
    }
}

/// The stream name a path probe expects (`Nats-Expected-Stream`): no stream has it, so the stream's
/// leader answers the probe with an error and stores nothing.
pub const PROBE_EXPECTED_STREAM: &str = "natsplan-path-probe-no-such-stream";

/// Wait until a publish on `subject` reaches the stream and its ack comes back to `inbox`, without storing
/// anything. Subscriptions and a new stream's subject reach the other servers over the routes
/// asynchronously: until the publisher's server knows the stream's subject, its publishes are dropped
/// there; until the stream leader's server knows the inbox, acks are. Either looks like lost messages
/// (seen on a 3-server loopback cluster: a publisher's first 270 ms, or its whole run), so the clock must
/// not start before the path works both ways. The probe is a real publish carrying
/// `Nats-Expected-Stream` with a name no stream has: the leader answers it with an error ack and stores
/// nothing. Sent again every 250 ms until answered or `timeout` passes, which is an error.
pub async fn stream_answers_publish(
    c: &mut RawConn,
    subject: &str,
    inbox: &str,
    timeout: Duration,
) -> Result<(), ProbeError> {
    let hdr = format!("NATS/1.0\r\nNats-Expected-Stream: {PROBE_EXPECTED_STREAM}\r\n\r\n");
    let probe = format!("{inbox}probe");
    let t0 = Instant::now();
    let deadline = t0 + timeout;
    loop {
        c.out
            .extend_from_slice(format!("HPUB {subject} {probe} {} {}\r\n{hdr}\r\n", hdr.len(), hdr.len()).as_bytes());
        c.flush_out().await.map_err(ProbeError::Io)?;
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_millis(250) {
            let wait = Duration::from_millis(250).saturating_sub(asked.elapsed());
            match tokio::time::timeout(wait, c.fill()).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(ProbeError::Io(e)),
                Err(_) => break,
            }
            let mut answered = false;
            c.drain(|f, _| {
                if let Frame::Msg { subject, .. } = f {
                    answered |= subject == probe.as_bytes();
                }
            })
            .map_err(ProbeError::Io)?;
            if answered {
                return Ok(());
            }
        }
        if Instant::now() > deadline {
            return Err(ProbeError::Unanswered {
                subject: subject.to_string(),
                waited: t0.elapsed(),
            });
        }
    }
}

/// Why `stream_answers_publish` gave up.
#[derive(Debug)]
pub enum ProbeError {
    /// The connection failed under the probe (closed, refused by the server: the `io::Error`'s kind says).
    Io(io::Error),
    /// No ack for the probe came back to the inbox within the timeout.
    Unanswered { subject: String, waited: Duration },
}

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeError::Io(e) => write!(f, "probe publish: {e}"),
            ProbeError::Unanswered { subject, waited } => write!(
                f,
                "no ack for a probe publish on {subject} within {:.1} s: the servers do not route this \
                 publisher's messages to the stream, or its acks back (check the cluster's routes)",
                waited.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for ProbeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProbeError::Io(e) => Some(e),
            ProbeError::Unanswered { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_msgs_with_and_without_reply_and_waits_for_the_payload() {
        let b = b"MSG a.b 1 5\r\nhello\r\nMSG x 22 _INBOX.1 2\r\nhi\r\nPING\r\n";
        let (f, n) = parse(b).unwrap().unwrap();
        assert_eq!(
            f,
            Frame::Msg {
                subject: b"a.b",
                sid: 1,
                reply: b"",
                headers: b"",
                payload: b"hello"
            }
        );
        let (f, m) = parse(&b[n..]).unwrap().unwrap();
        assert_eq!(
            f,
            Frame::Msg {
                subject: b"x",
                sid: 22,
                reply: b"_INBOX.1",
                headers: b"",
                payload: b"hi"
            }
        );
        assert_eq!(parse(&b[n + m..]).unwrap().unwrap().0, Frame::Ping);
        // With headers: the body after them.
        let h = b"HMSG a 3 _INBOX.2 12 14\r\nNATS/1.0\r\n\r\nok\r\nHMSG b 4 12 12\r\nNATS/1.0\r\n\r\n\r\n";
        let (f, n) = parse(h).unwrap().unwrap();
        assert_eq!(
            f,
            Frame::Msg {
                subject: b"a",
                sid: 3,
                reply: b"_INBOX.2",
                headers: b"NATS/1.0\r\n\r\n",
                payload: b"ok"
            }
        );
        let (f, _) = parse(&h[n..]).unwrap().unwrap();
        assert_eq!(
            f,
            Frame::Msg {
                subject: b"b",
                sid: 4,
                reply: b"",
                headers: b"NATS/1.0\r\n\r\n",
                payload: b""
            }
        );
        assert!(parse(b"HMSG a 1 12 14\r\nNATS/1.0\r\n").unwrap().is_none());
        assert!(parse(b"HMSG a 1 20 14\r\n").is_err());
        assert!(parse(b"MSG a 1 5\r\nhel").unwrap().is_none());
        assert!(parse(b"MSG a 1").unwrap().is_none());
        assert!(parse(b"WHAT\r\n").is_err());
        assert!(parse(b"MSG a 1 99999999999999999999999\r\n").is_err());
        assert_eq!(
            parse(b"-ERR 'Authorization Violation'\r\n").unwrap().unwrap().0,
            Frame::Err("'Authorization Violation'")
        );
    }

    proptest::proptest! {
        /// Whatever the bytes, parsing returns a frame within the buffer, asks for more, or errs: never panics.
        #[test]
        fn parse_never_panics_and_never_overruns(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
                                                 prefix in proptest::sample::select(vec!["", "MSG a 1 ", "MSG a 1 r ", "HMSG a 1 ", "HMSG a 1 r 4 ", "PING", "+OK", "-ERR x"])) {
            let mut b = prefix.as_bytes().to_vec();
            b.extend_from_slice(&bytes);
            if let Ok(Some((_, used))) = parse(&b) {
                proptest::prop_assert!(used <= b.len());
            }
        }
    }

    #[test]
    fn numbers_append_in_decimal() {
        let mut v = Vec::new();
        for n in [0u64, 7, 10, 123456789, u64::MAX] {
            v.clear();
            push_num(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
        }
    }
}
