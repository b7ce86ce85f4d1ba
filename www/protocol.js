// The message protocol between the page (www/app.js) and the engine worker (www/worker.js).
//
// Page -> worker
//   { type: 'start', config, backend, prior }
//       config:  the bench config, keys as in bench_report.json's "config" (see config.js)
//       backend: 'auto' | 'webgpu' | 'cpu'
//       prior:   finished runs (RunRecord objects) to reuse instead of retraining: the runs of a
//                cancelled or failed bench with the same config. [] for a fresh bench.
//   { type: 'cancel' }
//       stop before the next training step; the worker answers with 'stopped'.
//
// Worker -> page
//   { type: 'loaded' }                          the engine's wasm is compiled and ready
//   { type: 'backend', backend, adapter, note } the backend a 'start' runs on ('cpu-flex' or
//                                               'webgpu'); note says why 'auto' fell back to the CPU
//   { type: 'progress', progress }              after training steps, at most every 100 ms:
//                                               phase, arm, epoch/epochs, step/steps, runs_done,
//                                               runs_total, fraction, lrs, seeds, losses, elapsed_s
//   { type: 'run-finished', run }               a run's final record (RunRecord of the report)
//   { type: 'report', json }                    the finished report, the exact text to download
//   { type: 'stopped', reason, message, runs }  the bench stopped early: reason 'cancelled',
//                                               'device' (WebGPU failed), 'backend' (init failed)
//                                               or 'config'; runs = the finished RunRecords
//   { type: 'error', message, fatal }           the engine crashed (a panic or a lost device);
//                                               fatal: the worker must be replaced

/** Message constructors, so both sides spell the protocol the same way. */
export const toWorker = {
  start: (config, backend, prior = []) => ({ type: 'start', config, backend, prior }),
  cancel: () => ({ type: 'cancel' }),
};

export const fromWorker = {
  loaded: () => ({ type: 'loaded' }),
  backend: (backend, adapter, note = '') => ({ type: 'backend', backend, adapter, note }),
  progress: (progress) => ({ type: 'progress', progress }),
  runFinished: (run) => ({ type: 'run-finished', run }),
  report: (json) => ({ type: 'report', json }),
  stopped: (reason, message, runs) => ({ type: 'stopped', reason, message, runs }),
  error: (message, fatal) => ({ type: 'error', message, fatal }),
};
