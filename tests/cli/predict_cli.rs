//! `natsplan predict` from the outside: the JSON contract, seed rows predicted through the CLI, bad flags
//! (exit 2 with the flag and a fix) and `--calibration FILE`.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn predict(args: &[&str]) -> Value {
    let out = Command::cargo_bin("natsplan")
        .unwrap()
        .arg("predict")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_has_the_contract_keys() {
    for kind in ["core", "js", "kv", "obj-put", "obj-get", "ping", "flood"] {
        let v = predict(&["--kind", kind, "--size", "8KiB", "--workers", "3", "--rate", "100"]);
        for k in ["ops_per_s", "bytes_per_s", "cpu_per_server", "bottleneck", "source"] {
            assert!(v.get(k).is_some(), "{kind}: {k} missing in {v}");
        }
        assert!(v["latency_us"]["p50"].as_f64().unwrap() > 0.0, "{kind}");
        assert!(v["latency_us"]["p99"].as_f64().unwrap() >= v["latency_us"]["p50"].as_f64().unwrap());
        let (lo, hi, x) = (
            v["band"]["low"].as_f64().unwrap(),
            v["band"]["high"].as_f64().unwrap(),
            v["ops_per_s"].as_f64().unwrap(),
        );
        assert!(lo < x && x < hi, "{kind}: {lo} {x} {hi}");
    }
}

#[test]
fn a_seed000_row_predicted_through_the_cli_lands_near_its_measurement() {
    // Appendix B, second batch: r1-rf3 immediate 8 KiB, 3 workers spread, 20 consumers spread: 332.88/s.
    let v = predict(&[
        "--kind",
        "obj-put",
        "--servers",
        "3",
        "--replicas",
        "3",
        "--sync",
        "always",
        "--size",
        "8KiB",
        "--workers",
        "3",
        "--raid",
        "raid1",
        "--luns-per-group",
        "3",
        "--consumers",
        "20",
        // The seed ran with the array's write cache off; predict's default is on, as a site's is.
        "--write-cache",
        "off",
    ]);
    let x = v["ops_per_s"].as_f64().unwrap();
    assert!((x / 332.88 - 1.0).abs() < 0.25, "{x}");
    assert_eq!(v["source"], "seed000-ef600-objstore");
    assert_eq!(v["scaled"], false);
    // Core aggregate counts published plus received, as bench reports it (seed 004: ~1.20M for 1p1s 128 B).
    let c = predict(&[
        "--kind",
        "core",
        "--workers",
        "1",
        "--subscribers",
        "1",
        "--size",
        "128B",
    ]);
    let agg = c["ops_per_s"].as_f64().unwrap();
    assert!((agg / 1.2e6 - 1.0).abs() < 0.3, "{agg}");
}

#[test]
fn the_default_output_is_a_table_naming_the_bottleneck() {
    Command::cargo_bin("natsplan")
        .unwrap()
        .args(["predict", "--kind", "obj-put", "--sync", "always", "--width", "100"])
        .assert()
        .success()
        .stdout(predicate::str::contains("bottleneck").and(predicate::str::contains("ops/s")));
}

#[test]
fn bad_flags_exit_2_naming_the_flag_and_the_fix() {
    let cases: [(&[&str], &str); 16] = [
        // Were ignored silently: KV puts priced as if nothing read them.
        (
            &["--kind", "kv", "--consumers", "3"],
            "--consumers 3: --kind kv does not price consumers reading",
        ),
        (
            &["--kind", "core", "--consumers", "1"],
            "drop --consumers, or price the stream they read with --kind js --consumers 1",
        ),
        (
            &["--kind", "js", "--consumers", "2", "--consumers-on", "first"],
            "--consumers-on first: where consumers sit is priced for obj-put and obj-get only",
        ),
        (
            &["--kind", "kv", "--subjects", "10"],
            "--subjects prices JetStream publishes",
        ),
        (&["--kind", "js", "--subjects", "0"], "--subjects 0 is out of range"),
        (
            &["--kind", "js", "--subjects", "lots"],
            "--subjects 'lots' is not valid",
        ),
        (&["--kind", "objput"], "--kind 'objput' is unknown; use one of"),
        (&["--kind", "js", "--replicas", "7"], "--replicas 7"),
        (
            &["--kind", "js", "--replicas", "3", "--servers", "1"],
            "raise --servers",
        ),
        (&["--kind", "js", "--sync", "sometimes"], "--sync 'sometimes'"),
        (&["--kind", "js", "--size", "8 parsecs"], "--size"),
        (&["--kind", "js", "--workers", "many"], "--workers 'many' is not valid"),
        (&["--kind", "js", "--raid", "raid5"], "--raid 'raid5' is unknown"),
        (&["--kind", "js", "--raid", "raid10", "--disks", "3"], "an even number"),
        // Was "needs at least 2".
        (&["--kind", "js", "--disks", "4294967295"], "at most 1024"),
        (
            &["--kind", "js", "--array", "EF9000"],
            "--array 'EF9000' is not in the catalog",
        ),
    ];
    for (args, msg) in cases {
        Command::cargo_bin("natsplan")
            .unwrap()
            .arg("predict")
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(msg));
    }
    // A missing --kind is a usage error too.
    Command::cargo_bin("natsplan")
        .unwrap()
        .args(["predict"])
        .assert()
        .code(2);
}

#[test]
fn calibration_file_overrides_the_builtin_rows_of_its_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/calibration/nats-docs-kv-putter.yaml"
    ))
    .unwrap();
    // A user's measured putter row calibrates (the docs' own is held out, `fit: false`): the same run, and
    // the same at half the rate, each predicted for the laptop it names (`hardware.server_model`).
    let mine = |id: &str, rate: &str| {
        let text = builtin
            .replace("id: nats-docs-kv-putter", &format!("id: {id}"))
            .replace("fit: false, ", "")
            .replace("ops_per_s: 30067", &format!("ops_per_s: {rate}"));
        let path = dir.path().join(format!("{id}.yaml"));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (full, half) = (mine("my-lab-kv", "30067"), mine("my-slow-kv", "15033.5"));
    let args = [
        "--kind",
        "kv",
        "--replicas",
        "1",
        "--servers",
        "1",
        "--size",
        "128B",
        "--server-model",
        "macbook-pro-m4",
    ];
    let base = predict(&args);
    let over = predict(&[&args[..], &["--calibration", &full]].concat());
    let slow = predict(&[&args[..], &["--calibration", &half]].concat());
    assert!(over["source"].as_str().unwrap().contains("my-lab-kv"), "{over}");
    let (o, h) = (over["ops_per_s"].as_f64().unwrap(), slow["ops_per_s"].as_f64().unwrap());
    // On the host it measured, one client at its own shape is its own row.
    assert!((o / 30067.0 - 1.0).abs() < 0.05, "{o}");
    assert!(
        h < o * 0.75,
        "halving the calibrated rate must lower the prediction: {o} -> {h}"
    );
    // The built-in set holds the docs' putter out (issue 36): nothing built in is priced by it.
    assert!(
        !base["source"].as_str().unwrap().contains("nats-docs-kv-putter"),
        "{base}"
    );

    // A broken file is bad input naming the file and the field.
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, builtin.replace("kind: kv,", "kind: kvv,")).unwrap();
    Command::cargo_bin("natsplan")
        .unwrap()
        .args(["predict", "--kind", "kv", "--calibration", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad.yaml").and(predicate::str::contains("kvv")));
}

#[test]
fn seed004_ladder_rows_through_predict() {
    // The terms are fitted from these rows, so this checks the CLI reaches them (what verify relies on),
    // not the model's accuracy (that is the leave-one-out test's job).
    let near = |v: &Value, key: &str, want: f64, tol: f64| {
        let got = if key == "p50" {
            v["latency_us"]["p50"].as_f64().unwrap()
        } else {
            v[key].as_f64().unwrap()
        };
        assert!((got / want - 1.0).abs() < tol, "{key}: {got} vs {want} in {v}");
    };
    let core = |w: &str, size: &str| predict(&["--kind", "core", "--workers", w, "--subscribers", w, "--size", size]);
    near(&core("1", "128B"), "ops_per_s", 1.20e6, 0.03);
    near(&core("8", "128B"), "ops_per_s", 2.01e6, 0.03);
    near(&core("4", "1KiB"), "ops_per_s", 630e3, 0.03);
    // JetStream rows: publish mode unknown; as async batches they are leader-bound. Since issue 14 they
    // price seed 004's own servers (lxc-guest), not every server model.
    for w in ["1", "4"] {
        near(
            &predict(&[
                "--kind",
                "js",
                "--workers",
                w,
                "--batch",
                "500",
                "--size",
                "128B",
                "--server-model",
                "lxc-guest",
            ]),
            "ops_per_s",
            16e3,
            0.03,
        );
    }
    near(
        &predict(&[
            "--kind",
            "js",
            "--workers",
            "4",
            "--batch",
            "500",
            "--size",
            "1KiB",
            "--server-model",
            "lxc-guest",
        ]),
        "ops_per_s",
        13.5e3,
        0.03,
    );
    near(
        &predict(&["--kind", "ping", "--workers", "1", "--size", "128B"]),
        "p50",
        307.0,
        0.03,
    );
    near(
        &predict(&["--kind", "flood", "--workers", "8", "--size", "128B"]),
        "p50",
        454e3,
        0.03,
    );
}

/// Issue 39: predict's array write cache defaults to on, as a site's `write_cache` does (it was off).
#[test]
fn the_write_cache_defaults_to_on_as_a_sites_does() {
    let args = [
        "--kind", "obj-put", "--sync", "always", "--size", "8KiB", "--raid", "raid1",
    ];
    let on = predict(&args);
    let mut off_args = args.to_vec();
    off_args.extend(["--write-cache", "off"]);
    let off = predict(&off_args);
    let mut on_args = args.to_vec();
    on_args.extend(["--write-cache", "on"]);
    let explicit_on = predict(&on_args);
    assert_eq!(on["ops_per_s"], explicit_on["ops_per_s"], "the default is on");
    assert_ne!(on["ops_per_s"], off["ops_per_s"], "off is another figure");
}

/// Issue 37 (nats-server #4043): `--subjects N` prices the messages over N subjects, echoes it in the
/// shape and says what it cost; without it a js prediction says it assumed one subject.
#[test]
fn subjects_cost_the_leader_and_the_prediction_says_so() {
    let base = [
        "--kind",
        "js",
        "--replicas",
        "3",
        "--size",
        "1KiB",
        "--workers",
        "2",
        "--batch",
        "256",
    ];
    let one = predict(&base);
    assert!(
        one["subjects"].as_str().unwrap().starts_with("one subject (assumed"),
        "{one}"
    );
    assert!(one["shape"].get("subjects").is_none(), "{one}");
    let many = predict(&[&base[..], &["--subjects", "10000"]].concat());
    assert_eq!(many["shape"]["subjects"], 10000, "{many}");
    assert!(
        many["subjects"]
            .as_str()
            .unwrap()
            .starts_with("10000 distinct subjects: "),
        "{many}"
    );
    let (x1, xn) = (one["ops_per_s"].as_f64().unwrap(), many["ops_per_s"].as_f64().unwrap());
    assert!(xn < x1 && xn > 0.6 * x1, "{x1} -> {xn}");
    let few = predict(&[&base[..], &["--subjects", "100"]].concat());
    assert_eq!(few["ops_per_s"], one["ops_per_s"], "100 subjects cost nothing more");
    // The table names them when given.
    Command::cargo_bin("natsplan")
        .unwrap()
        .arg("predict")
        .args(base)
        .args(["--subjects", "10000", "--width", "200"])
        .assert()
        .success()
        .stdout(predicate::str::contains("10000 distinct subjects"));
}
