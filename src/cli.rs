//! The native command line: `run` the bench, `validate` a report, `bench` the engine.

use crate::backend;
use crate::config::{BenchConfig, Policy};
use crate::progress::{Event, Host};
use crate::protocol::run_bench;
use crate::report::validate_json;
use clap::{Args, Parser, Subcommand};
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

/// Flags of `run`, one per config field.
#[derive(Args, Debug)]
struct RunArgs {
    /// Paired seeds per arm.
    #[arg(long, default_value_t = 8)]
    seeds: usize,
    /// Sweep seeds per arm and lr.
    #[arg(long = "sweep-seeds", default_value_t = 3)]
    sweep_seeds: usize,
    /// Learning-rate grid, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "0.001,0.003,0.01")]
    lrs: Vec<f64>,
    /// Training epochs.
    #[arg(long, default_value_t = 15)]
    epochs: usize,
    /// Minibatch size.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// GRU hidden size.
    #[arg(long, default_value_t = 32)]
    hidden: usize,
    /// Defect threshold tau.
    #[arg(long, default_value_t = 0.08)]
    tau: f64,
    /// Largest checkpoint interval.
    #[arg(long = "k-max", default_value_t = 16)]
    k_max: usize,
    /// Interval policy: one_step or chained.
    #[arg(long, default_value = "one_step")]
    policy: String,
    /// Fixed-point iterations per reversal.
    #[arg(long = "reversal-iters", default_value_t = 20)]
    reversal_iters: usize,
    /// Dataset seed.
    #[arg(long = "data-seed", default_value_t = 0)]
    data_seed: u64,
    /// Significance level.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// Monte Carlo sign vectors when n_pairs > 20.
    #[arg(long, default_value_t = 10_000)]
    permutations: usize,
    /// Bootstrap resamples for the CI of delta_mean.
    #[arg(long, default_value_t = 10_000)]
    bootstrap: usize,
    /// Track.
    #[arg(long, default_value = "dynamics")]
    track: String,
    /// Model.
    #[arg(long, default_value = "rnn_small")]
    model: String,
    /// Compute backend: flex (CPU), ndarray (CPU) or vulkan (`wgpu` feature).
    #[arg(long, default_value = "flex")]
    backend: String,
    /// Where to write the report.
    #[arg(long, default_value = "bench_report.json")]
    out: PathBuf,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

impl RunArgs {
    fn config(&self) -> Result<BenchConfig, String> {
        let policy = match self.policy.as_str() {
            "one_step" => Policy::OneStep,
            "chained" => Policy::Chained,
            other => return Err(format!("invalid value for --policy: must be one_step or chained (got {other:?})")),
        };
        let cfg = BenchConfig {
            track: self.track.clone(),
            model: self.model.clone(),
            n_seeds: self.seeds,
            n_sweep_seeds: self.sweep_seeds,
            lrs: self.lrs.clone(),
            epochs: self.epochs,
            batch_size: self.batch,
            hidden_size: self.hidden,
            tau: self.tau,
            k_max: self.k_max,
            policy,
            reversal_iters: self.reversal_iters,
            data_seed: self.data_seed,
            alpha: self.alpha,
            permutations: self.permutations,
            bootstrap_resamples: self.bootstrap,
        };
        cfg.validate().map_err(|e| format!("invalid value for {}: {}", e.flag(), e.message))?;
        Ok(cfg)
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
