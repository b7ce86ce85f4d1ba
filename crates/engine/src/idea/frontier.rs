//! The frontier at one probe: every gradient schedule run on the probe batch and
//! the model of the moment, with its measured peak bytes and wall time, and each run's
//! points from what the passes counted. Which schedules at which budgets is
//! `rdbench_core::frontier::grid`; the passes the probe runs anyway (dense, the idea,
//! reversal at the probed intervals) are points too.

use crate::backend::cube_device;
use crate::batch::{Batch, rows};
use crate::memory::{metered, thread_peak_during};
use crate::model::RecurrentModel;
use crate::schedule::plan::Action;
use crate::schedule::whole::plans_at_each;
use crate::schedule::{Pass, Schedule};
use burn::tensor::Tensor;
use rdbench_core::frontier::{budget_of_interval, grid, slots_for_budget};
use rdbench_core::records::{FrontierPoint, ScheduleAt};
use web_time::Instant;

/// One schedule's pass over (part of) the population, measured.
pub struct Measured {
    /// The schedule.
    pub schedule: Schedule,
    /// The runs of the population it ran on, ascending.
    pub runs: Vec<usize>,
    /// Its pass (rows in `runs` order).
    pub pass: Pass,
    /// Each run's peak heap bytes (rows in `runs` order): the schedule's pass on that run
    /// alone, where measured.
    pub peak_bytes: Vec<Option<u64>>,
    /// Wall time per run, seconds (None on a GPU, where a pass only queues work).
    pub seconds: Option<f64>,
}

/// Run `f` (a pass over `runs` runs on `device`) and measure it: its wall time per run, and
/// each run's peak heap bytes as the schedule needs them for that run alone (`alone(row)`
/// runs and measures it on the row's run by itself). A population pass shares buffers
/// between its runs, so its peak split over them would depend on how runs are grouped
/// (populations, threads, workers, machines); one run's pass does not. Rows whose schedule
/// is the same (every row but the idea's, whose interval is per run) share one measurement,
/// as a pass's allocations follow its shapes, not its values.
pub fn measure(
    schedule: Schedule,
    runs: Vec<usize>,
    device: &burn::tensor::Device,
    f: impl FnOnce() -> Pass,
    alone: impl Fn(usize) -> Option<usize>,
) -> Measured {
    let start = Instant::now();
    let n = runs.len().max(1);
    let (pass, whole) = if n == 1 { thread_peak_during(device, f) } else { (f(), None) };
    let seconds = (!cube_device(device)).then(|| start.elapsed().as_secs_f64() / n as f64);
    let peak_bytes = if !metered(device) {
        vec![None; runs.len()]
    } else if n == 1 {
        vec![whole.map(|b| b as u64)]
    } else {
        let mut by_shape: Vec<(usize, Option<u64>)> = Vec::new();
        (0..runs.len())
            .map(|row| {
                let shape = row_shape(&schedule, row);
                if let Some(&(_, b)) = by_shape.iter().find(|(s, _)| *s == shape) {
                    return b;
                }
                let b = alone(row).map(|b| b as u64);
                by_shape.push((shape, b));
                b
            })
            .collect()
    };
    Measured { schedule, runs, pass, peak_bytes, seconds }
}

/// What a row's pass allocates depends on: the idea's interval of that run (other schedules
/// are one shape for every row).
fn row_shape(schedule: &Schedule, row: usize) -> usize {
    match schedule {
        Schedule::Idea { ks } => ks[row],
        _ => 0,
    }
}

/// The peak heap bytes of `pass` on run `run` of the population alone: its parameters and
/// batch rows are taken before the measurement starts.
pub fn peak_alone(
    params: &[Tensor<3>],
    batch: &Batch,
    run: usize,
    pass: impl FnOnce(&[Tensor<3>], &Batch) -> Pass,
) -> Option<usize> {
    let p: Vec<Tensor<3>> = params.iter().map(|t| rows(t, &[run])).collect();
    let b = batch.rows(&[run]);
    thread_peak_during(&params[0].device(), || pass(&p, &b)).1
}

/// Run `schedule` on the runs `runs` of the population and measure it.
fn run_on(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    schedule: Schedule,
    runs: Vec<usize>,
    iters: usize,
) -> Measured {
    let p: Vec<Tensor<3>> = params.iter().map(|t| rows(t, &runs)).collect();
    let b = batch.rows(&runs);
    let one = |row: usize| peak_alone(params, batch, runs[row], |p, b| schedule.run(model, p, b, iters));
    measure(schedule.clone(), runs.clone(), &params[0].device(), || schedule.run(model, &p, &b, iters), one)
}

/// The exact schedules a frontier probe runs besides dense BPTT: the grid on every run, and
/// revolve at the budget of each interval the runs chose that the grid lacks, on the runs
/// that chose it.
pub fn exact_passes(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    (k_max, iters): (usize, usize),
    chosen: &[usize],
) -> Vec<Measured> {
    let r = params[0].dims()[0];
    let t = batch.t();
    let g = grid(t, k_max);
    let all: Vec<usize> = (0..r).collect();
    let mut out = Vec::new();
    let on_grid: Vec<Schedule> = (g.fixed_interval_ks.iter().map(|&k| Schedule::FixedInterval { k }))
        .chain(g.revolve_slots.iter().map(|&slots| Schedule::Revolve { slots }))
        .collect();
    // Where the model runs plans in its kernel, every grid schedule at once (the population
    // repeated once per schedule); else one by one.
    let plans: Vec<Vec<Action>> = on_grid.iter().filter_map(|s| s.plan(t)).collect();
    let mut together = plans_at_each(model, params, batch, &plans).map(Vec::into_iter);
    for schedule in on_grid {
        match together.as_mut().and_then(Iterator::next) {
            Some(pass) => {
                let alone = |run: usize| peak_alone(params, batch, run, |p, b| schedule.run(model, p, b, iters));
                out.push(measure(schedule.clone(), all.clone(), &params[0].device(), || pass, alone));
            }
            None => out.push(run_on(model, params, batch, schedule, all.clone(), iters)),
        }
    }
    let mut extra: Vec<usize> = chosen
        .iter()
        .filter(|&&k| k > 1)
        .map(|&k| slots_for_budget(budget_of_interval(t, k)))
        .filter(|s| !g.revolve_slots.contains(s))
        .collect();
    extra.sort_unstable();
    extra.dedup();
    for slots in extra {
        let runs: Vec<usize> =
            (0..r).filter(|&i| chosen[i] > 1 && slots_for_budget(budget_of_interval(t, chosen[i])) == slots).collect();
        out.push(run_on(model, params, batch, Schedule::Revolve { slots }, runs, iters));
    }
    out
}

/// Run `run`'s point of a measured pass (None if the pass did not run it), with its
/// gradient's cosine and relative error against dense BPTT.
pub fn point(m: &Measured, run: usize, cos: Option<f64>, rel_err: Option<f64>) -> Option<FrontierPoint> {
    let row = m.runs.iter().position(|&i| i == run)?;
    let c = m.pass.counts[row];
    let (k, slots) = match &m.schedule {
        Schedule::Dense => (None, None),
        Schedule::FixedInterval { k } | Schedule::Reversal { k } => (Some(*k), None),
        Schedule::Revolve { slots } => (None, Some(*slots)),
        Schedule::Idea { ks } => (Some(ks[row]), None),
    };
    Some(FrontierPoint {
        at: ScheduleAt { schedule: m.schedule.kind(), k, slots },
        stored_states: c.stored_states,
        forward_evals: c.forward_evals,
        reversal_evals: c.reversal_evals,
        vjp_steps: c.vjp_steps,
        grad_cos: cos,
        grad_rel_err: rel_err,
        peak_bytes: m.peak_bytes[row],
        seconds: m.seconds,
    })
}
