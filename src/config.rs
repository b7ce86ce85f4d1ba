//! The bench configuration: every knob of spec §1–§5, its defaults and its validation.
//!
//! The same struct is filled by the CLI flags, by the page's controls (through the worker)
//! and is written back into the report, so every error names the offending field together
//! with its CLI flag.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::idea::policy::Policy;

/// Everything that determines a bench run. Field names are the report's `config` keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// Track name (`dynamics`).
    pub track: String,
    /// Model name (`rnn_small`).
    pub model: String,
    /// Paired full-run seeds per arm (seeds 0..n).
    pub n_seeds: usize,
    /// Sweep seeds per arm and lr (seeds 1000..).
    pub n_sweep_seeds: usize,
    /// Learning-rate grid.
    pub lrs: Vec<f64>,
    /// Training epochs.
    pub epochs: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// GRU hidden size H.
    pub hidden_size: usize,
    /// Defect threshold tau.
    pub tau: f64,
    /// Largest checkpoint interval.
    pub k_max: usize,
    /// Interval policy of the idea arm.
    pub policy: Policy,
    /// Fixed-point iterations of one GRU reversal.
    pub reversal_iters: usize,
    /// Seed of the dataset PRNG.
    pub data_seed: u64,
    /// Significance level.
    pub alpha: f64,
    /// Random sign vectors when the exact test is too large (n_pairs > 20).
    pub permutations: usize,
    /// Bootstrap resamples for the CI of delta_mean.
    pub bootstrap_resamples: usize,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            track: "dynamics".into(),
            model: "rnn_small".into(),
            n_seeds: 8,
            n_sweep_seeds: 3,
            lrs: vec![0.001, 0.003, 0.01],
            epochs: 15,
            batch_size: 32,
            hidden_size: 32,
            tau: 0.08,
            k_max: 16,
            policy: Policy::OneStep,
            reversal_iters: 20,
            data_seed: 0,
            alpha: 0.05,
            permutations: 10_000,
            bootstrap_resamples: 10_000,
        }
    }
}

/// A config value that is out of range, naming the field and its CLI flag.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    /// Config key, as in the report and the page's URL.
    pub field: &'static str,
    /// What is wrong, with the offending value.
    pub message: String,
}

impl ConfigError {
    /// An error about `field`.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        ConfigError { field, message: message.into() }
    }

    /// The CLI flag that sets `field`.
    pub fn flag(&self) -> &'static str {
        flag_of(self.field)
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.field, self.flag(), self.message)
    }
}

impl std::error::Error for ConfigError {}

/// CLI flag of each config field.
pub fn flag_of(field: &str) -> &'static str {
    match field {
        "track" => "--track",
        "model" => "--model",
        "n_seeds" => "--seeds",
        "n_sweep_seeds" => "--sweep-seeds",
        "lrs" => "--lrs",
        "epochs" => "--epochs",
        "batch_size" => "--batch",
        "hidden_size" => "--hidden",
        "tau" => "--tau",
        "k_max" => "--k-max",
        "policy" => "--policy",
        "reversal_iters" => "--reversal-iters",
        "data_seed" => "--data-seed",
        "alpha" => "--alpha",
        "permutations" => "--permutations",
        "bootstrap_resamples" => "--bootstrap",
        _ => "(unknown flag)",
    }
}

/// Names of the models (the engine's `model::by_name` builds them).
pub const MODEL_NAMES: &[&str] = &["rnn_small"];

/// Upper bounds that keep a run within what a browser tab or a laptop can hold.
pub mod limits {
    /// Most paired seeds.
    pub const MAX_SEEDS: usize = 64;
    /// Most sweep seeds.
    pub const MAX_SWEEP_SEEDS: usize = 16;
    /// Most learning rates in the grid.
    pub const MAX_LRS: usize = 12;
    /// Most epochs.
    pub const MAX_EPOCHS: usize = 1000;
    /// Largest hidden size.
    pub const MAX_HIDDEN: usize = 512;
    /// Most reversal iterations.
    pub const MAX_REVERSAL_ITERS: usize = 1000;
    /// Fewest and most Monte Carlo sign vectors / bootstrap resamples.
    pub const RESAMPLES: (usize, usize) = (100, 10_000_000);
}

fn range_usize(field: &'static str, v: usize, lo: usize, hi: usize) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        return Err(ConfigError::new(field, format!("must be between {lo} and {hi} (got {v})")));
    }
    Ok(())
}

impl BenchConfig {
    /// Check every field; `train_size` and `seq_len` come from the track (batch and k_max
    /// cannot exceed them).
    pub fn validate(&self) -> Result<(), ConfigError> {
        use limits::*;
        let Some(track) = crate::track::by_name(&self.track) else {
            return Err(ConfigError::new(
                "track",
                format!("unknown track {:?} (known: {})", self.track, crate::track::TRACK_NAMES.join(", ")),
            ));
        };
        if !MODEL_NAMES.contains(&self.model.as_str()) {
            return Err(ConfigError::new(
                "model",
                format!("unknown model {:?} (known: {})", self.model, MODEL_NAMES.join(", ")),
            ));
        }
        range_usize("n_seeds", self.n_seeds, 1, MAX_SEEDS)?;
        range_usize("n_sweep_seeds", self.n_sweep_seeds, 1, MAX_SWEEP_SEEDS)?;
        if self.lrs.is_empty() {
            return Err(ConfigError::new("lrs", "the learning-rate list is empty"));
        }
        if self.lrs.len() > MAX_LRS {
            return Err(ConfigError::new("lrs", format!("at most {MAX_LRS} learning rates (got {})", self.lrs.len())));
        }
        for &lr in &self.lrs {
            // Any positive finite lr is accepted: huge ones are how divergence handling is tested.
            if !lr.is_finite() || lr <= 0.0 {
                return Err(ConfigError::new("lrs", format!("every lr must be a positive finite number (got {lr})")));
            }
        }
        for (i, a) in self.lrs.iter().enumerate() {
            if self.lrs[..i].contains(a) {
                return Err(ConfigError::new("lrs", format!("lr {a} is listed twice")));
            }
        }
        range_usize("epochs", self.epochs, 1, MAX_EPOCHS)?;
        // A batch must fit in the smaller (sweep) training split.
        let (train_size, seq_len) = (track.n_train() - track.n_val(), track.seq_len());
        range_usize("batch_size", self.batch_size, 1, train_size)?;
        range_usize("hidden_size", self.hidden_size, 2, MAX_HIDDEN)?;
        if !self.tau.is_finite() || self.tau <= 0.0 {
            return Err(ConfigError::new("tau", format!("must be a positive number (got {})", self.tau)));
        }
        range_usize("k_max", self.k_max, 2, seq_len)?;
        range_usize("reversal_iters", self.reversal_iters, 1, MAX_REVERSAL_ITERS)?;
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(ConfigError::new("alpha", format!("must be in (0, 1) (got {})", self.alpha)));
        }
        range_usize("permutations", self.permutations, RESAMPLES.0, RESAMPLES.1)?;
        range_usize("bootstrap_resamples", self.bootstrap_resamples, RESAMPLES.0, RESAMPLES.1)?;
        Ok(())
    }

    /// A short hash of the fields that change a single run's numbers (track, model, data,
    /// training and idea-arm settings; not the seed or lr of the run, which a run records
    /// itself, nor the protocol's size or statistics). Two runs with equal arm, phase, lr,
    /// seed, backend and `run_hash` are the same computation, so a resumed bench may reuse one.
    pub fn run_hash(&self) -> String {
        let fields = serde_json::json!([
            self.track,
            self.model,
            self.epochs,
            self.batch_size,
            self.hidden_size,
            self.tau,
            self.k_max,
            self.policy,
            self.reversal_iters,
            self.data_seed,
        ]);
        // FNV-1a 64: stable across platforms and builds (std's hasher is not).
        let hash = fields.to_string().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
        });
        format!("{hash:016x}")
    }

    /// The shortest decimal spelling of an lr, used as a report key (`"0.001"`).
    pub fn lr_key(lr: f64) -> String {
        format!("{lr}")
    }
}
