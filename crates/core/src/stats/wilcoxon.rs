//! Wilcoxon signed-rank test, two-sided, following scipy.stats.wilcoxon's defaults
//! (zero_method = "wilcox", no continuity correction, method = "auto"):
//! exact null distribution without ties or zeros, an exact sign-flip enumeration of the
//! rank statistic when there are ties or zeros and n <= 13, else the normal approximation.

use serde::{Deserialize, Serialize};

/// Which null distribution produced the p-value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WilcoxonMethod {
    /// Exact distribution of W+ (no ties, no zeros).
    Exact,
    /// All sign assignments of the ranks (ties or zeros, n <= 13).
    Permutation,
    /// Normal approximation with tie correction.
    Asymptotic,
}

/// Result of the test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Wilcoxon {
    /// min(W+, W-).
    pub statistic: f64,
    /// Two-sided p-value (null when no non-zero difference is left).
    pub p_value: Option<f64>,
    /// How p was computed.
    pub method: WilcoxonMethod,
}

/// Two-sided Wilcoxon signed-rank test of `diffs`.
pub fn wilcoxon(diffs: &[f64]) -> Wilcoxon {
    let n_total = diffs.len();
    let nz: Vec<f64> = diffs.iter().copied().filter(|&d| d != 0.0).collect();
    let has_zeros = nz.len() < n_total;
    let abs: Vec<f64> = nz.iter().map(|d| d.abs()).collect();
    let (ranks, ties) = super::rank::average_ranks(&abs);
    let has_ties = ties.iter().any(|&t| t > 1);
    let r_plus: f64 = nz.iter().zip(&ranks).filter(|(d, _)| **d > 0.0).map(|(_, r)| r).sum();
    let r_minus: f64 = nz.iter().zip(&ranks).filter(|(d, _)| **d < 0.0).map(|(_, r)| r).sum();
    let statistic = r_plus.min(r_minus);
    let count = nz.len();

    let method = if n_total > 50 {
        WilcoxonMethod::Asymptotic
    } else if !(has_ties || has_zeros) {
        WilcoxonMethod::Exact
    } else if n_total <= 13 {
        WilcoxonMethod::Permutation
    } else {
        WilcoxonMethod::Asymptotic
    };
    if count == 0 {
        return Wilcoxon { statistic, p_value: None, method };
    }
    let p = match method {
        WilcoxonMethod::Exact => {
            let pmf = exact_pmf(count);
            let cdf = |k: f64| pmf[..=(k.ceil() as usize).min(pmf.len() - 1)].iter().sum::<f64>();
            let sf = |k: f64| pmf[(k.floor() as usize).min(pmf.len())..].iter().sum::<f64>();
            (2.0 * cdf(r_plus).min(sf(r_plus))).clamp(0.0, 1.0)
        }
        WilcoxonMethod::Permutation => {
            // Flip the signs of the non-zero differences; zeros stay out of the statistic.
            let total = 1u64 << count;
            let gamma = super::tie_tolerance(r_plus);
            let (mut le, mut ge) = (0u64, 0u64);
            for mask in 0..total {
                let s: f64 = ranks.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, r)| r).sum();
                le += (s <= r_plus + gamma) as u64;
                ge += (s >= r_plus - gamma) as u64;
            }
            // Sign assignments of the zeros multiply both counts and the total alike.
            (2.0 * le.min(ge) as f64 / total as f64).clamp(0.0, 1.0)
        }
        WilcoxonMethod::Asymptotic => {
            let c = count as f64;
            let mn = c * (c + 1.0) / 4.0;
            let tie: f64 = ties.iter().map(|&t| (t * t * t - t) as f64).sum();
            let se = ((c * (c + 1.0) * (2.0 * c + 1.0) - tie / 2.0) / 24.0).sqrt();
            let z = (r_plus - mn) / se;
            2.0 * normal_sf(z.abs())
        }
    };
    Wilcoxon { statistic, p_value: Some(p), method }
}

/// Probability of each W+ = 0..n(n+1)/2 under the null, n non-zero untied differences.
fn exact_pmf(n: usize) -> Vec<f64> {
    let max = n * (n + 1) / 2;
    let mut counts = vec![0.0f64; max + 1];
    counts[0] = 1.0;
    for k in 1..=n {
        for s in (k..=max).rev() {
            counts[s] += counts[s - k];
        }
    }
    let total = 2f64.powi(n as i32);
    counts.into_iter().map(|c| c / total).collect()
}

/// Upper tail of the standard normal, via libm's erfc.
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z / std::f64::consts::SQRT_2)
}
