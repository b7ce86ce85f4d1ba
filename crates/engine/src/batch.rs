//! Minibatches of a population: every run draws its own trajectories.

use crate::model::StepLoss;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rdbench_core::track::{Dataset, Task};

/// A dataset uploaded once to the device, time-major: inputs `[T, N, F]`, targets
/// `[S, N, O]` (S target steps: T, or 1 for a classification's one-hot class). Time-major so
/// that a minibatch is one gather per tensor and each of its steps a view: on a GPU every
/// copy is a dispatch, and slicing sequence-major data into steps took one per step.
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

/// `[N, T, F]` row-major values as `[T, N, F]`.
fn time_major(v: &[f32], n: usize, t: usize, f: usize) -> Vec<f32> {
    let mut out = vec![0.0; v.len()];
    for i in 0..n {
        for s in 0..t {
            out[(s * n + i) * f..][..f].copy_from_slice(&v[(i * t + s) * f..][..f]);
        }
    }
    out
}

impl DeviceData {
    /// Upload `data` to `device`.
    pub fn new(data: &Dataset, device: &Device) -> Self {
        let s = data.target_steps();
        let x = time_major(&data.x, data.n, data.t, data.f_in);
        let y = time_major(&data.y, data.n, s, data.f_out);
        DeviceData {
            x: Tensor::from_data(TensorData::new(x, [data.t, data.n, data.f_in]), device),
            y: Tensor::from_data(TensorData::new(y, [s, data.n, data.f_out]), device),
            n: data.n,
            t: data.t,
            task: data.task,
        }
    }

    /// The batch made of trajectories `idx[r]` for each run r (all runs the same length):
    /// one gather of the inputs and one of the targets.
    pub fn batch(&self, idx: &[Vec<usize>]) -> Batch {
        let r = idx.len();
        let b = idx[0].len();
        let flat: Vec<i64> = idx.iter().flatten().map(|&i| i as i64).collect();
        let sel = Tensor::<1, Int>::from_data(TensorData::new(flat, [r * b]), &self.x.device());
        let gather = |d: &Tensor<3>| {
            let [t, _, f] = d.dims();
            // [T, R*B, F] -> [T, R, B, F]: the same buffer.
            d.clone().select(1, sel.clone()).reshape([t, r, b, f])
        };
        Batch::new(gather(&self.x), gather(&self.y), self.task)
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

/// One minibatch of a population, read by time step ([`x`](Batch::x), [`y`](Batch::y)) or
/// whole ([`sequence`](Batch::sequence)).
pub struct Batch {
    /// Batch size B.
    pub b: usize,
    /// The track's task: where the loss sits and what it is.
    pub task: Task,
    /// The inputs, `[T, R, B, F_in]`.
    x: Tensor<4>,
    /// The targets, `[S, R, B, F_out]`.
    y: Tensor<4>,
}

impl Batch {
    /// The batch of time-major inputs `[T, R, B, F_in]` and targets `[S, R, B, F_out]`.
    fn new(x: Tensor<4>, y: Tensor<4>, task: Task) -> Batch {
        Batch { b: x.dims()[2], task, x, y }
    }

    /// Step `t`'s inputs (0-based), `[R, B, F_in]`. A slice along the outermost dimension is
    /// contiguous, but a GPU backend copies it unless its offset is aligned (256 bytes on
    /// WebGPU), so steps are sliced when asked for: a whole-sequence pass never asks.
    pub fn x(&self, t: usize) -> Tensor<3> {
        step_of(&self.x, t)
    }

    /// Target step `s`'s targets (0-based), `[R, B, F_out]`: S = T steps for a regression,
    /// 1 for a classification (the one-hot class, read out at the last step).
    pub fn y(&self, s: usize) -> Tensor<3> {
        step_of(&self.y, s)
    }

    /// Every step's inputs in order (see [`x`](Self::x)).
    pub fn xs(&self) -> impl ExactSizeIterator<Item = Tensor<3>> + '_ {
        (0..self.t()).map(|t| self.x(t))
    }

    /// All targets, time-major per run `[R, S * B, F_out]` (a copy: the loss of a whole
    /// pass and the evaluation read it, a training step does not).
    pub fn y_all(&self) -> Tensor<3> {
        let [s, r, b, f] = self.y.dims();
        self.y.clone().swap_dims(0, 1).reshape([r, s * b, f])
    }

    /// Inputs of steps `lo..hi` (0-based), time-major per run `[R, (hi - lo) * B, F_in]`: the
    /// `cat` of `xs[lo..hi]` along dimension 1 in one copy.
    pub fn xs_between(&self, lo: usize, hi: usize) -> Tensor<3> {
        let [_, r, b, f] = self.x.dims();
        self.x.clone().narrow(0, lo, hi - lo).swap_dims(0, 1).reshape([r, (hi - lo) * b, f])
    }

    /// The whole minibatch, time-major, for a model's whole-sequence pass (views, no copy).
    pub fn sequence(&self) -> crate::model::Sequence {
        crate::model::Sequence { x: self.x.clone(), y: self.y.clone(), task: self.task, scale: self.loss_scale() }
    }

    /// [`y_all`](Self::y_all)'s shape, without the copy.
    pub fn y_all_dims(&self) -> [usize; 3] {
        let [s, r, b, f] = self.y.dims();
        [r, s * b, f]
    }

    /// The rows of runs `runs` (population indices, ascending): the same batch for a
    /// sub-population.
    pub fn rows(&self, runs: &[usize]) -> Batch {
        if runs.len() == self.x.dims()[1] {
            return Batch::new(self.x.clone(), self.y.clone(), self.task);
        }
        let idx: Vec<i64> = runs.iter().map(|&i| i as i64).collect();
        let idx = Tensor::<1, Int>::from_data(TensorData::new(idx, [runs.len()]), &self.x.device());
        Batch::new(self.x.clone().select(1, idx.clone()), self.y.clone().select(1, idx), self.task)
    }

    /// Time steps T.
    pub fn t(&self) -> usize {
        self.x.dims()[0]
    }

    /// The loss's normalisation: `1 / (B * T * F_out)` for the MSE, `1 / B` for the
    /// cross-entropy (a mean over sequences).
    pub fn loss_scale(&self) -> f32 {
        let [s, _, b, f] = self.y.dims();
        match self.task {
            Task::Regression | Task::LastStepRegression => 1.0 / (s * b * f) as f32,
            Task::Classification { .. } => 1.0 / self.b as f32,
        }
    }

    /// The loss term of step `t` (1-based): every step's squared error for a regression,
    /// the term at step T alone for a last-step task (a classification's cross-entropy, a
    /// last-step regression's squared error).
    pub fn loss_at(&self, t: usize) -> StepLoss {
        let scale = self.loss_scale();
        if self.task.every_step() {
            StepLoss::of(self.task, self.y(t - 1), scale)
        } else if t == self.t() {
            StepLoss::of(self.task, self.y(0), scale)
        } else {
            StepLoss::None
        }
    }
}

/// Step `s` of a time-major `[S, R, B, F]`: `[R, B, F]`.
fn step_of(a: &Tensor<4>, s: usize) -> Tensor<3> {
    let [_, r, b, f] = a.dims();
    a.clone().narrow(0, s, 1).reshape([r, b, f])
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(t: Tensor<3>) -> Vec<f32> {
        t.into_data().try_to_vec::<f32>().unwrap()
    }

    /// The time-major layout gives each run its own trajectories at every step, and the
    /// one-copy concatenations equal the per-step tensors concatenated.
    #[test]
    fn a_batch_of_time_major_data_is_the_trajectories_chosen() {
        let (n, t, f) = (5, 4, 3);
        let x: Vec<f32> = (0..n * t * f).map(|i| i as f32).collect();
        let y: Vec<f32> = (0..n * t * 2).map(|i| -(i as f32)).collect();
        let data = Dataset { x, y, n, t, f_in: f, f_out: 2, task: Task::Regression };
        let device = Device::flex();
        let batch = DeviceData::new(&data, &device).batch(&[vec![3, 0], vec![1, 4]]);
        for (s, xs) in batch.xs().enumerate() {
            let got = read(xs);
            let want: Vec<f32> = [3, 0, 1, 4].iter().flat_map(|&i| data.x[(i * t + s) * f..][..f].to_vec()).collect();
            assert_eq!(got, want, "step {s}");
        }
        assert_eq!(read(batch.xs_between(1, 3)), read(Tensor::cat(batch.xs().skip(1).take(2).collect(), 1)));
        assert_eq!(read(batch.y_all()), read(Tensor::cat((0..t).map(|s| batch.y(s)).collect(), 1)));
        assert_eq!(batch.y_all_dims(), batch.y_all().dims());
        let sub = batch.rows(&[1]);
        assert_eq!(read(sub.x(2)), read(rows(&batch.x(2), &[1])));
    }
}
