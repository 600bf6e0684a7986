//! Power cuts for real (issue 20): the servers of a domain are SIGKILLed, their stores' power-loss
//! layers (`powerfs`) drop every write not yet durable and are mounted again over the same disks, and
//! the servers restart on what survived. Then the run reads back every acknowledged write as for any
//! scenario: what is missing is `acked_lost`.

use super::*;
use crate::lab::Lab;
use crate::powerfs::LossReport;
use anyhow::{anyhow, bail, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a power scenario did, for the timeline and the report.
pub(super) struct PowerMarks {
    /// When the fault began and when a quorum could form again, where that is not the whole of
    /// `inject_and_heal` (the crash-plus-pause scenario has steps before and after).
    pub(super) inject: Option<Instant>,
    pub(super) heal: Option<Instant>,
    /// What the layers threw away, summed over the servers cut.
    pub(super) cut: Option<LossReport>,
    /// The publisher's last acknowledgement (ms since `t0`), to see writes resume.
    pub(super) last_ack_ms: Arc<AtomicU64>,
    pub(super) t0: Instant,
}

impl PowerMarks {
    pub(super) fn new(last_ack_ms: Arc<AtomicU64>, t0: Instant) -> PowerMarks {
        PowerMarks {
            inject: None,
            heal: None,
            cut: None,
            last_ack_ms,
            t0,
        }
    }
}

/// The followers a crash-plus-pause pauses first (a minority: R − quorum of them) and the rest, paused
/// once the leader's power is cut.
pub(super) fn pause_sides(roles: &Roles, replicas: usize) -> (Vec<usize>, Vec<usize>) {
    let first = replicas.saturating_sub(replicas / 2 + 1).min(roles.followers.len());
    (roles.followers[..first].to_vec(), roles.followers[first..].to_vec())
}

/// SIGKILL every server of `vs` first (the power goes at once), then cut each one's layer.
fn cut_all(lab: &mut Lab, vs: &[usize], marks: &mut PowerMarks, log: &dyn Fn(&str)) -> Result<()> {
    for &v in vs {
        lab.kill(v)?;
    }
    let mut total = marks.cut.take().unwrap_or_default();
    let mut what = Vec::new();
    for &v in vs {
        let r = lab.power_cut(v)?;
        what.push(format!(
            "{}: {} B cut off, {} pages restored, {} files dropped",
            lab.nodes()[v].name,
            r.bytes_truncated,
            r.pages_restored,
            r.files_dropped
        ));
        total.add(&r);
    }
    log(&format!("  power cut ({})", what.join("; ")));
    marks.cut = Some(total);
    Ok(())
}

/// Inject one power scenario and heal it.
pub(super) fn inject(ctx: &Ctx, lab: &mut Lab, p: Planned, roles: &Roles, marks: &mut PowerMarks) -> Result<()> {
    let (opts, log) = (ctx.opts, ctx.log);
    let n = lab.nodes().len();
    let names = |lab: &Lab, vs: &[usize]| {
        vs.iter()
            .map(|&v| lab.nodes()[v].name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let vs: Vec<usize> = match p.kind {
        FaultKind::PowerServer => vec![roles.leader],
        FaultKind::PowerQuorum => roles.majority.clone(),
        FaultKind::PowerAll => (0..n).collect(),
        FaultKind::PowerRack => {
            let r = p.rack.ok_or_else(|| anyhow!("a rack scenario needs its rack"))?;
            (0..n).filter(|&i| ctx.rack_of[i] == r).collect()
        }
        FaultKind::PowerCrashPause => return crash_pause(ctx, lab, roles, marks),
        k => bail!("{} is not a power scenario", k.name()),
    };
    log(&format!(
        "  power off {} (SIGKILL, unsynced writes dropped)",
        names(lab, &vs)
    ));
    cut_all(lab, &vs, marks, log)?;
    opts.pause(opts.hold)?;
    log(&format!("  power on {}", names(lab, &vs)));
    for &v in &vs {
        lab.restart(v)?;
    }
    Ok(())
}

/// Jepsen's `pause-kill` (#7567): pause a minority of followers past the routes' failure detection
/// ([`POWER_ROUTE_PING`]), let writes build up on the rest, cut
/// the leader's power and pause the rest, resume the first minority and restart the leader (a quorum
/// without the writes only the leader and the second group held), wait for writes to resume, then
/// resume the second group.
fn crash_pause(ctx: &Ctx, lab: &mut Lab, roles: &Roles, marks: &mut PowerMarks) -> Result<()> {
    let (opts, log) = (ctx.opts, ctx.log);
    let (first, rest) = pause_sides(roles, ctx.replicas);
    let nm = |lab: &Lab, vs: &[usize]| {
        vs.iter()
            .map(|&v| lab.nodes()[v].name.clone())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let leader = roles.leader;
    log(&format!("  SIGSTOP {} (writes go on without it)", nm(lab, &first)));
    for &v in &first {
        lab.sigstop(v)?;
    }
    // Past the routes' failure detection the paused servers are dropped by their peers, and the writes
    // after that are held by the leader and the rest only, within the layer's dirty window.
    let (every, max) = POWER_ROUTE_PING;
    let r = opts.pause(every * (max + 1) + Duration::from_secs(2));
    let r = r.and_then(|_| {
        marks.inject = Some(Instant::now());
        log(&format!(
            "  power off {} (the leader) and SIGSTOP {}",
            lab.nodes()[leader].name,
            nm(lab, &rest)
        ));
        cut_all(lab, &[leader], marks, log)?;
        for &v in &rest {
            lab.sigstop(v)?;
        }
        opts.pause(opts.hold)?;
        log(&format!(
            "  power on {}, SIGCONT {}",
            lab.nodes()[leader].name,
            nm(lab, &first)
        ));
        lab.restart(leader)?;
        for &v in &first {
            lab.sigcont(v)?;
        }
        marks.heal = Some(Instant::now());
        // A quorum without the second group's writes takes writes again, then the second group returns.
        let healed_ms = marks.t0.elapsed().as_millis() as u64;
        let deadline = Instant::now() + Duration::from_secs(30);
        while marks.last_ack_ms.load(Ordering::SeqCst) < healed_ms && Instant::now() < deadline {
            opts.pause(Duration::from_millis(100))?;
        }
        opts.pause(Duration::from_secs(1))
    });
    // Whatever happened, nothing stays stopped.
    for &v in first.iter().chain(&rest) {
        if lab.is_running(v) {
            let _ = lab.sigcont(v);
        }
    }
    log(&format!("  SIGCONT {}", nm(lab, &rest)));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(followers: Vec<usize>) -> Roles {
        Roles {
            leader: 0,
            majority: Vec::new(),
            meta_majority: Vec::new(),
            followers,
        }
    }

    #[test]
    fn crash_plus_pause_pauses_a_minority_first_then_the_rest() {
        // R3: one follower first, the other once the leader is cut; with the leader that is a quorum
        // (leader + first) that never had the writes the rest held.
        assert_eq!(pause_sides(&roles(vec![1, 2]), 3), (vec![1], vec![2]));
        // R5: quorum 3, so two paused first, two later.
        assert_eq!(pause_sides(&roles(vec![1, 2, 3, 4]), 5), (vec![1, 2], vec![3, 4]));
    }
}
