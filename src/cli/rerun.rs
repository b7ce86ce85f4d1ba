//! `rdbench validate --rerun` (and `merge --rerun`): train runs of a report (or of a plan's
//! records) again with the engine and compare each with its record (bit for bit on the CPU
//! backend that made it; within the GPU tolerance on a GPU or another backend). Validation
//! only shows that a report agrees with itself; this shows that its runs ran. It draws the
//! runs with a printed seed, states its cost before it starts, names every run that
//! differs, and warns when another build made them.

use super::Failure;
use crate::outln;
use rdbench_core::context::BenchContext;
use rdbench_core::records::RunSpec;
use rdbench_core::rerun::{
    GPU_TOLERANCE, Selection, bench_runs, compare, inexact, parse_selection, run_name, select, study_run_name,
};
use rdbench_engine::backend::Backend;
use rdbench_engine::error::EngineError;
use rdbench_engine::host::{Event, Host};
use rdbench_engine::work::BenchWork;
use rdbench_page::format::duration;
use serde_json::Value;

/// What to re-run and where.
pub struct RerunOpts {
    /// `--rerun`: N, `all` or run names.
    pub selection: String,
    /// `--rerun-seed`: the draw's seed (default: from the clock).
    pub seed: Option<u64>,
    /// The backend to re-run on (CLI name; default: each run's own).
    pub backend: Option<String>,
    /// Threads per population (default: one per core).
    pub threads: Option<u16>,
}

/// One bench report's runs to train again, on one backend.
struct Group<'a> {
    ctx: BenchContext,
    backend: Backend,
    /// Why the runs are compared within the tolerance (made on a GPU, in the browser, or on
    /// another backend); None: made natively on this CPU backend, so bit for bit.
    inexact: Option<&'static str>,
    /// (spec, the report's record as JSON, its name).
    runs: Vec<(RunSpec, &'a Value, String)>,
}

/// The CLI name of the backend a record names (`cpu-flex` → `flex`).
fn cli_backend(name: &str) -> Option<&'static str> {
    match name {
        "cpu-flex" | "" => Some("flex"),
        "cpu-ndarray" => Some("ndarray"),
        "wgpu-vulkan" => Some("vulkan"),
        _ => None,
    }
}

/// The groups to re-run, or why not.
fn groups<'a>(
    args: &RerunOpts,
    selection: &Selection,
    seed: u64,
    reports: &[&'a Value],
    in_study: bool,
) -> Result<Vec<Group<'a>>, String> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for report in reports {
        let (cfg, runs) = bench_runs(report)?;
        let values: &'a [Value] = report["runs"].as_array().map(Vec::as_slice).unwrap_or_default();
        for i in select(&cfg, &runs, selection, seed, in_study)? {
            let r = &runs[i];
            let on = match &args.backend {
                Some(b) => b.clone(),
                None => cli_backend(&r.backend)
                    .ok_or_else(|| {
                        format!(
                            "run {} was trained on {}: re-run it with --backend vulkan",
                            run_name(&r.spec()),
                            r.backend
                        )
                    })?
                    .to_string(),
            };
            let mut backend = rdbench_engine::backend::by_name(&on)?;
            if let Some(t) = args.threads {
                backend.threads = t as usize;
            }
            let platform = report["environment"]["platform"].as_str().unwrap_or_default();
            let inexact = inexact(platform, &r.backend, &backend.name);
            let name = if in_study { study_run_name(&cfg, &r.spec()) } else { run_name(&r.spec()) };
            let entry = (r.spec(), &values[i], name);
            match out.iter_mut().find(|g| g.ctx.cfg == cfg && g.backend.name == backend.name && g.inexact == inexact) {
                Some(g) => g.runs.push(entry),
                None => {
                    let ctx = cfg.resolve().map_err(|e| format!("the report's config: {e}"))?;
                    out.push(Group { ctx, backend, inexact, runs: vec![entry] })
                }
            }
        }
    }
    Ok(out)
}

/// Seconds the groups should take: each (phase, arm)'s work units at the speed calibrated
/// now, split over as many threads as it has runs (none when the calibration fails).
fn estimate(groups: &[Group]) -> Option<(f64, u64)> {
    let (mut seconds, mut units) = (0.0, 0u64);
    for g in groups {
        let threads = g.backend.threads.max(1);
        let cal = futures::executor::block_on(rdbench_engine::calibrate::calibrate_for(&g.ctx, &g.backend, threads));
        let cal = cal.map_err(|e| eprintln!("no time estimate: {e}")).ok()?;
        let mut kinds: Vec<((rdbench_core::records::Phase, rdbench_core::records::Arm), usize)> = Vec::new();
        for (s, _, _) in &g.runs {
            match kinds.iter_mut().find(|(k, _)| *k == (s.phase, s.arm)) {
                Some((_, n)) => *n += 1,
                None => kinds.push(((s.phase, s.arm), 1)),
            }
        }
        let work = BenchWork::of(&g.ctx);
        for ((phase, arm), n) in kinds {
            let u = n as u64 * work.run(arm, phase).mid;
            units += u;
            seconds += u as f64 * cal.ms_per_work_unit / n.min(threads) as f64 / 1000.0;
        }
    }
    Some((seconds, units))
}

/// Compares each run as it finishes.
struct Checker<'a, 'g> {
    group: &'g Group<'a>,
    differing: &'g mut Vec<String>,
    done: &'g mut usize,
    total: usize,
}

impl Host for Checker<'_, '_> {
    fn event(&mut self, event: &Event) {
        let Event::RunFinished(r) = event else { return };
        let Some((_, file, name)) = self.group.runs.iter().find(|(s, _, _)| *s == r.spec()) else { return };
        *self.done += 1;
        let tolerance = self.group.inexact.map(|_| GPU_TOLERANCE);
        let diffs = compare(file, r, tolerance);
        let (k, n) = (*self.done, self.total);
        if diffs.is_empty() {
            let how = if tolerance.is_none() { "bit for bit".to_string() } else { format!("within {GPU_TOLERANCE:e}") };
            outln!("  [{k}/{n}] {name}: the report's, {how}");
        } else {
            eprintln!("  [{k}/{n}] {name} DIFFERS from the report:");
            for d in &diffs {
                eprintln!("      {d}");
            }
            self.differing.push(name.clone());
        }
    }

    fn cancelled(&self) -> bool {
        super::signal::interrupted()
    }
}

/// Re-run what `args` selects of `reports` (bench reports, or a plan's benches as
/// `{"config", "runs"}`; several: a study's, whose runs are named with their bench);
/// `Ok(true)` when every run equals its record.
pub fn rerun(args: &RerunOpts, reports: &[&Value], study: bool) -> Result<bool, Failure> {
    let selection = parse_selection(&args.selection).map_err(|e| format!("invalid value for --rerun: {e}"))?;
    if args.seed.is_some() && !matches!(selection, Selection::Count(_)) {
        return Err("--rerun-seed goes with --rerun N (a draw of N runs)".to_string().into());
    }
    let seed = args.seed.unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        now.as_nanos() as u64 % 1_000_000
    });
    let groups = groups(args, &selection, seed, reports, study)?;
    let total: usize = groups.iter().map(|g| g.runs.len()).sum();
    let of: usize = reports.iter().map(|r| r["runs"].as_array().map_or(0, Vec::len)).sum();
    let names: Vec<&str> = groups.iter().flat_map(|g| g.runs.iter().map(|(_, _, n)| n.as_str())).collect();
    let per = if study { " per bench" } else { "" };
    match selection {
        Selection::Count(n) => eprintln!(
            "re-running {total} of the {of} runs: {n}{per} drawn with seed {seed} (--rerun {n} --rerun-seed {seed} \
             draws them again): {}",
            names.join(", ")
        ),
        Selection::All => eprintln!("re-running all {of} runs"),
        Selection::Named(_) => eprintln!("re-running {total} of the {of} runs: {}", names.join(", ")),
    }
    // Another build may compute other numbers: a difference then says less about the report.
    let this = rdbench_engine::BUILD;
    let mut other: Vec<String> = Vec::new();
    for g in &groups {
        for (_, file, _) in &g.runs {
            let b = file["build"].as_str().unwrap_or_default();
            let b = if b.is_empty() { "none recorded (an older report)".to_string() } else { b.to_string() };
            if b != this && !other.contains(&b) {
                other.push(b);
            }
        }
    }
    if !other.is_empty() {
        eprintln!(
            "warning: the report's runs were made by build {}, this is build {this}: a difference may come from the \
             code rather than the report",
            other.join(", ")
        );
    }
    for g in groups.iter() {
        let Some(why) = g.inexact else { continue };
        eprintln!(
            "note: runs of {} {why}, re-run on {}, are compared within {GPU_TOLERANCE:e} (relative above 1), not bit \
             for bit",
            rdbench_core::study::bench_name(&g.ctx.cfg),
            g.backend.name
        );
    }
    if let Some((seconds, units)) = estimate(&groups) {
        let threads = groups.iter().map(|g| g.backend.threads).max().unwrap_or(1);
        eprintln!(
            "estimated time ≈ {} on {}{}: {units} work units, speed measured just now",
            duration(seconds),
            groups.iter().map(|g| g.backend.name.as_str()).collect::<Vec<_>>().join(", "),
            if threads > 1 { format!(" (up to {threads} threads)") } else { String::new() },
        );
    }
    super::signal::install()?;
    let started = std::time::Instant::now();
    let (mut differing, mut done) = (Vec::new(), 0);
    for g in &groups {
        let specs: Vec<RunSpec> = g.runs.iter().map(|(s, _, _)| s.clone()).collect();
        let mut host = Checker { group: g, differing: &mut differing, done: &mut done, total };
        let result =
            futures::executor::block_on(rdbench_engine::protocol::train_runs(&g.ctx, &g.backend, &specs, &mut host));
        if let Err(stopped) = result {
            return Err(match stopped.reason {
                EngineError::Cancelled => {
                    eprintln!("stopped after {done} of {total} runs re-run");
                    Failure::Interrupted
                }
                e => Failure::Error(format!("re-running {}: {e}", rdbench_core::study::bench_name(&g.ctx.cfg))),
            });
        }
    }
    let took = duration(started.elapsed().as_secs_f64());
    if differing.is_empty() {
        outln!("re-ran {total} run{} in {took}: each is the report's", if total == 1 { "" } else { "s" });
        Ok(true)
    } else {
        eprintln!(
            "{} of the {total} runs re-run in {took} differ from the report: {}",
            differing.len(),
            differing.join(", ")
        );
        Ok(false)
    }
}
