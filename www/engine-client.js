// The engine worker's lifecycle, seen from the page: load it early, start a bench, cancel it,
// resume with the runs that already finished, and replace the worker after a crash. It speaks
// only the messages of www/protocol.js and touches no DOM: the page learns what happened
// through the callbacks given to createEngine.
import { EVENT, request } from './protocol.js';

/**
 * on: { loading(), loaded(), backend(info), progress(p), runFinished(run), report(json),
 *       stopped(msg, kept), crashed(message, {wasRunning, onWebGpu, kept}), started(sent) }
 */
export function createEngine(on) {
  // Exposed (read-only by convention) to the page and, through window.rdbench, to tests.
  const state = {
    running: false,
    loaded: false,
    finishedRuns: [],
    // The config and backend of the last start: a resume must use the same config.
    lastConfig: null,
    // After a cancel or a failure the finished runs may be reused by the next start.
    resumable: false,
    backendInfo: null,
    // Every start message posted, so tests can check that a run used what the controls showed.
    sent: [],
  };
  let worker = null;

  function ensureWorker() {
    if (worker) return worker;
    on.loading();
    worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = ({ data }) => onMessage(data);
    worker.onerror = (e) => crash(e.message || 'the engine worker failed to start');
    worker.onmessageerror = () => crash('a message from the engine could not be read');
    return worker;
  }

  function dropWorker() {
    worker?.terminate();
    worker = null;
    state.loaded = false;
  }

  /** Runs a start with `config` may reuse: those of a stopped bench with the same config. */
  function reusable(config) {
    const same = state.lastConfig && JSON.stringify(state.lastConfig) === JSON.stringify(config);
    return state.resumable && same ? state.finishedRuns : [];
  }

  /** Start a bench; resumes from the finished runs when the config is the stopped one's. */
  function start(config, backend, { reuseOtherBackends = false } = {}) {
    if (state.running || !config) return null;
    const prior = reusable(config);
    state.running = true;
    state.resumable = false;
    state.lastConfig = structuredClone(config);
    state.finishedRuns = prior.slice();
    const message = request.start(structuredClone(config), backend, prior, reuseOtherBackends);
    state.sent.push(structuredClone(message));
    on.started(message);
    ensureWorker().postMessage(message);
    return message;
  }

  function cancel() {
    if (state.running) worker?.postMessage(request.cancel());
  }

  function onMessage(m) {
    switch (m?.type) {
      case EVENT.loaded:
        state.loaded = true;
        on.loaded();
        break;
      case EVENT.backend:
        state.backendInfo = m;
        on.backend(m);
        break;
      case EVENT.progress:
        on.progress(m.progress);
        break;
      case EVENT.runFinished:
        state.finishedRuns.push(m.run);
        on.runFinished(m.run);
        break;
      case EVENT.report:
        state.running = false;
        state.resumable = false;
        on.report(m.json);
        break;
      case EVENT.stopped:
        state.running = false;
        state.resumable = true;
        // The engine's list is authoritative for what finished.
        if (Array.isArray(m.runs) && m.runs.length >= state.finishedRuns.length) state.finishedRuns = m.runs;
        on.stopped(m, state.finishedRuns.length);
        break;
      case EVENT.error:
        crash(m.message, m.fatal);
        break;
      default:
        console.warn('unknown message from the engine worker', m);
    }
  }

  /** The engine failed (a panic, a lost device, a worker that did not load). */
  function crash(message, fatal = true) {
    const wasRunning = state.running;
    state.running = false;
    state.resumable = true;
    // A fatal error leaves an instance that cannot be trusted: the next start gets a new one.
    if (fatal) dropWorker();
    on.crashed(message, {
      wasRunning,
      fatal,
      onWebGpu: state.backendInfo?.backend === 'webgpu',
      kept: state.finishedRuns.length,
    });
  }

  return { state, start, cancel, preload: ensureWorker, reusable };
}
