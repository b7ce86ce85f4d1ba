//! The baseline's gradient: full BPTT through the unrolled sequence with burn autodiff.

use super::batch::Batch;
use crate::model::RecurrentModel;
use burn::tensor::Tensor;

/// Gradients and per-run loss of one minibatch.
pub struct GradOut {
    /// One gradient per parameter, `[R, ..]`, on the parameters' (non-autodiff) device.
    pub grads: Vec<Tensor<3>>,
    /// Per-run MSE, `[R]`.
    pub loss: Tensor<1>,
}

/// Forward the whole sequence on an autodiff copy of `params` and backpropagate.
pub fn dense_grads(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut {
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
    let per_run = (pred - batch.y_all.clone()).square().sum_dim(2).sum_dim(1).mul_scalar(batch.mse_scale());
    // Runs are independent, so the gradient of the sum is each run's own gradient.
    let g = per_run.clone().sum().backward();
    let grads = leaves.iter().map(|p| p.grad(&g).expect("every parameter takes part in the loss")).collect();
    GradOut { grads, loss: per_run.inner().reshape([r]) }
}

/// Per-run MSE of `params` on `batch` (no gradient): the metric of a run.
pub fn mse(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<1> {
    let [r, _, _] = params[0].dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &params[0].device());
    let mut preds = Vec::with_capacity(batch.t());
    for x in &batch.xs {
        h = model.step(params, h, x.clone());
        preds.push(model.readout(params, h.clone(), x.clone()));
    }
    let pred = Tensor::cat(preds, 1);
    (pred - batch.y_all.clone()).square().sum_dim(2).sum_dim(1).mul_scalar(batch.mse_scale()).reshape([r])
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
