//! Model `rnn_small`: a GRU with PyTorch's gate conventions and a linear readout (spec §2).
//!
//! Weights are stored transposed relative to torch (`x @ w_ih`, `h @ w_hh`) with the gate
//! columns in torch's order r | z | n.

#[cfg(feature = "cube")]
use super::cube_kernels;
use super::gru_params::GruParam;
use super::{Gradient, Grads, RecurrentModel, StepLoss, VjpStep, kernels};
use burn::tensor::{Tensor, activation::sigmoid};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rdbench_core::track::Task;

/// GRU cell plus readout `p_t = h_t @ w_o + b_o`.
#[derive(Clone, Debug)]
pub struct Gru {
    input: usize,
    hidden: usize,
    output: usize,
    /// Whether a pass on a GPU takes the fused cubecl kernels; off, it takes the tensor ops
    /// every backend has (the reference `fused_check` measures the kernels against).
    gpu_kernels: bool,
    /// Whether, with the GPU kernels, a whole pass (training pass, every state, chained
    /// defects) takes the whole-sequence kernels; off, it steps through the per-step kernels
    /// (the reference `fused_check` measures the whole-sequence kernels against).
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    whole_kernels: bool,
    /// Rows per backward launch of the whole-sequence kernels (None: as many as their
    /// per-row sums' budget allows; set to test a pass in parts at small sizes).
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    part_rows: Option<usize>,
    /// The loss its readout trains on: the GPU's fused VJP takes a regression's only.
    #[cfg_attr(not(feature = "cube"), allow(dead_code))]
    task: Task,
}

/// The parameters by name, in the model's order (`param_names`).
struct Named<'a> {
    w_ih: &'a Tensor<3>,
    w_hh: &'a Tensor<3>,
    b_ih: &'a Tensor<3>,
    b_hh: &'a Tensor<3>,
    w_o: &'a Tensor<3>,
    b_o: &'a Tensor<3>,
}

impl<'a> Named<'a> {
    fn of(p: &'a [Tensor<3>]) -> Self {
        assert_eq!(p.len(), GruParam::ALL.len(), "a GRU has six parameters");
        let at = |q: GruParam| &p[q.index()];
        Named {
            w_ih: at(GruParam::WIh),
            w_hh: at(GruParam::WHh),
            b_ih: at(GruParam::BIh),
            b_hh: at(GruParam::BHh),
            w_o: at(GruParam::WO),
            b_o: at(GruParam::BO),
        }
    }

    /// The four the cell's kernels take.
    fn cell(&self) -> [&'a Tensor<3>; 4] {
        [self.w_ih, self.w_hh, self.b_ih, self.b_hh]
    }
}

/// Where each parameter's gradient sits in a per-parameter [`Grads`].
const W_IH: usize = GruParam::WIh.index();
const W_HH: usize = GruParam::WHh.index();
const B_IH: usize = GruParam::BIh.index();
const B_HH: usize = GruParam::BHh.index();
const W_O: usize = GruParam::WO.index();
const B_O: usize = GruParam::BO.index();

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
        Gru { input, hidden, output, gpu_kernels: true, whole_kernels: true, part_rows: None, task: Task::Regression }
    }

    /// The same GRU trained on `task`'s loss.
    pub fn for_task(self, task: Task) -> Self {
        Gru { task, ..self }
    }

    /// The same GRU without the fused GPU kernels (tensor ops on every device but the CPU,
    /// whose fused kernels stay).
    pub fn without_gpu_kernels(self) -> Self {
        Gru { gpu_kernels: false, ..self }
    }

    /// The same GRU stepping through its per-step GPU kernels where it would take the
    /// whole-sequence ones.
    pub fn without_whole_kernels(self) -> Self {
        Gru { whole_kernels: false, ..self }
    }

    /// The same GRU with its whole-sequence backward passes in parts of `rows` rows.
    pub fn with_part_rows(self, rows: usize) -> Self {
        Gru { part_rows: Some(rows), ..self }
    }

    /// Whether a whole pass on `device` takes the whole-sequence GPU kernels.
    #[cfg(feature = "cube")]
    fn on_whole_kernels(&self, device: &burn::tensor::Device) -> bool {
        self.whole_kernels && self.on_gpu_kernels(device)
    }

    /// Whether a pass on `device` takes the fused GPU kernels.
    fn on_gpu_kernels(&self, device: &burn::tensor::Device) -> bool {
        self.gpu_kernels && kernels::cube_on(device)
    }

    /// Whether a backward pass on `device` takes the fused GPU VJP: its kernel computes a
    /// regression's squared error only, so a classification's VJP takes the tensor ops there
    /// (its step and reversal stay fused; docs/PERF.md).
    #[cfg(feature = "cube")]
    fn on_gpu_vjp(&self, device: &burn::tensor::Device) -> bool {
        self.task == Task::Regression && self.on_gpu_kernels(device)
    }

    /// Whether `h`'s device runs a fused step and reversal (CPU or GPU).
    fn fused(&self, h: &Tensor<3>) -> bool {
        let device = h.device();
        kernels::fused_on(&device) || self.on_gpu_kernels(&device)
    }

    fn input_part(&self, p: &[Tensor<3>], x: Tensor<3>) -> Tensor<3> {
        let p = Named::of(p);
        x.matmul(p.w_ih.clone()) + p.b_ih.clone()
    }

    /// The step in tensor ops (every backend; the reference for the fused kernel).
    pub fn step_unfused(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        super::evals::forward(h.dims()[0]);
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
            super::evals::reversal(h.dims()[0]);
            let Gates { z, n, .. } = self.gates(p, gi.clone(), g);
            let one_minus_z = z.clone().neg().add_scalar(1.0);
            g = ((h.clone() - one_minus_z * n) / z.clamp_min(0.05)).clamp(-1.0, 1.0);
        }
        g
    }

    fn gates(&self, p: &[Tensor<3>], gi: Tensor<3>, h: Tensor<3>) -> Gates {
        let hh = self.hidden;
        let p = Named::of(p);
        let gh = h.matmul(p.w_hh.clone()) + p.b_hh.clone();
        let r = sigmoid(gi.clone().narrow(2, 0, hh) + gh.clone().narrow(2, 0, hh));
        let z = sigmoid(gi.clone().narrow(2, hh, hh) + gh.clone().narrow(2, hh, hh));
        let hn = gh.narrow(2, 2 * hh, hh);
        let n = (gi.narrow(2, 2 * hh, hh) + r.clone() * hn.clone()).tanh();
        Gates { r, z, n, hn }
    }
}

impl RecurrentModel for Gru {
    fn hidden(&self) -> usize {
        self.hidden
    }

    fn param_names(&self) -> &'static [&'static str] {
        &GruParam::NAMES
    }

    fn param_shapes(&self) -> Vec<[usize; 2]> {
        GruParam::ALL.iter().map(|p| p.shape(self.input, self.hidden, self.output)).collect()
    }

    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>> {
        // Every weight and bias ~ U(-1/sqrt(H), 1/sqrt(H)), readout included (spec §2).
        let bound = 1.0 / (self.hidden as f32).sqrt();
        self.param_shapes().iter().map(|[a, b]| (0..a * b).map(|_| rng.random_range(-bound..bound)).collect()).collect()
    }

    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3> {
        if self.fused(&h) {
            return kernels::gru_step(Named::of(p).cell(), h, x);
        }
        self.step_unfused(p, h, x)
    }

    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, _x: Tensor<3>) -> Tensor<3> {
        let p = Named::of(p);
        h.matmul(p.w_o.clone()) + p.b_o.clone()
    }

    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3> {
        if self.fused(&h) {
            return kernels::gru_reverse(Named::of(p).cell(), h, x, iters);
        }
        self.reverse_unfused(p, h, x, iters)
    }

    fn cell_cost(&self) -> super::CellCost {
        // `rdbench perf`'s cell-cost table: a fixed-point iteration costs about a step, a VJP
        // 3 (docs/PERF.md, "Work units").
        super::CellCost { forward: 10, reversal: 10, vjp: 30 }
    }

    fn step_vjp(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3> {
        match grads {
            #[cfg(feature = "cube")]
            Grads::Packed { grad, params } => {
                let VjpStep { h_prev, x, loss, dh } = s;
                let StepLoss::Squared { y, scale } = loss else {
                    unreachable!("the packed layout is only made for a regression (`on_gpu_vjp`)")
                };
                let (dh_prev, g) =
                    cube_kernels::gru_step_vjp_packed(params.clone(), h_prev, x, y, dh, scale, grad.clone());
                *grad = g;
                dh_prev
            }
            _ if kernels::fused_on(&s.h_prev.device()) => kernels::gru_step_vjp(p, s, grads.per_param()),
            _ => self.step_vjp_unfused(p, s, grads),
        }
    }

    #[cfg(feature = "cube")]
    fn sequence_kernels(&self, device: &burn::tensor::Device) -> Option<&dyn super::SequenceKernels> {
        self.on_whole_kernels(device).then_some(self as &dyn super::SequenceKernels)
    }

    fn add_loss(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, step: &StepLoss, loss: Tensor<3>) -> Tensor<3> {
        #[cfg(feature = "cube")]
        if self.on_gpu_vjp(&h.device()) {
            // The GPU's VJP computes p - y at every step anyway and sums the squared error
            // into its packed gradient (see `grads_of`): no launch here.
            let _ = (h, x, step);
            return loss;
        }
        match step.sum(self.readout(p, h, x)) {
            Some(term) => loss + term,
            None => loss,
        }
    }

    fn grad_zeros(&self, p: &[Tensor<3>]) -> Grads {
        #[cfg(feature = "cube")]
        if self.on_gpu_vjp(&p[0].device()) {
            let r = p[0].dims()[0];
            let grad = Tensor::zeros([r, 1, self.packed().grad_len()], &p[0].device());
            return Grads::Packed { grad, params: cube_kernels::gru_pack(p) };
        }
        Grads::PerParam(super::zeros_like_each(p))
    }

    fn grads_of(&self, acc: Grads, loss: Tensor<3>) -> (Gradient, Tensor<3>) {
        match acc {
            Grads::PerParam(g) => (Gradient::per_param(g), loss),
            // [packed gradient | summed squared error] per run (the forward added nothing).
            #[cfg(feature = "cube")]
            Grads::Packed { grad, params } => {
                let sse = grad.clone().narrow(2, self.packed().n_params(), 1);
                (Gradient::packed(super::Packed { grad, params, shapes: self.param_shapes() }), sse)
            }
            #[cfg(not(feature = "cube"))]
            Grads::Packed { .. } => unreachable!("a build without the GPU kernels packs nothing"),
        }
    }
}

impl Gru {
    /// The vector-Jacobian product in tensor ops (every backend; the reference for the fused
    /// kernel). Arguments as `RecurrentModel::step_vjp`.
    pub fn step_vjp_unfused(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3> {
        let VjpStep { h_prev, x, loss, dh } = s;
        super::evals::vjp(h_prev.dims()[0]);
        let Gates { r, z, n, hn } = self.gates(p, self.input_part(p, x.clone()), h_prev.clone());
        let p = Named::of(p);
        let h_new = n.clone() + z.clone() * (h_prev.clone() - n.clone());

        // The step's loss term at p = h' w_o + b_o (none: h' only passes dh on).
        let dh_new = if let StepLoss::None = loss {
            dh
        } else {
            let dp = loss.grad(h_new.clone().matmul(p.w_o.clone()) + p.b_o.clone()).expect("a step with a loss");
            grads.add(W_O, h_new.clone().swap_dims(1, 2).matmul(dp.clone()));
            grads.add(B_O, dp.clone().sum_dim(1));
            dh + dp.matmul(p.w_o.clone().swap_dims(1, 2))
        };

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
        grads.add(W_IH, x.swap_dims(1, 2).matmul(dgi.clone()));
        grads.add(B_IH, dgi.sum_dim(1));
        grads.add(W_HH, h_prev.swap_dims(1, 2).matmul(dgh.clone()));
        grads.add(B_HH, dgh.clone().sum_dim(1));
        dh_prev = dh_prev + dgh.matmul(p.w_hh.clone().swap_dims(1, 2));
        dh_prev
    }
}

/// The GRU's whole-sequence kernels (`cube_sequence`).
#[cfg(feature = "cube")]
impl super::SequenceKernels for Gru {
    fn pack(&self, p: &[Tensor<3>]) -> Tensor<3> {
        cube_kernels::gru_pack(p)
    }

    fn pass(&self, pk: Tensor<3>, seq: super::Sequence, ks: &[usize], slots: usize, iters: usize) -> Tensor<3> {
        let loss = (seq.task, seq.scale);
        super::cube_sequence::gru_sequence_pass(pk, (seq.x, seq.y), ks, slots, self.hidden, loss, iters, self.part_rows)
    }

    fn plan(&self, pk: Tensor<3>, seq: super::Sequence, plans: &[Vec<[u32; 4]>], slots: usize) -> Tensor<3> {
        let loss = (seq.task, seq.scale);
        super::cube_sequence::gru_plan_pass(pk, (seq.x, seq.y), plans, slots, self.hidden, loss, self.part_rows)
    }

    fn states(&self, pk: Tensor<3>, x: Tensor<4>) -> Tensor<3> {
        super::cube_sequence::gru_states(pk, x, self.hidden, self.output)
    }

    fn chained_defect(&self, pk: Tensor<3>, states: Tensor<3>, x: Tensor<4>, k: usize, iters: usize) -> Tensor<2> {
        super::cube_sequence::gru_chained_defect(pk, states, x, (k, iters), self.output)
    }
}
