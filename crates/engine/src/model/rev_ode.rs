//! Model `rev_ode_small`: an exactly reversible low-rank ODE step (spec §7).
//!
//! h = [a; b] with halves of H/2. One step is two additive couplings,
//! a' = a + F(b, x), b' = b + G(a', x), with F(b, x) = c tanh(U_F (V_F^T b) + W_F x + d_F)
//! (G likewise), so its inverse is algebraic: b = b' - G(a', x), a = a' - F(b, x). The
//! readout of a regression is residual, p_t = x_t + W_o h_t + b_o (the next state is the
//! input plus a change); a classification reads logits W_o h_T + b_o.
//!
//! Layout (row vectors, like the GRU's transposed weights): `b @ v_f` is V_F^T b, and
//! `u_f` is U_F^T, `[r_max, H/2]`, so U_F's columns are `u_f`'s rows. A run's rank r is its
//! `rank_mask` `[r_max, 1]` (1 for the first r rows, 0 after): the step uses `u * mask`, so
//! the rows past the rank take no part in the function and their gradient is exactly zero,
//! which keeps them at their initial 0 under Adam. Enrichment sets one more mask entry to
//! 1 (`RecurrentModel::set_rank`); the new U column is still 0, so the function is unchanged
//! at that moment, and its V column is the random one drawn at initialisation (its gradient
//! was zero while the U column was masked).

use super::{Grads, ModelShape, RecurrentModel, VjpStep};
use burn::tensor::{Tensor, TensorData};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rdbench_core::track::Task;

/// Step size c of the two couplings (spec §7).
pub const STEP: f32 = 0.25;

/// First parameter of F's coupling (u_f, v_f, w_f, d_f) and of G's (u_g, v_g, w_g, d_g).
const U_F: usize = 0;
const U_G: usize = 4;
/// Offsets within a coupling.
const V: usize = 1;
const W: usize = 2;
const D: usize = 3;
const W_O: usize = 8;
const B_O: usize = 9;
/// Not trained: its gradient is always zero, so Adam leaves it as `set_rank` set it.
const MASK: usize = 10;

/// The reversible cell plus residual readout.
#[derive(Clone, Debug)]
pub struct RevOde {
    input: usize,
    hidden: usize,
    output: usize,
    rank0: usize,
    rank_max: usize,
    /// Whether the readout adds x_t (a regression's).
    residual: bool,
    /// Whether a whole pass on a GPU (training pass, every state, chained defects) takes the
    /// whole-sequence kernels (`cube_rev_ode`); off, the tensor ops (the reference
    /// `fused_check` measures the kernels against).
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    whole_kernels: bool,
    /// Rows per backward launch of those kernels (None: as many as their sums' budget
    /// allows; set to test a pass in parts at small sizes).
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    part_rows: Option<usize>,
}

/// One coupling's intermediate values, kept for the vector-Jacobian product.
struct Coupling {
    /// V^T of the coupling's input, `[R, B, r_max]`.
    s: Tensor<3>,
    /// tanh of the pre-activation.
    th: Tensor<3>,
}

impl RevOde {
    /// A reversible ODE cell. `hidden` must be even (two halves) and, for a regression,
    /// `input == output` (the readout adds x_t): the config check reports an odd hidden size
    /// before a model is built; the constructor checks again for code that builds one directly.
    pub fn new(shape: &ModelShape) -> Result<Self, String> {
        let ModelShape { input, hidden, output, rank0, rank_max, task, .. } = *shape;
        if hidden < 2 || !hidden.is_multiple_of(2) {
            return Err(format!("rev_ode_small needs an even hidden size of at least 2 (got {hidden})"));
        }
        let residual = task == Task::Regression;
        if residual && input != output {
            return Err(format!(
                "rev_ode_small's residual readout needs as many outputs as inputs (got {input} in, {output} out)"
            ));
        }
        if rank0 < 1 || rank0 > rank_max {
            return Err(format!("rev_ode_small needs 1 <= r0 <= r_max (got r0 {rank0}, r_max {rank_max})"));
        }
        Ok(RevOde { input, hidden, output, rank0, rank_max, residual, whole_kernels: true, part_rows: None })
    }

    /// The same model taking the tensor ops where it would take the whole-sequence kernels.
    pub fn without_whole_kernels(self) -> Self {
        RevOde { whole_kernels: false, ..self }
    }

    /// The same model with its whole-sequence backward passes in parts of `rows` rows.
    pub fn with_part_rows(self, rows: usize) -> Self {
        RevOde { part_rows: Some(rows), ..self }
    }

    /// Whether a whole pass on `device` takes the whole-sequence GPU kernels.
    #[cfg(feature = "cube")]
    fn on_whole_kernels(&self, device: &burn::tensor::Device) -> bool {
        self.whole_kernels && super::kernels::cube_on(device)
    }

    /// The kernels' shape.
    #[cfg(feature = "cube")]
    fn kernel_shape(&self) -> super::cube_rev_ode::RevShape {
        super::cube_rev_ode::RevShape { hid: self.hidden, rm: self.rank_max }
    }

    fn half(&self) -> usize {
        self.hidden / 2
    }

    /// c tanh(((z @ v) @ (u * mask)) + x @ w + d) and what its VJP needs; `base` indexes u.
    fn coupling(&self, p: &[Tensor<3>], base: usize, z: Tensor<3>, x: Tensor<3>) -> Coupling {
        let s = z.matmul(p[base + V].clone());
        let u = p[base].clone() * p[MASK].clone();
        let pre = s.clone().matmul(u) + x.matmul(p[base + W].clone()) + p[base + D].clone();
        Coupling { s, th: pre.tanh() }
    }

    /// Add the coupling's parameter gradients for output gradient `dout` to `grads`, and
    /// return the gradient with respect to its input z.
    fn coupling_vjp(
        &self,
        p: &[Tensor<3>],
        base: usize,
        (z, x, c): (Tensor<3>, Tensor<3>, Coupling),
        dout: Tensor<3>,
        grads: &mut Grads,
    ) -> Tensor<3> {
        // d pre = dout * c (1 - tanh^2)
        let dpre = dout * c.th.square().neg().add_scalar(1.0).mul_scalar(STEP);
        let mask = p[MASK].clone();
        let u = p[base].clone() * mask.clone();
        grads.add(base, c.s.swap_dims(1, 2).matmul(dpre.clone()) * mask);
        let ds = dpre.clone().matmul(u.swap_dims(1, 2));
        grads.add(base + V, z.swap_dims(1, 2).matmul(ds.clone()));
        grads.add(base + W, x.swap_dims(1, 2).matmul(dpre.clone()));
        grads.add(base + D, dpre.sum_dim(1));
        ds.matmul(p[base + V].clone().swap_dims(1, 2))
    }
}

impl RecurrentModel for RevOde {
    fn hidden(&self) -> usize {
        self.hidden
    }

    fn param_names(&self) -> &'static [&'static str] {
        &["u_f", "v_f", "w_f", "d_f", "u_g", "v_g", "w_g", "d_g", "w_o", "b_o", "rank_mask"]
    }

    fn param_shapes(&self) -> Vec<[usize; 2]> {
        let (i, h, o, r, hh) = (self.input, self.hidden, self.output, self.rank_max, self.half());
        vec![[r, hh], [hh, r], [i, hh], [1, hh], [r, hh], [hh, r], [i, hh], [1, hh], [h, o], [1, o], [r, 1]]
    }

    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>> {
        // Every parameter ~ U(-1/sqrt(H), 1/sqrt(H)), drawn in `param_shapes` order at r_max
        // columns whatever r0 is (so r0 changes no other number); then U's columns past r0
        // are set to 0 (spec §7) and the mask marks the first r0.
        let bound = 1.0 / (self.hidden as f32).sqrt();
        let shapes = self.param_shapes();
        let mut out: Vec<Vec<f32>> =
            shapes[..MASK].iter().map(|[a, b]| (0..a * b).map(|_| rng.random_range(-bound..bound)).collect()).collect();
        for u in [U_F, U_G] {
            out[u][self.rank0 * self.half()..].iter_mut().for_each(|v| *v = 0.0);
        }
        out.push((0..self.rank_max).map(|j| if j < self.rank0 { 1.0 } else { 0.0 }).collect());
        out
    }

    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        super::evals::forward(h.dims()[0]);
        let hh = self.half();
        let (a, b) = (h.clone().narrow(2, 0, hh), h.narrow(2, hh, hh));
        let a2 = a + self.coupling(p, U_F, b.clone(), x.clone()).th.mul_scalar(STEP);
        let b2 = b + self.coupling(p, U_G, a2.clone(), x).th.mul_scalar(STEP);
        Tensor::cat(vec![a2, b2], 2)
    }

    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        // (x + h W_o) + b_o: the residual sum in the order the regression always used, so its
        // numbers round as before.
        let hw = h.matmul(p[W_O].clone());
        if self.residual { x + hw + p[B_O].clone() } else { hw + p[B_O].clone() }
    }

    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, _iters: usize) -> Tensor<3> {
        // The algebraic inverse: exact up to float rounding, so no iterations.
        super::evals::reversal(h.dims()[0]);
        let hh = self.half();
        let (a2, b2) = (h.clone().narrow(2, 0, hh), h.narrow(2, hh, hh));
        let b = b2 - self.coupling(p, U_G, a2.clone(), x.clone()).th.mul_scalar(STEP);
        let a = a2 - self.coupling(p, U_F, b.clone(), x).th.mul_scalar(STEP);
        Tensor::cat(vec![a, b], 2)
    }

    fn reversal_evals(&self, _iters: usize) -> usize {
        1 // the algebraic inverse
    }

    fn cell_cost(&self) -> super::CellCost {
        // `rdbench perf`'s cell-cost table: an inverse costs about a step, a VJP 2.4 (docs/PERF.md,
        // "Work units").
        super::CellCost { forward: 10, reversal: 10, vjp: 24 }
    }

    fn step_vjp(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3> {
        let VjpStep { h_prev, x, loss, dh } = s;
        super::evals::vjp(h_prev.dims()[0]);
        let hh = self.half();
        let (a, b) = (h_prev.clone().narrow(2, 0, hh), h_prev.narrow(2, hh, hh));
        let cf = self.coupling(p, U_F, b.clone(), x.clone());
        let a2 = a + cf.th.clone().mul_scalar(STEP);
        let cg = self.coupling(p, U_G, a2.clone(), x.clone());
        let b2 = b.clone() + cg.th.clone().mul_scalar(STEP);
        let h_new = Tensor::cat(vec![a2.clone(), b2], 2);

        let dh_new = super::readout_vjp(self, p, (h_new, x.clone()), loss, dh, grads, [W_O, B_O]);
        let (da2, db2) = (dh_new.clone().narrow(2, 0, hh), dh_new.narrow(2, hh, hh));

        // b' = b + G(a'): b passes db' through, a' gets G's input gradient.
        let da2 = da2 + self.coupling_vjp(p, U_G, (a2, x.clone(), cg), db2.clone(), grads);
        // a' = a + F(b): a passes da' through, b gets F's input gradient.
        let db = db2 + self.coupling_vjp(p, U_F, (b, x, cf), da2.clone(), grads);
        Tensor::cat(vec![da2, db], 2)
    }

    #[cfg(feature = "cube")]
    fn sequence_kernels(&self, device: &burn::tensor::Device) -> Option<&dyn super::SequenceKernels> {
        self.on_whole_kernels(device).then_some(self as &dyn super::SequenceKernels)
    }

    fn rank_limits(&self) -> Option<(usize, usize)> {
        Some((self.rank0, self.rank_max))
    }

    fn set_rank(&self, p: &mut [Tensor<3>], run: usize, rank: usize) {
        let device = p[MASK].device();
        let row: Vec<f32> = (0..self.rank_max).map(|j| if j < rank { 1.0 } else { 0.0 }).collect();
        let row = Tensor::<3>::from_data(TensorData::new(row, [1, self.rank_max, 1]), &device);
        p[MASK] = p[MASK].clone().slice_assign([run..run + 1, 0..self.rank_max, 0..1], row);
    }
}

/// rev_ode_small's whole-sequence kernels (`cube_rev_ode`): a rebuilt state is one exact
/// inverse step, whatever `iters`.
#[cfg(feature = "cube")]
impl super::SequenceKernels for RevOde {
    fn pass(&self, pk: Tensor<3>, seq: super::Sequence, ks: &[usize], slots: usize, _iters: usize) -> Tensor<3> {
        let loss = (seq.task, seq.scale);
        super::cube_rev_ode::rev_ode_sequence_pass(
            pk,
            (seq.x, seq.y),
            ks,
            slots,
            self.kernel_shape(),
            loss,
            self.part_rows,
        )
    }

    fn plan(&self, pk: Tensor<3>, seq: super::Sequence, plans: &[Vec<[u32; 4]>], slots: usize) -> Tensor<3> {
        let loss = (seq.task, seq.scale);
        super::cube_rev_ode::rev_ode_plan_pass(
            pk,
            (seq.x, seq.y),
            plans,
            slots,
            self.kernel_shape(),
            loss,
            self.part_rows,
        )
    }

    fn states(&self, pk: Tensor<3>, x: Tensor<4>) -> Tensor<3> {
        super::cube_rev_ode::rev_ode_states(pk, x, self.kernel_shape(), self.output)
    }

    fn chained_defect(&self, pk: Tensor<3>, states: Tensor<3>, x: Tensor<4>, k: usize, _iters: usize) -> Tensor<2> {
        super::cube_rev_ode::rev_ode_chained_defect(pk, states, x, k, self.rank_max, self.output)
    }
}
