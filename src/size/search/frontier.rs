//! Which constraint binds a sized layout, whether it meets the target, and the cost–capacity frontier
//! over the searched points. Moved out of size/search.rs whole.

use super::*;

/// Whether a layout meets every requirement: design's verdict recommended or acceptable, every asset
/// placed, and no tolerance requirement binding (its `binding`).
pub fn meets(l: &PlannedLayout, binding: Option<&Binding>) -> bool {
    l.verdict <= Verdict::Acceptable && l.not_placed.is_none() && binding.is_none_or(|b| b.kind != "tolerance")
}

fn short(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.3} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.3} k", x / 1e3)
    } else {
        format!("{x:.3}")
    }
}

/// Every constraint design computed for the layout, as demand and capacity; the one with the lowest
/// capacity ÷ demand binds. A tolerance requirement counts only when it is not met (met, it is a floor,
/// not a margin).
pub fn constraints(l: &PlannedLayout, required: &Tolerance) -> Vec<Binding> {
    let mut out = Vec::new();
    if let Some(np) = &l.not_placed {
        out.push(Binding {
            kind: "placement".into(),
            demand: f64::from(np.replicas),
            capacity: f64::from(np.placeable),
            unit: "servers".into(),
            text: format!(
                "placement of {}: {} of {} replicas have an eligible server",
                np.first, np.placeable, np.replicas
            ),
        });
    }
    let m = required;
    for (what, need, got) in [
        ("rack", m.racks, l.tolerates.racks),
        ("array", m.arrays, l.tolerates.arrays),
        ("server", m.servers, l.tolerates.servers),
        ("disk", m.disks, l.tolerates.disks),
    ] {
        if need > got {
            out.push(Binding {
                kind: "tolerance".into(),
                demand: f64::from(need),
                capacity: f64::from(got),
                unit: format!("{what}s"),
                text: format!("{what} outage: writes survive {got} of the {need} {what}(s) policy.min_tolerated asks"),
            });
        }
    }
    if let Some(f) = &l.capacity.fullest_server {
        out.push(Binding {
            kind: "capacity".into(),
            demand: f.needed_bytes as f64 / TIB,
            capacity: f.usable_bytes as f64 / TIB,
            unit: "TiB".into(),
            text: format!(
                "capacity of {}: {:.2} of {:.2} TiB",
                f.name,
                f.needed_bytes as f64 / TIB,
                f.usable_bytes as f64 / TIB
            ),
        });
    }
    if let Some(a) = &l.capacity.after_failure {
        if let Some(f) = &a.fullest_server {
            out.push(Binding {
                kind: "capacity_after_failure".into(),
                demand: f.needed_bytes as f64 / TIB,
                capacity: f.usable_bytes as f64 / TIB,
                unit: "TiB".into(),
                text: format!(
                    "capacity after {} on {}: {:.2} of {:.2} TiB",
                    a.failed.join(" + "),
                    f.name,
                    f.needed_bytes as f64 / TIB,
                    f.usable_bytes as f64 / TIB
                ),
            });
        }
    }
    if let Some(p) = &l.predicted {
        // Per asset only (a layout kept per class gives no throughput binding, as before the lists moved
        // to `plan::Detail`).
        let streams = l.per_asset().map(|d| &d.streams[..]).unwrap_or_default();
        for s in streams {
            if s.required_per_s > 0.0 {
                out.push(Binding {
                    kind: "throughput".into(),
                    demand: s.required_per_s,
                    capacity: s.ops_per_s,
                    unit: "ops/s".into(),
                    text: format!(
                        "{} of {}: {} of {}/s",
                        s.bottleneck,
                        s.name,
                        short(s.required_per_s),
                        short(s.ops_per_s)
                    ),
                });
            }
        }
        for sv in &p.servers {
            let n = &sv.needs;
            for (kind, need, unit, scale) in [
                ("server_cpu", &n.cpu_cores, "cores", 1.0),
                ("server_memory", &n.memory_bytes, "GiB", 1024.0 * 1024.0 * 1024.0),
                ("server_network_in", &n.network_in_bytes_per_s, "MB/s", 1e6),
                ("server_network_out", &n.network_out_bytes_per_s, "MB/s", 1e6),
            ] {
                if need.needed > 0.0 {
                    out.push(Binding {
                        kind: kind.into(),
                        demand: need.needed / scale,
                        capacity: need.has / scale,
                        unit: unit.into(),
                        text: format!(
                            "{} of {}: {:.2} of {:.2} {unit}",
                            kind.trim_start_matches("server_").replace('_', " "),
                            sv.name,
                            need.needed / scale,
                            need.has / scale
                        ),
                    });
                }
            }
        }
    }
    out
}

/// The binding constraint: the lowest capacity ÷ demand.
pub fn binding(l: &PlannedLayout, required: &Tolerance) -> Option<Binding> {
    constraints(l, required)
        .into_iter()
        .min_by(|a, b| a.ratio().total_cmp(&b.ratio()))
}

/// The axes of a point, each as "lower is better".
fn axes(p: &Point) -> Option<[f64; 4]> {
    Some([
        p.cost.total,
        p.p_any_data_lost_per_year?,
        p.worst_unavailable_min_per_year?,
        -p.free_after_worst_tolerated_failure,
    ])
}

/// Mark the non-dominated points among those that meet every requirement (no other such point is at
/// least as good on every axis and better on one).
pub fn mark_frontier(points: &mut [Point]) {
    let ok: Vec<(usize, [f64; 4])> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.meets_requirements)
        .filter_map(|(i, p)| axes(p).map(|a| (i, a)))
        .collect();
    for (i, a) in &ok {
        let dominated = ok
            .iter()
            .any(|(j, b)| j != i && b.iter().zip(a).all(|(x, y)| x <= y) && b.iter().zip(a).any(|(x, y)| x < y));
        points[*i].frontier = !dominated;
    }
}
