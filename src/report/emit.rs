//! `natsplan emit`'s report: what was written where (the files themselves are `emit`'s), as a line for
//! people or JSON naming each file, the Helm values and the monitoring rules.

use super::render::{json_to, Format, Render};
use crate::emit::helm::{Helm, CHART_VERSION};
use crate::emit::monitoring::Monitoring;
use std::path::Path;

/// What `emit` wrote: the folder, the layout, every file (relative to the folder), and the Helm values
/// and monitoring files when asked for.
pub struct Emitted<'a> {
    pub out: &'a Path,
    pub layout: &'a crate::plan::PlannedLayout,
    pub files: Vec<String>,
    pub helm: Option<&'a Helm>,
    pub monitoring: Option<&'a Monitoring>,
}

impl Render for Emitted<'_> {
    const COMMAND: &'static str = "emit";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => json_to(&self.json(), w),
            _ => writeln!(
                w,
                "wrote {} files for layout {} to {} ({} servers); start with {}/README.md",
                self.files.len(),
                self.layout.id,
                self.out.display(),
                self.layout.servers.len(),
                self.out.display()
            ),
        }
    }
}

impl Emitted<'_> {
    fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "out": self.out, "layout": self.layout.id, "files": self.files,
        });
        if let Some(h) = self.helm {
            v["helm"] = serde_json::json!({
                "chart": "nats", "chart_version": CHART_VERSION,
                "image_tag": h.values["container"]["image"]["tag"], "values": "helm/values.yaml",
                "warnings": h.warnings,
            });
        }
        if let Some(m) = self.monitoring {
            let dir = format!("monitoring/{}", m.exporter.as_str());
            v["monitoring"] = serde_json::json!({
                "exporter": m.exporter.as_str(),
                "metric_prefix": m.prefix,
                "rules": format!("{dir}/alerts.rules.yaml"),
                "dashboard": format!("{dir}/dashboard.json"),
            });
        }
        v
    }
}
