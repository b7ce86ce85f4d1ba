//! The bench's records: the arms and phases, the runs to train, and what a finished run and
//! each of its probes measured (a report's `runs`).

use serde::{Deserialize, Serialize};

/// The two arms of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arm {
    /// Dense BPTT (every state stored, the model's step VJP).
    Baseline,
    /// Reversal-defect adaptive checkpointing.
    Idea,
}

impl Arm {
    /// The report's spelling ("baseline", "idea").
    pub fn as_str(self) -> &'static str {
        match self {
            Arm::Baseline => "baseline",
            Arm::Idea => "idea",
        }
    }
}

/// The protocol's two phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// lr sweep on the 320/80 split.
    Sweep,
    /// Paired seeds at the best lr, scored on the test set.
    Full,
}

impl Phase {
    /// The report's spelling ("sweep", "full").
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Sweep => "sweep",
            Phase::Full => "full",
        }
    }
}

/// One run to train.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Arm.
    pub arm: Arm,
    /// Phase.
    pub phase: Phase,
    /// Learning rate.
    pub lr: f64,
    /// Run seed (init and minibatch order).
    pub seed: u64,
}

/// This worker's share of every population when a bench is split over `count` browser
/// workers: worker `index` trains slice `index` of each population's runs (the slices of
/// `train::parallel::slices`) and receives the others' records from the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slice {
    /// This worker, 0-based; worker 0's report is the bench's.
    pub index: usize,
    /// Workers in the split.
    pub count: usize,
}

/// Contiguous slices of `n` items for `parts` workers (threads or browser workers), as even
/// as possible; never an empty one.
pub fn slices(n: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts).map(|i| (i * n / parts)..((i + 1) * n / parts)).filter(|r| !r.is_empty()).collect()
}

/// Mean relative reconstruction error after reversing k - 1 steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainedDefect {
    /// Interval probed.
    pub k: usize,
    /// Mean relative error of the reconstructed h_{c-k+1}.
    pub defect: Option<f64>,
}

/// One probe of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// Probe index: `e` is before epoch `e` (0-based); `epochs` is after the last epoch.
    pub epoch: usize,
    /// Mean one-step reversal defect over batch and t = 2..T (null if not finite).
    pub defect_mean: Option<f64>,
    /// Largest one-step defect.
    pub defect_max: Option<f64>,
    /// Chained defects for k = 2, 4, .., k_max.
    pub chained: Vec<ChainedDefect>,
    /// Interval chosen by the run's policy.
    pub k: usize,
    /// Checkpoints at that interval: ceil(T / k) + 1.
    pub checkpoints: usize,
    /// Stored hidden-state bytes per minibatch: checkpoints x batch x hidden x 4.
    pub stored_bytes: u64,
    /// Bytes dense BPTT stores: (T + 1) x batch x hidden x 4.
    pub dense_bytes: u64,
    /// Cosine between the checkpointed gradient at the chosen k and dense BPTT.
    pub grad_cos_chosen: Option<f64>,
    /// Cosine between the checkpointed gradient at k_max and dense BPTT.
    pub grad_cos_kmax: Option<f64>,
    /// Measured peak heap bytes of the checkpointed pass at the chosen k on the probe batch
    /// (native CPU backends, counting allocator, this thread only); null where it cannot be
    /// measured: in the browser (wasm has no counting allocator), on GPU backends (device
    /// memory is not host heap), or when the binary does not install the counting allocator.
    #[serde(default)]
    pub peak_bytes_checkpointed: Option<u64>,
    /// The same measurement for dense BPTT on the probe batch (null under the same conditions).
    #[serde(default)]
    pub peak_bytes_dense: Option<u64>,
}

/// A run's rank from an epoch on (ranked models, spec §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankStep {
    /// First epoch (0-based) trained at this rank.
    pub epoch: usize,
    /// Rank of the low-rank maps.
    pub rank: usize,
}

/// Where a run diverged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DivergedAt {
    /// Epoch (0-based); `epochs` means at the final evaluation.
    pub epoch: usize,
    /// Minibatch within the epoch.
    pub step: usize,
}

/// Everything measured about one finished run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Arm.
    pub arm: Arm,
    /// Phase.
    pub phase: Phase,
    /// Learning rate.
    pub lr: f64,
    /// Run seed.
    pub seed: u64,
    /// The track's metric of the final weights on the evaluation set (MSE, or accuracy);
    /// null if the run diverged.
    pub metric: Option<f64>,
    /// Whether the loss became NaN or infinite.
    pub diverged: bool,
    /// Where it diverged.
    pub diverged_at: Option<DivergedAt>,
    /// Mean training loss of each epoch (null from the epoch it diverged).
    pub loss_curve: Vec<Option<f64>>,
    /// Wall time of the population this run trained in, seconds.
    pub wall_time_s: f64,
    /// Runs trained together with this one (they share the wall time).
    pub population: usize,
    /// Idea arm: mean hidden states the checkpointed pass really stored per minibatch, over
    /// the minibatches before the run diverged.
    pub mean_stored_states: Option<f64>,
    /// Idea arm: every probe.
    pub probes: Vec<ProbeRecord>,
    /// The backend that trained it (`Backend::name`, e.g. "cpu-flex"); empty in older reports.
    #[serde(default)]
    pub backend: String,
    /// `BenchConfig::run_hash` of the config it was trained under; empty in older reports.
    /// With arm, phase, lr, seed and backend it decides whether a resumed bench may reuse it.
    #[serde(default)]
    pub run_hash: String,
    /// Ranked models (spec §7): the run's rank from each epoch on, starting with (0, r0);
    /// empty for models without a rank and in older reports.
    #[serde(default)]
    pub rank_history: Vec<RankStep>,
    /// The track's secondary figure on the evaluation set (`Task::secondary`: the
    /// cross-entropy of a classification); absent for a track without one, for a diverged
    /// run and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary_metric: Option<f64>,
}

impl RunRecord {
    /// Whether this record is the run `spec` would train on `backend` under `run_hash`.
    pub fn is_run(&self, spec: &RunSpec, backend: &str, run_hash: &str) -> bool {
        self.arm == spec.arm
            && self.phase == spec.phase
            && self.lr == spec.lr
            && self.seed == spec.seed
            && self.backend == backend
            && self.run_hash == run_hash
    }
}
