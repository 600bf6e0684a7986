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
pub mod svg_overlay;
pub mod svg_perf;
pub mod whatif;

use comfy_table::{presets, ContentArrangement, Table};

/// A comfy-table with natsplan's look, at a fixed width so output is stable in tests and pipes.
pub fn table(width: u16, header: &[&str]) -> Clipped {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(header.iter().copied());
    Clipped(t)
}

/// Longest cell a table shows (characters): comfy-table's wrapping takes time that grows faster than the
/// text (a 70,000-character name took 74 s), and nothing that long is read in a table. Layout ids, which
/// are copied from tables, stay far below it.
pub const MAX_CELL_CHARS: usize = 1024;

/// A table whose `add_row` shortens over-long cells (ending them with `…`); everything else is the
/// comfy-table underneath.
pub struct Clipped(pub Table);

impl Clipped {
    pub fn add_row(&mut self, cells: Vec<String>) -> &mut Self {
        self.0
            .add_row(cells.into_iter().map(|c| clip_cell(&c)).collect::<Vec<_>>());
        self
    }
}

impl std::ops::Deref for Clipped {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.0
    }
}

impl std::ops::DerefMut for Clipped {
    fn deref_mut(&mut self) -> &mut Table {
        &mut self.0
    }
}

impl std::fmt::Display for Clipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

fn clip_cell(s: &str) -> String {
    match s.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
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
