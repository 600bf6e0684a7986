//! The site's servers a layout leaves out of JetStream, each with what to do with it: a `standby` can take
//! over a failed server's LUN on an array the layout uses (re-attach, seed 003's faster recovery shape), a
//! `spare` has storage of its own the layout does not need (a later JetStream server, or a replacement
//! under a new `server_name`), and a `core-only` server has no storage at all (run nats-server without
//! JetStream: it routes and serves clients). Beside them, the installed data disks of the arrays the
//! layout uses that none of its volume groups takes (`idle_disks`).

use crate::layout::Layout;
use crate::site::Site;
use serde::Serialize;

/// What to do with a server the layout does not make a JetStream server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnusedRole {
    /// Shares an array the layout uses: keep it ready to attach a failed server's LUN.
    Standby,
    /// Has storage the layout does not use (internal disks, or an array no JetStream server uses).
    Spare,
    /// No storage of its own or in its rack: nats-server without JetStream.
    CoreOnly,
}

impl UnusedRole {
    pub fn as_str(self) -> &'static str {
        match self {
            UnusedRole::Standby => "standby",
            UnusedRole::Spare => "spare",
            UnusedRole::CoreOnly => "core-only",
        }
    }
}

/// A site server outside the layout's JetStream servers (`layouts[].unused_servers`).
#[derive(Debug, Clone, Serialize)]
pub struct UnusedServer {
    pub name: String,
    pub role: UnusedRole,
    /// For a standby: the arrays in its rack whose LUNs it could take over.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arrays: Vec<String>,
    /// For a standby: what it would take over from a failed server on those arrays — LUNs on a shared
    /// array, RAID 1 volumes on a DDP pool, VM disks on its own host's pool — so the report says what
    /// to attach (not in the JSON: `arrays` names them).
    #[serde(skip)]
    pub takes_over: Vec<crate::layout::VolumeKind>,
}

/// The servers of the site the layout leaves out, in site order. A standby shares an array the layout
/// uses and could attach a failed server's volume from it: a shared array of its rack, or the pool of the
/// hypervisor host it runs on. Another server's internal disks (or another host's pool) are no volume it
/// could take over, so they make no standby.
pub fn unused_servers(site: &Site, layout: &Layout) -> Vec<UnusedServer> {
    use crate::layout::VolumeKind;
    let used_arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
    (0..site.servers.len())
        .filter(|s| !layout.servers.contains(s))
        .map(|s| {
            let srv = &site.servers[s];
            let rack_arrays: Vec<usize> = site.rack_arrays(srv.rack).collect();
            // Arrays whose volumes this server could be given: shared ones, and its own host's pool.
            let attachable = |a: usize| {
                let arr = &site.arrays[a];
                arr.owner.is_none()
                    && match (arr.host.as_deref(), srv.host.as_deref()) {
                        (None, _) => true,
                        (Some(h), Some(mine)) => h.eq_ignore_ascii_case(mine),
                        (Some(_), None) => false,
                    }
            };
            let standby: Vec<usize> = rack_arrays
                .iter()
                .copied()
                .filter(|&a| attachable(a) && used_arrays.contains(&a))
                .collect();
            let mut takes_over: Vec<VolumeKind> = Vec::new();
            for k in standby.iter().map(|&a| {
                let arr = &site.arrays[a];
                if arr.host.is_some() {
                    VolumeKind::VmDisk
                } else if layout
                    .groups
                    .iter()
                    .any(|g| g.array == a && g.raid == crate::layout::Raid::DdpRaid1)
                {
                    VolumeKind::PoolVolume
                } else {
                    VolumeKind::Lun
                }
            }) {
                if !takes_over.contains(&k) {
                    takes_over.push(k);
                }
            }
            let own_storage = srv.internal.is_some() || rack_arrays.iter().any(|&a| attachable(a));
            let role = if !standby.is_empty() {
                UnusedRole::Standby
            } else if own_storage {
                UnusedRole::Spare
            } else {
                UnusedRole::CoreOnly
            };
            UnusedServer {
                name: srv.name.clone(),
                role,
                arrays: standby.iter().map(|&a| site.arrays[a].name.clone()).collect(),
                takes_over,
            }
        })
        .collect()
}

/// Installed data disks of an array the layout uses that no volume group of the layout takes
/// (`layouts[].idle_disks`): the fewest-disks choice of pattern 1 on a large array, say. Hot spares are not
/// idle disks (they are kept for rebuilds), nor are the disks of arrays the layout does not use (their
/// servers are in `unused_servers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdleDisks {
    pub array: String,
    /// The array's data disks: `disks` less the hot spares it keeps (none on a DDP pool).
    pub data_disks: u32,
    /// The idle disks' numbers, as the layout's groups number the array's disks (1 = the first).
    pub disks: Vec<u32>,
}

/// The idle data disks of every array the layout uses, arrays by name.
pub fn idle_disks(site: &Site, layout: &Layout) -> Vec<IdleDisks> {
    let mut arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
    arrays.sort_by_key(|&a| site.arrays[a].name.to_ascii_lowercase());
    arrays.dedup();
    arrays
        .into_iter()
        .filter_map(|a| {
            let arr = &site.arrays[a];
            let on: Vec<&crate::layout::VolumeGroup> = layout.groups.iter().filter(|g| g.array == a).collect();
            // A DDP pool keeps reserve capacity instead of hot spares (layout::build, `keep_spares`).
            let spares = if on.iter().any(|g| g.raid == crate::layout::Raid::DdpRaid1) {
                0
            } else {
                arr.hot_spares
            };
            let data = arr.disks.saturating_sub(spares);
            let idle: Vec<u32> = (1..=data).filter(|d| !on.iter().any(|g| g.disks.contains(d))).collect();
            (!idle.is_empty()).then(|| IdleDisks {
                array: arr.name.clone(),
                data_disks: data,
                disks: idle,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::catalog::Catalog;

    #[test]
    fn left_out_servers_get_a_role() {
        let cat = Catalog::builtin();
        let yaml = "site: t\nnats: { replicas: [3] }\nracks:\n\
            - name: A\n  servers: [a1, a2]\n  arrays:\n    - { name: A1, model: EF300, disk_model: nvme-1.92t, disks: 3, hot_spares: 1 }\n\
            - name: B\n  servers: [b1]\n  arrays:\n    - { name: B1, model: EF300, disk_model: nvme-1.92t, disks: 3, hot_spares: 1 }\n\
            - name: C\n  servers: [c1, c2]\n  arrays:\n    - { name: C1, model: EF300, disk_model: nvme-1.92t, disks: 3, hot_spares: 1 }\n\
            - name: D\n  servers: [d1]\n";
        let site = crate::site::parse_str(yaml, "t.yaml", &cat).expect("a valid site");
        let plan = crate::plan::build(&site, &cat);
        let l = plan
            .layouts
            .iter()
            .find(|l| l.servers.len() == 3)
            .expect("a three-server layout");
        let roles: Vec<(&str, &str)> = l
            .unused_servers
            .iter()
            .map(|u| (u.name.as_str(), u.role.as_str()))
            .collect();
        // One JetStream server per rack A, B, C; the second servers of A and C share the arrays used.
        assert!(roles.contains(&("d1", "core-only")), "{roles:?}");
        assert_eq!(roles.len(), 3, "{roles:?}");
        assert_eq!(roles.iter().filter(|(_, r)| *r == "standby").count(), 2, "{roles:?}");
        assert!(l
            .unused_servers
            .iter()
            .filter(|u| u.role.as_str() == "standby")
            .all(|u| u.takes_over == [crate::layout::VolumeKind::Lun]));
    }

    #[test]
    fn a_left_out_guest_takes_over_a_vm_disk_and_internal_disks_make_no_standby() {
        // The vm-host-pools example: nats-a2 shares host hv-a's pool with nats-a1, so it could be given
        // a failed guest's VM disk (not a LUN). In rack B, b2 stands beside b1's internal disks: no volume
        // it could take over (it used to be a standby "attaching b1's LUN"); it has no storage at all.
        let cat = Catalog::builtin();
        let text = include_str!("../../examples/vm-host-pools.yaml");
        let site = crate::site::parse_str(text, "vm-host-pools.yaml", &cat).unwrap();
        let plan = crate::plan::build(&site, &cat);
        let l = &plan.layouts[0];
        let a2 = l
            .unused_servers
            .iter()
            .find(|u| u.name == "nats-a2")
            .expect("nats-a2 left out");
        assert_eq!(a2.role.as_str(), "standby");
        assert_eq!(a2.takes_over, [crate::layout::VolumeKind::VmDisk]);

        let yaml = "site: t\nnats: { replicas: [3] }\nracks:\n\
            - name: A\n  servers: [a1]\n  arrays:\n    - { name: A1, model: EF300, disk_model: nvme-1.92t, disks: 3, hot_spares: 1 }\n\
            - name: B\n  servers:\n    - name: b1\n      disks: { disk_model: nvme-1.92t, count: 2, raid: raid1 }\n    - b2\n\
            - name: C\n  servers: [c1]\n  arrays:\n    - { name: C1, model: EF600, disk_model: nvme-1.92t, disks: 12, raid: ddp }\n";
        let site = crate::site::parse_str(yaml, "t.yaml", &cat).expect("a valid site");
        let plan = crate::plan::build(&site, &cat);
        let l = plan
            .layouts
            .iter()
            .find(|l| l.servers.iter().any(|s| s.name == "b1"))
            .expect("a layout using b1's internal disks");
        let b2 = l.unused_servers.iter().find(|u| u.name == "b2").expect("b2 left out");
        assert_eq!(b2.role.as_str(), "core-only", "{b2:?}");
        assert!(b2.arrays.is_empty() && b2.takes_over.is_empty());
    }
}
