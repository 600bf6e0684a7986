//! Live tests of `natsplan verify` against lab clusters (loopback, temp dirs, one cluster at a time, small
//! counts): the quick ladder end to end with fixture calibrations that make the outcome deterministic (every
//! band huge → exit 0; an impossible core band → exit 1), the results folder, `--dry-run`, `--max-bytes`
//! refusal before anything is written, R3 rows skipped on one server, and drift against an emitted plan.

use crate::common::serial;
use assert_cmd::Command;
use natsplan::catalog::Catalog;
use natsplan::emit;
use natsplan::lab::TestCluster;
use natsplan::plan::Plan;
use serde_json::Value;
use std::time::Duration;

fn data(f: &str) -> String {
    format!("{}/tests/data/{f}", env!("CARGO_MANIFEST_DIR"))
}

/// Run verify with `--format json`; returns (exit code, JSON on stdout, stderr).
fn verify(c: &TestCluster, args: &[&str]) -> (i32, Value, String) {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .env_remove("NATS_URL")
        .args(["--format", "json", "verify", "--server", &c.url()])
        .args(["--monitor", &c.monitor_urls().join(",")])
        .args(args)
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stderr)
}

/// The quick ladder against bands no measurement misses, results into `out`.
fn huge_bands(c: &TestCluster, out: &tempfile::TempDir, extra: &[&str]) -> (i32, Value, String) {
    let cal = data("verify-cal-huge-bands.yaml");
    let mut args = vec!["--calibration", cal.as_str(), "--out", out.path().to_str().unwrap()];
    args.extend_from_slice(extra);
    verify(c, &args)
}

fn rows(v: &Value) -> &Vec<Value> {
    v["rows"].as_array().expect("rows")
}

fn row<'a>(v: &'a Value, id: &str) -> &'a Value {
    rows(v)
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

/// Everything verify created is gone: deletions reach every server's `/jsz` within a few seconds.
fn assert_cleaned(c: &TestCluster) {
    let t0 = std::time::Instant::now();
    loop {
        let left = natsplan_streams(c);
        if left.is_empty() {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "natsplan-* streams left behind: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Streams on the cluster whose name starts with `natsplan-` (KV and object stores: KV_/OBJ_natsplan-).
fn natsplan_streams(c: &TestCluster) -> Vec<String> {
    c.streams()
        .into_iter()
        .map(|s| s.name)
        .filter(|n| n.contains("natsplan-"))
        .collect()
}

/// A busy client host (issue 37): one busy loop per CPU while the quick ladder runs. verify records the
/// host's load before and during the rows, marks the rows measured on it, warns in its notes, and says it
/// in the table; the figures themselves are not judged (the bands are huge).
#[test]
fn a_busy_client_host_is_measured_marked_and_said() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let out = tempfile::tempdir().unwrap();
    // The huge-band calibration, recorded as measured on a quiet host: this run's busy host is a change.
    let mut cal: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(data("verify-cal-huge-bands.yaml")).unwrap()).unwrap();
    let quiet: serde_norway::Value = serde_norway::from_str(
        "{host_during: {seconds: 60.0, cores: 2, other_cores: 0.01, steal_percent: 0.0, busy: false}}",
    )
    .unwrap();
    cal.as_mapping_mut().unwrap().insert("provenance".into(), quiet);
    let cal_file = out.path().join("quiet-cal.yaml");
    std::fs::write(&cal_file, serde_norway::to_string(&cal).unwrap()).unwrap();
    let results = out.path().join("results");
    let busy = crate::common::BusyHost::start();
    let (code, v, err) = verify(
        &c,
        &[
            "--calibration",
            cal_file.to_str().unwrap(),
            "--out",
            results.to_str().unwrap(),
            "--row-seconds",
            "0.3",
        ],
    );
    drop(busy);
    assert_eq!(code, 0, "{err}\n{v:#}");
    let during = &v["host_during"];
    assert_eq!(during["busy"], true, "{v:#}");
    assert!(during["other_cores"].as_f64().unwrap() > 0.25 * during["cores"].as_f64().unwrap());
    assert_eq!(v["host_before"]["busy"], true, "{v:#}");
    let busy_rows: Vec<&Value> = rows(&v)
        .iter()
        .filter(|r| r["measured"]["host"]["busy"] == true)
        .collect();
    assert!(!busy_rows.is_empty(), "{v:#}");
    for r in &busy_rows {
        assert!(
            r["measured"]["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().starts_with("measured on a busy client host")),
            "{r:#}"
        );
    }
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("during the rows, a busy client host")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("measured on a busy client host (marked")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("was measured on a quiet host") && n.contains("this run on a busy one")),
        "{notes:?}"
    );
    // BENCH.md marks the cells and carries the notes.
    let bench = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("BENCH.md");
    let md = std::fs::read_to_string(&bench).unwrap();
    assert!(md.contains("busy client host") && md.contains("(busy host)"), "{md}");
}

#[test]
fn quick_ladder_with_huge_bands_passes_and_writes_its_results() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = huge_bands(&c, &out, &["--row-seconds", "0.3"]);
    assert_eq!(code, 0, "{err}\n{v:#}");
    assert!(err.contains("will write at most"), "bytes announced first: {err}");
    // The client host's load is recorded (whether busy is this machine's business, not asserted).
    for k in ["host_before", "host_during"] {
        assert!(v[k]["cores"].as_u64().unwrap() >= 1, "{k}: {v:#}");
    }
    assert!(
        rows(&v)
            .iter()
            .all(|r| r["measured"]["host"]["seconds"].as_f64().is_some()),
        "{v:#}"
    );
    assert_eq!(v["cluster"]["jetstream_servers"], 3);
    assert_eq!(v["cluster"]["max_replicas"], 3);
    assert_eq!(v["cluster"]["version"].as_str().unwrap().split('.').next(), Some("2"));
    assert_eq!(rows(&v).len(), 8);
    for r in rows(&v) {
        assert_eq!(r["status"], "inside", "{r:#}");
        let p = &r["predicted"];
        let m = r["measured"]["ops_per_s"].as_f64().unwrap();
        assert!(m > 0.0, "{r:#}");
        assert!(p["low"].as_f64().unwrap() <= m && m <= p["high"].as_f64().unwrap());
        let e = r["error"].as_f64().unwrap();
        assert!((e - (m / p["ops_per_s"].as_f64().unwrap() - 1.0)).abs() < 1e-6);
    }
    let rate = row(&v, "rate-10k-r3-128B");
    assert!(rate["measured"]["rate"]["target_per_s"].as_f64().unwrap() == 10_000.0);
    assert!(row(&v, "core-1p1s-128B")["measured"]["latency_us"]["p50"]
        .as_f64()
        .is_some());
    // Everything verify created is gone.
    assert_cleaned(&c);
    // DIR/<utc-timestamp>/ with the three files.
    let dirs: Vec<_> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1);
    let d = &dirs[0];
    let name = d.file_name().unwrap().to_string_lossy().to_string();
    assert!(name.len() == 16 && name.ends_with('Z') && name.contains('T'), "{name}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(d.join("results.json")).unwrap()).unwrap();
    assert_eq!(j["rows"].as_array().unwrap().len(), 8);
    let md = std::fs::read_to_string(d.join("BENCH.md")).unwrap();
    assert!(md.contains("| core-1p1s-128B |") && md.contains("predicted/s"), "{md}");
    let csv = std::fs::read_to_string(d.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 9, "{csv}");
}

#[test]
fn an_impossible_band_fails_with_exit_1_and_says_which_row() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = verify(
        &c,
        &[
            "--calibration",
            &data("verify-cal-impossible.yaml"),
            "--row-seconds",
            "0.3",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{err}\n{v:#}");
    let core = row(&v, "core-1p1s-128B");
    assert_eq!(core["status"], "outside", "{core:#}");
    assert!(core["error"].as_f64().unwrap() < -0.5);
    assert!(v["failed_rows"].as_u64().unwrap() >= 1);
    assert!(err.contains("outside their band"), "{err}");
    assert_cleaned(&c);
}

#[test]
fn dry_run_and_max_bytes_write_nothing() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let (code, v, err) = verify(&c, &["--dry-run", "--ladder", "full", "--out", o]);
    assert_eq!(code, 0, "{err}");
    assert!(rows(&v).iter().all(|r| r["status"] == "planned"), "{v:#}");
    assert!(rows(&v).len() > 20);
    assert!(v["write_bytes_replicated"].as_u64().unwrap() >= 3 * v["write_bytes"].as_u64().unwrap() / 2);
    assert!(
        std::fs::read_dir(out.path()).unwrap().next().is_none(),
        "dry run writes no results"
    );

    let (code, _, err) = verify(&c, &["--max-bytes", "64KiB", "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--max-bytes") && err.contains("will write at most"),
        "{err}"
    );
    assert!(c.streams().is_empty(), "nothing created: {:?}", c.streams());
    assert!(std::fs::read_dir(out.path()).unwrap().next().is_none());

    // A budget one run of each row fits and three runs do not: refused, naming --repeat as a way out.
    let (_, quick, _) = verify(&c, &["--dry-run", "--out", o]);
    let one = quick["write_bytes_replicated"].as_u64().unwrap();
    let max = (2 * one).to_string();
    let (code, _, err) = verify(&c, &["--max-bytes", &max, "--repeat", "3", "--out", o]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-bytes") && err.contains("--repeat"), "{err}");
    assert!(c.streams().is_empty(), "nothing created: {:?}", c.streams());
}

#[test]
fn r3_rows_are_skipped_on_a_single_server() {
    let _s = serial();
    let c = TestCluster::start(1).unwrap();
    let (code, v, err) = verify(&c, &["--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["cluster"]["max_replicas"], 1);
    let js = row(&v, "js-r3-1p-128B");
    assert_eq!(js["status"], "skipped");
    assert!(js["reason"].as_str().unwrap().contains("R3 needs 3"), "{js:#}");
    assert_eq!(row(&v, "obj-put-64KiB-r1")["status"], "planned");
}

/// Create the streams `emit` writes for a layout, unchanged, and wait until each has all its replicas.
fn create_emitted_streams(c: &TestCluster, plan: &Plan, layout: &str) {
    let defs: Vec<Value> = emit::render(plan, layout, &emit::EmitOptions::default())
        .unwrap()
        .into_iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == "json"))
        .map(|(_, t)| serde_json::from_str(&t).unwrap())
        .collect();
    assert!(!defs.is_empty());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let nc = async_nats::connect(c.client_urls()[0].as_str()).await.unwrap();
        for cfg in &defs {
            let name = cfg["name"].as_str().unwrap();
            let resp = nc
                .request(format!("$JS.API.STREAM.CREATE.{name}"), cfg.to_string().into())
                .await
                .unwrap();
            let r: Value = serde_json::from_slice(&resp.payload).unwrap();
            assert!(r.get("error").is_none(), "{name}: {r}");
        }
    });
    let t0 = std::time::Instant::now();
    loop {
        let s = c.streams();
        if s.len() == defs.len()
            && s.iter()
                .all(|s| s.leader.is_some() && s.peers.len() as u64 == s.replicas)
        {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "streams not placed: {s:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn plan(file: &str) -> Plan {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cat = Catalog::builtin();
    let site = natsplan::site::parse_str(&text, &path, &cat).unwrap_or_else(|e| panic!("{e}"));
    natsplan::plan::build(&site, &cat)
}

#[test]
fn drift_against_the_plan_the_lab_runs_is_none_and_another_layout_drifts() {
    let _s = serial();
    let site = "examples/three-racks-raid1.yaml";
    let plan = plan(site);
    let lay = plan.layouts[0].clone();
    // Another layout of the same site that differs from this one in what verify can see.
    let other = plan
        .layouts
        .iter()
        .find(|l| {
            l.unique_tag != lay.unique_tag
                || l.servers.len() != lay.servers.len()
                || l.servers
                    .iter()
                    .zip(&lay.servers)
                    .any(|(a, b)| a.name != b.name || a.tags != b.tags || a.store_bytes != b.store_bytes)
        })
        .expect("the example has a second, different layout")
        .id
        .clone();
    let p2 = plan.clone();
    let l2 = lay.clone();
    let c =
        TestCluster::start_spec(move |dir| natsplan::lab::spec::for_layout(&p2, &l2, p2.input.nats.sync, dir)).unwrap();
    create_emitted_streams(&c, &plan, &lay.id);
    let site_path = format!("{}/{site}", env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let base = [
        "--calibration",
        &data("verify-cal-huge-bands.yaml"),
        "--row-seconds",
        "0.2",
        "--out",
        o,
        "--site",
        &site_path,
    ];
    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--layout", &lay.id]);
    let (code, v, err) = verify(&c, &args);
    assert_eq!(code, 0, "{err}\n{:#}\n{:#}", v["drift"], v["rows"]);
    assert_eq!(v["drift"]["items"].as_array().unwrap().len(), 0, "{:#}", v["drift"]);
    assert!(v["config"]["volume"].as_str().unwrap().contains(&lay.id));
    // The planned streams exist now, so placement and limits were compared, not just noted as absent.
    assert!(
        !v["drift"]["notes"].to_string().contains("not created yet"),
        "{:#}",
        v["drift"]
    );

    let mut args: Vec<&str> = base.to_vec();
    args.extend(["--layout", &other]);
    let (code, v, err) = verify(&c, &args);
    assert_eq!(code, 1, "drift is a failed check: {err}");
    assert!(err.contains("drift"), "{err}");
    let items = v["drift"]["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{:#}", v["drift"]);
    assert!(
        rows(&v).iter().all(|r| r["status"] == "inside"),
        "only drift fails here"
    );

    args.push("--dry-run");
    let (code, v, err) = verify(&c, &args);
    assert_eq!(code, 0, "a dry run exits 0 even with drift: {err}");
    assert!(!v["drift"]["items"].as_array().unwrap().is_empty());
}

#[test]
fn sync_always_is_detected_and_the_disk_is_probed_before_the_rows() {
    let _s = serial();
    let c = TestCluster::start_spec(|dir| {
        let mut spec = natsplan::lab::LabSpec::plain(1, dir);
        spec.sync = natsplan::units::SyncMode::Always;
        spec
    })
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = verify(
        &c,
        &[
            "--calibration",
            &data("verify-cal-huge-bands.yaml"),
            "--row-seconds",
            "0.2",
            "--out",
            out.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}\n{v:#}");
    assert_eq!(v["cluster"]["sync"], "always");
    assert_eq!(v["cluster"]["sync_always"], true);
    let notes = v["notes"].to_string();
    assert!(notes.contains("probe of 100 synchronous R1 publishes"), "{notes}");
    // On one server the R3 rows are skipped, the rest ran inside their (huge) bands.
    assert_eq!(row(&v, "js-r3-1p-128B")["status"], "skipped");
    assert_eq!(row(&v, "kv-1c-128B")["status"], "inside");
    assert_cleaned(&c);
}

#[test]
fn repeated_rows_judge_the_median_and_report_every_run() {
    let _s = serial();
    let c = TestCluster::start(3).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (code, v, err) = huge_bands(&c, &out, &["--row-seconds", "0.2", "--repeat", "3"]);
    assert_eq!(code, 0, "{err}\n{v:#}");
    assert_eq!(v["config"]["repeat"], 3);
    for r in rows(&v) {
        let m = &r["measured"];
        let runs: Vec<f64> = m["runs_ops_per_s"]
            .as_array()
            .unwrap_or_else(|| panic!("every run listed: {r:#}"))
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(runs.len(), 3, "{r:#}");
        let mut sorted = runs.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[1];
        assert_eq!(m["ops_per_s"].as_f64().unwrap(), median, "the median is judged: {r:#}");
        let spread = (sorted[2] - sorted[0]) / median;
        assert!((m["spread"].as_f64().unwrap() - spread).abs() < 1e-9, "{r:#}");
        assert!(
            err.contains(&format!("verify: {} run 3 of 3", r["id"].as_str().unwrap())),
            "{err}"
        );
    }
    assert_cleaned(&c);
    let d = std::fs::read_dir(out.path()).unwrap().next().unwrap().unwrap().path();
    let csv = std::fs::read_to_string(d.join("results.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",runs,spread"), "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains(",3,")), "{csv}");
}
