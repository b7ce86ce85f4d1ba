//! Statistics of the paired comparison (spec §4) and of the mechanism signature (spec §5).

pub mod bootstrap;
pub mod permutation;
pub mod rank;
pub mod verdict;
pub mod wilcoxon;

pub use verdict::Verdict;

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Standard deviation with `ddof` delta degrees of freedom (spec: ddof = 0 for `std`).
pub fn std(xs: &[f64], ddof: usize) -> f64 {
    if xs.len() <= ddof {
        return f64::NAN;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - ddof) as f64).sqrt()
}

/// Paired effect size d_z = mean(diff) / sd(diff, ddof = 1); NaN when undefined.
pub fn cohens_dz(diffs: &[f64]) -> f64 {
    mean(diffs) / std(diffs, 1)
}

/// Relative tolerance used when comparing a null statistic with the observed one, as scipy
/// does, so that values equal in exact arithmetic count as ties.
pub(crate) fn tie_tolerance(observed: f64) -> f64 {
    (observed * 100.0 * f64::EPSILON).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_population_and_sample() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&xs), 5.0);
        assert_eq!(std(&xs, 0), 2.0);
        assert!((std(&xs, 1) - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!(std(&[1.0], 1).is_nan());
    }
}
