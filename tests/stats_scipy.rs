//! Statistics against scipy (tests/fixtures/stats_scipy.json): exact sign-flip p
//! (permutation_test on the mean), Wilcoxon signed-rank p with scipy's method choice (exact,
//! permutation with ties/zeros, asymptotic), Spearman's rho and the normal tail.

mod common;
use common::*;
use rdbench_core::stats::permutation::{SignFlipMethod, null_distribution, sign_flip_p};
use rdbench_core::stats::rank::spearman;
use rdbench_core::stats::wilcoxon::{WilcoxonMethod, normal_sf, wilcoxon};

#[test]
fn seed_report_diffs_give_the_exact_p() {
    let v = fixture("stats_scipy.json");
    let d = flat(&v["cases"]["seed_report"]["diffs"]);
    let (p, method) = sign_flip_p(&d, 10_000, 0);
    assert_eq!(p, 0.171875);
    assert_eq!(method, SignFlipMethod::Exact { assignments: 256 });
}

#[test]
fn sign_flip_matches_scipy_permutation_test() {
    let v = fixture("stats_scipy.json");
    for (name, case) in v["cases"].as_object().unwrap() {
        let Some(want) = case["sign_flip_p"].as_f64() else { continue };
        let (p, _) = sign_flip_p(&flat(&case["diffs"]), 10_000, 0);
        assert!((p - want).abs() < 1e-12, "{name}: {p} vs scipy {want}");
    }
}

#[test]
fn wilcoxon_matches_scipy() {
    let v = fixture("stats_scipy.json");
    let expected_method = |name: &str| match name {
        "ties10" | "zeros9" => WilcoxonMethod::Permutation,
        "ties15" | "normal60" => WilcoxonMethod::Asymptotic,
        _ => WilcoxonMethod::Exact,
    };
    for (name, case) in v["cases"].as_object().unwrap() {
        let w = wilcoxon(&flat(&case["diffs"]));
        let want = case["wilcoxon_p"].as_f64().unwrap();
        let p = w.p_value.unwrap();
        assert!((p - want).abs() < 1e-9, "{name}: p {p} vs scipy {want}");
        assert_eq!(w.statistic, case["wilcoxon_statistic"].as_f64().unwrap(), "{name}: statistic");
        assert_eq!(w.method, expected_method(name), "{name}: method");
    }
}

#[test]
fn wilcoxon_of_all_zeros_has_no_p() {
    assert_eq!(wilcoxon(&[0.0, 0.0]).p_value, None);
}

#[test]
fn spearman_matches_scipy_with_ties() {
    let v = fixture("stats_scipy.json");
    for case in v["spearman"].as_array().unwrap() {
        let rho = spearman(&flat(&case["a"]), &flat(&case["b"]));
        let want = case["rho"].as_f64().unwrap();
        assert!((rho - want).abs() < 1e-12, "{rho} vs scipy {want}");
    }
}

#[test]
fn normal_tail_matches_scipy() {
    let v = fixture("stats_scipy.json");
    for case in v["normal_sf"].as_array().unwrap() {
        let z = case["z"].as_f64().unwrap();
        let want = case["sf"].as_f64().unwrap();
        assert!((normal_sf(z) - want).abs() <= 1e-14 + 1e-12 * want, "sf({z})");
    }
}

#[test]
fn null_distribution_is_symmetric_and_gives_the_same_p() {
    let v = fixture("stats_scipy.json");
    let d = flat(&v["cases"]["seed_report"]["diffs"]);
    let null = null_distribution(&d);
    assert_eq!(null.len(), 256);
    let obs = d.iter().sum::<f64>() / d.len() as f64;
    let p = null.iter().filter(|m| m.abs() >= obs.abs() * (1.0 - 1e-12)).count() as f64 / 256.0;
    assert_eq!(p, 0.171875);
    let mut sorted = null.clone();
    sorted.sort_by(f64::total_cmp);
    assert!((sorted[0] + sorted[255]).abs() < 1e-15);
}
