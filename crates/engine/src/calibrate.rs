//! A backend's measured speed: a few training steps of a small baseline population under the
//! bench's own config, timed after one warm-up step; a GPU's at two population sizes, its
//! cost fitted per population step. `auto` compares the bench's predicted wall times on
//! each backend, and the page turns the speed into a time estimate before Run.

use crate::backend::Backend;
use crate::error::EngineError;
use crate::host::{Event, Host};

use crate::batch::DeviceData;
use crate::train::dense::DenseRule;
use crate::train::{GradientRule, Population, Tally, TrainSettings, train_population};
use crate::work::BenchWork;
use rdbench_core::context::BenchContext;
use rdbench_core::records::{Arm, Phase, RunSpec};
use rdbench_core::report::{Calibration, PopulationFit};
use rdbench_core::track;
use web_time::{Duration, Instant};

/// Times training steps and stops after `max_steps` timed steps or `budget`.
struct Timer {
    /// When each step ended (its loss read); the first step is the warm-up (allocation,
    /// kernel compilation on a GPU).
    ends: Vec<Instant>,
    max_steps: usize,
    budget: Duration,
}

impl Host for Timer {
    fn event(&mut self, event: &Event) {
        if let Event::Progress(_) = event {
            self.ends.push(Instant::now());
        }
    }

    fn every_step(&self) -> bool {
        true // each step timed as it ends (its loss read)
    }

    fn cancelled(&self) -> bool {
        let timed = self.ends.len().saturating_sub(1);
        timed >= self.max_steps || (timed >= 1 && self.ends[0].elapsed() >= self.budget)
    }
}

/// Timed steps per trial: the calibration is the median trial, the fastest and the slowest its
/// range.
const STEPS_PER_TRIAL: usize = 2;

/// Time `runs` baseline runs of the bench `ctx` on `backend` for up to `max_steps` steps after a
/// warm-up step, stopping early once `budget` has passed (at least one timed step). The
/// timed steps are split into trials of [`STEPS_PER_TRIAL`]: their median is the speed (the
/// machine's present load slows the bench as it slows the trials: the fastest trial alone
/// read estimates 1.7–3.3x low under load; the mean takes in a first trial still slowed by
/// the browser's tier-up compilation), the fastest and the slowest its range.
/// `workers` is recorded as how many such workers the bench would run in parallel.
pub async fn calibrate(
    ctx: &BenchContext,
    backend: &Backend,
    runs: usize,
    max_steps: usize,
    budget: Duration,
    workers: usize,
) -> Result<Calibration, EngineError> {
    let cfg = &ctx.cfg;
    let model = crate::model::build(ctx)?;
    let n_train = ctx.train_sequences;
    let data = ctx.track.generate(cfg.data_seed, n_train).sweep_split(track::validation_size(n_train));
    let (train, eval) = (DeviceData::new(&data.train, &backend.device), DeviceData::new(&data.eval, &backend.device));
    let specs: Vec<RunSpec> = (0..runs.max(1) as u64)
        .map(|seed| RunSpec { arm: Arm::Baseline, phase: Phase::Sweep, lr: cfg.lrs[0], seed })
        .collect();
    // Enough epochs for max_steps + 1 steps even when an epoch is one minibatch.
    let settings = TrainSettings { epochs: max_steps + 1, ..TrainSettings::new(cfg, &backend.name) };
    let mut rule = DenseRule;
    let mut timer = Timer { ends: Vec::new(), max_steps: max_steps.max(1), budget };
    let mut tally = Tally::new(specs.len(), 0);
    let result = train_population(
        &Population { model: &*model, train: &train, eval: &eval, settings: &settings, device: &backend.device },
        &specs,
        &mut rule,
        &mut timer,
        &mut tally,
    )
    .await;
    match result {
        Ok(_) | Err(EngineError::Cancelled) => {}
        Err(e) => return Err(e),
    }
    if timer.ends.is_empty() {
        return Err(EngineError::Device("calibration: no training step ran".into()));
    }
    if timer.ends.len() < 2 {
        return Err(EngineError::Device("calibration: no step after the warm-up ran".into()));
    }
    // Step i (0 the warm-up) trains the rows of its minibatch: the epoch's last may be smaller.
    let per_epoch = train.n.div_ceil(settings.batch_size);
    let rows = |i: usize| {
        let j = i % per_epoch;
        if j + 1 == per_epoch { train.n - j * settings.batch_size } else { settings.batch_size.min(train.n) }
    };
    let units_per_row = rule.cost(&*model, train.t, train.n).step * specs.len() as u64;
    let timed: Vec<usize> = (1..timer.ends.len()).collect();
    let trials: Vec<f64> = timed
        .chunks(STEPS_PER_TRIAL)
        .map(|steps| {
            let (first, last) = (steps[0], steps[steps.len() - 1]);
            let ms = timer.ends[last].duration_since(timer.ends[first - 1]).as_secs_f64() * 1000.0;
            let units: u64 = steps.iter().map(|&i| rows(i) as u64 * units_per_row).sum();
            ms / units as f64
        })
        .collect();
    let mut sorted = trials.clone();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 };
    Ok(Calibration {
        backend: backend.name.clone(),
        ms_per_work_unit: median,
        ms_per_work_unit_min: Some(sorted[0]),
        ms_per_work_unit_max: Some(sorted[sorted.len() - 1]),
        workers,
        population: None,
    })
}

/// The calibration `auto`, the page's estimate and `rdbench bench` use: 4 runs, up to 6
/// timed steps (3 trials of 2) or about 0.6 s after the warm-up.
pub async fn calibrate_default(
    ctx: &BenchContext,
    backend: &Backend,
    workers: usize,
) -> Result<Calibration, EngineError> {
    calibrate(ctx, backend, 4, 3 * STEPS_PER_TRIAL, Duration::from_millis(600), workers).await
}

/// The calibration a bench's estimate takes on `backend`: on a GPU the per-population fit
/// ([`calibrate_gpu`]; its figure is already this bench's, on one worker), elsewhere
/// [`calibrate_default`] over `workers`.
pub async fn calibrate_for(ctx: &BenchContext, backend: &Backend, workers: usize) -> Result<Calibration, EngineError> {
    if crate::backend::cube_device(&backend.device) {
        calibrate_gpu(ctx, backend).await
    } else {
        calibrate_default(ctx, backend, workers).await
    }
}

/// The population sizes a GPU is calibrated at: one run and the protocol's order of size.
pub const GPU_RUNS: [usize; 2] = [1, 8];

/// A GPU's calibration for the bench `ctx`: [`calibrate`] at both [`GPU_RUNS`] sizes, fitted as
/// `a + b x runs` per population step ([`fit_population`]); its `ms_per_work_unit` is the
/// fit's figure for this bench ([`gpu_effective`]), so `work_total x ms_per_work_unit` is
/// the fit's prediction for the bench's real populations.
pub async fn calibrate_gpu(ctx: &BenchContext, backend: &Backend) -> Result<Calibration, EngineError> {
    let [r1, r2] = GPU_RUNS;
    let budget = Duration::from_millis(600);
    let one = calibrate(ctx, backend, r1, 3 * STEPS_PER_TRIAL, budget, 1).await?;
    let many = calibrate(ctx, backend, r2, 3 * STEPS_PER_TRIAL, budget, 1).await?;
    let slowest = |c: &Calibration| c.ms_per_work_unit_max.unwrap_or(c.ms_per_work_unit);
    let fastest = |c: &Calibration| c.ms_per_work_unit_min.unwrap_or(c.ms_per_work_unit);
    let fit = fit_population((r1, one.ms_per_work_unit), (r2, many.ms_per_work_unit));
    let fit_min = fit_population((r1, fastest(&one)), (r2, fastest(&many)));
    let fit_max = fit_population((r1, slowest(&one)), (r2, slowest(&many)));
    let share = Share::of(&BenchWork::of(ctx));
    Ok(Calibration {
        backend: backend.name.clone(),
        ms_per_work_unit: gpu_effective(&fit, &share),
        ms_per_work_unit_min: Some(gpu_effective(&fit_min, &share)),
        ms_per_work_unit_max: Some(gpu_effective(&fit_max, &share)),
        workers: 1,
        population: Some(fit),
    })
}

/// The fit `a + b x runs` of a population step's cost through two calibrations, each
/// `(runs, ms per work unit)`: a population of R runs costs R x (its ms per unit) per unit
/// of one run's work. Noise can make a part negative: a cost that falls with runs is taken
/// as all fixed (the larger population's), one that grows faster than runs as all per run.
pub fn fit_population((r1, m1): (usize, f64), (r2, m2): (usize, f64)) -> PopulationFit {
    let (r1f, r2f) = (r1 as f64, r2 as f64);
    let (c1, c2) = (r1f * m1, r2f * m2);
    let b = (c2 - c1) / (r2f - r1f);
    let (a, b) = if b < 0.0 {
        (c2, 0.0)
    } else if c1 - b * r1f < 0.0 {
        (0.0, c2 / r2f)
    } else {
        (c1 - b * r1f, b)
    };
    PopulationFit { ms_per_population_unit: a, ms_per_run_unit: b, runs: [r1, r2] }
}

/// A bench's work as a backend's cost sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Share {
    /// Every run's units (`BenchWork::total`): a CPU pays each.
    pub total: f64,
    /// One run's units per population (`BenchWork::populations`): a GPU pays these once
    /// per population, whatever its runs.
    pub populations: f64,
}

impl Share {
    /// A bench's central figures (the progress bar's).
    pub fn of(work: &BenchWork) -> Share {
        Share { total: work.total().mid as f64, populations: work.populations().mid as f64 }
    }
}

/// Milliseconds per work unit of `total` the fit predicts for the bench.
pub fn gpu_effective(fit: &PopulationFit, work: &Share) -> f64 {
    fit.ms_per_run_unit + fit.ms_per_population_unit * work.populations / work.total.max(1.0)
}

/// The bench's predicted wall time in ms on calibration `c`: on a GPU with a fit,
/// `a x populations + b x total` (its launches once per population, its arithmetic per run);
/// otherwise `total x ms per unit / workers` (a CPU's runs split over its workers).
pub fn predicted_ms(c: &Calibration, work: &Share) -> f64 {
    match &c.population {
        Some(fit) => fit.ms_per_population_unit * work.populations + fit.ms_per_run_unit * work.total,
        None => work.total * c.ms_per_work_unit / c.workers.max(1) as f64,
    }
}

/// The backend `auto` takes, and why, in words for the page and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The chosen calibration's backend name.
    pub backend: String,
    /// The figures compared and the outcome.
    pub why: String,
}

/// The backend with the lower predicted wall time for the bench ([`predicted_ms`]; ties go
/// to the CPU).
pub fn choose_faster(gpu: &Calibration, cpu: &Calibration, work: &Share) -> Choice {
    let (g, c) = (predicted_ms(gpu, work), predicted_ms(cpu, work));
    let s = |ms: f64| {
        let v = ms / 1000.0;
        if v >= 10.0 {
            format!("{v:.0} s")
        } else if v >= 1.0 {
            format!("{v:.1} s")
        } else {
            format!("{v:.3} s")
        }
    };
    let parts = match &gpu.population {
        Some(f) => format!(
            " ({} fixed per population step, {} growing with runs; fitted at {} and {} runs)",
            s(f.ms_per_population_unit * work.populations),
            s(f.ms_per_run_unit * work.total),
            f.runs[0],
            f.runs[1]
        ),
        None => String::new(),
    };
    let workers = if cpu.workers == 1 { "1 worker".to_string() } else { format!("{} workers", cpu.workers) };
    let figures = format!("this bench ≈ {} on WebGPU{parts}, ≈ {} on the CPU ({workers})", s(g), s(c));
    if g < c {
        Choice { backend: gpu.backend.clone(), why: format!("calibrated: {figures}; WebGPU is faster") }
    } else {
        Choice { backend: cpu.backend.clone(), why: format!("calibrated: {figures}; the CPU is faster") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal(backend: &str, ms: f64, workers: usize) -> Calibration {
        Calibration {
            backend: backend.into(),
            ms_per_work_unit: ms,
            ms_per_work_unit_min: None,
            ms_per_work_unit_max: None,
            workers,
            population: None,
        }
    }

    /// A GPU whose population step costs 9 + 1 x runs (ms per unit of one run's work):
    /// 10 at one run, 17 at 8 (2.125 per run-unit).
    fn gpu() -> Calibration {
        let fit = fit_population((1, 10.0), (8, 2.125));
        Calibration { population: Some(fit), ..cal("webgpu", 0.0, 1) }
    }

    #[test]
    fn the_fit_goes_through_both_sizes_and_never_goes_negative() {
        let fit = |a: (usize, f64), b: (usize, f64)| {
            let f = fit_population(a, b);
            (f.ms_per_population_unit, f.ms_per_run_unit)
        };
        assert_eq!(fit((1, 10.0), (8, 2.125)), (9.0, 1.0));
        // Cheaper in all at 8 runs than at 1 (noise): all fixed, at the larger population's.
        assert_eq!(fit((1, 10.0), (8, 1.0)), (8.0, 0.0));
        // 1 at one run, 16 at 8: the line would start below zero; all per run instead.
        assert_eq!(fit((1, 1.0), (8, 2.0)), (0.0, 2.0));
    }

    /// The bench: 1,000 units over all runs, 100 of one run per population (10 runs a
    /// population). WebGPU: 9 x 100 + 1 x 1,000 = 1,900 ms. CPU at 4 ms per unit on 2
    /// workers: 1,000 x 4 / 2 = 2,000 ms, so WebGPU; at 3.6: 1,800 ms, the CPU; at 3.8:
    /// 1,900 ms, a tie, the CPU. Scaling the GPU by runs (its 4-run figure, 13 / 4 = 3.25
    /// ms per unit, against the CPU's 2) took the CPU in the first case.
    #[test]
    fn auto_takes_the_lower_predicted_wall_time_for_the_whole_bench() {
        let work = Share { total: 1000.0, populations: 100.0 };
        assert_eq!(predicted_ms(&gpu(), &work), 1900.0);
        assert_eq!(predicted_ms(&cal("cpu-flex", 4.0, 2), &work), 2000.0);
        let pick = |cpu_ms: f64, work: &Share| choose_faster(&gpu(), &cal("cpu-flex", cpu_ms, 2), work).backend;
        assert_eq!(pick(4.0, &work), "webgpu");
        assert_eq!(pick(3.6, &work), "cpu-flex");
        assert_eq!(pick(3.8, &work), "cpu-flex");
        // Two runs a population: the fixed part is paid 5x as often, 9 x 500 + 1,000 = 5,500 ms.
        assert_eq!(pick(4.0, &Share { total: 1000.0, populations: 500.0 }), "cpu-flex");
        assert_eq!(
            choose_faster(&gpu(), &cal("cpu-flex", 4.0, 2), &work).why,
            "calibrated: this bench ≈ 1.9 s on WebGPU (0.900 s fixed per population step, 1.0 s growing with runs; \
             fitted at 1 and 8 runs), ≈ 2.0 s on the CPU (2 workers); WebGPU is faster"
        );
    }

    /// The page's estimate is `work_total x ms_per_work_unit`: the GPU's effective figure
    /// gives the fit's prediction (1 + 9 x 100 / 1,000 = 1.9 ms per unit).
    #[test]
    fn the_effective_figure_is_the_prediction_per_unit() {
        let work = Share { total: 1000.0, populations: 100.0 };
        let fit = gpu().population.unwrap();
        assert_eq!(gpu_effective(&fit, &work), 1.9);
        assert_eq!(predicted_ms(&cal("webgpu", gpu_effective(&fit, &work), 1), &work), predicted_ms(&gpu(), &work));
    }

    /// One run's units per population: the default bench's four populations (sweep and
    /// full, each arm) differ from all its runs by the runs past each population's first.
    #[test]
    fn the_population_work_counts_one_run_per_phase_and_arm() {
        let cfg = rdbench_core::config::BenchConfig::default();
        let w = BenchWork::of(&cfg.resolve().unwrap());
        let sweeps = (cfg.lrs.len() * cfg.n_sweep_seeds) as u64;
        let seeds = cfg.n_seeds as u64;
        let extra: u64 = rdbench_core::records::ARMS
            .iter()
            .map(|&arm| (sweeps - 1) * w.run(arm, Phase::Sweep).mid + (seeds - 1) * w.run(arm, Phase::Full).mid)
            .sum();
        assert!(w.populations().mid > 0);
        assert_eq!(w.total().mid - w.populations().mid, extra);
    }
}
