//! Track `adding`: the adding problem (Hochreiter & Schmidhuber 1997; Le et al. 2015;
//! Arjovsky et al. 2016), the canonical long-memory task. Each step carries two channels: a
//! value drawn uniformly from [0, 1) and a marker that is 1 at exactly two steps, one drawn
//! uniformly from the first half and one from the second half. The target is the sum of the
//! two marked values, read out from the last hidden state. The model must carry the first
//! marked value across about T/2 steps, so the task asks for memory at any length.

use crate::{Dataset, Reference, Task, Track, TrackData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The adding problem at T steps.
#[derive(Clone, Debug)]
pub struct Adding {
    /// Steps per sequence (T; the default is 200).
    pub steps: usize,
    /// Most train sequences a bench may ask for.
    pub n_train: usize,
    /// Test sequences.
    pub n_test: usize,
}

/// Train sequences drawn before the test set, from the data seed's first PRNG stream. Any
/// more come from its second stream, so the test set and these stay what they were when the
/// track made exactly this many (reports written then re-execute unchanged).
pub const ADDING_FIRST_TRAIN: usize = 1000;

/// Most train sequences a bench may ask for (`train_size`).
pub const ADDING_MAX_TRAIN: usize = 16_000;

/// What `train_size` 0 means in a stored config: the 200 sequences the adding problem's
/// default was before its protocol learned it. Reports written then keep their meaning and
/// re-execute; a new bench that leaves `train_size` at 0 gets [`adding_default_train`]
/// instead, written into its config as the count ([`Track::new_bench_train`]).
pub const ADDING_STORED_ZERO_TRAIN: usize = 200;

/// Train sequences a new bench at T steps gets when it leaves `train_size` at 0: enough that
/// the default 15 epochs of minibatches of 32 give the baseline GRU about three times the
/// optimizer steps it takes to leave the adding problem's plateau (docs/SPEC.md §9 has the
/// learning curves behind these figures): 3200 sequences (1500 steps a full run, 1200 a
/// sweep run) up to T = 200, 4800 (2250 and 1800) above it.
pub fn adding_default_train(steps: usize) -> usize {
    if steps <= 200 { 3200 } else { 4800 }
}

/// The constant predictor a reader compares with: the target's mean, 1.
pub const TRIVIAL_PREDICTION: f64 = 1.0;

impl Adding {
    /// The adding problem with sequences of `steps` steps (at least 2: one marker per half).
    pub fn new(steps: usize) -> Self {
        Adding { steps, n_train: ADDING_MAX_TRAIN, n_test: 200 }
    }

    /// The two marked steps of a sequence: one uniform in `[0, T/2)`, one in `[T/2, T)`.
    fn markers(&self, rng: &mut ChaCha8Rng) -> [usize; 2] {
        let half = self.steps / 2;
        [rng.random_range(0..half), rng.random_range(half..self.steps)]
    }

    /// The next `n` sequences of `rng`, of which the first `keep` are kept (the rest are
    /// drawn only to move the stream on).
    fn dataset(&self, rng: &mut ChaCha8Rng, n: usize, keep: usize) -> Dataset {
        let (t, kept) = (self.steps, keep.min(n));
        let mut x = Vec::with_capacity(kept * t * 2);
        let mut y = Vec::with_capacity(kept);
        for i in 0..n {
            // Per sequence: its T values, then its two markers.
            let values: Vec<f32> = (0..t).map(|_| rng.random::<f32>()).collect();
            let marks = self.markers(rng);
            if i >= keep {
                continue;
            }
            for (s, v) in values.iter().enumerate() {
                x.extend_from_slice(&[*v, if marks.contains(&s) { 1.0 } else { 0.0 }]);
            }
            y.push((values[marks[0]] as f64 + values[marks[1]] as f64) as f32);
        }
        Dataset { n: kept, t, f_in: 2, f_out: 1, x, y, task: Task::LastStepRegression }
    }
}

impl Track for Adding {
    fn input_dim(&self) -> usize {
        2
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn seq_len(&self) -> usize {
        self.steps
    }
    fn n_train(&self) -> usize {
        self.n_train
    }
    fn n_test(&self) -> usize {
        self.n_test
    }
    fn default_train(&self) -> usize {
        ADDING_STORED_ZERO_TRAIN
    }
    fn new_bench_train(&self) -> Option<usize> {
        Some(adding_default_train(self.steps))
    }
    fn task(&self) -> Task {
        Task::LastStepRegression
    }
    fn generate(&self, data_seed: u64, n_train: usize) -> TrackData {
        assert!(self.steps >= 2, "the adding problem needs T >= 2 (one marker per half)");
        assert!(n_train <= self.n_train, "{n_train} train sequences asked of at most {}", self.n_train);
        // Stream 0: the first train sequences, then the test set; stream 1: train sequences
        // beyond the first (only those a bench asks for are made: at T = 10,000 each is 80 kB).
        let mut rng = ChaCha8Rng::seed_from_u64(data_seed);
        let mut train = self.dataset(&mut rng, ADDING_FIRST_TRAIN, n_train);
        let test = self.dataset(&mut rng, self.n_test, self.n_test);
        if n_train > ADDING_FIRST_TRAIN {
            let mut more = ChaCha8Rng::seed_from_u64(data_seed);
            more.set_stream(1);
            let extra = self.dataset(&mut more, n_train - ADDING_FIRST_TRAIN, n_train);
            train.x.extend_from_slice(&extra.x);
            train.y.extend_from_slice(&extra.y);
            train.n = n_train;
        }
        TrackData { train, test }
    }
    fn reference(&self, data: &TrackData) -> Reference {
        let y = &data.test.y;
        let pred = vec![TRIVIAL_PREDICTION as f32; y.len()];
        Reference { name: "always predicting 1".into(), metric: crate::mean_squared_error(&pred, y) }
    }
}
