//! Issue 34, item 1: what nats-server 2.15.1 does with a peer-removed member of a pinned replica set. Four
//! servers carry `set:s1`; an R3 stream is pinned to the tag, so one server is a spare. After
//! `$JS.API.SERVER.REMOVE` of a lost member (from the lab's system account), nats-server re-places its
//! replica on the live spare, which carries the tag and holds none. Remove a second lost member: no live
//! server with the tag is free, so the stream stays a replica short. When a fresh server with the tag joins
//! (a rebuilt host under a new server_name), the stream gets its third replica back on it. (nats-server
//! reconciles a stream's missing peers when a new peer joins the meta group: `reconcilePeerAssignments`,
//! server/jetstream_cluster.go, nats-server main 1787eee.)

use natsplan::lab::{LabSpec, NodeSpec, TestCluster};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const STREAM: &str = "PINNED";

async fn ask(nc: &async_nats::Client, subject: &str, body: Value) -> Option<Value> {
    match tokio::time::timeout(
        Duration::from_secs(5),
        nc.request(subject.to_string(), body.to_string().into()),
    )
    .await
    {
        Ok(Ok(m)) => serde_json::from_slice(&m.payload).ok(),
        _ => None,
    }
}

/// Ask until answered without an error (an election may be under way after a kill).
async fn ask_ok(nc: &async_nats::Client, subject: &str, body: Value) -> Value {
    let t0 = Instant::now();
    loop {
        match ask(nc, subject, body.clone()).await {
            Some(v) if v.get("error").is_none() => return v,
            other => assert!(t0.elapsed() < Duration::from_secs(60), "{subject}: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The stream's peers (leader first) once it has a leader.
async fn peers(nc: &async_nats::Client) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        let info = ask_ok(nc, &format!("$JS.API.STREAM.INFO.{STREAM}"), json!({})).await;
        if let Some(l) = info["cluster"]["leader"].as_str() {
            let mut v = vec![l.to_string()];
            for r in info["cluster"]["replicas"].as_array().into_iter().flatten() {
                v.push(r["name"].as_str().unwrap().to_string());
            }
            return v;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no leader: {info}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Wait until `want(peers)` holds (60 s at most), returning the peers.
async fn wait_peers(nc: &async_nats::Client, what: &str, want: impl Fn(&[String]) -> bool) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        let p = peers(nc).await;
        if want(&p) {
            return p;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{what}: peers {p:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

async fn server_remove(sys: &async_nats::Client, name: &str) {
    let r = ask_ok(sys, "$JS.API.SERVER.REMOVE", json!({ "peer": name })).await;
    assert_eq!(r["success"], true, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_set_member_moves_to_a_free_server_with_the_tag_else_waits_for_one_to_join() {
    let _s = crate::common::serial_async().await;
    let mut c = TestCluster::start_spec(|dir| LabSpec {
        nodes: (1..=4).map(|i| NodeSpec::new(format!("n{i}"), &["set:s1"])).collect(),
        ..LabSpec::plain(4, dir)
    })
    .unwrap();
    let addrs: Vec<async_nats::ServerAddr> = c.client_urls().iter().map(|u| u.parse().unwrap()).collect();
    let nc = async_nats::ConnectOptions::new().connect(addrs.clone()).await.unwrap();
    let (user, password) = c.system_user();
    // The lab carries the system account emit writes: its user may make the cluster's requests.
    let sys = async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
        .connect(addrs)
        .await
        .unwrap();
    let cfg = json!({
        "name": STREAM, "subjects": ["pinned.>"], "num_replicas": 3, "storage": "file",
        "placement": { "tags": ["set:s1"] }
    });
    ask_ok(&nc, &format!("$JS.API.STREAM.CREATE.{STREAM}"), cfg).await;
    let first = wait_peers(&nc, "R3 placed", |p| p.len() == 3).await;
    let js = async_nats::jetstream::new(nc.clone());
    for i in 0..50 {
        js.publish("pinned.x", format!("m{i}").into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let names: Vec<String> = c.nodes().iter().map(|n| n.name.clone()).collect();
    let spare = names.iter().find(|n| !first.contains(n)).unwrap().clone();

    // 1. A follower is lost and removed: its replica goes to the spare (tagged, holding none).
    let x = first[1].clone();
    let xi = c.node(&x).unwrap();
    c.kill(xi).unwrap();
    server_remove(&sys, &x).await;
    let second = wait_peers(&nc, "re-placed on the spare", |p| {
        p.len() == 3 && p.contains(&spare) && !p.contains(&x)
    })
    .await;

    // 2. Another follower is lost and removed: every live server with the tag holds a replica already.
    let leader = second[0].clone();
    let y = second
        .iter()
        .skip(1)
        .find(|p| **p != spare)
        .unwrap_or(&second[1])
        .clone();
    let yi = c.node(&y).unwrap();
    c.kill(yi).unwrap();
    server_remove(&sys, &y).await;
    wait_peers(&nc, "shrunk to two", |p| p.len() == 2 && !p.contains(&y)).await;
    // It stays a replica short while no server can take it (a few seconds of checks, no timing asserted).
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let p = peers(&nc).await;
        assert_eq!(
            p.len(),
            2,
            "a replica appeared with no free server carrying the tag: {p:?}"
        );
    }
    js.publish("pinned.x", "short".into()).await.unwrap().await.unwrap();

    // 3. x's host rejoins on a fresh store under a new server_name with the same tag: a new meta peer.
    let i = c.node(&x).unwrap();
    let (store, conf) = (c.nodes()[i].store_dir.clone(), c.nodes()[i].conf.clone());
    std::fs::remove_dir_all(&store).unwrap();
    std::fs::create_dir_all(&store).unwrap();
    let fresh = format!("{x}-new");
    let text = std::fs::read_to_string(&conf).unwrap().replacen(
        &format!("server_name: \"{x}\""),
        &format!("server_name: \"{fresh}\""),
        1,
    );
    assert!(text.contains(&fresh) && text.contains("\"set:s1\""), "{text}");
    std::fs::write(&conf, text).unwrap();
    c.restart(i).unwrap();
    let back = wait_peers(&nc, "the joined server takes the missing replica", |p| {
        p.len() == 3 && p.contains(&fresh)
    })
    .await;
    assert!(back.contains(&leader) || back.contains(&spare), "{back:?}");
}
