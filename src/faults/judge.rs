//! Judging a scenario: the observed outcome against the prediction, replica agreement, evidence saved.

use super::*;
use crate::lab::{self, Lab};
use crate::monitor;
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::time::{Duration, Instant};

/// "is on" / "is off (disabled)" / "does not answer", from the server's `/jsz`.
pub(super) fn js_state(lab: &Lab, v: usize) -> &'static str {
    match monitor::jsz(&lab.nodes()[v].monitor_url(), "", Duration::from_secs(2)) {
        Ok(j) if j.get("disabled").and_then(|d| d.as_bool()) == Some(true) => "is off (disabled)",
        Ok(_) => "is on",
        Err(_) => "does not answer on /jsz",
    }
}

/// What a scenario measured, as [`judge`] reads it: every publish attempt, the read-back checked against
/// them, and when the fault was injected and healed.
pub(super) struct Measured<'a> {
    pub(super) attempts: &'a [Attempt],
    pub(super) chk: &'a Check,
    pub(super) tl: &'a Timeline,
}

/// Set `observed`, `detail` and `agree` from the prediction and the measurements (`resume_bound_s`: how
/// soon after healing writes must resume when the prediction is a stall; `want`: replicas that must all
/// report the same stream state).
pub(super) fn judge(
    res: &mut ScenarioResult,
    pred: &ScenarioPrediction,
    m: &Measured,
    opts: &FaultOptions,
    resume_bound_s: f64,
    want: usize,
) {
    let (attempts, chk, tl) = (m.attempts, m.chk, m.tl);
    let timeout_s = opts.publish_timeout.as_secs_f64();
    let gap = res.unavailable_s;
    let first_after_heal = check::acks(attempts)
        .filter(|t| *t >= tl.heal_s)
        .fold(f64::INFINITY, f64::min);
    let resumed_after_s = first_after_heal - tl.heal_s;
    // Acks that can only have been granted while quorum was lost (in-flight ones get one timeout of grace).
    let during = check::acks(attempts)
        .filter(|t| *t > tl.inject_s + timeout_s && *t < tl.heal_s)
        .count();
    let lost = chk.acked_lost + chk.seq_mismatch;
    if lost > 0 {
        res.observed = "acked_lost".into();
    } else if !replicas_agree(&res.replicas, want) {
        res.observed = "replicas_diverged".into();
    }
    let lost_ok = lost == 0 || pred.acked_loss_risk;
    // Where the model predicts the acked-loss risk and writes were lost, replicas left different are the
    // same hazard (Jepsen's persistent split-brain, nats-server #7567): reported, not a disagreement.
    let same = replicas_agree(&res.replicas, want) || (pred.acked_loss_risk && lost > 0);
    if pred.status.writable() {
        let bound = pred.stall_s.unwrap_or(0.0) + timeout_s + 5.0;
        let continued = gap <= bound && first_after_heal.is_finite();
        if lost == 0 && replicas_agree(&res.replicas, want) {
            res.observed = if continued {
                "writes_continued"
            } else {
                "stalled_too_long"
            }
            .into();
        }
        res.agree = continued && lost_ok && same;
        res.detail = format!(
            "longest write gap {gap:.1} s (bound {bound:.1} s = stall {:.0} s + publish timeout {timeout_s:.0} s + 5 s); \
             {} acked, {} lost, {} unknown ({} found), {} failed; {} tries retried after a timeout, {} after a refusal",
            pred.stall_s.unwrap_or(0.0),
            chk.acked,
            chk.acked_lost,
            chk.unknown,
            chk.unknown_recovered,
            chk.failed,
            chk.tries_unknown,
            chk.tries_refused
        );
    } else {
        let resumed = resumed_after_s <= resume_bound_s;
        let stalled = during == 0;
        if lost == 0 && replicas_agree(&res.replicas, want) {
            res.observed = match (stalled, resumed) {
                (false, _) => "writes_without_quorum",
                (true, true) => "stalled_until_healed",
                (true, false) => "stalled_too_long",
            }
            .into();
        }
        res.agree = stalled && resumed && lost_ok && same;
        res.detail = format!(
            "{during} acks while quorum was lost; writes resumed {} after healing (bound {resume_bound_s:.0} s); \
             longest gap {gap:.1} s; {} acked, {} lost, {} unknown ({} found), {} failed; {} tries retried after a \
             timeout, {} after a refusal",
            if resumed_after_s.is_finite() {
                format!("{resumed_after_s:.1} s")
            } else {
                "never".into()
            },
            chk.acked,
            chk.acked_lost,
            chk.unknown,
            chk.unknown_recovered,
            chk.failed,
            chk.tries_unknown,
            chk.tries_refused
        );
    }
    let states: Vec<String> = res
        .replicas
        .iter()
        .map(|r| format!("{} {}@{}..{}", r.server, r.messages, r.first_seq, r.last_seq))
        .collect();
    res.detail.push_str(&format!("; replicas: {}", states.join(", ")));
    if !replicas_agree(&res.replicas, want) && same {
        res.detail
            .push_str("; FINDING: the replicas still differ after the acknowledged-write loss (split-brain, #7567)");
    }
    if chk.unexpected + chk.duplicates > 0 {
        res.agree = false;
        res.detail.push_str(&format!(
            "; {} read but never attempted, {} duplicated",
            chk.unexpected, chk.duplicates
        ));
    }
}

/// The verdict over a power scenario's runs, on the last run's result `res` (already judged by
/// [`judge`]); `lost`: per run in order, (acknowledged writes lost, acknowledged). A `likely` loss that
/// never showed in a scenario made to produce it disagrees (`predicted_loss_not_seen`); a `possible` one
/// (an election race, docs/faults.md) agrees with a loss or none and says in how many runs it showed; a
/// loss where `none` was predicted disagrees.
pub(super) fn judge_power_runs(res: &mut ScenarioResult, designed_to_lose: bool, lost: &[(u64, u64)]) {
    let with_loss = lost.iter().filter(|(n, _)| *n > 0).count();
    let per_run: Vec<String> = lost
        .iter()
        .enumerate()
        .map(|(i, (n, acked))| format!("run {}: {n} of {acked} acked lost", i + 1))
        .collect();
    res.power_runs = Some(lost.len() as u32);
    let mut verdict = String::new();
    match res.predicted_acked_loss {
        AckedLoss::Likely if designed_to_lose && with_loss == 0 => {
            res.agree = false;
            res.observed = "predicted_loss_not_seen".into();
        }
        AckedLoss::Possible => {
            verdict = format!(
                "; acknowledged writes lost in {with_loss} of {} runs: the loss is possible, not likely (a \
                 replica with every write stayed up; lost only when a restarted replica wins the election)",
                lost.len()
            );
        }
        AckedLoss::None if with_loss > 0 => res.agree = false,
        _ => {}
    }
    res.detail = format!("{}{verdict}; {}", per_run.join(", "), res.detail);
}

/// All `want` replicas report the stream, with the same messages and first/last sequence.
pub(super) fn replicas_agree(r: &[ReplicaState], want: usize) -> bool {
    r.len() == want
        && r.windows(2)
            .all(|w| (w[0].messages, w[0].first_seq, w[0].last_seq) == (w[1].messages, w[1].first_seq, w[1].last_seq))
}

/// Each server's copy of the stream from its own `/jsz`, once (no waiting).
pub(super) fn replica_states_now(lab: &Lab, name: &str) -> Vec<ReplicaState> {
    let mut v = Vec::new();
    for n in lab.nodes() {
        let Ok(j) = monitor::jsz(&n.monitor_url(), "accounts=true&streams=true", Duration::from_secs(2)) else {
            continue;
        };
        for st in monitor::jsz::streams(&j) {
            if st.name.as_deref() == Some(name) {
                v.push(ReplicaState {
                    server: n.name.clone(),
                    messages: st.messages,
                    first_seq: st.first_seq,
                    last_seq: st.last_seq,
                });
            }
        }
    }
    v
}

/// Every replica's stream state from its own `/jsz`, waiting (60 s at most) for them to converge on `last`.
pub(super) fn replica_states(lab: &Lab, name: &str, last: u64, want: usize) -> Vec<ReplicaState> {
    let t0 = Instant::now();
    loop {
        let v = replica_states_now(lab, name);
        let done = v.len() == want && replicas_agree(&v, want) && v[0].last_seq >= last;
        if done || t0.elapsed() > Duration::from_secs(60) {
            return v;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Copy a folder tree (a server's store, for a finding's archive); files that vanish meanwhile are skipped.
pub(super) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else if let Err(err) = std::fs::copy(e.path(), &dest) {
            if err.kind() != std::io::ErrorKind::NotFound {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// Save every server's log tail, `/jsz` and a copy of its store for a loss or divergence; returns the folder.
pub(super) fn save_finding(lab: &Lab, dir: Option<&Path>, name: &str, res: &ScenarioResult) -> Result<String> {
    let dir = dir.ok_or_else(|| anyhow!("no findings folder"))?.join(name);
    std::fs::create_dir_all(&dir)?;
    for n in lab.nodes() {
        std::fs::write(dir.join(format!("{}.log", n.name)), lab::log_tail(&n.log, 1 << 20))?;
        if let Ok(j) = monitor::jsz(
            &n.monitor_url(),
            "accounts=true&streams=true&config=true",
            Duration::from_secs(2),
        ) {
            std::fs::write(
                dir.join(format!("{}.jsz.json", n.name)),
                serde_json::to_vec_pretty(&j).unwrap_or_default(),
            )?;
        }
    }
    for n in lab.nodes() {
        copy_tree(&n.store_dir, &dir.join(format!("{}-store", n.name)))
            .with_context(|| format!("cannot archive the store of {}", n.name))?;
    }
    std::fs::write(
        dir.join("scenario.json"),
        serde_json::to_vec_pretty(res).unwrap_or_default(),
    )?;
    Ok(dir.display().to_string())
}

/// `full-disk` agrees only if the model's recovery restarts nats-server on the full server (a `restart`
/// action naming it: read from the step's action, not its words) and the run carried that step out
/// (`inject::fill_disk_under`); the stream's own judgement (`judge`) stands beside.
pub(super) fn judge_full_disk_step(res: &mut ScenarioResult, notes: &[String], node: &str) {
    let predicted = res
        .predicted_recovery_actions
        .iter()
        .any(|a| matches!(a, crate::survival::Action::Restart { servers } if servers.iter().any(|s| s == node)));
    let done = notes
        .iter()
        .any(|n| n.starts_with(FULL_DISK_STEP_DONE) && n.ends_with(node));
    if !(predicted && done) {
        res.agree = false;
    }
    res.detail.push_str(&format!(
        "; recovery: whatif {} restarting nats-server on {node}, the run {}",
        if predicted { "gives" } else { "does NOT give" },
        if done { "carried it out" } else { "did NOT carry it out" }
    ));
}

/// The meta half of `meta-majority-kill`: the API must have refused to create anything exactly when the
/// model says the meta group is unavailable.
pub(super) fn judge_meta(res: &mut ScenarioResult, api: Option<&ApiProbe>) {
    let Some(api) = api else {
        res.agree = false;
        res.observed_meta = Some("not_probed".into());
        return;
    };
    let observed = if api.refused { "api_refused" } else { "api_answered" };
    res.observed_meta = Some(observed.into());
    let predicted_down = res.predicted_meta.as_deref() == Some("unavailable");
    if predicted_down != api.refused {
        res.agree = false;
    }
    res.detail.push_str(&format!(
        "; meta group predicted {}, the API {}",
        res.predicted_meta.as_deref().unwrap_or("?"),
        if api.refused {
            "created nothing"
        } else {
            "created an asset"
        }
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The last run of a power scenario as `judge` left it: writes stalled and resumed, agreeing.
    fn last_run(loss: AckedLoss, lost_last: u64) -> ScenarioResult {
        let mut r = not_run(FaultKind::PowerQuorum, String::new());
        r.skipped = None;
        r.predicted_acked_loss_risk = loss != AckedLoss::None;
        r.predicted_acked_loss = loss;
        r.acked_lost = Some(lost_last);
        r.observed = if lost_last > 0 {
            "acked_lost"
        } else {
            "stalled_until_healed"
        }
        .into();
        r.agree = lost_last == 0 || loss != AckedLoss::None;
        r.detail = "judged".into();
        r
    }

    /// `full-disk` reads whatif's restart from the step's action: the words alone do not count, and the
    /// run must have carried the step out.
    #[test]
    fn full_disk_agrees_only_with_a_restart_action_for_the_server_that_the_run_carried_out() {
        use crate::survival::Action;
        let base = || {
            let mut r = not_run(FaultKind::FullDisk, String::new());
            r.skipped = None;
            r.agree = true;
            r.predicted_recovery = vec!["restart nats-server on n2: … (needs a shell on the host)".into()];
            r
        };
        let done = vec![format!("{FULL_DISK_STEP_DONE} n2")];
        let restart = |s: &str| Action::Restart {
            servers: vec![s.to_string()],
        };
        let mut ok = base();
        ok.predicted_recovery_actions = vec![
            Action::FreeSpace {
                servers: vec!["n2".into()],
            },
            restart("n2"),
        ];
        judge_full_disk_step(&mut ok, &done, "n2");
        assert!(ok.agree, "{ok:?}");
        // The text says restart, the actions do not: the drill would not restart, so it disagrees.
        let mut words_only = base();
        judge_full_disk_step(&mut words_only, &done, "n2");
        assert!(
            !words_only.agree && words_only.detail.contains("does NOT give"),
            "{words_only:?}"
        );
        // A restart of another server, or a run that skipped the restart: disagree.
        let mut other = base();
        other.predicted_recovery_actions = vec![restart("n3")];
        judge_full_disk_step(&mut other, &done, "n2");
        assert!(!other.agree);
        let mut skipped = base();
        skipped.predicted_recovery_actions = vec![restart("n2")];
        judge_full_disk_step(&mut skipped, &[], "n2");
        assert!(
            !skipped.agree && skipped.detail.contains("did NOT carry it out"),
            "{skipped:?}"
        );
    }

    #[test]
    fn a_likely_loss_that_never_shows_disagrees() {
        let mut r = last_run(AckedLoss::Likely, 0);
        judge_power_runs(&mut r, true, &[(0, 1900), (0, 1890), (0, 1910)]);
        assert!(!r.agree && r.observed == "predicted_loss_not_seen", "{r:?}");
        assert_eq!(r.power_runs, Some(3));
        let mut seen = last_run(AckedLoss::Likely, 340);
        judge_power_runs(&mut seen, true, &[(0, 1900), (340, 1890)]);
        assert!(seen.agree && seen.observed == "acked_lost", "{seen:?}");
    }

    #[test]
    fn a_possible_loss_agrees_with_a_loss_or_none_and_counts_the_runs_that_lost() {
        // The lab's usual power-quorum: the replica that stayed up won every election.
        let mut none_seen = last_run(AckedLoss::Possible, 0);
        judge_power_runs(&mut none_seen, true, &[(0, 1900), (0, 1890), (0, 1910)]);
        assert!(none_seen.agree, "{none_seen:?}");
        assert_eq!(none_seen.observed, "stalled_until_healed");
        assert!(
            none_seen.detail.contains("lost in 0 of 3 runs") && none_seen.detail.contains("election"),
            "{}",
            none_seen.detail
        );
        // A restarted replica won the race in the second run.
        let mut lost = last_run(AckedLoss::Possible, 343);
        judge_power_runs(&mut lost, true, &[(0, 1900), (343, 1890)]);
        assert!(lost.agree && lost.observed == "acked_lost", "{lost:?}");
        assert!(lost.detail.contains("lost in 1 of 2 runs"), "{}", lost.detail);
        // It does not make the run fail by itself.
        let report = FaultReport {
            nodes: 3,
            nats_server_version: "2.15.1".into(),
            publish_rate_per_s: 200,
            publish_timeout_s: 2.0,
            target: None,
            interrupted: false,
            scenarios: vec![none_seen, lost],
        };
        assert!(!report.failed());
    }

    #[test]
    fn a_loss_where_none_was_predicted_disagrees() {
        let mut r = last_run(AckedLoss::None, 12);
        r.agree = true; // even if the last run's own judgement had let it pass
        judge_power_runs(&mut r, false, &[(12, 1900)]);
        assert!(!r.agree, "{r:?}");
        let mut quiet = last_run(AckedLoss::None, 0);
        judge_power_runs(&mut quiet, false, &[(0, 1900)]);
        assert!(quiet.agree && quiet.power_runs == Some(1), "{quiet:?}");
    }
}
