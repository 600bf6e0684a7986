use super::*;

fn pt(id: &str, cost: f64, loss: f64, down: f64, free: f64, meets: bool) -> Point {
    Point {
        id: id.into(),
        bill: id.into(),
        layout: id.into(),
        verdict: Verdict::Acceptable,
        meets_requirements: meets,
        cost: Cost {
            total: cost,
            ..Cost::default()
        },
        tolerates: Tolerance::default(),
        p_any_data_lost_per_year: Some(loss),
        worst_unavailable_min_per_year: Some(down),
        free_after_worst_tolerated_failure: free,
        worst_tolerated_failure: Vec::new(),
        binding: None,
        frontier: false,
        site: "".into(),
        owned: None,
        added: None,
        migration: None,
    }
}

/// A small workload file: the ranges, replicas and min_tolerated given.
fn workload(ranges: &str, replicas: &str, min_tolerated: &str) -> String {
    format!(
            "site: small\nnats: {{ replicas: {replicas} }}\nsize:\n{ranges}  server_models: [generic-16c]\n  \
             storage: [EF300]\n  disk_models: [nvme-3.84t]\nworkload:\n  streams:\n    \
             - {{ name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h }}\n    \
             - {{ name: audit, msgs_per_s: 500, msg_size: 2KiB, retention: 7d }}\npolicy:\n  patterns: [\"1\", \"2\"]\n  \
             min_tolerated: {min_tolerated}\n"
        )
}

fn ids(s: &Sizing, f: impl Fn(&Point) -> bool) -> Vec<String> {
    let mut v: Vec<String> = s.candidates.iter().filter(|p| f(p)).map(|p| p.id.clone()).collect();
    v.sort();
    v
}

/// The pruned search against the brute force over every bill: the same frontier, the same cheapest,
/// and no point of a pruned bill meets the requirements. Each workload prunes some bills (else the
/// comparison proves nothing).
#[test]
fn pruning_keeps_the_brute_forces_frontier_and_cheapest() {
    let catalog = Catalog::builtin();
    let cal = crate::perf::Calibration::builtin();
    let cases = [
        // One and two racks cannot survive a rack outage: four of six bills pruned (one of the
        // one-rack bills planned as the single-array reference).
        (
            workload(
                "  racks: [1, 3]\n  servers: [3, 4]\n  disks_per_server: [2, 2]\n",
                "[3]",
                "{ racks: 1 }",
            ),
            "outage",
        ),
        // Three or four servers cannot survive losing two: two of three bills pruned.
        (
            workload(
                "  racks: [3, 3]\n  servers: [3, 5]\n  disks_per_server: [2, 2]\n",
                "[3, 5]",
                "{ servers: 2 }",
            ),
            "outage",
        ),
        // A stream of 10,000 1 KiB messages a second kept 8 days, three times over: 21.8 TiB, more than
        // the six disks of 3 racks × 1 server × 1 disk (+ a spare each) hold raw (20.9 TiB); the
        // cheapest bill that meets the requirements (3 disks per server) is 2 % above the line, and a
        // rule pruning it (or any frontier bill) fails the comparison.
        (
            "site: small\nnats: { replicas: [3] }\nsize:\n  racks: [3, 3]\n  servers: [3, 5]\n  \
                 disks_per_server: [1, 3]\n  server_models: [generic-16c]\n  storage: [EF300]\n  \
                 disk_models: [nvme-3.84t]\nworkload:\n  streams:\n    \
                 - { name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h }\n    \
                 - { name: log, msgs_per_s: 10000, msg_size: 1KiB, retention: 8d }\npolicy:\n  \
                 patterns: [\"1\", \"2\"]\n  min_tolerated: { racks: 1 }\n"
                .to_string(),
            "capacity",
        ),
    ];
    for (text, kind) in cases {
        let w = crate::size::read_workload(&text, "small.yaml", &catalog).unwrap();
        let all = run(&w, &catalog, &cal, None, Limits::exhaustive(), &|_, _| {});
        let limits = Limits {
            prune: true,
            ..Limits::exhaustive()
        };
        let pruned = run(&w, &catalog, &cal, None, limits, &|_, _| {});
        assert!(
            pruned.pruned.iter().any(|p| p.kind == kind),
            "nothing pruned by {kind}: the comparison proves nothing\n{text}"
        );
        assert!(all.complete && pruned.complete && all.pruned.is_empty());
        assert_eq!(pruned.considered + pruned.pruned.len(), all.considered);
        let on = |p: &Point| p.frontier;
        assert!(!ids(&all, on).is_empty(), "the brute force has a frontier\n{text}");
        assert_eq!(ids(&pruned, on), ids(&all, on), "the frontier\n{text}");
        assert_eq!(pruned.cheapest, all.cheapest, "the cheapest\n{text}");
        // References (the single-array bill) are planned though the rule would prune them: design's
        // points, none meeting the requirements.
        for r in &pruned.references {
            assert_eq!(ids(&pruned, |p| &p.bill == r), ids(&all, |p| &p.bill == r), "{r}");
            assert!(ids(&all, |p| &p.bill == r && p.meets_requirements).is_empty(), "{r}");
        }
        for x in &pruned.pruned {
            let of_bill = ids(&all, |p| p.bill == x.bill);
            assert!(!of_bill.is_empty());
            let meeting = ids(&all, |p| p.bill == x.bill && p.meets_requirements);
            assert!(
                meeting.is_empty(),
                "pruned {} ({}) but {meeting:?} meet the requirements",
                x.bill,
                x.reason
            );
        }
    }
}

#[test]
fn quorum_arithmetic_of_outages() {
    // Three racks keep R3's quorum after one is lost (1 + 1 + 1); two racks never do, one never.
    assert!(quorum_can_survive(3, 1));
    assert!(!quorum_can_survive(2, 1));
    assert!(!quorum_can_survive(1, 1));
    // Two lost of five: R5 spread 1 each keeps 3; of four or three, nothing keeps a quorum.
    assert!(quorum_can_survive(5, 2));
    assert!(!quorum_can_survive(4, 2));
    assert!(!quorum_can_survive(3, 2));
    // Nothing lost: always.
    assert!(quorum_can_survive(1, 0));
}

#[test]
fn the_frontier_keeps_trade_offs_and_drops_dominated_and_failing_points() {
    let mut p = vec![
        pt("cheap", 1.0, 1e-3, 1.0, 0.2, true),
        pt("safe", 2.0, 1e-6, 1.0, 0.2, true),
        pt("worse", 2.0, 1e-3, 1.0, 0.2, true),    // dominated by cheap
        pt("roomy", 3.0, 1e-6, 1.0, 0.5, true),    // more free capacity: a trade-off
        pt("failing", 0.5, 1e-9, 0.0, 0.9, false), // better on every axis but fails a requirement
    ];
    mark_frontier(&mut p);
    let on: Vec<&str> = p.iter().filter(|x| x.frontier).map(|x| x.id.as_str()).collect();
    assert_eq!(on, vec!["cheap", "safe", "roomy"]);
}
