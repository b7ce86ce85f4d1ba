//! `rdbench study`: the bench on every track, model and policy (one track with `--track`),
//! pooled into `study_report.json`, its chart and each model's frontier chart; or the same
//! from bench reports made separately (`--from-reports`). Like `run`, it checks its outputs
//! before training, journals every finished run and every finished bench, stops at Ctrl-C
//! and resumes.

use super::Failure;
use super::args::{RunArgs, StudyArgs};
use super::atomic::AtomicFile;
use super::run::{bench, warn_unreachable_alpha};
use crate::cli::journal::{self, Journal};
use crate::outln;
use rdbench_core::config::BenchConfig;
use rdbench_core::context::BenchContext;
use rdbench_core::records::RunRecord;
use rdbench_core::report::Report;
use rdbench_core::study::StudyReport;
use rdbench_engine::backend::Backend;
use std::path::{Path, PathBuf};

pub fn study(args: &StudyArgs) -> Result<(), Failure> {
    use rdbench_core::study::{bench_name, build_study};
    let run = &args.run;
    refuse_model_and_policy(run)?;
    if !args.from_reports.is_empty() {
        let inputs: Vec<(String, &Path)> =
            args.from_reports.iter().map(|p| ("read by --from-reports".to_string(), p.as_path())).collect();
        let outputs = Outputs::check(args, &inputs)?;
        let texts = from_reports(run, &args.from_reports)?;
        return write(args, &build_study(&texts)?, outputs, None);
    }
    let benches = resolved(&configs(run)?)?;
    let backend = run.backend()?;
    fits(&benches, &backend, bench_name)?;
    let outputs = Outputs::check(args, &[])?;
    let (texts, runs_path, benches_journal) = run_benches(&benches, run, &backend, bench_name)?;
    let study = build_study(&texts)?;
    write(args, &study, outputs, Some((&runs_path, &benches_journal)))
}

/// The texts of the bench reports at `paths`, each valid; no knob flag may come with them
/// (the reports carry their configs).
pub(super) fn from_reports(run: &RunArgs, paths: &[PathBuf]) -> Result<Vec<String>, Failure> {
    if let Some((k, _)) = run.texts.first() {
        let flag = rdbench_core::config::knob(k).map_or("", |k| k.flag);
        return Err(format!("{flag} does not go with --from-reports: the reports carry their configs").into());
    }
    let texts = paths
        .iter()
        .map(|p| {
            let text = super::input::read(p, "the report")?;
            valid_bench(&text, &p.display().to_string())?;
            Ok(text)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(texts)
}

/// The benches of `cfgs`, each resolved once (its track built) for everything that follows.
pub(super) fn resolved(cfgs: &[BenchConfig]) -> Result<Vec<BenchContext>, Failure> {
    Ok(cfgs.iter().map(BenchConfig::resolve).collect::<Result<_, _>>().map_err(|e| e.to_string())?)
}

/// Every bench must fit in memory before the first starts.
pub(super) fn fits(
    benches: &[BenchContext],
    backend: &Backend,
    name: fn(&BenchConfig) -> String,
) -> Result<(), Failure> {
    for b in benches {
        super::memory::check(b, backend.threads.max(1)).map_err(|e| format!("{}: {e}", name(&b.cfg)))?;
    }
    Ok(())
}

/// Run the benches of `cfgs` one after another on `backend`, journaling every finished run
/// and every finished bench beside `run.out`, and taking whole the benches a journal
/// already holds (same config, backend and build, and valid). Returns the bench reports'
/// texts in `cfgs`' order, the runs' journal's path and the benches' journal, which the
/// caller removes once its report is written.
pub(super) fn run_benches(
    benches: &[BenchContext],
    run: &RunArgs,
    backend: &Backend,
    name: fn(&BenchConfig) -> String,
) -> Result<(Vec<String>, PathBuf, Journal<Report>), Failure> {
    let (runs_path, benches_path) = (journal::path_beside(&run.out, "runs"), journal::path_beside(&run.out, "benches"));
    let (mut runs_journal, prior_runs) = Journal::<RunRecord>::open(&runs_path)?;
    let (mut benches_journal, prior_benches) = Journal::<Report>::open(&benches_path)?;
    let cfgs: Vec<&BenchConfig> = benches.iter().map(|b| &b.cfg).collect();
    for note in [runs_journal.cut_note(), benches_journal.cut_note()].into_iter().flatten() {
        eprintln!("{note}");
    }
    // Journals another study's runs or benches are in are refused: writing this study's
    // report would remove them.
    let planners: Vec<_> = cfgs.iter().map(|cfg| super::run::plans(cfg, backend)).collect();
    let foreign = prior_runs.iter().filter(|r| !planners.iter().any(|plans| plans(r))).count();
    super::run::refuse_foreign(foreign, &runs_path, "no bench of this study would reuse")?;
    let ours = |r: &Report| {
        r.config.as_ref().is_some_and(|c| cfgs.contains(&c))
            && r.environment.as_ref().is_some_and(|e| e.backend == backend.name)
    };
    let n = prior_benches.iter().filter(|r| !ours(r)).count();
    if n > 0 {
        return Err(format!(
            "the journal {} holds {n} finished bench report(s) of another study (another config or backend), which \
             are kept: name another --out for this one (or move the journal away to start afresh); nothing was \
             trained",
            benches_path.display()
        )
        .into());
    }
    super::run::say_other_builds(&prior_runs, &runs_path);
    // A finished bench is taken whole only from this build, and only if it validates.
    let build_of = |r: &Report| r.environment.as_ref().map_or(String::new(), |e| e.build.clone());
    let other = prior_benches.iter().filter(|r| build_of(r) != rdbench_engine::BUILD).count();
    if other > 0 {
        let (path, this) = (benches_path.display(), rdbench_engine::BUILD);
        eprintln!(
            "the journal {path} holds {other} bench report(s) of another build (this is {this}): set aside, not reused"
        );
    }
    let prior_benches: Vec<Report> =
        prior_benches.into_iter().filter(|r| build_of(r) == rdbench_engine::BUILD).collect();
    for (i, r) in prior_benches.iter().enumerate() {
        let place =
            format!("bench report {} of the journal {} (move it away to start afresh)", i + 1, benches_path.display());
        valid_bench(&r.to_json(), &place)?;
    }
    super::signal::install()?;
    warn_unreachable_alpha(cfgs[0]);

    let mut texts = Vec::with_capacity(cfgs.len());
    for (i, (cfg, ctx)) in cfgs.iter().zip(benches).enumerate() {
        let label = format!("bench {}/{} {}", i + 1, cfgs.len(), name(cfg));
        // A bench finished before an interruption is taken whole: same config, same backend.
        let finished = prior_benches.iter().find(|r| {
            r.config.as_ref() == Some(*cfg) && r.environment.as_ref().is_some_and(|e| e.backend == backend.name)
        });
        let report = match finished {
            Some(r) => {
                eprintln!("{label}: reused from {}", benches_path.display());
                r.clone()
            }
            None => {
                let prefix = format!("{label} | ");
                let r = bench(ctx, run, backend, &mut runs_journal, &prior_runs, &prefix).inspect_err(|_| {
                    if i > 0 {
                        let (n, path) = (if i == 1 { "bench is" } else { "benches are" }, benches_path.display());
                        eprintln!("the {i} finished {n} kept in {path}");
                    }
                })?;
                if let Err(e) = benches_journal.append(&r) {
                    eprintln!("warning: cannot append to the journal {}: {e}", benches_path.display());
                }
                r
            }
        };
        let c = &report.comparison;
        outln!(
            "{label}: {} (p = {}), mechanism {}",
            c.verdict.as_str(),
            c.p_value.map_or("n/a".into(), |p| format!("{p:.4}")),
            if report.mechanism_signature.confirmed { "confirmed" } else { "not confirmed" }
        );
        texts.push(report.to_json());
    }
    Ok((texts, runs_path, benches_journal))
}

/// A bench report a study takes must validate: refused with validate's problems, named by
/// where it came from.
fn valid_bench(text: &str, place: &str) -> Result<(), String> {
    rdbench_core::report::validate_json(text).map(|_| ()).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        format!("{place} does not validate: {} problem(s)\n{}", problems.len(), lines.join("\n"))
    })
}

/// `--model` and `--policy` are not study flags: a study runs every model and policy.
pub(super) fn refuse_model_and_policy(run: &RunArgs) -> Result<(), Failure> {
    if let Some((k, _)) = run.texts.iter().find(|(k, _)| k == "model" || k == "policy") {
        let flag = rdbench_core::config::knob(k).map_or("", |k| k.flag);
        return Err(format!("{flag} is not a study flag: the study runs every model under every policy").into());
    }
    Ok(())
}

/// The configs of the study's benches from the flags: every track (unless --track names
/// one), model and policy. `bench_configs` checks every bench's config before the first
/// trains (rev_ode_small has limits of its own: an even hidden size, r_max at most
/// hidden_size / 2).
pub(super) fn configs(run: &RunArgs) -> Result<Vec<BenchConfig>, Failure> {
    use rdbench_core::study::{all_tracks, bench_configs};
    let base = run.config()?;
    let tracks = if run.texts.iter().any(|(k, _)| k == "track") { vec![base.track.clone()] } else { all_tracks() };
    Ok(bench_configs(&base, &tracks)?)
}

/// The study's three outputs, each checked writable before any work.
pub(super) struct Outputs {
    report: AtomicFile,
    chart: AtomicFile,
    frontier_chart: AtomicFile,
}

impl Outputs {
    /// Each output of `args` with the flag that names it.
    pub(super) fn named(args: &StudyArgs) -> [(String, &Path); 3] {
        [
            ("--out".into(), args.run.out.as_path()),
            ("--chart".into(), args.chart.as_path()),
            ("--frontier-chart".into(), args.frontier_chart.as_path()),
        ]
    }

    /// The outputs of `args` and the study's journals beside `--out`: refused if two name one
    /// file or one is among `inputs`, or if one cannot be written; all before any work.
    fn check(args: &StudyArgs, inputs: &[(String, &Path)]) -> Result<Outputs, Failure> {
        let journals = ["runs", "benches"].map(|kind| journal::path_beside(&args.run.out, kind));
        let mut outputs = Outputs::named(args).to_vec();
        outputs.extend(journals.iter().map(|j| ("the journal beside --out".to_string(), j.as_path())));
        super::atomic::refuse_clashes(&outputs, inputs)?;
        Outputs::create(args)
    }

    /// Check each output writable ([`AtomicFile::create`]).
    pub(super) fn create(args: &StudyArgs) -> Result<Outputs, Failure> {
        Ok(Outputs {
            report: AtomicFile::create(&args.run.out)?,
            chart: AtomicFile::create(&args.chart)?,
            frontier_chart: AtomicFile::create(&args.frontier_chart)?,
        })
    }
}

/// Write each file whole, in order (a failure says where the finished benches are kept and
/// the command that writes the outputs from them), then remove the journals.
pub(super) fn commit<const N: usize>(
    files: [(AtomicFile, Vec<u8>); N],
    journals: Option<(&Path, &Journal<Report>)>,
) -> Result<(), Failure> {
    let kept = |e: String| match journals {
        Some((_, benches)) => format!(
            "{e}\nthe journal {} holds {} finished bench report(s); once the outputs can be written, this command \
             writes them from it without training:\n  {}",
            benches.path().display(),
            benches.held(),
            super::this_command()
        ),
        None => e,
    };
    for (file, bytes) in files {
        file.commit(&bytes).map_err(kept)?;
    }
    if let Some((runs, benches)) = journals {
        journal::remove(runs)?;
        journal::remove(benches.path())?;
    }
    Ok(())
}

/// Draw the charts, write the three files whole, remove the journals (`runs`, `benches`)
/// once they are, and print the summary.
pub(super) fn write(
    args: &StudyArgs,
    study: &StudyReport,
    outputs: Outputs,
    journals: Option<(&Path, &Journal<Report>)>,
) -> Result<(), Failure> {
    use plotters::prelude::*;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1200, 560)).into_drawing_area();
        rdbench_page::study_chart::draw(&root, study, 1.0, false)?;
        root.present().map_err(|e| format!("cannot draw the study chart: {e:?}"))?;
    }
    let mut frontier_svg = String::new();
    {
        // A row of two panels per track.
        let rows = study.frontier.len().div_ceil(2).max(1) as u32;
        let root = SVGBackend::with_string(&mut frontier_svg, (1200, 560 * rows)).into_drawing_area();
        rdbench_page::frontier::draw_frontiers(&root, &study.frontier, false, rdbench_page::style::Scale(1.0))?;
        root.present().map_err(|e| format!("cannot draw the frontier chart: {e:?}"))?;
    }
    let files = [
        (outputs.chart, svg.into_bytes()),
        (outputs.frontier_chart, frontier_svg.into_bytes()),
        (outputs.report, (study.to_json() + "\n").into_bytes()),
    ];
    commit(files, journals)?;
    crate::out!("{}", crate::summary::study::render(study));
    let run = &args.run;
    outln!(
        "study report written to {}, charts to {} and {}",
        run.out.display(),
        args.chart.display(),
        args.frontier_chart.display()
    );
    Ok(())
}
