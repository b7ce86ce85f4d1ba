//! Track `dynamics`: one-step-ahead prediction of a damped pendulum (spec §1).

use crate::{Dataset, Reference, Task, Track, TrackData};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

/// theta'' = -w0^2 sin(theta) - gamma theta', integrated with RK4.
#[derive(Clone, Debug)]
pub struct Pendulum {
    /// w0^2 (spec: 4.0).
    pub w0_sq: f64,
    /// Damping gamma (spec: 0.1).
    pub gamma: f64,
    /// RK4 step in seconds (spec: 0.01).
    pub h: f64,
    /// RK4 steps per observation (spec: 10, i.e. dt = 0.1 s).
    pub substeps: usize,
    /// Observed transitions per trajectory (spec: T = 80, so 81 states).
    pub steps: usize,
    /// Train trajectories (spec: 400).
    pub n_train: usize,
    /// Test trajectories (spec: 200).
    pub n_test: usize,
}

impl Default for Pendulum {
    fn default() -> Self {
        Pendulum::new(80)
    }
}

impl Pendulum {
    /// The spec's pendulum observed for `steps` transitions (T; the spec's is 80).
    pub fn new(steps: usize) -> Self {
        Pendulum { w0_sq: 4.0, gamma: 0.1, h: 0.01, substeps: 10, steps, n_train: 400, n_test: 200 }
    }

    fn deriv(&self, theta: f64, omega: f64) -> (f64, f64) {
        (omega, -self.w0_sq * theta.sin() - self.gamma * omega)
    }

    /// One classical RK4 step of size `self.h`.
    pub fn rk4_step(&self, theta: f64, omega: f64) -> (f64, f64) {
        let h = self.h;
        let (k1t, k1w) = self.deriv(theta, omega);
        let (k2t, k2w) = self.deriv(theta + 0.5 * h * k1t, omega + 0.5 * h * k1w);
        let (k3t, k3w) = self.deriv(theta + 0.5 * h * k2t, omega + 0.5 * h * k2w);
        let (k4t, k4w) = self.deriv(theta + h * k3t, omega + h * k3w);
        (theta + h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t), omega + h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w))
    }

    /// The `steps + 1` observed states (theta, omega) of one trajectory, in radians.
    pub fn trajectory(&self, theta0: f64, omega0: f64) -> Vec<(f64, f64)> {
        let mut s = (theta0, omega0);
        let mut out = Vec::with_capacity(self.steps + 1);
        out.push(s);
        for _ in 0..self.steps {
            for _ in 0..self.substeps {
                s = self.rk4_step(s.0, s.1);
            }
            out.push(s);
        }
        out
    }

    fn dataset(&self, rng: &mut ChaCha8Rng, n: usize) -> Dataset {
        let t = self.steps;
        let mut x = Vec::with_capacity(n * t * 2);
        let mut y = Vec::with_capacity(n * t * 2);
        for _ in 0..n {
            let theta0 = rng.random_range(-0.75 * PI..0.75 * PI);
            let omega0 = rng.random_range(-1.0..1.0);
            let states: Vec<[f32; 2]> = self
                .trajectory(theta0, omega0)
                .into_iter()
                .map(|(th, om)| [(th / PI) as f32, (om / PI) as f32])
                .collect();
            for s in &states[..t] {
                x.extend_from_slice(s);
            }
            for s in &states[1..] {
                y.extend_from_slice(s);
            }
        }
        Dataset { n, t, f_in: 2, f_out: 2, x, y, task: Task::Regression }
    }
}

impl Track for Pendulum {
    fn input_dim(&self) -> usize {
        2
    }
    fn output_dim(&self) -> usize {
        2
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
    fn task(&self) -> Task {
        Task::Regression
    }
    fn generate(&self, data_seed: u64, n_train: usize) -> TrackData {
        // One PRNG for the whole split: train trajectories first, then test.
        let mut rng = ChaCha8Rng::seed_from_u64(data_seed);
        let train = self.dataset(&mut rng, self.n_train);
        let test = self.dataset(&mut rng, self.n_test);
        TrackData { train, test }.with_train(n_train)
    }
    fn reference(&self, data: &TrackData) -> Reference {
        // A model that learned nothing outputs a constant, and the constant with the least
        // squared error is the mean. Persistence (predicting the input state) is no such
        // model: it already knows the state changes little in a step, and beats the constant
        // about 30-fold at T = 80.
        let mean = data.train.feature_means();
        let pred: Vec<f32> = (0..data.test.y.len()).map(|i| mean[i % mean.len()]).collect();
        Reference {
            name: "always predicting the training targets' mean state".into(),
            metric: crate::mean_squared_error(&pred, &data.test.y),
        }
    }
}
