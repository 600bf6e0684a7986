//! The calibration files hold the seeds' numbers exactly: every Appendix B row of seed 000 (both batches,
//! both sizes, Put and the derived Get), Appendix C's fio table, the KV putter, seed 004's ladder, seed 002's
//! nats-bench outputs and seed 003's Kafka figures. Each figure is checked against the value written here
//! from the seed and, when the seed texts are present (/work/shared/seeds or $NATSPLAN_SEEDS), against the
//! text as published.

use natsplan::perf::calibration::{CalibrationSet, Row};

fn seed_text(prefix: &str) -> Option<String> {
    let dir = std::env::var("NATSPLAN_SEEDS").unwrap_or_else(|_| "/work/shared/seeds".into());
    let rd = std::fs::read_dir(dir).ok()?;
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            return std::fs::read_to_string(e.path()).ok();
        }
    }
    None
}

fn find<'a>(set: &'a CalibrationSet, file: &str, pred: impl Fn(&Row) -> bool) -> Vec<&'a Row> {
    set.file(file)
        .unwrap_or_else(|| panic!("no calibration file {file}"))
        .rows()
        .filter(|r| pred(r))
        .collect()
}

/// (batch workers, size, label, sync, put, get) exactly as in seed 000 Appendix B.
const APPENDIX_B: [(u32, &str, &str, &str, &str, &str); 24] = [
    (1, "8KiB", "r0-single", "always", "337.79", "135.11"),
    (1, "8KiB", "r0-single", "delayed", "479.31", "191.72"),
    (1, "8KiB", "r0-rf3", "always", "196.17", "70.89"),
    (1, "8KiB", "r0-rf3", "delayed", "304.43", "121.27"),
    (1, "8KiB", "r1-rf3", "always", "150.57", "60.23"),
    (1, "8KiB", "r1-rf3", "delayed", "288.60", "115.44"),
    (1, "1024KiB", "r0-single", "always", "64.28", "25.71"),
    (1, "1024KiB", "r0-single", "always", "73.49", "29.39"),
    (1, "1024KiB", "r0-rf3", "always", "56.22", "22.49"),
    (1, "1024KiB", "r0-rf3", "delayed", "71.94", "28.78"),
    (1, "1024KiB", "r1-rf3", "always", "42.62", "17.05"),
    (1, "1024KiB", "r1-rf3", "delayed", "71.91", "28.76"),
    (3, "8KiB", "r0-single", "always", "593.41", "237.36"),
    (3, "8KiB", "r0-single", "delayed", "974.42", "389.77"),
    (3, "8KiB", "r0-rf3", "always", "539.53", "215.81"),
    (3, "8KiB", "r0-rf3", "delayed", "775.84", "310.34"),
    (3, "8KiB", "r1-rf3", "always", "332.88", "133.15"),
    (3, "8KiB", "r1-rf3", "delayed", "1036.38", "414.55"),
    (3, "1024KiB", "r0-single", "always", "99.46", "39.79"),
    (3, "1024KiB", "r0-single", "always", "155.68", "62.27"),
    (3, "1024KiB", "r0-rf3", "always", "82.01", "32.81"),
    (3, "1024KiB", "r0-rf3", "delayed", "161.76", "64.70"),
    (3, "1024KiB", "r1-rf3", "always", "58.02", "23.21"),
    (3, "1024KiB", "r1-rf3", "delayed", "165.09", "66.04"),
];

#[test]
fn seed000_appendix_b_is_transcribed_exactly_with_get_marked_derived() {
    let set = CalibrationSet::builtin();
    let text = seed_text("000_");
    let all = find(&set, "seed000-ef600-objstore", |r| r.kind == "obj-put");
    assert_eq!(all.len(), 24, "both batches, both sizes, six rows each");
    for (w, size, label, sync, put, get) in APPENDIX_B {
        let put_v: f64 = put.parse().unwrap();
        let get_v: f64 = get.parse().unwrap();
        let hits: Vec<_> = all
            .iter()
            .filter(|r| {
                r.workers == Some(w)
                    && r.size.as_deref() == Some(size)
                    && r.label == label
                    && r.sync.as_deref() == Some(sync)
                    && r.values.get("put_obj_per_s") == Some(&put_v)
            })
            .collect();
        assert_eq!(hits.len(), 1, "{w} workers {size} {label} {sync} put {put}");
        let r = hits[0];
        assert_eq!(r.values.get("get_obj_per_s"), Some(&get_v), "{label} get");
        assert!(
            r.derived.contains(&"get_obj_per_s".to_string()),
            "Get is derived: {label}"
        );
        assert!(r.measured("get_obj_per_s").is_none());
        if let Some(t) = &text {
            let sync_word = if sync == "always" { "immediate" } else { "delayed" };
            let kib = if size == "8KiB" { "8" } else { "1024" };
            let line = format!("{label}\t{sync_word}\t{kib}\t{put}\t{get}");
            assert!(t.contains(&line), "seed 000 has no line {line:?}");
        }
    }
    // The duplicated `r0-single immediate` 1,024 KiB rows: kept, flagged, not fitted.
    let dups = find(&set, "seed000-ef600-objstore", |r| {
        r.flags.iter().any(|f| f == "duplicate_label")
    });
    assert_eq!(dups.len(), 4);
    assert!(dups
        .iter()
        .all(|r| !r.fit && r.label == "r0-single" && r.size.as_deref() == Some("1024KiB")));
    // Conditions the model must not forget.
    let f = set.file("seed000-ef600-objstore").unwrap();
    assert_eq!(f.nats_version, "2.12.11");
    assert_eq!(f.hardware["write_cache"].as_bool(), Some(false));
    assert_eq!(f.hardware["luns_per_group"].as_u64(), Some(3));
    assert_eq!(f.hardware["disks_per_group"].as_u64(), Some(2));
}

#[test]
fn seed000_get_column_is_point_four_times_put_in_22_of_24_rows() {
    // The reason Get is marked derived: checked on the transcription itself.
    let set = CalibrationSet::builtin();
    let rows = find(&set, "seed000-ef600-objstore", |r| r.kind == "obj-put");
    let exact = rows
        .iter()
        .filter(|r| {
            let put = r.values["put_obj_per_s"];
            let get = r.values["get_obj_per_s"];
            ((0.4 * put * 100.0).round() / 100.0 - get).abs() < 0.011
        })
        .count();
    assert_eq!(exact, 22);
}

#[test]
fn seed000_appendix_c_fio_and_observations() {
    let set = CalibrationSet::builtin();
    let text = seed_text("000_");
    let r0 = &find(&set, "seed000-fio-raid", |r| r.label == "raid0")[0];
    let r1 = &find(&set, "seed000-fio-raid", |r| r.label == "raid1")[0];
    let want = [
        ("read_iops", 15000.0, 15000.0),
        ("read_lat_p50_ms", 0.16, 0.17),
        ("read_lat_p99_ms", 0.40, 0.40),
        ("write_iops", 15000.0, 15000.0),
        ("write_lat_mean_ms", 0.16, 0.30),
        ("write_lat_p50_ms", 0.12, 0.26),
        ("write_lat_p95_ms", 0.32, 0.42),
        ("write_lat_p99_ms", 0.44, 0.56),
    ];
    for (k, a, b) in want {
        assert_eq!(r0.values[k], a, "raid0 {k}");
        assert_eq!(r1.values[k], b, "raid1 {k}");
    }
    assert_eq!(r0.write_cache, Some(false));
    let ratio = &find(&set, "seed000-fio-raid", |r| r.label == "ratio")[0];
    assert_eq!(ratio.values["write_lat_mean"], 1.84);
    assert_eq!(ratio.values["write_lat_p50"], 2.21);
    assert!(!ratio.fit);
    if let Some(t) = &text {
        for line in [
            "Write lat mean\t0.16 ms\t0.30 ms\t1.84x",
            "Write lat p50\t0.12 ms\t0.26 ms\t2.21x",
            "Write lat p95\t0.32 ms\t0.42 ms\t1.31x",
            "Write lat p99\t0.44 ms\t0.56 ms\t1.27x",
            "Read lat p50\t0.16 ms\t0.17 ms\t1.05x",
        ] {
            assert!(t.contains(line), "{line}");
        }
    }
    let restart = &find(&set, "seed000-ef600-objstore", |r| r.label == "restart-reread")[0];
    assert_eq!(restart.values["read_bytes_per_s_per_server"], 1024.0 * 1024.0 * 1024.0);
    let flush = &find(&set, "seed000-ef600-objstore", |r| r.label == "periodic-flush")[0];
    assert_eq!(
        (
            flush.values["flush_interval_s_low"],
            flush.values["flush_interval_s_high"]
        ),
        (10.0, 20.0)
    );
}

#[test]
fn kv_putter_is_the_docs_figure_and_its_microseconds_are_an_inverse_rate() {
    let set = CalibrationSet::builtin();
    let r = &find(&set, "nats-docs-kv-putter", |r| r.kind == "kv")[0];
    assert_eq!(r.values["ops_per_s"], 30067.0);
    assert_eq!(r.values["mib_per_s"], 3.7);
    assert_eq!(r.values["inverse_rate_us"], 33.26);
    assert_eq!(r.replicas, Some(1));
    assert_eq!(r.size.as_deref(), Some("128B"));
    assert!(
        r.measured("inverse_rate_us").is_none(),
        "33.26 us is 1/rate, not a latency"
    );
    assert!((1e6 / 30067.0f64 - 33.26).abs() < 0.01);
    if let Some(t) = seed_text("000_") {
        assert!(t.contains("30,067 msgs/sec ~ 3.7 MiB/sec ~ 33.26us"));
    }
}

#[test]
fn seed004_ladder_keeps_its_unknowns() {
    let set = CalibrationSet::builtin();
    let f = set.file("seed004-lxc-ladder").unwrap();
    assert_eq!(f.conditions["publish_mode"].as_str(), Some("unknown"));
    assert_eq!(f.nats_version, "unknown");
    let v = |label: &str, key: &str| find(&set, "seed004-lxc-ladder", |r| r.label == label)[0].values[key];
    assert_eq!(v("Core 1p1s 50k×128 B", "aggregate_msgs_per_s"), 1_200_000.0);
    assert_eq!(v("Core 8p8s 200k×128 B", "aggregate_msgs_per_s"), 2_010_000.0);
    assert_eq!(v("Core 4p4s 50k×1 KiB", "aggregate_msgs_per_s"), 630_000.0);
    assert_eq!(v("Core 4p4s 50k×1 KiB", "aggregate_mb_per_s"), 616.0);
    assert_eq!(v("JetStream r=3 file 1–4 pubs 128 B", "durable_pubs_per_s"), 16_000.0);
    assert_eq!(v("JetStream r=3 file 4 pubs 1 KiB", "durable_pubs_per_s"), 13_500.0);
    assert_eq!(v("Ping 1k×128 B", "rtt_avg_ms"), 0.307);
    assert_eq!(v("Ping 1k×128 B", "rtt_p99_ms"), 0.734);
    assert_eq!(v("Flood 8p 20k×128 B", "delay_avg_ms"), 454.0);
    for r in find(&set, "seed004-lxc-ladder", |r| r.kind == "js") {
        assert_eq!(r.sync.as_deref(), Some("unknown"));
        assert_eq!(r.publish_mode.as_deref(), Some("unknown"));
    }
    if let Some(t) = seed_text("004_") {
        for s in [
            "~1.20M msgs/s aggregate",
            "~2.01M msgs/s aggregate",
            "~630k msgs/s (~616 MB/s aggregate)",
            "~16k durable pubs/s",
            "~13.5k durable pubs/s",
            "avg 0.307 ms, p99 0.734 ms",
            "avg 454 ms",
        ] {
            assert!(t.contains(s), "{s}");
        }
    }
}

#[test]
fn seed002_nats_bench_figures() {
    let set = CalibrationSet::builtin();
    let rows = find(&set, "seed002-nats-bench", |r| r.kind == "core");
    assert_eq!(rows.len(), 5);
    let text = seed_text("002_");
    let fmt = |v: f64| {
        let s = format!("{}", v as u64);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let mut checked = 0;
    for r in &rows {
        for (k, v) in &r.values {
            if k.ends_with("msgs_per_s") {
                if let Some(t) = &text {
                    // Rates print as `N msgs/sec`; min/avg/max as `min N | avg N | max N`.
                    let as_rate = format!("{} msgs/sec", fmt(*v));
                    let as_stat = format!(" {}", fmt(*v));
                    assert!(t.contains(&as_rate) || t.contains(&as_stat), "{} {k} {v}", r.label);
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "{checked}");
    let one = &find(&set, "seed002-nats-bench", |r| r.label == "-np 1 -n 10000000 -ms 16")[0];
    assert_eq!(one.values["pub_msgs_per_s"], 7_671_570.0);
    assert_eq!(one.values["pub_mb_per_s"], 117.06);
    assert_eq!(set.file("seed002-nats-bench").unwrap().nats_version, "0.9.4");
}

#[test]
fn seed003_kafka_figures_are_a_shape() {
    let set = CalibrationSet::builtin();
    let f = set.file("seed003-kafka-ontap").unwrap();
    assert!(f.nats_version.starts_with("n/a"));
    let v = |label: &str, key: &str| find(&set, "seed003-kafka-ontap", |r| r.label == label)[0].values[key];
    assert_eq!(
        (v("das-low", "cpu_percent"), v("das-high", "cpu_percent")),
        (31.0, 70.0)
    );
    assert_eq!(
        (v("nfs-low", "cpu_percent"), v("nfs-high", "cpu_percent")),
        (26.0, 38.0)
    );
    assert_eq!(v("das-110gb", "recovery_s"), 571.13);
    assert_eq!(v("nfs-110gb", "recovery_s"), 191.902);
    assert_eq!(v("das-1tb", "recovery_min_stated"), 48.0);
    assert_eq!(v("ontap-efficiency", "ratio"), 1.70);
    if let Some(t) = seed_text("003_") {
        for s in [
            "from 31% for the lower produce rate to 70%",
            "from 26% to 38%",
            "08:55:53,730",
            "09:05:24,860",
            "09:39:17,213",
            "09:42:29,115",
            "48 minutes",
            "420.3GB",
            "281.7GB",
            "1.70:1",
        ] {
            assert!(t.contains(s), "{s}");
        }
    }
    // Kafka rows never calibrate NATS terms: no kind the NATS model fits from.
    for r in f.rows() {
        assert!(
            ["cpu", "recovery", "efficiency"].contains(&r.kind.as_str()),
            "{}",
            r.kind
        );
    }
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../docs/calibration-format.md");
    let start = doc.find("```yaml\n").expect("an example") + "```yaml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let f = natsplan::perf::CalibrationFile::parse(&doc[start..end], "docs example").unwrap();
    assert_eq!(f.rows().count(), 1);
}
