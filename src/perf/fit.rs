//! A small, deterministic Nelder–Mead minimiser for fitting the model's terms to calibration rows. The
//! problems are tiny (ten parameters, a few dozen rows), so a dependency-free simplex with restarts is
//! enough and keeps every fit reproducible bit for bit.

/// Minimise `f` from `x0`; `step` is the initial simplex edge. Runs `restarts` rounds of at most `iters`
/// iterations, each restarted from the best point with a smaller simplex (Nelder–Mead stalls otherwise).
pub fn minimise(f: &dyn Fn(&[f64]) -> f64, x0: &[f64], step: f64, iters: usize, restarts: usize) -> (Vec<f64>, f64) {
    let mut best = x0.to_vec();
    let mut best_v = f(&best);
    let mut edge = step;
    for _ in 0..restarts.max(1) {
        let (x, v) = simplex(f, &best, edge, iters);
        if v <= best_v {
            best = x;
            best_v = v;
        }
        edge *= 0.4;
    }
    (best, best_v)
}

fn simplex(f: &dyn Fn(&[f64]) -> f64, x0: &[f64], step: f64, iters: usize) -> (Vec<f64>, f64) {
    let n = x0.len();
    let mut pts: Vec<Vec<f64>> = vec![x0.to_vec()];
    for i in 0..n {
        let mut y = x0.to_vec();
        y[i] += step;
        pts.push(y);
    }
    let mut vals: Vec<f64> = pts.iter().map(|p| f(p)).collect();
    for _ in 0..iters {
        let mut order: Vec<usize> = (0..=n).collect();
        order.sort_by(|&a, &b| vals[a].total_cmp(&vals[b]));
        pts = order.iter().map(|&i| pts[i].clone()).collect();
        vals = order.iter().map(|&i| vals[i]).collect();
        if (vals[n] - vals[0]).abs() <= 1e-12 * (1.0 + vals[0].abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| pts[..n].iter().map(|p| p[j]).sum::<f64>() / n as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> { (0..n).map(|j| centroid[j] + t * (pts[n][j] - centroid[j])).collect() };
        let xr = along(-1.0);
        let fr = f(&xr);
        if fr < vals[0] {
            let xe = along(-2.0);
            let fe = f(&xe);
            if fe < fr {
                pts[n] = xe;
                vals[n] = fe;
            } else {
                pts[n] = xr;
                vals[n] = fr;
            }
        } else if fr < vals[n - 1] {
            pts[n] = xr;
            vals[n] = fr;
        } else {
            let xc = along(0.5);
            let fc = f(&xc);
            if fc < vals[n] {
                pts[n] = xc;
                vals[n] = fc;
            } else {
                for i in 1..=n {
                    let shrunk: Vec<f64> = (0..n).map(|j| pts[0][j] + 0.5 * (pts[i][j] - pts[0][j])).collect();
                    vals[i] = f(&shrunk);
                    pts[i] = shrunk;
                }
            }
        }
    }
    let i = (0..=n).min_by(|&a, &b| vals[a].total_cmp(&vals[b])).unwrap_or(0);
    (pts[i].clone(), vals[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_rosenbrock_valley() {
        let f = |x: &[f64]| (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
        let (x, v) = minimise(&f, &[-1.2, 1.0], 0.5, 5000, 4);
        assert!(v < 1e-8, "{v}");
        assert!((x[0] - 1.0).abs() < 1e-3 && (x[1] - 1.0).abs() < 1e-3, "{x:?}");
    }
}
