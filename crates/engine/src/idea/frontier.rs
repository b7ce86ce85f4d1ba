//! The frontier at one probe (issue 17): every gradient schedule run on the probe batch and
//! the model of the moment, with its measured peak bytes and wall time, and each run's
//! points from what the passes counted. Which schedules at which budgets is
//! `rdbench_core::frontier::grid`; the passes the probe runs anyway (dense, the idea,
//! reversal at the probed intervals) are points too.

use crate::batch::{Batch, rows};
use crate::memory::thread_peak_during;
use crate::model::RecurrentModel;
use crate::model::kernels::cube_device;
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
    /// Peak heap bytes per run (the pass's peak over its runs), where measured.
    pub peak_bytes: Option<u64>,
    /// Wall time per run, seconds (None on a GPU, where a pass only queues work).
    pub seconds: Option<f64>,
}

/// Run `f` (a pass over `runs` runs on `device`) and measure it.
pub fn measure(
    schedule: Schedule,
    runs: Vec<usize>,
    device: &burn::tensor::Device,
    f: impl FnOnce() -> Pass,
) -> Measured {
    let start = Instant::now();
    let (pass, peak) = thread_peak_during(device, f);
    let n = runs.len().max(1);
    let seconds = (!cube_device(device)).then(|| start.elapsed().as_secs_f64() / n as f64);
    Measured { schedule, runs, pass, peak_bytes: peak.map(|b| (b / n) as u64), seconds }
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
    measure(schedule.clone(), runs, &params[0].device(), || schedule.run(model, &p, &b, iters))
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
    for &k in &g.fixed_interval_ks {
        out.push(run_on(model, params, batch, Schedule::FixedInterval { k }, all.clone(), iters));
    }
    for &slots in &g.revolve_slots {
        out.push(run_on(model, params, batch, Schedule::Revolve { slots }, all.clone(), iters));
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
        peak_bytes: m.peak_bytes,
        seconds: m.seconds,
    })
}
