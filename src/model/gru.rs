//! Model `rnn_small`: a GRU with PyTorch's gate conventions and a linear readout (spec §2).
//!
//! Weights are stored transposed relative to torch (`x @ w_ih`, `h @ w_hh`) with the gate
//! columns in torch's order r | z | n.

#[cfg(feature = "cube")]
use super::cube_kernels;
use super::{RecurrentModel, kernels};
use burn::tensor::{Tensor, activation::sigmoid};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// GRU cell plus readout `p_t = h_t @ w_o + b_o`.
#[derive(Clone, Debug)]
pub struct Gru {
    input: usize,
    hidden: usize,
    output: usize,
}

const W_IH: usize = 0;
const W_HH: usize = 1;
const B_IH: usize = 2;
const B_HH: usize = 3;
const W_O: usize = 4;
const B_O: usize = 5;

/// Gate activations of one step, kept for the vector-Jacobian product.
struct Gates {
    r: Tensor<3>,
    z: Tensor<3>,
    n: Tensor<3>,
    /// W_hn h + b_hn (the part the reset gate multiplies).
    hn: Tensor<3>,
}

impl Gru {
    /// Where each parameter sits in the GPU kernels' packed layout.
    #[cfg(feature = "cube")]
    fn packed(&self) -> cube_kernels::PackedLayout {
        cube_kernels::PackedLayout { f: self.input, h: self.hidden, o: self.output }
    }

    /// A GRU with `input` features, `hidden` units and `output` predicted features.
    pub fn new(input: usize, hidden: usize, output: usize) -> Self {
        Gru { input, hidden, output }
    }

    fn input_part(&self, p: &[Tensor<3>], x: Tensor<3>) -> Tensor<3> {
        x.matmul(p[W_IH].clone()) + p[B_IH].clone()
    }

    /// The step in tensor ops (every backend; the reference for the fused kernel).
    pub fn step_unfused(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        let g = self.gates(p, self.input_part(p, x), h.clone());
        // h' = (1 - z) n + z h
        g.n.clone() + g.z * (h - g.n)
    }

    /// The reversal in tensor ops (every backend; the reference for the fused kernel).
    pub fn reverse_unfused(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3> {
        // Damped fixed-point iteration from g = h_t (spec §5).
        let gi = self.input_part(p, x);
        let mut g = h.clone();
        for _ in 0..iters {
            let Gates { z, n, .. } = self.gates(p, gi.clone(), g);
            let one_minus_z = z.clone().neg().add_scalar(1.0);
            g = ((h.clone() - one_minus_z * n) / z.clamp_min(0.05)).clamp(-1.0, 1.0);
        }
        g
    }

    fn gates(&self, p: &[Tensor<3>], gi: Tensor<3>, h: Tensor<3>) -> Gates {
        let hh = self.hidden;
        let gh = h.matmul(p[W_HH].clone()) + p[B_HH].clone();
        let r = sigmoid(gi.clone().narrow(2, 0, hh) + gh.clone().narrow(2, 0, hh));
        let z = sigmoid(gi.clone().narrow(2, hh, hh) + gh.clone().narrow(2, hh, hh));
        let hn = gh.narrow(2, 2 * hh, hh);
        let n = (gi.narrow(2, 2 * hh, hh) + r.clone() * hn.clone()).tanh();
        Gates { r, z, n, hn }
    }
}

impl RecurrentModel for Gru {
    fn name(&self) -> &'static str {
        "rnn_small"
    }

    fn hidden(&self) -> usize {
        self.hidden
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["w_ih", "w_hh", "b_ih", "b_hh", "w_o", "b_o"]
    }

    fn param_shapes(&self) -> Vec<[usize; 2]> {
        let (i, h, o) = (self.input, self.hidden, self.output);
        vec![[i, 3 * h], [h, 3 * h], [1, 3 * h], [1, 3 * h], [h, o], [1, o]]
    }

    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>> {
        // Every weight and bias ~ U(-1/sqrt(H), 1/sqrt(H)), readout included (spec §2).
        let bound = 1.0 / (self.hidden as f32).sqrt();
        self.param_shapes().iter().map(|[a, b]| (0..a * b).map(|_| rng.random_range(-bound..bound)).collect()).collect()
    }

    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        if fused(&h) {
            return kernels::gru_step([&p[W_IH], &p[W_HH], &p[B_IH], &p[B_HH]], h, x);
        }
        self.step_unfused(p, h, x)
    }

    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, _x: Tensor<3>) -> Tensor<3> {
        h.matmul(p[W_O].clone()) + p[B_O].clone()
    }

    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3> {
        if fused(&h) {
            return kernels::gru_reverse([&p[W_IH], &p[W_HH], &p[B_IH], &p[B_HH]], h, x, iters);
        }
        self.reverse_unfused(p, h, x, iters)
    }

    fn step_vjp(
        &self,
        p: &[Tensor<3>],
        h_prev: Tensor<3>,
        x: Tensor<3>,
        y: Tensor<3>,
        dh: Tensor<3>,
        scale: f32,
        grads: &mut [Tensor<3>],
    ) -> Tensor<3> {
        #[cfg(feature = "cube")]
        if kernels::cube_on(&h_prev.device()) {
            // On the GPU the pass carries [packed gradient, packed parameters] (see `grad_zeros`).
            let (dh_prev, g) =
                cube_kernels::gru_step_vjp_packed(grads[1].clone(), h_prev, x, y, dh, scale, grads[0].clone());
            grads[0] = g;
            return dh_prev;
        }
        if kernels::fused_on(&h_prev.device()) {
            return kernels::gru_step_vjp(p, h_prev, x, y, dh, scale, grads);
        }
        self.step_vjp_unfused(p, h_prev, x, y, dh, scale, grads)
    }

    fn add_loss(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, y: Tensor<3>, loss: Tensor<3>) -> Tensor<3> {
        #[cfg(feature = "cube")]
        if kernels::cube_on(&h.device()) {
            // The GPU's VJP computes p - y at every step anyway and sums the squared error
            // into its packed gradient (see `grads_of`): no launch here.
            let _ = (h, x, y);
            return loss;
        }
        loss + super::squared_error(self.readout(p, h, x), y)
    }

    fn grad_zeros(&self, p: &[Tensor<3>]) -> Vec<Tensor<3>> {
        #[cfg(feature = "cube")]
        if kernels::cube_on(&p[0].device()) {
            // The gradient (with the pass's squared error) and the parameters packed, once per
            // pass: each VJP kernel then binds one buffer for each.
            let r = p[0].dims()[0];
            return vec![Tensor::zeros([r, 1, self.packed().grad_len()], &p[0].device()), cube_kernels::gru_pack(p)];
        }
        super::zeros_like_each(p)
    }

    fn grads_of(&self, acc: Vec<Tensor<3>>, loss: Tensor<3>) -> (Vec<Tensor<3>>, Tensor<3>) {
        #[cfg(feature = "cube")]
        if acc.len() == 2 {
            // [packed gradient | summed squared error] per run (the forward added nothing).
            let g = acc.into_iter().next().expect("the packed gradient");
            let layout = self.packed();
            let sse = g.clone().narrow(2, layout.len(), 1);
            return (cube_kernels::unpack(g, layout, &self.param_shapes()), sse);
        }
        (acc, loss)
    }
}

/// Whether `h`'s device runs the fused step and reversal kernels (CPU or GPU).
fn fused(h: &Tensor<3>) -> bool {
    let device = h.device();
    kernels::fused_on(&device) || kernels::cube_on(&device)
}

impl Gru {
    /// The vector-Jacobian product in tensor ops (every backend; the reference for the fused
    /// kernel). Arguments as `RecurrentModel::step_vjp`.
    #[allow(clippy::too_many_arguments)]
    pub fn step_vjp_unfused(
        &self,
        p: &[Tensor<3>],
        h_prev: Tensor<3>,
        x: Tensor<3>,
        y: Tensor<3>,
        dh: Tensor<3>,
        scale: f32,
        grads: &mut [Tensor<3>],
    ) -> Tensor<3> {
        let Gates { r, z, n, hn } = self.gates(p, self.input_part(p, x.clone()), h_prev.clone());
        let h_new = n.clone() + z.clone() * (h_prev.clone() - n.clone());

        // Loss term: scale * sum (p - y)^2 with p = h' w_o + b_o.
        let pred = h_new.clone().matmul(p[W_O].clone()) + p[B_O].clone();
        let dp = (pred - y).mul_scalar(2.0 * scale);
        grads[W_O] = grads[W_O].clone() + h_new.swap_dims(1, 2).matmul(dp.clone());
        grads[B_O] = grads[B_O].clone() + dp.clone().sum_dim(1);
        let dh_new = dh + dp.matmul(p[W_O].clone().swap_dims(1, 2));

        // Through h' = n + z (h - n).
        let dz = dh_new.clone() * (h_prev.clone() - n.clone());
        let dn = dh_new.clone() * z.clone().neg().add_scalar(1.0);
        let mut dh_prev = dh_new * z.clone();

        let dan = dn * n.square().neg().add_scalar(1.0);
        let dr = dan.clone() * hn;
        let dhn = dan.clone() * r.clone();
        let daz = dz * z.clone() * z.neg().add_scalar(1.0);
        let dar = dr * r.clone() * r.neg().add_scalar(1.0);

        let dgi = Tensor::cat(vec![dar.clone(), daz.clone(), dan], 2);
        let dgh = Tensor::cat(vec![dar, daz, dhn], 2);
        grads[W_IH] = grads[W_IH].clone() + x.swap_dims(1, 2).matmul(dgi.clone());
        grads[B_IH] = grads[B_IH].clone() + dgi.sum_dim(1);
        grads[W_HH] = grads[W_HH].clone() + h_prev.swap_dims(1, 2).matmul(dgh.clone());
        grads[B_HH] = grads[B_HH].clone() + dgh.clone().sum_dim(1);
        dh_prev = dh_prev + dgh.matmul(p[W_HH].clone().swap_dims(1, 2));
        dh_prev
    }
}
