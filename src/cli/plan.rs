//! `rdbench plan`: write the plan of a bench (or, with `--study`, of a study) for many
//! machines — its first stage, the sweep runs. A knob flag given several comma-separated
//! values (`--tau 0.02,0.08,0.3`; not `--lrs`, whose value is a list) makes a grid: one
//! bench or study per point. `rdbench work` runs a share of a stage, `rdbench merge` checks
//! the records and plans the next stage or builds the reports.

use super::Failure;
use super::args::{PlanArgs, RunArgs};
use super::atomic::AtomicFile;
use crate::outln;
use rdbench_core::config::{KnobKind, knob, parse_value, value_text};
use rdbench_core::plan::{Plan, PlanKind};

/// A point's knob flags: `(config key, text)`, as `RunArgs::texts`.
type Texts = Vec<(String, String)>;

/// The grid's knobs and each point's knob texts (the last axis varies fastest).
fn grid(run: &RunArgs) -> Result<(Vec<String>, Vec<Texts>), String> {
    let mut axes: Vec<String> = Vec::new();
    let mut points = vec![run.texts.clone()];
    for (key, text) in &run.texts {
        let list = matches!(knob(key).map(|k| k.kind), Some(KnobKind::LrList { .. }));
        if list || !text.contains(',') {
            continue;
        }
        let values: Vec<&str> = text.split(',').map(str::trim).collect();
        // Two values that parse to one (0.08 and 0.080) would be one point twice. A value
        // that does not parse is named by the config's own check, later.
        let parsed: Vec<Option<serde_json::Value>> =
            values.iter().map(|v| knob(key).and_then(|k| parse_value(k, v).ok())).collect();
        for (i, v) in values.iter().enumerate() {
            let same = |j: usize| values[j] == *v || (parsed[j].is_some() && parsed[j] == parsed[i]);
            if let Some(j) = (0..i).find(|&j| same(j)) {
                let flag = knob(key).map_or("", |k| k.flag);
                let is = match &parsed[i] {
                    Some(p) if values[j] != *v => format!("{} and {v} are one value ({}),", values[j], value_text(p)),
                    _ => format!("{v} is"),
                };
                return Err(format!("invalid value for {flag}: {is} given twice in the grid {text}"));
            }
        }
        axes.push(key.clone());
        points = points
            .into_iter()
            .flat_map(|texts| {
                values.iter().map(move |v| {
                    texts.iter().map(|(k, t)| (k.clone(), if k == key { v.to_string() } else { t.clone() })).collect()
                })
            })
            .collect();
    }
    Ok((axes, points))
}

pub fn plan(args: &PlanArgs) -> Result<(), Failure> {
    let run = &args.run;
    if args.study {
        super::study::refuse_model_and_policy(run)?;
    }
    let (axes, points) = grid(run)?;
    let kind = if args.study { PlanKind::Study } else { PlanKind::Bench };
    let mut benches = Vec::new();
    for texts in points {
        let point = RunArgs { texts, backend: run.backend.clone(), threads: None, out: run.out.clone(), quiet: true };
        match kind {
            PlanKind::Study => benches.extend(super::study::configs(&point)?),
            PlanKind::Bench => benches.push(point.config()?),
        }
    }
    // The backend is named now so that a plan for a backend this build lacks is refused here.
    let backend = run.backend()?;
    let out = AtomicFile::create(&run.out)?;
    super::run::warn_unreachable_alpha(&benches[0]);
    let plan = Plan::new(kind, &run.backend, benches, axes)?;
    out.commit((plan.to_json() + "\n").as_bytes())?;
    let (n, points) = (plan.stage_runs().len(), plan.points().len());
    let grid = if points > 1 { format!(" ({points} grid points: {})", plan.grid.join(" × ")) } else { String::new() };
    outln!(
        "plan written to {}: {} bench{}{grid}, {n} sweep runs on {} (the full runs are planned by the sweep's merge)",
        run.out.display(),
        plan.benches.len(),
        if plan.benches.len() == 1 { "" } else { "es" },
        backend.name
    );
    outln!("next: rdbench work --plan {} --index I --of N   (I = 0 .. N-1, on any machines)", run.out.display());
    if !run.quiet {
        core_hours(&plan.benches, &backend);
    }
    Ok(())
}

/// What the plan costs in core time: each bench's work units (sweep and full runs) at the
/// speed of one of this machine's cores on the plan's backend, measured just now (the
/// engine's calibration, as `run`'s estimate). A cluster's cores may differ.
fn core_hours(benches: &[rdbench_core::config::BenchConfig], backend: &rdbench_engine::backend::Backend) {
    let (mut mid, mut low, mut high) = (0.0, 0.0, 0.0);
    for cfg in benches {
        let ctx = match cfg.resolve() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no core-hour estimate: {e}");
                return;
            }
        };
        let cal = match futures::executor::block_on(rdbench_engine::calibrate::calibrate_for(&ctx, backend, 1)) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("no core-hour estimate: {e}");
                return;
            }
        };
        let units = rdbench_engine::work::BenchWork::of(&ctx).total();
        let secs = |u: u64, ms: f64| u as f64 * ms / 1000.0;
        mid += secs(units.mid, cal.ms_per_work_unit);
        low += secs(units.low, cal.ms_per_work_unit_min.unwrap_or(cal.ms_per_work_unit));
        high += secs(units.high, cal.ms_per_work_unit_max.unwrap_or(cal.ms_per_work_unit));
    }
    outln!(
        "estimated work ≈ {} of one {} core of this machine ({}–{}; measured just now), {:.2} core-hours: \
         N machines of C such cores take about 1 / (N × C) of it",
        rdbench_page::format::duration(mid),
        backend.name,
        rdbench_page::format::duration(low),
        rdbench_page::format::duration(high),
        mid / 3600.0
    );
}
