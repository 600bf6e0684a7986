//! The lab a planned layout runs as: its servers with the tags, store sizes and `unique_tag` that `emit`
//! writes for them. The lab owns this (emit knows nothing of the lab), so the arrows run plan → emit → lab.

use super::{LabSpec, NodeSpec};
use crate::plan::{Plan, PlannedLayout};
use crate::units::SyncMode;
use std::path::PathBuf;

/// The lab that runs a planned layout: its servers with their emitted tags, store sizes, `unique_tag`.
pub fn for_layout(plan: &Plan, layout: &PlannedLayout, sync: SyncMode, dir: PathBuf) -> LabSpec {
    LabSpec {
        nodes: layout
            .servers
            .iter()
            .map(|s| NodeSpec {
                name: s.name.clone(),
                tags: s.tags.iter().map(|t| t.to_lowercase()).collect(),
                max_file_store_bytes: Some(s.store_bytes),
                volume: s.volume.clone(),
            })
            .collect(),
        cluster_name: plan.input.nats.cluster_name.clone(),
        sync,
        unique_tag: layout.unique_tag.clone(),
        dir,
        client_tls: None,
    }
}
