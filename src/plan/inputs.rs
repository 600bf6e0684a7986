//! One loader for every command that plans: the site file, the catalog (`--models`), the calibrations
//! (`--calibration`) and imported workloads (`--omb`, `--from-cluster`) become one `Inputs`, and from it
//! one `Plan` — so design, whatif, simulate, emit, lab and verify can never disagree about what was
//! planned. Or the same from a plan saved by `design --save plan.json` (`--plan plan.json`).
//!
//! A saved plan holds the inputs themselves (the site text, the models folder's files, the calibration
//! file, the imported streams as measured), their SHA-256 hashes, the natsplan version and the plan as
//! JSON with its hash. Loading it rebuilds the plan from those frozen inputs (planning is deterministic)
//! and refuses it, as bad input, when it comes from another natsplan version, when a SITE, `--models`
//! or `--calibration` given beside it differs from what it was built from, or when the rebuilt plan's
//! hash is not the saved one (the file was edited). So `--from-cluster` rates measured once stay the
//! same, and no site file, models folder or calibration file is needed beside the plan.
//!
//! I/O lives here (reading files, measuring a cluster); `plan::build_with` stays pure. Notes (what an
//! importer assumed) are returned for the command to print.

pub use super::choose::{find_layout, Loaded};
use super::Plan;
use crate::catalog::Catalog;
use crate::error::{bad_input, cannot_run, Failure};
use crate::import::Imported;
use crate::input::limits::MAX_ASSETS;
use crate::input::yaml::clip;
use crate::input::{InputError, InputErrors};
use crate::perf::calibration::{CalibrationFile, CalibrationSet};
use crate::perf::Calibration;
use crate::site::{Site, StreamSpec};
use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the flags name: where each input comes from.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The site file (SITE.yaml); optional when `plan` is given.
    pub site: Option<PathBuf>,
    /// `--models DIR`; None = the built-in catalog.
    pub models: Option<PathBuf>,
    /// `--calibration FILE`, added to the built-in calibrations.
    pub calibration: Option<PathBuf>,
    /// `--omb FILE` and `--omb-retention DURATION`.
    pub omb: Option<PathBuf>,
    pub omb_retention: Option<String>,
    /// `--omb-rate R`: the OMB workload's rate to size for (replaces its producerRate).
    pub omb_rate: Option<f64>,
    /// `--from-cluster URL,...` measured over `--interval`, or `--from-cluster FILE,...`: files the nats CLI
    /// wrote, read offline (`import::natscli`).
    pub from_cluster: Vec<String>,
    pub interval: String,
    /// `--plan FILE`: a plan saved by `design --save`.
    pub plan: Option<PathBuf>,
}

/// The loaded inputs of a plan.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The site with any imported streams merged in.
    pub site: Site,
    pub catalog: Catalog,
    pub calibration: Calibration,
    /// `built-in`, or `built-in + FILE`.
    pub calibration_label: String,
    /// The site file's path as given (or as recorded in the saved plan), for messages.
    pub site_path: PathBuf,
    /// What importers assumed or replaced, for the command to print (empty for a saved plan).
    pub notes: Vec<String>,
    /// The layout `design --save --layout ID` chose, when loaded from such a plan.
    pub chosen_layout: Option<String>,
    frozen: Frozen,
    /// The saved plan's hash, when loaded from one (the rebuilt plan must match it).
    saved_plan_sha256: Option<String>,
    saved_from: Option<PathBuf>,
}

/// The inputs as a saved plan holds them.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Frozen {
    site: FrozenFile,
    /// The `--models` folder's files that exist (absent ones fall back to the built-in catalog); None =
    /// the built-in catalog.
    models: Option<FrozenModels>,
    calibration: Option<FrozenFile>,
    /// Streams imported with `--omb` / `--from-cluster`, as they were read, in merge order.
    imported_streams: Vec<FrozenStream>,
    /// Where the imported streams came from (`omb FILE`, `cluster URL,...`, `cluster files FILE (sha256:…)`).
    import_sources: Vec<String>,
    /// The files the site names (`workload.streams[].config`), by the path as written in it.
    #[serde(default)]
    site_files: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FrozenFile {
    path: String,
    text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FrozenModels {
    dir: String,
    files: BTreeMap<String, String>,
}

/// A `site::StreamSpec` as the saved plan writes it (same fields).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FrozenStream {
    name: String,
    msgs_per_s: f64,
    msg_size_bytes: u64,
    subject_bytes: u64,
    retention_s: f64,
    replicas: Option<u8>,
    consumers: u32,
    max_bytes: Option<u64>,
    subjects: Vec<String>,
}

impl From<&StreamSpec> for FrozenStream {
    fn from(s: &StreamSpec) -> Self {
        FrozenStream {
            name: s.name.clone(),
            msgs_per_s: s.msgs_per_s,
            msg_size_bytes: s.msg_size_bytes,
            subject_bytes: s.subject_bytes,
            retention_s: s.retention_s,
            replicas: s.replicas,
            consumers: s.consumers,
            max_bytes: s.max_bytes,
            subjects: s.subjects.clone(),
        }
    }
}

impl From<&FrozenStream> for StreamSpec {
    fn from(s: &FrozenStream) -> Self {
        StreamSpec {
            name: s.name.clone(),
            msgs_per_s: s.msgs_per_s,
            msg_size_bytes: s.msg_size_bytes,
            subject_bytes: s.subject_bytes,
            retention_s: s.retention_s,
            replicas: s.replicas,
            consumers: s.consumers,
            max_bytes: s.max_bytes,
            subjects: s.subjects.clone(),
        }
    }
}

/// The file `design --save` writes.
#[derive(Debug, Serialize, Deserialize)]
struct SavedPlan {
    /// Always `natsplan-plan/1`.
    format: String,
    natsplan_version: String,
    hashes: Hashes,
    /// The layout `design --layout ID` chose when the plan was saved.
    layout: Option<String>,
    inputs: Frozen,
    /// The plan as `design --format json` prints it (every layout), for reading; natsplan rebuilds it
    /// from `inputs` and checks `hashes.plan`.
    plan: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Hashes {
    site: String,
    catalog: String,
    calibration: Option<String>,
    plan: String,
    /// Each file the site names, by its path as written there.
    #[serde(default)]
    site_files: BTreeMap<String, String>,
    /// The imported streams and their sources (`--omb`, `--from-cluster`) as frozen. Required: a plan
    /// without it is refused before anything is read from its streams.
    imported: String,
}

/// The first two fields of a saved plan, read before the rest so a plan from another natsplan version
/// (whose fields may differ) is refused for that reason.
#[derive(Debug, Deserialize)]
struct Header {
    format: String,
    natsplan_version: String,
}

const FORMAT: &str = "natsplan-plan/1";
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn sha256(bytes: &[u8]) -> String {
    let d = Sha256::digest(bytes);
    let mut s = String::from("sha256:");
    for b in d {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// The hash of a catalog's content (what the models say, whichever files they came from).
fn catalog_hash(c: &Catalog) -> String {
    sha256(&serde_json::to_vec(c).expect("a catalog serialises"))
}

/// The hash of a plan's JSON.
fn plan_hash(p: &Plan) -> String {
    sha256(&serde_json::to_vec(p).expect("a plan serialises"))
}

/// The saved plan's site text, its copies of the files its site names and its imported streams against
/// their hashes: checked first, before anything is built from them. The reason when one differs. (A hash
/// only finds an edit, not a forgery: whoever edits the file can recompute it, so what is read from the
/// plan is validated as well, see `check_imported`.)
fn check_frozen_hashes(f: &Frozen, hashes: &Hashes) -> Result<(), String> {
    if sha256(f.site.text.as_bytes()) != hashes.site {
        return Err("its site text does not match its site hash (the file was edited)".into());
    }
    for (name, text) in &f.site_files {
        if hashes.site_files.get(name) != Some(&sha256(text.as_bytes())) {
            return Err(format!(
                "its copy of {name} does not match its hash (the file was edited)"
            ));
        }
    }
    if hashes.imported != imports_hash(f) {
        return Err("its imported streams do not match their hash (the file was edited)".into());
    }
    Ok(())
}

/// The imported streams of a saved plan held to the site's rules and bounds (`site::check_stream`, the
/// one table in `input::limits`), before any is merged or planned: a plan is a file anyone may have
/// written. Every problem, each at its field path in the plan.
fn check_saved_imported(f: &Frozen, file: &Path) -> Result<(), InputErrors> {
    let fail = |errors| InputErrors {
        file: file.display().to_string(),
        errors,
    };
    let assets = f.imported_streams.len() as u64 + f.imported_streams.iter().map(|s| s.consumers as u64).sum::<u64>();
    if assets > MAX_ASSETS {
        return Err(fail(vec![too_many_assets("inputs.imported_streams", assets)]));
    }
    let mut errors = Vec::new();
    for (i, s) in f.imported_streams.iter().enumerate() {
        errors.extend(crate::site::check_stream(
            &StreamSpec::from(s),
            &format!("inputs.imported_streams[{i}]"),
        ));
        // Every problem of a hand-made file is listed, but not without end.
        if errors.len() >= 100 {
            break;
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(fail(errors))
    }
}

/// The `MAX_ASSETS` problem, as the site validator says it.
fn too_many_assets(path: &str, assets: u64) -> InputError {
    InputError {
        path: path.into(),
        line: None,
        column: None,
        message: format!(
            "{assets} streams, buckets, object stores and durable consumers; at most {MAX_ASSETS} are planned"
        ),
        fix: Some("split the site, or plan a representative share of the streams".into()),
    }
}

/// The files a SITE.yaml given beside a saved plan names must be the plan's copies. The reason when not.
fn check_site_files_beside(f: &Frozen, site: Option<&Path>) -> Result<(), String> {
    if let Some(site) = site {
        let dir = site.parent().map(Path::to_path_buf).unwrap_or_default();
        for (name, text) in &f.site_files {
            let now = read_text(&dir.join(name), "").ok();
            if now.as_deref() != Some(text.as_str()) {
                return Err(format!(
                    "{name}, which {} names, is not the file this plan was built from (missing or changed): drop \
                     SITE.yaml to use the saved plan, or save a new plan",
                    site.display()
                ));
            }
        }
    }
    Ok(())
}

/// The hash of the imported streams and where they came from, as frozen.
fn imports_hash(f: &Frozen) -> String {
    sha256(&serde_json::to_vec(&(&f.imported_streams, &f.import_sources)).expect("streams serialise"))
}

/// Parse the site file, reading the files it names beside it; returns them too, to freeze.
fn parse_site(text: &str, path: &Path, catalog: &Catalog) -> Result<(Site, BTreeMap<String, String>), Failure> {
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let read_files = std::cell::RefCell::new(BTreeMap::new());
    let read = |rel: &str| -> Result<String, String> {
        let t = crate::input::read_text(&dir.join(rel), "stream config").map_err(|e| {
            e.errors
                .first()
                .map(|x| x.message.clone())
                .unwrap_or_else(|| e.to_string())
        })?;
        read_files.borrow_mut().insert(rel.to_string(), t.clone());
        Ok(t)
    };
    let site = crate::site::parse_str_with(text, &path.display().to_string(), catalog, &read).map_err(bad_input)?;
    Ok((site, read_files.into_inner()))
}

/// Every planned asset's size fits what nats-server's `max_bytes` holds (an int64 of bytes, server/stream.go
/// `StreamConfig.MaxBytes`), which `emit` writes it as: an asset past 8 EiB is refused here with its place
/// in the site (`workload.streams[2] (orders)`) rather than planned and then written as a number
/// nats-server refuses. Sized as the planner sizes it (`layout::sizing`, growth and RAFT log included) at
/// the most replicas a layout gives it.
fn check_sizes(site: &Site, path: &Path) -> Result<(), Failure> {
    use crate::layout::sizing::{kv_bytes, object_store_bytes, stream_bytes};
    const MAX: f64 = i64::MAX as f64;
    let r = 5;
    let sized = site
        .workload
        .streams
        .iter()
        .enumerate()
        .map(|(i, s)| {
            (
                "streams",
                i,
                &s.name,
                stream_bytes(site, s, r),
                "msgs_per_s, msg_size or retention, or set max_bytes",
            )
        })
        .chain(
            site.workload
                .kv
                .iter()
                .enumerate()
                .map(|(i, k)| ("kv", i, &k.name, kv_bytes(site, k, r), "keys, history or value_size")),
        )
        .chain(site.workload.object_stores.iter().enumerate().map(|(i, o)| {
            (
                "object_stores",
                i,
                &o.name,
                object_store_bytes(site, o, r),
                "object_size, objects or retention",
            )
        }));
    for (list, i, name, bytes, what) in sized {
        if bytes.is_nan() || bytes >= MAX {
            return Err(bad_input(anyhow!(
                "{}: workload.{list}[{i}] ({name}): one replica would store {} bytes, more than nats-server's \
                 max_bytes holds (an int64: at most {} bytes, 8 EiB), so emit could not write it; lower {what}",
                path.display(),
                if bytes.is_finite() {
                    format!("{bytes:.3e}")
                } else {
                    "more than 1.8e308".into()
                },
                i64::MAX
            )));
        }
    }
    Ok(())
}

/// The catalog files `Catalog::from_dir` reads.
const MODEL_FILES: [&str; 4] = ["arrays.yaml", "disks.yaml", "servers.yaml", "failure_rates.yaml"];

/// The catalog the user asked for: built in, or `--models DIR`.
pub fn load_catalog(models: Option<&Path>) -> Result<Catalog, Failure> {
    match models {
        Some(dir) => Catalog::from_dir(dir).map_err(bad_input),
        None => Ok(Catalog::builtin()),
    }
}

/// The built-in calibrations, plus `--calibration FILE` (its rows replace theirs by kind), with a label
/// saying which.
pub fn load_calibration(file: Option<&Path>) -> Result<(Calibration, String), Failure> {
    match file {
        Some(p) => Ok((
            Calibration::with_file(p).map_err(|e| bad_input(anyhow!("--calibration {}: {e:#}", p.display())))?,
            format!("built-in + {}", p.display()),
        )),
        None => Ok((Calibration::builtin(), "built-in".to_string())),
    }
}

/// Read an input file through the one bounded reader (regular files only, size cap, UTF-8 placed).
fn read_text(path: &Path, flag: &str) -> Result<String, Failure> {
    crate::input::read_text(path, flag.trim()).map_err(|e| bad_input(anyhow!("{flag}{e}")))
}

impl Inputs {
    /// Load what `src` names: a saved plan, or the site and the rest.
    pub fn load(src: &Sources) -> Result<Inputs, Failure> {
        match &src.plan {
            Some(p) => Inputs::from_saved(p, src),
            None => Inputs::from_files(src),
        }
    }

    fn from_files(src: &Sources) -> Result<Inputs, Failure> {
        let site_path = src.site.clone().ok_or_else(|| {
            bad_input(anyhow!(
                "no site: give SITE.yaml (see examples/) or --plan FILE (a plan saved by `natsplan design SITE \
                 --save FILE`)"
            ))
        })?;
        let catalog = load_catalog(src.models.as_deref())?;
        // The one bounded reader says why a file cannot be read, with its place and fix.
        let site_text = crate::input::read_text(&site_path, "site file").map_err(bad_input)?;
        let (site, site_files) = parse_site(&site_text, &site_path, &catalog)?;
        let mut site = site;
        let (calibration, calibration_label) = load_calibration(src.calibration.as_deref())?;
        let mut notes: Vec<String> = calibration.set.busy_note().into_iter().collect();
        let mut imported_streams = Vec::new();
        let mut import_sources = Vec::new();
        // Where each imported stream came from, as the flags name it, for messages beside the site's.
        let mut from: BTreeMap<String, String> = BTreeMap::new();
        for (label, imp) in import(src, &site)? {
            let flag = if label.starts_with("omb ") {
                format!("--omb {}", src.omb.as_deref().unwrap_or(Path::new("")).display())
            } else {
                format!("--from-cluster {}", src.from_cluster.join(","))
            };
            notes.extend(imp.notes.iter().cloned());
            notes.extend(crate::import::merge(&mut site.workload, &imp));
            imported_streams.extend(imp.streams.iter().map(FrozenStream::from));
            import_sources.push(label);
            from.extend(imp.streams.iter().map(|s| (s.name.clone(), flag.clone())));
        }
        check_sizes(&site, &site_path)?;
        check_imported(&site, &site_path, &from)?;
        let models = match &src.models {
            None => None,
            Some(dir) => {
                let mut files = BTreeMap::new();
                for name in MODEL_FILES {
                    let p = dir.join(name);
                    if p.exists() {
                        files.insert(name.to_string(), read_text(&p, "--models ")?);
                    }
                }
                Some(FrozenModels {
                    dir: dir.display().to_string(),
                    files,
                })
            }
        };
        let calibration_file = match &src.calibration {
            None => None,
            Some(p) => Some(FrozenFile {
                path: p.display().to_string(),
                text: read_text(p, "--calibration ")?,
            }),
        };
        Ok(Inputs {
            site,
            catalog,
            calibration,
            calibration_label,
            site_path: site_path.clone(),
            notes,
            chosen_layout: None,
            frozen: Frozen {
                site: FrozenFile {
                    path: site_path.display().to_string(),
                    text: site_text,
                },
                models,
                calibration: calibration_file,
                imported_streams,
                import_sources,
                site_files,
            },
            saved_plan_sha256: None,
            saved_from: None,
        })
    }

    fn from_saved(path: &Path, src: &Sources) -> Result<Inputs, Failure> {
        let refuse = |why: String| bad_input(anyhow!("--plan {}: {why}", path.display()));
        let text = read_text(path, "--plan ")?;
        let not_a_plan = |e: serde_json::Error| {
            refuse(format!(
                "not a plan saved by `natsplan design SITE --save FILE` ({e}); save one with that command"
            ))
        };
        let header: Header = serde_json::from_str(&text).map_err(not_a_plan)?;
        if header.format != FORMAT {
            return Err(refuse(format!(
                "format '{}' is not understood (this natsplan reads {FORMAT}); save the plan again with \
                 `natsplan design SITE --save FILE`",
                clip(&header.format)
            )));
        }
        if header.natsplan_version != VERSION {
            return Err(refuse(format!(
                "saved by natsplan {}, this is natsplan {VERSION}: plans are only reproducible by the version \
                 that made them; save it again with `natsplan design SITE --save {}`",
                clip(&header.natsplan_version),
                path.display()
            )));
        }
        let saved: SavedPlan = serde_json::from_str(&text).map_err(not_a_plan)?;
        // The hashes first, then the streams against the site's rules: nothing is built before both.
        check_frozen_hashes(&saved.inputs, &saved.hashes).map_err(refuse)?;
        check_saved_imported(&saved.inputs, path).map_err(|e| {
            refuse(format!(
                "its imported streams break the site's rules (the file was edited or written by hand; save it \
                 again with `natsplan design SITE --save FILE`):\n{e}"
            ))
        })?;
        if src.omb.is_some() || !src.from_cluster.is_empty() {
            return Err(refuse(
                "--omb and --from-cluster cannot change a saved plan (its imported streams are in it); give \
                 them to `natsplan design SITE --save FILE` instead"
                    .into(),
            ));
        }
        let f = &saved.inputs;
        // What is given beside the plan must be what it was built from.
        if let Some(site) = &src.site {
            let bytes = read_text(site, "")?.into_bytes();
            if sha256(&bytes) != saved.hashes.site {
                return Err(refuse(format!(
                    "{} is not the site file this plan was built from ({}; the content differs): drop SITE.yaml \
                     to use the saved plan, or save a new plan from this site",
                    site.display(),
                    f.site.path
                )));
            }
        }
        let catalog = match &f.models {
            None => Catalog::builtin(),
            Some(m) => {
                let dir = tempfile::tempdir().map_err(|e| cannot_run(anyhow!(e)))?;
                for (name, text) in &m.files {
                    if !MODEL_FILES.contains(&name.as_str()) {
                        return Err(refuse(format!("models file '{name}' is not a catalog file")));
                    }
                    std::fs::write(dir.path().join(name), text).map_err(|e| cannot_run(anyhow!(e)))?;
                }
                Catalog::from_dir(dir.path())
                    .with_context(|| format!("the saved models of {}", m.dir))
                    .map_err(bad_input)?
            }
        };
        if catalog_hash(&catalog) != saved.hashes.catalog {
            return Err(refuse("its catalog does not match its catalog hash".into()));
        }
        if let Some(dir) = &src.models {
            if catalog_hash(&load_catalog(Some(dir))?) != saved.hashes.catalog {
                return Err(refuse(format!(
                    "--models {} is not the catalog this plan was built from; drop --models to use the saved \
                     one, or save a new plan with it",
                    dir.display()
                )));
            }
        }
        let (calibration, calibration_label) = match &f.calibration {
            None => (Calibration::builtin(), "built-in".to_string()),
            Some(c) => {
                if saved.hashes.calibration.as_deref() != Some(sha256(c.text.as_bytes()).as_str()) {
                    return Err(refuse("its calibration does not match its calibration hash".into()));
                }
                let file = CalibrationFile::parse(&c.text, &c.path).map_err(bad_input)?;
                let cal = Calibration::from_set(CalibrationSet::builtin().with_file(file))
                    .map_err(|e| bad_input(e.context(format!("fitting the model with --calibration {}", c.path))))?;
                (cal, format!("built-in + {}", c.path))
            }
        };
        if let Some(p) = &src.calibration {
            let bytes = read_text(p, "--calibration ")?.into_bytes();
            if saved.hashes.calibration.as_deref() != Some(sha256(&bytes).as_str()) {
                return Err(refuse(format!(
                    "--calibration {} is not the calibration this plan was built from; drop --calibration to \
                     use the saved one, or save a new plan with it",
                    p.display()
                )));
            }
        }
        check_site_files_beside(f, src.site.as_deref()).map_err(refuse)?;
        let frozen_files = f.site_files.clone();
        let read = move |rel: &str| -> Result<String, String> {
            frozen_files
                .get(rel)
                .cloned()
                .ok_or_else(|| "not in the saved plan".to_string())
        };
        let mut site = crate::site::parse_str_with(&f.site.text, &f.site.path, &catalog, &read).map_err(bad_input)?;
        let imported = Imported {
            streams: f.imported_streams.iter().map(StreamSpec::from).collect(),
            notes: Vec::new(),
        };
        crate::import::merge(&mut site.workload, &imported);
        check_sizes(&site, Path::new(&f.site.path))?;
        let assets = crate::site::workload_assets(&site.workload);
        if assets > MAX_ASSETS {
            return Err(refuse(format!(
                "its site with its imported streams: {}",
                too_many_assets("workload", assets).message
            )));
        }
        let notes = calibration.set.busy_note().into_iter().collect();
        Ok(Inputs {
            site,
            catalog,
            calibration,
            calibration_label,
            site_path: PathBuf::from(&f.site.path),
            notes,
            chosen_layout: saved.layout.clone(),
            frozen: saved.inputs,
            saved_plan_sha256: Some(saved.hashes.plan),
            saved_from: Some(path.to_path_buf()),
        })
    }

    /// Evaluate and rank the layouts (pure); for a saved plan, check it is the plan that was saved.
    pub fn plan(&self) -> Result<Plan, Failure> {
        self.plan_with(&|_, _| {})
    }

    /// As `plan`, telling `progress` (layouts done, layouts in all) as layouts are evaluated.
    pub fn plan_with(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Plan, Failure> {
        let plan = super::build_progress(&self.site, &self.catalog, &self.calibration, progress);
        if let (Some(want), Some(from)) = (&self.saved_plan_sha256, &self.saved_from) {
            if &plan_hash(&plan) != want {
                return Err(bad_input(anyhow!(
                    "--plan {}: rebuilt from its inputs, the plan differs from the one saved (the file was edited); \
                     save it again with `natsplan design SITE --save FILE`",
                    from.display()
                )));
            }
        }
        Ok(plan)
    }

    /// The saved-plan file for `plan` (built from these inputs), with the layout `design --layout` chose.
    pub fn saved_plan_json(&self, plan: &Plan, layout: Option<&str>) -> Vec<u8> {
        let saved = SavedPlan {
            format: FORMAT.into(),
            natsplan_version: VERSION.into(),
            hashes: Hashes {
                site: sha256(self.frozen.site.text.as_bytes()),
                catalog: catalog_hash(&self.catalog),
                calibration: self.frozen.calibration.as_ref().map(|c| sha256(c.text.as_bytes())),
                plan: plan_hash(plan),
                site_files: self
                    .frozen
                    .site_files
                    .iter()
                    .map(|(k, t)| (k.clone(), sha256(t.as_bytes())))
                    .collect(),
                imported: imports_hash(&self.frozen),
            },
            layout: layout.map(str::to_string).or_else(|| self.chosen_layout.clone()),
            inputs: self.frozen.clone(),
            plan: serde_json::to_value(plan).expect("a plan serialises"),
        };
        let mut v = serde_json::to_vec_pretty(&saved).expect("a saved plan serialises");
        v.push(b'\n');
        v
    }
}

/// Imported streams go through the site's rules across streams (`site::streams`, which the site file's
/// validator runs too): a stream name nats-server already holds (a site's KV bucket `sessions` is the
/// stream `KV_sessions`) or subjects overlapping another stream's (`orders.>` and `orders.eu.*`) are
/// refused as bad input, each clash naming both assets and where each came from — the flag and file of an
/// imported stream (`from`, by name), the site file's line and column of the site's — rather than found by
/// `lab up --streams` (nats-server error 10065). Clashes among the site's own assets were refused when it
/// was read.
fn check_imported(site: &Site, site_path: &Path, from: &BTreeMap<String, String>) -> Result<(), Failure> {
    use crate::site::streams::{clashes, AssetRef};
    let w = &site.workload;
    let imported = |a: AssetRef| match a {
        AssetRef::Stream(i) => from.get(&w.streams[i].name),
        _ => None,
    };
    let place = |a: AssetRef| -> String {
        match (imported(a), w.places.of(a)) {
            (Some(flag), _) => flag.clone(),
            (None, Some(p)) => format!("{}:{}:{}: {}", site_path.display(), p.line, p.col, a.path()),
            (None, None) => format!("{}: {}", site_path.display(), a.path()),
        }
    };
    let mut lines = Vec::new();
    for mut c in clashes(w) {
        let (then, first) = c.assets();
        if imported(then).is_none() && imported(first).is_none() {
            continue;
        }
        // Said of the imported stream: that is what the user just added.
        if imported(then).is_none() {
            c = c.swapped();
        }
        let (then, first) = c.assets();
        let (what, fix) = c.message(w, &place(first));
        lines.push(format!("  {}: {what}\n      fix: {fix}", place(then)));
    }
    if lines.is_empty() {
        return Ok(());
    }
    Err(bad_input(anyhow!(
        "imported streams clash with {} nats-server would refuse:\n{}",
        if lines.len() == 1 { "an asset" } else { "assets" },
        lines.join("\n")
    )))
}

/// What `--omb` and `--from-cluster` import, merged into `site` and checked as design checks them
/// (`size` applies the returned imports to each candidate's site the same way, `import::merge`); the notes
/// are the imports' own and the merge's.
pub fn imports_into(
    src: &Sources,
    site: &mut Site,
    site_path: &Path,
) -> Result<(Vec<crate::import::Imported>, Vec<String>), Failure> {
    let mut notes = Vec::new();
    let mut from: BTreeMap<String, String> = BTreeMap::new();
    let mut all = Vec::new();
    for (label, imp) in import(src, site)? {
        notes.extend(imp.notes.iter().cloned());
        notes.extend(crate::import::merge(&mut site.workload, &imp));
        from.extend(imp.streams.iter().map(|s| (s.name.clone(), label.clone())));
        all.push(imp);
    }
    check_sizes(site, site_path)?;
    check_imported(site, site_path, &from)?;
    Ok((all, notes))
}

/// The workloads `--omb` and `--from-cluster` (monitor URLs measured live, or nats CLI files read
/// offline) name, each with a label of where it came from.
fn import(src: &Sources, site: &Site) -> Result<Vec<(String, Imported)>, Failure> {
    let mut imports = Vec::new();
    if let Some(path) = &src.omb {
        imports.push((
            format!("omb {}", path.display()),
            crate::import::omb::load_with(path, src.omb_retention.as_deref(), src.omb_rate).map_err(bad_input)?,
        ));
    }
    let (urls, files): (Vec<&String>, Vec<&String>) = src.from_cluster.iter().partition(|u| u.contains("://"));
    if !urls.is_empty() && !files.is_empty() {
        return Err(bad_input(anyhow!(
            "--from-cluster: give either monitor URLs (http://HOST:8222, measured live) or files the nats CLI wrote \
             (`nats stream info NAME --json`, `nats server request jetstream --all`), not both"
        )));
    }
    if !files.is_empty() {
        let paths: Vec<&Path> = files.iter().map(|f| Path::new(f.as_str())).collect();
        let imp = crate::import::natscli::load(&paths, site).map_err(bad_input)?;
        // The label names each file with its hash, so the saved plan says exactly what it was built from.
        let mut label = Vec::new();
        for p in &paths {
            let text = read_text(p, "--from-cluster ")?;
            label.push(format!("{} ({})", p.display(), sha256(text.as_bytes())));
        }
        imports.push((format!("cluster files {}", label.join(", ")), imp));
    } else if !src.from_cluster.is_empty() {
        let interval = crate::units::parse_duration(&src.interval)
            .map_err(|e| bad_input(anyhow!("--interval {}: {e}", src.interval)))?;
        let imp =
            crate::import::cluster::measure(&src.from_cluster, interval, Duration::from_secs(5)).map_err(cannot_run)?;
        // The label is printed and saved with the plan: no password in it.
        let shown: Vec<String> = src.from_cluster.iter().map(|u| crate::monitor::shown(u)).collect();
        imports.push((format!("cluster {}", shown.join(",")), imp));
    }
    Ok(imports)
}

#[cfg(test)]
#[path = "inputs_tests.rs"]
mod tests;
