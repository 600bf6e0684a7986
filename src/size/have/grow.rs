//! The owned site as editable parts, the additions a `size:` key allows to it, and each grown site's
//! `racks:` block. Owned parts are written back as the site parser read them (every key that changes a
//! figure: power feeds, uplinks, PDUs, hosts, internal disks, RAID levels fixed, existing groups, write
//! cache, disk sizes, reserved drives), so the zero bill's site is the owned site itself.

use super::super::bill::Skip;
use super::super::price::Parts;
use super::super::{fit_watts, SizeSpec, StorageKind};
use crate::catalog::Catalog;
use crate::site::{ArrayRaid, Site};
use serde::Serialize;

/// One array (or a server's internal disks) as the site file says it.
#[derive(Debug, Clone)]
pub struct GArray {
    pub name: String,
    pub model: String,
    pub disk_model: String,
    /// Disks installed, hot spares included.
    pub disks: u32,
    pub hot_spares: u32,
    pub raid: Option<ArrayRaid>,
    pub existing: bool,
    pub write_cache: bool,
    pub disk_size: Option<u64>,
    pub host: Option<String>,
    pub reserved_drives: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct GServer {
    pub name: String,
    pub model: String,
    pub host: Option<String>,
    pub pdu: Option<String>,
    /// Internal disks.
    pub disks: Option<GArray>,
}

#[derive(Debug, Clone)]
pub struct GRack {
    pub name: String,
    pub power_feeds: u32,
    pub uplinks: u32,
    pub pdus: Vec<String>,
    pub servers: Vec<GServer>,
    pub arrays: Vec<GArray>,
    /// Whether an addition touched this rack (its fit to rack units and watts is then checked).
    pub changed: bool,
}

/// Counts of hardware: racks, servers, arrays (internal disks and hosts' pools count as arrays, as
/// `policy.min_tolerated.arrays` counts them) and disks (spares included).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub racks: u32,
    pub servers: u32,
    pub arrays: u32,
    pub disks: u32,
}

impl Summary {
    pub fn of(racks: &[GRack]) -> Summary {
        let internal = racks.iter().flat_map(|r| &r.servers).filter_map(|s| s.disks.as_ref());
        let shared = racks.iter().flat_map(|r| &r.arrays);
        Summary {
            racks: racks.len() as u32,
            servers: racks.iter().map(|r| r.servers.len() as u32).sum(),
            arrays: internal.clone().count() as u32 + shared.clone().count() as u32,
            disks: internal.chain(shared).map(|a| a.disks).sum(),
        }
    }
}

fn garray(a: &crate::site::Array) -> GArray {
    GArray {
        name: a.name.clone(),
        model: a.model.clone(),
        disk_model: a.disk_model.clone(),
        disks: a.disks,
        hot_spares: a.hot_spares,
        raid: a.raid,
        existing: a.existing,
        write_cache: a.write_cache,
        disk_size: a.disk_size_bytes,
        host: a.host.clone(),
        reserved_drives: a.reserved_drives,
    }
}

/// The owned site's racks as parts.
pub fn from_site(site: &Site) -> Vec<GRack> {
    site.racks
        .iter()
        .enumerate()
        .map(|(ri, r)| GRack {
            name: r.name.clone(),
            power_feeds: r.power_feeds,
            uplinks: r.uplinks,
            pdus: r.pdus.clone(),
            servers: site
                .servers
                .iter()
                .filter(|s| s.rack == ri)
                .map(|s| GServer {
                    name: s.name.clone(),
                    model: s.model.clone(),
                    host: s.host.clone(),
                    pdu: s.pdu.clone(),
                    disks: s.internal.map(|i| garray(&site.arrays[i])),
                })
                .collect(),
            arrays: site
                .arrays
                .iter()
                .filter(|a| a.rack == ri && a.owner.is_none())
                .map(garray)
                .collect(),
            changed: false,
        })
        .collect()
}

fn opt<T: std::fmt::Display>(key: &str, v: &Option<T>) -> String {
    v.as_ref().map(|x| format!(", {key}: {x}")).unwrap_or_default()
}

fn array_keys(a: &GArray, internal: bool) -> String {
    let mut s = format!(
        "disk_model: {}, {}: {}, hot_spares: {}",
        a.disk_model,
        if internal { "count" } else { "disks" },
        a.disks,
        a.hot_spares
    );
    s.push_str(&opt("raid", &a.raid.map(|r| r.as_str())));
    s.push_str(&opt("disk_size", &a.disk_size.map(|b| format!("{b}B"))));
    if !internal {
        if a.existing && a.raid != Some(ArrayRaid::Ddp) {
            s.push_str(", existing: true");
        }
        s.push_str(&format!(", write_cache: {}", a.write_cache));
        s.push_str(&opt("host", &a.host));
        s.push_str(&opt("reserved_drives", &a.reserved_drives));
    }
    s
}

/// The `racks:` block of these racks.
pub fn racks_yaml(racks: &[GRack]) -> String {
    let mut s = String::from("racks:\n");
    for r in racks {
        s.push_str(&format!(
            "  - name: {}\n    power_feeds: {}\n    uplinks: {}\n",
            r.name, r.power_feeds, r.uplinks
        ));
        if !r.pdus.is_empty() {
            s.push_str(&format!("    pdus: [{}]\n", r.pdus.join(", ")));
        }
        s.push_str(if r.servers.is_empty() {
            "    servers: []\n"
        } else {
            "    servers:\n"
        });
        for v in &r.servers {
            s.push_str(&format!("      - {{ name: {}, model: {}", v.name, v.model));
            s.push_str(&opt("host", &v.host));
            s.push_str(&opt("pdu", &v.pdu));
            if let Some(d) = &v.disks {
                s.push_str(&format!(", disks: {{ {} }}", array_keys(d, true)));
            }
            s.push_str(" }\n");
        }
        if !r.arrays.is_empty() {
            s.push_str("    arrays:\n");
            for a in &r.arrays {
                // A host's pool takes no model (the parser gives it `internal`, which it refuses as written).
                let model = match (&a.host, a.model.as_str()) {
                    (Some(_), "internal") => String::new(),
                    _ => format!("model: {}, ", a.model),
                };
                s.push_str(&format!(
                    "      - {{ name: {}, {model}{} }}\n",
                    a.name,
                    array_keys(a, false)
                ));
            }
        }
    }
    s
}

/// One combination of additions: top up owned arrays, add servers (with their storage), add racks.
#[derive(Debug, Clone)]
pub struct Grow<'a> {
    /// Top every owned shared array up to this many data disks per server of its rack (None: no top-up).
    pub fill: Option<u32>,
    pub servers: u32,
    pub racks: u32,
    pub server_model: &'a str,
    pub storage: &'a StorageKind,
    pub disk_model: &'a str,
    /// Data disks per added server.
    pub disks: u32,
}

impl Grow<'_> {
    /// From content: `have` alone is the owned site; `+fill2` tops owned arrays up to two data disks per
    /// server; `+2s-generic-16c-EF300-nvme-3.84tx1` adds two servers with one data disk each; `+1r` of
    /// them in one new rack.
    pub fn id(&self, filled: bool) -> String {
        let mut id = String::from("have");
        if let (Some(f), true) = (self.fill, filled) {
            id.push_str(&format!("+fill{f}"));
        }
        if self.servers > 0 {
            id.push_str(&format!(
                "+{}s-{}-{}-{}x{}",
                self.servers,
                self.server_model,
                self.storage.label(),
                self.disk_model,
                self.disks
            ));
        }
        if self.racks > 0 {
            id.push_str(&format!("+{}r", self.racks));
        }
        id
    }
}

/// What was added, in words and as parts to price.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Added {
    #[serde(flatten)]
    pub counts: Summary,
    /// Each addition in one line, e.g. `1 × nvme-3.84t into C1 (2 → 3 disks)`.
    pub items: Vec<String>,
    #[serde(skip)]
    pub parts: Parts,
    /// The names of the servers added.
    #[serde(skip)]
    pub server_names: Vec<String>,
}

impl Added {
    fn part(m: &mut std::collections::BTreeMap<String, u32>, k: &str, n: u32) {
        if n > 0 {
            *m.entry(k.to_string()).or_default() += n;
        }
    }
    fn disks(&mut self, model: &str, n: u32, into: &str, had: u32) {
        Added::part(&mut self.parts.disks, model, n);
        self.counts.disks += n;
        self.items.push(if had == 0 {
            format!("{n} × {model} into {into}")
        } else {
            format!("{n} × {model} into {into} ({had} → {} disks)", had + n)
        });
    }
}

/// An array that takes new disks and new volume groups: a shared array not used as given (no existing
/// group or pool, not a host's pool).
pub fn growable(a: &GArray) -> bool {
    a.host.is_none() && !a.existing && a.raid != Some(ArrayRaid::Ddp)
}

fn slots(catalog: &Catalog, a: &GArray) -> u32 {
    catalog.array(&a.model).map(|m| m.drive_slots).unwrap_or(a.disks)
}

/// Top owned arrays up to `fill` data disks per server of the rack that uses them (servers without
/// internal disks or a host). Returns whether any disk was added.
fn top_up(racks: &mut [GRack], fill: u32, catalog: &Catalog, added: &mut Added) -> Result<bool, Skip> {
    let mut any = false;
    for r in racks.iter_mut() {
        let users = r
            .servers
            .iter()
            .filter(|s| s.disks.is_none() && s.host.is_none())
            .count() as u32;
        let Some(a) = r.arrays.iter_mut().find(|a| growable(a)) else {
            continue;
        };
        let want = fill * users + a.hot_spares;
        if users == 0 || want <= a.disks {
            continue;
        }
        if want > slots(catalog, a) {
            return Err(Skip::DriveSlots);
        }
        added.disks(&a.disk_model.clone(), want - a.disks, &a.name.clone(), a.disks);
        a.disks = want;
        r.changed = true;
        any = true;
    }
    Ok(any)
}

fn taken(racks: &[GRack]) -> std::collections::HashSet<String> {
    let mut t = std::collections::HashSet::new();
    for r in racks {
        t.insert(r.name.to_ascii_lowercase());
        for s in &r.servers {
            t.insert(s.name.to_ascii_lowercase());
            t.extend(s.host.iter().map(|h| h.to_ascii_lowercase()));
            t.insert(format!("{}-internal", s.name.to_ascii_lowercase()));
        }
        for a in &r.arrays {
            t.insert(a.name.to_ascii_lowercase());
        }
    }
    t
}

/// The first name `prefix{n}` (n from 1) not taken, taken from then on.
fn fresh(taken: &mut std::collections::HashSet<String>, prefix: &str) -> String {
    let n = (1..)
        .find(|n| !taken.contains(&format!("{prefix}{n}").to_ascii_lowercase()))
        .expect("names are finite");
    let name = format!("{prefix}{n}");
    taken.insert(name.to_ascii_lowercase());
    name
}

/// Add one server to rack `ri` with its storage: `disks` data disks of the rack's growable array when it
/// has one (of that array's disk model), else internal disks, else a new array of the chosen model.
fn add_server(
    racks: &mut [GRack],
    ri: usize,
    g: &Grow,
    catalog: &Catalog,
    names: &mut std::collections::HashSet<String>,
    added: &mut Added,
    spares: u32,
) -> Result<(), Skip> {
    let name = fresh(names, "n");
    let r = &mut racks[ri];
    r.changed = true;
    Added::part(&mut added.parts.servers, g.server_model, 1);
    added.counts.servers += 1;
    added
        .items
        .push(format!("server {name} ({}) in rack {}", g.server_model, r.name));
    added.server_names.push(name.clone());
    let mut disks = None;
    match g.storage {
        StorageKind::Internal => {
            let bays = catalog.array("internal").map(|a| a.drive_slots).unwrap_or(u32::MAX);
            if g.disks > bays {
                return Err(Skip::DriveSlots);
            }
            Added::part(&mut added.parts.disks, g.disk_model, g.disks);
            added.counts.disks += g.disks;
            added
                .items
                .push(format!("{} × {} inside {name}", g.disks, g.disk_model));
            disks = Some(GArray {
                name: format!("{name}-internal"),
                model: "internal".into(),
                disk_model: g.disk_model.into(),
                disks: g.disks,
                hot_spares: 0,
                raid: None,
                existing: false,
                write_cache: false,
                disk_size: None,
                host: None,
                reserved_drives: None,
            });
        }
        StorageKind::Array(m) => {
            if let Some(a) = r.arrays.iter_mut().find(|a| growable(a)) {
                if a.disks + g.disks > slots(catalog, a) {
                    return Err(Skip::DriveSlots);
                }
                added.disks(&a.disk_model.clone(), g.disks, &a.name.clone(), a.disks);
                a.disks += g.disks;
            } else {
                let a = GArray {
                    name: fresh(names, &format!("{}-new", r.name)),
                    model: m.clone(),
                    disk_model: g.disk_model.into(),
                    disks: g.disks + spares,
                    hot_spares: spares,
                    raid: None,
                    existing: false,
                    write_cache: true,
                    disk_size: None,
                    host: None,
                    reserved_drives: None,
                };
                if a.disks > slots(catalog, &a) {
                    return Err(Skip::DriveSlots);
                }
                Added::part(&mut added.parts.arrays, m, 1);
                added.counts.arrays += 1;
                added.items.push(format!("array {} ({m}) in rack {}", a.name, r.name));
                added.disks(g.disk_model, a.disks, &a.name, 0);
                r.arrays.push(a);
            }
        }
    }
    r.servers.push(GServer {
        name,
        model: g.server_model.into(),
        host: None,
        pdu: None,
        disks,
    });
    Ok(())
}

/// Rack units and peak watts of a rack's parts (servers at 1U when the catalog gives none).
fn rack_fit(r: &GRack, catalog: &Catalog) -> (u32, f64) {
    let disk_w = |a: &GArray| {
        catalog
            .disk(&a.disk_model)
            .map(|d| fit_watts(&d.hardware))
            .unwrap_or(0.0)
            * f64::from(a.disks)
    };
    let mut ru = 0;
    let mut w = 0.0;
    for s in &r.servers {
        if let Some(m) = catalog.server(&s.model) {
            ru += m.hardware.rack_units.unwrap_or(1);
            w += fit_watts(&m.hardware);
        }
        w += s.disks.as_ref().map(disk_w).unwrap_or(0.0);
    }
    for a in r.arrays.iter().filter(|a| a.host.is_none()) {
        if let Some(m) = catalog.array(&a.model) {
            ru += m.hardware.rack_units.unwrap_or(0);
            w += fit_watts(&m.hardware);
        }
        w += disk_w(a);
    }
    (ru, w)
}

/// The owned racks grown by `g`: the racks, what was added, and whether a top-up added any disk; or why
/// the combination does not fit (an array's slots, a changed rack's units or watts).
pub fn grow(owned: &[GRack], spec: &SizeSpec, catalog: &Catalog, g: &Grow) -> Result<(Vec<GRack>, Added, bool), Skip> {
    let mut racks = owned.to_vec();
    let mut added = Added::default();
    let filled = match g.fill {
        Some(f) => top_up(&mut racks, f, catalog, &mut added)?,
        None => false,
    };
    let mut names = taken(&racks);
    for _ in 0..g.racks {
        let name = fresh(&mut names, "R");
        added.items.push(format!("rack {name}"));
        added.counts.racks += 1;
        racks.push(GRack {
            name,
            power_feeds: 2,
            uplinks: 2,
            pdus: Vec::new(),
            servers: Vec::new(),
            arrays: Vec::new(),
            changed: true,
        });
    }
    for ri in placement(&racks, g.servers, g.racks) {
        add_server(&mut racks, ri, g, catalog, &mut names, &mut added, spec.hot_spares)?;
    }
    for r in racks.iter().filter(|r| r.changed) {
        let (ru, w) = rack_fit(r, catalog);
        if ru > spec.rack_units {
            return Err(Skip::RackUnits);
        }
        if w > spec.rack_watts {
            return Err(Skip::RackPower);
        }
    }
    Ok((racks, added, filled))
}

/// Which rack each added server goes to: every new rack (the last `new` racks) one first, then always
/// the rack with the fewest servers (the first of equals), so servers spread as `size` spreads them.
fn placement(racks: &[GRack], servers: u32, new: u32) -> Vec<usize> {
    let mut count: Vec<u32> = racks.iter().map(|r| r.servers.len() as u32).collect();
    let first_new = racks.len() - new as usize;
    let mut out: Vec<usize> = (first_new..racks.len()).take(servers as usize).collect();
    for &i in &out {
        count[i] += 1;
    }
    while out.len() < servers as usize {
        let i = (0..count.len())
            .min_by_key(|&i| (count[i], i))
            .expect("a site has racks");
        count[i] += 1;
        out.push(i);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed() -> (Site, Catalog) {
        let catalog = Catalog::builtin();
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/seed-five-servers-raid0.yaml"
        ))
        .unwrap();
        (crate::site::parse_str(&text, "seed.yaml", &catalog).unwrap(), catalog)
    }

    #[test]
    fn added_servers_go_to_new_racks_first_then_to_the_emptiest() {
        let (site, _) = seed();
        let mut racks = from_site(&site);
        racks.push(GRack {
            name: "R1".into(),
            power_feeds: 2,
            uplinks: 2,
            pdus: vec![],
            servers: vec![],
            arrays: vec![],
            changed: true,
        });
        // A 2, B 2, C 1, R1 0: R1 first; then C and R1 have 1 (C first of equals), then R1 alone has 1.
        assert_eq!(placement(&racks, 4, 1), vec![3, 2, 3, 0]);
    }

    #[test]
    fn a_top_up_fills_owned_arrays_to_the_disks_per_server_asked() {
        let (site, catalog) = seed();
        let owned = from_site(&site);
        let spec = crate::size::SizeSpec {
            racks: (3, 4),
            servers: (5, 7),
            disks_per_server: (1, 2),
            rack_units: 42,
            rack_watts: 8000.0,
            server_models: vec!["generic-16c".into()],
            storage: vec![StorageKind::Array("EF300".into())],
            disk_models: vec!["nvme-3.84t".into()],
            hot_spares: 1,
        };
        let st = StorageKind::Array("EF300".into());
        let g = Grow {
            fill: Some(2),
            servers: 1,
            racks: 0,
            server_model: "generic-16c",
            storage: &st,
            disk_model: "nvme-3.84t",
            disks: 2,
        };
        let (racks, added, filled) = grow(&owned, &spec, &catalog, &g).unwrap();
        assert!(filled);
        // A and B: 2 servers × 2 + 1 spare = 5 (2 added each); C: 1 × 2 + 1 = 3 (1 added), then the new
        // server n1 goes to C (the emptiest) with 2 more disks.
        let disks: Vec<u32> = racks.iter().map(|r| r.arrays[0].disks).collect();
        assert_eq!(disks, vec![5, 5, 5]);
        assert_eq!(added.counts.disks, 2 + 2 + 1 + 2);
        assert_eq!(added.counts.servers, 1);
        assert_eq!(racks[2].servers.last().unwrap().name, "n1");
        assert_eq!(g.id(filled), "have+fill2+1s-generic-16c-EF300-nvme-3.84tx2");
        // Owned hardware costs nothing: only the added parts are priced.
        assert_eq!(added.parts.disks.get("nvme-3.84t"), Some(&7));
        assert_eq!(added.parts.servers.get("generic-16c"), Some(&1));
        assert!(added.parts.arrays.is_empty());
    }
}
