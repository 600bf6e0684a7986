//! Open NATS issues a plan cannot model away, listed in design, whatif and simulate output (not only in
//! verify): the reader should know what the figures do not cover. Sources: Jepsen's NATS 2.12.1 analysis
//! (2025-12-08) and the nats-server issues it filed, open at the time of writing (reference/reliability.md).

use serde::Serialize;

/// One known hazard.
#[derive(Debug, Clone, Serialize)]
pub struct Hazard {
    /// e.g. `nats-server#7567`.
    pub issue: &'static str,
    pub what: &'static str,
}

/// The open hazards, in issue order.
pub fn known_hazards() -> Vec<Hazard> {
    vec![
        Hazard {
            issue: "nats-server#7545",
            what: "membership changes (peer-remove, a wiped server rejoining): Jepsen could not establish a safe \
                   procedure; rejoin under a new server_name",
        },
        Hazard {
            issue: "nats-server#7549",
            what: "bit flips or truncation in .blk files on a minority of replicas lost acknowledged writes and \
                   split replicas; checksums catch some cases, not all",
        },
        Hazard {
            issue: "nats-server#7567",
            what: "with delayed sync, one server losing its page cache (OS crash, power) plus a pause or partition \
                   of another within the sync window lost acknowledged writes and left a lasting split; modelled \
                   as acked_loss_cause crash_plus_pause",
        },
    ]
}

/// One line for text reports.
pub fn hazards_line() -> String {
    let issues: Vec<&str> = known_hazards().iter().map(|h| h.issue).collect();
    format!(
        "known open NATS hazards not in these figures: {} (membership changes, file corruption, crash + pause); \
         --format json lists them",
        issues.join(", ")
    )
}
