//! Issue 14, done-when: a 3-rack EF600 site with one 50k msgs/s × 256 B R3 stream is not rejected on
//! performance with the default server model, and is with lxc-guest servers (seed 004's class), with the
//! reason and what would fix it; the JSON's `predicted` entries name the calibration that priced them; the
//! site's publish mode (`publishers`, `publish`, `window`) is priced and located errors name bad values.

use assert_cmd::Command;
use serde_json::Value;

fn site(server_model: &str, stream_extra: &str) -> String {
    let rack = |r: &str| {
        format!(
            "  - name: {r}\n    servers: [{{ name: nats-{l}, model: {server_model} }}]\n    arrays:\n      - {{ name: {r}1, model: EF600, disk_model: nvme-3.84t, disks: 3, hot_spares: 1, raid: raid1 }}\n",
            l = r.to_lowercase()
        )
    };
    format!(
        "site: ef600-three-racks\nnats:\n  replicas: [3]\nracks:\n{}{}{}workload:\n  streams:\n    - {{ name: ingest, msgs_per_s: 50000, msg_size: 256B, retention: 1h, replicas: 3{stream_extra} }}\n",
        rack("A"),
        rack("B"),
        rack("C")
    )
}

fn design(text: &str) -> (Value, i32) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("site.yaml");
    std::fs::write(&p, text).unwrap();
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .args(["--format", "json", "design"])
        .arg(&p)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    if v.is_null() {
        return (Value::String(String::from_utf8_lossy(&out.stderr).into()), code);
    }
    (v, code)
}

fn perf_rejections(v: &Value) -> Vec<String> {
    v["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["reasons"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| {
            let t = r
                .as_str()
                .map(String::from)
                .or_else(|| r["text"].as_str().map(String::from))?;
            t.starts_with("performance:").then_some(t)
        })
        .collect()
}

#[test]
fn ef600_site_carries_50k_on_default_servers_and_not_on_lxc_guests() {
    let (v, _) = design(&site("generic-16c", ""));
    assert!(perf_rejections(&v).is_empty(), "{:?}", perf_rejections(&v));
    let s = &v["layouts"][0]["predicted"]["streams"][0];
    assert_eq!(s["calibration"], "lab-loopback-js", "{s}");
    assert!(s["extrapolation_distance"].as_f64().unwrap() > 0.0);
    assert!(s["publish"].as_str().unwrap().contains("assumed"), "{s}");
    assert!(s["ops_per_s"].as_f64().unwrap() > 50_000.0);

    let (v, _) = design(&site("lxc-guest", ""));
    let why = perf_rejections(&v);
    assert!(!why.is_empty(), "lxc-guest servers must be rejected on performance");
    let w = &why[0];
    assert!(w.contains("seed004-lxc-ladder"), "names the calibration: {w}");
    assert!(
        w.contains("faster servers") && w.contains("split the stream"),
        "says the fix: {w}"
    );
    assert!(
        w.contains("natsplan calibrate"),
        "an extrapolated verdict suggests calibrate: {w}"
    );
}

#[test]
fn a_sync_publish_site_is_priced_and_told_how_many_publishers_reach_the_rate() {
    let (v, _) = design(&site("generic-16c", ", publish: sync, publishers: 4"));
    let s = &v["layouts"][0]["predicted"]["streams"][0];
    assert!(
        s["publish"].as_str().unwrap().starts_with("sync publish, 4 publishers"),
        "{s}"
    );
    assert!(s["bottleneck"].as_str().unwrap().contains("sync publish"), "{s}");
    let why = perf_rejections(&v);
    assert!(
        why.iter()
            .any(|w| w.contains("sync publish needs ≥") && w.contains("window ≥")),
        "{why:?}"
    );
}

#[test]
fn a_bad_publish_mode_is_a_located_error() {
    let (v, code) = design(&site("generic-16c", ", publish: sometimes"));
    assert_eq!(code, 2, "{v}");
    let text = v.to_string();
    assert!(text.contains("publish") && text.contains("sync"), "{text}");
}
