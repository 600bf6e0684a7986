//! Calibration files: published or measured benchmark figures with their provenance, in the schema
//! `natsplan-calibration/1` (docs/calibration-format.md). The seed transcriptions in `calibration/` are
//! compiled into the binary; `--calibration FILE` adds a file whose rows replace the built-in rows of the
//! same kinds. Files hold observations only: the model's terms are fitted from them when loaded (`fit`), so
//! `natsplan calibrate` only ever has to write what it measured.

use super::Kind;
use crate::units::parse_size;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The schema tag every calibration file carries.
pub const SCHEMA: &str = "natsplan-calibration/1";

/// The built-in files: (file name, text).
pub const BUILTIN_FILES: [(&str, &str); 9] = [
    (
        "seed000-ef600-objstore.yaml",
        include_str!("../../calibration/seed000-ef600-objstore.yaml"),
    ),
    (
        "seed000-fio-raid.yaml",
        include_str!("../../calibration/seed000-fio-raid.yaml"),
    ),
    (
        "nats-docs-kv-putter.yaml",
        include_str!("../../calibration/nats-docs-kv-putter.yaml"),
    ),
    (
        "seed004-lxc-ladder.yaml",
        include_str!("../../calibration/seed004-lxc-ladder.yaml"),
    ),
    (
        "seed002-nats-bench.yaml",
        include_str!("../../calibration/seed002-nats-bench.yaml"),
    ),
    (
        "seed003-kafka-ontap.yaml",
        include_str!("../../calibration/seed003-kafka-ontap.yaml"),
    ),
    (
        "nats-docs-bench.yaml",
        include_str!("../../calibration/nats-docs-bench.yaml"),
    ),
    (
        "lab-loopback-js.yaml",
        include_str!("../../calibration/lab-loopback-js.yaml"),
    ),
    (
        "lab-loopback-consumers.yaml",
        include_str!("../../calibration/lab-loopback-consumers.yaml"),
    ),
];

/// The row kind of asynchronous KV puts (`publish_mode: async`, `window`).
pub const KV_ASYNC_KIND: &str = "kv-async";

/// The row kind of JetStream publishes with consumers reading every message as it is written (calibrate's
/// readers point, `perf::leader::ReadersStretch`): `consumers` readers, `values.pub_msgs_per_s` the
/// publishers' rate. A kind of its own so no reader of `js` rows takes one for a publish row.
pub const JS_READERS_KIND: &str = "js-readers";

/// Row kinds the schema knows; anything else is a typo.
pub const KINDS: [&str; 19] = [
    "store-probe",
    "consumer",
    "obj-put",
    "obj-get",
    "js",
    "kv",
    // Asynchronous KV puts (calibrate's kvasync point, `perf::leader::KvPutRatio`): a kind of their own, so
    // no reader of `kv` rows (synchronous putters) takes one for a putter, and a natsplan from before it
    // refuses the row by name instead of misreading it.
    KV_ASYNC_KIND,
    JS_READERS_KIND,
    "core",
    "ping",
    "flood",
    "fio",
    "restart",
    "writeback",
    "disk-write",
    "repair",
    "cpu",
    "recovery",
    "efficiency",
];

/// Where the figures come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// The document (and section) the figures were transcribed from, or the run folder that measured them.
    pub document: String,
    /// blog, vendor-docs, project-readme, natsplan-calibrate, ...
    pub kind: String,
    /// When it was published or measured; `unknown` when not stated.
    pub date: String,
}

/// One table (or one measured ladder) with the conditions all its rows share.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Series {
    pub name: String,
    /// The table's caption or where in the document it is.
    pub table: String,
    #[serde(default)]
    pub conditions: BTreeMap<String, serde_norway::Value>,
    pub rows: Vec<Row>,
}

/// One published row. Shape fields are optional because the kinds differ; `values` holds the figures
/// exactly as published, keyed with their unit.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Row {
    pub label: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<bool>,
    /// `always`, `delayed` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<String>,
    /// Message or object size as written (`8KiB`, `128B`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers_placement: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publishers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publishers_low: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumers: Option<u32>,
    /// `first-server` (all on one server) or `spread`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consumers_placement: Option<String>,
    /// `sync`, `async` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish_mode: Option<String>,
    /// Publishes in flight per publisher (`publish_mode: async`; 1 for sync), when the writer recorded it
    /// (`natsplan calibrate` since issue 37). A row with a small window (below `perf::leader::SMALL_WINDOW`)
    /// prices the leader's closed-loop base latency, not its ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// Distinct subjects the row's messages were published on, round-robin (`bench --multisubject`), when
    /// more than one (`natsplan calibrate`'s many-subjects point since issue 37). None: one subject. Such
    /// rows price what many subjects add to the stream leader's work (perf::leader::SubjectsTerm), never the
    /// one-subject laws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subjects: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msgs: Option<u64>,
    pub values: BTreeMap<String, f64>,
    /// Values computed from others (never measurements; never fitted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<String>,
    /// Quirks, e.g. `duplicate_label`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// Whether the row may calibrate the model (false for flagged or derived rows).
    #[serde(default = "yes")]
    pub fit: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn yes() -> bool {
    true
}

impl Row {
    /// Whether the row is of benchmark kind `kind`.
    pub fn is(&self, kind: Kind) -> bool {
        self.kind == kind.as_str()
    }

    /// A measured (not derived) value.
    pub fn measured(&self, key: &str) -> Option<f64> {
        if self.derived.iter().any(|d| d == key) {
            return None;
        }
        self.values.get(key).copied()
    }
    pub fn size_bytes(&self) -> Option<u64> {
        self.size.as_deref().and_then(|s| parse_size(s).ok())
    }
    /// Asynchronous KV puts (`kind: kv-async`, or a `kv` row with `publish_mode: async`): the leader's KV put
    /// ratio's rows (`perf::leader::KvPutRatio`), never a synchronous putter's.
    pub fn async_put(&self) -> bool {
        self.kind == KV_ASYNC_KIND || (self.kind == "kv" && self.publish_mode.as_deref() == Some("async"))
    }
    /// Published on one subject (no `subjects` above one): the rows every one-subject law is fitted to.
    pub fn one_subject(&self) -> bool {
        self.subjects.unwrap_or(1) <= 1
    }
    /// True for `sync: always`; false for `delayed`; None when unknown.
    pub fn sync_always(&self) -> Option<bool> {
        match self.sync.as_deref() {
            Some("always") => Some(true),
            Some("delayed") => Some(false),
            _ => None,
        }
    }
}

/// One calibration file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    pub schema: String,
    /// Short unique name; predictions cite it as their source.
    pub id: String,
    pub title: String,
    pub source: Source,
    /// nats-server version, `unknown`, or `n/a (...)` for non-NATS figures.
    pub nats_version: String,
    /// Tool, flags and repetitions.
    pub method: String,
    /// What it ran on; must name at least `array`, `disk_kind` and `host` (`unknown` is an answer).
    pub hardware: BTreeMap<String, serde_norway::Value>,
    #[serde(default)]
    pub conditions: BTreeMap<String, serde_norway::Value>,
    pub series: Vec<Series>,
    /// Where a measured file was measured: cluster facts (servers, version, JetStream cluster size, sync
    /// mode, store filesystem), the load on the measuring host, the budget. Free-form; `natsplan calibrate`
    /// writes it. Published transcriptions leave it out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub provenance: BTreeMap<String, serde_norway::Value>,
    /// How well the model's terms fitted these rows when the file was written (informative: the terms are
    /// refitted whenever the file is loaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit_quality: Option<FitQuality>,
}

/// One fitted term with its uncertainty (jackknife standard error over the measurement points).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TermFit {
    /// `obj.chunk_s`, `js.leader_op_s`, ...
    pub name: String,
    pub value: f64,
    /// Jackknife standard error; None when the points cannot give one (too few of the term's kind).
    pub uncertainty: Option<f64>,
    /// False when the points cannot separate the term from another one (its value then follows the fit's
    /// starting point and the uncertainty says so).
    pub identified: bool,
}

/// One row's residual: what the fitted model predicts for the row's shape against what was measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Residual {
    pub label: String,
    pub measured: f64,
    pub predicted: f64,
    /// measured ÷ predicted − 1.
    pub error: f64,
    /// True for rows held out of the fit (cross-validation), false for fitted rows.
    pub held_out: bool,
}

/// Fit quality recorded by `natsplan calibrate`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FitQuality {
    pub terms: Vec<TermFit>,
    pub residuals: Vec<Residual>,
    /// Median and worst |error| of the held-out rows, predicted by a fit without them.
    pub holdout_median_abs_error: Option<f64>,
    pub holdout_worst_abs_error: Option<f64>,
    /// Median relative spread ((max − min) ÷ mean) of the repeated points: the measurement noise.
    pub repeat_spread_median: Option<f64>,
    /// Highest sustained rate of the fixed-rate sweep and the first rate it could not hold (msgs/s).
    pub knee_sustained_per_s: Option<f64>,
    pub knee_failed_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl CalibrationFile {
    /// The client host's load `natsplan calibrate` recorded in the provenance (`host_before`,
    /// `host_during`); None for files without it (published transcriptions, older calibrations).
    pub fn recorded_host(&self, key: &str) -> Option<crate::hostload::HostLoad> {
        serde_norway::from_value(self.provenance.get(key)?.clone()).ok()
    }

    /// Parse and check a file: every problem at once, each with `file:line:col`, its field path and a fix
    /// (the located reading is `input::Doc`, shared with the site and models files).
    pub fn parse(text: &str, origin: &str) -> Result<CalibrationFile> {
        let doc = crate::input::Doc::parse(text, origin)?;
        let (f, read_errors) = doc.read::<CalibrationFile>();
        let checks = f.as_ref().map(|f| f.check()).unwrap_or_default();
        let checks = checks
            .into_iter()
            .map(|(path, msg, fix)| doc.error(&path, msg, fix))
            .collect();
        let errors = doc.merge(read_errors, checks);
        match f {
            Some(f) if errors.is_empty() => Ok(f),
            _ => Err(doc.errors(errors).into()),
        }
    }

    /// The checks serde cannot make, as (field path, problem, fix).
    fn check(&self) -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = Vec::new();
        let mut bad = |path: String, msg: String, fix: &str| out.push((path, msg, fix.to_string()));
        if self.schema != SCHEMA {
            bad(
                "schema".into(),
                format!("'{}' is not supported", self.schema),
                &format!("write `schema: {SCHEMA}`"),
            );
        }
        if self.id.trim().is_empty() {
            bad("id".into(), "empty".into(), "give the file a short unique name");
        }
        for key in ["array", "disk_kind", "host"] {
            if !self.hardware.contains_key(key) {
                bad(
                    format!("hardware.{key}"),
                    format!("missing key '{key}'"),
                    "write `unknown` when it is not known",
                );
            }
        }
        for (si, s) in self.series.iter().enumerate() {
            for (ri, r) in s.rows.iter().enumerate() {
                let at = |k: &str| format!("series[{si}].rows[{ri}].{k}");
                if !KINDS.contains(&r.kind.as_str()) {
                    bad(
                        at("kind"),
                        format!("'{}' is unknown", r.kind),
                        &format!("use one of {}", KINDS.join(", ")),
                    );
                }
                if let Some(sz) = &r.size {
                    if let Err(e) = parse_size(sz) {
                        bad(at("size"), e, "write a size such as 128B, 8KiB or 1MiB");
                    }
                }
                if let Some(sy) = &r.sync {
                    if !["always", "delayed", "unknown"].contains(&sy.as_str()) {
                        bad(
                            at("sync"),
                            format!("'{sy}' is not a sync mode"),
                            "write always, delayed or unknown",
                        );
                    }
                }
                if let Some(rep) = r.replicas {
                    if !(1..=5).contains(&rep) {
                        bad(at("replicas"), format!("{rep} must be 1..5"), "write 1, 3 or 5");
                    }
                }
                if r.values.is_empty() {
                    bad(at("values"), "empty".into(), "a row must publish at least one figure");
                }
                for (k, v) in &r.values {
                    // A rate or a time of 0 is no measurement: it predicted 0/s with exit 0 (issue 41).
                    // Other figures (`sustained: 0`, an `error` of 0) may be 0.
                    let measured = k.ends_with("_per_s") || k.ends_with("_ms") || k.ends_with("_us");
                    if !v.is_finite() || *v < 0.0 || (measured && *v == 0.0) {
                        let (what, fix) = if measured {
                            (
                                "a finite number above zero (a rate or a time)",
                                "write the figure as published (a rate or time of 0 measures nothing), or drop the key",
                            )
                        } else {
                            (
                                "a finite, non-negative number",
                                "write the figure as published, 0 or more",
                            )
                        };
                        bad(at(&format!("values.{k}")), format!("{v} must be {what}"), fix);
                    }
                }
                for d in &r.derived {
                    if !r.values.contains_key(d) {
                        bad(
                            at("derived"),
                            format!("'{d}' names no value of this row"),
                            "name a key of values",
                        );
                    }
                }
            }
        }
        out
    }

    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.series.iter().flat_map(|s| s.rows.iter())
    }
}

/// All calibration files in use, in load order (built-in first, then `--calibration`).
#[derive(Debug, Clone)]
pub struct CalibrationSet {
    pub files: Vec<CalibrationFile>,
}

impl CalibrationSet {
    /// When a file in use was measured on a busy client host (its `provenance.host_during.busy`), what a
    /// prediction from it must say: its figures read low.
    pub fn busy_note(&self) -> Option<String> {
        let busy: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| {
                let h = f.recorded_host("host_during").filter(|h| h.busy)?;
                Some(format!("\"{}\" ({})", f.id, h.describe()))
            })
            .collect();
        (!busy.is_empty()).then(|| {
            format!(
                "calibration {} was measured on a busy client host (busy above {:.0} % of the cores or {:.0} % steal, \
                 natsplan's assumption): its per-message costs include the client's lost share, so predictions from \
                 it read low; calibrate again on a quiet host",
                busy.join(", "),
                crate::hostload::BUSY_SHARE * 100.0,
                crate::hostload::BUSY_STEAL_PERCENT
            )
        })
    }

    /// The last file that recorded the client host's load during its measurement (`provenance.host_during`,
    /// written by `natsplan calibrate`): its id and that load.
    pub fn recorded_host(&self) -> Option<(String, crate::hostload::HostLoad)> {
        self.files
            .iter()
            .rev()
            .find_map(|f| Some((f.id.clone(), f.recorded_host("host_during")?)))
    }

    pub fn builtin() -> CalibrationSet {
        let files = BUILTIN_FILES
            .iter()
            .map(|(name, text)| {
                CalibrationFile::parse(text, &format!("calibration/{name}"))
                    .expect("built-in calibration is valid (tested)")
            })
            .collect();
        CalibrationSet { files }
    }

    /// Add a user file. Its fittable rows replace every built-in row of the kinds they have (so a measured `obj-put`
    /// ladder replaces seed 000's), and a file with the same id replaces that file outright.
    pub fn with_file(mut self, f: CalibrationFile) -> CalibrationSet {
        // Only kinds the file can calibrate replace: rows kept out of every fit (`fit: false`, e.g. the NATS
        // docs' figures the tests check against) leave the built-in rows of their kind in place.
        let kinds: Vec<String> = f.rows().filter(|r| r.fit).map(|r| r.kind.clone()).collect();
        self.files.retain(|g| g.id != f.id);
        for g in &mut self.files {
            for s in &mut g.series {
                s.rows.retain(|r| !kinds.contains(&r.kind));
            }
        }
        self.files.push(f);
        self
    }

    pub fn from_path(path: &Path) -> Result<CalibrationFile> {
        let text = crate::input::read_text(path, "calibration file")?;
        CalibrationFile::parse(&text, &path.display().to_string())
    }

    /// Rows of one kind with the id of the file they come from.
    /// The rows of one benchmark kind, with their files.
    pub fn rows_of(&self, kind: Kind) -> impl Iterator<Item = (&CalibrationFile, &Row)> + '_ {
        self.rows_named(kind.as_str())
    }

    /// The rows of a kind named as the file names it, with their files: for the kinds only calibration
    /// files have (`consumer`, `fio`, `restart`, ...); a benchmark kind is asked for with `rows_of`.
    pub fn rows_named<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = (&'a CalibrationFile, &'a Row)> + 'a {
        self.files
            .iter()
            .flat_map(|f| f.rows().map(move |r| (f, r)))
            .filter(move |(_, r)| r.kind == kind)
    }

    pub fn file(&self, id: &str) -> Option<&CalibrationFile> {
        self.files.iter().find(|f| f.id == id)
    }
}

/// A calibration in plain words for a table row (the file id stays in JSON): what was measured, where.
/// A file given with `--calibration` is named by its id.
pub fn calibration_words(id: &str) -> String {
    let words = match id {
        "lab-loopback-js" => "loopback lab (2 shared cores)",
        "lab-loopback-consumers" => "loopback lab consumer reads (2 shared cores)",
        "lab-loopback-always" => "loopback lab, sync always",
        "lab-loopback-delayed" => "loopback lab, delayed sync",
        "nats-docs-bench" => "nats bench figures in the NATS docs",
        "nats-docs-kv-putter" => "KV putter figures in the NATS docs",
        "seed000-ef600-objstore" => "E-Series EF600 object-store runs",
        "seed000-fio-raid" => "E-Series fio RAID runs",
        "seed002-nats-bench" => "nats-bench tutorial figures",
        "seed003-kafka-ontap" => "NetApp's Kafka-on-ONTAP figures",
        "seed004-lxc-ladder" => "3 LXC guests on one host",
        "" => "no calibration",
        other => return format!("your calibration \"{other}\""),
    };
    words.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_files_parse() {
        let s = CalibrationSet::builtin();
        assert_eq!(s.files.len(), BUILTIN_FILES.len());
    }

    #[test]
    fn bad_kind_and_sync_are_named_with_their_place() {
        let text = BUILTIN_FILES[2].1.replace("kind: kv,", "kind: kvv,");
        let e = CalibrationFile::parse(&text, "x.yaml").unwrap_err().to_string();
        assert!(e.contains("rows[0]") && e.contains("kvv"), "{e}");
        let text = BUILTIN_FILES[2]
            .1
            .replace("sync: delayed, size", "sync: sometimes, size");
        let e = CalibrationFile::parse(&text, "x.yaml").unwrap_err().to_string();
        assert!(e.contains("sync") && e.contains("sometimes"), "{e}");
        let text = BUILTIN_FILES[2].1.replace(SCHEMA, "natsplan-calibration/9");
        assert!(CalibrationFile::parse(&text, "x.yaml").is_err());
    }

    #[test]
    fn derived_values_are_not_measured() {
        let s = CalibrationSet::builtin();
        let (_, r) = s.rows_of(Kind::ObjPut).next().unwrap();
        assert!(r.measured("get_obj_per_s").is_none());
        assert_eq!(r.measured("put_obj_per_s"), Some(337.79));
    }

    #[test]
    fn a_user_file_replaces_rows_of_its_kinds() {
        // The docs' putter row is held out (`fit: false`); a user's measured copy of it calibrates.
        let user = CalibrationFile::parse(
            &BUILTIN_FILES[2]
                .1
                .replace("id: nats-docs-kv-putter", "id: my-lab")
                .replace("fit: false, ", ""),
            "mine.yaml",
        )
        .unwrap();
        let s = CalibrationSet::builtin().with_file(user);
        let kv: Vec<_> = s.rows_of(Kind::Kv).map(|(f, _)| f.id.clone()).collect();
        assert_eq!(kv, vec!["my-lab".to_string()]);
        assert!(s.rows_of(Kind::ObjPut).count() > 0);
    }
}
