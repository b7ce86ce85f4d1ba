//! The native command line: `run` the bench, `validate` a report, `bench` the engine.

use crate::backend;
use crate::config::{BenchConfig, KNOBS, Knob, KnobKind, parse_texts};
use crate::progress::{Event, Host};
use crate::protocol::run_bench;
use crate::report::validate_json;
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command as ClapCommand, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;

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
    /// Check a report file against the schema.
    Validate {
        /// Report to check.
        file: PathBuf,
    },
    /// Time training steps and measure the memory of the checkpointed pass.
    Bench(crate::benchmark::BenchArgs),
}

/// Flags of `run`: one per knob of the config table ([`crate::config::KNOBS`]), plus where
/// and how to run. The knob flags are built from the table, not listed here.
#[derive(Debug)]
struct RunArgs {
    /// `(config key, text)` of every knob flag given on the command line.
    texts: Vec<(String, String)>,
    backend: String,
    out: PathBuf,
    quiet: bool,
}

impl clap::FromArgMatches for RunArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let texts = KNOBS
            .iter()
            .filter(|k| m.value_source(k.key) == Some(ValueSource::CommandLine))
            .filter_map(|k| m.get_one::<String>(k.key).map(|v| (k.key.to_string(), v.clone())))
            .collect();
        Ok(RunArgs {
            texts,
            backend: m.get_one::<String>("backend").cloned().unwrap_or_default(),
            out: m.get_one::<PathBuf>("out").cloned().unwrap_or_default(),
            quiet: m.get_flag("quiet"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The help line of a knob: its help, unit, accepted values and default.
fn knob_help(k: &Knob) -> String {
    let unit = if k.unit.is_empty() { String::new() } else { format!(" [{}]", k.unit) };
    let values = match k.kind {
        KnobKind::Choice(choices) => {
            format!(" One of: {}.", choices().iter().map(|c| c.0).collect::<Vec<_>>().join(", "))
        }
        _ => String::new(),
    };
    format!("{}{unit}{values}", k.help)
}

impl clap::Args for RunArgs {
    fn augment_args(cmd: ClapCommand) -> ClapCommand {
        let cmd = KNOBS.iter().fold(cmd, |cmd, k| {
            cmd.arg(
                Arg::new(k.key)
                    .long(k.flag.trim_start_matches("--"))
                    .value_name(k.key)
                    .help(knob_help(k))
                    .default_value(k.default),
            )
        });
        cmd.arg(
            Arg::new("backend")
                .long("backend")
                .default_value("flex")
                .help("Compute backend: flex (CPU), ndarray (CPU) or vulkan (`wgpu` feature)."),
        )
        .arg(
            Arg::new("out")
                .long("out")
                .value_parser(clap::value_parser!(PathBuf))
                .default_value("bench_report.json")
                .help("Where to write the report."),
        )
        .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue).help("No progress bar."))
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

impl RunArgs {
    fn config(&self) -> Result<BenchConfig, String> {
        parse_texts(self.texts.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("invalid value for {}: {}", e.flag(), e.message))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}

struct BarHost {
    bar: Option<ProgressBar>,
}

impl Host for BarHost {
    fn event(&mut self, event: &Event) {
        let Some(bar) = &self.bar else { return };
        if let Event::Progress(p) = event {
            bar.set_position((p.fraction * 1000.0) as u64);
            let finite: Vec<f64> = p.losses.iter().flatten().copied().collect();
            let loss = if finite.is_empty() { "-".into() } else { format!("{:.5}", crate::stats::mean(&finite)) };
            bar.set_message(format!(
                "{:?} {:?} | epoch {}/{} step {}/{} | runs {}/{} | loss {loss}",
                p.phase, p.arm, p.epoch, p.epochs, p.step, p.steps, p.runs_done, p.runs_total
            ));
        }
    }
    fn cancelled(&self) -> bool {
        false
    }
}

/// Run the CLI; returns the process exit code.
pub fn main_with(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(args) => match run(&args) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {e}");
                2
            }
        },
        Command::Validate { file } => validate(&file),
        Command::Bench(args) => crate::benchmark::run(&args),
    }
}

fn run(args: &RunArgs) -> Result<(), String> {
    let cfg = args.config()?;
    let backend = backend::by_name(&args.backend)?;
    let bar = (!args.quiet).then(|| {
        let b = ProgressBar::new(1000);
        b.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent:>3}% eta {eta} {msg}")
                .expect("template")
                .progress_chars("=> "),
        );
        b
    });
    let mut host = BarHost { bar };
    let result = futures::executor::block_on(run_bench(&cfg, &backend, &[], &mut host));
    if let Some(b) = &host.bar {
        b.finish_and_clear();
    }
    let report = result.map_err(|s| format!("{} ({} runs finished)", s.reason, s.runs.len()))?;
    std::fs::write(&args.out, report.to_json() + "\n")
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    print!("{}", crate::summary::render(&report));
    println!("report written to {}", args.out.display());
    Ok(())
}

fn validate(file: &PathBuf) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    match validate_json(&text) {
        Ok(report) => {
            let kind = if report.config.is_some() { "full report" } else { "seed-era report (no extensions)" };
            println!("{}: valid bench_report.json ({kind})", file.display());
            0
        }
        Err(problems) => {
            eprintln!("{}: {} problem(s)", file.display(), problems.len());
            for p in problems {
                eprintln!("  {p}");
            }
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

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
            BenchConfig { n_seeds: 8, lrs: vec![0.001, 0.003, 0.01], policy: crate::config::Policy::OneStep, ..cfg },
            BenchConfig::default()
        );
    }
}
