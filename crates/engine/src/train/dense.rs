//! The baseline: full BPTT through the unrolled sequence (the model's hand-written VJP, with
//! burn autodiff as the reference), plus the forward-only passes every arm shares
//! (evaluation, hidden states).

use super::arm::{GradOut, GradientRule, LocalFuture, RunExtras};
use super::batch::{Batch, DeviceData};
use crate::error::EngineError;
use crate::model::{RecurrentModel, squared_error};
use crate::schedule::Schedule;
use burn::tensor::Tensor;

/// The baseline arm's rule: dense BPTT, nothing before epochs, no extras.
pub struct DenseRule;

impl GradientRule for DenseRule {
    fn step_weight(&self) -> usize {
        1
    }

    fn start(&mut self, _: &DeviceData, _: usize) {}

    fn before_epoch<'a>(
        &'a mut self,
        _: &'a dyn RecurrentModel,
        _: &'a [Tensor<3>],
        _: usize,
        _: &'a [bool],
    ) -> LocalFuture<'a, Result<(), EngineError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn grads(&mut self, model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut {
        dense_grads(model, params, batch)
    }

    fn finish(&mut self, _: usize) -> RunExtras {
        RunExtras::default()
    }
}

/// Dense BPTT through the model's hand-written step VJP: the forward pass keeps every
/// state, the backward pass takes one vector-Jacobian product per step from T down to 1 (the
/// dense schedule, `crate::schedule::dense`). The same gradient as [`autodiff_grads`] (tested
/// against it and PyTorch) without building an autodiff graph, and through the fused kernels
/// on the CPU: several times faster.
pub fn dense_grads(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut {
    Schedule::Dense.run(model, params, batch, 0).into_grad_out()
}

/// Dense BPTT by burn autodiff: the whole sequence forwarded on an autodiff copy of
/// `params`, then backpropagated. The independent reference the hand-written VJP is tested
/// against.
pub fn autodiff_grads(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut {
    let leaves: Vec<Tensor<3>> = params.iter().map(|p| p.clone().autodiff().require_grad()).collect();
    let [r, _, _] = params[0].dims();
    let device = leaves[0].device();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut preds = Vec::with_capacity(batch.t());
    for x in &batch.xs {
        h = model.step(&leaves, h, x.clone());
        preds.push(model.readout(&leaves, h.clone(), x.clone()));
    }
    // [R, T*B, F] time-major, matching batch.y_all.
    let pred = Tensor::cat(preds, 1);
    let per_run = squared_error(pred, batch.y_all.clone()).mul_scalar(batch.mse_scale());
    // Runs are independent, so the gradient of the sum is each run's own gradient.
    let g = per_run.clone().sum().backward();
    let grads = leaves.iter().map(|p| p.grad(&g).expect("every parameter takes part in the loss")).collect();
    GradOut { grads, loss: per_run.inner().reshape([r]) }
}

/// Predictions `[R, T * B, F_out]` (time-major, like `batch.y_all`) of a forward pass.
fn predictions(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<3> {
    let [r, _, _] = params[0].dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &params[0].device());
    let mut preds = Vec::with_capacity(batch.t());
    for x in &batch.xs {
        h = model.step(params, h, x.clone());
        preds.push(model.readout(params, h.clone(), x.clone()));
    }
    Tensor::cat(preds, 1)
}

/// Per-run MSE of `params` on `batch` (no gradient), summed on the device in f32.
pub fn mse(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<1> {
    let [r, _, _] = params[0].dims();
    squared_error(predictions(model, params, batch), batch.y_all.clone()).mul_scalar(batch.mse_scale()).reshape([r])
}

/// Per-run, per-trajectory sum of squared errors `[R, B]`: few enough terms each that f32
/// keeps them exact to ~1e-7, so the host can add them up in f64 (`eval_mse`).
pub fn trajectory_sse(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<2> {
    let [r, tb, f] = batch.y_all.dims();
    let err = predictions(model, params, batch) - batch.y_all.clone();
    // [R, T*B, F] time-major -> [R, T, B, F], summed over T and F.
    err.square().reshape([r, tb / batch.b, batch.b, f]).sum_dim(3).sum_dim(1).reshape([r, batch.b])
}

/// Per-run MSE of `params` on `batch`, the per-trajectory sums combined in f64 on the host.
pub async fn eval_mse(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
) -> Result<Vec<f64>, EngineError> {
    let [r, tb, f] = batch.y_all.dims();
    let sse = super::read_f32(trajectory_sse(model, params, batch)).await?;
    let per_run = sse.len() / r;
    Ok(sse.chunks(per_run).map(|c| c.iter().map(|&v| v as f64).sum::<f64>() / (tb * f) as f64).collect())
}

/// Every hidden state h_0..h_T of a forward pass (h_0 = 0), each `[R, B, H]`.
pub fn hidden_states(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Vec<Tensor<3>> {
    let [r, _, _] = params[0].dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &params[0].device());
    let mut hs = Vec::with_capacity(batch.t() + 1);
    hs.push(h.clone());
    for x in &batch.xs {
        h = model.step(params, h, x.clone());
        hs.push(h.clone());
    }
    hs
}
