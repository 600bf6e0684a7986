//! Racks, their servers (with internal disks) and arrays, and the RAID and catalog checks on each array.

use super::keys::*;
use super::read::*;
use crate::catalog::ArrayModel;
use crate::input::yaml::{clip, Node, Pos, Val};
use crate::site::model::*;
use crate::text::plural_s;
use std::collections::HashMap;

/// An array (shared, or a server's internal disks) as read, before the checks that need the catalog.
pub(super) struct ArrayIn<'n> {
    path: String,
    pos: Pos,
    name: String,
    name_node: Option<&'n Node>,
    /// None for internal disks (always the catalog's `internal` model).
    model: Option<(String, &'n Node)>,
    disk_model: Option<(String, &'n Node)>,
    /// Key the disk count was given under (`disks` for arrays, `count` for internal disks).
    disks_key: &'static str,
    disks: Option<(u32, &'n Node)>,
    hot_spares: Option<(u32, &'n Node)>,
    disk_size_bytes: Option<(u64, &'n Node)>,
    write_cache: Option<bool>,
    raid: Option<(ArrayRaid, &'n Node)>,
    /// `existing: true`: the `raid:` level describes a volume group already built on all data disks.
    existing: Option<(bool, &'n Node)>,
    internal: bool,
    /// `host: NAME`: the array is that hypervisor host's storage pool, serving VM disks to its guests.
    host: Option<(String, &'n Node)>,
    /// `reserved_drives: N`: a DDP pool's preservation capacity in drives.
    reserved_drives: Option<(u32, &'n Node)>,
}

/// What the racks section builds, in file order.
#[derive(Default)]
struct Built {
    racks: Vec<Rack>,
    servers: Vec<Server>,
    arrays: Vec<Array>,
}

/// Names seen so far, for "duplicate" messages (case-insensitive).
#[derive(Default)]
struct Names {
    racks: HashMap<String, Seen>,
    servers: HashMap<String, Seen>,
    arrays: HashMap<String, Seen>,
    pdus: HashMap<String, Seen>,
    /// host → (rack, first server on it)
    hosts: HashMap<String, (RackIdx, String)>,
}

impl Validator<'_> {
    pub(super) fn racks(&mut self, top: &Obj<'_>, default_spares: u32) -> (Vec<Rack>, Vec<Server>, Vec<Array>) {
        let mut b = Built::default();
        let racks_node = top.get("racks");
        let rack_nodes = self.list(racks_node, "racks", "[{ name: A, servers: [alpha], arrays: [...] }]");
        if rack_nodes.is_empty() && !matches!(racks_node.map(|n| &n.val), Some(Val::Scalar(_) | Val::Map(_))) {
            self.err(
                racks_node.map(|n| n.pos).or(top.key_pos("racks")).or(Some(top.pos)),
                "racks",
                "the site has no racks",
                "add at least one rack with servers and storage under `racks:`",
            );
        }
        let mut names = Names::default();
        let mut had_rack_error = false;
        // Host pools (`arrays[].host`), checked once every rack's servers (and so hosts) are known.
        let mut pools: Vec<(String, &Node, String, RackIdx)> = Vec::new();
        for (ri, rn) in rack_nodes.iter().enumerate() {
            let rp = format!("racks[{ri}]");
            let Some(o) = self.obj(rn, &rp, "a rack", RACK_KEYS) else {
                // Keep indices aligned with the file.
                b.racks.push(Rack {
                    name: format!("rack{ri}"),
                    power_feeds: 2,
                    uplinks: 2,
                    pdus: Vec::new(),
                });
                had_rack_error = true;
                continue;
            };
            let rack = self.rack_head(&o, ri, &mut names);
            b.racks.push(rack);

            for (si, sn) in self
                .list(o.get("servers"), &o.p("servers"), "[alpha, bravo]")
                .iter()
                .enumerate()
            {
                self.server(sn, &format!("{rp}.servers[{si}]"), ri, &mut b, &mut names);
            }

            for (ai, an) in self
                .list(
                    o.get("arrays"),
                    &o.p("arrays"),
                    "[{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3 }]",
                )
                .iter()
                .enumerate()
            {
                let ap = format!("{rp}.arrays[{ai}]");
                let Some(a) = self.array_in(an, &ap) else { continue };
                if let Some((h, n)) = &a.host {
                    pools.push((h.clone(), *n, format!("{ap}.host"), ri));
                }
                if let Some(nn) = a.name_node {
                    self.unique(&mut names.arrays, "array", &a.name, nn, &format!("{ap}.name"), Some(ri));
                }
                let arr = self.finish_array(a, ri, None, default_spares);
                b.arrays.push(arr);
            }
        }
        for (h, n, path, ri) in &pools {
            self.pool_host(h, n, path, *ri, &b.racks, &names);
        }
        if b.servers.is_empty() && !rack_nodes.is_empty() && !had_rack_error {
            self.err(
                top.key_pos("racks"),
                "racks",
                "the site has no servers",
                "list the NATS hosts under racks[].servers, e.g. `servers: [alpha, bravo]`",
            );
        } else if !b.servers.is_empty() && b.arrays.is_empty() {
            self.err(
                top.key_pos("racks"),
                "racks",
                "the site has no storage: no arrays and no servers with internal disks",
                "add arrays under racks[].arrays, or internal disks under a server's `disks:`",
            );
        }
        (b.racks, b.servers, b.arrays)
    }

    /// A rack's own keys: name, power feeds, uplinks and PDUs.
    fn rack_head(&mut self, o: &Obj<'_>, ri: RackIdx, names: &mut Names) -> Rack {
        let name = match self.req(o, "name", "A") {
            Some(n) => {
                let name = self.name(n, &o.p("name"), "rack", "A", false).unwrap_or_default();
                self.unique(&mut names.racks, "rack", &name, n, &o.p("name"), None);
                name
            }
            None => String::new(),
        };
        let power_feeds = match o.get("power_feeds") {
            Some(n) => self
                .whole(n, &o.p("power_feeds"), "power feeds", 1, 16, "2")
                .map_or(2, |x| x as u32),
            None => 2,
        };
        let uplinks = match o.get("uplinks") {
            Some(n) => self
                .whole(n, &o.p("uplinks"), "uplinks", 1, 64, "2")
                .map_or(2, |x| x as u32),
            None => 2,
        };
        let mut pdus = Vec::new();
        for (i, pn) in self
            .list(o.get("pdus"), &o.p("pdus"), "[A-pdu1, A-pdu2]")
            .iter()
            .enumerate()
        {
            let pp = format!("{}[{i}]", o.p("pdus"));
            if let Some(p) = self.name(pn, &pp, "PDU", "A-pdu1", true) {
                // `pdu:NAME` is a site-wide failure selector, so PDU names are unique across racks.
                self.unique(&mut names.pdus, "PDU", &p, pn, &pp, Some(ri));
                pdus.push(p);
            }
        }
        Rack {
            name,
            power_feeds,
            uplinks,
            pdus,
        }
    }

    /// `racks[ri].servers[si]`: a name, or an object with host, PDU, model and internal disks.
    fn server(&mut self, sn: &Node, sp: &str, ri: RackIdx, b: &mut Built, names: &mut Names) {
        let idx = b.servers.len();
        let mut server = Server {
            name: String::new(),
            rack: ri,
            host: None,
            pdu: None,
            model: self.catalog.default_server.clone(),
            internal: None,
        };
        let mut name_node = sn;
        let mut internal: Option<ArrayIn> = None;
        match &sn.val {
            Val::Scalar(_) => {
                server.name = self.name(sn, sp, "server", "alpha", true).unwrap_or_default();
            }
            Val::Seq(_) => {
                self.err(
                    Some(sn.pos),
                    sp,
                    format!("expected a server name or object, got {}", sn.describe()),
                    "write a name (`- alpha`) or an object (`- { name: alpha, host: ns1 }`)",
                );
                return;
            }
            Val::Map(_) => {
                let Some(so) = self.obj(sn, sp, "a server", SERVER_KEYS) else {
                    return;
                };
                if let Some(n) = self.req(&so, "name", "alpha") {
                    name_node = n;
                    server.name = self.name(n, &so.p("name"), "server", "alpha", true).unwrap_or_default();
                }
                if let Some(n) = so.get("host") {
                    server.host = self.name(n, &so.p("host"), "host", "ns1", true);
                    if let Some(h) = &server.host {
                        self.host_rack(h, n, &so.p("host"), &server, &b.racks, names);
                    }
                }
                if let Some(n) = so.get("pdu") {
                    server.pdu = self.server_pdu(n, &so.p("pdu"), &b.racks[ri]);
                }
                if let Some(n) = so.get("model") {
                    if let Some(m) = self.text(n, &so.p("model"), "generic-16c") {
                        let known = self.catalog.server_names();
                        self.model_check(n, &so.p("model"), "server model", &m, &known);
                        server.model = m;
                    }
                }
                if let Some(n) = so.get("disks") {
                    internal = self.internal_disks(n, &so.p("disks"), &server.name);
                }
            }
        }
        let name_path = if matches!(sn.val, Val::Map(_)) {
            format!("{sp}.name")
        } else {
            sp.to_string()
        };
        self.unique(
            &mut names.servers,
            "server",
            &server.name,
            name_node,
            &name_path,
            Some(ri),
        );
        if let Some(a) = internal {
            // A nameless server is already reported; its "-internal" array is no second problem.
            if let Some(nn) = a.name_node.filter(|_| !server.name.is_empty()) {
                self.unique(&mut names.arrays, "array", &a.name, nn, &a.path, Some(ri));
            }
            server.internal = Some(b.arrays.len());
            let arr = self.finish_array(a, ri, Some(idx), 0);
            b.arrays.push(arr);
        }
        b.servers.push(server);
    }

    /// One machine cannot stand in two racks: a host's servers must all be in one (`server` is on host `h`,
    /// in its rack).
    fn host_rack(&mut self, h: &str, n: &Node, path: &str, server: &Server, racks: &[Rack], names: &mut Names) {
        let ri = server.rack;
        match names.hosts.get(&h.to_ascii_lowercase()) {
            Some((hr, first)) if *hr != ri => {
                let other = racks.get(*hr).map(|r: &Rack| r.name.clone()).unwrap_or_default();
                self.err(
                    Some(n.pos),
                    path,
                    format!("host '{h}' also carries server '{first}' in rack {other}; one machine cannot stand in two racks"),
                    format!("put every server on host '{h}' in one rack, or give the hosts different names"),
                );
            }
            Some(_) => {}
            None => {
                names.hosts.insert(h.to_ascii_lowercase(), (ri, server.name.clone()));
            }
        }
    }

    /// A host pool's `host:` names a host that carries servers of the same rack (`servers[].host`).
    fn pool_host(&mut self, h: &str, n: &Node, path: &str, ri: RackIdx, racks: &[Rack], names: &Names) {
        match names.hosts.get(&h.to_ascii_lowercase()) {
            Some((hr, _)) if *hr == ri => {}
            Some((hr, first)) => {
                let other = racks.get(*hr).map(|r| r.name.clone()).unwrap_or_default();
                self.err(
                    Some(n.pos),
                    path,
                    format!("host '{h}' stands in rack {other} (it carries server '{first}'), not in this rack"),
                    format!("list the pool under rack {other}'s arrays, where its host is"),
                );
            }
            None => {
                let known: Vec<&str> = names
                    .hosts
                    .iter()
                    .filter(|(_, (r, _))| *r == ri)
                    .map(|(k, _)| k.as_str())
                    .collect();
                let fix = match nearest(h, known.iter().copied()) {
                    Some(near) => format!("did you mean '{near}'?"),
                    None => format!("give the guests that use this pool `host: {h}` under the rack's servers"),
                };
                self.err(
                    Some(n.pos),
                    path,
                    format!(
                        "no server of this rack runs on host '{}', so its pool serves nobody",
                        clip(h)
                    ),
                    fix,
                );
            }
        }
    }

    /// A server's `pdu:`, which must be one of its rack's PDUs.
    fn server_pdu(&mut self, n: &Node, path: &str, rack: &Rack) -> Option<String> {
        let p = self.text(n, path, "A-pdu1")?;
        let (pdus, name) = (&rack.pdus, &rack.name);
        if !pdus.iter().any(|x| x.eq_ignore_ascii_case(&p)) {
            let fix = match nearest(&p, pdus.iter().map(|s| s.as_str())) {
                Some(near) => {
                    format!("did you mean '{near}'? Or add '{p}' to the rack's pdus list")
                }
                None if pdus.is_empty() => {
                    format!("list the rack's PDUs first: `pdus: [{p}]` under rack {name}")
                }
                None => format!(
                    "use one of the rack's PDUs ({}), or add '{p}' to its pdus list",
                    pdus.join(", ")
                ),
            };
            self.err(
                Some(n.pos),
                path,
                format!("PDU '{}' is not listed in rack {name}'s pdus", clip(&p)),
                fix,
            );
        }
        Some(p)
    }

    /// Report a name seen before (case-insensitive: selectors and tags are case-insensitive).
    pub(super) fn unique(
        &mut self,
        seen: &mut HashMap<String, Seen>,
        kind: &str,
        name: &str,
        node: &Node,
        path: &str,
        rack: Option<RackIdx>,
    ) {
        if name.is_empty() {
            return;
        }
        match seen.get(&name.to_ascii_lowercase()) {
            Some(first) => {
                let where_ = match (first.rack, rack) {
                    (Some(a), Some(b)) if a != b => format!("line {}, another rack", first.line),
                    _ => format!("line {}", first.line),
                };
                self.err(
                    Some(node.pos),
                    path,
                    format!("duplicate {kind} name '{name}' (first on {where_})"),
                    format!("give every {kind} a unique name (names are compared without case)"),
                );
            }
            None => {
                seen.insert(
                    name.to_ascii_lowercase(),
                    Seen {
                        line: node.pos.line,
                        rack,
                    },
                );
            }
        }
    }

    pub(super) fn raid(&mut self, node: &Node, path: &str) -> Option<ArrayRaid> {
        let t = self.text(node, path, "raid10")?;
        let r = ArrayRaid::parse(&t);
        if r.is_none() {
            let names: Vec<&str> = ArrayRaid::ALL.iter().map(|r| r.as_str()).collect();
            let hint = if t.to_ascii_lowercase().contains('5') {
                " (RAID 5 is not offered: one failure during a rebuild loses the group; use raid6)"
            } else {
                ""
            };
            self.err(
                Some(node.pos),
                path,
                format!("unknown RAID level '{}'{hint}", clip(&t)),
                format!("use one of: {}", list_of(&names)),
            );
        }
        r
    }

    /// `racks[].arrays[]`.
    pub(super) fn array_in<'n>(&mut self, node: &'n Node, ap: &str) -> Option<ArrayIn<'n>> {
        let o = self.obj(node, ap, "an array", ARRAY_KEYS)?;
        let name_node = self.req(&o, "name", "A1");
        let name = name_node
            .and_then(|n| self.name(n, &o.p("name"), "array", "A1", true))
            .unwrap_or_default();
        // A host's pool (`host: NAME`) is the host's own disks: its model defaults to `internal`.
        let host = o
            .get("host")
            .and_then(|n| self.name(n, &o.p("host"), "host", "hv1", true).map(|h| (h, n)));
        let model_node = if host.is_some() {
            o.get("model")
        } else {
            self.req(&o, "model", "EF300")
        };
        let model = model_node.and_then(|n| self.text(n, &o.p("model"), "EF300").map(|m| (m, n)));
        let mut a = self.array_common(&o, name, name_node, model, false);
        a.host = host;
        Some(a)
    }

    /// `racks[].servers[].disks`: a server's own disks, an array that fails with the server.
    pub(super) fn internal_disks<'n>(&mut self, node: &'n Node, dp: &str, server: &str) -> Option<ArrayIn<'n>> {
        let o = self.obj(node, dp, "the server's internal disks", INTERNAL_KEYS)?;
        let a = self.array_common(&o, format!("{server}-internal"), Some(node), None, true);
        Some(a)
    }

    pub(super) fn array_common<'n>(
        &mut self,
        o: &Obj<'n>,
        name: String,
        name_node: Option<&'n Node>,
        model: Option<(String, &'n Node)>,
        internal: bool,
    ) -> ArrayIn<'n> {
        // Internal disks give their number as `count` (a server's `disks:` is the whole block).
        let disks_key = if internal { "count" } else { "disks" };
        let disk_model = match self.req(o, "disk_model", "nvme-3.84t") {
            Some(n) => self.text(n, &o.p("disk_model"), "nvme-3.84t").map(|m| (m, n)),
            None => None,
        };
        let disks = match self.req(o, disks_key, "3") {
            Some(n) => self.count_u32(n, &o.p(disks_key), "a disk count", "3").map(|x| (x, n)),
            None => None,
        };
        let hot_spares = o
            .get("hot_spares")
            .and_then(|n| self.count_u32(n, &o.p("hot_spares"), "hot spares", "1").map(|x| (x, n)));
        let disk_size_bytes = o
            .get("disk_size")
            .and_then(|n| self.size_nonzero(n, &o.p("disk_size"), "disk_size").map(|x| (x, n)));
        let write_cache = o.get("write_cache").and_then(|n| self.boolean(n, &o.p("write_cache")));
        let raid = o.get("raid").and_then(|n| self.raid(n, &o.p("raid")).map(|r| (r, n)));
        let existing = o
            .get("existing")
            .and_then(|n| self.boolean(n, &o.p("existing")).map(|b| (b, n)));
        let reserved_drives = o.get("reserved_drives").and_then(|n| {
            self.count_u32(n, &o.p("reserved_drives"), "a number of drives", "2")
                .map(|x| (x, n))
        });
        ArrayIn {
            path: o.path.clone(),
            pos: o.pos,
            name,
            name_node,
            model,
            disk_model,
            disks_key,
            disks,
            hot_spares,
            disk_size_bytes,
            write_cache,
            raid,
            existing,
            internal,
            host: None,
            reserved_drives,
        }
    }

    /// Catalog and RAID checks on an array as read.
    pub(super) fn finish_array(
        &mut self,
        a: ArrayIn<'_>,
        rack: RackIdx,
        owner: Option<ServerIdx>,
        default_spares: u32,
    ) -> Array {
        let ap = a.path.as_str();
        let model = match (&a.model, a.internal) {
            (_, true) => "internal".to_string(),
            (None, false) if a.host.is_some() => "internal".to_string(),
            (Some((m, n)), false) => {
                let known: Vec<&str> = self.catalog.array_names();
                let known: Vec<&str> = known.into_iter().filter(|k| *k != "internal").collect();
                self.model_check(n, &join(ap, "model"), "array model", m, &known);
                m.clone()
            }
            (None, false) => String::new(),
        };
        let am = self.catalog.array(&model).cloned();
        if let Some((dm, n)) = &a.disk_model {
            let known = self.catalog.disk_names();
            self.model_check(n, &join(ap, "disk_model"), "disk model", dm, &known);
        }
        let disks_path = join(ap, a.disks_key);
        let disks = a.disks.map_or(0, |(d, _)| d);
        let disks_pos = a.disks.map(|(_, n)| n.pos).or(Some(a.pos));
        if a.disks.is_some() && disks == 0 {
            self.err(
                disks_pos,
                &disks_path,
                if a.internal {
                    "a server's internal disks need a count of at least one".to_string()
                } else {
                    "an array needs at least one disk".to_string()
                },
                if a.internal {
                    "give the number of disks, or remove `disks:` from the server"
                } else {
                    "give the number of disks in the array, or remove the array"
                },
            );
        }
        if let Some(m) = &am {
            if disks > m.drive_slots {
                self.err(
                    disks_pos,
                    &disks_path,
                    format!(
                        "{disks} disks do not fit the {}'s {} drive slots",
                        m.name, m.drive_slots
                    ),
                    "add an expansion shelf as another array, or use fewer disks",
                );
            }
        }
        let is_ddp = matches!(a.raid, Some((ArrayRaid::Ddp, _)));
        let hot_spares = self.hot_spares_check(&a, disks, disks_pos, is_ddp, default_spares);
        if let Some((r, n)) = a.raid {
            self.raid_checks(r, n, ap, am.as_ref(), disks, hot_spares);
        }
        let reserved_drives = self.reserved_drives_check(&a, ap, disks, is_ddp);
        // A host's pool exists (the hypervisor built it): its level is needed and it is used as given.
        let pool = a.host.is_some();
        self.pool_checks(&a);
        let existing = match (a.existing, a.raid) {
            (Some((true, n)), None) => {
                self.err(
                    Some(n.pos),
                    join(ap, "existing"),
                    "existing: true describes a volume group already built, but the array gives no raid level",
                    "add raid: (the level of the group you have), or remove existing",
                );
                false
            }
            (Some((true, n)), Some((r, _))) => {
                self.existing_checks(r, n, ap, am.as_ref(), disks.saturating_sub(hot_spares));
                true
            }
            _ => false,
        };
        Array {
            name: a.name,
            rack,
            model,
            disk_model: a.disk_model.map(|(m, _)| m).unwrap_or_default(),
            disks,
            disk_size_bytes: a.disk_size_bytes.map(|(b, _)| b),
            hot_spares: hot_spares.min(disks),
            write_cache: a.write_cache.unwrap_or(!a.internal),
            owner,
            raid: a.raid.map(|(r, _)| r),
            // A DDP pool and a host's pool are always ones the user has: used as given, never rebuilt.
            existing: existing || is_ddp || pool,
            host: a.host.map(|(h, _)| h),
            reserved_drives,
        }
    }

    /// The hot spares of an array as read: none on a DDP pool (an error when given), an internal disk
    /// set or a host's pool, else as given or the policy's; fewer than its disks.
    fn hot_spares_check(
        &mut self,
        a: &ArrayIn<'_>,
        disks: u32,
        disks_pos: Option<Pos>,
        is_ddp: bool,
        default_spares: u32,
    ) -> u32 {
        let ap = a.path.as_str();
        // DDP spreads reserve capacity over all its disks instead of keeping idle hot spares.
        let hot_spares = match a.hot_spares {
            Some((h, n)) if is_ddp && h > 0 => {
                self.err(
                    Some(n.pos),
                    join(ap, "hot_spares"),
                    format!("a DDP pool keeps reserve capacity instead of hot spares, but hot_spares is {h}"),
                    "remove hot_spares (or set it to 0); DDP reserves rebuild space across all its disks",
                );
                0
            }
            Some((h, _)) => h,
            None if is_ddp || a.internal || a.host.is_some() => 0,
            None => default_spares,
        };
        if hot_spares >= disks && disks > 0 {
            let at = a.hot_spares.map(|(_, n)| n.pos).or(disks_pos);
            let given = if a.hot_spares.is_some() {
                ""
            } else {
                " (policy.hot_spares_per_array)"
            };
            self.err(
                at,
                join(ap, "hot_spares"),
                format!(
                    "{hot_spares} hot spare{}{given} leave no data disks out of {disks}",
                    plural_s(hot_spares)
                ),
                format!("use fewer hot spares than disks (at most {}), or add disks", disks - 1),
            );
        }
        hot_spares
    }

    /// A host's storage pool (`host:`) needs the level it is built at, and it cannot be DDP.
    fn pool_checks(&mut self, a: &ArrayIn<'_>) {
        let ap = a.path.as_str();
        let pool = a.host.is_some();
        if pool && a.raid.is_none() {
            self.err(
                Some(a.pos),
                join(ap, "raid"),
                "a host's storage pool (`host:`) needs the level it is built at",
                "add `raid:` (raid1, raid10, raid6 or raid0: the pool's level, as the hypervisor built it)",
            );
        }
        if let (true, Some((ArrayRaid::Ddp, n))) = (pool, a.raid) {
            self.err(
                Some(n.pos),
                join(ap, "raid"),
                "a host's storage pool cannot be a DDP pool (DDP is an E-Series array's)",
                "give the pool's level: raid1, raid10, raid6 or raid0",
            );
        }
    }

    /// `reserved_drives` (a DDP pool's preservation capacity, SANtricity's `reservedDriveCount`): only on a
    /// `raid: ddp` array, at most `disks − 11` so that 11 drives' capacity is left for volumes (a pool's
    /// minimum, SANtricity 11.6 "Functional comparison of pools and volume groups"); 0 is allowed (SANtricity: "If you specify 0 for the preservation capacity, all of the free
    /// capacity on the pool is used for volume creation").
    fn reserved_drives_check(&mut self, a: &ArrayIn<'_>, ap: &str, disks: u32, is_ddp: bool) -> Option<u32> {
        let (r, n) = a.reserved_drives?;
        if !is_ddp {
            self.err(
                Some(n.pos),
                join(ap, "reserved_drives"),
                "reserved_drives is a DDP pool's preservation capacity, but this array is not `raid: ddp`",
                "remove reserved_drives, or add `raid: ddp` if the array is a pool (volume groups use hot_spares)",
            );
            return None;
        }
        let most = disks.saturating_sub(11);
        if r > most {
            self.err(
                Some(n.pos),
                join(ap, "reserved_drives"),
                format!("{r} reserved drives leave the {disks}-drive pool fewer than the 11 drives a pool needs"),
                format!(
                    "use at most {most} (SANtricity's default is one drive in six: {})",
                    disks / 6
                ),
            );
            return None;
        }
        Some(r)
    }

    /// An existing group (`existing: true`, or any DDP pool) holds all the data disks in one group: it
    /// must be within the model's group limits, which cannot be worked around by splitting it.
    fn existing_checks(&mut self, r: ArrayRaid, n: &Node, ap: &str, am: Option<&ArrayModel>, data: u32) {
        let Some(m) = am else { return };
        let g = &m.group_limits;
        let (max, what) = match r {
            ArrayRaid::Raid6 => (g.raid6_max_drives, "a RAID 6 volume group"),
            ArrayRaid::Raid10 | ArrayRaid::Raid0 => (g.raid10_max_drives, "a RAID 0/10 volume group"),
            ArrayRaid::Ddp => (g.ddp_max_drives, "a DDP pool"),
            ArrayRaid::Raid1 => return,
        };
        if data > max {
            self.err(
                Some(n.pos),
                join(ap, "existing"),
                format!(
                    "{what} on the {} holds at most {max} drives, but this existing group has {data} ({})",
                    m.name, g.source
                ),
                format!(
                    "describe it as it really is: remove existing (natsplan then splits the disks into groups \
                     of at most {max}), or give the disks of one group only"
                ),
            );
        }
    }

    /// A RAID level the array model offers, with enough data disks once the hot spares are set aside.
    fn raid_checks(&mut self, r: ArrayRaid, n: &Node, ap: &str, am: Option<&ArrayModel>, disks: u32, hot_spares: u32) {
        let raid_path = join(ap, "raid");
        if let Some(m) = &am {
            if !m.supports.iter().any(|s| s == r.as_str()) {
                self.err(
                    Some(n.pos),
                    &raid_path,
                    format!("the {} does not offer {}", m.name, r.as_str()),
                    format!("use one of: {}", m.supports.join(", ")),
                );
            }
        }
        if disks > 0 && hot_spares < disks {
            let data = disks - hot_spares;
            if let Err(why) = r.check_data_disks(data) {
                let spares_note = if hot_spares > 0 {
                    format!(" ({disks} disks − {hot_spares} hot spare{})", plural_s(hot_spares))
                } else {
                    String::new()
                };
                let fix = raid_fix(r, data, hot_spares);
                self.err(Some(n.pos), &raid_path, format!("{why}{spares_note}"), fix);
            }
        }
    }
}

/// How to meet a RAID level's disk-count rule from `data` data disks.
fn raid_fix(r: ArrayRaid, data: u32, hot_spares: u32) -> String {
    let spares = if hot_spares > 0 {
        format!(" (plus {hot_spares} hot spare{})", plural_s(hot_spares))
    } else {
        String::new()
    };
    match r {
        ArrayRaid::Raid0 => "add a data disk".into(),
        ArrayRaid::Raid1 if data > 2 => format!(
            "use {} or {} data disks{spares}: each RAID 1 group is a mirrored pair (or raid10 for groups of 4 or more)",
            data - 1,
            data + 1
        ),
        ArrayRaid::Raid1 => format!("use 2 data disks{spares}"),
        ArrayRaid::Raid10 if data == 2 => "use raid: raid1 for a mirrored pair".into(),
        ArrayRaid::Raid10 if data >= 4 => format!(
            "use {} or {} data disks{spares}: RAID 10 mirrors pairs",
            data - 1,
            data + 1
        ),
        ArrayRaid::Raid10 => format!("use 4 data disks{spares}, or raid1 with 2"),
        ArrayRaid::Raid6 => format!(
            "add {} disk{}, or use raid10 / raid1 for small groups",
            5 - data,
            plural_s(5 - data)
        ),
        ArrayRaid::Ddp => format!(
            "add {} disk{}, or use raid6 (5 or more) or raid10 for fewer disks",
            11 - data,
            plural_s(11 - data)
        ),
    }
}
