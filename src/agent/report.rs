//! Human lines about agents for bench's and verify's reports (pure: values in, text out).

use super::coordinator::{AgentsRun, AgentsSummary, ShareStatus};

/// One line per agent in use: name, host, clock offset and round trip.
pub fn summary_lines(s: &AgentsSummary) -> Vec<String> {
    let mut v = vec![format!(
        "agents: {} of {} requested (latency measured per host, never across clocks)",
        s.agents.len(),
        s.requested
    )];
    for a in &s.agents {
        v.push(format!(
            "  agent {} on {} (pid {}, natsplan {}): clock offset {:+.3} ms ± {:.3} ms (rtt {:.3} ms, {} probes)",
            a.name,
            a.host,
            a.pid,
            a.version,
            a.clock.offset_ms,
            a.clock.error_bound_ms(),
            a.clock.rtt_ms,
            a.clock.samples
        ));
    }
    if !s.not_used.is_empty() {
        v.push(format!("  not used: {}", s.not_used.join(", ")));
    }
    v
}

/// One line per agent of a row: its share and what it did; an incomplete row says so first.
pub fn row_lines(r: &AgentsRun) -> Vec<String> {
    let mut v = Vec::new();
    if !r.complete {
        v.push("INCOMPLETE: not every agent finished its share; the figures cover only what was reported".into());
    }
    for a in &r.agents {
        let status = match a.status {
            ShareStatus::Completed => "completed",
            ShareStatus::Lost => "LOST",
            ShareStatus::Failed => "FAILED",
        };
        let mut line = format!(
            "  agent {} {status}: {} worker(s), {} subscriber(s), {} assigned; published {}, received {}",
            a.name, a.workers, a.subscribers, a.assigned_msgs, a.published, a.received
        );
        if a.failed > 0 {
            line.push_str(&format!(", failed {}", a.failed));
        }
        if let Some(l) = &a.latency_us {
            line.push_str(&format!("; own p50 {:.1} µs, p99 {:.1} µs", l.p50, l.p99));
        }
        if let Some(late) = a.start_late_ms {
            line.push_str(&format!("; started {late:.2} ms after the agreed instant"));
        }
        if a.status != ShareStatus::Completed {
            line.push_str(&format!(
                "; {} operations at its last heartbeat{}: {}",
                a.done_at_last_heartbeat,
                a.last_heartbeat_s
                    .map(|t| format!(" ({t:.2} s in)"))
                    .unwrap_or_default(),
                a.error.clone().unwrap_or_default()
            ));
        }
        v.push(line);
    }
    v
}
