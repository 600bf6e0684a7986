//! Prices (`--prices prices.yaml`): the user's, per server, array and disk model, per rack unit and
//! optionally per watt-year, in one currency. Without them, costs are relative: the bill's typical watts
//! from the catalog (each model's `hardware_source`), said so in the output — never an invented price.

use super::bill::Bill;
use super::{SizeSpec, StorageKind};
use crate::catalog::Catalog;
use crate::input::{Doc, InputErrors};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The prices file as written.
#[derive(Debug, Clone, Deserialize)]
struct RawPrices {
    currency: String,
    #[serde(default)]
    servers: BTreeMap<String, f64>,
    #[serde(default)]
    arrays: BTreeMap<String, f64>,
    #[serde(default)]
    disks: BTreeMap<String, f64>,
    #[serde(default)]
    rack_unit: Option<f64>,
    #[serde(default)]
    watt_year: Option<f64>,
}

/// Checked prices.
#[derive(Debug, Clone, Serialize)]
pub struct Prices {
    pub currency: String,
    pub servers: BTreeMap<String, f64>,
    pub arrays: BTreeMap<String, f64>,
    pub disks: BTreeMap<String, f64>,
    /// Per rack unit occupied (0 when not given).
    pub rack_unit: f64,
    /// Per watt of typical draw for a year; None: no power cost.
    pub watt_year: Option<f64>,
}

/// A candidate's cost, split.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cost {
    /// servers + arrays + disks + racks + power (one year of it, when a watt-year price is given).
    pub total: f64,
    pub servers: f64,
    pub arrays: f64,
    pub disks: f64,
    pub racks: f64,
    /// A year of the bill's typical power; None without a watt-year price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_per_year: Option<f64>,
}

/// What the costs are in.
#[derive(Debug, Clone, Serialize)]
pub struct CostUnit {
    /// The currency, or `relative`.
    pub unit: String,
    /// What that means, in one sentence.
    pub meaning: String,
}

/// The models a prices file must price: those `size:` allows, or those a site uses (`design --prices`),
/// and where they come from, for the fix.
#[derive(Debug, Clone, Default)]
pub struct Needed {
    pub servers: Vec<String>,
    pub arrays: Vec<String>,
    pub disks: Vec<String>,
    /// E.g. "the workload's size: key", for "or leave X out of ...".
    pub from: String,
}

impl Needed {
    pub fn of_spec(spec: &SizeSpec) -> Needed {
        Needed {
            servers: spec.server_models.clone(),
            arrays: spec
                .storage
                .iter()
                .filter_map(|s| match s {
                    StorageKind::Array(m) => Some(m.clone()),
                    StorageKind::Internal => None,
                })
                .collect(),
            disks: spec.disk_models.clone(),
            from: "the workload's size: key".into(),
        }
    }

    /// Every server, array and disk model the site lists (a server's internal disks are no array).
    pub fn of_site(site: &crate::site::Site) -> Needed {
        let uniq = |v: Vec<String>| -> Vec<String> {
            let mut v = v;
            v.sort();
            v.dedup();
            v
        };
        Needed {
            servers: uniq(site.servers.iter().map(|s| s.model.clone()).collect()),
            arrays: uniq(
                site.arrays
                    .iter()
                    .filter(|a| a.owner.is_none())
                    .map(|a| a.model.clone())
                    .collect(),
            ),
            disks: uniq(site.arrays.iter().map(|a| a.disk_model.clone()).collect()),
            from: "the site (give 0 for hardware already paid for)".into(),
        }
    }
}

/// Read and check a prices file against the catalog and the models `needed` lists: every problem at
/// once, each with its place.
pub fn read_prices(text: &str, file: &str, needed: &Needed, catalog: &Catalog) -> Result<Prices, InputErrors> {
    let doc = Doc::parse(text, file)?;
    let (raw, mut errors) = doc.read::<RawPrices>();
    let Some(raw) = raw else {
        return Err(doc.errors(errors));
    };
    let mut check = |map: &BTreeMap<String, f64>, section: &str, known: Vec<&str>, want: &[String]| {
        for (k, v) in map {
            let p = format!("{section}.{k}");
            if !known.contains(&k.as_str()) {
                let near = crate::input::nearest(k, known.iter().copied())
                    .map(|m| format!("write {m}; "))
                    .unwrap_or_default();
                errors.push(doc.error(
                    &p,
                    format!("unknown model '{}'", crate::input::yaml::clip(k)),
                    format!("{near}the catalog's are {}", known.join(", ")),
                ));
            } else if !(v.is_finite() && *v >= 0.0) {
                errors.push(doc.error(
                    &p,
                    format!("a price must be 0 or more, got {v}"),
                    "write the price, e.g. 9000",
                ));
            }
        }
        for n in want {
            if !map.contains_key(n) {
                errors.push(doc.error(
                    section,
                    format!("no price for {n}, which {} has", needed.from),
                    format!(
                        "add `{n}: PRICE` under `{section}:`, or leave {n} out of {}",
                        needed.from
                    ),
                ));
            }
        }
    };
    check(&raw.servers, "servers", catalog.server_names(), &needed.servers);
    check(&raw.arrays, "arrays", catalog.array_names(), &needed.arrays);
    check(&raw.disks, "disks", catalog.disk_names(), &needed.disks);
    for (key, v) in [("rack_unit", raw.rack_unit), ("watt_year", raw.watt_year)] {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                errors.push(doc.error(
                    key,
                    format!("a price must be 0 or more, got {v}"),
                    "write the price, e.g. 20",
                ));
            }
        }
    }
    if raw.currency.trim().is_empty() || raw.currency.len() > 16 {
        errors.push(doc.error(
            "currency",
            "the currency is empty or longer than 16 bytes",
            "write e.g. EUR or USD",
        ));
    }
    if !errors.is_empty() {
        return Err(doc.errors(errors));
    }
    Ok(Prices {
        currency: raw.currency,
        servers: raw.servers,
        arrays: raw.arrays,
        disks: raw.disks,
        rack_unit: raw.rack_unit.unwrap_or(0.0),
        watt_year: raw.watt_year,
    })
}

/// The unit costs are in.
pub fn unit(prices: Option<&Prices>) -> CostUnit {
    match prices {
        Some(p) => CostUnit {
            unit: p.currency.clone(),
            meaning: format!(
                "{}: the given prices; total = servers + arrays + disks + rack units{}",
                p.currency,
                if p.watt_year.is_some() {
                    " + one year of typical power"
                } else {
                    ""
                }
            ),
        },
        None => CostUnit {
            unit: "relative".into(),
            meaning: "relative units, not money: no --prices given, so each part counts its typical watts from the \
                      catalog (models/*.yaml hardware_source; most are marked assumptions there) and racks count 0; \
                      give --prices prices.yaml for money"
                .into(),
        },
    }
}

/// What is priced: counts by model, with nothing else (a bill's whole hardware, or the hardware a design
/// layout uses). Rack units and typical watts come from the catalog, so a bill and the site written from
/// it price the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parts {
    pub servers: BTreeMap<String, u32>,
    /// Arrays bought as arrays (a server's internal disks are none).
    pub arrays: BTreeMap<String, u32>,
    /// Every disk, spares included, by disk model.
    pub disks: BTreeMap<String, u32>,
}

impl Parts {
    fn add(m: &mut BTreeMap<String, u32>, k: &str, n: u32) {
        if n > 0 {
            *m.entry(k.to_string()).or_default() += n;
        }
    }

    /// A bill's parts.
    pub fn of_bill(b: &Bill) -> Parts {
        if let Some(g) = &b.grown {
            return g.added.parts.clone();
        }
        let mut p = Parts::default();
        Parts::add(&mut p.servers, &b.server_model, b.servers());
        if let StorageKind::Array(m) = &b.storage {
            Parts::add(&mut p.arrays, m, b.arrays());
        }
        Parts::add(&mut p.disks, &b.disk_model, b.disks());
        p
    }

    /// The parts a design layout uses: its JetStream servers, and whole the arrays their volumes are on
    /// (every disk of them, spares included; a server's internal disks with it).
    pub fn of_layout(site: &crate::site::Site, l: &crate::plan::PlannedLayout) -> Parts {
        let mut p = Parts::default();
        let mut arrays: Vec<usize> = Vec::new();
        for ps in &l.servers {
            let Some(s) = site.servers.iter().find(|s| s.name == ps.name) else {
                continue;
            };
            Parts::add(&mut p.servers, &s.model, 1);
            let on = ps
                .array
                .as_deref()
                .and_then(|a| site.arrays.iter().position(|x| x.name == a));
            arrays.extend(on.or(s.internal));
        }
        arrays.sort_unstable();
        arrays.dedup();
        for i in arrays {
            let a = &site.arrays[i];
            if a.owner.is_none() {
                Parts::add(&mut p.arrays, &a.model, 1);
            }
            Parts::add(&mut p.disks, &a.disk_model, a.disks);
        }
        p
    }

    /// Rack units (servers at 1 when the catalog gives none, arrays at 0) and typical watts by kind.
    fn rack_units(&self, catalog: &Catalog) -> u32 {
        let s: u32 = self
            .servers
            .iter()
            .map(|(m, n)| n * catalog.server(m).and_then(|x| x.hardware.rack_units).unwrap_or(1))
            .sum();
        let a: u32 = self
            .arrays
            .iter()
            .map(|(m, n)| n * catalog.array(m).and_then(|x| x.hardware.rack_units).unwrap_or(0))
            .sum();
        s + a
    }

    fn typical_watts(&self, catalog: &Catalog) -> (f64, f64, f64) {
        let w = |h: &crate::catalog::Hardware| h.watts_typical.unwrap_or(0.0);
        let sum = |m: &BTreeMap<String, u32>, f: &dyn Fn(&str) -> f64| -> f64 {
            m.iter().map(|(k, n)| f(k) * f64::from(*n)).sum()
        };
        (
            sum(&self.servers, &|k| {
                catalog.server(k).map(|m| w(&m.hardware)).unwrap_or(0.0)
            }),
            sum(&self.arrays, &|k| {
                catalog.array(k).map(|m| w(&m.hardware)).unwrap_or(0.0)
            }),
            sum(&self.disks, &|k| catalog.disk(k).map(|m| w(&m.hardware)).unwrap_or(0.0)),
        )
    }
}

/// A bill's cost: with prices, money; without, its typical watts (relative units).
pub fn cost(bill: &Bill, prices: Option<&Prices>, catalog: &Catalog) -> Cost {
    cost_of(&Parts::of_bill(bill), prices, catalog)
}

/// The cost of some parts, the one pricing size and design share: with prices, money; without, their
/// typical watts (relative units).
pub fn cost_of(parts: &Parts, prices: Option<&Prices>, catalog: &Catalog) -> Cost {
    let (ws, wa, wd) = parts.typical_watts(catalog);
    // An empty sum is -0.0: nothing bought costs 0, printed as such.
    let (ws, wa, wd) = (ws + 0.0, wa + 0.0, wd + 0.0);
    let Some(p) = prices else {
        return Cost {
            total: ws + wa + wd,
            servers: ws,
            arrays: wa,
            disks: wd,
            racks: 0.0,
            power_per_year: None,
        };
    };
    let priced = |prices: &BTreeMap<String, f64>, counts: &BTreeMap<String, u32>| -> f64 {
        counts
            .iter()
            .map(|(k, n)| prices.get(k).copied().unwrap_or(0.0) * f64::from(*n))
            .sum()
    };
    let servers = priced(&p.servers, &parts.servers);
    let arrays = priced(&p.arrays, &parts.arrays);
    let disks = priced(&p.disks, &parts.disks);
    let racks = p.rack_unit * f64::from(parts.rack_units(catalog));
    let power_per_year = p.watt_year.map(|y| y * (ws + wa + wd));
    Cost {
        total: servers + arrays + disks + racks + power_per_year.unwrap_or(0.0),
        servers,
        arrays,
        disks,
        racks,
        power_per_year,
    }
}
