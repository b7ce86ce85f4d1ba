//! What an arm of the comparison plugs into training: the gradient of a minibatch, a hook
//! before each epoch and after the last, and the extras its runs record. Training calls
//! only this interface; the baseline (`dense`) and the idea arm (`crate::idea`) implement it.

use crate::batch::{Batch, DeviceData};
use crate::error::EngineError;
use crate::model::RecurrentModel;
pub use crate::schedule::GradOut;
use crate::schedule::units::RunCost;
use burn::tensor::Tensor;
use rdbench_core::records::ProbeRecord;
use std::future::Future;
use std::pin::Pin;

/// A future that may borrow and need not be `Send` (the browser's futures are not).
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// What an arm adds to each of its runs' records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunExtras {
    /// Mean hidden states the backward pass stored per minibatch (None: not measured).
    pub mean_stored_states: Option<f64>,
    /// Probes taken by the epoch hook.
    pub probes: Vec<ProbeRecord>,
}

/// How one arm trains a population. One value trains one population at a time: `start`
/// resets it for the next.
pub trait GradientRule {
    /// What one run costs in work units (`crate::work`) with `model` on sequences of `t`
    /// steps and `n_train` training trajectories: the progress bar's unit and the estimate's.
    fn cost(&self, model: &dyn RecurrentModel, t: usize, n_train: usize) -> RunCost;
    /// Reset for a population of `runs` runs that trains on `train` (by default, nothing).
    fn start(&mut self, _train: &DeviceData, _runs: usize) {}
    /// Called with the current parameters before epoch `epoch` (0-based) and once more
    /// after the last epoch (`epoch == epochs`). `live[r]` is false once run r diverged.
    /// By default, nothing.
    fn before_epoch<'a>(
        &'a mut self,
        _model: &'a dyn RecurrentModel,
        _params: &'a [Tensor<3>],
        _epoch: usize,
        _live: &'a [bool],
    ) -> LocalFuture<'a, Result<(), EngineError>> {
        Box::pin(std::future::ready(Ok(())))
    }
    /// Gradients and per-run loss of `batch`, computed on the device (nothing is read).
    fn grads(&mut self, model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch) -> GradOut;
    /// Once per `grads` call, in order, when the host has read that step's losses: `live[r]`
    /// is whether run r was still live when the step began. (On a GPU losses are read once
    /// per epoch, so liveness is known only then.)
    fn settle(&mut self, _live: &[bool]) {}
    /// Run `run`'s extras once the population finished.
    fn finish(&mut self, run: usize) -> RunExtras;
}
