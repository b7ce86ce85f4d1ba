//! The Monte Carlo path of the sign-flip test (spec §4.7, n_pairs > 20) against the exact
//! p-value, which this test computes itself by enumerating all 2^n sign vectors.
//!
//! `sign_flip_p` enumerates exactly whenever n <= 20, so the Monte Carlo path is only
//! reachable with n >= 21; up to n = 24 (16.8 M sign vectors) the exact answer is still
//! cheap here. The engine reports p = hits / permutations (no +1 correction), so its
//! standard error around the exact p is sqrt(p (1 - p) / permutations), and a correct
//! sampler lands within 4 of them (two-sided chance of missing ~6e-5 per check).

use rdbench_core::stats::permutation::{EXACT_MAX_PAIRS, SignFlipMethod, sign_flip_p};

/// The default `permutations` of the config (spec §4.7).
const PERMUTATIONS: usize = 10_000;

/// Exact two-sided p: the fraction of all 2^n sign vectors whose |sum| reaches |observed
/// sum| (|mean| compares the same way, n being fixed). Meet in the middle: the 2^(n/2)
/// signed sums of each half, one half sorted, then two binary searches per sum of the
/// other. Ties use the engine's relative tolerance (100 eps |observed|, scipy's).
fn exact_p(diffs: &[f64]) -> f64 {
    let n = diffs.len();
    let half_sums = |d: &[f64]| -> Vec<f64> {
        (0..1u64 << d.len())
            .map(|mask| d.iter().enumerate().map(|(i, &v)| if mask >> i & 1 == 1 { -v } else { v }).sum())
            .collect()
    };
    let (left, right) = diffs.split_at(n / 2);
    let a = half_sums(left);
    let mut b = half_sums(right);
    b.sort_by(f64::total_cmp);
    let observed = diffs.iter().sum::<f64>().abs();
    let threshold = observed - (observed * 100.0 * f64::EPSILON).abs();
    let hits: usize = a
        .iter()
        .map(|&s| {
            // s + t >= threshold  or  s + t <= -threshold
            let upper = b.len() - b.partition_point(|&t| t < threshold - s);
            let lower = b.partition_point(|&t| t <= -threshold - s);
            upper + lower
        })
        .sum();
    hits as f64 / (1u64 << n) as f64
}

/// Dyadic diffs (integers / 64): every signed sum is exact in f64, so the exact p above does
/// not depend on the order in which it adds. The integers were picked so that the exact p
/// lands near the named value; `run_case` checks that it still does.
fn dyadic(k: &[i32]) -> Vec<f64> {
    k.iter().map(|&v| v as f64 / 64.0).collect()
}

/// Monte Carlo p for several seeds and both permutation counts, each within 4 standard
/// errors of the exact p, with the method reported as Monte Carlo.
fn check_mc(label: &str, diffs: &[f64], exact: f64) {
    assert!(diffs.len() > EXACT_MAX_PAIRS, "{label}: n must exceed the exact limit to reach Monte Carlo");
    for permutations in [PERMUTATIONS, 40_000] {
        for seed in [20_240_611u64, 1, 2] {
            let (p, method) = sign_flip_p(diffs, permutations, seed);
            assert_eq!(method, SignFlipMethod::MonteCarlo { permutations, seed }, "{label}: method");
            // p is a count of hits over the draws.
            let hits = p * permutations as f64;
            assert!((hits - hits.round()).abs() < 1e-6, "{label}: p {p} is not hits / {permutations}");
            let se = (exact * (1.0 - exact) / permutations as f64).sqrt();
            assert!(
                (p - exact).abs() <= 4.0 * se,
                "{label} (n {}, {permutations} draws, seed {seed}): Monte Carlo p {p} vs exact {exact}, \
                 |diff| {:.5} > 4 se = {:.5}",
                diffs.len(),
                (p - exact).abs(),
                4.0 * se
            );
        }
    }
}

fn run_case(label: &str, k: &[i32], expected_range: std::ops::Range<f64>) {
    let diffs = dyadic(k);
    let exact = exact_p(&diffs);
    assert!(
        expected_range.contains(&exact),
        "{label}: exact p {exact} left the range {expected_range:?} this case is meant to cover"
    );
    check_mc(label, &diffs, exact);
}

#[test]
fn small_p_n21() {
    let k = [-36, -13, -9, -24, -13, -4, -21, -12, -35, 1, -24, 13, 30, 23, -20, -3, -16, -2, -28, -32, -12];
    run_case("small p, n 21", &k, 0.008..0.012);
}

#[test]
fn p_near_half_n22() {
    let k = [-6, 4, -18, 19, 5, 25, 16, -3, 3, 4, 6, -46, -14, 44, 7, 34, -5, -25, -1, -2, -10, 29];
    run_case("p near 0.5, n 22", &k, 0.45..0.55);
}

#[test]
fn p_near_alpha_n23() {
    let k = [-9, -3, -17, -6, 12, 1, -27, -25, -41, 16, 12, 9, -24, 27, -46, 13, 10, -27, -6, -33, -17, -24, 4];
    run_case("p near 0.05, n 23", &k, 0.04..0.06);
}

#[test]
fn small_p_n24() {
    let k =
        [-19, -18, 23, 6, 14, 13, -12, -22, -3, -19, -5, -36, 19, -19, -30, -8, -21, -16, -32, -19, -28, 23, -13, -33];
    run_case("small p, n 24", &k, 0.008..0.013);
}

#[test]
fn ties_in_exact_arithmetic_count_as_hits() {
    // Tenths are not dyadic, so f64 sums of them round, and differently for different sign
    // vectors: for these diffs 6.4% of all sign vectors have |sum| equal to the observed one
    // in exact arithmetic but below it in f64 (checked below). They must count as hits, as
    // the engine's relative tolerance makes them; without it the Monte Carlo p would drop by
    // ~0.064, 13 standard errors at 10,000 draws. The exact p comes from the integers (their
    // sums are exact and p does not depend on the scale).
    let k: [i64; 21] = [1, 3, -7, 3, 7, 3, 1, 1, 1, -1, 1, -1, 1, 1, 1, -3, 3, 1, 7, -1, -7];
    let diffs: Vec<f64> = k.iter().map(|&v| v as f64 / 10.0).collect();
    let exact = exact_p(&k.map(|v| v as f64));
    assert!((0.35..0.45).contains(&exact), "exact p {exact}");

    // The premise, summing left to right with f64's `Sum` as the engine does.
    let signed = |mask: u64, i: usize| mask >> i & 1 == 1;
    let observed = diffs.iter().sum::<f64>().abs();
    let target = k.iter().sum::<i64>().abs();
    let rounded_below = (0..1u64 << k.len())
        .filter(|&mask| {
            let int: i64 = k.iter().enumerate().map(|(i, &v)| if signed(mask, i) { -v } else { v }).sum();
            let float: f64 = diffs.iter().enumerate().map(|(i, &v)| if signed(mask, i) { -v } else { v }).sum();
            int.abs() == target && float.abs() < observed
        })
        .count();
    let share = rounded_below as f64 / (1u64 << k.len()) as f64;
    assert!(share > 0.05, "only {share} of the sign vectors are ties rounded below: the case tests nothing");

    check_mc("tenths with rounding ties, n 21", &diffs, exact);
}

#[test]
fn method_switches_at_the_exact_limit() {
    // n = 20 is still enumerated (2^20 assignments), whatever `permutations` says.
    let d20 = dyadic(&[5, -3, 7, 2, -9, 4, 6, -1, 3, 8, -2, 5, 1, -6, 7, 3, -4, 2, 9, -5]);
    let (p, method) = sign_flip_p(&d20, PERMUTATIONS, 7);
    assert_eq!(method, SignFlipMethod::Exact { assignments: 1 << 20 });
    assert!((p - exact_p(&d20)).abs() < 1e-15, "exact path {p} vs brute force {}", exact_p(&d20));
    // n = 21 is sampled, reproducibly for one seed and differently for another.
    let mut d21 = d20.clone();
    d21.push(3.0 / 64.0);
    let (p1, m1) = sign_flip_p(&d21, PERMUTATIONS, 7);
    let (p2, _) = sign_flip_p(&d21, PERMUTATIONS, 7);
    assert_eq!(m1, SignFlipMethod::MonteCarlo { permutations: PERMUTATIONS, seed: 7 });
    assert_eq!(p1, p2, "same seed, same p");
    // Other seeds draw other sign vectors; one of them could hit the same count by chance,
    // three all doing so would mean the seed is ignored.
    let others: Vec<f64> = (8..11).map(|s| sign_flip_p(&d21, PERMUTATIONS, s).0).collect();
    assert!(others.iter().any(|&p| p != p1), "seed ignored: {p1} for seeds 7..11 ({others:?})");
}
