//! `design --from-cluster`: a live lab cluster's streams (created here, published to while natsplan
//! measures) become the workload, with their replicas, limits, consumers and measured rate. Real
//! nats-server on loopback, one cluster for the whole file.

use assert_cmd::Command;
use natsplan::lab::TestCluster;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const SITE: &str = r#"
site: live-import
nats: { replicas: [3] }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
"#;

/// Publish to `events.x` at about `per_s` messages/s until `stop` (throttled: 2 cores, 3 servers).
async fn publish(js: async_nats::jetstream::Context, per_s: u32, stop: Arc<AtomicBool>) -> u64 {
    let payload = bytes::Bytes::from(vec![b'x'; 512]);
    let mut n = 0;
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / per_s as f64));
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        js.publish("events.x", payload.clone()).await.unwrap().await.unwrap();
        n += 1;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_cluster_becomes_the_workload() {
    let _s = crate::common::serial_async().await;
    let c = TestCluster::start(3).expect("lab starts (scripts/install-nats-server)");
    let addrs: Vec<async_nats::ServerAddr> = c.client_urls().iter().map(|u| u.parse().unwrap()).collect();
    let nc = async_nats::connect(addrs).await.unwrap();
    let js = async_nats::jetstream::new(nc);
    let mut created = None;
    for _ in 0..50 {
        // The meta group may still be electing its leader right after start.
        match js
            .create_stream(async_nats::jetstream::stream::Config {
                name: "events".into(),
                subjects: vec!["events.>".into()],
                num_replicas: 3,
                max_age: Duration::from_secs(2 * 3600),
                ..Default::default()
            })
            .await
        {
            Ok(s) => {
                created = Some(s);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
    let stream = created.expect("stream created");
    stream
        .create_consumer(async_nats::jetstream::consumer::pull::Config {
            durable_name: Some("worker".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    // Some messages stored first, so the size per message is measured.
    for _ in 0..200 {
        js.publish("events.x", bytes::Bytes::from(vec![b'x'; 512]))
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let pub_task = tokio::spawn(publish(js.clone(), 100, stop.clone()));
    let urls = c.monitor_urls();
    let imp = tokio::task::spawn_blocking(move || {
        natsplan::import::cluster::measure(&urls, Duration::from_secs(2), Duration::from_secs(5))
    })
    .await
    .unwrap()
    .expect("measured");
    // Also through the CLI, while the publisher still runs.
    let site = {
        let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
        f.write_all(SITE.as_bytes()).unwrap();
        f
    };
    let urls = c.monitor_urls().join(",");
    let site_path = site.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::cargo_bin("natsplan")
            .unwrap()
            .arg("design")
            .arg(&site_path)
            .args([
                "--from-cluster",
                &urls,
                "--interval",
                "1s",
                "--format",
                "json",
                "--top",
                "1",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    let published = pub_task.await.unwrap();
    assert!(published > 50, "publisher too slow: {published}");

    let ev = imp
        .streams
        .iter()
        .find(|s| s.name == "events")
        .expect("events imported");
    assert_eq!(ev.replicas, Some(3));
    assert_eq!(ev.retention_s, 7200.0);
    assert_eq!(ev.consumers, 1);
    // ~100/s offered; measured over 2 s plus request time. Wide bounds: a loaded 2-core machine.
    assert!(ev.msgs_per_s > 20.0 && ev.msgs_per_s < 150.0, "rate {}", ev.msgs_per_s);
    // 512 B payloads: stored size per message less subject and overhead lands near it.
    assert!(
        ev.msg_size_bytes > 400 && ev.msg_size_bytes < 620,
        "size {}",
        ev.msg_size_bytes
    );

    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("from the cluster: 1 stream"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = v["layouts"][0]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "events")
        .expect("events in the plan")
        .clone();
    assert_eq!(a["replicas"], 3);
}

#[test]
fn an_unreachable_cluster_cannot_run() {
    let port = natsplan::lab::free_ports(1).unwrap()[0];
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(SITE.as_bytes()).unwrap();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("design")
        .arg(f.path())
        .args([
            "--from-cluster",
            &format!("http://127.0.0.1:{port}"),
            "--interval",
            "0s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no monitor URL answered"));
}
