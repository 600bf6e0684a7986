//! `natsplan size`'s reports: a table (the frontier, the cheapest point that meets every requirement, and
//! each bill's best point with its binding constraint) and the JSON contract of docs/size.md.

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
        crate::report::pct(p.free_after_worst_tolerated_failure),
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

/// The table report.
pub fn table(s: &Sizing, width: u16) -> String {
    let unit = s.cost_unit.unit.as_str();
    let mut out = format!(
        "natsplan size — workload {} — {} bills of {} combinations, {} evaluated (budget {}), {} points\n",
        s.workload,
        s.bills,
        s.combinations,
        s.considered,
        s.budget,
        s.candidates.len()
    );
    out.push_str(&format!("cost: {}\n", s.cost_unit.meaning));
    for (why, n) in &s.skipped {
        out.push_str(&format!("skipped {n} combination(s): {why}\n"));
    }
    if s.over_budget > 0 {
        out.push_str(&format!(
            "not evaluated: {} bill(s) beyond the budget (--budget {}; bills go cheapest first); {}\n",
            s.over_budget,
            s.budget,
            if s.cheapest_proven {
                "none of them could be cheaper than the cheapest below"
            } else {
                "one of them may be cheaper than the cheapest below: raise --budget"
            }
        ));
    }
    match s
        .cheapest
        .as_ref()
        .and_then(|id| s.candidates.iter().find(|p| &p.id == id))
    {
        Some(p) => out.push_str(&format!(
            "cheapest that meets every requirement: {} at {} ({})\n",
            p.id,
            money(p.cost.total, unit),
            split(p, unit)
        )),
        None => out.push_str("cheapest that meets every requirement: none of the evaluated points meets them\n"),
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
    for p in firsts {
        t.add_row(row(p, unit));
    }
    out.push_str(&t.0.to_string());
    out.push('\n');
    for b in &s.invalid {
        out.push_str(&format!("error (a bug in size, please report): {b}\n"));
    }
    out.push_str("\nassumptions:\n");
    for a in &s.assumptions {
        out.push_str(&format!("  - {a}\n"));
    }
    out.push_str(
        "writes survive r/a/s/d: racks/arrays/servers/disks that may fail at once with every stream still taking \
         writes (design's); free after failure: free on the fullest server after the worst tolerated failure; \
         compare a point with `natsplan design SITE --layout LAYOUT` on its site (--out DIR writes them).\n",
    );
    out
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
