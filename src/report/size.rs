//! `natsplan size`'s reports: a table (the frontier, the cheapest point that meets every requirement, and
//! each bill's best point with its binding constraint) and the JSON contract of docs/size.md.

use super::render::Format;
use crate::size::search::{Point, Sizing};

fn money(x: f64, unit: &str) -> String {
    if unit == "relative" {
        format!("{x:.0}")
    } else {
        format!("{x:.0} {unit}")
    }
}

fn odds(p: Option<f64>) -> String {
    p.map(|x| format!("{x:.2e}")).unwrap_or_else(|| "—".into())
}

fn mins(p: Option<f64>) -> String {
    p.map(|x| format!("{x:.2}")).unwrap_or_else(|| "—".into())
}

fn row(p: &Point, unit: &str) -> Vec<String> {
    vec![
        p.id.clone(),
        money(p.cost.total, unit),
        p.verdict.as_str().to_string(),
        format!(
            "{}/{}/{}/{}",
            p.tolerates.racks, p.tolerates.arrays, p.tolerates.servers, p.tolerates.disks
        ),
        odds(p.p_any_data_lost_per_year),
        mins(p.worst_unavailable_min_per_year),
        crate::text::pct(p.free_after_worst_tolerated_failure),
        p.binding.as_ref().map(|b| b.text.clone()).unwrap_or_else(|| "—".into()),
    ]
}

const HEADER: [&str; 8] = [
    "candidate (bill/layout)",
    "cost",
    "verdict",
    "writes survive r/a/s/d",
    "P(data lost)/yr",
    "down min/yr",
    "free after failure",
    "binding constraint",
];

impl super::render::Render for Sizing {
    const COMMAND: &'static str = "size";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html, Format::Csv];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match f {
            Format::Json => w.write_all(&json(self)),
            Format::Csv => w.write_all(&csv(self)),
            Format::Html => w.write_all(html(self).as_bytes()),
            Format::Markdown => w.write_all(markdown(self).as_bytes()),
            _ => w.write_all(table(self, width).as_bytes()),
        }
    }
}

/// The table report.
pub fn table(s: &Sizing, width: u16) -> String {
    let unit = s.cost_unit.unit.as_str();
    let mut out = heading(s);
    if let Some(h) = &s.have {
        out.push_str(&have_lines(h));
    }
    for l in summary_lines(s) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(&format!(
        "\nfrontier (non-dominated over {}; among points that meet every requirement):\n",
        s.axes.join(", ")
    ));
    let mut t = crate::report::table(width, &HEADER);
    for p in s.candidates.iter().filter(|p| p.frontier) {
        t.add_row(row(p, unit));
    }
    out.push_str(&t.0.to_string());
    out.push_str("\n\nper bill, its best layout (lowest verdict, then loss odds) and what binds it:\n");
    let mut t = crate::report::table(width, &HEADER);
    for p in best_per_bill(s) {
        t.add_row(row(p, unit));
    }
    out.push_str(&t.0.to_string());
    out.push('\n');
    if s.have.is_some() {
        out.push_str(&migrations(s));
    }
    for b in &s.invalid {
        out.push_str(&format!("error (a bug in size, please report): {b}\n"));
    }
    out.push_str("\nassumptions:\n");
    for a in &s.assumptions {
        out.push_str(&format!("  - {a}\n"));
    }
    out.push_str(LEGEND);
    out.push('\n');
    out
}

/// The lines between the counts and the frontier, shared by the table and Markdown: the cost unit, the
/// skipped combinations, each pruned bill with its reason, each reference bill, and the cheapest.
fn summary_lines(s: &Sizing) -> Vec<String> {
    let unit = s.cost_unit.unit.as_str();
    let mut out = vec![format!("cost: {}", s.cost_unit.meaning)];
    for (why, n) in &s.skipped {
        out.push(format!("skipped {n} combination(s): {why}"));
    }
    for p in &s.pruned {
        out.push(format!(
            "pruned {} ({}): {}",
            p.bill,
            money(p.cost.total, unit),
            p.reason
        ));
    }
    for b in &s.references {
        out.push(format!(
            "planned as a reference, though pruning would skip it: {b} (the single-array shape: one rack, one \
             array; its best point below says what binds it)"
        ));
    }
    out.push(format!(
        "cheapest that meets every requirement: {}",
        cheapest(s, unit).0
    ));
    out
}

/// `--format markdown`: the table report as GitHub Markdown — the counts, **INCOMPLETE SEARCH** when a
/// limit cut the search, the same lines and the same two tables (frontier, each bill's best point), the
/// migrations with `--have`, and the assumptions.
pub fn markdown(s: &Sizing) -> String {
    let unit = s.cost_unit.unit.as_str();
    let mut out = format!("# natsplan size: {}\n\n", s.workload);
    for line in heading(s).lines() {
        match line.strip_prefix("INCOMPLETE SEARCH: ") {
            Some(rest) => out.push_str(&format!("> **INCOMPLETE SEARCH**: {rest}\n\n")),
            None => out.push_str(&format!("{}\n\n", line.trim_start_matches("natsplan size — "))),
        }
    }
    if let Some(h) = &s.have {
        out.push_str(&md_lines(have_lines(h).lines().map(str::to_string)));
    }
    out.push_str(&md_lines(summary_lines(s).into_iter()));
    out.push_str(&format!(
        "\n## Frontier\n\nNon-dominated over {}, among points that meet every requirement.\n\n",
        s.axes.join(", ")
    ));
    let rows = |ps: Vec<&Point>| ps.into_iter().map(|p| row(p, unit)).collect::<Vec<_>>();
    out.push_str(&crate::report::md_table(
        &HEADER,
        &rows(s.candidates.iter().filter(|p| p.frontier).collect()),
    ));
    out.push_str("\n## Per bill\n\nEach bill's best layout (lowest verdict, then loss odds) and what binds it.\n\n");
    out.push_str(&crate::report::md_table(&HEADER, &rows(best_per_bill(s))));
    if s.have.is_some() {
        out.push_str(&format!("\n```text{}```\n", migrations(s)));
    }
    for b in &s.invalid {
        out.push_str(&format!("\n> **Error** (a bug in size, please report): {b}\n"));
    }
    out.push_str("\n## Assumptions\n\n");
    out.push_str(&md_lines(s.assumptions.iter().cloned()));
    out.push_str(&format!("\n{LEGEND}\n"));
    out
}

/// Lines as a Markdown list.
fn md_lines(lines: impl Iterator<Item = String>) -> String {
    let mut out: String = lines.map(|l| format!("- {l}\n")).collect();
    out.push('\n');
    out
}

/// What the table's columns mean, after both reports.
const LEGEND: &str =
    "writes survive r/a/s/d: racks/arrays/servers/disks that may fail at once with every stream still \
                      taking writes (design's); free after failure: free on the fullest server after the worst \
                      tolerated failure; compare a point with `natsplan design SITE --layout LAYOUT` on its site \
                      (--out DIR writes them).";

/// The table's first lines: the search's counts, and INCOMPLETE SEARCH when a limit cut it.
fn heading(s: &Sizing) -> String {
    let mut out = format!(
        "natsplan size — workload {} — {} bills of {} combinations: {} planned ({} points), {} pruned, {} cut by a \
         limit (budget {} bills{}); {:.1} CPU-s\n",
        s.workload,
        s.bills,
        s.combinations,
        s.considered,
        s.points,
        s.pruned.len(),
        s.over_budget,
        s.budget,
        s.cpu_seconds_budget.map(|c| format!(", {c} CPU-s")).unwrap_or_default(),
        s.cpu_seconds
    );
    if !s.complete {
        out.push_str(&format!(
            "INCOMPLETE SEARCH: --{} stopped it with {} bill(s) not planned (bills go cheapest first); the frontier \
             below is of the bills planned only; {}\n",
            s.cut_by.unwrap_or("budget").replace('_', "-"),
            s.over_budget,
            if s.cheapest_proven {
                "none left out could be cheaper than the cheapest below"
            } else {
                "one left out may be cheaper than the cheapest below: raise the limit"
            }
        ));
    }
    out
}

/// `size --have`: today's site first (its binding constraint), today's layout and the growth path.
fn have_lines(h: &crate::size::have::HaveReport) -> String {
    let o = &h.owned;
    let mut out = format!(
        "owned ({}, cost 0, kept in every candidate): {} racks, {} servers, {} arrays, {} disks\n{}\n",
        h.site, o.racks, o.servers, o.arrays, o.disks, h.today_text
    );
    out.push_str(&format!(
        "today's layout (migrations start from it): {}{}\n",
        h.today_layout.layout,
        if h.today_layout.assumed {
            " (assumed: design's first on the --have site as it is; give --have-layout ID)"
        } else {
            ""
        }
    ));
    if let Some(g) = &h.growth {
        out.push_str(&format!("growth path: {}\n", g.text));
    }
    out
}

/// `size --have`: what each bill's best point (and the cheapest) adds and changes on owned hardware.
fn migrations(s: &Sizing) -> String {
    let mut out = String::from("\nadded and migration, per bill's best layout:\n");
    let mut shown: Vec<&Point> = best_per_bill(s);
    if let Some(c) = s
        .cheapest
        .as_ref()
        .and_then(|id| s.candidates.iter().find(|p| &p.id == id))
    {
        if !shown.iter().any(|p| p.id == c.id) {
            shown.insert(0, c);
        }
    }
    for p in shown {
        let added = p.added.as_ref().map(|a| a.items.join("; ")).filter(|t| !t.is_empty());
        out.push_str(&format!("  {}: adds {}\n", p.id, added.as_deref().unwrap_or("nothing")));
        if let Some(m) = &p.migration {
            out.push_str(&format!("    migration: {}\n", m.summary()));
            for step in &m.steps {
                out.push_str(&format!("      - {step}\n"));
            }
        }
    }
    out
}

/// Each bill's best point (lowest verdict, then loss odds), cheapest first.
fn best_per_bill(s: &Sizing) -> Vec<&Point> {
    let mut seen = std::collections::HashSet::new();
    let mut best: Vec<&Point> = s.candidates.iter().collect();
    best.sort_by(|a, b| {
        a.bill.cmp(&b.bill).then(a.verdict.cmp(&b.verdict)).then_with(|| {
            let l = |p: &Point| p.p_any_data_lost_per_year.unwrap_or(f64::INFINITY);
            l(a).total_cmp(&l(b))
        })
    });
    let mut firsts: Vec<&Point> = best.into_iter().filter(|p| seen.insert(p.bill.clone())).collect();
    firsts.sort_by(|a, b| a.cost.total.total_cmp(&b.cost.total).then_with(|| a.id.cmp(&b.id)));
    firsts
}

/// The cheapest point that meets every requirement as both renderers say it, and whether there is one.
fn cheapest(s: &Sizing, unit: &str) -> (String, bool) {
    match s
        .cheapest
        .as_ref()
        .and_then(|id| s.candidates.iter().find(|p| &p.id == id))
    {
        Some(p) => (
            format!("{} at {} ({})", p.id, money(p.cost.total, unit), split(p, unit)),
            true,
        ),
        None => ("none of the evaluated points meets them".into(), false),
    }
}

fn split(p: &Point, unit: &str) -> String {
    let c = &p.cost;
    let mut s = format!(
        "servers {}, arrays {}, disks {}, racks {}",
        money(c.servers, unit),
        money(c.arrays, unit),
        money(c.disks, unit),
        money(c.racks, unit)
    );
    if let Some(w) = c.power_per_year {
        s.push_str(&format!(", power {} a year", money(w, unit)));
    }
    s
}

/// The JSON report (docs/size.md).
pub fn json(s: &Sizing) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(s).expect("a Sizing always serialises");
    v.push(b'\n');
    v
}

/// `size --format csv` columns (docs/size.md), one record per point, cheapest first. `search_complete` is
/// false on every record when a limit cut the search, so a cut run never reads as complete.
pub const CSV_COLUMNS: [&str; 28] = [
    "id",
    "bill",
    "layout",
    "verdict",
    "meets_requirements",
    "frontier",
    "cheapest",
    "cost_unit",
    "cost_total",
    "cost_servers",
    "cost_arrays",
    "cost_disks",
    "cost_racks",
    "cost_power_per_year",
    "tolerates_racks",
    "tolerates_arrays",
    "tolerates_servers",
    "tolerates_disks",
    "p_any_data_lost_per_year",
    "worst_unavailable_min_per_year",
    "free_after_worst_tolerated_failure",
    "worst_tolerated_failure",
    "binding_kind",
    "binding_demand",
    "binding_capacity",
    "binding_unit",
    "binding_text",
    "search_complete",
];

fn csv_record(s: &Sizing, p: &Point) -> Vec<String> {
    use crate::report::csv::{num, opt};
    let (c, t, b) = (&p.cost, &p.tolerates, p.binding.as_ref());
    vec![
        p.id.clone(),
        p.bill.clone(),
        p.layout.clone(),
        p.verdict.as_str().into(),
        p.meets_requirements.to_string(),
        p.frontier.to_string(),
        (s.cheapest.as_deref() == Some(p.id.as_str())).to_string(),
        s.cost_unit.unit.clone(),
        num(c.total),
        num(c.servers),
        num(c.arrays),
        num(c.disks),
        num(c.racks),
        opt(c.power_per_year),
        t.racks.to_string(),
        t.arrays.to_string(),
        t.servers.to_string(),
        t.disks.to_string(),
        opt(p.p_any_data_lost_per_year),
        opt(p.worst_unavailable_min_per_year),
        num(p.free_after_worst_tolerated_failure),
        p.worst_tolerated_failure.join(" + "),
        b.map(|b| b.kind.clone()).unwrap_or_default(),
        opt(b.map(|b| b.demand)),
        opt(b.map(|b| b.capacity)),
        b.map(|b| b.unit.clone()).unwrap_or_default(),
        b.map(|b| b.text.clone()).unwrap_or_default(),
        s.complete.to_string(),
    ]
}

/// The CSV report: a header row, then one record per point (RFC 4180, CRLF).
pub fn csv(s: &Sizing) -> Vec<u8> {
    let mut out = crate::text::Csv::crlf();
    out.record(CSV_COLUMNS);
    for p in &s.candidates {
        out.record(csv_record(s, p));
    }
    out.into_bytes()
}

/// The frontier chart: cost against design's `p_any_data_lost_per_year` (log), frontier points filled,
/// other points that meet every requirement open, points that fail them grey. A point with no loss
/// figure (or odds of 0, off a log axis) is not drawn; the tables list every point.
pub fn frontier_chart(s: &Sizing) -> String {
    use crate::report::svg::{line_chart, Chart, Marks};
    let x_label = format!("cost.total ({})", s.cost_unit.unit);
    let mut c = Chart::new(
        "Cost against P(any data lost) per year",
        &x_label,
        "p_any_data_lost_per_year (log)",
    );
    c.y_log = true;
    let marks = |name: &str, colour: &str, filled: bool, f: &dyn Fn(&Point) -> bool| Marks {
        name: name.into(),
        colour: colour.into(),
        filled,
        points: s
            .candidates
            .iter()
            .filter(|p| f(p))
            .filter_map(|p| {
                let y = p.p_any_data_lost_per_year?;
                Some((
                    p.cost.total,
                    y,
                    format!("{}: {} · {y:.2e}/yr", p.id, money(p.cost.total, &s.cost_unit.unit)),
                ))
            })
            .collect(),
    };
    c.marks = vec![
        marks("frontier", "#1f77b4", true, &|p| p.frontier),
        marks("meets every requirement, dominated", "#1f77b4", false, &|p| {
            p.meets_requirements && !p.frontier
        }),
        marks("fails a requirement", "#999999", false, &|p| !p.meets_requirements),
    ];
    line_chart(&c)
}

/// The HTML page: the search's counts and any cut, the cost unit, the cheapest, the frontier chart and
/// table, every bill's best point with its binding constraint, the pruned bills and the assumptions. One
/// self-contained file (inline CSS and SVG, nothing fetched), as design's page.
pub fn html(s: &Sizing) -> String {
    use crate::report::html::Page;
    let unit = s.cost_unit.unit.as_str();
    let title = format!("natsplan size: {}", s.workload);
    let mut page = Page::new(&title);
    page.h1(&title);
    page.p(&format!(
        "{} bills of {} combinations: {} planned ({} points), {} pruned, {} cut by a limit; {:.1} CPU-s",
        s.bills,
        s.combinations,
        s.considered,
        s.points,
        s.pruned.len(),
        s.over_budget,
        s.cpu_seconds
    ));
    if !s.complete {
        page.note(&format!(
            "INCOMPLETE SEARCH: --{} stopped it with {} bill(s) not planned; the frontier is of the bills planned \
             only{}",
            s.cut_by.unwrap_or("budget").replace('_', "-"),
            s.over_budget,
            if s.cheapest_proven {
                " (none left out could be cheaper than the cheapest)"
            } else {
                "; one left out may be cheaper than the cheapest: raise the limit"
            }
        ));
    }
    page.note(&format!("cost: {}", s.cost_unit.meaning));
    let (c, found) = cheapest(s, unit);
    let stop = if found { "" } else { "." };
    page.p(&format!("Cheapest that meets every requirement: {c}{stop}"));
    page.h2("Frontier", Some("frontier"));
    page.figure(
        &frontier_chart(s),
        "Each point a (bill, layout); filled: on the frontier (non-dominated over cost, loss odds, downtime and \
         free capacity after the worst tolerated failure, so a filled point may look dominated in these two axes).",
    );
    let rows = |f: &dyn Fn(&Point) -> bool| -> Vec<Vec<String>> {
        s.candidates.iter().filter(|p| f(p)).map(|p| row(p, unit)).collect()
    };
    page.table(&HEADER, &rows(&|p| p.frontier));
    page.h2("Every bill's best point", Some("bills"));
    page.table(
        &HEADER,
        &best_per_bill(s).into_iter().map(|p| row(p, unit)).collect::<Vec<_>>(),
    );
    if !s.pruned.is_empty() {
        page.h2("Pruned bills", Some("pruned"));
        let pr: Vec<Vec<String>> = s
            .pruned
            .iter()
            .map(|p| vec![p.bill.clone(), money(p.cost.total, unit), p.reason.clone()])
            .collect();
        page.table(&["bill", "cost", "why no point of it can meet the requirements"], &pr);
    }
    if !s.references.is_empty() {
        page.h2("Planned as a reference", Some("references"));
        page.list(
            &s.references
                .iter()
                .map(|b| {
                    format!("{b}: the single-array shape (one rack, one array), planned though pruning would skip it")
                })
                .collect::<Vec<_>>(),
        );
    }
    page.h2("Assumptions", Some("assumptions"));
    page.list(&s.assumptions);
    page.finish("natsplan size (docs/size.md)")
}
