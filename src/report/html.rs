//! HTML reports: one self-contained file per report — inline CSS and inline SVG, no scripts, no fonts,
//! no links to anything outside the file — so it can be attached to a change ticket or opened offline.
//! The page is well-formed XHTML-style markup (every element closed, every text escaped) so tests can
//! parse it as XML.
//!
//! `Page` is the generic shell (headings, paragraphs, tables, figures); `design` and `whatif` build the
//! command reports from it with the drawings in `svg_layout` and the charts in `svg` / `svg_perf`. Other
//! commands (simulate, verify) add theirs the same way.

use super::design::{selected, Selection};
use super::detail;
use super::svg::esc;
use super::svg_layout::{layout_drawing, status_colour, Overlay};
use super::svg_perf::{perf_chart, PerfCurves};
use crate::plan::{Plan, PlannedLayout, Verdict};
use crate::site::Site;
use crate::survival::{ScenarioReport, WhatifReport};
use crate::text::plural_s;
use crate::units::{fmt_sci, fmt_secs};
use std::fmt::Write as _;

const STYLE: &str = "
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1600px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin-top: 20px; }
p.meta { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 13px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
.note { background: #fff8e1; border-left: 4px solid #e6a100; padding: 6px 10px; margin: 6px 0; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 9px; color: #fff; font-size: 12px; }
figure { margin: 12px 0; overflow-x: auto; }
figcaption { color: #555; font-size: 12px; }
code { background: #f2f2f2; padding: 0 3px; }
footer { margin-top: 40px; color: #777; font-size: 12px; }
";

/// A report page under construction.
#[derive(Debug, Clone)]
pub struct Page {
    title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: String::new(),
        }
    }

    pub fn h1(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h1>{}</h1>", esc(text));
    }

    pub fn h2(&mut self, text: &str, id: Option<&str>) {
        match id {
            Some(id) => {
                let _ = writeln!(self.body, "<h2 id=\"{}\">{}</h2>", esc(id), esc(text));
            }
            None => {
                let _ = writeln!(self.body, "<h2>{}</h2>", esc(text));
            }
        }
    }

    pub fn h3(&mut self, text: &str) {
        let _ = writeln!(self.body, "<h3>{}</h3>", esc(text));
    }

    /// A paragraph of plain text (escaped).
    pub fn p(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }

    /// A paragraph of the page's own markup (never user text without `esc`).
    pub fn p_html(&mut self, class: &str, html: &str) {
        if class.is_empty() {
            let _ = writeln!(self.body, "<p>{html}</p>");
        } else {
            let _ = writeln!(self.body, "<p class=\"{class}\">{html}</p>");
        }
    }

    pub fn note(&mut self, text: &str) {
        let _ = writeln!(self.body, "<div class=\"note\">{}</div>", esc(text));
    }

    pub fn list(&mut self, items: &[String]) {
        if items.is_empty() {
            return;
        }
        self.body.push_str("<ul>\n");
        for i in items {
            let _ = writeln!(self.body, "<li>{}</li>", esc(i));
        }
        self.body.push_str("</ul>\n");
    }

    /// A table of plain-text cells; cells that look numeric are right-aligned.
    pub fn table(&mut self, header: &[&str], rows: &[Vec<String>]) {
        self.body.push_str("<table>\n<thead><tr>");
        for h in header {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr></thead>\n<tbody>\n");
        for r in rows {
            self.body.push_str("<tr>");
            for c in r {
                if looks_numeric(c) {
                    let _ = write!(self.body, "<td class=\"num\">{}</td>", esc(c));
                } else {
                    let _ = write!(self.body, "<td>{}</td>", esc(c));
                }
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody>\n</table>\n");
    }

    /// An inline SVG (from `svg::Svg::finish` or a chart) with a caption.
    pub fn figure(&mut self, svg: &str, caption: &str) {
        let _ = writeln!(
            self.body,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        );
    }

    /// The whole document.
    pub fn finish(self, footer: &str) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{}<footer>{}</footer>\n</body>\n</html>\n",
            esc(&self.title),
            self.body,
            esc(footer)
        )
    }
}

fn looks_numeric(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty()
        && t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '-' || c == '−')
        && t.chars().filter(|c| c.is_ascii_digit()).count() * 2 >= t.chars().filter(|c| c.is_alphanumeric()).count()
}

/// `1 rack`, `3 racks`.
fn verdict_colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Recommended => "#2ca02c",
        Verdict::Acceptable => "#1f77b4",
        Verdict::Risky => "#e6a100",
        Verdict::Rejected => "#d62728",
    }
}

fn badge(text: &str, colour: &str) -> String {
    format!(
        "<span class=\"badge\" style=\"background:{colour}\">{}</span>",
        esc(text)
    )
}

/// The design report: summary, notes, then per selected layout (up to three, or the chosen one) its
/// drawing, servers, assets, predictions and reasons; the perf chart when given.
pub fn design(plan: &Plan, sel: &Selection, curves: Option<&PerfCurves>) -> String {
    let layouts = selected(plan, sel);
    let mut page = Page::new(&format!("natsplan design: {}", plan.site));
    page.h1(&format!("natsplan design: {}", plan.site));
    page.p_html(
        "meta",
        &esc(&format!(
            "{} layout{} evaluated · sync_interval {} · {}",
            plan.evaluated,
            plural_s(plan.evaluated),
            plan.sync_interval,
            plan.generator
        )),
    );
    for w in &plan.warnings {
        page.note(&format!("Warning: {w}"));
    }
    for n in &plan.notes {
        page.note(n);
    }
    if layouts.is_empty() {
        page.p("No layout to show.");
        return page.finish(&plan.generator);
    }
    page.h2("Ranked layouts", Some("summary"));
    page.table(&detail::SUMMARY_HEADER, &detail::summary_rows(&layouts));
    page.table(&detail::CAPACITY_HEADER, &detail::capacity_rows(&layouts));
    page.list(&detail::rejections(&layouts));
    page.p(detail::SUMMARY_LEGEND);
    let shown = if sel.layout.is_some() { 1 } else { 3 };
    for l in layouts.iter().take(shown) {
        layout_section(&mut page, &plan.input, l);
    }
    if let Some(c) = curves {
        page.h2("Predicted object-store put rate versus object size", Some("perf"));
        page.figure(&perf_chart(c), &c.caption());
    }
    page.finish(&plan.generator)
}

fn layout_section(page: &mut Page, site: &Site, l: &PlannedLayout) {
    page.h2(&format!("{} (rank {})", l.id, l.rank), Some(&l.id));
    page.p_html(
        "",
        &format!(
            "{} {}; tolerates r/a/s/d {}.",
            badge(l.verdict.as_str(), verdict_colour(l.verdict)),
            esc(&detail::overview(l)),
            esc(&detail::tolerates(l))
        ),
    );
    page.p(&detail::placement(l));
    for u in detail::unused_servers(l) {
        page.p(&u);
    }
    if let Some(i) = detail::idle_disks(l) {
        page.p(&i);
    }
    page.figure(
        &layout_drawing(site, l, None),
        "Racks as columns. Each disk is a vertical rectangle (hot spares dashed, S); under the disks, the volume \
         group (upper bar) and the LUNs cut from it (lower bars) with the server each serves. Numbered chips in a \
         server are the stream replicas the plan expects there; NATS's own choice may differ where placement \
         is free.",
    );
    page.h3("Servers");
    page.table(&detail::SERVER_HEADER, &detail::server_rows(l));
    page.p(&detail::capacity(&l.capacity).join(" "));
    if let Some(y) = detail::yearly(l) {
        page.p(&y);
    }
    let assets = detail::asset_rows(l);
    if !assets.is_empty() {
        page.h3("Streams, KV buckets and object stores");
        page.table(&detail::ASSET_HEADER, &assets);
    }
    if let Some(pr) = &l.predicted {
        let rows = detail::prediction_rows(l);
        if !rows.is_empty() {
            page.h3("Predicted performance");
            page.table(&detail::PREDICTION_HEADER, &rows);
        }
        page.p(&detail::recovery(pr));
        if let Some(n) = detail::needs(pr) {
            page.p(&n);
        }
    }
    if !l.reasons.is_empty() {
        page.h3("Reasons");
        page.list(&l.reasons);
    }
}

/// The whatif report: per scenario (worst first; a sweep shows its first `MAX_DRAWN` outcome classes
/// drawn and the rest as a table) the layout with the failed domains greyed and each stream coloured by
/// status, then its streams, recovery and actions.
pub fn whatif(r: &WhatifReport, site: &Site, planned: &PlannedLayout) -> String {
    const MAX_DRAWN: usize = 8;
    let mut page = Page::new(&format!("natsplan whatif: {} / {}", r.site, r.layout));
    page.h1(&format!("natsplan whatif: {}", r.site));
    page.p_html(
        "meta",
        &esc(&format!(
            "layout {} · sync_interval {} · placement: {}",
            r.layout, r.sync_interval, r.placement
        )),
    );
    if let Some(sw) = &r.sweep {
        page.p(&format!(
            "Swept {} combinations of 1..={} failures over {} domains ({}); {} distinct signatures evaluated; {} \
             outcome classes, worst first.",
            sw.combinations,
            sw.max_failures,
            sw.domains,
            sw.kinds.join(","),
            sw.signatures,
            r.scenarios.len()
        ));
        let rows: Vec<Vec<String>> = r
            .scenarios
            .iter()
            .map(|sc| {
                vec![
                    sc.count.map(|c| c.to_string()).unwrap_or_default(),
                    sc.failed.join(" + "),
                    sc.worst.as_str().to_string(),
                    sc.meta.as_str().to_string(),
                    sc.tally(),
                    fmt_secs(sc.recovery_s),
                ]
            })
            .collect();
        page.h2("Outcome classes", Some("classes"));
        page.table(
            &["combinations", "example", "worst", "meta", "assets", "recovery"],
            &rows,
        );
    }
    for (i, sc) in r.scenarios.iter().enumerate() {
        if i >= MAX_DRAWN {
            page.p(&format!(
                "{} more outcome classes are listed in the table above (drawings for the first {MAX_DRAWN}).",
                r.scenarios.len() - MAX_DRAWN
            ));
            break;
        }
        scenario_section(&mut page, site, planned, sc, i);
    }
    page.finish(&format!("natsplan {}", env!("CARGO_PKG_VERSION")))
}

fn scenario_section(page: &mut Page, site: &Site, planned: &PlannedLayout, sc: &ScenarioReport, i: usize) {
    let title = format!("Scenario {}: {}", i + 1, sc.failed.join(" + "));
    page.h2(&title, Some(&format!("scenario-{}", i + 1)));
    page.p_html(
        "",
        &format!(
            "worst {} · meta group {} · {}{} · recovery {}",
            badge(sc.worst.as_str(), status_colour(sc.worst)),
            badge(sc.meta.as_str(), status_colour(sc.meta)),
            esc(&sc.tally()),
            sc.count
                .map(|c| format!(" · {c} combinations like this"))
                .unwrap_or_default(),
            esc(&fmt_secs(sc.recovery_s))
        ),
    );
    let overlay = Overlay::from_scenario(sc);
    page.figure(
        &layout_drawing(site, planned, Some(&overlay)),
        "Failed domains greyed (disks crossed); each replica chip takes its stream's status colour.",
    );
    let rows: Vec<Vec<String>> = sc
        .streams
        .iter()
        .map(|a| {
            vec![
                a.name.clone(),
                a.kind.to_string(),
                a.status.as_str().to_string(),
                match a.stall_s {
                    Some(0.0) => "0".into(),
                    Some(x) => format!("≤{x:.0} s"),
                    None if a.stall_until.is_empty() => "until restored".into(),
                    None => format!("until {}", a.stall_until.join(", ")),
                },
                if a.acked_loss_risk { "yes".into() } else { "no".into() },
            ]
        })
        .collect();
    page.table(&["asset", "kind", "status", "write stall", "acked-loss risk"], &rows);
    if !sc.recovery.is_empty() {
        page.h3("Recovery");
        let steps: Vec<String> = sc
            .recovery
            .iter()
            .map(|s| {
                format!(
                    "{}: {} ({}){}",
                    s.chain,
                    s.what,
                    fmt_secs(s.seconds),
                    super::whatif::needs(s)
                )
            })
            .collect();
        page.list(&steps);
    }
    if !sc.actions.is_empty() {
        page.h3("Actions");
        page.list(&sc.actions);
    }
}

/// The simulate report: the yearly figures (Monte Carlo with 95 % intervals beside the exact chain when
/// there is one) as a table and a chart of unavailable minutes per year, and the layout drawing.
pub fn simulate(
    site: &Site,
    planned: &PlannedLayout,
    header: &str,
    mc: &crate::survival::Yearly,
    exact: Option<&crate::survival::Yearly>,
) -> String {
    use super::svg::{bar_chart, colour, Bar};
    let mut page = Page::new(&format!("natsplan simulate: {} / {}", site.name, planned.id));
    page.h1(&format!("natsplan simulate: {}", site.name));
    page.p_html("meta", &esc(header));
    page.p(&mc.method_detail);
    if let Some(e) = exact {
        page.p(&format!("Exact: {}", e.method_detail));
    }
    page.p(&format!(
        "P(any data_lost) per year {}; acknowledged messages lost per year {}; least available: {} ({:.3} min/yr).",
        fmt_sci(mc.p_any_data_lost_per_year),
        fmt_sci(mc.acked_msgs_lost_per_year),
        mc.worst_unavailable,
        mc.worst_unavailable_min_per_year
    ));
    let all: Vec<(usize, &crate::survival::YearlyAsset)> =
        std::iter::once(&mc.meta).chain(mc.assets.iter()).enumerate().collect();
    let exact_of = |i: usize| -> Option<&crate::survival::YearlyAsset> {
        exact.and_then(|e| if i == 0 { Some(&e.meta) } else { e.assets.get(i - 1) })
    };
    let bars: Vec<Bar> = all
        .iter()
        .map(|(i, a)| Bar {
            label: a.name.clone(),
            value: a.unavailable_min_per_year,
            interval: a.ci95.as_ref().map(|c| c.unavailable_min_per_year),
            marker: exact_of(*i).map(|e| e.unavailable_min_per_year),
            colour: if *i == 0 {
                "#555555".into()
            } else {
                colour(*i - 1).into()
            },
        })
        .collect();
    page.figure(
        &bar_chart(
            "expected unavailable minutes per year (Monte Carlo, 95 % interval)",
            "minutes per year",
            &bars,
            if exact.is_some() { "exact (Markov chain)" } else { "" },
        ),
        "Bars: Monte Carlo mean; whiskers: its 95 % confidence interval; diamonds: the exact chain's figure.",
    );
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|(i, a)| {
            let e = exact_of(*i);
            let ci = a.ci95.as_ref();
            vec![
                a.name.clone(),
                a.kind.to_string(),
                format!("{:.4}", a.unavailable_min_per_year),
                ci.map(|c| {
                    format!(
                        "{:.4}–{:.4}",
                        c.unavailable_min_per_year.0, c.unavailable_min_per_year.1
                    )
                })
                .unwrap_or_else(|| "—".into()),
                e.map(|e| format!("{:.4}", e.unavailable_min_per_year))
                    .unwrap_or_else(|| "—".into()),
                fmt_sci(a.p_data_lost_per_year),
                e.map(|e| fmt_sci(e.p_data_lost_per_year)).unwrap_or_else(|| "—".into()),
                fmt_sci(a.acked_msgs_lost_per_year),
            ]
        })
        .collect();
    page.table(
        &[
            "asset",
            "kind",
            "unavailable min/yr",
            "95 % CI",
            "exact",
            "P(data_lost)/yr",
            "exact",
            "acked msgs lost/yr",
        ],
        &rows,
    );
    page.h2("Layout", Some("layout"));
    page.figure(&layout_drawing(site, planned, None), "The layout simulated.");
    page.h3("Assumptions");
    page.list(&mc.assumptions);
    page.finish(&format!("natsplan {}", env!("CARGO_PKG_VERSION")))
}

fn verify_status_colour(s: crate::verify::report::RowStatus) -> &'static str {
    use crate::verify::report::RowStatus as S;
    match s {
        S::Inside => "#2ca02c",
        S::Near => "#e6a100",
        S::Outside | S::Error | S::Incomplete | S::Interrupted => "#d62728",
        S::Skipped | S::Planned => "#9e9e9e",
    }
}

/// The verify report: predicted versus measured per ladder row (bar: measured; whiskers: the predicted
/// band; diamond: the prediction), latency percentile curves, CPU against rate, the rows and the drift.
pub fn verify(r: &crate::verify::report::VerifyReport) -> String {
    use super::svg::{bar_chart, short_num, Bar};
    let mut page = Page::new("natsplan verify");
    page.h1("natsplan verify");
    let c = &r.config;
    page.p_html(
        "meta",
        &esc(&format!(
            "generated {} UTC · ladder {} · {} rows · tolerance {:.0} % · calibration {} · {} JetStream servers, sync {}{}",
            r.generated_at,
            c.ladder,
            r.rows.len(),
            c.tolerance * 100.0,
            c.calibration,
            r.cluster.jetstream_servers,
            r.cluster.sync,
            r.cluster
                .version
                .as_ref()
                .map(|v| format!(", nats-server {v}"))
                .unwrap_or_default()
        )),
    );
    for n in &r.notes {
        page.note(n);
    }
    page.p(&format!(
        "{} row(s) outside their band (beyond tolerance) or failed.",
        r.failed_rows
    ));
    let bars: Vec<Bar> = r
        .rows
        .iter()
        .filter(|row| row.measured.is_some() || row.predicted.is_some())
        .map(|row| Bar {
            label: row.spec.id.clone(),
            value: row.measured.as_ref().map(|m| m.ops_per_s).unwrap_or(0.0),
            interval: row.predicted.as_ref().map(|p| (p.low, p.high)),
            marker: row.predicted.as_ref().map(|p| p.ops_per_s),
            colour: verify_status_colour(row.status).into(),
        })
        .collect();
    page.h2("Predicted versus measured", Some("rows"));
    page.figure(
        &bar_chart("ops/s per ladder row", "ops/s", &bars, "predicted"),
        "Bars: measured (green inside the band, amber near it, red outside or failed, grey not run); whiskers: \
         the predicted band; diamonds: the prediction.",
    );
    let rows: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            let p = row.predicted.as_ref();
            let m = row.measured.as_ref();
            vec![
                row.spec.id.clone(),
                row.spec.label.clone(),
                p.map(|p| format!("{:.0}", p.ops_per_s)).unwrap_or_else(|| "—".into()),
                p.map(|p| format!("{}–{}", short_num(p.low), short_num(p.high)))
                    .unwrap_or_else(|| "—".into()),
                m.map(|m| format!("{:.0}", m.ops_per_s)).unwrap_or_else(|| "—".into()),
                row.status.as_str().to_string(),
                m.and_then(|m| m.latency_us.as_ref())
                    .map(|l| format!("{:.0} / {:.0}", l.p50, l.p99))
                    .unwrap_or_else(|| "—".into()),
                p.map(|p| p.bottleneck.clone()).unwrap_or_default(),
                row.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    page.table(
        &[
            "row",
            "label",
            "predicted/s",
            "band",
            "measured/s",
            "status",
            "p50/p99 µs",
            "bottleneck",
            "reason",
        ],
        &rows,
    );
    verify_latency(&mut page, r);
    verify_cpu(&mut page, r);
    if let Some(d) = &r.drift {
        page.h2(&format!("Drift against layout {}", d.layout), Some("drift"));
        if d.items.is_empty() {
            page.p(&d.summary());
        } else {
            let rows: Vec<Vec<String>> = d
                .items
                .iter()
                .map(|i| vec![i.what.clone(), i.subject.clone(), i.planned.clone(), i.live.clone()])
                .collect();
            page.table(&["what", "subject", "planned", "live"], &rows);
        }
        page.list(&d.notes);
    }
    page.finish(&format!("natsplan {}", env!("CARGO_PKG_VERSION")))
}

/// Verify's latency percentiles on a "nines" axis (p50, p90, p99, p99.9, max), one line per row.
fn verify_latency(page: &mut Page, r: &crate::verify::report::VerifyReport) {
    use super::svg::{colour, line_chart, Chart, Series};
    let nines = [0.301, 1.0, 2.0, 3.0, 4.0];
    let mut lat = Chart::new("latency percentiles per row", "percentile", "µs");
    lat.y_log = true;
    lat.x_ticks = ["p50", "p90", "p99", "p99.9", "max"]
        .iter()
        .zip(nines)
        .map(|(l, x)| (x, l.to_string()))
        .collect();
    for (i, row) in r.rows.iter().enumerate() {
        if let Some(l) = row.measured.as_ref().and_then(|m| m.latency_us.as_ref()) {
            lat.series.push(Series {
                name: row.spec.id.clone(),
                colour: colour(i).into(),
                dashed: false,
                points: nines
                    .iter()
                    .copied()
                    .zip([l.p50, l.p90, l.p99, l.p999, l.max])
                    .collect(),
                band: Vec::new(),
            });
        }
    }
    if !lat.series.is_empty() {
        page.h2("Latency", Some("latency"));
        page.figure(
            &line_chart(&lat),
            "Measured latency percentiles (hdrhistogram), one line per row.",
        );
    }
}

/// Verify's CPU chart: the busiest server's measured percent against the measured rate, and the
/// prediction.
fn verify_cpu(page: &mut Page, r: &crate::verify::report::VerifyReport) {
    use super::svg::{colour, line_chart, Chart, Marks};
    let mut cpu = Chart::new("CPU of the busiest server versus rate", "ops/s", "% of one core");
    cpu.x_log = true;
    let mut measured = Vec::new();
    let mut predicted = Vec::new();
    for row in &r.rows {
        if let (Some(m), Some(p)) = (row.measured.as_ref(), row.predicted.as_ref()) {
            let busiest = m.cpu_percent.iter().map(|c| c.1).fold(0.0f64, f64::max);
            if m.ops_per_s > 0.0 && !m.cpu_percent.is_empty() {
                measured.push((
                    m.ops_per_s,
                    busiest,
                    format!("{}: {busiest:.0} % measured", row.spec.id),
                ));
                predicted.push((
                    m.ops_per_s,
                    p.cpu_per_server * 100.0,
                    format!("{}: {:.0} % predicted", row.spec.id, p.cpu_per_server * 100.0),
                ));
            }
        }
    }
    if !measured.is_empty() {
        cpu.marks.push(Marks {
            name: "measured (busiest server)".into(),
            colour: colour(0).into(),
            filled: true,
            points: measured,
        });
        cpu.marks.push(Marks {
            name: "predicted".into(),
            colour: colour(1).into(),
            filled: false,
            points: predicted,
        });
        page.h2("CPU", Some("cpu"));
        page.figure(
            &line_chart(&cpu),
            "Per row: the busiest server's CPU (from /varz) and the prediction.",
        );
    }
}
