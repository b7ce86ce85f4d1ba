//! Population training (spec §3): R independent runs stepped together, each with its own
//! init, minibatch order, lr, gradient clipping and Adam state. What differs between the
//! arms comes in through [`arm::GradientRule`]; this module knows no arm by name.

pub mod adam;
pub mod arm;

pub mod dense;
pub mod enrich;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;
mod population;

pub use arm::{GradOut, GradientRule, LocalFuture, RunExtras};
pub use enrich::Enrichment;
pub use population::{Population, Stepped, optimizer_step, train_population, train_step};

use crate::error::EngineError;
use crate::host::Host;
use crate::model::RecurrentModel;
use burn::tensor::{Device, Tensor, TensorData};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::future::Future;
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
    /// The build (`crate::BUILD`), stamped on every record.
    pub build: String,
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
            build: crate::BUILD.into(),
        }
    }
}

/// Bench-wide progress bookkeeping, shared by all populations.
pub struct Tally {
    /// When this attempt at the bench started.
    pub start: Instant,
    /// Seconds the stopped attempts a resumed bench takes over ran before it (0 when fresh).
    pub before_s: f64,
    /// Runs finished.
    pub runs_done: usize,
    /// Runs in the bench.
    pub runs_total: usize,
    /// Work units done (`crate::work`, each run's as its arm's `GradientRule::cost` counts
    /// them), the steps of runs still in flight included.
    pub work_done: u64,
    /// Work units of the finished runs only: what a stop keeps.
    pub work_kept: u64,
    /// Work units in the bench.
    pub work_total: u64,
}

impl Tally {
    /// A fresh tally of `runs_total` runs and `work_total` work units, started now.
    pub fn new(runs_total: usize, work_total: u64) -> Self {
        Tally { start: Instant::now(), before_s: 0.0, runs_done: 0, runs_total, work_done: 0, work_kept: 0, work_total }
    }

    /// Seconds the bench has run, the stopped attempts it resumes included.
    pub fn elapsed_s(&self) -> f64 {
        self.before_s + self.start.elapsed().as_secs_f64()
    }

    /// Share of the bench's work in `units` work units.
    pub fn share(&self, units: u64) -> f64 {
        units as f64 / self.work_total.max(1) as f64
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

/// `wait`, unless the host cancels while it waits (see `Host::interrupted`); the device
/// finishes the work already queued on its own.
pub async fn unless_cancelled<T>(
    wait: impl Future<Output = Result<T, EngineError>>,
    host: &mut dyn Host,
) -> Result<T, EngineError> {
    let mut wait = std::pin::pin!(wait);
    loop {
        match futures::future::select(wait, host.interrupted()).await {
            futures::future::Either::Left((done, _)) => return done,
            futures::future::Either::Right((_, rest)) => {
                if host.cancelled() {
                    return Err(EngineError::Cancelled);
                }
                wait = rest;
            }
        }
    }
}

/// Read a small float tensor back to the host without blocking.
pub async fn read_f32<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, EngineError> {
    let data = t.into_data_async().await?;
    data.try_to_vec::<f32>().map_err(|e| EngineError::Device(format!("unexpected tensor data: {e:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Event;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A host whose `interrupted` resolves at once, cancelled or not.
    struct Interrupting {
        cancelled: bool,
    }

    impl Host for Interrupting {
        fn event(&mut self, _: &Event) {}
        fn cancelled(&self) -> bool {
            self.cancelled
        }
        fn interrupted(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
            Box::pin(std::future::ready(()))
        }
    }

    /// Ready on its `n`th poll (a read the device finishes later).
    struct ReadyAfter(usize);

    impl Future for ReadyAfter {
        type Output = Result<usize, EngineError>;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            self.0 -= 1;
            if self.0 == 0 {
                return Poll::Ready(Ok(7));
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_cancel_ends_a_wait_the_device_never_finishes() {
        let mut host = Interrupting { cancelled: true };
        let wait = std::future::pending::<Result<(), EngineError>>();
        assert_eq!(futures::executor::block_on(unless_cancelled(wait, &mut host)), Err(EngineError::Cancelled));
    }

    #[test]
    fn without_a_cancel_the_wait_goes_on_to_its_result() {
        let mut host = Interrupting { cancelled: false };
        assert_eq!(futures::executor::block_on(unless_cancelled(ReadyAfter(3), &mut host)), Ok(7));
        // A read that is ready is taken, whatever the host says.
        let mut host = Interrupting { cancelled: true };
        assert_eq!(futures::executor::block_on(unless_cancelled(ReadyAfter(1), &mut host)), Ok(7));
    }
}
