//! How a prediction's band adds up its parts (issue 37). A band's half-width (log units) is built from
//! parts: on a calibration's own host, what was measured there (a class's fit residuals, the rows' own
//! spread) and what the model's form leaves out; carried to another host, an allowance for the distance.
//! The parts measured at home are independent and add in quadrature (`add_widths`); the allowance for
//! another host adds in full (`own_and_carried`). Evidence, both ways: the prediction matrix's run 10 held
//! quadrature out on the lab's own class (17 of 19 cells inside 1.8× bands, where the sum had made run 9's
//! 2.6×); the NATS docs' M4 laptop figure, held out in tests/model/perf_sync at distance 0.98 and 2.2× above
//! its price, falls outside its band in quadrature and inside when summed.

/// Extra half-width per unit of distance from the calibrated class (perf::leader's distance): an
/// assumption.
const WIDTH_PER_DISTANCE: f64 = 0.25;

/// The half-width a prediction carries for carrying a class to a host `distance` away (added in full on
/// top of the parts measured on the class's own host: `own_and_carried`).
pub fn distance_width(distance: f64) -> f64 {
    WIDTH_PER_DISTANCE * distance
}

/// Half-widths measured on a calibration's own host (`own`) and the allowance for carrying it elsewhere
/// (`carried`, zero on its own host): in quadrature at home, summed in full away
/// (`leader::width`).
pub fn own_and_carried(own: &[f64], carried: f64) -> f64 {
    if carried > 0.0 {
        own.iter().map(|w| w.max(0.0)).sum::<f64>() + carried
    } else {
        add_widths(own)
    }
}

/// Half-widths (log units) of independent sources of error combined: the root of the sum of squares, as
/// independent errors add (a 90 % interval of each gives about a 90 % interval of the sum). Until
/// 2026-12-06 (issue 37) the parts were summed, which is each at its worst at once: the matrix's run 9 put
/// 17 of 18 held-out cells inside bands of ×/÷1.6, median error 12.4 %, worst 27.8 % (a band of ×/÷1.38
/// would have held them); the sum made them 2.6× wide.
pub fn add_widths(parts: &[f64]) -> f64 {
    parts.iter().map(|w| w.max(0.0).powi(2)).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_in_quadrature_at_home_and_in_full_away() {
        assert!((add_widths(&[0.3, 0.4]) - 0.5).abs() < 1e-12);
        assert!((own_and_carried(&[0.3, 0.4], 0.0) - 0.5).abs() < 1e-12);
        assert!((own_and_carried(&[0.3, 0.4], 0.25) - 0.95).abs() < 1e-12);
        // Never narrower away than at home, never below its widest part, negative parts count as none.
        for w in [0.0, 0.1, 1.0] {
            assert!(own_and_carried(&[0.3, 0.4], w) >= own_and_carried(&[0.3, 0.4], 0.0));
        }
        assert!(add_widths(&[0.3, 0.4]) >= 0.4);
        assert_eq!(add_widths(&[-1.0, 0.3]), 0.3);
    }
}
