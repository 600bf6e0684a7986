//! natscli's forms against a real nats-server (issue 39): `bench sub SUBJECT` in one process receives
//! what `bench pub SUBJECT --multisubject` sends from another, as `nats bench sub`/`pub` do in two
//! terminals; `bench js pub async SUBJECT --multisubject` creates its stream on SUBJECT.* and spreads
//! the messages over the subjects; `bench js get sync` reads a filled stream back by sequence; `bench js
//! ordered` is `bench consumer ordered`.

use crate::bench_live::bench;
use crate::common::serial;
use natsplan::lab::TestCluster;
use std::time::{Duration, Instant};

#[test]
fn sub_in_one_process_receives_what_pub_sends_from_another() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let (url, mon) = (c.url(), c.monitor_urls()[0].clone());
    let subs_before = natsplan::monitor::varz(&mon, Duration::from_secs(2)).unwrap()["subscriptions"]
        .as_u64()
        .unwrap_or(0);
    let sub = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .env_remove("NATS_URL")
        .args([
            "--format",
            "json",
            "bench",
            "sub",
            "lab.orders",
            "--multisubject",
            "--msgs",
            "3000",
        ])
        .args(["-s", &url, "--timeout", "30s", "--no-progress"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The subscriber is in place once the server counts its subscriptions (the run's and its probe's).
    let t0 = Instant::now();
    loop {
        let n = natsplan::monitor::varz(&mon, Duration::from_secs(2)).unwrap()["subscriptions"]
            .as_u64()
            .unwrap_or(0);
        if n >= subs_before + 2 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the subscriber never subscribed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, v, all) = bench(&[
        "pub",
        "lab.orders",
        "-s",
        &url,
        "--multisubject",
        "--multisubjectmax",
        "10",
        "--msgs",
        "3000",
        "--clients",
        "2",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["published"], 3000, "{all}");
    // As natscli's banner names it: the subjects the run covers.
    assert_eq!(v["params"]["subject"], "lab.orders.*", "{all}");
    assert_eq!(v["params"]["multisubject"], "10", "{all}");
    let out = sub.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let s: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("sub printed no JSON: {text} {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{s}");
    assert_eq!(
        s["received"], 3000,
        "every message on lab.orders.* reached the subscriber: {s}"
    );
    assert_eq!(s["params"]["subject"], "lab.orders.*", "{s}");
}

#[test]
fn js_pub_multisubject_spreads_over_the_subjects_of_its_own_stream() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let (url, mon) = (c.url(), c.monitor_urls()[0].clone());
    let (code, v, all) = bench(&[
        "js",
        "pub",
        "async",
        "lab.events",
        "-s",
        &url,
        "--multisubject",
        "--multisubjectmax",
        "6",
        "--msgs",
        "1200",
        "--keep",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["published"], 1200, "{all}");
    assert_eq!(v["params"]["subject"], "lab.events.*", "{all}");
    // Each message's subject written on the raw path (not async-nats's ceiling: nats-server #4043 is
    // measured alone).
    assert_eq!(v["params"]["client"], "raw", "{all}");
    let stream = v["params"]["stream"].as_str().unwrap().to_string();
    let jsz = natsplan::monitor::jsz(&mon, "streams=true", Duration::from_secs(2)).unwrap();
    let details = jsz["account_details"][0]["stream_detail"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let st = details
        .iter()
        .find(|d| d["name"] == stream.as_str())
        .unwrap_or_else(|| panic!("kept stream {stream} not in {jsz}"));
    assert_eq!(st["state"]["messages"], 1200, "{st}");
    assert_eq!(st["state"]["num_subjects"], 6, "natscli's modulo: six subjects: {st}");
    // natscli's sync form, on a subject of its own beside the kept stream.
    let (code, _, all) = bench(&["js", "pub", "sync", "lab.other", "-s", &url, "--msgs", "50"]);
    assert_eq!(code, 0, "{all}");
    // natscli's `js pub atomic` (alias batch): 10 batches of 100 and one of 50, each committed whole.
    let (code, v, all) = bench(&[
        "js",
        "pub",
        "batch",
        "lab.atomic",
        "-s",
        &url,
        "--msgs",
        "1050",
        "--batch",
        "100",
        "--replicas",
        "1",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["published"], 1050, "{all}");
    assert_eq!(v["failed"], 0, "{all}");
    assert_eq!(v["params"]["batch"], "100", "{all}");
    assert_eq!(v["label"], "JetStream atomic batch publisher", "{all}");
    // natscli's `js get sync`: direct gets by sequence of a stream the run fills, then removes.
    let (code, v, all) = bench(&["js", "get", "sync", "-s", &url, "--msgs", "400", "--clients", "2"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["kind"], "js-get", "{all}");
    assert_eq!(v["received"], 400, "every sequence read back: {all}");
    assert_eq!(v["failed"], 0, "{all}");
    let got = v["params"]["stream"].as_str().unwrap();
    let jsz = natsplan::monitor::jsz(&mon, "streams=true", Duration::from_secs(2)).unwrap();
    assert!(!jsz.to_string().contains(got), "the get run's stream is removed: {jsz}");
    let (code, v, all) = bench(&["js", "ordered", "-s", &url, "--msgs", "500"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["kind"], "js-ordered", "{all}");
    assert_eq!(v["received"], 500, "{all}");
}
