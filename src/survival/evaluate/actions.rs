//! What the operator must do after a scenario, in order: `Model::actions`. Moved out of evaluate.rs whole.

use super::*;

impl Model<'_> {
    /// What the operator must do, in order: bring domains back, replace destroyed volumes and re-home their
    /// peers, restore lost assets.
    pub(super) fn actions(&self, sc: &Scenario, eff: &[ServerEffect]) -> Vec<String> {
        let site = self.site;
        let mut out = Vec::new();
        let unplaced: Vec<&str> = sc
            .assets
            .iter()
            .filter(|a| a.not_placed.is_some() && !a.kind.is_consumer())
            .map(|a| a.name.as_str())
            .collect();
        if !unplaced.is_empty() {
            out.push(format!(
                "{} cannot be created on this layout (more replicas than eligible servers): unavailable whatever \
                 fails; choose a layout that places every asset (natsplan design)",
                lead_list(&unplaced)
            ));
        }
        for d in &sc.failed {
            if let Some(what) = domain_action(d) {
                out.push(what);
            }
        }
        for g in &sc.groups {
            out.push(self.group_action(g));
        }
        let _ = eff;
        let when = match sc.meta.status {
            Status::Unavailable => "once the meta group has its quorum back (peer-remove answers 10008 without it), ",
            Status::DataLost => {
                "after a meta rescue (nats-server ≥ 2.15: $JS.API.META.RESCUE from the system account), "
            }
            _ => "",
        };
        for &s in &sc.destroyed {
            out.push(format!(
                "{when}`nats server cluster peer-remove {}` (as a system-account user), then start it on a fresh \
                 store under a new server_name with the same tags; replicas that survive elsewhere catch up",
                site.servers[s].name
            ));
        }
        if !sc.meta.status.writable() {
            out.push(API_DOWN.into());
        }
        restore_actions(sc, &mut out);
        out
    }

    /// What to do about a disk group with failed disks: re-create its volumes when destroyed, else replace
    /// the disks while it rebuilds.
    fn group_action(&self, g: &GroupEffect) -> String {
        let disks: Vec<String> = g.failed_disks.iter().map(|n| n.to_string()).collect();
        let pairs = |v: &[[u32; 2]]| {
            v.iter()
                .map(|p| format!("({},{})", p[0], p[1]))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let why = if g.lost_pairs.is_empty() {
            String::new()
        } else {
            format!("; mirror pair {} lost both disks", pairs(&g.lost_pairs))
        };
        let pool = self
            .layout
            .groups
            .iter()
            .find(|x| x.name == g.group)
            .is_some_and(|x| crate::survival::repair::is_pool(x.raid));
        if g.destroyed && pool {
            format!(
                "the RAID 1 volumes on pool {} are destroyed (disks {} failed within one reconstruction): \
                 re-create them on the pool, then a filesystem on each",
                g.group,
                disks.join(", ")
            )
        } else if g.destroyed {
            format!(
                "volume group {} is destroyed (disks {} failed{why}): build a new group, new LUN and filesystem",
                g.group,
                disks.join(", ")
            )
        } else if pool {
            format!(
                "pool {} degraded (disks {} failed): it reconstructs into its preservation capacity at once, \
                 while serving; replace the drives",
                g.group,
                disks.join(", ")
            )
        } else {
            let held = if g.pairs.is_empty() {
                String::new()
            } else {
                format!("; every mirror pair of {} still has a disk", pairs(&g.pairs))
            };
            format!(
                "volume group {} degraded (disks {} failed{held}): rebuild while serving; replace the disks",
                g.group,
                disks.join(", ")
            )
        }
    }
}

/// What to do about one failed domain, in words (a failed disk or a wiped store is said with its group or
/// its server).
fn domain_action(d: &Domain) -> Option<String> {
    Some(match d.kind {
        DomainKind::Disk => return None,
        DomainKind::Wipe => return None,
        DomainKind::Process => format!("wait for {d}: nats-server restarts (systemd) and catches up"),
        DomainKind::Pause => format!("wait for {d} to resume; it steps down if it was leader and catches up"),
        DomainKind::Server => format!(
            "wait for {d} to reboot; after an OS crash with delayed sync, prefer to peer-remove it and \
             rejoin it wiped under a new server_name (NATS docs, Jepsen #7564)"
        ),
        DomainKind::Full => format!(
            "free space for {d} (raise max_file_store or purge), then restart nats-server on its servers: {}",
            crate::survival::recovery::FULL_DISK_RESTART_WHY
        ),
        DomainKind::Array => format!("wait for {d}: controllers repaired; hosts re-scan their LUNs"),
        DomainKind::Power => format!("wait for {d}: power restored, servers boot and catch up"),
        DomainKind::Net => format!("wait for {d}: uplinks restored; servers reconnect and catch up"),
        DomainKind::Rack => format!("wait for {d}: power and uplinks restored"),
        DomainKind::Host => format!("wait for {d}: the shared host reboots with its NATS VMs"),
        DomainKind::Pdu => format!("wait for {d}: power restored to the servers it feeds"),
        DomainKind::LostRack => format!(
            "{d}: the rack and every store in it are gone for good; peer-remove its servers now so \
             streams re-form on the survivors, then rebuild the rack"
        ),
        DomainKind::LostArray => format!(
            "{d}: every volume on the array is gone for good; repair the array, build new groups and \
             volumes"
        ),
    })
}

/// Restore what no replica survives, re-form what one does, and reconcile producers after acknowledged
/// writes were lost.
fn restore_actions(sc: &Scenario, out: &mut Vec<String>) {
    // Restore from backup only what no replica survives; a surviving replica re-forms the asset once
    // the destroyed peers are peer-removed (confirmed live on nats-server 2.15.1; issue 32).
    let lost: Vec<&str> = sc
        .assets
        .iter()
        .filter(|a| a.status == Status::DataLost && a.loss == Some("total"))
        .map(|a| a.name.as_str())
        .collect();
    let tail: Vec<&str> = sc
        .assets
        .iter()
        .filter(|a| a.status == Status::DataLost && a.loss == Some("tail"))
        .map(|a| a.name.as_str())
        .collect();
    if sc.meta.status == Status::DataLost {
        out.push(
            "the meta group lost a quorum of its peers for good: rescue it (nats-server ≥ 2.15) or rebuild the \
             cluster and restore stream and consumer definitions from backup"
                .into(),
        );
    }
    if !lost.is_empty() {
        out.push(format!(
            "restore from backup (no replica survives): {}",
            lead_list(&lost)
        ));
    }
    if !tail.is_empty() {
        out.push(format!(
            "{}: a replica survives; `nats stream cluster peer-remove STREAM PEER` each destroyed peer (an \
             account-level API: the application's credentials do) and the asset re-forms on the survivor \
             with what it holds: only the acknowledged tail it had not received is lost",
            lead_list(&tail)
        ));
    }
    if sc.any_acked_loss_risk() {
        out.push(
            "acknowledged writes of the last sync window may be gone: reconcile producers; sync_interval: always \
             closes this window"
                .into(),
        );
    }
}

/// A short list of names: up to 8, then a count.
fn lead_list(names: &[&str]) -> String {
    if names.len() <= 8 {
        names.join(", ")
    } else {
        format!("{} and {} more", names[..8].join(", "), names.len() - 8)
    }
}
