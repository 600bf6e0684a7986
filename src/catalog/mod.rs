//! The catalog: array, disk and server models and the default failure rates and repair times, each with
//! its source. The files in `models/` are compiled into the binary so an installed `natsplan` needs nothing
//! beside it; `--models DIR` reads the same files from elsewhere.

use crate::units::{parse_duration, parse_size};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

const ARRAYS: &str = include_str!("../../models/arrays.yaml");
const DISKS: &str = include_str!("../../models/disks.yaml");
const SERVERS: &str = include_str!("../../models/servers.yaml");
const FAILURES: &str = include_str!("../../models/failure_rates.yaml");

/// What kind of medium a disk is; wear headroom applies to SSDs only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskKind {
    Nvme,
    SasSsd,
    NlSas,
    Virtual,
}

impl DiskKind {
    pub fn is_ssd(self) -> bool {
        matches!(self, DiskKind::Nvme | DiskKind::SasSsd)
    }

    /// A spinning drive: rebuilds at the HDD rates (`rebuild_rate_hdd`, `pool_rebuild_rate_hdd`).
    pub fn is_hdd(self) -> bool {
        matches!(self, DiskKind::NlSas)
    }

    /// Unrecoverable read errors per bit read when a disk model gives none: the datasheet classes of
    /// `models/disks.yaml` (1e-15 enterprise NL-SAS, Inktank's model; 1e-17 enterprise SSD, an assumption);
    /// a virtual disk's errors are its host's.
    pub fn default_nre_per_bit(self) -> f64 {
        match self {
            DiskKind::NlSas => 1e-15,
            DiskKind::Nvme | DiskKind::SasSsd => 1e-17,
            DiskKind::Virtual => 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ArrayModel {
    pub name: String,
    pub class: String,
    pub drive_slots: u32,
    pub controllers: u32,
    pub read_bw_bytes_per_s: f64,
    pub write_bw_bytes_per_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mirrored_write_cache: bool,
    pub supports: Vec<String>,
    pub source: String,
    /// How many drives one volume group or pool of each kind may hold on this model.
    pub group_limits: GroupLimits,
    /// Whether it can be bought, its rack units and power (of the controller shelf), with their source.
    pub hardware: Hardware,
    /// Shelves one system takes (the controller shelf and its expansion shelves) and drives in all, when
    /// given (`hardware.source` says where from).
    pub max_shelves: Option<u32>,
    pub max_drives: Option<u32>,
}

/// What buying a model means (issue 46): whether it can be bought at all — lab and document artefacts
/// (`loopback-2c-shared`, `lxc-guest`, `macbook-pro-m4`, `install-guide-1c`, the `virtual` disk, `internal`
/// disks) cannot — and for what can, its rack units (servers and array shelves; drives sit in slots) and its
/// typical and peak power, each from the vendor's data sheet or marked an assumption in `source`. Prices are
/// not here: they are the user's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Hardware {
    pub purchasable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rack_units: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts_typical: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watts_peak: Option<f64>,
    /// Where the rack units, watts (and an array's shelves) come from.
    pub source: String,
    /// True when `source` says (some of) the figures are assumptions.
    pub assumed: bool,
}

/// Drive-count limits of volume groups and pools on an array model (`arrays[].group_limits` in
/// `models/arrays.yaml`). A model without them gets `GroupLimits::assumed`, which says so in `source`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupLimits {
    /// Most drives in one RAID 5 or RAID 6 volume group.
    pub raid6_max_drives: u32,
    /// Most drives in one RAID 1/10 volume group (RAID 0 likewise): the model's drive slots unless given.
    pub raid10_max_drives: u32,
    /// Fewest and most drives in one DDP pool.
    pub ddp_min_drives: u32,
    pub ddp_max_drives: u32,
    /// Where the figures come from; starts with "assumption" when they are not the vendor's.
    pub source: String,
    /// True when the model file gave no limits and the E-Series figures were assumed.
    pub assumed: bool,
}

impl GroupLimits {
    /// E-Series figures applied to a model that gives none (30-drive RAID 5/6 groups, DDP of 11 up to
    /// the drive slots), labelled as an assumption.
    pub fn assumed(drive_slots: u32) -> GroupLimits {
        GroupLimits {
            raid6_max_drives: 30,
            raid10_max_drives: drive_slots,
            ddp_min_drives: 11,
            ddp_max_drives: drive_slots,
            source: "assumption: the model gives no group limits; E-Series SANtricity figures assumed \
                     (RAID 5/6 at most 30 drives, RAID 1/10 and DDP up to the drive slots, DDP at least 11)"
                .into(),
            assumed: true,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DiskModel {
    pub name: String,
    pub kind: DiskKind,
    pub capacity_bytes: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_bw_bytes_per_s: f64,
    pub write_bw_bytes_per_s: f64,
    pub write_latency_us: f64,
    pub afr: f64,
    pub endurance_dwpd: Option<f64>,
    /// Unrecoverable read errors per bit read (`nre_per_bit`; the kind's datasheet class when not given).
    pub nre_per_bit: f64,
    pub source: String,
    /// Whether it can be bought and its power (no rack units: a drive sits in a slot).
    pub hardware: Hardware,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerModel {
    pub name: String,
    pub cores: u32,
    pub memory_bytes: u64,
    pub nic_bits_per_s: f64,
    pub source: String,
    /// Single-thread speed relative to the reference core (1.0 = the loopback lab's AMD EPYC vCPU, where
    /// `calibration/lab-loopback-js.yaml` was measured); the stream leader's per-message work scales by it.
    pub cpu_speed: f64,
    /// Busy processes sharing these cores under load: 1 for a dedicated server; the loopback lab runs three
    /// servers and the load generator on its two cores (4).
    pub co_located: u32,
    /// Where the speed and sharing figures come from (an assumption says so).
    pub perf_source: String,
    /// Whether it can be bought, its rack units and power.
    pub hardware: Hardware,
}

/// A number with the document it came from.
#[derive(Debug, Clone, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: String,
}

/// Default failure rates (events per year per unit) with sources.
#[derive(Debug, Clone, Serialize)]
pub struct FailureDefaults {
    pub rates: BTreeMap<String, Sourced<f64>>,
    /// Repair and recovery times in seconds, plus the `*_rate` keys (`rebuild_rate`, `catch_up_rate`) in bytes/s.
    pub repair: BTreeMap<String, Sourced<f64>>,
    /// The plausible range of a repair figure where the catalog gives one (`band: [low, high]`, in the
    /// figure's own unit): rebuild rates are carried as bands (issue 31).
    pub repair_band: BTreeMap<String, (f64, f64)>,
    /// Planned maintenance: events per year, and `restart_stall` in seconds.
    pub maintenance: BTreeMap<String, Sourced<f64>>,
    pub dirty_expire_s: Sourced<f64>,
}

impl FailureDefaults {
    pub fn rate(&self, key: &str) -> f64 {
        self.rates.get(key).map(|s| s.value).unwrap_or(0.0)
    }
    pub fn repair_s(&self, key: &str) -> f64 {
        self.repair.get(key).map(|s| s.value).unwrap_or(0.0)
    }
    /// The catalog's plausible range of a repair figure, or (value, value) when it gives none.
    pub fn repair_band(&self, key: &str) -> (f64, f64) {
        let v = self.repair_s(key);
        self.repair_band.get(key).copied().unwrap_or((v, v))
    }
    pub fn maintenance(&self, key: &str) -> f64 {
        self.maintenance.get(key).map(|s| s.value).unwrap_or(0.0)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Catalog {
    pub arrays: Vec<ArrayModel>,
    pub disks: Vec<DiskModel>,
    pub servers: Vec<ServerModel>,
    pub default_server: String,
    pub failures: FailureDefaults,
}

impl Catalog {
    /// The catalog compiled into the binary.
    pub fn builtin() -> Catalog {
        Catalog::from_texts(ARRAYS, DISKS, SERVERS, FAILURES).expect("built-in catalog is valid (tested)")
    }

    /// Read `arrays.yaml`, `disks.yaml`, `servers.yaml` and `failure_rates.yaml` from DIR; a file that is
    /// absent falls back to the built-in one.
    pub fn from_dir(dir: &Path) -> Result<Catalog> {
        // A mistyped folder must not quietly mean "the built-in catalog".
        crate::input::check_models_dir(
            dir,
            &["arrays.yaml", "disks.yaml", "servers.yaml", "failure_rates.yaml"],
        )?;
        let read = |name: &str, builtin: &str| -> Result<String> {
            let p = dir.join(name);
            if p.exists() {
                Ok(crate::input::read_text(&p, "models file")?)
            } else {
                Ok(builtin.to_string())
            }
        };
        Catalog::from_labelled_texts(
            &format!("{}/", dir.display()),
            &read("arrays.yaml", ARRAYS)?,
            &read("disks.yaml", DISKS)?,
            &read("servers.yaml", SERVERS)?,
            &read("failure_rates.yaml", FAILURES)?,
        )
        .with_context(|| format!("in the models folder {}", dir.display()))
    }

    pub fn from_texts(arrays: &str, disks: &str, servers: &str, failures: &str) -> Result<Catalog> {
        Catalog::from_labelled_texts("", arrays, disks, servers, failures)
    }

    /// `from_texts` with each file named `{prefix}arrays.yaml` ... in messages (read with `input::from_yaml`:
    /// every problem at once, each with file:line:col and its field path).
    /// `from_texts` with each file named `{prefix}arrays.yaml` ... in messages (read with `input::from_yaml`:
    /// every problem at once, each with file:line:col and its field path).
    fn from_labelled_texts(prefix: &str, arrays: &str, disks: &str, servers: &str, failures: &str) -> Result<Catalog> {
        use crate::input::Doc;
        let (da, dd) = (
            Doc::parse(arrays, &format!("{prefix}arrays.yaml"))?,
            Doc::parse(disks, &format!("{prefix}disks.yaml"))?,
        );
        let (ds, df) = (
            Doc::parse(servers, &format!("{prefix}servers.yaml"))?,
            Doc::parse(failures, &format!("{prefix}failure_rates.yaml"))?,
        );
        let (a, d): (RawArrays, RawDisks) = (da.deserialize()?, dd.deserialize()?);
        let (s, f): (RawServers, RawFailures) = (ds.deserialize()?, df.deserialize()?);
        let failures = failure_defaults(&df, f)?;
        let out = Catalog {
            arrays: array_models(&da, a)?,
            disks: disk_models(&dd, d)?,
            servers: server_models(&ds, s.servers)?,
            default_server: s.default_server,
            failures,
        };
        check_hardware(&out, [&da, &dd, &ds])?;
        check_rates(&out, &df, &dd)?;
        check_name_lengths(&out, [&da, &dd, &ds])?;
        if out.server(&out.default_server).is_none() {
            let e = format!("'{}' is not listed", out.default_server);
            let fix = "name one of the servers listed in this file";
            return Err(ds.errors(vec![ds.error("default_server", e, fix)]).into());
        }
        Ok(out)
    }

    pub fn array(&self, name: &str) -> Option<&ArrayModel> {
        self.arrays.iter().find(|m| m.name.eq_ignore_ascii_case(name))
    }
    pub fn disk(&self, name: &str) -> Option<&DiskModel> {
        self.disks.iter().find(|m| m.name.eq_ignore_ascii_case(name))
    }
    pub fn server(&self, name: &str) -> Option<&ServerModel> {
        self.servers.iter().find(|m| m.name.eq_ignore_ascii_case(name))
    }
    pub fn array_names(&self) -> Vec<&str> {
        self.arrays.iter().map(|m| m.name.as_str()).collect()
    }
    pub fn disk_names(&self) -> Vec<&str> {
        self.disks.iter().map(|m| m.name.as_str()).collect()
    }
    pub fn server_names(&self) -> Vec<&str> {
        self.servers.iter().map(|m| m.name.as_str()).collect()
    }
}

/// A unit problem placed at its value (file:line:col and field path), as the reading's own.
fn unit_error(doc: &crate::input::Doc, path: String, e: String) -> anyhow::Error {
    let fix = "write a size such as 12GB or 3.84TB, or a duration such as 2ms or 30s";
    doc.errors(vec![doc.error(&path, e, fix)]).into()
}

/// A size of the catalog at `path` of `doc`.
fn size_at(doc: &crate::input::Doc, path: String, v: &str) -> Result<u64> {
    parse_size(v).map_err(|e| unit_error(doc, path, e))
}

/// A duration of the catalog at `path` of `doc`.
fn dur_at(doc: &crate::input::Doc, path: String, v: &str) -> Result<std::time::Duration> {
    parse_duration(v).map_err(|e| unit_error(doc, path, e))
}

/// failure_rates.yaml's defaults: the rates, repair times (with their bands), maintenance and the
/// dirty-page expiry, each with its source.
fn failure_defaults(df: &crate::input::Doc, f: RawFailures) -> Result<FailureDefaults> {
    let mut out = FailureDefaults {
        rates: f
            .failure_rates
            .into_iter()
            .map(|(k, v)| {
                (
                    k,
                    Sourced {
                        value: v.value,
                        source: v.source,
                    },
                )
            })
            .collect(),
        repair: BTreeMap::new(),
        repair_band: BTreeMap::new(),
        maintenance: BTreeMap::new(),
        dirty_expire_s: Sourced {
            value: dur_at(df, "dirty_expire.value".into(), &f.dirty_expire.value)?.as_secs_f64(),
            source: f.dirty_expire.source,
        },
    };
    for (k, v) in f.repair_times {
        let read = |path: String, text: &str| -> Result<f64> {
            Ok(if k.ends_with("_rate") {
                size_at(df, path, text)? as f64
            } else {
                dur_at(df, path, text)?.as_secs_f64()
            })
        };
        let value = read(format!("repair_times.{k}.value"), &v.value)?;
        if let Some([lo, hi]) = &v.band {
            let (lo, hi) = (
                read(format!("repair_times.{k}.band[0]"), lo)?,
                read(format!("repair_times.{k}.band[1]"), hi)?,
            );
            if !(lo <= value && value <= hi) {
                let e = format!("the band must hold the value: {lo} ≤ {value} ≤ {hi} does not hold");
                return Err(unit_error(df, format!("repair_times.{k}.band"), e));
            }
            out.repair_band.insert(k.clone(), (lo, hi));
        }
        out.repair.insert(
            k,
            Sourced {
                value,
                source: v.source,
            },
        );
    }
    for (k, v) in f.maintenance {
        let value = match v.value {
            serde_norway::Value::Number(n) => n.as_f64().unwrap_or(0.0),
            serde_norway::Value::String(s) => dur_at(df, format!("maintenance.{k}.value"), &s)?.as_secs_f64(),
            other => {
                let e = format!("expected a number or a duration, got {other:?}");
                return Err(unit_error(df, format!("maintenance.{k}.value"), e));
            }
        };
        out.maintenance.insert(
            k,
            Sourced {
                value,
                source: v.source,
            },
        );
    }
    Ok(out)
}

/// arrays.yaml's models.
fn array_models(da: &crate::input::Doc, a: RawArrays) -> Result<Vec<ArrayModel>> {
    let mut out = Vec::new();
    for (i, r) in a.arrays.into_iter().enumerate() {
        let group_limits = match r.group_limits {
            Some(g) => GroupLimits {
                raid6_max_drives: g.raid6_max_drives,
                raid10_max_drives: g.raid10_max_drives.unwrap_or(r.drive_slots),
                ddp_min_drives: g.ddp_min_drives,
                ddp_max_drives: g.ddp_max_drives.unwrap_or(r.drive_slots),
                assumed: g.source.trim_start().to_ascii_lowercase().starts_with("assumption"),
                source: g.source,
            },
            None => GroupLimits::assumed(r.drive_slots),
        };
        out.push(ArrayModel {
            group_limits,
            read_bw_bytes_per_s: size_at(da, format!("arrays[{i}].read_bw"), &r.read_bw)? as f64,
            write_bw_bytes_per_s: size_at(da, format!("arrays[{i}].write_bw"), &r.write_bw)? as f64,
            name: r.name,
            class: r.class,
            drive_slots: r.drive_slots,
            controllers: r.controllers,
            read_iops: r.read_iops,
            write_iops: r.write_iops,
            mirrored_write_cache: r.mirrored_write_cache,
            supports: r.supports,
            source: r.source,
            hardware: hardware(
                r.purchasable,
                r.rack_units,
                r.watts_typical,
                r.watts_peak,
                r.hardware_source,
            ),
            max_shelves: r.max_shelves,
            max_drives: r.max_drives,
        });
    }
    Ok(out)
}

/// disks.yaml's models.
fn disk_models(dd: &crate::input::Doc, d: RawDisks) -> Result<Vec<DiskModel>> {
    let mut out = Vec::new();
    for (i, r) in d.disks.into_iter().enumerate() {
        let lat = dur_at(dd, format!("disks[{i}].write_latency"), &r.write_latency)?;
        out.push(DiskModel {
            capacity_bytes: size_at(dd, format!("disks[{i}].capacity"), &r.capacity)?,
            read_bw_bytes_per_s: size_at(dd, format!("disks[{i}].read_bw"), &r.read_bw)? as f64,
            write_bw_bytes_per_s: size_at(dd, format!("disks[{i}].write_bw"), &r.write_bw)? as f64,
            write_latency_us: lat.as_secs_f64() * 1e6,
            name: r.name,
            kind: r.kind,
            read_iops: r.read_iops,
            write_iops: r.write_iops,
            afr: r.afr,
            endurance_dwpd: r.endurance_dwpd,
            nre_per_bit: r.nre_per_bit.unwrap_or_else(|| r.kind.default_nre_per_bit()),
            source: r.source,
            hardware: hardware(
                r.purchasable,
                r.rack_units,
                r.watts_typical,
                r.watts_peak,
                r.hardware_source,
            ),
        });
    }
    Ok(out)
}

/// servers.yaml's models.
fn server_models(ds: &crate::input::Doc, servers: Vec<RawServer>) -> Result<Vec<ServerModel>> {
    let mut out = Vec::new();
    for (i, r) in servers.into_iter().enumerate() {
        out.push(ServerModel {
            memory_bytes: size_at(ds, format!("servers[{i}].memory"), &r.memory)?,
            name: r.name,
            cores: r.cores,
            nic_bits_per_s: r.nic_bps,
            source: r.source,
            cpu_speed: r.cpu_speed.unwrap_or(1.0),
            co_located: r.co_located.unwrap_or(1).max(1),
            perf_source: r
                .perf_source
                .unwrap_or_else(|| "cpu_speed 1.0 and a dedicated host assumed (not given)".into()),
            hardware: hardware(
                r.purchasable,
                r.rack_units,
                r.watts_typical,
                r.watts_peak,
                r.hardware_source,
            ),
        });
    }
    Ok(out)
}

/// Failure and maintenance rates, and disks' AFRs, within what the site's own overrides may give
/// (`input::limits::MAX_EVENTS_PER_YEAR`, fractions at most 1): every event is a step of `simulate`.
fn check_rates(out: &Catalog, df: &crate::input::Doc, dd: &crate::input::Doc) -> Result<()> {
    let max = crate::input::limits::MAX_EVENTS_PER_YEAR;
    let fraction = |k: &str| k.ends_with("afr") || k == "not_return_after_power";
    let problem = |doc: &crate::input::Doc, path: String, x: f64, frac: bool| {
        let top = if frac { 1.0 } else { max };
        let (what, fix) = if frac {
            ("a fraction per year, 0 to 1", "write e.g. 0.01 for 1 %")
        } else {
            (
                "events per year per unit, 0 to 1000 (about three a day)",
                "write e.g. 2 for twice a year",
            )
        };
        (!(0.0..=top).contains(&x)).then(|| doc.error(&path, format!("{x} is not {what}"), fix))
    };
    let rates: Vec<_> = out
        .failures
        .rates
        .iter()
        .filter_map(|(k, v)| problem(df, format!("failure_rates.{k}.value"), v.value, fraction(k)))
        .chain(
            out.failures
                .maintenance
                .iter()
                .filter(|(k, _)| k.as_str() != "restart_stall")
                .filter_map(|(k, v)| problem(df, format!("maintenance.{k}.value"), v.value, false)),
        )
        .collect();
    if !rates.is_empty() {
        return Err(df.errors(rates).into());
    }
    let disks: Vec<_> = (out.disks.iter().enumerate())
        .filter_map(|(i, d)| problem(dd, format!("disks[{i}].afr"), d.afr, true))
        .collect();
    if !disks.is_empty() {
        return Err(dd.errors(disks).into());
    }
    Ok(())
}

/// A purchasable model carries what buying it means: rack units (servers and arrays), typical and peak watts
/// (peak at least typical), and a `hardware_source`; every problem placed at its field.
fn check_hardware(out: &Catalog, docs: [&crate::input::Doc; 3]) -> Result<()> {
    let lists: [(&str, Vec<(&Hardware, bool)>); 3] = [
        ("arrays", out.arrays.iter().map(|m| (&m.hardware, true)).collect()),
        ("disks", out.disks.iter().map(|m| (&m.hardware, false)).collect()),
        ("servers", out.servers.iter().map(|m| (&m.hardware, true)).collect()),
    ];
    for (doc, (list, models)) in docs.into_iter().zip(lists) {
        let mut errs = Vec::new();
        for (i, (h, racked)) in models.into_iter().enumerate() {
            if !h.purchasable {
                continue;
            }
            let at = |f: &str| format!("{list}[{i}].{f}");
            if racked && h.rack_units.is_none_or(|u| u == 0) {
                errs.push(doc.error(
                    &at("rack_units"),
                    "a purchasable model needs its rack units",
                    "add rack_units (whole rack units, e.g. 2) from the vendor's data sheet, or set purchasable: false",
                ));
            }
            for (f, w) in [("watts_typical", h.watts_typical), ("watts_peak", h.watts_peak)] {
                if !w.is_some_and(|w| w.is_finite() && w > 0.0) {
                    errs.push(doc.error(
                        &at(f),
                        "a purchasable model needs its typical and peak watts, above 0",
                        "add the data sheet's figure, or one marked as an assumption in hardware_source",
                    ));
                }
            }
            if let (Some(t), Some(p)) = (h.watts_typical, h.watts_peak) {
                if p < t {
                    errs.push(doc.error(
                        &at("watts_peak"),
                        format!("peak {p} W is below typical {t} W"),
                        "give the peak (maximum) draw, at least the typical one",
                    ));
                }
            }
            if h.source.trim().is_empty() {
                errs.push(doc.error(
                    &at("hardware_source"),
                    "a purchasable model needs the source of its rack units and watts",
                    "name the vendor data sheet, or say 'assumption: …'",
                ));
            }
        }
        if !errs.is_empty() {
            return Err(doc.errors(errs).into());
        }
    }
    Ok(())
}

/// Model names reach report tables and messages: bounded as site names are (`input::limits`).
fn check_name_lengths(out: &Catalog, docs: [&crate::input::Doc; 3]) -> Result<()> {
    let long = crate::input::limits::MAX_NAME_BYTES;
    let lens: [(&str, Vec<usize>); 3] = [
        ("arrays", out.arrays.iter().map(|m| m.name.len()).collect()),
        ("disks", out.disks.iter().map(|m| m.name.len()).collect()),
        ("servers", out.servers.iter().map(|m| m.name.len()).collect()),
    ];
    for (doc, (list, lens)) in docs.into_iter().zip(lens) {
        if let Some(i) = lens.iter().position(|l| *l > long) {
            let e = format!("the name is {} bytes long; at most {long}", lens[i]);
            return Err(doc
                .errors(vec![doc.error(&format!("{list}[{i}].name"), e, "shorten it")])
                .into());
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArrays {
    arrays: Vec<RawArray>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArray {
    name: String,
    class: String,
    drive_slots: u32,
    controllers: u32,
    read_bw: String,
    write_bw: String,
    read_iops: f64,
    write_iops: f64,
    mirrored_write_cache: bool,
    supports: Vec<String>,
    source: String,
    #[serde(default)]
    group_limits: Option<RawGroupLimits>,
    #[serde(default)]
    max_shelves: Option<u32>,
    #[serde(default)]
    max_drives: Option<u32>,
    #[serde(default)]
    purchasable: bool,
    #[serde(default)]
    rack_units: Option<u32>,
    #[serde(default)]
    watts_typical: Option<f64>,
    #[serde(default)]
    watts_peak: Option<f64>,
    #[serde(default)]
    hardware_source: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroupLimits {
    raid6_max_drives: u32,
    #[serde(default)]
    raid10_max_drives: Option<u32>,
    ddp_min_drives: u32,
    #[serde(default)]
    ddp_max_drives: Option<u32>,
    source: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDisks {
    disks: Vec<RawDisk>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDisk {
    name: String,
    kind: DiskKind,
    capacity: String,
    read_iops: f64,
    write_iops: f64,
    read_bw: String,
    write_bw: String,
    write_latency: String,
    afr: f64,
    #[serde(default)]
    endurance_dwpd: Option<f64>,
    #[serde(default)]
    nre_per_bit: Option<f64>,
    source: String,
    #[serde(default)]
    purchasable: bool,
    #[serde(default)]
    rack_units: Option<u32>,
    #[serde(default)]
    watts_typical: Option<f64>,
    #[serde(default)]
    watts_peak: Option<f64>,
    #[serde(default)]
    hardware_source: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServers {
    servers: Vec<RawServer>,
    default_server: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    name: String,
    cores: u32,
    memory: String,
    nic_bps: f64,
    source: String,
    #[serde(default)]
    cpu_speed: Option<f64>,
    #[serde(default)]
    co_located: Option<u32>,
    #[serde(default)]
    perf_source: Option<String>,
    #[serde(default)]
    purchasable: bool,
    #[serde(default)]
    rack_units: Option<u32>,
    #[serde(default)]
    watts_typical: Option<f64>,
    #[serde(default)]
    watts_peak: Option<f64>,
    #[serde(default)]
    hardware_source: Option<String>,
}
/// The purchase fields every model may carry (`Hardware`), all optional so that a catalog written before
/// them still reads (nothing in it purchasable).
fn hardware(
    purchasable: bool,
    rack_units: Option<u32>,
    watts_typical: Option<f64>,
    watts_peak: Option<f64>,
    source: Option<String>,
) -> Hardware {
    let source = source.unwrap_or_default();
    Hardware {
        purchasable,
        rack_units,
        watts_typical,
        watts_peak,
        assumed: source.to_ascii_lowercase().contains("assumption"),
        source,
    }
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSourced<T> {
    value: T,
    source: String,
}
/// A repair time or rate, with an optional plausible range `band: [low, high]` in the same unit.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRepair {
    value: String,
    #[serde(default)]
    band: Option<[String; 2]>,
    source: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFailures {
    failure_rates: BTreeMap<String, RawSourced<f64>>,
    repair_times: BTreeMap<String, RawRepair>,
    maintenance: BTreeMap<String, RawSourced<serde_norway::Value>>,
    dirty_expire: RawSourced<String>,
}

#[cfg(test)]
mod tests;
