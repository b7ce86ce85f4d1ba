//! Where a running bench is: the progress the engine sends its driver after training steps.

use crate::records::{Arm, Phase};
use serde::{Deserialize, Serialize};

/// Progress of the bench, sent after every training step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Phase in flight.
    pub phase: Phase,
    /// Arm in flight.
    pub arm: Arm,
    /// Epoch (1-based) of the population in flight.
    pub epoch: usize,
    /// Epochs per run.
    pub epochs: usize,
    /// Minibatch (1-based) within the epoch.
    pub step: usize,
    /// Minibatches per epoch.
    pub steps: usize,
    /// Runs finished so far.
    pub runs_done: usize,
    /// Runs in the whole bench.
    pub runs_total: usize,
    /// Share of the bench's training steps done, 0..1.
    pub fraction: f64,
    /// Learning rate of each run in flight.
    pub lrs: Vec<f64>,
    /// Seed of each run in flight.
    pub seeds: Vec<u64>,
    /// Minibatch loss of each run in flight (null once diverged).
    pub losses: Vec<Option<f64>>,
    /// Seconds since the bench started.
    pub elapsed_s: f64,
}
