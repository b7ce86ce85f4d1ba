//! Minibatches of a population: every run draws its own trajectories.

use crate::model::StepLoss;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rdbench_core::track::{Dataset, Task};

/// A dataset uploaded once to the device: inputs `[N, T, F]`, targets `[N, S, O]` (S target
/// steps: T, or 1 for a classification's one-hot class).
pub struct DeviceData {
    x: Tensor<3>,
    y: Tensor<3>,
    /// Trajectories.
    pub n: usize,
    /// Time steps.
    pub t: usize,
    /// What the targets are, and so the loss.
    pub task: Task,
}

impl DeviceData {
    /// Upload `data` to `device`.
    pub fn new(data: &Dataset, device: &Device) -> Self {
        DeviceData {
            x: Tensor::from_data(TensorData::new(data.x.clone(), [data.n, data.t, data.f_in]), device),
            y: Tensor::from_data(TensorData::new(data.y.clone(), [data.n, data.target_steps(), data.f_out]), device),
            n: data.n,
            t: data.t,
            task: data.task,
        }
    }

    /// The batch made of trajectories `idx[r]` for each run r (all runs the same length).
    pub fn batch(&self, idx: &[Vec<usize>]) -> Batch {
        let r = idx.len();
        let b = idx[0].len();
        let flat: Vec<i64> = idx.iter().flatten().map(|&i| i as i64).collect();
        let device = self.x.device();
        let sel = Tensor::<1, Int>::from_data(TensorData::new(flat, [r * b]), &device);
        let time_major = |d: &Tensor<3>| {
            let [_, t, f] = d.dims();
            // [R*B, T, F] -> [R, T, B, F]
            d.clone().select(0, sel.clone()).reshape([r, b, t, f]).swap_dims(1, 2)
        };
        let x = time_major(&self.x);
        let y = time_major(&self.y);
        let [_, s, _, fo] = y.dims();
        let steps = |a: Tensor<4>| -> Vec<Tensor<3>> {
            let [_, _, _, f] = a.dims();
            a.split(1, 1).into_iter().map(|s| s.reshape([r, b, f])).collect()
        };
        Batch { y_all: y.clone().reshape([r, s * b, fo]), xs: steps(x), ys: steps(y), b, task: self.task }
    }

    /// Every trajectory, for every one of `runs` runs (evaluation and probe batches).
    pub fn all(&self, runs: usize, count: usize) -> Batch {
        let idx: Vec<usize> = (0..count.min(self.n)).collect();
        self.batch(&vec![idx; runs])
    }
}

/// Rows `runs` (population indices, ascending) of `t`'s leading dimension: a tensor of a
/// sub-population.
pub fn rows(t: &Tensor<3>, runs: &[usize]) -> Tensor<3> {
    if runs.len() == t.dims()[0] {
        return t.clone();
    }
    let idx: Vec<i64> = runs.iter().map(|&i| i as i64).collect();
    let idx = Tensor::<1, Int>::from_data(TensorData::new(idx, [runs.len()]), &t.device());
    t.clone().select(0, idx)
}

/// One minibatch of a population, split by time step.
pub struct Batch {
    /// Inputs per step, `T` tensors `[R, B, F_in]`.
    pub xs: Vec<Tensor<3>>,
    /// Targets per target step, `S` tensors `[R, B, F_out]` (S = T for a regression, 1 for a
    /// classification: the one-hot class, read out at the last step).
    pub ys: Vec<Tensor<3>>,
    /// All targets, time-major `[R, S * B, F_out]`.
    pub y_all: Tensor<3>,
    /// Batch size B.
    pub b: usize,
    /// The track's task: where the loss sits and what it is.
    pub task: Task,
}

impl Batch {
    /// The rows of runs `runs` (population indices, ascending): the same batch for a
    /// sub-population.
    pub fn rows(&self, runs: &[usize]) -> Batch {
        let pick = |t: &Tensor<3>| rows(t, runs);
        Batch {
            xs: self.xs.iter().map(pick).collect(),
            ys: self.ys.iter().map(pick).collect(),
            y_all: pick(&self.y_all),
            b: self.b,
            task: self.task,
        }
    }

    /// Time steps T.
    pub fn t(&self) -> usize {
        self.xs.len()
    }

    /// The loss's normalisation: `1 / (B * T * F_out)` for the MSE, `1 / B` for the
    /// cross-entropy (a mean over sequences).
    pub fn loss_scale(&self) -> f32 {
        let [_, sb, f] = self.y_all.dims();
        match self.task {
            Task::Regression | Task::LastStepRegression => 1.0 / (sb * f) as f32,
            Task::Classification { .. } => 1.0 / self.b as f32,
        }
    }

    /// The loss term of step `t` (1-based): every step's squared error for a regression,
    /// the term at step T alone for a last-step task (a classification's cross-entropy, a
    /// last-step regression's squared error).
    pub fn loss_at(&self, t: usize) -> StepLoss {
        let scale = self.loss_scale();
        if self.task.every_step() {
            StepLoss::of(self.task, self.ys[t - 1].clone(), scale)
        } else if t == self.t() {
            StepLoss::of(self.task, self.ys[0].clone(), scale)
        } else {
            StepLoss::None
        }
    }
}

/// The minibatch order of one epoch for each run: a fresh shuffle from the run's own PRNG,
/// cut into batches of `batch_size` (last partial batch kept). Returns `[step][run] -> indices`.
pub fn epoch_order(rngs: &mut [ChaCha8Rng], n: usize, batch_size: usize) -> Vec<Vec<Vec<usize>>> {
    let perms: Vec<Vec<usize>> = rngs
        .iter_mut()
        .map(|rng| {
            let mut p: Vec<usize> = (0..n).collect();
            p.shuffle(rng);
            p
        })
        .collect();
    (0..n.div_ceil(batch_size))
        .map(|s| {
            let lo = s * batch_size;
            let hi = (lo + batch_size).min(n);
            perms.iter().map(|p| p[lo..hi].to_vec()).collect()
        })
        .collect()
}
