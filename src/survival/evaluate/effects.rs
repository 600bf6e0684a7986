//! What a scenario's failed domains do to each server and RAID group: `Model::effects`. Moved out of
//! evaluate.rs whole.

use super::*;

impl<'a> Model<'a> {
    /// Per-server effects of the failed domains, and which failed domains (by index) hit each server.
    pub fn effects(&self, failed: &[Domain]) -> (Vec<ServerEffect>, Vec<Vec<usize>>, Vec<GroupEffect>) {
        let site = self.site;
        let n = site.servers.len();
        let mut hits = Hits {
            eff: vec![ServerEffect::default(); n],
            cause: vec![Vec::new(); n],
        };
        let mut arrays = ArrayHits {
            down: vec![None; site.arrays.len()],
            full: vec![None; site.arrays.len()],
            lost: vec![None; site.arrays.len()],
            failed_slots: vec![Vec::new(); site.arrays.len()],
        };
        for (di, d) in failed.iter().enumerate() {
            self.apply_domain(&mut hits, &mut arrays, di, d);
        }
        self.apply_arrays(&mut hits, &arrays);
        let groups = self.disk_groups(&mut hits, &arrays.failed_slots);
        let Hits { mut eff, mut cause } = hits;
        // A destroyed store has no page cache to lose separately, but it counts toward losing the latest
        // acknowledged entries (the survivors may never have had them).
        for e in eff.iter_mut() {
            if e.destroyed {
                e.cache_lost = true;
            }
        }
        // Only JetStream servers matter.
        for (s, e) in eff.iter_mut().enumerate() {
            if !self.in_layout[s] {
                *e = ServerEffect::default();
                cause[s].clear();
            }
        }
        (eff, cause, groups)
    }

    /// Failed domain `di`'s direct effects: the servers it takes down (cut off, destroyed), and the arrays
    /// it takes down, fills or loses and the disks it fails, for [`Self::apply_arrays`] and
    /// [`Self::disk_groups`] to carry to their servers.
    fn apply_domain(&self, hits: &mut Hits, arrays: &mut ArrayHits, di: usize, d: &Domain) {
        let site = self.site;
        match (&d.kind, &d.target) {
            (DomainKind::Process, DomainTarget::Server(s)) => hits.hit(*s, di, false),
            (DomainKind::Pause, DomainTarget::Server(s)) => {
                hits.hit(*s, di, false);
                hits.eff[*s].cut_off = true;
            }
            (DomainKind::Server, DomainTarget::Server(s)) => hits.hit(*s, di, true),
            (DomainKind::Wipe, DomainTarget::Server(s)) => {
                hits.hit(*s, di, false);
                hits.eff[*s].destroyed = true;
            }
            (DomainKind::Full, DomainTarget::Server(s)) => hits.hit(*s, di, false),
            (DomainKind::Full, DomainTarget::Array(a)) => {
                arrays.full[*a].get_or_insert(di);
            }
            (DomainKind::Array, DomainTarget::Array(a)) => {
                arrays.down[*a].get_or_insert(di);
            }
            (DomainKind::Disk, DomainTarget::Disk(a, slot)) => arrays.failed_slots[*a].push((*slot, di)),
            (DomainKind::Power, DomainTarget::Rack(r)) => self.power_rack(hits, &mut arrays.down, *r, di),
            (DomainKind::Net, DomainTarget::Rack(r)) => {
                // The uplinks carry NATS traffic; storage paths (SAN/FC) are assumed not to run through
                // them, so arrays in the rack stay reachable from other racks.
                for s in site.rack_servers(*r) {
                    hits.hit(s, di, false);
                    hits.eff[s].cut_off = true;
                }
            }
            (DomainKind::Rack, DomainTarget::Rack(r)) => self.power_rack(hits, &mut arrays.down, *r, di),
            // A rack destroyed for good: its servers and their own disks, and every volume on its
            // arrays (wherever the servers using them are). A server of the rack whose LUN sits on an
            // array in another rack is down until the rack is rebuilt, its store intact.
            (DomainKind::LostRack, DomainTarget::Rack(r)) => {
                for s in site.rack_servers(*r) {
                    hits.hit(s, di, true);
                    let elsewhere = self
                        .array_of(s)
                        .is_some_and(|a| site.arrays[a].owner.is_none() && site.arrays[a].rack != *r);
                    hits.eff[s].destroyed |= !elsewhere;
                }
                for (a, arr) in site.arrays.iter().enumerate() {
                    if arr.rack == *r {
                        arrays.lost[a].get_or_insert(di);
                    }
                }
            }
            (DomainKind::LostArray, DomainTarget::Array(a)) => {
                arrays.lost[*a].get_or_insert(di);
            }
            // A host's storage pool lost (yearly's host hardware loss): every guest on it pooled there
            // (its own disks) loses its store.
            (DomainKind::Wipe, DomainTarget::Host(h)) => {
                for (s, srv) in site.servers.iter().enumerate() {
                    if srv.host.as_deref() == Some(h.as_str()) {
                        hits.hit(s, di, true);
                        // Its own (virtual) disks, or a VM disk on the host's pool (`arrays[].host`).
                        let own = self
                            .array_of(s)
                            .is_some_and(|a| site.arrays[a].owner == Some(s) || site.arrays[a].host.is_some());
                        hits.eff[s].destroyed |= own;
                    }
                }
            }
            (DomainKind::Host, DomainTarget::Host(h)) => {
                for (s, srv) in site.servers.iter().enumerate() {
                    if srv.host.as_deref() == Some(h.as_str()) {
                        hits.hit(s, di, true);
                    }
                }
            }
            (DomainKind::Pdu, DomainTarget::Pdu(p)) => {
                for (s, srv) in site.servers.iter().enumerate() {
                    if srv.pdu.as_deref() == Some(p.as_str()) {
                        hits.hit(s, di, true);
                    }
                }
                // One feed: the PDU is the rack's power.
                for (r, rack) in site.racks.iter().enumerate() {
                    if rack.power_feeds <= 1 && rack.pdus.iter().any(|x| x == p) {
                        self.power_rack(hits, &mut arrays.down, r, di);
                    }
                }
            }
            // `parse` never builds other combinations; a hand-built one harms nothing.
            _ => {}
        }
    }

    /// A rack without power: its servers (their page caches lost) and its arrays go down.
    fn power_rack(&self, hits: &mut Hits, array_down: &mut [Option<usize>], r: usize, di: usize) {
        let site = self.site;
        for s in site.rack_servers(r) {
            hits.hit(s, di, true);
        }
        for (a, arr) in site.arrays.iter().enumerate() {
            if arr.rack == r && array_down[a].is_none() {
                array_down[a] = Some(di);
            }
        }
    }

    /// The servers whose volumes sit on an array down, lost or full.
    fn apply_arrays(&self, hits: &mut Hits, arrays: &ArrayHits) {
        // An unreachable array: I/O on its LUNs queues and then fails; unsynced page-cache writes of the
        // servers using it are lost if the outage outlasts multipath queueing (ARCHITECTURE.md "Failure domains").
        for (a, di) in arrays.down.iter().enumerate() {
            if let Some(di) = *di {
                for &g in &self.array_groups[a] {
                    for &s in &self.group_servers[g] {
                        hits.hit(s, di, true);
                    }
                }
            }
        }
        for (a, di) in arrays.lost.iter().enumerate() {
            if let Some(di) = *di {
                for &g in &self.array_groups[a] {
                    for &s in &self.group_servers[g] {
                        hits.hit(s, di, true);
                        hits.eff[s].destroyed = true;
                    }
                }
            }
        }
        for (a, di) in arrays.full.iter().enumerate() {
            if let Some(di) = *di {
                for &g in &self.array_groups[a] {
                    for &s in &self.group_servers[g] {
                        hits.hit(s, di, false);
                    }
                }
            }
        }
    }

    /// The disk groups with failed disks: whether each is destroyed (its servers then destroyed too), its
    /// mirror pairs and the pairs lost.
    fn disk_groups(&self, hits: &mut Hits, failed_slots: &[Vec<(u32, usize)>]) -> Vec<GroupEffect> {
        let mut groups = Vec::new();
        for (a, slots) in failed_slots.iter().enumerate() {
            if slots.is_empty() {
                continue;
            }
            for &g in &self.array_groups[a] {
                let grp = &self.layout.groups[g];
                let mut in_group: Vec<(u32, usize)> =
                    slots.iter().copied().filter(|(n, _)| grp.disks.contains(n)).collect();
                in_group.sort_unstable();
                in_group.dedup_by_key(|x| x.0);
                if in_group.is_empty() {
                    continue;
                }
                let slots: Vec<u32> = in_group.iter().map(|x| x.0).collect();
                let destroyed = self.group_destroyed(g, &slots);
                if destroyed {
                    for &s in &self.group_servers[g] {
                        for &(_, di) in &in_group {
                            hits.hit(s, di, false);
                        }
                        hits.eff[s].destroyed = true;
                    }
                }
                let pairs = self.mirror_pairs(g);
                let lost_pairs = pairs
                    .iter()
                    .copied()
                    .filter(|p| slots.contains(&p[0]) && slots.contains(&p[1]))
                    .collect();
                groups.push(GroupEffect {
                    group: grp.name.clone(),
                    failed_disks: slots,
                    destroyed,
                    pairs,
                    lost_pairs,
                });
            }
        }
        groups
    }
}

/// The servers a set of failed domains hits and which domains (by index) hit each, as
/// `Model::effects` gathers them.
struct Hits {
    eff: Vec<ServerEffect>,
    cause: Vec<Vec<usize>>,
}

impl Hits {
    /// Server `s` is down because of domain `di`, its page cache lost when `cache`.
    fn hit(&mut self, s: ServerIdx, di: usize, cache: bool) {
        self.eff[s].down = true;
        self.eff[s].cache_lost |= cache;
        if !self.cause[s].contains(&di) {
            self.cause[s].push(di);
        }
    }
}

/// Per array, the first failed domain (by index) that took it down, filled it or lost it, and its failed
/// disk slots with the domain of each.
struct ArrayHits {
    down: Vec<Option<usize>>,
    full: Vec<Option<usize>>,
    lost: Vec<Option<usize>>,
    failed_slots: Vec<Vec<(u32, usize)>>,
}
