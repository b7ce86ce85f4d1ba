//! What the CLI says while a bench trains, on stderr: a progress bar on a terminal, and
//! without one a line per phase and per finished run (a log, a pipe, a CI job). Every
//! finished run also goes to the journal as it finishes. Ctrl-C reaches the engine here.

use super::signal;
use crate::cli::journal::Journal;
use indicatif::{ProgressBar, ProgressStyle};
use rdbench_core::records::{Arm, Phase, RunRecord};
use rdbench_engine::host::{Event, Host};
use rdbench_page::format::{duration, num};
use std::io::IsTerminal;
use web_time::Instant;

/// The CLI's engine host.
pub struct CliHost<'a> {
    bar: Option<ProgressBar>,
    /// A line per phase and per finished run (stderr is not a terminal).
    lines: bool,
    /// Message prefix (the study's bench in flight).
    prefix: String,
    /// What a run's metric is ("MSE", "accuracy").
    metric: &'static str,
    journal: &'a mut Journal<RunRecord>,
    journal_failed: bool,
    phase: Option<(Phase, Arm)>,
    /// The estimate before training, seconds (the ETA until progress gives a better one).
    estimate_s: Option<f64>,
    started: Instant,
    /// Runs finished (reused ones included) and in the whole bench.
    done: usize,
    total: usize,
}

impl<'a> CliHost<'a> {
    /// A host that shows progress unless `quiet` (each finished run with its `metric`), journals
    /// every finished run, and counts
    /// `reused` of `total` runs as done.
    pub fn new(
        quiet: bool,
        prefix: String,
        metric: &'static str,
        journal: &'a mut Journal<RunRecord>,
        estimate_s: Option<f64>,
        (reused, total): (usize, usize),
    ) -> Self {
        let terminal = std::io::stderr().is_terminal();
        let bar = (!quiet && terminal).then(|| {
            let b = ProgressBar::new(1000);
            b.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent:>3}% {msg}")
                    .expect("template")
                    .progress_chars("=> "),
            );
            b
        });
        CliHost {
            bar,
            lines: !quiet && !terminal,
            prefix,
            metric,
            journal,
            journal_failed: false,
            phase: None,
            estimate_s,
            started: Instant::now(),
            done: reused,
            total,
        }
    }

    /// Print a line above the bar, or alone without one.
    fn say(&self, line: String) {
        match &self.bar {
            Some(b) => b.println(line),
            None if self.lines => eprintln!("{line}"),
            None => {}
        }
    }

    /// Time left: from the share done once there is some, else from the estimate.
    fn eta(&self, fraction: f64) -> String {
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = if fraction >= 0.01 {
            Some(elapsed * (1.0 - fraction) / fraction)
        } else {
            self.estimate_s.map(|e| (e - elapsed).max(0.0))
        };
        left.map_or_else(|| "eta unknown".into(), |s| format!("eta {}", duration(s)))
    }

    /// Clear the bar (the bench ended).
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Host for CliHost<'_> {
    fn event(&mut self, event: &Event) {
        match event {
            Event::Progress(p) => {
                if self.phase != Some((p.phase, p.arm)) {
                    self.phase = Some((p.phase, p.arm));
                    self.say(format!("{}{} {}: training", self.prefix, p.arm.as_str(), p.phase.as_str()));
                }
                if let Some(bar) = &self.bar {
                    bar.set_position((p.fraction * 1000.0) as u64);
                    let finite: Vec<f64> = p.losses.iter().flatten().copied().collect();
                    let loss = if finite.is_empty() { "-".into() } else { num(rdbench_core::stats::mean(&finite)) };
                    bar.set_message(format!(
                        "{}{} {} | epoch {}/{} | runs {}/{} | loss {loss} | {}",
                        self.prefix,
                        p.arm.as_str(),
                        p.phase.as_str(),
                        p.epoch,
                        p.epochs,
                        p.runs_done,
                        p.runs_total,
                        self.eta(p.fraction)
                    ));
                }
            }
            Event::RunFinished(r) => {
                if let Err(e) = self.journal.append(r)
                    && !self.journal_failed
                {
                    self.journal_failed = true;
                    let msg = format!(
                        "warning: cannot append to the journal {}: {e}; runs finished from now on are lost if the bench is interrupted",
                        self.journal.path().display()
                    );
                    self.say(msg.clone());
                    if self.bar.is_none() && !self.lines {
                        eprintln!("{msg}");
                    }
                }
                self.done += 1;
                let metric = r.metric.map_or_else(|| "diverged".into(), |m| format!("{} {}", self.metric, num(m)));
                self.say(format!(
                    "{}run {}/{} finished: {} {} lr {} seed {}: {metric} ({} elapsed)",
                    self.prefix,
                    self.done,
                    self.total,
                    r.arm.as_str(),
                    r.phase.as_str(),
                    num(r.lr),
                    r.seed,
                    duration(self.started.elapsed().as_secs_f64())
                ));
            }
        }
    }

    fn cancelled(&self) -> bool {
        signal::interrupted()
    }
}
