//! Native parallelism: a population split into slices that train on their own threads. At
//! these sizes burn-flex runs every op on one core, so a population is one core's work; runs
//! are independent and every kernel works run by run, so a run's numbers do not depend on the
//! slice it trains in (tested), and the records come back in spec order.

use super::arm::GradientRule;
use super::{Population, Tally, train_population};
use crate::error::EngineError;
use crate::host::{Event, Host};
use rdbench_core::records::{RunRecord, RunSpec};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

/// A slice's host: events go to the coordinating thread, cancellation comes from it.
struct SliceHost<'a> {
    slice: usize,
    events: mpsc::Sender<(usize, Event)>,
    cancel: &'a AtomicBool,
}

impl Host for SliceHost<'_> {
    fn event(&mut self, event: &Event) {
        let _ = self.events.send((self.slice, event.clone()));
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

pub use rdbench_core::records::slices;

/// Train `specs` like [`train_population`], split over up to `threads` threads, each slice a
/// population of its own with a fresh rule from `make_rule`. Progress events are merged into
/// bench-wide figures; a cancel reaches every slice before its next step.
pub fn train_split(
    at: &Population<'_>,
    specs: &[RunSpec],
    make_rule: &(dyn Fn() -> Box<dyn GradientRule> + Sync),
    host: &mut dyn Host,
    tally: &mut Tally,
    threads: usize,
) -> Result<Vec<RunRecord>, EngineError> {
    let parts = slices(specs.len(), threads);
    let cancel = AtomicBool::new(false);
    let (base_work, base_runs) = (tally.work_done, tally.runs_done);
    let (tx, rx) = mpsc::channel();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .enumerate()
            .map(|(slice, range)| {
                let (events, cancel) = (tx.clone(), &cancel);
                let mut local = Tally { start: tally.start, ..*tally };
                let chunk = &specs[range.clone()];
                scope.spawn(move || {
                    let mut rule = make_rule();
                    let mut host = SliceHost { slice, events, cancel };
                    futures::executor::block_on(train_population(at, chunk, &mut *rule, &mut host, &mut local))
                })
            })
            .collect();
        drop(tx);
        // Each slice counts from the same base; the bench's figures are the base plus every
        // slice's own progress.
        let mut work = vec![0u64; parts.len()];
        let mut runs = vec![0usize; parts.len()];
        for (slice, mut event) in rx {
            if let Event::Progress(p) = &mut event {
                work[slice] = ((p.fraction * tally.work_total as f64).round() as u64).saturating_sub(base_work);
                runs[slice] = p.runs_done.saturating_sub(base_runs);
                p.runs_done = base_runs + runs.iter().sum::<usize>();
                p.fraction = (base_work + work.iter().sum::<u64>()) as f64 / tally.work_total.max(1) as f64;
            }
            host.event(&event);
            if host.cancelled() {
                cancel.store(true, Ordering::Relaxed);
            }
        }
        handles.into_iter().map(|h| h.join().expect("a training thread panicked")).collect::<Vec<_>>()
    });
    let mut records = Vec::with_capacity(specs.len());
    for r in results {
        records.extend(r?);
    }
    tally.runs_done = base_runs + records.len();
    tally.work_done = base_work + work_of(specs.len(), at, make_rule);
    Ok(records)
}

/// Work units of `runs` runs of `at` (as the single-threaded tally counts them).
fn work_of(runs: usize, at: &Population<'_>, make_rule: &(dyn Fn() -> Box<dyn GradientRule> + Sync)) -> u64 {
    let cost = make_rule().cost(at.model, at.train.t, at.train.n);
    runs as u64 * cost.run_units(at.train.n, at.eval.n, at.settings.epochs)
}

#[cfg(test)]
mod tests {
    use super::slices;

    #[test]
    fn slices_cover_in_order() {
        assert_eq!(slices(5, 2), vec![0..2, 2..5]);
        assert_eq!(slices(9, 2), vec![0..4, 4..9]);
        assert_eq!(slices(1, 4), vec![0..1]);
        assert_eq!(slices(8, 1), vec![0..8]);
        assert_eq!(slices(0, 2), Vec::<std::ops::Range<usize>>::new());
    }
}
