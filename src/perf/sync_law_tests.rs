//! Unit tests of `perf::sync_law`.

use super::*;

#[test]
fn the_saturation_fit_takes_one_point_exactly_and_balances_several() {
    // One point: 4 clients at 800 µs each over a 320 µs round trip is 160 µs per further client.
    let d = fit_saturation(320e-6, &[(4.0, 800e-6)]);
    assert!((d - 160e-6).abs() < 1e-12, "{d}");
    // Points on the law come back.
    let pts: Vec<(f64, f64)> = [4.0, 16.0, 64.0]
        .iter()
        .map(|&c| (c, 300e-6 + 50e-6 * (c - 1.0)))
        .collect();
    assert!((fit_saturation(300e-6, &pts) - 50e-6).abs() < 1e-9);
}

fn law(curve: &[(f64, f64)], saturation_s: Option<f64>) -> SyncLaw {
    SyncLaw {
        op: SyncOp::Publish,
        replicas: 3,
        round_trip_s: curve[0].1,
        round_trip_min_s: curve[0].1,
        saturation_s,
        bytes: 128.0,
        clients_fewest: curve[0].0,
        clients_max: curve[curve.len() - 1].0,
        curve: curve.to_vec(),
        leader_cpu_s: None,
        client_cpu_s: None,
        rows: curve.len(),
    }
}

/// Issue 37: with three or more counts D is read off the measured curve, so 160 publishers are priced from
/// the last segment's slope, not from the first few clients' larger one (which capped them at half).
#[test]
fn saturation_is_read_off_the_measured_counts_when_there_are_three_or_more() {
    let l = law(
        &[(1.0, 300e-6), (4.0, 540e-6), (16.0, 1000e-6), (64.0, 2470e-6)],
        Some(70e-6),
    );
    let at = |c: f64| l.saturation_at(c).unwrap();
    // At a measured count the curve's own point comes back: t(c) = τ + D·(c − 1).
    for (c, t) in [(4.0, 540e-6), (16.0, 1000e-6), (64.0, 2470e-6)] {
        assert!((300e-6 + at(c) * (c - 1.0) - t).abs() < 1e-12, "{c}");
    }
    // Between counts: on the straight line between them.
    assert!((300e-6 + at(40.0) * 39.0 - (1000e-6 + 24.0 * (1470e-6 / 48.0))).abs() < 1e-12);
    // Beyond the most measured: the last slope, so D falls towards it and the rate keeps rising.
    let slope = 1470e-6 / 48.0;
    assert!((300e-6 + at(160.0) * 159.0 - (2470e-6 + 96.0 * slope)).abs() < 1e-12);
    assert!(at(160.0) < at(64.0) && at(64.0) < at(16.0) && at(16.0) < at(4.0));
    let rate = |c: f64| c / (300e-6 + at(c) * (c - 1.0));
    assert!(rate(160.0) > rate(64.0) && rate(1000.0) < 1.0 / slope);
    // One client, or fewer counts: the single fitted D as before.
    assert!((at(1.0) - 80e-6).abs() < 1e-12);
    let two = law(&[(1.0, 300e-6), (4.0, 540e-6)], Some(80e-6));
    assert_eq!(two.saturation_at(160.0), Some(80e-6));
}
