//! The training loss as the track defines it: per step the squared error of a
//! regression, or at the last step the cross-entropy of a classification's readout. A
//! [`StepLoss`] is one step's term; the forward pass sums its value, the backward pass takes
//! its gradient with respect to the readout.

use burn::tensor::Tensor;
use burn::tensor::activation::{log_softmax, softmax};
use rdbench_core::track::Task;

/// The loss term of one step, with the weight the backward pass scales its gradient by
/// (1 / the loss's count: B * T * F for the MSE, B for the cross-entropy).
#[derive(Clone, Debug)]
pub enum StepLoss {
    /// No loss at this step (a classification's steps before the last).
    None,
    /// `scale * sum((p_t - y)^2)` over rows and features; `y` `[R, B, O]`.
    Squared {
        /// Targets.
        y: Tensor<3>,
        /// Weight of the term.
        scale: f32,
    },
    /// `scale * sum over rows of -y . log softmax(p_t)`; `y` one-hot rows `[R, B, classes]`.
    CrossEntropy {
        /// One-hot classes.
        y: Tensor<3>,
        /// Weight of the term.
        scale: f32,
    },
}

impl StepLoss {
    /// The term for `task` with targets `y` and weight `scale`.
    pub fn of(task: Task, y: Tensor<3>, scale: f32) -> StepLoss {
        match task {
            Task::Regression | Task::LastStepRegression => StepLoss::Squared { y, scale },
            Task::Classification { .. } => StepLoss::CrossEntropy { y, scale },
        }
    }

    /// The unweighted per-run sum `[R, 1, 1]` of this term at readout `pred`; None when
    /// the step has no loss.
    pub fn sum(&self, pred: Tensor<3>) -> Option<Tensor<3>> {
        match self {
            StepLoss::None => None,
            StepLoss::Squared { y, .. } => Some(squared_error(pred, y.clone())),
            StepLoss::CrossEntropy { y, .. } => Some(cross_entropy(pred, y.clone())),
        }
    }

    /// The weighted term's gradient with respect to `pred`: `2 scale (p - y)` or
    /// `scale (softmax(p) - y)`; None when the step has no loss.
    pub fn grad(&self, pred: Tensor<3>) -> Option<Tensor<3>> {
        match self {
            StepLoss::None => None,
            StepLoss::Squared { y, scale } => Some((pred - y.clone()).mul_scalar(2.0 * scale)),
            StepLoss::CrossEntropy { y, scale } => Some((softmax(pred, 2) - y.clone()).mul_scalar(*scale)),
        }
    }
}

/// Per-run sum of squared errors `[R, 1, 1]` of predictions `pred` against `y` (`[R, N, O]`).
pub fn squared_error(pred: Tensor<3>, y: Tensor<3>) -> Tensor<3> {
    (pred - y).square().sum_dim(2).sum_dim(1)
}

/// Per-row cross-entropy `[R, N, 1]` of logits `pred` against one-hot `y`.
pub fn row_cross_entropy(pred: Tensor<3>, y: Tensor<3>) -> Tensor<3> {
    (log_softmax(pred, 2) * y).sum_dim(2).neg()
}

/// Per-run summed cross-entropy `[R, 1, 1]` of logits `pred` against one-hot `y`.
pub fn cross_entropy(pred: Tensor<3>, y: Tensor<3>) -> Tensor<3> {
    row_cross_entropy(pred, y).sum_dim(1)
}

/// Per-run sum `[R, 1, 1]` of `task`'s loss over predictions and targets laid out alike.
pub fn task_loss(task: Task, pred: Tensor<3>, y: Tensor<3>) -> Tensor<3> {
    match task {
        Task::Regression | Task::LastStepRegression => squared_error(pred, y),
        Task::Classification { .. } => cross_entropy(pred, y),
    }
}
