//! Two-sided paired sign-flip permutation test on the mean difference (spec §4.7).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Largest number of pairs enumerated exactly (2^20 sign vectors).
pub const EXACT_MAX_PAIRS: usize = 20;

/// How a p-value was computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum SignFlipMethod {
    /// All 2^n sign assignments.
    Exact {
        /// Sign assignments enumerated.
        assignments: u64,
    },
    /// Random sign vectors.
    MonteCarlo {
        /// Sign vectors drawn.
        permutations: usize,
        /// PRNG seed (ChaCha8).
        seed: u64,
    },
}

impl SignFlipMethod {
    /// How p was computed, in words (the summary and the page's card both show this).
    pub fn describe(&self) -> String {
        match self {
            SignFlipMethod::Exact { assignments } => format!("exact, {assignments} sign assignments"),
            SignFlipMethod::MonteCarlo { permutations, seed } => {
                format!("Monte Carlo, {permutations} sign vectors, seed {seed}")
            }
        }
    }
}

/// The smallest two-sided sign-flip p that `n` complete pairs can give: the observed sign
/// assignment and its mirror always count, so the exact test never goes below 2 / 2^n. Past
/// `EXACT_MAX_PAIRS` the p is a Monte Carlo share (hits / permutations), which can be 0.
pub fn min_reachable_p(n: usize) -> f64 {
    match n {
        0 => 1.0,
        n if n > EXACT_MAX_PAIRS => 0.0,
        n => 2f64.powi(1 - n as i32).min(1.0),
    }
}

/// The fewest pairs whose smallest reachable p is below `alpha` (None if `alpha` is not in (0, 1)).
pub fn pairs_needed(alpha: f64) -> Option<usize> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    (1..=EXACT_MAX_PAIRS + 1).find(|&n| min_reachable_p(n) < alpha)
}

/// The warning before a bench of `n_pairs` paired seeds whose p can never fall below `alpha`
/// (the CLI prints it, the page shows it under the form); None when alpha is reachable.
pub fn unreachable_alpha_warning(n_pairs: usize, alpha: f64) -> Option<String> {
    let min_p = min_reachable_p(n_pairs);
    if min_p < alpha {
        return None;
    }
    let need = pairs_needed(alpha).map_or(".".into(), |n| format!(" (it needs at least {n} paired seeds)."));
    Some(format!(
        "With {n_pairs} paired seed{} the smallest p the sign-flip test can give is {min_p}, not below \
         α = {alpha}: this run cannot be significant either way{need}",
        if n_pairs == 1 { "" } else { "s" }
    ))
}

/// Whether a null statistic (a sum or mean of flipped diffs) is at least as extreme as the
/// observed one, two-sided, counting values equal in exact arithmetic as ties.
pub fn as_extreme(null: f64, observed: f64) -> bool {
    null.abs() >= observed.abs() - super::tie_tolerance(observed)
}

/// p = fraction of sign assignments whose |mean| >= |observed mean|, and how it was made.
pub fn sign_flip_p(diffs: &[f64], permutations: usize, seed: u64) -> (f64, SignFlipMethod) {
    let n = diffs.len();
    assert!(n > 0, "sign-flip test needs at least one pair");
    let observed: f64 = diffs.iter().sum::<f64>();
    let flipped_sum = |signs: &dyn Fn(usize) -> bool| -> f64 {
        diffs.iter().enumerate().map(|(i, &d)| if signs(i) { -d } else { d }).sum::<f64>()
    };
    if n <= EXACT_MAX_PAIRS {
        let total = 1u64 << n;
        let hits = (0..total).filter(|&mask| as_extreme(flipped_sum(&|i| mask >> i & 1 == 1), observed)).count();
        (hits as f64 / total as f64, SignFlipMethod::Exact { assignments: total })
    } else {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut signs = vec![false; n];
        let mut hits = 0usize;
        for _ in 0..permutations {
            signs.iter_mut().for_each(|s| *s = rng.random::<bool>());
            if as_extreme(flipped_sum(&|i| signs[i]), observed) {
                hits += 1;
            }
        }
        (hits as f64 / permutations as f64, SignFlipMethod::MonteCarlo { permutations, seed })
    }
}

/// The exact null distribution of the mean difference (2^n values, n <= 16), for charts.
pub fn null_distribution(diffs: &[f64]) -> Vec<f64> {
    let n = diffs.len();
    assert!(n <= 16, "null distribution is enumerated for at most 16 pairs");
    (0..1u64 << n)
        .map(|mask| {
            diffs.iter().enumerate().map(|(i, &d)| if mask >> i & 1 == 1 { -d } else { d }).sum::<f64>() / n as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_derived() {
        // n = 1: both assignments have |mean| = |d|.
        assert_eq!(sign_flip_p(&[0.3], 100, 0).0, 1.0);
        // n = 3, all equal: only the two all-same-sign vectors reach |mean| = d.
        assert_eq!(sign_flip_p(&[1.0, 1.0, 1.0], 100, 0).0, 0.25);
        // exact zero mean: every assignment counts.
        assert_eq!(sign_flip_p(&[1.0, -1.0], 100, 0).0, 1.0);
    }

    #[test]
    fn smallest_reachable_p() {
        assert_eq!(min_reachable_p(4), 0.125);
        assert_eq!(min_reachable_p(1), 1.0);
        assert_eq!(min_reachable_p(8), 2.0 / 256.0);
        assert_eq!(min_reachable_p(EXACT_MAX_PAIRS + 1), 0.0);
        assert_eq!(pairs_needed(0.05), Some(6));
        assert_eq!(pairs_needed(0.2), Some(4));
        assert_eq!(pairs_needed(1.5), None);
        // The exact p of n equal-signed pairs is the smallest reachable one.
        for n in 1..=8 {
            assert_eq!(sign_flip_p(&vec![0.1; n], 100, 0).0, min_reachable_p(n), "n = {n}");
        }
        assert_eq!(
            unreachable_alpha_warning(4, 0.05).unwrap(),
            "With 4 paired seeds the smallest p the sign-flip test can give is 0.125, not below α = 0.05: \
             this run cannot be significant either way (it needs at least 6 paired seeds)."
        );
        assert_eq!(unreachable_alpha_warning(6, 0.05), None);
    }

    #[test]
    fn monte_carlo_is_seeded_and_close_to_exact() {
        let d: Vec<f64> = (0..22).map(|i| if i % 3 == 0 { -0.5 } else { 0.2 + i as f64 * 0.01 }).collect();
        let (p1, m) = sign_flip_p(&d, 20_000, 7);
        let (p2, _) = sign_flip_p(&d, 20_000, 7);
        assert_eq!(p1, p2);
        assert!(matches!(m, SignFlipMethod::MonteCarlo { permutations: 20_000, seed: 7 }));
        assert_eq!(m.describe(), "Monte Carlo, 20000 sign vectors, seed 7");
        assert_eq!(sign_flip_p(&[0.3], 100, 0).1.describe(), "exact, 2 sign assignments");
        // the first 20 pairs exactly, as a sanity anchor for the order of magnitude
        let (pe, _) = sign_flip_p(&d[..20], 0, 0);
        assert!(p1 > 0.0 && p1 < 1.0 && pe > 0.0 && pe < 1.0);
    }
}
