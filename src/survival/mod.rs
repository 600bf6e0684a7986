//! Survival: what a layout survives. Failure domains and their effects, stream and meta-group status per
//! scenario on the placement NATS will really produce, `tolerates`, whatif sweeps with recovery steps and
//! survivor load, and yearly probabilities.

pub mod agreement;
mod chain;
mod components;
mod domain;
mod endurance;
mod evaluate;
mod group_kind;
// A test fixture, out of the library users build (the `fixtures` feature; tests and benches turn it on).
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixture;
mod hazards;
mod recovery;
pub mod reference;
pub mod repair;
mod solve;
mod sweep;
mod tolerates;
mod whatif;
mod yearly;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod review_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod yearly_tests;

pub use domain::{Domain, DomainKind, DomainTarget};
pub use endurance::{endurance, Endurance, GroupWear, KV_COMPACTION_REWRITE, RATING_YEARS};
pub use evaluate::{evaluate, AssetOutcome, GroupEffect, Model, Scenario, ServerEffect, Status, ELECTION_STALL_S};
pub use group_kind::GroupKind;
pub use hazards::{hazards_line, known_hazards, Hazard};
pub use recovery::{
    asset_in_bytes_per_s, recovery, repair_s, survivor_load, Action, Credentials, Recovery, Step, SurvivorLoad, Until,
    Uses, FULL_DISK_RESTART_WHY,
};
pub use sweep::{combinations, sweep, sweep_exhaustive, OutcomeClass, Sweep};
pub use tolerates::{
    brute_force, brute_force_kind, brute_force_kind_of, brute_force_meta, for_each_subset, min_breaking_cost,
    min_breaking_cost_of, tolerates, tolerates_meta, Judge, TOLERANCE_KINDS,
};
pub use whatif::{
    report_scenarios, report_sweep, scenario_report, AckedLoss, AssetLine, ScenarioReport, SweepSummary, WhatifReport,
};

pub use chain::{exact_flows, Chains};
pub use solve::{expected_events, monte_carlo};
pub use yearly::{
    chain_states, exact, exact_at, rate_per_year, yearly, yearly_only, yearly_with, Ci95, Component, Entries, Flows,
    Reliability, SimulateReport, SpareEffect, Yearly, YearlyAsset, YearlyClass, YearlyEntries, CHAIN_STATES,
    DESTROYER_STATES,
};
