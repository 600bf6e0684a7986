//! The verify result value and its exporters (pure functions to bytes): the terminal table, Markdown
//! (BENCH.md), JSON (results.json) and CSV, hyperfine-style.

use super::drift::Drift;
use super::ladder::RowSpec;
use crate::bench::result::{LatencySummary, Losses, RateOutcome};
use crate::monitor::probe::ClusterFacts;
use crate::text::{md_pipes, signed_pct_or_dash, Csv};
use comfy_table::{presets, ContentArrangement, Table};
use serde::Serialize;

/// Where a measured row lands against its prediction's band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowStatus {
    /// Inside the band.
    Inside,
    /// Outside the band but within `--tolerance` of its edge.
    Near,
    /// Outside the band by more than `--tolerance`: the check fails.
    Outside,
    /// Not run on this cluster (the reason says why).
    Skipped,
    /// The run failed (the reason says why); counts as a failed check.
    Error,
    /// Planned only (`--dry-run`).
    Planned,
    /// Run on agents, one of which did not finish its share (`--agents`): the figures cover only what
    /// was reported; counts as a failed check.
    Incomplete,
    /// A signal (SIGINT, SIGTERM) stopped the row mid-run: the figures cover the part that ran and are
    /// never judged against the band (the run exits 130).
    Interrupted,
}

impl RowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Inside => "inside",
            RowStatus::Near => "near",
            RowStatus::Outside => "OUTSIDE",
            RowStatus::Skipped => "skipped",
            RowStatus::Error => "ERROR",
            RowStatus::Planned => "planned",
            RowStatus::Incomplete => "INCOMPLETE",
            RowStatus::Interrupted => "INTERRUPTED",
        }
    }
    pub fn fails(self) -> bool {
        matches!(self, RowStatus::Outside | RowStatus::Error | RowStatus::Incomplete)
    }
}

/// The prediction for a row, as recorded.
#[derive(Debug, Clone, Serialize)]
pub struct RowPrediction {
    pub ops_per_s: f64,
    pub low: f64,
    pub high: f64,
    pub bottleneck: String,
    pub latency_p50_us: f64,
    pub cpu_per_server: f64,
    pub source: String,
    pub scaled: bool,
}

/// What a row measured.
#[derive(Debug, Clone, Serialize)]
pub struct RowMeasured {
    /// The figure compared with the prediction (ops/s; core: published plus received; flood: received).
    pub ops_per_s: f64,
    pub bytes_per_s: f64,
    pub window_s: f64,
    pub latency_us: Option<LatencySummary>,
    pub rate: Option<RateOutcome>,
    pub losses: Option<Losses>,
    /// Average `/varz cpu` (percent of one core) per server over the run.
    pub cpu_percent: Vec<(String, f64)>,
    pub warnings: Vec<String>,
    /// With `--repeat`: (max − min) ÷ median of the runs' rates; `ops_per_s` is the median and the
    /// other figures are those of the median run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// With `--repeat`: every run's rate, in the order they ran.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs_ops_per_s: Vec<f64>,
    /// The client host's load while the picked run ran (`hostload`; absent without procfs). A busy one
    /// (`host.busy`) also adds a warning and marks the measured cell "(busy host)".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<crate::hostload::HostLoad>,
}

/// One row of the report.
#[derive(Debug, Clone, Serialize)]
pub struct RowResult {
    #[serde(flatten)]
    pub spec: RowSpec,
    pub kind: String,
    pub status: RowStatus,
    pub reason: Option<String>,
    pub predicted: Option<RowPrediction>,
    pub measured: Option<RowMeasured>,
    /// measured ÷ predicted − 1.
    pub error: Option<f64>,
    /// With `--agents`: each agent's share of the row and what it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<crate::agent::AgentsRun>,
}

/// Everything a verify run produced.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub generated_at: String,
    pub config: ConfigEcho,
    pub cluster: ClusterFacts,
    pub rows: Vec<RowResult>,
    pub drift: Option<Drift>,
    /// Bytes the ladder writes before replication, and over all replicas.
    pub write_bytes: u64,
    pub write_bytes_replicated: u64,
    pub failed_rows: usize,
    pub notes: Vec<String>,
    /// With `--agents`: the agents used, with their clock offsets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<crate::agent::AgentsSummary>,
    /// A signal stopped the run: the rows before it are complete, the row it hit is `interrupted`, the
    /// rows after it were not run (`skipped`, reason "not run: interrupted").
    pub interrupted: bool,
    /// The client host's load for a second before the first row, and over all the rows (`hostload`;
    /// absent on a dry run or without procfs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_before: Option<crate::hostload::HostLoad>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_during: Option<crate::hostload::HostLoad>,
}

/// The run's configuration (no secrets: servers are shown redacted).
#[derive(Debug, Clone, Serialize)]
pub struct ConfigEcho {
    pub servers: Vec<String>,
    /// How the run connected, without secrets: servers, the kind of auth (`user/password`, `creds`, `nkey`,
    /// `token`...), `tls`, a JetStream API prefix other than `$JS.API`, and the nats CLI context read.
    pub connection: String,
    pub monitors: Vec<String>,
    pub ladder: String,
    pub tolerance: f64,
    pub row_seconds: f64,
    /// Runs per row (the median is judged).
    pub repeat: u32,
    pub max_bytes: Option<u64>,
    pub calibration: String,
    pub site: Option<String>,
    pub layout: Option<String>,
    pub volume: String,
    pub dry_run: bool,
    pub keep: bool,
}

/// Judge a measured figure against a band with a relative tolerance beyond its edges.
pub fn judge(measured: f64, low: f64, high: f64, tolerance: f64) -> RowStatus {
    if measured >= low && measured <= high {
        RowStatus::Inside
    } else if measured >= low * (1.0 - tolerance) && measured <= high * (1.0 + tolerance) {
        RowStatus::Near
    } else {
        RowStatus::Outside
    }
}

fn si(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        "-".into()
    } else if a >= 1e9 {
        format!("{:.2}G", x / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if a >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else if a >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The table's cells for one row.
fn cells(r: &RowResult) -> Vec<String> {
    let p = r.predicted.as_ref();
    let m = r.measured.as_ref();
    let measured = match (m, r.status) {
        (Some(m), _) => {
            let mut s = si(m.ops_per_s);
            if let Some(sp) = m.spread {
                s.push_str(&format!(
                    " (median of {}, spread {:.0}%)",
                    m.runs_ops_per_s.len(),
                    sp * 100.0
                ));
            }
            if let Some(rate) = &m.rate {
                if !rate.sustained {
                    s.push_str(" (not sustained)");
                }
            }
            if m.host.is_some_and(|h| h.busy) {
                s.push_str(" (busy host)");
            }
            s
        }
        (None, _) => "-".into(),
    };
    // Busiest server's /varz CPU over the run, beside the predicted CPU of the busiest server.
    let measured_cpu = m
        .map(|m| m.cpu_percent.iter().map(|c| c.1).fold(0.0f64, f64::max))
        .filter(|c| *c > 0.0)
        .map(|c| format!("{c:.0}%"))
        .unwrap_or_else(|| "-".into());
    let cpu = match p {
        Some(p) if r.status != RowStatus::Skipped => format!("{measured_cpu} / {:.0}%", p.cpu_per_server * 100.0),
        _ => measured_cpu,
    };
    let p99 = m
        .and_then(|m| m.latency_us.as_ref())
        .map(|l| format!("{:.0}", l.p99))
        .unwrap_or_else(|| "-".into());
    vec![
        r.spec.id.clone(),
        r.spec.msgs.to_string(),
        p.map(|p| si(p.ops_per_s)).unwrap_or_else(|| "-".into()),
        p.map(|p| format!("{}–{}", si(p.low), si(p.high)))
            .unwrap_or_else(|| "-".into()),
        measured,
        signed_pct_or_dash(r.error),
        r.status.as_str().to_string(),
        p99,
        cpu,
        consumer_need(r, r.reason.clone().or_else(|| p.map(|p| p.bottleneck.clone()))),
    ]
}

/// The last cell: the reason or bottleneck, and for a row of the site's consumers what each durable must
/// keep up with (the stream's publish rate: every durable reads every message).
fn consumer_need(r: &RowResult, why: Option<String>) -> String {
    let why = why.unwrap_or_default();
    match &r.spec.consumer_of {
        Some(c) => format!(
            "{}: each durable needs {}/s{}",
            c.stream,
            si(c.required_per_s),
            if why.is_empty() {
                String::new()
            } else {
                format!("; {why}")
            }
        ),
        None => why,
    }
}

const HEADER: [&str; 10] = [
    "row",
    "count",
    "predicted/s",
    "band",
    "measured/s",
    "error",
    "status",
    "p99 µs",
    "cpu meas/pred",
    "bottleneck / reason",
];

fn facts_lines(r: &VerifyReport) -> Vec<String> {
    let c = &r.cluster;
    let mut v = vec![format!(
        "cluster: {} JetStream server(s) ({}), nats-server {}, sync {}{}, max replicas R{}",
        c.jetstream_servers,
        c.servers.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", "),
        c.version.as_deref().unwrap_or("unknown"),
        c.sync,
        if c.store_on_tmpfs { " (store on tmpfs)" } else { "" },
        c.max_replicas
    )];
    v.push(format!(
        "writes: {} before replication, {} over all replicas; calibration: {}; volume: {}",
        crate::units::fmt_bytes(r.write_bytes as f64),
        crate::units::fmt_bytes(r.write_bytes_replicated as f64),
        r.config.calibration,
        r.config.volume
    ));
    for h in &c.hazards {
        v.push(format!("hazard (nats-server {}): {}", h.version, h.text));
    }
    for n in c.notes.iter().chain(&r.notes) {
        v.push(format!("note: {n}"));
    }
    if let Some(a) = &r.agents {
        v.extend(crate::agent::report::summary_lines(a));
    }
    v
}

/// Rows run on agents that did not complete: each agent's part.
fn incomplete_lines(r: &VerifyReport) -> Vec<String> {
    let mut v = Vec::new();
    for row in r.rows.iter().filter(|x| x.status == RowStatus::Incomplete) {
        if let Some(a) = &row.agents {
            v.push(format!("row {} is INCOMPLETE:", row.spec.id));
            v.extend(
                crate::agent::report::row_lines(a)
                    .into_iter()
                    .filter(|l| l.starts_with("  ")),
            );
        }
    }
    v
}

fn drift_lines(r: &VerifyReport) -> Vec<String> {
    let Some(d) = &r.drift else { return vec![] };
    let mut v = vec![d.summary()];
    for i in &d.items {
        v.push(format!(
            "  {} {}: planned {}, live {}",
            i.what, i.subject, i.planned, i.live
        ));
    }
    for n in &d.notes {
        v.push(format!("  note: {n}"));
    }
    v
}

fn summary_line(r: &VerifyReport) -> String {
    let ran = r
        .rows
        .iter()
        .filter(|x| !matches!(x.status, RowStatus::Skipped | RowStatus::Planned))
        .count();
    if r.config.dry_run {
        format!("dry run: {} row(s) planned, nothing written", r.rows.len())
    } else if r.interrupted {
        let done = r
            .rows
            .iter()
            .filter(|x| {
                !matches!(
                    x.status,
                    RowStatus::Skipped | RowStatus::Planned | RowStatus::Interrupted
                )
            })
            .count();
        format!(
            "INTERRUPTED by a signal: {done} row(s) finished, {} outside their band by more than {:.0}%; the row it hit is INTERRUPTED, later rows not run",
            r.failed_rows,
            r.config.tolerance * 100.0
        )
    } else {
        let incomplete = r.rows.iter().filter(|x| x.status == RowStatus::Incomplete).count();
        format!(
            "{ran} row(s) ran, {} outside their band by more than {:.0}%{}",
            r.failed_rows.saturating_sub(incomplete),
            r.config.tolerance * 100.0,
            if incomplete > 0 {
                format!(", {incomplete} INCOMPLETE (an agent did not finish its share)")
            } else {
                String::new()
            }
        )
    }
}

/// The terminal table's header: `HEADER` without its last column (the reasons follow the table, one line
/// per row, so the figures never wrap inside a word), the two-word headers on two lines.
const TABLE_HEADER: [&str; 9] = [
    "row",
    "count",
    "predicted/s",
    "band",
    "measured/s",
    "error",
    "status",
    "p99\nµs",
    "cpu\nmeas/pred",
];

/// The measured cell (a figure and its notes in words) is the only one that wraps, at spaces; it keeps at
/// least this many characters.
const MEASURED_MIN: usize = 10;

/// Break a row id at its `-` joints into lines of at most `max` characters (a piece longer than `max`
/// stays whole): ids are copied from tables, so they break where a reader sees the joint, never inside
/// a word.
fn break_id(id: &str, max: usize) -> String {
    let mut lines: Vec<String> = vec![String::new()];
    for piece in id.split_inclusive('-') {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.chars().count() + piece.chars().count() > max {
            lines.push(piece.to_string());
        } else {
            last.push_str(piece);
        }
    }
    lines.join("\n")
}

/// The terminal table: every figure whole at any width the figures fit in (issue 39: at 120 columns the
/// ten-column table wrapped row ids, bands and reasons inside words), reasons and bottlenecks listed below.
pub fn table(r: &VerifyReport, width: u16) -> Vec<u8> {
    use comfy_table::ColumnConstraint;
    let chars = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut rows: Vec<Vec<String>> = r.rows.iter().map(cells).collect();
    let reasons: Vec<(String, String)> = rows
        .iter_mut()
        .map(|c| (c[0].clone(), c.pop().unwrap_or_default()))
        .collect();
    // Each column's widest cell or header line.
    let widest = |i: usize, rows: &[Vec<String>]| {
        rows.iter()
            .map(|c| chars(&c[i]))
            .chain([chars(TABLE_HEADER[i])])
            .max()
            .unwrap_or(0)
    };
    let n = TABLE_HEADER.len();
    let overhead = 3 * n + 1;
    let others: usize = (1..n).filter(|&i| i != 4).map(|i| widest(i, &rows)).sum();
    // What the row ids may take: the rest after the figures and the narrowest measured column.
    let id_room = usize::from(width)
        .saturating_sub(overhead + others + MEASURED_MIN)
        .max(8);
    if widest(0, &rows) > id_room {
        for c in &mut rows {
            c[0] = break_id(&c[0], id_room);
        }
    }
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(TABLE_HEADER.to_vec());
    for row in rows {
        t.add_row(row);
    }
    for i in (0..n).filter(|&i| i != 4) {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    let mut out = String::new();
    for l in facts_lines(r) {
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let why: Vec<&(String, String)> = reasons.iter().filter(|(_, w)| !w.is_empty()).collect();
    if !why.is_empty() {
        out.push_str("bottleneck / reason:\n");
        for (id, w) in why {
            out.push_str(&format!("  {id}: {w}\n"));
        }
    }
    for l in incomplete_lines(r).iter().chain(&drift_lines(r)) {
        out.push_str(l);
        out.push('\n');
    }
    out.push_str(&summary_line(r));
    out.push('\n');
    out.into_bytes()
}

/// BENCH.md.
pub fn markdown(r: &VerifyReport) -> Vec<u8> {
    let mut o = String::from("# natsplan verify\n\n");
    o.push_str(&format!("Generated {} UTC.\n\n", r.generated_at));
    for l in facts_lines(r) {
        o.push_str(&format!("- {}\n", md_pipes(&l)));
    }
    o.push('\n');
    o.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    o.push_str(&format!("|{}\n", "---|".repeat(HEADER.len())));
    for row in &r.rows {
        let c: Vec<String> = cells(row).iter().map(|c| md_pipes(c)).collect();
        o.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    o.push('\n');
    for l in incomplete_lines(r) {
        o.push_str(&format!("- {}\n", md_pipes(l.trim())));
    }
    let d = drift_lines(r);
    if !d.is_empty() {
        o.push_str("## Drift\n\n");
        for l in d {
            o.push_str(&format!("- {}\n", md_pipes(l.trim())));
        }
        o.push('\n');
    }
    o.push_str(&summary_line(r));
    o.push('\n');
    o.into_bytes()
}

/// results.json.
pub fn json(r: &VerifyReport) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}").into_bytes());
    v.push(b'\n');
    v
}

/// verify's results CSV columns (docs/verify.md).
pub const CSV_COLUMNS: [&str; 20] = [
    "row",
    "kind",
    "label",
    "msgs",
    "size_bytes",
    "replicas",
    "workers",
    "rate_per_s",
    "predicted_per_s",
    "band_low",
    "band_high",
    "measured_per_s",
    "error",
    "status",
    "p50_us",
    "p99_us",
    "max_cpu_percent",
    "reason",
    "runs",
    "spread",
];

/// One CSV record per row, under a header (LF line ends).
pub fn csv(r: &VerifyReport) -> Vec<u8> {
    let mut o = Csv::lf();
    o.record(CSV_COLUMNS);
    let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_default();
    for row in &r.rows {
        let p = row.predicted.as_ref();
        let m = row.measured.as_ref();
        let lat = m.and_then(|m| m.latency_us);
        let cols = [
            row.spec.id.clone(),
            row.kind.clone(),
            row.spec.label.clone(),
            row.spec.msgs.to_string(),
            row.spec.size_bytes.to_string(),
            row.spec.replicas.to_string(),
            row.spec.workers.to_string(),
            f(row.spec.rate_per_s),
            f(p.map(|p| p.ops_per_s)),
            f(p.map(|p| p.low)),
            f(p.map(|p| p.high)),
            f(m.map(|m| m.ops_per_s)),
            f(row.error),
            row.status.as_str().to_string(),
            f(lat.map(|l| l.p50)),
            f(lat.map(|l| l.p99)),
            f(m.map(|m| m.cpu_percent.iter().map(|c| c.1).fold(0.0f64, f64::max))),
            row.reason.clone().unwrap_or_default(),
            m.map(|m| m.runs_ops_per_s.len().max(1).to_string()).unwrap_or_default(),
            f(m.and_then(|m| m.spread)),
        ];
        o.record(cols);
    }
    o.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judging_uses_the_band_then_the_tolerance() {
        assert_eq!(judge(100.0, 50.0, 200.0, 0.1), RowStatus::Inside);
        assert_eq!(judge(46.0, 50.0, 200.0, 0.1), RowStatus::Near);
        assert_eq!(judge(44.0, 50.0, 200.0, 0.1), RowStatus::Outside);
        assert_eq!(judge(219.0, 50.0, 200.0, 0.1), RowStatus::Near);
        assert_eq!(judge(221.0, 50.0, 200.0, 0.1), RowStatus::Outside);
        assert_eq!(judge(0.0, 50.0, 200.0, 0.5), RowStatus::Outside);
        assert!(RowStatus::Outside.fails() && RowStatus::Error.fails() && !RowStatus::Near.fails());
    }

    #[test]
    fn an_incomplete_row_fails_the_check() {
        assert!(RowStatus::Incomplete.fails());
        assert_eq!(RowStatus::Incomplete.as_str(), "INCOMPLETE");
        assert_eq!(serde_json::to_value(RowStatus::Incomplete).unwrap(), "incomplete");
    }

    #[test]
    fn the_csv_header_is_the_one_results_files_always_had() {
        let mut c = Csv::lf();
        c.record(CSV_COLUMNS);
        assert_eq!(
            String::from_utf8(c.into_bytes()).unwrap(),
            "row,kind,label,msgs,size_bytes,replicas,workers,rate_per_s,predicted_per_s,band_low,band_high,\
             measured_per_s,error,status,p50_us,p99_us,max_cpu_percent,reason,runs,spread\n"
        );
    }
}
