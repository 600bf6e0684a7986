//! The design report: a ranked summary of layouts and a detail block for the best (or chosen) one, as a
//! terminal table, Markdown for a change ticket, or the Plan as JSON.

use super::{md_table, pct, table};
use crate::plan::{Plan, PlannedLayout};
use crate::units::fmt_bytes;

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
pub fn json(plan: &Plan, sel: &Selection) -> Vec<u8> {
    let mut v = serde_json::to_value(plan).expect("a Plan always serialises");
    let keep: Vec<serde_json::Value> = selected(plan, sel)
        .iter()
        .map(|l| serde_json::to_value(l).expect("a layout always serialises"))
        .collect();
    v["layouts"] = serde_json::Value::Array(keep);
    let mut out = serde_json::to_vec_pretty(&v).expect("a value always serialises");
    out.push(b'\n');
    out
}

fn tol(l: &PlannedLayout) -> String {
    format!(
        "{}/{}/{}/{}",
        l.tolerates.racks, l.tolerates.arrays, l.tolerates.servers, l.tolerates.disks
    )
}

fn summary_rows(layouts: &[&PlannedLayout]) -> Vec<Vec<String>> {
    layouts
        .iter()
        .map(|l| {
            vec![
                l.rank.to_string(),
                l.id.clone(),
                l.verdict.as_str().to_string(),
                tol(l),
                l.disks_used.to_string(),
                fmt_bytes(l.capacity.needed_bytes as f64),
                fmt_bytes(l.capacity.usable_bytes as f64),
                pct(l.capacity.headroom),
                down(l),
                perf(l),
            ]
        })
        .collect()
}

/// Expected unavailable minutes per year of the worst asset (or the meta group).
fn down(l: &PlannedLayout) -> String {
    match &l.yearly {
        Some(y) if y.worst_unavailable_min_per_year >= 100.0 => format!("{:.0} min", y.worst_unavailable_min_per_year),
        Some(y) if y.worst_unavailable_min_per_year >= 1.0 => format!("{:.1} min", y.worst_unavailable_min_per_year),
        Some(y) => format!("{:.2} min", y.worst_unavailable_min_per_year),
        None => "—".into(),
    }
}

/// Predicted capacity ÷ required rate for the worst asset, e.g. `3.2×`.
fn perf(l: &PlannedLayout) -> String {
    match l.predicted.as_ref().map(|p| p.headroom) {
        Some(h) if h.is_finite() => format!("{h:.1}×"),
        _ => "—".into(),
    }
}

/// Pattern, RAID, default replicas and servers per rack are in the id (`p1-raid1-r3-A1.B1.C1-fdce`).
const SUMMARY: [&str; 10] = [
    "#",
    "layout",
    "verdict",
    "tolerates",
    "disks",
    "needed",
    "usable",
    "free",
    "down/yr",
    "perf",
];

/// The terminal report.
pub fn table_report(plan: &Plan, sel: &Selection, width: u16) -> String {
    let layouts = selected(plan, sel);
    let mut s = format!(
        "natsplan design — site {} — {} layouts evaluated, sync_interval {}\n",
        plan.site, plan.evaluated, plan.sync_interval
    );
    if layouts.is_empty() {
        s.push_str("no layout to show\n");
        return s;
    }
    let mut t = table(width, &SUMMARY);
    for r in summary_rows(&layouts) {
        t.add_row(r);
    }
    // Ids are copied into `--layout ID`: never wrap them.
    if let Some(c) = t.column_mut(1) {
        c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
    }
    s.push_str(&t.to_string());
    s.push_str("\nlayout: pattern-raid-R<replicas>-<servers per rack>-<hash>; tolerates: any that many simultaneous rack/array/server/disk\n");
    s.push_str("failures keep every stream writable; free: store left free on the fullest server; down/yr: expected\n");
    s.push_str("unavailable minutes per year of the worst asset (failures, repairs, planned maintenance)\n");
    s.push_str(
        "perf: predicted capacity ÷ required rate for the busiest asset (see the detail block for bottlenecks)\n",
    );
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
    s.push_str(&format!(
        "pattern {} ({}), default R{}, {} JetStream server{} in {} rack{}, {} disk{} incl. {} hot spare{}, {} array{}\n",
        l.pattern,
        l.raid,
        l.replicas,
        l.servers.len(),
        plural(l.servers.len()),
        l.racks_used,
        plural(l.racks_used as usize),
        l.disks_used,
        plural(l.disks_used as usize),
        l.hot_spares,
        plural(l.hot_spares as usize),
        l.arrays_used,
        plural(l.arrays_used as usize)
    ));
    match (&l.unique_tag, l.replica_sets.is_empty()) {
        (Some(t), _) => s.push_str(&format!("placement: unique_tag \"{t}\" (replicas on distinct racks)\n")),
        (None, false) => {
            let sets: Vec<String> = l
                .replica_sets
                .iter()
                .map(|(n, v)| format!("set:{n} = {}", v.join(", ")))
                .collect();
            s.push_str(&format!("placement: pinned replica sets: {}\n", sets.join("; ")));
        }
        (None, true) => s.push_str("placement: free (NATS chooses; worst case assumed)\n"),
    }
    let mut t = table(
        width,
        &[
            "server",
            "rack",
            "array",
            "volume group",
            "LUN",
            "max_file_store",
            "tags",
        ],
    );
    for sv in &l.servers {
        t.add_row(vec![
            sv.name.clone(),
            sv.rack.clone(),
            sv.array.clone().unwrap_or_default(),
            sv.volume_group.clone().unwrap_or_default(),
            fmt_bytes(sv.lun_bytes as f64),
            fmt_bytes(sv.store_bytes as f64),
            sv.tags.join(" "),
        ]);
    }
    s.push_str(&t.to_string());
    s.push('\n');
    let c = &l.capacity;
    s.push_str(&format!(
        "capacity: {} usable, {} needed (all replicas, growth, RAFT logs); fullest server {}",
        fmt_bytes(c.usable_bytes as f64),
        fmt_bytes(c.needed_bytes as f64),
        c.fullest_server
            .as_ref()
            .map(|f| format!(
                "{} {} of {} ({} free)",
                f.name,
                fmt_bytes(f.needed_bytes as f64),
                fmt_bytes(f.usable_bytes as f64),
                pct(c.headroom)
            ))
            .unwrap_or_else(|| "—".into())
    ));
    s.push('\n');
    if let Some(a) = &c.after_failure {
        s.push_str(&format!(
            "after {} and peer-remove: fullest {} ({} free)\n",
            a.failed.join(" + "),
            a.fullest_server
                .as_ref()
                .map(|f| format!(
                    "{} {} of {}",
                    f.name,
                    fmt_bytes(f.needed_bytes as f64),
                    fmt_bytes(f.usable_bytes as f64)
                ))
                .unwrap_or_default(),
            pct(a.headroom)
        ));
    }
    if c.left_for_others_bytes > 0 {
        s.push_str(&format!(
            "left for other services: {}\n",
            fmt_bytes(c.left_for_others_bytes as f64)
        ));
    }
    let anywhere = if l.unique_tag.is_some() {
        "any, distinct racks"
    } else {
        "any JetStream server"
    };
    let shown: Vec<_> = l.assets.iter().filter(|a| a.kind != "consumer").collect();
    if !shown.is_empty() {
        let mut t = table(
            width,
            &["asset", "kind", "R", "per replica", "expected servers", "eligible"],
        );
        for a in shown.iter().take(20) {
            t.add_row(vec![
                a.name.clone(),
                a.kind.clone(),
                a.replicas.to_string(),
                fmt_bytes(a.bytes_per_replica as f64),
                a.expected.join(", "),
                match &a.set {
                    Some(set) => format!("set:{set}"),
                    None => anywhere.into(),
                },
            ]);
        }
        s.push_str(&t.to_string());
        s.push('\n');
        if shown.len() > 20 {
            s.push_str(&format!(
                "… and {} more assets (--format json lists all)\n",
                shown.len() - 20
            ));
        }
    }
    if let Some(y) = &l.yearly {
        s.push_str(&format!(
            "yearly ({}): worst {:.3} min/yr unavailable ({}), P(any data_lost) {:.1e}/yr, {:.0} acknowledged messages lost/yr\n",
            y.method, y.worst_unavailable_min_per_year, y.worst_unavailable, y.p_any_data_lost_per_year, y.acked_msgs_lost_per_year
        ));
    }
    if let Some(pr) = &l.predicted {
        s.push_str(&predicted_text(pr, width));
    }
    if !l.reasons.is_empty() {
        s.push_str("reasons:\n");
        for r in &l.reasons {
            s.push_str(&format!("  - {r}\n"));
        }
    }
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Markdown for a change ticket: the summary table, then each selected layout's essentials.
pub fn markdown(plan: &Plan, sel: &Selection) -> String {
    let layouts = selected(plan, sel);
    let mut s = format!("# natsplan design: {}\n\n", plan.site);
    s.push_str(&format!(
        "{} layouts evaluated; `sync_interval: {}`.\n\n",
        plan.evaluated, plan.sync_interval
    ));
    s.push_str(&md_table(&SUMMARY, &summary_rows(&layouts)));
    s.push_str("\n*layout*: pattern-raid-R(replicas)-(servers per rack)-hash. *tolerates*: any that many simultaneous rack/array/server/disk failures keep every stream writable. *free*: store left free on the fullest server. *down/yr*: expected unavailable minutes per year of the worst asset (failures, repairs and planned maintenance). *perf*: predicted capacity ÷ required rate for the busiest asset.\n");
    for n in &plan.notes {
        s.push_str(&format!("\n> {n}\n"));
    }
    for l in layouts.iter().take(if sel.layout.is_some() { 1 } else { 3 }) {
        s.push_str(&format!("\n## {} — {} (rank {})\n\n", l.id, l.verdict.as_str(), l.rank));
        let rows: Vec<Vec<String>> = l
            .servers
            .iter()
            .map(|sv| {
                vec![
                    sv.name.clone(),
                    sv.rack.clone(),
                    sv.array.clone().unwrap_or_default(),
                    sv.volume_group.clone().unwrap_or_default(),
                    fmt_bytes(sv.lun_bytes as f64),
                    fmt_bytes(sv.store_bytes as f64),
                    format!("`{}`", sv.tags.join(" ")),
                ]
            })
            .collect();
        s.push_str(&md_table(
            &[
                "server",
                "rack",
                "array",
                "volume group",
                "LUN",
                "max_file_store",
                "tags",
            ],
            &rows,
        ));
        if let Some(t) = &l.unique_tag {
            s.push_str(&format!("\nPlacement: `unique_tag: \"{t}\"`.\n"));
        } else if !l.replica_sets.is_empty() {
            s.push_str("\nPlacement: pinned replica sets ");
            let v: Vec<String> = l
                .replica_sets
                .iter()
                .map(|(n, m)| format!("`set:{n}` = {}", m.join(", ")))
                .collect();
            s.push_str(&v.join("; "));
            s.push_str(".\n");
        }
        let c = &l.capacity;
        s.push_str(&format!(
            "\nCapacity: {} usable, {} needed; fullest server {}{}.\n",
            fmt_bytes(c.usable_bytes as f64),
            fmt_bytes(c.needed_bytes as f64),
            c.fullest_server
                .as_ref()
                .map(|f| format!("{} ({} free)", f.name, pct(c.headroom)))
                .unwrap_or_else(|| "—".into()),
            c.after_failure
                .as_ref()
                .map(|a| format!(
                    "; after {} and peer-remove {} free",
                    a.failed.join(" + "),
                    pct(a.headroom)
                ))
                .unwrap_or_default()
        ));
        let assets: Vec<Vec<String>> = l
            .assets
            .iter()
            .filter(|a| a.kind != "consumer")
            .map(|a| {
                vec![
                    format!("`{}`", a.name),
                    a.kind.clone(),
                    a.replicas.to_string(),
                    fmt_bytes(a.bytes_per_replica as f64),
                    a.set.as_ref().map(|x| format!("`set:{x}`")).unwrap_or_default(),
                    a.expected.join(", "),
                ]
            })
            .collect();
        if !assets.is_empty() {
            s.push('\n');
            s.push_str(&md_table(
                &["asset", "kind", "R", "per replica", "set", "expected servers"],
                &assets,
            ));
        }
        if let Some(pr) = &l.predicted {
            let rows: Vec<Vec<String>> = pr
                .streams
                .iter()
                .map(|a| {
                    vec![
                        format!("`{}`", a.name),
                        format!("{:.0}", a.required_per_s),
                        format!("{:.0}", a.ops_per_s),
                        format!("{:.0}–{:.0}", a.band.low, a.band.high),
                        a.bottleneck.clone(),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                s.push('\n');
                s.push_str(&md_table(
                    &["asset", "required/s", "predicted/s", "band", "bottleneck"],
                    &rows,
                ));
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

/// The performance block: each asset's required and predicted rate with its bottleneck, then restart,
/// recovery, burst, memory and inter-rack figures.
fn predicted_text(pr: &crate::perf::Predicted, width: u16) -> String {
    let mut s = String::new();
    if !pr.streams.is_empty() {
        let mut t = table(
            width,
            &["asset", "required/s", "predicted/s", "band", "bottleneck", "source"],
        );
        for a in pr.streams.iter().take(20) {
            t.add_row(vec![
                a.name.clone(),
                format!("{:.0}", a.required_per_s),
                format!("{:.0}", a.ops_per_s),
                format!("{:.0}–{:.0}", a.band.low, a.band.high),
                a.bottleneck.clone(),
                format!("{}{}", a.source, if a.scaled { " (scaled)" } else { "" }),
            ]);
        }
        s.push_str(&t.to_string());
        s.push('\n');
    }
    s.push_str(&format!(
        "restart: {} clean, {} unclean (every block re-read); replica catch-up after a replacement {}; largest write burst {}; memory up to {} per server; {}/s between racks\n",
        crate::units::fmt_secs(pr.restart_clean_s),
        crate::units::fmt_secs(pr.restart_unclean_s),
        crate::units::fmt_secs(pr.catch_up_s),
        fmt_bytes(pr.burst_bytes_max),
        fmt_bytes(pr.memory_bytes_max),
        fmt_bytes(pr.inter_rack_bytes_per_s)
    ));
    s
}
