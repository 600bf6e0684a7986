use super::*;

const TREE: &str = include_str!("../../tests/data/helm-nats-2.14.2-keys.txt");

fn plan(file: &str) -> Plan {
    let path = format!("{}/examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cat = crate::catalog::Catalog::builtin();
    let site = crate::site::parse_str(&text, &path, &cat).unwrap();
    crate::plan::build(&site, &cat)
}

#[test]
fn emitted_keys_are_all_in_the_charts_values() {
    let p = plan("three-racks-raid1.yaml");
    let h = render(&p, &p.layouts[0].id, &EmitOptions::default(), "nats-jetstream").unwrap();
    assert_eq!(unknown_keys(&h.values, TREE), Vec::<String>::new());
    // The check can fail: a misspelt key and a key below a leaf are caught.
    let mut v = h.values.clone();
    v["config"]["jetstream"]["fileStore"]["pvc"]["sizee"] = json!("1Gi");
    v["config"]["cluster"]["replicas"] = json!({"count": 3});
    assert_eq!(
        unknown_keys(&v, TREE),
        vec!["config.cluster.replicas.count", "config.jetstream.fileStore.pvc.sizee"]
    );
}

#[test]
fn the_key_tree_names_its_source_and_chart_version() {
    assert!(TREE.contains("nats-io/k8s") && TREE.contains(CHART_VERSION) && TREE.contains("values.yaml"));
}

#[test]
fn the_rendered_config_follows_the_charts_templates() {
    let v = json!({
        "config": {
            "cluster": {"enabled": true, "replicas": 3, "merge": {"name": "c1"}},
            "jetstream": {"enabled": true, "fileStore": {"maxSize": "900", "pvc": {"size": "1000"}},
                          "merge": {"unique_tag": "rack:"}},
            "merge": {"server_tags": ["<< $T >>"]},
        }
    });
    let c = chart_conf(&v, "nats");
    assert!(c.contains("\"server_name\": $SERVER_NAME,"), "{c}");
    assert!(c.contains("\"max_file_store\": 900,"), "{c}");
    assert!(c.contains("\"max_memory_store\": 0,"), "{c}");
    assert!(c.contains("\"nats://nats-2.nats-headless:6222\""), "{c}");
    assert!(c.contains("\"name\": \"c1\""), "{c}");
    assert!(c.contains("\"unique_tag\": \"rack:\""), "{c}");
    assert!(c.contains("\"http_port\": 8222"), "{c}");
    assert!(!c.contains("<<"), "{c}");
    // Without maxSize the chart's default: the whole claim.
    let mut w = v.clone();
    w["config"]["jetstream"]["fileStore"]["maxSize"] = Value::Null;
    assert!(chart_conf(&w, "nats").contains("\"max_file_store\": 1000,"));
    // A release without "nats" in its name: <release>-nats.
    assert!(chart_conf(&v, "prod").contains("nats://prod-nats-0.prod-nats-headless:6222"));
}

/// The chart's own test (helm/charts/nats/test/config_test.go `TestConfigJetStreamCluster`, with the
/// defaults of defaults_test.go) expects this configuration for `cluster.enabled` and `jetstream.enabled`
/// (its `server_name` the pod's, `10Gi` as nats-server reads it).
#[test]
fn the_charts_own_jetstream_cluster_case_renders_as_its_test_expects() {
    let v = json!({"config": {"cluster": {"enabled": true}, "jetstream": {"enabled": true}}});
    let c = chart_conf(&v, "nats")
        .replace("$SERVER_NAME", "\"nats-0\"")
        .replace(": 10Gi", ": 10737418240");
    let got: Value = serde_json::from_str(&c).unwrap_or_else(|e| panic!("{e}: {c}"));
    let want = json!({
        "http_port": 8222, "lame_duck_duration": "30s", "lame_duck_grace_period": "10s",
        "pid_file": "/var/run/nats/nats.pid", "port": 4222, "server_name": "nats-0",
        "cluster": {"name": "nats", "no_advertise": true, "port": 6222, "routes": [
            "nats://nats-0.nats-headless:6222", "nats://nats-1.nats-headless:6222",
            "nats://nats-2.nats-headless:6222"]},
        "jetstream": {"max_file_store": 10737418240u64, "max_memory_store": 0, "store_dir": "/data"},
    });
    assert_eq!(got, want);
}

#[test]
fn pinned_sets_and_uneven_racks_are_refused_with_the_fix() {
    let p = plan("one-rack-raid10.yaml");
    let e = render(&p, &p.layouts[0].id, &EmitOptions::default(), "nats-jetstream")
        .unwrap_err()
        .to_string();
    assert!(e.contains("set: tags") && e.contains("without --helm-values"), "{e}");
    let p = plan("seed-five-servers-raid0.yaml");
    let l = p.layouts.iter().find(|l| !l.replica_sets.is_empty()).unwrap();
    let e = render(&p, &l.id, &EmitOptions::default(), "nats-jetstream")
        .unwrap_err()
        .to_string();
    assert!(e.contains("unique_tag rack:") && e.contains("--layout"), "{e}");
    // 2 + 2 + 1 is what maxSkew 1 gives (warned); 3 + 1 + 1 is not (refused).
    let l = p
        .layouts
        .iter()
        .find(|l| l.replica_sets.is_empty() && l.servers.len() == 5)
        .unwrap();
    let h = render(&p, &l.id, &EmitOptions::default(), "nats-jetstream").unwrap();
    assert!(h.warnings.iter().any(|w| w.contains("maxSkew 1")), "{:?}", h.warnings);
    let mut q = p.clone();
    let m = q.layouts.iter_mut().find(|x| x.id == l.id).unwrap();
    let b = m.servers.iter().position(|s| s.rack == "B").unwrap();
    m.servers[b].rack = "A".into();
    let e = render(&q, &l.id, &EmitOptions::default(), "nats-jetstream")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unevenly") && e.contains("rack A: 3, rack B: 1, rack C: 1"),
        "{e}"
    );
}

#[test]
fn a_rack_name_no_node_label_can_hold_is_refused_with_the_site_field() {
    let mut p = plan("three-racks-raid1.yaml");
    let id = p.layouts[0].id.clone();
    p.layouts[0].servers[0].rack = "Row 1/A".into();
    let e = render(&p, &id, &EmitOptions::default(), "nats-jetstream")
        .unwrap_err()
        .to_string();
    assert!(e.contains("rack 'Row 1/A'") && e.contains("racks[].name"), "{e}");
}

#[test]
fn storage_class_names_are_checked() {
    assert!(check_storage_class("nats-jetstream").is_ok());
    let e = check_storage_class("Fast SSD").unwrap_err().to_string();
    assert!(e.contains("--storage-class") && e.contains("e.g."), "{e}");
    assert!(check_storage_class("-x").is_err());
    assert!(check_storage_class("").is_err());
}
