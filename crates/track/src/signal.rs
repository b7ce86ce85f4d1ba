//! The numpy and scipy operations MNIST-1D's generator calls, in their own arithmetic:
//! `np.linspace`, `np.interp` (what `scipy.interpolate.interp1d(kind="linear")` delegates to
//! for 1-D float data), `scipy.ndimage.gaussian_filter1d` (mode "reflect", truncate 4) and
//! numpy's pairwise summation behind `mean` and `std`. Pinned against numpy and scipy
//! (`tests/fixtures/numpy_legacy.json`).

/// `np.linspace(start, stop, num)`: `i * step + start` with `step = (stop - start) / (num - 1)`,
/// and the last value exactly `stop`.
pub fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    if num == 1 {
        return vec![start];
    }
    let step = (stop - start) / (num - 1) as f64;
    let mut y: Vec<f64> = (0..num).map(|i| i as f64 * step + start).collect();
    if let Some(last) = y.last_mut() {
        *last = stop;
    }
    y
}

/// `np.interp(x, xp, fp)` for increasing `xp` and `x` within `[xp[0], xp[last]]`: the left
/// knot j with xp[j] <= x, its value where x is a knot, else `slope * (x - xp[j]) + fp[j]`.
pub fn interp(x: &[f64], xp: &[f64], fp: &[f64]) -> Vec<f64> {
    assert_eq!(xp.len(), fp.len(), "interp: xp and fp differ in length");
    let last = xp.len() - 1;
    x.iter()
        .map(|&v| {
            assert!(v >= xp[0] && v <= xp[last], "interp: {v} outside [{}, {}]", xp[0], xp[last]);
            // The last knot <= v (numpy's binary search; xp is increasing).
            let j = xp.partition_point(|&k| k <= v) - 1;
            if j == last || xp[j] == v {
                fp[j]
            } else {
                let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
                slope * (v - xp[j]) + fp[j]
            }
        })
        .collect()
}

/// `np.interp` of `fp` from `linspace(0, 1, len(fp))` onto `linspace(0, 1, n)`: MNIST-1D's
/// `interpolate(x, n)`.
pub fn resample(fp: &[f64], n: usize) -> Vec<f64> {
    interp(&linspace(0.0, 1.0, n), &linspace(0.0, 1.0, fp.len()), fp)
}

/// scipy's Gaussian kernel of `sigma` over `-radius..=radius`, normalised by its numpy sum.
fn gaussian_kernel(sigma: f64, radius: usize) -> Vec<f64> {
    let sigma2 = sigma * sigma;
    let r = radius as i64;
    let phi: Vec<f64> = (-r..=r).map(|x| (-0.5 / sigma2 * (x * x) as f64).exp()).collect();
    let total = pairwise_sum(&phi);
    phi.iter().map(|p| p / total).collect()
}

/// `scipy.ndimage.gaussian_filter1d(x, sigma)` with scipy's defaults (order 0, mode
/// "reflect": d c b a | a b c d | d c b a, truncate 4.0, so radius int(4 sigma + 0.5)), summed
/// as scipy's symmetric correlation does: x[i] w[0], then (x[i - j] + x[i + j]) w[j] for
/// j = radius down to 1.
pub fn gaussian_filter1d(x: &[f64], sigma: f64) -> Vec<f64> {
    let radius = (4.0 * sigma + 0.5) as usize;
    let w = gaussian_kernel(sigma, radius);
    let n = x.len() as i64;
    let at = |i: i64| -> f64 {
        // Half-sample reflection, repeated for a kernel wider than the signal.
        let period = 2 * n;
        let m = i.rem_euclid(period);
        x[(if m < n { m } else { period - 1 - m }) as usize]
    };
    (0..n)
        .map(|i| {
            let mut acc = x[i as usize] * w[radius];
            for j in (1..=radius as i64).rev() {
                acc += (at(i - j) + at(i + j)) * w[radius - j as usize];
            }
            acc
        })
        .collect()
}

/// numpy's pairwise summation (`pairwise_sum_DOUBLE`): blocks of up to 128 summed with
/// eight accumulators, larger arrays split in halves at a multiple of 8.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        a.iter().fold(0.0, |s, v| s + v)
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let full = n - n % 8;
        for block in a[8..full].chunks_exact(8) {
            for (acc, v) in r.iter_mut().zip(block) {
                *acc += v;
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for v in &a[full..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `x.mean()`.
pub fn mean(x: &[f64]) -> f64 {
    pairwise_sum(x) / x.len() as f64
}

/// `x.std()` (ddof 0): the square root of the mean squared deviation from the mean.
pub fn std(x: &[f64]) -> f64 {
    let m = mean(x);
    let sq: Vec<f64> = x.iter().map(|v| (v - m) * (v - m)).collect();
    (pairwise_sum(&sq) / x.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interp_hits_knots_exactly_and_is_linear_between() {
        let (xp, fp) = ([0.0, 1.0, 3.0], [2.0, 4.0, 0.0]);
        assert_eq!(interp(&[0.0, 0.5, 1.0, 2.0, 3.0], &xp, &fp), vec![2.0, 3.0, 4.0, 2.0, 0.0]);
    }

    #[test]
    fn the_filter_keeps_a_constant_and_reflects_at_the_ends() {
        let flat = gaussian_filter1d(&[3.0; 20], 2.0);
        assert!(flat.iter().all(|v| (v - 3.0).abs() < 1e-12), "{flat:?}");
        // A step at the left edge reflects into itself: the filtered ramp is symmetric.
        let x: Vec<f64> = (0..10).map(|i| if i < 5 { 1.0 } else { 0.0 }).collect();
        let y = gaussian_filter1d(&x, 1.0);
        for i in 0..10 {
            assert!((y[i] + y[9 - i] - 1.0).abs() < 1e-12, "{y:?}");
        }
    }

    #[test]
    fn pairwise_sum_adds_up() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(pairwise_sum(&v), 500_500.0);
        assert_eq!(pairwise_sum(&v[..13]), 91.0);
    }
}
