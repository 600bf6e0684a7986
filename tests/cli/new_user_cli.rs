//! Issue 38: answers a new user got wrong, run as a new user runs them — a site of their own, the nats CLI's
//! JSON, every layout of the plan looked at (not only the first).

use crate::common::run;
use serde_json::Value;
use std::io::Write;

fn file(text: &str, suffix: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(suffix).tempfile().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn path(f: &tempfile::NamedTempFile) -> &str {
    f.path().to_str().unwrap()
}

/// `design --format json` with `args`: the plan, or a panic with stderr.
fn design_json(site: &str, args: &[&str]) -> Value {
    let mut all = vec!["design", site, "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Three racks, one server each with `count` internal NVMe disks fixed at `raid`.
fn internal_site(count: u32, raid: &str) -> String {
    let mut s = String::from("site: own-disks\nracks:\n");
    for (rack, server) in [("A", "nd1"), ("B", "nd2"), ("C", "nd3")] {
        s.push_str(&format!(
            "  - name: {rack}\n    servers:\n      - {{ name: {server}, disks: {{ disk_model: nvme-3.84t, count: {count}, \
             raid: {raid} }} }}\n"
        ));
    }
    s.push_str("workload:\n  streams:\n    - { name: orders, msgs_per_s: 2000, msg_size: 1KiB, retention: 24h }\n");
    s
}

#[test]
fn a_raid1_fixed_on_internal_disks_is_what_every_layout_builds_draws_emits_and_fails() {
    // Two internal disks per server, `raid: raid1`: patterns 2 and 3 built `nd1-internal-vg1` as RAID 0,
    // the drawing said raid0, emit's README said to mount a RAID 0 volume, and whatif's disk failure
    // destroyed the server's store.
    let site = file(&internal_site(2, "raid1"), ".yaml");
    let plan = design_json(path(&site), &[]);
    let layouts = plan["layouts"].as_array().unwrap();
    assert!(!layouts.is_empty());
    for l in layouts {
        for s in l["servers"].as_array().unwrap() {
            assert_eq!(s["raid"], "raid1", "{} {}", l["id"], s["name"]);
        }
    }
    let notes = plan["notes"].to_string();
    assert!(
        notes.contains("pattern 2 does not fit this site: pattern 2 does not build the levels the site fixes with `raid:`: nd1's internal disks raid1"),
        "{notes}"
    );
    let (code, html, err) = run(&["design", path(&site), "--format", "html"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !html.to_lowercase().contains("raid0") && !html.contains("RAID 0"),
        "the drawing says RAID 0"
    );
    for l in layouts {
        let id = l["id"].as_str().unwrap();
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().join("conf");
        let (code, _, err) = run(&["emit", path(&site), "--layout", id, "--out", dir.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let readme = std::fs::read_to_string(dir.join("nd1/README.md")).unwrap();
        assert!(
            readme.contains("RAID 1, 2 drives") && !readme.contains("RAID 0"),
            "{id}: {readme}"
        );
        let (code, out, err) = run(&[
            "whatif",
            path(&site),
            "--layout",
            id,
            "--fail",
            "disk:nd1-internal/1",
            "--format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let s = &v["scenarios"][0];
        assert_eq!(
            s["destroyed"],
            serde_json::json!([]),
            "{id}: a mirrored disk destroyed a store"
        );
        assert_eq!(s["worst"], "ok", "{id}");
    }
}

#[test]
fn a_raid1_on_one_internal_disk_is_refused_where_it_is_written() {
    // The docs' rule (docs/site-format.md, RAID disk-count rules): RAID 1 groups are mirrored pairs, so one
    // disk cannot be one; the error names the file, line and column of `raid:` and the fix.
    let site = file(&internal_site(1, "raid1"), ".yaml");
    let (code, _, err) = run(&["design", path(&site)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(".yaml:5:71: ")
            && err.contains("racks[0].servers[0].disks.raid: RAID 1 groups are mirrored pairs"),
        "{err}"
    );
    assert!(err.contains("fix: "), "{err}");
}

#[test]
fn other_levels_fixed_on_internal_disks_are_kept_too() {
    // raid0 was mirrored by patterns 1 and 4, raid6 built as a RAID 1 pair leaving four disks idle.
    for (count, raid) in [(2, "raid0"), (6, "raid6"), (4, "raid10")] {
        let site = file(&internal_site(count, raid), ".yaml");
        let plan = design_json(path(&site), &[]);
        let layouts = plan["layouts"].as_array().unwrap();
        assert!(!layouts.is_empty(), "{raid}: {}", plan["notes"]);
        for l in layouts {
            for s in l["servers"].as_array().unwrap() {
                assert_eq!(s["raid"], raid, "{raid}: {} {}", l["id"], s["name"]);
            }
        }
    }
}

/// Three racks of one server each, with a stream `orders` on `orders.>`, a KV bucket and an object store.
const THREE_RACKS: &str = r#"site: imports
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 3, hot_spares: 1 }] }
workload:
  streams:
    - { name: orders, subjects: ["orders.>"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h }
  kv:
    - { name: sessions, puts_per_s: 10, value_size: 512B, keys: 1000 }
  object_stores:
    - { name: blobs, puts_per_s: 1, object_size: 1MiB, retention: 1h }
"#;

/// `nats stream info NAME --json` of a stream on `subjects` (none: the key left out, as nats-server
/// leaves it for a stream created without subjects... it fills in the name; natscli prints what it has).
fn stream_info(name: &str, subjects: &[&str]) -> String {
    let subjects = if subjects.is_empty() {
        String::new()
    } else {
        format!(r#""subjects": {},"#, serde_json::to_string(subjects).unwrap())
    };
    format!(
        r#"{{"config": {{"name": "{name}", {subjects} "retention": "limits", "max_bytes": -1,
  "max_age": 3600000000000, "storage": "file", "num_replicas": 3}},
  "state": {{"messages": 3600, "bytes": 3800000, "first_seq": 1, "first_ts": "2026-12-01T09:00:00Z",
  "last_seq": 3600, "last_ts": "2026-12-01T10:00:00Z", "consumer_count": 0}},
  "ts": "2026-12-01T10:00:00Z"}}"#
    )
}

#[test]
fn imported_streams_that_nats_server_would_refuse_beside_the_sites_are_refused_naming_both() {
    // `ORDERS` on `orders.>` beside the site's `orders` on `orders.>`: design ranked it, emit wrote both,
    // and only `lab up --streams` found out (nats-server error 10065). The same for a wildcard overlap and
    // for the stream names a KV bucket and an object store take.
    let site = file(THREE_RACKS, ".yaml");
    for (name, subjects, says) in [
        (
            "ORDERS",
            &["orders.>"][..],
            "stream ORDERS's subject 'orders.>' overlaps 'orders.>' of stream orders",
        ),
        (
            "eu",
            &["orders.eu.*"][..],
            "stream eu's subject 'orders.eu.*' overlaps 'orders.>' of stream orders",
        ),
        (
            "KV_sessions",
            &["sess.>"][..],
            "stream KV_sessions and KV bucket sessions (",
        ),
        (
            "OBJ_blobs",
            &["blobs.>"][..],
            "stream OBJ_blobs and object store blobs (",
        ),
        (
            "audit",
            &["$KV.sessions.>"][..],
            "stream audit's subject '$KV.sessions.>' overlaps '$KV.sessions.>' of KV bucket sessions",
        ),
    ] {
        let info = file(&stream_info(name, subjects), ".json");
        let (code, _, err) = run(&["design", path(&site), "--from-cluster", path(&info)]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(says), "{name}: {err}");
        // Both sources: the flag and file of the imported stream, the site file's line of the site's.
        assert!(
            err.contains(&format!("--from-cluster {}", path(&info))),
            "{name}: {err}"
        );
        assert!(
            err.contains(&format!("{}:", path(&site))) && err.contains("workload."),
            "{name}: {err}"
        );
        assert!(err.contains("fix: "), "{name}: {err}");
    }
    // A stream created without subjects captures its own name in nats-server: `ORDERS` then, which
    // nothing of the site's overlaps (names and subjects are case-sensitive).
    let info = file(&stream_info("ORDERS", &[]), ".json");
    let plan = design_json(path(&site), &["--from-cluster", path(&info)]);
    assert!(!plan["layouts"].as_array().unwrap().is_empty());
}

#[test]
fn streams_of_one_site_clash_on_the_subjects_emit_writes_for_them() {
    // Without `subjects:` emit writes `<name>.>` in lower case: `ORDERS` then captures `orders.>`, which
    // a second stream's `orders.eu.*` overlaps; the site check only looked at subjects written out.
    let text = THREE_RACKS.replace(
        "    - { name: orders, subjects: [\"orders.>\"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\n",
        "    - { name: ORDERS, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\n    - { name: eu, subjects: [\"orders.eu.*\"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\n",
    );
    let site = file(&text, ".yaml");
    let (code, _, err) = run(&["design", path(&site)]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(".yaml:9:") && err.contains("workload.streams[1].subjects[0]: stream eu's subject 'orders.eu.*' overlaps 'orders.>' of stream ORDERS (workload.streams[0], line 8)"),
        "{err}"
    );
}

#[test]
fn names_equal_but_for_case_get_files_a_case_insensitive_file_system_keeps_apart() {
    // `ORDERS` beside `orders` is legal in nats-server; emit's streams/ORDERS.json and streams/orders.json
    // were one file on macOS and Windows (the second overwrote the first), their consumers' folders too.
    let text = THREE_RACKS.replace(
        "    - { name: orders, subjects: [\"orders.>\"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h }\n",
        "    - { name: orders, subjects: [\"orders.>\"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h, consumers: 1 }\n    - { name: ORDERS, subjects: [\"ORDERS.>\"], msgs_per_s: 100, msg_size: 1KiB, retention: 1h, consumers: 1 }\n",
    );
    let site = file(&text, ".yaml");
    let plan = design_json(path(&site), &[]);
    let id = plan["layouts"][0]["id"].as_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("conf");
    let (code, _, err) = run(&["emit", path(&site), "--layout", id, "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut files: Vec<String> = Vec::new();
    for sub in ["streams", "consumers"] {
        for e in walk(&dir.join(sub)) {
            files.push(e.strip_prefix(&dir).unwrap().display().to_string());
        }
    }
    let mut folded: Vec<String> = files.iter().map(|f| f.to_lowercase()).collect();
    folded.sort();
    let n = folded.len();
    folded.dedup();
    assert_eq!(folded.len(), n, "{files:?}");
    // Both streams are there, each by its own name inside.
    let names: Vec<String> = files
        .iter()
        .filter(|f| f.starts_with("streams/") && f.ends_with(".json"))
        .map(|f| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(f)).unwrap()).unwrap();
            v["name"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(
        names.contains(&"orders".to_string()) && names.contains(&"ORDERS".to_string()),
        "{names:?}"
    );
    let readme = std::fs::read_to_string(dir.join("streams/README.md")).unwrap();
    assert!(
        readme.contains("differ only in case") && readme.contains("`ORDERS` in `ORDERS~"),
        "{readme}"
    );
    let readme = std::fs::read_to_string(dir.join("consumers/README.md")).unwrap();
    assert!(readme.contains("--config consumers/ORDERS~"), "{readme}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// Four racks, three servers in A and one in each other, an array each, far too small for an R5 stream:
/// every layout is rejected, and the single-rack RAID 6 one cannot create the stream at all.
const FOUR_RACKS_SHORT: &str = r#"site: four-racks
racks:
  - { name: A, servers: [a1, a2, a3], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 8, hot_spares: 0 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 8, hot_spares: 0 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 8, hot_spares: 0 }] }
  - { name: D, servers: [d1], arrays: [{ name: D1, model: EF300, disk_model: nvme-3.84t, disks: 8, hot_spares: 0 }] }
workload:
  streams:
    - { name: orders, replicas: 5, msgs_per_s: 2000, msg_size: 64KiB, retention: 30d }
"#;

#[test]
fn rejected_layouts_rank_by_how_close_they_come_and_say_what_a_rejection_means() {
    // Before: the layout that could not create the R5 stream (3 servers, one rack) claimed writes survive
    // 0/0/2/2 and "free now 100 %" with its fullest server at 0 B (figures of an empty placement), and the
    // rejected layouts ranked by what they tolerate, the 122× too small first; "free now" read "-12086 %".
    let site = file(FOUR_RACKS_SHORT, ".yaml");
    let plan = design_json(path(&site), &[]);
    let layouts = plan["layouts"].as_array().unwrap();
    assert!(layouts.iter().all(|l| l["verdict"] == "rejected"));
    let unplaced: Vec<&Value> = layouts.iter().filter(|l| !l["not_placed"].is_null()).collect();
    assert!(
        !unplaced.is_empty(),
        "the single-rack layout cannot place the R5 stream"
    );
    for l in &unplaced {
        let t = &l["tolerates"];
        assert_eq!(
            [&t["racks"], &t["arrays"], &t["servers"], &t["disks"]],
            [0, 0, 0, 0],
            "{}: an asset that cannot be created takes no writes",
            l["id"]
        );
        assert_eq!(l["not_placed"]["first"], "orders", "{}", l["id"]);
        assert_eq!(l["not_placed"]["replicas"], 5);
        assert!(
            l["capacity"]["fullest_server"].is_null(),
            "{}: a fullest server of nothing",
            l["id"]
        );
    }
    let last_placed = layouts
        .iter()
        .filter(|l| l["not_placed"].is_null())
        .map(|l| l["rank"].as_u64().unwrap())
        .max();
    for l in &unplaced {
        assert!(
            l["rank"].as_u64() > last_placed,
            "{} ranks above a layout that places every stream",
            l["id"]
        );
    }
    // The nearest to usable first: the least short.
    let times = |l: &Value| l["capacity"]["shortfall"]["times_too_small"].as_f64().unwrap();
    let least = layouts.iter().map(times).fold(f64::INFINITY, f64::min);
    assert_eq!(times(&layouts[0]), least, "#1 is {}", layouts[0]["id"]);
    assert_eq!(layouts[0]["capacity"]["shortfall"]["largest_asset"], "orders");

    let (code, text, err) = run(&["design", path(&site)]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("1.43 PiB short"), "{text}");
    assert!(
        text.contains("short by 1.43 PiB (19× too small): the workload needs 1.51 PiB, the stores hold 81.2 TiB"),
        "{text}"
    );
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let negative_share = words
            .windows(2)
            .any(|w| w[1] == "%" && w[0].strip_prefix('-').is_some_and(|n| n.parse::<f64>().is_ok()));
        assert!(!negative_share, "a negative share of free space: {line}");
        if line.contains("r6-raid6") && line.starts_with('│') {
            assert!(!line.contains("100 %"), "figures of an empty placement: {line}");
            if line.contains("rejected") {
                assert!(
                    line.contains("┆ none "),
                    "failures survived by a stream never created: {line}"
                );
            }
        }
    }

    // whatif on it: the stream is never created, not `degraded` by a rack failure.
    let id = unplaced[0]["id"].as_str().unwrap();
    let (code, out, err) = run(&[
        "whatif",
        path(&site),
        "--layout",
        id,
        "--fail",
        "rack:B",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let orders = v["scenarios"][0]["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "orders")
        .unwrap();
    assert_eq!(orders["status"], "unavailable", "{orders}");
    assert_eq!(orders["not_placed"], 2, "{orders}");
}

#[test]
fn raid0_per_server_without_spares_reads_the_same_in_the_help_and_the_verdict() {
    // Before: `design --help` listed "RAID 0 without spares" as risky while such layouts came out
    // acceptable, with "recovery is a new group on a spare" beside "no hot spare in A1, B1, C1".
    let site = file(
        r#"site: spareless
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
workload:
  streams:
    - { name: orders, msgs_per_s: 100, msg_size: 1KiB, retention: 1h }
"#,
        ".yaml",
    );
    let plan = design_json(path(&site), &[]);
    let p2: Vec<&Value> = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["pattern"] == "2")
        .collect();
    assert!(!p2.is_empty());
    for l in p2 {
        assert_eq!(l["verdict"], "acceptable", "{}", l["id"]);
        let reasons = l["reasons"].to_string();
        assert!(!reasons.contains("on a spare"), "{}: {reasons}", l["id"]);
        assert!(
            reasons.contains("waits for the drive replacement"),
            "{}: {reasons}",
            l["id"]
        );
    }
    let (code, help, err) = run(&["design", "--help"]);
    assert_eq!(code, 0, "{err}");
    // The verdicts' section (flags above it may name verdicts too: --fail-on).
    let help = &help[help.find("Verdicts come from").unwrap()..];
    let risky = &help[help.find("risky ").unwrap()..help.find("rejected ").unwrap()];
    assert!(!risky.contains("without spares"), "{risky}");
    let acceptable = &help[help.find("acceptable ").unwrap()..help.find("risky ").unwrap()];
    assert!(
        acceptable.contains("RAID 0 per server without hot spares"),
        "{acceptable}"
    );
}

#[test]
fn pattern_4_keeps_the_store_headroom_inside_max_file_store() {
    // docs/site-format.md: `store_headroom` is the share of `max_file_store` kept free (0.1 by default).
    // Before: pattern 4 sized each store to exactly the planned need, 0.02 % free now and after a failure,
    // and called the layout recommended.
    let site = file(
        r#"site: pattern-four
racks:
  - { name: A, servers: [a1], arrays: [{ name: A1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
  - { name: B, servers: [b1], arrays: [{ name: B1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
  - { name: C, servers: [c1], arrays: [{ name: C1, model: EF300, disk_model: nvme-3.84t, disks: 4, hot_spares: 0 }] }
workload:
  streams:
    - { name: orders, msgs_per_s: 1000, msg_size: 1KiB, retention: 30d }
"#,
        ".yaml",
    );
    let plan = design_json(path(&site), &[]);
    let p4: Vec<&Value> = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["pattern"] == "4" && l["verdict"] != "rejected")
        .collect();
    assert!(!p4.is_empty());
    for l in p4 {
        let c = &l["capacity"];
        let now = c["headroom"].as_f64().unwrap();
        assert!(now >= 0.0999, "{}: {now} of max_file_store free now", l["id"]);
        let after = c["after_failure"]["headroom"].as_f64().unwrap_or(now);
        assert!(after >= 0.0999, "{}: {after} free after a failure", l["id"]);
    }
}

/// One rack, one 24-disk array fixed at RAID 10 with no hot spare, three servers: the fewest-disks layout
/// takes 12 disks (three groups of four).
fn roomy_raid10_site() -> String {
    "site: roomy\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [nats1, nats2, nats3]\n    arrays:\n      \
     - { name: A1, model: EF600, disk_model: nvme-1.92t, disks: 24, hot_spares: 0, raid: raid10 }\n\
     workload:\n  streams:\n    - { name: orders, msgs_per_s: 5000, msg_size: 1KiB, retention: 24h }\n\
     policy: { patterns: [\"1\", \"4\"] }\n"
        .to_string()
}

/// Issue 38 (4c). Before: the layout said "12 disks" and nothing of the other 12 installed, and no layout
/// used them (every pattern 1 layout took the fewest disks that hold the need). Now the idle disks are
/// named, and a layout of the same servers with groups as wide as the array allows is offered beside it.
#[test]
fn installed_disks_a_layout_leaves_idle_are_named_and_a_wider_layout_uses_them() {
    let site = file(&roomy_raid10_site(), ".yaml");
    let plan = design_json(path(&site), &[]);
    let layouts = plan["layouts"].as_array().unwrap();
    let narrow = layouts
        .iter()
        .find(|l| l["pattern"] == "1" && l["disks_used"] == 12)
        .unwrap_or_else(|| panic!("a 12-disk pattern 1 layout: {:#}", plan["layouts"]));
    let idle = &narrow["idle_disks"];
    assert_eq!(idle.as_array().map(Vec::len), Some(1), "{idle:#}");
    assert_eq!(idle[0]["array"], "A1");
    assert_eq!(idle[0]["data_disks"], 24);
    let numbers: Vec<u64> = idle[0]["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (13..=24).collect::<Vec<u64>>());
    // The wider layout it names: the same three servers, every data disk in a group of eight, none idle.
    let wider_id = narrow["wider_layout"].as_str().expect("a wider layout is named");
    let wider = layouts
        .iter()
        .find(|l| l["id"] == wider_id)
        .expect("the named layout is in the plan");
    assert_eq!(wider["disks_used"], 24);
    assert!(wider.get("idle_disks").is_none(), "{:#}", wider["idle_disks"]);
    for s in wider["servers"].as_array().unwrap() {
        assert_eq!(s["raid"], "raid10", "{s:#}");
        assert_eq!(s["drives"].as_array().map(Vec::len), Some(8), "{s:#}");
    }
    assert!(
        wider["capacity"]["usable_bytes"].as_f64() > narrow["capacity"]["usable_bytes"].as_f64(),
        "wider groups hold more"
    );
    // The text says so, in the layout's own block.
    let (code, out, err) = run(&["design", path(&site), "--layout", narrow["id"].as_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(&format!(
            "Idle disks: 12 of A1's 24 data disks (disks 13–24) are in no volume group of this layout; layout {wider_id} \
             puts them in wider groups"
        )),
        "{out}"
    );
    // Where every data disk is in a group (13 disks, one hot spare: three groups of four), nothing is said.
    let (code, out, err) = run(&["design", "examples/one-rack-raid10.yaml", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let full: Value = serde_json::from_str(&out).unwrap();
    for l in full["layouts"].as_array().unwrap() {
        assert!(l.get("idle_disks").is_none(), "{}: {:#}", l["id"], l["idle_disks"]);
    }
}

/// Issue 38 (4d). Before: reasons said "(priced by lab-loopback-js)", "extrapolated from lab-loopback-js
/// (distance 0.86)", "(seed 000: servers spread over racks …)" and "single RAID 6 group" of a layout with
/// two. Now: what was measured and on what, in an operator's words, and the groups the layout has.
#[test]
fn operator_text_names_what_was_measured_not_internal_ids() {
    let site = file(
        "site: big-r6\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a1, a2, a3]\n    arrays:\n      \
         - { name: A1, model: E5700, disk_model: nl-sas-16t, disks: 50, hot_spares: 2 }\n  - name: B\n    servers: [b1]\n\
         \x20 - name: C\n    servers: [c1]\nworkload:\n  streams:\n    - { name: orders, msgs_per_s: 900000, msg_size: 1KiB, \
         retention: 24h }\n",
        ".yaml",
    );
    let plan = design_json(path(&site), &[]);
    let mut reasons: Vec<String> = Vec::new();
    for l in plan["layouts"].as_array().unwrap() {
        for r in l["reasons"].as_array().unwrap() {
            reasons.push(r.as_str().unwrap().to_string());
        }
    }
    for n in plan["notes"].as_array().unwrap() {
        reasons.push(n.as_str().unwrap().to_string());
    }
    for r in &reasons {
        for internal in ["seed0", "seed 0", "lab-loopback", "distance", "priced by"] {
            assert!(!r.contains(internal), "{internal:?} in {r:?}");
        }
    }
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("(measured on: loopback lab (2 shared cores))")),
        "{reasons:#?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("(the NATS-on-E-Series guide: servers spread over racks")),
        "{reasons:#?}"
    );
    // The RAID 6 baseline splits 48 data disks at the E5700's 30-drive limit: two groups, said as two.
    let r6 = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["pattern"] == "raid6")
        .expect("the RAID 6 baseline");
    let said: Vec<&str> = r6["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.as_str())
        .collect();
    assert!(
        said.iter().any(|r| r.starts_with("2 RAID 6 groups on one array")),
        "{said:#?}"
    );
    assert!(!said.iter().any(|r| r.contains("single RAID 6 group")), "{said:#?}");
}

/// Issue 39: `design --fail-on` gates a CI job. Before: design exited 0 whatever the verdicts (the flag
/// did not exist: exit 2).
#[test]
fn design_fail_on_exits_1_when_the_best_layout_is_that_bad_or_worse() {
    // Every layout rejected (900,000 msgs/s on one stream).
    let rejected = file(
        "site: r\nnats: { replicas: [3] }\nracks:\n  - name: A\n    servers: [a1, a2, a3]\n    arrays:\n      \
         - { name: A1, model: EF600, disk_model: nvme-3.84t, disks: 12 }\nworkload:\n  streams:\n    \
         - { name: orders, msgs_per_s: 900000, msg_size: 1KiB, retention: 1h }\n",
        ".yaml",
    );
    let (code, out, err) = run(&["design", path(&rejected), "--fail-on", "rejected"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("rejected"), "the report is still written: {out}");
    assert!(
        err.contains("check failed: --fail-on rejected: the best layout") && err.contains("is rejected (performance"),
        "{err}"
    );
    // JSON too: the plan on stdout, exit 1.
    let (code, out, _) = run(&["design", path(&rejected), "--format", "json", "--fail-on", "risky"]);
    assert_eq!(code, 1);
    assert!(serde_json::from_str::<Value>(&out).is_ok());
    // One rack: risky at best. --fail-on risky fails, --fail-on rejected passes.
    let (code, _, err) = run(&["design", "examples/one-rack-raid10.yaml", "--fail-on", "risky"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("is risky"), "{err}");
    let (code, _, err) = run(&["design", "examples/one-rack-raid10.yaml", "--fail-on", "rejected"]);
    assert_eq!(code, 0, "{err}");
    // --layout: the chosen layout is judged, not the best.
    let plan = design_json("examples/three-racks-raid1.yaml", &[]);
    let best = &plan["layouts"][0];
    assert_ne!(best["verdict"], "risky");
    assert_ne!(best["verdict"], "rejected");
    let (code, _, err) = run(&["design", "examples/three-racks-raid1.yaml", "--fail-on", "risky"]);
    assert_eq!(code, 0, "{err}");
    if let Some(bad) = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["verdict"] == "risky" || l["verdict"] == "rejected")
    {
        let id = bad["id"].as_str().unwrap();
        let (code, _, err) = run(&[
            "design",
            "examples/three-racks-raid1.yaml",
            "--layout",
            id,
            "--fail-on",
            "risky",
        ]);
        assert_eq!(code, 1, "{err}");
        assert!(err.contains(&format!("the chosen layout {id}")), "{err}");
    }
    let (code, _, err) = run(&["design", "examples/one-rack-raid10.yaml", "--fail-on", "bad"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--fail-on"), "{err}");
}

/// Issue 39: one rule for the layout a command takes without --layout — the saved plan's choice, else the
/// best-ranked — said on stderr. Before: emit (and lab up, verify) refused a plan saved without --layout
/// while whatif and simulate silently took rank 1.
#[test]
fn every_command_takes_the_same_layout_without_layout_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("plan.json");
    let saved = saved.to_str().unwrap();
    let (code, _, err) = run(&["design", "examples/three-racks-raid1.yaml", "--save", saved]);
    assert_eq!(code, 0, "{err}");
    let plan = design_json("examples/three-racks-raid1.yaml", &[]);
    let best = plan["layouts"][0]["id"].as_str().unwrap().to_string();
    let said = format!("layout {best}: the best of");
    let out = dir.path().join("out");
    let (code, _, err) = run(&["emit", "--plan", saved, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&said), "{err}");
    assert!(out.join("README.md").exists() || std::fs::read_dir(&out).unwrap().next().is_some());
    let (code, _, err) = run(&["whatif", "--plan", saved, "--fail", "disk:A1/1"]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(err.contains(&said), "{err}");
    let (code, _, err) = run(&[
        "simulate",
        "--plan",
        saved,
        "--trials",
        "200",
        "--years",
        "1",
        "--no-reference",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(err.contains(&said), "{err}");
    // With the site file too, and nothing said when --layout names it.
    let (code, _, err) = run(&[
        "whatif",
        "examples/three-racks-raid1.yaml",
        "--layout",
        &best,
        "--fail",
        "disk:A1/1",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(!err.contains("--layout ID for another"), "{err}");
    // A plan saved with --layout: its choice, said as such.
    let other = plan["layouts"][1]["id"].as_str().unwrap().to_string();
    let (code, _, err) = run(&[
        "design",
        "examples/three-racks-raid1.yaml",
        "--layout",
        &other,
        "--save",
        saved,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&["whatif", "--plan", saved, "--fail", "disk:A1/1"]);
    assert!(code == 0 || code == 1, "{err}");
    assert!(
        err.contains(&format!("layout {other}: the saved plan's choice")),
        "{err}"
    );
}
