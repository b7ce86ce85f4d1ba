//! A schedule's whole pass in the model's own kernels, where it has them (the GRU and
//! rev_ode_small on a GPU): dense BPTT and reversal at each run's interval, the same gradient
//! in a few launches instead of a few per time step (`model::cube_sequence`,
//! `model::cube_rev_ode`). The counts are the step-by-step path's: what the kernels asked
//! for, per run. The recomputing schedules (fixed interval, revolve) run their plan as data
//! in one kernel (`plan_pass`). Several passes of a population run as one: the kernels take
//! run i's parameters and data from run i mod R, so nothing is copied.

use super::plan::{Action, compile};
use super::reversal::is_checkpoint;
use super::{Counts, Pass};
use crate::batch::Batch;
use crate::model::evals;
use crate::model::{Gradient, RecurrentModel};
use burn::tensor::Tensor;

/// The pass of run i keeping every `ks[i]`-th state (all 1: dense BPTT) and rebuilding the
/// others by `iters` reversal iterations, if `model` has a whole-pass kernel on this device.
/// `ks` has one interval per run of the pass: the population's R runs, or several passes of
/// them side by side (run i is run i mod R).
pub fn pass(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    iters: usize,
) -> Option<Pass> {
    // Every run of the pass: R, or a multiple where the population passes several times.
    let r = ks.len();
    let t = batch.t();
    // The states a run keeps: h_0, every k-th and h_T, as the kernel writes them.
    let kept = |k: usize| (0..=t).filter(|&s| is_checkpoint(s, t, k)).count();
    let slots = ks.iter().map(|&k| kept(k)).max()?;
    let before = evals::so_far();
    let (grads, loss) = model.whole_pass(params, batch.sequence(), ks, slots, iters)?;
    let spent = evals::so_far() - before;
    let per_reversal = model.reversal_evals(iters) as u64;
    let counts: Vec<Counts> = ks
        .iter()
        .map(|&k| Counts {
            stored_states: kept(k),
            forward_evals: spent.forward / r as u64,
            reversal_evals: (1..=t).filter(|&s| !is_checkpoint(s - 1, t, k)).count() as u64 * per_reversal,
            vjp_steps: spent.vjp / r as u64,
        })
        .collect();
    debug_assert_eq!(counts.iter().map(|c| c.reversal_evals).sum::<u64>(), spent.reversal, "reversals asked for");
    Some(Pass { grads, loss: Some(loss.mul_scalar(batch.loss_scale()).reshape([r])), counts })
}

/// A recomputing schedule's pass (`plan`, valid for `batch.t()` steps) in the model's plan
/// kernel, if it has one on this device: the dense gradient, counted as
/// [`execute`](super::plan::execute) counts it.
pub fn plan_pass(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch, plan: &[Action]) -> Option<Pass> {
    plans_at_each(model, params, batch, &[plan.to_vec()]).map(|mut p| p.remove(0))
}

/// Recomputing schedules' passes, every run of the population through each plan, as one
/// pass in which each run passes once per plan: one pass per plan, in order, each
/// counted as [`execute`](super::plan::execute) counts it. None where the model has no plan
/// kernel on this device.
pub fn plans_at_each(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    plans: &[Vec<Action>],
) -> Option<Vec<Pass>> {
    if plans.is_empty() || model.sequence_kernels(&params[0].device()).is_none() {
        return None;
    }
    let r = params[0].dims()[0];
    let compiled: Vec<_> = plans.iter().map(|p| compile(p, batch.t())).collect();
    let steps: Vec<Vec<[u32; 4]>> = compiled.iter().map(|c| c.steps.clone()).collect();
    let slots = compiled.iter().map(|c| c.slots).max().unwrap_or(0);
    let before = evals::so_far();
    let (grads, loss) = model.whole_plan(params, batch.sequence(), &steps, slots)?;
    let spent = evals::so_far() - before;
    // Each plan's runs spent what its steps asked for: the advances differ by plan.
    let loss = loss.mul_scalar(batch.loss_scale()).reshape([r * plans.len()]);
    let counts: Vec<Counts> = compiled
        .iter()
        .map(|c| Counts {
            stored_states: c.peak,
            forward_evals: c.steps.iter().filter(|s| s[0] == 1).count() as u64,
            reversal_evals: 0,
            vjp_steps: c.steps.iter().filter(|s| s[0] == 2).count() as u64,
        })
        .collect();
    debug_assert_eq!(
        (counts.iter().map(|c| c.forward_evals * r as u64).sum::<u64>(), spent.reversal),
        (spent.forward, 0),
        "the evaluations asked for"
    );
    Some(split(grads, Some(loss), counts.iter().flat_map(|&c| std::iter::repeat_n(c, r)).collect(), r, plans.len()))
}

/// A pass over the population repeated `parts` times, split into one pass per copy. A
/// part's gradient is its rows of the whole, narrowed only where read (a probe compares the
/// parts side by side without narrowing), and a part has no loss of its own: a GPU copies
/// a slice at an offset its alignment does not allow (most of them here), and nothing reads
/// those losses. A single part is the whole pass.
fn split(grads: Gradient, loss: Option<Tensor<1>>, counts: Vec<Counts>, r: usize, parts: usize) -> Vec<Pass> {
    if parts == 1 {
        return vec![Pass { grads, loss, counts }];
    }
    let Ok(packed) = grads.into_packed() else { unreachable!("the whole-pass kernels give a packed gradient") };
    let whole = std::sync::Arc::new(packed);
    (0..parts)
        .map(|i| Pass {
            grads: Gradient::rows_of(whole.clone(), i * r..(i + 1) * r),
            loss: None,
            counts: counts[i * r..(i + 1) * r].to_vec(),
        })
        .collect()
}

/// Reversal at each interval of `ks`, every run of the population at each, as one pass over
/// the population repeated once per interval (the whole-pass kernels take k per run): one
/// pass per interval, in `ks` order, each counted as its own. None where the model has no
/// whole-pass kernel on this device.
pub fn reversal_at_each(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    iters: usize,
) -> Option<Vec<Pass>> {
    if ks.is_empty() {
        return None;
    }
    let r = params[0].dims()[0];
    let per_run: Vec<usize> = ks.iter().flat_map(|&k| std::iter::repeat_n(k, r)).collect();
    let Pass { grads, loss, counts } = pass(model, params, batch, &per_run, iters)?;
    Some(split(grads, loss, counts, r, ks.len()))
}
