//! Small statistics every layer may use (issue 44: one copy of each): the median of a handful of
//! measurements. Sorting is by `f64::total_cmp`, so a NaN sorts after every number (and `-0.0` before
//! `0.0`) instead of leaving the order undefined; an even count takes the mean of the middle two.

/// The median of `xs`, sorting them in place; `None` when there are none.
pub fn median(xs: &mut [f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    Some(median_sorted(xs))
}

/// The median of `v`, or 0 when `v` is empty: for the calibration fits (perf's sync law and leader
/// classes), whose callers rule out an empty set first or take 0 as "nothing measured".
pub fn median_or_zero(mut v: Vec<f64>) -> f64 {
    median(&mut v).unwrap_or(0.0)
}

/// The median of `xs`, already sorted ascending: the middle one, or for an even count the mean of the
/// middle two. Panics on an empty slice (callers hold at least one measurement); use [`median`] when
/// there may be none.
pub fn median_sorted(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        0.5 * (xs[n / 2 - 1] + xs[n / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_counts_take_the_middle_and_even_ones_the_mean_of_the_middle_two() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut [7.0]), Some(7.0));
        assert_eq!(median(&mut []), None);
        assert_eq!(median_or_zero(vec![]), 0.0);
        assert_eq!(median_or_zero(vec![2.0, 1.0]), 1.5);
        assert_eq!(median_sorted(&[1.0, 2.0, 10.0, 11.0]), 6.0);
    }

    #[test]
    fn a_nan_sorts_last_instead_of_scrambling_the_order() {
        let mut v = [f64::NAN, 1.0, 3.0];
        assert_eq!(median(&mut v), Some(3.0));
        assert!(v[2].is_nan());
    }

    #[test]
    fn halving_the_sum_and_dividing_it_by_two_are_the_same_bits() {
        // The copies this replaced wrote `0.5 * (a + b)` and `(a + b) / 2.0`; both scale by a power of
        // two, which IEEE 754 does exactly, so one formula keeps every figure byte-identical.
        for (a, b) in [(0.1, 0.2), (1e308, 1e308), (5e-324, 5e-324), (-3.3, 7.7)] {
            assert_eq!((0.5f64 * (a + b)).to_bits(), ((a + b) / 2.0f64).to_bits());
        }
    }
}
