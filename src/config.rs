//! The bench configuration, defined once: every knob's key, default, limits, unit, label,
//! help text, CLI flag and page control live in [`KNOBS`]. The CLI builds its flags from the
//! table (`cli.rs`), the page builds its controls from [`schema`] (through the charts wasm),
//! and both parse what a user typed with [`parse_texts`], so a value means the same
//! everywhere and every error names the field, its label and its flag.

use crate::model::MODELS;
use crate::track::{self, TRACKS, Track};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
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

/// An integer bound that may depend on the configured track.
#[derive(Clone, Copy, Debug)]
pub enum IntBound {
    /// A fixed number.
    Fixed(u64),
    /// The sweep's training trajectories (a batch must fit in the smaller split).
    SweepTrainSize,
    /// The track's sequence length T.
    SeqLen,
}

impl IntBound {
    fn resolve(self, track: &dyn Track) -> u64 {
        match self {
            IntBound::Fixed(v) => v,
            IntBound::SweepTrainSize => (track.n_train() - track.n_val()) as u64,
            IntBound::SeqLen => track.seq_len() as u64,
        }
    }
}

/// What values a knob takes.
#[derive(Clone, Copy, Debug)]
pub enum KnobKind {
    /// A whole number in `[min, max]`.
    Int {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: IntBound,
    },
    /// A finite number above `min` (exclusive) and, if set, below `max` (exclusive).
    Float {
        /// Exclusive lower bound.
        min: f64,
        /// Exclusive upper bound.
        max: Option<f64>,
    },
    /// One of a list of names.
    Choice(fn() -> Vec<(&'static str, &'static str)>),
    /// A comma-separated list of distinct positive learning rates.
    LrList {
        /// Most entries.
        max_len: usize,
    },
}

/// The page's slider for a numeric knob (bounds in value units; the number box beside it
/// takes anything the knob allows).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Slider {
    /// Left end.
    pub min: f64,
    /// Right end.
    pub max: f64,
    /// Step (in log10 units for a log slider).
    pub step: f64,
    /// Log scale.
    pub log: bool,
}

/// One knob of the configuration: everything the CLI and the page know about it.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// Config key (report `config`, URL hash).
    pub key: &'static str,
    /// Label of the page control.
    pub label: &'static str,
    /// One sentence of help (CLI `--help`, page hint).
    pub help: &'static str,
    /// Unit of the value, if any.
    pub unit: &'static str,
    /// The values it takes.
    pub kind: KnobKind,
    /// Default, as text.
    pub default: &'static str,
    /// CLI flag.
    pub flag: &'static str,
    /// Page slider, for numeric knobs that have one.
    pub slider: Option<Slider>,
    /// Shown in the page's "Advanced" section.
    pub advanced: bool,
}

fn policies() -> Vec<(&'static str, &'static str)> {
    let label = |p: Policy| match p {
        Policy::OneStep => "one_step (the idea as proposed)",
        Policy::Chained => "chained (measured chain error)",
    };
    Policy::ALL.iter().map(|&p| (p.as_str(), label(p))).collect()
}

fn models() -> Vec<(&'static str, &'static str)> {
    MODELS.iter().map(|m| (m.name, m.label)).collect()
}

fn tracks() -> Vec<(&'static str, &'static str)> {
    TRACKS.iter().map(|t| (t.name, t.label)).collect()
}

const fn slider(min: f64, max: f64, step: f64, log: bool) -> Option<Slider> {
    Some(Slider { min, max, step, log })
}

/// The largest seed a page can carry exactly (JavaScript numbers are doubles).
pub const MAX_DATA_SEED: u64 = (1 << 53) - 1;

/// Every knob, in the order the page shows them. The field names of [`BenchConfig`] are
/// exactly these keys (a test checks it).
pub const KNOBS: &[Knob] = &[
    Knob {
        key: "n_seeds",
        label: "Paired seeds",
        help: "Full runs per arm at the arm's best lr; baseline seed s is paired with idea seed s.",
        unit: "seeds",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(64) },
        default: "8",
        flag: "--seeds",
        slider: slider(1.0, 32.0, 1.0, false),
        advanced: false,
    },
    Knob {
        key: "lrs",
        label: "Learning rates",
        help: "The lr grid: each arm sweeps every lr and trains its paired seeds at the best one.",
        unit: "",
        kind: KnobKind::LrList { max_len: 12 },
        default: "0.001,0.003,0.01",
        flag: "--lrs",
        slider: slider(1e-5, 1.0, 0.01, true),
        advanced: false,
    },
    Knob {
        key: "n_sweep_seeds",
        label: "Sweep seeds per lr",
        help: "Runs per arm and lr in the sweep (seeds 1000, 1001, ...), scored on the validation split.",
        unit: "seeds",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(16) },
        default: "3",
        flag: "--sweep-seeds",
        slider: slider(1.0, 8.0, 1.0, false),
        advanced: false,
    },
    Knob {
        key: "epochs",
        label: "Epochs",
        help: "Passes over the training set per run.",
        unit: "epochs",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(1000) },
        default: "15",
        flag: "--epochs",
        slider: slider(1.0, 50.0, 1.0, false),
        advanced: false,
    },
    Knob {
        key: "batch_size",
        label: "Batch size",
        help: "Trajectories per minibatch (the last partial batch is kept).",
        unit: "trajectories",
        kind: KnobKind::Int { min: 1, max: IntBound::SweepTrainSize },
        default: "32",
        flag: "--batch",
        slider: slider(4.0, 320.0, 4.0, false),
        advanced: false,
    },
    Knob {
        key: "hidden_size",
        label: "Hidden size",
        help: "Hidden units H of the recurrent cell.",
        unit: "units",
        kind: KnobKind::Int { min: 2, max: IntBound::Fixed(512) },
        default: "32",
        flag: "--hidden",
        slider: slider(2.0, 128.0, 2.0, false),
        advanced: false,
    },
    Knob {
        key: "tau",
        label: "Defect threshold τ",
        help: "Reversal defect above which the idea keeps every hidden state (k = 1); below it, \
               longer intervals between checkpoints.",
        unit: "relative error",
        kind: KnobKind::Float { min: 0.0, max: None },
        default: "0.08",
        flag: "--tau",
        slider: slider(0.001, 1.0, 0.01, true),
        advanced: false,
    },
    Knob {
        key: "k_max",
        label: "Largest interval k_max",
        help: "Most time steps between two stored hidden states.",
        unit: "steps",
        kind: KnobKind::Int { min: 2, max: IntBound::SeqLen },
        default: "16",
        flag: "--k-max",
        slider: slider(2.0, 80.0, 1.0, false),
        advanced: false,
    },
    Knob {
        key: "policy",
        label: "Interval policy",
        help: "How a probe's defects choose k: one_step (the idea as proposed) or chained (the \
               measured error of k - 1 chained reversals).",
        unit: "",
        kind: KnobKind::Choice(policies),
        default: "one_step",
        flag: "--policy",
        slider: None,
        advanced: false,
    },
    Knob {
        key: "model",
        label: "Model",
        help: "The recurrent model both arms train.",
        unit: "",
        kind: KnobKind::Choice(models),
        default: "rnn_small",
        flag: "--model",
        slider: None,
        advanced: false,
    },
    Knob {
        key: "track",
        label: "Track",
        help: "The task: what the model learns to predict.",
        unit: "",
        kind: KnobKind::Choice(tracks),
        default: "dynamics",
        flag: "--track",
        slider: None,
        advanced: true,
    },
    Knob {
        key: "reversal_iters",
        label: "Reversal iterations",
        help: "Fixed-point iterations of one GRU reversal step.",
        unit: "iterations",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(1000) },
        default: "20",
        flag: "--reversal-iters",
        slider: slider(1.0, 100.0, 1.0, false),
        advanced: true,
    },
    Knob {
        key: "rank_r0",
        label: "Starting rank r0",
        help: "rev_ode_small: rank each run's low-rank maps U (V^T .) start at. No effect on \
               rnn_small (the GRU has no rank).",
        unit: "columns",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(64) },
        default: "2",
        flag: "--r0",
        // Up to the default r_max: r0 above r_max is refused.
        slider: slider(1.0, 8.0, 1.0, false),
        advanced: true,
    },
    Knob {
        key: "rank_max",
        label: "Largest rank r_max",
        help: "rev_ode_small: enrichment stops at this rank; U and V are allocated at r_max \
               columns. No effect on rnn_small.",
        unit: "columns",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(64) },
        default: "8",
        flag: "--r-max",
        slider: slider(1.0, 32.0, 1.0, false),
        advanced: true,
    },
    Knob {
        key: "enrich_window",
        label: "Enrichment window",
        help: "rev_ode_small: every this many epochs a run whose training loss improved too \
               little over them gains one rank. No effect on rnn_small.",
        unit: "epochs",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(1000) },
        default: "5",
        flag: "--enrich-window",
        slider: slider(1.0, 20.0, 1.0, false),
        advanced: true,
    },
    Knob {
        key: "enrich_threshold",
        label: "Enrichment threshold",
        help: "rev_ode_small: a run gains a rank when its training loss improved by less than \
               this fraction over a window (0.05 = 5%). No effect on rnn_small.",
        unit: "fraction",
        kind: KnobKind::Float { min: 0.0, max: Some(1.0) },
        default: "0.05",
        flag: "--enrich-threshold",
        slider: slider(0.001, 0.5, 0.01, true),
        advanced: true,
    },
    Knob {
        key: "data_seed",
        label: "Data seed",
        help: "Seed of the dataset PRNG: every run sees the same trajectories.",
        unit: "",
        kind: KnobKind::Int { min: 0, max: IntBound::Fixed(MAX_DATA_SEED) },
        default: "0",
        flag: "--data-seed",
        slider: None,
        advanced: true,
    },
    Knob {
        key: "alpha",
        label: "Significance level α",
        help: "A win or loss is significant when the sign-flip p is below α.",
        unit: "",
        kind: KnobKind::Float { min: 0.0, max: Some(1.0) },
        default: "0.05",
        flag: "--alpha",
        slider: slider(0.001, 0.2, 0.01, true),
        advanced: true,
    },
    Knob {
        key: "permutations",
        label: "Monte Carlo sign vectors",
        help: "Random sign vectors of the permutation test when there are more than 20 pairs \
               (up to 20 it is exact).",
        unit: "vectors",
        kind: KnobKind::Int { min: 100, max: IntBound::Fixed(10_000_000) },
        default: "10000",
        flag: "--permutations",
        slider: None,
        advanced: true,
    },
    Knob {
        key: "bootstrap_resamples",
        label: "Bootstrap resamples",
        help: "Resamples of the percentile bootstrap 95% CI of the mean difference.",
        unit: "resamples",
        kind: KnobKind::Int { min: 100, max: IntBound::Fixed(10_000_000) },
        default: "10000",
        flag: "--bootstrap",
        slider: None,
        advanced: true,
    },
];

/// The knob of a config key.
pub fn knob(key: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.key == key)
}

/// A named starting point of the page: overrides of the defaults, as texts.
pub struct Preset {
    /// Key (`quick`).
    pub name: &'static str,
    /// Button label.
    pub label: &'static str,
    /// What it is for.
    pub help: &'static str,
    /// `(key, text)` overrides.
    pub overrides: &'static [(&'static str, &'static str)],
}

/// The page's presets.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "quick",
        label: "Quick look",
        help: "A small bench that finishes in well under a minute on a laptop CPU.",
        overrides: &[
            ("n_seeds", "4"),
            ("n_sweep_seeds", "1"),
            ("lrs", "0.003,0.01"),
            ("epochs", "3"),
            ("hidden_size", "16"),
        ],
    },
    Preset {
        name: "seed",
        label: "Seed protocol",
        help: "The spec's defaults: 8 paired seeds, 3 lrs x 3 sweep seeds, 15 epochs.",
        overrides: &[],
    },
];

fn range_msg(lo: impl fmt::Display, hi: impl fmt::Display, got: impl fmt::Display) -> String {
    format!("must be between {lo} and {hi} (got {got})")
}

/// Parse one knob's text into its JSON value (range checks that need the track come later).
fn parse_value(k: &Knob, text: &str) -> Result<Value, String> {
    let t = text.trim();
    match k.kind {
        KnobKind::Int { min, max } => {
            let v: u64 = t.parse().map_err(|_| format!("must be a whole number (got {t:?})"))?;
            // Track-dependent upper bounds are checked in `problems`, which knows the track.
            match max {
                IntBound::Fixed(hi) if v < min || v > hi => Err(range_msg(min, hi, v)),
                _ if v < min => Err(format!("must be at least {min} (got {v})")),
                _ => Ok(json!(v)),
            }
        }
        KnobKind::Float { min, max } => {
            let v: f64 = t.parse().map_err(|_| format!("must be a number (got {t:?})"))?;
            let above = v.is_finite() && v > min;
            let below = max.is_none_or(|m| v < m);
            if !(above && below) {
                return Err(match max {
                    Some(m) => format!("must be above {min} and below {m} (got {t})"),
                    None => format!("must be a finite number above {min} (got {t})"),
                });
            }
            Ok(json!(v))
        }
        KnobKind::Choice(choices) => {
            let names: Vec<&str> = choices().iter().map(|c| c.0).collect();
            if names.contains(&t) {
                Ok(json!(t))
            } else {
                Err(format!("must be one of {} (got {t:?})", names.join(", ")))
            }
        }
        KnobKind::LrList { max_len } => {
            if t.is_empty() {
                return Err("the learning-rate list is empty".into());
            }
            let mut lrs: Vec<f64> = Vec::new();
            for part in t.split(',').map(str::trim) {
                // Any positive finite lr is accepted: huge ones are how divergence is tested.
                let lr = part.parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0);
                let Some(lr) = lr else {
                    return Err(format!("every lr must be a positive finite number (got {part:?})"));
                };
                if lrs.contains(&lr) {
                    return Err(format!("lr {lr} is listed twice"));
                }
                lrs.push(lr);
            }
            if lrs.len() > max_len {
                return Err(format!("at most {max_len} learning rates (got {})", lrs.len()));
            }
            Ok(json!(lrs))
        }
    }
}

/// The canonical text of a knob's value (what the page's URL and controls show).
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(","),
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(f)) => format!("{f}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Parse `(key, text)` pairs over the defaults into a config, collecting every error: an
/// unknown key, a text that does not parse, a value out of range (limits that depend on the
/// track use the configured track). Later pairs override earlier ones.
pub fn parse_texts<K: AsRef<str>, T: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, T)>,
) -> Result<BenchConfig, Vec<ConfigError>> {
    let mut values = Map::new();
    for k in KNOBS {
        values.insert(k.key.into(), parse_value(k, k.default).expect("knob defaults parse"));
    }
    let mut errors: Vec<ConfigError> = Vec::new();
    for (key, text) in pairs {
        let (key, text) = (key.as_ref(), text.as_ref());
        errors.retain(|e| e.field != key);
        match knob(key) {
            None => errors.push(ConfigError::new(key, "unknown setting")),
            Some(k) => match parse_value(k, text) {
                Ok(v) => {
                    values.insert(k.key.into(), v);
                }
                Err(m) => errors.push(ConfigError::new(key, m)),
            },
        }
    }
    // Fields that failed keep their defaults, so the checks that need the whole config (the
    // track's limits) still run and every problem is reported at once.
    let cfg: BenchConfig = serde_json::from_value(Value::Object(values))
        .map_err(|e| vec![ConfigError::new("(config)", format!("does not fit the config: {e}"))])?;
    for e in cfg.problems() {
        if !errors.iter().any(|x| x.field == e.field) {
            errors.push(e);
        }
    }
    if errors.is_empty() { Ok(cfg) } else { Err(errors) }
}

/// The page's schema: knobs, presets and defaults as JSON (served by the charts wasm).
pub fn schema() -> Value {
    let defaults = serde_json::to_value(BenchConfig::default()).expect("config serialises");
    let default_track = track::by_name(&BenchConfig::default().track).expect("default track");
    let knobs: Vec<Value> = KNOBS
        .iter()
        .map(|k| {
            let mut o = json!({
                "key": k.key, "label": k.label, "help": k.help, "unit": k.unit,
                "default": defaults[k.key], "flag": k.flag, "slider": k.slider, "advanced": k.advanced,
                "min": null, "max": null, "min_exclusive": false, "max_exclusive": false,
            });
            match k.kind {
                KnobKind::Int { min, max } => {
                    o["kind"] = json!("int");
                    o["min"] = json!(min);
                    o["max"] = json!(max.resolve(&*default_track));
                }
                KnobKind::Float { min, max } => {
                    o["kind"] = json!("float");
                    o["min"] = json!(min);
                    o["min_exclusive"] = json!(true);
                    o["max"] = json!(max);
                    o["max_exclusive"] = json!(max.is_some());
                }
                KnobKind::Choice(choices) => {
                    o["kind"] = json!("choice");
                    o["choices"] =
                        choices().iter().map(|(value, label)| json!({"value": value, "label": label})).collect();
                }
                KnobKind::LrList { max_len } => {
                    o["kind"] = json!("lr_list");
                    o["min"] = json!(0.0);
                    o["min_exclusive"] = json!(true);
                    o["max_len"] = json!(max_len);
                }
            }
            o
        })
        .collect();
    let presets: Vec<Value> = PRESETS
        .iter()
        .map(|p| {
            let cfg = parse_texts(p.overrides.iter().copied()).expect("presets are valid");
            json!({"name": p.name, "label": p.label, "help": p.help, "config": cfg})
        })
        .collect();
    json!({"knobs": knobs, "presets": presets, "defaults": defaults})
}

/// What the page's `parse_config` returns for `{key: text}`: the config (when valid), every
/// error, and the canonical text of every knob (the URL hash).
pub fn parse_page_texts(texts: &Map<String, Value>) -> Value {
    let pairs: Vec<(String, String)> =
        texts.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| value_text(v), str::to_string))).collect();
    match parse_texts(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        Ok(cfg) => {
            let v = serde_json::to_value(&cfg).expect("config serialises");
            let canon: Map<String, Value> =
                KNOBS.iter().map(|k| (k.key.into(), json!(value_text(&v[k.key])))).collect();
            json!({"config": v, "errors": [], "texts": canon})
        }
        Err(errors) => {
            // Texts as typed for the fields with errors, canonical defaults elsewhere.
            let mut canon = Map::new();
            for k in KNOBS {
                let typed = pairs.iter().rev().find(|(key, _)| key == k.key).map(|(_, t)| t.clone());
                canon.insert(k.key.into(), json!(typed.unwrap_or_else(|| k.default.to_string())));
            }
            json!({"config": null, "errors": errors, "texts": canon})
        }
    }
}

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
        let Some(track) = track::by_name(&self.track) else { return errors };
        for k in KNOBS {
            if let KnobKind::Int { min, max: max @ (IntBound::SweepTrainSize | IntBound::SeqLen) } = k.kind {
                let hi = max.resolve(&*track);
                let got = v[k.key].as_u64().unwrap_or(0);
                if got > hi && !errors.iter().any(|e| e.field == k.key) {
                    errors.push(ConfigError::new(k.key, range_msg(min, hi, got)));
                }
            }
        }
        // Limits across fields: they name the field a user would change.
        let clean = |f: &str, errors: &[ConfigError]| !errors.iter().any(|e| e.field == f);
        if let Some(m) = crate::model::entry(&self.model)
            && m.even_hidden
            && !self.hidden_size.is_multiple_of(2)
            && clean("hidden_size", &errors)
        {
            errors.push(ConfigError::new(
                "hidden_size",
                format!("{} splits h into two halves: the hidden size must be even (got {})", m.name, self.hidden_size),
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
            self.rank_r0,
            self.rank_max,
            self.enrich_window,
            self.enrich_threshold,
        ]);
        // FNV-1a 64: stable across platforms and builds (std's hasher is not).
        let hash = fields
            .to_string()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
        format!("{hash:016x}")
    }

    /// The shortest decimal spelling of an lr, used as a report key (`"0.001"`).
    pub fn lr_key(lr: f64) -> String {
        format!("{lr}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_a_knob_and_every_knob_a_field() {
        let v = serde_json::to_value(BenchConfig::default()).unwrap();
        let mut fields: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
        fields.sort();
        keys.sort();
        assert_eq!(fields, keys);
        let mut flags: Vec<&str> = KNOBS.iter().map(|k| k.flag).collect();
        flags.sort();
        flags.dedup();
        assert_eq!(flags.len(), KNOBS.len(), "two knobs share a flag");
    }

    #[test]
    fn defaults_are_the_spec_defaults() {
        let want = BenchConfig {
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
            rank_r0: 2,
            rank_max: 8,
            enrich_window: 5,
            enrich_threshold: 0.05,
        };
        assert_eq!(BenchConfig::default(), want);
    }

    #[test]
    fn every_error_is_reported_with_its_field() {
        let errs = parse_texts([("lrs", "0.01,-1"), ("n_seeds", "100"), ("k_max", "81"), ("bogus", "1"), ("tau", "x")])
            .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["lrs", "n_seeds", "bogus", "tau", "k_max"], "{errs:?}");
        assert!(errs[0].message.contains("-1"));
        assert!(errs[1].message.contains("between 1 and 64"));
        assert!(errs[4].message.contains("between 2 and 80"), "{errs:?}");
        assert_eq!(errs[1].flag(), "--seeds");
        assert_eq!(errs[1].to_string(), "n_seeds (--seeds): must be between 1 and 64 (got 100)");
    }

    #[test]
    fn a_later_text_overrides_an_earlier_error() {
        let cfg = parse_texts([("n_seeds", "0"), ("n_seeds", "12")]).unwrap();
        assert_eq!(cfg.n_seeds, 12);
    }

    #[test]
    fn edge_values() {
        for (key, bad) in [
            ("n_seeds", "1.5"),
            ("n_seeds", "-3"),
            ("lrs", ""),
            ("lrs", "NaN"),
            ("lrs", "inf"),
            ("lrs", "0.01,0.01"),
            ("tau", "0"),
            ("tau", "inf"),
            ("alpha", "1"),
            ("batch_size", "321"),
            ("policy", "greedy"),
            ("model", "transformer"),
            ("track", "mnist"),
            ("data_seed", "9007199254740992"),
        ] {
            let errs = parse_texts([(key, bad)]).expect_err(bad);
            assert_eq!(errs[0].field, key, "{bad}: {errs:?}");
        }
        let ok = parse_texts([("batch_size", "320"), ("k_max", "80"), ("lrs", " 0.5 , 2 "), ("alpha", "0.999")]);
        assert_eq!(ok.unwrap().lrs, vec![0.5, 2.0]);
    }

    #[test]
    fn texts_round_trip() {
        let cfg = parse_texts([("lrs", "0.0003,0.1"), ("tau", "0.0125"), ("policy", "chained")]).unwrap();
        let v = serde_json::to_value(&cfg).unwrap();
        let texts: Vec<(String, String)> = KNOBS.iter().map(|k| (k.key.to_string(), value_text(&v[k.key]))).collect();
        assert_eq!(parse_texts(texts).unwrap(), cfg);
        let page = parse_page_texts(&serde_json::from_str(r#"{"tau": "0.0125", "n_seeds": "x"}"#).unwrap());
        assert!(page["config"].is_null());
        assert_eq!(page["errors"][0]["field"], "n_seeds");
        assert_eq!(page["texts"]["n_seeds"], "x");
        assert_eq!(page["texts"]["lrs"], "0.001,0.003,0.01");
    }

    #[test]
    fn schema_lists_every_knob_with_resolved_limits_and_valid_presets() {
        let s = schema();
        let knobs = s["knobs"].as_array().unwrap();
        assert_eq!(knobs.len(), KNOBS.len());
        let k_max = knobs.iter().find(|k| k["key"] == "k_max").unwrap();
        assert_eq!(k_max["max"], 80);
        assert_eq!(k_max["default"], 16);
        let policy = knobs.iter().find(|k| k["key"] == "policy").unwrap();
        assert_eq!(policy["choices"][1]["value"], "chained");
        assert_eq!(s["presets"][0]["config"]["n_seeds"], 4);
        assert_eq!(s["presets"][1]["config"], s["defaults"]);
    }

    #[test]
    fn model_limits_across_fields() {
        let errs = parse_texts([("model", "rev_ode_small"), ("hidden_size", "33")]).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "hidden_size");
        assert!(errs[0].message.contains("must be even (got 33)"), "{errs:?}");
        // The GRU takes any hidden size in range.
        assert!(parse_texts([("hidden_size", "33")]).is_ok());
        assert!(parse_texts([("model", "rev_ode_small"), ("hidden_size", "34")]).is_ok());
        let errs = parse_texts([("rank_r0", "5"), ("rank_max", "4")]).unwrap_err();
        assert_eq!(errs[0].field, "rank_r0");
        assert_eq!(errs[0].to_string(), "rank_r0 (--r0): must not exceed r_max (got r0 5 > r_max 4)");
    }

    #[test]
    fn a_config_without_the_rank_knobs_reads_with_their_defaults() {
        let mut v = serde_json::to_value(BenchConfig::default()).unwrap();
        for k in ["rank_r0", "rank_max", "enrich_window", "enrich_threshold"] {
            v.as_object_mut().unwrap().remove(k);
        }
        let cfg: BenchConfig = serde_json::from_value(v).unwrap();
        assert_eq!(cfg, BenchConfig::default());
    }

    #[test]
    fn run_hash_changes_with_training_fields_only() {
        let a = BenchConfig::default();
        let b = BenchConfig { n_seeds: 3, alpha: 0.01, ..a.clone() };
        let c = BenchConfig { tau: 0.1, ..a.clone() };
        assert_eq!(a.run_hash(), b.run_hash());
        assert_ne!(a.run_hash(), c.run_hash());
    }
}
