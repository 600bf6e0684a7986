//! Placement on a live lab, from the emitted configuration: the lab runs a planned layout (tags,
//! unique_tag, store sizes as emitted), the emitted stream/KV/object-store JSON is sent unchanged to the
//! JetStream API, and where the replicas landed is read back from `/jsz` and checked against the
//! constraint (tags from `/varz`), never against NATS's random tie-breaks.

use natsplan::catalog::Catalog;
use natsplan::emit::{self, EmitOptions};
use natsplan::lab::TestCluster;
use natsplan::monitor::StreamPlacement;
use natsplan::plan::{Plan, PlannedLayout};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// A site file by path from the crate root (`examples/...` or `tests/data/...`).
fn plan(file: &str) -> Plan {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(&text, &path, &cat).unwrap_or_else(|e| panic!("{e}"));
    natsplan::plan::build(&site, &cat)
}

/// The stream definitions `emit` writes for a layout, as (file, JSON).
fn emitted_streams(plan: &Plan, layout: &PlannedLayout) -> Vec<(String, Value)> {
    emit::render(plan, &layout.id, &EmitOptions::default())
        .unwrap()
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "json"))
        .map(|(p, t)| (p.display().to_string(), serde_json::from_str(&t).unwrap()))
        .collect()
}

async fn create(nc: &async_nats::Client, cfg: &Value) -> Value {
    let name = cfg["name"].as_str().unwrap();
    let resp = nc
        .request(format!("$JS.API.STREAM.CREATE.{name}"), cfg.to_string().into())
        .await
        .unwrap();
    serde_json::from_slice(&resp.payload).unwrap()
}

/// Wait until every named stream reports as many peers as replicas (placement done, group formed).
fn placements(c: &TestCluster, want: &BTreeMap<String, u64>) -> BTreeMap<String, StreamPlacement> {
    let t0 = Instant::now();
    loop {
        let got: BTreeMap<String, StreamPlacement> = c.streams().into_iter().map(|s| (s.name.clone(), s)).collect();
        let done = want.iter().all(|(n, r)| {
            got.get(n)
                .is_some_and(|s| s.peers.len() as u64 == *r && s.leader.is_some())
        });
        if done {
            return got;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "streams not placed in 30 s: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

async fn connect(c: &TestCluster) -> async_nats::Client {
    let addrs: Vec<async_nats::ServerAddr> = c.client_urls().iter().map(|u| u.parse().unwrap()).collect();
    // Clustered creates answer once the group has a leader; allow for a split vote on a busy machine.
    async_nats::ConnectOptions::new()
        .request_timeout(Some(Duration::from_secs(30)))
        .connect(addrs)
        .await
        .unwrap()
}

fn tags_by_server(c: &TestCluster) -> BTreeMap<String, Vec<String>> {
    c.live_tags().unwrap().into_iter().collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_five_servers_r5_lands_one_replica_per_server_and_pinned_sets_hold() {
    let _s = crate::common::serial_async().await;
    let plan = plan("examples/seed-five-servers-raid0.yaml");
    // The seed's RF5 plan: five servers over three racks, default R5. R5 cannot use unique_tag on three
    // racks, so the plan pins replica sets.
    let layout = plan
        .layouts
        .iter()
        .find(|l| l.servers.len() == 5 && l.replicas == 5 && !l.replica_sets.is_empty())
        .expect("the seed plan has a five-server R5 layout with pinned sets");
    assert!(layout.unique_tag.is_none());
    let spec_plan = plan.clone();
    let lay = layout.clone();
    let c = TestCluster::start_spec(move |dir| {
        natsplan::lab::spec::for_layout(&spec_plan, &lay, spec_plan.input.nats.sync, dir)
    })
    .unwrap();
    let nc = connect(&c).await;
    let defs = emitted_streams(&plan, layout);
    assert_eq!(
        defs.len(),
        4,
        "orders, audit, KV sessions, object store blobs: {defs:?}"
    );
    let mut want = BTreeMap::new();
    for (file, cfg) in &defs {
        let r = create(&nc, cfg).await;
        assert!(r.get("error").is_none(), "{file}: {r}");
        want.insert(
            cfg["name"].as_str().unwrap().to_string(),
            cfg["num_replicas"].as_u64().unwrap(),
        );
    }
    let got = placements(&c, &want);
    let tags = tags_by_server(&c);
    let all: BTreeSet<&String> = tags.keys().collect();
    for (file, cfg) in &defs {
        let name = cfg["name"].as_str().unwrap();
        let p = &got[name];
        let peers: BTreeSet<&String> = p.peers.iter().collect();
        assert_eq!(peers.len(), p.peers.len(), "{name}: a server holds two replicas");
        if cfg["num_replicas"] == 5 {
            assert_eq!(
                peers, all,
                "{file}: R5 must land one replica on each of the five servers"
            );
        }
        // Pinned: every replica on a server that carries the stream's set tag (as the server reports it).
        let want_tags: Vec<&str> = cfg["placement"]["tags"]
            .as_array()
            .map(|a| a.iter().map(|t| t.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert!(!want_tags.is_empty(), "{file}: pinned layout must emit placement tags");
        for peer in &p.peers {
            for t in &want_tags {
                assert!(
                    tags[peer].iter().any(|x| x == t),
                    "{name} has a replica on {peer} without tag {t}"
                );
            }
        }
    }
    // The emitted KV and object-store streams are real buckets to a client.
    let js = async_nats::jetstream::new(nc.clone());
    let kv = js.get_key_value("sessions").await.unwrap();
    kv.put("k1", "v1".into()).await.unwrap();
    assert_eq!(kv.get("k1").await.unwrap().as_deref(), Some(&b"v1"[..]));
    let obj = js.get_object_store("blobs").await.unwrap();
    let mut data: &[u8] = &[7u8; 300 * 1024];
    obj.put("o1", &mut data).await.unwrap();
    let mut back = Vec::new();
    use tokio::io::AsyncReadExt;
    obj.get("o1").await.unwrap().read_to_end(&mut back).await.unwrap();
    assert_eq!(back.len(), 300 * 1024);
    // audit is R3 on a three-server set; that set spans three racks, so its replicas do too.
    let audit = &got["audit"];
    let racks: BTreeSet<String> = audit
        .peers
        .iter()
        .map(|p| tags[p].iter().find(|t| t.starts_with("rack:")).unwrap().clone())
        .collect();
    assert_eq!(
        racks.len(),
        3,
        "audit replicas {:?} are not in three racks",
        audit.peers
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unique_rack_tag_spreads_every_r3_stream_even_unplanned_ones() {
    let _s = crate::common::serial_async().await;
    let plan = plan("tests/data/four-racks-r3.yaml");
    let layout = plan
        .layouts
        .iter()
        .find(|l| l.servers.len() == 6 && l.unique_tag.as_deref() == Some("rack:"))
        .expect("the four-rack plan has a six-server layout with unique_tag rack:");
    let spec_plan = plan.clone();
    let lay = layout.clone();
    let c = TestCluster::start_spec(move |dir| {
        natsplan::lab::spec::for_layout(&spec_plan, &lay, spec_plan.input.nats.sync, dir)
    })
    .unwrap();
    let tags = tags_by_server(&c);
    let rack_of = |s: &str| tags[s].iter().find(|t| t.starts_with("rack:")).unwrap().clone();
    // Two racks hold two servers each, so a rack-blind placement could double up in a rack.
    let per_rack = tags.keys().fold(BTreeMap::<String, usize>::new(), |mut m, s| {
        *m.entry(rack_of(s)).or_default() += 1;
        m
    });
    assert_eq!(per_rack.len(), 4);
    assert!(per_rack.values().any(|&n| n >= 2));

    let nc = connect(&c).await;
    let mut want = BTreeMap::new();
    for (file, cfg) in emitted_streams(&plan, layout) {
        assert!(
            cfg["placement"].get("tags").is_none(),
            "{file}: unique_tag layouts need no placement tags"
        );
        let r = create(&nc, &cfg).await;
        assert!(r.get("error").is_none(), "{file}: {r}");
        want.insert(cfg["name"].as_str().unwrap().to_string(), 3);
    }
    // Streams the plan never heard of, created as an application would, with no placement at all.
    for i in 0..8 {
        let cfg = serde_json::json!({
            "name": format!("app{i}"), "subjects": [format!("app{i}.>")], "num_replicas": 3, "storage": "file"
        });
        let r = create(&nc, &cfg).await;
        assert!(r.get("error").is_none(), "app{i}: {r}");
        want.insert(format!("app{i}"), 3);
    }
    let got = placements(&c, &want);
    for name in want.keys() {
        let racks: BTreeSet<String> = got[name].peers.iter().map(|p| rack_of(p)).collect();
        assert_eq!(
            racks.len(),
            3,
            "{name}: replicas {:?} are not in three racks",
            got[name].peers
        );
    }
    // The flip side the README states: more replicas than racks cannot be placed at all.
    let r5 = serde_json::json!({"name": "toomany", "subjects": ["toomany.>"], "num_replicas": 5, "storage": "file"});
    let r = create(&nc, &r5).await;
    let err = r["error"]["description"].as_str().unwrap_or_default().to_string();
    assert!(
        err.contains("no suitable peers"),
        "R5 over four racks should not place: {r}"
    );
}
