//! The design report: a ranked summary of layouts and a detail block for the best (or chosen) one, as a
//! terminal table, Markdown for a change ticket, or the Plan as JSON.

use super::{detail, md_table, table};
use crate::plan::{Plan, PlannedLayout};

/// Which layouts a report shows.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub top: Option<usize>,
    pub layout: Option<String>,
}

/// The layouts selected, in rank order.
pub fn selected<'a>(plan: &'a Plan, sel: &Selection) -> Vec<&'a PlannedLayout> {
    let it = plan
        .layouts
        .iter()
        .filter(|l| sel.layout.as_ref().is_none_or(|id| &l.id == id));
    match sel.top {
        Some(n) => it.take(n).collect(),
        None => it.collect(),
    }
}

/// The Plan as JSON, limited to the selected layouts.
///
/// The bytes are those of the Plan serialised as one `serde_json::Value` (keys sorted) and pretty-printed,
/// but built in pieces: the plan's other keys with `layouts` empty, then each selected layout with its
/// per-asset lists (`assets`, `predicted.streams`, `yearly.assets`) taken out, then those lists an entry
/// at a time, each printed and indented where it goes. One value for the whole plan of 100,000 assets
/// peaked at 1.5 GiB (issue 18). The lists are put back: `plan` is as it was.
pub fn json(plan: &mut Plan, sel: &Selection) -> Vec<u8> {
    let keep: Vec<bool> = {
        let chosen: Vec<*const PlannedLayout> = selected(plan, sel).into_iter().map(|l| l as *const _).collect();
        plan.layouts.iter().map(|l| chosen.contains(&(l as *const _))).collect()
    };
    let head = serde_json::to_value(Head::of(plan)).expect("a Plan always serialises");
    let mut out = serde_json::to_vec_pretty(&head).expect("a value always serialises");
    drop(head);
    // The top level's `layouts` key, as `to_vec_pretty` prints an empty array at depth 1 (a string that
    // holds this text is printed escaped, so this is the key).
    let key: &[u8] = b"\n  \"layouts\": []";
    let at = out
        .windows(key.len())
        .position(|w| w == key)
        .expect("the head has a layouts key")
        + key.len()
        - 1;
    let tail = out.split_off(at);
    let mut first = true;
    for (l, _) in plan.layouts.iter_mut().zip(&keep).filter(|(_, &k)| k) {
        out.extend_from_slice(if first { b"\n    " } else { b",\n    " });
        first = false;
        layout_json(&mut out, l, 4);
    }
    if !first {
        out.extend_from_slice(b"\n  ");
    }
    out.extend_from_slice(&tail);
    out.push(b'\n');
    out
}

/// A string no layout holds, printed in place of per-asset list `k` (its NUL is printed `\u0000`).
fn sentinel(k: usize) -> serde_json::Value {
    serde_json::Value::String(format!("\u{0}natsplan-list-{k}"))
}

/// One layout's pretty JSON at `indent` (the first line's indent already written), its per-asset lists
/// written an entry at a time (see `json`).
fn layout_json(out: &mut Vec<u8>, l: &mut PlannedLayout, indent: usize) {
    let assets = std::mem::take(&mut l.assets);
    let streams = l.predicted.as_mut().map(|p| std::mem::take(&mut p.streams));
    let yearly = l.yearly.as_mut().map(|y| std::mem::take(&mut y.assets));
    let mut v = serde_json::to_value(&*l).expect("a layout always serialises");
    v["assets"] = sentinel(0);
    if streams.is_some() {
        v["predicted"]["streams"] = sentinel(1);
    }
    if yearly.is_some() {
        v["yearly"]["assets"] = sentinel(2);
    }
    let text = serde_json::to_vec_pretty(&v).expect("a value always serialises");
    drop(v);
    let mark: &[u8] = b"\"\\u0000natsplan-list-";
    let mut rest = &text[..];
    while let Some(at) = rest.windows(mark.len()).position(|w| w == mark) {
        push_indented(out, &rest[..at], indent);
        // The key's line: its indent is the list's closing bracket's; entries go two deeper.
        let line_start = rest[..at].iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let depth = indent + rest[line_start..].iter().take_while(|&&b| b == b' ').count();
        let k = rest[at + mark.len()] - b'0';
        match k {
            0 => push_list(out, &assets, depth),
            1 => push_list(out, streams.as_deref().unwrap_or_default(), depth),
            _ => push_list(out, yearly.as_deref().unwrap_or_default(), depth),
        }
        // Past the digit and the closing quote.
        rest = &rest[at + mark.len() + 2..];
    }
    push_indented(out, rest, indent);
    l.assets = assets;
    if let (Some(p), Some(s)) = (l.predicted.as_mut(), streams) {
        p.streams = s;
    }
    if let (Some(y), Some(a)) = (l.yearly.as_mut(), yearly) {
        y.assets = a;
    }
}

/// `text` with `indent` spaces after each of its newlines.
fn push_indented(out: &mut Vec<u8>, text: &[u8], indent: usize) {
    for (j, line) in text.split(|&b| b == b'\n').enumerate() {
        if j > 0 {
            out.push(b'\n');
            out.extend(std::iter::repeat_n(b' ', indent));
        }
        out.extend_from_slice(line);
    }
}

/// A list as `to_vec_pretty` prints it inside a value, its closing bracket at `depth`.
fn push_list<T: serde::Serialize>(out: &mut Vec<u8>, items: &[T], depth: usize) {
    if items.is_empty() {
        out.extend_from_slice(b"[]");
        return;
    }
    out.push(b'[');
    for (i, x) in items.iter().enumerate() {
        out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
        out.extend(std::iter::repeat_n(b' ', depth + 2));
        let v = serde_json::to_value(x).expect("an entry always serialises");
        let text = serde_json::to_vec_pretty(&v).expect("a value always serialises");
        push_indented(out, &text, depth + 2);
    }
    out.push(b'\n');
    out.extend(std::iter::repeat_n(b' ', depth));
    out.push(b']');
}

/// The Plan's keys but its layouts, for `json` (a test checks it serialises as the Plan does).
#[derive(serde::Serialize)]
struct Head<'a> {
    site: &'a str,
    generator: &'a str,
    sync_interval: &'a str,
    layouts: [(); 0],
    evaluated: usize,
    notes: &'a [String],
    known_hazards: &'a [crate::survival::Hazard],
}

impl<'a> Head<'a> {
    fn of(plan: &'a Plan) -> Head<'a> {
        // Every field named, so a new Plan field fails to build here until `Head` has it too.
        let Plan {
            site,
            generator,
            sync_interval,
            layouts: _,
            evaluated,
            notes,
            known_hazards,
            input: _,
        } = plan;
        Head {
            site,
            generator,
            sync_interval,
            layouts: [],
            evaluated: *evaluated,
            notes,
            known_hazards,
        }
    }
}

/// "10 layouts evaluated" or "10 layouts evaluated, 3 shown": the count is what `--format json` lists
/// without `--top`/`--layout`.
fn evaluated(plan: &Plan, shown: usize) -> String {
    let n = plan.evaluated;
    let mut s = format!("{n} layout{} evaluated", if n == 1 { "" } else { "s" });
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
        let rows = detail::prediction_rows(pr);
        if !rows.is_empty() {
            let mut t = table(width, &detail::PREDICTION_HEADER);
            for r in rows.into_iter().take(TEXT_ROWS) {
                t.add_row(r);
            }
            s.push_str(&t.to_string());
            s.push('\n');
            for m in detail::publish_modes(pr) {
                s.push_str(&m);
                s.push('\n');
            }
            s.push_str(&super::wrap(detail::PREDICTION_LEGEND, width));
        }
        s.push_str(&detail::recovery(pr));
        s.push('\n');
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
            let rows = detail::prediction_rows(pr);
            if !rows.is_empty() {
                s.push('\n');
                s.push_str(&md_table(&detail::PREDICTION_HEADER, &rows));
                s.push('\n');
                for m in detail::publish_modes(pr) {
                    s.push_str(&format!("{m}\n\n"));
                }
                s.push_str(detail::PREDICTION_LEGEND);
                s.push('\n');
            }
            s.push_str(&format!("\n{}\n", detail::recovery(pr)));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What `json` printed before it went a layout at a time: the whole Plan as one value.
    fn whole(plan: &Plan, sel: &Selection) -> Vec<u8> {
        let mut v = serde_json::to_value(plan).unwrap();
        let keep: Vec<bool> = {
            let chosen: Vec<*const PlannedLayout> = selected(plan, sel).into_iter().map(|l| l as *const _).collect();
            plan.layouts.iter().map(|l| chosen.contains(&(l as *const _))).collect()
        };
        if let Some(serde_json::Value::Array(all)) = v.get_mut("layouts") {
            let mut i = 0;
            all.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        let mut out = serde_json::to_vec_pretty(&v).unwrap();
        out.push(b'\n');
        out
    }

    #[test]
    fn json_a_layout_at_a_time_is_the_whole_plan_printed_at_once() {
        let cat = crate::catalog::Catalog::builtin();
        let mut shown = 0;
        for f in [
            "examples/three-racks-raid1.yaml",
            "examples/mixed-storage.yaml",
            "examples/seed004-three-guests-one-host.yaml",
        ] {
            let text = std::fs::read_to_string(f).unwrap();
            let site = crate::site::parse_str(&text, f, &cat).unwrap();
            let plan = crate::plan::build(&site, &cat);
            let second = plan.layouts.get(1).map(|l| l.id.clone());
            for sel in [
                Selection::default(),
                Selection {
                    top: Some(1),
                    layout: None,
                },
                Selection {
                    top: None,
                    layout: second,
                },
                Selection {
                    top: None,
                    layout: Some("no-such-layout".into()),
                },
            ] {
                let mut copy = plan.clone();
                assert_eq!(
                    String::from_utf8(json(&mut copy, &sel)).unwrap(),
                    String::from_utf8(whole(&plan, &sel)).unwrap(),
                    "{f} {sel:?}"
                );
                shown += 1;
            }
        }
        assert_eq!(shown, 12);
    }
}
