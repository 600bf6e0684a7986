//! Grading on synthetic observed states: a cluster as planned is all ok, and each drift turns the check
//! it concerns, and only that one, warning or critical.

use super::*;
use crate::monitor::observe::{ConsumerObs, MetaObs};

const GIB: u64 = 1 << 30;

fn expected() -> Expected {
    let server = |n: &str, rack: &str| ExpServer {
        name: n.into(),
        tags: vec![format!("rack:{rack}")],
        store_bytes: 100 * GIB,
        planned_bytes: 50 * GIB,
        failover_bytes: 20 * GIB,
        failover: Some("rack:x".into()),
        ha_assets: 3,
    };
    Expected {
        cluster: "c1".into(),
        layout: "p1-test".into(),
        unique_tag: Some("rack:".into()),
        servers: vec![server("n1", "a"), server("n2", "b"), server("n3", "c")],
        assets: vec![
            ExpAsset {
                stream: "orders".into(),
                kind: "stream".into(),
                replicas: 3,
                placement_tags: vec![],
                ops_per_s: 1000.0,
                ceiling_per_s: Some(50_000.0),
            },
            ExpAsset {
                stream: "KV_s".into(),
                kind: "kv".into(),
                replicas: 3,
                placement_tags: vec![],
                ops_per_s: 10.0,
                ceiling_per_s: None,
            },
        ],
        consumers: vec![consumers::ExpConsumers {
            stream: "orders".into(),
            count: 2,
            replicas: 3,
            emitted_names: vec!["orders-c1".into(), "orders-c2".into()],
        }],
    }
}

fn consumer(stream: &str, name: &str) -> ConsumerObs {
    ConsumerObs {
        account: "$G".into(),
        stream: stream.into(),
        name: name.into(),
        durable: true,
        replicas: 3,
        leader: Some("n2".into()),
        followers: vec![peer("n1"), peer("n3")],
        from_leader: true,
        ..Default::default()
    }
}

fn peer(n: &str) -> PeerObs {
    PeerObs {
        name: n.into(),
        current: true,
        offline: false,
        seen_ago_ns: 300_000_000,
        lag: 0,
    }
}

fn observed() -> Observed {
    let server = |n: &str, rack: &str, leader: bool| ServerObs {
        name: n.into(),
        monitor_url: format!("http://127.0.0.1:1/{n}"),
        tags: vec![format!("rack:{rack}")],
        cluster: Some("c1".into()),
        jetstream: true,
        store_used_bytes: 10 * GIB,
        max_store_bytes: Some(100 * GIB),
        memory_used_bytes: 0,
        max_memory_bytes: Some(GIB),
        ha_assets: 3,
        jsz_read: true,
        meta: Some(MetaObs {
            leader: Some("n1".into()),
            cluster_size: 3,
            replicas: if leader { vec![peer("n2"), peer("n3")] } else { vec![] },
        }),
    };
    let stream = |n: &str| StreamObs {
        account: "$G".into(),
        name: n.into(),
        replicas: 3,
        leader: Some("n1".into()),
        followers: vec![peer("n2"), peer("n3")],
        from_leader: true,
        ..Default::default()
    };
    Observed {
        servers: vec![
            server("n1", "a", true),
            server("n2", "b", false),
            server("n3", "c", false),
        ],
        unreachable: vec![],
        streams: vec![stream("KV_s"), stream("orders")],
        consumers: vec![consumer("orders", "app"), consumer("orders", "audit")],
    }
}

fn find<'r>(r: &'r CheckReport, check: &str, subject: &str) -> &'r Item {
    r.checks
        .iter()
        .find(|i| i.check == check && i.subject == subject)
        .unwrap_or_else(|| panic!("no {check} item for {subject}: {:#?}", r.checks))
}

/// The items that are not ok, as (check, subject, status).
fn bad(r: &CheckReport) -> Vec<(String, String, Health)> {
    r.checks
        .iter()
        .filter(|i| i.status != Health::Ok)
        .map(|i| (i.check.clone(), i.subject.clone(), i.status))
        .collect()
}

#[test]
fn a_cluster_as_planned_is_all_ok_and_exits_0() {
    let r = grade(&expected(), &observed(), None, &Thresholds::default());
    assert_eq!(bad(&r), vec![], "{:#?}", r.checks);
    assert_eq!((r.status, r.exit_code), (Health::Ok, 0));
    for c in [
        "server",
        "tags",
        "store",
        "store_failover",
        "memory",
        "ha_assets",
        "meta",
        "asset",
        "replicas",
        "placement",
        "replica_current",
        "consumers",
        "consumer_replicas",
        "consumer_current",
        "leaders",
    ] {
        assert!(r.checks.iter().any(|i| i.check == c), "no {c} check");
    }
    assert_eq!(r.counts["ok"], r.checks.len());
}

#[test]
fn a_stream_nobody_planned_is_a_warning_naming_the_defaults_it_got() {
    let mut o = observed();
    o.streams.push(StreamObs {
        account: "$G".into(),
        name: "hand".into(),
        replicas: 1,
        max_bytes: Some(-1),
        max_age_ns: Some(0),
        leader: Some("n2".into()),
        from_leader: true,
        ..Default::default()
    });
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(bad(&r), vec![("unplanned".into(), "hand".into(), Health::Warning)]);
    let m = &find(&r, "unplanned", "hand").message;
    assert!(m.contains("R1") && m.contains("no limits"), "{m}");
    assert_eq!(r.exit_code, 1);
}

#[test]
fn fewer_replicas_than_planned_is_critical_more_is_a_warning_and_a_missing_asset_critical() {
    let mut o = observed();
    o.streams[1].replicas = 1;
    o.streams[1].followers.clear();
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "replicas", "orders").status, Health::Critical);
    assert_eq!(r.exit_code, 2);
    // R1 has no replicas to be current.
    assert!(!r
        .checks
        .iter()
        .any(|i| i.check == "replica_current" && i.subject == "orders"));

    let mut o = observed();
    o.streams[1].replicas = 5;
    o.streams[1].followers.extend([peer("n4"), peer("n5")]);
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "replicas", "orders").status, Health::Warning);

    let mut o = observed();
    o.streams.remove(0);
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(bad(&r), vec![("asset".into(), "KV_s".into(), Health::Critical)]);
}

#[test]
fn a_server_down_is_critical_for_its_checks_and_its_peers() {
    let mut o = observed();
    o.servers.remove(2);
    o.unreachable.push((
        "http://127.0.0.1:9/".into(),
        Some("n3".into()),
        "connection refused".into(),
    ));
    o.servers[0].meta.as_mut().unwrap().replicas[1].offline = true;
    o.servers[0].meta.as_mut().unwrap().replicas[1].current = false;
    for s in &mut o.streams {
        s.followers[1].offline = true;
    }
    let r = grade(&expected(), &o, None, &Thresholds::default());
    let s = find(&r, "server", "n3");
    assert_eq!(s.status, Health::Critical);
    assert!(s.message.contains("connection refused"), "{}", s.message);
    assert_eq!(find(&r, "store", "n3").status, Health::Critical);
    assert_eq!(find(&r, "meta", "cluster").status, Health::Critical);
    assert_eq!(find(&r, "replica_current", "orders").status, Health::Critical);
    assert!(find(&r, "replica_current", "orders").message.contains("n3 offline"));
    assert_eq!(find(&r, "server", "n1").status, Health::Ok);
    assert_eq!(r.exit_code, 2);
    // /varz answered but /jsz did not: its JetStream figures are unknown, never an ok 0 %.
    let mut o = observed();
    o.servers[1].jsz_read = false;
    o.servers[1].store_used_bytes = 0;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "store", "n2").status, Health::Unknown);
    assert_eq!(find(&r, "ha_assets", "n2").status, Health::Unknown);
}

#[test]
fn replica_lag_and_last_seen_follow_the_plan_or_the_flags() {
    // orders plans 1,000 msgs/s: 5 s of it is 5,000 operations, above natscli's 200.
    let mut o = observed();
    o.streams[1].followers[0].lag = 4_000;
    o.streams[0].followers[0].lag = 4_000;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "replica_current", "orders").status, Health::Ok);
    assert_eq!(find(&r, "replica_current", "orders").critical, Some(5_000.0));
    // KV_s plans 10 puts/s: natscli's 200 holds.
    assert_eq!(find(&r, "replica_current", "KV_s").status, Health::Critical);
    let th = Thresholds {
        peer_lag_critical: Some(3_000),
        ..Thresholds::default()
    };
    let r = grade(&expected(), &o, None, &th);
    assert_eq!(find(&r, "replica_current", "orders").status, Health::Critical);
    // Not seen for 6 s: critical; not current alone: a warning.
    let mut o = observed();
    o.streams[1].followers[0].seen_ago_ns = 6_000_000_000;
    o.streams[0].followers[0].current = false;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "replica_current", "orders").status, Health::Critical);
    assert_eq!(find(&r, "replica_current", "KV_s").status, Health::Warning);
    // The leader's view not read: unknown, never ok.
    let mut o = observed();
    o.streams[1].from_leader = false;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "replica_current", "orders").status, Health::Unknown);
    assert_eq!(r.exit_code, 3);
}

#[test]
fn store_is_graded_against_the_limit_and_the_room_the_worst_failure_needs() {
    let mut o = observed();
    o.servers[0].store_used_bytes = 85 * GIB; // 85 %: natscli warns at 75; 100 − 20 GiB room exceeded
    o.servers[1].store_used_bytes = 95 * GIB; // critical at 90
    o.servers[2].store_used_bytes = 60 * GIB; // under both
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "store", "n1").status, Health::Warning);
    assert_eq!(find(&r, "store", "n2").status, Health::Critical);
    assert_eq!(find(&r, "store", "n3").status, Health::Ok);
    assert_eq!(find(&r, "store_failover", "n1").status, Health::Warning);
    assert_eq!(find(&r, "store_failover", "n3").status, Health::Ok);
    assert!(find(&r, "store_failover", "n1").message.contains("rack:x"));
    let th = Thresholds {
        store_warn: 50.0,
        store_critical: 55.0,
        ..Thresholds::default()
    };
    let r = grade(&expected(), &o, None, &th);
    assert_eq!(find(&r, "store", "n3").status, Health::Critical);
}

#[test]
fn ha_assets_above_the_plan_warn_and_above_a_thousand_are_critical() {
    let mut o = observed();
    o.servers[0].ha_assets = 4;
    o.servers[1].ha_assets = 1_001;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "ha_assets", "n1").status, Health::Warning);
    assert_eq!(find(&r, "ha_assets", "n2").status, Health::Critical);
    assert_eq!(find(&r, "ha_assets", "n3").status, Health::Ok);
}

#[test]
fn placement_tags_spread_and_meta_size_are_graded() {
    let mut o = observed();
    o.servers[2].tags = vec!["rack:a".into()]; // n3 now shares n1's rack
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "tags", "n3").status, Health::Warning);
    assert_eq!(find(&r, "placement", "orders").status, Health::Critical);

    let mut o = observed();
    for s in &mut o.servers {
        s.meta.as_mut().unwrap().cluster_size = 2;
    }
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "meta", "cluster").status, Health::Critical);
    let mut o = observed();
    for s in &mut o.servers {
        s.meta.as_mut().unwrap().leader = None;
    }
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert!(find(&r, "meta", "cluster").message.contains("no leader"));
    // An unplanned server is a warning; a cluster of another name is named.
    let mut o = observed();
    let mut extra = o.servers[2].clone();
    extra.name = "n9".into();
    o.servers.push(extra);
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "server", "n9").status, Health::Warning);
    assert!(other_cluster(&expected(), &o).is_none());
    for s in &mut o.servers {
        s.cluster = Some("other".into());
    }
    let e = other_cluster(&expected(), &o).unwrap();
    assert!(e.contains("'c1'") && e.contains("'other'"), "{e}");
}

#[test]
fn rates_from_two_passes_are_graded_against_the_plan_and_the_ceiling() {
    let mut a = observed();
    let mut b = observed();
    a.streams[1].last_seq = 1_000; // orders
    b.streams[1].last_seq = 1_000 + 2 * 60_000; // 60,000/s over 2 s: above the 50,000/s ceiling
    a.streams[0].last_seq = 100; // KV_s
    b.streams[0].last_seq = 160; // 30/s: above the 10/s planned, no ceiling
    let r = rates(&a, &b, 2.0);
    assert_eq!((r["orders"], r["KV_s"]), (60_000.0, 30.0));
    let g = grade(&expected(), &b, Some(&r), &Thresholds::default());
    assert_eq!(find(&g, "rate", "orders").status, Health::Critical);
    assert_eq!(find(&g, "rate", "KV_s").status, Health::Warning);
    let th = Thresholds {
        rate_warn: 400.0,
        rate_critical: 200.0,
        ..Thresholds::default()
    };
    let g = grade(&expected(), &b, Some(&r), &th);
    assert_eq!(find(&g, "rate", "orders").status, Health::Warning);
    assert_eq!(find(&g, "rate", "KV_s").status, Health::Ok);
    // A sequence that went back (re-created) gives no rate; no rates, no rate checks.
    b.streams[1].last_seq = 5;
    assert!(!rates(&a, &b, 2.0).contains_key("orders"));
    assert!(rates(&a, &b, 0.0).is_empty());
    let g = grade(&expected(), &b, None, &Thresholds::default());
    assert!(!g.checks.iter().any(|i| i.check == "rate"));
}

#[test]
fn leaders_piled_on_one_server_warn_and_a_leader_moving_does_not() {
    let mut e = expected();
    for i in 0..4 {
        e.assets.push(ExpAsset {
            stream: format!("s{i}"),
            kind: "stream".into(),
            replicas: 3,
            placement_tags: vec![],
            ops_per_s: 1.0,
            ceiling_per_s: None,
        });
    }
    let mut o = observed();
    for i in 0..4 {
        let mut s = o.streams[0].clone();
        s.name = format!("s{i}");
        o.streams.push(s);
    }
    // Six streams all led by n1: a fair share is 2, more than 4 warns.
    let r = grade(&e, &o, None, &Thresholds::default());
    let l = find(&r, "leaders", "cluster");
    assert_eq!(
        (l.status, l.value, l.warn),
        (Health::Warning, Some(6.0), Some(4.0)),
        "{}",
        l.message
    );
    assert!(l.message.contains("n1 leads 6 of 6"), "{}", l.message);
    // Two leaders moved to n2 (an election): 4 on n1 is within twice the share, no alert.
    o.streams[0].leader = Some("n2".into());
    o.streams[1].leader = Some("n2".into());
    let r = grade(&e, &o, None, &Thresholds::default());
    assert_eq!(find(&r, "leaders", "cluster").status, Health::Ok);
    assert_eq!(leaders_allowed(1, 3), 2);
    assert_eq!(leaders_allowed(100, 3), 68);
}

#[test]
fn expectations_come_from_the_plan_and_emit() {
    let cat = crate::catalog::Catalog::builtin();
    let text = include_str!("../../examples/three-racks-raid1.yaml");
    let site = crate::site::parse_str(text, "three-racks-raid1.yaml", &cat).unwrap();
    let plan = crate::plan::build(&site, &cat);
    let id = plan.layouts[0].id.clone();
    let e = Expected::from_plan(&plan, &id).unwrap();
    let names: Vec<&str> = e.assets.iter().map(|a| a.stream.as_str()).collect();
    assert_eq!(names, ["KV_sessions", "OBJ_blobs", "events", "orders"]);
    assert!(e.assets.iter().all(|a| a.replicas == 3));
    assert_eq!(e.assets[3].ops_per_s, 5000.0);
    // 1 MiB objects: 8 chunks and a metadata message per put, 10 puts/s.
    assert_eq!(e.assets[1].ops_per_s, 90.0);
    // Ceilings are perf's predictions in the same operations: above the planned rate on this layout.
    assert!(
        e.assets
            .iter()
            .all(|a| a.ceiling_per_s.is_some_and(|c| c > a.ops_per_s)),
        "{:?}",
        e.assets
    );
    assert_eq!(e.servers.len(), 3);
    // Meta group + 2 streams + 5 consumers + a bucket + a store on every server.
    assert!(e.servers.iter().all(|s| s.ha_assets == 10), "{:?}", e.servers);
    // The site's `consumers: 2` and `3`, with their streams' replicas, under the names emit writes.
    let c: Vec<(&str, u64, u64)> = e
        .consumers
        .iter()
        .map(|c| (c.stream.as_str(), c.count, c.replicas))
        .collect();
    assert_eq!(c, [("orders", 2, 3), ("events", 3, 3)]);
    assert_eq!(e.consumers[0].emitted_names, ["orders-c1", "orders-c2"]);
    assert!(e
        .servers
        .iter()
        .all(|s| s.planned_bytes > 0 && s.planned_bytes <= s.store_bytes));
    // R3 on three racks: after a rack fails nothing can be re-placed (unique_tag), so no room is reserved.
    assert!(e.servers.iter().all(|s| s.failover_bytes == 0), "{:?}", e.servers);
    assert_eq!(e.unique_tag.as_deref(), Some("rack:"));
}

#[test]
fn planned_consumers_are_counted_and_each_one_held_to_its_streams_replicas() {
    // One of the two planned durables missing (an ephemeral one beside it does not count): a warning
    // naming the names emit writes.
    let mut o = observed();
    o.consumers.truncate(1);
    o.consumers.push(ConsumerObs {
        durable: false,
        name: "eph".into(),
        replicas: 1,
        ..consumer("orders", "eph")
    });
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(
        bad(&r),
        vec![("consumers".into(), "orders".into(), Health::Warning)],
        "{:#?}",
        r.checks
    );
    let i = find(&r, "consumers", "orders");
    assert!(
        i.message.contains("1 of 2 planned") && i.message.contains("orders-c1, orders-c2"),
        "{}",
        i.message
    );
    // A durable consumer scaled to R1 on an R3 stream: critical for that consumer only; one more durable
    // than planned: a warning.
    let mut o = observed();
    o.consumers[1].replicas = 1;
    o.consumers[1].followers.clear();
    o.consumers.push(consumer("orders", "extra"));
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(
        bad(&r),
        vec![
            ("consumers".into(), "orders".into(), Health::Warning),
            ("consumer_replicas".into(), "orders/audit".into(), Health::Critical),
        ],
        "{:#?}",
        r.checks
    );
    assert_eq!(r.exit_code, 2);
    // A consumer's replica offline in its leader's view: critical currency; its leader not read: unknown.
    let mut o = observed();
    o.consumers[0].followers[1].offline = true;
    o.consumers[1].from_leader = false;
    let r = grade(&expected(), &o, None, &Thresholds::default());
    assert_eq!(find(&r, "consumer_current", "orders/app").status, Health::Critical);
    assert_eq!(find(&r, "consumer_current", "orders/audit").status, Health::Unknown);
    // A durable consumer on a stream planned without any: a warning; and no consumer items at all for a
    // stream that has none and was planned with none (KV_s).
    let mut o = observed();
    o.consumers.push(consumer("KV_s", "watcher"));
    let r = grade(&expected(), &o, None, &Thresholds::default());
    // KV buckets' watchers are the application's: not graded.
    assert!(!r
        .checks
        .iter()
        .any(|i| i.subject.starts_with("KV_s") && i.check.starts_with("consumer")));
    let mut e = expected();
    e.assets[1].kind = "stream".into();
    let r = grade(&e, &o, None, &Thresholds::default());
    assert_eq!(find(&r, "consumers", "KV_s").status, Health::Warning);
    let r = grade(&e, &observed(), None, &Thresholds::default());
    assert!(!r.checks.iter().any(|i| i.check == "consumers" && i.subject == "KV_s"));
}
