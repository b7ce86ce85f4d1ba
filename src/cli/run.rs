//! `rdbench run`: the whole bench, with a progress bar, its summary and its report.

use super::args::RunArgs;
use indicatif::{ProgressBar, ProgressStyle};
use rdbench_core::config::BenchConfig;
use rdbench_core::report::Report;
use rdbench_engine::host::{Event, Host};
use rdbench_engine::protocol::run_bench;

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
            let loss =
                if finite.is_empty() { "-".into() } else { format!("{:.5}", rdbench_core::stats::mean(&finite)) };
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

/// One bench with a progress bar (unless quiet).
pub fn bench_with_bar(cfg: &BenchConfig, args: &RunArgs, prefix: String) -> Result<Report, String> {
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

pub fn run(args: &RunArgs) -> Result<(), String> {
    let cfg = args.config()?;
    let report = bench_with_bar(&cfg, args, String::new())?;
    std::fs::write(&args.out, report.to_json() + "\n")
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    print!("{}", crate::summary::bench::render(&report));
    println!("report written to {}", args.out.display());
    Ok(())
}
