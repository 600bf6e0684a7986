//! `design --omb FILE`: an OpenMessaging Benchmark workload becomes the site's streams (one per topic, as
//! OMB's NATS driver creates them), with what was ignored said on stderr.

use assert_cmd::Command;
use std::io::Write;

const SITE: &str = r#"
site: omb-test
nats: { replicas: [3] }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
workload:
  streams: [{ name: orders, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }]
"#;

/// As in OMB's workloads/ folder (the 1-topic, 16-partition, 1 KB shape), with a rate.
const OMB: &str = "
name: 2 topics / 16 partitions / 1kb
topics: 2
partitionsPerTopic: 16
keyDistributor: NO_KEY
messageSize: 1024
payloadFile: payload/payload-1Kb.data
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 20000
consumerBacklogSizeGB: 0
testDurationMinutes: 15
";

fn file(text: &str, suffix: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(suffix).tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

#[test]
fn omb_topics_become_streams_and_ignored_keys_are_named() {
    let site = file(SITE, ".yaml");
    let omb = file(OMB, ".yaml");
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("design")
        .arg(site.path())
        .arg("--omb")
        .arg(omb.path())
        .args(["--omb-retention", "6h", "--format", "json", "--top", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    for k in [
        "partitionsPerTopic",
        "producersPerTopic",
        "testDurationMinutes",
        "payloadFile",
    ] {
        assert!(err.contains(k), "stderr does not say {k} was ignored: {err}");
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let assets = v["layouts"][0]["assets"].as_array().unwrap();
    let names: Vec<&str> = assets
        .iter()
        .filter(|a| a["kind"] == "stream")
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"Nats-benchmark-0000000") && names.contains(&"Nats-benchmark-0000001"),
        "{names:?}"
    );
    assert!(names.contains(&"orders"), "the site's own stream stays: {names:?}");
    // 10,000 msgs/s of 1 KiB for 6 h per stream: bytes per replica are about 10k × (1024 + 22 + 30) × 21,600.
    let per = assets.iter().find(|a| a["name"] == "Nats-benchmark-0000000").unwrap()["bytes_per_replica"]
        .as_f64()
        .unwrap();
    let want = 10_000.0 * (1024.0 + 22.0 + 30.0) * 21_600.0;
    assert!(per > want * 0.9 && per < want * 1.6, "{per} vs ~{want}");
    // The predicted rates are for the imported streams too.
    let pred = v["layouts"][0]["predicted"]["streams"].as_array().unwrap();
    let p = pred
        .iter()
        .find(|p| p["name"] == "Nats-benchmark-0000001")
        .expect("prediction");
    assert_eq!(p["required_per_s"].as_f64().unwrap(), 10_000.0);
}

#[test]
fn omb_without_retention_is_bad_input_naming_the_fix() {
    let site = file(SITE, ".yaml");
    let omb = file(OMB, ".yaml");
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("design")
        .arg(site.path())
        .arg("--omb")
        .arg(omb.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--omb-retention") && err.contains("--omb"), "{err}");
}
