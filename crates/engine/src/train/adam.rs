//! Adam with a learning rate per run, and per-run global-norm gradient clipping.
//!
//! Written by hand because every run of a population needs its own lr and its own clip
//! coefficient; the arithmetic follows torch.optim.Adam and torch.nn.utils.clip_grad_norm_.

use crate::model::zeros_like_each;
use burn::tensor::{Bool, Device, Tensor, TensorData};

/// Adam hyper-parameters of spec §3.
pub const BETA1: f64 = 0.9;
/// Second-moment decay.
pub const BETA2: f64 = 0.999;
/// Denominator epsilon.
pub const EPS: f64 = 1e-8;
/// Maximum global L2 norm of one run's gradient.
pub const CLIP_NORM: f64 = 1.0;

/// Per-run global L2 norm of a population gradient, shape `[R, 1, 1]`.
pub fn grad_norms(grads: &[Tensor<3>]) -> Tensor<3> {
    let mut total: Option<Tensor<3>> = None;
    for g in grads {
        let s = g.clone().square().sum_dim(2).sum_dim(1);
        total = Some(match total {
            Some(t) => t + s,
            None => s,
        });
    }
    total.expect("at least one parameter").sqrt()
}

/// Scale each run's gradient so its global norm is at most [`CLIP_NORM`]
/// (coefficient `CLIP_NORM / (norm + 1e-6)` clamped to 1, as torch does).
pub fn clip(grads: Vec<Tensor<3>>, norms: Tensor<3>) -> Vec<Tensor<3>> {
    let coef = norms.add_scalar(1e-6).recip().mul_scalar(CLIP_NORM).clamp_max(1.0);
    grads.into_iter().map(|g| g * coef.clone()).collect()
}

/// Adam state of a population.
#[derive(Clone)]
pub struct Adam {
    m: Vec<Tensor<3>>,
    v: Vec<Tensor<3>>,
    step: i32,
    /// `[R, 1, 1]` learning rates.
    lr: Tensor<3>,
}

impl Adam {
    /// Fresh state for parameters shaped like `params`, one lr per run.
    pub fn new(params: &[Tensor<3>], lrs: &[f64], device: &Device) -> Self {
        let lr_data: Vec<f32> = lrs.iter().map(|&l| l as f32).collect();
        Adam {
            m: zeros_like_each(params),
            v: zeros_like_each(params),
            step: 0,
            lr: Tensor::from_data(TensorData::new(lr_data, [lrs.len(), 1, 1]), device),
        }
    }

    /// One Adam step; returns the updated parameters.
    pub fn step(&mut self, params: Vec<Tensor<3>>, grads: Vec<Tensor<3>>) -> Vec<Tensor<3>> {
        self.step += 1;
        let bc1 = 1.0 - BETA1.powi(self.step);
        let bc2 = 1.0 - BETA2.powi(self.step);
        let mut out = Vec::with_capacity(params.len());
        for (i, (p, g)) in params.into_iter().zip(grads).enumerate() {
            let m = self.m[i].clone().mul_scalar(BETA1) + g.clone().mul_scalar(1.0 - BETA1);
            let v = self.v[i].clone().mul_scalar(BETA2) + g.square().mul_scalar(1.0 - BETA2);
            // torch: denom = sqrt(v) / sqrt(bc2) + eps; p -= lr / bc1 * m / denom
            let denom = v.clone().sqrt().div_scalar(bc2.sqrt()).add_scalar(EPS);
            let update = (m.clone() / denom).div_scalar(bc1) * self.lr.clone();
            out.push(p - update);
            self.m[i] = m;
            self.v[i] = v;
        }
        out
    }

    /// Zero the moments and the lr of the runs where `bad` (`[R, 1, 1]`) holds, on the
    /// device: a diverged run keeps no NaN in its state and trains nothing more.
    pub fn zero_runs(&mut self, bad: &Tensor<3, Bool>) {
        for t in self.m.iter_mut().chain(self.v.iter_mut()).chain(std::iter::once(&mut self.lr)) {
            *t = zero_runs(t.clone(), bad);
        }
    }
}

/// `t` with the slices of the runs where `bad` (`[R, 1, 1]`) holds set to zero (NaN
/// included, which a multiplication would keep).
pub fn zero_runs(t: Tensor<3>, bad: &Tensor<3, Bool>) -> Tensor<3> {
    let dims = t.dims();
    t.mask_fill(bad.clone().expand(dims), 0.0)
}
