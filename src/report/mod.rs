//! Reports: pure functions from a Plan (or another result) to bytes. Nothing here computes; anything a
//! report shows is already in the value it is given. Every command's result reaches its formats through
//! one seam, [`render::Render`].

pub mod bench;
pub mod calibrate;
pub mod check;
pub mod csv;
pub mod design;
pub mod detail;
pub mod emit;
pub mod html;
pub mod lab;
pub mod predict;
pub mod render;
pub mod simulate;
pub mod size;
pub mod sorted;
pub mod svg;
pub mod svg_layout;
pub mod svg_overlay;
pub mod svg_perf;
pub mod verify;
pub mod whatif;

use comfy_table::{presets, ContentArrangement, Table};

/// A comfy-table with natsplan's look, at a fixed width so output is stable in tests and pipes.
pub fn table(width: u16, header: &[&str]) -> Clipped {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(header.iter().copied());
    Clipped(t, vec![(0, true); header.len()])
}

/// Cells up to this many characters (figures with their unit, counts, short words, volume group names
/// such as `echo-internal-vg1`) are never wrapped:
/// their column keeps at least their width and the header wraps instead. Longer cells (reasons,
/// bottlenecks) wrap as usual.
pub const WHOLE_CELL_CHARS: usize = 20;

/// Longest cell a table shows (characters): comfy-table's wrapping takes time that grows faster than the
/// text (docs/scale.md, "Report tables"), and nothing that long is read in a table. Layout ids, which
/// are copied from tables, stay far below it.
pub const MAX_CELL_CHARS: usize = 1024;

/// A table whose `add_row` shortens over-long cells (ending them with `…`) and keeps short ones whole
/// (`WHOLE_CELL_CHARS`); everything else is the comfy-table underneath. The second field is, per column,
/// its widest cell so far and whether every cell is short.
pub struct Clipped(pub Table, Vec<(usize, bool)>);

impl Clipped {
    pub fn add_row(&mut self, cells: Vec<String>) -> &mut Self {
        let cells: Vec<String> = cells.into_iter().map(|c| clip_cell(&c)).collect();
        for (i, c) in cells.iter().enumerate() {
            let n = c.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            if i >= self.1.len() {
                self.1.resize(i + 1, (0, true));
            }
            let (w, short) = self.1[i];
            self.1[i] = (w.max(n), short && n <= WHOLE_CELL_CHARS);
        }
        self.0.add_row(cells);
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
    /// Short cells stay whole: when the table at its natural widths (widest cell or header per column)
    /// is wider than its width, each column of short cells gets exactly its widest cell (at least its
    /// header's longest word, so headers wrap at spaces), then any room left goes back to those columns
    /// when no text column wants it; text columns share the rest as comfy-table arranges them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut t = self.0.clone();
        let header: Vec<String> = t
            .header()
            .map(|h| h.cell_iter().map(|c| c.content()).collect())
            .unwrap_or_default();
        let n = header.len().max(self.1.len());
        let chars = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        let head = |i: usize| header.get(i).map(|h| chars(h)).unwrap_or(0);
        let word = |i: usize| {
            header
                .get(i)
                .map(|h| h.split_whitespace().map(chars).max().unwrap_or(0))
                .unwrap_or(0)
        };
        let cell = |i: usize| self.1.get(i).map(|c| c.0).unwrap_or(0);
        let short = |i: usize| self.1.get(i).is_none_or(|c| c.1);
        let natural: usize = (0..n).map(|i| cell(i).max(head(i))).sum();
        let width = usize::from(t.width().unwrap_or(u16::MAX));
        let overhead = 3 * n + 1;
        if natural + overhead > width {
            let fixed: Vec<usize> = (0..n)
                .filter(|&i| cell(i) > 0 && short(i))
                .filter(|&i| t.column(i).is_some_and(|c| c.constraint().is_none()))
                .collect();
            let mut w: Vec<usize> = (0..n).map(|i| cell(i).max(word(i))).collect();
            // Room left after every column at its narrowest (text columns at their natural width) goes
            // to the fixed columns' headers, in order.
            let rest: usize = (0..n)
                .filter(|i| !fixed.contains(i))
                .map(|i| cell(i).max(head(i)))
                .sum();
            let mut left = width.saturating_sub(overhead + rest + fixed.iter().map(|&i| w[i]).sum::<usize>());
            for &i in &fixed {
                let more = (cell(i).max(head(i)) - w[i]).min(left);
                w[i] += more;
                left -= more;
            }
            // Where even the short cells cannot all fit (a very narrow --width), comfy-table wraps as it
            // would: a table wider than the terminal is worse than a wrapped figure.
            let narrowest: usize = overhead
                + fixed.iter().map(|&i| w[i]).sum::<usize>()
                + (0..n)
                    .filter(|i| !fixed.contains(i))
                    .map(|i| match t.column(i).and_then(|c| c.constraint()) {
                        Some(comfy_table::ColumnConstraint::ContentWidth) => cell(i).max(head(i)),
                        _ => 8,
                    })
                    .sum::<usize>();
            let fixed = if narrowest > width { Vec::new() } else { fixed };
            for &i in &fixed {
                if let Some(c) = t.column_mut(i) {
                    // comfy-table's fixed widths include the cell's padding (one space each side).
                    c.set_constraint(comfy_table::ColumnConstraint::Absolute(comfy_table::Width::Fixed(
                        (w[i] + 2) as u16,
                    )));
                }
            }
        }
        t.fmt(f)
    }
}

/// Text for an operator's terminal with every control character shown, never acted on: names and values
/// natsplan did not write itself (a live server's `server_name`, a saved plan's version, a cluster's
/// answer) could carry terminal escapes (ESC `[`…) that recolour, retitle or rewrite the screen. Newlines
/// and tabs stay; any other control character is written as its escape (`\u{1b}`). The one place both
/// stdout (`TerminalSafe`) and the final error line go through.
pub fn terminal_safe(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Control characters but newline, tab and carriage return (CSV records end in CRLF, RFC 4180; a lone CR
/// can only rewrite the current line, no escape sequence).
fn unsafe_char(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t' && c != '\r'
}

/// A writer that passes text through [`terminal_safe`]: control bytes (C0 but newline, tab and CR, DEL) are
/// written as their escapes. JSON never holds one raw (serde escapes them), so JSON passes unchanged; a C1
/// control (two bytes in UTF-8) is caught by `terminal_safe` where text is whole, not here.
pub struct TerminalSafe<W: std::io::Write>(pub W);

impl<W: std::io::Write> std::io::Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let bad = |b: u8| (b < 0x20 && b != b'\n' && b != b'\t' && b != b'\r') || b == 0x7f;
        let mut start = 0;
        for (i, &b) in buf.iter().enumerate() {
            if bad(b) {
                self.0.write_all(&buf[start..i])?;
                write!(self.0, "\\u{{{b:x}}}")?;
                start = i + 1;
            }
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

fn clip_cell(s: &str) -> String {
    match s.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
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
        header
            .iter()
            .map(|h| crate::text::md_cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    ));
    s.push('|');
    for i in 0..header.len() {
        s.push_str(if numeric(i) { "---:|" } else { "---|" });
    }
    s.push('\n');
    for r in rows {
        s.push_str(&format!(
            "| {} |\n",
            r.iter()
                .map(|c| crate::text::md_cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
    s
}

/// A paragraph broken at spaces into lines of at most `width` characters (a longer word keeps its line).
pub fn wrap(text: &str, width: u16) -> String {
    let width = usize::from(width.max(20));
    let mut out = String::new();
    let mut line = 0usize;
    for word in text.split_whitespace() {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        }
        if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out.push('\n');
    out
}

pub use crate::perf::calibration_words;

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_sent_to_the_terminal() {
        use std::io::Write;
        assert_eq!(
            super::terminal_safe("n1\x1b[31m\u{9b}x\ny\tz"),
            "n1\\u{1b}[31m\\u{9b}x\ny\tz"
        );
        assert!(matches!(super::terminal_safe("plain\n"), std::borrow::Cow::Borrowed(_)));
        let mut w = super::TerminalSafe(Vec::new());
        w.write_all(b"a\x1b]0;title\x07b\r\n{\"k\":\"\\u001b\"}").unwrap();
        assert_eq!(
            String::from_utf8(w.0).unwrap(),
            // CRLF stays (CSV records end in it); ESC and BEL are shown.
            "a\\u{1b}]0;title\\u{7}b\r\n{\"k\":\"\\u001b\"}"
        );
    }

    use super::*;

    #[test]
    fn every_built_in_calibration_has_plain_words() {
        for f in crate::perf::CalibrationSet::builtin().files {
            let w = calibration_words(&f.id);
            assert!(!w.starts_with("your calibration"), "{}: add its plain words", f.id);
            assert!(!w.contains("seed0"), "{w}");
        }
    }

    #[test]
    fn short_cells_never_wrap_long_ones_do() {
        let mut t = table(40, &["a long header name", "reason"]);
        t.add_row(vec![
            "12.3 TiB".into(),
            "a reason long enough that it has to wrap somewhere".into(),
        ]);
        let text = t.to_string();
        assert!(text.contains("12.3 TiB"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 40), "{text}");
    }

    #[test]
    fn a_very_narrow_table_still_fits_its_width() {
        let mut t = table(30, &["a", "b", "c", "d"]);
        t.add_row(vec![
            "1234567890".into(),
            "1234567890".into(),
            "1234567890".into(),
            "12".into(),
        ]);
        let text = t.to_string();
        assert!(text.lines().all(|l| l.chars().count() <= 30), "{text}");
    }
}
