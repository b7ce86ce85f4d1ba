//! Work units: what the progress bar counts and the time estimate multiplies by the
//! calibration's milliseconds per unit. A unit is a share of one trajectory's cell
//! evaluation: every pass a run makes (training steps, the idea's probes and frontier passes,
//! the final evaluation) is counted from the evaluations its schedule runs (forward steps,
//! reversal evaluations, one-step VJPs, the same counts the passes record), each weighted by
//! what it costs on the model ([`RecurrentModel::cell_cost`]). The counts are known before
//! training, except the idea's interval k, which its probes choose as it trains: an idea
//! step is counted at the mean of its cost at k = 1 and at k_max ([`IdeaK::Mean`]), and the
//! estimate's range spans both ends.

use crate::idea::probe::{PROBE_TRAJECTORIES, ProbeSettings};
use crate::model::RecurrentModel;
use crate::schedule::plan::Action;
use crate::schedule::{fixed_interval, revolve};
use rdbench_core::config::BenchConfig;
use rdbench_core::frontier::grid;
use rdbench_core::policy::chained_ks;
use rdbench_core::records::{ARMS, Arm, Phase};
use rdbench_core::track;

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

/// What one run of an arm costs, in work units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCost {
    /// Per trajectory of a training step.
    pub step: u64,
    /// Per probe (before each epoch and after the last; 0 for the baseline).
    pub probe: u64,
    /// Per trajectory of the final evaluation.
    pub eval: u64,
}

impl RunCost {
    /// One run's units: `epochs` epochs over `n_train` trajectories, a probe before each
    /// epoch and after the last, the evaluation of `n_eval` trajectories.
    pub fn run_units(&self, n_train: usize, n_eval: usize, epochs: usize) -> u64 {
        let probes = if self.probe > 0 { epochs as u64 + 1 } else { 0 };
        epochs as u64 * n_train as u64 * self.step + probes * self.probe + n_eval as u64 * self.eval
    }
}

impl CellCost {
    /// Units of a pass of `forward` steps, `reversal` reversal evaluations and `vjp` VJPs.
    fn of(&self, forward: u64, reversal: u64, vjp: u64) -> u64 {
        forward * self.forward + reversal * self.reversal + vjp * self.vjp
    }
}

/// Units of dense BPTT over `t` steps: T forward steps and T VJPs.
pub fn dense(model: &dyn RecurrentModel, t: usize) -> u64 {
    model.cell_cost().of(t as u64, 0, t as u64)
}

/// Units of the reversal pass at interval `k` over `t` steps (the idea's training step, the
/// probe's chained defects): T forward steps, one reversal of every state that is not a
/// checkpoint (T - ceil(T / k) of h_0..h_{T-1}), and T VJPs when it takes the gradient.
pub fn reversal_pass(model: &dyn RecurrentModel, t: usize, k: usize, iters: usize, gradient: bool) -> u64 {
    let rebuilt = (t - t.div_ceil(k.max(1))) as u64 * model.reversal_evals(iters) as u64;
    model.cell_cost().of(t as u64, rebuilt, if gradient { t as u64 } else { 0 })
}

/// Units of a forward pass over `t` steps (the final evaluation).
pub fn forward(model: &dyn RecurrentModel, t: usize) -> u64 {
    model.cell_cost().of(t as u64, 0, 0)
}

/// Units of a recomputing schedule's plan: its forward steps and VJPs.
fn plan_units(model: &dyn RecurrentModel, plan: &[Action]) -> u64 {
    let count = |a: Action| plan.iter().filter(|&&b| b == a).count() as u64;
    model.cell_cost().of(count(Action::Advance), 0, count(Action::Vjp))
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

/// What one run of `arm` costs under `s` (its probe settings, for the idea) on sequences of
/// `t` steps with `n_train` training trajectories.
pub fn run_cost(
    model: &dyn RecurrentModel,
    arm: Arm,
    s: &ProbeSettings,
    t: usize,
    n_train: usize,
    which: IdeaK,
) -> RunCost {
    let eval = forward(model, t);
    match arm {
        Arm::Baseline => RunCost { step: dense(model, t), probe: 0, eval },
        Arm::Idea => RunCost {
            step: idea_pass(model, t, s, which),
            probe: probe(model, t, n_train.min(PROBE_TRAJECTORIES), s, which),
            eval,
        },
    }
}

/// A bench's work: each run's units per arm and phase, at the three counts of the idea's k.
#[derive(Clone, Debug)]
pub struct BenchWork {
    /// `[IdeaK::One, IdeaK::Mean, IdeaK::Max]` × `[sweep, full]` × `[baseline, idea]`.
    per_run: [[[u64; 2]; 2]; 3],
    sweeps: usize,
    seeds: usize,
}

/// Work units: the estimate's low end, its central figure (the progress bar's total) and
/// its high end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Units {
    /// The idea training at k = 1 throughout.
    pub low: u64,
    /// The progress bar's count: the idea at the mean of both ends.
    pub mid: u64,
    /// The idea training at k_max throughout.
    pub high: u64,
}

impl std::ops::Sub for Units {
    type Output = Units;
    fn sub(self, o: Units) -> Units {
        Units {
            low: self.low.saturating_sub(o.low),
            mid: self.mid.saturating_sub(o.mid),
            high: self.high.saturating_sub(o.high),
        }
    }
}

impl std::iter::Sum for Units {
    fn sum<I: Iterator<Item = Units>>(it: I) -> Units {
        it.fold(Units::default(), |a, b| Units { low: a.low + b.low, mid: a.mid + b.mid, high: a.high + b.high })
    }
}

const WHICH: [IdeaK; 3] = [IdeaK::One, IdeaK::Mean, IdeaK::Max];

impl BenchWork {
    /// The work of a validated `cfg` (its model built from its shapes, nothing trained).
    pub fn of(cfg: &BenchConfig) -> BenchWork {
        let ctx = cfg.resolve().expect("validated");
        let model = crate::protocol::build_model(&ctx).expect("validated");
        let t = ctx.seq_len;
        let full_n = ctx.train_sequences;
        let val = track::validation_size(full_n);
        // (training trajectories, evaluated trajectories) of each phase.
        let sizes = [(full_n - val, val), (full_n, ctx.track.n_test())];
        let per_run = WHICH.map(|which| {
            [Phase::Sweep, Phase::Full].map(|phase| {
                let (n, n_eval) = sizes[phase as usize];
                let s = ProbeSettings::new(cfg, phase == Phase::Full);
                ARMS.map(|arm| run_cost(&*model, arm, &s, t, n, which).run_units(n, n_eval, cfg.epochs))
            })
        });
        BenchWork { per_run, sweeps: cfg.lrs.len() * cfg.n_sweep_seeds, seeds: cfg.n_seeds }
    }

    /// One run of `arm` in `phase`.
    pub fn run(&self, arm: Arm, phase: Phase) -> Units {
        let at = |i: usize| self.per_run[i][phase as usize][arm as usize];
        Units { low: at(0), mid: at(1), high: at(2) }
    }

    /// One run of each population the bench trains, each (phase, arm) being one population
    /// on a GPU: the work a GPU pays once per population whatever its runs (its launches).
    pub fn populations(&self) -> Units {
        let phases = [(Phase::Sweep, self.sweeps), (Phase::Full, self.seeds)];
        ARMS.into_iter()
            .flat_map(|arm| phases.map(|(phase, runs)| if runs == 0 { Units::default() } else { self.run(arm, phase) }))
            .sum()
    }

    /// The whole bench.
    pub fn total(&self) -> Units {
        ARMS.into_iter()
            .map(|arm| {
                let (s, f) = (self.run(arm, Phase::Sweep), self.run(arm, Phase::Full));
                Units {
                    low: self.sweeps as u64 * s.low + self.seeds as u64 * f.low,
                    mid: self.sweeps as u64 * s.mid + self.seeds as u64 * f.mid,
                    high: self.sweeps as u64 * s.high + self.seeds as u64 * f.high,
                }
            })
            .sum()
    }
}
