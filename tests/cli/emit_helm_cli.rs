//! `natsplan emit --helm-values` end to end on example sites: the values parse as YAML, use only the nats
//! chart's keys (tests/data/helm-nats-2.14.2-keys.txt, from its values.yaml), carry the plan's sizes, version
//! and rack tag, and every `$VAR` the rendered nats.conf reads is given to the pod; what the chart cannot
//! run is refused with the fix; the rendered nats.conf passes `nats-server -t` (live feature).

use crate::common::{natsplan, repo_file, run};
use serde_json::Value;
use std::path::Path;

const TREE: &str = include_str!("../data/helm-nats-2.14.2-keys.txt");

fn design(site: &str) -> Vec<Value> {
    let (code, out, err) = run(&["design", &repo_file(site), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["layouts"].as_array().unwrap().clone()
}

/// `emit --helm-values` of a layout into `out`: the JSON report and stderr.
fn emit(site: &str, layout: &str, out: &Path) -> (Value, String) {
    let o = natsplan()
        .args([
            "emit",
            &repo_file(site),
            "--layout",
            layout,
            "--helm-values",
            "--format",
            "json",
            "--out",
        ])
        .arg(out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

fn values(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("helm/values.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("values.yaml is not YAML: {e}\n{text}"))
}

fn min_of(l: &Value, key: &str) -> u64 {
    l["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[key].as_u64().unwrap())
        .min()
        .unwrap()
}

/// The `$NAME`s a nats.conf reads from its environment.
fn env_refs(conf: &str) -> Vec<String> {
    conf.split('$')
        .skip(1)
        .map(|r| {
            r.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn the_values_carry_the_plans_sizes_version_and_rack_tag_in_the_charts_keys() {
    for site in ["examples/three-racks-raid1.yaml", "examples/full-reference.yaml"] {
        let l = design(site)[0].clone();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        let (report, err) = emit(site, l["id"].as_str().unwrap(), &out);
        let v = values(&out);
        let unknown = natsplan::emit::helm::unknown_keys(&serde_json::to_value(&v).unwrap(), TREE);
        assert!(
            unknown.is_empty(),
            "{site}: keys not in the chart's values.yaml: {unknown:?}"
        );
        let servers = l["servers"].as_array().unwrap();
        assert_eq!(v["config"]["cluster"]["replicas"], servers.len(), "{site}");
        assert_eq!(v["config"]["cluster"]["enabled"], true);
        let fs = &v["config"]["jetstream"]["fileStore"];
        let pvc: u64 = fs["pvc"]["size"].as_str().unwrap().parse().unwrap();
        let max: u64 = fs["maxSize"].as_str().unwrap().parse().unwrap();
        assert_eq!(pvc, min_of(&l, "lun_bytes"), "{site}: the claim is the smallest LUN");
        assert_eq!(
            max,
            min_of(&l, "store_bytes"),
            "{site}: maxSize is the plan's max_file_store"
        );
        assert!(max < pvc, "{site}: maxSize below the claim");
        assert_eq!(fs["pvc"]["storageClassName"], "nats-jetstream");
        assert_eq!(v["container"]["image"]["tag"], "2.15.1-alpine");
        assert_eq!(report["helm"]["image_tag"], "2.15.1-alpine");
        // Resources: the largest predicted need.
        let cpu = l["predicted"]["servers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["needs"]["cpu_cores"]["needed"].as_f64().unwrap())
            .fold(0.0, f64::max);
        let req = v["container"]["resources"]["requests"]["cpu"].as_str().unwrap();
        assert_eq!(req, format!("{}m", (cpu * 1000.0).ceil() as u64), "{site}");
        // The rack tag: the plan's tags are rack:<rack>, the pods' come from their zone label, limited to the
        // plan's racks.
        let mut racks: Vec<String> = servers
            .iter()
            .map(|s| s["rack"].as_str().unwrap().to_lowercase())
            .collect();
        racks.sort();
        racks.dedup();
        for s in servers {
            let tag = format!("rack:{}", s["rack"].as_str().unwrap().to_lowercase());
            assert!(s["tags"].as_array().unwrap().iter().any(|t| t == tag.as_str()));
        }
        let zones = &v["podTemplate"]["merge"]["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"][0];
        assert_eq!(zones["key"], "topology.kubernetes.io/zone");
        assert_eq!(zones["values"], serde_json::json!(racks), "{site}");
        let env = &v["container"]["env"];
        assert_eq!(
            env["NATS_RACK"]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.labels['topology.kubernetes.io/zone']"
        );
        assert_eq!(env["NATS_RACK_TAG"], "rack:$(NATS_RACK)");
        assert_eq!(v["config"]["merge"]["server_tags"][0], "<< $NATS_RACK_TAG >>");
        if l["unique_tag"] == "rack:" {
            assert_eq!(v["config"]["jetstream"]["merge"]["unique_tag"], "rack:");
        }
        // Every variable the rendered configuration reads is in the pod's environment (the chart sets
        // SERVER_NAME), and the system password comes from a Secret.
        let conf = std::fs::read_to_string(out.join("helm/nats.conf")).unwrap();
        for r in env_refs(&conf) {
            assert!(
                r == "SERVER_NAME" || !env[&r].is_null(),
                "{site}: nats.conf reads ${r}, not in container.env"
            );
        }
        assert_eq!(
            env["NATS_SYSTEM_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"],
            "nats-system-account"
        );
        assert!(conf.contains(&format!("\"max_file_store\": {max},")), "{conf}");
        let warnings = report["helm"]["warnings"].as_array().unwrap();
        assert!(
            warnings.iter().any(|w| w.as_str().unwrap().contains("claimRef")),
            "{warnings:?}"
        );
        assert!(err.contains("warning: helm values:"), "{err}");
        let readme = std::fs::read_to_string(out.join("helm/README.md")).unwrap();
        assert!(readme.contains("PodTopologyLabels") && readme.contains("claimRef"));
        for s in servers {
            assert!(
                readme.contains(s["name"].as_str().unwrap()),
                "{site}: README lacks the PV row of a server"
            );
        }
    }
    // full-reference's top layout has LUNs of three sizes: one claim for all, said.
    let l = design("examples/full-reference.yaml")[0].clone();
    let tmp = tempfile::tempdir().unwrap();
    let (report, _) = emit(
        "examples/full-reference.yaml",
        l["id"].as_str().unwrap(),
        &tmp.path().join("o"),
    );
    assert!(
        report["helm"]["warnings"].to_string().contains("one volume size"),
        "{}",
        report["helm"]
    );
}

#[test]
fn layouts_the_chart_cannot_run_are_refused_with_the_fix_and_nothing_written() {
    // one-rack-raid10 pins a replica set with set: tags.
    let l = design("examples/one-rack-raid10.yaml")[0].clone();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let (code, _, err) = run(&[
        "emit",
        &repo_file("examples/one-rack-raid10.yaml"),
        "--layout",
        l["id"].as_str().unwrap(),
        "--allow-rejected",
        "--helm-values",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--helm-values") && err.contains("set: tags"), "{err}");
    assert!(err.contains("without --helm-values"), "{err}");
    assert!(!out.exists(), "nothing is written when the values are refused");
}

#[test]
fn a_bad_storage_class_is_refused_at_its_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let site = repo_file("examples/three-racks-raid1.yaml");
    let (code, _, err) = run(&[
        "emit",
        &site,
        "--helm-values",
        "--storage-class",
        "Fast SSD",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--storage-class \"Fast SSD\"") && err.contains("e.g. nats-jetstream"),
        "{err}"
    );
    let (code, _, err) = run(&["emit", &site, "--storage-class", "x", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 2, "--storage-class needs --helm-values: {err}");
    assert!(!out.exists());
}

#[test]
#[cfg_attr(
    not(feature = "live"),
    ignore = "runs nats-server: cargo test --features live (scripts/test)"
)]
fn the_config_the_chart_renders_passes_nats_server_test() {
    let bin = natsplan::lab::find_nats_server(None).unwrap();
    for site in ["examples/three-racks-raid1.yaml", "examples/full-reference.yaml"] {
        let l = design(site)[0].clone();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        emit(site, l["id"].as_str().unwrap(), &out);
        let conf = out.join("helm/nats.conf");
        let test = |with_tag: bool| {
            let mut c = std::process::Command::new(&bin);
            c.arg("-t")
                .arg("-c")
                .arg(&conf)
                .env("SERVER_NAME", "nats-0")
                .env("NATS_SYSTEM_PASSWORD", "sys-secret");
            if with_tag {
                c.env("NATS_RACK_TAG", "rack:a");
            } else {
                c.env_remove("NATS_RACK_TAG");
            }
            c.output().unwrap()
        };
        let r = test(true);
        assert!(r.status.success(), "{site}: {}", String::from_utf8_lossy(&r.stderr));
        // The tag is read from the environment: without it nats-server refuses the file.
        let r = test(false);
        assert!(!r.status.success());
        assert!(String::from_utf8_lossy(&r.stderr).contains("NATS_RACK_TAG"));
    }
}
