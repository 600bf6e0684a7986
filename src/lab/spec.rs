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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layouts_lab_records_each_servers_planned_volume() {
        let cat = crate::catalog::Catalog::builtin();
        let text = include_str!("../../examples/mixed-storage.yaml");
        let site = crate::site::parse_str(text, "mixed-storage.yaml", &cat).unwrap();
        let plan = crate::plan::build(&site, &cat);
        let l = plan.layouts.iter().find(|l| l.pattern == "mixed").unwrap();
        let spec = for_layout(&plan, l, SyncMode::Always, PathBuf::from("/nonexistent"));
        let vols: Vec<&str> = spec.nodes.iter().map(|n| n.volume.as_deref().unwrap()).collect();
        assert_eq!(vols.len(), 3);
        assert!(
            vols[0].starts_with("LUN of") && vols[0].ends_with("of array A1"),
            "{vols:?}"
        );
        assert!(vols[1].contains("on DDP pool B1-vg1"), "{vols:?}");
        assert!(vols[2].starts_with("its internal disks"), "{vols:?}");
        // lab.json keeps it per node, and an older record without it still reads.
        let node = crate::lab::NodeInfo {
            name: "alpha".into(),
            host: "127.0.0.1".into(),
            tags: vec![],
            client_port: 1,
            cluster_port: 2,
            monitor_port: 3,
            conf: "c".into(),
            store_dir: "s".into(),
            log: "l".into(),
            pid: 0,
            volume: spec.nodes[0].volume.clone(),
        };
        let json = serde_json::to_value(&node).unwrap();
        assert_eq!(json["volume"], vols[0]);
        let mut old = json.clone();
        old.as_object_mut().unwrap().remove("volume");
        let back: crate::lab::NodeInfo = serde_json::from_value(old).unwrap();
        assert_eq!(back.volume, None);
    }
}
