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

/// The arms, in the order the protocol trains and records them.
pub const ARMS: [Arm; 2] = [Arm::Baseline, Arm::Idea];

/// First sweep seed (spec §4.2): sweep runs use seeds 1000, 1001, ...
pub const SWEEP_SEED0: u64 = 1000;

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

/// The sweep runs of `arm` (spec §4.2): every lr of the grid with seeds 1000, 1001, ..,
/// lr-major (the order the protocol trains and records them).
pub fn sweep_runs(arm: Arm, lrs: &[f64], n_sweep_seeds: usize) -> Vec<RunSpec> {
    let seeds = SWEEP_SEED0..SWEEP_SEED0 + n_sweep_seeds as u64;
    lrs.iter().flat_map(|&lr| seeds.clone().map(move |seed| RunSpec { arm, phase: Phase::Sweep, lr, seed })).collect()
}

/// The full runs of `arm` (spec §4.4): seeds 0..n_seeds at the arm's best lr.
pub fn full_runs(arm: Arm, lr: f64, n_seeds: usize) -> Vec<RunSpec> {
    (0..n_seeds as u64).map(|seed| RunSpec { arm, phase: Phase::Full, lr, seed }).collect()
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

/// A gradient schedule, as the frontier names it: how a backward pass gets the
/// hidden states its VJPs need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleKind {
    /// Dense BPTT: every state kept.
    Dense,
    /// Every k-th state kept, each segment recomputed forward once (exact).
    FixedInterval,
    /// Binomial checkpointing with a number of snapshot slots (exact, optimal).
    Revolve,
    /// Every k-th state kept, the others rebuilt by the model's reversal.
    Reversal,
    /// The idea: reversal at the interval its policy chose.
    Idea,
}

impl ScheduleKind {
    /// Every kind, in the order the report and the charts list them.
    pub const ALL: [ScheduleKind; 5] = [
        ScheduleKind::Dense,
        ScheduleKind::FixedInterval,
        ScheduleKind::Revolve,
        ScheduleKind::Reversal,
        ScheduleKind::Idea,
    ];

    /// The report's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::Dense => "dense",
            ScheduleKind::FixedInterval => "fixed_interval",
            ScheduleKind::Revolve => "revolve",
            ScheduleKind::Reversal => "reversal",
            ScheduleKind::Idea => "idea",
        }
    }

    /// In words, for legends and tables.
    pub fn label(self) -> &'static str {
        match self {
            ScheduleKind::Dense => "dense BPTT",
            ScheduleKind::FixedInterval => "fixed interval",
            ScheduleKind::Revolve => "revolve",
            ScheduleKind::Reversal => "reversal at fixed k",
            ScheduleKind::Idea => "idea (chosen k)",
        }
    }

    /// Whether its gradient is dense BPTT's exactly (it recomputes, never rebuilds).
    pub fn is_exact(self) -> bool {
        matches!(self, ScheduleKind::Dense | ScheduleKind::FixedInterval | ScheduleKind::Revolve)
    }
}

/// A schedule with its parameter: how the frontier names a point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ScheduleAt {
    /// The schedule.
    pub schedule: ScheduleKind,
    /// Its interval (fixed_interval, reversal, idea).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<usize>,
    /// Its snapshot slots (revolve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots: Option<usize>,
}

impl ScheduleAt {
    /// Its parameter in words ("k = 16", "5 slots"; empty for dense).
    pub fn param(&self) -> String {
        match (self.k, self.slots) {
            (Some(k), _) => format!("k = {k}"),
            (_, Some(s)) => format!("{s} slot{}", if s == 1 { "" } else { "s" }),
            _ => String::new(),
        }
    }
}

/// One gradient schedule run on a probe's batch and model: what it held and
/// evaluated, counted as it ran, and its gradient against dense BPTT's. Counts are per run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrontierPoint {
    /// The schedule and its parameter.
    #[serde(flatten)]
    pub at: ScheduleAt,
    /// Hidden states held at the peak (stored plus the working state).
    pub stored_states: usize,
    /// Forward step evaluations, recomputation included.
    pub forward_evals: u64,
    /// Reversal cell evaluations (fixed-point iterations; inverses for exact models).
    pub reversal_evals: u64,
    /// One-step VJPs.
    pub vjp_steps: u64,
    /// Cosine of its gradient with dense BPTT's (null if not finite).
    pub grad_cos: Option<f64>,
    /// ||g - g_dense|| / ||g_dense|| (null if not finite).
    pub grad_rel_err: Option<f64>,
    /// Measured peak heap bytes of the pass, per run (null where not measured, as
    /// `peak_bytes_dense`).
    pub peak_bytes: Option<u64>,
    /// Wall time of the pass, per run, seconds (null on a GPU, where a pass only queues work).
    pub seconds: Option<f64>,
}

impl FrontierPoint {
    /// Forward and reversal cell evaluations: the cost the frontier compares.
    pub fn cell_evals(&self) -> u64 {
        self.forward_evals + self.reversal_evals
    }
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
    /// The idea's full runs: every gradient schedule of the frontier run on the
    /// probe batch and this moment's model; empty for sweep runs and in older reports.
    #[serde(default)]
    pub frontier: Vec<FrontierPoint>,
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
    /// The build that trained it (`rdbench_engine::BUILD`: version + source hash); empty in
    /// older reports. A resume or a merge takes only runs of its own build.
    #[serde(default)]
    pub build: String,
}

impl RunRecord {
    /// Which run this record is the record of.
    pub fn spec(&self) -> RunSpec {
        RunSpec { arm: self.arm, phase: self.phase, lr: self.lr, seed: self.seed }
    }

    /// The record of the idea's full run of `seed` that carries only `probes` (what the
    /// mechanism judges; the other fields empty).
    pub fn of_probes(seed: u64, probes: Vec<ProbeRecord>) -> RunRecord {
        RunRecord {
            arm: Arm::Idea,
            phase: Phase::Full,
            lr: 0.0,
            seed,
            metric: None,
            diverged: false,
            diverged_at: None,
            loss_curve: Vec::new(),
            wall_time_s: 0.0,
            population: 1,
            mean_stored_states: None,
            probes,
            backend: String::new(),
            run_hash: String::new(),
            rank_history: Vec::new(),
            secondary_metric: None,
            build: String::new(),
        }
    }

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
