//! `natsplan size WORKLOAD.yaml`: what to buy for a workload (issue 47). A workload file is a site file
//! without `racks` (its `nats`, `workload` and `policy` keys mean what they mean in a site) plus a `size:`
//! key saying what may be bought: the racks to try, rack units and power per rack, the server, array and
//! disk models allowed, and how many data disks each server may get (docs/size.md).
//!
//! Each candidate bill of materials (`bill`) is written as a real site — the workload file's own text
//! with its `size:` block commented out and a generated `racks:` block appended — and read back with the
//! site parser, then evaluated by `plan::build_with`, the same pipeline as `design`: so size and design
//! never disagree, and a candidate's site file can be given to `design` as it is. Each (bill, layout)
//! pair is one point (`search`); costs come from the user's prices (`price`), never invented.
//!
//! The types keep what is bought apart from the workload (`Bill` lists its parts), so owned hardware
//! (`size --have site.yaml`, issue 48) can be added as parts with cost 0.

pub mod bill;
pub mod have;
pub mod price;
pub mod search;

use crate::catalog::Catalog;
use crate::input::{Doc, InputError, InputErrors};
use serde::{Deserialize, Serialize};

/// The storage a server may get: its own internal disks, or a share of an array model in its rack.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageKind {
    /// `internal`: disks in the server's own bays (bought with the disks, no array).
    Internal,
    /// One array of this model per rack, shared by the rack's servers.
    Array(String),
}

impl StorageKind {
    pub fn label(&self) -> &str {
        match self {
            StorageKind::Internal => "internal",
            StorageKind::Array(m) => m,
        }
    }
}

/// The validated `size:` key.
#[derive(Debug, Clone, Serialize)]
pub struct SizeSpec {
    /// Fewest and most racks to try.
    pub racks: (u32, u32),
    /// Fewest and most JetStream servers in all.
    pub servers: (u32, u32),
    /// Fewest and most data disks per server.
    pub disks_per_server: (u32, u32),
    /// Rack units per rack.
    pub rack_units: u32,
    /// Power per rack in watts (against each part's peak watts, its typical watts when no peak is given).
    pub rack_watts: f64,
    pub server_models: Vec<String>,
    pub storage: Vec<StorageKind>,
    pub disk_models: Vec<String>,
    /// Hot spares per array (internal disks get none).
    pub hot_spares: u32,
}

/// A workload file read and checked: its text (the base of every candidate's site) and its `size:` key.
#[derive(Debug, Clone)]
pub struct WorkloadFile {
    /// The file name as given, for messages.
    pub file: String,
    /// The text with the `size:` block commented out (line numbers kept, so the site parser's places are
    /// the workload file's own).
    pub base: String,
    pub spec: SizeSpec,
    /// The workload's `policy.min_tolerated`, as the site parser reads it (what every point is judged
    /// against, and what the search prunes with).
    pub required: crate::site::Tolerance,
    /// Streams `--omb` / `--from-cluster` imported, merged into every candidate's site after it is read
    /// (as design merges them into a site: `import::merge`); empty without those flags.
    pub imports: Vec<crate::import::Imported>,
    /// `--have SITE.yaml`: the owned site every candidate keeps (cost 0) and adds to; None: green field.
    pub have: Option<std::sync::Arc<have::Have>>,
}

/// The `size:` key as written.
#[derive(Debug, Deserialize)]
struct RawSize {
    racks: Vec<u32>,
    #[serde(default)]
    servers: Option<Vec<u32>>,
    #[serde(default)]
    disks_per_server: Option<Vec<u32>>,
    #[serde(default)]
    rack_units: Option<u32>,
    #[serde(default)]
    rack_watts: Option<f64>,
    #[serde(default)]
    server_models: Option<Vec<String>>,
    #[serde(default)]
    storage: Option<Vec<String>>,
    #[serde(default)]
    disk_models: Option<Vec<String>>,
    #[serde(default)]
    hot_spares: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct RawTop {
    #[serde(default)]
    size: Option<RawSize>,
}

/// Rack units per rack when `size.rack_units` is not given: a standard 42U rack (an assumption, said in
/// the output).
pub const DEFAULT_RACK_UNITS: u32 = 42;
/// Power per rack when `size.rack_watts` is not given: 8 kW (an assumption, said in the output).
pub const DEFAULT_RACK_WATTS: f64 = 8000.0;

/// The power a part is fitted to a rack with: its peak, or its typical watts when no peak is given.
pub fn fit_watts(h: &crate::catalog::Hardware) -> f64 {
    h.watts_peak.or(h.watts_typical).unwrap_or(0.0)
}

/// Read a workload file: every problem at once, each with its place, what and the fix.
pub fn read_workload(text: &str, file: &str, catalog: &Catalog) -> Result<WorkloadFile, InputErrors> {
    let doc = Doc::parse(text, file)?;
    let mut errors: Vec<InputError> = Vec::new();
    let root_is_block_map = matches!(
        doc.root().map(|n| (&n.val, n.pos.col)),
        Some((crate::input::yaml::Val::Map(_), 1))
    );
    let top_key = |k: &str| -> Option<crate::input::yaml::Pos> {
        let crate::input::yaml::Val::Map(e) = &doc.root()?.val else {
            return None;
        };
        e.iter()
            .find(|(key, _)| matches!(&key.val, crate::input::yaml::Val::Scalar(s) if s.text == k))
            .map(|(key, _)| key.pos)
    };
    if !root_is_block_map {
        return Err(doc.errors(vec![doc.error(
            "",
            "a workload file is a mapping written in block style (keys such as `workload:` and `size:` at \
             the start of a line)",
            "write it as a site file without `racks`, plus `size:` (docs/size.md)",
        )]));
    }
    if let Some(p) = top_key("racks") {
        errors.push(InputError {
            path: "racks".into(),
            line: Some(p.line),
            column: Some(p.col),
            message: "a workload file has no `racks`: size chooses the racks, servers and storage".into(),
            fix: Some(
                "remove `racks:` (and give the racks to try under `size.racks`), or run `natsplan design` on \
                 the site file"
                    .into(),
            ),
        });
    }
    let (raw, read_errors) = doc.read::<RawTop>();
    errors.extend(read_errors.into_iter().filter(|e| e.path.starts_with("size")));
    let raw_size = raw.and_then(|t| t.size);
    if raw_size.is_none() && top_key("size").is_none() {
        errors.push(doc.error(
            "size",
            "the workload file has no `size:` key: size needs the racks to try",
            "add e.g. `size: { racks: [1, 3] }` (docs/size.md lists every key)",
        ));
    }
    let spec = raw_size.map(|r| check_spec(r, &doc, catalog, &mut errors));

    // The base text: the `size:` block commented out, line for line.
    let base = comment_out_size(text, top_key("size").map(|p| p.line), &doc);

    let required = match &spec {
        Some(spec) if errors.is_empty() => probe(spec, &base, file, catalog, &mut errors),
        _ => crate::site::Tolerance::default(),
    };
    match spec {
        Some(spec) if errors.is_empty() => Ok(WorkloadFile {
            file: file.to_string(),
            base,
            spec,
            required,
            imports: Vec::new(),
            have: None,
        }),
        _ => Err(doc.errors(errors)),
    }
}

/// The workload's own keys, read by the site parser on a probe with the most racks and servers the range
/// allows (so `policy.min_tolerated` is judged against them); the probe's racks are ours, so their
/// problems are not the user's. Returns the workload's `policy.min_tolerated`.
/// The probe site (`probe`'s), for importing `--omb` / `--from-cluster` streams against.
pub fn probe_site(w: &WorkloadFile, catalog: &Catalog) -> Result<crate::site::Site, InputErrors> {
    crate::site::parse_str(&format!("{}{}", w.base, bill::probe_racks(&w.spec)), &w.file, catalog)
}

fn probe(
    spec: &SizeSpec,
    base: &str,
    file: &str,
    catalog: &Catalog,
    errors: &mut Vec<InputError>,
) -> crate::site::Tolerance {
    let probe = format!("{base}{}", bill::probe_racks(spec));
    match crate::site::parse_str(&probe, file, catalog) {
        Ok(site) => site.policy.min_tolerated,
        Err(e) => {
            for mut x in e.errors.into_iter().filter(|x| !x.path.starts_with("racks")) {
                if x.path.starts_with("policy.min_tolerated") {
                    x.fix = x
                        .fix
                        .map(|f| format!("{f} (size.racks and size.servers give the most a candidate has)"));
                }
                errors.push(x);
            }
            crate::site::Tolerance::default()
        }
    }
}

/// `text` with its top-level `key:` block commented out, line for line (the text as it is when the key is
/// absent or the text is no YAML).
pub fn without_key(text: &str, key: &str, file: &str) -> String {
    let Ok(doc) = Doc::parse(text, file) else {
        return text.to_string();
    };
    let line = match doc.root().map(|n| &n.val) {
        Some(crate::input::yaml::Val::Map(e)) => e
            .iter()
            .find(|(k, _)| matches!(&k.val, crate::input::yaml::Val::Scalar(s) if s.text == key))
            .map(|(k, _)| k.pos.line),
        _ => None,
    };
    comment_out_size(text, line, &doc)
}

fn comment_out_size(text: &str, size_line: Option<usize>, doc: &Doc) -> String {
    let Some(start) = size_line else {
        let mut t = text.to_string();
        if !t.ends_with('\n') {
            t.push('\n');
        }
        return t;
    };
    // The next top-level key after `size:` ends its block.
    let next = match doc.root().map(|n| &n.val) {
        Some(crate::input::yaml::Val::Map(e)) => e.iter().map(|(k, _)| k.pos.line).filter(|l| *l > start).min(),
        _ => None,
    };
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if n >= start && next.is_none_or(|e| n < e) && !line.trim().is_empty() {
            out.push_str("# ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn range(
    v: Option<Vec<u32>>,
    default: (u32, u32),
    path: &str,
    least: u32,
    doc: &Doc,
    errors: &mut Vec<InputError>,
) -> (u32, u32) {
    let Some(v) = v else { return default };
    let r = match v.as_slice() {
        [a] => (*a, *a),
        [a, b] => (*a, *b),
        _ => {
            errors.push(doc.error(
                path,
                format!(
                    "a range is [fewest, most] or one number in brackets, got {} numbers",
                    v.len()
                ),
                format!("write e.g. {path}: [{least}, {}]", least + 2),
            ));
            return default;
        }
    };
    if r.0 > r.1 {
        errors.push(doc.error(
            path,
            format!("the range [{}, {}] is empty: its fewest is above its most", r.0, r.1),
            format!("write [{}, {}]", r.1, r.0),
        ));
    } else if r.0 < least {
        errors.push(doc.error(
            path,
            format!("the range starts at {}, below {least}", r.0),
            format!("start it at {least} or more, e.g. [{least}, {}]", r.1.max(least)),
        ));
    }
    r
}

fn check_spec(r: RawSize, doc: &Doc, catalog: &Catalog, errors: &mut Vec<InputError>) -> SizeSpec {
    let racks = range(Some(r.racks), (1, 1), "size.racks", 1, doc, errors);
    let servers = range(r.servers, (3, 5), "size.servers", 1, doc, errors);
    let disks_per_server = range(r.disks_per_server, (1, 2), "size.disks_per_server", 1, doc, errors);
    if racks.0 <= racks.1 && servers.0 <= servers.1 && servers.1 < racks.0 {
        errors.push(doc.error(
            "size.racks",
            format!(
                "every rack needs a server, but size.servers allows at most {} and size.racks at least {}",
                servers.1, racks.0
            ),
            format!("lower size.racks to at most {} or raise size.servers", servers.1),
        ));
    }
    let mut names = |given: Option<Vec<String>>, path: &str, known: Vec<&str>, buyable: &dyn Fn(&str) -> bool| {
        let all: Vec<String> = known.iter().filter(|n| buyable(n)).map(|s| s.to_string()).collect();
        let Some(given) = given else { return all };
        if given.is_empty() {
            errors.push(doc.error(
                path,
                "the list is empty: nothing could be bought",
                format!(
                    "name at least one, e.g. [{}], or leave the key out for all of them",
                    all[0]
                ),
            ));
        }
        for (i, n) in given.iter().enumerate() {
            let p = format!("{path}[{i}]");
            if !known.contains(&n.as_str()) {
                let near = crate::input::nearest(n, known.iter().copied())
                    .map(|m| format!("write {m}; "))
                    .unwrap_or_default();
                errors.push(doc.error(
                    &p,
                    format!("unknown model '{}'", crate::input::yaml::clip(n)),
                    format!("{near}the catalog's purchasable ones are {}", all.join(", ")),
                ));
            } else if !buyable(n) {
                errors.push(doc.error(
                    &p,
                    format!("'{n}' cannot be bought (a lab or document model in the catalog)"),
                    format!("use one of {}", all.join(", ")),
                ));
            }
        }
        given
    };
    let server_models = names(r.server_models, "size.server_models", catalog.server_names(), &|n| {
        catalog.server(n).is_some_and(|m| m.hardware.purchasable)
    });
    let disk_models = names(r.disk_models, "size.disk_models", catalog.disk_names(), &|n| {
        catalog.disk(n).is_some_and(|m| m.hardware.purchasable)
    });
    let mut storage_known = vec!["internal"];
    storage_known.extend(catalog.array_names().into_iter().filter(|n| *n != "internal"));
    let storage_names = names(r.storage, "size.storage", storage_known, &|n| {
        n == "internal" || catalog.array(n).is_some_and(|m| m.hardware.purchasable)
    });
    let storage = storage_names
        .into_iter()
        .map(|n| {
            if n == "internal" {
                StorageKind::Internal
            } else {
                StorageKind::Array(n)
            }
        })
        .collect();
    let rack_units = r.rack_units.unwrap_or(DEFAULT_RACK_UNITS);
    let rack_watts = r.rack_watts.unwrap_or(DEFAULT_RACK_WATTS);
    let models: Vec<&crate::catalog::ServerModel> = server_models.iter().filter_map(|n| catalog.server(n)).collect();
    if let Some(small) = models.iter().min_by_key(|m| m.hardware.rack_units.unwrap_or(1)) {
        let ru = small.hardware.rack_units.unwrap_or(1);
        if rack_units < ru {
            errors.push(doc.error(
                "size.rack_units",
                format!(
                    "{rack_units} rack units hold no server: the smallest allowed, {}, takes {ru}",
                    small.name
                ),
                format!("give at least {ru} (a standard rack has 42)"),
            ));
        }
    }
    if let Some(small) = models
        .iter()
        .min_by(|a, b| fit_watts(&a.hardware).total_cmp(&fit_watts(&b.hardware)))
    {
        let w = fit_watts(&small.hardware);
        if !(rack_watts.is_finite() && rack_watts > 0.0) || rack_watts < w {
            errors.push(doc.error(
                "size.rack_watts",
                format!(
                    "{rack_watts} W per rack powers no server: the smallest allowed, {}, draws {w} W at peak ({})",
                    small.name, small.hardware.source
                ),
                format!("give at least {w} (watts per rack), or allow a smaller server model"),
            ));
        }
    }
    SizeSpec {
        racks,
        servers,
        disks_per_server,
        rack_units,
        rack_watts,
        server_models,
        storage,
        disk_models,
        hot_spares: r.hot_spares.unwrap_or(1),
    }
}
