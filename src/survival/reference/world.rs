//! The reference's world: what the simulation needs, derived once from the site, layout and catalog —
//! drives and their mirror partners, groups and the rule that destroys each, permanent losses, spares,
//! and the asset classes (split from reference/mod.rs along that seam; the events live there).

use super::SparesBack;
use crate::catalog::{Catalog, DiskKind};
use crate::layout::{Layout, Raid};
use crate::site::Site;
use crate::units::YEAR_S;

/// The rebuild write rate of a drive (catalog key): by medium and by volume group or pool.
pub(super) fn rate_key(kind: Option<DiskKind>, pool: bool) -> &'static str {
    let hdd = kind == Some(DiskKind::NlSas);
    match (pool, hdd) {
        (false, false) => "rebuild_rate",
        (false, true) => "hdd_rebuild_rate",
        (true, false) => "pool_rebuild_rate",
        (true, true) => "hdd_pool_rebuild_rate",
    }
}

/// The site's and catalog's figures as the reference reads them: a site override wins, then the catalog.
pub(super) struct Figures<'a> {
    pub(super) site: &'a Site,
    pub(super) catalog: &'a Catalog,
    pub(super) multiplier: f64,
}

impl Figures<'_> {
    /// Events per second for a catalog rate key (per year in the files), times the multiplier.
    pub(super) fn rate(&self, key: &str) -> f64 {
        let v = self
            .site
            .failure_rates
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| self.catalog.failures.rate(key));
        v * self.multiplier / YEAR_S
    }
    /// Seconds (or bytes per second for `*_rate` keys).
    pub(super) fn time(&self, key: &str) -> f64 {
        self.site
            .repair_times
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| self.catalog.failures.repair_s(key))
            .max(1e-9)
    }
}

/// A drive of a volume group or pool.
#[derive(Debug, Clone)]
pub(super) struct Drive {
    pub(super) group: usize,
    /// Failures per second.
    pub(super) rate: f64,
    /// Its mirror partner (RAID 10, and RAID 1 over more than two drives: pairs in the group's order).
    pub(super) partner: Option<usize>,
}

/// How a group is destroyed, read from its RAID level and size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Rule {
    /// Any one failed drive (RAID 0).
    Any,
    /// Both drives of one mirror pair.
    Pair,
    /// This many drives failed and not yet rebuilt (RAID 1 of two: 2; RAID 6: 3; a pool's RAID 1: 2).
    Count(u32),
}

#[derive(Debug, Clone)]
pub(super) struct Group {
    pub(super) array: usize,
    pub(super) rule: Rule,
    pub(super) raid: Raid,
    pub(super) drives: Vec<usize>,
    /// Layout servers (slots) whose store is on this group.
    pub(super) stores: Vec<usize>,
    /// Mean seconds: one drive's rebuild, and the stores' way back after the group is destroyed (less the
    /// replacement wait, which depends on the spares left then).
    pub(super) rebuild_s: f64,
    pub(super) store_back_s: f64,
    /// Drives the group needs to be built again: its minimal destroying failures (a pool: none).
    pub(super) needs: u32,
    /// Bits read when a rebuild runs with no redundancy left, per drive read, and errors per bit.
    pub(super) bits_per_drive: f64,
    pub(super) nre: f64,
}

/// A source of permanent store loss other than drives: a server's own disks (with the server), a host's
/// pool (with the host), a rack or an array lost for good.
#[derive(Debug, Clone)]
pub(super) struct Loss {
    pub(super) rate: f64,
    pub(super) repair_s: f64,
    pub(super) stores: Vec<usize>,
}

/// The asset classes: the layout servers (slots) an asset's replicas sit on, and its replica count.
#[derive(Debug, Clone)]
pub(super) struct Class {
    pub(super) slots: Vec<usize>,
    pub(super) r: u32,
}

/// Everything the simulation needs, derived once from the site, layout and catalog.
pub(super) struct World {
    pub(super) drives: Vec<Drive>,
    pub(super) groups: Vec<Group>,
    pub(super) losses: Vec<Loss>,
    /// Spares (hot spares, or a pool's reserved drives) per array index.
    pub(super) spares: Vec<u32>,
    pub(super) replace_s: f64,
    pub(super) classes: Vec<Class>,
    /// Per asset: its class (None: no replicas placed); class 0 is the meta group.
    pub(super) asset_class: Vec<Option<usize>>,
    pub(super) slots: usize,
    pub(super) spares_back: SparesBack,
}

impl World {
    pub(super) fn new(
        site: &Site,
        layout: &Layout,
        catalog: &Catalog,
        multiplier: f64,
        spares_back: SparesBack,
    ) -> World {
        let w = Builder {
            f: Figures {
                site,
                catalog,
                multiplier,
            },
            layout,
            held: held_bytes(layout),
        };
        let mut spares = vec![0u32; site.arrays.len()];
        for &(a, n) in &layout.spares {
            spares[a] = n;
        }
        let (drives, groups) = w.drives_and_groups(&mut spares);
        let mut losses = w.server_losses();
        losses.extend(w.host_losses());
        losses.extend(w.rack_losses());
        losses.extend(w.array_losses(&groups, &spares));
        let (classes, asset_class) = w.classes();
        World {
            drives,
            groups,
            losses,
            spares,
            replace_s: w.f.time("disk_replace"),
            classes,
            asset_class,
            slots: layout.servers.len(),
            spares_back,
        }
    }
}

/// Bytes each layout server (slot) holds, for its catch-up.
fn held_bytes(layout: &Layout) -> Vec<f64> {
    let mut held = vec![0.0; layout.servers.len()];
    for a in &layout.assets {
        for &s in a.expected.iter() {
            if let Some(i) = layout.servers.iter().position(|&x| x == s) {
                held[i] += a.bytes_per_replica;
            }
        }
    }
    held
}

/// How a group of `n` drives at `raid` is destroyed, and whether its drives are mirror pairs.
fn rule_of(raid: Raid, n: usize) -> (Rule, bool) {
    let paired = raid == Raid::Raid10 || (raid == Raid::Raid1 && n > 2);
    let rule = match raid {
        Raid::Raid0 => Rule::Any,
        _ if paired => Rule::Pair,
        Raid::Raid1 | Raid::DdpRaid1 => Rule::Count(2),
        Raid::Raid6 => Rule::Count(3),
        Raid::Raid10 => Rule::Pair,
    };
    (rule, paired)
}

/// The steps of [`World::new`]: the figures, the layout and the bytes each slot holds.
struct Builder<'a> {
    f: Figures<'a>,
    layout: &'a Layout,
    held: Vec<f64>,
}

impl Builder<'_> {
    fn site(&self) -> &Site {
        self.f.site
    }

    fn slot_of(&self, s: usize) -> Option<usize> {
        self.layout.servers.iter().position(|&x| x == s)
    }

    /// Seconds a slot's store takes to catch up.
    fn catch_up(&self, slot: usize) -> f64 {
        let l = self.layout;
        self.held[slot] / crate::perf::catch_up_bytes_per_s(self.f.site, l, self.f.catalog, l.servers[slot])
    }

    /// The array a slot's store is on.
    fn array_of_slot(&self, slot: usize) -> Option<usize> {
        let l = self.layout;
        l.luns
            .iter()
            .find(|x| x.server == l.servers[slot])
            .map(|x| l.groups[x.group].array)
    }

    /// The drives and groups, in the layout's group order; a pool sets its array's spares to its
    /// preservation capacity.
    fn drives_and_groups(&self, spares: &mut [u32]) -> (Vec<Drive>, Vec<Group>) {
        let (site, catalog, layout) = (self.f.site, self.f.catalog, self.layout);
        let site_afr = site
            .failure_rates
            .iter()
            .find(|(k, _)| k == "disk_afr")
            .map(|(_, v)| *v);
        let mut drives = Vec::new();
        let mut groups = Vec::new();
        for (gi, g) in layout.groups.iter().enumerate() {
            let arr = &site.arrays[g.array];
            let dm = catalog.disk(&arr.disk_model);
            let bytes = arr.disk_size_bytes.or(dm.map(|d| d.capacity_bytes)).unwrap_or(0) as f64;
            let afr = site_afr
                .or(dm.map(|d| d.afr))
                .unwrap_or_else(|| catalog.failures.rate("disk_afr"));
            let n = g.disks.len();
            let pool = g.raid == Raid::DdpRaid1;
            if pool {
                // A pool's preservation capacity: the site's reservedDriveCount, else SANtricity's one
                // drive in six ("Create pool manually").
                spares[g.array] = arr.reserved_drives.unwrap_or(n as u32 / 6);
            }
            let (rule, paired) = rule_of(g.raid, n);
            // Mirror pairs in the group's order: (1st, 2nd), (3rd, 4th), … (ARCHITECTURE.md "RAID 10 pairs"); an odd last drive
            // has no partner.
            let first = drives.len();
            let paired_upto = n - n % 2;
            for i in 0..n {
                drives.push(Drive {
                    group: groups.len(),
                    rate: afr * self.f.multiplier / YEAR_S,
                    partner: (paired && i < paired_upto).then_some(first + (i ^ 1)),
                });
            }
            let stores: Vec<usize> = layout
                .luns
                .iter()
                .filter(|l| l.group == gi)
                .filter_map(|l| self.slot_of(l.server))
                .collect();
            let needs = match rule {
                _ if pool => 0,
                Rule::Any => 1,
                Rule::Pair => 2,
                Rule::Count(c) => c,
            };
            groups.push(Group {
                array: g.array,
                rule,
                raid: g.raid,
                drives: (first..first + n).collect(),
                rebuild_s: self.rebuild_s(g.array, g.raid, n, bytes),
                store_back_s: self.store_back_s(&stores),
                stores,
                needs,
                bits_per_drive: bytes * 8.0,
                nre: dm.map_or(0.0, |d| d.nre_per_bit),
            });
        }
        (drives, groups)
    }

    /// One drive's rebuild: its capacity at the medium's rate (a pool's into its preservation
    /// capacity), or the controller's reads at a tenth of its read bandwidth when slower (RAID 6
    /// reads n − 2 drives for each one rebuilt; a mirror one).
    fn rebuild_s(&self, array: usize, raid: Raid, n: usize, bytes: f64) -> f64 {
        let arr = &self.f.site.arrays[array];
        let dm = self.f.catalog.disk(&arr.disk_model);
        let w = self.f.time(rate_key(dm.map(|d| d.kind), raid == Raid::DdpRaid1));
        let reads = if raid == Raid::Raid6 {
            (n as f64 - 2.0).max(1.0)
        } else {
            1.0
        };
        let ctl = self
            .f
            .catalog
            .array(&arr.model)
            .map_or(f64::INFINITY, |m| m.read_bw_bytes_per_s * 0.1);
        (bytes / w).max(reads * bytes / ctl)
    }

    /// The stores' way back after their group is destroyed (less the replacement wait).
    fn store_back_s(&self, stores: &[usize]) -> f64 {
        let f = &self.f;
        let slowest = stores.iter().map(|&s| self.catch_up(s)).fold(0.0, f64::max);
        f.time("operator_response") + f.time("raid0_new_group") + f.time("filesystem") + f.time("peer_remove") + slowest
    }

    /// A server's own disks go with it; a guest's go with its host ([`Self::host_losses`]).
    fn server_losses(&self) -> Vec<Loss> {
        let site = self.site();
        let mut losses = Vec::new();
        for (slot, &s) in self.layout.servers.iter().enumerate() {
            let own = self
                .array_of_slot(slot)
                .is_some_and(|a| site.arrays[a].owner == Some(s));
            if own && site.servers[s].host.is_none() {
                losses.push(Loss {
                    rate: self.f.rate("server_afr"),
                    repair_s: self.f.time("server_replace"),
                    stores: vec![slot],
                });
            }
        }
        losses
    }

    /// A host's guests' own disks and its pool go with the host.
    fn host_losses(&self) -> Vec<Loss> {
        let (site, layout) = (self.site(), self.layout);
        let mut hosts: Vec<&str> = layout
            .servers
            .iter()
            .filter_map(|&s| site.servers[s].host.as_deref())
            .collect();
        hosts.sort_unstable();
        hosts.dedup();
        let mut losses = Vec::new();
        for h in hosts {
            let stores: Vec<usize> = (0..layout.servers.len())
                .filter(|&slot| {
                    let s = layout.servers[slot];
                    site.servers[s].host.as_deref() == Some(h)
                        && self
                            .array_of_slot(slot)
                            .is_some_and(|a| site.arrays[a].owner == Some(s) || site.arrays[a].host.is_some())
                })
                .collect();
            if !stores.is_empty() {
                losses.push(Loss {
                    rate: self.f.rate("server_afr"),
                    repair_s: self.f.time("server_replace"),
                    stores,
                });
            }
        }
        losses
    }

    /// The arrays the layout's groups are on, sorted and deduplicated.
    fn used_arrays(&self) -> Vec<usize> {
        let mut used: Vec<usize> = self.layout.groups.iter().map(|g| g.array).collect();
        used.sort_unstable();
        used.dedup();
        used
    }

    /// A rack lost for good, for each rack with servers or used arrays in it.
    fn rack_losses(&self) -> Vec<Loss> {
        let (site, layout) = (self.site(), self.layout);
        let used = self.used_arrays();
        let mut losses = Vec::new();
        for (r, _) in site.racks.iter().enumerate() {
            let stores: Vec<usize> = (0..layout.servers.len())
                .filter(|&slot| {
                    // The store is where its drives are: a shared array's rack, else the server's own.
                    let server = layout.servers[slot];
                    match self.array_of_slot(slot) {
                        Some(a) if site.arrays[a].owner != Some(server) => site.arrays[a].rack == r,
                        _ => site.servers[server].rack == r,
                    }
                })
                .collect();
            let arrays_here = used.iter().any(|&a| site.arrays[a].rack == r);
            let servers_here = layout.servers.iter().any(|&s| site.servers[s].rack == r);
            if servers_here || arrays_here {
                losses.push(Loss {
                    rate: self.f.rate("rack_lost_per_year"),
                    repair_s: self.f.time("rack_rebuild"),
                    stores,
                });
            }
        }
        losses
    }

    /// A shared array lost for good.
    fn array_losses(&self, groups: &[Group], spares: &[u32]) -> Vec<Loss> {
        let (site, f) = (self.site(), &self.f);
        let mut losses = Vec::new();
        for a in self.used_arrays() {
            let arr = &site.arrays[a];
            if arr.owner.is_some() || arr.host.is_some() {
                continue;
            }
            let mine: Vec<&Group> = groups.iter().filter(|g| g.array == a).collect();
            let back = mine.iter().map(|g| g.store_back_s).fold(0.0, f64::max);
            // Rebuilt on new drives: the replacement wait when the array keeps fewer spares than a group needs.
            let wait = if mine.iter().any(|g| g.needs > spares[a]) {
                f.time("disk_replace")
            } else {
                0.0
            };
            losses.push(Loss {
                rate: f.rate("array_lost_per_year"),
                repair_s: f.time("array_repair") + back + wait,
                stores: mine.iter().flat_map(|g| g.stores.iter().copied()).collect(),
            });
        }
        losses
    }

    /// Classes: the meta group, then each distinct (slots, R) of the assets; a consumer without its own
    /// placement sits on its stream's servers. Also each asset's class.
    fn classes(&self) -> (Vec<Class>, Vec<Option<usize>>) {
        let layout = self.layout;
        let mut classes = vec![Class {
            slots: (0..layout.servers.len()).collect(),
            r: layout.servers.len() as u32,
        }];
        let mut asset_class = Vec::with_capacity(layout.assets.len());
        for a in &layout.assets {
            let expected = if a.expected.len() == a.replicas as usize {
                Some(&a.expected)
            } else {
                a.parent_at
                    .and_then(|j| layout.assets.get(j))
                    .or_else(|| {
                        a.parent.as_deref().and_then(|p| {
                            layout
                                .assets
                                .iter()
                                .find(|x| &*x.name == p && x.kind != crate::layout::AssetKind::Consumer)
                        })
                    })
                    .map(|p| &p.expected)
                    .filter(|e| e.len() == a.replicas as usize)
            };
            let Some(e) = expected else {
                asset_class.push(None);
                continue;
            };
            let mut slots: Vec<usize> = e.iter().filter_map(|&s| self.slot_of(s)).collect();
            slots.sort_unstable();
            let c = match classes
                .iter()
                .position(|c| c.slots == slots && c.r == a.replicas as u32)
            {
                Some(c) => c,
                None => {
                    classes.push(Class {
                        slots,
                        r: a.replicas as u32,
                    });
                    classes.len() - 1
                }
            };
            asset_class.push(Some(c));
        }
        (classes, asset_class)
    }
}
