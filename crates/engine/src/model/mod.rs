//! Models: recurrent cells evaluated for a whole population of runs at once.
//!
//! Every parameter tensor has a leading run dimension `R`; hidden states are
//! `[R, B, H]`, inputs and targets of one step `[R, B, F]`. A model is a small
//! trait so that adding one (spec §7) touches one file, a line in `BUILDERS` and its entry in
//! the burn-free registry `rdbench_core::models::MODELS` (the config check and the page list it).

#[cfg(feature = "cube")]
pub mod cube_kernels;
#[cfg(feature = "cube")]
pub mod cube_rev_ode;
#[cfg(feature = "cube")]
pub mod cube_sequence;
pub mod evals;
mod fast_math;
mod gru;
pub mod gru_params;
pub mod kernels;
pub mod loss;
pub mod packed_rows;
pub(crate) mod rev_gru;
mod rev_gru_kernels;
mod rev_ode;
mod sequence_kernels;
pub mod simd;
mod small_mm;

pub use gru::Gru;
pub use loss::{StepLoss, squared_error};
pub use rev_gru::RevGru;
pub use rev_ode::RevOde;
pub use sequence_kernels::SequenceKernels;

use burn::tensor::Tensor;
use rand_chacha::ChaCha8Rng;
use rdbench_core::context::BenchContext;
use rdbench_core::models::MODELS;
use rdbench_core::track::Task;

/// Sizes a model is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelShape {
    /// Input features.
    pub input: usize,
    /// Hidden units H.
    pub hidden: usize,
    /// Readout features (per step, or classes).
    pub output: usize,
    /// Starting rank r0 (models with a rank, spec §7).
    pub rank0: usize,
    /// Largest rank r_max.
    pub rank_max: usize,
    /// What the readout is for: a regression's next-step prediction or a classification's
    /// logits (rev_ode_small's readout is residual only for the former).
    pub task: Task,
    /// Forgetting cap in bits per unit per step (rev_gru).
    pub forget_bits: usize,
}

/// Builds a model for a shape, or says why that shape does not fit it.
type Build = fn(&ModelShape) -> Result<Box<dyn RecurrentModel>, String>;

/// How each model of the registry (`rdbench_core::models::MODELS`) is built, by name.
const BUILDERS: &[(&str, Build)] = &[
    ("rnn_small", |s| Ok(Box::new(Gru::new(s.input, s.hidden, s.output).for_task(s.task)))),
    ("rev_ode_small", |s| Ok(Box::new(RevOde::new(s)?))),
    ("rev_gru", |s| Ok(Box::new(RevGru::new(s)?))),
];

/// Parameters of a population: one `[R, rows, cols]` tensor per parameter.
pub type Params = Vec<Tensor<3>>;

/// The sizes a resolved bench builds its model for.
pub fn shape_of(bench: &BenchContext) -> ModelShape {
    ModelShape {
        input: bench.track.input_dim(),
        hidden: bench.cfg.hidden_size,
        output: bench.track.output_dim(),
        rank0: bench.cfg.rank_r0,
        rank_max: bench.cfg.rank_max,
        task: bench.task,
        forget_bits: bench.cfg.forget_bits,
    }
}

/// A resolved bench's model.
pub fn build(bench: &BenchContext) -> Result<Box<dyn RecurrentModel>, crate::error::EngineError> {
    by_name(&bench.cfg.model, &shape_of(bench)).map_err(|e| rdbench_core::config::ConfigError::new("model", e).into())
}

/// Work units of one trajectory's cell evaluation of each kind on a model: their relative
/// cost, measured (`rdbench perf`'s cell-cost table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellCost {
    /// A forward step h_{t-1} -> h_t.
    pub forward: u64,
    /// One reversal evaluation (a fixed-point iteration, or an algebraic inverse).
    pub reversal: u64,
    /// A one-step VJP (it re-runs its step inside).
    pub vjp: u64,
}

/// A recurrent cell with a readout, its reversal and its one-step vector-Jacobian product.
pub trait RecurrentModel: Send + Sync {
    /// Hidden size H.
    fn hidden(&self) -> usize;
    /// Parameter names, in the order of [`Params`].
    fn param_names(&self) -> &'static [&'static str];
    /// Per-run shape `[rows, cols]` of each parameter.
    fn param_shapes(&self) -> Vec<[usize; 2]>;
    /// Draw one run's initial parameters (row-major, in `param_shapes` order).
    fn init_run(&self, rng: &mut ChaCha8Rng) -> Vec<Vec<f32>>;
    /// h_t from h_{t-1} `[R, B, H]` and x_t `[R, B, F]`.
    fn step(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3>;
    /// Prediction p_t `[R, B, F_out]` from h_t and x_t.
    fn readout(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>) -> Tensor<3>;
    /// Reconstruct h_{t-1} from h_t and x_t without using h_{t-1} (spec §5).
    fn reverse(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, iters: usize) -> Tensor<3>;
    /// `loss` plus one step's unweighted term of the training loss (per run, `[R, 1, 1]`: the
    /// sum over rows of `step`'s loss at the readout of h_t); `loss` itself at a step without one.
    fn add_loss(&self, p: &[Tensor<3>], h: Tensor<3>, x: Tensor<3>, step: &StepLoss, loss: Tensor<3>) -> Tensor<3> {
        if matches!(step, StepLoss::None) {
            return loss;
        }
        loss + step.sum(self.readout(p, h, x)).expect("a step with a loss")
    }
    /// What a backward pass carries through [`step_vjp`](Self::step_vjp), starting at a zero
    /// gradient: one zero tensor per parameter, unless the model keeps another layout on this
    /// device (the GRU on a GPU: [`Grads::Packed`]).
    fn grad_zeros(&self, p: &[Tensor<3>]) -> Grads {
        Grads::PerParam(zeros_like_each(p))
    }
    /// The parameter gradients (in [`Params`] order) a pass's accumulator holds at its end,
    /// and the pass's summed loss `[R, 1, 1]`: `loss`, what [`add_loss`](Self::add_loss)
    /// summed in the forward pass, unless the backward pass summed it itself (the packed
    /// layout).
    fn grads_of(&self, acc: Grads, loss: Tensor<3>) -> (Gradient, Tensor<3>) {
        match acc {
            Grads::PerParam(g) => (Gradient::per_param(g), loss),
            Grads::Packed { .. } => unreachable!("only a model that packs its gradient makes a packed one"),
        }
    }
    /// Re-run step `s` from its `h_prev` to h_t', add to `grads` the parameter gradient of
    /// `s.loss` (weighted, at the readout of h_t') `+ s.dh . h_t'`, and return its gradient with
    /// respect to `h_prev`. `grads` is an accumulator from [`grad_zeros`](Self::grad_zeros).
    fn step_vjp(&self, p: &[Tensor<3>], s: VjpStep, grads: &mut Grads) -> Tensor<3>;
    /// The model's whole-sequence kernels on `device`, if it has them there (the GRU and
    /// rev_ode_small on a GPU, every loss); the `whole_*` methods run through them.
    fn sequence_kernels(&self, _device: &burn::tensor::Device) -> Option<&dyn SequenceKernels> {
        None
    }
    /// A whole training pass of the reversal schedule in a few launches, where the model has
    /// [`sequence_kernels`](Self::sequence_kernels) on this device: run i of the pass keeps
    /// every `ks[i]`-th state (every k 1: dense BPTT) and rebuilds the others by `iters`
    /// reversal iterations; `slots` is the most states a run keeps. `ks` may list several
    /// passes of the population side by side (a multiple of `p`'s R runs): run i takes run
    /// i mod R's parameters and data, and the result has a row per run of `ks`. Returns what
    /// [`grads_of`](Self::grads_of) does (the gradients and the summed, unweighted loss
    /// `[R, 1, 1]`), counting the evaluations it asks for; None where the model has no such
    /// kernels, and the schedules take the pass step by step.
    fn whole_pass(
        &self,
        p: &[Tensor<3>],
        seq: Sequence,
        ks: &[usize],
        slots: usize,
        iters: usize,
    ) -> Option<(Gradient, Tensor<3>)> {
        let kernels = self.sequence_kernels(&p[0].device())?;
        Some(sequence_kernels::pass(
            kernels,
            self.param_shapes(),
            self.reversal_evals(iters),
            (p, seq),
            ks,
            slots,
            iters,
        ))
    }
    /// Recomputing schedules' whole passes, each plan compiled to steps
    /// (`schedule::plan::Compiled`; `slots` snapshot slots, the most any plan needs), every
    /// run of the population through each plan (run i R + q of the result: plan i, run q), in
    /// a few launches where the model has [`sequence_kernels`](Self::sequence_kernels) on
    /// this device; returns and counts as [`whole_pass`](Self::whole_pass). None elsewhere:
    /// the executor steps.
    fn whole_plan(
        &self,
        p: &[Tensor<3>],
        seq: Sequence,
        plans: &[Vec<[u32; 4]>],
        slots: usize,
    ) -> Option<(Gradient, Tensor<3>)> {
        let kernels = self.sequence_kernels(&p[0].device())?;
        Some(sequence_kernels::plan(kernels, self.param_shapes(), (p, seq), plans, slots))
    }
    /// Every state h_0..h_T of a forward pass over inputs `x` `[T, R, B, F]`, as one
    /// `[R, (T + 1) * B, H]` tensor (time-major per run), in a few launches where the model
    /// has [`sequence_kernels`](Self::sequence_kernels) on this device; None elsewhere (the
    /// probe then steps).
    fn whole_states(&self, p: &[Tensor<3>], x: &Tensor<4>) -> Option<Tensor<3>> {
        let kernels = self.sequence_kernels(&p[0].device())?;
        Some(sequence_kernels::states(kernels, p, x))
    }
    /// Each run's chained defect at interval `k` (spec §5), `[R, 1]`, from `states`
    /// ([`whole_states`](Self::whole_states)' layout) and inputs `x`, in a few launches where
    /// the model has [`sequence_kernels`](Self::sequence_kernels) on this device; None
    /// elsewhere (the probe then walks a reversal pass and observes its chains).
    fn whole_chained_defect(
        &self,
        p: &[Tensor<3>],
        states: &Tensor<3>,
        x: &Tensor<4>,
        k: usize,
        iters: usize,
    ) -> Option<Tensor<2>> {
        let kernels = self.sequence_kernels(&p[0].device())?;
        Some(sequence_kernels::chained_defect(kernels, self.reversal_evals(iters), (p, states, x), k, iters))
    }
    /// Bits per unit per step of the information buffer that makes the model's reversal
    /// exact (rev_gru: its forgetting cap), or None for a model whose reversal needs none.
    /// A model with a buffer implements [`step_forgetting`](Self::step_forgetting) and
    /// [`reverse_with`](Self::reverse_with), and the reversal schedules keep its digits in an
    /// [`InfoBuffer`](crate::schedule::info_buffer::InfoBuffer).
    fn buffer_bits(&self) -> Option<u32> {
        None
    }
    /// h_t and the digits `[R, B, H]` step t forgot (each below 2^buffer_bits).
    fn step_forgetting(&self, _p: &[Tensor<3>], _h: Tensor<3>, _x: Tensor<3>) -> (Tensor<3>, Tensor<3>) {
        unreachable!("only a model with an information buffer forgets digits")
    }
    /// h_{t-1} rebuilt exactly from h_t, x_t and the digits step t forgot.
    fn reverse_with(&self, _p: &[Tensor<3>], _h: Tensor<3>, _x: Tensor<3>, _digits: Tensor<3>) -> Tensor<3> {
        unreachable!("only a model with an information buffer reverses with digits")
    }
    /// Reversal evaluations one rebuilt state costs at `iters` fixed-point iterations: the
    /// iterations themselves, unless the model inverts its step exactly (then one).
    fn reversal_evals(&self, iters: usize) -> usize {
        iters
    }
    /// What each kind of cell evaluation costs on this model, in work units
    /// (`crate::work`).
    fn cell_cost(&self) -> CellCost;
    /// `(r0, r_max)` for a model whose low-rank maps grow by enrichment (spec §7); None for
    /// a model without a rank (the rank knobs then change nothing).
    fn rank_limits(&self) -> Option<(usize, usize)> {
        None
    }
    /// Give run `run` rank `rank` (only called when `rank_limits` is Some). The function
    /// must not change at that moment: the new columns enter at zero.
    fn set_rank(&self, _p: &mut [Tensor<3>], _run: usize, _rank: usize) {}
}

/// One step of a backward pass: what [`RecurrentModel::step_vjp`] differentiates.
pub struct VjpStep {
    /// h_{t-1} `[R, B, H]` (stored or rebuilt).
    pub h_prev: Tensor<3>,
    /// x_t `[R, B, F]`.
    pub x: Tensor<3>,
    /// The step's loss term (its target and weight), or none.
    pub loss: StepLoss,
    /// The gradient flowing into h_t from the later steps.
    pub dh: Tensor<3>,
}

/// A pass's parameter gradients: one tensor per parameter (in [`Params`] order), or, from
/// the GRU's GPU kernels, the packed layout they accumulate, split per parameter only where
/// the tensors are read (a fused optimizer step takes the packed layout as it is: splitting
/// and packing again cost a dispatch per parameter each).
pub struct Gradient {
    split: std::cell::OnceCell<Vec<Tensor<3>>>,
    packed: std::cell::OnceCell<Packed>,
    /// For one of several passes run as one: the whole pass's packed gradient and this
    /// pass's runs in it (a row range), narrowed only where read.
    part: Option<(std::sync::Arc<Packed>, std::ops::Range<usize>)>,
}

/// Where a packed gradient's rows are: `grad`'s rows `rows`, and, for a part of a pass run
/// with others, a key shared by every part of that pass (parts side by side can be read
/// as one tensor).
pub struct PackedRows {
    /// The packed gradient holding the rows, `[R', 1, P + 1]`.
    pub grad: Tensor<3>,
    /// The rows.
    pub rows: std::ops::Range<usize>,
    /// Shared by the parts of one pass.
    pub key: Option<usize>,
}

/// The GPU kernels' layout of a gradient (`cube_kernels::PackedLayout`: every parameter's
/// values of a run in one row, in [`Params`] order, each row-major).
pub struct Packed {
    /// `[R, 1, P + 1]`: the gradient, then the pass's summed squared error.
    pub grad: Tensor<3>,
    /// `[R, 1, P]`: the parameters the pass differentiated, packed (a row per run of the
    /// population: fewer than the gradient's where a pass ran the population several times).
    pub params: Tensor<3>,
    /// Each parameter's per-run `[rows, cols]`.
    pub shapes: Vec<[usize; 2]>,
}

impl Gradient {
    /// One tensor per parameter.
    pub fn per_param(g: Vec<Tensor<3>>) -> Gradient {
        Gradient { split: std::cell::OnceCell::from(g), packed: std::cell::OnceCell::new(), part: None }
    }

    /// A packed gradient.
    pub fn packed(p: Packed) -> Gradient {
        Gradient { split: std::cell::OnceCell::new(), packed: std::cell::OnceCell::from(p), part: None }
    }

    /// Rows `rows` of a pass's packed gradient `whole`: one of several passes run as one.
    pub fn rows_of(whole: std::sync::Arc<Packed>, rows: std::ops::Range<usize>) -> Gradient {
        Gradient { split: std::cell::OnceCell::new(), packed: std::cell::OnceCell::new(), part: Some((whole, rows)) }
    }

    /// The packed layout, if the pass made one; else the tensors per parameter.
    pub fn into_packed(self) -> Result<Packed, Vec<Tensor<3>>> {
        self.as_packed();
        match self.packed.into_inner() {
            Some(p) => Ok(p),
            None => Err(self.split.into_inner().expect("a gradient per parameter")),
        }
    }

    /// The packed layout, if the pass made one (a part's rows narrowed out here).
    pub fn as_packed(&self) -> Option<&Packed> {
        let (whole, rows) = match &self.part {
            None => return self.packed.get(),
            Some(part) => part,
        };
        Some(self.packed.get_or_init(|| {
            let narrow = |t: &Tensor<3>| t.clone().narrow(0, rows.start, rows.len());
            // A pass of the population several times over packed each run's parameters once.
            let params = if whole.params.dims()[0] == whole.grad.dims()[0] {
                narrow(&whole.params)
            } else {
                whole.params.clone()
            };
            Packed { grad: narrow(&whole.grad), params, shapes: whole.shapes.clone() }
        }))
    }

    /// Where the packed gradient's rows are, without narrowing a part out; None for a
    /// gradient per parameter.
    pub fn packed_rows(&self) -> Option<PackedRows> {
        match &self.part {
            Some((whole, rows)) => Some(PackedRows {
                grad: whole.grad.clone(),
                rows: rows.clone(),
                key: Some(std::sync::Arc::as_ptr(whole) as usize),
            }),
            None => {
                self.packed.get().map(|p| PackedRows { grad: p.grad.clone(), rows: 0..p.grad.dims()[0], key: None })
            }
        }
    }

    /// One tensor per parameter, `[R, rows, cols]`.
    pub fn into_vec(mut self) -> Vec<Tensor<3>> {
        self.split();
        self.split.take().expect("split above")
    }

    fn split(&self) -> &Vec<Tensor<3>> {
        self.split.get_or_init(|| {
            let p = self.as_packed().expect("a gradient is split or packed");
            let r = p.grad.dims()[0];
            let mut at = 0;
            p.shapes
                .iter()
                .map(|&[a, b]| {
                    let t = p.grad.clone().narrow(2, at, a * b).reshape([r, a, b]);
                    at += a * b;
                    t
                })
                .collect()
        })
    }
}

impl std::ops::Deref for Gradient {
    type Target = Vec<Tensor<3>>;
    fn deref(&self) -> &Vec<Tensor<3>> {
        self.split()
    }
}

impl FromIterator<Tensor<3>> for Gradient {
    fn from_iter<I: IntoIterator<Item = Tensor<3>>>(it: I) -> Self {
        Gradient::per_param(it.into_iter().collect())
    }
}

impl<'a> IntoIterator for &'a Gradient {
    type Item = &'a Tensor<3>;
    type IntoIter = std::slice::Iter<'a, Tensor<3>>;
    fn into_iter(self) -> Self::IntoIter {
        self.split().iter()
    }
}

impl IntoIterator for Gradient {
    type Item = Tensor<3>;
    type IntoIter = std::vec::IntoIter<Tensor<3>>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

/// A minibatch whole, for [`RecurrentModel::whole_pass`].
pub struct Sequence {
    /// Inputs `[T, R, B, F]`.
    pub x: Tensor<4>,
    /// Targets `[S, R, B, O]` (S = T for a regression).
    pub y: Tensor<4>,
    /// What the targets are.
    pub task: Task,
    /// The loss's weight (`Batch::loss_scale`).
    pub scale: f32,
}

/// A backward pass's gradient, in the layout the model keeps on its device.
#[allow(clippy::large_enum_variant)] // one per backward pass
pub enum Grads {
    /// One tensor per parameter, in [`Params`] order.
    PerParam(Vec<Tensor<3>>),
    /// The GRU's layout on a GPU (`cube_kernels`, regression only): the gradient with the
    /// pass's summed squared error in one `[R, 1, P + 1]` tensor, and the parameters packed
    /// once per pass, so that each VJP kernel binds one buffer for each.
    Packed {
        /// `[R, 1, P + 1]`: the packed gradient, then the summed squared error.
        grad: Tensor<3>,
        /// `[R, 1, P]`: the packed parameters.
        params: Tensor<3>,
    },
}

impl Grads {
    /// The per-parameter gradients (every layout but a GPU kernel's own).
    pub fn per_param(&mut self) -> &mut [Tensor<3>] {
        match self {
            Grads::PerParam(g) => g,
            Grads::Packed { .. } => unreachable!("the packed layout is only touched by the GPU kernels"),
        }
    }

    /// Add `delta` to parameter `i`'s gradient.
    pub fn add(&mut self, i: usize, delta: Tensor<3>) {
        let g = &mut self.per_param()[i];
        *g = g.clone() + delta;
    }
}

/// `dh` plus the gradient of step `loss` at `model`'s readout of `h_new` (linear in h_t, its
/// weight and bias the parameters at `w_o` and `b_o`), whose gradients go to `grads`; x takes
/// no gradient (it is data).
pub(crate) fn readout_vjp(
    model: &dyn RecurrentModel,
    p: &[Tensor<3>],
    (h_new, x): (Tensor<3>, Tensor<3>),
    loss: StepLoss,
    dh: Tensor<3>,
    grads: &mut Grads,
    [w_o, b_o]: [usize; 2],
) -> Tensor<3> {
    if let StepLoss::None = loss {
        return dh;
    }
    let dp = loss.grad(model.readout(p, h_new.clone(), x)).expect("a step with a loss");
    grads.add(w_o, h_new.swap_dims(1, 2).matmul(dp.clone()));
    grads.add(b_o, dp.clone().sum_dim(1));
    dh + dp.matmul(p[w_o].clone().swap_dims(1, 2))
}

/// One zero tensor shaped like each of `p` (a gradient in the parameters' own layout).
pub fn zeros_like_each(p: &[Tensor<3>]) -> Vec<Tensor<3>> {
    p.iter().map(|t| t.zeros_like()).collect()
}

/// Build a model by its config name; an unknown name or a shape it cannot take is an error.
pub fn by_name(name: &str, shape: &ModelShape) -> Result<Box<dyn RecurrentModel>, String> {
    let known = || MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ");
    let build =
        BUILDERS.iter().find(|b| b.0 == name).ok_or_else(|| format!("unknown model {name:?} (known: {})", known()))?;
    (build.1)(shape)
}

#[cfg(test)]
mod tests {
    /// Every model of the registry can be built, and nothing else.
    #[test]
    fn every_registered_model_has_a_builder() {
        let names: Vec<&str> = super::MODELS.iter().map(|m| m.name).collect();
        let built: Vec<&str> = super::BUILDERS.iter().map(|b| b.0).collect();
        assert_eq!(names, built);
    }
}
