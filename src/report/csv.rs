//! CSV for design, whatif and simulate (`--format csv`): one header row, then one record per layout,
//! per scenario and asset, or per asset; RFC 4180 (fields with a comma, quote, CR or LF are quoted, quotes
//! doubled, CRLF line ends). Figures are raw numbers in the unit their column names (bytes, minutes,
//! seconds, per year), with full precision; an empty field is "none" / "not computed". docs/reports.md
//! lists the columns.

use crate::plan::{Plan, PlannedLayout};
use crate::survival::{AssetLine, ScenarioReport, SimulateReport, WhatifReport};
use crate::text::Csv;

pub fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

pub fn opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_default()
}

/// `design --format csv` columns, one record per layout shown.
pub const DESIGN_COLUMNS: [&str; 31] = [
    "rank",
    "id",
    "verdict",
    "pattern",
    "raid",
    "replicas",
    "jetstream_servers",
    "unused_servers",
    "racks_used",
    "arrays_used",
    "disks_used",
    "hot_spares",
    "tolerates_racks",
    "tolerates_arrays",
    "tolerates_servers",
    "tolerates_disks",
    "api_tolerates_racks",
    "api_tolerates_arrays",
    "api_tolerates_servers",
    "api_tolerates_disks",
    "needed_bytes",
    "usable_bytes",
    "free_fraction",
    "free_after_failure_fraction",
    "worst_unavailable_asset",
    "worst_unavailable_min_per_year",
    "api_unavailable_min_per_year",
    "p_any_data_lost_per_year",
    "acked_msgs_lost_per_year",
    "perf_headroom",
    "reasons",
];

fn design_record(l: &PlannedLayout) -> Vec<String> {
    let y = l.yearly.as_ref();
    let servers: Vec<&str> = l.servers.iter().map(|s| s.name.as_str()).collect();
    let unused: Vec<String> = l
        .unused_servers
        .iter()
        .map(|u| format!("{}:{}", u.name, u.role.as_str()))
        .collect();
    let (t, m) = (&l.tolerates, &l.tolerates_meta);
    vec![
        l.rank.to_string(),
        l.id.clone(),
        l.verdict.as_str().into(),
        l.pattern.clone(),
        l.raid.clone(),
        l.replicas.to_string(),
        servers.join(" "),
        unused.join(" "),
        l.racks_used.to_string(),
        l.arrays_used.to_string(),
        l.disks_used.to_string(),
        l.hot_spares.to_string(),
        t.racks.to_string(),
        t.arrays.to_string(),
        t.servers.to_string(),
        t.disks.to_string(),
        m.racks.to_string(),
        m.arrays.to_string(),
        m.servers.to_string(),
        m.disks.to_string(),
        l.capacity.needed_bytes.to_string(),
        l.capacity.usable_bytes.to_string(),
        num(l.capacity.headroom),
        opt(l.capacity.after_failure.as_ref().map(|a| a.headroom)),
        y.map(|y| y.worst_unavailable.clone()).unwrap_or_default(),
        opt(y.map(|y| y.worst_unavailable_min_per_year)),
        opt(y.map(|y| y.api_unavailable_min_per_year)),
        opt(y.map(|y| y.p_any_data_lost_per_year)),
        opt(y.map(|y| y.acked_msgs_lost_per_year)),
        opt(l.predicted.as_ref().map(|p| p.headroom)),
        l.reasons.join("; "),
    ]
}

/// The design CSV for the layouts a report shows.
pub fn design(plan: &Plan, sel: &super::design::Selection) -> Vec<u8> {
    let mut out = Csv::crlf();
    out.record(DESIGN_COLUMNS);
    for l in super::design::selected(plan, sel) {
        out.record(design_record(l));
    }
    out.into_bytes()
}

/// `whatif --format csv` columns: one record per scenario (an outcome class for `--all`) and asset, the
/// meta group first as asset `meta`.
pub const WHATIF_COLUMNS: [&str; 15] = [
    "scenario",
    "failed",
    "combinations",
    "worst",
    "meta",
    "api_available",
    "recovery_s",
    "asset",
    "kind",
    "status",
    "stall_s",
    "stall_until",
    "loss",
    "acked_loss_risk",
    "acked_loss_cause",
];

fn whatif_record(i: usize, sc: &ScenarioReport, a: &AssetLine) -> Vec<String> {
    vec![
        (i + 1).to_string(),
        sc.failed.join(" + "),
        sc.count.unwrap_or(1).to_string(),
        sc.worst.as_str().into(),
        sc.meta.as_str().into(),
        sc.api_available.to_string(),
        num(sc.recovery_s),
        a.name.clone(),
        a.kind.to_string(),
        a.status.as_str().into(),
        opt(a.stall_s),
        a.stall_until.join(" "),
        a.loss.unwrap_or_default().into(),
        a.acked_loss_risk.to_string(),
        a.acked_loss_cause.unwrap_or_default().into(),
    ]
}

pub fn whatif(r: &WhatifReport) -> Vec<u8> {
    let mut out = Csv::crlf();
    out.record(WHATIF_COLUMNS);
    for (i, sc) in r.scenarios.iter().enumerate() {
        for a in std::iter::once(&sc.meta_detail).chain(sc.streams.iter()) {
            out.record(whatif_record(i, sc, a));
        }
    }
    out.into_bytes()
}

/// `simulate --format csv` columns: one record per asset, the meta group first, then every asset by
/// expected downtime (largest first); `exact_*` empty when the chain did not run.
pub const SIMULATE_COLUMNS: [&str; 15] = [
    "asset",
    "kind",
    "unavailable_min_per_year",
    "unavailable_ci95_low",
    "unavailable_ci95_high",
    "exact_unavailable_min_per_year",
    "p_data_lost_per_year",
    "p_data_lost_ci95_low",
    "p_data_lost_ci95_high",
    "exact_p_data_lost_per_year",
    "acked_msgs_lost_per_year",
    "acked_msgs_lost_ci95_low",
    "acked_msgs_lost_ci95_high",
    "exact_acked_msgs_lost_per_year",
    "mttdl_years",
];

pub fn simulate(r: &SimulateReport) -> Vec<u8> {
    let mut out = Csv::crlf();
    out.record(SIMULATE_COLUMNS);
    let (assets, _) = super::simulate::ordered(r, None);
    for (a, e) in assets {
        let ci = a.ci95.clone().unwrap_or_default();
        out.record([
            a.name.clone(),
            a.kind.to_string(),
            num(a.unavailable_min_per_year),
            num(ci.unavailable_min_per_year.0),
            num(ci.unavailable_min_per_year.1),
            opt(e.map(|e| e.unavailable_min_per_year)),
            num(a.p_data_lost_per_year),
            num(ci.p_data_lost_per_year.0),
            num(ci.p_data_lost_per_year.1),
            opt(e.map(|e| e.p_data_lost_per_year)),
            num(a.acked_msgs_lost_per_year),
            num(ci.acked_msgs_lost_per_year.0),
            num(ci.acked_msgs_lost_per_year.1),
            opt(e.map(|e| e.acked_msgs_lost_per_year)),
            opt(e.and_then(|e| e.mttdl_years).or(a.mttdl_years)),
        ]);
    }
    out.into_bytes()
}
