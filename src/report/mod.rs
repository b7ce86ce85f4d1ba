//! `bench_report.json` (spec §6): the seed report's keys in the seed's order, then the
//! extensions. Every extension is optional so the seed-era report loads with these types.

mod validate;

pub use validate::{Problem, validate_json};

use crate::config::BenchConfig;
use crate::progress::RunRecord;
use crate::stats::permutation::SignFlipMethod;
use crate::stats::wilcoxon::Wilcoxon;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Schema version written and accepted.
pub const BENCH_VERSION: u32 = 1;

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Schema version (1).
    pub bench_version: u32,
    /// Track name.
    pub track: String,
    /// Model name.
    pub model: String,
    /// "lower is better".
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
    /// Mean validation MSE over the sweep seeds; null if any sweep run diverged.
    pub mean: Option<f64>,
}

/// A sweep mean keyed by lr (the idea arm's `idea_sweep`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepMean {
    /// Mean validation MSE; null if any sweep run diverged.
    pub mean: Option<f64>,
}

/// Full runs of an arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FullSummary {
    /// Mean test MSE; null if any full run diverged.
    pub mean: Option<f64>,
    /// Population std (ddof 0); null if any full run diverged.
    pub std: Option<f64>,
    /// Test MSE per seed 0..n-1; null for a diverged run.
    pub per_seed: Vec<Option<f64>>,
    /// Runs.
    pub n: usize,
}

/// The baseline arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// lr with the lowest sweep mean.
    pub best_cfg: Cfg,
    /// Sweep means in grid order.
    pub sweep: Vec<SweepEntry>,
    /// Full runs.
    pub full: FullSummary,
}

/// The idea arm's full runs (flattened, as in the seed report).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// lr with the lowest sweep mean.
    pub best_cfg: Cfg,
    /// Mean test MSE; null if any full run diverged.
    pub mean: Option<f64>,
    /// Population std (ddof 0).
    pub std: Option<f64>,
    /// Test MSE per seed.
    pub per_seed: Vec<Option<f64>>,
    /// Runs.
    pub n: usize,
}

/// The paired comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// mean(idea) - mean(baseline); null if a full run diverged.
    pub delta_mean: Option<f64>,
    /// Pairs where the idea is lower (a diverged run counts as +infinity).
    pub idea_wins: usize,
    /// Pairs tested (both runs finite).
    pub n_pairs: usize,
    /// idea_s - baseline_s per seed; null where either diverged.
    pub per_seed_diffs: Vec<Option<f64>>,
    /// Two-sided sign-flip p over the tested pairs.
    pub p_value: Option<f64>,
    /// "significant win", "significant loss" or "no significant win".
    pub verdict: String,
    /// verdict == "significant win".
    pub system_worked: bool,
}

/// The mechanism signature of spec §5.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MechanismSignature {
    /// The prediction under test.
    pub prediction: String,
    /// Mean over idea full-run seeds of the final probe's defect.
    pub observed_mean_defect: Option<f64>,
    /// Mean over idea full-run seeds of the final probe's checkpoint count.
    pub observed_mean_checkpoints: Option<f64>,
    /// What the probes show about defect and checkpoints, in words.
    pub low_defect_checkpoint_relation: String,
    /// All four conditions hold.
    pub confirmed: bool,
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
}

/// One mechanism condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    /// Whether it holds.
    pub holds: bool,
    /// The measured value(s) behind it, in words.
    pub detail: String,
    /// The number it is judged on (null when there is none).
    pub value: Option<f64>,
}

/// The probe trace of one idea full-run seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeTrace {
    /// Seed.
    pub seed: u64,
    /// One-step defect mean per probe.
    pub defect: Vec<Option<f64>>,
    /// Interval chosen per probe.
    pub k: Vec<usize>,
    /// Checkpoint count per probe.
    pub checkpoints: Vec<usize>,
    /// Gradient cosine at the chosen k per probe.
    pub grad_cos_chosen: Vec<Option<f64>>,
    /// Gradient cosine at k_max per probe.
    pub grad_cos_kmax: Vec<Option<f64>>,
}

/// Conditions (a)–(d) of the signature, which failed, and the traces they were judged on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MechanismDetail {
    /// Threshold tau.
    pub tau: f64,
    /// Policy that drove training.
    pub policy: String,
    /// Probes judged (all probes of the idea's full runs).
    pub n_probes: usize,
    /// (a) both regimes occur.
    pub a_both_regimes: Condition,
    /// (b) Spearman(defect, checkpoints) > 0.
    pub b_spearman_positive: Condition,
    /// (c) low-defect probes keep mean cosine at the chosen k >= 0.99.
    pub c_low_defect_cosine: Condition,
    /// (d) high-defect probes have mean cosine at k_max < 0.99.
    pub d_high_defect_needs_dense: Condition,
    /// Letters of the conditions that failed.
    pub failed: Vec<String>,
    /// Per-seed probe traces.
    pub traces: Vec<ProbeTrace>,
}

/// Memory of the idea arm's backward pass against dense BPTT (idea full runs).
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
}

impl Report {
    /// Pretty JSON with the schema's key order.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serialises")
    }

    /// Parse a report, naming the JSON path of the first thing that does not fit.
    pub fn from_json(text: &str) -> Result<Report, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            format!("at {}: {}", if path == "." { "top level".into() } else { path }, e.inner())
        })
    }
}
