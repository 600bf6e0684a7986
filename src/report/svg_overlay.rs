//! A whatif scenario as the layout drawing shows it (`svg_layout`): which racks, arrays, disks and servers
//! it failed, and each stream's status colour.

use crate::survival::{ScenarioReport, Status};
use std::collections::BTreeMap;

/// What a whatif scenario failed, by name, and each asset's status in it.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// The scenario as selectors, e.g. `rack:A + disk:B1/2`.
    pub caption: String,
    pub racks: Vec<String>,
    pub arrays: Vec<String>,
    /// (array, disk number from 1).
    pub disks: Vec<(String, u32)>,
    pub down: Vec<String>,
    pub destroyed: Vec<String>,
    pub full: Vec<String>,
    pub status: BTreeMap<String, Status>,
    pub meta: Option<Status>,
}

impl Overlay {
    /// Read the failed domains of a scenario from its selectors (`rack:A`, `power:A`, `net:A`,
    /// `array:A1`, `disk:A1/2`, `full:n1`, …) and its lists of servers down and destroyed.
    pub fn from_scenario(sc: &ScenarioReport) -> Overlay {
        let mut o = Overlay {
            caption: sc.failed.join(" + "),
            down: sc.down.clone(),
            destroyed: sc.destroyed.clone(),
            meta: Some(sc.meta),
            ..Overlay::default()
        };
        for sel in &sc.failed {
            let Some((kind, name)) = sel.split_once(':') else {
                continue;
            };
            match kind {
                "rack" | "power" | "net" => o.racks.push(name.to_string()),
                "array" => o.arrays.push(name.to_string()),
                "disk" => {
                    if let Some((a, d)) = name.rsplit_once('/') {
                        if let Ok(d) = d.parse() {
                            o.disks.push((a.to_string(), d));
                        }
                    }
                }
                "full" => o.full.push(name.to_string()),
                _ => {}
            }
        }
        for a in &sc.streams {
            // Consumers share their stream's name space in the report; the stream's own status wins.
            if !a.kind.is_consumer() {
                o.status.insert(a.name.clone(), a.status);
            }
        }
        o
    }
}

/// Fill colour of a status (colour-blind-safe enough with the text beside it).
pub fn status_colour(s: Status) -> &'static str {
    match s {
        Status::Ok => "#2ca02c",
        Status::Degraded => "#e6a100",
        Status::Unavailable => "#d62728",
        Status::DataLost => "#111111",
    }
}
