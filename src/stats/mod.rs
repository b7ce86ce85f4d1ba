//! Statistics of the paired comparison (spec §4) and of the mechanism signature (spec §5).

pub mod bootstrap;
pub mod permutation;
pub mod rank;
pub mod wilcoxon;

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

/// The verdict of spec §4.8.
pub fn verdict(p_value: Option<f64>, delta_mean: Option<f64>, alpha: f64) -> &'static str {
    match (p_value, delta_mean) {
        (Some(p), Some(d)) if p < alpha && d < 0.0 => "significant win",
        (Some(p), Some(d)) if p < alpha && d > 0.0 => "significant loss",
        _ => "no significant win",
    }
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

    #[test]
    fn verdict_table() {
        assert_eq!(verdict(Some(0.01), Some(-1.0), 0.05), "significant win");
        assert_eq!(verdict(Some(0.01), Some(1.0), 0.05), "significant loss");
        assert_eq!(verdict(Some(0.05), Some(-1.0), 0.05), "no significant win");
        assert_eq!(verdict(Some(0.2), Some(-1.0), 0.05), "no significant win");
        assert_eq!(verdict(Some(0.01), Some(0.0), 0.05), "no significant win");
        assert_eq!(verdict(None, Some(-1.0), 0.05), "no significant win");
    }
}
