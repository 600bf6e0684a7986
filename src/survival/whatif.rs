//! The whatif result as one serialisable value (the JSON contract of `natsplan whatif`): per scenario the
//! failed selectors, the meta group's and every asset's status, recovery steps and time, actions, and
//! the load the survivors inherit. Reports render it; nothing here prints.

use super::evaluate::{AssetOutcome, Model, Scenario, Status};
use super::recovery::{recovery, survivor_load, Step, SurvivorLoad};
use super::sweep::Sweep;
use crate::catalog::Catalog;
use serde::Serialize;

/// Survivors listed per scenario (the most loaded ones).
const SURVIVORS_SHOWN: usize = 5;

/// One asset's line in a scenario (`streams` in the JSON covers streams, KV, object stores, consumers):
/// what the whatif report shows of an `AssetOutcome` (the evaluation's full record, which also counts the
/// replicas down, destroyed and cache-lost), plus how likely an acked loss is. Built only by `From`.
#[derive(Debug, Clone, Serialize)]
pub struct AssetLine {
    pub name: String,
    pub kind: super::GroupKind,
    pub status: Status,
    pub stall_s: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stall_until: Vec<String>,
    pub acked_loss_risk: bool,
    /// `quorum_lost_page_cache` or `crash_plus_pause` (Jepsen, nats-server #7567) when at risk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acked_loss_cause: Option<&'static str>,
    /// When at risk, how the loss shows: `possible` (an election race: a replica with every write stayed
    /// up) or `likely`; see [`AckedLoss`]. Absent without a risk.
    #[serde(skip_serializing_if = "AckedLoss::is_none")]
    pub acked_loss_likelihood: AckedLoss,
    /// For `data_lost`: `total` (no replica with the data survives) or `tail` (a survivor may lag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<&'static str>,
    /// Replicas no eligible server can hold: the asset cannot be created on this layout, `unavailable`
    /// in every scenario (`AssetOutcome::not_placed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_placed: Option<u32>,
    /// The asset's replica count (read with `not_placed`; not in the JSON).
    #[serde(skip)]
    pub replicas: u32,
}

impl From<&AssetOutcome> for AssetLine {
    fn from(a: &AssetOutcome) -> AssetLine {
        AssetLine {
            name: a.name.clone(),
            kind: a.kind,
            status: a.status,
            stall_s: a.stall_s,
            stall_until: a.stall_until.clone(),
            acked_loss_risk: a.acked_loss_risk,
            acked_loss_cause: a.acked_loss_cause,
            acked_loss_likelihood: AckedLoss::of(a),
            loss: a.loss,
            not_placed: a.not_placed,
            replicas: a.replicas,
        }
    }
}

/// How an acknowledged-write loss risk shows on a real cluster, worst last.
///
/// `survival::evaluate` says yes/no (`acked_loss_risk`); this says whether the loss needs an election
/// race. With a quorum's page cache lost but a replica holding every write still up, nats-server 2.15.1
/// loses the writes only when a restarted replica wins the next election: the survivor keeps campaigning,
/// a restarted server grants its vote only to a log at least as up to date as its own, and a server asked
/// by a less up-to-date candidate campaigns early itself (`processVoteRequest` in server/raft.go; election
/// timeout uniform in 4–9 s). Measured on the lab: `power-quorum` lost writes in 2 of 12 runs (about 18 %
/// from the timers at a 4 s hold; docs/power-loss.md). With no such survivor the quorum that forms lacks
/// the writes: `power-all` lost writes in 5 of 5 runs, `power-crash-pause` in 5 of 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AckedLoss {
    /// No risk: sync always, or fewer than a quorum of replicas lose unsynced writes.
    #[default]
    None,
    /// A quorum loses its page cache while a replica holding every write stays up: loss only when a
    /// restarted replica wins the election race.
    Possible,
    /// No replica that stayed up holds the writes (every replica's power, or a crash plus pause whose
    /// quorum lacks them): loss near certain.
    Likely,
}

impl AckedLoss {
    pub fn is_none(&self) -> bool {
        *self == AckedLoss::None
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AckedLoss::None => "none",
            AckedLoss::Possible => "possible",
            AckedLoss::Likely => "likely",
        }
    }

    /// The model's outcome for one asset, classified: a quorum's page cache lost with fewer than all of
    /// its replicas down (worst case over placements, so every placement keeps one up with the writes) is
    /// `possible`; a quorum's cache lost with every replica down, or a crash plus pause, is `likely`.
    pub fn of(a: &AssetOutcome) -> AckedLoss {
        match (a.acked_loss_risk, a.acked_loss_cause) {
            (false, _) => AckedLoss::None,
            (true, Some("quorum_lost_page_cache")) if a.replicas_down < a.replicas => AckedLoss::Possible,
            (true, _) => AckedLoss::Likely,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ScenarioReport {
    /// The failed domains as selectors (for `--all`, one example of the class).
    pub failed: Vec<String>,
    /// For `--all`: how many combinations give this same outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// The worst status of any asset or the meta group.
    pub worst: Status,
    /// The meta group's status.
    pub meta: Status,
    /// Whether the JetStream API works (the meta group keeps its quorum); existing streams may take writes
    /// without it (see `actions`).
    pub api_available: bool,
    pub meta_detail: AssetLine,
    pub streams: Vec<AssetLine>,
    pub recovery_s: f64,
    pub recovery: Vec<Step>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Step>,
    pub actions: Vec<String>,
    /// JetStream servers down / with their store destroyed.
    pub down: Vec<String>,
    pub destroyed: Vec<String>,
    /// The most loaded survivors (expected placement).
    pub survivors: Vec<SurvivorLoad>,
}

impl ScenarioReport {
    /// Counts of assets per status, worst first, e.g. `3 unavailable, 12 degraded`, or `all ok`.
    pub fn tally(&self) -> String {
        let parts: Vec<String> = [Status::DataLost, Status::Unavailable, Status::Degraded]
            .into_iter()
            .filter_map(|st| {
                let n = self.streams.iter().filter(|a| a.status == st).count();
                (n > 0).then(|| format!("{n} {}", st.as_str()))
            })
            .collect();
        if parts.is_empty() {
            "all ok".into()
        } else {
            parts.join(", ")
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WhatifReport {
    pub site: String,
    pub layout: String,
    pub sync_interval: String,
    /// How placement was judged.
    pub placement: String,
    /// For `--all`: kinds swept, K, domains, combinations, distinct signatures evaluated in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSummary>,
    pub scenarios: Vec<ScenarioReport>,
    /// Open NATS issues these statuses do not cover (see `survival::known_hazards`).
    pub known_hazards: Vec<super::Hazard>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepSummary {
    pub kinds: Vec<String>,
    pub max_failures: usize,
    pub domains: usize,
    pub combinations: u64,
    pub signatures: usize,
}

fn placement_note(model: &Model) -> String {
    use crate::layout::PlacementRule;
    match &model.layout.placement {
        PlacementRule::UniqueTag { prefix } => format!(
            "unique_tag \"{prefix}\": replicas on distinct racks; which racks is NATS's choice, so statuses assume \
             the worst eligible placement"
        ),
        PlacementRule::Pinned { sets } if sets.is_empty() => {
            "no replica set fits: every asset has more replicas than the layout has servers, so none can be created"
                .into()
        }
        PlacementRule::Pinned { .. } => "streams pinned to replica sets by placement tags".into(),
        PlacementRule::Free => "no placement constraint: NATS may put replicas anywhere, so statuses assume the worst \
                                eligible placement"
            .into(),
    }
}

/// Report one evaluated scenario.
pub fn scenario_report(model: &Model, catalog: &Catalog, sc: &Scenario, count: Option<u64>) -> ScenarioReport {
    let rec = recovery(model, catalog, sc);
    let mut survivors = survivor_load(model, catalog, sc);
    survivors.truncate(SURVIVORS_SHOWN);
    let name = |s: &usize| model.site.servers[*s].name.clone();
    ScenarioReport {
        failed: sc.failed.iter().map(|d| d.to_string()).collect(),
        count,
        worst: sc.worst(),
        meta: sc.meta.status,
        api_available: sc.meta.status.writable(),
        meta_detail: AssetLine::from(&sc.meta),
        streams: sc.assets.iter().map(AssetLine::from).collect(),
        recovery_s: rec.total_s,
        recovery: rec.steps,
        alternatives: rec.alternatives,
        actions: sc.actions.clone(),
        down: sc.down.iter().map(name).collect(),
        destroyed: sc.destroyed.iter().map(name).collect(),
        survivors,
    }
}

/// The report for explicit scenarios.
pub fn report_scenarios(model: &Model, catalog: &Catalog, scenarios: &[Scenario]) -> WhatifReport {
    WhatifReport {
        site: model.site.name.clone(),
        layout: model.layout.id.clone(),
        sync_interval: model.site.nats.sync.config_value(),
        placement: placement_note(model),
        sweep: None,
        scenarios: scenarios
            .iter()
            .map(|s| scenario_report(model, catalog, s, None))
            .collect(),
        known_hazards: super::known_hazards(),
    }
}

/// The report for a sweep: one scenario per outcome class, worst first.
pub fn report_sweep(model: &Model, catalog: &Catalog, sweep: &Sweep) -> WhatifReport {
    WhatifReport {
        site: model.site.name.clone(),
        layout: model.layout.id.clone(),
        sync_interval: model.site.nats.sync.config_value(),
        placement: placement_note(model),
        sweep: Some(SweepSummary {
            kinds: sweep.kinds.iter().map(|k| k.as_str().to_string()).collect(),
            max_failures: sweep.max_failures,
            domains: sweep.domains,
            combinations: sweep.combinations,
            signatures: sweep.signatures,
        }),
        scenarios: sweep
            .classes
            .iter()
            .map(|c| scenario_report(model, catalog, &c.example, Some(c.count)))
            .collect(),
        known_hazards: super::known_hazards(),
    }
}

impl WhatifReport {
    /// Whether any scenario's worst status reaches `level`.
    pub fn reaches(&self, level: Status) -> bool {
        self.scenarios.iter().any(|s| s.worst >= level)
    }
    /// Whether any scenario carries an acknowledged-write loss risk.
    pub fn any_acked_loss_risk(&self) -> bool {
        self.scenarios
            .iter()
            .any(|s| s.meta_detail.acked_loss_risk || s.streams.iter().any(|a| a.acked_loss_risk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Raid;
    use crate::site::Pattern;
    use crate::survival::fixture::{self, LayoutBuilder, RackSpec};
    use crate::survival::Domain;
    use crate::units::SyncMode;

    /// whatif's JSON line for an R3 stream on three servers (one per rack) under `sels`.
    fn line(sync: SyncMode, sels: &[&str]) -> serde_json::Value {
        let specs: Vec<RackSpec> = [("r1", "n1", "a1"), ("r2", "n2", "a2"), ("r3", "n3", "a3")]
            .iter()
            .map(|(r, n, a)| RackSpec {
                name: r,
                servers: vec![n],
                arrays: vec![(a, 12)],
            })
            .collect();
        let site = fixture::site(&specs, sync);
        let layout = LayoutBuilder::new(&site, Pattern::P1, Raid::Raid1, 3, &[])
            .own_groups(Raid::Raid1, 2)
            .stream("s", 3, false)
            .build();
        let model = Model::new(&site, &layout);
        let failed: Vec<Domain> = sels.iter().map(|s| Domain::parse(s, &site).unwrap()).collect();
        let sc = model.evaluate(&failed);
        let r = scenario_report(&model, &Catalog::builtin(), &sc, None);
        let v = serde_json::to_value(&r).unwrap();
        v["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "s")
            .cloned()
            .unwrap()
    }

    #[test]
    fn the_acked_loss_likelihood_says_whether_the_loss_needs_an_election_race() {
        let delayed = SyncMode::Interval(120);
        let q = line(delayed, &["server:n1", "server:n2"]);
        assert_eq!(
            (q["acked_loss_risk"].as_bool(), q["acked_loss_likelihood"].as_str()),
            (Some(true), Some("possible")),
            "{q}"
        );
        let all = line(delayed, &["server:n1", "server:n2", "server:n3"]);
        assert_eq!(all["acked_loss_likelihood"], "likely", "{all}");
        let cp = line(delayed, &["pause:n2", "server:n1", "pause:n3"]);
        assert_eq!(cp["acked_loss_likelihood"], "likely", "{cp}");
        // No risk, no key (as `acked_loss_cause`).
        for l in [
            line(delayed, &["server:n1"]),
            line(SyncMode::Always, &["server:n1", "server:n2"]),
        ] {
            assert_eq!(l["acked_loss_risk"], false, "{l}");
            assert!(l.get("acked_loss_likelihood").is_none(), "{l}");
        }
    }
}
