//! `rdbench merge`: check that every run of a plan is recorded exactly once with the plan's
//! config and backend, by this build (naming every missing and foreign record, and setting
//! aside those of another build; nothing is built from an incomplete merge), and that a full
//! plan's best lrs are those its sweep records give; then either plan the next stage (the
//! sweep's merge: each arm's best lr) or build the report — the bench's, or the study's of
//! its benches — as `rdbench run` and `rdbench study` build it on one machine.

use super::Failure;
use super::args::{RunArgs, StudyArgs};
use super::atomic::AtomicFile;
use super::work::{read_plan, read_record};
use crate::outln;
use rdbench_core::plan::{Plan, PlanKind};
use rdbench_core::records::{Phase, RunRecord};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Flags of `merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The plan whose stage is merged.
    #[arg(long)]
    plan: PathBuf,
    /// Where to write what the merge builds: the next stage's plan (after the sweep), or the
    /// bench or study report (after the full runs; in a grid, one per point, its label before
    /// the extension: bench_report.tau0.02.json).
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
    /// Before building anything, train records of the plan again and compare them with the
    /// records (as `validate --rerun`): N drawn per bench, `all`, or runs named
    /// TRACK/MODEL/POLICY/ARM/PHASE/LR/SEED; any that differs and nothing is written.
    #[arg(long, value_name = "N|all|RUNS")]
    rerun: Option<String>,
    /// Seed of the draw of `--rerun N` (default: one from the clock, printed).
    #[arg(long, value_name = "SEED", requires = "rerun")]
    rerun_seed: Option<u64>,
}

/// The record files of `paths` (files, or directories of `*.json` files). A file reached
/// twice (a path given twice, a file given with its directory) is refused: it would count
/// as a run recorded twice.
fn record_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let real: Vec<PathBuf> = paths.iter().map(|p| p.canonicalize().unwrap_or_else(|_| p.clone())).collect();
    let mut seen: HashMap<&Path, &Path> = HashMap::new();
    for (p, r) in paths.iter().zip(&real) {
        if let Some(first) = seen.insert(r, p) {
            return Err(format!("RECORDS names {} twice ({} and {})", r.display(), first.display(), p.display()));
        }
    }
    let dirs: HashMap<&Path, &Path> =
        paths.iter().zip(&real).filter(|(p, _)| p.is_dir()).map(|(p, r)| (r.as_path(), p.as_path())).collect();
    for (p, r) in paths.iter().zip(&real) {
        if let Some(dir) = r.parent().and_then(|d| dirs.get(d)).filter(|_| !p.is_dir()) {
            return Err(format!(
                "RECORDS names {}, which is in {}, also given: it would be read twice",
                p.display(),
                dir.display()
            ));
        }
    }
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
    Ok(files)
}

/// Every record of `files`, with where it is.
fn read_records(files: &[PathBuf]) -> Result<Vec<(String, RunRecord)>, String> {
    files.iter().map(|f| Ok((f.display().to_string(), read_record(f)?))).collect()
}

/// Refuse, before any work, outputs that clash with one another or with an input (the plan,
/// a record), and one written into a records directory, where a later merge would read it
/// as a record.
fn refuse_clashes(
    args: &MergeArgs,
    plan: &Plan,
    points: &[(String, Vec<usize>)],
    files: &[PathBuf],
) -> Result<(), String> {
    let mut outputs: Vec<(String, PathBuf)> = Vec::new();
    match (plan.stage, plan.kind) {
        (Phase::Sweep, _) => outputs.push(("--out".into(), args.out.clone())),
        (Phase::Full, PlanKind::Bench) => {
            outputs.extend(points.iter().map(|(label, _)| ("--out".into(), at_point(&args.out, label))))
        }
        (Phase::Full, PlanKind::Study) => {
            for (label, _) in points {
                let study = study_args(args, label);
                outputs.extend(super::study::Outputs::named(&study).map(|(flag, p)| (flag, p.to_path_buf())));
            }
        }
    }
    let mut inputs: Vec<(String, &Path)> = vec![("the plan (--plan)".into(), args.plan.as_path())];
    inputs.extend(files.iter().map(|f| ("a record (RECORDS)".to_string(), f.as_path())));
    let named: Vec<(String, &Path)> = outputs.iter().map(|(flag, p)| (flag.clone(), p.as_path())).collect();
    super::atomic::refuse_clashes(&named, &inputs)?;
    let dirs: Vec<PathBuf> = args.records.iter().filter(|d| d.is_dir()).filter_map(|d| d.canonicalize().ok()).collect();
    for (flag, out) in &outputs {
        let json = out.extension().is_some_and(|x| x == "json");
        if json && super::atomic::folder_of(out).canonicalize().is_ok_and(|f| dirs.contains(&f)) {
            return Err(format!(
                "{flag} names {}, in a records directory (RECORDS), whose every *.json a merge reads as a record: \
                 write it elsewhere; nothing was written",
                out.display()
            ));
        }
    }
    Ok(())
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

/// `path` at a grid point: its label inserted before the extension
/// (`bench_report.tau0.02.json`); `path` itself without a grid.
fn at_point(path: &Path, label: &str) -> PathBuf {
    if label.is_empty() {
        return path.to_path_buf();
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    path.with_file_name(format!("{stem}.{label}{ext}"))
}

/// What a grid point's merge writes.
enum Output {
    Bench(PathBuf, AtomicFile),
    Study(Box<StudyArgs>, super::study::Outputs),
}

pub fn merge(args: &MergeArgs) -> Result<(), Failure> {
    let plan = read_plan(&args.plan)?;
    let backend = rdbench_engine::backend::by_name(&plan.backend)?;
    let points = plan.points();
    let files = record_files(&args.records)?;
    refuse_clashes(args, &plan, &points, &files)?;
    // Every output is checked writable before the records are read.
    let next = (plan.stage == Phase::Sweep).then(|| AtomicFile::create(&args.out)).transpose()?;
    let mut outputs = Vec::new();
    if plan.stage == Phase::Full {
        for (label, _) in &points {
            outputs.push(match plan.kind {
                PlanKind::Bench => {
                    let path = at_point(&args.out, label);
                    Output::Bench(path.clone(), AtomicFile::create(&path)?)
                }
                PlanKind::Study => {
                    let study = study_args(args, label);
                    let files = super::study::Outputs::create(&study)?;
                    Output::Study(Box::new(study), files)
                }
            });
        }
    }
    let records = read_records(&files)?;
    let n_records = records.len();
    let checked = plan.check(records, &backend.name, rdbench_engine::BUILD).map_err(|problems| {
        format!("the records do not complete the plan {}; nothing was written\n{problems}", args.plan.display())
    })?;
    // The full runs trained at the plan's best lrs: those its own sweep records give, or the
    // comparison would be at another lr than the protocol's.
    if plan.stage == Phase::Full {
        plan.check_best_lrs(&checked)
            .map_err(|e| format!("the plan {}: {e}; nothing was written", args.plan.display()))?;
    }
    if let Some(selection) = &args.rerun {
        rerun(&plan, &checked, selection, args.rerun_seed)?;
    }
    let used: usize = {
        let mut keys: Vec<&str> = plan.runs.iter().map(|r| r.key.as_str()).collect();
        keys.sort();
        keys.dedup();
        keys.len()
    };
    if used < n_records {
        eprintln!("{} records of runs a later stage may plan were left aside", n_records - used);
    }
    if let Some(out) = next {
        return next_stage(&plan, &checked, out, args);
    }
    let benches = super::study::resolved(&plan.benches)?;
    let report = |b: usize| {
        let runs = checked[b].clone();
        rdbench_core::report::build(&benches[b], runs.clone(), Some(environment(&backend, &runs)))
    };
    for ((_, benches), output) in points.iter().zip(outputs) {
        match output {
            Output::Bench(path, file) => {
                let report = report(benches[0]);
                file.commit((report.to_json() + "\n").as_bytes())?;
                crate::out!("{}", crate::summary::bench::render(&report));
                outln!("report written to {}", path.display());
            }
            Output::Study(study_args, files) => {
                let texts: Vec<String> = benches.iter().map(|&b| report(b).to_json()).collect();
                let study = rdbench_core::study::build_study(&texts)?;
                super::study::write(&study_args, &study, files, None)?;
            }
        }
    }
    Ok(())
}

/// Train records of `checked` (each bench's, once per run hash: grid points that share
/// their runs share their records) again and compare them; refuse the merge if any differs.
fn rerun(plan: &Plan, checked: &[Vec<RunRecord>], selection: &str, seed: Option<u64>) -> Result<(), Failure> {
    let mut benches: Vec<serde_json::Value> = Vec::new();
    let mut hashes: Vec<String> = Vec::new();
    for (cfg, recs) in plan.benches.iter().zip(checked) {
        if recs.is_empty() || hashes.contains(&cfg.run_hash()) {
            continue;
        }
        hashes.push(cfg.run_hash());
        benches.push(serde_json::json!({ "config": cfg, "runs": recs }));
    }
    let reports: Vec<&serde_json::Value> = benches.iter().collect();
    let opts = super::rerun::RerunOpts {
        selection: selection.to_string(),
        seed,
        backend: Some(plan.backend.clone()),
        threads: None,
    };
    if super::rerun::rerun(&opts, &reports, plan.kind == PlanKind::Study)? {
        Ok(())
    } else {
        Err("records differ from their runs trained again (above); nothing was written".to_string().into())
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

/// A grid point's study output flags, as `write` takes them.
fn study_args(args: &MergeArgs, label: &str) -> StudyArgs {
    let out = at_point(&args.out, label);
    let run = RunArgs { texts: Vec::new(), backend: String::new(), threads: None, out, quiet: true };
    let (chart, frontier_chart) = (at_point(&args.chart, label), at_point(&args.frontier_chart, label));
    StudyArgs { run, chart, frontier_chart, from_reports: Vec::new() }
}
