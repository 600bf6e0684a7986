//! Performance model: throughput, latency, capacity and recovery predictions from calibration curves.

use serde::Serialize;

/// Predictions for a layout's workload (filled by the performance model).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Predicted {}
