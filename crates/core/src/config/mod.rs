//! The bench configuration, defined once: every knob's key, default, limits, unit, label,
//! help text, CLI flag, page control and whether it changes a run's numbers live in the
//! table [`KNOBS`] (`knobs.rs`). The CLI builds its flags from the table, the page builds
//! its controls from [`schema`] (through the page wasm), both parse what a user typed with
//! [`parse_texts`] (`parse.rs`), and the run hash (`run_hash.rs`) hashes the knobs the table
//! marks, so a value means the same everywhere and every error names the field and its flag.

mod knobs;
mod parse;
mod run_hash;
mod schema;

pub use crate::policy::Policy;
pub use knobs::{IntBound, KNOBS, Knob, KnobKind, MAX_DATA_SEED, Slider, knob};
pub use parse::{parse_page_texts, parse_texts, parse_value, value_text};
pub use schema::{PRESETS, Preset, schema};

use parse::range_msg;
use serde::{Deserialize, Serialize};
use std::fmt;

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
    /// Hidden size H of the recurrent cell.
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
    /// Starting rank r0 of a ranked model's low-rank maps (spec §7; no effect on rnn_small).
    #[serde(default = "default_rank_r0")]
    pub rank_r0: usize,
    /// Largest rank r_max (U and V are allocated at r_max columns).
    #[serde(default = "default_rank_max")]
    pub rank_max: usize,
    /// Epochs per enrichment window.
    #[serde(default = "default_enrich_window")]
    pub enrich_window: usize,
    /// Relative loss improvement over a window below which a run gains a rank.
    #[serde(default = "default_enrich_threshold")]
    pub enrich_threshold: f64,
    /// Train sequences a bench uses, the first of the track's; 0 = the track's default
    /// (`Track::default_train`). Reports without it read 0: the dynamics track's 400.
    #[serde(default)]
    pub train_size: usize,
    /// Time steps per sequence; 0 = the track's default (its `SeqLens::default`). Reports
    /// without it read 0: they ran at the track's default.
    #[serde(default)]
    pub seq_len: usize,
    /// Forgetting cap of rev_gru: at most this many bits per hidden unit per step (its
    /// information buffer keeps them). Reports without it read the default.
    #[serde(default = "default_forget_bits")]
    pub forget_bits: usize,
}

/// The train sequences `train_size` means on `track` (0: the track's default).
pub fn train_sequences(train_size: usize, track: &dyn crate::track::Track) -> usize {
    if train_size == 0 { track.default_train() } else { train_size }
}

impl BenchConfig {
    /// The config of a new bench: `train_size` 0 replaced by the count the track gives new
    /// benches where that differs from what a stored 0 means (the adding problem:
    /// `Track::new_bench_train`), so the report says what ran and older reports' 0 keeps its
    /// meaning. Every door that makes a config from what a user asked (the parser, the
    /// study's per-track benches) passes through it.
    pub fn for_new_bench(mut self) -> Self {
        if self.train_size == 0
            && let Some((_, track)) = self.track_for_checks()
            && let Some(n) = track.new_bench_train()
        {
            self.train_size = n.min(track.n_train());
        }
        self
    }
}

/// The default of a knob added after v1 reports were written, for reading those reports.
fn knob_default<T: serde::de::DeserializeOwned>(key: &str) -> T {
    let k = knob(key).expect("a knob");
    serde_json::from_value(parse_value(k, k.default).expect("knob defaults parse")).expect("knob default fits")
}

fn default_rank_r0() -> usize {
    knob_default("rank_r0")
}

fn default_rank_max() -> usize {
    knob_default("rank_max")
}

fn default_forget_bits() -> usize {
    knob_default("forget_bits")
}

fn default_enrich_window() -> usize {
    knob_default("enrich_window")
}

fn default_enrich_threshold() -> f64 {
    knob_default("enrich_threshold")
}

impl Default for BenchConfig {
    /// The defaults of [`KNOBS`] (the spec's defaults).
    fn default() -> Self {
        parse_texts(std::iter::empty::<(&str, &str)>()).expect("the knob defaults are valid")
    }
}

/// A config value that is out of range, naming the field and its CLI flag.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigError {
    /// Config key, as in the report and the page's URL.
    pub field: String,
    /// What is wrong, with the offending value.
    pub message: String,
}

impl ConfigError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { field: field.into(), message: message.into() }
    }

    /// The CLI flag that sets `field` (`--seeds` for `n_seeds`).
    pub fn flag(&self) -> String {
        knob(&self.field).map_or_else(|| format!("--{}", self.field), |k| k.flag.to_string())
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.field, self.flag(), self.message)
    }
}

impl std::error::Error for ConfigError {}

impl BenchConfig {
    /// Every problem of a config built in code or read from JSON (the page and the CLI get
    /// these from [`parse_texts`] already): ranges, including the track-dependent ones.
    pub fn problems(&self) -> Vec<ConfigError> {
        let v = serde_json::to_value(self).expect("config serialises");
        let mut errors = Vec::new();
        for k in KNOBS {
            if let Err(m) = parse_value(k, &value_text(&v[k.key])) {
                errors.push(ConfigError::new(k.key, m));
            }
        }
        let Some((entry, track)) = self.track_for_checks() else { return errors };
        let clean = |f: &str, errors: &[ConfigError]| !errors.iter().any(|e| e.field == f);
        let lens = entry.seq_lens;
        if self.seq_len != 0 && self.seq_len < lens.min && clean("seq_len", &errors) {
            errors.push(ConfigError::new(
                "seq_len",
                format!(
                    "must be 0 (the track's default, {}) or between {} and {} (got {}): the {} track's limit",
                    lens.default, lens.min, lens.max, self.seq_len, self.track
                ),
            ));
        }
        // The sweep validates on the last fifth of the train sequences: at least one.
        if (1..5).contains(&self.train_size) && clean("train_size", &errors) {
            errors.push(ConfigError::new(
                "train_size",
                format!("must be 0 (the track's default) or at least 5 (got {})", self.train_size),
            ));
        }
        let train_size = if clean("train_size", &errors) { self.train_size } else { 0 };
        for k in KNOBS {
            if let KnobKind::Int { min, max } = k.kind
                && !matches!(max, IntBound::Fixed(_))
            {
                let hi = max.resolve(entry, &*track, train_size.min(track.n_train()));
                let got = v[k.key].as_u64().unwrap_or(0);
                if got > hi && clean(k.key, &errors) {
                    let mut m = range_msg(min, hi, got);
                    match max {
                        IntBound::TrackTrain | IntBound::DataSeed | IntBound::TrackSeqLen => {
                            m = format!("{m}: the {} track's limit", self.track)
                        }
                        // Say why: the bound moves with T, which the user may change.
                        IntBound::SeqLen => m = format!("{m}: at most the sequence length T = {hi}"),
                        IntBound::Fixed(_) | IntBound::SweepTrainSize => {}
                    }
                    errors.push(ConfigError::new(k.key, m));
                }
            }
        }
        // Limits across fields: they name the field a user would change.
        if let Some(m) = crate::models::info(&self.model)
            && m.even_hidden
            && !self.hidden_size.is_multiple_of(2)
            && clean("hidden_size", &errors)
        {
            errors.push(ConfigError::new(
                "hidden_size",
                format!("{} splits h into two halves: the hidden size must be even (got {})", m.name, self.hidden_size),
            ));
        }
        // A rank above H/2 would give the low-rank maps of an H/2-wide half more columns than rows.
        if let Some(m) = crate::models::info(&self.model)
            && m.ranked
            && self.rank_max > self.hidden_size / 2
            && clean("rank_max", &errors)
            && clean("hidden_size", &errors)
        {
            errors.push(ConfigError::new(
                "rank_max",
                format!(
                    "{} maps each half of h (hidden_size / 2 = {}) through rank r_max: r_max must be at most {} (got {})",
                    m.name,
                    self.hidden_size / 2,
                    self.hidden_size / 2,
                    self.rank_max
                ),
            ));
        }
        if self.rank_r0 > self.rank_max && clean("rank_r0", &errors) && clean("rank_max", &errors) {
            errors.push(ConfigError::new(
                "rank_r0",
                format!("must not exceed r_max (got r0 {} > r_max {})", self.rank_r0, self.rank_max),
            ));
        }
        errors
    }

    /// Check every field; the first problem, if any.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// The track's task (None for an unknown track).
    pub fn task(&self) -> Option<crate::track::Task> {
        crate::track::task_of(&self.track)
    }

    /// The shortest decimal spelling of an lr, used as a report key (`"0.001"`).
    pub fn lr_key(lr: f64) -> String {
        format!("{lr}")
    }
}

#[cfg(test)]
mod tests;
