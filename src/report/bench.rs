//! `natsplan bench`'s report as a result of the render seam: the run's renderers are `bench::export`'s
//! (text, JSON, CSV; its snapshots are in tests/cli) and the agents' lines `agent::report`'s.

use super::render::{Format, Render};
use crate::agent::{AgentsSummary, Distributed};
use crate::bench::{export, result::BenchResult};

impl Render for BenchResult {
    const COMMAND: &'static str = "bench";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => w.write_all(&export::json(self)),
            _ => w.write_all(&export::text(self)),
        }
    }
}

/// The file `bench --csv FILE` writes: the run as CSV (stdout has the table and JSON).
pub struct CsvFile<'a>(pub &'a BenchResult);

impl Render for CsvFile<'_> {
    const COMMAND: &'static str = "bench --csv";
    const FORMATS: &'static [Format] = &[Format::Csv];

    fn write_to(&self, _f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(&export::csv(self.0))
    }
}

/// A run on agents (`bench --agents N`): the merged result, each agent's part and the agents used.
pub struct OnAgents<'a> {
    pub run: &'a Distributed,
    pub summary: &'a AgentsSummary,
}

impl Render for OnAgents<'_> {
    const COMMAND: &'static str = "bench";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json];

    fn write_to(&self, f: Format, _width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let d = self.run;
        match f {
            Format::Json => {
                let mut v = export::json_value(&d.result);
                v["agents"] = serde_json::to_value(&d.agents).unwrap_or_default();
                v["agents_used"] = serde_json::to_value(self.summary).unwrap_or_default();
                let mut b = serde_json::to_vec_pretty(&v).unwrap_or_default();
                b.push(b'\n');
                w.write_all(&b)
            }
            _ => {
                w.write_all(&export::text(&d.result))?;
                let mut lines = crate::agent::report::summary_lines(self.summary);
                lines.extend(crate::agent::report::row_lines(&d.agents));
                for l in lines {
                    writeln!(w, "{l}")?;
                }
                Ok(())
            }
        }
    }
}
