//! Adam with a learning rate per run, and per-run global-norm gradient clipping.
//!
//! Written by hand because every run of a population needs its own lr and its own clip
//! coefficient; the arithmetic follows torch.optim.Adam and torch.nn.utils.clip_grad_norm_.

use crate::model::packed_rows::pack;
use crate::model::zeros_like_each;
use burn::tensor::{Bool, Device, Tensor, TensorData};

pub use rdbench_core::optimizer::{BETA1, BETA2, CLIP_NORM, EPS};

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
    /// On a GPU, the moments packed `[R, 1, P]` (every parameter's values of a run in one
    /// row) for the fused step: one kernel plus the packing (~20 dispatches) where the
    /// tensor ops take ~160; `m` and `v` are then unused.
    packed: Option<(Tensor<3>, Tensor<3>)>,
    /// On a GPU, the parameters `new` was given, packed (once, for the first step's passes).
    start: Option<Tensor<3>>,
    /// The parameters' shapes.
    shapes: Vec<[usize; 3]>,
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
            packed: None,
            start: None,
            shapes: params.iter().map(|p| p.dims()).collect(),
        }
        .fused_on(device, params)
    }

    /// On a GPU device, the fused step's packed moments (zero like `m` and `v`).
    fn fused_on(mut self, device: &Device, params: &[Tensor<3>]) -> Self {
        if crate::model::kernels::cube_on(device) {
            let p = pack(params);
            self.packed = Some((p.zeros_like(), p.zeros_like()));
            self.start = Some(p);
            (self.m, self.v) = (Vec::new(), Vec::new());
        }
        self
    }

    /// The same state stepped by tensor ops only (the fused step's reference on a GPU).
    pub fn without_gpu_kernels(self) -> Self {
        match self.packed {
            None => self,
            Some((m, v)) => {
                Adam { m: unpack(m, &self.shapes), v: unpack(v, &self.shapes), packed: None, start: None, ..self }
            }
        }
    }

    /// The parameters [`Adam::new`] was given, as packed rows (`model::packed_rows`): on a GPU,
    /// once; None after the first call and on the CPU.
    pub fn take_start(&mut self) -> Option<Tensor<3>> {
        self.start.take()
    }

    /// Whether steps take the fused GPU kernel.
    pub fn is_fused(&self) -> bool {
        self.packed.is_some()
    }

    /// One whole optimizer step in one kernel (GPU only, [`Adam::is_fused`]): the divergence
    /// mask of runs whose loss or gradient norm is not finite, the per-run clip and Adam, on
    /// packed values, as `optimizer_step` does with tensor ops. Returns the new parameters,
    /// the same packed (the rows they were split from) and the gradient norms `[R]`.
    #[cfg(feature = "cube")]
    pub fn fused_step(
        &mut self,
        params: Vec<Tensor<3>>,
        grads: crate::model::Gradient,
        loss: Tensor<1>,
    ) -> (Vec<Tensor<3>>, Tensor<3>, Tensor<1>) {
        let (m, v) = self.packed.take().expect("a fused optimizer");
        self.start = None;
        let r = loss.dims()[0];
        self.step += 1;
        let bc1 = 1.0 - BETA1.powi(self.step);
        let bc2 = 1.0 - BETA2.powi(self.step);
        let shapes: Vec<[usize; 3]> = params.iter().map(|p| p.dims()).collect();
        // Taken, not cloned: the kernel writes the lr in place (a shared buffer is copied).
        let lr = std::mem::replace(&mut self.lr, Tensor::empty([1, 1, 1], &loss.device()));
        // A pass that packed its gradient packed the parameters it differentiated too: both
        // are taken as they are (the gradient's last value per run, its loss, is skipped).
        let (p, g) = match grads.into_packed() {
            Ok(packed) => (packed.params, packed.grad),
            Err(grads) => (pack(&params), pack(&grads)),
        };
        let [p, m, v, lr, norms] = crate::model::cube_kernels::adam_packed(
            p,
            g,
            m,
            v,
            loss.reshape([r, 1, 1]),
            lr,
            bc1 as f32,
            bc2.sqrt() as f32,
        );
        drop(params);
        self.lr = lr;
        self.packed = Some((m, v));
        (crate::model::cube_kernels::split_packed(p.clone(), &shapes), p, norms.reshape([r]))
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

/// [`pack`] undone: tensors of `shapes` from a packed `[R, 1, P]`.
fn unpack(packed: Tensor<3>, shapes: &[[usize; 3]]) -> Vec<Tensor<3>> {
    let mut at = 0;
    shapes
        .iter()
        .map(|&[r, a, b]| {
            let t = packed.clone().narrow(2, at, a * b).reshape([r, a, b]);
            at += a * b;
            t
        })
        .collect()
}

/// `t` with the slices of the runs where `bad` (`[R, 1, 1]`) holds set to zero (NaN
/// included, which a multiplication would keep).
pub fn zero_runs(t: Tensor<3>, bad: &Tensor<3, Bool>) -> Tensor<3> {
    let dims = t.dims();
    t.mask_fill(bad.clone().expand(dims), 0.0)
}
