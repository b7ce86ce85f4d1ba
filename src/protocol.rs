//! The bench protocol (spec §4): sweep each arm over the lr grid, pick its best lr, train
//! the paired full runs, compare them and judge the mechanism, into one report.

use crate::backend::Backend;
use crate::config::BenchConfig;
use crate::error::EngineError;
use crate::mechanism;
use crate::model::{self, RecurrentModel};
use crate::probe::ProbeSettings;
use crate::progress::{Arm, Host, Phase, RunRecord, RunSpec};
use crate::report::*;
use crate::stats::{self, bootstrap, permutation, wilcoxon};
use crate::track::{self, Track};
use crate::train::batch::DeviceData;
use crate::train::{IDEA_STEP_WEIGHT, Tally, TrainSettings, step_weight, train_population};
use indexmap::IndexMap;
use web_time::{Instant, SystemTime, UNIX_EPOCH};

/// First sweep seed (spec §4.2).
pub const SWEEP_SEED0: u64 = 1000;
/// Seed of the Monte Carlo sign-flip test and of the bootstrap.
pub const STATS_SEED: u64 = 20_240_611;

/// A bench that stopped early, with every run it finished.
#[derive(Debug)]
pub struct Stopped {
    /// Why it stopped.
    pub reason: EngineError,
    /// Runs finished before it stopped.
    pub runs: Vec<RunRecord>,
}

/// The runs of one population.
fn population(arm: Arm, phase: Phase, lrs: &[f64], seeds: impl Iterator<Item = u64> + Clone) -> Vec<RunSpec> {
    lrs.iter().flat_map(|&lr| seeds.clone().map(move |seed| RunSpec { arm, phase, lr, seed })).collect()
}

/// Mean metric per lr (None if any of its runs diverged) and the best lr: lowest mean,
/// diverged counting as +infinity, ties to the smaller lr.
fn sweep_means(lrs: &[f64], runs: &[RunRecord]) -> (Vec<(f64, Option<f64>)>, f64) {
    let means: Vec<(f64, Option<f64>)> = lrs
        .iter()
        .map(|&lr| {
            let m: Option<Vec<f64>> = runs.iter().filter(|r| r.lr == lr).map(|r| r.metric).collect();
            (lr, m.map(|v| stats::mean(&v)))
        })
        .collect();
    let mut order = means.clone();
    order.sort_by(|a, b| {
        a.1.unwrap_or(f64::INFINITY).total_cmp(&b.1.unwrap_or(f64::INFINITY)).then(a.0.total_cmp(&b.0))
    });
    (means, order[0].0)
}

/// Run the whole bench on `backend`. Runs in `prior` (from an interrupted bench with the
/// same config) are reused instead of retrained, population by population.
pub async fn run_bench(
    cfg: &BenchConfig,
    backend: &Backend,
    prior: &[RunRecord],
    host: &mut dyn Host,
) -> Result<Report, Stopped> {
    let stop = |reason: EngineError, runs: &[RunRecord]| Stopped { reason, runs: runs.to_vec() };
    cfg.validate().map_err(|e| stop(e.into(), &[]))?;
    let track = track::by_name(&cfg.track).expect("validated");
    let model = model::by_name(&cfg.model, track.input_dim(), cfg.hidden_size, track.output_dim()).expect("validated");
    let started_at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let start = Instant::now();

    let data = track.generate(cfg.data_seed);
    let sweep = data.sweep_split(track.n_val());
    let full = data.full_split();
    let device = &backend.device;
    let (sweep_train, sweep_eval) = (DeviceData::new(&sweep.train, device), DeviceData::new(&sweep.eval, device));
    let (full_train, full_eval) = (DeviceData::new(&full.train, device), DeviceData::new(&full.eval, device));

    let n_sweep = cfg.lrs.len() * cfg.n_sweep_seeds;
    let steps = |n: usize| n.div_ceil(cfg.batch_size) * cfg.epochs;
    let mut tally = Tally {
        start,
        runs_done: 0,
        runs_total: 2 * (n_sweep + cfg.n_seeds),
        work_done: 0,
        work_total: (1 + IDEA_STEP_WEIGHT) * (n_sweep * steps(sweep_train.n) + cfg.n_seeds * steps(full_train.n)),
    };
    let base_settings = TrainSettings { epochs: cfg.epochs, batch_size: cfg.batch_size, probe: None };
    let idea_settings = TrainSettings {
        probe: Some(ProbeSettings {
            tau: cfg.tau,
            k_max: cfg.k_max,
            policy: cfg.policy,
            reversal_iters: cfg.reversal_iters,
            batch_size: cfg.batch_size,
        }),
        ..base_settings.clone()
    };
    let settings = |arm: Arm| if arm == Arm::Baseline { &base_settings } else { &idea_settings };

    let mut runs: Vec<RunRecord> = Vec::new();
    let mut phase_time: IndexMap<String, f64> = IndexMap::new();
    let sweep_seeds = SWEEP_SEED0..SWEEP_SEED0 + cfg.n_sweep_seeds as u64;
    let mut best = [0.0f64; 2];
    let mut sweep_table: Vec<Vec<(f64, Option<f64>)>> = Vec::new();
    for (i, arm) in [Arm::Baseline, Arm::Idea].into_iter().enumerate() {
        let specs = population(arm, Phase::Sweep, &cfg.lrs, sweep_seeds.clone());
        let t0 = Instant::now();
        let recs =
            train_or_reuse(&*model, &specs, &sweep_train, &sweep_eval, settings(arm), device, prior, host, &mut tally)
                .await
                .map_err(|e| stop(e, &runs))?;
        phase_time.insert(format!("{}_sweep", arm_name(arm)), t0.elapsed().as_secs_f64());
        let (means, b) = sweep_means(&cfg.lrs, &recs);
        best[i] = b;
        sweep_table.push(means);
        runs.extend(recs);
    }
    for (i, arm) in [Arm::Baseline, Arm::Idea].into_iter().enumerate() {
        let specs = population(arm, Phase::Full, &[best[i]], 0..cfg.n_seeds as u64);
        let t0 = Instant::now();
        let recs =
            train_or_reuse(&*model, &specs, &full_train, &full_eval, settings(arm), device, prior, host, &mut tally)
                .await
                .map_err(|e| stop(e, &runs))?;
        phase_time.insert(format!("{}_full", arm_name(arm)), t0.elapsed().as_secs_f64());
        runs.extend(recs);
    }

    let environment = Environment {
        backend: backend.name.clone(),
        adapter: backend.adapter.clone(),
        platform: if cfg!(target_arch = "wasm32") { "wasm" } else { "native" }.into(),
        rdbench_version: env!("CARGO_PKG_VERSION").into(),
        burn_version: BURN_VERSION.into(),
        started_at: humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + started_at).to_string(),
        wall_time_s: start.elapsed().as_secs_f64(),
        phase_wall_time_s: phase_time,
    };
    Ok(assemble(cfg, &*track, &*model, &sweep_table, best, runs, environment))
}

/// burn's version, as locked in Cargo.lock (checked by a test).
pub const BURN_VERSION: &str = "0.22.1";

fn arm_name(arm: Arm) -> &'static str {
    match arm {
        Arm::Baseline => "baseline",
        Arm::Idea => "idea",
    }
}

#[allow(clippy::too_many_arguments)]
async fn train_or_reuse(
    model: &dyn RecurrentModel,
    specs: &[RunSpec],
    train: &DeviceData,
    eval: &DeviceData,
    settings: &TrainSettings,
    device: &burn::tensor::Device,
    prior: &[RunRecord],
    host: &mut dyn Host,
    tally: &mut Tally,
) -> Result<Vec<RunRecord>, EngineError> {
    let found: Option<Vec<RunRecord>> = specs
        .iter()
        .map(|s| {
            prior.iter().find(|r| r.arm == s.arm && r.phase == s.phase && r.lr == s.lr && r.seed == s.seed).cloned()
        })
        .collect();
    if let Some(recs) = found {
        tally.runs_done += recs.len();
        tally.work_done += recs.len() * train.n.div_ceil(settings.batch_size) * settings.epochs * step_weight(settings);
        return Ok(recs);
    }
    train_population(model, specs, train, eval, settings, device, host, tally).await
}

/// Per-seed metrics of a full phase, in seed order.
fn per_seed(runs: &[RunRecord], arm: Arm) -> Vec<Option<f64>> {
    let mut v: Vec<&RunRecord> = runs.iter().filter(|r| r.arm == arm && r.phase == Phase::Full).collect();
    v.sort_by_key(|r| r.seed);
    v.iter().map(|r| r.metric).collect()
}

fn summary(per_seed: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let all: Option<Vec<f64>> = per_seed.iter().copied().collect();
    match all {
        Some(v) if !v.is_empty() => (Some(stats::mean(&v)), Some(stats::std(&v, 0))),
        _ => (None, None),
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Build the report from finished runs.
fn assemble(
    cfg: &BenchConfig,
    track: &dyn Track,
    model: &dyn RecurrentModel,
    sweep_table: &[Vec<(f64, Option<f64>)>],
    best: [f64; 2],
    runs: Vec<RunRecord>,
    environment: Environment,
) -> Report {
    let base = per_seed(&runs, Arm::Baseline);
    let idea = per_seed(&runs, Arm::Idea);
    let (base_mean, base_std) = summary(&base);
    let (idea_mean, idea_std) = summary(&idea);

    // Pairs: a diverged run scores +infinity for wins; only finite pairs enter the tests.
    let inf = |v: Option<f64>| v.unwrap_or(f64::INFINITY);
    let per_seed_diffs: Vec<Option<f64>> = base.iter().zip(&idea).map(|(b, x)| Some((*x)? - (*b)?)).collect();
    let idea_wins = base.iter().zip(&idea).filter(|(b, x)| inf(**x) < inf(**b)).count();
    let diffs: Vec<f64> = per_seed_diffs.iter().flatten().copied().collect();
    let delta_mean = match (base_mean, idea_mean) {
        (Some(b), Some(x)) => Some(x - b),
        _ => None,
    };
    let (p_value, p_method) = if diffs.is_empty() {
        (None, None)
    } else {
        let (p, m) = permutation::sign_flip_p(&diffs, cfg.permutations, STATS_SEED);
        (Some(p), Some(m))
    };
    let verdict = stats::verdict(p_value, delta_mean, cfg.alpha);

    let idea_full: Vec<RunRecord> = {
        let mut v: Vec<RunRecord> =
            runs.iter().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full).cloned().collect();
        v.sort_by_key(|r| r.seed);
        v
    };
    let (signature, detail) = mechanism::judge(&idea_full, cfg.tau, cfg.policy.as_str());

    let t = track.seq_len();
    let state_bytes = (cfg.batch_size * model.hidden() * 4) as f64;
    let stored: Vec<f64> = idea_full.iter().filter_map(|r| r.mean_stored_states).collect();
    let mean_stored = (!stored.is_empty()).then(|| stats::mean(&stored));
    let memory = Memory {
        mean_stored_states: mean_stored,
        dense_states: t + 1,
        mean_stored_bytes: mean_stored.map(|s| s * state_bytes),
        dense_bytes: ((t + 1) as f64 * state_bytes) as u64,
        saved_fraction: mean_stored.map(|s| 1.0 - s / (t + 1) as f64),
    };

    let mut warnings = Vec::new();
    for r in runs.iter().filter(|r| r.diverged) {
        let at = r.diverged_at.as_ref().map_or(String::new(), |a| format!(" at epoch {} step {}", a.epoch, a.step));
        let effect = match r.phase {
            Phase::Sweep => "its lr's sweep mean is null and scores +infinity for selection",
            Phase::Full => "its metric is null, its arm's mean is null and its pair is left out of the tests",
        };
        warnings.push(format!(
            "{} {} run (lr {}, seed {}) diverged{at}: {effect}",
            arm_name(r.arm),
            if r.phase == Phase::Sweep { "sweep" } else { "full" },
            r.lr,
            r.seed
        ));
    }

    Report {
        bench_version: BENCH_VERSION,
        track: track.name().into(),
        model: model.name().into(),
        metric_direction: "lower is better".into(),
        n_seeds: cfg.n_seeds,
        baseline: Baseline {
            best_cfg: Cfg { lr: best[0] },
            sweep: sweep_table[0].iter().map(|&(lr, mean)| SweepEntry { cfg: Cfg { lr }, mean }).collect(),
            full: FullSummary { mean: base_mean, std: base_std, per_seed: base.clone(), n: base.len() },
        },
        idea: ArmSummary {
            best_cfg: Cfg { lr: best[1] },
            mean: idea_mean,
            std: idea_std,
            per_seed: idea.clone(),
            n: idea.len(),
        },
        comparison: Comparison {
            delta_mean,
            idea_wins,
            n_pairs: diffs.len(),
            per_seed_diffs,
            p_value,
            verdict: verdict.into(),
            system_worked: verdict == "significant win",
        },
        mechanism_signature: signature,
        idea_sweep: sweep_table[1].iter().map(|&(lr, mean)| (BenchConfig::lr_key(lr), SweepMean { mean })).collect(),
        config: Some(cfg.clone()),
        environment: Some(environment),
        statistics: Some(Statistics {
            p_value_method: p_method,
            wilcoxon: (!diffs.is_empty()).then(|| wilcoxon::wilcoxon(&diffs)),
            delta_mean_ci95: (diffs.len() >= 2).then(|| {
                let (lo, hi) = bootstrap::mean_ci95(&diffs, cfg.bootstrap_resamples, STATS_SEED);
                [lo, hi]
            }),
            bootstrap_resamples: cfg.bootstrap_resamples,
            bootstrap_seed: STATS_SEED,
            effect_size_dz: finite(stats::cohens_dz(&diffs)),
            alpha: cfg.alpha,
        }),
        mechanism: Some(detail),
        memory: Some(memory),
        warnings: Some(warnings),
        runs: Some(runs),
    }
}
