//! Whole-sequence kernels: the launches a model may have on a device for a whole pass, and
//! what every such model does around them. A model lists its launches by implementing
//! [`SequenceKernels`] (the GRU: `cube_sequence`, rev_ode_small: `cube_rev_ode`, both on a
//! GPU) and names them in `RecurrentModel::sequence_kernels`; the trait's `whole_*` methods
//! then run through the functions here, which count the evaluations the kernels ask for and
//! read the packed gradient the same way for every model.

use super::{Gradient, Packed, Sequence, evals, packed_rows};
use burn::tensor::Tensor;

/// A model's whole-sequence launches on one device. Each takes the packed parameters
/// `[R, 1, P]` (one row per run of the population) and launches; none counts evaluations.
pub trait SequenceKernels {
    /// The packed parameters of `p`: the rows the optimizer wrote where they are known.
    fn pack(&self, p: &[Tensor<3>]) -> Tensor<3> {
        packed_rows::known_or_pack(p)
    }
    /// The packed gradient `[R', 1, P + 1]` (the parameters' gradient, then the summed loss)
    /// of a pass in which run i keeps every `ks[i]`-th state and rebuilds the others by
    /// reversal (`iters` iterations where the model iterates), run i reading run i mod R's
    /// parameters and data; `slots` is the most states a run keeps.
    fn pass(&self, pk: Tensor<3>, seq: Sequence, ks: &[usize], slots: usize, iters: usize) -> Tensor<3>;
    /// The packed gradient of every run through each compiled plan (run i R + q: plan i,
    /// run q), `slots` snapshot slots.
    fn plan(&self, pk: Tensor<3>, seq: Sequence, plans: &[Vec<[u32; 4]>], slots: usize) -> Tensor<3>;
    /// Every state h_0..h_T over inputs `x` `[T, R, B, F]`, `[R, (T + 1) B, H]`.
    fn states(&self, pk: Tensor<3>, x: Tensor<4>) -> Tensor<3>;
    /// Each run's chained defect at interval `k` (2 ≤ k ≤ T), `[R, 1]`, from `states`.
    fn chained_defect(&self, pk: Tensor<3>, states: Tensor<3>, x: Tensor<4>, k: usize, iters: usize) -> Tensor<2>;
}

/// The gradient and summed loss `[R', 1, 1]` of a packed gradient `grad` of the parameters
/// `pk`, each parameter `shapes` per run.
fn packed(grad: Tensor<3>, pk: Tensor<3>, shapes: Vec<[usize; 2]>) -> (Gradient, Tensor<3>) {
    let n: usize = shapes.iter().map(|[a, b]| a * b).sum();
    let loss = grad.clone().narrow(2, n, 1);
    (Gradient::packed(Packed { grad, params: pk, shapes }), loss)
}

/// `RecurrentModel::whole_pass` through `kernels`; `per_reversal` evaluations rebuild a state.
pub(super) fn pass(
    kernels: &dyn SequenceKernels,
    shapes: Vec<[usize; 2]>,
    per_reversal: usize,
    (p, seq): (&[Tensor<3>], Sequence),
    ks: &[usize],
    slots: usize,
    iters: usize,
) -> (Gradient, Tensor<3>) {
    // Every run of the pass (`ks`), each several times over where a pass repeats them.
    let r = ks.len();
    let t = seq.x.dims()[0];
    assert!(per_reversal > 0 || ks.iter().all(|&k| k == 1), "states to rebuild, and no reversal iterations");
    // One kernel runs every step, VJP and reversal: the launch counts what it asks for.
    evals::forward(r * t);
    evals::vjp(r * t);
    let rebuilt: usize = ks.iter().map(|&k| (0..t).filter(|s| s % k != 0).count()).sum();
    evals::reversal(rebuilt * per_reversal);
    let pk = kernels.pack(p);
    packed(kernels.pass(pk.clone(), seq, ks, slots, iters), pk, shapes)
}

/// `RecurrentModel::whole_plan` through `kernels`.
pub(super) fn plan(
    kernels: &dyn SequenceKernels,
    shapes: Vec<[usize; 2]>,
    (p, seq): (&[Tensor<3>], Sequence),
    plans: &[Vec<[u32; 4]>],
    slots: usize,
) -> (Gradient, Tensor<3>) {
    // Each plan runs over every run of the population, the steps it is given: count those.
    let each = p[0].dims()[0];
    let ops = |op: u32| each * plans.iter().flatten().filter(|s| s[0] == op).count();
    evals::forward(ops(1));
    evals::vjp(ops(2));
    let pk = kernels.pack(p);
    packed(kernels.plan(pk.clone(), seq, plans, slots), pk, shapes)
}

/// `RecurrentModel::whole_states` through `kernels`.
pub(super) fn states(kernels: &dyn SequenceKernels, p: &[Tensor<3>], x: &Tensor<4>) -> Tensor<3> {
    let [t, r, _, _] = x.dims();
    evals::forward(r * t);
    kernels.states(kernels.pack(p), x.clone())
}

/// `RecurrentModel::whole_chained_defect` through `kernels`; `per_reversal` evaluations
/// take a chain one step back.
pub(super) fn chained_defect(
    kernels: &dyn SequenceKernels,
    per_reversal: usize,
    (p, states, x): (&[Tensor<3>], &Tensor<3>, &Tensor<4>),
    k: usize,
    iters: usize,
) -> Tensor<2> {
    let [t, r, _, _] = x.dims();
    // No chain fits (k > T): no defect, as the stepping probe finds none.
    if k < 2 || t / k == 0 {
        return Tensor::zeros([r, 1], &p[0].device());
    }
    evals::reversal(r * (t / k) * (k - 1) * per_reversal);
    kernels.chained_defect(kernels.pack(p), states.clone(), x.clone(), k, iters)
}
