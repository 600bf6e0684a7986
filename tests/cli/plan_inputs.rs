//! One loader for every planning command: `--omb`, `--from-cluster` and `--calibration` reach design,
//! whatif, simulate, emit, lab up and verify alike, and `design --save FILE` / `--plan FILE` carry a plan
//! between them (refused, exit 2, when it is from another version or another site).

use crate::common::{natsplan, repo_file};
use serde_json::Value;
use std::path::Path;

const OMB: &str = "
name: 2 topics / 1kb
topics: 2
partitionsPerTopic: 16
messageSize: 1024
subscriptionsPerTopic: 1
consumerPerSubscription: 1
producersPerTopic: 1
producerRate: 2000
";

fn site() -> String {
    repo_file("examples/three-racks-raid1.yaml")
}

fn cal() -> String {
    repo_file("tests/data/verify-cal-huge-bands.yaml")
}

/// stdout of a run that must succeed.
fn ok(args: &[&str]) -> String {
    let out = natsplan().env_remove("NATS_URL").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "natsplan {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// (exit code, stderr) of a run.
fn fails(args: &[&str]) -> (i32, String) {
    let out = natsplan().env_remove("NATS_URL").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn omb_file(dir: &Path) -> String {
    let p = dir.join("workload.yaml");
    std::fs::write(&p, OMB).unwrap();
    p.display().to_string()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn read_json(p: &Path) -> Value {
    json(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

#[test]
fn emit_writes_the_imported_streams() {
    let tmp = tempfile::tempdir().unwrap();
    let omb = omb_file(tmp.path());
    let flags = ["--omb", omb.as_str(), "--omb-retention", "1h"];
    let s = site();
    let mut design = vec!["--format", "json", "design", s.as_str()];
    design.extend(flags);
    let plan = json(&ok(&design));
    let id = plan["layouts"][0]["id"].as_str().unwrap().to_string();
    let out = tmp.path().join("out");
    let out_s = out.display().to_string();
    let mut emit = vec!["emit", s.as_str(), "--layout", &id, "--out", &out_s];
    emit.extend(flags);
    ok(&emit);
    for n in ["Nats-benchmark-0000000", "Nats-benchmark-0000001"] {
        let v = read_json(&out.join(format!("streams/{n}.json")));
        assert_eq!(v["name"], n);
        assert_eq!(v["max_age"], 3_600_000_000_000i64, "--omb-retention 1h");
    }
    // The site's own streams stay beside them.
    assert!(out.join("streams/orders.json").exists());
}

#[test]
fn design_and_emit_agree_for_an_imported_workload_and_a_calibrated_site() {
    let tmp = tempfile::tempdir().unwrap();
    let omb = omb_file(tmp.path());
    let c = cal();
    let flags = [
        "--omb",
        omb.as_str(),
        "--omb-retention",
        "1h",
        "--calibration",
        c.as_str(),
    ];
    let s = site();
    let mut design = vec!["--format", "json", "design", s.as_str()];
    design.extend(flags);
    let plan = json(&ok(&design));
    // The calibration reaches the plan: its predictions differ from the built-in calibration's.
    let mut plain = vec!["--format", "json", "design", s.as_str()];
    plain.extend(&flags[..4]);
    assert_ne!(
        json(&ok(&plain))["layouts"][0]["predicted"],
        plan["layouts"][0]["predicted"],
        "--calibration did not reach design's predictions"
    );
    let mut checked = 0;
    for l in plan["layouts"].as_array().unwrap().iter().take(3) {
        let id = l["id"].as_str().unwrap();
        let out = tmp.path().join(id);
        let out_s = out.display().to_string();
        let mut emit = vec!["emit", s.as_str(), "--layout", id, "--out", &out_s, "--allow-rejected"];
        emit.extend(flags);
        ok(&emit);
        for a in l["assets"].as_array().unwrap() {
            let name = a["name"].as_str().unwrap();
            let file = match a["kind"].as_str().unwrap() {
                "stream" => out.join(format!("streams/{name}.json")),
                "kv" => out.join(format!("kv/{name}.json")),
                "object_store" => out.join(format!("object_stores/{name}.json")),
                // Consumers follow their stream's placement; emit writes no file for them.
                _ => continue,
            };
            let v = read_json(&file);
            assert_eq!(v["num_replicas"], a["replicas"], "{id} {name}: replicas");
            assert_eq!(v["max_bytes"], a["bytes_per_replica"], "{id} {name}: limits");
            match a["set"].as_str() {
                Some(set) => assert_eq!(v["placement"]["tags"], serde_json::json!([format!("set:{set}")])),
                None => assert!(v["placement"].get("tags").is_none(), "{id} {name}: placement"),
            }
            checked += 1;
        }
        // Every JetStream server of the layout, with its store limit and tags.
        for srv in l["servers"].as_array().unwrap() {
            let conf = std::fs::read_to_string(out.join(format!("{}/nats-server.conf", srv["name"].as_str().unwrap())))
                .unwrap();
            assert!(
                conf.contains(&format!("max_file_store: {}", srv["store_bytes"])),
                "{conf}"
            );
        }
    }
    assert!(checked >= 6, "the imported streams were compared too ({checked})");
}

#[test]
fn a_saved_plan_gives_every_command_the_same_plan_without_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let omb = omb_file(tmp.path());
    // The calibration and the site are copies that are deleted once the plan is saved.
    let c = tmp.path().join("cal.yaml");
    std::fs::copy(cal(), &c).unwrap();
    let s = tmp.path().join("site.yaml");
    std::fs::copy(site(), &s).unwrap();
    let (s, c) = (s.display().to_string(), c.display().to_string());
    let p = tmp.path().join("plan.json").display().to_string();
    let flags = [
        "--omb",
        omb.as_str(),
        "--omb-retention",
        "1h",
        "--calibration",
        c.as_str(),
    ];
    let with = |cmd: &[&str], extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = cmd.iter().map(|x| x.to_string()).collect();
        v.extend(extra.iter().map(|x| x.to_string()));
        v
    };
    let run = |args: Vec<String>| ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let design = run(with(&["--format", "json", "design", &s, "--save", &p], &flags));
    let whatif = run(with(&["--format", "json", "whatif", &s, "--all", "1"], &flags));
    let simulate = run(with(&["--format", "json", "simulate", &s, "--trials", "300"], &flags));
    let id = json(&design)["layouts"][1]["id"].as_str().unwrap().to_string();
    let emitted = tmp.path().join("a");
    run(with(
        &["emit", &s, "--layout", &id, "--out", &emitted.display().to_string()],
        &flags,
    ));
    for f in [&s, &c, &omb] {
        std::fs::remove_file(f).unwrap();
    }
    assert_eq!(ok(&["--format", "json", "design", "--plan", &p]), design);
    assert_eq!(ok(&["--format", "json", "whatif", "--plan", &p, "--all", "1"]), whatif);
    assert_eq!(
        ok(&["--format", "json", "simulate", "--plan", &p, "--trials", "300"]),
        simulate
    );
    let from_plan = tmp.path().join("b");
    ok(&[
        "emit",
        "--plan",
        &p,
        "--layout",
        &id,
        "--out",
        &from_plan.display().to_string(),
    ]);
    for f in [
        "README.md",
        "streams/Nats-benchmark-0000000.json",
        "streams/orders.json",
    ] {
        assert_eq!(
            std::fs::read_to_string(emitted.join(f)).unwrap(),
            std::fs::read_to_string(from_plan.join(f)).unwrap(),
            "{f}"
        );
    }
    // lab up takes the plan too: it gets as far as looking for nats-server (exit 3, not a bad plan's 2).
    let (code, err) = fails(&[
        "lab",
        "up",
        "--plan",
        &p,
        "--layout",
        &id,
        "--nats-server",
        "/nonexistent/nats-server",
        "--dir",
        &tmp.path().join("lab").display().to_string(),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("scripts/install-nats-server"), "{err}");
}

#[test]
fn design_layout_save_chooses_the_layout_for_the_others() {
    let tmp = tempfile::tempdir().unwrap();
    let s = site();
    let plan = json(&ok(&["--format", "json", "design", &s]));
    let id = plan["layouts"][1]["id"].as_str().unwrap().to_string();
    let p = tmp.path().join("plan.json").display().to_string();
    ok(&["design", &s, "--layout", &id, "--save", &p]);
    let w = json(&ok(&["--format", "json", "whatif", "--plan", &p, "--fail", "rack:A"]));
    assert_eq!(w["layout"], id.as_str(), "{w}");
    let out = tmp.path().join("out").display().to_string();
    let e = json(&ok(&["--format", "json", "emit", "--plan", &p, "--out", &out]));
    assert_eq!(e["layout"], id.as_str());
    // verify compares with the same layout (a dry run needs no cluster).
    let v = json(&ok(&[
        "--format",
        "json",
        "verify",
        "--server",
        &crate::common::dead_url(),
        "--plan",
        &p,
        "--dry-run",
    ]));
    assert_eq!(v["config"]["layout"], id.as_str(), "{v}");
    assert_eq!(v["config"]["site"], s.as_str());
}

#[test]
fn a_plan_from_another_version_or_beside_another_site_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("plan.json");
    let ps = p.display().to_string();
    ok(&["design", &site(), "--save", &ps]);
    let other = repo_file("examples/one-rack-raid10.yaml");
    let (code, err) = fails(&["whatif", &other, "--plan", &ps, "--all", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not the site file this plan was built from"), "{err}");
    // The same site beside it is fine.
    ok(&["whatif", &site(), "--plan", &ps, "--all", "1"]);
    let text = std::fs::read_to_string(&p).unwrap();
    let v: Value = json(&text);
    let old = text.replace(
        &format!("\"natsplan_version\": {}", v["natsplan_version"]),
        "\"natsplan_version\": \"0.0.0-old\"",
    );
    std::fs::write(&p, old).unwrap();
    for cmd in [
        &["simulate", "--plan", &ps][..],
        &["emit", "--plan", &ps, "--layout", "x", "--out", "o"][..],
    ] {
        let (code, err) = fails(cmd);
        assert_eq!(code, 2, "{cmd:?}: {err}");
        assert!(err.contains("saved by natsplan 0.0.0-old"), "{err}");
    }
    let (code, err) = fails(&["simulate"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn save_refuses_an_input_a_fifo_and_a_folder_and_a_failed_write_could_not_run() {
    // Issue 41: `design SITE --save SITE` replaced the site with JSON; --save onto a FIFO waited for a
    // reader forever; onto /dev/full it exited 2.
    let tmp = tempfile::tempdir().unwrap();
    let s = tmp.path().join("site.yaml");
    std::fs::copy(site(), &s).unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let run = |save: &Path| {
        let out = natsplan()
            .env_remove("NATS_URL")
            .args([
                "design",
                s.to_str().unwrap(),
                "--top",
                "1",
                "--save",
                save.to_str().unwrap(),
            ])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let before = std::fs::read(&s).unwrap();
    let (code, err) = run(&s);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("an input of this plan") && err.contains("--save plan.json"),
        "{err}"
    );
    assert_eq!(std::fs::read(&s).unwrap(), before, "the site is as it was");
    let (code, err) = run(&fifo);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is a FIFO"), "{err}");
    let (code, err) = run(tmp.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is a folder"), "{err}");
    if Path::new("/dev/full").exists() {
        let (code, err) = run(Path::new("/dev/full"));
        assert_eq!(code, Some(3), "{err}");
        assert!(err.contains("cannot write the plan"), "{err}");
    }
}

/// A saved plan's imported stream as the file holds it, in its field order (the `imported` hash is of
/// these fields serialised in this order, with `import_sources`).
#[derive(serde::Serialize, serde::Deserialize, Clone)]
struct FrozenStream {
    name: String,
    msgs_per_s: f64,
    msg_size_bytes: u64,
    subject_bytes: u64,
    retention_s: f64,
    replicas: Option<u8>,
    consumers: u32,
    max_bytes: Option<u64>,
    subjects: Vec<String>,
}

/// Issue 40, item 2: a saved plan is a file anyone may have written. Its imported streams are held to the
/// site's rules and bounds on load, even with their hash recomputed (as whoever edits the file can), and
/// a plan without the hash is refused; each before anything is built. Before: `consumers: 4294967295`
/// aborted out of memory, `replicas: 0` panicked (layout/placement.rs), and the other names and numbers
/// ran through the whole evaluation.
#[test]
fn a_saved_plans_imported_streams_are_held_to_the_sites_rules_on_load() {
    use sha2::Digest;
    let tmp = tempfile::tempdir().unwrap();
    let omb = omb_file(tmp.path());
    let plan = tmp.path().join("plan.json");
    let site = repo_file("examples/seed-five-servers-raid0.yaml");
    let p = plan.display().to_string();
    ok(&[
        "design",
        &site,
        "--omb",
        &omb,
        "--omb-retention",
        "1h",
        "--save",
        &p,
        "--format",
        "json",
    ]);
    let saved = read_json(&plan);
    let streams: Vec<FrozenStream> = serde_json::from_value(saved["inputs"]["imported_streams"].clone()).unwrap();
    let sources: Vec<String> = serde_json::from_value(saved["inputs"]["import_sources"].clone()).unwrap();
    let hash = |streams: &[FrozenStream]| {
        let d = sha2::Sha256::digest(serde_json::to_vec(&(streams, &sources)).unwrap());
        format!("sha256:{}", d.iter().map(|b| format!("{b:02x}")).collect::<String>())
    };
    assert_eq!(
        saved["hashes"]["imported"],
        hash(&streams),
        "the test hashes as natsplan does"
    );
    let edited = |edit: &dyn Fn(&mut FrozenStream), imported_hash: Option<Value>| {
        let mut s = streams.clone();
        edit(&mut s[0]);
        let mut v = saved.clone();
        v["inputs"]["imported_streams"] = serde_json::to_value(&s).unwrap();
        match imported_hash {
            Some(h) => v["hashes"]["imported"] = h,
            None => v["hashes"]["imported"] = hash(&s).into(),
        }
        std::fs::write(&plan, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    };
    type Edit = Box<dyn Fn(&mut FrozenStream)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|s| s.consumers = u32::MAX),
            "inputs.imported_streams: 4294967298 streams, buckets, object stores and durable consumers; at most 1000000",
        ),
        (Box::new(|s| s.consumers = 20_000), "imported_streams[0].consumers: 20000 durable consumers: at most 10000"),
        (Box::new(|s| s.replicas = Some(0)), "imported_streams[0].replicas: replicas 0: at least 1"),
        (Box::new(|s| s.replicas = Some(255)), "imported_streams[0].replicas: replicas 255: at most 5"),
        (Box::new(|s| s.name = String::new()), "imported_streams[0].name: '' is not a valid name"),
        (Box::new(|s| s.name = "../../x".into()), "imported_streams[0].name: '../../x' is not a valid name"),
        (Box::new(|s| s.name = "a>".into()), "imported_streams[0].name: 'a>' is not a valid name"),
        (Box::new(|s| s.msgs_per_s = -5.0), "imported_streams[0].msgs_per_s: must be a finite number above zero"),
        (Box::new(|s| s.subjects = vec!["a.>".into(), "a.b".into()]), "imported_streams[0].subjects[1]: subject 'a.b' overlaps"),
    ];
    for (edit, says) in &cases {
        edited(edit.as_ref(), None);
        for cmd in ["design", "whatif", "emit"] {
            let out = tmp.path().join("out");
            let o = out.display().to_string();
            let args: Vec<&str> = match cmd {
                "emit" => vec!["emit", "--plan", &p, "--out", &o],
                "whatif" => vec!["whatif", "--plan", &p, "--all", "1", "--format", "json"],
                c => vec![c, "--plan", &p, "--format", "json"],
            };
            let (code, err) = crate::common::run_limited(&args);
            assert_eq!(code, 2, "{cmd} {says}: {err}");
            assert!(
                err.contains(says) && err.contains("--plan"),
                "{cmd} should say {says:?}: {err}"
            );
            assert!(!out.exists(), "{cmd}: nothing is written from a refused plan");
        }
    }
    // The hash is required: null or absent is refused, not a skipped check.
    edited(&|s| s.consumers = u32::MAX, Some(Value::Null));
    let (code, err) = crate::common::run_limited(&["design", "--plan", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not a plan saved by") && err.contains("expected a string"),
        "{err}"
    );
    let mut v = read_json(&plan);
    v["hashes"].as_object_mut().unwrap().remove("imported");
    std::fs::write(&plan, v.to_string()).unwrap();
    let (code, err) = crate::common::run_limited(&["design", "--plan", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("missing field `imported`"), "{err}");
    // An edit with the old hash is found by the hash, first.
    edited(&|s| s.replicas = Some(0), Some(saved["hashes"]["imported"].clone()));
    let (code, err) = crate::common::run_limited(&["design", "--plan", &p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("imported streams do not match their hash"), "{err}");
}
