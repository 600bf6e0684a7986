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
