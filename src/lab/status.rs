//! What `lab up` and `lab status` report, and the work behind it: creating a plan's streams on a lab
//! (the JSON `emit` writes, sent to the JetStream API unchanged) and asking every server of a lab for its
//! view. Values only; `report::lab` renders them.

use super::{LabState, NodeInfo};
use crate::monitor;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// One planned stream created on the lab (or why not).
#[derive(Debug, Serialize)]
pub struct CreatedStream {
    pub file: String,
    pub name: String,
    pub replicas: u64,
    pub error: Option<String>,
}

/// One planned durable consumer created on the lab (or why not).
#[derive(Debug, Serialize)]
pub struct CreatedConsumer {
    pub stream: String,
    pub name: String,
    pub replicas: u64,
    pub error: Option<String>,
}

/// What `lab up --streams` created.
#[derive(Debug, Default)]
pub struct Created {
    pub streams: Vec<CreatedStream>,
    pub consumers: Vec<CreatedConsumer>,
}

/// Send each stream definition unchanged to `$JS.API.STREAM.CREATE.<name>`, as `nats stream add --config`
/// does, then each consumer `(stream, ConsumerConfig)` of a stream that was created to
/// `$JS.API.CONSUMER.CREATE.<stream>.<name>` as `{"stream_name", "config"}`, as `nats consumer add --config`
/// does (server/jetstream_api.go `JSApiConsumerCreateEx`; no `action`: create, or update the same).
pub fn create_streams(urls: &[String], defs: &[(String, Value)], consumers: &[(String, Value)]) -> Created {
    let failed = |why: &str| Created {
        streams: all_failed(defs, why),
        consumers: consumers
            .iter()
            .map(|(stream, cfg)| consumer_row(stream, cfg, Some(why.to_string())))
            .collect(),
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return failed(&format!("cannot start a runtime: {e}")),
    };
    rt.block_on(async {
        let addrs: Result<Vec<async_nats::ServerAddr>, _> = urls.iter().map(|u| u.parse()).collect();
        // A clustered create is answered once the new group has elected its leader; on a busy machine a
        // split vote costs an election timeout (4-9 s), so each attempt allows 15 s. An unanswered request
        // (seen on a fresh cluster) is sent once more: creating the same definition again is harmless.
        let opts = async_nats::ConnectOptions::new().request_timeout(Some(Duration::from_secs(15)));
        let nc = match addrs {
            Ok(a) => opts.connect(a).await,
            Err(e) => return failed(&format!("bad lab URL: {e}")),
        };
        let nc = match nc {
            Ok(nc) => nc,
            Err(e) => return failed(&format!("cannot connect to the lab: {e}")),
        };
        let mut out = Created::default();
        for (file, cfg) in defs {
            let name = cfg["name"].as_str().unwrap_or_default().to_string();
            let error = api_request(&nc, format!("$JS.API.STREAM.CREATE.{name}"), cfg.to_string()).await;
            out.streams.push(CreatedStream {
                file: file.clone(),
                name,
                replicas: cfg["num_replicas"].as_u64().unwrap_or(1),
                error,
            });
        }
        for (stream, cfg) in consumers {
            let stream_failed = out.streams.iter().any(|s| &s.name == stream && s.error.is_some());
            let error = if stream_failed {
                Some(format!("its stream {stream} was not created"))
            } else {
                let name = cfg["name"].as_str().unwrap_or_default();
                let body = serde_json::json!({"stream_name": stream, "config": cfg});
                api_request(
                    &nc,
                    format!("$JS.API.CONSUMER.CREATE.{stream}.{name}"),
                    body.to_string(),
                )
                .await
            };
            out.consumers.push(consumer_row(stream, cfg, error));
        }
        out
    })
}

fn consumer_row(stream: &str, cfg: &Value, error: Option<String>) -> CreatedConsumer {
    CreatedConsumer {
        stream: stream.to_string(),
        name: cfg["name"].as_str().unwrap_or_default().to_string(),
        replicas: cfg["num_replicas"].as_u64().unwrap_or(1),
        error,
    }
}

/// One JetStream API request, sent once more when unanswered (creating the same definition again is
/// harmless); the API's error, or None when it succeeded.
async fn api_request(nc: &async_nats::Client, subject: String, body: String) -> Option<String> {
    let mut answer = nc.request(subject.clone(), body.clone().into()).await;
    if answer.is_err() {
        tokio::time::sleep(Duration::from_millis(250)).await;
        answer = nc.request(subject, body.into()).await;
    }
    match answer {
        Ok(m) => match serde_json::from_slice::<Value>(&m.payload) {
            Ok(v) => v.get("error").map(|e| {
                format!(
                    "{} (error {})",
                    e["description"].as_str().unwrap_or("unknown error"),
                    e["err_code"]
                )
            }),
            Err(e) => Some(format!("unreadable answer: {e}")),
        },
        Err(e) => Some(format!("no answer from JetStream: {e}")),
    }
}

pub fn all_failed(defs: &[(String, Value)], why: &str) -> Vec<CreatedStream> {
    defs.iter()
        .map(|(file, cfg)| CreatedStream {
            file: file.clone(),
            name: cfg["name"].as_str().unwrap_or_default().to_string(),
            replicas: cfg["num_replicas"].as_u64().unwrap_or(1),
            error: Some(why.to_string()),
        })
        .collect()
}

#[derive(Debug, Serialize)]
pub struct ServerRow {
    pub name: String,
    pub pid: u32,
    pub client_url: String,
    pub monitor_url: String,
    pub tags: Vec<String>,
}

impl ServerRow {
    pub fn from_node(n: &NodeInfo) -> ServerRow {
        ServerRow {
            name: n.name.clone(),
            pid: n.pid,
            client_url: n.client_url(),
            monitor_url: n.monitor_url(),
            tags: n.tags.clone(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct UpReport {
    pub dir: PathBuf,
    pub cluster_name: String,
    pub meta_leader: Option<String>,
    pub startup_s: f64,
    pub client_urls: Vec<String>,
    pub monitor_urls: Vec<String>,
    pub servers: Vec<ServerRow>,
    /// Planned streams created with `--streams`.
    pub streams: Vec<CreatedStream>,
    /// The planned durable consumers created with `--streams` (emit's `consumers/`: the site's
    /// `consumers: N` per stream as `<stream>-c1`…, each with its stream's replicas).
    pub consumers: Vec<CreatedConsumer>,
    /// The system account's user (its password is in `DIR/lab.json`, `system_user.password`): the one the
    /// cluster's recovery requests (`nats server cluster peer-remove` and the like) need.
    pub system_user: String,
}

#[derive(Debug, Serialize)]
pub struct StatusServer {
    pub name: String,
    pub pid: u32,
    pub running: bool,
    pub client_url: String,
    pub monitor_url: String,
    /// Tags the server reports (`/varz`), or the recorded ones when it does not answer.
    pub tags: Vec<String>,
    pub version: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StatusReport {
    pub dir: PathBuf,
    pub cluster_name: String,
    pub meta_leader: Option<String>,
    pub servers: Vec<StatusServer>,
    pub streams: Vec<monitor::StreamPlacement>,
}

/// Ask every server of a lab for its view and merge it.
pub fn collect_status(st: &LabState) -> StatusReport {
    let probe = Duration::from_secs(2);
    let mut servers = Vec::new();
    let mut leader = None;
    for n in &st.nodes {
        let running = st.is_server(n.pid, n);
        let mut row = StatusServer {
            name: n.name.clone(),
            pid: n.pid,
            running,
            client_url: n.client_url(),
            monitor_url: n.monitor_url(),
            tags: n.tags.clone(),
            version: None,
            error: None,
        };
        if running {
            match monitor::varz(&n.monitor_url(), probe) {
                Ok(v) => {
                    row.tags = monitor::tags(&v);
                    row.version = v.get("version").and_then(Value::as_str).map(str::to_string);
                }
                Err(e) => row.error = Some(format!("{e:#}")),
            }
            if leader.is_none() {
                leader = monitor::jsz(&n.monitor_url(), "", probe)
                    .ok()
                    .and_then(|j| monitor::meta_leader(&j));
            }
        }
        servers.push(row);
    }
    let live: Vec<(String, String)> = servers
        .iter()
        .filter(|s| s.running)
        .map(|s| (s.name.clone(), s.monitor_url.clone()))
        .collect();
    let streams = monitor::cluster_streams(&live, probe);
    StatusReport {
        dir: st.dir.clone(),
        cluster_name: st.cluster_name.clone(),
        meta_leader: leader,
        servers,
        streams,
    }
}
