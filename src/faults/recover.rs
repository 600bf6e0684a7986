//! `verify --faults --recover` (issue 35): whatif's recovery actions for a scenario carried out on the lab in
//! whatif's order, each step with its own deadline and the scenario's budget over them all. NATS-level
//! actions are executed through the lab's operations ([`LabOps`]); hardware steps are recorded as
//! simulated; an action the drill cannot carry out fails its step with the reason (never a silent ok), and
//! the steps after a failed one are not carried out. Plumbing only: nothing here prints or judges.

use crate::survival::{Action, Until};
use anyhow::Result;
use serde::Serialize;
use std::time::{Duration, Instant};

/// One recovery step as the drill carried it out (`scenarios[].recovery_steps[]`, docs/faults.md).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecoveryStep {
    /// whatif's action, serialised as in whatif's JSON (`recovery[].action`).
    pub action: Action,
    /// Carried out (or recorded, when simulated) without an error within its deadline.
    pub ok: bool,
    /// How long carrying it out took on the lab.
    pub seconds: f64,
    /// whatif's time for the step recomputed for the lab's own plan with operator delays 0; None when the
    /// model gave no time for it (the detail says why).
    pub predicted_seconds: Option<f64>,
    /// A hardware step (a disk replaced, a group built, a filesystem made): recorded, not carried out.
    pub simulated: bool,
    /// What was done, or why it failed or was not carried out.
    pub detail: String,
}

/// What the drill needs from the lab. Each returns what it did, or an error saying why it could not.
pub trait LabOps {
    /// Restart nats-server on `server` and wait for it to serve.
    fn restart(&mut self, server: &str, deadline: Instant) -> Result<String>;
    /// Free space on `server`'s store.
    fn free_space(&mut self, server: &str) -> Result<String>;
    /// `$JS.API.SERVER.REMOVE` of `server` through the system account.
    fn peer_remove(&mut self, server: &str, deadline: Instant) -> Result<String>;
    /// Start `server` again on an empty store under a new `server_name`, same tags.
    fn rejoin_as_new(&mut self, server: &str, deadline: Instant) -> Result<String>;
    /// `$JS.API.META.RESCUE` (nats-server 2.15 or later).
    fn meta_rescue(&mut self, quorum_needed: u64, deadline: Instant) -> Result<String>;
    /// Start `server`'s store on `standby` under the same `server_name`.
    fn reattach_store(&mut self, server: &str, standby: &str, deadline: Instant) -> Result<String>;
    /// The streams' groups re-formed on their survivors (what was lost is the checker's to find).
    fn reconcile(&mut self, streams: &[String], deadline: Instant) -> Result<String>;
    /// Re-publish, under their message ids, the acknowledged writes the streams no longer hold.
    fn republish_acked(&mut self, streams: &[String], deadline: Instant) -> Result<String>;
    /// Every replica of these streams current again (a diverged one re-syncs at its leader's next snapshot).
    fn resync(&mut self, streams: &[String], deadline: Instant) -> Result<String>;
    /// Wait until the condition holds (restarted, re-read, meta quorum, ...).
    fn wait(&mut self, until: Until, deadline: Instant) -> Result<String>;
}

/// How whatif's JSON names an action (`action.kind`).
pub fn kind_of(a: &Action) -> String {
    serde_json::to_value(a)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .unwrap_or_default()
}

/// How one action ended.
enum Done {
    Ok(String),
    Simulated(String),
    Failed(String),
}

fn from(r: Result<String>) -> Done {
    match r {
        Ok(d) => Done::Ok(d),
        Err(e) => Done::Failed(format!("{e:#}")),
    }
}

/// `f` on each server in turn; the first error fails the step.
fn each(servers: &[String], f: &mut dyn FnMut(&str) -> Result<String>) -> Done {
    if servers.is_empty() {
        return Done::Failed("the action names no server".into());
    }
    let mut said = Vec::new();
    for s in servers {
        match f(s) {
            Ok(d) => said.push(d),
            Err(e) => return Done::Failed(format!("{s}: {e:#}")),
        }
    }
    Done::Ok(said.join("; "))
}

/// Carry out one action.
fn one(a: &Action, ops: &mut dyn LabOps, deadline: Instant) -> Done {
    match a {
        Action::Hardware => Done::Simulated("hands on the hardware: recorded, not carried out on the lab".into()),
        Action::MakeFilesystem { server } => Done::Simulated(format!(
            "a new filesystem for {server}'s store: recorded, not carried out (the lab's store folder stands for it)"
        )),
        Action::RestoreFromBackup { streams } => Done::Simulated(format!(
            "restoring {} from a backup: recorded, not carried out (the lab keeps no backup)",
            streams.join(", ")
        )),
        Action::Wait {
            until: u @ (Until::Replaced | Until::RaidRebuilt),
        } => Done::Simulated(format!(
            "waiting for hardware ({}): recorded, not carried out",
            serde_json::to_value(u)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        )),
        Action::Wait {
            until: Until::OperatorResponds,
        } => Done::Ok("operator delays are 0 in the drill".into()),
        Action::Wait { until } => from(ops.wait(*until, deadline)),
        Action::Restart { servers } => each(servers, &mut |s| ops.restart(s, deadline)),
        Action::FreeSpace { servers } => each(servers, &mut |s| ops.free_space(s)),
        Action::PeerRemove { server } => from(ops.peer_remove(server, deadline)),
        Action::RejoinAsNew { server } => from(ops.rejoin_as_new(server, deadline)),
        Action::MetaRescue { quorum_needed } => from(ops.meta_rescue(*quorum_needed, deadline)),
        Action::ReattachStore { server, standby } => from(ops.reattach_store(server, standby, deadline)),
        Action::Reconcile { streams } if streams.is_empty() => Done::Failed("the action names no stream".into()),
        Action::Reconcile { streams } => from(ops.reconcile(streams, deadline)),
        Action::RepublishAcked { streams } if streams.is_empty() => Done::Failed("the action names no stream".into()),
        Action::RepublishAcked { streams } => from(ops.republish_acked(streams, deadline)),
        Action::Resync { streams } if streams.is_empty() => Done::Failed("the action names no stream".into()),
        Action::Resync { streams } => from(ops.resync(streams, deadline)),
    }
}

/// Whether the drill only records the action (hands on hardware, a new filesystem, a backup's restore, a
/// wait for replaced or rebuilt hardware): its predicted seconds are the hardware's, not the lab's.
pub fn is_simulated(a: &Action) -> bool {
    matches!(
        a,
        Action::Hardware
            | Action::MakeFilesystem { .. }
            | Action::RestoreFromBackup { .. }
            | Action::Wait {
                until: Until::Replaced | Until::RaidRebuilt
            }
    )
}

/// The budget over a scenario's steps and each step's own deadline.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub budget: Duration,
    /// A step's deadline when whatif predicts it short (or gives no time): a floor.
    pub per_step: Duration,
}

impl Limits {
    /// A step's deadline: half again whatif's own prediction for it and 10 s, never under `per_step` (a
    /// diverged replica's predicted 180 s re-sync gets 280 s, a restart predicted in seconds the floor).
    pub fn step(&self, predicted: Option<f64>) -> Duration {
        let from_model = predicted
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(|s| Duration::from_secs_f64(1.5 * s + 10.0))
            .unwrap_or_default();
        self.per_step.max(from_model)
    }
}

/// Carry out `steps` (whatif's actions with their predicted seconds) in order. A step that fails, or
/// outlasts its deadline, fails; the steps after it are reported not carried out; past the budget the
/// remaining steps fail with the reason.
pub fn carry_out(steps: &[(Action, Option<f64>)], ops: &mut dyn LabOps, limits: Limits) -> Vec<RecoveryStep> {
    let t0 = Instant::now();
    let mut out: Vec<RecoveryStep> = Vec::new();
    let mut stopped: Option<String> = None;
    for (i, (a, predicted)) in steps.iter().enumerate() {
        let mut step = RecoveryStep {
            action: a.clone(),
            ok: false,
            seconds: 0.0,
            predicted_seconds: *predicted,
            simulated: false,
            detail: String::new(),
        };
        let left = limits.budget.saturating_sub(t0.elapsed());
        if stopped.is_none() && left.is_zero() {
            stopped = Some(format!(
                "the scenario's recovery budget of {:.0} s was spent",
                limits.budget.as_secs_f64()
            ));
        }
        if let Some(why) = &stopped {
            step.detail = format!("not carried out: {why}");
            out.push(step);
            continue;
        }
        let own = limits.step(*predicted);
        let allowed = own.min(left);
        let s0 = Instant::now();
        let done = one(a, ops, s0 + allowed);
        step.seconds = s0.elapsed().as_secs_f64();
        match done {
            Done::Ok(d) => (step.ok, step.detail) = (true, d),
            Done::Simulated(d) => (step.ok, step.simulated, step.detail) = (true, true, d),
            Done::Failed(d) => step.detail = d,
        }
        if step.ok && s0.elapsed() > allowed {
            step.ok = false;
            let what = match left < own {
                true => "what was left of the scenario's recovery budget",
                false => "its deadline",
            };
            step.detail = format!(
                "{}; but it took {:.1} s, past {what} ({:.1} s)",
                step.detail,
                step.seconds,
                allowed.as_secs_f64()
            );
        }
        if !step.ok {
            stopped = Some(format!("step {} ({}) failed", i + 1, kind_of(a)));
        }
        if predicted.is_none() && step.detail.is_empty() {
            step.detail = "the model gives no time for this step".into();
        }
        out.push(step);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::bail;

    /// Records every call in order; fails the servers named in `fail`.
    #[derive(Default)]
    struct Fake {
        calls: Vec<String>,
        fail: Vec<String>,
        slow: Duration,
    }

    impl Fake {
        fn did(&mut self, what: String, who: &str) -> Result<String> {
            std::thread::sleep(self.slow);
            self.calls.push(what.clone());
            if self.fail.iter().any(|f| f == who) {
                bail!("{what} refused");
            }
            Ok(what)
        }
    }

    impl LabOps for Fake {
        fn restart(&mut self, s: &str, _: Instant) -> Result<String> {
            self.did(format!("restart {s}"), s)
        }
        fn free_space(&mut self, s: &str) -> Result<String> {
            self.did(format!("free {s}"), s)
        }
        fn peer_remove(&mut self, s: &str, _: Instant) -> Result<String> {
            self.did(format!("remove {s}"), s)
        }
        fn rejoin_as_new(&mut self, s: &str, _: Instant) -> Result<String> {
            self.did(format!("rejoin {s}"), s)
        }
        fn meta_rescue(&mut self, q: u64, _: Instant) -> Result<String> {
            self.did(format!("rescue {q}"), "meta")
        }
        fn reattach_store(&mut self, s: &str, sb: &str, _: Instant) -> Result<String> {
            self.did(format!("reattach {s} on {sb}"), s)
        }
        fn reconcile(&mut self, s: &[String], _: Instant) -> Result<String> {
            self.did(format!("reconcile {}", s.join(",")), "reconcile")
        }
        fn republish_acked(&mut self, s: &[String], _: Instant) -> Result<String> {
            self.did(format!("republish {}", s.join(",")), "republish")
        }
        fn resync(&mut self, s: &[String], _: Instant) -> Result<String> {
            self.did(format!("resync {}", s.join(",")), "resync")
        }
        fn wait(&mut self, u: Until, _: Instant) -> Result<String> {
            self.did(format!("wait {u:?}"), "wait")
        }
    }

    const LIMITS: Limits = Limits {
        budget: Duration::from_secs(60),
        per_step: Duration::from_secs(30),
    };

    fn steps(a: &[Action]) -> Vec<(Action, Option<f64>)> {
        a.iter().cloned().map(|a| (a, Some(1.0))).collect()
    }

    fn servers(s: &str) -> Vec<String> {
        vec![s.to_string()]
    }

    #[test]
    fn steps_are_carried_out_in_whatifs_order_and_hardware_is_simulated() {
        let list = steps(&[
            Action::Hardware,
            Action::MakeFilesystem { server: "n2".into() },
            Action::RejoinAsNew { server: "n2".into() },
            Action::PeerRemove { server: "n2".into() },
            Action::FreeSpace { servers: servers("n3") },
            Action::Restart { servers: servers("n3") },
            Action::Wait {
                until: Until::Restarted,
            },
            Action::Wait {
                until: Until::OperatorResponds,
            },
            Action::Resync {
                streams: vec!["orders".into()],
            },
        ]);
        let mut f = Fake::default();
        let got = carry_out(&list, &mut f, LIMITS);
        assert_eq!(
            f.calls,
            [
                "rejoin n2",
                "remove n2",
                "free n3",
                "restart n3",
                "wait Restarted",
                "resync orders"
            ],
            "{got:?}"
        );
        assert!(got.iter().all(|s| s.ok), "{got:?}");
        let sim: Vec<bool> = got.iter().map(|s| s.simulated).collect();
        assert_eq!(sim, [true, true, false, false, false, false, false, false, false]);
        let recorded: Vec<bool> = list.iter().map(|(a, _)| is_simulated(a)).collect();
        assert_eq!(recorded, sim, "is_simulated says what carry_out does");
        assert_eq!(got[0].predicted_seconds, Some(1.0));
        assert_eq!(kind_of(&got[5].action), "restart");
    }

    #[test]
    fn a_failed_step_stops_the_rest_and_says_which() {
        let list = steps(&[
            Action::FreeSpace { servers: servers("n2") },
            Action::Restart { servers: servers("n2") },
            Action::Wait {
                until: Until::Restarted,
            },
        ]);
        let mut f = Fake {
            fail: servers("n2"),
            ..Fake::default()
        };
        let got = carry_out(&list, &mut f, LIMITS);
        assert_eq!(f.calls, ["free n2"]);
        assert!(!got[0].ok && got[0].detail.contains("refused"), "{got:?}");
        assert!(
            !got[1].ok && got[1].detail.contains("step 1 (free_space) failed"),
            "{got:?}"
        );
        assert!(!got[2].ok, "{got:?}");
    }

    #[test]
    fn unsupported_actions_fail_with_a_reason_never_silently_ok() {
        let list = steps(&[Action::MetaRescue { quorum_needed: 2 }]);
        let mut f = Fake {
            fail: vec!["meta".into()],
            ..Fake::default()
        };
        let got = carry_out(&list, &mut f, LIMITS);
        assert!(!got[0].ok && got[0].detail.contains("refused"), "{got:?}");
        for none in [
            Action::Reconcile { streams: Vec::new() },
            Action::Resync { streams: Vec::new() },
        ] {
            let got = carry_out(&steps(&[none]), &mut Fake::default(), LIMITS);
            assert!(!got[0].ok && got[0].detail.contains("names no stream"), "{got:?}");
        }
        let empty = steps(&[Action::Restart { servers: Vec::new() }]);
        let got = carry_out(&empty, &mut Fake::default(), LIMITS);
        assert!(!got[0].ok && got[0].detail.contains("names no server"), "{got:?}");
    }

    #[test]
    fn a_step_past_its_deadline_or_the_budget_fails() {
        // No time from the model: the floor is the step's deadline.
        let list: Vec<_> = steps(&[
            Action::Restart { servers: servers("n1") },
            Action::Restart { servers: servers("n2") },
        ])
        .into_iter()
        .map(|(a, _)| (a, None))
        .collect();
        let mut f = Fake {
            slow: Duration::from_millis(30),
            ..Fake::default()
        };
        let tight = Limits {
            budget: Duration::from_secs(10),
            per_step: Duration::from_millis(5),
        };
        let got = carry_out(&list, &mut f, tight);
        assert!(!got[0].ok && got[0].detail.contains("past its deadline"), "{got:?}");
        assert!(!got[1].ok && got[1].detail.contains("not carried out"), "{got:?}");
        assert_eq!(f.calls.len(), 1);
        let spent = Limits {
            budget: Duration::from_millis(10),
            per_step: Duration::from_secs(10),
        };
        let got = carry_out(&list, &mut f, spent);
        assert!(!got[0].ok && got[0].detail.contains("recovery budget"), "{got:?}");
    }

    #[test]
    fn a_step_whatif_predicts_long_gets_half_again_its_prediction() {
        let l = Limits {
            budget: Duration::from_secs(600),
            per_step: Duration::from_secs(60),
        };
        // A diverged replica's re-sync, predicted 180 s: 280 s, not the 60 s floor (the lab's took 117 s).
        assert_eq!(l.step(Some(180.0)), Duration::from_secs(280));
        // Short, none, or nonsense: the floor.
        for p in [Some(2.0), None, Some(f64::NAN), Some(-5.0)] {
            assert_eq!(l.step(p), Duration::from_secs(60), "{p:?}");
        }
        // Carried out: a step slower than the floor but within its own prediction is ok.
        let list = vec![(Action::Restart { servers: servers("n1") }, Some(0.02))];
        let mut f = Fake {
            slow: Duration::from_millis(30),
            ..Fake::default()
        };
        let floor = Limits {
            budget: Duration::from_secs(60),
            per_step: Duration::from_millis(5),
        };
        let got = carry_out(&list, &mut f, floor);
        assert!(got[0].ok, "{got:?}");
    }
}
