//! Schedules that recompute: a plan of actions on one working state and a store of
//! snapshots, executed on the model for every run of a population in lockstep. Dense BPTT,
//! fixed-interval checkpointing and revolve are plans (their files build them); the executor
//! runs any valid plan and counts what it did.

use super::{Counts, Pass};
use crate::batch::Batch;
use crate::model::{Grads, RecurrentModel, VjpStep, evals};
use burn::tensor::Tensor;

/// One action of a plan. The working state is h at some time `cur`; the store holds
/// snapshots by time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Keep a snapshot of the working state (at its time).
    Store,
    /// Advance the working state one step: h_cur -> h_{cur+1} (a forward cell evaluation).
    Advance,
    /// Copy snapshot `t` into the working state; the snapshot stays.
    Restore(usize),
    /// Move snapshot `t` into the working state, freeing its slot.
    Take(usize),
    /// The VJP of step cur + 1 from the working h_cur: the backward pass's next step. The
    /// VJPs run for t = T..1, each exactly once.
    Vjp,
}

/// Run `plan` on `params` and `batch`: the gradient of the per-run loss the model's VJP
/// applies at each step, and per run what it cost. The loss itself is complete only when the
/// plan advanced through every step (dense) or the model's VJP sums it (the GRU on a GPU).
///
/// Panics if the plan is not a valid schedule for `batch.t()` steps: a VJP out of order, a
/// snapshot restored that is not held, a step past T, a VJP missing.
pub fn execute(model: &dyn RecurrentModel, params: &[Tensor<3>], batch: &Batch, plan: &[Action]) -> Pass {
    let [r, _, _] = params[0].dims();
    let t_len = batch.t();
    let device = params[0].device();
    let before = evals::so_far();

    let mut store: Vec<Option<Tensor<3>>> = (0..=t_len).map(|_| None).collect();
    let (mut held, mut peak) = (0usize, 1usize); // snapshots held; peak counts the working state too
    let mut cur = 0usize;
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut loss = Tensor::<3>::zeros([r, 1, 1], &device);
    let mut loss_steps = 0usize; // steps whose loss term the forward added (each once)
    let mut grads = model.grad_zeros(params);
    let mut dh = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device);
    let mut next_vjp = t_len;
    for &a in plan {
        match a {
            Action::Store => {
                assert!(store[cur].is_none(), "state {cur} stored twice");
                store[cur] = Some(h.clone());
                held += 1;
                peak = peak.max(held + 1);
            }
            Action::Advance => {
                assert!(cur < t_len, "advance past step {t_len}");
                let x = batch.x(cur);
                h = model.step(params, h, x.clone());
                cur += 1;
                if cur > loss_steps {
                    loss = model.add_loss(params, h.clone(), x, &batch.loss_at(cur), loss);
                    loss_steps = cur;
                }
            }
            Action::Restore(t) => {
                h = store[t].clone().unwrap_or_else(|| panic!("restore of state {t}, which is not held"));
                cur = t;
            }
            Action::Take(t) => {
                h = store[t].take().unwrap_or_else(|| panic!("take of state {t}, which is not held"));
                held -= 1;
                cur = t;
            }
            Action::Vjp => {
                assert_eq!(cur + 1, next_vjp, "VJP of step {} while step {next_vjp} is next", cur + 1);
                let (x, loss) = (batch.x(cur), batch.loss_at(cur + 1));
                dh = model.step_vjp(params, VjpStep { h_prev: h.clone(), x, loss, dh }, &mut grads);
                next_vjp -= 1;
            }
        }
    }
    assert_eq!(next_vjp, 0, "the plan stopped before the VJP of step {next_vjp}");
    let spent = evals::so_far() - before;
    // A packed gradient sums the loss in its VJPs, so its loss is always complete.
    let packed = matches!(grads, Grads::Packed { .. });
    let (grads, loss) = model.grads_of(grads, loss);
    let loss = (loss_steps == t_len || packed).then(|| loss.mul_scalar(batch.loss_scale()).reshape([r]));
    Pass { grads, loss, counts: vec![Counts::per_run(peak, spent, r); r] }
}

/// A plan as steps a kernel runs as data (`model::cube_sequence::gru_plan_pass`): each step
/// loads the working state from a snapshot slot, stores it to one, then advances it or takes
/// a VJP from it, each part optional. Snapshots live in numbered slots, reused once taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// (op: 0 none, 1 advance, 2 VJP; load slot + 1 or 0; store slot + 1 or 0; the time of
    /// the working state the op reads).
    pub steps: Vec<[u32; 4]>,
    /// Snapshot slots the plan needs.
    pub slots: usize,
    /// States held at the peak, the working state included: what [`execute`] counts.
    pub peak: usize,
}

/// Compile `plan` for `t_len` steps. Panics where [`execute`] does: the same plan is
/// invalid either way.
pub fn compile(plan: &[Action], t_len: usize) -> Compiled {
    let mut slot_of: Vec<Option<usize>> = vec![None; t_len + 1];
    let (mut free, mut slots) = (Vec::new(), 0usize);
    let (mut held, mut peak, mut cur, mut next_vjp) = (0usize, 1usize, 0usize, t_len);
    let (mut load, mut store): (Option<usize>, Option<usize>) = (None, None);
    let mut steps = Vec::new();
    let at = |s: Option<usize>| s.map_or(0, |s| s as u32 + 1);
    for &a in plan {
        match a {
            Action::Store => {
                assert!(slot_of[cur].is_none(), "state {cur} stored twice");
                if store.is_some() {
                    steps.push([0, at(load.take()), at(store.take()), 0]);
                }
                let slot = free.pop().unwrap_or_else(|| {
                    slots += 1;
                    slots - 1
                });
                slot_of[cur] = Some(slot);
                store = Some(slot);
                held += 1;
                peak = peak.max(held + 1);
            }
            Action::Restore(t) | Action::Take(t) => {
                // A step loads before it stores: a store waiting goes first.
                if store.is_some() {
                    steps.push([0, at(load.take()), at(store.take()), 0]);
                }
                let slot = slot_of[t].unwrap_or_else(|| panic!("restore of state {t}, which is not held"));
                if matches!(a, Action::Take(_)) {
                    slot_of[t] = None;
                    free.push(slot);
                    held -= 1;
                }
                load = Some(slot);
                cur = t;
            }
            Action::Advance => {
                assert!(cur < t_len, "advance past step {t_len}");
                steps.push([1, at(load.take()), at(store.take()), cur as u32]);
                cur += 1;
            }
            Action::Vjp => {
                assert_eq!(cur + 1, next_vjp, "VJP of step {} while step {next_vjp} is next", cur + 1);
                steps.push([2, at(load.take()), at(store.take()), cur as u32]);
                next_vjp -= 1;
            }
        }
    }
    assert_eq!(next_vjp, 0, "the plan stopped before the VJP of step {next_vjp}");
    if load.is_some() || store.is_some() {
        steps.push([0, at(load), at(store), 0]);
    }
    Compiled { steps, slots, peak }
}
