//! Tracks: the tasks a model is trained on. A track turns a `data_seed` into a fixed
//! train/test split of sequences; every run seed sees the same data.

mod pendulum;

pub use pendulum::Pendulum;

/// A set of equal-length sequences, stored trajectory-major on the host:
/// `x[n][t][f_in]` and `y[n][t][f_out]` flattened.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// Number of trajectories.
    pub n: usize,
    /// Time steps per trajectory.
    pub t: usize,
    /// Input features per step.
    pub f_in: usize,
    /// Target features per step.
    pub f_out: usize,
    /// Inputs, `n * t * f_in` values.
    pub x: Vec<f32>,
    /// Targets, `n * t * f_out` values.
    pub y: Vec<f32>,
}

impl Dataset {
    /// Trajectories `start..start + len` as a new dataset.
    pub fn range(&self, start: usize, len: usize) -> Dataset {
        assert!(start + len <= self.n, "range {start}+{len} outside {} trajectories", self.n);
        let (xi, yo) = (self.t * self.f_in, self.t * self.f_out);
        Dataset {
            n: len,
            t: self.t,
            f_in: self.f_in,
            f_out: self.f_out,
            x: self.x[start * xi..(start + len) * xi].to_vec(),
            y: self.y[start * yo..(start + len) * yo].to_vec(),
        }
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

/// A sequence-prediction task. New tracks implement this and are listed in [`TRACKS`].
pub trait Track: Send + Sync {
    /// Input features per step.
    fn input_dim(&self) -> usize;
    /// Target features per step.
    fn output_dim(&self) -> usize;
    /// Time steps T per trajectory.
    fn seq_len(&self) -> usize;
    /// Train trajectories (full runs train on all of them).
    fn n_train(&self) -> usize;
    /// Trajectories held out of the train set for validation in sweep runs.
    fn n_val(&self) -> usize;
    /// Generate the fixed dataset for `data_seed`.
    fn generate(&self, data_seed: u64) -> TrackData;
}

/// One track a config can name: the registry entry the config check, the CLI help and the
/// page's choices all read.
pub struct TrackEntry {
    /// Config name.
    pub name: &'static str,
    /// What a user sees in a choice list.
    pub label: &'static str,
    /// Build it.
    pub build: fn() -> Box<dyn Track>,
}

/// Every track this build knows (a new track: one file plus one line here).
pub const TRACKS: &[TrackEntry] =
    &[TrackEntry { name: "dynamics", label: "dynamics (damped pendulum)", build: || Box::new(Pendulum::default()) }];

/// Look a track up by its config name.
pub fn by_name(name: &str) -> Option<Box<dyn Track>> {
    TRACKS.iter().find(|t| t.name == name).map(|t| (t.build)())
}
