//! Live tests of `natsplan bench` against real nats-server clusters from the lab (loopback, temp dirs,
//! one cluster at a time): every subcommand's JSON has the contract keys and sane numbers, `--rate`
//! sustains below capacity and reports "not sustained" far above it without hanging, a slow consumer is
//! reported rather than waited for, and an unreachable server exits 3.

use crate::common::serial;
use assert_cmd::Command;
use natsplan::lab::TestCluster;
use serde_json::Value;
use std::time::{Duration, Instant};

/// `natsplan --format json bench ARGS --no-progress`: exit code, the JSON (Null when none) and stdout +
/// stderr for messages. Shared with `bench_consumers_live`.
pub(crate) fn bench(args: &[&str]) -> (i32, Value, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["--format", "json", "bench"])
        .args(args)
        .args(["--no-progress"])
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, format!("{stdout}\n{stderr}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("missing number {k} in {v}"))
}

fn u(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("missing integer {k} in {v}"))
}

/// The keys every result has, positive rates, and ordered latency percentiles.
fn sane(v: &Value, kind: &str, msgs: u64, size: u64) {
    assert_eq!(v["kind"], kind, "{v}");
    assert_eq!(u(v, "msgs"), msgs);
    assert_eq!(u(v, "size"), size);
    assert!(f(v, "msgs_per_s") > 0.0, "{v}");
    assert!(f(v, "bytes_per_s") > 0.0, "{v}");
    let l = &v["latency_us"];
    let p = |k: &str| {
        l.get(k)
            .and_then(Value::as_f64)
            .unwrap_or_else(|| panic!("latency_us.{k} missing: {v}"))
    };
    assert!(p("p50") > 0.0);
    assert!(
        p("p50") <= p("p90") && p("p90") <= p("p99") && p("p99") <= p("p999") && p("p999") <= p("max"),
        "{l}"
    );
}

#[test]
fn core_pub_sub_counts_exactly_across_servers() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let (code, v, all) = bench(&[
        "core",
        "-s",
        &c.url(),
        "--pubs",
        "2",
        "--subs",
        "2",
        "--msgs",
        "20000",
        "--size",
        "64",
    ]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "core", 20000, 64);
    assert_eq!(u(&v, "published"), 20000);
    assert_eq!(u(&v, "received"), 40000, "each subscriber gets every message: {all}");
    for k in ["aggregate_msgs_per_s", "pub_msgs_per_s", "sub_msgs_per_s"] {
        assert!(f(&v, k) > 0.0, "{k}");
    }
    // Aggregate is (published + received) over first publish → last receipt, so below the sum of sides.
    assert!(f(&v, "aggregate_msgs_per_s") <= f(&v, "pub_msgs_per_s") + f(&v, "sub_msgs_per_s") + 1.0);
    assert_eq!(v["losses"]["dropped"], 0);
}

#[test]
fn the_async_nats_client_path_gives_the_same_counts() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let url = c.url();
    let (code, v, all) = bench(&[
        "core",
        "-s",
        &url,
        "--client",
        "async-nats",
        "--msgs",
        "5000",
        "--subs",
        "2",
    ]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "core", 5000, 128);
    assert_eq!(v["params"]["client"], "async-nats");
    assert_eq!(u(&v, "received"), 10000);
    for mode in ["async", "sync"] {
        let (code, v, all) = bench(&[
            "js",
            "-s",
            &url,
            "--client",
            "async-nats",
            "--publish",
            mode,
            "--msgs",
            "500",
            "--pubs",
            "2",
        ]);
        assert_eq!(code, 0, "{all}");
        sane(&v, "js", 500, 128);
        assert_eq!(u(&v, "published"), 500);
    }
    let (code, v, all) = bench(&["ping", "-s", &url, "--client", "async-nats", "--msgs", "50"]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "ping", 50, 128);
    assert_eq!(u(&v, "published"), 50);
    let (code, _, all) = bench(&[
        "core",
        "-s",
        &url,
        "--client",
        "raw",
        "--sub-sleep",
        "1ms",
        "--msgs",
        "10",
    ]);
    assert_eq!(code, 2, "{all}");
}

#[test]
fn text_and_csv_outputs_have_the_nats_bench_shape() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args([
            "bench",
            "core",
            "-s",
            &c.url(),
            "--msgs",
            "5000",
            "--pubs",
            "2",
            "--subs",
            "1",
            "--csv",
        ])
        .arg(&csv)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.starts_with("Starting Pub/Sub benchmark [") && text.contains("msgs=5000, msgsize=128"),
        "{text}"
    );
    assert!(
        text.contains("NATS Pub/Sub stats: ") && text.contains(" msgs/sec ~ "),
        "{text}"
    );
    assert!(
        text.contains(" Pub stats: ") && text.contains("  [2] ") && text.contains(" | stddev "),
        "{text}"
    );
    // Secrets and progress never reach stdout; progress is off when stderr is not a terminal.
    assert!(String::from_utf8_lossy(&out.stderr).is_empty());
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("#RunID,ClientID,MsgCount,MsgBytes,MsgsPerSec,BytesPerSec,DurationSecs"));
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(
        lines[1].split(',').nth(1) == Some("P0") && lines[3].split(',').nth(1) == Some("S0"),
        "{csv}"
    );
}

#[test]
fn jetstream_kv_and_objects_run_and_clean_up() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    let (code, v, all) = bench(&["js", "-s", &url, "--msgs", "3000", "--replicas", "3", "--pubs", "2"]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "js", 3000, 128);
    assert_eq!(u(&v, "published"), 3000, "every publish acknowledged: {all}");
    let (code, v, all) = bench(&[
        "js",
        "-s",
        &url,
        "--msgs",
        "300",
        "--publish",
        "sync",
        "--storage",
        "memory",
    ]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "js", 300, 128);
    let (code, v, all) = bench(&["kv", "-s", &url, "--msgs", "400", "--clients", "2", "--replicas", "3"]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "kv", 400, 128);
    assert_eq!(u(&v, "published"), 400);
    assert_eq!(f(&v, "ops_per_s"), f(&v, "msgs_per_s"));
    for op in ["put", "get"] {
        let (code, v, all) = bench(&[
            "obj",
            op,
            "-s",
            &url,
            "--objects",
            "8",
            "--size",
            "64KiB",
            "--clients",
            "2",
        ]);
        assert_eq!(code, 0, "{all}");
        sane(&v, &format!("obj-{op}"), 8, 65536);
        assert_eq!(u(&v, "published") + u(&v, "received"), 8, "{all}");
        assert!(f(&v, "bytes_per_s") > f(&v, "ops_per_s") * 60000.0);
    }
    // Nothing named natsplan-* is left behind.
    let jsz = natsplan::monitor::jsz(&c.monitor_urls()[0], "", Duration::from_secs(2)).unwrap();
    assert_eq!(jsz["streams"].as_u64(), Some(0), "{jsz}");
    // Asynchronous KV puts (issue 37's grid): 64 in flight per client, every one acknowledged, counted as
    // operations, each a new key of the bucket (kept, to count them).
    let (code, v, all) = bench(&[
        "kv",
        "put",
        "-s",
        &url,
        "--msgs",
        "400",
        "--clients",
        "2",
        "--replicas",
        "3",
        "--publish",
        "async",
        "--batch",
        "64",
        "--keep",
    ]);
    let v_kv = v.clone();
    assert_eq!(code, 0, "{all}");
    sane(&v, "kv", 400, 128);
    assert_eq!(u(&v, "published"), 400, "{all}");
    assert_eq!(f(&v, "ops_per_s"), f(&v, "msgs_per_s"));
    assert_eq!(
        (
            v["params"]["publish"].as_str(),
            v["params"]["window"].as_str(),
            v["params"]["clients"].as_str()
        ),
        (Some("async"), Some("64"), Some("2")),
        "{all}"
    );
    // Readers while the publishers write (issue 37's #5637 cell): each of 2 consumers reads every one of
    // the 2,000 messages; the publishers' rate and the readers' are both in the result.
    let (code, v, all) = bench(&[
        "js",
        "-s",
        &url,
        "--msgs",
        "2000",
        "--replicas",
        "3",
        "--clients",
        "2",
        "--consumers",
        "2",
    ]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "js", 2000, 128);
    assert_eq!((u(&v, "published"), u(&v, "received")), (2000, 4000), "{all}");
    let readers: Vec<u64> = v["subscribers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["msgs"].as_u64().unwrap())
        .collect();
    assert_eq!(readers, [2000, 2000], "{all}");
    assert_eq!(v["params"]["consumers"].as_str(), Some("2"), "{all}");
    assert!(f(&v, "pub_msgs_per_s") > 0.0 && f(&v, "sub_msgs_per_s") > 0.0, "{all}");
    // A js run's headline stays its publishers' rate; both sides together are the aggregate.
    assert_eq!(f(&v, "msgs_per_s"), f(&v, "pub_msgs_per_s"), "{all}");
    assert!(f(&v, "aggregate_msgs_per_s") > f(&v, "pub_msgs_per_s"), "{all}");
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{all}");
    assert!(v["complete"].as_bool().unwrap(), "{all}");
    let bucket = v_kv["params"]["bucket"].as_str().unwrap().to_string();
    let jsz = natsplan::monitor::jsz(
        &c.monitor_urls()[0],
        "accounts=true&streams=true",
        Duration::from_secs(2),
    )
    .unwrap();
    let streams = jsz.to_string();
    let state = jsz["account_details"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["stream_detail"].as_array().cloned().unwrap_or_default())
        .find(|s| s["name"].as_str() == Some(&format!("KV_{bucket}")))
        .unwrap_or_else(|| panic!("KV_{bucket} kept: {streams}"))["state"]
        .clone();
    assert_eq!(
        (state["messages"].as_u64(), state["num_subjects"].as_u64()),
        (Some(400), Some(400)),
        "400 puts, 400 keys: {state}"
    );
}

#[test]
fn ping_and_flood_measure_latency() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let (code, v, all) = bench(&["ping", "-s", &c.url(), "--msgs", "200"]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "ping", 200, 128);
    assert_eq!(u(&v, "published"), 200);
    assert_eq!(u(&v["latency_us"], "count"), 200);
    let (code, v, all) = bench(&["flood", "-s", &c.url(), "--msgs", "8000", "--pubs", "4"]);
    assert_eq!(code, 0, "{all}");
    sane(&v, "flood", 8000, 128);
    assert!(u(&v, "received") <= u(&v, "published"));
    assert_eq!(
        u(&v["latency_us"], "count"),
        u(&v, "received"),
        "every flood message is timed"
    );
}

#[test]
fn rate_below_capacity_is_sustained_and_far_above_is_not_without_hanging() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let (code, v, all) = bench(&["core", "-s", &c.url(), "--msgs", "3000", "--rate", "2000"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["rate"]["sustained"], true, "{all}");
    let achieved = f(&v["rate"], "achieved_per_s");
    assert!((1500.0..2500.0).contains(&achieved), "achieved {achieved}");
    assert_eq!(u(&v, "received"), 3000);
    let t = Instant::now();
    let (code, v, all) = bench(&[
        "js",
        "-s",
        &c.url(),
        "--msgs",
        "10000000",
        "--rate",
        "10000000",
        "--backlog-cutoff",
        "300ms",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["rate"]["sustained"], false, "{all}");
    assert!(u(&v, "published") < 10_000_000);
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "a not-sustained run stops at the cut-off"
    );
    assert!(v["warnings"].to_string().contains("not sustained"));
}

#[test]
fn a_slow_consumer_is_reported_not_waited_for() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    let mon = c.monitor_urls().join(",");
    let t = Instant::now();
    let (code, v, all) = bench(&[
        "core",
        "-s",
        &c.url(),
        "--monitor",
        &mon,
        "--msgs",
        "20000",
        "--sub-buffer",
        "512",
        "--sub-sleep",
        "1ms",
        "--timeout",
        "1s",
    ]);
    assert_eq!(code, 0, "{all}");
    assert!(t.elapsed() < Duration::from_secs(30), "the run ended at the timeout");
    let l = &v["losses"];
    assert!(u(l, "dropped") > 0, "{all}");
    assert!(u(l, "client_slow_events") > 0, "{all}");
    assert!(l["server_slow_consumers"].is_u64(), "read from /varz: {all}");
    assert_eq!(l["timed_out"], true);
    assert!(u(&v, "received") < u(&v, "published"));
    assert_eq!(u(&v, "received") + u(l, "dropped"), u(&v, "published"));
}

/// Issue 40: a message over the server's `max_payload` (1 MiB by default, from its INFO) is bad input
/// naming the bound, before any payload is made (was: exit 3 "connection reset" after connecting, or an
/// abort allocating 8 GiB). A KV value of exactly max_payload still runs.
#[test]
fn a_size_over_the_servers_max_payload_is_refused_naming_it() {
    let _s = serial();
    let c = TestCluster::start(1).expect("lab starts");
    for kind in ["js", "core", "kv"] {
        let (code, _, all) = bench(&[kind, "-s", &c.url(), "--msgs", "10", "--size", "2MiB"]);
        assert_eq!(code, 2, "{kind}: {all}");
        assert!(
            all.contains("--size 2097152: over the server's max_payload of 1048576 bytes"),
            "{kind}: {all}"
        );
    }
    let (code, _, all) = bench(&["kv", "-s", &c.url(), "--msgs", "5", "--size", "1MiB"]);
    assert_eq!(code, 0, "{all}");
}

#[test]
fn unreachable_server_exits_3_and_bad_flags_exit_2() {
    let port = natsplan::lab::free_ports(1).unwrap()[0];
    let (code, _, all) = bench(&[
        "core",
        "-s",
        &format!("nats://u:s3cret@127.0.0.1:{port}"),
        "--msgs",
        "10",
    ]);
    assert_eq!(code, 3, "{all}");
    assert!(all.contains("cannot connect to nats://***@127.0.0.1"), "{all}");
    assert!(!all.contains("s3cret"), "secret leaked: {all}");
    let (code, _, all) = bench(&["core", "--pubs", "0", "--subs", "0"]);
    assert_eq!(code, 2, "{all}");
    let (code, _, all) = bench(&["js", "--replicas", "7"]);
    assert_eq!(code, 2, "{all}");
    let (code, _, all) = bench(&["core", "--size", "lots"]);
    assert_eq!(code, 2, "{all}");
}

#[test]
fn the_path_probe_reaches_the_stream_from_every_server_and_stores_nothing() {
    // Before a raw JetStream publisher starts its clock it checks that its publishes reach the stream and
    // the acks come back; the probe is answered by the stream's leader with an error ack, stored nowhere.
    use natsplan::bench::raw::{stream_answers_publish, RawConn, RawTarget};
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(c.client_urls()[0].as_str()).await.unwrap();
        let js = async_nats::jetstream::new(nc);
        let mut stream = js
            .create_stream(async_nats::jetstream::stream::Config {
                name: "probe-test".into(),
                subjects: vec!["probe.test".into()],
                num_replicas: 1,
                ..Default::default()
            })
            .await
            .unwrap();
        for (i, url) in c.client_urls().iter().enumerate() {
            let t = RawTarget {
                addr: url.trim_start_matches("nats://").to_string(),
                display: url.clone(),
                user: None,
                pass: None,
                token: None,
            };
            let mut rc = RawConn::connect(&t, "probe").await.unwrap();
            let inbox = format!("_INBOX.probetest{i}.");
            rc.out.extend_from_slice(format!("SUB {inbox}* 1\r\n").as_bytes());
            rc.round_trip().await.unwrap();
            stream_answers_publish(&mut rc, "probe.test", &inbox, Duration::from_secs(10))
                .await
                .unwrap_or_else(|e| panic!("server {}: {e}", i + 1));
            // No stream behind a subject: a clear error once the time is up, not a hang.
            let t0 = Instant::now();
            let e = stream_answers_publish(&mut rc, "probe.nothing", &inbox, Duration::from_secs(2))
                .await
                .unwrap_err();
            assert!(
                matches!(&e, natsplan::bench::raw::ProbeError::Unanswered { subject, .. } if subject == "probe.nothing"),
                "{e}"
            );
            assert!(e.to_string().contains("no ack for a probe publish on probe.nothing"), "{e}");
            assert!(t0.elapsed() >= Duration::from_secs(2));
        }
        let info = stream.info().await.unwrap();
        assert_eq!(info.state.messages, 0, "the probes stored nothing");
    });
}
