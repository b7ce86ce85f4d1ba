//! The fused GPU kernels against the tensor-op path on the same device: kernel launches per
//! training step (cubecl's launch observer), milliseconds per step, and how far the two
//! paths' gradients, losses and reversals differ. `rdbench perf --backend vulkan`, the
//! page's worker (`fused_check`) and the tests read it.

use crate::batch::{Batch, DeviceData};
use crate::error::EngineError;
use crate::model::{Gru, RecurrentModel};
use crate::schedule::reversal::checkpointed_grads;
use crate::train::adam::Adam;
use crate::train::dense::dense_grads;
use crate::train::{init_population, optimizer_step, read_f32};
use burn::tensor::{Device, Tensor};
use cubecl::logging::{LaunchObservation, LaunchObserver};
use rdbench_core::track::{self, Track};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use web_time::Instant;

/// Counts every kernel launch while installed.
#[derive(Default)]
struct Launches(AtomicUsize);

impl LaunchObserver for Launches {
    fn launched(&self, _kernel: &'static str) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// `f`'s result and the kernel launches it issued. The observer is process-wide: nothing
/// else may launch kernels meanwhile.
pub fn count_launches<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let launches = Arc::new(Launches::default());
    let watching = LaunchObservation::new(launches.clone());
    let out = f();
    drop(watching);
    (out, launches.0.load(Ordering::Relaxed))
}

/// One path's figures for one training step of each arm.
#[derive(Clone, Debug, Serialize)]
pub struct PathFigures {
    /// Kernel launches of one baseline step (dense BPTT, clip, Adam).
    pub dispatches_dense: usize,
    /// Kernel launches of one idea step (checkpointed at k = `k`, its reversals included).
    pub dispatches_idea: usize,
    /// Milliseconds per baseline step (the device's queue drained at the end).
    pub ms_dense: f64,
    /// Milliseconds per idea step.
    pub ms_idea: f64,
}

/// The check's result.
#[derive(Clone, Debug, Serialize)]
pub struct FusedCheck {
    /// Runs stepped together.
    pub population: usize,
    /// Checkpoint interval of the idea step.
    pub k: usize,
    /// Timed steps per figure.
    pub steps: usize,
    /// With the fused kernels.
    pub fused: PathFigures,
    /// Tensor ops only (the path before the kernels).
    pub unfused: PathFigures,
    /// Largest |fused - unfused| over both arms' gradients and losses and a 20-iteration
    /// reversal.
    pub max_abs_diff: f32,
    /// The same for a classification (the mnist1d track's shape: one input, ten classes,
    /// the cross-entropy at the last step), whose VJP takes the tensor ops on the GPU too
    /// while its step and reversal stay fused.
    pub classification_max_abs_diff: f32,
}

/// The idea step's checkpoint interval (reversals on 15 of every 16 steps).
const K: usize = 16;

/// One training step as the population loop takes it (gradients, then `optimizer_step`:
/// divergence masks, per-run clip, Adam), without the host read.
fn train_step(model: &Gru, params: Vec<Tensor<3>>, adam: &mut Adam, batch: &Batch, k: Option<usize>) -> Vec<Tensor<3>> {
    let r = params[0].dims()[0];
    let out = match k {
        None => dense_grads(model, &params, batch),
        Some(k) => checkpointed_grads(model, &params, batch, &vec![k; r], 20).into_grad_out(),
    };
    optimizer_step(params, adam, out).0
}

/// Launches of one step, and ms per step over `steps` steps (after a warm-up that also
/// compiles the kernels).
async fn measure(
    model: &Gru,
    params: &[Tensor<3>],
    batch: &Batch,
    lrs: &[f64],
    k: Option<usize>,
    steps: usize,
) -> Result<(usize, f64), EngineError> {
    let device = params[0].device();
    let run = |p: Vec<Tensor<3>>, adam: &mut Adam| train_step(model, p, adam, batch, k);
    let mut adam = Adam::new(params, lrs, &device);
    let p = run(params.to_vec(), &mut adam);
    read_f32(p[0].clone().sum()).await?;
    let (p, launches) = count_launches(|| run(p, &mut adam));
    read_f32(p[0].clone().sum()).await?;
    let t0 = Instant::now();
    let mut p = p;
    for _ in 0..steps {
        p = run(p, &mut adam);
    }
    read_f32(p[0].clone().sum()).await?;
    Ok((launches, t0.elapsed().as_secs_f64() * 1000.0 / steps.max(1) as f64))
}

/// Largest |fused - unfused| of `model` on `batch`: both arms' gradients and losses (the idea
/// at k = 4) and a 20-iteration reversal of a mid-sequence state.
async fn agreement(model: &Gru, batch: &Batch, params: &[Tensor<3>]) -> Result<f32, EngineError> {
    let reference = model.clone().without_gpu_kernels();
    let r = params[0].dims()[0];
    let ks = vec![4; r];
    let both = |f: &dyn Fn(&Gru) -> Vec<Tensor<3>>| (f(model), f(&reference));
    let (dense_f, dense_u) = both(&|m| {
        let o = dense_grads(m, params, batch);
        [o.grads, vec![o.loss.reshape([r, 1, 1])]].concat()
    });
    let (ck_f, ck_u) = both(&|m| {
        let o = checkpointed_grads(m, params, batch, &ks, 20).into_grad_out();
        [o.grads, vec![o.loss.reshape([r, 1, 1])]].concat()
    });
    let h = crate::train::dense::hidden_states(model, params, batch);
    let x = batch.xs[batch.t() / 2].clone();
    let h_t = h[batch.t() / 2 + 1].clone();
    let (rev_f, rev_u) = both(&|m| vec![m.reverse(params, h_t.clone(), x.clone(), 20)]);
    max_diff([dense_f, ck_f, rev_f].concat().into_iter().zip([dense_u, ck_u, rev_u].concat()).collect()).await
}

/// Largest |a - b| over pairs of tensors (NaN counts as infinitely far).
async fn max_diff(pairs: Vec<(Tensor<3>, Tensor<3>)>) -> Result<f32, EngineError> {
    let mut worst = 0f32;
    for (a, b) in pairs {
        let d = read_f32((a - b).abs().max().reshape([1, 1, 1])).await?[0];
        worst = if d.is_nan() { f32::INFINITY } else { worst.max(d) };
    }
    Ok(worst)
}

/// Run the check on `device` (a GPU device; on another device both paths are the same
/// code): the default GRU (hidden 32), batch 32 of the pendulum track, `population` runs.
pub async fn fused_check(device: &Device, population: usize, steps: usize) -> Result<FusedCheck, EngineError> {
    let model = Gru::new(2, 32, 2);
    let reference = model.clone().without_gpu_kernels();
    let track = track::Pendulum::default();
    let data = track.generate(0);
    let train = DeviceData::new(&data.train, device);
    let batch = train.all(population, 32);
    let seeds: Vec<u64> = (0..population as u64).collect();
    let lrs = vec![0.01; population];
    let (params, _) = init_population(&model, &seeds, device);

    // Agreement: both arms' gradients and losses, and one reversal of a trained-looking state.
    let max_abs_diff = agreement(&model, &batch, &params).await?;
    // The same on a classification: 32 MNIST-1D sequences of a small generated set.
    let mnist = track::Mnist1d { args: track::mnist1d::Mnist1dArgs { num_samples: 100, ..Default::default() } };
    let task = mnist.task();
    let classifier = Gru::new(mnist.input_dim(), 32, mnist.output_dim()).for_task(task);
    let c_batch = DeviceData::new(&mnist.generate(42).train, device).all(population, 32);
    let (c_params, _) = init_population(&classifier, &seeds, device);
    let classification_max_abs_diff = agreement(&classifier, &c_batch, &c_params).await?;

    let mut figures = Vec::new();
    for m in [&model, &reference] {
        let (dd, md) = measure(m, &params, &batch, &lrs, None, steps).await?;
        let (di, mi) = measure(m, &params, &batch, &lrs, Some(K), steps).await?;
        figures.push(PathFigures { dispatches_dense: dd, dispatches_idea: di, ms_dense: md, ms_idea: mi });
    }
    let unfused = figures.pop().expect("two paths");
    let fused = figures.pop().expect("two paths");
    Ok(FusedCheck { population, k: K, steps, fused, unfused, max_abs_diff, classification_max_abs_diff })
}
