//! Percentile bootstrap confidence interval of a mean, from a seeded PRNG.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 95% percentile CI of the mean of `xs` from `resamples` resamples with replacement.
/// Percentiles use linear interpolation between order statistics (numpy's default).
pub fn mean_ci95(xs: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let n = xs.len();
    assert!(n > 0 && resamples > 0);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| xs[rng.random_range(0..n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    (quantile_sorted(&means, 0.025), quantile_sorted(&means, 0.975))
}

/// Quantile `q` of sorted values, linear interpolation.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_sample_has_a_point_interval() {
        assert_eq!(mean_ci95(&[2.5; 6], 500, 1), (2.5, 2.5));
    }

    #[test]
    fn interval_brackets_the_mean_and_is_seeded() {
        let xs = [1.0, 2.0, 3.0, 4.0, 10.0];
        let (lo, hi) = mean_ci95(&xs, 4000, 3);
        assert!(lo < 4.0 && 4.0 < hi, "{lo} {hi}");
        assert!(lo >= 1.0 && hi <= 10.0);
        assert_eq!(mean_ci95(&xs, 4000, 3), (lo, hi));
    }

    #[test]
    fn quantiles_interpolate() {
        let s = [0.0, 10.0];
        assert_eq!(quantile_sorted(&s, 0.25), 2.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
    }
}
