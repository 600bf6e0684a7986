//! The planned streams', buckets' and stores' checks: present, replicas, placement, every replica
//! current (`Group`, `current`: consumers' groups too). Moved out of check/mod.rs whole.

use super::*;

/// Planned streams, buckets and stores: present, replicas, placement, replicas current; then the streams
/// nobody planned.
pub(super) fn assets(
    exp: &Expected,
    obs: &Observed,
    live: &BTreeMap<&str, &ServerObs>,
    th: &Thresholds,
    out: &mut Out,
    notes: &mut Vec<String>,
) {
    let by_name: BTreeMap<&str, &StreamObs> = obs.streams.iter().map(|s| (s.name.as_str(), s)).collect();
    let no_streams_read = obs.servers.iter().all(|s| s.meta.is_none());
    for a in &exp.assets {
        let Some(s) = by_name.get(a.stream.as_str()) else {
            let st = if no_streams_read {
                Health::Unknown
            } else {
                Health::Critical
            };
            out.add(
                "asset",
                &a.stream,
                st,
                if no_streams_read {
                    format!("{} ({}): not read, no server answered /jsz", a.stream, a.kind)
                } else {
                    format!("{} ({}, planned R{}): missing", a.stream, a.kind, a.replicas)
                },
            );
            continue;
        };
        out.add(
            "asset",
            &a.stream,
            Health::Ok,
            format!("{} ({}): present", a.stream, a.kind),
        );
        let st = match s.replicas.cmp(&a.replicas) {
            std::cmp::Ordering::Less => Health::Critical,
            std::cmp::Ordering::Greater => Health::Warning,
            std::cmp::Ordering::Equal => Health::Ok,
        };
        let msg = match st {
            Health::Critical => format!(
                "{}: R{} but planned R{}: it survives fewer failures than the plan says",
                a.stream, s.replicas, a.replicas
            ),
            Health::Warning => format!(
                "{}: R{} but planned R{}: more store and RAFT traffic than planned",
                a.stream, s.replicas, a.replicas
            ),
            _ => format!("{}: R{} as planned", a.stream, s.replicas),
        };
        out.add("replicas", &a.stream, st, msg)
            .figures(s.replicas as f64, None, Some(a.replicas as f64), "replicas");
        placement(exp, a, s, live, out);
        if s.replicas > 1 {
            let lag_crit = th.peer_lag_critical.unwrap_or_else(|| {
                NATSCLI_LAG_CRITICAL.max((a.ops_per_s * th.peer_seen_critical.as_secs_f64()).ceil() as u64)
            });
            current(
                "replica_current",
                &Group::of_stream(s, &a.stream),
                lag_crit,
                th.peer_seen_critical,
                out,
            );
        }
    }
    let planned: BTreeSet<&str> = exp.assets.iter().map(|a| a.stream.as_str()).collect();
    for s in &obs.streams {
        if planned.contains(s.name.as_str()) {
            continue;
        }
        let limits = match (s.max_bytes, s.max_age_ns) {
            (Some(b), _) if b > 0 => format!("max_bytes {}", gib(b as u64)),
            (_, Some(a)) if a > 0 => format!("max_age {:.0} s", a as f64 / 1e9),
            _ => "no limits".to_string(),
        };
        out.add(
            "unplanned",
            &s.name,
            Health::Warning,
            format!(
                "{} (account {}): not in the plan; it has R{}, {limits}, {} stored (store and HA assets the plan does \
                 not count)",
                s.name,
                s.account,
                s.replicas,
                gib(s.bytes)
            ),
        );
    }
    if obs.streams.iter().any(|s| s.account != "$G") {
        notes.push("streams of every account are checked; the plan's are expected in the default account".into());
    }
}

/// Placement: the emitted tags, replicas inside the tagged set, on distinct `unique_tag` values.
fn placement(exp: &Expected, a: &ExpAsset, s: &StreamObs, live: &BTreeMap<&str, &ServerObs>, out: &mut Out) {
    let mut problems: Vec<(Health, String)> = Vec::new();
    if s.placement_tags != a.placement_tags {
        problems.push((
            Health::Warning,
            format!(
                "placement tags {} but planned {}",
                list(&s.placement_tags),
                list(&a.placement_tags)
            ),
        ));
    }
    let mut peers: Vec<String> = s.leader.iter().cloned().collect();
    peers.extend(s.followers.iter().map(|p| p.name.clone()));
    if !a.placement_tags.is_empty() {
        let outside: Vec<String> = peers
            .iter()
            .filter(|p| {
                exp.servers
                    .iter()
                    .find(|x| &x.name == *p)
                    .is_none_or(|x| !a.placement_tags.iter().all(|t| x.tags.contains(t)))
            })
            .cloned()
            .collect();
        if !outside.is_empty() {
            problems.push((
                Health::Warning,
                format!(
                    "replicas on {} outside the servers tagged {}",
                    list(&outside),
                    list(&a.placement_tags)
                ),
            ));
        }
    }
    if let Some(ut) = &exp.unique_tag {
        let key = ut.to_lowercase();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for p in &peers {
            let tags: Vec<String> = match live.get(p.as_str()) {
                Some(l) => l.tags.iter().map(|t| t.to_lowercase()).collect(),
                None => exp
                    .servers
                    .iter()
                    .find(|x| &x.name == p)
                    .map(|x| x.tags.clone())
                    .unwrap_or_default(),
            };
            let Some(v) = tags.into_iter().find(|t| t.starts_with(&key)) else {
                continue;
            };
            if let Some(other) = seen.insert(v.clone(), p.clone()) {
                problems.push((
                    Health::Critical,
                    format!("replicas on {other} and {p} share {v}: one failure there takes both"),
                ));
            }
        }
    }
    let st = problems.iter().map(|p| p.0).max().unwrap_or(Health::Ok);
    let msg = if problems.is_empty() {
        format!("{}: on {} as planned", a.stream, list(&peers))
    } else {
        format!(
            "{}: {}",
            a.stream,
            problems.iter().map(|p| p.1.clone()).collect::<Vec<_>>().join("; ")
        )
    };
    out.add("placement", &a.stream, st, msg);
}

/// Replicas current, from the stream leader's view.
/// A RAFT group as its leader's monitor shows it: a stream's or a consumer's.
pub(super) struct Group<'a> {
    /// The check's subject (`orders`, `orders/orders-c1`).
    pub(super) subject: &'a str,
    pub(super) replicas: u64,
    pub(super) leader: Option<&'a str>,
    pub(super) from_leader: bool,
    pub(super) followers: &'a [PeerObs],
}

impl<'a> Group<'a> {
    pub(super) fn of_stream(s: &'a StreamObs, subject: &'a str) -> Group<'a> {
        Group {
            subject,
            replicas: s.replicas,
            leader: s.leader.as_deref(),
            from_leader: s.from_leader,
            followers: &s.followers,
        }
    }
}

/// Every replica of a group current (check `check`: replica_current for streams, consumer_current for
/// consumers), from its leader's view.
pub(super) fn current(check: &str, g: &Group, lag_crit: u64, seen_crit: Duration, out: &mut Out) {
    let Some(leader) = g.leader else {
        out.add(
            check,
            g.subject,
            Health::Critical,
            format!("{}: no leader (writes stall)", g.subject),
        );
        return;
    };
    if !g.from_leader {
        out.add(
            check,
            g.subject,
            Health::Unknown,
            format!(
                "{}: its leader {leader}'s monitor was not read, so its replicas' currency is unknown",
                g.subject
            ),
        );
        return;
    }
    let mut problems: Vec<(Health, String)> = Vec::new();
    if (g.followers.len() as u64) + 1 < g.replicas {
        problems.push((
            Health::Critical,
            format!("{} of R{} peers known to the leader", g.followers.len() + 1, g.replicas),
        ));
    }
    for p in g.followers {
        if let Some(pr) = peer_problem(p, lag_crit, seen_crit) {
            problems.push(pr);
        }
    }
    let max_lag = g.followers.iter().map(|p| p.lag).max().unwrap_or(0);
    let st = problems.iter().map(|p| p.0).max().unwrap_or(Health::Ok);
    let msg = if problems.is_empty() {
        format!("{}: leader {leader}, every replica current", g.subject)
    } else {
        format!(
            "{} (leader {leader}): {}",
            g.subject,
            problems.iter().map(|p| p.1.clone()).collect::<Vec<_>>().join("; ")
        )
    };
    out.add(check, g.subject, st, msg)
        .figures(max_lag as f64, None, Some(lag_crit as f64), "ops");
}
