//! Work units of a pass (the unit of the progress bar and the time estimate, `crate::work`):
//! each schedule's forward steps, reversal evaluations and one-step VJPs, weighted by what
//! they cost on the model ([`CellCost`]), and what one run of an arm costs in them.

use crate::model::{CellCost, RecurrentModel};
use crate::schedule::plan::Action;

/// What one run of an arm costs, in work units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCost {
    /// Per trajectory of a training step.
    pub step: u64,
    /// Per probe (before each epoch and after the last; 0 for the baseline).
    pub probe: u64,
    /// Per trajectory of the final evaluation.
    pub eval: u64,
}

impl RunCost {
    /// One run's units: `epochs` epochs over `n_train` trajectories, a probe before each
    /// epoch and after the last, the evaluation of `n_eval` trajectories.
    pub fn run_units(&self, n_train: usize, n_eval: usize, epochs: usize) -> u64 {
        let probes = if self.probe > 0 { epochs as u64 + 1 } else { 0 };
        epochs as u64 * n_train as u64 * self.step + probes * self.probe + n_eval as u64 * self.eval
    }
}

impl CellCost {
    /// Units of a pass of `forward` steps, `reversal` reversal evaluations and `vjp` VJPs.
    pub(crate) fn of(&self, forward: u64, reversal: u64, vjp: u64) -> u64 {
        forward * self.forward + reversal * self.reversal + vjp * self.vjp
    }
}

/// Units of dense BPTT over `t` steps: T forward steps and T VJPs.
pub fn dense(model: &dyn RecurrentModel, t: usize) -> u64 {
    model.cell_cost().of(t as u64, 0, t as u64)
}

/// Units of the reversal pass at interval `k` over `t` steps (the idea's training step, the
/// probe's chained defects): T forward steps, one reversal of every state that is not a
/// checkpoint (T - ceil(T / k) of h_0..h_{T-1}), and T VJPs when it takes the gradient.
pub fn reversal_pass(model: &dyn RecurrentModel, t: usize, k: usize, iters: usize, gradient: bool) -> u64 {
    let rebuilt = (t - t.div_ceil(k.max(1))) as u64 * model.reversal_evals(iters) as u64;
    model.cell_cost().of(t as u64, rebuilt, if gradient { t as u64 } else { 0 })
}

/// Units of a forward pass over `t` steps (the final evaluation).
pub fn forward(model: &dyn RecurrentModel, t: usize) -> u64 {
    model.cell_cost().of(t as u64, 0, 0)
}

/// Units of a recomputing schedule's plan: its forward steps and VJPs.
pub fn plan_units(model: &dyn RecurrentModel, plan: &[Action]) -> u64 {
    let count = |a: Action| plan.iter().filter(|&&b| b == a).count() as u64;
    model.cell_cost().of(count(Action::Advance), 0, count(Action::Vjp))
}
