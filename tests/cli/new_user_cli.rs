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
