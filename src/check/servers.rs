//! The servers' checks: present, tagged, their store, memory and HA assets, and a meta peer's problem.
//! Moved out of check/mod.rs whole.

use super::*;

fn pct_status(pct: f64, warn: f64, crit: f64) -> Health {
    if pct >= crit {
        Health::Critical
    } else if pct >= warn {
        Health::Warning
    } else {
        Health::Ok
    }
}

/// Servers present, their tags, store, memory and HA assets; unplanned servers.
pub(super) fn servers(
    exp: &Expected,
    obs: &Observed,
    live: &BTreeMap<&str, &ServerObs>,
    planned: &BTreeSet<&str>,
    th: &Thresholds,
    out: &mut Out,
) {
    for s in &exp.servers {
        let Some(l) = live.get(s.name.as_str()) else {
            server_missing(s, obs, out);
            continue;
        };
        if !l.jetstream {
            out.add(
                "server",
                &s.name,
                Health::Critical,
                format!(
                    "{}: answers but JetStream is off (planned as a JetStream server)",
                    s.name
                ),
            );
            continue;
        }
        out.add("server", &s.name, Health::Ok, format!("{}: up, JetStream on", s.name));
        server_tags(s, l, out);
        if !l.jsz_read {
            for c in ["store", "ha_assets"] {
                out.add(
                    c,
                    &s.name,
                    Health::Unknown,
                    format!("{}: not read, its /varz answered but its /jsz did not", s.name),
                );
            }
            continue;
        }
        server_store(s, l, th, out);
        server_ha_assets(s, l, th, out);
    }
    for l in &obs.servers {
        if !planned.contains(l.name.as_str()) {
            out.add(
                "server",
                &l.name,
                Health::Warning,
                format!("{}: a server the plan does not have (tags {})", l.name, list(&l.tags)),
            );
        }
    }
}

/// A planned server whose monitor did not answer: down or unreachable, its store and assets not read.
fn server_missing(s: &ExpServer, obs: &Observed, out: &mut Out) {
    let why = obs
        .unreachable
        .iter()
        .find(|(_, n, _)| n.as_deref() == Some(s.name.as_str()))
        .map(|(u, _, e)| format!("its monitor {} did not answer: {e}", crate::monitor::shown(u)))
        .unwrap_or_else(|| "not among the servers whose monitors answered".into());
    out.add(
        "server",
        &s.name,
        Health::Critical,
        format!("{}: down or unreachable ({why})", s.name),
    );
    for c in ["store", "ha_assets"] {
        out.add(
            c,
            &s.name,
            Health::Critical,
            format!("{}: not read, the server did not answer", s.name),
        );
    }
}

/// A server's tags against the plan's (placement follows tags).
fn server_tags(s: &ExpServer, l: &ServerObs, out: &mut Out) {
    let got: BTreeSet<String> = l.tags.iter().map(|t| t.to_lowercase()).collect();
    let want: BTreeSet<String> = s.tags.iter().cloned().collect();
    let (st, msg) = if got == want {
        (Health::Ok, format!("{}: tags {} as planned", s.name, list(&s.tags)))
    } else {
        (
            Health::Warning,
            format!(
                "{}: tags {} but the plan gives {} (placement follows tags)",
                s.name,
                list(&got.into_iter().collect::<Vec<_>>()),
                list(&s.tags)
            ),
        )
    };
    out.add("tags", &s.name, st, msg);
}

/// A server's store against its limit and against the room the worst tolerated failure needs, and its
/// memory stores against their limit.
fn server_store(s: &ExpServer, l: &ServerObs, th: &Thresholds, out: &mut Out) {
    // Store against the server's limit (the live one, else the planned max_file_store).
    let limit = l.max_store_bytes.filter(|&m| m > 0).unwrap_or(s.store_bytes);
    let used = l.store_used_bytes;
    let pct = if limit > 0 {
        100.0 * used as f64 / limit as f64
    } else {
        0.0
    };
    let st = pct_status(pct, th.store_warn, th.store_critical);
    out.add(
        "store",
        &s.name,
        st,
        format!(
            "{}: {} stored, {pct:.1} % of max_file_store {} (the plan's figure at the horizon: {})",
            s.name,
            gib(used),
            gib(limit),
            gib(s.planned_bytes)
        ),
    )
    .figures(pct, Some(th.store_warn), Some(th.store_critical), "%");
    // What must stay free to take the worst tolerated failure's replicas.
    let room = limit.saturating_sub(s.failover_bytes);
    let st = if used > room { Health::Warning } else { Health::Ok };
    let msg = match &s.failover {
        Some(f) => format!(
            "{}: {} stored; {} must stay free for the replicas it takes on after {f} (peer-removed), so at most {}",
            s.name,
            gib(used),
            gib(s.failover_bytes),
            gib(room)
        ),
        None => format!(
            "{}: {} stored; the plan re-places nothing on it after a tolerated failure, so at most its limit {}",
            s.name,
            gib(used),
            gib(room)
        ),
    };
    out.add("store_failover", &s.name, st, msg)
        .figures(used as f64, Some(room as f64), None, "bytes");
    if let Some(max) = l.max_memory_bytes.filter(|&m| m > 0) {
        let pct = 100.0 * l.memory_used_bytes as f64 / max as f64;
        out.add(
            "memory",
            &s.name,
            pct_status(pct, th.mem_warn, th.mem_critical),
            format!(
                "{}: {} in memory stores, {pct:.1} % of max_memory_store {}",
                s.name,
                gib(l.memory_used_bytes),
                gib(max)
            ),
        )
        .figures(pct, Some(th.mem_warn), Some(th.mem_critical), "%");
    }
}

/// A server's RAFT groups against the plan's count (or the thresholds given).
fn server_ha_assets(s: &ExpServer, l: &ServerObs, th: &Thresholds, out: &mut Out) {
    let warn = th.ha_assets_warn.unwrap_or(s.ha_assets);
    let crit = if th.ha_assets_warn.is_none() {
        th.ha_assets_critical.max(s.ha_assets)
    } else {
        th.ha_assets_critical
    };
    let n = l.ha_assets;
    let st = if n > crit {
        Health::Critical
    } else if n > warn {
        Health::Warning
    } else {
        Health::Ok
    };
    out.add(
        "ha_assets",
        &s.name,
        st,
        format!(
            "{}: {n} RAFT groups (HA assets); the plan places {} there (meta group, streams, buckets, stores, \
             consumers), nats audit flags more than {AUDIT_HA_ASSETS}",
            s.name, s.ha_assets
        ),
    )
    .figures(n as f64, Some(warn as f64), Some(crit as f64), "assets");
}

/// One RAFT peer against the lag and last-seen thresholds; None when it is fine.
pub(super) fn peer_problem(p: &PeerObs, lag_crit: u64, seen_crit: Duration) -> Option<(Health, String)> {
    if p.offline {
        return Some((Health::Critical, format!("{} offline", p.name)));
    }
    if p.lag > lag_crit {
        return Some((
            Health::Critical,
            format!("{} {} operations behind (critical above {lag_crit})", p.name, p.lag),
        ));
    }
    let seen = Duration::from_nanos(p.seen_ago_ns);
    if seen > seen_crit {
        return Some((
            Health::Critical,
            format!(
                "{} not seen for {:.1} s (critical above {:.1} s)",
                p.name,
                seen.as_secs_f64(),
                seen_crit.as_secs_f64()
            ),
        ));
    }
    if !p.current {
        return Some((Health::Warning, format!("{} not current", p.name)));
    }
    None
}
