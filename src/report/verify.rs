//! `natsplan verify`'s report as a result of the render seam: the ladder's renderers are `verify::report`'s
//! (table, Markdown, JSON, CSV) and `report::html`'s charts; the results folder holds four of them.

use super::render::{Format, Render};
use crate::verify::report::{self, VerifyReport};

/// The files of verify's results folder, `OUT/<utc>/`.
pub const RESULT_FILES: &[(&str, Format)] = &[
    ("results.json", Format::Json),
    ("BENCH.md", Format::Markdown),
    ("results.csv", Format::Csv),
    // The charts (predicted band vs measured, latency percentiles, CPU vs rate), self-contained.
    ("report.html", Format::Html),
];

impl Render for VerifyReport {
    const COMMAND: &'static str = "verify";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html, Format::Csv];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => w.write_all(&report::json(self)),
            Format::Markdown => w.write_all(&report::markdown(self)),
            Format::Html => w.write_all(super::html::verify(self).as_bytes()),
            Format::Csv => w.write_all(&report::csv(self)),
            _ => w.write_all(&report::table(self, width)),
        }
    }
}
