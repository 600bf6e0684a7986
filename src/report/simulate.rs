//! The simulate report as JSON, a terminal table or Markdown (pure: value → text); HTML is in
//! `report::html`.

use super::{md_table, table};
use crate::survival::{SimulateReport, YearlyAsset};
use crate::units::fmt_sci;

use super::render::{Format, Render};

/// Simulate's result as reports: the figures, and the site and layout HTML draws.
pub struct Simulate<'a> {
    pub report: &'a SimulateReport,
    pub site: &'a crate::site::Site,
    pub planned: &'a crate::plan::PlannedLayout,
}

impl Render for Simulate<'_> {
    const COMMAND: &'static str = "simulate";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html, Format::Csv];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let r = self.report;
        match f {
            Format::Json => json(r, w),
            Format::Markdown => w.write_all(markdown(r).as_bytes()),
            Format::Csv => w.write_all(&super::csv::simulate(r)),
            Format::Html => {
                let header = format!(
                    "layout {} · sync_interval {} · {} site-years · seed {}",
                    r.layout, r.sync_interval, r.site_years, r.seed
                );
                let page = super::html::simulate(self.site, self.planned, &header, &r.monte_carlo, r.exact.as_ref());
                w.write_all(page.as_bytes())
            }
            _ => w.write_all(table_report(r, width).as_bytes()),
        }
    }
}

/// The report as JSON (the report's types serialised as they are, pretty-printed), written to `w` as it is
/// made: on the largest sites the per-asset lists' text is gigabytes, and held whole (with its Vec's
/// doubling) it would be the run's peak memory.
pub fn json(r: &SimulateReport, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, r)?;
    w.write_all(b"\n")
}

/// Rows the terminal table shows besides the meta group (the least available assets).
const ROWS_SHOWN: usize = 15;

/// A 95 % interval in one short cell: `0.019–0.039` (never wrapped in a table).
fn range(lo: f64, hi: f64, f: fn(f64) -> String) -> String {
    format!("{}–{}", f(lo), f(hi))
}

fn minutes(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        fmt_sci(x)
    }
}

fn mttdl(a: &YearlyAsset) -> String {
    match a.mttdl_years {
        Some(y) if y >= 1e6 => format!("{y:.1e}"),
        Some(y) => format!("{y:.0}"),
        None => "—".into(),
    }
}

/// The assets in the order the report shows them: the meta group, then the least available first
/// (ties in plan order); with their exact figures when the chain ran. `limit` keeps that many assets.
pub fn ordered(r: &SimulateReport, limit: Option<usize>) -> (Vec<(&YearlyAsset, Option<&YearlyAsset>)>, usize) {
    let mc = &r.monte_carlo;
    let ex = r.exact.as_ref();
    let mut idx: Vec<usize> = (0..mc.assets.len()).collect();
    idx.sort_by(|&i, &j| {
        mc.assets[j]
            .unavailable_min_per_year
            .total_cmp(&mc.assets[i].unavailable_min_per_year)
            .then(i.cmp(&j))
    });
    let hidden = limit.map(|n| idx.len().saturating_sub(n)).unwrap_or(0);
    if let Some(n) = limit {
        idx.truncate(n);
    }
    let mut out = vec![(&mc.meta, ex.map(|e| &e.meta))];
    out.extend(
        idx.into_iter()
            .map(|i| (&mc.assets[i], ex.and_then(|e| e.assets.get(i)))),
    );
    (out, hidden)
}

const DOWN_HEADER: [&str; 5] = ["asset", "kind", "unavailable min/yr", "95 % CI", "exact min/yr"];

const LOSS_HEADER: [&str; 7] = [
    "asset",
    "P(data_lost) per yr",
    "95 % CI",
    "exact per yr",
    "acked msgs lost/yr",
    "95 % CI",
    "MTTDL years (ref.)",
];

/// Two tables, so that no figure wraps at 100 columns: downtime, then durability.
fn rows(r: &SimulateReport) -> (Vec<Vec<String>>, Vec<Vec<String>>, usize) {
    let (assets, hidden) = ordered(r, Some(ROWS_SHOWN));
    let mut down = Vec::new();
    let mut loss = Vec::new();
    for (a, e) in assets {
        let ci = a.ci95.clone().unwrap_or_default();
        down.push(vec![
            a.name.clone(),
            a.kind.to_string(),
            minutes(a.unavailable_min_per_year),
            range(ci.unavailable_min_per_year.0, ci.unavailable_min_per_year.1, minutes),
            e.map(|e| minutes(e.unavailable_min_per_year))
                .unwrap_or_else(|| "—".into()),
        ]);
        loss.push(vec![
            a.name.clone(),
            fmt_sci(a.p_data_lost_per_year),
            range(ci.p_data_lost_per_year.0, ci.p_data_lost_per_year.1, fmt_sci),
            e.map(|e| fmt_sci(e.p_data_lost_per_year)).unwrap_or_else(|| "—".into()),
            minutes(a.acked_msgs_lost_per_year),
            range(ci.acked_msgs_lost_per_year.0, ci.acked_msgs_lost_per_year.1, minutes),
            e.map(mttdl).unwrap_or_else(|| mttdl(a)),
        ]);
    }
    (down, loss, hidden)
}

fn summary(r: &SimulateReport) -> String {
    let mc = &r.monte_carlo;
    let mut s = format!(
        "natsplan simulate — site {} — layout {} — sync_interval {}\n{}\n",
        r.site, r.layout, r.sync_interval, mc.method_detail
    );
    if let Some(e) = &r.exact {
        s.push_str(&format!("exact: {}\n", e.method_detail));
    }
    s.push_str(&format!(
        "P(any data_lost)/yr {}; acked messages lost/yr {}; least available: {} ({} min/yr); JetStream API \
         (meta group) down {} min/yr\n",
        fmt_sci(mc.p_any_data_lost_per_year),
        minutes(mc.acked_msgs_lost_per_year),
        mc.worst_unavailable,
        minutes(mc.worst_unavailable_min_per_year),
        minutes(mc.api_unavailable_min_per_year)
    ));
    if let Some(e) = &r.exact {
        s.push_str(&format!("exact (as design): {}\n", super::detail::durability(e)));
    }
    s.push_str(&format!(
        "apart: the whole site lost (fire, flood) {}/yr, which only a second site or backups cover\n",
        fmt_sci(mc.p_site_lost_per_year)
    ));
    s.push_str(&reference_lines(r));
    s.push_str(&crate::survival::hazards_line());
    s.push('\n');
    s
}

/// The reference simulation's lines: what it sees at the site's rates, and its agreement with the exact
/// chain at inflated rates (every disagreement listed).
fn reference_lines(r: &SimulateReport) -> String {
    let Some(c) = &r.reference else {
        return String::new();
    };
    let at = &c.at_site_rates;
    let any = &at.p_any_data_lost_per_year;
    let seen = if any.events == 0 {
        format!(
            "no data loss in {} site-years: it can only say P(any data_lost) ≤ {}/yr (95 %)",
            at.site_years,
            fmt_sci(any.high)
        )
    } else {
        format!(
            "P(any data_lost) {}/yr ({}–{}, {} events in {} site-years)",
            fmt_sci(any.per_year),
            fmt_sci(any.low),
            fmt_sci(any.high),
            any.events,
            at.site_years
        )
    };
    let inf = &c.inflated;
    let mut s = format!(
        "reference (a discrete-event simulation written apart from the chain) at the site's rates: {seen}\n\
         reference against the exact chain with every failure rate × {}: {} of {} figures agree{}\n",
        inf.rate_multiplier,
        inf.figures.iter().filter(|f| f.agrees).count(),
        inf.figures.len(),
        if inf.agrees { "" } else { " — DISAGREE:" }
    );
    for f in inf.figures.iter().filter(|f| !f.agrees) {
        s.push_str(&format!(
            "  {}: exact {}, reference {} ({}–{})\n",
            f.what,
            fmt_sci(f.exact),
            fmt_sci(f.reference.per_year),
            fmt_sci(f.reference.low),
            fmt_sci(f.reference.high)
        ));
    }
    s
}

pub fn table_report(r: &SimulateReport, width: u16) -> String {
    let mut s = summary(r);
    let (down, loss, hidden) = rows(r);
    for (header, rows) in [(&DOWN_HEADER[..], down), (&LOSS_HEADER[..], loss)] {
        let mut t = table(width, header);
        for row in rows {
            t.add_row(row);
        }
        s.push_str(&t.to_string());
        s.push('\n');
    }
    if hidden > 0 {
        s.push_str(&format!(
            "… {hidden} more assets (--format json or csv lists them all)\n"
        ));
    }
    s.push_str("assumptions:\n");
    for a in &r.monte_carlo.assumptions {
        s.push_str(&format!("  - {a}\n"));
    }
    s
}

pub fn markdown(r: &SimulateReport) -> String {
    let mut s = format!("## natsplan simulate — {}\n\n", r.layout);
    for line in summary(r).lines().skip(1) {
        s.push_str(&format!("{line}\n\n"));
    }
    let (down, loss, hidden) = rows(r);
    s.push_str(&md_table(&DOWN_HEADER, &down));
    s.push('\n');
    s.push_str(&md_table(&LOSS_HEADER, &loss));
    if hidden > 0 {
        s.push_str(&format!(
            "\n… {hidden} more assets (--format json or csv lists them all)\n"
        ));
    }
    s.push_str("\nAssumptions:\n\n");
    for a in &r.monte_carlo.assumptions {
        s.push_str(&format!("- {a}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest single write and everything written.
    #[derive(Default)]
    struct Recorder {
        largest: usize,
        all: Vec<u8>,
    }

    impl std::io::Write for Recorder {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.largest = self.largest.max(b.len());
            self.all.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn json_is_written_as_it_is_made_with_the_same_bytes() {
        // 2 streams with 5,000 consumers each: 10,002 assets, 14 MB of JSON.
        let cat = crate::catalog::Catalog::builtin();
        let base = include_str!("../../tests/data/four-racks-r3.yaml");
        let mut text = base[..base.find("workload:").unwrap()].to_string();
        text.push_str("workload:\n  streams:\n");
        for i in 0..2 {
            text.push_str(&format!(
                "    - {{ name: s{i}, msgs_per_s: 10, msg_size: 1KiB, retention: 1h, consumers: 5000 }}\n"
            ));
        }
        text.push_str("policy:\n  patterns: [\"2\"]\n");
        let site = crate::site::parse_str(&text, "t.yaml", &cat).unwrap();
        let plan = crate::plan::build(&site, &cat);
        // The top-ranked layout is per asset as built (`plan::classes`), whatever the number of assets.
        assert!(plan.layouts[0].classes().is_none());
        let id = plan.layouts[0].id.clone();
        let layout = plan.layout(&id).unwrap().placed().unwrap();
        let model = crate::survival::Model::new(&site, layout);
        let rel = crate::survival::Reliability::new(&model, &cat);
        let report = SimulateReport {
            site: site.name.clone(),
            layout: id.clone(),
            sync_interval: site.nats.sync.config_value(),
            site_years: 20,
            seed: 1,
            monte_carlo: crate::survival::monte_carlo(&rel, 20, 1, 1, None),
            exact: None,
            // The reference's per-asset list too (issue 41: it was held whole, most of 2.5 GB on 990,099
            // assets); a few trials, and an empty inflated comparison, are enough for the bytes.
            reference: Some(crate::survival::agreement::ReferenceCheck {
                at_site_rates: crate::survival::reference::reference(
                    &site,
                    layout,
                    &cat,
                    &crate::survival::reference::RunSpec {
                        trials: 20,
                        years: 1,
                        seed: 1,
                        multiplier: 1.0,
                        spares_back: crate::survival::reference::SparesBack::WhenReplaced,
                    },
                ),
                inflated: crate::survival::agreement::InflatedCheck {
                    rate_multiplier: 1.0,
                    site_years: 0.0,
                    z: 0.0,
                    relative_slack: 0.0,
                    figures: vec![],
                    agrees: true,
                },
            }),
            known_hazards: crate::survival::known_hazards(),
        };
        assert!(report.monte_carlo.assets.len() > 10_000);
        assert!(report.reference.as_ref().unwrap().at_site_rates.assets.len() > 10_000);
        // Behind a buffer as on stdout (`commands::stream_stdout`), smaller here than the text.
        const BUFFER: usize = 1 << 16;
        let mut w = Recorder::default();
        json(&report, &mut std::io::BufWriter::with_capacity(BUFFER, &mut w)).unwrap();
        let mut whole = serde_json::to_vec_pretty(&report).unwrap();
        whole.push(b'\n');
        assert!(w.all == whole, "the streamed JSON is the report's JSON, byte for byte");
        // Never the whole text, nor the reference's list, at once: the text goes out a buffer at a time.
        let reference_list = serde_json::to_vec_pretty(&report.reference.as_ref().unwrap().at_site_rates.assets)
            .unwrap()
            .len();
        assert!(
            BUFFER < reference_list,
            "the reference's list is {reference_list} bytes"
        );
        assert!(
            w.largest <= BUFFER && w.largest < whole.len() / 2,
            "{} of {} bytes in one write",
            w.largest,
            whole.len()
        );
    }
}
