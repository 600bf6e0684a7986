//! The input errors: every problem found in one input file (a site, calibration, models, OMB, workload,
//! prices or deploy file, or a file refused by `file.rs`), each with its place, what is wrong and a fix.

use crate::text::plural_s;
use serde::Serialize;
use std::fmt;

/// One problem in an input file. Serialisable so a command can report problems as JSON too.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    /// Field path such as `racks[1].arrays[0].disk_model`.
    pub path: String,
    /// 1-based line and column when the parser knows them.
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// How to fix it.
    pub fix: Option<String>,
}

/// Every problem found in one input file (site, calibration, models, OMB, workload, prices, deploy, or a
/// file the reader refused), in file order.
#[derive(Debug, Clone, Serialize)]
pub struct InputErrors {
    pub file: String,
    pub errors: Vec<InputError>,
}

impl fmt::Display for InputErrors {
    /// One problem per entry: `FILE:LINE:COL: PATH: what is wrong`, then an indented `fix:` line. The
    /// first part is the form editors and terminals turn into links.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} has {} problem{}:",
            self.file,
            self.errors.len(),
            plural_s(self.errors.len())
        )?;
        for e in &self.errors {
            let place = match (e.line, e.column) {
                (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file),
                (Some(l), None) => format!("{}:{l}", self.file),
                _ => self.file.clone(),
            };
            // Problems of the file as a whole (unreadable, YAML syntax) have no field path.
            if e.path.is_empty() {
                write!(f, "  {place}: {}", e.message)?;
            } else {
                write!(f, "  {place}: {}: {}", e.path, e.message)?;
            }
            if let Some(fix) = &e.fix {
                write!(f, "\n      fix: {fix}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for InputErrors {}
