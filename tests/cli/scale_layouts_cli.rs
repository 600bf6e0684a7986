//! On a site of more than 1,000 assets the layouts below the top one are given per class and keep no
//! placed assets (memory, issue 18): `whatif --layout` and `simulate --layout` on such a layout must
//! still see every asset (they place it again), not judge an empty layout.

use std::io::Write;

/// Four racks of one server, 1,001 small streams of two shapes, patterns 1 and 4 (several layouts).
fn site() -> tempfile::NamedTempFile {
    let mut t = String::from("site: classes\nnats: { replicas: [3] }\nracks:\n");
    for r in ["A", "B", "C", "D"] {
        t.push_str(&format!(
            "  - name: {r}\n    servers: [n{r}]\n    arrays:\n      - {{ name: {r}1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}\n"
        ));
    }
    t.push_str("workload:\n  streams:\n");
    for s in 0..1001 {
        t.push_str(&format!(
            "    - {{ name: s{s}, msgs_per_s: {}, msg_size: 1KiB, retention: 1h }}\n",
            1 + s % 2
        ));
    }
    t.push_str("policy:\n  patterns: [\"1\", \"4\"]\n");
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(t.as_bytes()).unwrap();
    f
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = crate::common::run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

#[test]
fn whatif_and_simulate_on_a_layout_given_per_class_see_every_asset() {
    let f = site();
    let p = f.path().to_str().unwrap();
    let plan = json(&["design", p, "--format", "json"]);
    let layouts = plan["layouts"].as_array().unwrap();
    assert!(layouts.len() >= 2, "{}", layouts.len());
    let second = &layouts[1];
    assert!(second["classes"].is_object(), "the second layout is given per class");
    let id = second["id"].as_str().unwrap();
    // Every stream is in the scenario (an empty layout gave none), and one server down leaves R3 writable,
    // as the layout's own `tolerates` says.
    let v = json(&["whatif", p, "--layout", id, "--fail", "server:nA", "--format", "json"]);
    assert_eq!(v["layout"], id);
    let streams = v["scenarios"][0]["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 1001, "{id}");
    assert!(second["tolerates"]["servers"].as_u64().unwrap() >= 1, "{second}");
    assert!(streams.iter().all(|s| s["status"] != "unavailable"), "{id}");
    let v = json(&[
        "simulate", p, "--layout", id, "--years", "1", "--trials", "10", "--format", "json",
    ]);
    assert_eq!(v["layout"], id);
    let text = v.to_string();
    assert!(
        text.contains("\"s1000\""),
        "simulate lists every asset: {}",
        &text[..text.len().min(400)]
    );
}
