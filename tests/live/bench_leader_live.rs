//! `bench --leader`: the workers connect where the flag says relative to the stream leader, and the
//! result's `leader` is the one the servers name. Checked from outside the run: every server's `/connz`
//! is polled while a paced run goes on, and `/jsz` names the leader of the stream kept after it.

use crate::bench_live::bench;
use crate::common::serial;
use natsplan::lab::TestCluster;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// The servers (by name) holding a connection named `natsplan-bench-{role}N` while `args` runs.
fn servers_of_workers(c: &TestCluster, args: Vec<String>, role: &str) -> (i32, Value, String, BTreeSet<String>) {
    let run = std::thread::spawn(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        bench(&a)
    });
    let mut seen = BTreeSet::new();
    let t0 = Instant::now();
    while !run.is_finished() && t0.elapsed() < Duration::from_secs(60) {
        for (node, mon) in c.nodes().iter().zip(c.monitor_urls()) {
            let Ok(v) = natsplan::monitor::get_json(&mon, "/connz?limit=1024", Duration::from_secs(2)) else {
                continue;
            };
            let prefix = format!("natsplan-bench-{role}");
            let any = v["connections"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|k| k["name"].as_str().is_some_and(|n| n.starts_with(&prefix)));
            if any {
                seen.insert(node.name.clone());
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, v, all) = run.join().unwrap();
    (code, v, all, seen)
}

/// The leader of `stream` as the servers' `/jsz` names it.
fn jsz_leader(c: &TestCluster, stream: &str) -> Option<String> {
    c.monitor_urls().iter().find_map(|m| {
        let v = natsplan::monitor::jsz(m, "accounts=1&streams=1", Duration::from_secs(2)).ok()?;
        v["account_details"].as_array()?.iter().find_map(|a| {
            a["stream_detail"].as_array()?.iter().find_map(|s| {
                (s["name"] == stream)
                    .then(|| s["cluster"]["leader"].as_str().map(str::to_string))
                    .flatten()
            })
        })
    })
}

fn param<'a>(v: &'a Value, k: &str) -> &'a str {
    v["params"][k]
        .as_str()
        .unwrap_or_else(|| panic!("params.{k} missing: {v}"))
}

#[test]
fn remote_and_local_put_the_workers_where_they_say_and_any_counts_them() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    // Paced (2 s) so that /connz sees the publishers; kept so /jsz can name the leader afterwards.
    let run = |replicas: &str, leader: &str| -> Vec<String> {
        [
            "js",
            "-s",
            &url,
            "--msgs",
            "800",
            "--rate",
            "400",
            "--pubs",
            "2",
            "--replicas",
            replicas,
            "--keep",
            "--leader",
            leader,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    for replicas in ["1", "3"] {
        let (code, v, all, seen) = servers_of_workers(&c, run(replicas, "remote"), "pub");
        assert_eq!(code, 0, "{all}");
        let leader = param(&v, "leader").to_string();
        assert_eq!(
            jsz_leader(&c, param(&v, "stream")).as_deref(),
            Some(leader.as_str()),
            "{v}"
        );
        assert_eq!(param(&v, "leader_placement"), "remote");
        assert_eq!(param(&v, "workers_on_leader"), "0/2");
        assert!(
            !seen.is_empty() && !seen.contains(&leader),
            "R{replicas} remote: publishers on {seen:?}, leader {leader}"
        );

        let (code, v, all, seen) = servers_of_workers(&c, run(replicas, "local"), "pub");
        assert_eq!(code, 0, "{all}");
        let leader = param(&v, "leader").to_string();
        assert_eq!(param(&v, "workers_on_leader"), "2/2");
        assert_eq!(
            seen,
            BTreeSet::from([leader.clone()]),
            "R{replicas} local: publishers on {seen:?}"
        );
    }
    // KV putters are placed the same way (the bucket's stream is KV_<bucket>).
    let (code, v, all, seen) = servers_of_workers(
        &c,
        [
            "kv",
            "-s",
            &url,
            "--msgs",
            "600",
            "--rate",
            "300",
            "--clients",
            "2",
            "--replicas",
            "3",
            "--leader",
            "remote",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        "kv",
    );
    assert_eq!(code, 0, "{all}");
    assert!(
        !seen.is_empty() && !seen.contains(param(&v, "leader")),
        "kv remote: {seen:?} {v}"
    );

    // The kept R3 stream: only its leader's URL given, remote cannot be had (exit 2, what to add); any
    // records how many workers the URL order put on the leader.
    let (code, v, all) = bench(&["js", "-s", &url, "--msgs", "100", "--replicas", "3", "--keep"]);
    assert_eq!(code, 0, "{all}");
    let stream = param(&v, "stream").to_string();
    let leader = param(&v, "leader").to_string();
    let on = c.node(&leader).unwrap();
    let only = c.client_urls()[on].clone();
    let (code, _, all) = bench(&[
        "js", "-s", &only, "--stream", &stream, "--msgs", "10", "--leader", "remote",
    ]);
    assert_eq!(code, 2, "{all}");
    assert!(all.contains(&format!("the stream leader's ({leader})")), "{all}");
    let (code, v, all) = bench(&["js", "-s", &only, "--stream", &stream, "--msgs", "10", "--pubs", "2"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(param(&v, "leader_placement"), "any");
    assert_eq!(param(&v, "workers_on_leader"), "2/2");
}

/// The leader of consumer `consumer` on `stream` as the servers' `/jsz` names it (a server that does not
/// lead it may name none).
fn jsz_consumer_leader(c: &TestCluster, stream: &str, consumer: &str) -> Option<String> {
    c.monitor_urls().iter().find_map(|m| {
        let v = natsplan::monitor::jsz(m, "accounts=1&streams=1&consumers=1", Duration::from_secs(2)).ok()?;
        v["account_details"].as_array()?.iter().find_map(|a| {
            a["stream_detail"].as_array()?.iter().find_map(|s| {
                (s["name"] == stream).then_some(())?;
                s["consumer_detail"].as_array()?.iter().find_map(|k| {
                    (k["name"] == consumer)
                        .then(|| k["cluster"]["leader"].as_str().map(str::to_string))
                        .flatten()
                })
            })
        })
    })
}

/// The consumers' leaders a kept run's result names (`consumer_leader`, in reader order), checked against
/// `/jsz`.
fn consumer_leaders_as_jsz_says(c: &TestCluster, stream: &str, v: &Value) -> Vec<String> {
    let run = v["run_id"].as_str().expect("run_id");
    let leaders: Vec<String> = param(v, "consumer_leader").split(',').map(str::to_string).collect();
    for (i, l) in leaders.iter().enumerate() {
        let name = format!("natsplan-{run}-c{i}");
        assert_eq!(
            jsz_consumer_leader(c, stream, &name).as_deref(),
            Some(l.as_str()),
            "{name}: {v}"
        );
    }
    leaders
}

/// An R3 interest stream `name` on subject `name`, with a durable consumer that never reads, so what is
/// published stays for the runs' consumers.
fn interest_stream(url: &str, name: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use async_nats::jetstream::{consumer, stream};
        let js = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
        let s = js
            .create_stream(stream::Config {
                name: name.into(),
                subjects: vec![name.into()],
                retention: stream::RetentionPolicy::Interest,
                num_replicas: 3,
                ..Default::default()
            })
            .await
            .unwrap();
        s.create_consumer(consumer::pull::Config {
            durable_name: Some("hold".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    })
}

#[test]
fn consumer_leader_places_each_reader_by_its_consumers_leader_and_the_result_says_where() {
    let _s = serial();
    let c = TestCluster::start(3).expect("lab starts");
    let url = c.url();
    let (code, v, all) = bench(&["js", "-s", &url, "--msgs", "3000", "--replicas", "3", "--keep"]);
    assert_eq!(code, 0, "{all}");
    let stream = param(&v, "stream").to_string();
    // Kept, so /jsz can name the consumers' leaders afterwards (they expire after a minute unread).
    let fetch = |server: &str, want: &str| {
        bench(&[
            "consumer",
            "fetch",
            "-s",
            server,
            "--stream",
            &stream,
            "--msgs",
            "3000",
            "--clients",
            "3",
            "--consumer-leader",
            want,
            "--keep",
        ])
    };
    // Every URL given: each reader connects to its consumer's leader's server (local) or another (remote).
    for (want, on) in [("local", "3/3"), ("remote", "0/3")] {
        let (code, v, all) = fetch(&url, want);
        assert_eq!(code, 0, "{all}");
        assert_eq!(v["done"].as_u64(), Some(3000), "{v}");
        assert_eq!(param(&v, "consumer_leader_placement"), want);
        assert_eq!(param(&v, "readers_on_consumer_leader"), on, "{v}");
        assert_eq!(
            Some(param(&v, "stream_leader")),
            jsz_leader(&c, &stream).as_deref(),
            "{v}"
        );
        assert_eq!(consumer_leaders_as_jsz_says(&c, &stream, &v).len(), 3);
    }
    // The run's consumers on a limits stream are R1 (not durable: nats-server's ConsumerConfig.replicas),
    // so only the URLs can place them. On an interest stream they are replicated as the stream is: with
    // only n1's URL given, the consumer's leader steps down to n1 (local) or away from it (remote).
    let (n1, only) = (c.nodes()[0].name.clone(), c.client_urls()[0].clone());
    interest_stream(&only, "natsplan-interest-live");
    let (code, _, all) = bench(&["js", "-s", &only, "--stream", "natsplan-interest-live", "--msgs", "300"]);
    assert_eq!(code, 0, "{all}");
    for (want, on) in [("local", "2/2"), ("remote", "0/2")] {
        let (code, v, all) = bench(&[
            "consumer",
            "fetch",
            "-s",
            &only,
            "--stream",
            "natsplan-interest-live",
            "--msgs",
            "300",
            "--clients",
            "2",
            "--consumer-leader",
            want,
            "--keep",
        ]);
        assert_eq!(code, 0, "{all}");
        assert_eq!(param(&v, "readers_on_consumer_leader"), on, "{v}");
        for l in consumer_leaders_as_jsz_says(&c, "natsplan-interest-live", &v) {
            assert_eq!(
                l == n1,
                want == "local",
                "{want}: a consumer led by {l}, the reader on {n1}: {v}"
            );
        }
    }
    // any: as before, recorded.
    let (code, v, all) = bench(&["consumer", "consume", "-s", &url, "--stream", &stream, "--msgs", "3000"]);
    assert_eq!(code, 0, "{all}");
    assert_eq!(param(&v, "consumer_leader_placement"), "any");
    assert!(["0/1", "1/1"].contains(&param(&v, "readers_on_consumer_leader")), "{v}");
    // Where it cannot apply: exit 2, the flag named.
    let (code, _, all) = bench(&[
        "consumer",
        "ordered",
        "-s",
        &url,
        "--stream",
        &stream,
        "--msgs",
        "10",
        "--consumer-leader",
        "local",
    ]);
    assert_eq!(code, 2, "{all}");
    assert!(
        all.contains("--consumer-leader local: `ordered` cannot be placed"),
        "{all}"
    );
    let (code, _, all) = bench(&[
        "consumer", "fetch", "-s", &url, "--stream", &stream, "--msgs", "10", "--leader", "remote",
    ]);
    assert_eq!(code, 2, "{all}");
    assert!(all.contains("use --consumer-leader"), "{all}");
}
