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

/// Eight racks of one server, one large stream.
fn eight_racks() -> tempfile::NamedTempFile {
    let mut t = String::from("site: eight\nnats: { replicas: [3] }\nracks:\n");
    for r in 0..8 {
        t.push_str(&format!(
            "  - name: R{r}\n    servers: [n{r}]\n    arrays:\n      - {{ name: A{r}, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }}\n"
        ));
    }
    // Enough bytes that some layouts use every rack.
    t.push_str("workload:\n  streams:\n    - { name: orders, msgs_per_s: 20000, msg_size: 4KiB, retention: 1d }\n");
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(t.as_bytes()).unwrap();
    f
}

/// On many racks the tables show ids with the racks counted (`1x8racks`), never the whole list that
/// squeezed every other column to one character on a 30-rack site; `--layout` takes that form, and the
/// JSON keeps the whole id.
#[test]
fn tables_on_many_racks_show_short_ids_that_layout_takes() {
    let f = eight_racks();
    let p = f.path().to_str().unwrap();
    let plan = json(&["design", p, "--format", "json"]);
    let ids: Vec<&str> = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    let id = ids
        .iter()
        .find(|i| i.contains("R7x1"))
        .unwrap_or_else(|| panic!("a layout on all eight racks: {ids:?}"))
        .to_string();
    assert!(id.contains("R0x1.R1x1."), "the JSON keeps the whole id: {id}");
    let short = natsplan::layout::short_layout_id(&id).into_owned();
    assert!(short.contains("-1x8racks-"), "{short}");
    let (code, table, err) = crate::common::run(&["design", p]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains(&short), "the table shows {short}:\n{table}");
    assert!(!table.contains(&id), "no whole rack list in the table:\n{table}");
    assert!(
        table.contains("x<count>racks"),
        "the legend says what the short form means"
    );
    // `--layout SHORT` is that layout, everywhere it is taken; the saved plan's choice is the whole id.
    let one = json(&["design", p, "--layout", &short, "--format", "json"]);
    let shown: Vec<&str> = one["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(shown, [id.as_str()]);
    let saved = tempfile::Builder::new().suffix(".json").tempfile().unwrap();
    let s = saved.path().to_str().unwrap();
    let (code, _, err) = crate::common::run(&["design", p, "--layout", &short, "--save", s]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(s).unwrap()).unwrap();
    assert_eq!(v["layout"], id.as_str());
    let w = json(&[
        "whatif",
        p,
        "--layout",
        &short,
        "--fail",
        "server:n0",
        "--format",
        "json",
    ]);
    assert_eq!(w["layout"], id.as_str());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = out.to_str().unwrap();
    let (code, _, err) = crate::common::run(&["emit", p, "--layout", &short, "--allow-rejected", "--out", o]);
    assert_eq!(code, 0, "emit --layout SHORT: {err}");
    fn texts(d: &std::path::Path, all: &mut String) {
        for e in std::fs::read_dir(d).unwrap().map(Result::unwrap) {
            if e.path().is_dir() {
                texts(&e.path(), all);
            } else if let Ok(t) = std::fs::read_to_string(e.path()) {
                all.push_str(&t);
            }
        }
    }
    let mut all = String::new();
    texts(&out, &mut all);
    assert!(all.contains(&id), "emit wrote layout {id}");
}
