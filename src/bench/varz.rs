//! Reads `slow_consumers` from the servers' `/varz` (through `crate::monitor`) so a run can report
//! server-side slow-consumer cut-offs.

use std::time::Duration;

/// Sum of `slow_consumers` over the monitored servers; None when no URL was given or none answered.
pub async fn total_slow_consumers(urls: &[String]) -> Option<u64> {
    if urls.is_empty() {
        return None;
    }
    let urls = urls.to_vec();
    // The monitor client is blocking by design; keep it off the runtime's worker threads.
    tokio::task::spawn_blocking(move || {
        let mut total = None;
        for u in &urls {
            if let Some(n) = crate::monitor::varz(u, Duration::from_secs(3))
                .ok()
                .and_then(|v| v.get("slow_consumers")?.as_u64())
            {
                total = Some(total.unwrap_or(0) + n);
            }
        }
        total
    })
    .await
    .ok()
    .flatten()
}
