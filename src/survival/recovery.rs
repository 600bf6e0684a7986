//! Recovery after a scenario, step by step with times (catalog repair times, overridable in the site), and
//! the load the surviving servers inherit (leaders and replication traffic, as Cruise Control's
//! PotentialNwOutGoal sizes for the case where a server leads everything it holds).

use super::domain::DomainKind;
use super::evaluate::{Model, Scenario};
use crate::catalog::Catalog;
use crate::layout::{AssetKind, Raid};
use crate::site::{ServerIdx, Site};
use serde::Serialize;

/// Sequential read rate of a restart after an unclean stop: seed 000 saw about 1 GiB/s per server.
pub const RESTART_READ_BYTES_PER_S: f64 = 1024.0 * 1024.0 * 1024.0;

/// Record overhead per stored message (DESIGN.md capacity formula).
const RECORD_OVERHEAD_BYTES: f64 = 30.0;

/// One recovery step.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// What the step recovers (a failed domain, a destroyed server, a degraded group); steps of one chain
    /// run one after another, chains run in parallel.
    pub chain: String,
    pub what: String,
    pub seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Recovery {
    pub steps: Vec<Step>,
    /// Until every failed domain is back and every replica and RAID group is whole again: the longest chain.
    pub total_s: f64,
    /// Faster ways that need a standby server or an operator decision.
    pub alternatives: Vec<Step>,
}

/// A surviving server's load before and after the scenario (expected placement).
#[derive(Debug, Clone, Serialize)]
pub struct SurvivorLoad {
    pub server: String,
    /// Leaders it holds (fractional: leadership of an asset is shared evenly over its replicas on average).
    pub leaders_before: f64,
    pub leaders_after: f64,
    /// Client writes its leaders take in.
    pub leader_in_bytes_per_s_before: f64,
    pub leader_in_bytes_per_s_after: f64,
    /// If it led every asset it holds a replica of: ingest × (R − 1) out to followers.
    pub potential_out_bytes_per_s: f64,
    pub nic_bytes_per_s: f64,
}

/// A repair time in seconds: the site's override, else the catalog's.
pub fn repair_s(site: &Site, catalog: &Catalog, key: &str) -> f64 {
    site.repair_times
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
        .unwrap_or_else(|| catalog.failures.repair_s(key))
}

/// Client write bytes per second into an asset (consumers: their acks are negligible).
pub fn asset_in_bytes_per_s(site: &Site, name: &str, kind: AssetKind) -> f64 {
    let w = &site.workload;
    match kind {
        AssetKind::Stream => w
            .streams
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.msgs_per_s * (s.msg_size_bytes + s.subject_bytes) as f64 + s.msgs_per_s * RECORD_OVERHEAD_BYTES)
            .unwrap_or(0.0),
        AssetKind::Kv => w
            .kv
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.puts_per_s * (k.value_size_bytes + k.key_bytes) as f64 + k.puts_per_s * RECORD_OVERHEAD_BYTES)
            .unwrap_or(0.0),
        AssetKind::ObjectStore => w
            .object_stores
            .iter()
            .find(|o| o.name == name)
            .map(|o| o.puts_per_s * o.object_size_bytes as f64)
            .unwrap_or(0.0),
        AssetKind::Consumer => 0.0,
    }
}

/// Bytes a server holds under the expected placement.
fn server_bytes(model: &Model, s: ServerIdx) -> f64 {
    model
        .layout
        .assets
        .iter()
        .filter(|a| a.expected.contains(&s))
        .map(|a| a.bytes_per_replica)
        .sum()
}

fn nic_bytes_per_s(site: &Site, catalog: &Catalog, s: ServerIdx) -> f64 {
    catalog
        .server(&site.servers[s].model)
        .map(|m| m.nic_bits_per_s / 8.0)
        .unwrap_or(1.25e9)
}

/// Sequential read and write rates of the array holding a server's volume.
fn array_rates(model: &Model, catalog: &Catalog, s: ServerIdx) -> (f64, f64) {
    model
        .array_of(s)
        .and_then(|a| catalog.array(&model.site.arrays[a].model))
        .map(|m| (m.read_bw_bytes_per_s, m.write_bw_bytes_per_s))
        .unwrap_or((RESTART_READ_BYTES_PER_S, RESTART_READ_BYTES_PER_S))
}

fn reread_s(model: &Model, catalog: &Catalog, s: ServerIdx) -> f64 {
    let (read, _) = array_rates(model, catalog, s);
    server_bytes(model, s) / RESTART_READ_BYTES_PER_S.min(read).max(1.0)
}

fn catch_up_s(model: &Model, catalog: &Catalog, s: ServerIdx) -> f64 {
    let (_, write) = array_rates(model, catalog, s);
    let rate = nic_bytes_per_s(model.site, catalog, s).min(write).max(1.0);
    server_bytes(model, s) / rate
}

/// Recovery steps for a scenario.
pub fn recovery(model: &Model, catalog: &Catalog, sc: &Scenario) -> Recovery {
    let site = model.site;
    let layout = model.layout;
    let t = |k: &str| repair_s(site, catalog, k);
    let name = |s: ServerIdx| site.servers[s].name.clone();
    let mut steps: Vec<Step> = Vec::new();
    let mut alternatives = Vec::new();
    fn push(steps: &mut Vec<Step>, chain: &str, what: String, seconds: f64) {
        steps.push(Step {
            chain: chain.to_string(),
            what,
            seconds,
        })
    }
    let (eff, _, _) = model.effects(&sc.failed);
    // The slowest re-read among the servers a domain took down without destroying their store.
    let reread_of = |di: usize| -> (f64, Option<ServerIdx>) {
        let (eff1, _, _) = model.effects(std::slice::from_ref(&sc.failed[di]));
        layout
            .servers
            .iter()
            .copied()
            .filter(|&s| eff1[s].down && !eff[s].destroyed)
            .map(|s| (reread_s(model, catalog, s), Some(s)))
            .fold((0.0, None), |a, b| if b.0 > a.0 { b } else { a })
    };
    let standby = site
        .servers
        .iter()
        .enumerate()
        .find(|(i, _)| !layout.servers.contains(i))
        .map(|(_, s)| s.name.clone());
    for (di, d) in sc.failed.iter().enumerate() {
        let chain = d.to_string();
        let (rr, slowest) = reread_of(di);
        let reread = |steps: &mut Vec<Step>| {
            if let Some(s) = slowest {
                push(
                    steps,
                    &chain,
                    format!("{} re-reads its store after the unclean stop (≈1 GiB/s)", name(s)),
                    rr,
                );
            }
        };
        match d.kind {
            DomainKind::Disk | DomainKind::Wipe => {}
            DomainKind::Process => {
                push(
                    &mut steps,
                    &chain,
                    "systemd restarts nats-server".into(),
                    t("process_restart"),
                );
                reread(&mut steps);
            }
            DomainKind::Pause => push(
                &mut steps,
                &chain,
                "resumes when the stall ends (unknown length)".into(),
                0.0,
            ),
            DomainKind::Server | DomainKind::Host => {
                push(&mut steps, &chain, "host reboots".into(), t("server_restart"));
                reread(&mut steps);
            }
            DomainKind::Full => {
                push(
                    &mut steps,
                    &chain,
                    "operator frees space or raises max_file_store".into(),
                    t("operator_response"),
                );
                push(&mut steps, &chain, "restart nats-server".into(), t("process_restart"));
                reread(&mut steps);
            }
            DomainKind::Array => {
                push(&mut steps, &chain, "controller replacement".into(), t("array_repair"));
                reread(&mut steps);
            }
            DomainKind::Power | DomainKind::Pdu => {
                push(&mut steps, &chain, "power restored".into(), t("rack_power_restore"));
                push(&mut steps, &chain, "servers boot".into(), t("server_restart"));
                reread(&mut steps);
            }
            DomainKind::Net => push(&mut steps, &chain, "uplinks restored".into(), t("rack_net_restore")),
            DomainKind::Rack => {
                push(
                    &mut steps,
                    &chain,
                    "power and uplinks restored".into(),
                    t("rack_power_restore").max(t("rack_net_restore")),
                );
                push(&mut steps, &chain, "servers boot".into(), t("server_restart"));
                reread(&mut steps);
            }
        }
        if matches!(
            d.kind,
            DomainKind::Server | DomainKind::Host | DomainKind::Power | DomainKind::Pdu | DomainKind::Rack
        ) {
            if let (Some(sb), Some(s)) = (&standby, slowest) {
                alternatives.push(Step {
                    chain: chain.clone(),
                    what: format!(
                        "re-attach {}'s LUN on standby server {sb} (same server_name), mount, re-read",
                        name(s)
                    ),
                    seconds: t("operator_response") + t("filesystem") + rr,
                });
            }
        }
    }
    // Destroyed stores: new volume where the group died, then peer-remove and rejoin under a new name.
    for &s in &sc.destroyed {
        let chain = format!("rebuild {}", name(s));
        let wiped = sc
            .failed
            .iter()
            .any(|d| d.kind == DomainKind::Wipe && d.name == site.servers[s].name);
        push(&mut steps, &chain, "operator responds".into(), t("operator_response"));
        if !wiped {
            let raid0 = model.group_of(s).is_some_and(|g| layout.groups[g].raid == Raid::Raid0);
            push(
                &mut steps,
                &chain,
                if raid0 {
                    "new RAID 0 group and volume on a hot spare".into()
                } else {
                    "new group and volume on spare disks".into()
                },
                t("raid0_new_group"),
            );
            push(&mut steps, &chain, "filesystem and mount".into(), t("filesystem"));
        }
        push(
            &mut steps,
            &chain,
            format!("`nats server cluster peer-remove {}`", name(s)),
            t("peer_remove"),
        );
        push(
            &mut steps,
            &chain,
            "rejoin under a new server_name; replicas catch up over the network".into(),
            catch_up_s(model, catalog, s),
        );
    }
    // Degraded groups rebuild onto a hot spare while serving.
    for g in sc.groups.iter().filter(|g| !g.destroyed) {
        let gi = layout.groups.iter().position(|x| x.name == g.group);
        let disk_bytes = gi
            .map(|gi| {
                let a = &site.arrays[layout.groups[gi].array];
                a.disk_size_bytes
                    .or_else(|| catalog.disk(&a.disk_model).map(|d| d.capacity_bytes))
                    .unwrap_or(0) as f64
            })
            .unwrap_or(0.0);
        let rate = repair_s(site, catalog, "rebuild_rate").max(1.0);
        push(
            &mut steps,
            &format!("group {}", g.group),
            format!("rebuild {} disk(s) onto hot spares while serving", g.failed_disks.len()),
            disk_bytes / rate,
        );
    }
    let mut chains: Vec<(String, f64)> = Vec::new();
    for s in &steps {
        match chains.iter_mut().find(|(c, _)| c == &s.chain) {
            Some((_, t)) => *t += s.seconds,
            None => chains.push((s.chain.clone(), s.seconds)),
        }
    }
    let total_s = chains.iter().map(|c| c.1).fold(0.0, f64::max);
    Recovery {
        steps,
        total_s,
        alternatives,
    }
}

/// The surviving servers' load, most loaded after the scenario first.
pub fn survivor_load(model: &Model, catalog: &Catalog, sc: &Scenario) -> Vec<SurvivorLoad> {
    let site = model.site;
    let layout = model.layout;
    let down = |s: &ServerIdx| sc.down.contains(s);
    let mut rows: Vec<SurvivorLoad> = layout
        .servers
        .iter()
        .filter(|s| !down(s))
        .map(|&s| SurvivorLoad {
            server: site.servers[s].name.clone(),
            leaders_before: 0.0,
            leaders_after: 0.0,
            leader_in_bytes_per_s_before: 0.0,
            leader_in_bytes_per_s_after: 0.0,
            potential_out_bytes_per_s: 0.0,
            nic_bytes_per_s: nic_bytes_per_s(site, catalog, s),
        })
        .collect();
    let idx: Vec<ServerIdx> = layout.servers.iter().copied().filter(|s| !down(s)).collect();
    for a in &layout.assets {
        let rate = asset_in_bytes_per_s(site, &a.name, a.kind);
        let holders = &a.expected;
        if holders.is_empty() {
            continue;
        }
        let up: Vec<ServerIdx> = holders.iter().copied().filter(|s| !down(s)).collect();
        let before = 1.0 / holders.len() as f64;
        // Without a quorum there is no leader at all.
        let after = if up.len() as u32 >= crate::layout::quorum(a.replicas as u32) && !up.is_empty() {
            1.0 / up.len() as f64
        } else {
            0.0
        };
        for &s in holders {
            if let Some(i) = idx.iter().position(|&x| x == s) {
                let r = &mut rows[i];
                r.leaders_before += before;
                r.leader_in_bytes_per_s_before += before * rate;
                if !down(&s) {
                    r.leaders_after += after;
                    r.leader_in_bytes_per_s_after += after * rate;
                    r.potential_out_bytes_per_s += rate * (a.replicas as f64 - 1.0).max(0.0);
                }
            }
        }
    }
    rows.sort_by(|a, b| {
        b.leader_in_bytes_per_s_after
            .total_cmp(&a.leader_in_bytes_per_s_after)
            .then(b.leaders_after.total_cmp(&a.leaders_after))
            .then(a.server.cmp(&b.server))
    });
    rows
}
