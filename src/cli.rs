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
    /// Run the mechanism study: the bench on every model under every policy (same flags as
    /// `run`, less --model and --policy), writing study_report.json and its chart.
    #[command(allow_negative_numbers = true)]
    Study(Box<StudyArgs>),
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
    threads: Option<usize>,
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
            threads: m.get_one::<u16>("threads").map(|&t| t as usize),
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
        augment_run(cmd, "bench_report.json", "Where to write the report.")
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

/// Flags of `study`: those of `run` (its `--out` is the study report) plus `--chart`.
#[derive(Debug)]
struct StudyArgs {
    run: RunArgs,
    chart: PathBuf,
}

impl clap::FromArgMatches for StudyArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(StudyArgs {
            run: RunArgs::from_arg_matches(m)?,
            chart: m.get_one::<PathBuf>("chart").cloned().unwrap_or_default(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for StudyArgs {
    fn augment_args(cmd: ClapCommand) -> ClapCommand {
        augment_run(cmd, "study_report.json", "Where to write the study report (each bench report is embedded).").arg(
            Arg::new("chart")
                .long("chart")
                .value_parser(clap::value_parser!(PathBuf))
                .default_value("study_chart.svg")
                .help("Where to write the study chart (SVG)."),
        )
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

/// The knob flags plus backend, threads, out and quiet.
fn augment_run(cmd: ClapCommand, out_default: &'static str, out_help: &'static str) -> ClapCommand {
    {
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
            Arg::new("threads")
                .long("threads")
                .value_parser(clap::value_parser!(u16).range(1..=256))
                .help("Threads to split each phase's runs over (default: one per core; the report is the same)."),
        )
        .arg(
            Arg::new("out")
                .long("out")
                .value_parser(clap::value_parser!(PathBuf))
                .default_value(out_default)
                .help(out_help),
        )
        .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue).help("No progress bar."))
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
    /// Message prefix (the study's bench in flight).
    prefix: String,
}

impl Host for BarHost {
    fn event(&mut self, event: &Event) {
        let Some(bar) = &self.bar else { return };
        if let Event::Progress(p) = event {
            bar.set_position((p.fraction * 1000.0) as u64);
            let finite: Vec<f64> = p.losses.iter().flatten().copied().collect();
            let loss = if finite.is_empty() { "-".into() } else { format!("{:.5}", crate::stats::mean(&finite)) };
            bar.set_message(format!(
                "{}{:?} {:?} | epoch {}/{} step {}/{} | runs {}/{} | loss {loss}",
                self.prefix, p.phase, p.arm, p.epoch, p.epochs, p.step, p.steps, p.runs_done, p.runs_total
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
        Command::Study(args) => match study(&args) {
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

impl RunArgs {
    fn backend(&self) -> Result<backend::Backend, String> {
        let mut backend = backend::by_name(&self.backend)?;
        if let Some(t) = self.threads {
            backend.threads = t;
        }
        Ok(backend)
    }
}

/// One bench with a progress bar (unless quiet).
fn bench_with_bar(cfg: &BenchConfig, args: &RunArgs, prefix: String) -> Result<crate::report::Report, String> {
    let backend = args.backend()?;
    let bar = (!args.quiet).then(|| {
        let b = ProgressBar::new(1000);
        b.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent:>3}% eta {eta} {msg}")
                .expect("template")
                .progress_chars("=> "),
        );
        b
    });
    let mut host = BarHost { bar, prefix };
    let result = futures::executor::block_on(run_bench(cfg, &backend, &[], &mut host));
    if let Some(b) = &host.bar {
        b.finish_and_clear();
    }
    result.map_err(|s| format!("{} ({} runs finished)", s.reason, s.runs.len()))
}

fn run(args: &RunArgs) -> Result<(), String> {
    let cfg = args.config()?;
    let report = bench_with_bar(&cfg, args, String::new())?;
    std::fs::write(&args.out, report.to_json() + "\n")
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    print!("{}", crate::summary::render(&report));
    println!("report written to {}", args.out.display());
    Ok(())
}

fn study(args: &StudyArgs) -> Result<(), String> {
    use crate::study::{bench_configs, build_study};
    let run = &args.run;
    if let Some((k, _)) = run.texts.iter().find(|(k, _)| k == "model" || k == "policy") {
        let flag = crate::config::knob(k).map_or("", |k| k.flag);
        return Err(format!("{flag} is not a study flag: the study runs every model under every policy"));
    }
    let base = run.config()?;
    let cfgs = bench_configs(&base);
    let mut texts = Vec::with_capacity(cfgs.len());
    for (i, cfg) in cfgs.iter().enumerate() {
        let label = format!("{} {}", cfg.model, cfg.policy.as_str());
        let report = bench_with_bar(cfg, run, format!("bench {}/{} {label} | ", i + 1, cfgs.len()))?;
        let r = &report.comparison;
        println!(
            "bench {}/{} {label}: {} (p = {}), mechanism {}",
            i + 1,
            cfgs.len(),
            r.verdict.as_str(),
            r.p_value.map_or("n/a".into(), |p| format!("{p:.4}")),
            if report.mechanism_signature.confirmed { "confirmed" } else { "not confirmed" }
        );
        texts.push(report.to_json());
    }
    let study = build_study(&texts)?;
    std::fs::write(&run.out, study.to_json() + "\n").map_err(|e| format!("cannot write {}: {e}", run.out.display()))?;
    {
        use plotters::prelude::*;
        let root = SVGBackend::new(&args.chart, (1200, 560)).into_drawing_area();
        crate::study::chart::draw(&root, &study, 1.0)?;
        root.present().map_err(|e| format!("cannot write {}: {e:?}", args.chart.display()))?;
    }
    print!("{}", crate::study::summary::render(&study));
    println!("study report written to {}, chart to {}", run.out.display(), args.chart.display());
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
