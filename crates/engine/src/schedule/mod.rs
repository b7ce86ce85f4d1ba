//! Gradient schedules: how a backward pass gets the hidden states its VJPs need, at what
//! memory and what cost. Dense BPTT keeps every state; fixed-interval checkpointing and
//! revolve keep a few and recompute the rest forward (the dense gradient exactly); reversal
//! rebuilds them by running the cell backwards (the idea's mechanism, spec §5). Every
//! schedule really runs on the model and a batch and returns the gradient with what it did,
//! counted as it ran (`Counts`).

pub mod dense;
pub mod fixed_interval;
pub mod info_buffer;
pub mod plan;
pub mod reversal;
pub mod revolve;
pub mod units;
pub mod whole;

use crate::batch::Batch;
use crate::model::evals::Evals;
use crate::model::{Gradient, RecurrentModel};
use burn::tensor::Tensor;
pub use rdbench_core::records::ScheduleKind;

/// Gradients and per-run loss of one minibatch: what a schedule gives training.
pub struct GradOut {
    /// One gradient per parameter, `[R, ..]`, on the parameters' (non-autodiff) device.
    pub grads: Gradient,
    /// Per-run training loss (the track's: MSE or mean cross-entropy), `[R]`.
    pub loss: Tensor<1>,
}

/// A gradient schedule with its parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Dense BPTT: every state kept (the baseline's gradient).
    Dense,
    /// Keep every k-th state, recompute each segment forward from its checkpoint once
    /// (Chen et al. 2016, `torch.utils.checkpoint`).
    FixedInterval {
        /// Interval between checkpoints.
        k: usize,
    },
    /// The optimal binomial schedule for a number of snapshot slots (Griewank & Walther
    /// 2000, "revolve").
    Revolve {
        /// Snapshot slots (the working state comes on top).
        slots: usize,
    },
    /// Checkpoints every k steps, the states between rebuilt by the model's own reversal
    /// (spec §5), every run at the same k.
    Reversal {
        /// Interval between checkpoints.
        k: usize,
    },
    /// The idea: reversal at the interval each run's policy chose.
    Idea {
        /// One interval per run of the population.
        ks: Vec<usize>,
    },
}

/// What one run's pass did, counted as it ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Hidden states held at the peak: stored states plus the working state (dense: T + 1;
    /// interval k: ceil(T / k) + 1 checkpoints, the last one being the working state).
    pub stored_states: usize,
    /// Forward step evaluations, recomputation included.
    pub forward_evals: u64,
    /// Reversal cell evaluations: every fixed-point iteration (GRU), every inverse (exact
    /// models).
    pub reversal_evals: u64,
    /// One-step VJPs (T for every schedule).
    pub vjp_steps: u64,
}

impl Counts {
    /// One run's counts from what a pass over `runs` runs spent, when every run did the same.
    pub fn per_run(stored_states: usize, spent: Evals, runs: usize) -> Counts {
        let each = |n: u64| {
            debug_assert_eq!(n % runs as u64, 0, "a lockstep pass spends the same on every run");
            n / runs as u64
        };
        Counts {
            stored_states,
            forward_evals: each(spent.forward),
            reversal_evals: each(spent.reversal),
            vjp_steps: each(spent.vjp),
        }
    }

    /// Forward and reversal cell evaluations together: what the frontier compares.
    pub fn cell_evals(&self) -> u64 {
        self.forward_evals + self.reversal_evals
    }
}

/// A schedule's pass over a population: the gradient, the loss, and each run's counts.
pub struct Pass {
    /// One gradient per parameter, `[R, ..]`.
    pub grads: Gradient,
    /// Per-run loss `[R]`, when the pass evaluated every step's loss term (the schedules that
    /// stop their first forward sweep early never see the last steps' predictions outside
    /// their VJPs).
    pub loss: Option<Tensor<1>>,
    /// Per run.
    pub counts: Vec<Counts>,
}

impl Pass {
    /// States each run held at the peak.
    pub fn stored_states(&self) -> Vec<usize> {
        self.counts.iter().map(|c| c.stored_states).collect()
    }

    /// The gradient and loss of a training step. Panics for a pass without a complete loss
    /// (training takes dense and reversal passes only, which have one).
    pub fn into_grad_out(self) -> GradOut {
        GradOut { grads: self.grads, loss: self.loss.expect("a training pass evaluates every step's loss") }
    }
}

impl Schedule {
    /// Its name in the report.
    pub fn kind(&self) -> ScheduleKind {
        match self {
            Schedule::Dense => ScheduleKind::Dense,
            Schedule::FixedInterval { .. } => ScheduleKind::FixedInterval,
            Schedule::Revolve { .. } => ScheduleKind::Revolve,
            Schedule::Reversal { .. } => ScheduleKind::Reversal,
            Schedule::Idea { .. } => ScheduleKind::Idea,
        }
    }

    /// Its plan for `t` steps, for a schedule that recomputes (fixed interval, revolve).
    pub fn plan(&self, t: usize) -> Option<Vec<plan::Action>> {
        match self {
            Schedule::FixedInterval { k } => Some(fixed_interval::plan(t, *k)),
            Schedule::Revolve { slots } => Some(revolve::plan(t, *slots)),
            _ => None,
        }
    }

    /// Run the schedule on `params` and `batch` (`reversal_iters` for the reversal
    /// schedules).
    pub fn run(&self, model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch, reversal_iters: usize) -> Pass {
        let t = batch.t();
        match self {
            Schedule::Dense => {
                let r = params[0].dims()[0];
                whole::pass(model, params, batch, &vec![1; r], 0)
                    .unwrap_or_else(|| plan::execute(model, params, batch, &dense::plan(t)))
            }
            Schedule::FixedInterval { .. } | Schedule::Revolve { .. } => {
                let p = self.plan(t).expect("a recomputing schedule");
                whole::plan_pass(model, params, batch, &p).unwrap_or_else(|| plan::execute(model, params, batch, &p))
            }
            Schedule::Reversal { k } => {
                let r = params[0].dims()[0];
                reversal::checkpointed_grads(model, params, batch, &vec![*k; r], reversal_iters)
            }
            Schedule::Idea { ks } => reversal::checkpointed_grads(model, params, batch, ks, reversal_iters),
        }
    }
}
