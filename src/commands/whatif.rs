//! `natsplan whatif SITE.yaml --fail rack:A ...` / `--all K`: what a layout survives, scenario by scenario
//! or over every combination of up to K failures; the rendering of the whatif report (pure: value → bytes).

use super::design::{chosen_layout, load_site};
use super::{emit_stdout, format, unsupported_format, width};
use crate::cli::{Format, Global};
use crate::error::{bad_input, Failure, Outcome};
use crate::report::{md_table, table};
use crate::survival::{self, Domain, DomainKind, Model, ScenarioReport, Status, WhatifReport};
use crate::units::{fmt_bytes, fmt_secs};
use std::path::PathBuf;

/// Combinations beyond this are refused: the sweep would not finish in reasonable time.
const MAX_COMBINATIONS: u64 = 200_000_000;

/// Asset rows a single-scenario table shows before summarising the rest.
const TABLE_ROWS: usize = 40;

#[derive(Debug, clap::Args)]
pub struct WhatifArgs {
    /// The site file.
    pub site: PathBuf,
    /// The layout to test (an id from `natsplan design`); default: the top-ranked one.
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Failed domains of one scenario, e.g. `rack:A`, `disk:A1/2`, `process:n1` (repeatable).
    #[arg(long = "fail", value_name = "SELECTOR", num_args = 1.., conflicts_with = "all")]
    pub fail: Vec<String>,
    /// Every combination of 1..=K simultaneous failures over the chosen kinds, aggregated by outcome.
    #[arg(long, value_name = "K")]
    pub all: Option<usize>,
    /// Domain kinds for --all, comma-separated (default: all): rack, array, server, disk, power, net,
    /// process, pause, wipe, full, host, pdu.
    #[arg(long, value_delimiter = ',', value_name = "KINDS")]
    pub kinds: Vec<String>,
    /// Exit 1 when any scenario reaches this outcome.
    #[arg(long, value_enum, value_name = "OUTCOME")]
    pub fail_on: Option<FailOn>,
}

/// `--fail-on` conditions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum FailOn {
    Unavailable,
    DataLost,
    AckedLossRisk,
}

pub fn run(g: &Global, a: WhatifArgs) -> Result<Outcome, Failure> {
    let fmt = format(g);
    if !matches!(fmt, Format::Table | Format::Json | Format::Markdown | Format::Html) {
        return Err(unsupported_format(
            "whatif",
            fmt,
            &["table", "json", "markdown", "html"],
        ));
    }
    if a.fail.is_empty() && a.all.is_none() {
        return Err(bad_input(anyhow::anyhow!(
            "nothing to test: give --fail SELECTOR (e.g. --fail rack:A) or --all K (e.g. --all 2)"
        )));
    }
    if a.all == Some(0) {
        return Err(bad_input(anyhow::anyhow!(
            "--all 0 tests no failure; use --all 1 or more"
        )));
    }
    if !a.kinds.is_empty() && a.all.is_none() {
        return Err(bad_input(anyhow::anyhow!(
            "--kinds only applies to --all K; with --fail, name the domains themselves"
        )));
    }
    let kinds: Vec<DomainKind> = if a.kinds.is_empty() {
        DomainKind::ALL.to_vec()
    } else {
        let mut v = Vec::new();
        for k in &a.kinds {
            let k = DomainKind::parse(k).map_err(|e| bad_input(anyhow::anyhow!("--kinds: {e}")))?;
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    };
    let (site, cat) = load_site(g, &a.site)?;
    let plan = crate::plan::build(&site, &cat);
    let planned = chosen_layout(&plan, a.layout.as_deref(), &a.site)?;
    let layout = &planned.layout;
    let model = Model::new(&site, layout);
    let report = if let Some(k) = a.all {
        let n: usize = kinds.iter().map(|&kd| Domain::universe(kd, &site, layout).len()).sum();
        let c = survival::combinations(n, k);
        if c > MAX_COMBINATIONS {
            return Err(bad_input(anyhow::anyhow!(
                "--all {k} over {n} domains is {c} combinations (limit {MAX_COMBINATIONS}); use a smaller K or fewer \
                 --kinds (e.g. --kinds rack,array,server)"
            )));
        }
        let sw = survival::sweep(&model, &kinds, k);
        survival::report_sweep(&model, &cat, &sw)
    } else {
        let mut failed = Vec::new();
        let mut errors = Vec::new();
        for sel in &a.fail {
            match Domain::parse(sel, &site) {
                Ok(d) => {
                    if !failed.contains(&d) {
                        failed.push(d)
                    }
                }
                Err(e) => errors.push(format!("--fail {e}")),
            }
        }
        if !errors.is_empty() {
            return Err(bad_input(anyhow::anyhow!(errors.join("\n"))));
        }
        let sc = model.evaluate(&failed);
        survival::report_scenarios(&model, &cat, &[sc])
    };
    let bytes = match fmt {
        Format::Json => {
            let mut v = serde_json::to_vec_pretty(&report).expect("a report always serialises");
            v.push(b'\n');
            v
        }
        Format::Markdown => markdown(&report).into_bytes(),
        Format::Html => crate::report::html::whatif(&report, &site, planned).into_bytes(),
        _ => table_report(&report, width(g)).into_bytes(),
    };
    emit_stdout(&bytes)?;
    let hit = match a.fail_on {
        None => None,
        Some(FailOn::Unavailable) => report.reaches(Status::Unavailable).then_some("unavailable"),
        Some(FailOn::DataLost) => report.reaches(Status::DataLost).then_some("data_lost"),
        Some(FailOn::AckedLossRisk) => report.any_acked_loss_risk().then_some("acked_loss_risk"),
    };
    Ok(match hit {
        Some(what) => Outcome::CheckFailed(format!("a scenario reaches {what} (--fail-on {what})")),
        None => Outcome::Ok,
    })
}

fn stall(s: &survival::StreamLine) -> String {
    match s.stall_s {
        Some(0.0) => "0".into(),
        Some(x) => format!("≤{x:.0} s"),
        None if s.stall_until.is_empty() => "until restored".into(),
        None => format!("until {}", s.stall_until.join(", ")),
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
    if let Some(sw) = &r.sweep {
        s.push_str(&format!(
            "swept {} combinations of 1..={} failures over {} domains ({}); {} distinct signatures evaluated, {} \
             outcomes, worst first\n",
            sw.combinations,
            sw.max_failures,
            sw.domains,
            sw.kinds.join(","),
            sw.signatures,
            r.scenarios.len()
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
            "\nfailed: {} — worst {}, meta {}, recovery {}\n",
            sc.failed.join(" + "),
            sc.worst.as_str(),
            sc.meta.as_str(),
            fmt_secs(sc.recovery_s)
        ));
        let mut t = table(width, &["asset", "kind", "status", "write stall", "acked loss risk"]);
        // Large plans: the meta group and the hit assets (worst first), then a count of the rest.
        let mut shown: Vec<&survival::StreamLine> = sc.streams.iter().collect();
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
                if a.acked_loss_risk { "yes" } else { "no" }.to_string(),
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
                s.push_str(&format!("  [{}] {} — {}\n", st.chain, st.what, fmt_secs(st.seconds)));
            }
            for st in &sc.alternatives {
                s.push_str(&format!(
                    "  alternative [{}]: {} — {}\n",
                    st.chain,
                    st.what,
                    fmt_secs(st.seconds)
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
                    a.kind.into(),
                    a.status.as_str().into(),
                    stall(a),
                    if a.acked_loss_risk { "yes" } else { "no" }.into(),
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
