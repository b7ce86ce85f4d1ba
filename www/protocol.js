// The typed messages between the page and the engine worker: the JS mirror of the serde enums
// in crates/core/src/messages.rs (`Request`, `WorkerEvent`, `StopReason`), which the worker's
// Rust loop (crates/worker) matches. A Rust test writes one of every message to
// tests/fixtures/messages.json and tests/js/protocol.test.mjs rebuilds them with the builders
// below and compares. Messages are plain objects (structured clone); the finished report
// travels as its JSON text, to be saved byte for byte.
//
// Page -> worker
//   { type: 'start', config, backend, prior, reuse_other_backends, slice, backend_note,
//     calibration, prior_elapsed_s }
//                                              config: the bench config (report `config` keys);
//                                              backend: 'auto' | 'webgpu' | 'cpu'; prior: the
//                                              RunRecords of a stopped bench to reuse ([] = fresh);
//                                              reuse_other_backends: also reuse runs made on
//                                              another backend ("Continue on CPU")
//                                              slice: { index, count } this worker's share of a
//                                              bench split over workers (null: all of it);
//                                              backend_note, calibration: from the 'backend'
//                                              event, recorded in the report's environment;
//                                              prior_elapsed_s: seconds the stopped attempts
//                                              whose runs are in prior ran (their 'stopped'
//                                              events' elapsed_s), counted in the bench's time
//   { type: 'resolve', backend, config, workers } choose and calibrate the backend for config
//                                              over up to `workers` CPU workers; answered by
//                                              'backend' (or 'stopped')
//   { type: 'recheck', report, selection, seed } train runs of a report again and compare them
//                                              with its records: selection 'N' (a draw seeded by
//                                              seed), 'all' or named runs (as `rdbench validate
//                                              --rerun`); answered by progress, run_finished and
//                                              'rechecked' (or 'stopped')
//   { type: 'runs', runs }                     RunRecords other workers of a split bench finished
//   { type: 'cancel' }                         stop before the next training step
//
// Worker -> page
//   { type: 'loaded' }                         the engine's wasm is ready
//   { type: 'backend', backend, adapter, note, calibration, workers, work_total, work_low, work_high,
//     fallback_adapter, trivial_loss }         the resolved backend; note: why auto chose it;
//                                              calibration: [{ backend, ms_per_work_unit,
//                                              ms_per_work_unit_min, ms_per_work_unit_max, workers,
//                                              population? }] (the median, fastest and slowest of
//                                              a few trials; WebGPU's are
//                                              this bench's figures from its population fit);
//                                              estimate = work_total x ms_per_work_unit / workers,
//                                              from work_low x ms_per_work_unit_min to
//                                              work_high x ms_per_work_unit_max;
//                                              fallback_adapter: WebGPU on a software adapter
//                                              (the CPU's calibration is listed too, to compare)
//                                              trivial_loss: { name, value, learned_below } the
//                                              track's trivial predictor in the loss's units and
//                                              the learning bar, for the live chart (null for a
//                                              classification)
//   { type: 'progress', progress }             before the first step (epoch 0, step 0, no run in
//                                              flight), then at most every 100 ms: phase, arm,
//                                              epoch, epochs, step, steps, runs_done, runs_total,
//                                              fraction, lrs, seeds, losses, elapsed_s; elapsed_s
//                                              and fraction count a resumed bench's stopped
//                                              attempts and reused runs (in a split bench worker
//                                              0 counts the reused runs: the workers' parts add up)
//   { type: 'run_finished', run }              a run's final RunRecord
//   { type: 'report', json }                   the finished report text
//   { type: 'stopped', reason, message, runs, elapsed_s, fraction_kept }
//                                              stopped early; reason: 'cancelled' | 'device' |
//                                              'backend' | 'config'; runs: the finished RunRecords;
//                                              elapsed_s: the bench's seconds so far (a resume sends
//                                              them back); fraction_kept: this worker's part of the
//                                              bench's work in kept runs (the parts add up)
//   { type: 'rechecked', runs, differing, tolerance, note, other_build, elapsed_s }
//                                              a re-check's result: runs re-run (names), those that
//                                              differ (name and first differences), the relative
//                                              tolerance allowed (null: bit for bit) and why, the
//                                              build that made the runs if not this one
//   { type: 'error', message, fatal }          the engine crashed; fatal: replace the worker

/** Request type names (page -> worker). */
export const REQUEST = Object.freeze({ start: 'start', resolve: 'resolve', recheck: 'recheck', runs: 'runs', cancel: 'cancel' });

/** Event type names (worker -> page). */
export const EVENT = Object.freeze({
  loaded: 'loaded',
  backend: 'backend',
  progress: 'progress',
  runFinished: 'run_finished',
  report: 'report',
  rechecked: 'rechecked',
  stopped: 'stopped',
  error: 'error',
});

/** Why a bench stopped early. */
export const STOP_REASON = Object.freeze({ cancelled: 'cancelled', device: 'device', backend: 'backend', config: 'config' });

/** The backends a user can ask for (not a config field: the same config runs on any). */
export const BACKENDS = Object.freeze([
  { value: 'auto', label: 'auto (the faster, calibrated)' },
  { value: 'webgpu', label: 'WebGPU' },
  { value: 'cpu', label: 'CPU (wasm)' },
]);

/** Requests, so both sides spell them the same way. */
export const request = Object.freeze({
  start: (config, backend, prior = [], reuseOtherBackends = false, { slice = null, note = '', calibration = [], priorElapsed = 0 } = {}) =>
    ({ type: REQUEST.start, config, backend, prior, reuse_other_backends: reuseOtherBackends, slice, backend_note: note, calibration, prior_elapsed_s: priorElapsed }),
  resolve: (config, backend, workers) => ({ type: REQUEST.resolve, backend, config, workers }),
  recheck: (report, selection, seed) => ({ type: REQUEST.recheck, report, selection, seed }),
  runs: (runs) => ({ type: REQUEST.runs, runs }),
  cancel: () => ({ type: REQUEST.cancel }),
});

/** The events made in JS: by the worker script (loaded, a crash) and by the page when a
 *  bench ends before a worker could answer (stopped); the Rust loop makes the others. */
export const event = Object.freeze({
  loaded: () => ({ type: EVENT.loaded }),
  stopped: (reason, message, runs = [], elapsed = 0, fractionKept = 0) =>
    ({ type: EVENT.stopped, reason, message, runs, elapsed_s: elapsed, fraction_kept: fractionKept }),
  error: (message, fatal) => ({ type: EVENT.error, message, fatal }),
});
