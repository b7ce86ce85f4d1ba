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
    /// Train sequences generated.
    pub n_train: usize,
    /// Test sequences.
    pub n_test: usize,
}

/// Train sequences a bench uses when `train_size` is 0: with T = 200 the default protocol
/// then costs about what the pendulum's does (200 x 200 steps per epoch against 400 x 80;
/// docs/SPEC.md).
pub const ADDING_DEFAULT_TRAIN: usize = 200;

/// The constant predictor a reader compares with: the target's mean, 1.
pub const TRIVIAL_PREDICTION: f64 = 1.0;

impl Adding {
    /// The adding problem with sequences of `steps` steps (at least 2: one marker per half).
    pub fn new(steps: usize) -> Self {
        Adding { steps, n_train: 1000, n_test: 200 }
    }

    /// The two marked steps of a sequence: one uniform in `[0, T/2)`, one in `[T/2, T)`.
    fn markers(&self, rng: &mut ChaCha8Rng) -> [usize; 2] {
        let half = self.steps / 2;
        [rng.random_range(0..half), rng.random_range(half..self.steps)]
    }

    fn dataset(&self, rng: &mut ChaCha8Rng, n: usize) -> Dataset {
        let t = self.steps;
        let mut x = Vec::with_capacity(n * t * 2);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            // Per sequence: its T values, then its two markers.
            let values: Vec<f32> = (0..t).map(|_| rng.random::<f32>()).collect();
            let marks = self.markers(rng);
            for (s, v) in values.iter().enumerate() {
                x.extend_from_slice(&[*v, if marks.contains(&s) { 1.0 } else { 0.0 }]);
            }
            y.push((values[marks[0]] as f64 + values[marks[1]] as f64) as f32);
        }
        Dataset { n, t, f_in: 2, f_out: 1, x, y, task: Task::LastStepRegression }
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
        ADDING_DEFAULT_TRAIN
    }
    fn task(&self) -> Task {
        Task::LastStepRegression
    }
    fn generate(&self, data_seed: u64) -> TrackData {
        assert!(self.steps >= 2, "the adding problem needs T >= 2 (one marker per half)");
        // One PRNG for the whole split: train sequences first, then test.
        let mut rng = ChaCha8Rng::seed_from_u64(data_seed);
        let train = self.dataset(&mut rng, self.n_train);
        let test = self.dataset(&mut rng, self.n_test);
        TrackData { train, test }
    }
    fn reference(&self, data: &TrackData) -> Reference {
        let y = &data.test.y;
        let pred = vec![TRIVIAL_PREDICTION as f32; y.len()];
        Reference { name: "always predicting 1".into(), metric: crate::mean_squared_error(&pred, y) }
    }
}
