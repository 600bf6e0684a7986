//! Words every report and message shares (issue 44: one copy of each, so two reports cannot drift apart):
//! plurals ("1 server", "2 servers"), the percent formats, the Markdown escapers and the one CSV writer.
//! It depends on nothing of the crate, so every module may use it (ARCHITECTURE.md's layers).
//!
//! Where two reports format "the same" thing differently (the percent formats, the two Markdown escapes)
//! each rule has its own named function here: their outputs are contracts (snapshots, files users diff),
//! so they were gathered in one place, not unified. CSV has one quoting rule (RFC 4180's, by the `csv`
//! crate) and two line ends.

use std::fmt::Display;

/// The English plural suffix of a count: "" for one, "s" for any other number (zero included:
/// "0 servers").
pub fn plural_s<N: PartialEq + From<u8>>(n: N) -> &'static str {
    if n == N::from(1) {
        ""
    } else {
        "s"
    }
}

/// A count and its noun: "1 disk", "3 disks", "0 racks".
pub fn count<N: Display + PartialEq + From<u8> + Copy>(n: N, what: &str) -> String {
    format!("{n} {what}{}", plural_s(n))
}

/// A fraction as a whole percent with a space before the sign ("12 %"), or "—" when it is not a number:
/// the design, whatif and size reports' figures.
pub fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.0} %", x * 100.0)
    } else {
        "—".into()
    }
}

/// A fraction as a percent with one decimal ("2.5 %"), or "-" when there is none: calibrate's fit
/// quality, whose errors are a few percent and would all read "2 %" or "3 %" without the decimal.
pub fn pct1_or_dash(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1} %", v * 100.0)).unwrap_or_else(|| "-".into())
}

/// A signed error as a whole percent with no space ("+12%", "-3%"), or "-" when there is none: verify's
/// error column (measured against predicted), where the sign is the point and BENCH.md keeps the
/// compact form its readers diff.
pub fn signed_pct_or_dash(e: Option<f64>) -> String {
    e.map(|e| format!("{:+.0}%", e * 100.0)).unwrap_or_else(|| "-".into())
}

/// Escape for Markdown only what would break a table: `|` becomes `\|`, everything else is kept as it
/// is. For text that must stay literal: code spans, predict's Markdown values and verify's BENCH.md
/// (labels such as `obj_put` and `p99<…` read as written there; escaping `_` would change bytes users
/// diff). A newline is kept too; use [`md_cell`] for a table cell of
/// arbitrary text.
pub fn md_pipes(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Escape a cell of a Markdown table: newlines become spaces, an empty cell becomes "—", a code span
/// (`` `…` ``) only has its pipes escaped ([`md_pipes`]), and any other text also escapes what renderers
/// would turn into markup (`_ * < > [ ]`) with a backslash.
pub fn md_cell(s: &str) -> String {
    let s = s.replace('\n', " ");
    if s.is_empty() {
        return "—".into();
    }
    if s.len() > 1 && s.starts_with('`') && s.ends_with('`') {
        return md_pipes(&s);
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

/// Records written as CSV by the `csv` crate, the one CSV writer of every report and results file:
/// a field holding a comma, a double quote, a CR or an LF is put in double quotes with its quotes
/// doubled (RFC 4180), any other is written as it is. Each file keeps its record terminator: CRLF for
/// design, whatif, simulate and size `--format csv` (RFC 4180's), LF for verify's results CSV and bench's
/// `--csv` (nats bench's), as they always ended.
///
/// One quoting rule since issue 44: verify's CSV used to leave a field with a bare CR unquoted, which a
/// CSV reader (the `csv` crate's, Python's) reads as the end of a record; now it is quoted as every other
/// report's. No field verify writes from its own ladder holds one; a server's error text might.
pub struct Csv {
    w: csv::Writer<Vec<u8>>,
}

impl Csv {
    /// A writer whose records end in CRLF.
    pub fn crlf() -> Csv {
        Csv::ending(csv::Terminator::CRLF)
    }

    /// A writer whose records end in LF.
    pub fn lf() -> Csv {
        Csv::ending(csv::Terminator::Any(b'\n'))
    }

    fn ending(t: csv::Terminator) -> Csv {
        Csv {
            w: csv::WriterBuilder::new()
                .terminator(t)
                .quote_style(csv::QuoteStyle::Necessary)
                // A record may have any number of fields: the callers give every record their header's
                // columns, and a check here would only add a way to fail.
                .flexible(true)
                .from_writer(Vec::new()),
        }
    }

    /// Write one record.
    pub fn record<I, T>(&mut self, fields: I) -> &mut Csv
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        // Writing to memory, with flexible records, cannot fail (the crate's errors are I/O errors and
        // unequal lengths).
        let _ = self.w.write_record(fields);
        self
    }

    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        // Flushing into a Vec cannot fail; were it to, the bytes the Vec holds.
        self.w.into_inner().unwrap_or_else(|e| e.into_inner().get_ref().clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural_s(1usize), "");
        assert_eq!(plural_s(0u32), "s");
        assert_eq!(plural_s(2u64), "s");
        assert_eq!(count(1usize, "disk"), "1 disk");
        assert_eq!(count(0u32, "rack"), "0 racks");
        assert_eq!(count(39u64, "domain"), "39 domains");
    }

    #[test]
    fn each_percent_format_keeps_its_own_rule() {
        assert_eq!(pct(0.125), "12 %");
        assert_eq!(pct(f64::NAN), "—");
        assert_eq!(pct(f64::INFINITY), "—");
        assert_eq!(pct1_or_dash(Some(0.025)), "2.5 %");
        assert_eq!(pct1_or_dash(None), "-");
        assert_eq!(signed_pct_or_dash(Some(0.12)), "+12%");
        assert_eq!(signed_pct_or_dash(Some(-0.034)), "-3%");
        assert_eq!(signed_pct_or_dash(None), "-");
    }

    #[test]
    fn pipes_are_the_only_thing_the_literal_escape_touches() {
        assert_eq!(md_pipes("a|b_c*<d>"), "a\\|b_c*<d>");
        assert_eq!(md_pipes("line\nnext"), "line\nnext");
        assert_eq!(md_pipes(""), "");
    }

    #[test]
    fn a_cell_escapes_markup_but_a_code_span_only_its_pipes() {
        assert_eq!(md_cell("a|b_c*[d]<e>"), "a\\|b\\_c\\*\\[d\\]\\<e\\>");
        assert_eq!(md_cell("`a|b_c`"), "`a\\|b_c`");
        assert_eq!(md_cell("two\nlines"), "two lines");
        assert_eq!(md_cell(""), "—");
        assert_eq!(md_cell("`"), "`");
    }

    /// The rule design, whatif, simulate and size wrote by hand before the `csv` crate (kept here to hold
    /// the crate to it): quoted when holding a comma, quote, CR or LF, quotes doubled.
    fn rfc4180(f: &str) -> String {
        if f.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", f.replace('"', "\"\""))
        } else {
            f.to_string()
        }
    }

    #[test]
    fn csv_records_quote_as_the_hand_written_rule_did_and_keep_their_line_ends() {
        let fields = [
            "plain",
            "a, b",
            "say \"hi\"",
            "two\nlines",
            "cr\ronly",
            "",
            "1.5e-7",
            "p99<1ms",
            "x\"y,",
            " lead",
            "ünïcode",
            "#hash",
            "'quote'",
            "tab\there",
            "-",
            "—",
        ];
        for f in fields {
            for (a, b) in [(f, "tail"), ("head", f)] {
                let mut c = Csv::crlf();
                c.record([a, b]);
                assert_eq!(
                    String::from_utf8(c.into_bytes()).unwrap(),
                    format!("{},{}\r\n", rfc4180(a), rfc4180(b)),
                    "{f:?}"
                );
            }
        }
        let mut c = Csv::lf();
        c.record(["a", "", "b,c"]).record(["1", "2", "3"]);
        assert_eq!(c.into_bytes(), b"a,,\"b,c\"\n1,2,3\n");
        // verify's LF file now quotes a bare CR too (it used not to: a reader splits records there).
        let mut c = Csv::lf();
        c.record(["cr\ronly", "x"]);
        assert_eq!(c.into_bytes(), b"\"cr\ronly\",x\n");
    }
}
