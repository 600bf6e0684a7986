//! Survival: what a layout survives. Failure domains and their effects, stream and meta-group status per
//! scenario on the placement NATS will really produce, `tolerates`, and (later) yearly probabilities.

use serde::Serialize;

/// Yearly availability and durability figures for a layout (filled by the probability model).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Yearly {}

/// Placeholder until the survival core lands: tolerates nothing.
pub fn tolerates(_site: &crate::site::Site, _layout: &crate::layout::Layout) -> crate::site::Tolerance {
    crate::site::Tolerance::default()
}
