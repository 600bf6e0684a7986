//! The whatif report as a terminal table or Markdown (pure: value → text); HTML is in `report::html`.

use super::{md_table, table};
use crate::survival::{self, ScenarioReport, WhatifReport};
use crate::text::count;
use crate::units::{fmt_bytes, fmt_secs};

use super::render::{json_to, Format, Render};

/// Whatif's result as reports: the scenarios, and the site and layout HTML draws them on.
pub struct Whatif<'a> {
    pub report: &'a WhatifReport,
    pub site: &'a crate::site::Site,
    pub planned: &'a crate::plan::PlannedLayout,
}

impl Render for Whatif<'_> {
    const COMMAND: &'static str = "whatif";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html, Format::Csv];

    /// JSON is written as it is made (it grows with assets × scenarios); the rest as one text.
    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let r = self.report;
        match f {
            Format::Json => json_to(r, w),
            Format::Markdown => w.write_all(markdown(r).as_bytes()),
            Format::Csv => w.write_all(&super::csv::whatif(r)),
            Format::Html => w.write_all(super::html::whatif(r, self.site, self.planned).as_bytes()),
            _ => w.write_all(table_report(r, width).as_bytes()),
        }
    }
}

/// Asset rows a single-scenario table shows before summarising the rest.
const TABLE_ROWS: usize = 40;

fn stall(s: &survival::AssetLine) -> String {
    match s.stall_s {
        Some(0.0) => "0".into(),
        Some(x) => format!("≤{x:.0} s"),
        None if s.not_placed.is_some() => format!(
            "never: not created ({} of {} replicas have no eligible server)",
            s.not_placed.unwrap_or(0),
            s.replicas
        ),
        None if s.loss == Some("total") => "never: no replica with the data survives".into(),
        None if s.loss.is_some() => "until peers are removed; the tail may be lost".into(),
        None if s.stall_until.is_empty() => "until restored".into(),
        None => format!("until {}", s.stall_until.join(", ")),
    }
}

/// The acked-loss column: `no`, `yes`, `yes (crash + pause, #7567)`, or `possible (election race)` when a
/// replica holding every write stayed up (see `survival::AckedLoss`).
fn risk(a: &survival::AssetLine) -> String {
    match (a.acked_loss_risk, a.acked_loss_cause, a.acked_loss_likelihood) {
        (false, _, _) => "no".into(),
        (true, Some("crash_plus_pause"), _) => "yes (crash + pause, #7567)".into(),
        (true, _, survival::AckedLoss::Possible) => "possible (election race)".into(),
        (true, _, _) => "yes".into(),
    }
}

fn risk_count(sc: &ScenarioReport) -> usize {
    sc.streams.iter().filter(|a| a.acked_loss_risk).count() + sc.meta_detail.acked_loss_risk as usize
}

fn header(r: &WhatifReport) -> String {
    let mut s = format!(
        "natsplan whatif — site {} — layout {} — sync_interval {}\nplacement: {}\n",
        r.site, r.layout, r.sync_interval, r.placement
    );
    s.push_str(&survival::hazards_line());
    s.push('\n');
    if let Some(sw) = &r.sweep {
        s.push_str(&format!(
            "swept {} of up to {} at once over {} ({}); {} evaluated in full, {}, worst first\n",
            count(sw.combinations as usize, "combination"),
            count(sw.max_failures, "failure"),
            count(sw.domains, "domain"),
            sw.kinds.join(", "),
            count(sw.signatures, "distinct failure signature"),
            match r.scenarios.len() {
                1 => "1 outcome class".to_string(),
                n => format!("{n} outcome classes"),
            }
        ));
    }
    s
}

/// The terminal report.
pub fn table_report(r: &WhatifReport, width: u16) -> String {
    let mut s = header(r);
    if r.sweep.is_some() {
        let mut t = table(
            width,
            &[
                "#",
                "count",
                "worst",
                "meta",
                "assets",
                "acked loss risk",
                "recovery",
                "example",
            ],
        );
        for (i, sc) in r.scenarios.iter().enumerate() {
            t.add_row(vec![
                (i + 1).to_string(),
                sc.count.unwrap_or(1).to_string(),
                sc.worst.as_str().to_string(),
                sc.meta.as_str().to_string(),
                sc.tally(),
                match risk_count(sc) {
                    0 => "no".to_string(),
                    n => format!("yes ({n})"),
                },
                fmt_secs(sc.recovery_s),
                sc.failed.join(" + "),
            ]);
        }
        s.push_str(&t.to_string());
        s.push('\n');
        return s;
    }
    for sc in &r.scenarios {
        s.push_str(&format!(
            "\nfailed: {} — worst {}, meta {} (JetStream API {}), recovery {}\n",
            sc.failed.join(" + "),
            sc.worst.as_str(),
            sc.meta.as_str(),
            if sc.api_available { "up" } else { "down" },
            fmt_secs(sc.recovery_s)
        ));
        let mut t = table(width, &["asset", "kind", "status", "write stall", "acked loss risk"]);
        // Large plans: the meta group and the hit assets (worst first), then a count of the rest.
        let mut shown: Vec<&survival::AssetLine> = sc.streams.iter().collect();
        if shown.len() > TABLE_ROWS {
            shown.sort_by_key(|a| std::cmp::Reverse((a.status, a.acked_loss_risk)));
            shown.truncate(TABLE_ROWS);
        }
        for a in std::iter::once(&sc.meta_detail).chain(shown.iter().copied()) {
            t.add_row(vec![
                a.name.clone(),
                a.kind.to_string(),
                a.status.as_str().to_string(),
                stall(a),
                risk(a),
            ]);
        }
        s.push_str(&t.to_string());
        s.push('\n');
        if sc.streams.len() > shown.len() {
            s.push_str(&format!(
                "… {} more assets ({}); --format json lists them all\n",
                sc.streams.len() - shown.len(),
                sc.tally()
            ));
        }
        if !sc.recovery.is_empty() {
            s.push_str("recovery (chains run in parallel):\n");
            for st in &sc.recovery {
                s.push_str(&format!(
                    "  [{}] {} — {}{}\n",
                    st.chain,
                    st.what,
                    fmt_secs(st.seconds),
                    needs(st)
                ));
            }
            for st in &sc.alternatives {
                s.push_str(&format!(
                    "  alternative [{}]: {} — {}{}\n",
                    st.chain,
                    st.what,
                    fmt_secs(st.seconds),
                    needs(st)
                ));
            }
        }
        if !sc.actions.is_empty() {
            s.push_str("actions:\n");
            for (i, a) in sc.actions.iter().enumerate() {
                s.push_str(&format!("  {}. {a}\n", i + 1));
            }
        }
        if !sc.survivors.is_empty() {
            s.push_str("most loaded survivors (expected placement):\n");
            for v in &sc.survivors {
                s.push_str(&format!(
                    "  {}: leaders {:.1} → {:.1}, leader ingest {}/s → {}/s, potential replication out {}/s of {}/s NIC\n",
                    v.server,
                    v.leaders_before,
                    v.leaders_after,
                    fmt_bytes(v.leader_in_bytes_per_s_before),
                    fmt_bytes(v.leader_in_bytes_per_s_after),
                    fmt_bytes(v.potential_out_bytes_per_s),
                    fmt_bytes(v.nic_bytes_per_s)
                ));
            }
        }
    }
    s
}

/// The Markdown report (for a change ticket).
pub fn markdown(r: &WhatifReport) -> String {
    let mut s = format!("## natsplan whatif — {}\n\n", r.layout);
    for line in header(r).lines().skip(1) {
        s.push_str(&format!("{line}\n\n"));
    }
    if r.sweep.is_some() {
        let rows: Vec<Vec<String>> = r
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, sc)| {
                vec![
                    (i + 1).to_string(),
                    sc.count.unwrap_or(1).to_string(),
                    sc.worst.as_str().into(),
                    sc.meta.as_str().into(),
                    sc.tally(),
                    risk_count(sc).to_string(),
                    fmt_secs(sc.recovery_s),
                    format!("`{}`", sc.failed.join(" + ")),
                ]
            })
            .collect();
        s.push_str(&md_table(
            &[
                "#",
                "count",
                "worst",
                "meta",
                "assets",
                "acked loss risk",
                "recovery",
                "example",
            ],
            &rows,
        ));
        return s;
    }
    for sc in &r.scenarios {
        s.push_str(&format!(
            "### `{}`\n\nworst **{}**, meta {}, recovery {}\n\n",
            sc.failed.join(" + "),
            sc.worst.as_str(),
            sc.meta.as_str(),
            fmt_secs(sc.recovery_s)
        ));
        let rows: Vec<Vec<String>> = std::iter::once(&sc.meta_detail)
            .chain(sc.streams.iter())
            .map(|a| {
                vec![
                    a.name.clone(),
                    a.kind.to_string(),
                    a.status.as_str().into(),
                    stall(a),
                    risk(a),
                ]
            })
            .collect();
        s.push_str(&md_table(
            &["asset", "kind", "status", "write stall", "acked loss risk"],
            &rows,
        ));
        s.push('\n');
        for (i, a) in sc.actions.iter().enumerate() {
            s.push_str(&format!("{}. {a}\n", i + 1));
        }
        s.push('\n');
    }
    s
}

/// ` (needs X)` after a step that needs credentials, empty for a wait.
pub(super) fn needs(st: &crate::survival::Step) -> String {
    match st.credentials.label() {
        "" => String::new(),
        l => format!(" (needs {l})"),
    }
}
