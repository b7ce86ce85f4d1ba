// The engine worker: loads the engine's wasm, resolves the backend, runs benches. Every
// message is one of the typed messages of protocol.js (src/messages.rs).
import init, { init_backend, run_bench } from './pkg/rdbench.js';
import { REQUEST, STOP_REASON, event } from './protocol.js';

let cancelRequested = false;
let busy = false;

// A macrotask turn without setTimeout's 4 ms clamp: lets a 'cancel' message in.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldNow = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });

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

/** Initialise `kind` and announce it; returns the kind. */
async function use(kind, hint, note = '') {
  const b = await init_backend(kind, hint);
  postMessage({ ...b, note });
  return kind;
}

/** Resolve 'auto' and initialise the backend; returns the backend kind used. */
async function chooseBackend(requested) {
  if (requested === 'cpu') return use('cpu', '');
  const adapter = await gpuAdapter();
  if (!adapter) {
    if (requested === 'webgpu') throw new Error('WebGPU is not available in this browser (navigator.gpu gave no adapter).');
    return use('cpu', '', 'no WebGPU adapter: running on the CPU');
  }
  // A software adapter runs WebGPU on the CPU, through an emulation far slower than the
  // engine's own CPU path (measured: 40x on a tiny bench), so auto never picks it.
  if (requested === 'auto' && isFallback(adapter)) {
    return use('cpu', '', `the only WebGPU adapter is a software fallback (${describe(adapter)}): running on the CPU, which is faster`);
  }
  try {
    return await use('webgpu', describe(adapter));
  } catch (e) {
    if (requested === 'webgpu') throw e;
    return use('cpu', '', `WebGPU failed to start (${e?.message ?? e}): running on the CPU`);
  }
}

async function start(req) {
  const prior = req.prior ?? [];
  if (busy) return postMessage(event.stopped(STOP_REASON.config, 'a bench is already running', prior));
  busy = true;
  cancelRequested = false;
  try {
    await ready;
    let kind;
    try {
      kind = await chooseBackend(req.backend);
    } catch (e) {
      postMessage(event.stopped(STOP_REASON.backend, String(e?.message ?? e), prior));
      return;
    }
    // The engine sends every outcome (progress, run_finished, report, stopped) as an event.
    await run_bench(req, kind, (ev) => postMessage(ev), () => cancelRequested, yieldNow);
  } catch (e) {
    // A panic or a lost device: this instance cannot be trusted any more.
    postMessage(event.error(String(e?.message ?? e), true));
  } finally {
    busy = false;
  }
}

onmessage = ({ data }) => {
  if (data?.type === REQUEST.cancel) cancelRequested = true;
  else if (data?.type === REQUEST.start) start(data);
};
