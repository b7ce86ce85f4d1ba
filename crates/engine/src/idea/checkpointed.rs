//! The idea arm's gradient: a checkpointed backward pass that keeps only the states at
//! t = 0, k, 2k, .., T and rebuilds the others by reversing the cell (spec §5).
//!
//! Each run of the population has its own interval k. The forward pass keeps, for each
//! time step, only the rows of the runs whose checkpoint it is, so the memory held is each
//! run's own checkpoint count. The backward pass walks t = T..1 one step's
//! vector-Jacobian product at a time and frees each checkpoint once it is passed.

use crate::model::{RecurrentModel, VjpStep};
use crate::train::GradOut;
use crate::train::batch::Batch;
use burn::tensor::{Int, Tensor, TensorData};

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

/// Result of a checkpointed pass: gradients, loss and the states each run stored.
pub struct CheckpointedOut {
    /// Gradients and per-run loss.
    pub out: GradOut,
    /// Hidden states each run held (its checkpoint count).
    pub stored_states: Vec<usize>,
}

/// Gradients of the per-run training loss with checkpoint interval `ks[r]` for run r.
pub fn checkpointed_grads(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
    reversal_iters: usize,
) -> CheckpointedOut {
    let [r, _, _] = params[0].dims();
    assert_eq!(ks.len(), r, "one interval per run");
    let t_len = batch.t();
    let device = params[0].device();
    let runs_at = |s: usize| -> Vec<usize> { (0..r).filter(|&i| is_checkpoint(s, t_len, ks[i])).collect() };
    let keep = |h: &Tensor<3>, runs: &[usize]| -> Tensor<3> {
        if runs.len() == r {
            h.clone()
        } else {
            let idx: Vec<i64> = runs.iter().map(|&i| i as i64).collect();
            let idx = Tensor::<1, Int>::from_data(TensorData::new(idx, [runs.len()]), &device);
            h.clone().select(0, idx)
        }
    };

    // Forward: only checkpoint rows survive the step that made them.
    let mut stored: Vec<Option<Stored>> = (0..=t_len).map(|_| None).collect();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut loss = Tensor::<3>::zeros([r, 1, 1], &device);
    // States held per run, counted from what is actually stored.
    let mut stored_states = vec![1usize; r];
    stored[0] = Some(Stored { runs: (0..r).collect(), h: h.clone() });
    for (i, x) in batch.xs.iter().enumerate() {
        let t = i + 1;
        h = model.step(params, h, x.clone());
        loss = model.add_loss(params, h.clone(), x.clone(), &batch.loss_at(t), loss);
        let runs = runs_at(t);
        if !runs.is_empty() {
            runs.iter().for_each(|&i| stored_states[i] += 1);
            stored[t] = Some(Stored { h: keep(&h, &runs), runs });
        }
    }
    drop(h);

    // Backward: t = T..1, h_{t-1} from a checkpoint or by one reversal of the h_t in use.
    let mut grads = model.grad_zeros(params);
    let mut dh = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut h_cur = stored[t_len].take().expect("T is always a checkpoint").h;
    for t in (1..=t_len).rev() {
        let x = batch.xs[t - 1].clone();
        let h_prev = match stored[t - 1].take() {
            Some(s) if s.runs.len() == r => s.h,
            found => {
                let rev = model.reverse(params, h_cur.clone(), x.clone(), reversal_iters);
                match found {
                    None => rev,
                    Some(s) => merge_rows(rev, &s),
                }
            }
        };
        let step = VjpStep { h_prev: h_prev.clone(), x, loss: batch.loss_at(t), dh };
        dh = model.step_vjp(params, step, &mut grads);
        h_cur = h_prev;
    }
    let (grads, loss) = model.grads_of(grads, loss);
    CheckpointedOut { out: GradOut { grads, loss: loss.mul_scalar(batch.loss_scale()).reshape([r]) }, stored_states }
}

/// `rev` with the rows of the runs in `s` replaced by their stored states.
fn merge_rows(rev: Tensor<3>, s: &Stored) -> Tensor<3> {
    let [r, b, h] = rev.dims();
    let mut parts = Vec::with_capacity(r);
    for run in 0..r {
        match s.runs.iter().position(|&x| x == run) {
            Some(j) => parts.push(s.h.clone().narrow(0, j, 1)),
            None => parts.push(rev.clone().narrow(0, run, 1)),
        }
    }
    let out = Tensor::cat(parts, 0);
    debug_assert_eq!(out.dims(), [r, b, h]);
    out
}
