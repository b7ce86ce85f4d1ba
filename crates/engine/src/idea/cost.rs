//! What the idea's runs cost in work units: its training pass at the interval k its probes
//! choose (counted at k = 1, k_max or their mean before training) and its probes.

use crate::idea::probe::{PROBE_TRAJECTORIES, ProbeSettings};
use crate::model::RecurrentModel;
use crate::schedule::units::{RunCost, dense, forward, plan_units, reversal_pass};
use crate::schedule::{fixed_interval, revolve};
use rdbench_core::frontier::grid;
use rdbench_core::policy::chained_ks;

/// The interval the idea's training steps (and its probes' own pass) are counted at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdeaK {
    /// k = 1: every state checkpointed, no reversal (the least the idea can cost).
    One,
    /// The mean of the two ends: the estimate before training, and the progress bar's unit.
    Mean,
    /// k = k_max: all but one state in k rebuilt by reversal (the most).
    Max,
}

/// Units of the idea's reversal pass at `which` interval.
fn idea_pass(model: &dyn RecurrentModel, t: usize, s: &ProbeSettings, which: IdeaK) -> u64 {
    let at = |k: usize| reversal_pass(model, t, k, s.reversal_iters, true);
    match which {
        IdeaK::One => at(1),
        IdeaK::Mean => (at(1) + at(s.k_max)).div_ceil(2),
        IdeaK::Max => at(s.k_max),
    }
}

/// Units of one run's probe (`crate::idea::probe`) on `rows` trajectories of `t` steps: the
/// forward pass for the true states, the one-step defects, the reversal at each probed
/// interval (with its gradient at k_max, and at every k when the frontier is measured), dense
/// BPTT and the idea's pass on the probe batch, and with the frontier every exact schedule of
/// its grid. Not counted: the revolve passes at the budgets of chosen intervals the grid
/// lacks (none for intervals the policy probes), and natively the passes the memory
/// measurement repeats on one run alone.
pub fn probe(model: &dyn RecurrentModel, t: usize, rows: usize, s: &ProbeSettings, which: IdeaK) -> u64 {
    let iters = s.reversal_iters;
    let cost = model.cell_cost();
    let one_step = cost.of(t as u64, t.saturating_sub(1) as u64 * model.reversal_evals(iters) as u64, 0);
    let chained: u64 =
        chained_ks(s.k_max).into_iter().map(|k| reversal_pass(model, t, k, iters, s.frontier || k == s.k_max)).sum();
    let mut units = one_step + chained + dense(model, t) + idea_pass(model, t, s, which);
    if s.frontier {
        let g = grid(t, s.k_max);
        units += g.fixed_interval_ks.iter().map(|&k| plan_units(model, &fixed_interval::plan(t, k))).sum::<u64>();
        units += g.revolve_slots.iter().map(|&slots| plan_units(model, &revolve::plan(t, slots))).sum::<u64>();
    }
    units * rows as u64
}

/// What one run of the idea costs under `s` (its probe settings) on sequences of `t` steps
/// with `n_train` training trajectories.
pub fn run_cost(model: &dyn RecurrentModel, s: &ProbeSettings, t: usize, n_train: usize, which: IdeaK) -> RunCost {
    RunCost {
        step: idea_pass(model, t, s, which),
        probe: probe(model, t, n_train.min(PROBE_TRAJECTORIES), s, which),
        eval: forward(model, t),
    }
}
