//! The simulate report as a terminal table or Markdown (pure: value → text); HTML is in `report::html`.

use super::{md_table, table};
use crate::survival::{SimulateReport, YearlyAsset};
use crate::units::fmt_sci;

/// Rows the terminal table shows besides the meta group (the least available assets).
const ROWS_SHOWN: usize = 15;

fn range(lo: f64, hi: f64, f: fn(f64) -> String) -> String {
    format!("[{} – {}]", f(lo), f(hi))
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
        Some(y) if y >= 1e6 => format!("{y:.1e} y"),
        Some(y) => format!("{y:.0} y"),
        None => "—".into(),
    }
}

/// Rows: meta first, then the least available assets.
fn rows(r: &SimulateReport) -> (Vec<Vec<String>>, usize) {
    let mc = &r.monte_carlo;
    let ex = r.exact.as_ref();
    let mut idx: Vec<usize> = (0..mc.assets.len()).collect();
    idx.sort_by(|&i, &j| {
        mc.assets[j]
            .unavailable_min_per_year
            .total_cmp(&mc.assets[i].unavailable_min_per_year)
            .then(i.cmp(&j))
    });
    let hidden = idx.len().saturating_sub(ROWS_SHOWN);
    idx.truncate(ROWS_SHOWN);
    let line = |a: &YearlyAsset, e: Option<&YearlyAsset>| {
        let ci = a.ci95.clone().unwrap_or_default();
        vec![
            a.name.clone(),
            a.kind.clone(),
            format!(
                "{} {}",
                minutes(a.unavailable_min_per_year),
                range(ci.unavailable_min_per_year.0, ci.unavailable_min_per_year.1, minutes)
            ),
            e.map(|e| minutes(e.unavailable_min_per_year))
                .unwrap_or_else(|| "—".into()),
            format!(
                "{} {}",
                fmt_sci(a.p_data_lost_per_year),
                range(ci.p_data_lost_per_year.0, ci.p_data_lost_per_year.1, fmt_sci)
            ),
            e.map(|e| fmt_sci(e.p_data_lost_per_year)).unwrap_or_else(|| "—".into()),
            format!(
                "{} {}",
                minutes(a.acked_msgs_lost_per_year),
                range(ci.acked_msgs_lost_per_year.0, ci.acked_msgs_lost_per_year.1, minutes)
            ),
            e.map(mttdl).unwrap_or_else(|| mttdl(a)),
        ]
    };
    let mut out = vec![line(&mc.meta, ex.map(|e| &e.meta))];
    for i in idx {
        out.push(line(&mc.assets[i], ex.map(|e| &e.assets[i])));
    }
    (out, hidden)
}

const HEADER: [&str; 8] = [
    "asset",
    "kind",
    "unavailable min/yr [95 % CI]",
    "exact",
    "P(data_lost)/yr [95 % CI]",
    "exact",
    "acked msgs lost/yr [95 % CI]",
    "MTTDL (ref.)",
];

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
    s.push_str(&crate::survival::hazards_line());
    s.push('\n');
    s
}

pub fn table_report(r: &SimulateReport, width: u16) -> String {
    let mut s = summary(r);
    let (rows, hidden) = rows(r);
    let mut t = table(width, &HEADER);
    for row in rows {
        t.add_row(row);
    }
    s.push_str(&t.to_string());
    s.push('\n');
    if hidden > 0 {
        s.push_str(&format!("… {hidden} more assets (--format json lists them all)\n"));
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
    let (rows, hidden) = rows(r);
    s.push_str(&md_table(&HEADER, &rows));
    if hidden > 0 {
        s.push_str(&format!("\n… {hidden} more assets (--format json lists them all)\n"));
    }
    s.push_str("\nAssumptions:\n\n");
    for a in &r.monte_carlo.assumptions {
        s.push_str(&format!("- {a}\n"));
    }
    s
}
