//! `rdbench merge`: check that every run of a plan is recorded exactly once with the plan's
//! config and backend (naming every missing and foreign record; nothing is built from an
//! incomplete merge), then either plan the next stage (the sweep's merge: each arm's best
//! lr) or build the report — the bench's, or the study's of its benches — as `rdbench run`
//! and `rdbench study` build it on one machine.

use super::Failure;
use super::args::{RunArgs, StudyArgs};
use super::atomic::AtomicFile;
use super::work::{read_plan, read_record};
use crate::outln;
use rdbench_core::plan::{Plan, PlanKind};
use rdbench_core::records::{Phase, RunRecord};
use std::path::PathBuf;

/// Flags of `merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The plan whose stage is merged.
    #[arg(long)]
    plan: PathBuf,
    /// Where to write what the merge builds: the next stage's plan (after the sweep), or the
    /// bench or study report (after the full runs).
    #[arg(long)]
    out: PathBuf,
    /// A study's chart (SVG).
    #[arg(long, default_value = "study_chart.svg")]
    chart: PathBuf,
    /// A study's frontier chart (SVG).
    #[arg(long, default_value = "study_frontier.svg")]
    frontier_chart: PathBuf,
    /// Record files, or directories of them (every `*.json` inside).
    #[arg(required = true, value_name = "RECORDS")]
    records: Vec<PathBuf>,
}

/// Every record in `paths` (files, or directories of `*.json` files), with where it is.
fn read_records(paths: &[PathBuf]) -> Result<Vec<(String, RunRecord)>, String> {
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("cannot read the directory {}: {e}", p.display()))?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()
                .map_err(|e| format!("cannot read the directory {}: {e}", p.display()))?;
            // Temporary files of writes in flight end in `.tmp-<pid>`, not `.json`.
            inside.retain(|f| f.extension().is_some_and(|x| x == "json"));
            inside.sort();
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    files.iter().map(|f| Ok((f.display().to_string(), read_record(f)?))).collect()
}

/// The environment of a merged bench: the backend as the merging machine resolves the plan's,
/// and, for times, the sums of its runs' wall times (compute time, not elapsed time: the runs
/// ran on many machines at once).
fn environment(backend: &rdbench_engine::backend::Backend, runs: &[RunRecord]) -> rdbench_core::report::Environment {
    let mut phases: Vec<(String, f64)> = Vec::new();
    for r in runs {
        let key = format!("{}_{}", r.arm.as_str(), r.phase.as_str());
        match phases.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s += r.wall_time_s,
            None => phases.push((key, r.wall_time_s)),
        }
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let total = phases.iter().map(|(_, s)| s).sum();
    rdbench_engine::protocol::environment(backend, now, total, phases, 0)
}

pub fn merge(args: &MergeArgs) -> Result<(), Failure> {
    let plan = read_plan(&args.plan)?;
    let backend = rdbench_engine::backend::by_name(&plan.backend)?;
    // Outputs are checked writable before the records are read.
    let study_outputs = (plan.stage == Phase::Full && plan.kind == PlanKind::Study)
        .then(|| {
            let args = study_args(args);
            super::study::Outputs::create(&args).map(|o| (args, o))
        })
        .transpose()?;
    let out = if study_outputs.is_none() { Some(AtomicFile::create(&args.out)?) } else { None };
    let records = read_records(&args.records)?;
    let n_records = records.len();
    let checked = plan.check(records, &backend.name).map_err(|problems| {
        format!("the records do not complete the plan {}; nothing was written\n{problems}", args.plan.display())
    })?;
    let used: usize = checked.iter().map(Vec::len).sum();
    if used < n_records {
        eprintln!("{} records of runs a later stage may plan were left aside", n_records - used);
    }
    match (plan.stage, study_outputs, out) {
        (Phase::Sweep, _, Some(out)) => next_stage(&plan, &checked, out, args),
        (_, Some((study_args, outputs)), _) => {
            let texts: Vec<String> = plan
                .benches
                .iter()
                .zip(checked)
                .map(|(cfg, runs)| {
                    let env = environment(&backend, &runs);
                    rdbench_core::report::build(cfg, runs, Some(env)).to_json()
                })
                .collect();
            let study = rdbench_core::study::build_study(&texts)?;
            super::study::write(&study_args, &study, outputs, None)
        }
        (_, None, Some(out)) => {
            let runs = checked.into_iter().next().expect("a bench plan has one bench");
            let env = environment(&backend, &runs);
            let report = rdbench_core::report::build(&plan.benches[0], runs, Some(env));
            out.commit((report.to_json() + "\n").as_bytes())?;
            crate::out!("{}", crate::summary::bench::render(&report));
            outln!("report written to {}", args.out.display());
            Ok(())
        }
        (_, None, None) => unreachable!("one output is always created"),
    }
}

/// The sweep's merge: plan the full runs at each arm's best lr and write that plan.
fn next_stage(plan: &Plan, checked: &[Vec<RunRecord>], out: AtomicFile, args: &MergeArgs) -> Result<(), Failure> {
    let next = plan.next(checked)?;
    out.commit((next.to_json() + "\n").as_bytes())?;
    for (cfg, [b, i]) in next.benches.iter().zip(&next.best_lrs) {
        outln!("{}: best lr baseline {b}, idea {i}", rdbench_core::study::bench_name(cfg));
    }
    let path = args.out.display();
    outln!("full stage planned in {path}: {} runs", next.stage_runs().len());
    outln!("next: rdbench work --plan {path} --index I --of N, then rdbench merge --plan {path} --out REPORT RECORDS");
    Ok(())
}

/// The study's output flags, as `write` takes them.
fn study_args(args: &MergeArgs) -> StudyArgs {
    let run = RunArgs { texts: Vec::new(), backend: String::new(), threads: None, out: args.out.clone(), quiet: true };
    StudyArgs { run, chart: args.chart.clone(), frontier_chart: args.frontier_chart.clone(), from_reports: Vec::new() }
}
