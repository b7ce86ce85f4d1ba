//! The baseline: full BPTT through the unrolled sequence (the model's hand-written VJP, with
//! burn autodiff as the reference), plus the forward-only passes every arm shares
//! (evaluation, hidden states).

use super::arm::{GradOut, GradientRule, RunExtras};
use crate::batch::Batch;
use crate::error::EngineError;
use crate::model::RecurrentModel;
use crate::model::loss::{row_cross_entropy, task_loss};
use crate::schedule::Schedule;
use crate::schedule::units::{self, RunCost};
use burn::tensor::Tensor;
use rdbench_core::track::Task;

/// The baseline arm's rule: dense BPTT, nothing before epochs, no extras.
pub struct DenseRule;

impl GradientRule for DenseRule {
    fn cost(&self, model: &dyn RecurrentModel, t: usize, _n_train: usize) -> RunCost {
        RunCost { step: units::dense(model, t), probe: 0, eval: units::forward(model, t) }
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
    let pred = predictions(model, &leaves, batch);
    let per_run = task_loss(batch.task, pred, batch.y_all()).mul_scalar(batch.loss_scale());
    // Runs are independent, so the gradient of the sum is each run's own gradient.
    let g = per_run.clone().sum().backward();
    let grads = leaves.iter().map(|p| p.grad(&g).expect("every parameter takes part in the loss")).collect();
    GradOut { grads, loss: per_run.inner().reshape([r]) }
}

/// The readouts the loss reads, `[R, S * B, F_out]` (time-major, like `batch.y_all()`): every
/// step's for a regression, the last step's for a classification.
fn predictions(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<3> {
    let [r, _, _] = params[0].dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &params[0].device());
    let mut preds = Vec::with_capacity(batch.t());
    let every_step = batch.task.every_step();
    for (i, x) in batch.xs().enumerate() {
        h = model.step(params, h, x.clone());
        if every_step || i + 1 == batch.t() {
            preds.push(model.readout(params, h.clone(), x.clone()));
        }
    }
    Tensor::cat(preds, 1)
}

/// Per-run training loss of `params` on `batch` (no gradient), summed on the device in f32:
/// the MSE, or the mean cross-entropy.
pub fn mean_loss(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<1> {
    let [r, _, _] = params[0].dims();
    task_loss(batch.task, predictions(model, params, batch), batch.y_all()).mul_scalar(batch.loss_scale()).reshape([r])
}

/// Per-run, per-sequence figures `[R, B]` whose sums make the evaluation: a regression's
/// summed squared error (few enough terms that f32 keeps them exact to ~1e-7, so the host
/// can add them up in f64), or a classification's cross-entropy then whether the argmax is
/// the class (1 or 0), side by side `[R, 2B]`.
pub fn sequence_figures(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Tensor<2> {
    let y_all = batch.y_all();
    let [r, sb, f] = y_all.dims();
    let pred = predictions(model, params, batch);
    match batch.task {
        Task::Regression | Task::LastStepRegression => {
            let err = pred - y_all;
            // [R, T*B, F] time-major -> [R, T, B, F], summed over T and F.
            err.square().reshape([r, sb / batch.b, batch.b, f]).sum_dim(3).sum_dim(1).reshape([r, batch.b])
        }
        Task::Classification { .. } => {
            let ce = row_cross_entropy(pred.clone(), y_all.clone()).reshape([r, sb]);
            let hit = pred.argmax(2).equal(y_all.argmax(2)).float().reshape([r, sb]);
            Tensor::cat(vec![ce, hit], 1)
        }
    }
}

/// A run's evaluation: the track's metric and its secondary figure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// MSE, or accuracy.
    pub metric: f64,
    /// The mean cross-entropy of a classification; None for a regression (its loss is its
    /// metric).
    pub secondary: Option<f64>,
}

/// Each run's evaluation of `params` on `batch`: the per-sequence figures combined in f64 on
/// the host.
pub async fn evaluate(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
) -> Result<Vec<Evaluation>, EngineError> {
    let [r, sb, f] = batch.y_all_dims();
    let v = super::read_f32(sequence_figures(model, params, batch)).await?;
    let sum = |c: &[f32]| c.iter().map(|&v| v as f64).sum::<f64>();
    Ok(v.chunks(v.len() / r)
        .map(|c| match batch.task {
            Task::Regression | Task::LastStepRegression => {
                Evaluation { metric: sum(c) / (sb * f) as f64, secondary: None }
            }
            Task::Classification { .. } => {
                let (ce, hit) = c.split_at(batch.b);
                Evaluation { metric: sum(hit) / batch.b as f64, secondary: Some(sum(ce) / batch.b as f64) }
            }
        })
        .collect())
}

/// Every hidden state h_0..h_T of a forward pass (h_0 = 0), each `[R, B, H]`.
pub fn hidden_states(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> Vec<Tensor<3>> {
    let [r, _, _] = params[0].dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &params[0].device());
    let mut hs = Vec::with_capacity(batch.t() + 1);
    hs.push(h.clone());
    for x in batch.xs() {
        h = model.step(params, h, x.clone());
        hs.push(h.clone());
    }
    hs
}
