//! The native command line: `run` the bench, `study` it on every track, model and policy,
//! `scale` it over sequence lengths,
//! `validate` a report, export a track's `dataset`, `perf` (time the engine); `plan`, `work`
//! and `merge` split a bench or study over many machines.

pub mod args;
pub(crate) mod atomic;
pub mod dataset;
pub(crate) mod input;
pub mod journal;
mod memory;
mod merge;
pub mod perf;
mod plan;
mod progress;
mod rerun;
mod run;
mod scale;
mod signal;
pub mod stdout;
mod study;
mod validate;
mod work;

use args::{PlanArgs, RunArgs, ScaleArgs, StudyArgs};
use clap::{Parser, Subcommand};

/// Reversal-defect adaptive checkpointing bench.
#[derive(Parser, Debug)]
#[command(name = "rdbench", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the whole bench and write bench_report.json.
    #[command(allow_negative_numbers = true)]
    Run(Box<RunArgs>),
    /// Run the mechanism study: the bench on every track, model and policy (same flags as
    /// `run`, less --model and --policy; --track keeps one track), writing study_report.json
    /// and its chart.
    #[command(allow_negative_numbers = true)]
    Study(Box<StudyArgs>),
    /// Run the scaling study: the bench at several sequence lengths (--seq-lens) for each
    /// track and model (--track and --model take comma-separated lists), writing
    /// scale_report.json and its charts against T.
    #[command(allow_negative_numbers = true)]
    Scale(Box<ScaleArgs>),
    /// Plan a bench (or with --study a study) for many machines: write its sweep runs to a
    /// plan file (same flags as `run` or `study`) for `work` and `merge`.
    #[command(allow_negative_numbers = true)]
    Plan(Box<PlanArgs>),
    /// Run task I of N of a plan's stage, one record file per finished run.
    Work(work::WorkArgs),
    /// Check a plan's records, then plan the next stage or build the report.
    Merge(merge::MergeArgs),
    /// Check a bench or study report: its schema, and its numbers against what its own
    /// config and runs rebuild; with --rerun, train its runs again and compare them.
    Validate(validate::ValidateArgs),
    /// Write a track's train and test data (inputs, targets or labels, the split) as JSON.
    Dataset(dataset::DatasetArgs),
    /// Measure this core's f32 peak, time the fused kernels and training steps against it,
    /// and measure the memory of the checkpointed pass (--protocol: the default protocol;
    /// --protocol long: the long learning protocol at T = 1000).
    Perf(perf::PerfArgs),
}

/// How a command failed.
#[derive(Debug)]
pub enum Failure {
    /// An error, said on stderr (exit code 2).
    Error(String),
    /// Ctrl-C or SIGTERM: the finished work is kept (exit code 130).
    Interrupted,
}

impl From<String> for Failure {
    fn from(e: String) -> Self {
        Failure::Error(e)
    }
}

/// This process's command line, each word quoted for a POSIX shell where it needs it: the
/// command a message tells the user to run again.
pub(crate) fn this_command() -> String {
    let word = |a: String| {
        let plain = |b: u8| b.is_ascii_alphanumeric() || b"-_./=,:+@%".contains(&b);
        if !a.is_empty() && a.bytes().all(plain) { a } else { format!("'{}'", a.replace('\'', "'\\''")) }
    };
    std::env::args_os().map(|a| word(a.to_string_lossy().into_owned())).collect::<Vec<_>>().join(" ")
}

fn exit_code(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => 0,
        Err(Failure::Interrupted) => signal::EXIT_INTERRUPTED,
        Err(Failure::Error(e)) => {
            eprintln!("error: {e}");
            2
        }
    }
}

/// Run the CLI; returns the process exit code.
pub fn main_with(cli: Cli) -> i32 {
    if let Err(e) = rdbench_engine::model::simd::from_env() {
        eprintln!("error: {e}");
        return 2;
    }
    match cli.command {
        Command::Run(args) => exit_code(run::run(&args)),
        Command::Study(args) => exit_code(study::study(&args)),
        Command::Scale(args) => exit_code(scale::scale(&args)),
        Command::Plan(args) => exit_code(plan::plan(&args)),
        Command::Work(args) => exit_code(work::work(&args)),
        Command::Merge(args) => exit_code(merge::merge(&args)),
        Command::Validate(args) => validate::validate(&args),
        Command::Dataset(args) => match dataset::dataset(&args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {e}");
                2
            }
        },
        Command::Perf(args) => perf::run(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use rdbench_core::config::{BenchConfig, KNOBS};

    /// Every knob of the config table is a flag of `run` (and the table covers every config
    /// field: see `config::tests`), so a new field cannot go without a flag.
    #[test]
    fn every_knob_is_a_run_flag() {
        let cmd = Cli::command();
        let run = cmd.find_subcommand("run").expect("run subcommand");
        for k in KNOBS {
            let arg =
                run.get_arguments().find(|a| a.get_id() == k.key).unwrap_or_else(|| panic!("no flag for {}", k.key));
            assert_eq!(format!("--{}", arg.get_long().unwrap()), k.flag);
            assert_eq!(arg.get_default_values(), [k.default]);
        }
    }

    #[test]
    fn flags_reach_the_config() {
        let cli =
            Cli::try_parse_from(["rdbench", "run", "--seeds", "5", "--lrs", "0.1,0.2", "--policy", "chained"]).unwrap();
        let Command::Run(args) = cli.command else { panic!("not run") };
        let cfg = args.config().unwrap();
        assert_eq!((cfg.n_seeds, cfg.lrs.clone(), cfg.policy.as_str()), (5, vec![0.1, 0.2], "chained"));
        assert_eq!(
            BenchConfig {
                n_seeds: 8,
                lrs: vec![0.001, 0.003, 0.01],
                policy: rdbench_core::config::Policy::OneStep,
                ..cfg
            },
            BenchConfig::default()
        );
    }
}
