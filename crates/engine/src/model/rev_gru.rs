//! Model `rev_gru`: MacKay, Vicol, Ba & Grosse's reversible GRU (*Reversible Recurrent
//! Neural Networks*, NeurIPS 2018) in fixed point, with the information buffer that makes its
//! reversal exact.
//!
//! h = [a; b], halves of H/2. One step updates a from b, then b from the new a, each with
//! GRU gates (row vectors, `x @ w`, gate columns z | r | n):
//!
//! ```text
//! [z~, r] = sigmoid(x W_x[:, :2g] + b W_h + c[:2g]),  z = m z~ + (1 - m),  m = 1 - 2^-bits
//! n       = tanh(x W_x[:, 2g:] + (r * b) U + c[2g:])
//! a'      = z a + (1 - z) n
//! ```
//!
//! States are integers times 2^-23 ([`STATE_ONE`] per unit), gates integers over 1024
//! ([`GATE_ONE`]), as in the paper. The forgetting cap `bits` bounds z below by 2^-bits, so
//! a step forgets at most `bits` bits per unit. The product z a is rounded down; the
//! preimages of one rounded product are at most 2^bits consecutive integers, and the
//! *digit* (which of them a was) is what the step forgot. The [`InfoBuffer`] keeps the
//! digits; the reversal subtracts the update and picks the preimage by its digit, so h_{t-1}
//! comes back bit for bit.
//!
//! Two choices differ from the paper's code, both written down in docs/SPEC.md: the update
//! uses the rounded gate on both terms (z a and (1 - z) n), so a state stays a convex
//! combination and |h| stays below 1 plus a few units of 2^-23; and the forward pass does not
//! borrow low bits from the buffer (the paper's does), so a step is a function of (h, x)
//! alone and every schedule's recomputation gives the same states. Each value stays below
//! 2^24 in magnitude, so every integer is exact in f32 and the step runs in tensor ops on
//! any backend. Gradients pass the roundings straight through (as the paper's do).
//!
//! [`InfoBuffer`]: crate::schedule::info_buffer::InfoBuffer

use super::{Grads, ModelShape, RecurrentModel, VjpStep, kernels, rev_gru_kernels};
use burn::tensor::Tensor;
use burn::tensor::activation::sigmoid;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// 2^23: a state's integer per unit (the fused kernels and the device check use it too).
pub(crate) const STATE_ONE: f32 = 8_388_608.0;
/// 2^10: a gate's integer per unit.
pub(crate) const GATE_ONE: f32 = 1024.0;

/// First parameter of the half updated first (a, from b) and of the second (b, from a').
const HALF_A: usize = 0;
const HALF_B: usize = 4;
/// Offsets within a half: input weights `[F, 3g]`, the other half's weights for z and r
/// `[g, 2g]`, the candidate's weights `[g, g]`, biases `[1, 3g]`.
const W_X: usize = 0;
const W_H: usize = 1;
const U: usize = 2;
const C: usize = 3;
const W_O: usize = 8;
const B_O: usize = 9;

/// The reversible GRU with a linear readout `p_t = h_t @ w_o + b_o`.
#[derive(Clone, Debug)]
pub struct RevGru {
    input: usize,
    hidden: usize,
    output: usize,
    /// The forgetting cap: at most this many bits per unit per step.
    bits: u32,
}

/// One half-update's gates, kept for the vector-Jacobian product.
struct Half {
    /// sigmoid of the z~ and r pre-activations, `[R, B, 2g]`.
    s: Tensor<3>,
    /// The rounded gate as an integer over 1024, `[R, B, g]`.
    zq: Tensor<3>,
    /// The candidate n.
    n: Tensor<3>,
    /// r * (the other half).
    rb: Tensor<3>,
}

/// Largest forgetting cap: a gate of 2^-bits must stay an integer over 1024, and the
/// buffer packs at least two steps per 24-bit word.
pub const MAX_BITS: u32 = 10;

impl RevGru {
    /// A reversible GRU: `hidden` even (two halves) and a cap of 1 to [`MAX_BITS`] bits.
    pub fn new(shape: &ModelShape) -> Result<Self, String> {
        let ModelShape { input, hidden, output, forget_bits, .. } = *shape;
        if hidden < 2 || !hidden.is_multiple_of(2) {
            return Err(format!("rev_gru needs an even hidden size of at least 2 (got {hidden})"));
        }
        if !(1..=MAX_BITS as usize).contains(&forget_bits) {
            return Err(format!("rev_gru's forgetting cap must be 1 to {MAX_BITS} bits (got {forget_bits})"));
        }
        Ok(RevGru { input, hidden, output, bits: forget_bits as u32 })
    }

    fn half(&self) -> usize {
        self.hidden / 2
    }

    /// m = 1 - 2^-bits.
    fn cap(&self) -> f32 {
        1.0 - (-(self.bits as f32)).exp2()
    }

    /// The gates of the half at `base`, updated from `other`.
    fn gates(&self, p: &[Tensor<3>], base: usize, other: Tensor<3>, x: Tensor<3>) -> Half {
        let g = self.half();
        let xw = x.matmul(p[base + W_X].clone());
        let c = p[base + C].clone();
        let s = sigmoid(
            xw.clone().narrow(2, 0, 2 * g)
                + other.clone().matmul(p[base + W_H].clone())
                + c.clone().narrow(2, 0, 2 * g),
        );
        let m = self.cap();
        let lowest = GATE_ONE * (1.0 - m);
        let zq = (s.clone().narrow(2, 0, g).mul_scalar(m).add_scalar(1.0 - m).mul_scalar(GATE_ONE))
            .round()
            .clamp(lowest, GATE_ONE);
        let rb = s.clone().narrow(2, g, g) * other;
        let n = (xw.narrow(2, 2 * g, g) + rb.clone().matmul(p[base + U].clone()) + c.narrow(2, 2 * g, g)).tanh();
        Half { s, zq, n, rb }
    }

    /// round((1 - z) n 2^23): the update's integer.
    fn update(h: &Half) -> Tensor<3> {
        (h.zq.clone().div_scalar(GATE_ONE).neg().add_scalar(1.0) * h.n.clone()).mul_scalar(STATE_ONE).round()
    }

    /// One half's new integer and its digit, from the old integer `a`.
    fn forget(h: &Half, a: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
        let kept = mul_floor(a.clone(), h.zq.clone());
        let digit = a - first_preimage(kept.clone(), h.zq.clone());
        (kept + Self::update(h), digit)
    }

    /// One half's old integer from the new one and its digit.
    fn remember(h: &Half, a_new: Tensor<3>, digit: Tensor<3>) -> Tensor<3> {
        first_preimage(a_new - Self::update(h), h.zq.clone()) + digit
    }

    /// h_t and the digits `[R, B, H]` the step forgot: fused on the CPU.
    fn step_parts(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
        if fused(&h) {
            return rev_gru_kernels::step(p, h, x, self.bits);
        }
        self.step_parts_unfused(p, h, x)
    }

    /// [`step_parts`](Self::step_parts) in tensor ops (every backend; the reference the fused
    /// CPU kernel equals bit for bit).
    pub fn step_parts_unfused(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
        let g = self.half();
        let (a, b) = (h.clone().narrow(2, 0, g), h.narrow(2, g, g));
        let ga = self.gates(p, HALF_A, b.clone(), x.clone());
        let (a_new, da) = Self::forget(&ga, a.mul_scalar(STATE_ONE));
        let a_new = a_new.div_scalar(STATE_ONE);
        let gb = self.gates(p, HALF_B, a_new.clone(), x);
        let (b_new, db) = Self::forget(&gb, b.mul_scalar(STATE_ONE));
        (Tensor::cat(vec![a_new, b_new.div_scalar(STATE_ONE)], 2), Tensor::cat(vec![da, db], 2))
    }

    /// Add one half's parameter gradients for `d_new` (the gradient at its new value) to
    /// `grads`; return the gradients with respect to its old value and to the other half.
    fn half_vjp(
        &self,
        p: &[Tensor<3>],
        base: usize,
        (old, other, x, h): (Tensor<3>, Tensor<3>, Tensor<3>, Half),
        d_new: Tensor<3>,
        grads: &mut Grads,
    ) -> (Tensor<3>, Tensor<3>) {
        let g = self.half();
        let z = h.zq.div_scalar(GATE_ONE);
        let d_old = d_new.clone() * z.clone();
        let dz = d_new.clone() * (old - h.n.clone());
        let dn = d_new * z.neg().add_scalar(1.0);
        let dpre_n = dn * h.n.square().neg().add_scalar(1.0);
        grads.add(base + U, h.rb.swap_dims(1, 2).matmul(dpre_n.clone()));
        let drb = dpre_n.clone().matmul(p[base + U].clone().swap_dims(1, 2));
        let r = h.s.clone().narrow(2, g, g);
        let dr = drb.clone() * other.clone();
        let mut d_other = drb * r;
        let ds = Tensor::cat(vec![dz.mul_scalar(self.cap()), dr], 2) * (h.s.clone() * h.s.neg().add_scalar(1.0));
        grads.add(base + W_H, other.swap_dims(1, 2).matmul(ds.clone()));
        d_other = d_other + ds.clone().matmul(p[base + W_H].clone().swap_dims(1, 2));
        let dpre = Tensor::cat(vec![ds, dpre_n], 2);
        grads.add(base + W_X, x.swap_dims(1, 2).matmul(dpre.clone()));
        grads.add(base + C, dpre.sum_dim(1));
        (d_old, d_other)
    }
}

/// floor(a zq / 1024), exact for integers |a| < 2^24 and 1 <= zq <= 1024 (each product
/// below 2^24, each division by a power of two).
fn mul_floor(a: Tensor<3>, zq: Tensor<3>) -> Tensor<3> {
    let hi = a.clone().div_scalar(GATE_ONE).floor();
    let lo = a - hi.clone().mul_scalar(GATE_ONE);
    hi * zq.clone() + (lo * zq).div_scalar(GATE_ONE).floor()
}

/// The quotient of integers `num` / `den` rounded down, exact: the float quotient may be one
/// off (a GPU's division is not correctly rounded), so it is corrected by its remainder.
fn div_floor(num: Tensor<3>, den: Tensor<3>) -> Tensor<3> {
    let q = (num.clone() / den.clone()).floor();
    let rem = num - q.clone() * den.clone();
    q + rem.clone().greater_equal(den).float() - rem.lower_elem(0.0).float()
}

/// ceil(s 1024 / zq): the least integer a with floor(a zq / 1024) = s, exact for |s| < 2^23.
fn first_preimage(s: Tensor<3>, zq: Tensor<3>) -> Tensor<3> {
    let q = div_floor(s.clone(), zq.clone());
    let rem = s - q.clone() * zq.clone(); // 0 <= rem < zq
    // ceil(rem 1024 / zq) = floor((rem 1024 + zq - 1) / zq), all below 2^21.
    let c = div_floor(rem.mul_scalar(GATE_ONE) + zq.clone().sub_scalar(1.0), zq);
    q.mul_scalar(GATE_ONE) + c
}

impl RecurrentModel for RevGru {
    fn hidden(&self) -> usize {
        self.hidden
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["wa_x", "wa_h", "ua", "ca", "wb_x", "wb_h", "ub", "cb", "w_o", "b_o"]
    }

    fn param_shapes(&self) -> Vec<[usize; 2]> {
        let (f, g, h, o) = (self.input, self.half(), self.hidden, self.output);
        let half = [[f, 3 * g], [g, 2 * g], [g, g], [1, 3 * g]];
        half.iter().chain(&half).copied().chain([[h, o], [1, o]]).collect()
    }

    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>> {
        // Every weight and bias ~ U(-1/sqrt(H), 1/sqrt(H)), as the GRU's (spec §2).
        let bound = 1.0 / (self.hidden as f32).sqrt();
        self.param_shapes().iter().map(|[a, b]| (0..a * b).map(|_| rng.random_range(-bound..bound)).collect()).collect()
    }

    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        super::evals::forward(h.dims()[0]);
        self.step_parts(p, h, x).0
    }

    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, _x: Tensor<3>) -> Tensor<3> {
        h.matmul(p[W_O].clone()) + p[B_O].clone()
    }

    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, _iters: usize) -> Tensor<3> {
        // Without its buffer: every digit taken as 0 (the lowest preimage), wrong by up to
        // 2^bits - 1 units of 2^-23 per unit and step.
        let digits = h.zeros_like();
        self.reverse_with(p, h, x, digits)
    }

    fn buffer_bits(&self) -> Option<u32> {
        Some(self.bits)
    }

    fn step_forgetting(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
        super::evals::forward(h.dims()[0]);
        self.step_parts(p, h, x)
    }

    fn reverse_with(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, digits: Tensor<3>) -> Tensor<3> {
        super::evals::reversal(h.dims()[0]);
        if fused(&h) {
            return rev_gru_kernels::reverse(p, h, x, digits, self.bits);
        }
        self.reverse_with_unfused(p, h, x, digits)
    }

    fn reversal_evals(&self, _iters: usize) -> usize {
        1 // the exact inverse
    }

    fn cell_cost(&self) -> super::CellCost {
        // `rdbench perf`'s cell-cost table (fused CPU kernels): an exact reversal costs 0.93 of
        // a step, a VJP 1.5 (docs/PERF.md, "Work units").
        super::CellCost { forward: 10, reversal: 9, vjp: 15 }
    }

    fn step_vjp(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3> {
        super::evals::vjp(s.h_prev.dims()[0]);
        if !fused(&s.h_prev) {
            return self.step_vjp_unfused(p, s, grads);
        }
        // The readout's part in tensor ops (a few), the cell's in one kernel.
        let VjpStep { h_prev, x, loss, dh } = s;
        let (h_new, cache) = rev_gru_kernels::step_cached(p, h_prev.clone(), x.clone(), self.bits);
        let dh_new = super::readout_vjp(self, p, (h_new, x.clone()), loss, dh, grads, [W_O, B_O]);
        rev_gru_kernels::cell_vjp(p, (h_prev, x, cache), dh_new, self.bits, grads.per_param())
    }
}

impl RevGru {
    /// The exact reversal in tensor ops (the reference for the fused CPU kernel).
    pub fn reverse_with_unfused(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, digits: Tensor<3>) -> Tensor<3> {
        let g = self.half();
        let (a_new, b_new) = (h.clone().narrow(2, 0, g), h.narrow(2, g, g));
        // b was updated last, from a' (which it leaves as it is): undo it first.
        let gb = self.gates(p, HALF_B, a_new.clone(), x.clone());
        let b = Self::remember(&gb, b_new.mul_scalar(STATE_ONE), digits.clone().narrow(2, g, g)).div_scalar(STATE_ONE);
        let ga = self.gates(p, HALF_A, b.clone(), x);
        let a = Self::remember(&ga, a_new.mul_scalar(STATE_ONE), digits.narrow(2, 0, g)).div_scalar(STATE_ONE);
        Tensor::cat(vec![a, b], 2)
    }

    /// The vector-Jacobian product in tensor ops (the reference for the fused CPU kernel).
    pub fn step_vjp_unfused(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3> {
        let VjpStep { h_prev, x, loss, dh } = s;
        let g = self.half();
        let (a, b) = (h_prev.clone().narrow(2, 0, g), h_prev.narrow(2, g, g));
        let ga = self.gates(p, HALF_A, b.clone(), x.clone());
        let a_new = Self::forget(&ga, a.clone().mul_scalar(STATE_ONE)).0.div_scalar(STATE_ONE);
        let gb = self.gates(p, HALF_B, a_new.clone(), x.clone());
        let b_new = Self::forget(&gb, b.clone().mul_scalar(STATE_ONE)).0.div_scalar(STATE_ONE);

        let h_new = Tensor::cat(vec![a_new.clone(), b_new], 2);
        let dh_new = super::readout_vjp(self, p, (h_new, x.clone()), loss, dh, grads, [W_O, B_O]);
        let (da_new, db_new) = (dh_new.clone().narrow(2, 0, g), dh_new.narrow(2, g, g));
        // b' = f(b; a'): b gets its own path, a' the gate's.
        let (db, da_from_b) = self.half_vjp(p, HALF_B, (b.clone(), a_new, x.clone(), gb), db_new, grads);
        // a' = f(a; b).
        let (da, db_from_a) = self.half_vjp(p, HALF_A, (a, b, x, ga), da_new + da_from_b, grads);
        Tensor::cat(vec![da, db + db_from_a], 2)
    }
}

/// Whether `h`'s device runs the fused CPU kernels.
fn fused(h: &Tensor<3>) -> bool {
    kernels::fused_on(&h.device())
}
