use super::write::{exchange, OutLock, STAGING_PREFIX};
use super::*;

fn four_racks() -> Plan {
    let cat = crate::catalog::Catalog::builtin();
    let text = include_str!("../../tests/data/four-racks-r3.yaml");
    let site = crate::site::parse_str(text, "four-racks-r3.yaml", &cat).unwrap();
    crate::plan::build(&site, &cat)
}

fn unique_layout(plan: &Plan) -> &PlannedLayout {
    plan.layouts
        .iter()
        .find(|l| l.unique_tag.is_some() && l.servers.len() == 6)
        .unwrap()
}

fn file<'f>(files: &'f [(PathBuf, String)], p: &str) -> &'f str {
    &files.iter().find(|(f, _)| f == Path::new(p)).unwrap().1
}

#[test]
fn one_config_per_server_and_one_definition_per_asset() {
    let plan = four_racks();
    let l = unique_layout(&plan);
    let files = render(&plan, &l.id, &EmitOptions::default()).unwrap();
    let confs = files.iter().filter(|(p, _)| p.ends_with("nats-server.conf")).count();
    assert_eq!(confs, l.servers.len());
    for s in &l.servers {
        let t = file(&files, &format!("{}/nats-server.conf", s.name));
        assert!(t.contains("unique_tag: \"rack:\""));
        assert!(t.contains(&format!("max_file_store: {}", s.store_bytes)));
        assert!(t.contains("store_dir: \"/var/lib/nats\""));
    }
    let orders: Value = serde_json::from_str(file(&files, "streams/orders.json")).unwrap();
    let planned = l
        .per_asset()
        .unwrap()
        .assets
        .iter()
        .find(|a| a.name == "orders" && a.kind == crate::layout::AssetKind::Stream)
        .unwrap();
    assert_eq!(orders["num_replicas"], planned.replicas);
    assert_eq!(orders["max_bytes"], planned.bytes_per_replica);
    assert_eq!(orders["placement"]["cluster"], plan.input.nats.cluster_name);
    // Deterministic: the same plan renders the same bytes.
    assert_eq!(files, render(&plan, &l.id, &EmitOptions::default()).unwrap());
}

#[test]
fn short_retention_shortens_the_duplicate_window_and_the_cap_wins_over_the_plan() {
    let mut plan = four_racks();
    plan.input.workload.streams[0].retention_s = 30.0;
    plan.input.workload.streams[0].max_bytes = Some(12345);
    let id = unique_layout(&plan).id.clone();
    let files = render(&plan, &id, &EmitOptions::default()).unwrap();
    let orders: Value = serde_json::from_str(file(&files, "streams/orders.json")).unwrap();
    assert_eq!(orders["duplicate_window"], 30_000_000_000i64);
    assert_eq!(orders["max_age"], 30_000_000_000i64);
    assert_eq!(orders["max_bytes"], 12345);
}

#[test]
fn names_nats_cannot_take_are_refused_with_the_fix() {
    let mut plan = four_racks();
    plan.input.workload.streams[0].name = "orders.eu".into();
    let id = unique_layout(&plan).id.clone();
    // The plan's asset keeps the old name, so rename it too: the name check must fire first.
    let idx = plan.layouts.iter().position(|l| l.id == id).unwrap();
    let assets = &mut plan.layouts[idx].per_asset_mut().unwrap().assets;
    for a in assets.iter_mut().filter(|a| a.name == "orders") {
        a.name = "orders.eu".into();
    }
    let e = render(&plan, &id, &EmitOptions::default()).unwrap_err().to_string();
    assert!(e.contains("orders.eu") && e.contains("site file"), "{e}");
    assert!(render(&plan, "nope", &EmitOptions::default()).is_err());
}

#[test]
fn sizes_past_an_int64_are_refused_with_the_asset_not_written() {
    // A plan that sized an asset past 8 EiB (saturated at u64::MAX): nats-server reads max_bytes as an
    // int64 and refuses the stream, so emit says which asset rather than writing the number.
    let mut plan = four_racks();
    let id = unique_layout(&plan).id.clone();
    let idx = plan.layouts.iter().position(|l| l.id == id).unwrap();
    let assets = &mut plan.layouts[idx].per_asset_mut().unwrap().assets;
    for a in assets.iter_mut().filter(|a| a.name == "blobs") {
        a.bytes_per_replica = u64::MAX;
    }
    let e = render(&plan, &id, &EmitOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains("object store blobs: max_bytes is 18446744073709551615 bytes"),
        "{e}"
    );
    assert!(e.contains("int64"), "{e}");
    let mut plan = four_racks();
    plan.input.workload.streams[0].max_bytes = Some(i64::MAX as u64 + 1);
    let e = render(&plan, &id, &EmitOptions::default()).unwrap_err().to_string();
    assert!(e.contains("stream orders: max_bytes"), "{e}");
    // A sync interval nats-server cannot read as a Go duration.
    let mut plan = four_racks();
    plan.input.nats.sync = crate::units::SyncMode::Interval(157_788_000 * 60);
    let e = render(&plan, &id, &EmitOptions::default()).unwrap_err().to_string();
    assert!(e.contains("292 years"), "{e}");
}

#[test]
fn a_literal_password_makes_the_configurations_private() {
    let plan = four_racks();
    let id = unique_layout(&plan).id.clone();
    let deploy = |pw: &str| {
        deploy::parse(
            &format!("accounts:\n  APP:\n    users: [{{ user: app, password: \"{pw}\" }}]\n"),
            "deploy.yaml",
            &plan.input.workload,
        )
        .unwrap()
    };
    let opts = EmitOptions {
        deploy: deploy("s3cret"),
        ..EmitOptions::default()
    };
    let files = render_all(&plan, &id, &opts).unwrap();
    let private = private_files(&files, &opts);
    assert_eq!(private.len(), unique_layout(&plan).servers.len());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    write_atomically(&out, &files, false, &private).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out.join(&private[0])), 0o600);
    assert_ne!(mode(&out.join("README.md")), 0o600);
    assert!(file(&files, "README.md").contains("mode 0600"));
    // A `$VAR` keeps the secret out of the file: nothing private.
    let opts = EmitOptions {
        deploy: deploy("$APP_PASSWORD"),
        ..EmitOptions::default()
    };
    assert!(private_files(&render_all(&plan, &id, &opts).unwrap(), &opts).is_empty());
}

#[test]
fn stale_staging_folders_are_swept_and_a_busy_out_folder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // One left by a writer that is gone (pid_max is at most 4194304 on Linux), one by a live one.
    let dead = tmp.path().join(format!("{STAGING_PREFIX}4194305-AbC123"));
    let live = tmp
        .path()
        .join(format!("{STAGING_PREFIX}{}-XyZ789", std::process::id()));
    for d in [&dead, &live] {
        std::fs::create_dir_all(d.join("a1")).unwrap();
        std::fs::write(d.join("a1/nats-server.conf"), "x").unwrap();
    }
    let files = vec![(PathBuf::from("README.md"), "r".to_string())];
    write_atomically(&out, &files, false, &[]).unwrap();
    assert!(!dead.exists(), "a dead writer's staging folder is removed");
    assert!(live.exists(), "a live writer's is left alone");
    // While another emit holds the folder's lock, this one refuses instead of racing it.
    let lock = OutLock::take(tmp.path(), &out).unwrap();
    let e = write_atomically(&out, &files, true, &[]).unwrap_err().to_string();
    assert!(e.contains("another natsplan emit is writing"), "{e}");
    drop(lock);
    write_atomically(&out, &files, true, &[]).unwrap();
    // Nothing but the output (and the live writer's folder) is left beside it: no lock file, no old copy.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![live.file_name().unwrap().to_string_lossy().into_owned(), "o".into()]
    );
}

#[test]
fn force_swaps_the_folders_in_one_step() {
    // After the exchange the old content sits under the staging name, then goes: `out` never misses.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("new"), "").unwrap();
    std::fs::create_dir(&b).unwrap();
    std::fs::write(b.join("old"), "").unwrap();
    exchange(&a, &b).unwrap();
    assert!(b.join("new").exists() && a.join("old").exists());
}

#[test]
fn writes_are_all_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let files = vec![
        (PathBuf::from("a/x.conf"), "x".to_string()),
        (PathBuf::from("README.md"), "r".to_string()),
    ];
    // An existing empty folder is fine.
    std::fs::create_dir(&out).unwrap();
    write_atomically(&out, &files, false, &[]).unwrap();
    assert_eq!(std::fs::read_to_string(out.join("a/x.conf")).unwrap(), "x");
    // Non-empty now: refused without force, replaced whole with it.
    assert!(write_atomically(&out, &files[1..], false, &[])
        .unwrap_err()
        .to_string()
        .contains("--force"));
    write_atomically(&out, &files[1..], true, &[]).unwrap();
    assert!(!out.join("a").exists());
    // A path escaping the folder is refused and nothing is left behind.
    let bad = vec![(PathBuf::from("../evil"), String::new())];
    let out2 = tmp.path().join("o2");
    assert!(write_atomically(&out2, &bad, false, &[]).is_err());
    assert!(!out2.exists());
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["o"]);
}
