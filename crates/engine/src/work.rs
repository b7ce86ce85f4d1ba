//! Work units: what the progress bar counts and the time estimate multiplies by the
//! calibration's milliseconds per unit. A unit is a share of one trajectory's cell
//! evaluation: every pass a run makes (training steps, the idea's probes and frontier passes,
//! the final evaluation) is counted from the evaluations its schedule runs (forward steps,
//! reversal evaluations, one-step VJPs, the same counts the passes record), each weighted by
//! what it costs on the model ([`RecurrentModel::cell_cost`]). The counts are known before
//! training, except the idea's interval k, which its probes choose as it trains: an idea
//! step is counted at the mean of its cost at k = 1 and at k_max ([`IdeaK::Mean`]), and the
//! estimate's range spans both ends.

use crate::idea::cost::{self, IdeaK};
use crate::idea::probe::ProbeSettings;
use crate::model::RecurrentModel;
use crate::schedule::units::{RunCost, dense, forward};
use rdbench_core::context::BenchContext;
use rdbench_core::records::{ARMS, Arm, Phase};
use rdbench_core::track;

/// What one run of `arm` costs under `s` (its probe settings, for the idea) on sequences of
/// `t` steps with `n_train` training trajectories.
fn run_cost(
    model: &dyn RecurrentModel,
    arm: Arm,
    s: &ProbeSettings,
    t: usize,
    n_train: usize,
    which: IdeaK,
) -> RunCost {
    match arm {
        Arm::Baseline => RunCost { step: dense(model, t), probe: 0, eval: forward(model, t) },
        Arm::Idea => cost::run_cost(model, s, t, n_train, which),
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
    /// The work of the bench `ctx` (its model built from its shapes, nothing trained).
    pub fn of(ctx: &BenchContext) -> BenchWork {
        let cfg = &ctx.cfg;
        let model = crate::model::build(ctx).expect("a resolved config builds its model");
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
