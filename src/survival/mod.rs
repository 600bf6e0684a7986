//! Survival: what a layout survives. Failure domains and their effects, stream and meta-group status per
//! scenario on the placement NATS will really produce, `tolerates`, and yearly probabilities.

mod domain;
mod evaluate;
#[doc(hidden)]
pub mod fixture;
mod tolerates;

#[cfg(test)]
mod tests;

pub use domain::{Domain, DomainKind, Target};
pub use evaluate::{evaluate, AssetOutcome, GroupEffect, Model, Scenario, ServerEffect, Status, ELECTION_STALL_S};
pub use tolerates::{brute_force, brute_force_kind, for_each_subset, min_breaking_cost, tolerates, TOLERANCE_KINDS};

use serde::Serialize;

/// Yearly availability and durability figures for a layout (filled by the probability model).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Yearly {}
