//! The knob table: one entry per config field, with everything the CLI, the page, the
//! parser and the run hash need to know about it.

use super::Policy;
use crate::models::MODELS;
use crate::track::{TRACKS, Track, TrackEntry};
use serde::Serialize;

/// An integer bound that may depend on the configured track.
#[derive(Clone, Copy, Debug)]
pub enum IntBound {
    /// A fixed number.
    Fixed(u64),
    /// The sweep's training trajectories (a batch must fit in the smaller split).
    SweepTrainSize,
    /// The sequence length T the config runs at.
    SeqLen,
    /// The longest sequences the track generates.
    TrackSeqLen,
    /// The train sequences the track generates.
    TrackTrain,
    /// The largest data seed the track's generator takes (and a page carries exactly).
    DataSeed,
}

impl IntBound {
    /// The bound for `track` (of registry entry `entry`), with `train_size` the configured
    /// one (0: the track's default).
    pub(crate) fn resolve(self, entry: &TrackEntry, track: &dyn Track, train_size: usize) -> u64 {
        match self {
            IntBound::Fixed(v) => v,
            IntBound::SweepTrainSize => {
                let n = super::train_sequences(train_size, track);
                (n - crate::track::validation_size(n)) as u64
            }
            IntBound::SeqLen => track.seq_len() as u64,
            IntBound::TrackSeqLen => entry.seq_lens.max as u64,
            IntBound::TrackTrain => track.n_train() as u64,
            IntBound::DataSeed => track.max_data_seed().min(MAX_DATA_SEED),
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
    /// Whether it changes a single run's numbers (and so the run hash): the track, model,
    /// data and training settings do; the protocol's size (seeds, lr grid: a run records its
    /// own seed and lr) and the statistics do not.
    pub run: bool,
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
        run: false,
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
        run: false,
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
        run: false,
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
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
    },
    Knob {
        key: "track",
        label: "Track",
        help: "The task and its metric: dynamics (predict the next pendulum state every step; \
               test MSE, lower is better), mnist1d (classify each sequence from its last \
               state; test accuracy, higher is better) or adding (the adding problem: the sum \
               of two marked values, read from the last state; test MSE, lower is better).",
        unit: "",
        kind: KnobKind::Choice(tracks),
        default: "dynamics",
        flag: "--track",
        slider: None,
        advanced: false,
        run: true,
    },
    Knob {
        key: "seq_len",
        label: "Sequence length T",
        help: "Time steps per sequence. 0 = the track's default: 80 for dynamics (the rollout), \
               40 for mnist1d (the package's final_seq_length), 200 for adding. Dense BPTT \
               stores T + 1 hidden states per sequence: memory grows with T.",
        unit: "steps",
        kind: KnobKind::Int { min: 0, max: IntBound::TrackSeqLen },
        default: "0",
        flag: "--seq-len",
        // A box only: 0 means the track's default, and the useful range spans 10 to 10,000.
        slider: None,
        advanced: false,
        run: true,
    },
    Knob {
        key: "train_size",
        label: "Training sequences",
        help: "How many of the track's train sequences a bench trains on (the first ones; sweep \
               runs validate on the last fifth of them). 0 = the track's default: all 400 for \
               dynamics, 1000 of mnist1d's 4000; for adding (up to 16,000) 3200 at T ≤ 200 and \
               4800 above, enough steps for the baseline to learn it (the report's config holds \
               that count).",
        unit: "sequences",
        kind: KnobKind::Int { min: 0, max: IntBound::TrackTrain },
        default: "0",
        flag: "--train-size",
        // A box only: one slider range cannot fit 400 (dynamics) and 4000 (mnist1d).
        slider: None,
        advanced: false,
        run: true,
    },
    Knob {
        key: "reversal_iters",
        label: "Reversal iterations",
        help: "rnn_small: fixed-point iterations of one GRU reversal step. No effect on \
               rev_ode_small and rev_gru, whose inverses are exact.",
        unit: "iterations",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(1000) },
        default: "20",
        flag: "--reversal-iters",
        slider: slider(1.0, 100.0, 1.0, false),
        advanced: true,
        run: true,
    },
    Knob {
        key: "forget_bits",
        label: "Forgetting cap",
        help: "rev_gru: most bits a hidden unit may forget per step (MacKay et al.'s cap: the \
               update gate stays at or above 2^-bits). Its information buffer keeps that many \
               bits per unit and step, so the reversal is exact. No effect on the other models.",
        unit: "bits",
        kind: KnobKind::Int { min: 1, max: IntBound::Fixed(10) },
        default: "3",
        flag: "--forget-bits",
        slider: slider(1.0, 10.0, 1.0, false),
        advanced: true,
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
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
        run: true,
    },
    Knob {
        key: "data_seed",
        label: "Data seed",
        help: "Seed of the dataset PRNG: every run sees the same trajectories (mnist1d: the \
               package's seed, 42 for the published set, at most 2^32 - 1).",
        unit: "",
        kind: KnobKind::Int { min: 0, max: IntBound::DataSeed },
        default: "0",
        flag: "--data-seed",
        slider: None,
        advanced: true,
        run: true,
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
        run: false,
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
        run: false,
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
        run: false,
    },
];

/// The knob of a config key.
pub fn knob(key: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.key == key)
}
