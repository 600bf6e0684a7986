//! The nats CLI's JSON as natsplan's input: `design --from-cluster FILE,...` reads `nats stream info
//! --json`, `nats stream ls --json` and JSZ answers offline, and a site's `workload.streams[].config`
//! names a `nats stream add --config` file. Files in the shapes nats-server writes (StreamInfo,
//! StreamConfig, ServerAPIJszResponse), bad ones refused at FILE:LINE:COL.

use crate::common::run;
use serde_json::Value;
use std::path::Path;

const RACKS: &str = r#"
site: interchange
nats: { replicas: [3], cluster_name: prod }
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
"#;

/// A StreamInfo as `nats stream info orders --json` prints it (nats-server 2.12 field names), at `ts`
/// with `last` messages stored since 09:00.
fn stream_info(ts: &str, last: u64, last_ts: &str) -> String {
    format!(
        r#"{{
  "config": {{
    "name": "orders",
    "subjects": ["orders.>"],
    "retention": "limits",
    "max_consumers": -1,
    "max_msgs": -1,
    "max_bytes": -1,
    "max_age": 7200000000000,
    "max_msgs_per_subject": -1,
    "max_msg_size": -1,
    "discard": "old",
    "storage": "file",
    "num_replicas": 3,
    "duplicate_window": 120000000000,
    "compression": "none",
    "allow_direct": true,
    "mirror_direct": false,
    "sealed": false,
    "deny_delete": false,
    "deny_purge": false,
    "allow_rollup_hdrs": false,
    "consumer_limits": {{}}
  }},
  "created": "2026-12-01T08:00:00.000000001Z",
  "state": {{
    "messages": {last},
    "bytes": {bytes},
    "first_seq": 1,
    "first_ts": "2026-12-01T09:00:00Z",
    "last_seq": {last},
    "last_ts": "{last_ts}",
    "num_subjects": 1,
    "consumer_count": 1
  }},
  "cluster": {{"name": "prod", "leader": "a1", "replicas": [{{"name": "b1", "current": true, "active": 1000}}]}},
  "ts": "{ts}"
}}"#,
        bytes = last * 1062,
    )
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn stream<'v>(v: &'v Value, name: &str) -> &'v Value {
    v["layouts"][0]["predicted"]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no predicted stream {name}: {v}"))
}

#[test]
fn stream_info_files_are_a_workload_with_the_rate_between_two_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let site = write(tmp.path(), "site.yaml", RACKS);
    // Two `nats stream info --json` runs 20 s apart, as `>>` appends them to one file, plus `nats stream ls --json`.
    let infos = format!(
        "{}\n{}\n",
        stream_info("2026-12-01T10:00:00Z", 36_000, "2026-12-01T10:00:00Z"),
        stream_info("2026-12-01T10:00:20Z", 40_000, "2026-12-01T10:00:20Z")
    );
    let a = write(tmp.path(), "orders.json", &infos);
    let ls = write(tmp.path(), "ls.json", "[\n  \"orders\",\n  \"audit\"\n]\n");
    let (code, out, err) = run(&[
        "design",
        &site,
        "--from-cluster",
        &format!("{a},{ls}"),
        "--format",
        "json",
        "--top",
        "1",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // (40,000 − 36,000) publishes in 20 s.
    assert_eq!(stream(&v, "orders")["required_per_s"].as_f64().unwrap(), 200.0);
    let asset = v["layouts"][0]["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "orders")
        .unwrap();
    assert_eq!(asset["replicas"], 3);
    assert!(err.contains("1 with the rate measured between two snapshots"), "{err}");
    assert!(err.contains("without an info, so not imported: audit"), "{err}");
}

#[test]
fn jsz_answers_name_the_servers_and_their_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let site = write(tmp.path(), "site.yaml", RACKS);
    // `nats server request jetstream --all`: one ServerAPIJszResponse per line.
    let line = |server: &str, now: &str, last: u64| {
        serde_json::json!({
            "server": {"name": server, "host": "0.0.0.0", "id": "NX", "cluster": "prod", "ver": "2.12.1",
                       "tags": ["rack:a"], "jetstream": true, "flags": 1, "seq": 7, "time": now},
            "data": {"server_id": "NX", "now": now,
                     "config": {"max_memory": 1000, "max_storage": 1000000, "store_dir": "/d",
                                "sync_interval": 10_000_000_000u64, "unique_tag": "rack:"},
                     "streams": 1, "consumers": 0, "messages": last, "bytes": last * 200,
                     "account_details": [{"name": "APP", "id": "APP", "memory": 0, "storage": 1,
                        "stream_detail": [{"name": "events", "created": "2026-12-01T08:00:00Z",
                          "config": {"name": "events", "subjects": ["events.>"], "num_replicas": 3,
                                     "max_age": 86_400_000_000_000u64, "max_bytes": -1, "storage": "file",
                                     "retention": "limits", "discard": "old"},
                          "state": {"messages": last, "bytes": last * 200, "first_seq": 1, "last_seq": last,
                                    "first_ts": "2026-12-01T08:00:00Z", "last_ts": now, "consumer_count": 0}}]}]}
        })
        .to_string()
    };
    let text = [
        line("a1", "2026-12-01T10:00:00Z", 1000),
        line("x9", "2026-12-01T10:00:00Z", 1000),
        line("a1", "2026-12-01T10:00:10Z", 1500),
    ]
    .join("\n");
    let f = write(tmp.path(), "jsz.json", &text);
    let (code, out, err) = run(&["design", &site, "--from-cluster", &f, "--format", "json", "--top", "1"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stream(&v, "events")["required_per_s"].as_f64().unwrap(), 50.0);
    assert!(
        err.contains("2 servers (a1, x9) in cluster prod, nats-server 2.12.1"),
        "{err}"
    );
    assert!(err.contains("that the site does not list: x9"), "{err}");
    assert!(
        err.contains("the live servers sync 10s; the site plans sync_interval 2m"),
        "{err}"
    );
}

#[test]
fn bad_cluster_files_are_refused_with_their_place() {
    let tmp = tempfile::tempdir().unwrap();
    let site = write(tmp.path(), "site.yaml", RACKS);
    let f = write(
        tmp.path(),
        "bad.json",
        "{\n  \"config\": {\"name\": \"orders\"},\n  \"state\": {,}\n}\n",
    );
    let (code, _, err) = run(&["design", &site, "--from-cluster", &f]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("bad.json:3:13: not valid JSON"), "{err}");
    let names = write(tmp.path(), "ls.json", "[\"orders\"]");
    let (code, _, err) = run(&["design", &site, "--from-cluster", &names]);
    assert_eq!(code, 2);
    assert!(
        err.contains("names only (orders)") && err.contains("nats stream info NAME --json"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "design",
        &site,
        "--from-cluster",
        &format!("http://127.0.0.1:1,{names}"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("not both"), "{err}");
}

#[test]
fn a_saved_plan_keeps_cluster_files_and_refuses_an_edited_import() {
    let tmp = tempfile::tempdir().unwrap();
    let site = write(tmp.path(), "site.yaml", RACKS);
    let a = write(
        tmp.path(),
        "orders.json",
        &stream_info("2026-12-01T10:00:00Z", 36_000, "2026-12-01T10:00:00Z"),
    );
    let plan = tmp.path().join("plan.json").display().to_string();
    let (code, _, err) = run(&["design", &site, "--from-cluster", &a, "--save", &plan]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(&a).unwrap();
    let (code, _, err) = run(&["design", "--plan", &plan, "--format", "json"]);
    assert_eq!(code, 0, "the plan holds the imported streams: {err}");
    let text = std::fs::read_to_string(&plan).unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    let sources = saved["inputs"]["import_sources"][0].as_str().unwrap();
    assert!(
        sources.starts_with("cluster files ") && sources.contains("(sha256:"),
        "{sources}"
    );
    // 36,000 messages over the hour stored: about 10/s. Edit it to 20/s in the plan.
    let rate = saved["inputs"]["imported_streams"][0]["msgs_per_s"].as_f64().unwrap();
    assert!((rate - 10.0).abs() < 0.01, "{rate}");
    let mut edited = saved.clone();
    edited["inputs"]["imported_streams"][0]["msgs_per_s"] = 20.0.into();
    std::fs::write(&plan, edited.to_string()).unwrap();
    let (code, _, err) = run(&["design", "--plan", &plan]);
    assert_eq!(code, 2);
    assert!(err.contains("imported streams do not match their hash"), "{err}");
}

const ORDERS_CONFIG: &str = r#"{
  "name": "orders",
  "subjects": ["orders.>"],
  "retention": "workqueue",
  "max_consumers": -1,
  "max_msgs": -1,
  "max_bytes": 50000000000,
  "max_age": 86400000000000,
  "max_msg_size": 65536,
  "discard": "new",
  "storage": "file",
  "num_replicas": 3,
  "duplicate_window": 60000000000,
  "deny_delete": true
}
"#;

#[test]
fn a_stream_config_file_defines_a_sites_stream_and_emit_writes_it_back() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("streams")).unwrap();
    write(tmp.path(), "streams/orders.json", ORDERS_CONFIG);
    let site = write(
        tmp.path(),
        "site.yaml",
        &format!(
            "{RACKS}workload:\n  streams:\n    - {{ config: streams/orders.json, msgs_per_s: 500, msg_size: 2KiB, consumers: 1 }}\n"
        ),
    );
    let (code, out, err) = run(&["design", &site, "--format", "json", "--top", "1"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let id = v["layouts"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(stream(&v, "orders")["required_per_s"].as_f64().unwrap(), 500.0);
    let out_dir = tmp.path().join("out").display().to_string();
    let (code, _, err) = run(&["emit", &site, "--layout", &id, "--out", &out_dir]);
    assert_eq!(code, 0, "{err}");
    let emitted: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("out/streams/orders.json")).unwrap()).unwrap();
    // The file's own settings stay; placement is the layout's.
    assert_eq!(emitted["retention"], "workqueue");
    assert_eq!(emitted["discard"], "new");
    assert_eq!(emitted["deny_delete"], true);
    assert_eq!(emitted["max_bytes"], 50_000_000_000i64);
    assert_eq!(emitted["duplicate_window"], 60_000_000_000i64);
    assert_eq!(emitted["num_replicas"], 3);
    assert_eq!(emitted["placement"]["cluster"], "prod");
    assert_eq!(
        emitted["compression"], "none",
        "the site's compression where the file gives none"
    );
}

#[test]
fn a_bad_stream_config_file_is_reported_at_both_places() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = ORDERS_CONFIG
        .replace("\"storage\": \"file\"", "\"storage\": \"memory\"")
        .replace("\"max_msg_size\": 65536", "\"max_msg_size\": \"big\"");
    write(tmp.path(), "orders.json", &bad);
    let site = write(
        tmp.path(),
        "site.yaml",
        &format!("{RACKS}workload:\n  streams:\n    - {{ config: orders.json, msgs_per_s: 500, msg_size: 2KiB }}\n"),
    );
    let (code, _, err) = run(&["design", &site]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("site.yaml:10:17: workload.streams[0].config: orders.json:9:19: max_msg_size"),
        "{err}"
    );
    assert!(err.contains("max_msg_size"), "{err}");
    assert!(err.contains("orders.json:11:14: storage: memory storage"), "{err}");
    let syntax = write(
        tmp.path(),
        "orders.json",
        "{\n  \"name\": \"orders\"\n  \"subjects\": []\n}\n",
    );
    assert!(!syntax.is_empty());
    let (code, _, err) = run(&["design", &site]);
    assert_eq!(code, 2);
    assert!(
        err.contains("orders.json:3:3: not valid JSON: expected `,` or `}`"),
        "{err}"
    );
}

#[test]
fn a_monitor_urls_password_is_never_printed() {
    // Issue 41: "cannot resolve monitor address user:s3cret-Pw@127.0.0.1:1" printed the password.
    let tmp = tempfile::tempdir().unwrap();
    let site = write(tmp.path(), "site.yaml", RACKS);
    for url in ["http://user:s3cret-Pw@127.0.0.1:1", "nats://user:s3cret-Pw@127.0.0.1:1"] {
        let (code, out, err) = run(&["design", &site, "--from-cluster", url, "--interval", "0s"]);
        assert_eq!(code, 3, "{url}: {err}");
        assert!(err.contains("***@127.0.0.1:1"), "{url}: {err}");
        assert!(!format!("{out}{err}").contains("s3cret-Pw"), "{url}: {err}");
    }
}
