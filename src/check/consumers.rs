//! The planned durable consumers against the live ones: per planned stream, how many durable consumers it
//! has against the site's `consumers: N`, and each one's replicas and currency. A stream's consumers are
//! RAFT groups on its peers with its replica count (emit writes each with `num_replicas` = its stream's,
//! `emit::consumers`); a consumer with fewer replicas than its stream loses its delivery state (acks,
//! redelivery, its position) with fewer failures than the stream's data, which the plan's survival figures
//! do not count. Ephemeral consumers (an `inactive_threshold` and no durable name) come and go with their
//! clients and are not graded.

use super::{current, ExpAsset, Expected, Group, Health, Out, Thresholds, NATSCLI_LAG_CRITICAL};
use crate::monitor::observe::{ConsumerObs, Observed};
use crate::plan::Plan;
use serde::Serialize;

/// The durable consumers the plan gives one stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExpConsumers {
    pub stream: String,
    /// The site's `consumers: N` for the stream.
    pub count: u64,
    /// Its stream's planned replicas, which each consumer is emitted with.
    pub replicas: u64,
    /// The names emit gives them without a deploy file (`<stream>-c1`…): shown, not required (a deploy
    /// file or the application names its own).
    pub emitted_names: Vec<String>,
}

impl ExpConsumers {
    /// Per planned stream with consumers: their count and replicas (the stream's, from `assets`).
    pub fn from_plan(plan: &Plan, assets: &[ExpAsset]) -> Vec<ExpConsumers> {
        crate::emit::consumers::specs(plan, &crate::emit::deploy::Deploy::default())
            .into_iter()
            .filter(|(_, list, _)| !list.is_empty())
            .map(|(stream, list, _)| ExpConsumers {
                replicas: assets
                    .iter()
                    .find(|a| a.kind == "stream" && a.stream == stream)
                    .map(|a| a.replicas)
                    .unwrap_or(1),
                count: list.len() as u64,
                emitted_names: list.into_iter().map(|c| c.durable).collect(),
                stream,
            })
            .collect()
    }
}

/// Grade every planned stream's durable consumers (a missing stream is the asset check's).
pub(super) fn grade(exp: &Expected, obs: &Observed, th: &Thresholds, out: &mut Out) {
    for a in exp.assets.iter().filter(|a| a.kind == "stream") {
        if !obs.streams.iter().any(|s| s.name == a.stream) {
            continue;
        }
        let planned = exp.consumers.iter().find(|c| c.stream == a.stream);
        let want = planned.map(|c| c.count).unwrap_or(0);
        let live: Vec<&ConsumerObs> = obs
            .consumers
            .iter()
            .filter(|c| c.durable && c.stream == a.stream)
            .collect();
        let n = live.len() as u64;
        if want == 0 && n == 0 {
            continue;
        }
        let names = || live.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ");
        let (st, msg) =
            match n.cmp(&want) {
                std::cmp::Ordering::Equal => (
                    Health::Ok,
                    format!("{}: {n} durable consumers as planned ({})", a.stream, names()),
                ),
                std::cmp::Ordering::Less => {
                    (
                        Health::Warning,
                        format!(
                    "{}: {n} of {want} planned durable consumers{}; emit writes them as {} (`nats consumer add \
                     {} --config consumers/…`), or the application creates its own",
                    a.stream,
                    if n == 0 { String::new() } else { format!(" ({})", names()) },
                    planned.map(|c| c.emitted_names.join(", ")).unwrap_or_default(),
                    a.stream
                ),
                    )
                }
                std::cmp::Ordering::Greater => (
                    Health::Warning,
                    format!(
                    "{}: {n} durable consumers ({}) but {want} planned: RAFT groups (HA assets) and ack traffic the \
                     plan does not count",
                    a.stream,
                    names()
                ),
                ),
            };
        out.add("consumers", &a.stream, st, msg)
            .figures(n as f64, None, None, "consumers");
        for c in &live {
            one(a, c, th, out);
        }
    }
}

/// One durable consumer's replicas against its stream's plan, and its replicas' currency.
fn one(a: &ExpAsset, c: &ConsumerObs, th: &Thresholds, out: &mut Out) {
    let subject = format!("{}/{}", a.stream, c.name);
    let st = match c.replicas.cmp(&a.replicas) {
        std::cmp::Ordering::Less => Health::Critical,
        std::cmp::Ordering::Greater => Health::Warning,
        std::cmp::Ordering::Equal => Health::Ok,
    };
    let msg = match st {
        Health::Critical => format!(
            "{subject}: R{} but its stream is planned R{}: its delivery state (acks, position) is lost with fewer \
             failures than the stream's messages",
            c.replicas, a.replicas
        ),
        Health::Warning => format!("{subject}: R{} but its stream is planned R{}", c.replicas, a.replicas),
        _ => format!("{subject}: R{} as its stream", c.replicas),
    };
    out.add("consumer_replicas", &subject, st, msg).figures(
        c.replicas as f64,
        None,
        Some(a.replicas as f64),
        "replicas",
    );
    if c.replicas > 1 {
        let lag_crit = th.peer_lag_critical.unwrap_or(NATSCLI_LAG_CRITICAL);
        let g = Group {
            subject: &subject,
            replicas: c.replicas,
            leader: c.leader.as_deref(),
            from_leader: c.from_leader,
            followers: &c.followers,
        };
        current("consumer_current", &g, lag_crit, th.peer_seen_critical, out);
    }
}
