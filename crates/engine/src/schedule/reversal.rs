//! The idea's schedule (spec §5): a checkpointed backward pass that keeps only the states at
//! t = 0, k, 2k, .., T and rebuilds the others by reversing the cell.
//!
//! Each run of the population has its own interval k. The forward pass keeps, for each
//! time step, only the rows of the runs whose checkpoint it is, so the memory held is each
//! run's own checkpoint count. The backward pass walks t = T..1 one step's
//! vector-Jacobian product at a time, reverses only the rows of the runs that have no
//! checkpoint at t - 1, and frees each checkpoint once it is passed.
//!
//! A model with an information buffer (rev_gru) keeps every step's forgotten digits on the
//! way forward and pops them on the way back, so its reversal is exact; its digits are
//! packed for all runs together, so every step reverses every run, and the words the buffer
//! held count as stored states (each word is one state's size).

use super::info_buffer::InfoBuffer;
use super::{Counts, Pass};
use crate::batch::{Batch, rows};
use crate::model::evals::{self, Evals};
use crate::model::{RecurrentModel, VjpStep};
use burn::tensor::Tensor;

/// Number of stored states for interval `k` over `t` steps: ceil(T / k) + 1.
pub fn checkpoint_count(t: usize, k: usize) -> usize {
    t.div_ceil(k) + 1
}

/// Whether state `s` is a checkpoint for interval `k` over `t` steps.
pub fn is_checkpoint(s: usize, t: usize, k: usize) -> bool {
    s.is_multiple_of(k) || s == t
}

/// Rows of the runs that checkpoint one time step.
struct Stored {
    runs: Vec<usize>,
    h: Tensor<3>,
}

/// Gradients of the per-run loss with checkpoint interval `ks[r]` for run r, and what each
/// run's pass did.
pub fn checkpointed_grads(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    reversal_iters: usize,
) -> Pass {
    super::whole::pass(model, params, batch, ks, reversal_iters)
        .unwrap_or_else(|| walk(model, params, batch, ks, reversal_iters, None).0.expect("a pass with its VJPs"))
}

/// `[R, N, H]` rebuilt states `g` against the true ones `h` -> per-run mean and max of the
/// relative error ||g - h|| / (||h|| + 1e-6) (L2 over the hidden dimension), each `[R, 1]`:
/// the reversal defect (spec §5).
pub fn relative_errors(g: Tensor<3>, h: Tensor<3>) -> (Tensor<2>, Tensor<2>) {
    let err = (g - h.clone()).square().sum_dim(2).sqrt();
    let norm = h.square().sum_dim(2).sqrt().add_scalar(1e-6);
    let rel = (err / norm).squeeze_dim::<2>(2); // [R, N]
    (rel.clone().mean_dim(1), rel.max_dim(1))
}

/// Reversal at one interval `k` for every run, and its chained defect (spec §5): the mean
/// relative error, against `truth` (h_0..h_T of a forward pass), of the states h_{c-k+1} its
/// chains rebuild from the checkpoints c = k, 2k, .., floor(T / k) k after k - 1 reversals,
/// `[R, 1]`. With `gradient` the pass takes its VJPs too and is returned; without, it only
/// rebuilds (the probe of a run whose frontier is not measured).
pub fn chained_defect(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    (k, reversal_iters): (usize, usize),
    truth: &[Tensor<3>],
    gradient: bool,
) -> (Option<Pass>, Tensor<2>) {
    let r = params[0].dims()[0];
    let (pass, chains) = walk(model, params, batch, &vec![k; r], reversal_iters, Some(Chains { k, truth, gradient }));
    (pass, chains.expect("chains observed"))
}

/// What [`walk`] observes of a fixed-k reversal's chains.
struct Chains<'a> {
    k: usize,
    truth: &'a [Tensor<3>],
    /// Take the VJPs too.
    gradient: bool,
}

/// The reversal pass: the gradient (unless `chains` says to only rebuild) and, when asked,
/// the chained defect of its chains.
fn walk(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    reversal_iters: usize,
    chains: Option<Chains>,
) -> (Option<Pass>, Option<Tensor<2>>) {
    let [r, _, _] = params[0].dims();
    assert_eq!(ks.len(), r, "one interval per run");
    let t_len = batch.t();
    let device = params[0].device();
    let before = evals::so_far();
    let vjps = chains.as_ref().is_none_or(|c| c.gradient);
    let runs_at = |s: usize| -> Vec<usize> { (0..r).filter(|&i| is_checkpoint(s, t_len, ks[i])).collect() };

    // Forward: only checkpoint rows survive the step that made them.
    let mut stored: Vec<Option<Stored>> = (0..=t_len).map(|_| None).collect();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut loss = Tensor::<3>::zeros([r, 1, 1], &device);
    // States held per run, counted from what is actually stored.
    let mut stored_states = vec![1usize; r];
    stored[0] = Some(Stored { runs: (0..r).collect(), h: h.clone() });
    let mut buffer = model.buffer_bits().map(InfoBuffer::new);
    for (i, x) in batch.xs().enumerate() {
        let t = i + 1;
        h = match buffer.as_mut() {
            Some(buffer) => {
                let (next, digits) = model.step_forgetting(params, h, x.clone());
                buffer.push(digits);
                next
            }
            None => model.step(params, h, x.clone()),
        };
        if vjps {
            loss = model.add_loss(params, h.clone(), x.clone(), &batch.loss_at(t), loss);
        }
        let runs = runs_at(t);
        if !runs.is_empty() {
            runs.iter().for_each(|&i| stored_states[i] += 1);
            stored[t] = Some(Stored { h: rows(&h, &runs), runs });
        }
    }
    drop(h);
    if let Some(b) = &buffer {
        stored_states.iter_mut().for_each(|s| *s += b.peak_words());
    }

    // Backward: t = T..1, h_{t-1} from a checkpoint or by one reversal of the h_t in use.
    let mut grads = vjps.then(|| model.grad_zeros(params));
    let mut dh = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut h_cur = stored[t_len].take().expect("T is always a checkpoint").h;
    let mut reversal = vec![0u64; r];
    // The chains' ends: h_{c-k+1} for the checkpoints c = k, .., floor(T / k) k.
    let mut chain_sum: Option<Tensor<2>> = None;
    let chain_end =
        |s: usize| chains.as_ref().is_some_and(|c| c.k >= 2 && s % c.k == 1 && s + c.k - 1 <= t_len / c.k * c.k);
    let mut n_chains = 0usize;
    for t in (1..=t_len).rev() {
        let x = batch.x(t - 1);
        let h_prev = match (stored[t - 1].take(), buffer.as_mut()) {
            (Some(s), None) if s.runs.len() == r => s.h,
            (Some(s), Some(b)) if s.runs.len() == r => {
                b.pop();
                s.h
            }
            (_, Some(b)) => {
                // Exact: the same state a checkpoint holds, for every run.
                let spent = evals::so_far().reversal;
                let rev = model.reverse_with(params, h_cur.clone(), x.clone(), b.pop());
                let each = (evals::so_far().reversal - spent) / r as u64;
                reversal.iter_mut().for_each(|n| *n += each);
                rev
            }
            (found, None) => {
                // Only the runs without a checkpoint here are reversed, each counted as run.
                let need: Vec<usize> = (0..r).filter(|i| found.as_ref().is_none_or(|s| !s.runs.contains(i))).collect();
                let sub: Vec<Tensor<3>> = params.iter().map(|p| rows(p, &need)).collect();
                let spent = evals::so_far().reversal;
                let rev = model.reverse(&sub, rows(&h_cur, &need), rows(&x, &need), reversal_iters);
                let each = (evals::so_far().reversal - spent) / need.len() as u64;
                need.iter().for_each(|&i| reversal[i] += each);
                match found {
                    None => rev,
                    Some(s) => merge_rows(rev, &need, &s),
                }
            }
        };
        if let Some(c) = chains.as_ref().filter(|_| chain_end(t - 1)) {
            let (err, _) = relative_errors(h_prev.clone(), c.truth[t - 1].clone());
            chain_sum = Some(chain_sum.map_or(err.clone(), |s| s + err));
            n_chains += 1;
        }
        if let Some(g) = grads.as_mut() {
            let step = VjpStep { h_prev: h_prev.clone(), x, loss: batch.loss_at(t), dh };
            dh = model.step_vjp(params, step, g);
        }
        h_cur = h_prev;
    }
    let chained = chains.map(|_| {
        chain_sum.map_or_else(|| Tensor::<2>::zeros([r, 1], &device), |s| s.div_scalar(n_chains.max(1) as f32))
    });
    let Some(grads) = grads else { return (None, chained) };
    let spent = evals::so_far() - before;
    let (grads, loss) = model.grads_of(grads, loss);
    let counts = (0..r)
        .map(|i| Counts {
            reversal_evals: reversal[i],
            ..Counts::per_run(stored_states[i], Evals { reversal: 0, ..spent }, r)
        })
        .collect();
    (Some(Pass { grads, loss: Some(loss.mul_scalar(batch.loss_scale()).reshape([r])), counts }), chained)
}

/// The population's rows for one time step: run i's from `s` where it stored a checkpoint,
/// else from `rev`, whose rows are the runs `need`.
fn merge_rows(rev: Tensor<3>, need: &[usize], s: &Stored) -> Tensor<3> {
    let r = need.len() + s.runs.len();
    let parts = (0..r)
        .map(|run| match s.runs.iter().position(|&x| x == run) {
            Some(j) => s.h.clone().narrow(0, j, 1),
            None => {
                let j = need.iter().position(|&x| x == run).expect("every run is stored or reversed");
                rev.clone().narrow(0, j, 1)
            }
        })
        .collect();
    Tensor::cat(parts, 0)
}
