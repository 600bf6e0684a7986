//! `natsplan check --plan plan.json (--monitor URLS | --lab DIR)`: one read-only pass over the cluster's
//! monitoring endpoints, graded against the plan (`check::grade`), printed as a table, JSON, Nagios plugin
//! output or Prometheus text. Exit codes are a Nagios plugin's (0 ok, 1 warning, 2 critical, 3 unknown),
//! and, unlike every other command, bad input and an unreachable cluster exit 3, never 2: monitoring
//! systems read 2 as "critical" (DESIGN's exit-code table; docs/check.md).

use crate::check::{self, Expected, Thresholds};
use crate::cli::{Format, Global, PlanArgs};
use crate::error::{bad_input, cannot_run, Failure, Outcome};
use anyhow::anyhow;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The plan saved by `natsplan design SITE --layout ID --save FILE` (default: the plan a `--lab`
    /// was started from with `lab up --plan FILE`).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// The layout of the plan the cluster runs (default: the saved plan's choice, else its best).
    #[arg(long, value_name = "ID")]
    pub layout: Option<String>,
    /// Monitoring URLs of the servers (http://host:8222), comma separated: give every server's, a silent
    /// one is graded critical.
    #[arg(long, value_delimiter = ',', value_name = "URLS", required_unless_present = "lab")]
    pub monitor: Vec<String>,
    /// Check a lab from `natsplan lab up`: its lab.json names the servers and their monitors.
    #[arg(long, value_name = "DIR", conflicts_with = "monitor")]
    pub lab: Option<PathBuf>,
    /// A stream replica this many operations behind its leader is critical (natscli `check stream
    /// --peer-lag-critical`). Default: per stream, what its planned rate brings in --peer-seen-critical,
    /// at least natscli's 200.
    #[arg(long, value_name = "OPS")]
    pub peer_lag_critical: Option<u64>,
    /// A stream replica its leader has not heard from for this long is critical (natscli `check stream
    /// --peer-seen-critical`).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_dur)]
    pub peer_seen_critical: Duration,
    /// A meta group peer this many operations behind is critical (natscli `check meta --lag-critical`).
    #[arg(long, value_name = "OPS", default_value_t = check::NATSCLI_LAG_CRITICAL)]
    pub lag_critical: u64,
    /// A meta group peer not heard from for this long is critical (natscli `check meta --seen-critical`).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_dur)]
    pub seen_critical: Duration,
    /// Store use warning, percent of each server's max_file_store (natscli `check jetstream
    /// --store-warn`, there per account).
    #[arg(long, value_name = "PCT", default_value_t = 75.0, value_parser = parse_pct)]
    pub store_warn: f64,
    /// Store use critical, percent of each server's max_file_store (natscli `--store-critical`).
    #[arg(long, value_name = "PCT", default_value_t = 90.0, value_parser = parse_pct)]
    pub store_critical: f64,
    /// Memory store use warning, percent of max_memory_store (natscli `--mem-warn`, there per account).
    #[arg(long, value_name = "PCT", default_value_t = 75.0, value_parser = parse_pct)]
    pub mem_warn: f64,
    /// Memory store use critical, percent of max_memory_store (natscli `--mem-critical`).
    #[arg(long, value_name = "PCT", default_value_t = 90.0, value_parser = parse_pct)]
    pub mem_critical: f64,
    /// HA assets (RAFT groups) per server above which to warn; default: what the plan places there.
    #[arg(long, value_name = "N")]
    pub ha_assets_warn: Option<u64>,
    /// HA assets per server above which it is critical (nats audit CLUSTER_003: 1000; the plan's count
    /// when it places more and --ha-assets-warn is not given).
    #[arg(long, value_name = "N", default_value_t = check::AUDIT_HA_ASSETS)]
    pub ha_assets_critical: u64,
    /// How long to wait for each monitoring endpoint.
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_dur)]
    pub timeout: Duration,
}

fn parse_dur(s: &str) -> Result<Duration, String> {
    crate::units::parse_duration(s)
}

fn parse_pct(s: &str) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage; e.g. 75"))?;
    if !(0.0..=100.0).contains(&x) {
        return Err(format!("{s} is not within 0..100"));
    }
    Ok(x)
}

/// The formats check writes.
pub const FORMATS: &[&str] = &["table", "json", "nagios", "prometheus"];

/// Whether `args` (the whole command line, program name first) run `check`: the first word that is not
/// an option nor a global option's value. A parse error of `check` exits 3, not clap's 2.
pub fn is_check_command(args: &[std::ffi::OsString]) -> bool {
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        let a = a.to_string_lossy();
        if ["--format", "--models", "--width"].contains(&a.as_ref()) {
            it.next();
            continue;
        }
        if a.starts_with('-') {
            continue;
        }
        return a == "check";
    }
    false
}

pub fn run(g: &Global, a: CheckArgs) -> Result<Outcome, Failure> {
    let format = super::format(g);
    let result = run_inner(g, a, format);
    // Nagios shows a plugin's first stdout line: a check that could not run says UNKNOWN there too.
    if let (Err(e), Format::Nagios) = (&result, format) {
        let first = e.render().lines().next().unwrap_or_default().replace('|', "/");
        let _ = super::emit_stdout(format!("NATSPLAN CHECK UNKNOWN: {first}\n").as_bytes());
    }
    // Bad input exits 3 (unknown) for check: 2 means critical to a monitoring system.
    result.map_err(|e| match e {
        Failure::BadInput(e) => Failure::CannotRun(e),
        other => other,
    })
}

fn run_inner(g: &Global, a: CheckArgs, format: Format) -> Result<Outcome, Failure> {
    if !matches!(
        format,
        Format::Table | Format::Json | Format::Nagios | Format::Prometheus
    ) {
        return Err(super::unsupported_format("check", format, FORMATS));
    }
    if a.store_warn > a.store_critical || a.mem_warn > a.mem_critical {
        return Err(bad_input(anyhow!(
            "--store-warn/--mem-warn must not be above --store-critical/--mem-critical"
        )));
    }
    for m in &a.monitor {
        if !m.starts_with("http://") {
            return Err(bad_input(anyhow!(
                "--monitor '{}': give an http:// URL of a server's monitoring port, e.g. http://127.0.0.1:8222",
                crate::monitor::shown(m)
            )));
        }
    }
    let (monitors, lab_plan): (Vec<(String, Option<String>)>, Option<PathBuf>) = match &a.lab {
        Some(dir) => {
            let st = super::lab_state(dir)?;
            if st.nodes.is_empty() {
                return Err(bad_input(anyhow!("--lab {}: lab.json lists no servers", dir.display())));
            }
            (
                st.nodes
                    .iter()
                    .map(|n| (n.monitor_url(), Some(n.name.clone())))
                    .collect(),
                st.plan.and_then(|p| p.plan),
            )
        }
        None => (a.monitor.iter().map(|m| (m.clone(), None)).collect(), None),
    };
    let plan_file = a.plan.clone().or(lab_plan).ok_or_else(|| {
        bad_input(anyhow!(
            "check needs the plan: --plan FILE, saved by `natsplan design SITE --layout ID --save FILE`"
        ))
    })?;
    let pa = PlanArgs {
        plan: Some(plan_file),
        ..PlanArgs::default()
    };
    let (inputs, mut plan) = super::load_plan(g, &pa, None)?;
    let id = inputs.layout(&plan, a.layout.as_deref())?.id.clone();
    inputs.expand(&mut plan, Some(&id))?;
    let planned_assets = plan.layout(&id).map(|l| l.assets.len()).unwrap_or(0);
    if planned_assets > MAX_ASSETS {
        return Err(bad_input(anyhow!(
            "layout {id} plans {planned_assets} streams, buckets, stores and consumers; check grades at most \
             {MAX_ASSETS} (one item each, more than a monitoring system shows): check a plan of fewer assets"
        )));
    }
    let exp = Expected::from_plan(&plan, &id).map_err(bad_input)?;
    let th = Thresholds {
        peer_lag_critical: a.peer_lag_critical,
        peer_seen_critical: a.peer_seen_critical,
        lag_critical: a.lag_critical,
        seen_critical: a.seen_critical,
        store_warn: a.store_warn,
        store_critical: a.store_critical,
        mem_warn: a.mem_warn,
        mem_critical: a.mem_critical,
        ha_assets_warn: a.ha_assets_warn,
        ha_assets_critical: a.ha_assets_critical,
    };
    let obs = crate::monitor::observe::observe(&monitors, a.timeout);
    if obs.servers.is_empty() {
        let why: Vec<String> = obs
            .unreachable
            .iter()
            .map(|(u, _, e)| format!("{} ({e})", crate::monitor::shown(u)))
            .collect();
        return Err(cannot_run(anyhow!(
            "no monitoring endpoint answered: {}; is the cluster up, and are these its monitor ports?",
            why.join("; ")
        )));
    }
    if let Some(e) = check::other_cluster(&exp, &obs) {
        return Err(cannot_run(anyhow!(e)));
    }
    let rep = check::grade(&exp, &obs, &th);
    let bytes = match format {
        Format::Json => crate::report::check::json(&rep),
        Format::Nagios => crate::report::check::nagios(&rep),
        Format::Prometheus => crate::report::check::prometheus(&rep),
        _ => crate::report::check::table(&rep, super::width(g)),
    };
    super::emit_stdout(&bytes)?;
    Ok(Outcome::Exit(rep.exit_code))
}

/// Assets one check grades at most (the plan's assets, one or more items each).
pub const MAX_ASSETS: usize = 1_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_word_is_found_past_global_options() {
        let v = |s: &[&str]| s.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        assert!(is_check_command(&v(&["natsplan", "check", "--plan", "x"])));
        assert!(is_check_command(&v(&["natsplan", "--format", "nagios", "check"])));
        assert!(is_check_command(&v(&["natsplan", "--width=80", "check"])));
        assert!(!is_check_command(&v(&["natsplan", "--format", "check", "design"])));
        assert!(!is_check_command(&v(&["natsplan", "verify", "check"])));
        assert!(!is_check_command(&v(&["natsplan"])));
    }
}
