//! Tracks: the tasks a model is trained on. A track turns a `data_seed` into a fixed
//! train/test split of sequences; every run seed sees the same data. A track also says what
//! the model is asked to do ([`Task`]: the loss, the metric and its direction, the readout).

mod adding;
pub mod legacy_random;
pub mod mnist1d;
mod pendulum;
pub mod signal;
mod task;

pub use adding::{ADDING_FIRST_TRAIN, ADDING_MAX_TRAIN, ADDING_STORED_ZERO_TRAIN, Adding, adding_default_train};
pub use mnist1d::Mnist1d;
pub use pendulum::Pendulum;
pub use task::{Direction, Task};

/// A set of equal-length sequences, stored trajectory-major on the host: `x[n][t][f_in]`
/// and the targets `y[n][s][f_out]` flattened, with `s` the task's target steps (every step
/// of a regression; one, the class as a one-hot row, of a classification).
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Number of trajectories.
    pub n: usize,
    /// Time steps per trajectory.
    pub t: usize,
    /// Input features per step.
    pub f_in: usize,
    /// Target features per target step (classes, for a classification).
    pub f_out: usize,
    /// Inputs, `n * t * f_in` values.
    pub x: Vec<f32>,
    /// Targets, `n * task.target_steps(t) * f_out` values.
    pub y: Vec<f32>,
    /// What the targets are.
    pub task: Task,
}

impl Dataset {
    /// Trajectories `start..start + len` as a new dataset.
    pub fn range(&self, start: usize, len: usize) -> Dataset {
        assert!(start + len <= self.n, "range {start}+{len} outside {} trajectories", self.n);
        let (xi, yo) = (self.t * self.f_in, self.target_steps() * self.f_out);
        Dataset {
            x: self.x[start * xi..(start + len) * xi].to_vec(),
            y: self.y[start * yo..(start + len) * yo].to_vec(),
            n: len,
            ..*self
        }
    }

    /// Target steps per sequence: T for a regression, 1 for a classification.
    pub fn target_steps(&self) -> usize {
        self.task.target_steps(self.t)
    }

    /// The mean of each target feature over every sequence and target step, in f64 and
    /// rounded to f32 as a prediction is.
    pub fn feature_means(&self) -> Vec<f32> {
        let rows = self.y.len() / self.f_out;
        (0..self.f_out)
            .map(|f| (self.y.iter().skip(f).step_by(self.f_out).map(|&v| v as f64).sum::<f64>() / rows as f64) as f32)
            .collect()
    }

    /// The class of each sequence (the one-hot row's index); None for a regression.
    pub fn labels(&self) -> Option<Vec<usize>> {
        let Task::Classification { classes } = self.task else { return None };
        Some(self.y.chunks(classes).map(|row| row.iter().position(|&v| v == 1.0).expect("a one-hot row")).collect())
    }
}

/// The data of one track for one `data_seed`.
#[derive(Clone, Debug)]
pub struct TrackData {
    /// Training trajectories (full runs train on all of them).
    pub train: Dataset,
    /// Test trajectories (full runs are scored on them).
    pub test: Dataset,
}

/// How a phase splits the data: what it trains on and what it is scored on.
#[derive(Clone, Debug)]
pub struct Split {
    /// Training set.
    pub train: Dataset,
    /// Evaluation set (validation for the sweep, test for full runs).
    pub eval: Dataset,
}

impl TrackData {
    /// The first `n` train sequences (the bench's `train_size`), the test set unchanged.
    pub fn with_train(self, n: usize) -> TrackData {
        assert!(n <= self.train.n, "{n} train sequences asked of {}", self.train.n);
        TrackData { train: self.train.range(0, n), test: self.test }
    }

    /// Sweep split: all but the last `n_val` train trajectories, validated on those `n_val`.
    pub fn sweep_split(&self, n_val: usize) -> Split {
        let n_fit = self.train.n - n_val;
        Split { train: self.train.range(0, n_fit), eval: self.train.range(n_fit, n_val) }
    }

    /// Full split: every train trajectory, scored on the test set.
    pub fn full_split(&self) -> Split {
        Split { train: self.train.clone(), eval: self.test.clone() }
    }
}

/// Sequences held out of `n_train` train sequences for validation in sweep runs: the last
/// fifth (spec §1: 80 of 400).
pub fn validation_size(n_train: usize) -> usize {
    n_train / 5
}

/// A sequence task. New tracks implement this and are listed in [`TRACKS`].
pub trait Track: Send + Sync {
    /// Input features per step.
    fn input_dim(&self) -> usize;
    /// Readout features: per step for a regression, classes for a classification.
    fn output_dim(&self) -> usize;
    /// Time steps T per trajectory.
    fn seq_len(&self) -> usize;
    /// Most train trajectories the track makes (a bench uses `train_size` of them).
    fn n_train(&self) -> usize;
    /// Test trajectories generated (full runs are scored on all of them).
    fn n_test(&self) -> usize;
    /// Train trajectories a stored config's `train_size` 0 means.
    fn default_train(&self) -> usize {
        self.n_train()
    }
    /// Train trajectories a new bench gets when it leaves `train_size` at 0, where that is not
    /// [`Track::default_train`]: the parser writes the count into the config, so stored
    /// configs that say 0 keep the meaning they were written with.
    fn new_bench_train(&self) -> Option<usize> {
        None
    }
    /// What the model is asked to do, and how a run is scored.
    fn task(&self) -> Task;
    /// Largest `data_seed` the generator takes.
    fn max_data_seed(&self) -> u64 {
        u64::MAX
    }
    /// The fixed dataset of `data_seed`: its first `n_train` train sequences (at most
    /// [`Track::n_train`]; a bench's `train_size`) and the whole test set. The first `n`
    /// train sequences and the test set are the same whatever `n_train` asks for, so a
    /// bench's data is a prefix of a larger one's.
    fn generate(&self, data_seed: u64, n_train: usize) -> TrackData;
    /// The dataset of `data_seed` with every train sequence the track makes.
    fn generate_all(&self, data_seed: u64) -> TrackData {
        self.generate(data_seed, self.n_train())
    }
    /// A trivial predictor's test metric on `data` (the bench's split: its train sequences,
    /// the whole test set), scored as a full run's metric is: what a model that learned
    /// nothing scores, so a reader can tell whether one learned.
    fn reference(&self, data: &TrackData) -> Reference;
}

/// What a trivial predictor scores on a track's test set.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// What it predicts ("always predicting 1").
    pub name: String,
    /// Its test metric.
    pub metric: f64,
}

/// The mean squared error of `pred` against `y`, over every value (a regression's metric:
/// over sequences, target steps and features), summed in f64.
pub fn mean_squared_error(pred: &[f32], y: &[f32]) -> f64 {
    assert_eq!(pred.len(), y.len(), "one prediction per target value");
    pred.iter().zip(y).map(|(&p, &v)| (p as f64 - v as f64).powi(2)).sum::<f64>() / y.len() as f64
}

/// The sequence lengths a track generates: its default and the range a config may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqLens {
    /// T when a config leaves it to the track (`seq_len` 0).
    pub default: usize,
    /// Shortest T.
    pub min: usize,
    /// Longest T.
    pub max: usize,
}

/// One track a config can name: the registry entry the config check, the CLI help and the
/// page's choices all read.
pub struct TrackEntry {
    /// Config name.
    pub name: &'static str,
    /// What a user sees in a choice list: short enough for a phone's select (the help says more).
    pub label: &'static str,
    /// The lengths it generates.
    pub seq_lens: SeqLens,
    /// Build it at sequence length T (within `seq_lens`).
    pub build: fn(usize) -> Box<dyn Track>,
}

/// The longest sequences any track generates: dense BPTT's memory, not the generators,
/// limits what fits (the config check estimates it before any work).
pub const MAX_SEQ_LEN: usize = 20_000;

/// Every track this build knows (a new track: one file plus one line here).
pub const TRACKS: &[TrackEntry] = &[
    TrackEntry {
        name: "dynamics",
        label: "dynamics (pendulum)",
        seq_lens: SeqLens { default: 80, min: 1, max: MAX_SEQ_LEN },
        build: |t| Box::new(Pendulum::new(t)),
    },
    TrackEntry {
        name: "mnist1d",
        label: "mnist1d (classify)",
        seq_lens: SeqLens { default: 40, min: 2, max: MAX_SEQ_LEN },
        build: |t| Box::new(Mnist1d::new(t)),
    },
    TrackEntry {
        name: "adding",
        label: "adding (long memory)",
        seq_lens: SeqLens { default: 200, min: 2, max: MAX_SEQ_LEN },
        build: |t| Box::new(Adding::new(t)),
    },
];

/// The registry entry of a track's config name.
pub fn entry(name: &str) -> Option<&'static TrackEntry> {
    TRACKS.iter().find(|t| t.name == name)
}

/// The task of a track's config name, whatever its length (a report without a config names
/// only its track). None for an unknown track.
pub fn task_of(name: &str) -> Option<Task> {
    entry(name).map(|e| (e.build)(e.seq_lens.default).task())
}
