//! The fault run's report: one row per scenario, prediction against outcome, and its exporters (pure
//! functions to bytes: JSON for machines, a table for people; the results folder is written by
//! `report::render::write_results`).

use crate::report::render::{Format, Render};
use serde::Serialize;
use std::path::Path;

/// One replica's copy of the stream as its server's `/jsz` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicaState {
    pub server: String,
    pub messages: u64,
    pub first_seq: u64,
    pub last_seq: u64,
}

/// What the Jepsen-style checker found after healing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Distinct message ids published (each retried under the same `Nats-Msg-Id`).
    pub attempted: u64,
    /// Acknowledged by the stream.
    pub acked: u64,
    /// Never acknowledged, and every attempt was refused before it could be stored.
    pub failed: u64,
    /// Never acknowledged, but some attempt may have been stored (timed out).
    pub unknown: u64,
    /// Unknown outcomes found in the stream on read-back.
    pub unknown_recovered: u64,
    /// Acknowledged but missing on read-back.
    pub acked_lost: u64,
    /// Individual tries refused before reaching a stream (then retried under the same id).
    pub tries_refused: u64,
    /// Individual tries that timed out or failed after sending (then retried under the same id).
    pub tries_unknown: u64,
    /// Read back but never attempted.
    pub unexpected: u64,
    /// Ids read back more than once (the dedupe window should prevent these).
    pub duplicates: u64,
    /// `--recover` after a power cut: acknowledged ids the fault lost that the drill re-published (found
    /// in the stream again, at a later sequence); counted here, not as lost or at another sequence.
    pub acked_republished: u64,
    /// Acknowledged at a sequence other than the one it was read back at.
    pub seq_mismatch: u64,
    /// Messages read back.
    pub read: u64,
    /// Up to 10 example ids of each problem, for the finding.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// One scenario: what the model predicted, what happened, and whether they agree.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    pub name: String,
    /// The whatif selectors this scenario injects, e.g. `process:n2`.
    pub selectors: Vec<String>,
    /// `survival::evaluate` status of the test stream, e.g. `degraded`.
    pub predicted: String,
    /// Its stall bound in seconds (None: writes wait until the failed domains return).
    pub predicted_stall_s: Option<f64>,
    pub predicted_acked_loss_risk: bool,
    /// How the predicted risk would show: `none` (no risk), `possible` (a quorum lost its page cache but
    /// a replica with every write stayed up: lost only when a restarted replica wins the election; agrees
    /// with a loss or none) or `likely` (no replica that stayed up holds the writes). docs/faults.md.
    pub predicted_acked_loss: super::AckedLoss,
    /// What the workload saw: `writes_continued`, `stalled_until_healed`, `stalled_too_long`,
    /// `writes_without_quorum`, `acked_lost`, `replicas_diverged` or `not_run`.
    pub observed: String,
    /// One sentence on the observation, with the figures.
    pub detail: String,
    pub agree: bool,
    pub acked: u64,
    /// Acknowledged writes that could not be read back after healing; None (null) when skipped. With
    /// `--recover` after a power cut, the writes the fault lost, including those `republish_acked` then
    /// re-published (`acked_republished`; `check.acked_lost` stays what is missing at the end).
    pub acked_lost: Option<u64>,
    /// Longest gap between successive acknowledgements, in seconds.
    pub unavailable_s: f64,
    /// Why the scenario did not run (then `agree` is false and nothing was measured), or None.
    pub skipped: Option<String>,
    pub check: Check,
    pub replicas: Vec<ReplicaState>,
    /// Where the logs and `/jsz` of a loss or divergence were saved.
    pub finding: Option<String>,
    /// The meta group's predicted status, for scenarios that judge the JetStream API too
    /// (`meta-majority-kill`); None elsewhere.
    pub predicted_meta: Option<String>,
    /// What the JetStream API did meanwhile: `api_refused` (stream and consumer create answered an error
    /// or nothing) or `api_answered` (one was created); None where not judged.
    pub observed_meta: Option<String>,
    /// Power scenarios: how many times it ran (one made to lose writes runs again, up to 3 times, until
    /// a loss shows); None elsewhere.
    pub power_runs: Option<u32>,
    /// Power scenarios: what the power-loss layer threw away at the cuts of the last run, summed over
    /// the servers cut; None elsewhere.
    pub power_cut: Option<crate::powerfs::LossReport>,
    /// whatif's recovery steps for the scenario's failed domains (`survival::recovery`), each with the
    /// credentials it needs, e.g. `restart nats-server on n2: … (needs a shell on the host)`. `full-disk`
    /// carries out its steps in every run and disagrees when the model gives none for the server.
    pub predicted_recovery: Vec<String>,
    /// The same steps as actions (`survival::Action`, docs/reports.md `recovery[].action`): what `full-disk`
    /// checks its own steps against, so the text and the drill cannot drift apart.
    pub predicted_recovery_actions: Vec<crate::survival::Action>,
    /// `--recover`: whatif's steps as the drill carried them out, in order (`action`, `ok`, `seconds`,
    /// `predicted_seconds`, `simulated`, `detail`); None (null) without `--recover` or for a scenario that
    /// destroys nothing (its heal is the fault's end).
    pub recovery_steps: Option<Vec<super::RecoveryStep>>,
    /// `--recover` after a power scenario made to lose writes: how many lost writes the drill's
    /// `republish_acked` step re-published and the read-back found (they count in `acked_lost` too: the fault
    /// lost them); 0 when the step was left out; None (null) for other scenarios or without `--recover`.
    pub acked_republished: Option<u64>,
}

/// A whole `verify --faults` run.
#[derive(Debug, Clone, Serialize)]
pub struct FaultReport {
    pub nodes: usize,
    pub nats_server_version: String,
    pub publish_rate_per_s: u32,
    pub publish_timeout_s: f64,
    /// The planned layout the lab ran (`SITE layout ID`), or None for a plain lab.
    pub target: Option<String>,
    pub scenarios: Vec<ScenarioResult>,
    /// A stop signal (SIGINT, SIGTERM, SIGHUP) ended the run: the scenarios that finished are reported, the
    /// one it hit and those after it are `skipped` with `observed: "interrupted"`.
    #[serde(default)]
    pub interrupted: bool,
}

impl FaultReport {
    /// Exit-1 condition: an acknowledged write lost where the model said none could be, or any scenario
    /// that ran and disagreed.
    pub fn failed(&self) -> bool {
        self.scenarios.iter().any(|s| {
            s.skipped.is_none() && (!s.agree || (s.acked_lost.unwrap_or(0) > 0 && !s.predicted_acked_loss_risk))
        })
    }
}

pub fn json(r: &FaultReport) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(r).unwrap_or_default();
    v.push(b'\n');
    v
}

/// The agreement table.
pub fn table(r: &FaultReport) -> Vec<u8> {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::ASCII_MARKDOWN);
    t.set_header(vec![
        "scenario",
        "selectors",
        "predicted",
        "observed",
        "agree",
        "acked",
        "acked_lost",
        "unavailable_s",
    ]);
    for s in &r.scenarios {
        let mut pred = match s.predicted_stall_s {
            Some(x) if x > 0.0 => format!("{} (stall ≤ {x:.0} s)", s.predicted),
            Some(_) => s.predicted.clone(),
            None => format!("{} (until healed)", s.predicted),
        };
        match s.predicted_acked_loss {
            super::AckedLoss::Possible => pred.push_str(", acked loss possible (election race)"),
            _ if s.predicted_acked_loss_risk => pred.push_str(", acked loss risk"),
            _ => {}
        }
        let (obs, agree) = match &s.skipped {
            Some(_) => ("skipped (see below)".to_string(), "-".to_string()),
            None => (s.observed.clone(), if s.agree { "yes" } else { "NO" }.to_string()),
        };
        t.add_row(vec![
            s.name.clone(),
            s.selectors.join(" "),
            pred,
            obs,
            agree,
            s.acked.to_string(),
            s.acked_lost.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            format!("{:.1}", s.unavailable_s),
        ]);
    }
    let mut out = format!(
        "fault verification: {}-node lab{}, nats-server {}, {} msg/s, publish timeout {:.0} s{}\n\n{t}\n",
        r.nodes,
        r.target.as_ref().map(|t| format!(" running {t}")).unwrap_or_default(),
        r.nats_server_version,
        r.publish_rate_per_s,
        r.publish_timeout_s,
        if r.interrupted {
            " — INTERRUPTED: the scenarios after the signal did not run"
        } else {
            ""
        }
    );
    for s in &r.scenarios {
        match &s.skipped {
            Some(why) => out.push_str(&format!("- {}: skipped: {why}\n", s.name)),
            None => out.push_str(&format!("- {}: {}\n", s.name, s.detail)),
        }
        if let Some(f) = &s.finding {
            out.push_str(&format!("  FINDING saved in {f}\n"));
        }
    }
    out.into_bytes()
}

impl Render for FaultReport {
    const COMMAND: &'static str = "verify --faults";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => w.write_all(&json(self)),
            _ => w.write_all(&table(self)),
        }
    }
}

/// Write `faults.json` and `FAULTS.md` into the run's folder `dir` (created if needed), with the results
/// folder writer every command uses (`report::render::write_results`).
pub fn write_results(dir: &Path, r: &FaultReport) -> anyhow::Result<()> {
    crate::report::render::write_results(
        dir,
        r,
        &[("faults.json", Format::Json), ("FAULTS.md", Format::Table)],
        120,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, agree: bool, lost: u64, risk: bool, skipped: Option<&str>) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            selectors: vec!["process:n1".into()],
            predicted: "degraded".into(),
            predicted_stall_s: Some(10.0),
            predicted_acked_loss_risk: risk,
            predicted_acked_loss: if risk {
                super::super::AckedLoss::Likely
            } else {
                super::super::AckedLoss::None
            },
            observed: "writes_continued".into(),
            detail: "d".into(),
            agree,
            acked: 10,
            acked_lost: skipped.is_none().then_some(lost),
            unavailable_s: 1.5,
            skipped: skipped.map(str::to_string),
            check: Check::default(),
            replicas: Vec::new(),
            finding: None,
            predicted_meta: None,
            observed_meta: None,
            power_runs: None,
            power_cut: None,
            predicted_recovery: Vec::new(),
            predicted_recovery_actions: Vec::new(),
            recovery_steps: None,
            acked_republished: None,
        }
    }

    fn report(rows: Vec<ScenarioResult>) -> FaultReport {
        FaultReport {
            nodes: 3,
            nats_server_version: "2.15.1".into(),
            publish_rate_per_s: 200,
            publish_timeout_s: 2.0,
            target: None,
            interrupted: false,
            scenarios: rows,
        }
    }

    #[test]
    fn json_has_the_contract_fields() {
        let r = report(vec![row("follower-kill", true, 0, false, None)]);
        let v: serde_json::Value = serde_json::from_slice(&json(&r)).unwrap();
        let s = &v["scenarios"][0];
        for k in [
            "name",
            "predicted",
            "observed",
            "agree",
            "acked",
            "acked_lost",
            "unavailable_s",
            "skipped",
            "predicted_acked_loss",
        ] {
            assert!(s.get(k).is_some(), "missing {k}");
        }
        assert!(s["skipped"].is_null());
        assert_eq!(s["acked_lost"], 0);
        assert_eq!(s["predicted_acked_loss"], "none");
        let skipped = report(vec![row("power-quorum", false, 0, true, Some("no FUSE"))]);
        let v: serde_json::Value = serde_json::from_slice(&json(&skipped)).unwrap();
        let s = &v["scenarios"][0];
        assert!(
            s["acked_lost"].is_null() && s["skipped"] == "no FUSE" && s["agree"] == false,
            "{s}"
        );
    }

    #[test]
    fn results_folder_holds_json_and_table() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("20261130T070000Z-faults");
        write_results(&f, &report(vec![row("a", true, 0, false, None)])).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(f.join("faults.json")).unwrap()).unwrap();
        assert_eq!(v["scenarios"][0]["name"], "a");
        assert!(std::fs::read_to_string(f.join("FAULTS.md")).unwrap().contains("| a "));
    }

    #[test]
    fn disagreement_or_unexpected_loss_fails_but_skips_do_not() {
        assert!(!report(vec![row("a", true, 0, false, None)]).failed());
        assert!(report(vec![row("a", false, 0, false, None)]).failed());
        assert!(report(vec![row("a", true, 3, false, None)]).failed());
        assert!(!report(vec![row("a", false, 0, true, Some("power loss"))]).failed());
        let t = String::from_utf8(table(&report(vec![row("p", false, 0, true, Some("no power"))]))).unwrap();
        assert!(t.contains("skipped: no power"), "{t}");
        assert!(t.contains("acked loss risk"), "{t}");
    }
}
