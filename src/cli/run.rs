//! `rdbench run`: the whole bench, with its estimate, progress, summary and report. Nothing
//! is lost: the report's path is checked before training, every finished run is journaled
//! beside it, Ctrl-C stops at the next step and the same command resumes from the journal,
//! and the report is written whole or not at all.

use super::Failure;
use super::args::RunArgs;
use super::atomic::AtomicFile;
use super::progress::CliHost;
use crate::cli::journal::{self, Journal};
use crate::outln;
use rdbench_core::config::BenchConfig;
use rdbench_core::context::BenchContext;
use rdbench_core::records::{RunRecord, RunSpec, full_runs, sweep_runs};
use rdbench_core::report::Report;
use rdbench_engine::backend::Backend;
use rdbench_engine::error::EngineError;
use rdbench_engine::protocol::{ARMS, run_bench};
use rdbench_engine::work::{BenchWork, Units};
use rdbench_page::format::{duration, num};
use std::path::Path;

/// Whether a bench of `cfg` on `backend` could train the run of `r`, of any build: the same
/// backend and run hash, and a run this config's protocol plans.
pub(super) fn plans<'a>(cfg: &'a BenchConfig, backend: &'a Backend) -> impl Fn(&RunRecord) -> bool + 'a {
    let hash = cfg.run_hash();
    let sweep: Vec<RunSpec> = ARMS.iter().flat_map(|&a| sweep_runs(a, &cfg.lrs, cfg.n_sweep_seeds)).collect();
    move |r| {
        let spec = r.spec();
        // A full run's lr is the arm's best, known once its sweep is: any lr of the grid.
        r.backend == backend.name
            && r.run_hash == hash
            && (sweep.contains(&spec)
                || (cfg.lrs.contains(&r.lr) && full_runs(r.arm, r.lr, cfg.n_seeds).contains(&spec)))
    }
}

/// The runs of `prior` that a bench of `cfg` on `backend` reuses: the page's rule (same arm,
/// phase, lr, seed, backend, run hash and build), for runs this config's protocol can train.
fn reusable<'a>(cfg: &BenchConfig, backend: &Backend, prior: &'a [RunRecord]) -> Vec<&'a RunRecord> {
    let planned = plans(cfg, backend);
    let mut out: Vec<&RunRecord> = Vec::new();
    for r in prior.iter().filter(|r| r.build == rdbench_engine::BUILD && planned(r)) {
        let spec = r.spec();
        if !out.iter().any(|o| o.is_run(&spec, &r.backend, &r.run_hash)) {
            out.push(r);
        }
    }
    out
}

/// Refuse, before any work, a journal that holds `foreign` runs no bench of this command
/// plans (another config, lr grid or backend; `unused` says so: "this bench would not
/// reuse"): writing the report removes the journal, and they would go with it.
pub(super) fn refuse_foreign(foreign: usize, path: &Path, unused: &str) -> Result<(), String> {
    if foreign == 0 {
        return Ok(());
    }
    let (s, are) = if foreign == 1 { ("", "is") } else { ("s", "are") };
    Err(format!(
        "the journal {} holds {foreign} finished run{s} that {unused} (another config, lr grid or backend): it \
         belongs to another bench, whose runs {are} kept. Name another --out for this one (or move the journal \
         away to start afresh); nothing was trained",
        path.display()
    ))
}

/// The journal's finished runs of this bench, in words: `kept` of the journal's runs.
pub(super) fn kept_text(kept: usize, journal: &Journal<RunRecord>) -> String {
    let (s, path) = (if kept == 1 { "" } else { "s" }, journal.path().display());
    match journal.held() {
        held if held > kept => {
            format!("{kept} finished run{s} of this bench kept in {path}, which holds {held} in all")
        }
        _ => format!("{kept} finished run{s} kept in {path}"),
    }
}

/// Say how many runs of the journal at `path` another build made: they are set aside (never
/// reused: that build's numbers may differ) and trained again.
pub(super) fn say_other_builds(prior: &[RunRecord], path: &std::path::Path) {
    let mut builds: Vec<&str> = Vec::new();
    let mut n = 0;
    for r in prior.iter().filter(|r| r.build != rdbench_engine::BUILD) {
        n += 1;
        let b = if r.build.is_empty() { "none recorded" } else { r.build.as_str() };
        if !builds.contains(&b) {
            builds.push(b);
        }
    }
    if n > 0 {
        let s = if n == 1 { "" } else { "s" };
        eprintln!(
            "the journal {} holds {n} run{s} of another build ({}; this is {}): set aside, not reused",
            path.display(),
            builds.join(", "),
            rdbench_engine::BUILD
        );
    }
}

/// The warning before a bench whose pairs can never reach α (the page shows the same).
pub(super) fn warn_unreachable_alpha(cfg: &BenchConfig) {
    if let Some(w) = rdbench_core::stats::permutation::unreachable_alpha_warning(cfg.n_seeds, cfg.alpha) {
        eprintln!("warning: {w}");
    }
}

/// Before training: the estimate (the engine's calibration, as the page's), less the work of
/// the reused runs. Returns the estimated seconds.
fn estimate(ctx: &BenchContext, backend: &Backend, reused: &[&RunRecord], quiet: bool, prefix: &str) -> Option<f64> {
    if quiet {
        return None;
    }
    let workers = backend.threads.max(1);
    let cal = futures::executor::block_on(rdbench_engine::calibrate::calibrate_for(ctx, backend, workers));
    let cal = match cal {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{prefix}no time estimate: {e}");
            return None;
        }
    };
    let work = BenchWork::of(ctx);
    let total = work.total();
    let done: Units = reused.iter().map(|r| work.run(r.arm, r.phase)).sum();
    let units = total - done;
    let at = |u: u64, ms: f64| u as f64 * ms / workers as f64 / 1000.0;
    let seconds = at(units.mid, cal.ms_per_work_unit);
    let (low, high) = (
        at(units.low, cal.ms_per_work_unit_min.unwrap_or(cal.ms_per_work_unit)),
        at(units.high, cal.ms_per_work_unit_max.unwrap_or(cal.ms_per_work_unit)),
    );
    let reuse = if done.mid > 0 { format!(" (of {}; the rest is reused)", total.mid) } else { String::new() };
    eprintln!(
        "{prefix}estimated time ≈ {} ({}–{}) on {}{}: {} work units{reuse} × {} ms{}, speed measured just now",
        duration(seconds),
        duration(low),
        duration(high),
        backend.name,
        if workers > 1 { format!(" ({workers} threads)") } else { String::new() },
        units.mid,
        num(cal.ms_per_work_unit),
        if workers > 1 { format!(" ÷ {workers}") } else { String::new() },
    );
    if seconds > 3600.0 {
        eprintln!(
            "{prefix}that is long: Ctrl-C stops it and keeps every finished run; the same command resumes from them"
        );
    }
    Some(seconds)
}

/// One bench, journaled in `journal`, reusing what `prior` (the journal as it was) holds of
/// it. Interrupted, it says where the runs are and how to resume.
pub(super) fn bench(
    ctx: &BenchContext,
    args: &RunArgs,
    backend: &Backend,
    journal: &mut Journal<RunRecord>,
    prior: &[RunRecord],
    prefix: &str,
) -> Result<Report, Failure> {
    let cfg = &ctx.cfg;
    let reused = reusable(cfg, backend, prior);
    if !reused.is_empty() {
        let n = reused.len();
        let (s, are) = if n == 1 { ("", "is") } else { ("s", "are") };
        eprintln!("{prefix}resuming: {n} finished run{s} in {} {are} reused", journal.path().display());
    }
    let estimate = estimate(ctx, backend, &reused, args.quiet, prefix);
    let total = 2 * (cfg.lrs.len() * cfg.n_sweep_seeds + cfg.n_seeds);
    let metric = cfg.task().map_or("MSE", |t| t.metric());
    let held = journal.held();
    let mut host = CliHost::new(args.quiet, prefix.to_string(), metric, journal, estimate, (reused.len(), total));
    let reused: Vec<RunRecord> = reused.into_iter().cloned().collect();
    let result = futures::executor::block_on(run_bench(ctx, backend, &reused, &mut host));
    host.finish();
    result.map_err(|stopped| {
        // The runs reused and those journaled since: every run of this bench the journal holds.
        let kept = kept_text(reused.len() + journal.held() - held, journal);
        match stopped.reason {
            EngineError::Cancelled => {
                eprintln!("{prefix}stopped: {kept}; run the same command again to resume from them");
                Failure::Interrupted
            }
            e => Failure::Error(format!("{e} ({kept}; the same command resumes from them)")),
        }
    })
}

pub fn run(args: &RunArgs) -> Result<(), Failure> {
    let cfg = args.config()?;
    // Resolved once (its track built); everything below takes the bench.
    let ctx = cfg.resolve().map_err(|e| e.to_string())?;
    let backend = args.backend()?;
    // Checked before any work: a config that will not fit in memory is refused now.
    let fp = super::memory::check(&ctx, backend.threads.max(1))?;
    if !args.quiet {
        eprintln!("{}", fp.line(false));
    }
    // Checked before any training: a report that cannot be written is refused now, and so is
    // a journal there that another bench's runs are in.
    let out = AtomicFile::create(&args.out)?;
    let journal_path = journal::path_beside(&args.out, "runs");
    let (mut journal, prior) = Journal::<RunRecord>::open(&journal_path)?;
    if let Some(note) = journal.cut_note() {
        eprintln!("{note}");
    }
    let planned = plans(&cfg, &backend);
    refuse_foreign(prior.iter().filter(|r| !planned(r)).count(), &journal_path, "this bench would not reuse")?;
    super::signal::install()?;
    say_other_builds(&prior, &journal_path);
    warn_unreachable_alpha(&cfg);
    let (reused, held) = (reusable(&cfg, &backend, &prior).len(), journal.held());
    let report = bench(&ctx, args, &backend, &mut journal, &prior, "")?;
    out.commit((report.to_json() + "\n").as_bytes()).map_err(|e| {
        let kept = reused + journal.held() - held;
        let total = report.runs.as_ref().map_or(kept, Vec::len);
        let then = if kept >= total { "writes the report from them without training" } else { "trains the rest" };
        format!(
            "{e}\n{}; once {} can be written, this command {then}:\n  {}",
            kept_text(kept, &journal),
            args.out.display(),
            super::this_command()
        )
    })?;
    journal::remove(&journal_path)?;
    crate::out!("{}", crate::summary::bench::render(&report));
    if crate::alloc_count::installed() {
        outln!(
            "peak memory: {} measured (heap, the whole process), {} estimated before the run",
            rdbench_core::footprint::bytes_text(crate::alloc_count::peak() as u64),
            rdbench_core::footprint::bytes_text(fp.peak_bytes_total)
        );
    }
    outln!("report written to {}", args.out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdbench_core::records::{Arm, Phase};

    fn rec(arm: Arm, phase: Phase, lr: f64, seed: u64, backend: &str, hash: &str) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "arm": arm, "phase": phase, "lr": lr, "seed": seed, "metric": 0.1, "diverged": false,
            "diverged_at": null, "loss_curve": [0.1], "wall_time_s": 1.0, "population": 1,
            "mean_stored_states": null, "probes": []
        }))
        .unwrap();
        r.backend = backend.into();
        r.run_hash = hash.into();
        r.build = rdbench_engine::BUILD.into();
        r
    }

    #[test]
    fn reuses_the_runs_of_this_bench_on_this_backend_once_each() {
        let cfg = BenchConfig { n_seeds: 2, n_sweep_seeds: 1, lrs: vec![0.003, 0.01], ..BenchConfig::default() };
        let b = rdbench_engine::backend::cpu("flex").unwrap();
        let h = cfg.run_hash();
        let prior = [
            rec(Arm::Baseline, Phase::Sweep, 0.003, 1000, "cpu-flex", &h),
            rec(Arm::Baseline, Phase::Sweep, 0.003, 1000, "cpu-flex", &h), // twice
            rec(Arm::Idea, Phase::Full, 0.01, 1, "cpu-flex", &h),
            rec(Arm::Idea, Phase::Full, 0.01, 2, "cpu-flex", &h), // seed 2 of 2
            rec(Arm::Idea, Phase::Sweep, 0.03, 1000, "cpu-flex", &h), // lr not in the grid
            rec(Arm::Idea, Phase::Sweep, 0.01, 1000, "webgpu", &h), // another backend
            rec(Arm::Idea, Phase::Sweep, 0.01, 1000, "cpu-flex", "0000"), // another config
            RunRecord { build: "0.0.1+0000".into(), ..rec(Arm::Idea, Phase::Full, 0.01, 0, "cpu-flex", &h) }, // another build
        ];
        let got: Vec<(Arm, Phase, u64)> = reusable(&cfg, &b, &prior).iter().map(|r| (r.arm, r.phase, r.seed)).collect();
        assert_eq!(got, [(Arm::Baseline, Phase::Sweep, 1000), (Arm::Idea, Phase::Full, 1)]);
    }
}
