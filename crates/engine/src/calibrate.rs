//! A backend's measured speed: a few training steps of a small baseline population under the
//! bench's own config, timed after one warm-up step. `auto` compares backends with it, and
//! the page turns it into a time estimate before Run.

use crate::backend::Backend;
use crate::error::EngineError;
use crate::host::{Event, Host};

use crate::batch::DeviceData;
use crate::train::dense::DenseRule;
use crate::train::{GradientRule, Population, Tally, TrainSettings, train_population};
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RunSpec};
use rdbench_core::report::Calibration;
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

/// Timed steps per trial: the calibration is the fastest trial, the slowest its spread.
const STEPS_PER_TRIAL: usize = 2;

/// Time `runs` baseline runs of `cfg` on `backend` for up to `max_steps` steps after a
/// warm-up step, stopping early once `budget` has passed (at least one timed step). The
/// timed steps are split into trials of [`STEPS_PER_TRIAL`]: the fastest trial is the speed
/// (other work sharing the machine only slows a trial down), the slowest its upper end.
/// `workers` is recorded as how many such workers the bench would run in parallel.
pub async fn calibrate(
    cfg: &BenchConfig,
    backend: &Backend,
    runs: usize,
    max_steps: usize,
    budget: Duration,
    workers: usize,
) -> Result<Calibration, EngineError> {
    let ctx = cfg.resolve()?;
    let model = crate::protocol::build_model(&ctx)?;
    let n_train = ctx.train_sequences;
    let data = ctx.track.generate(cfg.data_seed).with_train(n_train).sweep_split(track::validation_size(n_train));
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
    let fastest = trials.iter().copied().fold(f64::INFINITY, f64::min);
    let slowest = trials.iter().copied().fold(0.0, f64::max);
    Ok(Calibration {
        backend: backend.name.clone(),
        ms_per_work_unit: fastest,
        ms_per_work_unit_max: Some(slowest),
        workers,
    })
}

/// The calibration `auto`, the page's estimate and `rdbench bench` use: 4 runs, up to 6
/// timed steps (3 trials of 2) or about 0.6 s after the warm-up.
pub async fn calibrate_default(
    cfg: &BenchConfig,
    backend: &Backend,
    workers: usize,
) -> Result<Calibration, EngineError> {
    calibrate(cfg, backend, 4, 3 * STEPS_PER_TRIAL, Duration::from_millis(600), workers).await
}

/// The backend `auto` takes, and why, in words for the page and the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The chosen calibration's backend name.
    pub backend: String,
    /// The figures compared and the outcome.
    pub why: String,
}

/// Milliseconds per work unit of a whole backend: its workers run in parallel.
pub fn throughput_ms(c: &Calibration) -> f64 {
    c.ms_per_work_unit / c.workers.max(1) as f64
}

/// The faster of a GPU and a CPU calibration (ties go to the CPU).
pub fn choose_faster(gpu: &Calibration, cpu: &Calibration) -> Choice {
    let (g, c) = (throughput_ms(gpu), throughput_ms(cpu));
    let ms = |v: f64| {
        if v >= 10.0 {
            format!("{v:.0}")
        } else if v >= 1.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.3}")
        }
    };
    let figures = format!(
        "WebGPU {} ms per run-step, CPU {} ms per run-step on {} worker{}",
        ms(g),
        ms(c),
        cpu.workers,
        if cpu.workers == 1 { "" } else { "s" }
    );
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
        Calibration { backend: backend.into(), ms_per_work_unit: ms, ms_per_work_unit_max: None, workers }
    }

    /// 4 ms per unit on 2 workers is 2 ms of throughput: faster than 3, slower than 1.
    #[test]
    fn auto_compares_throughput_over_the_workers() {
        let picks = [
            choose_faster(&cal("webgpu", 1.0, 1), &cal("cpu-flex", 4.0, 2)),
            choose_faster(&cal("webgpu", 3.0, 1), &cal("cpu-flex", 4.0, 2)),
            choose_faster(&cal("webgpu", 3.0, 1), &cal("cpu-flex", 4.0, 1)),
        ];
        let chosen: Vec<&str> = picks.iter().map(|p| p.backend.as_str()).collect();
        assert_eq!(chosen, ["webgpu", "cpu-flex", "webgpu"]);
        assert_eq!(
            picks[1].why,
            "calibrated: WebGPU 3.0 ms per run-step, CPU 2.0 ms per run-step on 2 workers; the CPU is faster"
        );
    }
}
