//! The report from finished runs (spec §4.5–4.9, §5, §6). A pure function of the config
//! and the runs, without burn, so every rule here is testable on hand-made runs.

use super::sweep::{best_lr, lr_at_edge, sweep_means};
use super::*;
use crate::context::BenchContext;
use crate::mechanism;
use crate::records::{Arm, Phase};
use crate::stats::{self, bootstrap, permutation, wilcoxon};
use crate::track::Direction;

/// Seed of the Monte Carlo sign-flip test and of the bootstrap.
pub const STATS_SEED: u64 = 20_240_611;

/// The full run of `arm` and `seed`, if there is one.
fn full_run(runs: &[RunRecord], arm: Arm, seed: u64) -> Option<&RunRecord> {
    runs.iter().find(|r| r.arm == arm && r.phase == Phase::Full && r.seed == seed)
}

/// Mean and population std of per-seed metrics; null when any is null (spec: a diverged
/// run makes its arm's mean null).
fn summary(per_seed: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let all: Option<Vec<f64>> = per_seed.iter().copied().collect();
    match all {
        Some(v) if !v.is_empty() => (Some(stats::mean(&v)), Some(stats::std(&v, 0))),
        _ => (None, None),
    }
}

/// The paired comparison over the complete pairs of `base` and `idea` (per seed).
pub struct Pairs {
    /// idea - baseline per seed; None where a run diverged.
    pub diffs: Vec<Option<f64>>,
    /// The finite diffs, in seed order (what the tests see).
    pub complete: Vec<f64>,
    /// mean(idea) - mean(baseline) over the complete pairs.
    pub delta_mean: Option<f64>,
    /// Complete pairs with diff < 0.
    pub idea_wins: usize,
    /// Pairs left out, with why.
    pub dropped: Vec<DroppedPair>,
}

impl Pairs {
    /// Pair seed s of `base` with seed s of `idea`; `direction` says which diffs are wins.
    pub fn new(base: &[Option<f64>], idea: &[Option<f64>], direction: Direction) -> Pairs {
        let mut dropped = Vec::new();
        let (mut kept_b, mut kept_x) = (Vec::new(), Vec::new());
        let diffs: Vec<Option<f64>> = base
            .iter()
            .zip(idea)
            .enumerate()
            .map(|(s, (&b, &x))| match (b, x) {
                (Some(b), Some(x)) => {
                    kept_b.push(b);
                    kept_x.push(x);
                    Some(x - b)
                }
                _ => {
                    let reason = DropReason::of(b, x).expect("an incomplete pair");
                    dropped.push(DroppedPair { seed: s as u64, reason });
                    None
                }
            })
            .collect();
        let complete: Vec<f64> = diffs.iter().flatten().copied().collect();
        Pairs {
            idea_wins: complete.iter().filter(|&&d| direction.gain(d) > 0.0).count(),
            delta_mean: (!complete.is_empty()).then(|| stats::mean(&kept_x) - stats::mean(&kept_b)),
            diffs,
            complete,
            dropped,
        }
    }
}

/// Runs per backend, in order of first appearance.
pub fn run_backends(runs: &[RunRecord]) -> IndexMap<String, usize> {
    let mut m = IndexMap::new();
    for r in runs {
        *m.entry(r.backend.clone()).or_insert(0) += 1;
    }
    m
}

fn warnings(runs: &[RunRecord], pairs: &Pairs, backends: &IndexMap<String, usize>) -> Vec<String> {
    let mut out = Vec::new();
    for r in runs.iter().filter(|r| r.diverged) {
        let at = r.diverged_at.as_ref().map_or(String::new(), |a| format!(" at epoch {} step {}", a.epoch, a.step));
        let effect = match r.phase {
            Phase::Sweep => "its lr's sweep mean is null and scores +infinity for selection",
            Phase::Full => "its metric is null, its arm's mean is null and its pair is left out of the comparison",
        };
        out.push(format!(
            "{} {} run (lr {}, seed {}) diverged{at}: {effect}",
            r.arm.as_str(),
            r.phase.as_str(),
            r.lr,
            r.seed
        ));
    }
    if !pairs.dropped.is_empty() {
        let list: Vec<String> =
            pairs.dropped.iter().map(|d| format!("seed {} ({})", d.seed, d.reason.describe())).collect();
        out.push(format!(
            "{} of {} pairs left out: delta_mean, p-value, verdict and idea_wins use the {} complete pairs; {}",
            pairs.dropped.len(),
            pairs.diffs.len(),
            pairs.complete.len(),
            list.join(", ")
        ));
    }
    if backends.len() > 1 {
        let list: Vec<String> = backends.iter().map(|(b, n)| format!("{b} {n}")).collect();
        out.push(format!("the runs come from several backends: {}", list.join(", ")));
    }
    out
}

/// Build the report of the bench `ctx` from its finished `runs`. `environment` (None for a
/// report without one) gets its `run_backends` from the runs.
pub fn build(ctx: &BenchContext, runs: Vec<RunRecord>, environment: Option<Environment>) -> Report {
    let cfg = &ctx.cfg;
    let task = ctx.task;
    let direction = task.direction();
    let base_sweep = sweep_means(&cfg.lrs, &runs, Arm::Baseline);
    let idea_sweep = sweep_means(&cfg.lrs, &runs, Arm::Idea);
    let best = [&base_sweep, &idea_sweep].map(|m| best_lr(m, direction).expect("a validated config has an lr grid"));

    let per_seed = |arm: Arm| -> Vec<Option<f64>> {
        (0..cfg.n_seeds as u64).map(|s| full_run(&runs, arm, s).and_then(|r| r.metric)).collect()
    };
    let (base, idea) = (per_seed(Arm::Baseline), per_seed(Arm::Idea));
    let (base_mean, base_std) = summary(&base);
    let (idea_mean, idea_std) = summary(&idea);
    let pairs = Pairs::new(&base, &idea, direction);
    let diffs = &pairs.complete;
    let (p_value, p_method) = if diffs.is_empty() {
        (None, None)
    } else {
        let (p, m) = permutation::sign_flip_p(diffs, cfg.permutations, STATS_SEED);
        (Some(p), Some(m))
    };
    let verdict = Verdict::decide(p_value, pairs.delta_mean, cfg.alpha, direction);

    let idea_full: Vec<RunRecord> =
        (0..cfg.n_seeds as u64).filter_map(|s| full_run(&runs, Arm::Idea, s)).cloned().collect();
    let (signature, detail) = mechanism::judge(&idea_full, cfg.tau, cfg.policy.as_str());

    let t = ctx.seq_len;
    let state_bytes = (cfg.batch_size * cfg.hidden_size * 4) as f64;
    // A diverged run stopped storing states when it stopped: its mean is not comparable.
    let stored: Vec<f64> = idea_full.iter().filter(|r| !r.diverged).filter_map(|r| r.mean_stored_states).collect();
    let mean_stored = (!stored.is_empty()).then(|| stats::mean(&stored));
    let live: Vec<RunRecord> = idea_full.iter().filter(|r| !r.diverged).cloned().collect();
    let (peak_ck, peak_dense, measured_saved) = Memory::measured(&live);
    let memory = Memory {
        mean_stored_states: mean_stored,
        dense_states: t + 1,
        mean_stored_bytes: mean_stored.map(|s| s * state_bytes),
        dense_bytes: ((t + 1) as f64 * state_bytes) as u64,
        saved_fraction: mean_stored.map(|s| 1.0 - s / (t + 1) as f64),
        measured_peak_bytes_checkpointed: peak_ck,
        measured_peak_bytes_dense: peak_dense,
        measured_saved_fraction: measured_saved,
    };

    let backends = run_backends(&runs);
    let mut warnings = warnings(&runs, &pairs, &backends);
    for (arm, (means, &lr)) in [Arm::Baseline, Arm::Idea].iter().zip([&base_sweep, &idea_sweep].iter().zip(&best)) {
        if let Some(edge) = lr_at_edge(means, lr) {
            warnings.push(edge.warning(arm.as_str(), lr, &cfg.lrs));
        }
    }
    let environment = environment.map(|e| Environment { run_backends: backends, ..e });
    let statistics = Statistics {
        p_value_method: p_method,
        wilcoxon: (!diffs.is_empty()).then(|| wilcoxon::wilcoxon(diffs)),
        delta_mean_ci95: (diffs.len() >= 2).then(|| {
            let (lo, hi) = bootstrap::mean_ci95(diffs, cfg.bootstrap_resamples, STATS_SEED);
            [lo, hi]
        }),
        bootstrap_resamples: cfg.bootstrap_resamples,
        bootstrap_seed: STATS_SEED,
        effect_size_dz: Some(stats::cohens_dz(diffs)).filter(|d| d.is_finite()),
        alpha: cfg.alpha,
        dropped_pairs: pairs.dropped.clone(),
    };

    let task_info = Some(task_info(ctx, &runs, (base_mean, &base), (idea_mean, &idea)));
    Report {
        bench_version: BENCH_VERSION,
        track: cfg.track.clone(),
        model: cfg.model.clone(),
        metric_direction: direction.as_str().into(),
        n_seeds: cfg.n_seeds,
        baseline: Baseline {
            best_cfg: Cfg { lr: best[0] },
            sweep: base_sweep.iter().map(|&(lr, mean)| SweepEntry { cfg: Cfg { lr }, mean }).collect(),
            full: FullSummary { mean: base_mean, std: base_std, n: base.len(), per_seed: base },
        },
        idea: ArmSummary {
            best_cfg: Cfg { lr: best[1] },
            mean: idea_mean,
            std: idea_std,
            n: idea.len(),
            per_seed: idea,
        },
        comparison: Comparison {
            delta_mean: pairs.delta_mean,
            idea_wins: pairs.idea_wins,
            n_pairs: diffs.len(),
            per_seed_diffs: pairs.diffs.clone(),
            p_value,
            verdict,
            system_worked: verdict.system_worked(),
        },
        mechanism_signature: signature,
        idea_sweep: idea_sweep.iter().map(|&(lr, mean)| (BenchConfig::lr_key(lr), SweepMean { mean })).collect(),
        config: Some(cfg.clone()),
        environment,
        statistics: Some(statistics),
        mechanism: Some(detail),
        memory: Some(memory),
        warnings: Some(warnings),
        frontier: crate::frontier::build(t, &runs),
        runs: Some(runs),
        task: task_info,
    }
}

/// The report's `task`: the track's task with the bench's sizes, the secondary figure of
/// the full runs, the trivial predictor and whether each arm (its mean test metric and
/// per-seed metrics given) learned against it.
fn task_info(
    ctx: &BenchContext,
    runs: &[RunRecord],
    base: (Option<f64>, &[Option<f64>]),
    idea: (Option<f64>, &[Option<f64>]),
) -> TaskInfo {
    let (cfg, track, task) = (&ctx.cfg, &*ctx.track, ctx.task);
    let n = ctx.train_sequences;
    let reference = ctx.reference();
    let metric = task.test_metric();
    let secondary = task.secondary().map(|name| {
        let per_seed = |arm: Arm| -> Vec<Option<f64>> {
            (0..cfg.n_seeds as u64).map(|s| full_run(runs, arm, s).and_then(|r| r.secondary_metric)).collect()
        };
        let (b, x) = (per_seed(Arm::Baseline), per_seed(Arm::Idea));
        SecondaryFigure {
            name: format!("test {name}"),
            baseline_mean: summary(&b).0,
            idea_mean: summary(&x).0,
            baseline_per_seed: b,
            idea_per_seed: x,
        }
    });
    TaskInfo {
        metric: metric.clone(),
        loss: task.loss().into(),
        readout: task.readout().into(),
        classes: task.classes(),
        seq_len: track.seq_len(),
        train_sequences: n,
        validation_sequences: crate::track::validation_size(n),
        test_sequences: track.n_test(),
        secondary,
        learnability: Some(crate::learnability::Learnability::judge(
            task.direction(),
            &metric,
            reference.metric,
            base,
            idea,
        )),
        reference: Some(ReferenceFigure { name: reference.name, metric, value: reference.metric }),
    }
}
