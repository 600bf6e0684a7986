//! `natsplan predict`'s report: the prediction with the shape as understood, and its table and Markdown
//! renderers (JSON is the value itself).

use super::render::Format;
use crate::perf::{Prediction, Shape};
use crate::text::count;
use crate::units::fmt_bytes;
use serde::Serialize;

/// The JSON document `predict --format json` prints.
#[derive(Debug, Serialize)]
pub struct PredictReport {
    #[serde(flatten)]
    pub prediction: Prediction,
    /// The shape as understood (`perf::Shape`'s JSON: its models by name).
    pub shape: Shape,
}

impl super::render::Render for PredictReport {
    const COMMAND: &'static str = "predict";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => super::render::json_to(self, w),
            Format::Markdown => w.write_all(markdown(self).as_bytes()),
            _ => w.write_all(table(self, width).as_bytes()),
        }
    }
}

/// Rows of the table: the shape as understood, then the figures; the calibration in plain words (its id
/// and each term's source are in `--format json`).
fn rows(r: &PredictReport) -> Vec<(String, String)> {
    let p = &r.prediction;
    let s = &r.shape;
    let mut v = vec![
        (
            "shape".to_string(),
            format!(
                "{} · {} · R{} · sync {} · {} · {}",
                p.kind.as_str(),
                count(s.servers, "server"),
                s.replicas,
                s.sync.as_str(),
                fmt_bytes(s.size_bytes as f64),
                count(s.workers, "worker")
            ),
        ),
        (
            "volume".into(),
            format!(
                "{} · {} × {} {} · write cache {} · {} per group",
                s.volume.array.name,
                s.volume.disks,
                s.volume.disk.name,
                s.volume.raid.as_str(),
                if s.volume.write_cache { "on" } else { "off" },
                count(s.volume.luns_on_group, "LUN")
            ),
        ),
        ("ops/s".into(), format!("{:.1}", p.ops_per_s)),
        ("band ops/s".into(), format!("{:.1} – {:.1}", p.band.low, p.band.high)),
        ("bytes/s".into(), format!("{}/s", fmt_bytes(p.bytes_per_s))),
        (
            "latency".into(),
            format!("p50 {:.0} µs · p99 {:.0} µs", p.latency_us.p50, p.latency_us.p99),
        ),
        ("cpu per server".into(), format!("{:.2} cores", p.cpu_per_server)),
        ("bottleneck".into(), p.bottleneck.clone()),
        (
            "measured on".into(),
            if p.extrapolation_distance > 0.0 {
                format!(
                    "{} (extrapolated to {}: distance {:.2}; `natsplan calibrate` on this hardware narrows it)",
                    super::calibration_words(&p.calibration),
                    s.server.name,
                    p.extrapolation_distance
                )
            } else {
                format!(
                    "{}{}",
                    super::calibration_words(&p.calibration),
                    if p.scaled { " (scaled: wider band)" } else { "" }
                )
            },
        ),
    ];
    if matches!(p.kind, crate::perf::Kind::Js | crate::perf::Kind::Kv) {
        v.insert(
            1,
            (
                "publish".into(),
                if s.batch <= 1 {
                    format!("sync · {}", count(s.workers, "publisher"))
                } else {
                    format!("async · window {} · {}", s.batch, count(s.workers, "publisher"))
                },
            ),
        );
    }
    // Given subjects say what they cost (`--format json` says the one-subject assumption too).
    if let (Some(_), Some(t)) = (s.subjects, &p.subjects) {
        v.insert(2, ("subjects".into(), t.clone()));
    }
    for n in &p.notes {
        v.push(("note".into(), n.clone()));
    }
    v
}

/// The terminal table.
pub fn table(r: &PredictReport, width: u16) -> String {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(vec!["prediction", "value"]);
    for (k, v) in rows(r) {
        t.add_row(vec![k, v]);
    }
    format!("{t}\n")
}

/// A Markdown table.
pub fn markdown(r: &PredictReport) -> String {
    let mut s = String::from("| prediction | value |\n|---|---|\n");
    for (k, v) in rows(r) {
        s.push_str(&format!("| {k} | {} |\n", crate::text::md_pipes(&v)));
    }
    s
}
