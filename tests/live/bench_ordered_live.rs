//! Live tests of the push ordered consumer (`bench consumer ordered --push`, issue 19) on a 3-server
//! loopback cluster: the exact count read over the raw path and through async-nats (R3 stream, two
//! clients), an existing stream read with a subject filter leaving no consumer behind, and recovery:
//! the run's consumer deleted mid-run (a gap: the client must notice the silence and make a new consumer
//! from the stream sequence after the last one read) and the client's server killed mid-run (a
//! reconnection to another server). Slow reads come from `--sleep`, so the runs are long enough to be
//! interfered with on a shared machine; nothing here asserts a speed.

use crate::bench_live::bench;
use crate::common::serial;
use natsplan::lab::TestCluster;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn u(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("missing integer {k} in {v}"))
}

fn param<'a>(v: &'a Value, k: &str) -> &'a str {
    v["params"][k]
        .as_str()
        .unwrap_or_else(|| panic!("no params.{k} in {v}"))
}

/// Each stream's consumers (through async-nats on `url`, one server's).
fn consumers(url: &str) -> Vec<(String, Vec<String>)> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use futures::TryStreamExt;
        let nc = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(nc);
        let names: Vec<String> = js.stream_names().try_collect().await.unwrap_or_default();
        let mut out = Vec::new();
        for n in names {
            if let Ok(s) = js.get_stream(&n).await {
                let cs: Vec<String> = s.consumer_names().try_collect().await.unwrap_or_default();
                out.push((n, cs));
            }
        }
        out
    })
}

/// Delete consumer `name` of `stream` (through one server's `url`).
fn delete_consumer(url: &str, stream: &str, name: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(nc);
        js.get_stream(stream)
            .await
            .unwrap()
            .delete_consumer(name)
            .await
            .unwrap();
    });
}

/// Start `natsplan --format json bench consumer ordered --push ARGS` in the background.
fn spawn_push(args: &[&str]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
        .env_remove("NATS_URL")
        .args([
            "--format",
            "json",
            "bench",
            "consumer",
            "ordered",
            "--push",
            "--no-progress",
        ])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait (up to 2 minutes) until a run's push consumer exists on a `natsplan-js-*` stream: (stream,
/// consumer). A run that ends before is a failure, shown with its output.
fn await_run_consumer(url: &str, child: &mut std::process::Child) -> (String, String) {
    let t0 = Instant::now();
    loop {
        for (s, cs) in consumers(url) {
            if let (true, Some(c)) = (s.starts_with("natsplan-js-"), cs.first()) {
                return (s, c.clone());
            }
        }
        if child.try_wait().unwrap().is_some() {
            let out = child.stdout.take().map(std::io::read_to_string);
            let err = child.stderr.take().map(std::io::read_to_string);
            panic!("the run ended before its consumer was seen: {out:?} {err:?}");
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no run consumer appeared");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn finish(child: std::process::Child) -> (i32, Value, String) {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let all = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(&stdout).unwrap_or(Value::Null),
        all,
    )
}

#[test]
fn the_push_ordered_consumer_reads_the_exact_count_on_both_clients() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let (url, one) = (c.url(), c.client_urls()[0].clone());
    for (client, path) in [("raw", "raw"), ("async-nats", "async-nats"), ("auto", "raw")] {
        let (code, v, all) = bench(&[
            "consumer",
            "ordered",
            "--push",
            "-s",
            &url,
            "--msgs",
            "5001",
            "--clients",
            "2",
            "--replicas",
            "3",
            "--size",
            "256",
            "--client",
            client,
        ]);
        assert_eq!(code, 0, "{client}: {all}");
        assert_eq!(v["kind"], "js-ordered-push", "{v}");
        assert_eq!(u(&v, "received"), 5001, "{client}: {v}");
        assert_eq!(v["complete"], true, "{v}");
        let subs = v["subscribers"].as_array().unwrap();
        let each: Vec<u64> = subs.iter().map(|s| u(s, "msgs")).collect();
        assert_eq!(each, [2501, 2500], "{v}");
        assert!(subs.iter().all(|s| u(s, "bytes") == u(s, "msgs") * 256), "{v}");
        assert_eq!((param(&v, "consumer"), param(&v, "client")), ("push", path), "{v}");
        assert_eq!(param(&v, "consumer_resets"), "0", "{v}");
        assert!(v["params"].get("batch").is_none(), "a push consumer has no batch: {v}");
        assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
    }
    // The runs' streams and consumers are gone.
    assert!(
        consumers(&one).iter().all(|(s, _)| !s.starts_with("natsplan-")),
        "{:?}",
        consumers(&one)
    );
}

#[test]
fn an_existing_stream_is_read_through_a_filter_and_keeps_no_consumer() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let (url, one) = (c.url(), c.client_urls()[0].clone());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(&one).await.unwrap();
        let js = async_nats::jetstream::new(nc);
        js.create_stream(async_nats::jetstream::stream::Config {
            name: "ORD".into(),
            subjects: vec!["ord.>".into()],
            num_replicas: 3,
            ..Default::default()
        })
        .await
        .unwrap();
        // 1,200 on ord.a between 600 on ord.b: the filter reads ord.a only, across the gaps in sequence.
        for i in 0..1800u32 {
            let subject = if i % 3 == 1 { "ord.b" } else { "ord.a" };
            // A new stream's first publishes may meet no responders while its interest spreads.
            let mut tries = 0;
            while js.publish(subject, vec![7u8; 64].into()).await.unwrap().await.is_err() {
                tries += 1;
                assert!(tries < 50, "the stream does not take publishes");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        }
    });
    let (code, v, all) = bench(&[
        "consumer",
        "ordered",
        "--push",
        "-s",
        &url,
        "--stream",
        "ORD",
        "--subject",
        "ord.a",
        "--msgs",
        "1200",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(u(&v, "received"), 1200, "{v}");
    assert_eq!(param(&v, "filter"), "ord.a", "{v}");
    let left = consumers(&one);
    assert_eq!(
        left,
        [("ORD".to_string(), vec![])],
        "the stream stays, the run's consumer does not"
    );
}

#[test]
fn a_deleted_consumer_is_replaced_from_the_next_sequence_and_the_count_stays_exact() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let (url, one) = (c.url(), c.client_urls()[0].clone());
    // 3,000 messages of 4 KiB at 2 ms each: at least 6 s of reading, and 12 MiB, more than the server
    // pushes before its first flow-control answer (2 MiB), so most are still to come when the
    // consumer is deleted.
    let child = spawn_push(&[
        "-s",
        &url,
        "--msgs",
        "3000",
        "--size",
        "4KiB",
        "--replicas",
        "3",
        "--sleep",
        "2ms",
        "--timeout",
        "10s",
    ]);
    let mut child = child;
    let (stream, consumer) = await_run_consumer(&one, &mut child);
    std::thread::sleep(Duration::from_millis(500));
    delete_consumer(&one, &stream, &consumer);
    let (code, v, all) = finish(child);
    assert_eq!(code, 0, "{all}");
    assert_eq!(u(&v, "received"), 3000, "{v}");
    assert_eq!(v["complete"], true, "{v}");
    let resets: u64 = param(&v, "consumer_resets").parse().unwrap();
    assert!(resets >= 1, "the deleted consumer was not replaced: {v}");
}

#[test]
fn a_killed_server_is_left_for_another_and_the_count_stays_exact() {
    let _g = serial();
    let mut c = TestCluster::start(3).expect("lab starts");
    let (url, two) = (c.url(), c.client_urls()[1].clone());
    // The only client connects to the first server; killing it makes the client reconnect elsewhere.
    let child = spawn_push(&[
        "-s",
        &url,
        "--msgs",
        "3000",
        "--size",
        "4KiB",
        "--replicas",
        "3",
        "--sleep",
        "2ms",
        "--timeout",
        "30s",
    ]);
    let mut child = child;
    let _ = await_run_consumer(&two, &mut child);
    std::thread::sleep(Duration::from_millis(500));
    c.kill(0).unwrap();
    let (code, v, all) = finish(child);
    assert_eq!(code, 0, "{all}");
    assert_eq!(u(&v, "received"), 3000, "{v}");
    let resets: u64 = param(&v, "consumer_resets").parse().unwrap();
    assert!(resets >= 1, "{v}");
}
