//! The model's side: the site and layout a plain lab stands for, the test stream pinned where NATS put
//! it, and `survival::evaluate`'s word on a scenario's failed domains.

use super::*;
use crate::layout::{Asset, AssetKind, Layout, Lun, PlacementRule, Raid, VolumeGroup};
use crate::site::{Pattern, Site};
use crate::survival::{evaluate, AckedLoss, Domain};
use crate::units::SyncMode;
use anyhow::{anyhow, Result};

/// The site and layout the predictions are made on: one rack per lab server (so `power:` or `net:` of one
/// rack is one server), each with a 12-disk EF600 of 3.84 TB NVMe and one hot spare, each server with its
/// own RAID 1 group of two disks, one free-placed R3 stream, the lab's sync mode. Built through the site
/// parser (so every setting not named here takes the site format's default) and a layout written out
/// here; production code, so it does not use the test fixtures.
pub fn model_of_lab(nodes: usize, sync: SyncMode) -> (Site, Layout) {
    let site = lab_site(nodes, sync);
    let layout = lab_layout(&site, &[ASSET]);
    (site, layout)
}

/// The lab's site: `n1..nN` each alone in rack `rI` with array `aI`.
fn lab_site(nodes: usize, sync: SyncMode) -> Site {
    let mut y = format!("site: lab\nnats:\n  replicas: [3]\n  sync_interval: {sync}\nracks:\n");
    for i in 1..=nodes {
        y.push_str(&format!(
            "  - name: r{i}\n    servers: [n{i}]\n    arrays:\n      - {{ name: a{i}, model: EF600, disk_model: nvme-3.84t, disks: 12, hot_spares: 1 }}\n"
        ));
    }
    // The text is ours and names only built-in models: a failure here is a bug, not bad input.
    crate::site::parse_str(&y, "<lab model>", &crate::catalog::Catalog::builtin())
        .unwrap_or_else(|e| panic!("the lab's own model site does not parse: {e}"))
}

/// Pattern 1 on every server of `site`: its own RAID 1 group (disks 1 and 2 of its rack's array) with one
/// LUN, and the named R3 streams free to land on any server.
fn lab_layout(site: &Site, streams: &[&str]) -> Layout {
    const TIB: u64 = 1 << 40;
    let servers: Vec<usize> = (0..site.servers.len()).collect();
    let array_of = |s: usize| {
        site.rack_arrays(site.servers[s].rack)
            .next()
            .expect("every lab rack has its array")
    };
    let groups: Vec<VolumeGroup> = servers
        .iter()
        .map(|&s| {
            let a = array_of(s);
            VolumeGroup {
                name: format!("{}-vg{}", site.arrays[a].name, s + 1),
                array: a,
                raid: Raid::Raid1,
                disks: vec![1, 2],
                usable_bytes: TIB,
            }
        })
        .collect();
    let luns = servers
        .iter()
        .map(|&s| Lun {
            group: s,
            server: s,
            size_bytes: TIB,
        })
        .collect();
    let assets = streams
        .iter()
        .map(|name| Asset {
            name: (*name).into(),
            kind: AssetKind::Stream,
            replicas: 3,
            candidates: servers.clone().into(),
            unique_rack: false,
            set: None,
            parent: None,
            parent_at: None,
            spec: None,
            bytes_per_replica: 1e9,
            // As the emulated meta leader places it: the first eligible servers.
            expected: servers.iter().copied().take(3).collect(),
        })
        .collect();
    Layout {
        id: format!("lab-{}-r3", Pattern::P1.id_tag()),
        pattern: Pattern::P1,
        raid: Raid::Raid1,
        replicas: 3,
        spares: servers
            .iter()
            .map(|&s| (array_of(s), site.arrays[array_of(s)].hot_spares))
            .collect(),
        servers,
        groups,
        luns,
        placement: PlacementRule::Free,
        assets,
        problems: Vec::new(),
    }
}

/// `layout` with the test stream pinned where NATS placed it (`peers`, site server names), so the
/// prediction is for the placement the lab has, not the worst eligible one. Adds the asset if missing.
pub fn pin_test_stream(site: &Site, layout: &Layout, peers: &[String]) -> Result<Layout> {
    let idx = peers
        .iter()
        .map(|p| {
            site.servers
                .iter()
                .position(|s| s.name == *p)
                .ok_or_else(|| anyhow!("stream peer {p} is not a server of the site"))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut l = layout.clone();
    l.assets.retain(|a| &*a.name != ASSET);
    l.assets.push(Asset {
        name: ASSET.into(),
        kind: AssetKind::Stream,
        replicas: idx.len() as u8,
        candidates: idx.clone().into(),
        unique_rack: false,
        set: None,
        parent: None,
        parent_at: None,
        spec: None,
        bytes_per_replica: 0.0,
        expected: idx.into(),
    });
    Ok(l)
}

/// The model's word on one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioPrediction {
    pub status: crate::survival::Status,
    pub stall_s: Option<f64>,
    pub acked_loss_risk: bool,
    /// How the risk would show: `none` exactly when `acked_loss_risk` is false.
    pub acked_loss: AckedLoss,
    /// The meta group's status (`unavailable`: the JetStream API cannot create or change assets).
    pub meta_status: crate::survival::Status,
    /// whatif's recovery steps for the last step's failed domains, each `WHAT (needs CREDENTIALS)`.
    pub recovery: Vec<String>,
    /// The same steps' actions, as a drill carries them out (`survival::Action`).
    pub recovery_actions: Vec<crate::survival::Action>,
    /// Each step's seconds recomputed for the lab's own plan with operator delays 0 ([`OPERATOR_DELAYS`]),
    /// for `--recover`'s `predicted_seconds`; None where the drill's model gave other steps.
    pub recovery_drill_s: Vec<Option<f64>>,
    /// Each step's chain (`recovery[].chain`): chains run in parallel, a chain's steps in order.
    pub recovery_chains: Vec<String>,
}

impl ScenarioPrediction {
    /// The longest chain's drill seconds (chains run in parallel): how long whatif expects the recovery to
    /// take on the lab.
    pub fn recovery_longest_chain_s(&self) -> f64 {
        let mut per: Vec<(&str, f64)> = Vec::new();
        for (c, s) in self.recovery_chains.iter().zip(&self.recovery_drill_s) {
            let s = s.unwrap_or(0.0);
            match per.iter_mut().find(|(x, _)| x == c) {
                Some((_, t)) => *t += s,
                None => per.push((c.as_str(), s)),
            }
        }
        per.into_iter().map(|(_, t)| t).fold(0.0, f64::max)
    }
}

/// Repair times that are an operator's delay, 0 in a drill: the paged operator's response and the
/// operator's peer-remove (`models/failure_rates.yaml`); machine times (restart, catch-up) stay.
pub const OPERATOR_DELAYS: [&str; 2] = ["operator_response", "peer_remove"];

/// `site` with the operator's delays set to 0 (a drill acts at once).
fn drill_site(site: &Site) -> Site {
    let mut s = site.clone();
    for k in OPERATOR_DELAYS {
        s.repair_times.retain(|(x, _)| x != k);
        s.repair_times.push((k.to_string(), 0.0));
    }
    s
}

/// The seconds of each of `steps` in the drill's model (`drill`'s steps, operator delays 0): matched one
/// for one when both list the same actions, else None for every step.
fn drill_seconds(steps: &[crate::survival::Step], drill: &[crate::survival::Step]) -> Vec<Option<f64>> {
    let same = steps.len() == drill.len() && steps.iter().zip(drill).all(|(a, b)| a.action == b.action);
    steps
        .iter()
        .zip(drill.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(_, d)| d.filter(|_| same).map(|d| d.seconds))
        .collect()
}

/// Evaluate `steps` (each a set of selectors failed together; a rolling restart has one step per server)
/// and keep the worst.
pub fn predict(site: &Site, layout: &Layout, steps: &[Vec<String>]) -> Result<ScenarioPrediction> {
    let mut worst: Option<ScenarioPrediction> = None;
    for sels in steps {
        let failed = sels
            .iter()
            .map(|s| Domain::parse(s, site).map_err(|e| anyhow!(e)))
            .collect::<Result<Vec<_>>>()?;
        let sc = evaluate(site, layout, &failed);
        let model = crate::survival::Model::new(site, layout);
        let steps = crate::survival::recovery(&model, &crate::catalog::Catalog::builtin(), &sc).steps;
        let recovery = steps
            .iter()
            .map(|st| match st.credentials.label() {
                "" => st.what.clone(),
                l => format!("{} (needs {l})", st.what),
            })
            .collect();
        let drill = drill_site(site);
        let drill_steps = {
            let m = crate::survival::Model::new(&drill, layout);
            let sc = evaluate(&drill, layout, &failed);
            crate::survival::recovery(&m, &crate::catalog::Catalog::builtin(), &sc).steps
        };
        let recovery_drill_s = drill_seconds(&steps, &drill_steps);
        let recovery_chains = steps.iter().map(|st| st.chain.clone()).collect();
        let recovery_actions = steps.into_iter().map(|st| st.action).collect();
        let a = sc
            .assets
            .iter()
            .find(|a| a.name == ASSET)
            .ok_or_else(|| anyhow!("the model layout has no asset {ASSET}"))?;
        let p = ScenarioPrediction {
            status: a.status,
            stall_s: a.stall_s,
            acked_loss_risk: a.acked_loss_risk,
            acked_loss: AckedLoss::of(a),
            meta_status: sc.meta.status,
            recovery,
            recovery_actions,
            recovery_drill_s,
            recovery_chains,
        };
        worst = Some(match worst {
            None => p,
            Some(w) => ScenarioPrediction {
                status: w.status.max(p.status),
                stall_s: match (w.stall_s, p.stall_s) {
                    (Some(x), Some(y)) => Some(x.max(y)),
                    _ => None,
                },
                acked_loss_risk: w.acked_loss_risk || p.acked_loss_risk,
                acked_loss: w.acked_loss.max(p.acked_loss),
                meta_status: w.meta_status.max(p.meta_status),
                recovery: p.recovery,
                recovery_actions: p.recovery_actions,
                recovery_drill_s: p.recovery_drill_s,
                recovery_chains: p.recovery_chains,
            },
        });
    }
    worst.ok_or_else(|| anyhow!("a scenario needs at least one step"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::survival::fixture::{self, LayoutBuilder, RackSpec};

    /// What `model_of_lab` built before it stopped using the test fixtures.
    fn with_fixture(nodes: usize, sync: SyncMode) -> (Site, Layout) {
        let names: Vec<String> = (1..=nodes).map(|i| format!("n{i}")).collect();
        let racks: Vec<String> = (1..=nodes).map(|i| format!("r{i}")).collect();
        let arrays: Vec<String> = (1..=nodes).map(|i| format!("a{i}")).collect();
        let specs: Vec<RackSpec> = (0..nodes)
            .map(|i| RackSpec {
                name: &racks[i],
                servers: vec![&names[i]],
                arrays: vec![(&arrays[i], 12)],
            })
            .collect();
        let site = fixture::site(&specs, sync);
        let layout = LayoutBuilder::new(&site, Pattern::P1, Raid::Raid1, 3, &[])
            .own_groups(Raid::Raid1, 2)
            .stream(ASSET, 3, false)
            .build();
        (site, layout)
    }

    #[test]
    fn the_lab_model_predicts_what_the_fixture_built_model_did() {
        for nodes in [3, 5] {
            for sync in [SyncMode::Interval(120), SyncMode::Always] {
                let (s1, l1) = model_of_lab(nodes, sync);
                let (s2, l2) = with_fixture(nodes, sync);
                assert_eq!(s1.servers.len(), s2.servers.len());
                assert_eq!(l1.servers, l2.servers);
                assert_eq!(l1.luns.len(), l2.luns.len());
                let shape = |l: &Layout| {
                    l.groups
                        .iter()
                        .map(|g| (g.array, g.raid, g.disks.clone()))
                        .collect::<Vec<_>>()
                };
                assert_eq!(shape(&l1), shape(&l2));
                // The same word on every scenario shape the runner asks about.
                let n = |i: usize| format!("n{i}");
                let mut cases: Vec<Vec<String>> = vec![vec![]];
                for kind in ["process", "pause", "server", "wipe", "full"] {
                    cases.push(vec![format!("{kind}:n1")]);
                }
                cases.push(vec!["process:n1".into(), "process:n2".into()]);
                cases.push((1..=nodes).map(|i| format!("process:{}", n(i))).collect());
                cases.push((1..=nodes).map(|i| format!("power:r{i}")).collect());
                cases.push(vec!["net:r1".into()]);
                let peers = vec![n(1), n(2), n(3)];
                let (p1, p2) = (
                    pin_test_stream(&s1, &l1, &peers).unwrap(),
                    pin_test_stream(&s2, &l2, &peers).unwrap(),
                );
                for c in &cases {
                    let steps = vec![c.clone()];
                    assert_eq!(
                        predict(&s1, &p1, &steps).unwrap(),
                        predict(&s2, &p2, &steps).unwrap(),
                        "{nodes} nodes, {sync}: {c:?}"
                    );
                }
            }
        }
    }
}
