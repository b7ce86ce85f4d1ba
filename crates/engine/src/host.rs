//! How the engine talks to whoever drives it: events out, cancellation in, and a way to
//! give the host's event loop a turn between steps (the browser worker needs one to see a
//! cancel message while the engine runs).

use rdbench_core::progress::Progress;
use rdbench_core::records::RunRecord;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// What the engine reports while it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A training step finished.
    Progress(Progress),
    /// A run finished (its record is final).
    RunFinished(RunRecord),
}

/// The engine's driver: the CLI or the browser worker.
pub trait Host {
    /// Receive an event.
    fn event(&mut self, event: &Event);
    /// Whether the user asked to stop; checked before every training step.
    fn cancelled(&self) -> bool;
    /// Whether this host needs each step's progress as the step ends (a timer). Otherwise a
    /// GPU's losses are read once per epoch, or every few seconds, and their progress events
    /// come then, in order; what is computed is the same either way.
    fn every_step(&self) -> bool {
        false
    }
    /// Let the host's event loop run (native hosts return a ready future).
    fn pause(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(std::future::ready(()))
    }
    /// Resolves when a cancel may have arrived. A wait on the device races it: a GPU read
    /// waits for every step queued before it (on a software adapter, an epoch's for many
    /// seconds), and a cancel must not wait for them. Hosts whose `cancelled` only changes
    /// between steps never resolve it.
    fn interrupted(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(std::future::pending())
    }
    /// Records other workers finished since the last call (a split bench, see [`Slice`]).
    fn take_runs(&mut self) -> Vec<RunRecord> {
        Vec::new()
    }
    /// Wait until another worker's record or a cancel may have arrived (a split bench). A
    /// host that has no other workers never gets here.
    fn wait_for_runs(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(std::future::ready(()))
    }
}

/// A host that ignores events and never cancels (tests, benchmarks).
pub struct Quiet;

impl Host for Quiet {
    fn event(&mut self, _: &Event) {}
    fn cancelled(&self) -> bool {
        false
    }
}
