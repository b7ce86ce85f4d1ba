//! Cell evaluations, counted where they run: each step evaluation, each reversal iteration
//! (one per algebraic inverse) and each one-step VJP adds itself, once per run of the
//! population it evaluates, to this thread's counters. A gradient schedule reads the
//! counters before and after its pass (`crate::schedule`), so what it reports is what ran.
//!
//! Per thread: the runs of a phase train on their own threads natively (and one population
//! per browser worker), and a pass runs on one thread.

use std::cell::Cell;
use std::ops::Sub;

/// Cell evaluations, each of one run: a population of R runs evaluated once adds R.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evals {
    /// Forward step evaluations h_t from h_{t-1}.
    pub forward: u64,
    /// Reversal cell evaluations: fixed-point iterations (GRU), inverses (exact models).
    pub reversal: u64,
    /// One-step vector-Jacobian products (each re-runs its step inside).
    pub vjp: u64,
}

impl Sub for Evals {
    type Output = Evals;
    fn sub(self, o: Evals) -> Evals {
        Evals { forward: self.forward - o.forward, reversal: self.reversal - o.reversal, vjp: self.vjp - o.vjp }
    }
}

thread_local! {
    static COUNTED: Cell<Evals> = const { Cell::new(Evals { forward: 0, reversal: 0, vjp: 0 }) };
}

/// This thread's counts so far.
pub fn so_far() -> Evals {
    COUNTED.with(Cell::get)
}

fn add(f: impl FnOnce(&mut Evals)) {
    COUNTED.with(|c| {
        let mut e = c.get();
        f(&mut e);
        c.set(e);
    });
}

/// `runs` step evaluations ran.
pub(crate) fn forward(runs: usize) {
    add(|e| e.forward += runs as u64);
}

/// `runs` reversal cell evaluations ran.
pub(crate) fn reversal(runs: usize) {
    add(|e| e.reversal += runs as u64);
}

/// `runs` one-step VJPs ran.
pub(crate) fn vjp(runs: usize) {
    add(|e| e.vjp += runs as u64);
}
