//! `natsplan emit --monitoring` (issue 50): Prometheus alerting rules and a Grafana dashboard per exporter.
//! Every rule and panel names only metrics its exporter emits (the tables in `emit::monitoring`, each name
//! with its source), every threshold carries its source, the thresholds are the plan's, and — with the
//! `live` feature, whose lane installs promtool (scripts/install-promtool) — `promtool check rules` passes
//! on the rules and on every panel's expression.

use crate::common::{repo_file, run};
use natsplan::emit::monitoring::{self, Exporter, Monitoring};
use serde_json::Value;
use std::path::{Path, PathBuf};

const SITE: &str = "examples/seed-five-servers-raid0.yaml";

/// The five-server R3 layout: each server takes on replicas after another one fails, so the store rules
/// carry a failover room below natscli's 90 %.
fn five_server_r3() -> String {
    let (code, out, err) = run(&["design", &repo_file(SITE), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["servers"].as_array().unwrap().len() == 5 && l["replicas"] == 3)
        .expect("a five-server R3 layout")["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `emit --monitoring` with `extra` flags into a fresh folder: (the folder, every monitoring file read back
/// as emit's (path, text) pairs, stdout).
fn emit(dir: &Path, id: &str, extra: &[&str]) -> (PathBuf, Vec<(PathBuf, String)>, String) {
    let out = dir.join(format!("o{}", extra.join("").replace(['-', '='], "")));
    let o = out.to_str().unwrap().to_string();
    let site = repo_file(SITE);
    let mut args = vec![
        "--format",
        "json",
        "emit",
        &site,
        "--layout",
        id,
        "--out",
        &o,
        "--monitoring",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    let mut files = Vec::new();
    for e in walk(&out.join("monitoring")) {
        let rel = e.strip_prefix(&out).unwrap().to_path_buf();
        files.push((rel, std::fs::read_to_string(&e).unwrap()));
    }
    files.sort();
    (out, files, stdout)
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn cases() -> [(Monitoring, Vec<&'static str>); 3] {
    [
        (
            Monitoring {
                exporter: Exporter::PrometheusNatsExporter,
                prefix: None,
                server_names: vec![],
            },
            vec![],
        ),
        (
            Monitoring {
                exporter: Exporter::PrometheusNatsExporter,
                prefix: Some("nats".into()),
                server_names: vec![],
            },
            vec!["--metric-prefix", "nats"],
        ),
        (
            Monitoring {
                exporter: Exporter::Surveyor,
                prefix: None,
                server_names: vec![],
            },
            vec!["--exporter", "surveyor"],
        ),
    ]
}

/// The metric names in `files` that are not in `m`'s table.
fn unknown_names(files: &[(PathBuf, String)], m: &Monitoring) -> Vec<String> {
    let known = monitoring::metric_names(m);
    let mut bad = Vec::new();
    for (at, expr) in monitoring::expressions(files).unwrap() {
        for n in monitoring::names_in(&expr) {
            if !known.contains_key(&n) {
                bad.push(format!("{at}: {n}"));
            }
        }
    }
    bad
}

#[test]
fn every_rule_and_panel_names_only_metrics_its_exporter_emits() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    for (m, flags) in cases() {
        let (_, files, _) = emit(tmp.path(), &id, &flags);
        let exprs = monitoring::expressions(&files).unwrap();
        assert!(exprs.len() > 10, "{flags:?}: {exprs:?}");
        assert_eq!(unknown_names(&files, &m), Vec::<String>::new(), "{flags:?}");
        // Every name used has a source, and the exporter's own metrics are used (not only natsplan check's).
        let known = monitoring::metric_names(&m);
        let used: Vec<String> = exprs.iter().flat_map(|(_, e)| monitoring::names_in(e)).collect();
        assert!(
            used.iter().any(|n| !n.starts_with("natsplan_check_")),
            "{flags:?}: only natsplan check series"
        );
        for n in &used {
            assert!(!known[n].is_empty(), "{n} has no source");
        }
        // The other exporter's table does not cover these names: the check tells the outputs apart.
        let other = Monitoring {
            exporter: match m.exporter {
                Exporter::PrometheusNatsExporter => Exporter::Surveyor,
                Exporter::Surveyor => Exporter::PrometheusNatsExporter,
            },
            prefix: None,
            server_names: vec![],
        };
        assert!(!unknown_names(&files, &other).is_empty(), "{flags:?}");
    }
}

#[test]
fn every_threshold_is_the_plans_or_a_named_default_with_its_source() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    let (_, files, stdout) = emit(tmp.path(), &id, &[]);
    let rules_text = &files.iter().find(|(p, _)| p.ends_with("alerts.rules.yaml")).unwrap().1;
    let rules: Value = serde_norway::from_str(rules_text).unwrap();
    let rules = rules["groups"][0]["rules"].as_array().unwrap();
    for r in rules {
        let src = r["annotations"]["threshold_source"].as_str().unwrap_or("");
        assert!(src.len() > 20, "{}: no threshold source", r["alert"]);
        assert!(r["annotations"]["threshold"].is_string(), "{}", r["alert"]);
    }
    // The plan's figures: every server's failover room (plan::failover_room) and store limit, its meta
    // group size, each stream's planned rate and predicted ceiling.
    let (_, plan_json, _) = run(&["design", &repo_file(SITE), "--format", "json", "--layout", &id]);
    let plan: Value = serde_json::from_str(&plan_json).unwrap();
    let layout = plan["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == id.as_str())
        .unwrap();
    let servers = layout["servers"].as_array().unwrap();
    let failover: Vec<&Value> = rules
        .iter()
        .filter(|r| r["alert"] == "NatsplanStoreBeyondFailoverRoom")
        .collect();
    // A failover rule for each server that takes on replicas after a tolerated failure (most of them
    // here), a store-full rule for every server.
    assert!(
        failover.len() >= 2 && failover.len() <= servers.len(),
        "{}",
        failover.len()
    );
    let full = rules.iter().filter(|r| r["alert"] == "NatsplanStoreNearlyFull").count();
    assert_eq!(full, servers.len());
    for r in &failover {
        let th = r["annotations"]["threshold"].as_str().unwrap();
        let f: f64 = th.parse().unwrap();
        assert!(f > 0.3 && f < 0.9, "{th}: below natscli's 90 %, above nothing");
        let server = r["labels"]["server"].as_str().unwrap();
        assert!(r["expr"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{{server_name=\"{server}\"}}) > {th}")));
    }
    let meta = rules.iter().find(|r| r["alert"] == "NatsplanMetaGroupSmaller").unwrap();
    assert!(meta["expr"]
        .as_str()
        .unwrap()
        .ends_with(&format!("< {}", servers.len())));
    let site = std::fs::read_to_string(repo_file(SITE)).unwrap();
    let planned: Vec<&Value> = rules
        .iter()
        .filter(|r| r["alert"] == "NatsplanStreamAbovePlannedRate")
        .collect();
    assert!(!planned.is_empty());
    for r in planned {
        let stream = r["labels"]["stream"].as_str().unwrap();
        let th = r["annotations"]["threshold"].as_str().unwrap();
        assert!(
            site.contains(stream.trim_start_matches("KV_").trim_start_matches("OBJ_")),
            "{stream}"
        );
        assert!(r["expr"].as_str().unwrap().ends_with(&format!("> {th}")), "{stream}");
    }
    assert!(rules
        .iter()
        .any(|r| r["alert"] == "NatsplanStreamAbovePredictedCeiling"));
    // The JSON summary keeps its keys and adds `monitoring`.
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["files"].is_array() && v["out"].is_string() && v["layout"] == id.as_str());
    assert_eq!(v["monitoring"]["exporter"], "prometheus-nats-exporter");
    assert_eq!(
        v["monitoring"]["rules"],
        "monitoring/prometheus-nats-exporter/alerts.rules.yaml"
    );
}

#[test]
fn the_dashboard_names_its_schema_version_and_data_source_input() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    for (_, flags) in cases() {
        let (_, files, _) = emit(tmp.path(), &id, &flags);
        let d: Value =
            serde_json::from_str(&files.iter().find(|(p, _)| p.ends_with("dashboard.json")).unwrap().1).unwrap();
        assert_eq!(d["schemaVersion"], monitoring::GRAFANA_SCHEMA_VERSION);
        assert_eq!(d["__inputs"][0]["name"], "DS_PROMETHEUS");
        assert_eq!(d["__inputs"][0]["pluginId"], "prometheus");
        let panels = d["panels"].as_array().unwrap();
        assert!(panels.len() >= 10);
        for p in panels {
            assert_eq!(p["datasource"]["uid"], "${DS_PROMETHEUS}", "{}", p["title"]);
            for t in p["targets"].as_array().unwrap() {
                assert_eq!(t["datasource"]["uid"], "${DS_PROMETHEUS}");
            }
        }
    }
}

#[test]
fn the_rules_of_one_site_are_as_reviewed() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    let (_, files, _) = emit(tmp.path(), &id, &[]);
    let rules = &files.iter().find(|(p, _)| p.ends_with("alerts.rules.yaml")).unwrap().1;
    insta::assert_snapshot!("emit-monitoring-seed-five-servers-raid0-rules", rules);
}

#[test]
fn monitoring_flags_refuse_what_does_not_fit() {
    let tmp = tempfile::tempdir().unwrap();
    let site = repo_file(SITE);
    let o = tmp.path().join("o");
    let o = o.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--monitoring", "--exporter", "surveyor", "--metric-prefix", "nats"],
            "--metric-prefix is prometheus-nats-exporter's -prefix",
        ),
        (&["--monitoring", "--metric-prefix", "9x"], "--metric-prefix '9x'"),
        (&["--exporter", "surveyor"], "--monitoring"),
    ];
    for (flags, want) in cases {
        let mut args = vec!["emit", &site, "--out", o];
        args.extend_from_slice(flags);
        let (code, _, err) = run(&args);
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert!(err.contains(want), "{flags:?}: {err}");
        assert!(!Path::new(o).exists(), "{flags:?}: nothing written");
    }
}

/// promtool, for the tests that run it: `$PROMTOOL_BIN`, else the project's `.tools/bin/promtool`
/// (scripts/install-promtool), else PATH.
#[cfg(feature = "live")]
fn promtool() -> PathBuf {
    if let Some(p) = std::env::var_os("PROMTOOL_BIN").filter(|v| !v.is_empty()) {
        return PathBuf::from(p);
    }
    let local = PathBuf::from(repo_file(".tools/bin/promtool"));
    if local.exists() {
        return local;
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("promtool"))
        .find(|p| p.exists())
        .expect("promtool: run scripts/install-promtool or set PROMTOOL_BIN")
}

#[cfg(feature = "live")]
fn promtool_check(file: &Path) -> (bool, String) {
    let out = std::process::Command::new(promtool())
        .args(["check", "rules"])
        .arg(file)
        .output()
        .expect("promtool runs");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[cfg(feature = "live")]
#[test]
fn promtool_passes_the_rules_and_every_panel_expression() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    for (_, flags) in cases() {
        let (out, files, _) = emit(tmp.path(), &id, &flags);
        let rules = files.iter().find(|(p, _)| p.ends_with("alerts.rules.yaml")).unwrap();
        let (ok, text) = promtool_check(&out.join(&rules.0));
        assert!(ok, "{flags:?}: {text}");
        // Each panel's expression as a recording rule of a throwaway file.
        let panels: Vec<(String, String)> = monitoring::expressions(&files)
            .unwrap()
            .into_iter()
            .filter(|(at, _)| at.contains("dashboard.json"))
            .collect();
        assert!(panels.len() >= 10);
        let rec: Vec<Value> = panels
            .iter()
            .enumerate()
            .map(|(i, (_, e))| serde_json::json!({ "record": format!("natsplan:panel_{i}"), "expr": e }))
            .collect();
        let file = tmp.path().join("panels.rules.yaml");
        let doc = serde_json::json!({ "groups": [{ "name": "panels", "rules": rec }] });
        std::fs::write(&file, serde_norway::to_string(&doc).unwrap()).unwrap();
        let (ok, text) = promtool_check(&file);
        assert!(ok, "{flags:?}: {text}");
        assert!(
            text.contains(&format!("SUCCESS: {} rules found", panels.len())),
            "{text}"
        );
    }
    // promtool does fail on a broken expression: the check is not vacuous.
    let bad = tmp.path().join("bad.rules.yaml");
    std::fs::write(
        &bad,
        "groups:\n- name: x\n  rules:\n  - record: x:y\n    expr: max by (a (up)\n",
    )
    .unwrap();
    assert!(!promtool_check(&bad).0);
}

/// The `/varz` names of `EXPORTER_METRICS` are what prometheus-nats-exporter makes of nats-server 2.15.1's
/// `/varz`: a one-server JetStream cluster on loopback (its route to itself gives it a meta group), its
/// `/varz` flattened by the exporter's rule (every number at path `a.b.c` is `gnatsd_varz_a_b_c`; strings,
/// booleans and lists are not gauges), and every `gnatsd_varz_*` name of the table found among them.
#[cfg(feature = "live")]
#[test]
fn the_varz_names_are_nats_server_2_15_1s_varz_flattened() {
    let _one = crate::common::serial();
    let bin = natsplan::lab::find_nats_server(None).expect("nats-server (set NATS_SERVER_BIN)");
    let tmp = tempfile::tempdir().unwrap();
    let port = || {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (client, http, route) = (port(), port(), port());
    let conf = tmp.path().join("s.conf");
    std::fs::write(
        &conf,
        format!(
            "server_name: n1\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{http}\njetstream {{ store_dir: \"{}\" }}\n\
             cluster {{ name: c1, listen: 127.0.0.1:{route}, routes: [nats://127.0.0.1:{route}] }}\n",
            tmp.path().join("js").display()
        ),
    )
    .unwrap();
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Kill(
        std::process::Command::new(&bin)
            .arg("-c")
            .arg(&conf)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let base = format!("http://127.0.0.1:{http}");
    let mut varz = None;
    for _ in 0..100 {
        if let Ok(v) = natsplan::monitor::varz(&base, std::time::Duration::from_secs(2)) {
            if v.pointer("/jetstream/meta/cluster_size").is_some() {
                varz = Some(v);
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let varz = varz.expect("nats-server's /varz with a meta group");
    assert!(
        varz["version"].as_str().unwrap().starts_with("2.15."),
        "{}",
        varz["version"]
    );
    fn flatten(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Number(_) => out.push(format!("gnatsd_varz_{path}")),
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}_{k}")
                    };
                    flatten(x, &p, out);
                }
            }
            _ => {}
        }
    }
    let mut names = Vec::new();
    flatten(&varz, "", &mut names);
    let table: Vec<&str> = monitoring::EXPORTER_METRICS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| n.starts_with("gnatsd_varz_"))
        .collect();
    assert!(table.len() >= 5);
    for n in table {
        assert!(names.iter().any(|x| x == n), "{n} is not in 2.15.1's /varz: {names:?}");
    }
}

/// The store rules fire on the series each exporter really exports: `promtool test rules` with one server's
/// series as the exporter labels them (prometheus-nats-exporter: `/varz` by a random `server_id` as under the
/// Helm chart's `-use_internal_server_id`, `/jsz` with `server_id` and `server_name`; nats-surveyor:
/// `server_id`, `server_name`, `cluster_name`). A fill between the server's failover room and 90 % raises the
/// warning for that server and not the critical; at 95 % both.
#[cfg(feature = "live")]
#[test]
fn promtool_fires_the_store_rules_on_the_exporters_series() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    for (m, flags) in [cases()[0].clone(), cases()[2].clone()] {
        let (out, files, _) = emit(tmp.path(), &id, &flags);
        let (path, text) = files.iter().find(|(p, _)| p.ends_with("alerts.rules.yaml")).unwrap();
        let rules: Value = serde_norway::from_str(text).unwrap();
        let rules = rules["groups"][0]["rules"].as_array().unwrap().clone();
        let warn = rules
            .iter()
            .find(|r| r["alert"] == "NatsplanStoreBeyondFailoverRoom")
            .unwrap();
        let server = warn["labels"]["server"].as_str().unwrap().to_string();
        let crit = rules
            .iter()
            .find(|r| r["alert"] == "NatsplanStoreNearlyFull" && r["labels"]["server"] == server.as_str())
            .unwrap();
        let room: f64 = warn["annotations"]["threshold"].as_str().unwrap().parse().unwrap();
        let limit = 1_000_000_000u64;
        let used = |fill: f64| (fill * limit as f64) as u64;
        // 20 minutes at a fill just above the room, then 20 at 95 %.
        let mid = used((room + 0.9) / 2.0);
        let high = used(0.95);
        let values = format!("{mid}x20 {high}x20");
        let (series, own): (Vec<(String, String)>, Value) = match m.exporter {
            Exporter::PrometheusNatsExporter => (
                vec![
                    (
                        "gnatsd_varz_jetstream_stats_storage{server_id=\"NDXYZRANDOMID\"}".into(),
                        values.clone(),
                    ),
                    (
                        "gnatsd_varz_jetstream_config_max_storage{server_id=\"NDXYZRANDOMID\"}".into(),
                        format!("{limit}x40"),
                    ),
                    (
                        format!(
                            "jetstream_server_max_storage{{server_id=\"NDXYZRANDOMID\", server_name=\"{server}\", \
                             cluster=\"natsplan\", meta_leader=\"x\", is_meta_leader=\"false\"}}"
                        ),
                        format!("{limit}x40"),
                    ),
                ],
                serde_json::json!({ "server_id": "NDXYZRANDOMID", "server_name": server }),
            ),
            Exporter::Surveyor => {
                let l = format!("{{server_id=\"NDXYZRANDOMID\", server_name=\"{server}\", cluster_name=\"natsplan\"}}");
                (
                    vec![
                        (format!("nats_core_jetstream_filestore_used_bytes{l}"), values.clone()),
                        (
                            format!("nats_core_jetstream_filestore_size_bytes{l}"),
                            format!("{limit}x40"),
                        ),
                    ],
                    serde_json::json!({ "server_id": "NDXYZRANDOMID", "server_name": server, "cluster_name": "natsplan" }),
                )
            }
        };
        let expect = |r: &Value| {
            let mut labels = own.clone();
            for (k, v) in r["labels"].as_object().unwrap() {
                labels[k] = v.clone();
            }
            serde_json::json!({ "exp_labels": labels, "exp_annotations": r["annotations"] })
        };
        let doc = serde_json::json!({
            "rule_files": [out.join(path).display().to_string()],
            "evaluation_interval": "1m",
            "tests": [{
                "interval": "1m",
                "input_series": series.iter().map(|(s, v)| serde_json::json!({ "series": s, "values": v })).collect::<Vec<_>>(),
                "alert_rule_test": [
                    { "eval_time": "19m", "alertname": "NatsplanStoreBeyondFailoverRoom", "exp_alerts": [expect(warn)] },
                    { "eval_time": "19m", "alertname": "NatsplanStoreNearlyFull", "exp_alerts": [] },
                    { "eval_time": "39m", "alertname": "NatsplanStoreNearlyFull", "exp_alerts": [expect(crit)] },
                ]
            }]
        });
        let file = tmp.path().join("store.test.yaml");
        std::fs::write(&file, serde_norway::to_string(&doc).unwrap()).unwrap();
        let o = std::process::Command::new(promtool())
            .args(["test", "rules"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{flags:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The rate rules fire on a stream's `last_seq` as each exporter exports it, one series per replica: at
/// the planned rate's midpoint to the predicted ceiling, the planned-rate warning and not the ceiling's.
#[cfg(feature = "live")]
#[test]
fn promtool_fires_the_rate_rules_on_the_exporters_series() {
    let tmp = tempfile::tempdir().unwrap();
    let id = five_server_r3();
    for (m, flags) in [cases()[0].clone(), cases()[2].clone()] {
        let (out, files, _) = emit(tmp.path(), &id, &flags);
        let (path, text) = files.iter().find(|(p, _)| p.ends_with("alerts.rules.yaml")).unwrap();
        let rules: Value = serde_norway::from_str(text).unwrap();
        let rules = rules["groups"][0]["rules"].as_array().unwrap().clone();
        let ceiling = rules
            .iter()
            .find(|r| r["alert"] == "NatsplanStreamAbovePredictedCeiling")
            .expect("a stream with a predicted ceiling");
        let stream = ceiling["labels"]["stream"].as_str().unwrap().to_string();
        let planned = rules
            .iter()
            .find(|r| r["alert"] == "NatsplanStreamAbovePlannedRate" && r["labels"]["stream"] == stream.as_str())
            .unwrap();
        let p: f64 = planned["annotations"]["threshold"].as_str().unwrap().parse().unwrap();
        let c: f64 = ceiling["annotations"]["threshold"].as_str().unwrap().parse().unwrap();
        assert!(c > p, "{stream}: ceiling {c} ≤ planned {p}");
        let per_min = ((p + c) / 2.0 * 60.0).round() as u64;
        let (label, extra) = match m.exporter {
            Exporter::PrometheusNatsExporter => ("stream_name", "jetstream_stream_last_seq"),
            Exporter::Surveyor => ("stream", "nats_stream_last_seq"),
        };
        let series: Vec<Value> = ["alpha", "bravo", "charlie"]
            .iter()
            .map(|s| {
                serde_json::json!({
                    "series": format!("{extra}{{{label}=\"{stream}\", server_id=\"N{s}\", server_name=\"{s}\"}}"),
                    "values": format!("0+{per_min}x40"),
                })
            })
            .collect();
        let mut labels = planned["labels"].clone();
        labels[label] = Value::from(stream.clone());
        let doc = serde_json::json!({
            "rule_files": [out.join(path).display().to_string()],
            "evaluation_interval": "1m",
            "tests": [{
                "interval": "1m",
                "input_series": series,
                "alert_rule_test": [
                    { "eval_time": "30m", "alertname": "NatsplanStreamAbovePlannedRate",
                      "exp_alerts": [{ "exp_labels": labels, "exp_annotations": planned["annotations"] }] },
                    { "eval_time": "30m", "alertname": "NatsplanStreamAbovePredictedCeiling", "exp_alerts": [] },
                ]
            }]
        });
        let file = tmp.path().join("rate.test.yaml");
        std::fs::write(&file, serde_norway::to_string(&doc).unwrap()).unwrap();
        let o = std::process::Command::new(promtool())
            .args(["test", "rules"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{flags:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn a_server_named_monitoring_is_refused_with_monitoring_and_emitted_without() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo_file("tests/data/four-racks-r3.yaml"))
        .unwrap()
        .replace("servers: [a1, a2]", "servers: [monitoring, a2]");
    let site = tmp.path().join("site.yaml");
    std::fs::write(&site, text).unwrap();
    let site = site.to_str().unwrap();
    let (code, out, err) = run(&["design", site, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let id = v["layouts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["servers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == "monitoring")
        })
        .expect("a layout with the server named monitoring")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = tmp.path().join("o");
    let o = o.to_str().unwrap();
    let (code, _, err) = run(&["emit", site, "--layout", &id, "--out", o, "--monitoring"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("server 'monitoring' has its folder where --monitoring writes"),
        "{err}"
    );
    assert!(!Path::new(o).exists());
    let (code, _, err) = run(&["emit", site, "--layout", &id, "--out", o]);
    assert_eq!(code, 0, "{err}");
    assert!(Path::new(o).join("monitoring/nats-server.conf").exists());
}

/// With `--helm-values` the rules are for the chart as it runs: servers named for their pods (`nats-0`…, in
/// the order of helm/README.md's table), the exporter's `-prefix=nats` names, and the chart's exporter
/// sidecar turned on in the values. Before, the rules selected `server_name="nats-a"` and `gnatsd_*` names
/// that no pod of the chart reports, so every per-server alert stayed silent. A rule for servers not
/// reporting fires instead of silence whatever the names.
#[test]
fn with_the_helm_values_the_rules_name_the_pods_and_the_charts_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let site = repo_file("examples/three-racks-raid1.yaml");
    let out = tmp.path().join("both");
    let (code, _, err) = run(&[
        "emit",
        &site,
        "--out",
        out.to_str().unwrap(),
        "--helm-values",
        "--monitoring",
    ]);
    assert_eq!(code, 0, "{err}");
    let rules = std::fs::read_to_string(out.join("monitoring/prometheus-nats-exporter/alerts.rules.yaml")).unwrap();
    for (i, planned) in ["nats-a", "nats-b", "nats-c"].iter().enumerate() {
        assert!(
            rules.contains(&format!("nats_server_max_storage{{server_name=\"nats-{i}\"}}")),
            "nats-{i}: {rules}"
        );
        assert!(rules.contains(&format!("planned_server: {planned}")), "{rules}");
        assert!(!rules.contains(&format!("server_name=\"{planned}\"")), "{rules}");
    }
    assert!(
        !rules.contains("gnatsd_") && !rules.contains(" jetstream_server"),
        "{rules}"
    );
    assert!(rules.contains("alert: NatsplanServersNotReporting"), "{rules}");
    assert!(rules.contains("count(nats_server_max_storage) < 3"), "{rules}");
    let values: Value =
        serde_norway::from_str(&std::fs::read_to_string(out.join("helm/values.yaml")).unwrap()).unwrap();
    assert_eq!(values["promExporter"]["enabled"], true, "{values:#}");
    // Without --monitoring the chart's exporter is left as the chart has it (off).
    let plain = tmp.path().join("plain");
    let (code, _, err) = run(&["emit", &site, "--out", plain.to_str().unwrap(), "--helm-values"]);
    assert_eq!(code, 0, "{err}");
    let values: Value =
        serde_norway::from_str(&std::fs::read_to_string(plain.join("helm/values.yaml")).unwrap()).unwrap();
    assert!(values.get("promExporter").is_none(), "{values:#}");
    // Without --helm-values the servers keep their planned names and the exporter its default names.
    let own = tmp.path().join("own");
    let (code, _, err) = run(&["emit", &site, "--out", own.to_str().unwrap(), "--monitoring"]);
    assert_eq!(code, 0, "{err}");
    let rules = std::fs::read_to_string(own.join("monitoring/prometheus-nats-exporter/alerts.rules.yaml")).unwrap();
    assert!(
        rules.contains("jetstream_server_max_storage{server_name=\"nats-a\"}"),
        "{rules}"
    );
    assert!(rules.contains("count(jetstream_server_max_storage) < 3"), "{rules}");
    // Another prefix than the chart's is refused with the chart.
    let (code, _, err) = run(&[
        "emit",
        &site,
        "--out",
        tmp.path().join("bad").to_str().unwrap(),
        "--helm-values",
        "--monitoring",
        "--metric-prefix",
        "mine",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("-prefix=nats") && err.contains("drop --metric-prefix"),
        "{err}"
    );
}
