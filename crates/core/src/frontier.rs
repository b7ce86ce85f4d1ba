//! The frontier: at the same memory, what would exact checkpointing have cost?
//! At every probe of the idea's full runs the engine runs each gradient schedule on the probe
//! batch ([`FrontierPoint`] records, counted as they ran); this module fixes which schedules
//! at which budgets ([`grid`]) and turns the records into the report's `frontier` block:
//! the mean of each point over the probes, and at each probe whether an exact schedule held
//! no more states and evaluated no more cells than the idea did.
//!
//! Non-engine: a pure function of the runs, so `report::build`, `validate`, the study and the
//! page share it.

use crate::policy::chained_ks;
use crate::records::{Arm, FrontierPoint, Phase, RunRecord, ScheduleAt, ScheduleKind};
use crate::stats::mean;
use serde::{Deserialize, Serialize};

/// Small memory budgets (states held, the working state included) measured besides the ones
/// the idea's intervals give: where only revolve can go.
pub const SMALL_BUDGETS: [usize; 3] = [3, 4, 6];

/// The exact schedules a frontier probe runs besides dense BPTT (whose budget is T + 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    /// Fixed-interval checkpointing at each k: the idea's probed intervals 2, 4, .., k_max
    /// and round(sqrt(T)), where its memory is smallest.
    pub fixed_interval_ks: Vec<usize>,
    /// Revolve at each slot count: the budgets ceil(T / k) + 1 of the idea's probed intervals
    /// and [`SMALL_BUDGETS`], less the working state.
    pub revolve_slots: Vec<usize>,
    /// Reversal at each fixed k: the idea's probed intervals.
    pub reversal_ks: Vec<usize>,
}

/// The states a reversal or the idea holds at interval k over t steps: ceil(T / k) + 1.
pub fn budget_of_interval(t: usize, k: usize) -> usize {
    t.div_ceil(k.max(1)) + 1
}

/// Revolve's slots for a budget of `states` held (one of them is the working state).
pub fn slots_for_budget(states: usize) -> usize {
    states.saturating_sub(1).max(1)
}

/// The grid for sequences of `t` steps and the policy's largest interval `k_max`.
pub fn grid(t: usize, k_max: usize) -> Grid {
    let ks = chained_ks(k_max);
    let root = ((t as f64).sqrt().round() as usize).max(2);
    let mut fixed: Vec<usize> = ks.iter().copied().chain([root]).filter(|&k| k < t).collect();
    fixed.sort_unstable();
    fixed.dedup();
    let mut slots: Vec<usize> = ks
        .iter()
        .map(|&k| budget_of_interval(t, k))
        .chain(SMALL_BUDGETS)
        .map(slots_for_budget)
        .filter(|&s| s < t)
        .collect();
    slots.sort_unstable();
    slots.dedup();
    Grid { fixed_interval_ks: fixed, revolve_slots: slots, reversal_ks: ks }
}

/// A point of the report: one schedule at one parameter, averaged over the probes that ran it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointMean {
    /// The schedule and its parameter.
    #[serde(flatten)]
    pub at: ScheduleAt,
    /// Probes averaged.
    pub n: usize,
    /// Mean states held at the peak.
    pub stored_states: f64,
    /// Mean forward step evaluations.
    pub forward_evals: f64,
    /// Mean reversal cell evaluations.
    pub reversal_evals: f64,
    /// Mean one-step VJPs.
    pub vjp_steps: f64,
    /// Mean gradient cosine with dense BPTT (finite values; null if none).
    pub grad_cos: Option<f64>,
    /// Mean relative L2 error against dense BPTT (finite values; null if none).
    pub grad_rel_err: Option<f64>,
    /// Mean measured peak heap bytes per run (null where not measured).
    pub peak_bytes: Option<f64>,
    /// Mean wall time per run, seconds (null on a GPU).
    pub seconds: Option<f64>,
}

impl PointMean {
    /// Mean forward plus reversal cell evaluations.
    pub fn cell_evals(&self) -> f64 {
        self.forward_evals + self.reversal_evals
    }
}

/// One probe's answer: could an exact schedule have done the idea's job for less?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeVerdict {
    /// The idea full run's seed.
    pub seed: u64,
    /// The probe (`ProbeRecord::epoch`).
    pub epoch: usize,
    /// The interval the idea used.
    pub k: usize,
    /// States the idea held.
    pub stored_states: usize,
    /// Its forward plus reversal cell evaluations.
    pub cell_evals: u64,
    /// Its gradient's cosine with dense BPTT.
    pub grad_cos: Option<f64>,
    /// The cheapest exact schedule measured at this probe that held no more states (null if
    /// none did): its name, parameter and cell evaluations.
    pub exact: Option<ExactAlternative>,
    /// Whether that schedule also evaluated no more cells than the idea.
    pub dominated: bool,
}

/// The exact schedule a probe compares the idea with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactAlternative {
    /// dense, fixed_interval or revolve, with its parameter.
    #[serde(flatten)]
    pub at: ScheduleAt,
    /// States it held.
    pub stored_states: usize,
    /// Its forward plus reversal cell evaluations.
    pub cell_evals: u64,
}

/// Whether the idea is dominated by exact checkpointing, probe by probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dominated {
    /// Probes with frontier measurements.
    pub n_probes: usize,
    /// Probes where an exact schedule held no more states and evaluated no more cells.
    pub n_dominated: usize,
    /// n_dominated / n_probes (null without probes).
    pub fraction: Option<f64>,
    /// Probes where the idea held fewer states than dense BPTT (k > 1): where it saved memory.
    pub n_saving: usize,
    /// Of those, the probes where it was dominated.
    pub n_saving_dominated: usize,
    /// Over the probes where it saved memory: mean states the idea held.
    pub mean_idea_states: Option<f64>,
    /// ... its mean cell evaluations.
    pub mean_idea_cell_evals: Option<f64>,
    /// ... its mean gradient cosine with dense BPTT.
    pub mean_idea_grad_cos: Option<f64>,
    /// ... the mean cell evaluations of the cheapest exact schedule within its memory.
    pub mean_exact_cell_evals: Option<f64>,
    /// ... the exact schedule that was cheapest within its memory most often.
    pub exact_schedule: Option<ScheduleKind>,
    /// The answer in one line.
    pub conclusion: String,
    /// Every probe, in seed then probe order.
    pub probes: Vec<ProbeVerdict>,
}

/// The report's `frontier` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frontier {
    /// Sequence length T (dense BPTT holds T + 1 states).
    pub t: usize,
    /// Each schedule at each parameter, averaged over the probes: schedules in the order
    /// dense, fixed_interval, revolve, reversal, idea; parameters ascending.
    pub points: Vec<PointMean>,
    /// The idea against the exact schedules, probe by probe.
    pub dominated: Dominated,
}

/// The probes of the idea's full runs that measured the frontier, with their seeds.
fn frontier_probes(runs: &[RunRecord]) -> Vec<(u64, &crate::records::ProbeRecord)> {
    let mut full: Vec<&RunRecord> = runs.iter().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full).collect();
    full.sort_by_key(|r| r.seed);
    full.iter().flat_map(|r| r.probes.iter().filter(|p| !p.frontier.is_empty()).map(|p| (r.seed, p))).collect()
}

fn mean_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.filter(|x| x.is_finite()).collect();
    (!v.is_empty()).then(|| mean(&v))
}

/// The frontier block of `runs` for sequences of `t` steps; None when no probe measured it
/// (older reports, benches without full idea runs).
pub fn build(t: usize, runs: &[RunRecord]) -> Option<Frontier> {
    let probes = frontier_probes(runs);
    if probes.is_empty() {
        return None;
    }
    // Schedules in report order, then their parameter ascending (`ScheduleAt`'s order).
    let mut keys: Vec<ScheduleAt> = probes.iter().flat_map(|(_, p)| p.frontier.iter().map(|q| q.at)).collect();
    keys.sort_unstable();
    keys.dedup();
    let points = keys
        .iter()
        .map(|&k| {
            let group: Vec<&FrontierPoint> =
                probes.iter().flat_map(|(_, p)| p.frontier.iter().filter(move |q| q.at == k)).collect();
            let m = |f: fn(&FrontierPoint) -> f64| mean(&group.iter().map(|p| f(p)).collect::<Vec<_>>());
            PointMean {
                at: k,
                n: group.len(),
                stored_states: m(|p| p.stored_states as f64),
                forward_evals: m(|p| p.forward_evals as f64),
                reversal_evals: m(|p| p.reversal_evals as f64),
                vjp_steps: m(|p| p.vjp_steps as f64),
                grad_cos: mean_of(group.iter().filter_map(|p| p.grad_cos)),
                grad_rel_err: mean_of(group.iter().filter_map(|p| p.grad_rel_err)),
                peak_bytes: mean_of(group.iter().filter_map(|p| p.peak_bytes.map(|b| b as f64))),
                seconds: mean_of(group.iter().filter_map(|p| p.seconds)),
            }
        })
        .collect();
    let verdicts: Vec<ProbeVerdict> = probes.iter().filter_map(|(seed, p)| verdict(*seed, p)).collect();
    Some(Frontier { t, points, dominated: dominated(t, verdicts) })
}

/// One probe's verdict; None when it has no idea point.
fn verdict(seed: u64, p: &crate::records::ProbeRecord) -> Option<ProbeVerdict> {
    let idea = p.frontier.iter().find(|q| q.at.schedule == ScheduleKind::Idea)?;
    let exact = p
        .frontier
        .iter()
        .filter(|q| q.at.schedule.is_exact() && q.stored_states <= idea.stored_states)
        .min_by_key(|q| (q.cell_evals(), q.stored_states))
        .map(|q| ExactAlternative { at: q.at, stored_states: q.stored_states, cell_evals: q.cell_evals() });
    Some(ProbeVerdict {
        seed,
        epoch: p.epoch,
        k: idea.at.k.unwrap_or(p.k),
        stored_states: idea.stored_states,
        cell_evals: idea.cell_evals(),
        grad_cos: idea.grad_cos,
        dominated: exact.as_ref().is_some_and(|e| e.cell_evals <= idea.cell_evals()),
        exact,
    })
}

fn dominated(t: usize, probes: Vec<ProbeVerdict>) -> Dominated {
    let n = probes.len();
    let hits = probes.iter().filter(|p| p.dominated).count();
    let saving: Vec<&ProbeVerdict> = probes.iter().filter(|p| p.stored_states < t + 1).collect();
    let mean_u = |f: &dyn Fn(&ProbeVerdict) -> Option<f64>| mean_of(saving.iter().filter_map(|p| f(p)));
    let mut kinds: Vec<ScheduleKind> = saving.iter().filter_map(|p| p.exact.as_ref().map(|e| e.at.schedule)).collect();
    kinds.sort_unstable();
    // The most frequent (ties: the first in report order).
    let exact_schedule = ScheduleKind::ALL
        .into_iter()
        .filter(|k| kinds.contains(k))
        .max_by_key(|k| (kinds.iter().filter(|x| *x == k).count(), std::cmp::Reverse(*k)));
    let mut d = Dominated {
        n_probes: n,
        n_dominated: hits,
        fraction: (n > 0).then(|| hits as f64 / n as f64),
        n_saving: saving.len(),
        n_saving_dominated: saving.iter().filter(|p| p.dominated).count(),
        mean_idea_states: mean_u(&|p| Some(p.stored_states as f64)),
        mean_idea_cell_evals: mean_u(&|p| Some(p.cell_evals as f64)),
        mean_idea_grad_cos: mean_u(&|p| p.grad_cos),
        mean_exact_cell_evals: mean_u(&|p| p.exact.as_ref().map(|e| e.cell_evals as f64)),
        exact_schedule,
        conclusion: String::new(),
        probes: Vec::new(),
    };
    d.conclusion = conclusion(t, &d);
    d.probes = probes;
    d
}

impl Dominated {
    /// Where the idea stands over its probes: "on the frontier at all 16 probes", "dominated
    /// by exact checkpointing at all 16 probes", or "… at 3 of 16 probes" (the conclusion and
    /// the page's card both begin with it).
    pub fn standing(&self) -> String {
        let n = self.n_probes;
        match self.n_dominated {
            0 => format!("on the frontier at {}", every_probe(n)),
            k if k == n => format!("dominated by exact checkpointing at {}", every_probe(n)),
            k => format!("dominated by exact checkpointing at {k} of {n} probes"),
        }
    }
}

/// "all 8 probes", or "its one probe".
pub fn every_probe(n: usize) -> String {
    if n == 1 { "its one probe".to_string() } else { format!("all {n} probes") }
}

/// The answer in one line, from the measured means.
fn conclusion(t: usize, d: &Dominated) -> String {
    let n = d.n_probes;
    if n == 0 {
        return "no probe measured the frontier".to_string();
    }
    let head = d.standing();
    if d.n_saving == 0 {
        return format!("{head}: the idea kept every state (k = 1) at every probe, as dense BPTT does");
    }
    let at = if d.n_saving == n {
        "at every probe".to_string()
    } else {
        format!("at the {} of {n} probes where it saved memory", d.n_saving)
    };
    let kept = if d.n_saving == n {
        String::new()
    } else {
        format!("; at the other {} it kept every state (k = 1, dense BPTT)", n - d.n_saving)
    };
    let f0 = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.0}"));
    format!(
        "{head}: {at} the idea held {} of {} states and took {} cell evaluations (gradient cosine {}), where the \
         cheapest exact schedule within its memory ({}) took {}{kept}",
        d.mean_idea_states.map_or("n/a".to_string(), |s| format!("{s:.1}")),
        t + 1,
        f0(d.mean_idea_cell_evals),
        d.mean_idea_grad_cos.map_or("n/a".to_string(), |c| format!("{c:.4}")),
        d.exact_schedule.map_or("none", |k| k.as_str()),
        f0(d.mean_exact_cell_evals),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::ProbeRecord;

    fn point(
        schedule: ScheduleKind,
        param: usize,
        stored: usize,
        forward: u64,
        reversal: u64,
        cos: f64,
    ) -> FrontierPoint {
        let (k, slots) = match schedule {
            ScheduleKind::Dense => (None, None),
            ScheduleKind::Revolve => (None, Some(param)),
            _ => (Some(param), None),
        };
        FrontierPoint {
            at: ScheduleAt { schedule, k, slots },
            stored_states: stored,
            forward_evals: forward,
            reversal_evals: reversal,
            vjp_steps: 80,
            grad_cos: Some(cos),
            grad_rel_err: Some(1.0 - cos),
            peak_bytes: None,
            seconds: Some(0.01),
        }
    }

    fn run(seed: u64, phase: Phase, frontiers: Vec<Vec<FrontierPoint>>) -> RunRecord {
        let probes = frontiers
            .into_iter()
            .enumerate()
            .map(|(epoch, frontier)| ProbeRecord {
                epoch,
                defect_mean: None,
                defect_max: None,
                chained: Vec::new(),
                k: 1,
                checkpoints: 81,
                stored_bytes: 0,
                dense_bytes: 0,
                grad_cos_chosen: None,
                grad_cos_kmax: None,
                peak_bytes_checkpointed: None,
                peak_bytes_dense: None,
                frontier,
            })
            .collect();
        RunRecord { phase, metric: Some(0.1), lr: 0.01, wall_time_s: 1.0, ..RunRecord::of_probes(seed, probes) }
    }

    /// A probe where the idea ran at `k` with `reversal` evaluations, next to dense and revolve.
    fn probe(k: usize, reversal: u64, cos: f64) -> Vec<FrontierPoint> {
        use ScheduleKind::*;
        let stored = budget_of_interval(80, k);
        vec![
            point(Dense, 0, 81, 80, 0, 1.0),
            point(Revolve, 5, 6, 236, 0, 1.0),
            point(Reversal, k, stored, 80, reversal, cos),
            point(Idea, k, stored, 80, reversal, cos),
        ]
    }

    #[test]
    fn a_probe_is_dominated_when_an_exact_schedule_holds_and_costs_no_more() {
        // Seed 0: an expensive reversal at k = 16 (GRU-like: 75 x 20 iterations) is beaten by
        // revolve's 236 at 6 states; k = 1 is dense BPTT itself (a tie counts). Seed 1: a
        // cheap exact inverse (75 evaluations) at 6 states is not. A sweep run's probes and
        // probes without frontier points are not counted.
        let runs = vec![
            run(1, Phase::Full, vec![probe(16, 75, 0.99999)]),
            run(0, Phase::Full, vec![probe(16, 1500, 0.7), probe(1, 0, 1.0), Vec::new()]),
            run(0, Phase::Sweep, vec![probe(16, 1500, 0.7)]),
        ];
        let f = build(80, &runs).unwrap();
        let d = &f.dominated;
        assert_eq!((d.n_probes, d.n_dominated, d.n_saving, d.n_saving_dominated), (3, 2, 2, 1));
        let flags: Vec<(u64, usize, bool)> = d.probes.iter().map(|p| (p.seed, p.epoch, p.dominated)).collect();
        assert_eq!(flags, vec![(0, 0, true), (0, 1, true), (1, 0, false)]);
        let alt = d.probes[0].exact.as_ref().unwrap();
        assert_eq!((alt.at.schedule, alt.at.slots, alt.cell_evals), (ScheduleKind::Revolve, Some(5), 236));
        assert_eq!(d.probes[1].exact.as_ref().unwrap().at.schedule, ScheduleKind::Dense);
        assert_eq!(d.mean_idea_states, Some(6.0));
        assert_eq!(d.mean_idea_cell_evals, Some((1580.0 + 155.0) / 2.0));
        assert_eq!(d.mean_exact_cell_evals, Some(236.0));
        assert_eq!(d.exact_schedule, Some(ScheduleKind::Revolve));
        assert!(d.conclusion.starts_with("dominated by exact checkpointing at 2 of 3 probes"), "{}", d.conclusion);
        assert!(d.conclusion.contains("the other 1 it kept every state"), "{}", d.conclusion);
        // Points: means per schedule and parameter, in report order, with their counts.
        let keys: Vec<(ScheduleKind, Option<usize>, Option<usize>, usize)> =
            f.points.iter().map(|p| (p.at.schedule, p.at.k, p.at.slots, p.n)).collect();
        use ScheduleKind::*;
        assert_eq!(
            keys,
            vec![
                (Dense, None, None, 3),
                (Revolve, None, Some(5), 3),
                (Reversal, Some(1), None, 1),
                (Reversal, Some(16), None, 2),
                (Idea, Some(1), None, 1),
                (Idea, Some(16), None, 2)
            ]
        );
        let idea16 = &f.points[5];
        assert_eq!((idea16.stored_states, idea16.reversal_evals), (6.0, (1500.0 + 75.0) / 2.0));
        assert_eq!(idea16.grad_cos, Some((0.7 + 0.99999) / 2.0));
        // Only the cheap inverse: on the frontier everywhere.
        let f = build(80, &runs[..1]).unwrap();
        assert!(f.dominated.conclusion.starts_with("on the frontier at its one probe:"), "{}", f.dominated.conclusion);
        assert_eq!(build(80, &runs[2..]), None, "no full-run probe, no frontier");
    }

    #[test]
    fn the_grid_holds_the_budgets_of_the_issue() {
        let g = grid(80, 16);
        assert_eq!(g.reversal_ks, vec![2, 4, 8, 16]);
        assert_eq!(g.fixed_interval_ks, vec![2, 4, 8, 9, 16]);
        // Budgets 41, 21, 11, 6 (k = 2..16) and 3, 4, 6: slots one fewer.
        assert_eq!(g.revolve_slots, vec![2, 3, 5, 10, 20, 40]);
        assert_eq!(budget_of_interval(80, 16), 6);
        assert_eq!(budget_of_interval(80, 1), 81);
    }
}
