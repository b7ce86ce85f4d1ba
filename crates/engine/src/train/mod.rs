//! Population training (spec §3): R independent runs stepped together, each with its own
//! init, minibatch order, lr, gradient clipping and Adam state. What differs between the
//! arms comes in through [`arm::GradientRule`]; this module knows no arm by name.

pub mod adam;
pub mod arm;
pub mod batch;
pub mod dense;
pub mod enrich;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;
mod population;

pub use arm::{GradOut, GradientRule, LocalFuture, RunExtras};
pub use enrich::Enrichment;
pub use population::{optimizer_step, train_population};

use crate::error::EngineError;
use crate::model::RecurrentModel;
use burn::tensor::{Device, Tensor, TensorData};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use web_time::Instant;

/// Settings shared by every run of a population.
#[derive(Clone, Debug)]
pub struct TrainSettings {
    /// Epochs.
    pub epochs: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// When a ranked model's runs gain a rank (spec §7; unused by models without a rank).
    pub enrichment: Enrichment,
    /// Name of the backend, stamped on every record (a resumed bench matches on it).
    pub backend: String,
    /// `BenchConfig::run_hash` of the config, stamped on every record.
    pub run_hash: String,
}

impl TrainSettings {
    /// The settings `cfg` trains with on `backend` (its name).
    pub fn new(cfg: &rdbench_core::config::BenchConfig, backend: &str) -> Self {
        TrainSettings {
            epochs: cfg.epochs,
            batch_size: cfg.batch_size,
            enrichment: Enrichment { window: cfg.enrich_window, threshold: cfg.enrich_threshold },
            backend: backend.to_string(),
            run_hash: cfg.run_hash(),
        }
    }
}

/// Bench-wide progress bookkeeping, shared by all populations.
pub struct Tally {
    /// When the bench started.
    pub start: Instant,
    /// Runs finished.
    pub runs_done: usize,
    /// Runs in the bench.
    pub runs_total: usize,
    /// Work units done (a run-step, weighted by the arm's `GradientRule::step_weight`).
    pub work_done: usize,
    /// Work units in the bench.
    pub work_total: usize,
}

impl Tally {
    /// A fresh tally of `runs_total` runs and `work_total` work units, started now.
    pub fn new(runs_total: usize, work_total: usize) -> Self {
        Tally { start: Instant::now(), runs_done: 0, runs_total, work_done: 0, work_total }
    }
}

/// Initial parameters of each run, drawn from its seed's PRNG, stacked to `[R, ..]`.
/// Returns the parameters and each run's PRNG, which then draws its minibatch order.
pub fn init_population(
    model: &dyn RecurrentModel,
    seeds: &[u64],
    device: &Device,
) -> (Vec<Tensor<3>>, Vec<ChaCha8Rng>) {
    let mut rngs: Vec<ChaCha8Rng> = seeds.iter().map(|&s| ChaCha8Rng::seed_from_u64(s)).collect();
    let per_run: Vec<Vec<Vec<f32>>> = rngs.iter_mut().map(|rng| model.init_run(rng)).collect();
    let params = model
        .param_shapes()
        .iter()
        .enumerate()
        .map(|(i, &[a, b])| {
            let flat: Vec<f32> = per_run.iter().flat_map(|run| run[i].iter().copied()).collect();
            Tensor::from_data(TensorData::new(flat, [seeds.len(), a, b]), device)
        })
        .collect();
    (params, rngs)
}

/// Read a small float tensor back to the host without blocking.
pub async fn read_f32<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, EngineError> {
    let data = t.into_data_async().await?;
    data.try_to_vec::<f32>().map_err(|e| EngineError::Device(format!("unexpected tensor data: {e:?}")))
}
