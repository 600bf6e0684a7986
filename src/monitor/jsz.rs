//! A typed reader of nats-server's `/jsz?accounts=true&streams=true[&config=true]` answer: the one walk
//! over `account_details[].stream_detail[]` that the placement check (`monitor::streams`), the workload
//! import (`import::cluster`), the drift check (`verify::drift`) and fault verification read, instead of
//! one hand-written walk each. Lenient like nats-server's own clients: a field that is missing or of
//! another type reads as absent (or 0), never as an error, because older servers omit some of them.

use serde_json::Value;

/// One stream as one server's `/jsz` reports it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JszStream {
    /// The account it is in (`account_details[].name`).
    pub account: String,
    /// None when the server gave no name (never seen; kept apart from an empty name).
    pub name: Option<String>,
    /// `config` as the server sent it (only with `config=true`).
    pub config: Option<Value>,
    /// `state.messages`, `state.bytes`, `state.first_seq`, `state.last_seq`, `state.consumer_count`.
    pub messages: u64,
    pub bytes: u64,
    pub first_seq: u64,
    pub last_seq: u64,
    pub consumer_count: u64,
    /// `cluster.leader` (None when empty or absent).
    pub leader: Option<String>,
    /// `cluster.replicas[].name`: the followers as this server sees them.
    pub followers: Vec<String>,
}

impl JszStream {
    /// A number from `config` (e.g. `num_replicas`, `max_age` in ns), when present and a number.
    pub fn config_u64(&self, key: &str) -> Option<u64> {
        self.config.as_ref()?.get(key)?.as_u64()
    }
    pub fn config_i64(&self, key: &str) -> Option<i64> {
        self.config.as_ref()?.get(key)?.as_i64()
    }
    pub fn config_f64(&self, key: &str) -> Option<f64> {
        self.config.as_ref()?.get(key)?.as_f64()
    }
    /// `config.subjects`, or None when the answer has none.
    pub fn subjects(&self) -> Option<Vec<String>> {
        let a = self.config.as_ref()?.get("subjects")?.as_array()?;
        Some(a.iter().filter_map(Value::as_str).map(str::to_string).collect())
    }
    /// The name, or "" when the server gave none.
    pub fn name_or_empty(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }
}

/// Every stream in a `/jsz?accounts=true&streams=true` answer, in the order the server lists them.
pub fn streams(jsz: &Value) -> Vec<JszStream> {
    let mut out = Vec::new();
    for acc in jsz
        .get("account_details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let account = acc.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        for st in acc.get("stream_detail").and_then(Value::as_array).into_iter().flatten() {
            let state = |k: &str| {
                st.get("state")
                    .and_then(|s| s.get(k))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let cluster = st.get("cluster");
            out.push(JszStream {
                account: account.clone(),
                name: st.get("name").and_then(Value::as_str).map(str::to_string),
                config: st.get("config").cloned(),
                messages: state("messages"),
                bytes: state("bytes"),
                first_seq: state("first_seq"),
                last_seq: state("last_seq"),
                consumer_count: state("consumer_count"),
                leader: cluster
                    .and_then(|c| c.get("leader"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
                followers: cluster
                    .and_then(|c| c.get("replicas"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_state_config_and_peers_are_read_and_odd_fields_are_absent() {
        let jsz = serde_json::json!({"account_details": [
            {"name": "$G", "stream_detail": [
                {"name": "orders", "config": {"num_replicas": 3, "subjects": ["orders.>"], "max_bytes": -1},
                 "state": {"messages": 5, "bytes": 500, "first_seq": 1, "last_seq": 5, "consumer_count": 2},
                 "cluster": {"leader": "n1", "replicas": [{"name": "n2"}, {"name": "n3"}, {"x": 1}]}},
                {"config": "odd", "state": {"messages": "many"}, "cluster": {"leader": ""}}
            ]},
            {"stream_detail": "not a list"}
        ]});
        let s = streams(&jsz);
        assert_eq!(s.len(), 2);
        let o = &s[0];
        assert_eq!((o.account.as_str(), o.name.as_deref()), ("$G", Some("orders")));
        assert_eq!(
            (o.messages, o.bytes, o.first_seq, o.last_seq, o.consumer_count),
            (5, 500, 1, 5, 2)
        );
        assert_eq!(o.leader.as_deref(), Some("n1"));
        assert_eq!(o.followers, ["n2", "n3"]);
        assert_eq!(o.config_u64("num_replicas"), Some(3));
        assert_eq!(o.config_i64("max_bytes"), Some(-1));
        assert_eq!(o.subjects().unwrap(), ["orders.>"]);
        let odd = &s[1];
        assert_eq!(
            (odd.name.as_deref(), odd.messages, odd.leader.as_deref()),
            (None, 0, None)
        );
        assert_eq!((odd.config_u64("num_replicas"), odd.subjects()), (None, None));
        assert!(streams(&serde_json::json!({})).is_empty());
    }
}
