//! `bench_report.json` (spec §6): the seed report's keys in the seed's order, then the
//! extensions. Every extension is optional so the seed-era report loads with these types.

pub mod build;
pub mod sweep;
mod validate;

pub use crate::mechanism::{Condition, MechanismDetail, MechanismSignature, ProbeTrace};
pub use build::build;
pub use validate::{Era, Problem, ProblemKind, is_scale, is_study, validate_json, validate_merged};

use crate::config::BenchConfig;
use crate::records::RunRecord;
use crate::stats::Verdict;
use crate::stats::permutation::SignFlipMethod;
use crate::stats::wilcoxon::Wilcoxon;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Schema version written and accepted.
pub const BENCH_VERSION: u32 = 1;

/// Largest file any input is read from: a report or study report (a real 32-seed report is
/// a few MB), and on the CLI also a plan, a run record and a journal. A larger one is refused
/// unread.
pub const MAX_REPORT_BYTES: usize = 64 * 1024 * 1024;

/// `text` less a leading UTF-8 byte-order mark, which many editors write and many JSON
/// readers skip: every JSON input is read through this.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Schema version (1).
    pub bench_version: u32,
    /// Track name.
    pub track: String,
    /// Model name.
    pub model: String,
    /// The track's metric direction: "lower is better" (MSE) or "higher is better"
    /// (accuracy).
    pub metric_direction: String,
    /// Paired seeds requested per arm.
    pub n_seeds: usize,
    /// Baseline arm: sweep and full runs.
    pub baseline: Baseline,
    /// Idea arm: full runs.
    pub idea: ArmSummary,
    /// Paired comparison.
    pub comparison: Comparison,
    /// Falsifiable mechanism signature.
    pub mechanism_signature: MechanismSignature,
    /// Idea arm's sweep means by lr key.
    pub idea_sweep: IndexMap<String, SweepMean>,

    // ---- extensions (absent from the seed-era report) ----
    /// The full configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<BenchConfig>,
    /// Where and when the bench ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<Environment>,
    /// Extra statistics of the comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Statistics>,
    /// Mechanism conditions and per-seed probe traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<MechanismDetail>,
    /// Memory the idea arm held against dense BPTT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    /// Things a reader must know (diverged runs, excluded pairs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    /// Every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Vec<RunRecord>>,
    /// The idea against exact checkpointing at equal memory, from the probes of
    /// the idea's full runs; absent when none measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frontier: Option<crate::frontier::Frontier>,
    /// The track's task: metric, loss, readout, sizes and the secondary figure. Reports
    /// without it are of the dynamics track (test MSE, per-step MSE loss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskInfo>,
}

/// What the runs were trained and scored on (`Task` of the track, with the bench's sizes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskInfo {
    /// "test MSE" or "test accuracy": what `per_seed`, the means and the diffs are.
    pub metric: String,
    /// The training loss: "mse" or "cross_entropy".
    pub loss: String,
    /// Where the loss reads the model out: "every_step" or "last_step".
    pub readout: String,
    /// Classes of a classification; null for a regression.
    pub classes: Option<usize>,
    /// Time steps T.
    pub seq_len: usize,
    /// Train sequences of the full runs (`config.train_size` resolved).
    pub train_sequences: usize,
    /// Of which the sweep holds out the last ones for validation.
    pub validation_sequences: usize,
    /// Test sequences the full runs are scored on.
    pub test_sequences: usize,
    /// The figure beside the metric (test cross-entropy); null for a track without one.
    pub secondary: Option<SecondaryFigure>,
    /// A trivial predictor's test metric (the adding problem's "always predicting 1"), so a
    /// reader sees whether the models learned anything; absent from reports written before
    /// every track had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceFigure>,
    /// Whether each arm learned, by the rule against `reference`, and whether the comparison
    /// is void; absent from reports written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learnability: Option<crate::learnability::Learnability>,
}

/// What a trivial predictor scores on the test set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceFigure {
    /// What it predicts, e.g. "always predicting 1".
    pub name: String,
    /// The metric it is scored by, e.g. "test MSE".
    pub metric: String,
    /// Its score.
    pub value: f64,
}

/// The track's secondary figure, per arm over the full runs (lower is better).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecondaryFigure {
    /// Its name, e.g. "test cross-entropy".
    pub name: String,
    /// Baseline mean; null if a full run has none (diverged).
    pub baseline_mean: Option<f64>,
    /// Idea mean.
    pub idea_mean: Option<f64>,
    /// Baseline per seed.
    pub baseline_per_seed: Vec<Option<f64>>,
    /// Idea per seed.
    pub idea_per_seed: Vec<Option<f64>>,
}

/// A configuration of the sweep grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cfg {
    /// Learning rate.
    pub lr: f64,
}

/// Sweep mean of one lr.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepEntry {
    /// The lr.
    pub cfg: Cfg,
    /// Mean validation metric over the sweep seeds; null if any sweep run diverged.
    pub mean: Option<f64>,
}

/// A sweep mean keyed by lr (the idea arm's `idea_sweep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepMean {
    /// Mean validation metric; null if any sweep run diverged.
    pub mean: Option<f64>,
}

/// Full runs of an arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FullSummary {
    /// Mean test metric; null if any full run diverged.
    pub mean: Option<f64>,
    /// Population std (ddof 0); null if any full run diverged.
    pub std: Option<f64>,
    /// Test metric per seed 0..n-1; null for a diverged run.
    pub per_seed: Vec<Option<f64>>,
    /// Runs.
    pub n: usize,
}

/// The baseline arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// lr with the best sweep mean.
    pub best_cfg: Cfg,
    /// Sweep means in grid order.
    pub sweep: Vec<SweepEntry>,
    /// Full runs.
    pub full: FullSummary,
}

/// The idea arm's full runs (flattened, as in the seed report).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// lr with the best sweep mean.
    pub best_cfg: Cfg,
    /// Mean test metric; null if any full run diverged.
    pub mean: Option<f64>,
    /// Population std (ddof 0).
    pub std: Option<f64>,
    /// Test metric per seed.
    pub per_seed: Vec<Option<f64>>,
    /// Runs.
    pub n: usize,
}

/// The paired comparison.
///
/// Everything here is computed over the complete pairs (both runs finite): a pair with a
/// diverged run has no difference, so it cannot enter a mean difference, a test or a win
/// count. `statistics.dropped_pairs` lists the pairs left out and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// mean(idea) - mean(baseline) over the complete pairs (equal to mean(idea) -
    /// mean(baseline) when no run diverged); null when no pair is complete. The arms' own
    /// means stay null when one of their runs diverged (spec), this one does not, so that
    /// the verdict is judged on the same pairs as the p-value.
    pub delta_mean: Option<f64>,
    /// Complete pairs where the idea is better (lower MSE, higher accuracy; a diverged idea
    /// run is never a win).
    pub idea_wins: usize,
    /// Pairs tested (both runs finite).
    pub n_pairs: usize,
    /// idea_s - baseline_s per seed; null where either diverged.
    pub per_seed_diffs: Vec<Option<f64>>,
    /// Two-sided sign-flip p over the tested pairs.
    pub p_value: Option<f64>,
    /// "significant win", "significant loss" or "no significant win".
    pub verdict: Verdict,
    /// [`Verdict::system_worked`] of the verdict.
    pub system_worked: bool,
}

/// Where and when the bench ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// "cpu-ndarray", "cpu-flex", "webgpu" or "wgpu-vulkan".
    pub backend: String,
    /// GPU adapter description, or the CPU backend's name.
    pub adapter: String,
    /// Where it ran: "native" or "wasm".
    pub platform: String,
    /// This crate's version.
    pub rdbench_version: String,
    /// burn's version.
    pub burn_version: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// Wall time of the whole bench, seconds.
    pub wall_time_s: f64,
    /// Wall time of each phase, seconds.
    pub phase_wall_time_s: IndexMap<String, f64>,
    /// Runs per backend that trained them: more than one key means the report mixes
    /// backends (a bench resumed elsewhere). Empty in older reports.
    #[serde(default)]
    pub run_backends: IndexMap<String, usize>,
    /// Runs taken over from an interrupted bench instead of trained again.
    #[serde(default)]
    pub reused_runs: usize,
    /// Threads (native CPU) or Web Workers (browser CPU) the runs of a phase were split
    /// over; the numbers do not depend on it.
    #[serde(default = "one")]
    pub threads: usize,
    /// Why this backend: empty when it is the one asked for, else how `auto` chose it.
    #[serde(default)]
    pub backend_note: String,
    /// The calibration `auto` measured to choose (empty when none ran).
    #[serde(default)]
    pub calibration: Vec<Calibration>,
    /// The build that made the report (`rdbench_engine::BUILD`: version + source hash), the
    /// build of every run; empty in older reports.
    #[serde(default)]
    pub build: String,
}

/// One backend's measured speed: a few training steps of a small population (the
/// calibration `auto` runs before choosing, and the page's time estimate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Backend name, as in `environment.backend` ("cpu-flex", "webgpu").
    pub backend: String,
    /// Milliseconds per work unit in one worker (a unit is a share of one trajectory's cell
    /// evaluation, `rdbench_engine::work`): the median of a few short trials of the
    /// baseline's training steps (in the browser, the mean of every CPU worker's median,
    /// the workers timed at once).
    pub ms_per_work_unit: f64,
    /// The fastest trial's milliseconds per work unit (in the browser, of every worker): the
    /// estimate's lower end (absent in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_work_unit_min: Option<f64>,
    /// The slowest trial's milliseconds per work unit (in the browser, of every worker): the
    /// estimate's upper end (absent in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_per_work_unit_max: Option<f64>,
    /// Workers the backend would run on in parallel (CPU: Web Workers; WebGPU: 1).
    pub workers: usize,
    /// WebGPU: how its cost grows with a population's runs, measured at two sizes; then
    /// `ms_per_work_unit` is this bench's effective figure from it (absent for a CPU,
    /// whose cost grows with runs, and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<PopulationFit>,
}

/// A GPU's cost per population step, `a + b x runs` (a kernel launch costs the same whatever
/// the runs it covers), in work units of one run: a population of R runs that each do U units
/// takes `U x (ms_per_population_unit + R x ms_per_run_unit)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PopulationFit {
    /// The fixed part: milliseconds per unit of one run's work, paid once per population.
    pub ms_per_population_unit: f64,
    /// The part that grows with runs: milliseconds per unit per run.
    pub ms_per_run_unit: f64,
    /// The population sizes calibrated (the median trial of each).
    pub runs: [usize; 2],
}

fn one() -> usize {
    1
}

/// Statistics beyond the seed report's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Statistics {
    /// How `comparison.p_value` was computed.
    pub p_value_method: Option<SignFlipMethod>,
    /// Wilcoxon signed-rank test of the tested pairs.
    pub wilcoxon: Option<Wilcoxon>,
    /// Percentile bootstrap 95% CI of the mean diff over tested pairs.
    pub delta_mean_ci95: Option<[f64; 2]>,
    /// Bootstrap resamples.
    pub bootstrap_resamples: usize,
    /// Bootstrap PRNG seed.
    pub bootstrap_seed: u64,
    /// Paired effect size d_z = mean(diff) / sd(diff, ddof 1).
    pub effect_size_dz: Option<f64>,
    /// Significance level.
    pub alpha: f64,
    /// Pairs left out of the comparison because a run diverged, in seed order.
    #[serde(default)]
    pub dropped_pairs: Vec<DroppedPair>,
}

/// A pair left out of the comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DroppedPair {
    /// The pair's seed.
    pub seed: u64,
    /// Why.
    pub reason: DropReason,
}

/// Why a pair has no difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The baseline run diverged (or is missing).
    BaselineDiverged,
    /// The idea run diverged (or is missing).
    IdeaDiverged,
    /// Both diverged.
    BothDiverged,
}

impl DropReason {
    /// Why the pair of `baseline` and `idea` metrics is dropped; None when it is complete.
    pub fn of(baseline: Option<f64>, idea: Option<f64>) -> Option<DropReason> {
        match (baseline, idea) {
            (Some(_), Some(_)) => None,
            (None, Some(_)) => Some(DropReason::BaselineDiverged),
            (Some(_), None) => Some(DropReason::IdeaDiverged),
            (None, None) => Some(DropReason::BothDiverged),
        }
    }

    /// In words, for warnings.
    pub fn describe(self) -> &'static str {
        match self {
            DropReason::BaselineDiverged => "the baseline run diverged",
            DropReason::IdeaDiverged => "the idea run diverged",
            DropReason::BothDiverged => "both runs diverged",
        }
    }
}

/// Memory of the idea arm's backward pass against dense BPTT (idea full runs that did not
/// diverge: a diverged run's count stops early and would skew the mean).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// Mean stored hidden states per minibatch.
    pub mean_stored_states: Option<f64>,
    /// States dense BPTT stores: T + 1.
    pub dense_states: usize,
    /// Mean stored bytes per minibatch (states x batch x hidden x 4).
    pub mean_stored_bytes: Option<f64>,
    /// Dense bytes per minibatch.
    pub dense_bytes: u64,
    /// 1 - stored / dense.
    pub saved_fraction: Option<f64>,
    /// Mean measured peak heap bytes of the checkpointed pass on the probe batch, over the
    /// probes of these runs (`ProbeRecord::peak_bytes_checkpointed`); null where not measured
    /// (the browser, GPU backends) and in older reports.
    #[serde(default)]
    pub measured_peak_bytes_checkpointed: Option<f64>,
    /// The same for dense BPTT (`ProbeRecord::peak_bytes_dense`).
    #[serde(default)]
    pub measured_peak_bytes_dense: Option<f64>,
    /// 1 - measured checkpointed peak / measured dense peak: memory saved as measured.
    #[serde(default)]
    pub measured_saved_fraction: Option<f64>,
}

impl Memory {
    /// The measured figures over `runs`' probes: (mean checkpointed peak, mean dense peak,
    /// saved fraction), each null without measurements.
    pub fn measured(runs: &[RunRecord]) -> (Option<f64>, Option<f64>, Option<f64>) {
        let mean = |f: fn(&crate::records::ProbeRecord) -> Option<u64>| {
            let v: Vec<f64> = runs.iter().flat_map(|r| &r.probes).filter_map(|p| f(p).map(|b| b as f64)).collect();
            (!v.is_empty()).then(|| crate::stats::mean(&v))
        };
        let (ck, dense) = (mean(|p| p.peak_bytes_checkpointed), mean(|p| p.peak_bytes_dense));
        let saved = ck.zip(dense).filter(|&(_, d)| d > 0.0).map(|(c, d)| 1.0 - c / d);
        (ck, dense, saved)
    }
}

impl Report {
    /// The metric's direction: the report's `metric_direction`, read as the dynamics track's
    /// ("lower is better") when it is not one of the two spellings (validation names that).
    pub fn direction(&self) -> crate::track::Direction {
        crate::track::Direction::parse(&self.metric_direction).unwrap_or(crate::track::Direction::LowerIsBetter)
    }

    /// What the per-seed numbers are, without "test ": "MSE" (the dynamics track's, and any
    /// report without `task`) or "accuracy".
    pub fn metric_name(&self) -> &str {
        self.task.as_ref().map_or("MSE", |t| t.metric.strip_prefix("test ").unwrap_or(&t.metric))
    }

    /// What the per-seed numbers are, as `task.metric` spells it: "test MSE" (also for a
    /// report without `task`) or "test accuracy".
    pub fn test_metric(&self) -> String {
        format!("test {}", self.metric_name())
    }

    /// Pretty JSON with the schema's key order.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serialises")
    }

    /// Parse a report, naming the JSON path of the first thing that does not fit.
    pub fn from_json(text: &str) -> Result<Report, String> {
        let de = &mut serde_json::Deserializer::from_str(without_bom(text));
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            format!("at {}: {}", if path == "." { "top level".into() } else { path }, e.inner())
        })
    }
}
