//! Reports: pure functions from a Plan (or another result) to bytes. Nothing here computes; anything a
//! report shows is already in the value it is given.

pub mod design;
pub mod html;
pub mod svg;
pub mod svg_layout;
pub mod svg_perf;

use comfy_table::{presets, ContentArrangement, Table};

/// A comfy-table with natsplan's look, at a fixed width so output is stable in tests and pipes.
pub fn table(width: u16, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(header.iter().copied());
    t
}

/// Escape a cell for a Markdown table.
pub fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table from a header and rows.
pub fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    s.push_str(&format!("| {} |\n", header.join(" | ")));
    s.push_str(&format!("|{}\n", header.iter().map(|_| "---|").collect::<String>()));
    for r in rows {
        s.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    s
}

/// Percent with no decimals, or "—" when not a number.
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.0} %", x * 100.0)
    } else {
        "—".into()
    }
}
