//! Issue 15 at the plan level: the meta group judged apart from streams (`tolerates_meta`,
//! `min_tolerated.meta`), ranking by verdict, rejected rows that say why, and the hazards listed.

use natsplan::catalog::Catalog;
use natsplan::plan::{build, Plan, Verdict};

fn plan_text(yaml: &str) -> Plan {
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(yaml, "inline.yaml", &cat).expect("site parses");
    build(&site, &cat)
}

/// The issue's site: racks A (a1, a2, a3), B (b1), C (c1), R3; `{META}` is replaced per test.
const A3B1C1: &str = r#"
site: a3-b1-c1
nats: { replicas: [3] }
racks:
  - name: A
    servers: [a1, a2, a3]
    arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 7, hot_spares: 1 }]
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
workload:
  streams: [{ name: orders, msgs_per_s: 500, msg_size: 1KiB, retention: 24h }]
policy: { patterns: ["1"], min_tolerated: { racks: 1{META} } }
"#;

fn five_server_layouts(p: &Plan) -> Vec<&natsplan::plan::PlannedLayout> {
    p.layouts.iter().filter(|l| l.servers.len() == 5).collect()
}

#[test]
fn a_meta_majority_in_one_rack_is_judged_as_api_downtime_not_stream_downtime() {
    let plan = plan_text(&A3B1C1.replace("{META}", ""));
    let five = five_server_layouts(&plan);
    assert!(
        !five.is_empty(),
        "{:?}",
        plan.layouts.iter().map(|l| &l.id).collect::<Vec<_>>()
    );
    for l in &five {
        assert_eq!(l.tolerates.racks, 1, "{}: the R3 stream survives any rack", l.id);
        assert_eq!(l.tolerates_meta.racks, 0, "{}: rack A holds 3 of 5 meta peers", l.id);
        assert_ne!(l.verdict, Verdict::Rejected, "{}: {:?}", l.id, l.reasons);
        assert!(
            l.reasons.iter().any(|r| r.contains("stops the JetStream API")),
            "{:?}",
            l.reasons
        );
        assert!(
            !l.reasons.iter().any(|r| r.contains("stop a stream")),
            "{:?}",
            l.reasons
        );
        let y = l.yearly.as_ref().expect("yearly figures");
        assert_eq!(y.worst_unavailable, "orders");
        assert!(y.api_unavailable_min_per_year > y.worst_unavailable_min_per_year);
    }
    // With `meta: true` the policy judges the API too.
    let strict = plan_text(&A3B1C1.replace("{META}", ", meta: true"));
    for l in five_server_layouts(&strict) {
        assert_eq!(l.verdict, Verdict::Rejected, "{}", l.id);
        assert!(
            l.reasons.iter().any(|r| r.contains("by the meta group")),
            "{:?}",
            l.reasons
        );
    }
    let json = serde_json::to_value(&plan).unwrap();
    assert!(json["layouts"][0]["tolerates_meta"]["racks"].is_u64());
    assert_eq!(json["known_hazards"].as_array().unwrap().len(), 3);
    assert!(plan.notes.iter().any(|n| n.contains("nats-server#7567")));
}

#[test]
fn no_layout_ranks_above_one_with_a_better_verdict() {
    for entry in std::fs::read_dir("examples").unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let cat = Catalog::builtin();
        let site = natsplan::site::load(&path, &cat).expect("example parses");
        let plan = build(&site, &cat);
        for w in plan.layouts.windows(2) {
            assert!(
                w[0].verdict <= w[1].verdict,
                "{}: {} ({:?}) ranks above {} ({:?})",
                path.display(),
                w[0].id,
                w[0].verdict,
                w[1].id,
                w[1].verdict
            );
        }
    }
}

#[test]
fn a_rejected_row_says_why() {
    let plan = plan_text(&A3B1C1.replace("{META}", ", meta: true"));
    let text = natsplan::report::design::table_report(&plan, &Default::default(), 400);
    assert!(
        text.contains("rejected: policy needs 1 rack failure tolerated by the meta group"),
        "{text}"
    );
}

#[test]
fn emit_lists_each_groups_drives_in_the_modelled_order() {
    let cat = Catalog::builtin();
    let site = natsplan::site::load(std::path::Path::new("examples/one-rack-raid10.yaml"), &cat).unwrap();
    let plan = build(&site, &cat);
    let l = plan
        .layouts
        .iter()
        .find(|l| l.raid == "raid10")
        .expect("a RAID 10 layout");
    let s = &l.servers[0];
    assert_eq!(s.raid.as_deref(), Some("raid10"));
    assert!(s.drives.len() >= 4 && s.drives.len() % 2 == 0, "{:?}", s.drives);
    let files = natsplan::emit::render(&plan, &l.id, &Default::default()).unwrap();
    let readme = files
        .iter()
        .find(|(p, _)| p == &std::path::PathBuf::from(&s.name).join("README.md"))
        .map(|(_, t)| t.as_str())
        .unwrap();
    let want = format!("({},{})", s.drives[0], s.drives[1]);
    assert!(readme.contains("mirror pairs as") && readme.contains(&want), "{readme}");
}
