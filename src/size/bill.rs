//! Candidate bills of materials: racks used, servers per rack with a model, storage per server (an array
//! per rack with a disk model, count and hot spares, or internal disks), each written as a site file.

use super::{fit_watts, SizeSpec, StorageKind};
use crate::catalog::Catalog;
use serde::Serialize;

/// One rack of a bill.
#[derive(Debug, Clone, Serialize)]
pub struct RackBill {
    pub name: String,
    /// Server names, each of `Bill::server_model`.
    pub servers: Vec<String>,
    /// The rack's shared array, when the storage is an array model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayBill>,
    /// Rack units and peak watts this rack's parts take.
    pub rack_units: u32,
    pub watts_peak: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArrayBill {
    pub name: String,
    pub model: String,
    pub disks: u32,
    pub hot_spares: u32,
}

/// What one candidate buys.
#[derive(Debug, Clone, Serialize)]
pub struct Bill {
    /// From content: racks, servers, server model, storage, disk model and data disks per server.
    pub id: String,
    pub racks: Vec<RackBill>,
    pub server_model: String,
    pub storage: StorageKind,
    pub disk_model: String,
    /// Data disks per server (with an array: the server's share of it; spares come on top).
    pub disks_per_server: u32,
    /// `size --have`: the owned site grown by this bill's additions (None: a green-field bill, whose
    /// `racks` are all bought). Its counts, racks block and priced parts are the grown site's.
    #[serde(skip)]
    pub grown: Option<std::sync::Arc<super::have::Grown>>,
}

impl Bill {
    /// Racks of the bill's site (owned ones included with `--have`).
    pub fn rack_count(&self) -> u32 {
        match &self.grown {
            Some(g) => g.total.racks,
            None => self.racks.len() as u32,
        }
    }
    /// Arrays a server's volume may be on, as failure domains: every array of a grown site (internal
    /// disks and hosts' pools count); a green-field bill's arrays, or None with internal disks (judged by
    /// the server rule).
    pub fn array_domains(&self) -> Option<u32> {
        match (&self.grown, &self.storage) {
            (Some(g), _) => Some(g.total.arrays),
            (None, StorageKind::Array(_)) => Some(self.arrays()),
            (None, StorageKind::Internal) => None,
        }
    }
    pub fn servers(&self) -> u32 {
        if let Some(g) = &self.grown {
            return g.total.servers;
        }
        self.racks.iter().map(|r| r.servers.len() as u32).sum()
    }
    pub fn arrays(&self) -> u32 {
        self.racks.iter().filter(|r| r.array.is_some()).count() as u32
    }
    /// Every disk bought: arrays' disks (spares included), or each server's internal disks.
    pub fn disks(&self) -> u32 {
        match self.storage {
            StorageKind::Internal => self.servers() * self.disks_per_server,
            StorageKind::Array(_) => self
                .racks
                .iter()
                .filter_map(|r| r.array.as_ref())
                .map(|a| a.disks)
                .sum(),
        }
    }
    pub fn rack_units(&self) -> u32 {
        self.racks.iter().map(|r| r.rack_units).sum()
    }

    /// The `racks:` block of this bill's site file.
    pub fn racks_yaml(&self) -> String {
        if let Some(g) = &self.grown {
            return format!("\n# natsplan size --have: candidate {}\n{}", self.id, g.yaml);
        }
        let mut s = format!("\n# natsplan size: candidate {}\nracks:\n", self.id);
        for r in &self.racks {
            s.push_str(&format!("  - name: {}\n    servers:\n", r.name));
            for n in &r.servers {
                match self.storage {
                    StorageKind::Internal => s.push_str(&format!(
                        "      - {{ name: {n}, model: {}, disks: {{ disk_model: {}, count: {}, hot_spares: 0 }} }}\n",
                        self.server_model, self.disk_model, self.disks_per_server
                    )),
                    StorageKind::Array(_) => {
                        s.push_str(&format!("      - {{ name: {n}, model: {} }}\n", self.server_model))
                    }
                }
            }
            if let Some(a) = &r.array {
                s.push_str(&format!(
                    "    arrays:\n      - {{ name: {}, model: {}, disk_model: {}, disks: {}, hot_spares: {} }}\n",
                    a.name, a.model, self.disk_model, a.disks, a.hot_spares
                ));
            }
        }
        s
    }
}

/// Why a combination of the ranges is not a candidate, for the count the output reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// More disks than the array model's slots (or the server's bays).
    DriveSlots,
    /// A rack's parts take more rack units than `size.rack_units`.
    RackUnits,
    /// A rack's parts draw more than `size.rack_watts` at peak.
    RackPower,
}

impl Skip {
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::DriveSlots => "more disks than the array's drive slots",
            Skip::RackUnits => "more rack units than a rack holds",
            Skip::RackPower => "more peak watts than a rack's power",
        }
    }
}

/// `n` servers over `r` racks as evenly as can be, the first racks taking one more (5 over 3: 2 + 2 + 1).
pub fn spread(n: u32, r: u32) -> Vec<u32> {
    (0..r).map(|i| n / r + u32::from(i < n % r)).collect()
}

fn rack_name(i: usize) -> String {
    // A..Z, then R27, R28, ... (the ranges are small; names stay valid site names).
    if i < 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

/// Every combination of the ranges, in a fixed order (racks, servers, server model, storage, disk model,
/// disks per server), as a bill or the reason it does not fit.
pub fn enumerate(spec: &SizeSpec, catalog: &Catalog) -> Vec<Result<Bill, Skip>> {
    let mut out = Vec::new();
    for r in spec.racks.0..=spec.racks.1 {
        for n in spec.servers.0.max(r)..=spec.servers.1 {
            for sm in &spec.server_models {
                for st in &spec.storage {
                    for dm in &spec.disk_models {
                        for k in spec.disks_per_server.0..=spec.disks_per_server.1 {
                            let c = Choice {
                                racks: r,
                                servers: n,
                                server_model: sm,
                                storage: st,
                                disk_model: dm,
                                disks: k,
                            };
                            out.push(make(spec, catalog, c));
                        }
                    }
                }
            }
        }
    }
    out
}

/// One combination of the ranges: racks, servers, server model, storage, disk model, data disks per server.
struct Choice<'a> {
    racks: u32,
    servers: u32,
    server_model: &'a str,
    storage: &'a StorageKind,
    disk_model: &'a str,
    disks: u32,
}

fn make(spec: &SizeSpec, catalog: &Catalog, c: Choice) -> Result<Bill, Skip> {
    let Choice {
        racks: r,
        servers: n,
        server_model: sm,
        storage: st,
        disk_model: dm,
        disks: k,
    } = c;
    let server = catalog
        .server(sm)
        .expect("size.server_models are checked against the catalog");
    let disk = catalog
        .disk(dm)
        .expect("size.disk_models are checked against the catalog");
    let (s_ru, s_w) = (server.hardware.rack_units.unwrap_or(1), fit_watts(&server.hardware));
    let d_w = fit_watts(&disk.hardware);
    let mut racks = Vec::new();
    let mut next = 1;
    for (i, per) in spread(n, r).into_iter().enumerate() {
        let name = rack_name(i);
        let servers: Vec<String> = (0..per)
            .map(|_| {
                let s = format!("s{next}");
                next += 1;
                s
            })
            .collect();
        let (array, ru, w) = match st {
            StorageKind::Internal => {
                let bays = catalog.array("internal").map(|a| a.drive_slots).unwrap_or(u32::MAX);
                if k > bays {
                    return Err(Skip::DriveSlots);
                }
                (None, per * s_ru, f64::from(per) * (s_w + f64::from(k) * d_w))
            }
            StorageKind::Array(m) => {
                let a = catalog.array(m).expect("size.storage is checked against the catalog");
                let disks = per * k + spec.hot_spares;
                // The controller shelf's slots: expansion shelves would add rack units and watts not modelled here.
                if disks > a.drive_slots {
                    return Err(Skip::DriveSlots);
                }
                let arr = ArrayBill {
                    name: format!("{name}1"),
                    model: m.clone(),
                    disks,
                    hot_spares: spec.hot_spares,
                };
                let ru = per * s_ru + a.hardware.rack_units.unwrap_or(0);
                let w = f64::from(per) * s_w + fit_watts(&a.hardware) + f64::from(disks) * d_w;
                (Some(arr), ru, w)
            }
        };
        if ru > spec.rack_units {
            return Err(Skip::RackUnits);
        }
        if w > spec.rack_watts {
            return Err(Skip::RackPower);
        }
        racks.push(RackBill {
            name,
            servers,
            array,
            rack_units: ru,
            watts_peak: w,
        });
    }
    Ok(Bill {
        id: format!("{r}r{n}s-{sm}-{}-{dm}x{k}", st.label()),
        racks,
        server_model: sm.to_string(),
        storage: st.clone(),
        disk_model: dm.to_string(),
        disks_per_server: k,
        grown: None,
    })
}

/// The racks of the probe site `read_workload` checks the workload's own keys with: the most racks and
/// servers the ranges allow, each server with one internal disk of the first allowed disk model.
pub fn probe_racks(spec: &SizeSpec) -> String {
    let bill = Bill {
        id: "probe".into(),
        racks: spread(spec.servers.1.max(spec.racks.1), spec.racks.1)
            .into_iter()
            .enumerate()
            .scan(1, |next, (i, per)| {
                let servers = (0..per)
                    .map(|_| {
                        *next += 1;
                        format!("s{}", *next - 1)
                    })
                    .collect();
                Some(RackBill {
                    name: rack_name(i),
                    servers,
                    array: None,
                    rack_units: 0,
                    watts_peak: 0.0,
                })
            })
            .collect(),
        server_model: spec.server_models.first().cloned().unwrap_or_default(),
        storage: StorageKind::Internal,
        disk_model: spec.disk_models.first().cloned().unwrap_or_default(),
        disks_per_server: 1,
        grown: None,
    };
    bill.racks_yaml()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_servers_over_three_racks_are_the_seeds_two_two_one() {
        assert_eq!(spread(5, 3), vec![2, 2, 1]);
        assert_eq!(spread(3, 3), vec![1, 1, 1]);
        assert_eq!(spread(3, 1), vec![3]);
        assert_eq!(spread(4, 3), vec![2, 1, 1]);
    }
}
