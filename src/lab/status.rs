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

/// Send each definition unchanged to `$JS.API.STREAM.CREATE.<name>`, as `nats stream add --config` does.
pub fn create_streams(urls: &[String], defs: &[(String, Value)]) -> Vec<CreatedStream> {
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return all_failed(defs, &format!("cannot start a runtime: {e}")),
    };
    rt.block_on(async {
        let addrs: Result<Vec<async_nats::ServerAddr>, _> = urls.iter().map(|u| u.parse()).collect();
        // A clustered create is answered once the new group has elected its leader; on a busy machine a
        // split vote costs an election timeout (4-9 s), so each attempt allows 15 s. An unanswered request
        // (seen on a fresh cluster) is sent once more: creating the same definition again is harmless.
        let opts = async_nats::ConnectOptions::new().request_timeout(Some(Duration::from_secs(15)));
        let nc = match addrs {
            Ok(a) => opts.connect(a).await,
            Err(e) => return all_failed(defs, &format!("bad lab URL: {e}")),
        };
        let nc = match nc {
            Ok(nc) => nc,
            Err(e) => return all_failed(defs, &format!("cannot connect to the lab: {e}")),
        };
        let mut out = Vec::new();
        for (file, cfg) in defs {
            let name = cfg["name"].as_str().unwrap_or_default().to_string();
            let subject = format!("$JS.API.STREAM.CREATE.{name}");
            let mut answer = nc.request(subject.clone(), cfg.to_string().into()).await;
            if answer.is_err() {
                tokio::time::sleep(Duration::from_millis(250)).await;
                answer = nc.request(subject, cfg.to_string().into()).await;
            }
            let error = match answer {
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
            };
            out.push(CreatedStream {
                file: file.clone(),
                name,
                replicas: cfg["num_replicas"].as_u64().unwrap_or(1),
                error,
            });
        }
        out
    })
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
