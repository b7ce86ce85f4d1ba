//! The flags of `run` and `study`: one per knob of the config table
//! ([`rdbench_core::config::KNOBS`]), plus where and how to run. The knob flags are built
//! from the table, not listed here.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command as ClapCommand};
use rdbench_core::config::{BenchConfig, KNOBS, Knob, KnobKind, parse_texts};
use rdbench_engine::backend;
use std::path::PathBuf;

/// Flags of `run`.
#[derive(Debug)]
pub struct RunArgs {
    /// `(config key, text)` of every knob flag given on the command line.
    pub texts: Vec<(String, String)>,
    pub backend: String,
    pub threads: Option<usize>,
    pub out: PathBuf,
    pub quiet: bool,
}

impl clap::FromArgMatches for RunArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(RunArgs {
            texts: knob_texts(m),
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

/// `(config key, text)` of every knob flag given on the command line.
fn knob_texts(m: &ArgMatches) -> Vec<(String, String)> {
    KNOBS
        .iter()
        .filter(|k| m.value_source(k.key) == Some(ValueSource::CommandLine))
        .filter_map(|k| m.get_one::<String>(k.key).map(|v| (k.key.to_string(), v.clone())))
        .collect()
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

/// Flags of `study`: those of `run` (its `--out` is the study report) plus `--chart`,
/// `--frontier-chart` and `--from-reports`.
#[derive(Debug)]
pub struct StudyArgs {
    pub run: RunArgs,
    pub chart: PathBuf,
    pub frontier_chart: PathBuf,
    /// Bench reports to build the study from instead of running the benches.
    pub from_reports: Vec<PathBuf>,
}

impl clap::FromArgMatches for StudyArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(StudyArgs {
            run: RunArgs::from_arg_matches(m)?,
            chart: m.get_one::<PathBuf>("chart").cloned().unwrap_or_default(),
            frontier_chart: m.get_one::<PathBuf>("frontier_chart").cloned().unwrap_or_default(),
            from_reports: paths(m, "from_reports"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for StudyArgs {
    fn augment_args(cmd: ClapCommand) -> ClapCommand {
        augment_run(cmd, "study_report.json", "Where to write the study report (each bench report is embedded).")
            .arg(
                Arg::new("chart")
                    .long("chart")
                    .value_parser(clap::value_parser!(PathBuf))
                    .default_value("study_chart.svg")
                    .help("Where to write the study chart (SVG)."),
            )
            .arg(
                Arg::new("frontier_chart")
                    .long("frontier-chart")
                    .value_parser(clap::value_parser!(PathBuf))
                    .default_value("study_frontier.svg")
                    .help("Where to write each model's frontier side by side (SVG)."),
            )
            .arg(from_reports_arg(
                "Build the study from these bench reports (e.g. runs made separately with `rdbench run`) instead of \
                 running the benches; they must share one config but for track, model and policy.",
            ))
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

/// The scale study's defaults where they are not the knob table's: the adding problem (the
/// long-memory track), both models, and the fewest runs a paired comparison at each length
/// takes (4 seeds, one sweep run at lr 0.01). Epochs and training sequences are the
/// track's defaults, so the GRU baseline learns at every default length (docs/SPEC.md).
pub const SCALE_DEFAULTS: [(&str, &str); 5] = [
    ("track", "adding"),
    ("model", "rnn_small,rev_ode_small"),
    ("n_seeds", "4"),
    ("n_sweep_seeds", "1"),
    ("lrs", "0.01"),
];

/// The scale study's default lengths.
pub const SCALE_SEQ_LENS: &str = "100,1000,3000";

/// Flags of `scale`: those of `run` (`--track` and `--model` may list several,
/// comma-separated; `--seq-len` is replaced by `--seq-lens`) plus `--chart` and
/// `--from-reports`.
#[derive(Debug)]
pub struct ScaleArgs {
    /// The knob flags given on the command line, backend, threads, out (the scale report), quiet.
    pub run: RunArgs,
    /// The lengths, comma-separated, as given (or the default), and whether given.
    pub seq_lens: String,
    pub seq_lens_given: bool,
    pub chart: PathBuf,
    /// Bench reports to build the scale study from instead of running the benches.
    pub from_reports: Vec<PathBuf>,
}

impl ScaleArgs {
    /// The knob texts with the scale study's defaults for those not given.
    pub fn texts(&self) -> Vec<(String, String)> {
        let given = |k: &str| self.run.texts.iter().any(|(g, _)| g == k);
        let defaults = SCALE_DEFAULTS.iter().filter(|(k, _)| !given(k)).map(|(k, v)| (k.to_string(), v.to_string()));
        self.run.texts.iter().cloned().chain(defaults).collect()
    }
}

impl clap::FromArgMatches for ScaleArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(ScaleArgs {
            run: RunArgs::from_arg_matches(m)?,
            seq_lens: m.get_one::<String>("seq_lens").cloned().unwrap_or_default(),
            seq_lens_given: m.value_source("seq_lens") == Some(ValueSource::CommandLine),
            chart: m.get_one::<PathBuf>("chart").cloned().unwrap_or_default(),
            from_reports: paths(m, "from_reports"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for ScaleArgs {
    fn augment_args(cmd: ClapCommand) -> ClapCommand {
        let out_help = "Where to write the scale report (each bench report is embedded).";
        augment_run_with(cmd, "scale_report.json", out_help, &SCALE_DEFAULTS)
            // Refused: a scale study sets T per bench (--seq-lens).
            .mut_arg("seq_len", |a| a.hide(true))
            .arg(Arg::new("seq_lens").long("seq-lens").value_name("T,T,..").default_value(SCALE_SEQ_LENS).help(
                "The sequence lengths, comma-separated (0 is the track's default). At the defaults (this, \
                         the adding problem, both models, 4 seeds, 1 sweep seed, lr 0.01, the track's training \
                         size and 15 epochs, so that the GRU learns at every length) the study takes hours on 2 \
                         cores, most of it at T = 3000: `rdbench plan` splits it over machines (docs/STUDY.md).",
            ))
            .arg(
                Arg::new("chart")
                    .long("chart")
                    .value_parser(clap::value_parser!(PathBuf))
                    .default_value("scale_chart.svg")
                    .help("Where to write the charts against T (SVG)."),
            )
            .arg(from_reports_arg(
                "Build the scale study from these bench reports (e.g. a plan's --seq-len grid merged) instead of \
                 running the benches; they must share one config but for track, model and sequence length.",
            ))
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

/// `--from-reports REPORT..`.
fn from_reports_arg(help: &'static str) -> Arg {
    Arg::new("from_reports")
        .long("from-reports")
        .value_name("REPORT")
        .num_args(1..)
        .value_parser(clap::value_parser!(PathBuf))
        .help(help)
}

/// The paths given to `id` (none when not given).
fn paths(m: &ArgMatches, id: &str) -> Vec<PathBuf> {
    m.get_many::<PathBuf>(id).map(|v| v.cloned().collect()).unwrap_or_default()
}

/// Most threads a phase's runs are split over (`run`, `study` and `perf` alike).
pub const MAX_THREADS: u16 = 256;

/// `--threads N`, 1 to [`MAX_THREADS`].
pub fn threads_arg() -> Arg {
    Arg::new("threads").long("threads").value_parser(clap::value_parser!(u16).range(1..=MAX_THREADS as i64))
}

/// The knob flags plus backend, threads, out and quiet.
fn augment_run(cmd: ClapCommand, out_default: &'static str, out_help: &'static str) -> ClapCommand {
    augment_run_with(cmd, out_default, out_help, &[])
}

/// [`augment_run`] with some knobs' defaults replaced (`(key, default)`).
fn augment_run_with(
    cmd: ClapCommand,
    out_default: &'static str,
    out_help: &'static str,
    defaults: &[(&'static str, &'static str)],
) -> ClapCommand {
    augment_knobs(cmd, out_default, out_help, defaults)
        .arg(
            threads_arg()
                .help("Threads to split each phase's runs over (default: one per core; the report is the same)."),
        )
        .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue).help("No progress bar."))
}

/// The knob flags (a knob's default replaced where `defaults` names it) plus backend and out.
fn augment_knobs(
    cmd: ClapCommand,
    out_default: &'static str,
    out_help: &'static str,
    defaults: &[(&'static str, &'static str)],
) -> ClapCommand {
    {
        let cmd = KNOBS.iter().fold(cmd, |cmd, k| {
            let default = defaults.iter().find(|(key, _)| *key == k.key).map_or(k.default, |d| d.1);
            cmd.arg(
                Arg::new(k.key)
                    .long(k.flag.trim_start_matches("--"))
                    .value_name(k.key)
                    .help(knob_help(k))
                    .default_value(default)
                    // `--tau -inf` is a value, which the knob's parser then names as out of range.
                    .allow_hyphen_values(true),
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
                .default_value(out_default)
                .help(out_help),
        )
    }
}

/// Flags of `plan`: the knob flags and backend of `run` (or, with `--study`, of `study`),
/// and where to write the plan.
#[derive(Debug)]
pub struct PlanArgs {
    /// The knob flags, backend and out (the plan file); no threads, not quiet.
    pub run: RunArgs,
    /// Plan a study (every track, model and policy) rather than one bench.
    pub study: bool,
}

impl clap::FromArgMatches for PlanArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(PlanArgs {
            run: RunArgs {
                texts: knob_texts(m),
                backend: m.get_one::<String>("backend").cloned().unwrap_or_default(),
                threads: None,
                out: m.get_one::<PathBuf>("out").cloned().unwrap_or_default(),
                quiet: false,
            },
            study: m.get_flag("study"),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for PlanArgs {
    fn augment_args(cmd: ClapCommand) -> ClapCommand {
        augment_knobs(cmd, "plan.json", "Where to write the plan.", &[]).arg(
            Arg::new("study")
                .long("study")
                .action(ArgAction::SetTrue)
                .help("Plan the study (every track, model and policy; --track keeps one track) instead of one bench."),
        )
    }

    fn augment_args_for_update(cmd: ClapCommand) -> ClapCommand {
        Self::augment_args(cmd)
    }
}

impl RunArgs {
    pub fn config(&self) -> Result<BenchConfig, String> {
        parse_texts(self.texts.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|errors| {
            errors
                .iter()
                .map(|e| format!("invalid value for {}: {}", e.flag(), e.message))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}

impl RunArgs {
    pub fn backend(&self) -> Result<backend::Backend, String> {
        let mut backend = backend::by_name(&self.backend)?;
        if let Some(t) = self.threads {
            backend.threads = t;
        }
        Ok(backend)
    }
}
