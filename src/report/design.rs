//! The design report: a ranked summary of layouts and a detail block for the best (or chosen) one, as a
//! terminal table, Markdown for a change ticket, or the Plan as JSON.

use super::{detail, md_table, table};
use crate::plan::{Plan, PlannedLayout};
use crate::text::plural_s;

pub use crate::plan::Selection;

use super::render::{Format, Render};
use crate::perf::curves::PerfCurves;
use crate::size::price::{Cost, Prices};

/// Design's result as reports: the plan, the layouts shown, each layout's cost under `--prices` (by
/// layout id) and, for HTML, the perf curves of the layouts shown (`Loaded::perf_curves`).
pub struct Design<'a> {
    pub plan: &'a Plan,
    pub sel: &'a Selection,
    pub priced: Option<(&'a Prices, &'a [(String, Cost)])>,
    pub curves: Option<&'a PerfCurves>,
}

impl Render for Design<'_> {
    const COMMAND: &'static str = "design";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html, Format::Csv];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let (plan, sel) = (self.plan, self.sel);
        match f {
            Format::Json => {
                let costs: Option<Vec<(String, serde_json::Value)>> = self.priced.map(|(_, c)| {
                    c.iter()
                        .map(|(id, c)| (id.clone(), serde_json::to_value(c).expect("a cost serialises")))
                        .collect()
                });
                json(plan, sel, costs.as_deref(), w)
            }
            Format::Markdown => w.write_all(markdown(plan, sel).as_bytes()),
            Format::Csv => w.write_all(&super::csv::design(plan, sel)),
            Format::Html => w.write_all(super::html::design(plan, sel, self.curves).as_bytes()),
            _ => {
                let mut t = table_report(plan, sel, width);
                if let Some((p, c)) = self.priced {
                    t.push_str(&cost_table(plan, sel, p, c, width));
                }
                w.write_all(t.as_bytes())
            }
        }
    }
}

/// The table's cost section: each shown layout's total and split.
fn cost_table(plan: &Plan, sel: &Selection, prices: &Prices, costs: &[(String, Cost)], width: u16) -> String {
    let mut t = table(
        width,
        &["layout", "cost", "servers", "arrays", "disks", "racks", "power/yr"],
    );
    let m = |x: f64| format!("{x:.0}");
    for l in selected(plan, sel) {
        if let Some((_, c)) = costs.iter().find(|(id, _)| id == &l.id) {
            t.add_row(vec![
                l.id.clone(),
                format!("{} {}", m(c.total), prices.currency),
                m(c.servers),
                m(c.arrays),
                m(c.disks),
                m(c.racks),
                c.power_per_year.map(m).unwrap_or_else(|| "—".into()),
            ]);
        }
    }
    format!(
        "\ncost per layout ({}; the servers it runs JetStream on and the arrays their volumes are on, whole):\n{}\n",
        crate::size::price::unit(Some(prices)).meaning,
        t.0
    )
}

/// The layouts selected, in rank order (`Plan::selected`).
pub fn selected<'a>(plan: &'a Plan, sel: &Selection) -> Vec<&'a PlannedLayout> {
    plan.selected(sel)
}

/// The Plan as JSON, limited to the selected layouts, written to `w` as it is made (the per-asset lists
/// are never held whole as text).
/// `costs` (`design --prices`): a `cost` value added to each layout by id (docs/size.md).
pub fn json(
    plan: &Plan,
    sel: &Selection,
    costs: Option<&[(String, serde_json::Value)]>,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    // Written straight from the Plan with every object's keys sorted (`sorted`: the bytes a
    // `serde_json::Value` of the plan printed, without the value or the text held whole): the selected
    // layouts in place of all, each with its cost.
    use super::sorted::Patched;
    let cost = |id: &str| costs.and_then(|c| c.iter().find(|(i, _)| i == id)).map(|(_, c)| c);
    let layouts: Vec<Patched<'_, PlannedLayout, &serde_json::Value>> = selected(plan, sel)
        .into_iter()
        .map(|l| Patched {
            inner: l,
            key: "cost",
            value: cost(&l.id),
        })
        .collect();
    let doc = Patched {
        inner: plan,
        key: "layouts",
        value: Some(layouts),
    };
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    w.write_all(b"\n")
}

/// "10 layouts evaluated" or "10 layouts evaluated, 3 shown": the count is what `--format json` lists
/// without `--top`/`--layout`.
fn evaluated(plan: &Plan, shown: usize) -> String {
    let n = plan.evaluated;
    let mut s = format!("{n} layout{} evaluated", plural_s(n));
    if shown < n {
        s.push_str(&format!(", {shown} shown"));
    }
    s
}

/// The terminal report.
pub fn table_report(plan: &Plan, sel: &Selection, width: u16) -> String {
    let layouts = selected(plan, sel);
    let mut s = format!(
        "natsplan design — site {} — {}, sync_interval {}\n",
        plan.site,
        evaluated(plan, layouts.len()),
        plan.sync_interval
    );
    for w in &plan.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    if layouts.is_empty() {
        s.push_str("no layout to show\n");
        for n in &plan.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        return s;
    }
    for (header, rows) in [
        (&detail::SUMMARY_HEADER, detail::summary_rows(&layouts)),
        (&detail::CAPACITY_HEADER, detail::capacity_rows(&layouts)),
    ] {
        let mut t = table(width, header);
        for r in rows {
            t.add_row(r);
        }
        // The id is looked up and copied into `--layout ID`: never wrapped (the other columns give way).
        if let Some(c) = t.column_mut(1) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
        s.push_str(&t.to_string());
        s.push('\n');
    }
    for r in detail::rejections(&layouts) {
        s.push_str(&r);
        s.push('\n');
    }
    s.push_str(&super::wrap(
        &format!("{} Verdicts: see `natsplan design --help`.", detail::SUMMARY_LEGEND),
        width,
    ));
    for n in &plan.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push('\n');
    s.push_str(&detail_text(layouts[0], width));
    s
}

/// The detail block of one layout.
pub fn detail_text(l: &PlannedLayout, width: u16) -> String {
    let mut s = format!("Layout {} (rank {}, {})\n", l.id, l.rank, l.verdict.as_str());
    s.push_str(&detail::overview(l));
    s.push('\n');
    s.push_str(&detail::placement(l));
    s.push('\n');
    for u in detail::unused_servers(l) {
        s.push_str(&u);
        s.push('\n');
    }
    if let Some(i) = detail::idle_disks(l) {
        s.push_str(&i);
        s.push('\n');
    }
    let mut t = table(width, &detail::SERVER_HEADER);
    for r in detail::server_rows(l) {
        t.add_row(r);
    }
    s.push_str(&t.to_string());
    s.push('\n');
    let volumes = detail::volume_lines(l);
    if !volumes.is_empty() {
        s.push_str("Volumes:\n");
        for v in volumes.iter().take(TEXT_ROWS) {
            s.push_str(&hanging(v, width));
        }
        if volumes.len() > TEXT_ROWS {
            s.push_str(&format!(
                "  … and {} more servers (--format json gives each servers[].volume)\n",
                volumes.len() - TEXT_ROWS
            ));
        }
    }
    for line in detail::capacity(&l.capacity) {
        s.push_str(&line);
        s.push('\n');
    }
    let assets = detail::asset_rows(l);
    if !assets.is_empty() {
        let mut t = table(width, &detail::ASSET_HEADER);
        for r in assets.iter().take(TEXT_ROWS) {
            t.add_row(r.clone());
        }
        s.push_str(&t.to_string());
        s.push('\n');
        if assets.len() > TEXT_ROWS {
            s.push_str(&format!(
                "… and {} more assets (--format json lists all)\n",
                assets.len() - TEXT_ROWS
            ));
        }
    }
    if let Some(y) = detail::yearly(l) {
        s.push_str(&y);
        s.push('\n');
    }
    if let Some(pr) = &l.predicted {
        let rows = detail::prediction_rows(l);
        if !rows.is_empty() {
            let mut t = table(width, &detail::PREDICTION_HEADER);
            for r in rows.into_iter().take(TEXT_ROWS) {
                t.add_row(r);
            }
            s.push_str(&t.to_string());
            s.push('\n');
            for m in detail::publish_modes(l) {
                s.push_str(&m);
                s.push('\n');
            }
            s.push_str(&super::wrap(detail::PREDICTION_LEGEND, width));
        }
        s.push_str(&detail::recovery(pr));
        s.push('\n');
        if let Some(n) = detail::needs(pr) {
            s.push_str(&super::wrap(&n, width));
        }
    }
    if !l.reasons.is_empty() {
        s.push_str("Reasons:\n");
        for r in &l.reasons {
            s.push_str(&format!("  - {r}\n"));
        }
    }
    s
}

/// One line indented by two spaces, its words carried to further lines indented by four when it is wider
/// than the terminal (a volume line names a size, a group, its level and drives, the array and its rack).
fn hanging(text: &str, width: u16) -> String {
    let width = usize::from(width.max(20));
    let mut out = String::from("  ");
    let mut line = 2usize;
    let mut first = true;
    for word in text.split_whitespace() {
        let n = word.chars().count();
        if !first && line + 1 + n > width {
            out.push_str("\n    ");
            line = 4;
        } else if !first {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
        first = false;
    }
    out.push('\n');
    out
}

/// Rows of a table shown on a terminal before the rest is left to `--format json`.
const TEXT_ROWS: usize = 20;

/// Markdown for a change ticket: the summary table, then each selected layout's essentials.
pub fn markdown(plan: &Plan, sel: &Selection) -> String {
    let layouts = selected(plan, sel);
    let mut s = format!("# natsplan design: {}\n\n", plan.site);
    s.push_str(&format!(
        "{}; `sync_interval: {}`.\n\n",
        evaluated(plan, layouts.len()),
        plan.sync_interval
    ));
    for w in &plan.warnings {
        s.push_str(&format!("> **Warning:** {w}\n\n"));
    }
    s.push_str(&md_table(&detail::SUMMARY_HEADER, &detail::summary_rows(&layouts)));
    s.push('\n');
    s.push_str(&md_table(&detail::CAPACITY_HEADER, &detail::capacity_rows(&layouts)));
    s.push('\n');
    for r in detail::rejections(&layouts) {
        s.push_str(&format!("- {r}\n"));
    }
    s.push_str(&format!("\n{}\n", detail::SUMMARY_LEGEND));
    s.push_str(&format!("\n```text\n{}\n```\n", detail::VERDICTS));
    for n in &plan.notes {
        s.push_str(&format!("\n> {n}\n"));
    }
    for l in layouts.iter().take(if sel.layout.is_some() { 1 } else { 3 }) {
        s.push_str(&format!("\n## {} — {} (rank {})\n\n", l.id, l.verdict.as_str(), l.rank));
        s.push_str(&format!("{}.\n\n", detail::overview(l)));
        s.push_str(&md_table(&detail::SERVER_HEADER, &detail::server_rows(l)));
        s.push('\n');
        let volumes = detail::volume_lines(l);
        if !volumes.is_empty() {
            s.push_str("Volumes:\n\n");
            for v in &volumes {
                s.push_str(&format!("- {v}\n"));
            }
            s.push('\n');
        }
        s.push_str(&detail::placement(l));
        s.push('\n');
        for u in detail::unused_servers(l) {
            s.push_str(&format!("\n{u}\n"));
        }
        if let Some(i) = detail::idle_disks(l) {
            s.push_str(&format!("\n{i}\n"));
        }
        for line in detail::capacity(&l.capacity) {
            s.push('\n');
            s.push_str(&line);
            s.push('\n');
        }
        if let Some(y) = detail::yearly(l) {
            s.push_str(&format!("\n{y}\n"));
        }
        let assets = detail::asset_rows(l);
        if !assets.is_empty() {
            s.push('\n');
            s.push_str(&md_table(&detail::ASSET_HEADER, &assets));
        }
        if let Some(pr) = &l.predicted {
            let rows = detail::prediction_rows(l);
            if !rows.is_empty() {
                s.push('\n');
                s.push_str(&md_table(&detail::PREDICTION_HEADER, &rows));
                s.push('\n');
                for m in detail::publish_modes(l) {
                    s.push_str(&format!("{m}\n\n"));
                }
                s.push_str(detail::PREDICTION_LEGEND);
                s.push('\n');
            }
            s.push_str(&format!("\n{}\n", detail::recovery(pr)));
            if let Some(n) = detail::needs(pr) {
                s.push_str(&format!("\n{n}\n"));
            }
        }
        if !l.reasons.is_empty() {
            s.push_str("\nReasons:\n\n");
            for r in &l.reasons {
                s.push_str(&format!("- {r}\n"));
            }
        }
    }
    s
}

#[cfg(test)]
mod class_tests {
    use super::*;

    #[test]
    fn above_the_threshold_the_detail_tables_give_one_row_per_class() {
        let n = crate::plan::classes::CLASS_THRESHOLD + 1;
        let plan = crate::plan::build(&crate::plan::classes::test_site(n), &crate::catalog::Catalog::builtin());
        let t = detail_text(&plan.layouts[0], 200);
        // Two shapes (1 and 2 msgs/s): two rows in each table, with their counts, not 1,001 names.
        assert_eq!(t.matches(" like it").count(), 4, "{t}");
        assert!(
            t.contains("s0 and 500 like it") && t.contains("s1 and 499 like it"),
            "{t}"
        );
        assert!(!t.contains("more assets (--format json lists all)"), "{t}");
        assert!(t.contains(&format!("{n} in all")), "{t}");
        // A layout kept per class shows its classes too.
        let other = detail_text(&plan.layouts[1], 200);
        assert!(
            other.contains(&format!("with --layout {}", plan.layouts[1].id)),
            "{other}"
        );
    }
}
