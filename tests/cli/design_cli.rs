//! CLI tests for `natsplan design`: formats, the JSON contract, selection flags, exit codes and errors.

use crate::common::natsplan;
use predicates::prelude::*;
use std::io::Write;

const SITE: &str = r#"
site: east-dc
nats: { replicas: [3, 5], sync_interval: 2m }
racks:
  - name: A
    servers: [alpha, bravo]
    arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }]
  - name: B
    servers: [charlie, delta]
    arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }]
  - name: C
    servers: [echo]
    arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 2, hot_spares: 1 }]
workload:
  streams: [{ name: orders, msgs_per_s: 2000, msg_size: 1KiB, retention: 24h, consumers: 2 }]
  kv: [{ name: sessions, puts_per_s: 3000, value_size: 512B, keys: 1000000, history: 1 }]
  object_stores: [{ name: blobs, puts_per_s: 50, gets_per_s: 20, object_size: 1MiB, retention: 1h }]
policy: { patterns: ["1", "2", "3", "4"], min_tolerated: { racks: 1 } }
"#;

fn site_file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn plan_json(args: &[&str]) -> serde_json::Value {
    let f = site_file(SITE);
    let out = natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_contract_keys() {
    let v = plan_json(&[]);
    assert_eq!(v["site"], "east-dc");
    let layouts = v["layouts"].as_array().unwrap();
    assert!(!layouts.is_empty());
    for (i, l) in layouts.iter().enumerate() {
        assert_eq!(l["rank"].as_u64().unwrap() as usize, i + 1);
        assert!(
            l["id"].as_str().unwrap().starts_with('p')
                || l["id"].as_str().unwrap().starts_with("ddp")
                || l["id"].as_str().unwrap().starts_with("r6")
        );
        assert!(l["pattern"].is_string(), "pattern must be a string");
        assert!(l["raid"].is_string());
        assert!(l["replicas"].is_u64());
        for s in l["servers"].as_array().unwrap() {
            assert!(s["name"].is_string() && s["rack"].is_string());
            assert!(s.get("array").is_some());
        }
        assert!(l["hot_spares"].is_u64());
        assert!(["recommended", "acceptable", "risky", "rejected"].contains(&l["verdict"].as_str().unwrap()));
        assert!(l["reasons"].is_array());
        for k in ["racks", "arrays", "servers", "disks"] {
            assert!(l["tolerates"][k].is_u64(), "tolerates.{k}");
        }
        for k in ["usable_bytes", "needed_bytes"] {
            assert!(l["capacity"][k].is_u64(), "capacity.{k}");
        }
        assert!(l["capacity"]["headroom"].is_f64() || l["capacity"]["headroom"].is_i64());
    }
}

#[test]
fn top_and_layout_select() {
    let all = plan_json(&[]);
    let top = plan_json(&["--top", "2"]);
    assert_eq!(top["layouts"].as_array().unwrap().len(), 2);
    let id = all["layouts"][1]["id"].as_str().unwrap().to_string();
    let one = plan_json(&["--layout", &id]);
    assert_eq!(one["layouts"].as_array().unwrap().len(), 1);
    assert_eq!(one["layouts"][0]["id"], id.as_str());
    assert_eq!(one["layouts"][0]["rank"], 2);
}

#[test]
fn unknown_layout_is_bad_input_with_a_hint() {
    let f = site_file(SITE);
    natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--layout", "p9-nothing"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such layout"));
}

#[test]
fn table_and_markdown_render() {
    let f = site_file(SITE);
    natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--width", "140"])
        .assert()
        .success()
        .stdout(predicate::str::contains("r/a/s/d").and(predicate::str::contains("Layout ")));
    natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--format", "markdown"])
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with("# natsplan design: east-dc")
                .and(predicate::str::contains("| # | layout | verdict |")),
        );
}

#[test]
fn html_is_offered_for_design() {
    let f = site_file(SITE);
    natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--format", "html"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("<!DOCTYPE html>"));
}

#[test]
fn missing_file_and_bad_site_exit_2() {
    natsplan()
        .args(["design", "/nonexistent/site.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read the file"));
    let f = site_file("site: x\nracks: []\n");
    natsplan()
        .arg("design")
        .arg(f.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no racks"));
}

#[test]
fn top_zero_is_rejected() {
    let f = site_file(SITE);
    natsplan()
        .arg("design")
        .arg(f.path())
        .args(["--top", "0"])
        .assert()
        .code(2);
}

#[test]
fn unknown_flag_is_usage_error() {
    natsplan().args(["design", "--frobnicate"]).assert().code(2);
}

#[test]
fn a_report_that_cannot_be_written_exits_3_and_says_stdout() {
    // /dev/full refuses every write (ENOSPC): the JSON (written as it is made) and the table both.
    let f = site_file(SITE);
    for format in ["json", "table"] {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("natsplan"))
            .args(["design", f.path().to_str().unwrap(), "--format", format])
            .stdout(std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{format}: {err}");
        assert!(err.contains("cannot write the report to stdout"), "{format}: {err}");
        assert!(err.contains("incomplete"), "{format}: {err}");
    }
}

/// The JSON is written straight from the Plan (`report::sorted`), not printed from a `serde_json::Value`:
/// every object must still list its keys in sorted order, the order of the contract since the first
/// release. The text is compared with its own parse printed again (a `Value` sorts its keys), with
/// `--prices` (each layout's `cost` among its keys) and with `--top`/`--layout` (the layouts chosen).
#[test]
fn json_lists_every_object_s_keys_sorted_byte_for_byte() {
    let f = site_file(SITE);
    let mut prices = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    prices
        .write_all(b"currency: EUR\nservers: { generic-16c: 9000 }\narrays: { EF300: 30000 }\ndisks: { nvme-3.84t: 900 }\nrack_unit: 50\n")
        .unwrap();
    let run = |args: &[&str]| -> Vec<u8> {
        let out = natsplan()
            .arg("design")
            .arg(f.path())
            .args(["--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    let all = run(&[]);
    let v: serde_json::Value = serde_json::from_slice(&all).unwrap();
    let second = v["layouts"][1]["id"].as_str().unwrap().to_string();
    let p = prices.path().to_str().unwrap();
    for args in [
        vec![],
        vec!["--prices", p],
        vec!["--top", "2", "--prices", p],
        vec!["--layout", &second],
    ] {
        let text = run(&args);
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let mut again = serde_json::to_vec_pretty(&v).unwrap();
        again.push(b'\n');
        assert!(
            text == again,
            "{args:?}: the JSON is not its keys-sorted print:\n{}",
            String::from_utf8_lossy(&text)
        );
        let layouts = v["layouts"].as_array().unwrap();
        assert!(!layouts.is_empty(), "{args:?}");
        if args.contains(&"--prices") {
            assert!(
                layouts.iter().all(|l| l["cost"].is_object()),
                "{args:?}: every layout has its cost"
            );
        }
        if args.contains(&"--layout") {
            assert_eq!(layouts.len(), 1);
            assert_eq!(layouts[0]["id"], second.as_str());
        }
    }
}
