//! The consumer-read term (perf::consumer) against the loopback lab's consumer rows
//! (calibration/lab-loopback-consumers.yaml): the held-out sizes (rows kept out of the fit, `fit: false`)
//! land inside the predicted band, and consumer kinds are priced by consumer rows, never by a publish law.

use crate::stats::median;
use natsplan::catalog::Catalog;
use natsplan::layout::Raid;
use natsplan::perf::{
    consumer, predict_shape, Calibration, CalibrationSet, Kind, Prediction, Shape, SyncClass, VolumeSpec,
};
use std::collections::BTreeMap;

const FILE: &str = "lab-loopback-consumers";
const LAB_HOST: &str = "loopback-2c-shared";

fn shape(kind: Kind, server: &str, r: u8, size: u64, workers: u32, sync: SyncClass) -> Shape {
    let cat = Catalog::builtin();
    Shape {
        kind,
        servers: 3,
        replicas: r,
        sync,
        size_bytes: size,
        workers,
        subscribers: 0,
        consumers: 0,
        consumers_spread: true,
        volume: VolumeSpec::seed000(&cat, Raid::Raid1, 1),
        server: cat.server(server).unwrap().clone(),
        rate: None,
        batch: 500,
        nats_version: None,
        subjects: None,
    }
}

fn predict(sh: &Shape) -> Prediction {
    predict_shape(&Calibration::builtin().terms, &Catalog::builtin(), sh)
}

/// The lab file's consumer rows by (mode, replicas, size): (fitted, rates).
fn lab_rows(fit: bool) -> BTreeMap<(String, u8, u64), Vec<f64>> {
    let set = CalibrationSet::builtin();
    let mut out: BTreeMap<(String, u8, u64), Vec<f64>> = BTreeMap::new();
    for (f, r) in set.rows_named(consumer::ROW_KIND) {
        if f.id != FILE || r.fit != fit {
            continue;
        }
        let key = (r.mode.clone().unwrap(), r.replicas.unwrap(), r.size_bytes().unwrap());
        out.entry(key).or_default().push(r.measured("msgs_per_s").unwrap());
    }
    out
}

#[test]
fn held_out_consumer_shapes_land_inside_the_predicted_band() {
    let held = lab_rows(false);
    let fitted = lab_rows(true);
    // Every mode at both replica counts, at sizes no fitted row has.
    assert!(held.len() >= 12, "held-out shapes: {:?}", held.keys());
    for (mode, r, size) in held.keys() {
        assert!(
            !fitted.keys().any(|k| k.2 == *size),
            "{size} B is held out but also fitted"
        );
        let _ = (mode, r);
    }
    let mut misses = Vec::new();
    for ((mode, r, size), rates) in &held {
        let kind = consumer::mode_kind(mode).unwrap();
        let p = predict(&shape(kind, LAB_HOST, *r, *size, 1, SyncClass::Delayed));
        let m = median(rates.clone());
        assert_eq!(p.calibration, FILE);
        assert!(!p.scaled, "{mode} R{r} {size} B is on its own host: {:?}", p.notes);
        if !(p.band.low <= m && m <= p.band.high) {
            misses.push(format!(
                "{mode} R{r} {size} B: measured median {m:.0}/s, predicted {:.0} ({:.0}–{:.0})",
                p.ops_per_s, p.band.low, p.band.high
            ));
        }
    }
    assert!(
        misses.is_empty(),
        "held-out shapes outside their band:\n{}",
        misses.join("\n")
    );
}

#[test]
fn consumer_kinds_are_priced_by_consumer_rows_and_follow_size_and_acks() {
    for kind in [Kind::ConsumerFetch, Kind::ConsumerConsume, Kind::ConsumerOrdered] {
        let p = predict(&shape(kind, LAB_HOST, 3, 128, 1, SyncClass::Delayed));
        assert_eq!(p.calibration, FILE, "{kind:?}");
        assert!(p.source.contains(kind.as_str()), "{}", p.source);
        assert!(p.ops_per_s > 0.0 && p.band.low < p.ops_per_s && p.ops_per_s < p.band.high);
        // Not the publish law: no stream-leader facts, a consumer bottleneck.
        assert!(p.stream.is_none());
        assert!(!p.bottleneck.contains("leader"), "{}", p.bottleneck);
        let big = predict(&shape(kind, LAB_HOST, 3, 8192, 1, SyncClass::Delayed));
        assert!(big.ops_per_s <= p.ops_per_s, "{kind:?}: 8 KiB faster than 128 B");
    }
    // Ordered consumers skip the acks: faster than an acked fetch of the same shape on the lab.
    let fetch = predict(&shape(Kind::ConsumerFetch, LAB_HOST, 3, 128, 1, SyncClass::Delayed));
    let ordered = predict(&shape(Kind::ConsumerOrdered, LAB_HOST, 3, 128, 1, SyncClass::Delayed));
    assert!(ordered.ops_per_s > fetch.ops_per_s);
}

#[test]
fn uncalibrated_cases_are_scaled_with_a_wider_band_and_say_why() {
    let own = predict(&shape(Kind::ConsumerFetch, LAB_HOST, 3, 1024, 1, SyncClass::Delayed));
    let width = |p: &Prediction| (p.band.high / p.band.low).ln();
    let cases = [
        (
            "another host",
            shape(Kind::ConsumerFetch, "generic-16c", 3, 1024, 1, SyncClass::Delayed),
            "scaled",
        ),
        (
            "R5",
            shape(Kind::ConsumerFetch, LAB_HOST, 5, 1024, 1, SyncClass::Delayed),
            "R5",
        ),
        (
            "sync always",
            shape(Kind::ConsumerFetch, LAB_HOST, 3, 1024, 1, SyncClass::Always),
            "always",
        ),
        (
            "4 clients",
            shape(Kind::ConsumerFetch, LAB_HOST, 3, 1024, 4, SyncClass::Delayed),
            "clients",
        ),
    ];
    for (what, sh, says) in cases {
        let p = predict(&sh);
        assert!(p.scaled, "{what}");
        assert!(width(&p) > width(&own), "{what}: band not wider");
        assert!(p.notes.iter().any(|n| n.contains(says)), "{what}: {:?}", p.notes);
    }
    // Ordered reads have no acks: `always` does not touch them.
    let o = predict(&shape(Kind::ConsumerOrdered, LAB_HOST, 3, 1024, 1, SyncClass::Always));
    assert!(!o.scaled, "{:?}", o.notes);
}
