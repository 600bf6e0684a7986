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

/// Set `observed`, `detail` and `agree` from the prediction and the measurements (`want`: replicas that
/// must all report the same stream state).
#[allow(clippy::too_many_arguments)]
pub(super) fn judge(
    res: &mut ScenarioResult,
    pred: &Prediction,
    attempts: &[Attempt],
    chk: &Check,
    tl: &Timeline,
    opts: &FaultOptions,
    resume_bound_s: f64,
    want: usize,
) {
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

/// All `want` replicas report the stream, with the same messages and first/last sequence.
pub(super) fn replicas_agree(r: &[ReplicaState], want: usize) -> bool {
    r.len() == want
        && r.windows(2)
            .all(|w| (w[0].messages, w[0].first_seq, w[0].last_seq) == (w[1].messages, w[1].first_seq, w[1].last_seq))
}

/// Every replica's stream state from its own `/jsz`, waiting (60 s at most) for them to converge on `last`.
pub(super) fn replica_states(lab: &Lab, name: &str, last: u64, want: usize) -> Vec<ReplicaState> {
    let t0 = Instant::now();
    loop {
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
