//! From YAML text to a validated `Site`. Problems are collected, never returned one at a time: a user
//! fixing a site file wants the whole list.

use super::model::*;
use crate::catalog::Catalog;
use crate::units::{parse_duration, parse_size, SyncMode};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::Path;

/// One problem in a site file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteError {
    /// Field path such as `racks[1].arrays[0].disk_model`.
    pub path: String,
    /// 1-based line and column when the parser knows them.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// How to fix it.
    pub fix: Option<String>,
}

/// Every problem found in one site file.
#[derive(Debug, Clone)]
pub struct SiteErrors {
    pub file: String,
    pub errors: Vec<SiteError>,
}

impl fmt::Display for SiteErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} has {} problem{}:",
            self.file,
            self.errors.len(),
            if self.errors.len() == 1 { "" } else { "s" }
        )?;
        for e in &self.errors {
            let place = match (e.line, e.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file),
                (Some(l), None) => format!("{}:{l}", self.file),
                _ => self.file.clone(),
            };
            write!(
                f,
                "  {place}: {}: {}",
                if e.path.is_empty() { "(top)" } else { &e.path },
                e.message
            )?;
            if let Some(fix) = &e.fix {
                write!(f, "\n      fix: {fix}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for SiteErrors {}

/// Read and validate a site file.
pub fn load(path: &Path, catalog: &Catalog) -> Result<Site, SiteErrors> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SiteErrors {
        file: file.clone(),
        errors: vec![SiteError {
            path: String::new(),
            line: None,
            column: None,
            message: format!("cannot read the file: {e}"),
            fix: Some("check the path; `natsplan design examples/three-racks-raid1.yaml` shows a working one".into()),
        }],
    })?;
    parse_str(&text, &file, catalog)
}

/// Validate site YAML text; `file` is used in messages.
pub fn parse_str(text: &str, file: &str, catalog: &Catalog) -> Result<Site, SiteErrors> {
    let raw: RawSite = serde_yaml::from_str(text).map_err(|e| {
        let loc = e.location();
        SiteErrors {
            file: file.to_string(),
            errors: vec![SiteError {
                path: String::new(),
                line: loc.as_ref().map(|l| l.line()),
                column: loc.as_ref().map(|l| l.column()),
                message: e.to_string(),
                fix: None,
            }],
        }
    })?;
    let mut v = Validator { errors: Vec::new() };
    let site = v.build(raw, catalog);
    if v.errors.is_empty() {
        Ok(site)
    } else {
        Err(SiteErrors {
            file: file.to_string(),
            errors: v.errors,
        })
    }
}

struct Validator {
    errors: Vec<SiteError>,
}

impl Validator {
    fn err(&mut self, path: impl Into<String>, message: impl Into<String>, fix: Option<String>) {
        self.errors.push(SiteError {
            path: path.into(),
            line: None,
            column: None,
            message: message.into(),
            fix,
        });
    }

    fn size(&mut self, path: &str, v: &SizeValue) -> u64 {
        match v {
            SizeValue::Num(n) if *n >= 0.0 => *n as u64,
            SizeValue::Num(_) => {
                self.err(path, "a size cannot be negative", None);
                0
            }
            SizeValue::Text(t) => parse_size(t).unwrap_or_else(|e| {
                self.err(path, e, None);
                0
            }),
        }
    }

    fn duration_s(&mut self, path: &str, t: &str) -> f64 {
        parse_duration(t).map(|d| d.as_secs_f64()).unwrap_or_else(|e| {
            self.err(path, e, None);
            0.0
        })
    }

    fn positive(&mut self, path: &str, x: f64) -> f64 {
        if !(x.is_finite() && x > 0.0) {
            self.err(
                path,
                format!("must be a positive number, got {x}"),
                Some("give a rate above zero, or remove the entry".into()),
            );
        }
        x
    }

    fn replicas(&mut self, path: &str, r: Option<i64>) -> Option<u8> {
        match r {
            None => None,
            Some(x) if (1..=5).contains(&x) => Some(x as u8),
            Some(x) => {
                self.err(
                    path,
                    format!("replicas must be 1..5 (nats-server's limit), got {x}"),
                    Some("use 3 (tolerates one lost server) or 5 (tolerates two)".into()),
                );
                None
            }
        }
    }

    fn build(&mut self, raw: RawSite, catalog: &Catalog) -> Site {
        let mut names: HashSet<String> = HashSet::new();
        let mut unique = |v: &mut Validator, kind: &str, name: &str, path: String| {
            if !names.insert(format!("{kind}:{}", name.to_ascii_lowercase())) {
                v.err(
                    path,
                    format!("duplicate {kind} name '{name}'"),
                    Some(format!("give every {kind} a unique name")),
                );
            }
        };
        let nats = raw.nats.unwrap_or_default();
        let mut replicas = Vec::new();
        for (i, r) in nats.replicas.clone().unwrap_or_else(|| vec![3]).into_iter().enumerate() {
            if let Some(r) = self.replicas(&format!("nats.replicas[{i}]"), Some(r)) {
                if !replicas.contains(&r) {
                    replicas.push(r);
                }
            }
        }
        if replicas.is_empty() && nats.replicas.as_ref().is_some_and(|r| r.is_empty()) {
            self.err(
                "nats.replicas",
                "no replica counts to compare",
                Some("list at least one, e.g. [3, 5]".into()),
            );
        }
        let sync = SyncMode::parse(nats.sync_interval.as_deref().unwrap_or("2m")).unwrap_or_else(|e| {
            self.err("nats.sync_interval", e, None);
            SyncMode::Interval(120)
        });
        let compression = match nats.compression.as_deref().unwrap_or("none") {
            "none" => Compression::None,
            "s2" => Compression::S2,
            other => {
                self.err(
                    "nats.compression",
                    format!("unknown compression '{other}'"),
                    Some("use none or s2".into()),
                );
                Compression::None
            }
        };
        let compression_ratio = nats.compression_ratio.unwrap_or(1.0);
        if !(compression_ratio.is_finite() && compression_ratio >= 1.0) {
            self.err(
                "nats.compression_ratio",
                format!("must be >= 1.0 (stored = raw / ratio), got {compression_ratio}"),
                None,
            );
        }

        let mut racks = Vec::new();
        let mut servers = Vec::new();
        let mut arrays = Vec::new();
        if raw.racks.is_empty() {
            self.err(
                "racks",
                "the site has no racks",
                Some("add at least one rack with servers and storage".into()),
            );
        }
        let default_server = catalog.default_server.clone();
        for (ri, rack) in raw.racks.iter().enumerate() {
            let rp = format!("racks[{ri}]");
            unique(self, "rack", &rack.name, format!("{rp}.name"));
            racks.push(Rack {
                name: rack.name.clone(),
                power_feeds: rack.power_feeds.unwrap_or(2),
                uplinks: rack.uplinks.unwrap_or(2),
                pdus: rack.pdus.clone(),
            });
            for (si, s) in rack.servers.iter().enumerate() {
                let sp = format!("{rp}.servers[{si}]");
                let (name, host, pdu, model, disks) = match s {
                    RawServer::Name(n) => (n.clone(), None, None, None, None),
                    RawServer::Full(o) => (
                        o.name.clone(),
                        o.host.clone(),
                        o.pdu.clone(),
                        o.model.clone(),
                        o.disks.clone(),
                    ),
                };
                unique(self, "server", &name, format!("{sp}.name"));
                let model = model.unwrap_or_else(|| default_server.clone());
                if catalog.server(&model).is_none() {
                    self.err(
                        format!("{sp}.model"),
                        format!("unknown server model '{model}'"),
                        Some(format!("use one of {}", catalog.server_names().join(", "))),
                    );
                }
                if let Some(p) = &pdu {
                    if !rack.pdus.contains(p) {
                        self.err(
                            format!("{sp}.pdu"),
                            format!("PDU '{p}' is not listed in the rack's pdus"),
                            Some("add it to the rack's pdus list".into()),
                        );
                    }
                }
                let idx = servers.len();
                let internal = disks.map(|d| {
                    let ai = arrays.len();
                    let a = self.array(
                        &format!("{sp}.disks"),
                        &d.into_array(&name),
                        ri,
                        Some(idx),
                        raw.policy.as_ref().and_then(|p| p.hot_spares_per_array).unwrap_or(0),
                        catalog,
                    );
                    arrays.push(a);
                    ai
                });
                servers.push(Server {
                    name,
                    rack: ri,
                    host,
                    pdu,
                    model,
                    internal,
                });
            }
            for (ai, a) in rack.arrays.iter().enumerate() {
                let ap = format!("{rp}.arrays[{ai}]");
                unique(self, "array", &a.name, format!("{ap}.name"));
                let default_spares = raw.policy.as_ref().and_then(|p| p.hot_spares_per_array).unwrap_or(1);
                let arr = self.array(&ap, a, ri, None, default_spares, catalog);
                arrays.push(arr);
            }
        }
        if servers.is_empty() && !raw.racks.is_empty() {
            self.err(
                "racks",
                "the site has no servers",
                Some("list NATS hosts under racks[].servers".into()),
            );
        }

        let workload = self.workload(raw.workload.unwrap_or_default());
        let policy = self.policy(raw.policy.unwrap_or_default());
        let mut failure_rates = Vec::new();
        for (k, v) in raw.failure_rates.unwrap_or_default() {
            if !catalog.failures.rates.contains_key(&k) {
                let known: Vec<&str> = catalog.failures.rates.keys().map(|s| s.as_str()).collect();
                self.err(
                    format!("failure_rates.{k}"),
                    format!("unknown failure rate '{k}'"),
                    Some(format!("use one of {}", known.join(", "))),
                );
            } else if !(v.is_finite() && v >= 0.0) {
                self.err(format!("failure_rates.{k}"), format!("must be >= 0, got {v}"), None);
            } else {
                failure_rates.push((k, v));
            }
        }
        let mut repair_times = Vec::new();
        for (k, v) in raw.repair_times.unwrap_or_default() {
            if !catalog.failures.repair.contains_key(&k) {
                let known: Vec<&str> = catalog.failures.repair.keys().map(|s| s.as_str()).collect();
                self.err(
                    format!("repair_times.{k}"),
                    format!("unknown repair time '{k}'"),
                    Some(format!("use one of {}", known.join(", "))),
                );
            } else if k == "rebuild_rate" {
                let b = self.size(&format!("repair_times.{k}"), &SizeValue::Text(v));
                repair_times.push((k, b as f64));
            } else {
                let s = self.duration_s(&format!("repair_times.{k}"), &v);
                repair_times.push((k, s));
            }
        }
        let mut maintenance = Vec::new();
        for (k, v) in raw.maintenance.unwrap_or_default() {
            if !catalog.failures.maintenance.contains_key(&k) {
                let known: Vec<&str> = catalog.failures.maintenance.keys().map(|s| s.as_str()).collect();
                self.err(
                    format!("maintenance.{k}"),
                    format!("unknown maintenance item '{k}'"),
                    Some(format!("use one of {}", known.join(", "))),
                );
                continue;
            }
            let x = match v {
                NumOrText::Num(n) => n,
                NumOrText::Text(t) => self.duration_s(&format!("maintenance.{k}"), &t),
            };
            maintenance.push((k, x));
        }
        Site {
            name: raw.site,
            nats: NatsSettings {
                replicas,
                sync,
                compression,
                compression_ratio,
                cluster_name: nats.cluster_name.unwrap_or_else(|| "natsplan".into()),
                max_ha_assets: nats.max_ha_assets,
            },
            racks,
            servers,
            arrays,
            workload,
            policy,
            failure_rates,
            repair_times,
            maintenance,
        }
    }

    fn array(
        &mut self,
        ap: &str,
        a: &RawArray,
        rack: RackIdx,
        owner: Option<ServerIdx>,
        default_spares: u32,
        catalog: &Catalog,
    ) -> Array {
        let model = a.model.clone().unwrap_or_else(|| {
            if owner.is_some() {
                "internal".into()
            } else {
                String::new()
            }
        });
        let am = catalog.array(&model);
        if am.is_none() {
            self.err(
                format!("{ap}.model"),
                format!("unknown array model '{model}'"),
                Some(format!("use one of {}", catalog.array_names().join(", "))),
            );
        }
        if catalog.disk(&a.disk_model).is_none() {
            self.err(
                format!("{ap}.disk_model"),
                format!("unknown disk model '{}'", a.disk_model),
                Some(format!("use one of {}", catalog.disk_names().join(", "))),
            );
        }
        if a.disks == 0 {
            self.err(format!("{ap}.disks"), "an array needs at least one disk", None);
        }
        if let Some(m) = am {
            if a.disks > m.drive_slots {
                self.err(
                    format!("{ap}.disks"),
                    format!(
                        "{} disks do not fit the {}'s {} drive slots",
                        a.disks, m.name, m.drive_slots
                    ),
                    Some("add an expansion shelf as another array, or use fewer disks".into()),
                );
            }
        }
        let hot_spares = a.hot_spares.unwrap_or(default_spares);
        if hot_spares >= a.disks && a.disks > 0 {
            self.err(
                format!("{ap}.hot_spares"),
                format!("{hot_spares} hot spares leave no data disks out of {}", a.disks),
                Some("use fewer hot spares than disks".into()),
            );
        }
        let disk_size_bytes = a.disk_size.as_ref().map(|s| self.size(&format!("{ap}.disk_size"), s));
        Array {
            name: a.name.clone(),
            rack,
            model,
            disk_model: a.disk_model.clone(),
            disks: a.disks,
            disk_size_bytes,
            hot_spares: hot_spares.min(a.disks),
            write_cache: a.write_cache.unwrap_or(true),
            owner,
        }
    }

    fn workload(&mut self, w: RawWorkload) -> Workload {
        let mut names = HashSet::new();
        let mut out = Workload::default();
        for (i, s) in w.streams.into_iter().enumerate() {
            let p = format!("workload.streams[{i}]");
            if !names.insert(s.name.clone()) {
                self.err(
                    format!("{p}.name"),
                    format!("duplicate asset name '{}'", s.name),
                    Some("streams, KV buckets and object stores need unique names".into()),
                );
            }
            let msgs_per_s = self.positive(&format!("{p}.msgs_per_s"), s.msgs_per_s);
            let msg_size_bytes = self.size(&format!("{p}.msg_size"), &s.msg_size);
            let retention_s = self.duration_s(&format!("{p}.retention"), &s.retention);
            out.streams.push(StreamSpec {
                subject_bytes: s
                    .subject_size
                    .as_ref()
                    .map(|v| self.size(&format!("{p}.subject_size"), v))
                    .unwrap_or(32),
                max_bytes: s.max_bytes.as_ref().map(|v| self.size(&format!("{p}.max_bytes"), v)),
                replicas: self.replicas(&format!("{p}.replicas"), s.replicas),
                name: s.name,
                msgs_per_s,
                msg_size_bytes,
                retention_s,
                consumers: s.consumers.unwrap_or(0),
            });
        }
        for (i, k) in w.kv.into_iter().enumerate() {
            let p = format!("workload.kv[{i}]");
            if !names.insert(k.name.clone()) {
                self.err(
                    format!("{p}.name"),
                    format!("duplicate asset name '{}'", k.name),
                    Some("streams, KV buckets and object stores need unique names".into()),
                );
            }
            let puts_per_s = self.positive(&format!("{p}.puts_per_s"), k.puts_per_s);
            if k.keys == 0 {
                self.err(format!("{p}.keys"), "a bucket needs at least one key", None);
            }
            let history = k.history.unwrap_or(1);
            if !(1..=64).contains(&history) {
                self.err(
                    format!("{p}.history"),
                    format!("history must be 1..64 (nats-server's limit), got {history}"),
                    None,
                );
            }
            out.kv.push(KvSpec {
                value_size_bytes: self.size(&format!("{p}.value_size"), &k.value_size),
                key_bytes: k
                    .key_size
                    .as_ref()
                    .map(|v| self.size(&format!("{p}.key_size"), v))
                    .unwrap_or(32),
                replicas: self.replicas(&format!("{p}.replicas"), k.replicas),
                name: k.name,
                puts_per_s,
                keys: k.keys,
                history,
            });
        }
        for (i, o) in w.object_stores.into_iter().enumerate() {
            let p = format!("workload.object_stores[{i}]");
            if !names.insert(o.name.clone()) {
                self.err(
                    format!("{p}.name"),
                    format!("duplicate asset name '{}'", o.name),
                    Some("streams, KV buckets and object stores need unique names".into()),
                );
            }
            let puts_per_s = self.positive(&format!("{p}.puts_per_s"), o.puts_per_s);
            let gets_per_s = o.gets_per_s.unwrap_or(0.0);
            if !(gets_per_s.is_finite() && gets_per_s >= 0.0) {
                self.err(
                    format!("{p}.gets_per_s"),
                    format!("must be >= 0, got {gets_per_s}"),
                    None,
                );
            }
            let retention_s = o
                .retention
                .as_ref()
                .map(|r| self.duration_s(&format!("{p}.retention"), r));
            if retention_s.is_none() && o.objects.is_none() {
                self.err(
                    p.clone(),
                    "an object store needs retention or objects",
                    Some("add retention: 7d, or objects: N (how many are kept)".into()),
                );
            }
            out.object_stores.push(ObjectStoreSpec {
                object_size_bytes: self.size(&format!("{p}.object_size"), &o.object_size),
                replicas: self.replicas(&format!("{p}.replicas"), o.replicas),
                name: o.name,
                puts_per_s,
                gets_per_s,
                retention_s,
                objects: o.objects,
            });
        }
        if let Some(c) = w.core {
            out.core = Some(CoreSpec {
                msgs_per_s: self.positive("workload.core.msgs_per_s", c.msgs_per_s),
                msg_size_bytes: self.size("workload.core.msg_size", &c.msg_size),
            });
        }
        out
    }

    fn policy(&mut self, p: RawPolicy) -> Policy {
        let mut patterns = Vec::new();
        for (i, s) in p
            .patterns
            .unwrap_or_else(|| vec!["1".into(), "2".into(), "3".into(), "4".into()])
            .into_iter()
            .enumerate()
        {
            match Pattern::parse(&s) {
                Some(pt) if !patterns.contains(&pt) => patterns.push(pt),
                Some(_) => {}
                None => self.err(
                    format!("policy.patterns[{i}]"),
                    format!("unknown pattern '{s}'"),
                    Some("use \"1\", \"2\", \"3\", \"4\", \"ddp-raid1\" or \"raid6\"".into()),
                ),
            }
        }
        let wear = p.wear_headroom.unwrap_or(0.15);
        if !(0.0..0.9).contains(&wear) {
            self.err(
                "policy.wear_headroom",
                format!("must be a fraction in 0..0.9, got {wear}"),
                Some("0.15 leaves 15 % of each SSD empty".into()),
            );
        }
        let growth = p.growth.unwrap_or(0.0);
        if !(growth.is_finite() && growth >= 0.0) {
            self.err("policy.growth", format!("must be >= 0, got {growth}"), None);
        }
        let fs_reserve = p.fs_reserve.unwrap_or(0.05);
        if !(0.0..0.5).contains(&fs_reserve) {
            self.err(
                "policy.fs_reserve",
                format!("must be a fraction in 0..0.5, got {fs_reserve}"),
                None,
            );
        }
        let store_headroom = p.store_headroom.unwrap_or(0.1);
        if !(0.0..0.9).contains(&store_headroom) {
            self.err(
                "policy.store_headroom",
                format!("must be a fraction in 0..0.9, got {store_headroom}"),
                None,
            );
        }
        let mt = p.min_tolerated.unwrap_or_default();
        Policy {
            patterns,
            wear_headroom: wear,
            hot_spares_per_array: p.hot_spares_per_array.unwrap_or(1),
            min_tolerated: Tolerance {
                racks: mt.racks.unwrap_or(0),
                arrays: mt.arrays.unwrap_or(0),
                servers: mt.servers.unwrap_or(0),
                disks: mt.disks.unwrap_or(0),
            },
            growth,
            horizon_s: p
                .horizon
                .as_deref()
                .map(|h| self.duration_s("policy.horizon", h))
                .unwrap_or(crate::units::YEAR_S),
            fs_reserve,
            store_headroom,
            baselines: p.baselines.unwrap_or(true),
        }
    }
}

// ---- raw serde shapes (deny_unknown_fields: a typo is an error, not a silent default) ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSite {
    site: String,
    #[serde(default)]
    nats: Option<RawNats>,
    #[serde(default)]
    racks: Vec<RawRack>,
    #[serde(default)]
    workload: Option<RawWorkload>,
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default)]
    failure_rates: Option<BTreeMap<String, f64>>,
    #[serde(default)]
    repair_times: Option<BTreeMap<String, String>>,
    #[serde(default)]
    maintenance: Option<BTreeMap<String, NumOrText>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawNats {
    replicas: Option<Vec<i64>>,
    sync_interval: Option<String>,
    compression: Option<String>,
    compression_ratio: Option<f64>,
    cluster_name: Option<String>,
    max_ha_assets: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRack {
    name: String,
    #[serde(default)]
    servers: Vec<RawServer>,
    #[serde(default)]
    arrays: Vec<RawArray>,
    power_feeds: Option<u32>,
    uplinks: Option<u32>,
    #[serde(default)]
    pdus: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawServer {
    Name(String),
    Full(RawServerObj),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServerObj {
    name: String,
    host: Option<String>,
    pdu: Option<String>,
    model: Option<String>,
    disks: Option<RawInternalDisks>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawInternalDisks {
    disk_model: String,
    count: u32,
    disk_size: Option<SizeValue>,
}

impl RawInternalDisks {
    fn into_array(self, server: &str) -> RawArray {
        RawArray {
            name: format!("{server}-internal"),
            model: Some("internal".into()),
            disk_model: self.disk_model,
            disks: self.count,
            hot_spares: Some(0),
            disk_size: self.disk_size,
            write_cache: Some(false),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArray {
    name: String,
    model: Option<String>,
    disk_model: String,
    disks: u32,
    hot_spares: Option<u32>,
    disk_size: Option<SizeValue>,
    write_cache: Option<bool>,
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum SizeValue {
    Num(f64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NumOrText {
    Num(f64),
    Text(String),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    #[serde(default)]
    streams: Vec<RawStream>,
    #[serde(default)]
    kv: Vec<RawKv>,
    #[serde(default)]
    object_stores: Vec<RawObj>,
    core: Option<RawCore>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStream {
    name: String,
    msgs_per_s: f64,
    msg_size: SizeValue,
    retention: String,
    replicas: Option<i64>,
    consumers: Option<u32>,
    subject_size: Option<SizeValue>,
    max_bytes: Option<SizeValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKv {
    name: String,
    puts_per_s: f64,
    value_size: SizeValue,
    key_size: Option<SizeValue>,
    keys: u64,
    history: Option<u32>,
    replicas: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawObj {
    name: String,
    puts_per_s: f64,
    gets_per_s: Option<f64>,
    object_size: SizeValue,
    retention: Option<String>,
    objects: Option<u64>,
    replicas: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCore {
    msgs_per_s: f64,
    msg_size: SizeValue,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    patterns: Option<Vec<String>>,
    wear_headroom: Option<f64>,
    hot_spares_per_array: Option<u32>,
    min_tolerated: Option<RawTolerance>,
    growth: Option<f64>,
    horizon: Option<String>,
    fs_reserve: Option<f64>,
    store_headroom: Option<f64>,
    baselines: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTolerance {
    racks: Option<u32>,
    arrays: Option<u32>,
    servers: Option<u32>,
    disks: Option<u32>,
}
