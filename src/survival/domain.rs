//! Failure domains: the selectors of ARCHITECTURE.md "Failure domains" (`rack:A`, `disk:A1/3`, `process:n1`, …), parsed
//! against a site with errors that list the valid names, printed back exactly as users write them, and
//! enumerated per kind for `whatif --all` and `tolerates`.

use crate::layout::Layout;
use crate::site::{ArrayIdx, RackIdx, ServerIdx, Site};
use serde::Serialize;
use std::fmt;

/// What kind of thing fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DomainKind {
    Disk,
    Array,
    Process,
    Pause,
    Server,
    Wipe,
    Full,
    Power,
    Net,
    Rack,
    Host,
    Pdu,
    /// A rack destroyed for good (fire, flood): every store in it is gone (issue 32).
    LostRack,
    /// Every volume of an array lost for good (firmware that corrupts volumes, a lost cache): issue 32.
    LostArray,
}

impl DomainKind {
    /// Permanent losses: selectable (`--fail lost-rack:A`, `--kinds lost-rack`) and in the yearly figures,
    /// but not swept by `--all` unless asked for, nor counted in `tolerates` (a destroyed rack is a down
    /// rack for writes; what it costs is durability, in the yearly figures).
    pub const PERMANENT: [DomainKind; 2] = [DomainKind::LostRack, DomainKind::LostArray];

    pub const ALL: [DomainKind; 12] = [
        DomainKind::Rack,
        DomainKind::Array,
        DomainKind::Server,
        DomainKind::Disk,
        DomainKind::Power,
        DomainKind::Net,
        DomainKind::Process,
        DomainKind::Pause,
        DomainKind::Wipe,
        DomainKind::Full,
        DomainKind::Host,
        DomainKind::Pdu,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DomainKind::Disk => "disk",
            DomainKind::Array => "array",
            DomainKind::Process => "process",
            DomainKind::Pause => "pause",
            DomainKind::Server => "server",
            DomainKind::Wipe => "wipe",
            DomainKind::Full => "full",
            DomainKind::Power => "power",
            DomainKind::Net => "net",
            DomainKind::Rack => "rack",
            DomainKind::Host => "host",
            DomainKind::Pdu => "pdu",
            DomainKind::LostRack => "lost-rack",
            DomainKind::LostArray => "lost-array",
        }
    }

    /// Parse a kind name (`rack`, `disk`, …) as `--kinds` takes it.
    pub fn parse(s: &str) -> Result<DomainKind, String> {
        let t = s.trim().to_ascii_lowercase();
        DomainKind::ALL
            .into_iter()
            .chain(DomainKind::PERMANENT)
            .find(|k| k.as_str() == t)
            .ok_or_else(|| format!("unknown failure-domain kind '{}'; use one of {}", s.trim(), kind_list()))
    }

    /// What the selector's name refers to, for messages.
    fn target_noun(self) -> &'static str {
        match self {
            DomainKind::Disk | DomainKind::Array | DomainKind::LostArray => "array",
            DomainKind::Process | DomainKind::Pause | DomainKind::Server | DomainKind::Wipe => "server",
            DomainKind::Full => "server or array",
            DomainKind::Power | DomainKind::Net | DomainKind::Rack | DomainKind::LostRack => "rack",
            DomainKind::Host => "shared host",
            DomainKind::Pdu => "PDU",
        }
    }
}

fn kind_list() -> String {
    DomainKind::ALL
        .iter()
        .chain(&DomainKind::PERMANENT)
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The thing a domain names, resolved against the site.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DomainTarget {
    Server(ServerIdx),
    Array(ArrayIdx),
    /// An array and a disk slot in it, from 1.
    Disk(ArrayIdx, u32),
    Rack(RackIdx),
    Host(String),
    Pdu(String),
}

/// One failure domain, e.g. `rack:A` or `disk:A1/3`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Domain {
    pub kind: DomainKind,
    pub target: DomainTarget,
    /// The name as the site spells it (array name for disks).
    pub name: String,
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            DomainTarget::Disk(_, slot) => write!(f, "disk:{}/{slot}", self.name),
            _ => write!(f, "{}:{}", self.kind.as_str(), self.name),
        }
    }
}

impl Serialize for Domain {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Find `name` among `names`: exact first, then ignoring case.
fn find(names: &[&str], name: &str) -> Option<usize> {
    names
        .iter()
        .position(|n| *n == name)
        .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(name)))
}

/// At most 12 valid selectors, then a count of the rest: enough to spot a typo without a wall of text.
fn listing(kind: &str, names: &[String]) -> String {
    let mut shown: Vec<String> = names.iter().take(12).map(|n| format!("{kind}:{n}")).collect();
    if names.len() > 12 {
        shown.push(format!("… ({} more)", names.len() - 12));
    }
    if shown.is_empty() {
        "(the site has none)".into()
    } else {
        shown.join(", ")
    }
}

/// A disk selector's domain: `name` is ARRAY/SLOT, the slot from 1.
fn parse_disk(sel: &str, name: &str, site: &Site) -> Result<Domain, String> {
    let arrays: Vec<&str> = site.arrays.iter().map(|a| a.name.as_str()).collect();
    let Some((arr, slot)) = name.rsplit_once('/') else {
        return Err(format!(
            "'{sel}': a disk selector names the array and the disk slot from 1, e.g. disk:{}/1",
            arrays.first().copied().unwrap_or("A1")
        ));
    };
    let a = find(&arrays, arr.trim()).ok_or_else(|| {
        let valid: Vec<String> = site
            .arrays
            .iter()
            .map(|a| format!("{}/1..{}", a.name, a.disks))
            .collect();
        format!(
            "'{sel}': no array named '{name}' in the site; valid: {}",
            listing("disk", &valid)
        )
    })?;
    let disks = site.arrays[a].disks;
    let n: u32 = slot
        .trim()
        .parse()
        .ok()
        .filter(|n| (1..=disks).contains(n))
        .ok_or_else(|| {
            format!(
                "'{sel}': array {} has disks 1..{disks}; '{}' is not one of them",
                site.arrays[a].name,
                slot.trim()
            )
        })?;
    Ok(Domain {
        kind: DomainKind::Disk,
        target: DomainTarget::Disk(a, n),
        name: site.arrays[a].name.clone(),
    })
}

/// A shared host's or a PDU's domain (`kind` says which).
fn parse_host_or_pdu(kind: DomainKind, sel: &str, name: &str, site: &Site) -> Result<Domain, String> {
    let host = kind == DomainKind::Host;
    let (names, what, none) = if host {
        (
            host_names(site),
            "shared host",
            "the site lists no shared hosts (servers[].host)",
        )
    } else {
        (pdu_names(site), "PDU", "the site lists no PDUs (racks[].pdus)")
    };
    let refs: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let i = find(&refs, name).ok_or_else(|| {
        if names.is_empty() {
            format!("'{sel}': {none}; nothing to fail")
        } else {
            format!(
                "'{sel}': no {what} named '{name}' in the site; valid: {}",
                listing(kind.as_str(), &names)
            )
        }
    })?;
    let target = if host {
        DomainTarget::Host(names[i].clone())
    } else {
        DomainTarget::Pdu(names[i].clone())
    };
    Ok(Domain {
        kind,
        target,
        name: names[i].clone(),
    })
}

impl Domain {
    /// Parse a selector such as `rack:A`, `disk:A1/3`, `process:n1` against the site. The error says what
    /// is wrong and lists the valid selectors of that kind.
    pub fn parse(selector: &str, site: &Site) -> Result<Domain, String> {
        let sel = selector.trim();
        let Some((kind_s, name)) = sel.split_once(':') else {
            return Err(format!(
                "'{sel}' is not a failure-domain selector; write KIND:NAME, e.g. rack:A, disk:A1/2, \
                 process:n1 (kinds: {})",
                kind_list()
            ));
        };
        let kind = DomainKind::parse(kind_s).map_err(|e| format!("in '{sel}': {e}"))?;
        let name = name.trim();
        let servers: Vec<&str> = site.servers.iter().map(|s| s.name.as_str()).collect();
        let arrays: Vec<&str> = site.arrays.iter().map(|a| a.name.as_str()).collect();
        let racks: Vec<&str> = site.racks.iter().map(|r| r.name.as_str()).collect();
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let unknown =
            |what: &str, valid: String| format!("'{sel}': no {} named '{name}' in the site; valid: {valid}", what);
        let ks = kind.as_str();
        match kind {
            DomainKind::Disk => parse_disk(sel, name, site),
            DomainKind::Array | DomainKind::LostArray => {
                let a = find(&arrays, name).ok_or_else(|| unknown("array", listing(ks, &owned(&arrays))))?;
                Ok(Domain {
                    kind,
                    target: DomainTarget::Array(a),
                    name: site.arrays[a].name.clone(),
                })
            }
            DomainKind::Process | DomainKind::Pause | DomainKind::Server | DomainKind::Wipe => {
                let s = find(&servers, name).ok_or_else(|| unknown("server", listing(ks, &owned(&servers))))?;
                Ok(Domain {
                    kind,
                    target: DomainTarget::Server(s),
                    name: site.servers[s].name.clone(),
                })
            }
            DomainKind::Full => {
                // A server's store or a whole array can fill; server names win when both match.
                if let Some(s) = find(&servers, name) {
                    return Ok(Domain {
                        kind,
                        target: DomainTarget::Server(s),
                        name: site.servers[s].name.clone(),
                    });
                }
                if let Some(a) = find(&arrays, name) {
                    return Ok(Domain {
                        kind,
                        target: DomainTarget::Array(a),
                        name: site.arrays[a].name.clone(),
                    });
                }
                let mut all = owned(&servers);
                all.extend(owned(&arrays));
                Err(unknown(kind.target_noun(), listing(ks, &all)))
            }
            DomainKind::Power | DomainKind::Net | DomainKind::Rack | DomainKind::LostRack => {
                let r = find(&racks, name).ok_or_else(|| unknown("rack", listing(ks, &owned(&racks))))?;
                Ok(Domain {
                    kind,
                    target: DomainTarget::Rack(r),
                    name: site.racks[r].name.clone(),
                })
            }
            DomainKind::Host | DomainKind::Pdu => parse_host_or_pdu(kind, sel, name, site),
        }
    }

    pub fn server(kind: DomainKind, site: &Site, s: ServerIdx) -> Domain {
        Domain {
            kind,
            target: DomainTarget::Server(s),
            name: site.servers[s].name.clone(),
        }
    }
    pub fn array(kind: DomainKind, site: &Site, a: ArrayIdx) -> Domain {
        Domain {
            kind,
            target: DomainTarget::Array(a),
            name: site.arrays[a].name.clone(),
        }
    }
    pub fn disk(site: &Site, a: ArrayIdx, slot: u32) -> Domain {
        Domain {
            kind: DomainKind::Disk,
            target: DomainTarget::Disk(a, slot),
            name: site.arrays[a].name.clone(),
        }
    }
    pub fn rack(kind: DomainKind, site: &Site, r: RackIdx) -> Domain {
        Domain {
            kind,
            target: DomainTarget::Rack(r),
            name: site.racks[r].name.clone(),
        }
    }

    /// Every domain of `kind` that matters to `layout`: racks of the site; the layout's JetStream servers;
    /// the arrays it uses and their disk slots; shared hosts and PDUs of its servers. Domains that touch
    /// nothing of the layout (a non-JetStream server's process) are left out.
    pub fn universe(kind: DomainKind, site: &Site, layout: &Layout) -> Vec<Domain> {
        let mut arrays: Vec<ArrayIdx> = layout.groups.iter().map(|g| g.array).collect();
        arrays.sort_unstable();
        arrays.dedup();
        match kind {
            DomainKind::Rack | DomainKind::Power | DomainKind::Net | DomainKind::LostRack => {
                (0..site.racks.len()).map(|r| Domain::rack(kind, site, r)).collect()
            }
            DomainKind::Process | DomainKind::Pause | DomainKind::Server | DomainKind::Wipe => {
                layout.servers.iter().map(|&s| Domain::server(kind, site, s)).collect()
            }
            DomainKind::Array | DomainKind::LostArray => arrays.iter().map(|&a| Domain::array(kind, site, a)).collect(),
            DomainKind::Full => {
                let mut v: Vec<Domain> = layout.servers.iter().map(|&s| Domain::server(kind, site, s)).collect();
                v.extend(arrays.iter().map(|&a| Domain::array(kind, site, a)));
                v
            }
            DomainKind::Disk => arrays
                .iter()
                .flat_map(|&a| (1..=site.arrays[a].disks).map(move |n| (a, n)))
                .map(|(a, n)| Domain::disk(site, a, n))
                .collect(),
            DomainKind::Host => {
                let mut v: Vec<String> = layout
                    .servers
                    .iter()
                    .filter_map(|&s| site.servers[s].host.clone())
                    .collect();
                v.sort();
                v.dedup();
                v.into_iter()
                    .map(|h| Domain {
                        kind,
                        target: DomainTarget::Host(h.clone()),
                        name: h,
                    })
                    .collect()
            }
            DomainKind::Pdu => {
                let mut v: Vec<String> = Vec::new();
                for &s in &layout.servers {
                    if let Some(p) = &site.servers[s].pdu {
                        v.push(p.clone());
                    }
                    // A single-fed rack's PDUs take the whole rack down, so they matter even unlisted.
                    let rack = &site.racks[site.servers[s].rack];
                    if rack.power_feeds <= 1 {
                        v.extend(rack.pdus.iter().cloned());
                    }
                }
                v.sort();
                v.dedup();
                v.into_iter()
                    .map(|p| Domain {
                        kind,
                        target: DomainTarget::Pdu(p.clone()),
                        name: p,
                    })
                    .collect()
            }
        }
    }
}

fn host_names(site: &Site) -> Vec<String> {
    let mut v: Vec<String> = site.servers.iter().filter_map(|s| s.host.clone()).collect();
    v.sort();
    v.dedup();
    v
}

fn pdu_names(site: &Site) -> Vec<String> {
    let mut v: Vec<String> = site.racks.iter().flat_map(|r| r.pdus.iter().cloned()).collect();
    v.extend(site.servers.iter().filter_map(|s| s.pdu.clone()));
    v.sort();
    v.dedup();
    v
}
