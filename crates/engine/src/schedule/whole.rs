//! A schedule's whole pass in the model's own kernels, where it has them (the GRU's
//! regression on a GPU): dense BPTT and reversal at each run's interval, the same gradient in
//! a few launches instead of a few per time step (`model::cube_sequence`). The counts are
//! the step-by-step path's: what the kernels asked for, per run.

use super::reversal::is_checkpoint;
use super::{Counts, Pass};
use crate::batch::Batch;
use crate::model::RecurrentModel;
use crate::model::evals;
use burn::tensor::Tensor;

/// The pass of run r keeping every `ks[r]`-th state (all 1: dense BPTT) and rebuilding the
/// others by `iters` reversal iterations, if `model` has a whole-pass kernel on this device.
pub fn pass(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    iters: usize,
) -> Option<Pass> {
    let r = params[0].dims()[0];
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
