use super::*;

fn sources(site: &str) -> Sources {
    Sources {
        site: Some(PathBuf::from(format!("{}/{site}", env!("CARGO_MANIFEST_DIR")))),
        interval: "10s".into(),
        ..Sources::default()
    }
}

fn save(src: &Sources, dir: &Path) -> PathBuf {
    let inputs = Inputs::load(src).unwrap();
    let plan = inputs.plan().unwrap();
    let p = dir.join("plan.json");
    std::fs::write(&p, inputs.saved_plan_json(&plan, None)).unwrap();
    p
}

#[test]
fn a_saved_plan_loads_to_the_same_plan_without_its_site_file() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site.yaml");
    std::fs::copy(
        format!("{}/examples/three-racks-raid1.yaml", env!("CARGO_MANIFEST_DIR")),
        &site,
    )
    .unwrap();
    let src = Sources {
        site: Some(site.clone()),
        ..sources("")
    };
    let p = save(&src, tmp.path());
    let direct = Inputs::load(&src).unwrap().plan().unwrap();
    std::fs::remove_file(&site).unwrap();
    let loaded = Inputs::load(&Sources {
        plan: Some(p),
        ..Sources::default()
    })
    .unwrap();
    let plan = loaded.plan().unwrap();
    assert_eq!(plan_hash(&plan), plan_hash(&direct));
    assert_eq!(loaded.site_path, site);
}

#[test]
fn another_version_another_site_or_an_edit_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let src = sources("examples/three-racks-raid1.yaml");
    let p = save(&src, tmp.path());
    let text = std::fs::read_to_string(&p).unwrap();
    let load = |text: &str, site: Option<&str>| {
        std::fs::write(&p, text).unwrap();
        let mut s = Sources {
            plan: Some(p.clone()),
            ..Sources::default()
        };
        if let Some(site) = site {
            s.site = sources(site).site;
        }
        Inputs::load(&s).and_then(|i| i.plan()).map(|_| ())
    };
    // The same site beside it is fine.
    load(&text, Some("examples/three-racks-raid1.yaml")).unwrap();
    let e = load(&text, Some("examples/one-rack-raid10.yaml")).unwrap_err();
    assert_eq!(e.code(), 2);
    assert!(
        e.render().contains("not the site file this plan was built from"),
        "{}",
        e.render()
    );
    let old = text.replace(
        &format!("\"natsplan_version\": \"{VERSION}\""),
        "\"natsplan_version\": \"0.0.1\"",
    );
    let e = load(&old, None).unwrap_err();
    assert!(e.render().contains("saved by natsplan 0.0.1"), "{}", e.render());
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["hashes"]["plan"] = "sha256:00".into();
    let e = load(&v.to_string(), None).unwrap_err();
    assert!(e.render().contains("differs from the one saved"), "{}", e.render());
    let e = load("{}", None).unwrap_err();
    assert!(e.render().contains("not a plan saved by"), "{}", e.render());
}

#[test]
fn imported_streams_and_the_calibration_travel_in_the_saved_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let omb = tmp.path().join("w.yaml");
    std::fs::write(
        &omb,
        "name: w\ntopics: 2\npartitionsPerTopic: 1\nmessageSize: 1024\nproducerRate: 500\n\
             producersPerTopic: 1\nconsumerPerSubscription: 1\nsubscriptionsPerTopic: 1\n",
    )
    .unwrap();
    let mut src = sources("examples/three-racks-raid1.yaml");
    src.omb = Some(omb.clone());
    src.omb_retention = Some("1h".into());
    src.calibration = sources("tests/data/verify-cal-huge-bands.yaml").site;
    let direct = Inputs::load(&src).unwrap();
    let n = direct.site.workload.streams.len();
    let p = save(&src, tmp.path());
    std::fs::remove_file(&omb).unwrap();
    let loaded = Inputs::load(&Sources {
        plan: Some(p),
        ..Sources::default()
    })
    .unwrap();
    assert_eq!(loaded.site.workload.streams.len(), n);
    assert!(loaded.calibration_label.ends_with("verify-cal-huge-bands.yaml"));
    assert_eq!(plan_hash(&loaded.plan().unwrap()), plan_hash(&direct.plan().unwrap()));
}

#[test]
fn the_files_a_site_names_travel_in_the_saved_plan_and_are_checked_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site.yaml");
    let text = std::fs::read_to_string(format!(
        "{}/examples/three-racks-raid1.yaml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let i = text.find("workload:").expect("the example has a workload");
    let (head, _) = text.split_at(i);
    std::fs::write(
        &site,
        format!("{head}workload:\n  streams:\n    - {{ config: s/orders.json, msgs_per_s: 50, msg_size: 1KiB }}\n"),
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("s")).unwrap();
    let cfg = tmp.path().join("s/orders.json");
    std::fs::write(
        &cfg,
        r#"{"name": "orders", "subjects": ["orders.>"], "max_age": 3600000000000}"#,
    )
    .unwrap();
    let src = Sources {
        site: Some(site.clone()),
        ..sources("")
    };
    let direct = Inputs::load(&src).unwrap();
    assert_eq!(direct.site.workload.streams[0].retention_s, 3600.0);
    let p = save(&src, tmp.path());
    std::fs::remove_file(&cfg).unwrap();
    let only_plan = Sources {
        plan: Some(p.clone()),
        ..Sources::default()
    };
    let loaded = Inputs::load(&only_plan).unwrap();
    assert_eq!(plan_hash(&loaded.plan().unwrap()), plan_hash(&direct.plan().unwrap()));
    assert!(loaded.site.workload.stream_configs.contains_key("orders"));
    // Beside the site file, a changed (here: missing) config file is refused.
    let e = Inputs::load(&Sources {
        site: Some(site),
        ..only_plan.clone()
    })
    .unwrap_err();
    assert!(e.render().contains("s/orders.json, which"), "{}", e.render());
    // An edited copy inside the plan is refused too.
    let saved = std::fs::read_to_string(&p)
        .unwrap()
        .replace("3600000000000", "7200000000000");
    std::fs::write(&p, saved).unwrap();
    let e = Inputs::load(&only_plan).unwrap_err();
    assert!(e.render().contains("does not match its hash"), "{}", e.render());
}
