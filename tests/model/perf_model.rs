//! Seed 000's qualitative findings must come out of the model, and more replicas must never predict more
//! put throughput (property test over shapes).

use natsplan::catalog::Catalog;
use natsplan::layout::Raid;
use natsplan::perf::{predict_shape, Calibration, Kind, Prediction, Shape, SyncClass, VolumeSpec};
use proptest::prelude::*;

#[allow(clippy::too_many_arguments)]
fn shape(kind: Kind, servers: u32, r: u8, sync: SyncClass, size: u64, workers: u32, raid: Raid, cache: bool) -> Shape {
    let c = Catalog::builtin();
    let mut volume = VolumeSpec::seed000(&c, raid, 3);
    volume.write_cache = cache;
    Shape {
        kind,
        servers,
        replicas: r,
        sync,
        size_bytes: size,
        workers,
        subscribers: 0,
        consumers: 20,
        consumers_spread: true,
        volume,
        server: c.server(&c.default_server).unwrap().clone(),
        rate: None,
        batch: 1,
        nats_version: None,
        subjects: None,
    }
}

fn run(s: &Shape) -> Prediction {
    predict_shape(&Calibration::builtin().terms, &Catalog::builtin(), s)
}

const KIB8: u64 = 8 * 1024;
const MIB: u64 = 1024 * 1024;

#[test]
fn delayed_sync_beats_immediate() {
    for kind in [Kind::ObjPut, Kind::Js, Kind::Kv] {
        for (n, r) in [(1, 1), (3, 3), (5, 5)] {
            for raid in [Raid::Raid0, Raid::Raid1, Raid::Raid6] {
                for size in [128, KIB8, MIB] {
                    for w in [1, 3, 9] {
                        let a = run(&shape(kind, n, r, SyncClass::Always, size, w, raid, false));
                        let d = run(&shape(kind, n, r, SyncClass::Delayed, size, w, raid, false));
                        assert!(
                            d.ops_per_s > a.ops_per_s * 1.05,
                            "{kind:?} n{n} R{r} {raid:?} {size} w{w}: delayed {} vs always {}",
                            d.ops_per_s,
                            a.ops_per_s
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn raid1_without_write_cache_is_slower_than_raid0_under_immediate_sync_only() {
    for size in [KIB8, MIB] {
        for w in [1, 3] {
            let imm0 = run(&shape(
                Kind::ObjPut,
                3,
                3,
                SyncClass::Always,
                size,
                w,
                Raid::Raid0,
                false,
            ));
            let imm1 = run(&shape(
                Kind::ObjPut,
                3,
                3,
                SyncClass::Always,
                size,
                w,
                Raid::Raid1,
                false,
            ));
            assert!(
                imm1.ops_per_s < imm0.ops_per_s * 0.9,
                "{size} w{w}: {} vs {}",
                imm1.ops_per_s,
                imm0.ops_per_s
            );
            let del0 = run(&shape(
                Kind::ObjPut,
                3,
                3,
                SyncClass::Delayed,
                size,
                w,
                Raid::Raid0,
                false,
            ));
            let del1 = run(&shape(
                Kind::ObjPut,
                3,
                3,
                SyncClass::Delayed,
                size,
                w,
                Raid::Raid1,
                false,
            ));
            assert!(
                (del1.ops_per_s / del0.ops_per_s - 1.0).abs() < 0.02,
                "delayed {size} w{w}: {} vs {}",
                del1.ops_per_s,
                del0.ops_per_s
            );
            // With the array's mirrored write cache on, RAID 1 catches up with RAID 0 (Appendix C's reading).
            let c1 = run(&shape(
                Kind::ObjPut,
                3,
                3,
                SyncClass::Always,
                size,
                w,
                Raid::Raid1,
                true,
            ));
            assert!(c1.ops_per_s > imm1.ops_per_s * 1.1 && c1.scaled, "cache on: {c1:?}");
        }
    }
}

#[test]
fn more_workers_spread_across_servers_raise_put_rates() {
    for sync in [SyncClass::Always, SyncClass::Delayed] {
        for raid in [Raid::Raid0, Raid::Raid1] {
            for size in [KIB8, MIB] {
                let mut last = 0.0;
                for w in [1, 3, 9, 27] {
                    let p = run(&shape(Kind::ObjPut, 3, 3, sync, size, w, raid, false));
                    assert!(
                        p.ops_per_s > last,
                        "{sync:?} {raid:?} {size} w{w}: {} after {last}",
                        p.ops_per_s
                    );
                    last = p.ops_per_s;
                }
            }
        }
    }
    // Consumers kept on one server (seed 000's first batch) slow publishers more than spread ones.
    let mut first = shape(Kind::ObjPut, 3, 3, SyncClass::Delayed, KIB8, 3, Raid::Raid0, false);
    first.consumers_spread = false;
    let spread = shape(Kind::ObjPut, 3, 3, SyncClass::Delayed, KIB8, 3, Raid::Raid0, false);
    assert!(run(&spread).ops_per_s > run(&first).ops_per_s);
}

#[test]
fn one_mib_objects_move_far_more_bytes_at_far_fewer_objects() {
    for sync in [SyncClass::Always, SyncClass::Delayed] {
        for (n, r) in [(1, 1), (3, 3)] {
            for w in [1, 3] {
                let small = run(&shape(Kind::ObjPut, n, r, sync, KIB8, w, Raid::Raid0, false));
                let big = run(&shape(Kind::ObjPut, n, r, sync, MIB, w, Raid::Raid0, false));
                assert!(big.bytes_per_s > 10.0 * small.bytes_per_s, "{sync:?} R{r} w{w}");
                assert!(big.ops_per_s < small.ops_per_s / 2.0, "{sync:?} R{r} w{w}");
            }
        }
    }
}

#[test]
fn a_stream_never_exceeds_its_leader() {
    let few = run(&shape(Kind::Js, 3, 3, SyncClass::Delayed, 128, 4, Raid::Raid1, false));
    let many = run(&shape(
        Kind::Js,
        3,
        3,
        SyncClass::Delayed,
        128,
        100_000,
        Raid::Raid1,
        false,
    ));
    let mut batched = shape(Kind::Js, 3, 3, SyncClass::Delayed, 128, 4, Raid::Raid1, false);
    batched.batch = 500;
    let batched = run(&batched);
    assert!(many.ops_per_s >= few.ops_per_s);
    assert!(batched.bottleneck.contains("leader"), "{}", batched.bottleneck);
    // Seed 004's leader-bound rows: ~16k at 128 B, R3 (publish mode unknown; read as leader-bound). Since
    // issue 14 that ceiling holds for seed 004's own servers (lxc-guest), not for every server model.
    let mut lxc = shape(Kind::Js, 3, 3, SyncClass::Delayed, 128, 4, Raid::Raid1, false);
    lxc.batch = 500;
    // Seed 004's publishers wrote with no consumer reading (the shape's 20 are seed 000's object runs').
    lxc.consumers = 0;
    lxc.server = Catalog::builtin().server("lxc-guest").unwrap().clone();
    let lxc = run(&lxc);
    assert!(lxc.ops_per_s <= 16_000.0 * 1.01 && lxc.ops_per_s > 12_000.0, "{lxc:?}");
    assert!(lxc.bottleneck.contains("leader"), "{}", lxc.bottleneck);
}

#[test]
fn uncalibrated_hardware_is_scaled_and_says_so_with_a_wider_band() {
    let cal = run(&shape(
        Kind::ObjPut,
        3,
        3,
        SyncClass::Always,
        KIB8,
        3,
        Raid::Raid1,
        false,
    ));
    assert!(!cal.scaled);
    let c = Catalog::builtin();
    let mut s = shape(Kind::ObjPut, 3, 3, SyncClass::Always, KIB8, 3, Raid::Raid6, false);
    s.volume.disk = c.disk("nl-sas-8t").unwrap().clone();
    s.volume.array = c.array("E5700").unwrap().clone();
    s.volume.disks = 8;
    let hdd = run(&s);
    assert!(hdd.scaled && hdd.notes.iter().any(|n| n.contains("scaled")), "{hdd:?}");
    let w = |p: &Prediction| (p.band.high / p.band.low).ln();
    assert!(w(&hdd) > w(&cal) * 1.5);
    assert!(
        hdd.ops_per_s < cal.ops_per_s / 3.0,
        "NL-SAS RAID 6 without cache: {}",
        hdd.ops_per_s
    );
    // Another nats-server version than the calibration's is scaled too.
    let mut v = shape(Kind::ObjPut, 3, 3, SyncClass::Always, KIB8, 3, Raid::Raid1, false);
    v.nats_version = Some("2.15.1".into());
    let other = run(&v);
    assert!(other.scaled && w(&other) > w(&cal) && other.notes.iter().any(|n| n.contains("2.15.1")));
    v.nats_version = Some("2.12.11".into());
    assert!(!run(&v).scaled);
    // Gets have no calibration at all (seed 000's Get column is derived).
    let get = run(&shape(
        Kind::ObjGet,
        3,
        3,
        SyncClass::Delayed,
        KIB8,
        3,
        Raid::Raid1,
        false,
    ));
    assert!(get.scaled && w(&get) > w(&cal));
    // Every prediction names a bottleneck and a source, and its band holds it.
    for p in [&cal, &hdd, &get] {
        assert!(!p.bottleneck.is_empty() && !p.source.is_empty());
        assert!(p.band.low < p.ops_per_s && p.ops_per_s < p.band.high);
    }
}

fn raid_strategy() -> impl Strategy<Value = Raid> {
    prop_oneof![
        Just(Raid::Raid0),
        Just(Raid::Raid1),
        Just(Raid::Raid10),
        Just(Raid::Raid6)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
    #[test]
    fn more_replicas_never_predict_more_put_throughput(
        kind in prop_oneof![Just(Kind::ObjPut), Just(Kind::Js), Just(Kind::Kv)],
        servers in 5u32..12,
        always in any::<bool>(),
        size in prop_oneof![Just(16u64), Just(128), Just(1024), Just(8 * 1024), Just(64 * 1024), Just(1024 * 1024), Just(8 * 1024 * 1024)],
        workers in 1u32..64,
        raid in raid_strategy(),
        cache in any::<bool>(),
        luns in 1u32..6,
        consumers in 0u32..40,
        batch in prop_oneof![Just(1u32), Just(100), Just(500)],
    ) {
        let sync = if always { SyncClass::Always } else { SyncClass::Delayed };
        let mut last = f64::INFINITY;
        // Under `always`, nats-server 2.15 fsyncs every R1 message but only every RAFT append entry at R>1
        // (perf::leader; the loopback lab measured 1.7k msgs/s at R1 against 59k at R3): for JetStream
        // publishes and KV puts the comparison starts at R2 there (changed with issue 14).
        let first = if always && kind != Kind::ObjPut { 2 } else { 1 };
        for r in first..=5u8 {
            let mut s = shape(kind, servers, r, sync, size, workers, raid, cache);
            if raid == Raid::Raid10 || raid == Raid::Raid6 { s.volume.disks = 6; }
            s.volume.luns_on_group = luns;
            s.consumers = consumers;
            s.batch = batch;
            let p = run(&s);
            prop_assert!(p.ops_per_s.is_finite() && p.ops_per_s > 0.0);
            prop_assert!(p.ops_per_s <= last * (1.0 + 1e-9), "R{} {} > {}", r, p.ops_per_s, last);
            last = p.ops_per_s;
        }
    }
}

#[test]
fn core_with_no_subscriber_is_priced_from_the_publisher_only_rows_not_the_fan_out_fit() {
    // The loopback calibration measured one publisher with nobody subscribed at 3.4-4.1 M msgs/s (64 B).
    // The fan-out fit alone (rows with subscribers) predicted 0.83 M; the publisher-only rows are the
    // measurement of that path, so the band must hold them.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("calibration/lab-loopback-always.yaml");
    let cal = Calibration::with_file(&path).unwrap();
    let set = natsplan::perf::calibration::CalibrationSet::builtin()
        .with_file(natsplan::perf::calibration::CalibrationSet::from_path(&path).unwrap());
    let measured: Vec<f64> = set
        .rows_of(natsplan::perf::Kind::Core)
        .filter(|(_, r)| r.subscribers == Some(0) && r.publishers == Some(1))
        .filter_map(|(_, r)| r.measured("pub_msgs_per_s"))
        .collect();
    assert!(measured.len() >= 3, "{measured:?}");
    let mut s = shape(Kind::Core, 3, 1, SyncClass::Delayed, 64, 1, Raid::Raid1, false);
    s.subscribers = 0;
    let p = predict_shape(&cal.terms, &Catalog::builtin(), &s);
    for m in &measured {
        assert!(
            p.band.low <= *m && *m <= p.band.high,
            "{m} outside {:?} ({})",
            p.band,
            p.ops_per_s
        );
    }
    assert_ne!(p.bottleneck, "server routing (message fan-out)");
    // With subscribers the fan-out fit still decides, and every subscriber costs.
    let mut one = s.clone();
    one.subscribers = 1;
    let mut four = s.clone();
    four.subscribers = 4;
    let (p1, p4) = (
        predict_shape(&cal.terms, &Catalog::builtin(), &one),
        predict_shape(&cal.terms, &Catalog::builtin(), &four),
    );
    assert!(p1.ops_per_s < p.ops_per_s * 2.0);
    assert!(
        p4.ops_per_s / 5.0 < p1.ops_per_s / 2.0,
        "per-publish rate falls with fan-out"
    );
}

/// Readers (a stream's consumers reading every message, nats-server #5637) never raise a stream's
/// predicted rate, on a dedicated server, a host shared with the whole cluster (seed 004's LXC guests) and
/// the loopback lab's own class, for synchronous clients and async windows, delayed and `always`.
#[test]
fn more_readers_never_predict_more_publishes() {
    let cat = Catalog::builtin();
    for server in [None, Some("lxc-guest"), Some("loopback-2c-shared")] {
        for (batch, sync) in [
            (1, SyncClass::Delayed),
            (256, SyncClass::Delayed),
            (1, SyncClass::Always),
            (256, SyncClass::Always),
        ] {
            let mut last = f64::INFINITY;
            for consumers in [0u32, 1, 2, 4, 16] {
                let mut s = shape(Kind::Js, 3, 3, sync, 1024, 8, Raid::Raid1, true);
                s.batch = batch;
                s.consumers = consumers;
                if let Some(m) = server {
                    s.server = cat.server(m).unwrap().clone();
                }
                let p = run(&s);
                assert!(
                    p.ops_per_s <= last * (1.0 + 1e-9),
                    "{server:?} batch {batch} {sync:?}: {consumers} readers {} > {last}",
                    p.ops_per_s
                );
                last = p.ops_per_s;
            }
        }
    }
}
