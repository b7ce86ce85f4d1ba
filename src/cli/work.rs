//! `rdbench work`: run task I of N of a plan's current stage, writing one record file per
//! finished run into the records directory (named by its key, written atomically), and
//! skipping the runs whose record is already there: a requeued, repeated or killed task
//! run again does only what is missing.

use super::Failure;
use super::atomic::AtomicFile;
use rdbench_core::plan::{Plan, PlannedRun, record_key};
use rdbench_core::records::{RunRecord, RunSpec};
use rdbench_core::study::bench_name;
use rdbench_engine::error::EngineError;
use rdbench_engine::host::{Event, Host};
use std::path::{Path, PathBuf};

/// Flags of `work`.
#[derive(clap::Args, Debug)]
pub struct WorkArgs {
    /// The plan (from `rdbench plan`, or the sweep's `rdbench merge`).
    #[arg(long)]
    plan: PathBuf,
    /// This task, 0 to N-1 (Slurm: $SLURM_ARRAY_TASK_ID; Kubernetes: $JOB_COMPLETION_INDEX).
    #[arg(long)]
    index: usize,
    /// N: the tasks the stage's runs are shared among.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    of: u64,
    /// Directory of the record files (shared by every task; created if missing).
    #[arg(long, default_value = "records")]
    records: PathBuf,
    /// Threads to split each population over (default: one per core; the records are the same).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=super::args::MAX_THREADS as i64))]
    threads: Option<u16>,
    /// No line per finished run.
    #[arg(long)]
    quiet: bool,
}

/// Read and check a plan file.
pub(super) fn read_plan(path: &Path) -> Result<Plan, String> {
    let text = super::input::read(path, "the plan")?;
    Plan::from_json(&text).map_err(|e| format!("the plan {}: {e}", path.display()))
}

/// A record file's path in `dir`.
pub(super) fn record_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.json"))
}

/// Read one record file, naming it if it is not a record.
pub(super) fn read_record(path: &Path) -> Result<RunRecord, String> {
    let text = super::input::read(path, "the record")?;
    parse_record(&text, path)
}

fn parse_record(text: &str, path: &Path) -> Result<RunRecord, String> {
    serde_json::from_str(text).map_err(|e| format!("{} is not a run record: {e}", path.display()))
}

/// Whether `run` is recorded in `dir` already: `Some(true)` by this build, `Some(false)` by
/// another (it is trained again and replaced: a merge takes only its own build's records),
/// `None` when not. A file under its name that holds another run is an error (it would
/// otherwise be trusted by the merge, or overwritten).
fn recorded(dir: &Path, run: &PlannedRun, backend: &str) -> Result<Option<bool>, String> {
    let path = record_path(dir, &run.key);
    let Some(text) = super::input::read_optional(&path, "the record")? else { return Ok(None) };
    let rec = parse_record(&text, &path)?;
    if !rec.is_run(&run.spec, backend, &run.run_hash) {
        return Err(format!("{} holds another run (backend {}): move it away", path.display(), rec.backend));
    }
    Ok(Some(rec.build == rdbench_engine::BUILD))
}

/// The engine's host for a task: each finished run goes to its record file at once.
struct RecordHost<'a> {
    dir: &'a Path,
    quiet: bool,
    /// The first record that could not be written: the task stops.
    failed: Option<String>,
    written: usize,
}

impl Host for RecordHost<'_> {
    fn event(&mut self, event: &Event) {
        let Event::RunFinished(r) = event else { return };
        let key = record_key(&r.spec(), &r.run_hash);
        let path = record_path(self.dir, &key);
        let text = serde_json::to_string(r).expect("a record serialises") + "\n";
        match AtomicFile::create(&path).and_then(|f| f.commit(text.as_bytes())) {
            Ok(()) => {
                self.written += 1;
                if !self.quiet {
                    eprintln!("recorded {}", path.display());
                }
            }
            Err(e) => {
                self.failed.get_or_insert(e);
            }
        }
    }

    fn cancelled(&self) -> bool {
        self.failed.is_some() || super::signal::interrupted()
    }
}

pub fn work(args: &WorkArgs) -> Result<(), Failure> {
    let plan = read_plan(&args.plan)?;
    let share = plan.share(args.index, args.of as usize)?;
    let stage_runs = plan.stage_runs().len();
    let mut backend = rdbench_engine::backend::by_name(&plan.backend)?;
    if let Some(t) = args.threads {
        backend.threads = t as usize;
    }
    std::fs::create_dir_all(&args.records)
        .map_err(|e| format!("cannot create the records directory {}: {e}", args.records.display()))?;
    let (mut todo, mut other_build): (Vec<&PlannedRun>, usize) = (Vec::new(), 0);
    for run in &share {
        match recorded(&args.records, run, &backend.name)? {
            Some(true) => {}
            Some(false) => {
                other_build += 1;
                todo.push(run);
            }
            None => todo.push(run),
        }
    }
    super::signal::install()?;
    let task = format!("task {}/{}", args.index, args.of);
    eprintln!(
        "{task}: {} of the {} {} runs; {} already recorded in {}",
        share.len(),
        stage_runs,
        plan.stage.as_str(),
        share.len() - todo.len(),
        args.records.display()
    );
    if other_build > 0 {
        eprintln!(
            "{task}: {other_build} record(s) there were made by another build, set aside: trained again by this build \
             ({}) and replaced",
            rdbench_engine::BUILD
        );
    }
    let mut host = RecordHost { dir: &args.records, quiet: args.quiet, failed: None, written: 0 };
    // Bench by bench (a share is contiguous, in bench order, so mostly one), each bench's runs
    // in one call.
    for runs in todo.chunk_by(|a, b| a.bench == b.bench) {
        let cfg = &plan.benches[runs[0].bench];
        let specs: Vec<RunSpec> = runs.iter().map(|r| r.spec.clone()).collect();
        if !args.quiet {
            eprintln!("{task}: {} | training {} runs", bench_name(cfg), specs.len());
        }
        let ctx = cfg.resolve().map_err(|e| format!("{}: {e}", bench_name(cfg)))?;
        let result =
            futures::executor::block_on(rdbench_engine::protocol::train_runs(&ctx, &backend, &specs, &mut host));
        if let Some(e) = host.failed.take() {
            return Err(format!("{e}; {task} stopped ({} runs recorded)", host.written).into());
        }
        if let Err(stopped) = result {
            let kept = format!("{} runs recorded in {}", host.written, args.records.display());
            return Err(match stopped.reason {
                EngineError::Cancelled => {
                    eprintln!("{task} stopped: {kept}; the same command does the rest");
                    Failure::Interrupted
                }
                e => Failure::Error(format!("{task}: {e} ({kept}; the same command does the rest)")),
            });
        }
    }
    crate::outln!("{task}: done, {} runs trained, records in {}", host.written, args.records.display());
    Ok(())
}
