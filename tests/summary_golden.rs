//! `summary::render` of a fixed hand-built report, compared with the committed text in
//! tests/fixtures/summary_golden.txt character for character. After a deliberate change to
//! the summary, rewrite the fixture with `RDBENCH_BLESS=1 cargo test --release --test
//! summary_golden` and review its diff.

mod common;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase};
use rdbench_core::report::{Environment, Report, build};

/// Four paired seeds, seed 3's idea run diverged; probes in both regimes; runs from two
/// backends, two of them reused.
fn report() -> Report {
    let cfg = BenchConfig { n_seeds: 4, n_sweep_seeds: 1, lrs: vec![0.003, 0.01], ..BenchConfig::default() };
    let sweep = [(0.003, 0.0021, 0.0025), (0.01, 0.0012, 0.0011)];
    let base = [Some(0.0010), Some(0.0012), Some(0.0011), Some(0.0013)];
    let idea = [Some(0.0009), Some(0.0013), Some(0.0008), None];
    let mut runs = bench_runs(&sweep, 0.01, &base, &idea);
    for r in runs.iter_mut().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full) {
        let s = r.seed as f64;
        r.probes = vec![
            probe_record(0, Some(0.2 + 0.01 * s), 1, Some(1.0), Some(0.9)),
            probe_record(1, Some(0.02), 4, Some(0.995), Some(0.97)),
            probe_record(2, Some(0.01), 8, Some(0.999), Some(0.98)),
        ];
        r.mean_stored_states = Some(20.0 + s);
    }
    runs.iter_mut().filter(|r| r.phase == Phase::Sweep).for_each(|r| r.backend = "webgpu".into());
    let env = Environment {
        backend: "cpu-flex".into(),
        adapter: "burn-flex (CPU)".into(),
        platform: "native".into(),
        rdbench_version: "0.1.0".into(),
        burn_version: "0.22.1".into(),
        started_at: "2026-12-01T12:00:00Z".into(),
        wall_time_s: 42.5,
        phase_wall_time_s: Default::default(),
        run_backends: Default::default(),
        reused_runs: 2,
        threads: 1,
        backend_note: String::new(),
        calibration: Vec::new(),
        build: String::new(),
    };
    build(&cfg.resolve().unwrap(), runs, Some(env))
}

#[test]
fn summary_matches_the_golden_text() {
    let got = rdbench::summary::bench::render(&report());
    let path = format!("{}/tests/fixtures/summary_golden.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("RDBENCH_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}\nrendered:\n{got}"));
    assert!(got == want, "summary changed; rendered:\n{got}\n--- expected:\n{want}");
}

/// A baseline at the trivial predictor's error (0.12 against the pendulum's 0.1231): the
/// summary says each arm did not learn and calls the comparison void, keeping the test's
/// verdict as secondary text.
#[test]
fn a_baseline_that_did_not_learn_voids_the_verdict() {
    let cfg = BenchConfig { n_seeds: 4, n_sweep_seeds: 1, lrs: vec![0.01], ..BenchConfig::default() };
    let base = [Some(0.12), Some(0.13), Some(0.011), Some(0.125)];
    let idea = [Some(0.11), Some(0.12), Some(0.12), Some(0.12)];
    let r = build(&cfg.resolve().unwrap(), bench_runs(&[(0.01, 0.12, 0.12)], 0.01, &base, &idea), None);
    let got = rdbench::summary::bench::render(&r);
    for want in [
        "  baseline  did not learn (1 of 4 seeds learned)\n",
        "  idea      did not learn (0 of 4 seeds learned)\n",
        "verdict: VOID at this protocol: the baseline did not learn, so the MSE comparison says nothing \
         (the test reads no significant win, idea wins 3/4 pairs)\n",
    ] {
        assert!(got.contains(want), "{want:?} not in:\n{got}");
    }
    assert!(!got.contains("verdict: NO SIGNIFICANT WIN"), "{got}");
}
