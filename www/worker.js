// The engine worker: loads the engine's wasm, resolves the backend (calibrating when `auto`
// has a real choice), runs a bench or its share of one. Every message is one of the typed
// messages of protocol.js (src/messages.rs).
import init, { init_backend, run_bench, calibrate, work_total } from './pkg/rdbench.js';
import { REQUEST, STOP_REASON, event } from './protocol.js';
import { chooseFaster } from './backend-choice.js';

let cancelRequested = false;
let busy = false;

// A macrotask turn without setTimeout's 4 ms clamp: lets a 'cancel' message in.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldNow = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });

// Records of the other workers of a split bench, relayed by the page. A worker waiting for
// them sleeps on a promise (no busy loop: the core is another worker's).
let received = [];
let wakers = [];
const takeRuns = () => received.splice(0);
const wake = () => { const w = wakers; wakers = []; w.forEach((f) => f()); };
const waitRuns = () => new Promise((resolve) => { wakers.push(resolve); setTimeout(resolve, 1000); });

const ready = init().then(
  () => postMessage(event.loaded()),
  (e) => { postMessage(event.error(`could not load the engine: ${e?.message ?? e}`, true)); throw e; },
);

async function gpuAdapter() {
  if (!('gpu' in navigator)) return null;
  try { return await navigator.gpu.requestAdapter(); } catch { return null; }
}

/** Whether the adapter is a software fallback (SwiftShader and the like). */
const isFallback = (adapter) => Boolean(adapter?.info?.isFallbackAdapter ?? adapter?.isFallbackAdapter);

/** The browser's words for its adapter, e.g. "google swiftshader (fallback)". */
function describe(adapter) {
  const i = adapter?.info ?? {};
  const words = [i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ');
  return `${words || 'unnamed adapter'}${isFallback(adapter) ? ' (fallback adapter)' : ''}`;
}

/**
 * Resolve the requested backend for `config` and measure it: 'auto' never takes a fallback
 * adapter and, given a real one, times a few training steps on WebGPU and on the CPU workers
 * and takes the faster. Answers with one 'backend' event (with the calibration and the
 * bench's work units for the page's estimate), or 'stopped'.
 */
async function resolve({ backend: requested, config, workers }) {
  await ready;
  const cpuWorkers = Math.max(1, workers | 0);
  const figures = [];
  const measure = async (kind, n) => {
    const c = await calibrate(kind, config, n);
    figures.push(c);
    return c;
  };
  let kind = 'cpu';
  let note = '';
  let adapterHint = '';
  const adapter = requested === 'cpu' ? null : await gpuAdapter();
  if (requested !== 'cpu') {
    if (!adapter) {
      if (requested === 'webgpu') throw new Error('WebGPU is not available in this browser (navigator.gpu gave no adapter).');
      note = 'no WebGPU adapter: running on the CPU';
    } else if (requested === 'auto' && isFallback(adapter)) {
      // A software adapter runs WebGPU on the CPU, through an emulation far slower than the
      // engine's own CPU path (measured: 40x on a tiny bench), so auto never picks it.
      note = `the only WebGPU adapter is a software fallback (${describe(adapter)}): running on the CPU, which is faster`;
    } else {
      adapterHint = describe(adapter);
      try {
        await init_backend('webgpu', adapterHint);
        kind = 'webgpu';
      } catch (e) {
        if (requested === 'webgpu') throw e;
        note = `WebGPU failed to start (${e?.message ?? e}): running on the CPU`;
      }
      if (kind === 'webgpu' && requested === 'auto') {
        const gpu = await measure('webgpu', 1);
        const cpu = await measure('cpu', cpuWorkers);
        const pick = chooseFaster(gpu, cpu);
        kind = pick.backend === 'webgpu' ? 'webgpu' : 'cpu';
        note = pick.why;
      }
    }
  }
  const info = await init_backend(kind, kind === 'webgpu' ? adapterHint : '');
  const n = kind === 'webgpu' ? 1 : cpuWorkers;
  if (!figures.some((f) => f.backend === info.backend)) await measure(kind, n);
  return { ...info, note, calibration: figures, workers: n, work_total: work_total(config) };
}

async function onResolve(req) {
  if (busy) return postMessage(event.stopped(STOP_REASON.config, 'a bench is already running', []));
  busy = true;
  try {
    await ready;
    try {
      work_total(req.config); // rejects an invalid config, naming the field
    } catch (e) {
      postMessage(event.stopped(STOP_REASON.config, String(e?.message ?? e), []));
      return;
    }
    postMessage(await resolve(req));
  } catch (e) {
    postMessage(event.stopped(STOP_REASON.backend, String(e?.message ?? e), []));
  } finally {
    busy = false;
  }
}

async function start(req) {
  const prior = req.prior ?? [];
  if (busy) return postMessage(event.stopped(STOP_REASON.config, 'a bench is already running', prior));
  busy = true;
  cancelRequested = false;
  received = [];
  try {
    await ready;
    let kind;
    try {
      // The page resolves 'auto' first (a 'resolve' request) and starts with the result.
      kind = req.backend === 'auto' ? (await resolve({ backend: 'auto', config: req.config, workers: 1 })).backend : req.backend;
      kind = kind === 'webgpu' ? 'webgpu' : 'cpu';
      await init_backend(kind, '');
    } catch (e) {
      postMessage(event.stopped(STOP_REASON.backend, String(e?.message ?? e), prior));
      return;
    }
    // The engine sends every outcome (progress, run_finished, report, stopped) as an event.
    await run_bench(req, kind, (ev) => postMessage(ev), () => cancelRequested, yieldNow, takeRuns, waitRuns);
  } catch (e) {
    // A panic or a lost device: this instance cannot be trusted any more.
    postMessage(event.error(String(e?.message ?? e), true));
  } finally {
    busy = false;
  }
}

onmessage = ({ data }) => {
  switch (data?.type) {
    case REQUEST.cancel: cancelRequested = true; wake(); break;
    case REQUEST.runs: received.push(...(data.runs ?? [])); wake(); break;
    case REQUEST.resolve: onResolve(data); break;
    case REQUEST.start: start(data); break;
    default: console.warn('unknown request', data);
  }
};
