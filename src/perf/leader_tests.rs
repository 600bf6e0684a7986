//! Unit tests of `perf::leader` (moved out of leader.rs, which was past 800 lines).

use super::*;

fn inp(r: u8, always: bool, publishers: f64, window: f64) -> StreamInput {
    StreamInput {
        replicas: r,
        bytes: 128.0,
        always,
        publish: Publish {
            publishers,
            window,
            saturation_s: 0.0,
        },
        fsync_s: 0.4e-3,
        commit_s: None,
        fsync_byte_s: 0.0,
        sync_copies: 2.0,
        write_s: 3e-6,
        round_trip_s: 0.2e-3,
        async_base_s: None,
        subjects: 1.0,
        readers_s: 0.0,
        readers_serial_s: 0.0,
    }
}

#[test]
fn delayed_sync_is_the_lower_of_the_leader_and_the_clients_in_flight() {
    let t_l = 10e-6;
    let big = stream_rate(t_l, &inp(3, false, 2.0, 500.0));
    assert_eq!(big.binding, Binding::LeaderCpu);
    assert!((big.per_s - 1.0 / t_l).abs() < 1e-6);
    let one = stream_rate(t_l, &inp(3, false, 1.0, 1.0));
    assert_eq!(one.binding, Binding::SyncRoundTrips);
    assert!((one.per_s - 1.0 / 0.2e-3).abs() < 1e-6);
    let small = stream_rate(t_l, &inp(3, false, 1.0, 4.0));
    assert_eq!(small.binding, Binding::AsyncWindow);
}

#[test]
fn always_puts_two_fsyncs_in_series_for_one_sync_publisher_and_amortises_them_in_batches() {
    let t_l = 10e-6;
    let one = stream_rate(t_l, &inp(3, true, 1.0, 1.0));
    // τ + leader WAL fsync + follower WAL fsync, give or take one message of leader time.
    let want = 1.0 / (0.2e-3 + 2.0 * 0.4e-3);
    assert!((one.per_s / want - 1.0).abs() < 0.02, "{} vs {want}", one.per_s);
    assert_eq!(one.binding, Binding::Fsync);
    // Many in flight: one fsync per append entry, so the rate stays near the leader's.
    let many = stream_rate(t_l, &inp(3, true, 2.0, 500.0));
    assert!(many.per_s > 0.6 / t_l && many.per_s < 1.0 / t_l, "{}", many.per_s);
    // R1 fsyncs every message.
    let r1 = stream_rate(t_l, &inp(1, true, 2.0, 500.0));
    assert!((r1.per_s - 1.0 / (t_l + 0.4e-3)).abs() < 1e-6);
    assert_eq!(r1.binding, Binding::Fsync);
}

#[test]
fn a_class_reproduces_the_rates_it_was_fitted_from_on_its_own_host() {
    let host = HostClass {
        server_model: "lab".into(),
        cores: 2.0,
        cpu_speed: 1.0,
        co_located: 4,
    };
    for (r, rate) in [(3u8, 120_000.0), (1, 150_000.0)] {
        let u = unit_for(&host, r, false, 3e-6, rate);
        let class = LeaderClass::for_tests("t", &host, u, 3e-6, 1);
        let mut i = inp(r, false, 2.0, 500.0);
        i.write_s = 3e-6;
        let t = leader_time_s(&class, &host, &i);
        assert!((1.0 / t / rate - 1.0).abs() < 1e-9, "R{r}: {}", 1.0 / t);
    }
}

/// Issue 37 (R1 readers): the readers' time under the store's lock joins an R1 stream's one stage — one
/// stage of 1/150k s with 5 µs of it read 1 ÷ (1/150k + 5 µs) — and no replicated stage.
#[test]
fn readers_time_under_the_store_lock_holds_up_an_r1_stage_only() {
    let host = HostClass {
        server_model: "dedicated".into(),
        cores: 32.0,
        cpu_speed: 1.0,
        co_located: 1,
    };
    for (r, rate) in [(1u8, 150_000.0), (3, 120_000.0)] {
        let class = LeaderClass::for_tests("t", &host, unit_for(&host, r, false, 3e-6, rate), 3e-6, 1);
        let mut i = inp(r, false, 2.0, 500.0);
        let alone = leader_time_s(&class, &host, &i);
        i.readers_serial_s = 5e-6;
        let with = leader_time_s(&class, &host, &i);
        let want = if r == 1 { alone + 5e-6 } else { alone };
        assert!((with / want - 1.0).abs() < 1e-9, "R{r}: {with} against {want}");
    }
}

#[test]
fn distance_is_zero_only_on_the_named_host_and_grows_with_speed_and_cores() {
    let lab = HostClass {
        server_model: "lab".into(),
        cores: 2.0,
        cpu_speed: 1.0,
        co_located: 4,
    };
    let class = LeaderClass::for_tests("t", &lab, 4e-6, 3e-6, 3);
    assert_eq!(class.distance(&lab, 3), 0.0);
    let mut big = lab.clone();
    big.server_model = "big".into();
    big.cores = 16.0;
    big.co_located = 1;
    let mut fast = big.clone();
    fast.cpu_speed = 2.0;
    assert!(class.distance(&big, 3) > 0.3);
    assert!(class.distance(&fast, 3) > class.distance(&big, 3));
    assert!(width(&class, class.distance(&fast, 3), 1024.0) > width(&class, 0.0, 1024.0));
}

/// Issue 37: with a measured base latency a window of async publishes is a closed loop, `n ÷ (a + n·t_l)`:
/// a small window is bound by it, a large one approaches the leader's ceiling; without one, as before.
#[test]
fn an_async_window_is_a_closed_loop_when_the_base_latency_was_measured() {
    let t_l = 12.5e-6;
    let mut i = inp(3, false, 2.0, 16.0);
    i.async_base_s = Some(0.6e-3);
    let small = stream_rate(t_l, &i);
    assert!((small.per_s - 32.0 / (0.6e-3 + 32.0 * t_l)).abs() < 1e-6);
    assert_eq!(small.binding, Binding::AsyncWindow);
    i.publish.window = 256.0;
    let big = stream_rate(t_l, &i);
    assert!(big.per_s > 2.0 * small.per_s && big.per_s < 1.0 / t_l);
    assert_eq!(big.binding, Binding::LeaderCpu);
    i.async_base_s = None;
    i.publish.window = 16.0;
    assert_eq!(
        stream_rate(t_l, &i).per_s,
        1.0 / t_l,
        "without a base latency: n ÷ τ against the ceiling"
    );
}

/// A calibration file of async publishes (2 publishers × 500 in flight, R3, delayed) at three sizes and
/// `kv` extra rows, for the KV put ratio's tests.
fn kv_file(kv: &str) -> CalibrationFile {
    let mut rows = String::new();
    for (size, rates) in [
        ("64B", [50_000.0, 52_000.0, 49_000.0]),
        ("512B", [40_000.0, 44_000.0, 38_000.0]),
        ("4KiB", [20_000.0, 21_000.0, 19_000.0]),
    ] {
        for (i, r) in rates.iter().enumerate() {
            rows.push_str(&format!(
                "      - {{ label: \"js-{size} #{i}\", kind: js, servers: 3, replicas: 3, sync: delayed, size: {size}, publishers: 2, window: 500, publish_mode: async, storage: file, msgs: 1000, values: {{ durable_pubs_per_s: {r} }}, fit: true }}\n"
            ));
        }
    }
    rows.push_str(kv);
    let text = format!(
        "schema: natsplan-calibration/1\nid: kv-ratio-test\ntitle: test\nsource:\n  document: test\n  kind: natsplan-calibrate\n  date: \"2026-12-07\"\nnats_version: \"2.15.1\"\nmethod: test\nhardware:\n  array: none\n  disk_kind: unknown\n  host: unknown\n  server_model: kv-ratio-box\n  cores: 2\nconditions: {{}}\nseries:\n  - name: js\n    table: test\n    rows:\n{rows}"
    );
    CalibrationFile::parse(&text, "kv-ratio-test.yaml").unwrap()
}

/// The leader class one file's publish rows fit.
fn class(f: CalibrationFile) -> LeaderClass {
    fit_classes(&CalibrationSet { files: vec![f] }, &crate::catalog::Catalog::builtin())
        .into_iter()
        .next()
        .expect("the publish rows fit a class")
}

fn kv_rows(kind: &str, shape: &str, rates: &[f64]) -> String {
    rates
        .iter()
        .enumerate()
        .map(|(i, r)| {
            format!(
                "      - {{ label: \"kv {i}\", kind: {kind}, servers: 3, replicas: 3, sync: delayed, {shape}, storage: file, msgs: 1000, values: {{ ops_per_s: {r} }}, fit: true }}\n"
            )
        })
        .collect()
}

/// Issue 37: asynchronous KV put rows in the async publish rows' shape give the leader's KV put ratio (the
/// median publish rate over the median put rate, and its standard error): calibrate's `kv-async` rows and
/// a hand-written `kv` row marked `publish_mode: async` alike. Rows of another shape, a small window, many
/// subjects or synchronous puts give none; asynchronous put rows are never read as synchronous clients;
/// a side measured once takes the class's fit residual for its scatter.
#[test]
fn the_kv_put_ratio_is_read_off_async_rows_of_one_shape_only() {
    let same = "size: 512B, workers: 2, window: 500, publish_mode: async";
    for kind in ["kv-async", "kv"] {
        let f = kv_file(&kv_rows(kind, same, &[30_000.0, 32_000.0, 31_000.0]));
        let k = class(f.clone()).kv_put.expect("a KV put ratio");
        assert!((k.ratio - 40_000.0 / 31_000.0).abs() < 1e-9, "{kind}: {k:?}");
        assert_eq!((k.replicas, k.bytes, k.clients, k.window), (3, 512.0, 2.0, 500.0));
        assert_eq!((k.kv_rows, k.publish_rows), (3, 3));
        assert!(k.se_log > 0.0 && k.se_log < 0.1, "{k:?}");
        assert!(
            crate::perf::sync_law::fit(&f, 1.0).is_empty(),
            "{kind}: asynchronous puts are no synchronous clients' rows"
        );
    }
    // One KV row: its scatter is the class's fit residual, never zero.
    let one = class(kv_file(&kv_rows("kv-async", same, &[30_000.0])));
    let k = one.kv_put.clone().expect("a ratio from one row");
    assert!(
        one.rms_log > 0.0 && k.se_log >= one.rms_log,
        "{k:?} against the class's {}",
        one.rms_log
    );
    // Another window than the publish rows', a small window, many subjects: no pair.
    for shape in [
        "size: 512B, workers: 2, window: 256, publish_mode: async",
        "size: 512B, workers: 2, window: 8, publish_mode: async",
        "size: 512B, workers: 2, window: 500, publish_mode: async, subjects: 16384",
    ] {
        let f = kv_file(&kv_rows("kv-async", shape, &[30_000.0, 31_000.0]));
        assert_eq!(class(f).kv_put, None, "{shape}");
    }
    // Synchronous puts of the same size and clients: no pair, and a synchronous law.
    let sync = kv_file(&kv_rows(
        "kv",
        "size: 512B, workers: 2, publish_mode: sync",
        &[1_000.0, 1_100.0],
    ));
    assert_eq!(class(sync.clone()).kv_put, None);
    assert_eq!(crate::perf::sync_law::fit(&sync, 1.0).len(), 1);
}

/// Issue 37 (2026-12-07): a file's readers rows (`js-readers`: synchronous publishes with a consumer
/// reading every message) against its synchronous publish rows of the same shape give what a reader adds
/// to a publisher's round trip on that host; readers rows of another shape, or no publish rows to pair
/// with, give none; the readers rows are never read as publish rows. Two reader counts read the first
/// reader's share apart from each further one's (2026-12-07: the lab's further readers cost less).
#[test]
fn the_readers_stretch_is_read_off_sync_rows_of_one_shape_with_and_without_readers() {
    let sync = |rates: &[f64]| -> String {
        rates
            .iter()
            .enumerate()
            .map(|(i, r)| format!(
                "      - {{ label: \"sync {i}\", kind: js, servers: 3, replicas: 3, sync: delayed, size: 128B, publishers: 4, window: 1, publish_mode: sync, storage: file, msgs: 1000, values: {{ durable_pubs_per_s: {r} }}, fit: true }}\n"
            ))
            .collect()
    };
    let readers = |shape: &str, rates: &[f64]| -> String {
        rates
            .iter()
            .enumerate()
            .map(|(i, r)| format!(
                "      - {{ label: \"readers {i}\", kind: js-readers, servers: 3, replicas: 3, sync: delayed, {shape}, window: 1, publish_mode: sync, storage: file, msgs: 1000, values: {{ pub_msgs_per_s: {r}, sub_msgs_per_s: {r}, durable_pubs_per_s: {r} }}, fit: true }}\n"
            ))
            .collect()
    };
    let same = "size: 128B, publishers: 4, consumers: 1";
    let base = [4_000.0, 4_200.0, 3_900.0];
    let f = kv_file(&(sync(&base) + &readers(same, &[3_000.0, 2_900.0, 3_100.0])));
    let s = class(f.clone()).readers_stretch.expect("a readers stretch");
    assert!((s.per_reader - (4_000.0 / 3_000.0 - 1.0)).abs() < 1e-9, "{s:?}");
    assert_eq!((s.replicas, s.bytes, s.publishers, s.readers), (3, 128.0, 4.0, 1.0));
    assert_eq!((s.readers_rows, s.publish_rows), (3, 3));
    // Two readers: the stretch is per reader.
    let two = "size: 128B, publishers: 4, consumers: 2";
    let s2 = class(kv_file(&(sync(&base) + &readers(two, &[2_500.0]))))
        .readers_stretch
        .expect("a stretch");
    assert!((s2.per_reader - (4_000.0 / 2_500.0 - 1.0) / 2.0).abs() < 1e-9, "{s2:?}");
    // One reader count: linear in the readers, and said to be carried.
    assert!(!s2.further_measured && s2.further_reader == s2.per_reader, "{s2:?}");
    assert!((s2.stretch(3.0) - (1.0 + 3.0 * s2.per_reader)).abs() < 1e-12);
    // One reader and two at the same shape: the first reader's share and each further one's read apart
    // (×4000/3000 with one, ×4000/2500 with two: 1/3, then 4000/2500 − 4000/3000 = 4/15 more each).
    let both = class(kv_file(
        &(sync(&base) + &readers(same, &[3_000.0, 2_900.0, 3_100.0]) + &readers(two, &[2_500.0, 2_450.0, 2_550.0])),
    ))
    .readers_stretch
    .expect("a stretch");
    assert!(both.further_measured, "{both:?}");
    assert!((both.per_reader - 1.0 / 3.0).abs() < 1e-9, "{both:?}");
    assert!((both.further_reader - (1.6 - 4.0 / 3.0)).abs() < 1e-9, "{both:?}");
    assert_eq!((both.readers, both.readers_rows, both.publish_rows), (2.0, 6, 3));
    // Three readers: 1 + 1/3 + 2 × 4/15, not the 1 + 3 × 1/3 of a linear stretch from one reader.
    assert!((both.stretch(3.0) - (1.0 + 1.0 / 3.0 + 2.0 * 4.0 / 15.0)).abs() < 1e-9);
    assert!((both.stretch(1.0) - 4.0 / 3.0).abs() < 1e-9 && both.stretch(0.0) == 1.0);
    // Two readers measured faster than one (noise): nothing is read of a further reader, and it is never
    // free: linear from the one reader's stretch.
    let noisy = class(kv_file(
        &(sync(&base) + &readers(same, &[3_000.0]) + &readers(two, &[3_200.0])),
    ))
    .readers_stretch
    .expect("a stretch");
    assert!(
        !noisy.further_measured && noisy.further_reader == noisy.per_reader,
        "{noisy:?}"
    );
    assert!(
        (noisy.per_reader - 1.0 / 3.0).abs() < 1e-9 && noisy.readers == 1.0,
        "{noisy:?}"
    );
    // The readers rows are not publish rows, even with a publish rate on them: the class's fit and the
    // synchronous publishers' law are the ones without them.
    let plain = kv_file(&sync(&base));
    let without = class(plain.clone());
    assert_eq!(without.readers_stretch, None);
    let with = class(f.clone());
    assert_eq!((without.unit_s, without.rows), (with.unit_s, with.rows));
    let laws = |f: &CalibrationFile| format!("{:?}", crate::perf::sync_law::fit(f, 1.0));
    assert!(!crate::perf::sync_law::fit(&plain, 1.0).is_empty());
    assert_eq!(laws(&plain), laws(&f));
    // Readers rows of another shape (16 publishers, or 1 KiB) have no publish rows to pair with.
    for shape in [
        "size: 128B, publishers: 16, consumers: 1",
        "size: 1KiB, publishers: 4, consumers: 1",
    ] {
        let f = kv_file(&(sync(&base) + &readers(shape, &[3_000.0])));
        assert_eq!(class(f).readers_stretch, None, "{shape}");
    }
    // Readers never speed a publisher up: a faster readers row reads 0.
    let fast = class(kv_file(&(sync(&base) + &readers(same, &[4_500.0]))));
    assert_eq!(fast.readers_stretch.map(|s| s.per_reader), Some(0.0));
}
