//! A tiny HTTP client for nats-server's monitoring endpoints (`/varz`, `/jsz`, `/healthz`, `/routez`).
//!
//! Hand-rolled HTTP/1.0 GET over a `TcpStream`: the monitor port speaks plain HTTP, the answers are small
//! JSON documents, and HTTP/1.0 makes Go's server close the connection after a body without chunked
//! encoding, so "read to end" is the whole protocol. No TLS (monitor ports in a lab or behind a firewall are
//! plain; put a proxy in front otherwise). Blocking on purpose: callers in async code use `spawn_blocking`.

pub mod jsz;
pub mod observe;
pub mod probe;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// `http://HOST:8222` for each server URL's host (the nats-server default monitoring port).
pub fn default_monitors(servers: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in servers {
        let rest = s.split("://").nth(1).unwrap_or(s);
        let rest = rest.rsplit('@').next().unwrap_or(rest);
        let host = match rest.rfind(':') {
            Some(i) if !rest.ends_with(']') => &rest[..i],
            _ => rest,
        };
        let host = host.trim_end_matches('/');
        let m = format!("http://{host}:8222");
        if !host.is_empty() && !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// One HTTP answer: status code and body.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: String,
}

impl Response {
    pub fn json(&self) -> Result<Value> {
        serde_json::from_str(&self.body).with_context(|| {
            let head: String = self.body.chars().take(120).collect();
            format!("monitor answer is not JSON: {head}")
        })
    }
}

/// A URL as messages show it: any `user:password@` (or `token@`) before the host replaced by `***@`, so
/// an error never prints a secret (`--from-cluster http://user:password@host:8222`).
pub fn shown(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => url.split_at(i + 3),
        None => ("", url),
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// Split `http://[user:password@]host:port[/prefix]` into (host:port, prefix, user:password).
fn split_url(base: &str) -> Result<(String, String, Option<String>)> {
    let rest = base.strip_prefix("http://").ok_or_else(|| {
        anyhow!(
            "monitor URL '{}' must start with http:// (TLS monitor ports are not supported)",
            shown(base)
        )
    })?;
    let (authority, prefix) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    let (userinfo, authority) = match authority.rfind('@') {
        Some(at) => (Some(authority[..at].to_string()), &authority[at + 1..]),
        None => (None, authority),
    };
    if authority.is_empty() {
        bail!(
            "monitor URL '{}' has no host; write e.g. http://127.0.0.1:8222",
            shown(base)
        );
    }
    let authority = if authority.contains(':') && !authority.ends_with(']') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, prefix.to_string(), userinfo))
}

/// GET `base` + `path` (path with its query, e.g. `/jsz?streams=1`), whatever the status code. A
/// `user:password@` in `base` is sent as HTTP Basic authorization (for a proxy in front of the monitor
/// port) and never shown.
pub fn get(base: &str, path: &str, timeout: Duration) -> Result<Response> {
    use base64::Engine as _;
    let (authority, prefix, userinfo) = split_url(base)?;
    let base = shown(base);
    let addr = authority
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve monitor address {authority}"))?
        .next()
        .ok_or_else(|| anyhow!("monitor address {authority} resolves to nothing"))?;
    let mut s =
        TcpStream::connect_timeout(&addr, timeout).with_context(|| format!("cannot connect to monitor {base}"))?;
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let auth = userinfo
        .map(|u| {
            format!(
                "Authorization: Basic {}\r\n",
                base64::engine::general_purpose::STANDARD.encode(u)
            )
        })
        .unwrap_or_default();
    let req = format!("GET {prefix}{path} HTTP/1.0\r\nHost: {authority}\r\n{auth}Accept: application/json\r\n\r\n");
    s.write_all(req.as_bytes())
        .with_context(|| format!("cannot send request to monitor {base}"))?;
    let mut raw = Vec::with_capacity(4096);
    s.read_to_end(&mut raw)
        .with_context(|| format!("reading {path} from monitor {base}"))?;
    parse_response(&raw).with_context(|| format!("bad HTTP answer to {path} from {base}"))
}

fn parse_response(raw: &[u8]) -> Result<Response> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| anyhow!("no end of headers in {} bytes", raw.len()))?;
    let head = std::str::from_utf8(&raw[..split]).context("headers are not UTF-8")?;
    let status_line = head.lines().next().unwrap_or_default();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("bad status line '{status_line}'"))?;
    let body = String::from_utf8_lossy(&raw[split + 4..]).into_owned();
    Ok(Response { status, body })
}

/// GET and parse JSON; a non-2xx status is an error carrying the body.
pub fn get_json(base: &str, path: &str, timeout: Duration) -> Result<Value> {
    let r = get(base, path, timeout)?;
    if !(200..300).contains(&r.status) {
        bail!("{}{path} answered HTTP {}: {}", shown(base), r.status, r.body.trim());
    }
    r.json()
}

/// `/varz`: identity, tags, JetStream config.
pub fn varz(base: &str, timeout: Duration) -> Result<Value> {
    get_json(base, "/varz", timeout)
}

/// `/jsz` with the given query (e.g. `streams=1&config=1`), empty for the summary.
pub fn jsz(base: &str, query: &str, timeout: Duration) -> Result<Value> {
    let path = if query.is_empty() {
        "/jsz".to_string()
    } else {
        format!("/jsz?{query}")
    };
    get_json(base, &path, timeout)
}

/// `/healthz` with the given query; `Ok(true)` when the server answers 200 `{"status":"ok"}`.
pub fn healthz(base: &str, query: &str, timeout: Duration) -> Result<bool> {
    let path = if query.is_empty() {
        "/healthz".to_string()
    } else {
        format!("/healthz?{query}")
    };
    let r = get(base, &path, timeout)?;
    Ok(r.status == 200)
}

/// The meta group's leader as this server sees it (`/jsz` `meta_cluster.leader`), if any.
pub fn meta_leader(jsz: &Value) -> Option<String> {
    jsz.pointer("/meta_cluster/leader")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The server's tags from `/varz`.
pub fn tags(varz: &Value) -> Vec<String> {
    varz.get("tags")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// One stream as `/jsz?accounts=1&streams=1&config=1` reports it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StreamPlacement {
    pub account: String,
    pub name: String,
    pub leader: Option<String>,
    /// The leader and every follower, by server name.
    pub peers: Vec<String>,
    pub replicas: u64,
}

/// The streams (with leader and followers) in a `/jsz?accounts=1&streams=1&config=1` answer.
pub fn streams(jsz: &Value) -> Vec<StreamPlacement> {
    let mut out: Vec<StreamPlacement> = jsz::streams(jsz)
        .into_iter()
        .map(|st| {
            let mut peers: Vec<String> = st.leader.iter().cloned().collect();
            peers.extend(st.followers.iter().cloned());
            peers.sort();
            peers.dedup();
            let replicas = st.config_u64("num_replicas").unwrap_or(peers.len() as u64);
            StreamPlacement {
                account: st.account.clone(),
                name: st.name_or_empty().to_string(),
                leader: st.leader.clone(),
                peers,
                replicas,
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.account, &a.name).cmp(&(&b.account, &b.name)));
    out
}

/// Every stream of a cluster with its leader and peers, asking each `(server_name, monitor_url)` (servers
/// that do not answer are skipped). A stream's replica list is authoritative from its leader, so that
/// server's view wins where there is one.
pub fn cluster_streams(servers: &[(String, String)], timeout: Duration) -> Vec<StreamPlacement> {
    let mut seen: Vec<(String, StreamPlacement)> = Vec::new();
    for (name, url) in servers {
        let Ok(j) = jsz(url, "accounts=true&streams=true&config=true", timeout) else {
            continue;
        };
        for s in streams(&j) {
            seen.push((name.clone(), s));
        }
    }
    merge_streams(seen)
}

fn merge_streams(seen: Vec<(String, StreamPlacement)>) -> Vec<StreamPlacement> {
    let mut out: Vec<StreamPlacement> = Vec::new();
    for (reporter, s) in seen {
        let from_leader = s.leader.as_deref() == Some(reporter.as_str());
        match out.iter_mut().find(|x| x.account == s.account && x.name == s.name) {
            Some(existing) if from_leader => *existing = s,
            Some(_) => {}
            None => out.push(s),
        }
    }
    out.sort_by(|a, b| (&a.account, &a.name).cmp(&(&b.account, &b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_urls_default_to_port_8222_on_each_host() {
        let s = vec![
            "nats://127.0.0.1:4222".to_string(),
            "nats://u:p@10.0.0.2:4223".to_string(),
            "127.0.0.1:5555".to_string(),
            "tls://host-a".to_string(),
        ];
        assert_eq!(
            default_monitors(&s),
            vec!["http://127.0.0.1:8222", "http://10.0.0.2:8222", "http://host-a:8222"]
        );
    }

    #[test]
    fn urls_split_into_authority_and_prefix() {
        assert_eq!(
            split_url("http://127.0.0.1:8222").unwrap(),
            ("127.0.0.1:8222".into(), "".into(), None)
        );
        assert_eq!(
            split_url("http://localhost/nats/").unwrap(),
            ("localhost:80".into(), "/nats".into(), None)
        );
        assert_eq!(
            split_url("http://u:p@w@host:8222/x").unwrap(),
            ("host:8222".into(), "/x".into(), Some("u:p@w".into()))
        );
        assert!(split_url("https://x:1").unwrap_err().to_string().contains("http://"));
    }

    #[test]
    fn credentials_in_a_monitor_url_are_sent_and_never_shown() {
        // Issue 41: `--from-cluster http://user:password@host:8222` printed the password in its error
        // ("cannot resolve monitor address user:s3cret@host:8222").
        assert_eq!(shown("http://user:s3cret@h:8222/jsz"), "http://***@h:8222/jsz");
        assert_eq!(shown("http://h:8222/a@b"), "http://h:8222/a@b");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://user:s3cret@{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = c.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
            }
            c.write_all(b"HTTP/1.0 401 Unauthorized\r\n\r\nno").unwrap();
            String::from_utf8(req).unwrap()
        });
        let e = format!("{:#}", get_json(&base, "/varz", Duration::from_secs(10)).unwrap_err());
        let req = server.join().unwrap();
        // base64("user:s3cret")
        assert!(req.contains("Authorization: Basic dXNlcjpzM2NyZXQ=\r\n"), "{req}");
        assert!(req.contains("Host: 127.0.0.1:"), "{req}");
        assert!(e.contains("http://***@127.0.0.1:") && e.contains("HTTP 401"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        // An address that does not resolve or answer: named without the password.
        for url in ["http://user:s3cret@127.0.0.1:1", "https://user:s3cret@h:1"] {
            let e = format!("{:#}", get(url, "/jsz", Duration::from_secs(5)).unwrap_err());
            assert!(!e.contains("s3cret") && e.contains("***@"), "{e}");
        }
    }

    #[test]
    fn responses_parse_status_and_body() {
        let r =
            parse_response(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: x\r\n\r\n{\"status\":\"unavailable\"}")
                .unwrap();
        assert_eq!(r.status, 503);
        assert_eq!(r.json().unwrap()["status"], "unavailable");
        assert!(parse_response(b"garbage").is_err());
    }

    #[test]
    fn streams_are_read_from_jsz() {
        let jsz: Value = serde_json::json!({
            "meta_cluster": {"leader": "n2"},
            "account_details": [{"name": "$G", "stream_detail": [
                {"name": "B", "config": {"num_replicas": 3},
                 "cluster": {"leader": "n3", "replicas": [{"name": "n1"}, {"name": "n2"}]}},
                {"name": "A", "cluster": {"leader": "n1"}}
            ]}]
        });
        assert_eq!(meta_leader(&jsz).as_deref(), Some("n2"));
        let s = streams(&jsz);
        assert_eq!(s[0].name, "A");
        assert_eq!(s[0].replicas, 1);
        assert_eq!(s[1].peers, vec!["n1", "n2", "n3"]);
        assert_eq!(s[1].leader.as_deref(), Some("n3"));
    }
}
