//! Live tests of issue 19's bench additions on a 3-server loopback cluster: consumer benchmarks (pull
//! fetch, consume, ordered) on a stream the run fills and on an existing stream (`--stream`, which is
//! neither changed nor deleted, and keeps no consumer of the run), publishing to an existing stream, KV
//! gets, object put/get of 1 MiB at R3 (every get checks the object's digest, so the pipelined put's
//! format is proven), nats bench's CSV columns, and bad `--stream` input (exit 2). Small counts: the
//! machine is shared, and nothing here asserts a speed.

use crate::bench_live::bench;
use crate::common::serial;
use natsplan::lab::TestCluster;
use serde_json::Value;

fn u(v: &Value, k: &str) -> u64 {
    v.get(k)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("missing integer {k} in {v}"))
}

/// Consumers and streams on the cluster, through async-nats.
fn streams_and_consumers(url: &str) -> Vec<(String, Vec<String>)> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use futures::TryStreamExt;
        let nc = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(nc);
        let names: Vec<String> = js.stream_names().try_collect().await.unwrap();
        let mut out = Vec::new();
        for n in names {
            let s = js.get_stream(&n).await.unwrap();
            let cs: Vec<String> = s.consumer_names().try_collect().await.unwrap();
            out.push((n, cs));
        }
        out
    })
}

#[test]
fn consumers_read_every_message_and_csv_counts_as_nats_bench() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    let dir = tempfile::tempdir().unwrap();
    for (mode, kind) in [
        ("fetch", "js-fetch"),
        ("consume", "js-consume"),
        ("ordered", "js-ordered"),
    ] {
        let csv = dir.path().join(format!("{mode}.csv"));
        let csv_s = csv.to_str().unwrap();
        let (code, v, all) = bench(&[
            "consumer",
            mode,
            "-s",
            &url,
            "--msgs",
            "3000",
            "--clients",
            "2",
            "--batch",
            "100",
            "--replicas",
            "3",
            "--csv",
            csv_s,
        ]);
        assert_eq!(code, 0, "{all}");
        assert_eq!(v["kind"], kind, "{v}");
        assert_eq!(u(&v, "received"), 3000, "{v}");
        assert_eq!(v["complete"], true, "{v}");
        assert_eq!(v["subscribers"].as_array().unwrap().len(), 2, "{v}");
        let csv = std::fs::read_to_string(&csv).unwrap();
        let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 2, "{csv}");
        for (j, r) in rows.iter().enumerate() {
            assert_eq!(r[1], format!("S{j}"), "{csv}");
            let (count, bytes) = (r[2].parse::<u64>().unwrap(), r[3].parse::<u64>().unwrap());
            // MsgBytes is payload: the client's 1,500 messages × 128 B.
            assert_eq!(bytes, 1500 * 128, "{csv}");
            // MsgCount is the connection's messages in and out: acks (fetch, consume) on top.
            if mode == "ordered" {
                assert!(count >= 1500, "{csv}");
            } else {
                assert!(count > 2 * 1500 - 100, "{csv}");
            }
        }
    }
    // Everything the runs made is gone.
    assert!(streams_and_consumers(&c.client_urls()[0]).is_empty());
}

#[test]
fn an_existing_stream_is_published_to_and_read_without_being_changed() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    // A stream made by a kept run stands in for the site's own.
    let (code, v, all) = bench(&["js", "-s", &url, "--msgs", "1000", "--replicas", "3", "--keep"]);
    assert_eq!(code, 0, "{all}");
    let stream = v["params"]["stream"].as_str().unwrap().to_string();
    let (code, v, all) = bench(&["js", "-s", &url, "--stream", &stream, "--msgs", "500", "--clients", "2"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(u(&v, "published"), 500, "{v}");
    assert_eq!(v["params"]["stream"], stream.as_str());
    for mode in ["fetch", "consume", "ordered"] {
        let (code, v, all) = bench(&["consumer", mode, "-s", &url, "--stream", &stream, "--msgs", "1500"]);
        assert_eq!(code, 0, "{mode}: {all}");
        assert_eq!(u(&v, "received"), 1500, "{mode}: {v}");
    }
    // The stream is still there with every message and no consumer of the runs left behind.
    let left = streams_and_consumers(&c.client_urls()[0]);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].0, stream);
    assert!(left[0].1.is_empty(), "consumers left: {left:?}");
    // Asking for more than the stream holds, or a stream that is not there: exit 2, with the flag.
    let (code, _, all) = bench(&["consumer", "fetch", "-s", &url, "--stream", &stream, "--msgs", "99999"]);
    assert_eq!(code, 2, "{all}");
    assert!(all.contains("holds 1500 messages"), "{all}");
    let (code, _, all) = bench(&["js", "-s", &url, "--stream", "no-such-stream", "--msgs", "10"]);
    assert_eq!(code, 2, "{all}");
    assert!(all.contains("--stream no-such-stream"), "{all}");
}

#[test]
fn kv_gets_and_1mib_objects_at_r3() {
    let _g = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    let (code, v, all) = bench(&[
        "kv",
        "get",
        "-s",
        &url,
        "--msgs",
        "2000",
        "--clients",
        "2",
        "--replicas",
        "3",
    ]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(v["kind"], "kv-get");
    assert_eq!(u(&v, "received"), 2000, "{v}");
    assert_eq!(u(&v, "failed"), 0, "{v}");
    for op in ["put", "get"] {
        for size in ["1MiB", "200KiB", "8KiB"] {
            let (code, v, all) = bench(&[
                "obj",
                op,
                "-s",
                &url,
                "--objects",
                "4",
                "--size",
                size,
                "--replicas",
                "3",
                "--clients",
                "2",
            ]);
            assert_eq!(code, 0, "obj {op} {size}: {all}");
            assert_eq!(u(&v, "failed"), 0, "obj {op} {size}: {v}");
            assert_eq!(u(&v, "done"), 4, "obj {op} {size}: {v}");
        }
    }
    assert!(streams_and_consumers(&c.client_urls()[0]).is_empty());
    // Every get's consumer goes with it (async-nats's reader left each one for 30 s, and a run of more
    // than about a thousand gets met "maximum consumers limit reached").
    let (code, v, all) = bench(&["obj", "get", "-s", &url, "--objects", "6", "--size", "8KiB", "--keep"]);
    assert_eq!(code, 0, "{all}");
    let bucket = v["params"]["bucket"].as_str().unwrap().to_string();
    let left = streams_and_consumers(&c.client_urls()[0]);
    let store = left
        .iter()
        .find(|(s, _)| *s == format!("OBJ_{bucket}"))
        .expect("kept store");
    assert!(store.1.is_empty(), "consumers left by gets: {left:?}");
}
