//! The site's servers a layout leaves out of JetStream, each with what to do with it: a `standby` can take
//! over a failed server's LUN on an array the layout uses (re-attach, seed 003's faster recovery shape), a
//! `spare` has storage of its own the layout does not need (a later JetStream server, or a replacement
//! under a new `server_name`), and a `core-only` server has no storage at all (run nats-server without
//! JetStream: it routes and serves clients).

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
}

/// The servers of the site the layout leaves out, in site order.
pub fn unused_servers(site: &Site, layout: &Layout) -> Vec<UnusedServer> {
    let used_arrays: Vec<usize> = layout.groups.iter().map(|g| g.array).collect();
    (0..site.servers.len())
        .filter(|s| !layout.servers.contains(s))
        .map(|s| {
            let srv = &site.servers[s];
            let rack_arrays: Vec<usize> = site.rack_arrays(srv.rack).collect();
            let shared: Vec<String> = rack_arrays
                .iter()
                .filter(|a| used_arrays.contains(a))
                .map(|&a| site.arrays[a].name.clone())
                .collect();
            let role = if !shared.is_empty() {
                UnusedRole::Standby
            } else if srv.internal.is_some() || !rack_arrays.is_empty() {
                UnusedRole::Spare
            } else {
                UnusedRole::CoreOnly
            };
            UnusedServer {
                name: srv.name.clone(),
                role,
                arrays: shared,
            }
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
    }
}
