//! emit: the configuration that makes a plan real — one nats-server.conf per JetStream server and the
//! stream, KV and object-store definitions as JetStream API JSON.

pub mod conf;

use crate::cli::Global;
use crate::error::{bad_input, Failure};
use crate::lab::{LabSpec, NodeSpec};
use crate::plan::{Plan, PlannedLayout};
use crate::units::SyncMode;
use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// Load a site and plan it (the same plan `design` shows).
pub fn plan_for(g: &Global, site: &Path) -> Result<Plan, Failure> {
    let catalog = crate::commands::catalog(g)?;
    let _site = crate::site::load(site, &catalog).map_err(|e| bad_input(anyhow!("{e}")))?;
    // Planning (`plan::build`) lands on main with the design command; until it is merged here a site
    // cannot be turned into layouts.
    Err(crate::error::cannot_run(anyhow!(
        "planning a site is not in this build yet; use `lab up --nodes N`"
    )))
}

/// The layout `--layout ID` names, or an error listing the ids there are.
pub fn find_layout<'p>(plan: &'p Plan, id: &str) -> Result<&'p PlannedLayout, Failure> {
    plan.layout(id).ok_or_else(|| {
        let ids: Vec<&str> = plan.layouts.iter().take(10).map(|l| l.id.as_str()).collect();
        bad_input(anyhow!(
            "--layout {id}: no such layout for site '{}'; `natsplan design` lists them (first: {})",
            plan.site,
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            }
        ))
    })
}

/// The lab that runs a planned layout: its servers with their emitted tags and store sizes.
pub fn lab_spec(plan: &Plan, layout: &PlannedLayout, sync: SyncMode, dir: PathBuf) -> LabSpec {
    LabSpec {
        nodes: layout
            .servers
            .iter()
            .map(|s| NodeSpec {
                name: s.name.clone(),
                tags: s.tags.iter().map(|t| t.to_lowercase()).collect(),
                max_file_store_bytes: Some(s.store_bytes),
            })
            .collect(),
        cluster_name: plan.input.nats.cluster_name.clone(),
        sync,
        unique_tag: layout.unique_tag.clone(),
        dir,
    }
}
