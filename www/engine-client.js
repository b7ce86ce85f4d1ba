// The engine's workers, seen from the page: load them early, resolve and calibrate the backend,
// start a bench split over the CPU workers (one wasm instance each; runs are independent, so
// the report is the one-worker report), relay finished runs between them, cancel, resume with
// the runs that already finished, and replace the workers after a crash. It speaks only the
// messages of www/protocol.js and touches no DOM: the page learns what happened through the
// callbacks given to createEngine.
import { EVENT, STOP_REASON, event, request } from './protocol.js';

/** CPU workers by default: one per hardware thread, at most 8 (a population has ~9 runs). */
export const defaultWorkers = () => Math.max(1, Math.min(navigator.hardwareConcurrency || 1, 8));

/** Parse a `workers` URL value: an integer 1..16, or an error naming the problem. */
export function parseWorkers(text) {
  const n = Number(text);
  if (!/^\d+$/.test(String(text).trim()) || n < 1 || n > 16) {
    return { error: `workers: ${JSON.stringify(String(text))} is not a whole number from 1 to 16` };
  }
  return { value: n };
}

const runKey = (r) => `${r.arm}|${r.phase}|${r.lr}|${r.seed}|${r.backend}|${r.run_hash}`;

/**
 * The runs in flight of one worker's progress event, each at its own step: the step of the
 * population that worker trains (another worker may be at another step or phase).
 */
export const inFlight = (p) => p.lrs.map((lr, i) => ({
  arm: p.arm,
  phase: p.phase,
  lr,
  seed: p.seeds[i],
  step: (p.epoch - 1) * p.steps + p.step,
  loss: p.losses[i],
}));

/**
 * on: { loading(), loaded(), backend(info), progress(p), runFinished(run), report(json),
 *       stopped(msg, kept, {fractionKept, elapsed}), crashed(message, {wasRunning, onWebGpu, kept}), started(sent) }
 * A merged progress is the reporting worker's progress with the bench's fraction, runs_done
 * and elapsed_s over every worker, `in_flight` (see inFlight) the runs in flight on all of
 * them, and `reported` the reporting worker's (each step of a run is reported once).
 * `complete` is false until every worker has reported once: the bench's figures are then
 * not yet known (a sum lacking worker 0's reused runs), though the steps reported are.
 * options: { workers }: CPU workers to split a bench over (default: defaultWorkers()).
 */
export function createEngine(on, { workers = defaultWorkers() } = {}) {
  // Exposed (read-only by convention) to the page and, through window.rdbench, to tests.
  const state = {
    running: false,
    loaded: false,
    finishedRuns: [],
    // The config and backend of the last start: a resume must use the same config.
    lastConfig: null,
    // After a cancel or a failure the finished runs may be reused by the next start.
    resumable: false,
    // Seconds the stopped attempts of a resumable bench ran: its resume counts them.
    elapsedBefore: 0,
    // The last 'backend' event: backend, adapter, note, calibration, workers, work_total, work_low, work_high.
    backendInfo: null,
    // Every start the page asked for (as one request), so tests can check what a run used.
    sent: [],
    workers,
  };
  const pool = [];
  // Resolutions (with their calibration) by config and backend: an estimate before Run and
  // the Run itself measure once. Cleared when the workers are replaced.
  const resolved = new Map();
  // The resolve in flight: { promise, settle } (one at a time, on worker 0).
  let resolving = null;
  // The other workers' CPU timings that go with it, by worker index: their settle.
  const sideCalibrations = new Map();
  // The bench in flight: per worker, its last progress and whether it has ended.
  let run = null;

  function spawn(i) {
    if (i === 0) on.loading();
    const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    w.onmessage = ({ data }) => onMessage(i, data);
    w.onerror = (e) => crash(e.message || 'the engine worker failed to start');
    w.onmessageerror = () => crash('a message from the engine could not be read');
    pool[i] = w;
    return w;
  }
  const ensureWorker = (i = 0) => pool[i] ?? spawn(i);

  function dropWorkers() {
    pool.forEach((w) => w?.terminate());
    pool.length = 0;
    state.loaded = false;
    resolved.clear();
    for (const [i, settle] of sideCalibrations) {
      sideCalibrations.delete(i);
      settle(event.stopped(STOP_REASON.backend, 'the engine worker stopped'));
    }
    if (resolving) resolving.settle(event.stopped(STOP_REASON.backend, 'the engine worker stopped'));
  }

  /** Runs a start with `config` may reuse: those of a stopped bench with the same config. */
  function reusable(config) {
    const same = state.lastConfig && JSON.stringify(state.lastConfig) === JSON.stringify(config);
    return state.resumable && same ? state.finishedRuns : [];
  }

  /** Ask worker 0 to resolve `backend` for `config`: the 'backend' event, or a 'stopped'. */
  async function resolveBackend(config, backend) {
    const key = JSON.stringify([config, backend]);
    if (resolved.has(key)) return resolved.get(key);
    const m = await askResolve(config, backend);
    if (m.type === EVENT.backend) resolved.set(key, m);
    return m;
  }

  // Resolves run one after another, each with its side calibrations: a second one started
  // while the first's other workers still time the CPU would find them busy.
  let resolveChain = Promise.resolve();

  function askResolve(config, backend) {
    const job = resolveChain.then(() => resolveOnce(config, backend));
    resolveChain = job.catch(() => {});
    return job;
  }

  async function resolveOnce(config, backend) {
    let settle;
    const promise = new Promise((r) => { settle = r; });
    resolving = { promise, settle: (m) => { resolving = null; settle(m); } };
    // The bench runs on every CPU worker at once, sharing the cores: its calibration too, or
    // a worker timed alone reads the machine faster than the bench will find it. The other
    // workers time the CPU while worker 0 resolves (and times) the backend asked for.
    const others = backend === 'webgpu' ? [] : Array.from({ length: workers - 1 }, (_, j) => sideCalibration(j + 1, config));
    ensureWorker(0).postMessage(request.resolve(structuredClone(config), backend, workers));
    const [m, ...side] = await Promise.all([promise, ...others]);
    return m.type === EVENT.backend ? withSideCalibrations(m, side) : m;
  }

  /** Worker `i` times the CPU for `config` (a 'resolve' for the CPU): its 'backend' event,
   *  or its 'stopped'. */
  function sideCalibration(i, config) {
    return new Promise((settle) => {
      sideCalibrations.set(i, settle);
      ensureWorker(i).postMessage(request.resolve(structuredClone(config), 'cpu', workers));
    });
  }

  /** Worker 0's 'backend' event `m` with its CPU calibration taken over every worker: the
   *  mean of their figures (each a median trial), the fastest and the slowest of their
   *  trials. */
  function withSideCalibrations(m, side) {
    const cpu = m.calibration.findIndex((c) => c.backend !== 'webgpu');
    const theirs = side.filter((s) => s.type === EVENT.backend)
      .map((s) => s.calibration.find((c) => c.backend === m.calibration[cpu]?.backend))
      .filter(Boolean);
    if (cpu < 0 || !theirs.length) return { ...m, timed_workers: 1 };
    const all = [m.calibration[cpu], ...theirs];
    const calibration = m.calibration.slice();
    calibration[cpu] = {
      ...m.calibration[cpu],
      ms_per_work_unit: all.reduce((s, c) => s + c.ms_per_work_unit, 0) / all.length,
      ms_per_work_unit_min: Math.min(...all.map((c) => c.ms_per_work_unit_min ?? c.ms_per_work_unit)),
      ms_per_work_unit_max: Math.max(...all.map((c) => c.ms_per_work_unit_max ?? c.ms_per_work_unit)),
    };
    // How many workers the CPU's figure was timed on at once (a page-side field).
    return { ...m, calibration, timed_workers: all.length };
  }

  /**
   * The backend `backend` resolves to for `config`, with its calibration and the bench's
   * work units (for an estimate before Run): the 'backend' event, or throws the reason.
   */
  async function calibrate(config, backend) {
    if (state.running) throw new Error('a bench is running');
    const m = await resolveBackend(config, backend);
    if (m.type !== EVENT.backend) throw new Error(m.message);
    return m;
  }

  /** Start a bench; resumes from the finished runs when the config is the stopped one's. */
  function start(config, backend, { reuseOtherBackends = false } = {}) {
    if (state.running || !config) return null;
    const prior = reusable(config);
    const priorElapsed = prior.length ? state.elapsedBefore : 0;
    state.running = true;
    state.resumable = false;
    state.lastConfig = structuredClone(config);
    state.finishedRuns = prior.slice();
    state.elapsedBefore = priorElapsed;
    const message = request.start(structuredClone(config), backend, prior, reuseOtherBackends, { priorElapsed });
    state.sent.push(structuredClone(message));
    const thisRun = { n: 0, cancelled: false, progress: [], inFlight: [], ended: [], stops: [], last: null, report: null };
    run = thisRun;
    on.started(message);
    resolveBackend(config, backend).then((info) => {
      if (run !== thisRun) return;
      if (info.type !== EVENT.backend) return endRun({ ...info, runs: prior });
      if (thisRun.cancelled) return endRun(event.stopped(STOP_REASON.cancelled, 'cancelled before it started', prior));
      state.backendInfo = info;
      on.backend(info);
      const n = info.backend === 'webgpu' ? 1 : Math.max(1, info.workers);
      Object.assign(thisRun, { n, ended: Array(n).fill(false), progress: Array(n).fill(null), inFlight: Array(n).fill(null) });
      const kind = info.backend === 'webgpu' ? 'webgpu' : 'cpu';
      for (let i = 0; i < n; i++) {
        const slice = n > 1 ? { index: i, count: n } : null;
        ensureWorker(i).postMessage(request.start(structuredClone(config), kind, prior, reuseOtherBackends,
          { slice, note: info.note, calibration: info.calibration, priorElapsed }));
      }
    });
    return message;
  }

  function cancel() {
    if (!state.running || !run) return;
    run.cancelled = true;
    pool.forEach((w, i) => { if (!run.ended[i]) w?.postMessage(request.cancel()); });
  }

  function addRuns(runs) {
    const have = new Set(state.finishedRuns.map(runKey));
    for (const r of runs ?? []) if (!have.has(runKey(r))) { state.finishedRuns.push(r); have.add(runKey(r)); }
  }

  /** Bench-wide progress from each worker's last: a worker's fraction and runs are its own
   *  share (worker 0's include the reused runs), so they add up; each run in flight keeps its
   *  own worker's step. */
  function merged(latest) {
    const parts = run.progress.filter(Boolean);
    const flight = run.inFlight.filter(Boolean);
    return {
      ...latest,
      fraction: Math.min(1, parts.reduce((s, p) => s + p.fraction, 0)),
      runs_done: parts.reduce((s, p) => s + p.runs_done, 0),
      elapsed_s: Math.max(...parts.map((p) => p.elapsed_s)),
      in_flight: flight.flatMap(inFlight),
      reported: inFlight(latest),
      complete: parts.length === run.progress.length,
    };
  }

  /** The bench ended: a report, or a stop (the first reason other than a cancel wins), with
   *  the share of the bench the kept runs hold (the workers' parts add up) and its time. */
  function endRun(m, { fractionKept = m.fraction_kept ?? 0, elapsed = m.elapsed_s ?? 0 } = {}) {
    run = null;
    state.running = false;
    if (m.type === EVENT.report) {
      state.resumable = false;
      state.elapsedBefore = 0;
      on.report(m.json);
    } else {
      state.resumable = true;
      state.elapsedBefore = Math.max(state.elapsedBefore, elapsed);
      addRuns(m.runs);
      // A failed device or backend is measured again next time.
      if (m.reason !== STOP_REASON.cancelled) resolved.clear();
      on.stopped(m, state.finishedRuns.length, { fractionKept, elapsed: state.elapsedBefore });
    }
  }

  /** Whether `m` answers worker `i`'s side calibration (and settles it). */
  function takeSide(i, m) {
    const settle = i > 0 && sideCalibrations.get(i);
    if (!settle) return false;
    sideCalibrations.delete(i);
    settle(m);
    return true;
  }

  function onMessage(i, m) {
    switch (m?.type) {
      case EVENT.loaded:
        if (i === 0) {
          state.loaded = true;
          on.loaded();
        }
        break;
      case EVENT.backend:
        if (takeSide(i, m)) break;
        resolving?.settle(m);
        break;
      case EVENT.progress:
        if (!run) break;
        run.progress[i] = m.progress;
        run.inFlight[i] = m.progress;
        run.last = m.progress;
        on.progress(merged(m.progress));
        break;
      case EVENT.runFinished:
        addRuns([m.run]);
        if (run) {
          run.inFlight[i] = null; // its population is done: no stale live losses
          if (run.n > 1) pool.forEach((w, j) => { if (j !== i && j < run.n) w?.postMessage(request.runs([m.run])); });
        }
        on.runFinished(m.run);
        break;
      case EVENT.report:
        // Every worker of a split bench ends with every run; worker 0's report is the bench's.
        // The bench ends when every worker has: none is still busy with it when the next
        // starts, and no late message of it is taken for the next one's.
        if (!run) break;
        run.ended[i] = true;
        if (i === 0) run.report = m;
        if (run.ended.every(Boolean)) endRun(run.report ?? m);
        break;
      case EVENT.stopped:
        if (takeSide(i, m)) break;
        if (resolving && !run?.n) { resolving.settle(m); break; }
        if (!run) break;
        run.ended[i] = true;
        run.stops.push(m);
        addRuns(m.runs);
        if (!run.cancelled) cancel();
        if (run.ended.every(Boolean) && run.report) endRun(run.report);
        else if (run.ended.every(Boolean)) {
          const first = run.stops.find((s) => s.reason !== STOP_REASON.cancelled) ?? run.stops[0];
          const fractionKept = run.stops.reduce((s, x) => s + (x.fraction_kept ?? 0), 0);
          const elapsed = Math.max(...run.stops.map((x) => x.elapsed_s ?? 0));
          endRun({ ...first, runs: [] }, { fractionKept, elapsed });
        }
        break;
      case EVENT.error:
        crash(m.message, m.fatal);
        break;
      default:
        console.warn('unknown message from an engine worker', m);
    }
  }

  /** The engine failed (a panic, a lost device, a worker that did not load). */
  function crash(message, fatal = true) {
    const wasRunning = state.running;
    state.running = false;
    state.resumable = true;
    // The time the bench had run, as far as its last progress said.
    if (run?.last) state.elapsedBefore = Math.max(state.elapsedBefore, run.last.elapsed_s);
    run = null;
    // A fatal error leaves an instance that cannot be trusted, and a split bench cannot go on
    // without one of its workers: the next start gets new ones.
    if (fatal) dropWorkers();
    on.crashed(message, {
      wasRunning,
      fatal,
      onWebGpu: state.backendInfo?.backend === 'webgpu',
      kept: state.finishedRuns.length,
    });
  }

  /** Load every worker's engine in the background (each compiles the wasm once). */
  function preload() {
    for (let i = 0; i < workers; i++) ensureWorker(i);
  }

  return { state, start, cancel, calibrate, preload, reusable };
}
