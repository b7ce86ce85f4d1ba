//! Dense BPTT as a plan: the forward pass keeps every state h_0..h_T (and adds every step's
//! loss term), the backward pass takes one VJP per step from T down to 1.

use super::plan::Action;

/// The dense plan for `t` steps: T + 1 states held, T forward evaluations.
pub fn plan(t: usize) -> Vec<Action> {
    let mut p = Vec::with_capacity(4 * t);
    for _ in 0..t {
        p.extend([Action::Store, Action::Advance]);
    }
    for s in (0..t).rev() {
        p.extend([Action::Take(s), Action::Vjp]);
    }
    p
}
