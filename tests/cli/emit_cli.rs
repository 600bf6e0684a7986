//! `natsplan emit` end to end: the files it writes, that every server configuration passes
//! `nats-server -t`, that output is all-or-nothing and never overwrites without --force, and that a layout
//! the plan rejects is refused unless asked for.

use crate::common::natsplan;
use predicates::prelude::*;
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

/// A site file: `examples/` for the seed's, `tests/data/` for the ones written for these tests.
fn data(file: &str) -> String {
    let dir = if file.starts_with("seed-") {
        "examples"
    } else {
        "tests/data"
    };
    format!("{}/{dir}/{file}", env!("CARGO_MANIFEST_DIR"))
}

fn layouts(site: &str) -> Vec<Value> {
    let out = natsplan()
        .args(["design", &data(site), "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["layouts"].as_array().unwrap().clone()
}

fn six_server_unique_tag_layout() -> String {
    layouts("four-racks-r3.yaml")
        .iter()
        .find(|l| l["servers"].as_array().unwrap().len() == 6 && l["unique_tag"] == "rack:")
        .expect("six-server unique_tag layout")["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(files_under(&p));
        } else {
            v.push(p.display().to_string());
        }
    }
    v.sort();
    v
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn every_emitted_server_config_passes_nats_server_test() {
    let bin = natsplan::lab::find_nats_server(None).unwrap();
    for (site, pick) in [
        ("four-racks-r3.yaml", "unique"),
        ("seed-five-servers-raid0.yaml", "pinned"),
    ] {
        let ls = layouts(site);
        let l = ls
            .iter()
            .find(|l| match pick {
                "unique" => l["unique_tag"] == "rack:",
                _ => !l["replica_sets"].as_array().unwrap().is_empty(),
            })
            .unwrap();
        let id = l["id"].as_str().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        natsplan()
            .args(["emit", &data(site), "--layout", id, "--allow-rejected", "--out"])
            .arg(&out)
            .assert()
            .success();
        let servers = l["servers"].as_array().unwrap();
        for s in servers {
            let name = s["name"].as_str().unwrap();
            let conf = out.join(name).join("nats-server.conf");
            let r = std::process::Command::new(&bin)
                .arg("-t")
                .arg("-c")
                .arg(&conf)
                .env("NATS_SYSTEM_PASSWORD", "sys-secret")
                .output()
                .unwrap();
            assert!(
                r.status.success(),
                "{}: {}",
                conf.display(),
                String::from_utf8_lossy(&r.stderr)
            );
            let text = std::fs::read_to_string(&conf).unwrap();
            assert!(text.contains(&format!("server_name: \"{name}\"")));
            assert!(text.contains(&format!("max_file_store: {}", s["store_bytes"])));
            for t in s["tags"].as_array().unwrap() {
                let t = t.as_str().unwrap();
                assert_eq!(t, t.to_lowercase());
                assert!(text.contains(&format!("\"{t}\"")), "{name} lacks tag {t}");
            }
            assert_eq!(
                text.contains("unique_tag: \"rack:\""),
                pick == "unique",
                "unique_tag only where the layout uses it"
            );
            // Routes to every other server, none to itself.
            assert_eq!(text.matches("nats-route://").count(), servers.len() - 1);
            assert!(out.join(name).join("README.md").exists());
        }
        for f in [
            "README.md",
            "streams/README.md",
            "kv/README.md",
            "object_stores/README.md",
        ] {
            assert!(out.join(f).exists(), "{f} missing");
        }
        let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
        assert!(
            readme.contains("R1"),
            "README must say app-created KV/object stores default to R1"
        );
    }
}

#[test]
fn output_is_never_overwritten_without_force_and_nothing_half_written_is_left() {
    let id = six_server_unique_tag_layout();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("precious.txt"), "mine").unwrap();
    natsplan()
        .args([
            "emit",
            &data("four-racks-r3.yaml"),
            "--layout",
            &id,
            "--allow-rejected",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("not empty").and(contains("--force")));
    assert_eq!(files_under(&out), vec![out.join("precious.txt").display().to_string()]);

    natsplan()
        .args([
            "emit",
            &data("four-racks-r3.yaml"),
            "--layout",
            &id,
            "--allow-rejected",
            "--force",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let files = files_under(&out);
    assert!(!out.join("precious.txt").exists(), "--force replaces the folder whole");
    assert!(files.iter().any(|f| f.ends_with("streams/orders.json")));
    assert!(files.iter().any(|f| f.ends_with("kv/sessions.json")));
    assert!(files.iter().any(|f| f.ends_with("object_stores/blobs.json")));
    // Only the output folder is left beside it: no temporary or backup folders.
    let beside: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside, vec!["out"]);

    // An output that cannot be created (its parent is a file) fails without leaving anything.
    let blocked = tmp.path().join("file");
    std::fs::write(&blocked, "x").unwrap();
    natsplan()
        .args([
            "emit",
            &data("four-racks-r3.yaml"),
            "--layout",
            &id,
            "--allow-rejected",
            "--out",
        ])
        .arg(blocked.join("out"))
        .assert()
        .failure();
    assert_eq!(std::fs::read_to_string(&blocked).unwrap(), "x");
}

#[test]
fn stream_definitions_carry_the_plan() {
    let id = six_server_unique_tag_layout();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    natsplan()
        .args([
            "emit",
            &data("four-racks-r3.yaml"),
            "--layout",
            &id,
            "--allow-rejected",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let read = |f: &str| -> Value { serde_json::from_str(&std::fs::read_to_string(out.join(f)).unwrap()).unwrap() };
    let orders = read("streams/orders.json");
    assert_eq!(orders["num_replicas"], 3);
    assert_eq!(orders["max_age"].as_i64().unwrap(), 24 * 3600 * 1_000_000_000);
    assert_eq!(orders["discard"], "old");
    // The site's subjects are kept; a stream without any gets `<name>.>`.
    assert_eq!(orders["subjects"], serde_json::json!(["orders.>", "returns.*.created"]));
    assert_eq!(read("streams/events.json")["subjects"], serde_json::json!(["events.>"]));
    assert!(orders["max_bytes"].as_i64().unwrap() > 0);
    assert!(orders["duplicate_window"].as_i64().unwrap() <= orders["max_age"].as_i64().unwrap());
    let kv = read("kv/sessions.json");
    assert_eq!(kv["name"], "KV_sessions");
    assert_eq!(kv["subjects"][0], "$KV.sessions.>");
    assert_eq!(kv["max_msgs_per_subject"], 1);
    assert_eq!(kv["discard"], "new");
    assert_eq!(kv["num_replicas"], 3);
    let obj = read("object_stores/blobs.json");
    assert_eq!(obj["name"], "OBJ_blobs");
    // Object stores with a 6 h age keep the default 2 min duplicate window.
    assert_eq!(obj["duplicate_window"].as_i64().unwrap(), 120_000_000_000);
}

#[test]
fn a_layout_that_cannot_place_its_streams_is_refused() {
    // Two servers cannot hold an R3 stream: the plan rejects it with "no suitable peers".
    let ls = layouts("seed-five-servers-raid0.yaml");
    let bad = ls
        .iter()
        .find(|l| {
            l["reasons"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r.as_str().unwrap().contains("no suitable peers"))
        })
        .expect("a layout the plan says cannot place");
    assert_eq!(bad["verdict"], "rejected");
    let tmp = tempfile::tempdir().unwrap();
    natsplan()
        .args([
            "emit",
            &data("seed-five-servers-raid0.yaml"),
            "--layout",
            bad["id"].as_str().unwrap(),
            "--out",
        ])
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(contains("no suitable peers").and(contains("--allow-rejected")));
    assert!(!tmp.path().join("out").exists());
    natsplan()
        .args([
            "emit",
            &data("seed-five-servers-raid0.yaml"),
            "--layout",
            "nope",
            "--out",
        ])
        .arg(tmp.path().join("out"))
        .assert()
        .code(2)
        .stderr(contains("--layout nope"));
}
