//! The Plan: one serialisable value carrying the site's ranked layouts with every evaluation. Commands
//! build it once; reports, emit and verify read it.

use crate::layout::{Layout, Severity};
use crate::site::{Site, Tolerance};
use serde::Serialize;

/// A layout's verdict, worst reason first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Recommended,
    Acceptable,
    Risky,
    Rejected,
}

impl Verdict {
    pub fn from_severity(s: Option<Severity>) -> Verdict {
        match s {
            None | Some(Severity::Info) => Verdict::Recommended,
            Some(Severity::Note) => Verdict::Acceptable,
            Some(Severity::Risk) => Verdict::Risky,
            Some(Severity::Reject) => Verdict::Rejected,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Recommended => "recommended",
            Verdict::Acceptable => "acceptable",
            Verdict::Risky => "risky",
            Verdict::Rejected => "rejected",
        }
    }
}

/// Capacity of a layout against the workload at the end of the planning horizon.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Capacity {
    /// Sum of the JetStream store sizes (`max_file_store`) of all servers.
    pub usable_bytes: u64,
    /// Sum of all replicas' bytes (with growth, RAFT logs).
    pub needed_bytes: u64,
    /// Fraction of usable left free on the fullest server (the binding one); negative means short.
    pub headroom: f64,
    /// The fullest server and its figures.
    pub fullest_server: Option<ServerCapacity>,
    /// The same after the worst tolerated failure, once the failed peers are removed and their replicas
    /// rebuilt on the survivors (NATS moves nothing before a peer-remove).
    pub after_failure: Option<AfterFailure>,
    /// Bytes of each volume group left for other services (pattern 4), total.
    pub left_for_others_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerCapacity {
    pub name: String,
    pub usable_bytes: u64,
    pub needed_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct AfterFailure {
    /// The failure, as whatif selectors (e.g. `rack:A`).
    pub failed: Vec<String>,
    pub fullest_server: Option<ServerCapacity>,
    pub headroom: f64,
}

/// One JetStream server of a layout as the JSON contract shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedServer {
    pub name: String,
    pub rack: String,
    pub array: Option<String>,
    pub volume_group: Option<String>,
    pub lun_bytes: u64,
    /// `max_file_store` natsplan will emit for it.
    pub store_bytes: u64,
    /// The server's tags as emitted (lower case).
    pub tags: Vec<String>,
}

/// Where one asset's replicas go.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedAsset {
    pub name: String,
    pub kind: String,
    pub replicas: u8,
    /// Where it may land (all JetStream servers, or its pinned set).
    pub eligible: Vec<String>,
    /// Where the emulated meta leader puts it (balanced; NATS breaks ties at random).
    pub expected: Vec<String>,
    pub set: Option<String>,
    pub bytes_per_replica: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlannedLayout {
    pub id: String,
    pub rank: usize,
    pub pattern: String,
    pub raid: String,
    pub replicas: u8,
    pub servers: Vec<PlannedServer>,
    pub hot_spares: u32,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub tolerates: Tolerance,
    pub capacity: Capacity,
    pub disks_used: u32,
    pub arrays_used: u32,
    pub racks_used: u32,
    /// `unique_tag` to emit, when that is how placement is steered.
    pub unique_tag: Option<String>,
    pub replica_sets: Vec<(String, Vec<String>)>,
    pub assets: Vec<PlannedAsset>,
    /// Yearly availability and durability figures (survival), when computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yearly: Option<crate::survival::Yearly>,
    /// Performance predictions for the site's workload (perf), when computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted: Option<crate::perf::Predicted>,
    /// The layout itself, for emit, whatif and verify.
    #[serde(skip)]
    pub layout: Layout,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub site: String,
    pub generator: String,
    pub sync_interval: String,
    /// Ranked, best first.
    pub layouts: Vec<PlannedLayout>,
    /// Layouts evaluated in all (the report may show only the top ones).
    pub evaluated: usize,
    /// Remarks about the site as a whole.
    pub notes: Vec<String>,
    #[serde(skip)]
    pub input: Site,
}

impl Plan {
    pub fn layout(&self, id: &str) -> Option<&PlannedLayout> {
        self.layouts.iter().find(|l| l.id == id)
    }
}
