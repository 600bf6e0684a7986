//! What `natsplan check` observes of a running cluster, read-only: each server's `/varz` (name, tags,
//! cluster) and `/jsz?accounts=true&streams=true&consumers=true&config=true` (store and memory use against
//! their limits, HA assets, the meta group as that server sees it, every stream with its replicas and every
//! consumer of it, `stream_detail[].consumer_detail[]`: nats-server's `ConsumerInfo`, server/consumer.go). Field names are
//! nats-server's (`server/monitor.go` `JSInfo`, `server/jetstream_cluster.go` `ClusterInfo`/`PeerInfo`):
//! `storage`, `memory`, `ha_assets`, `config.max_storage`, `config.max_memory`, `meta_cluster.{leader,
//! cluster_size,replicas}`, `cluster.{leader,replicas[].{name,current,offline,active,lag}}` — `active` is
//! nanoseconds since the peer was last heard from, `lag` operations behind (omitted when 0).
//!
//! A replica's currency is only known to its group's leader (a follower lists the others as not current,
//! active 0): each stream is taken from the server that leads it, and from another server only when the
//! leader's monitor did not answer (`from_leader` false). Lenient like the rest of `monitor`: a missing
//! field reads as absent or 0.

use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// One RAFT peer as a group's leader reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PeerObs {
    pub name: String,
    pub current: bool,
    pub offline: bool,
    /// Since the leader last heard from it (`active`, ns).
    pub seen_ago_ns: u64,
    /// Operations behind the leader (`lag`).
    pub lag: u64,
}

/// The meta group as one server sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct MetaObs {
    pub leader: Option<String>,
    pub cluster_size: u64,
    /// The other peers (the leader's view has them with currency; a follower's has them as not current).
    pub replicas: Vec<PeerObs>,
}

/// One server as its monitor shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ServerObs {
    pub name: String,
    pub monitor_url: String,
    pub tags: Vec<String>,
    pub cluster: Option<String>,
    pub jetstream: bool,
    /// `/jsz` `storage` and `config.max_storage` (bytes).
    pub store_used_bytes: u64,
    pub max_store_bytes: Option<u64>,
    pub memory_used_bytes: u64,
    pub max_memory_bytes: Option<u64>,
    /// RAFT groups on this server (`ha_assets`: streams, consumers and the meta group).
    pub ha_assets: u64,
    /// Whether `/jsz` answered (without it the JetStream figures above are not known, not 0).
    pub jsz_read: bool,
    pub meta: Option<MetaObs>,
}

/// One stream (a KV bucket is `KV_<bucket>`, an object store `OBJ_<store>`).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct StreamObs {
    pub account: String,
    pub name: String,
    pub replicas: u64,
    pub placement_tags: Vec<String>,
    pub max_bytes: Option<i64>,
    pub max_age_ns: Option<i64>,
    pub leader: Option<String>,
    /// The followers (the leader is not among them).
    pub followers: Vec<PeerObs>,
    /// Read from the leader's monitor (otherwise the followers' currency is not known).
    pub from_leader: bool,
    pub messages: u64,
    pub bytes: u64,
    pub last_seq: u64,
}

/// One consumer of a stream (`consumer_detail[]`; a server lists the consumers of the streams it holds).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ConsumerObs {
    pub account: String,
    pub stream: String,
    pub name: String,
    /// Durable: a `durable_name`, or a name without an `inactive_threshold` (nats-server 2.9+ keeps a named
    /// consumer until it is deleted; an ephemeral one is removed after `inactive_threshold`, 5 s by default).
    pub durable: bool,
    /// Its RAFT group's size: the leader and its replicas when the cluster info names a leader (so a group
    /// that lost a peer for good reads smaller than configured), else `config.num_replicas` (0 there means
    /// its stream's count: the stream's replicas are used).
    pub replicas: u64,
    pub leader: Option<String>,
    /// The followers (the leader is not among them).
    pub followers: Vec<PeerObs>,
    /// Read from the leader's monitor (otherwise the followers' currency is not known).
    pub from_leader: bool,
    /// `num_pending` (messages not yet delivered) and `num_ack_pending` (delivered, not yet acknowledged).
    pub num_pending: u64,
    pub num_ack_pending: u64,
}

/// Everything one pass read.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Observed {
    pub servers: Vec<ServerObs>,
    /// Monitors that did not answer: (URL, the server's name when known from a lab, the error).
    pub unreachable: Vec<(String, Option<String>, String)>,
    pub streams: Vec<StreamObs>,
    pub consumers: Vec<ConsumerObs>,
}

fn peers(v: Option<&Value>) -> Vec<PeerObs> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| PeerObs {
            name: p.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
            current: p.get("current").and_then(Value::as_bool).unwrap_or(false),
            offline: p.get("offline").and_then(Value::as_bool).unwrap_or(false),
            seen_ago_ns: p.get("active").and_then(Value::as_u64).unwrap_or(0),
            lag: p.get("lag").and_then(Value::as_u64).unwrap_or(0),
        })
        .collect()
}

fn nonempty(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
}

/// One server's facts, streams and consumers from its `/varz` and
/// `/jsz?accounts=true&streams=true&consumers=true&config=true` (None when `/jsz` did not answer: no
/// JetStream figures).
pub fn parse_server(
    monitor_url: &str,
    varz: &Value,
    jsz: Option<&Value>,
) -> (ServerObs, Vec<StreamObs>, Vec<ConsumerObs>) {
    let name = varz
        .get("server_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let u = |p: &str| jsz.and_then(|j| j.pointer(p)).and_then(Value::as_u64);
    let meta = jsz.and_then(|j| j.get("meta_cluster")).map(|m| MetaObs {
        leader: nonempty(m.get("leader")),
        cluster_size: m.get("cluster_size").and_then(Value::as_u64).unwrap_or(0),
        replicas: peers(m.get("replicas")),
    });
    let server = ServerObs {
        name: name.clone(),
        monitor_url: monitor_url.to_string(),
        tags: super::tags(varz),
        cluster: nonempty(varz.pointer("/cluster/name")),
        jetstream: varz.pointer("/jetstream/config").is_some() || jsz.and_then(|j| j.get("config")).is_some(),
        store_used_bytes: u("/storage").unwrap_or(0),
        max_store_bytes: u("/config/max_storage"),
        memory_used_bytes: u("/memory").unwrap_or(0),
        max_memory_bytes: u("/config/max_memory"),
        ha_assets: u("/ha_assets").unwrap_or(0),
        jsz_read: jsz.is_some(),
        meta,
    };
    let mut streams = Vec::new();
    let mut consumers = Vec::new();
    for acc in jsz
        .and_then(|j| j.get("account_details"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let account = acc.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        for st in acc.get("stream_detail").and_then(Value::as_array).into_iter().flatten() {
            let cfg = st.get("config");
            let cluster = st.get("cluster");
            let leader = nonempty(cluster.and_then(|c| c.get("leader")));
            let state = |k: &str| st.pointer(&format!("/state/{k}")).and_then(Value::as_u64).unwrap_or(0);
            let mut followers = peers(cluster.and_then(|c| c.get("replicas")));
            followers.retain(|p| Some(&p.name) != leader.as_ref());
            let stream_replicas = cfg
                .and_then(|c| c.get("num_replicas"))
                .and_then(Value::as_u64)
                .unwrap_or(1)
                .max(1);
            let stream_name = nonempty(st.get("name"))
                .or_else(|| nonempty(cfg.and_then(|c| c.get("name"))))
                .unwrap_or_default();
            for c in st
                .get("consumer_detail")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                consumers.push(parse_consumer(&name, &account, &stream_name, stream_replicas, c));
            }
            streams.push(StreamObs {
                account: account.clone(),
                name: nonempty(st.get("name"))
                    .or_else(|| nonempty(cfg.and_then(|c| c.get("name"))))
                    .unwrap_or_default(),
                replicas: cfg
                    .and_then(|c| c.get("num_replicas"))
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .max(1),
                placement_tags: cfg
                    .and_then(|c| c.pointer("/placement/tags"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_lowercase)
                    .collect(),
                max_bytes: cfg.and_then(|c| c.get("max_bytes")).and_then(Value::as_i64),
                max_age_ns: cfg.and_then(|c| c.get("max_age")).and_then(Value::as_i64),
                from_leader: leader.as_deref() == Some(name.as_str()),
                leader,
                followers,
                messages: state("messages"),
                bytes: state("bytes"),
                last_seq: state("last_seq"),
            });
        }
    }
    (server, streams, consumers)
}

/// One `consumer_detail[]` entry, as the server `me` lists it.
fn parse_consumer(me: &str, account: &str, stream: &str, stream_replicas: u64, c: &Value) -> ConsumerObs {
    let cfg = c.get("config");
    let cluster = c.get("cluster");
    let leader = nonempty(cluster.and_then(|x| x.get("leader")));
    let mut followers = peers(cluster.and_then(|x| x.get("replicas")));
    followers.retain(|p| Some(&p.name) != leader.as_ref());
    let configured = cfg
        .and_then(|x| x.get("num_replicas"))
        .and_then(Value::as_u64)
        .filter(|&r| r > 0)
        .unwrap_or(stream_replicas);
    // The group as it is (a peer removed and not replaced shows as a smaller group), not as configured.
    let replicas = if leader.is_some() {
        followers.len() as u64 + 1
    } else {
        configured
    };
    let durable_name = nonempty(cfg.and_then(|x| x.get("durable_name")));
    let inactive = cfg
        .and_then(|x| x.get("inactive_threshold"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    ConsumerObs {
        account: account.to_string(),
        stream: nonempty(c.get("stream_name")).unwrap_or_else(|| stream.to_string()),
        name: nonempty(c.get("name"))
            .or_else(|| durable_name.clone())
            .unwrap_or_default(),
        durable: durable_name.is_some() || inactive == 0,
        replicas,
        from_leader: leader.as_deref() == Some(me),
        leader,
        followers,
        num_pending: c.get("num_pending").and_then(Value::as_u64).unwrap_or(0),
        num_ack_pending: c.get("num_ack_pending").and_then(Value::as_u64).unwrap_or(0),
    }
}

/// Keep one view per consumer: its leader's where there is one, else the first seen.
pub fn merge_consumers(all: Vec<ConsumerObs>) -> Vec<ConsumerObs> {
    let mut out: Vec<ConsumerObs> = Vec::new();
    for c in all {
        match out
            .iter_mut()
            .find(|x| x.account == c.account && x.stream == c.stream && x.name == c.name)
        {
            Some(x) if c.from_leader && !x.from_leader => *x = c,
            Some(_) => {}
            None => out.push(c),
        }
    }
    out.sort_by(|a, b| (&a.account, &a.stream, &a.name).cmp(&(&b.account, &b.stream, &b.name)));
    out
}

/// Keep one view per stream: the leader's where there is one, else the first seen.
pub fn merge_streams(all: Vec<StreamObs>) -> Vec<StreamObs> {
    let mut out: Vec<StreamObs> = Vec::new();
    for s in all {
        match out.iter_mut().find(|x| x.account == s.account && x.name == s.name) {
            Some(x) if s.from_leader && !x.from_leader => *x = s,
            Some(_) => {}
            None => out.push(s),
        }
    }
    out.sort_by(|a, b| (&a.account, &a.name).cmp(&(&b.account, &b.name)));
    out
}

/// Read every monitor once (`names` gives a server's name per URL where known, e.g. from a lab's record,
/// so a silent monitor can be named).
pub fn observe(monitors: &[(String, Option<String>)], timeout: Duration) -> Observed {
    let mut servers: Vec<ServerObs> = Vec::new();
    let mut unreachable = Vec::new();
    let mut streams = Vec::new();
    let mut consumers = Vec::new();
    for (url, name) in monitors {
        let varz = match super::varz(url, timeout) {
            Ok(v) => v,
            Err(e) => {
                unreachable.push((url.clone(), name.clone(), format!("{e:#}")));
                continue;
            }
        };
        let jsz = super::jsz(url, "accounts=true&streams=true&consumers=true&config=true", timeout).ok();
        let (s, st, co) = parse_server(url, &varz, jsz.as_ref());
        if servers.iter().any(|x| x.name == s.name) {
            continue;
        }
        servers.push(s);
        streams.extend(st);
        consumers.extend(co);
    }
    Observed {
        servers,
        unreachable,
        streams: merge_streams(streams),
        consumers: merge_consumers(consumers),
    }
}

/// The same reading over NATS instead of monitor ports, from a connection in the system account: every
/// server answers `$SYS.REQ.SERVER.PING.VARZ` and `$SYS.REQ.SERVER.PING.JSZ` (server/events.go; each answer
/// `{"server": {"name": …}, "data": …}`); answers are gathered for `wait`. A server that does not answer
/// is simply absent (the grading names planned servers that are missing).
pub async fn observe_system(nc: &async_nats::Client, wait: Duration) -> anyhow::Result<Observed> {
    let varz = gather(nc, "$SYS.REQ.SERVER.PING.VARZ", "{}", wait).await?;
    if varz.is_empty() {
        // Nobody answered (not the system account): no second wait.
        return Ok(Observed::default());
    }
    let jsz = gather(
        nc,
        "$SYS.REQ.SERVER.PING.JSZ",
        // JSzOptions' JSON names the consumer flag `consumer` (server/monitor.go); the HTTP query's is
        // `consumers`.
        r#"{"accounts":true,"streams":true,"consumer":true,"config":true}"#,
        wait,
    )
    .await?;
    let name_of = |v: &Value| nonempty(v.pointer("/server/name"));
    let mut servers: Vec<ServerObs> = Vec::new();
    let mut streams = Vec::new();
    let mut consumers = Vec::new();
    for v in &varz {
        let (Some(name), Some(data)) = (name_of(v), v.get("data")) else {
            continue;
        };
        if servers.iter().any(|s| s.name == name) {
            continue;
        }
        let j = jsz
            .iter()
            .find(|j| name_of(j).as_deref() == Some(name.as_str()))
            .and_then(|j| j.get("data"));
        let (s, st, co) = parse_server(&format!("$SYS.REQ.SERVER.PING ({name})"), data, j);
        servers.push(s);
        streams.extend(st);
        consumers.extend(co);
    }
    Ok(Observed {
        servers,
        unreachable: Vec::new(),
        streams: merge_streams(streams),
        consumers: merge_consumers(consumers),
    })
}

/// Publish one request to every server and collect the answers that arrive within `wait`.
async fn gather(nc: &async_nats::Client, subject: &str, body: &str, wait: Duration) -> anyhow::Result<Vec<Value>> {
    use futures::StreamExt;
    let inbox = nc.new_inbox();
    let mut sub = nc.subscribe(inbox.clone()).await?;
    nc.publish_with_reply(subject.to_string(), inbox, body.to_string().into())
        .await?;
    nc.flush().await?;
    let deadline = tokio::time::Instant::now() + wait;
    let mut out = Vec::new();
    while let Ok(Some(m)) = tokio::time::timeout_at(deadline, sub.next()).await {
        if let Ok(v) = serde_json::from_slice::<Value>(&m.payload) {
            out.push(v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_its_meta_view_and_its_streams_are_read_with_the_leaders_view_preferred() {
        let varz = serde_json::json!({"server_name": "n1", "tags": ["rack:a"], "cluster": {"name": "c"},
            "jetstream": {"config": {}}});
        let jsz = |me: &str, current: bool| {
            serde_json::json!({"storage": 100, "memory": 5, "ha_assets": 3,
            "config": {"max_storage": 1000, "max_memory": 50},
            "meta_cluster": {"leader": "n1", "cluster_size": 3,
                "replicas": [{"name": "n2", "current": true, "active": 7, "lag": 2}, {"name": "n3", "offline": true}]},
            "account_details": [{"name": "$G", "stream_detail": [
                {"name": "orders", "config": {"num_replicas": 3, "placement": {"tags": ["Set:S1"]}, "max_bytes": 9},
                 "state": {"messages": 4, "bytes": 40, "last_seq": 4},
                 "cluster": {"leader": me, "replicas": [{"name": "n2", "current": current, "active": 1}]},
                 "consumer_detail": [
                    {"stream_name": "orders", "name": "orders-c1", "num_pending": 6, "num_ack_pending": 2,
                     "config": {"durable_name": "orders-c1", "num_replicas": 0},
                     "cluster": {"leader": me, "replicas": [{"name": "n2", "current": current}, {"name": "n3"}]}},
                    {"stream_name": "orders", "name": "eph", "config": {"inactive_threshold": 5_000_000_000_i64,
                     "num_replicas": 1}, "cluster": {"leader": "n2"}}]}]}]})
        };
        let (s, st, co) = parse_server("http://x", &varz, Some(&jsz("n1", true)));
        assert_eq!(
            (s.name.as_str(), s.store_used_bytes, s.max_store_bytes),
            ("n1", 100, Some(1000))
        );
        assert_eq!(
            (s.ha_assets, s.max_memory_bytes, s.cluster.as_deref()),
            (3, Some(50), Some("c"))
        );
        let m = s.meta.unwrap();
        assert_eq!((m.leader.as_deref(), m.cluster_size), (Some("n1"), 3));
        assert_eq!(
            (m.replicas[0].lag, m.replicas[0].seen_ago_ns, m.replicas[1].offline),
            (2, 7, true)
        );
        assert_eq!(st[0].placement_tags, ["set:s1"]);
        assert!(st[0].from_leader && st[0].followers[0].current);
        // Another server's view of the same stream loses to the leader's, whatever the order.
        let varz2 = serde_json::json!({"server_name": "n2"});
        let (_, other, other_co) = parse_server("http://y", &varz2, Some(&jsz("n1", false)));
        assert!(!other[0].from_leader);
        let merged = merge_streams(other.into_iter().chain(st).collect());
        assert_eq!(merged.len(), 1);
        assert!(merged[0].from_leader && merged[0].followers[0].current);
        // Consumers: the durable one inherits its stream's R3 (num_replicas 0) and its group has 3 peers; the
        // one with an inactive threshold and no durable name is ephemeral.
        let c1 = &co[0];
        assert_eq!(
            (c1.stream.as_str(), c1.name.as_str(), c1.durable, c1.replicas),
            ("orders", "orders-c1", true, 3)
        );
        assert_eq!((c1.num_pending, c1.num_ack_pending, c1.followers.len()), (6, 2, 2));
        assert!(c1.from_leader && c1.followers[0].current);
        assert!(!co[1].durable && !co[1].from_leader && co[1].replicas == 1);
        // Configured R3 but its leader knows one other peer (one removed, not replaced): R2 as it is.
        let shrunk = parse_consumer(
            "n1",
            "$G",
            "orders",
            3,
            &serde_json::json!({"name": "c", "config": {"durable_name": "c", "num_replicas": 3},
                "cluster": {"leader": "n1", "replicas": [{"name": "n2", "current": true}]}}),
        );
        assert_eq!(shrunk.replicas, 2);
        let merged = merge_consumers(other_co.into_iter().chain(co).collect());
        assert_eq!(merged.len(), 2);
        assert!(merged.iter().find(|c| c.name == "orders-c1").unwrap().followers[0].current);
        // No /jsz: a server with no JetStream figures, no streams.
        let (s, st, co) = parse_server("http://z", &serde_json::json!({}), None);
        assert!(!s.jetstream && st.is_empty() && co.is_empty() && s.meta.is_none());
    }
}
