//! Prices (`--prices prices.yaml`): the user's, per server, array and disk model, per rack unit and
//! optionally per watt-year, in one currency. Without them, costs are relative: the bill's typical watts
//! from the catalog (each model's `hardware_source`), said so in the output — never an invented price.

use super::bill::Bill;
use super::{SizeSpec, StorageKind};
use crate::catalog::Catalog;
use crate::site::{Doc, SiteErrors};
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

/// Read and check a prices file against the catalog and the models `size:` allows: every problem at
/// once, each with its place.
pub fn read_prices(text: &str, file: &str, spec: &SizeSpec, catalog: &Catalog) -> Result<Prices, SiteErrors> {
    let doc = Doc::parse(text, file)?;
    let (raw, mut errors) = doc.read::<RawPrices>();
    let Some(raw) = raw else {
        return Err(doc.errors(errors));
    };
    let mut check = |map: &BTreeMap<String, f64>, section: &str, known: Vec<&str>, needed: Vec<&str>| {
        for (k, v) in map {
            let p = format!("{section}.{k}");
            if !known.contains(&k.as_str()) {
                let near = crate::site::nearest(k, known.iter().copied())
                    .map(|m| format!("write {m}; "))
                    .unwrap_or_default();
                errors.push(doc.error(
                    &p,
                    format!("unknown model '{}'", crate::site::yaml::clip(k)),
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
        for n in needed {
            if !map.contains_key(n) {
                errors.push(doc.error(
                    section,
                    format!("no price for {n}, which size: allows"),
                    format!("add `{n}: PRICE` under `{section}:`, or leave {n} out of the workload's size: key"),
                ));
            }
        }
    };
    check(
        &raw.servers,
        "servers",
        catalog.server_names(),
        spec.server_models.iter().map(String::as_str).collect(),
    );
    check(
        &raw.arrays,
        "arrays",
        catalog.array_names(),
        spec.storage
            .iter()
            .filter_map(|s| match s {
                StorageKind::Array(m) => Some(m.as_str()),
                StorageKind::Internal => None,
            })
            .collect(),
    );
    check(
        &raw.disks,
        "disks",
        catalog.disk_names(),
        spec.disk_models.iter().map(String::as_str).collect(),
    );
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

/// The bill's typical watts (servers, arrays, disks), from the catalog.
fn typical_watts(bill: &Bill, catalog: &Catalog) -> (f64, f64, f64) {
    let w = |h: &crate::catalog::Hardware| h.watts_typical.unwrap_or(0.0);
    let s = catalog
        .server(&bill.server_model)
        .map(|m| w(&m.hardware))
        .unwrap_or(0.0)
        * f64::from(bill.servers());
    let a = match &bill.storage {
        StorageKind::Array(m) => catalog.array(m).map(|m| w(&m.hardware)).unwrap_or(0.0) * f64::from(bill.arrays()),
        StorageKind::Internal => 0.0,
    };
    let d = catalog.disk(&bill.disk_model).map(|m| w(&m.hardware)).unwrap_or(0.0) * f64::from(bill.disks());
    (s, a, d)
}

/// A bill's cost: with prices, money; without, its typical watts (relative units).
pub fn cost(bill: &Bill, prices: Option<&Prices>, catalog: &Catalog) -> Cost {
    let (ws, wa, wd) = typical_watts(bill, catalog);
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
    let price = |m: &BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let servers = price(&p.servers, &bill.server_model) * f64::from(bill.servers());
    let arrays = match &bill.storage {
        StorageKind::Array(m) => price(&p.arrays, m) * f64::from(bill.arrays()),
        StorageKind::Internal => 0.0,
    };
    let disks = price(&p.disks, &bill.disk_model) * f64::from(bill.disks());
    let racks = p.rack_unit * f64::from(bill.rack_units());
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
