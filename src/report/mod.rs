//! Reports: pure functions from a Plan (or another result) to bytes. Nothing here computes; anything a
//! report shows is already in the value it is given.

pub mod calibrate;
pub mod design;
pub mod detail;
pub mod html;
pub mod lab;
pub mod predict;
pub mod simulate;
pub mod svg;
pub mod svg_layout;
pub mod svg_perf;
pub mod whatif;

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
    let s = s.replace('\n', " ");
    if s.is_empty() {
        return "—".into();
    }
    // Code spans are literal; everything else escapes what renderers would turn into markup.
    if s.len() > 1 && s.starts_with('`') && s.ends_with('`') {
        return s.replace('|', "\\|");
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '_' | '*' | '<' | '>' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A Markdown table from a header and rows; columns whose cells are all numbers are right-aligned.
pub fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let numeric = |i: usize| {
        rows.iter()
            .any(|r| r.get(i).is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit())))
            && rows.iter().all(|r| {
                r.get(i).is_none_or(|c| {
                    let t = c.trim_start_matches(['-', '+', '≤', '~']);
                    t.is_empty() || t.starts_with(|ch: char| ch.is_ascii_digit()) || t == "—"
                })
            })
    };
    let mut s = String::new();
    s.push_str(&format!(
        "| {} |\n",
        header.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | ")
    ));
    s.push('|');
    for i in 0..header.len() {
        s.push_str(if numeric(i) { "---:|" } else { "---|" });
    }
    s.push('\n');
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
