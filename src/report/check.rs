//! Renderers of `natsplan check`'s report: a table for people, JSON (the value itself), a Nagios plugin's
//! output (one status line with performance data, then one line per item that is not ok) and Prometheus
//! text in the `natsplan_check_` namespace. Nothing here grades: `check::grade` did.

use super::render::{Format, Render};
use crate::check::{CheckReport, Health, Item};

impl Render for CheckReport {
    const COMMAND: &'static str = "check";
    const FORMATS: &'static [Format] = &[Format::Table, Format::Json, Format::Nagios, Format::Prometheus];

    fn write_to(&self, f: Format, width: u16, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(&match f {
            Format::Json => json(self),
            Format::Nagios => nagios(self),
            Format::Prometheus => prometheus(self),
            _ => table(self, width),
        })
    }
}

fn upper(s: Health) -> &'static str {
    match s {
        Health::Ok => "OK",
        Health::Warning => "WARNING",
        Health::Critical => "CRITICAL",
        Health::Unknown => "UNKNOWN",
    }
}

/// The items worst first (stable within a status).
fn worst_first(r: &CheckReport) -> Vec<&Item> {
    let mut v: Vec<&Item> = r.checks.iter().collect();
    v.sort_by_key(|i| std::cmp::Reverse(i.status));
    v
}

fn summary(r: &CheckReport) -> String {
    let n = |k: &str| r.counts.get(k).copied().unwrap_or(0);
    format!(
        "{} critical, {} warning, {} unknown, {} ok of {} checks (cluster {}, layout {})",
        n("critical"),
        n("warning"),
        n("unknown"),
        n("ok"),
        r.checks.len(),
        r.cluster,
        r.layout
    )
}

/// The terminal table: a status line, then every item worst first, then the notes.
pub fn table(r: &CheckReport, width: u16) -> Vec<u8> {
    let mut t = super::table(width, &["status", "check", "subject", "what was found"]);
    for i in worst_first(r) {
        t.add_row(vec![
            i.status.as_str().to_string(),
            i.check.clone(),
            i.subject.clone(),
            i.message.clone(),
        ]);
    }
    let mut out = format!("check {}: {}\n{t}\n", upper(r.status), summary(r));
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.into_bytes()
}

/// The report as JSON (docs/check.md lists the keys).
pub fn json(r: &CheckReport) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(r).expect("a check report serialises");
    v.push(b'\n');
    v
}

/// A Nagios performance-data label: quoted, with any quote doubled away.
fn perf_label(i: &Item) -> String {
    format!("'{}_{}'", i.check, i.subject)
        .replace('\'', "")
        .replace(['=', ' '], "_")
}

fn perf_num(x: Option<f64>) -> String {
    x.map(|v| format!("{}", (v * 1000.0).round() / 1000.0))
        .unwrap_or_default()
}

/// Nagios plugin output: `NATSPLAN CHECK <STATUS>: <summary>; <first problems> | <perfdata>`, then one
/// line per item that is not ok (the plugin's long output).
pub fn nagios(r: &CheckReport) -> Vec<u8> {
    let bad: Vec<&Item> = worst_first(r).into_iter().filter(|i| i.status != Health::Ok).collect();
    let mut line = format!("NATSPLAN CHECK {}: {}", upper(r.status), summary(r));
    for i in bad.iter().take(3) {
        line.push_str(&format!("; {}", i.message.replace('|', "/")));
    }
    let perf: Vec<String> = r
        .checks
        .iter()
        .filter(|i| i.value.is_some())
        .map(|i| {
            let uom = match i.unit.as_deref() {
                Some("%") => "%",
                Some("bytes") => "B",
                _ => "",
            };
            format!(
                "'{}'={}{uom};{};{}",
                perf_label(i).trim_matches('\''),
                perf_num(i.value),
                perf_num(i.warn),
                perf_num(i.critical)
            )
        })
        .collect();
    if !perf.is_empty() {
        line.push_str(" | ");
        line.push_str(&perf.join(" "));
    }
    line.push('\n');
    for i in bad {
        line.push_str(&format!(
            "{} {} {}: {}\n",
            upper(i.status),
            i.check,
            i.subject,
            i.message.replace('|', "/")
        ));
    }
    line.into_bytes()
}

/// A Prometheus label value: backslash, double quote and newline escaped (text exposition format).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Prometheus text exposition of the report, every series in the `natsplan_check_` namespace.
pub fn prometheus(r: &CheckReport) -> Vec<u8> {
    let mut o = String::new();
    let head = |o: &mut String, name: &str, help: &str| {
        o.push_str(&format!(
            "# HELP natsplan_check_{name} {help}\n# TYPE natsplan_check_{name} gauge\n"
        ));
    };
    let base = format!("cluster=\"{}\",layout=\"{}\"", label(&r.cluster), label(&r.layout));
    head(
        &mut o,
        "status",
        "Worst status of all checks against the plan: 0 ok, 1 warning, 2 critical, 3 unknown (Nagios codes).",
    );
    o.push_str(&format!("natsplan_check_status{{{base}}} {}\n", r.exit_code));
    head(&mut o, "checks", "Checks per status.");
    for (k, n) in &r.counts {
        o.push_str(&format!("natsplan_check_checks{{{base},status=\"{k}\"}} {n}\n"));
    }
    let ids = |i: &Item| format!("{base},check=\"{}\",subject=\"{}\"", label(&i.check), label(&i.subject));
    head(
        &mut o,
        "item_status",
        "Status of one check: 0 ok, 1 warning, 2 critical, 3 unknown.",
    );
    for i in &r.checks {
        o.push_str(&format!(
            "natsplan_check_item_status{{{}}} {}\n",
            ids(i),
            i.status.exit_code()
        ));
    }
    for (name, help, pick) in [
        (
            "item_value",
            "The figure a check measured (its unit label names it).",
            0,
        ),
        ("item_warning", "The figure at which the check warns.", 1),
        ("item_critical", "The figure at which the check is critical.", 2),
    ] {
        let rows: Vec<String> = r
            .checks
            .iter()
            .filter_map(|i| {
                let v = [i.value, i.warn, i.critical][pick]?;
                Some(format!(
                    "natsplan_check_{name}{{{},unit=\"{}\"}} {v}\n",
                    ids(i),
                    label(i.unit.as_deref().unwrap_or(""))
                ))
            })
            .collect();
        if !rows.is_empty() {
            head(&mut o, name, help);
            o.push_str(&rows.concat());
        }
    }
    o.into_bytes()
}

/// What `check --watch` serves while the cluster does not answer: status 3 (unknown) and why.
pub fn prometheus_failed(cluster: &str, layout: &str, why: &str) -> Vec<u8> {
    let base = format!("cluster=\"{}\",layout=\"{}\"", label(cluster), label(layout));
    format!(
        "# HELP natsplan_check_status Worst status of all checks against the plan: 0 ok, 1 warning, 2 critical, \
         3 unknown (Nagios codes).\n# TYPE natsplan_check_status gauge\nnatsplan_check_status{{{base}}} 3\n\
         # HELP natsplan_check_error 1 while the last pass could not read the cluster; the reason is a label.\n\
         # TYPE natsplan_check_error gauge\nnatsplan_check_error{{{base},reason=\"{}\"}} 1\n",
        label(why)
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn report() -> CheckReport {
        let item = |check: &str, subject: &str, status: Health, value: Option<f64>| Item {
            check: check.into(),
            subject: subject.into(),
            status,
            message: format!("{subject} is {}", status.as_str()),
            value,
            warn: value.map(|_| 75.0),
            critical: value.map(|_| 90.0),
            unit: value.map(|_| "%".to_string()),
        };
        let checks = vec![
            item("store", "n1", Health::Ok, Some(12.5)),
            item("unplanned", "hand\"made", Health::Warning, None),
            item("server", "n3", Health::Critical, None),
        ];
        let mut counts = BTreeMap::new();
        for (k, n) in [("ok", 1), ("warning", 1), ("critical", 1), ("unknown", 0)] {
            counts.insert(k.to_string(), n);
        }
        CheckReport {
            cluster: "c1".into(),
            layout: "p1".into(),
            status: Health::Critical,
            exit_code: 2,
            counts,
            thresholds: Default::default(),
            checks,
            notes: vec![],
        }
    }

    #[test]
    fn nagios_output_is_one_status_line_with_perfdata_then_the_problems() {
        let s = String::from_utf8(nagios(&report())).unwrap();
        let mut lines = s.lines();
        let first = lines.next().unwrap();
        assert!(
            first.starts_with("NATSPLAN CHECK CRITICAL: 1 critical, 1 warning"),
            "{first}"
        );
        assert!(first.contains("n3 is critical"), "{first}");
        assert!(first.ends_with(" | 'store_n1'=12.5%;75;90"), "{first}");
        assert_eq!(lines.next(), Some("CRITICAL server n3: n3 is critical"));
        assert!(lines.next().unwrap().starts_with("WARNING unplanned"));
        assert_eq!(lines.next(), None);
    }

    #[test]
    fn prometheus_text_names_every_series_in_the_namespace_with_escaped_labels() {
        let s = String::from_utf8(prometheus(&report())).unwrap();
        assert!(
            s.contains("natsplan_check_status{cluster=\"c1\",layout=\"p1\"} 2\n"),
            "{s}"
        );
        assert!(s.contains(
            "natsplan_check_item_value{cluster=\"c1\",layout=\"p1\",check=\"store\",subject=\"n1\",unit=\"%\"} 12.5\n"
        ));
        assert!(s.contains("subject=\"hand\\\"made\""), "{s}");
        for l in s.lines().filter(|l| !l.starts_with('#')) {
            assert!(l.starts_with("natsplan_check_"), "{l}");
            let v = l.rsplit(' ').next().unwrap();
            assert!(v.parse::<f64>().is_ok(), "{l}");
        }
        // Every series has HELP and TYPE once.
        for name in [
            "status",
            "checks",
            "item_status",
            "item_value",
            "item_warning",
            "item_critical",
        ] {
            assert_eq!(
                s.matches(&format!("# TYPE natsplan_check_{name} gauge\n")).count(),
                1,
                "{name}"
            );
        }
    }
}
