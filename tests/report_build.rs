//! The report built from hand-made runs: diverged full runs leave their pair out of every
//! comparison number (and say so), never count as an idea win, stay out of the memory
//! means; runs from several backends are reported as such; validation agrees with build.

mod common;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase};
use rdbench_core::report::{DropReason, DroppedPair, Environment, ProblemKind, Report, build, validate_json};
use rdbench_core::stats::Verdict;
use serde_json::Value;

fn cfg(n_seeds: usize) -> BenchConfig {
    BenchConfig { n_seeds, n_sweep_seeds: 1, lrs: vec![0.003, 0.01], epochs: 2, ..BenchConfig::default() }
}

const SWEEP: [(f64, f64, f64); 2] = [(0.003, 0.2, 0.25), (0.01, 0.1, 0.12)];

fn environment() -> Environment {
    Environment {
        backend: "cpu-flex".into(),
        adapter: "burn-flex (CPU)".into(),
        platform: "native".into(),
        rdbench_version: "0.1.0".into(),
        burn_version: "0.22.1".into(),
        started_at: "2026-12-01T12:00:00Z".into(),
        wall_time_s: 10.0,
        phase_wall_time_s: Default::default(),
        run_backends: Default::default(),
        reused_runs: 0,
        threads: 1,
        backend_note: String::new(),
        calibration: Vec::new(),
        build: String::new(),
    }
}

fn valid(r: &Report) {
    validate_json(&r.to_json()).unwrap_or_else(|p| panic!("{p:?}"));
}

#[test]
fn a_diverged_baseline_run_drops_its_pair_and_is_no_idea_win() {
    // Seed 1's baseline diverged. The idea loses every complete pair.
    let base = [Some(0.10), None, Some(0.10), Some(0.10), Some(0.10)];
    let idea = [Some(0.11), Some(0.05), Some(0.12), Some(0.13), Some(0.14)];
    let r = build(
        &cfg(5).resolve().unwrap(),
        consistent(&cfg(5), bench_runs(&SWEEP, 0.01, &base, &idea)),
        Some(environment()),
    );
    let c = &r.comparison;
    assert_eq!(c.per_seed_diffs[1], None);
    assert_eq!(c.n_pairs, 4);
    // Before: a diverged baseline scored +infinity, so seed 1 counted as an idea win.
    assert_eq!(c.idea_wins, 0);
    // Before: null, because the baseline's mean is null. Now over the 4 complete pairs.
    let want = (0.11 + 0.12 + 0.13 + 0.14) / 4.0 - 0.10;
    assert!((c.delta_mean.unwrap() - want).abs() < 1e-12, "{:?}", c.delta_mean);
    assert_eq!(r.baseline.full.mean, None, "spec: an arm with a diverged run has a null mean");
    assert!(r.idea.mean.is_some());
    // 4 pairs, all positive: exact p = 2 / 16, not below alpha.
    assert_eq!(c.p_value, Some(0.125));
    assert_eq!(c.verdict, Verdict::NoSignificantWin);
    let st = r.statistics.as_ref().unwrap();
    assert_eq!(st.dropped_pairs, vec![DroppedPair { seed: 1, reason: DropReason::BaselineDiverged }]);
    let w = r.warnings.as_ref().unwrap();
    assert!(w.iter().any(|w| w.contains("1 of 5 pairs left out") && w.contains("seed 1 (the baseline run diverged)")));
    valid(&r);
}

#[test]
fn a_diverged_idea_run_is_never_a_win_and_the_verdict_uses_complete_pairs() {
    // Six complete pairs where the idea wins clearly, and one idea divergence.
    let base = [Some(0.2), Some(0.2), Some(0.2), Some(0.2), Some(0.2), Some(0.2), Some(0.2)];
    let idea = [Some(0.1), Some(0.11), None, Some(0.12), Some(0.1), Some(0.13), Some(0.1)];
    let r = build(
        &cfg(7).resolve().unwrap(),
        consistent(&cfg(7), bench_runs(&SWEEP, 0.01, &base, &idea)),
        Some(environment()),
    );
    let c = &r.comparison;
    assert_eq!((c.idea_wins, c.n_pairs), (6, 6));
    // 6 pairs all negative: exact p = 2 / 64 < 0.05, and delta_mean < 0: a win, judged on
    // the pairs that exist (before: delta_mean null, so never a verdict).
    assert_eq!(c.p_value, Some(2.0 / 64.0));
    assert!(c.delta_mean.unwrap() < 0.0);
    assert_eq!(c.verdict, Verdict::SignificantWin);
    assert!(c.system_worked);
    assert_eq!(r.idea.mean, None);
    assert_eq!(
        r.statistics.as_ref().unwrap().dropped_pairs,
        vec![DroppedPair { seed: 2, reason: DropReason::IdeaDiverged }]
    );
    valid(&r);
}

#[test]
fn validation_counts_wins_and_delta_mean_like_build() {
    let base = [Some(0.10), None, Some(0.10)];
    let idea = [Some(0.11), Some(0.05), None];
    let r = build(
        &cfg(3).resolve().unwrap(),
        consistent(&cfg(3), bench_runs(&SWEEP, 0.01, &base, &idea)),
        Some(environment()),
    );
    assert_eq!(r.statistics.as_ref().unwrap().dropped_pairs.len(), 2);
    assert_eq!(r.statistics.as_ref().unwrap().dropped_pairs[1].reason, DropReason::IdeaDiverged);
    valid(&r);
    let v: Value = serde_json::from_str(&r.to_json()).unwrap();
    let problems = |edit: &dyn Fn(&mut Value)| {
        let mut v = v.clone();
        edit(&mut v);
        validate_json(&serde_json::to_string(&v).unwrap()).unwrap_err()
    };
    // The old rule (a diverged baseline makes an idea win) is now an arithmetic error.
    let p = problems(&|v| v["comparison"]["idea_wins"] = Value::from(1));
    assert!(p.iter().any(|p| p.path == "comparison.idea_wins" && p.kind == ProblemKind::Arithmetic), "{p:?}");
    let p = problems(&|v| v["comparison"]["delta_mean"] = Value::Null);
    assert!(p.iter().any(|p| p.path == "comparison.delta_mean"), "{p:?}");
    let p = problems(&|v| v["statistics"]["dropped_pairs"] = Value::Array(Vec::new()));
    assert!(p.iter().any(|p| p.path == "statistics.dropped_pairs"), "{p:?}");
}

#[test]
fn memory_means_leave_diverged_runs_out() {
    let base = [Some(0.1), Some(0.1), Some(0.1)];
    let idea = [Some(0.1), None, Some(0.1)];
    let mut runs = bench_runs(&SWEEP, 0.01, &base, &idea);
    for r in runs.iter_mut().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full) {
        // The diverged run stopped early at k = 1 and stored many states per minibatch.
        r.mean_stored_states = Some(if r.diverged { 81.0 } else { 6.0 + r.seed as f64 });
    }
    let r = build(&cfg(3).resolve().unwrap(), runs, None);
    let m = r.memory.as_ref().unwrap();
    assert_eq!(m.mean_stored_states, Some(7.0), "mean of seeds 0 and 2 (6 and 8)");
    assert_eq!(m.dense_states, 81);
    assert!((m.saved_fraction.unwrap() - (1.0 - 7.0 / 81.0)).abs() < 1e-12);
}

#[test]
fn runs_of_several_backends_are_reported() {
    let mut runs = consistent(&cfg(2), bench_runs(&SWEEP, 0.01, &[Some(0.1), Some(0.2)], &[Some(0.1), Some(0.2)]));
    for r in runs.iter_mut().filter(|r| r.phase == Phase::Full) {
        r.backend = "webgpu".into();
    }
    let r = build(&cfg(2).resolve().unwrap(), runs, Some(environment()));
    let env = r.environment.as_ref().unwrap();
    let got: Vec<(&str, usize)> = env.run_backends.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(got, [("cpu-flex", 4), ("webgpu", 4)]);
    let w = r.warnings.as_ref().unwrap();
    assert!(w.iter().any(|w| w.contains("several backends: cpu-flex 4, webgpu 4")), "{w:?}");
    valid(&r);
    // One backend: no such warning.
    let r =
        build(&cfg(1).resolve().unwrap(), bench_runs(&SWEEP, 0.01, &[Some(0.1)], &[Some(0.1)]), Some(environment()));
    assert!(!r.warnings.as_ref().unwrap().iter().any(|w| w.contains("several backends")));
}

#[test]
fn a_best_lr_at_the_grids_edge_is_a_warning_that_validate_rebuilds() {
    // bench_runs(sweep, best lr, ..): both arms' best lr is 0.01, the grid's largest.
    let runs = consistent(&cfg(1), bench_runs(&SWEEP, 0.01, &[Some(0.1)], &[Some(0.1)]));
    let r = build(&cfg(1).resolve().unwrap(), runs, Some(environment()));
    let w = r.warnings.as_ref().unwrap();
    for arm in ["baseline", "idea"] {
        let want = format!("the {arm} arm's best lr 0.01 is the largest of the lr grid (0.003, 0.01)");
        assert!(w.iter().any(|w| w.starts_with(&want) && w.ends_with("extend the lr grid above 0.01")), "{w:?}");
    }
    valid(&r);
    // Dropped from the file, validate names it.
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["warnings"] = serde_json::json!([]);
    let problems = validate_json(&v.to_string()).unwrap_err();
    assert!(problems.iter().any(|p| p.path == "warnings"), "{problems:?}");
}

#[test]
fn best_lr_follows_the_sweep_with_diverged_as_infinity() {
    // The baseline's better-looking lr has a diverged sweep run: the other lr is best.
    let mut runs = consistent(&cfg(1), bench_runs(&SWEEP, 0.003, &[Some(0.1)], &[Some(0.1)]));
    let bad = runs.iter_mut().find(|r| r.arm == Arm::Baseline && r.phase == Phase::Sweep && r.lr == 0.01).unwrap();
    bad.metric = None;
    bad.diverged = true;
    bad.diverged_at = Some(rdbench_core::records::DivergedAt { epoch: 1, step: 3 });
    bad.loss_curve[1] = None;
    // Each arm's full runs train at its own best lr.
    runs.iter_mut().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full).for_each(|r| r.lr = 0.01);
    let r = build(&cfg(1).resolve().unwrap(), runs, Some(environment()));
    assert_eq!(r.baseline.best_cfg.lr, 0.003);
    assert_eq!(r.baseline.sweep[1].mean, None);
    assert_eq!(r.idea.best_cfg.lr, 0.01);
    valid(&r);
}

#[test]
fn on_an_accuracy_track_a_higher_idea_is_the_win_and_the_best_lr_is_the_highest() {
    // mnist1d: test accuracy, higher is better. The sweep's highest accuracies are at lr 0.003
    // for both arms; the idea is more accurate on all 8 seeds.
    let cfg = BenchConfig { track: "mnist1d".into(), ..cfg(8) };
    let base = [Some(0.60); 8];
    let idea = [Some(0.61), Some(0.62), Some(0.63), Some(0.64), Some(0.65), Some(0.66), Some(0.67), Some(0.68)];
    let mut runs = consistent(&cfg, bench_runs(&SWEEP, 0.003, &base, &idea));
    for (i, r) in runs.iter_mut().filter(|r| r.phase == Phase::Full).enumerate() {
        r.secondary_metric = Some(1.0 + i as f64 / 100.0);
    }
    let r = build(&cfg.resolve().unwrap(), runs, Some(environment()));
    assert_eq!(r.metric_direction, "higher is better");
    assert_eq!((r.baseline.best_cfg.lr, r.idea.best_cfg.lr), (0.003, 0.003));
    let c = &r.comparison;
    assert_eq!((c.idea_wins, c.n_pairs), (8, 8));
    assert!(c.delta_mean.unwrap() > 0.0);
    assert_eq!(c.p_value, Some(2.0 / 256.0));
    assert_eq!(c.verdict, Verdict::SignificantWin);
    assert!(c.system_worked);
    let task = r.task.as_ref().unwrap();
    assert_eq!(
        (task.metric.as_str(), task.loss.as_str(), task.readout.as_str()),
        ("test accuracy", "cross_entropy", "last_step")
    );
    assert_eq!((task.classes, task.seq_len, task.test_sequences), (Some(10), 40, 1000));
    let sec = task.secondary.as_ref().unwrap();
    assert_eq!(sec.name, "test cross-entropy");
    assert!((sec.baseline_mean.unwrap() - 1.035).abs() < 1e-12, "{sec:?}");
    valid(&r);
    // The same numbers read as MSEs are a significant loss, and that direction is refused
    // for the mnist1d track.
    let mut lower = r.clone();
    lower.metric_direction = "lower is better".into();
    let problems = validate_json(&lower.to_json()).unwrap_err();
    let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
    for want in ["metric_direction", "comparison.idea_wins", "comparison.verdict", "baseline.best_cfg.lr"] {
        assert!(paths.contains(&want), "{want} not in {paths:?}");
    }
    // An accuracy outside [0, 1] is named.
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v["idea"]["per_seed"][0] = 1.5.into();
    let problems = validate_json(&v.to_string()).unwrap_err();
    assert!(problems.iter().any(|p| p.path == "idea.per_seed[0]" && p.message.contains("accuracy")), "{problems:?}");
}

#[test]
fn a_report_without_task_reads_as_the_dynamics_track() {
    let runs = consistent(&cfg(2), bench_runs(&SWEEP, 0.01, &[Some(0.1), Some(0.1)], &[Some(0.09), Some(0.08)]));
    let r = build(&cfg(2).resolve().unwrap(), runs, Some(environment()));
    assert_eq!(r.metric_direction, "lower is better");
    assert_eq!(r.comparison.idea_wins, 2);
    let task = r.task.clone().unwrap();
    assert_eq!((task.metric.as_str(), task.secondary, task.train_sequences), ("test MSE", None, 400));
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v.as_object_mut().unwrap().remove("task");
    let old = validate_json(&v.to_string()).unwrap();
    assert_eq!((old.metric_name(), old.direction()), ("MSE", rdbench_core::track::Direction::LowerIsBetter));
}
