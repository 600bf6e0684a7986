//! Sites and layouts built in code, for tests, property tests and benches of `survival` (which must not
//! depend on the layout enumerator to check its own arithmetic). Not part of the user-facing API.

use crate::layout::{Asset, AssetKind, Layout, Lun, PlacementRule, Raid, ReplicaSet, VolumeGroup};
use crate::site::{
    Array, Compression, NatsSettings, Pattern, Policy, Rack, Server, ServerIdx, Site, Tolerance, Workload,
};
use crate::units::{SyncMode, YEAR_S};

/// One rack: name, servers, shared arrays (name, disks).
pub struct RackSpec<'a> {
    pub name: &'a str,
    pub servers: Vec<&'a str>,
    pub arrays: Vec<(&'a str, u32)>,
}

/// A site from racks; arrays are EF600s of 3.84 TB NVMe with one hot spare each.
pub fn site(racks: &[RackSpec], sync: SyncMode) -> Site {
    let mut s = Site {
        name: "fixture".into(),
        nats: NatsSettings {
            replicas: vec![3],
            sync,
            compression: Compression::None,
            compression_ratio: 1.0,
            cluster_name: "natsplan".into(),
            max_ha_assets: None,
        },
        racks: Vec::new(),
        servers: Vec::new(),
        arrays: Vec::new(),
        workload: Workload::default(),
        policy: Policy {
            patterns: Pattern::ALL.to_vec(),
            wear_headroom: 0.15,
            hot_spares_per_array: 1,
            min_tolerated: Tolerance::default(),
            min_tolerated_meta: false,
            growth: 0.0,
            horizon_s: YEAR_S,
            fs_reserve: 0.05,
            store_headroom: 0.1,
            baselines: false,
        },
        failure_rates: Vec::new(),
        repair_times: Vec::new(),
        maintenance: Vec::new(),
    };
    for (ri, r) in racks.iter().enumerate() {
        s.racks.push(Rack {
            name: r.name.into(),
            power_feeds: 2,
            uplinks: 2,
            pdus: Vec::new(),
        });
        for name in &r.servers {
            s.servers.push(Server {
                name: (*name).into(),
                rack: ri,
                host: None,
                pdu: None,
                model: "generic-16c".into(),
                internal: None,
            });
        }
        for (name, disks) in &r.arrays {
            s.arrays.push(Array {
                name: (*name).into(),
                rack: ri,
                model: "EF600".into(),
                disk_model: "nvme-3.84t".into(),
                disks: *disks,
                disk_size_bytes: None,
                hot_spares: 1,
                write_cache: true,
                owner: None,
                host: None,
                raid: None,
                existing: false,
                reserved_drives: None,
            });
        }
    }
    s
}

/// Builds a layout by hand: groups on arrays (disk slots allocated from 1), LUNs, assets.
pub struct LayoutBuilder<'a> {
    site: &'a Site,
    layout: Layout,
    next_slot: Vec<u32>,
}

impl<'a> LayoutBuilder<'a> {
    /// A layout with the named JetStream servers (all site servers when empty).
    pub fn new(site: &'a Site, pattern: Pattern, raid: Raid, replicas: u8, servers: &[&str]) -> LayoutBuilder<'a> {
        let servers: Vec<ServerIdx> = if servers.is_empty() {
            (0..site.servers.len()).collect()
        } else {
            servers.iter().map(|n| server_idx(site, n)).collect()
        };
        LayoutBuilder {
            site,
            layout: Layout {
                id: format!("fixture-{}-r{replicas}", pattern.id_tag()),
                pattern,
                raid,
                replicas,
                servers,
                groups: Vec::new(),
                luns: Vec::new(),
                spares: Vec::new(),
                placement: PlacementRule::Free,
                assets: Vec::new(),
                problems: Vec::new(),
            },
            next_slot: vec![1; site.arrays.len()],
        }
    }

    /// Continue building on an existing layout.
    pub fn from_layout(site: &'a Site, layout: Layout) -> LayoutBuilder<'a> {
        let mut next_slot = vec![1; site.arrays.len()];
        for g in &layout.groups {
            let top = g.disks.iter().copied().max().unwrap_or(0) + 1;
            next_slot[g.array] = next_slot[g.array].max(top);
        }
        LayoutBuilder {
            site,
            layout,
            next_slot,
        }
    }

    /// A volume group of `disks` disks on `array`; returns its index.
    pub fn group(&mut self, array: &str, raid: Raid, disks: u32) -> usize {
        let a = self
            .site
            .arrays
            .iter()
            .position(|x| x.name == array)
            .unwrap_or_else(|| panic!("fixture: no array {array}"));
        let first = self.next_slot[a];
        self.next_slot[a] += disks;
        assert!(
            self.next_slot[a] - 1 <= self.site.arrays[a].disks,
            "fixture: array {array} has too few disks"
        );
        self.layout.groups.push(VolumeGroup {
            name: format!("{array}-vg{}", self.layout.groups.len() + 1),
            array: a,
            raid,
            disks: (first..first + disks).collect(),
            usable_bytes: 1 << 40,
        });
        if !self.layout.spares.iter().any(|(x, _)| *x == a) {
            self.layout.spares.push((a, self.site.arrays[a].hot_spares));
        }
        self.layout.groups.len() - 1
    }

    pub fn lun(&mut self, server: &str, group: usize) -> &mut Self {
        let s = server_idx(self.site, server);
        self.layout.luns.push(Lun {
            group,
            server: s,
            size_bytes: 1 << 40,
        });
        self
    }

    /// Pattern 1/2: every JetStream server gets its own group of `disks` disks on the first array of its
    /// rack that still has room.
    pub fn own_groups(mut self, raid: Raid, disks: u32) -> Self {
        for s in self.layout.servers.clone() {
            let rack = self.site.servers[s].rack;
            let a = self
                .site
                .rack_arrays(rack)
                .find(|&a| self.next_slot[a] + disks - 1 <= self.site.arrays[a].disks - self.site.arrays[a].hot_spares)
                .unwrap_or_else(|| panic!("fixture: no room for a group in rack {}", self.site.racks[rack].name));
            let name = self.site.arrays[a].name.clone();
            let g = self.group(&name, raid, disks);
            let sname = self.site.servers[s].name.clone();
            self.lun(&sname, g);
        }
        self
    }

    /// Pattern 3: one group of `disks` disks on `array`, one LUN per JetStream server on it.
    pub fn shared_group(mut self, array: &str, raid: Raid, disks: u32) -> Self {
        let g = self.group(array, raid, disks);
        for s in self.layout.servers.clone() {
            let sname = self.site.servers[s].name.clone();
            self.lun(&sname, g);
        }
        self
    }

    /// A stream free to land on any JetStream server (or one per rack with `unique_rack`).
    pub fn stream(mut self, name: &str, replicas: u8, unique_rack: bool) -> Self {
        if unique_rack {
            self.layout.placement = PlacementRule::UniqueTag { prefix: "rack:".into() };
        }
        let cands = self.layout.servers.clone();
        self.push(Asset {
            unique_rack,
            ..asset(name, AssetKind::Stream, replicas, cands)
        });
        self
    }

    /// A stream pinned to a set of servers.
    pub fn pinned(mut self, name: &str, set: &str, servers: &[&str]) -> Self {
        let cands: Vec<ServerIdx> = servers.iter().map(|n| server_idx(self.site, n)).collect();
        match &mut self.layout.placement {
            PlacementRule::Pinned { sets } => {
                if !sets.iter().any(|s| s.name == set) {
                    sets.push(ReplicaSet {
                        name: set.into(),
                        servers: cands.clone(),
                    })
                }
            }
            p => {
                *p = PlacementRule::Pinned {
                    sets: vec![ReplicaSet {
                        name: set.into(),
                        servers: cands.clone(),
                    }],
                }
            }
        }
        let r = cands.len() as u8;
        self.push(Asset {
            set: Some(set.into()),
            ..asset(name, AssetKind::Stream, r, cands)
        });
        self
    }

    /// A durable consumer of stream `parent` (its candidates are left empty on purpose: survival must take
    /// them from the stream).
    pub fn consumer(mut self, name: &str, parent: &str) -> Self {
        let r = self
            .layout
            .assets
            .iter()
            .find(|a| &*a.name == parent)
            .map(|a| a.replicas)
            .unwrap_or(3);
        self.push(Asset {
            parent: Some(parent.into()),
            ..asset(name, AssetKind::Consumer, r, Vec::new())
        });
        self
    }

    /// Add asset `a`, its expected servers placed like the emulated meta leader: the first eligible
    /// servers, on distinct racks when required.
    fn push(&mut self, mut a: Asset) {
        let mut expected: Vec<ServerIdx> = Vec::new();
        for &c in a.candidates.iter() {
            if expected.len() == a.replicas as usize {
                break;
            }
            if !a.unique_rack
                || expected
                    .iter()
                    .all(|&e| self.site.servers[e].rack != self.site.servers[c].rack)
            {
                expected.push(c);
            }
        }
        a.expected = expected.into();
        self.layout.assets.push(a);
    }

    pub fn build(self) -> Layout {
        self.layout
    }
}

/// An asset with no rack rule, set or parent, placed nowhere yet.
fn asset(name: &str, kind: AssetKind, replicas: u8, candidates: Vec<ServerIdx>) -> Asset {
    Asset {
        name: name.into(),
        kind,
        replicas,
        candidates: candidates.into(),
        unique_rack: false,
        set: None,
        parent: None,
        parent_at: None,
        spec: None,
        bytes_per_replica: 1e9,
        expected: Vec::<ServerIdx>::new().into(),
    }
}

fn server_idx(site: &Site, name: &str) -> ServerIdx {
    site.servers
        .iter()
        .position(|s| s.name == name)
        .unwrap_or_else(|| panic!("fixture: no server {name}"))
}

/// A large site for benches: `racks` racks, each with `servers_per_rack` servers and `arrays_per_rack`
/// arrays of `disks` disks; pattern 1 RAID 1 (2-disk groups) per server; `streams` R3 streams with rack
/// uniqueness and one consumer each.
pub fn large(
    racks: usize,
    servers_per_rack: usize,
    arrays_per_rack: usize,
    disks: u32,
    streams: usize,
) -> (Site, Layout) {
    let names: Vec<(String, Vec<String>, Vec<String>)> = (0..racks)
        .map(|r| {
            (
                format!("R{r}"),
                (0..servers_per_rack).map(|i| format!("n{r}-{i}")).collect(),
                (0..arrays_per_rack).map(|i| format!("A{r}-{i}")).collect(),
            )
        })
        .collect();
    let specs: Vec<RackSpec> = names
        .iter()
        .map(|(r, s, a)| RackSpec {
            name: r,
            servers: s.iter().map(|x| x.as_str()).collect(),
            arrays: a.iter().map(|x| (x.as_str(), disks)).collect(),
        })
        .collect();
    let site = site(&specs, SyncMode::Interval(120));
    let mut b = LayoutBuilder::new(&site, Pattern::P1, Raid::Raid1, 3, &[]).own_groups(Raid::Raid1, 2);
    for i in 0..streams {
        b = b.stream(
            &format!("s{i}"),
            if i % 5 == 0 { 5.min(racks as u8) } else { 3 },
            i % 2 == 0,
        );
        b = b.consumer(&format!("s{i}-c"), &format!("s{i}"));
    }
    let layout = b.build();
    (site, layout)
}

/// Set the permanent losses of racks and arrays (issue 32) to zero, for tests of what other failures do:
/// at their catalog rates they dominate a one-rack layout's unavailability and data loss.
pub fn without_permanent_losses(site: &mut Site) {
    site.failure_rates
        .retain(|(k, _)| k != "rack_lost_per_year" && k != "array_lost_per_year");
    site.failure_rates.push(("rack_lost_per_year".into(), 0.0));
    site.failure_rates.push(("array_lost_per_year".into(), 0.0));
}

/// Add a stream of `msgs_per_s` 1 KiB messages kept a day to the site's workload (for rate-based figures).
pub fn add_stream(site: &mut Site, name: &str, msgs_per_s: f64) {
    site.workload.streams.push(crate::site::StreamSpec {
        name: name.into(),
        msgs_per_s,
        msg_size_bytes: 1024,
        subject_bytes: 32,
        retention_s: 86_400.0,
        replicas: None,
        consumers: 0,
        max_bytes: None,
        subjects: Vec::new(),
    });
}
