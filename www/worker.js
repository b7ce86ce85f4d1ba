// The engine worker: loads the engine's wasm and runs benches. Protocol: protocol.js.
import init, { init_backend, run_bench } from './pkg/rdbench.js';
import { fromWorker } from './protocol.js';

let cancelRequested = false;
let busy = false;

// A macrotask turn without setTimeout's 4 ms clamp: lets a 'cancel' message in.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const yieldNow = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });

const ready = init().then(
  () => postMessage(fromWorker.loaded()),
  (e) => { postMessage(fromWorker.error(`could not load the engine: ${e?.message ?? e}`, true)); throw e; },
);

async function gpuAdapter() {
  if (!('gpu' in navigator)) return null;
  try { return await navigator.gpu.requestAdapter(); } catch { return null; }
}

/** The browser's words for its adapter, e.g. "google swiftshader (fallback)". */
function describe(adapter) {
  const i = adapter?.info ?? {};
  const words = [i.vendor, i.architecture, i.device, i.description].filter(Boolean).join(' ');
  const fallback = i.isFallbackAdapter ?? adapter?.isFallbackAdapter;
  return `${words || 'unnamed adapter'}${fallback ? ' (fallback adapter)' : ''}`;
}

/** Resolve 'auto' and initialise the backend; returns the backend kind used. */
async function chooseBackend(requested) {
  if (requested === 'cpu') {
    const b = await init_backend('cpu', '');
    postMessage(fromWorker.backend(b.backend, b.adapter));
    return 'cpu';
  }
  const adapter = await gpuAdapter();
  if (!adapter) {
    if (requested === 'webgpu') throw new Error('WebGPU is not available in this browser (navigator.gpu gave no adapter).');
    const b = await init_backend('cpu', '');
    postMessage(fromWorker.backend(b.backend, b.adapter, 'no WebGPU adapter: running on the CPU'));
    return 'cpu';
  }
  try {
    const b = await init_backend('webgpu', describe(adapter));
    postMessage(fromWorker.backend(b.backend, b.adapter));
    return 'webgpu';
  } catch (e) {
    if (requested === 'webgpu') throw e;
    const b = await init_backend('cpu', '');
    postMessage(fromWorker.backend(b.backend, b.adapter, `WebGPU failed to start (${e?.message ?? e}): running on the CPU`));
    return 'cpu';
  }
}

async function start({ config, backend, prior }) {
  if (busy) return postMessage(fromWorker.stopped('config', 'a bench is already running', []));
  busy = true;
  cancelRequested = false;
  try {
    await ready;
    let kind;
    try {
      kind = await chooseBackend(backend);
    } catch (e) {
      postMessage(fromWorker.stopped('backend', String(e?.message ?? e), prior ?? []));
      return;
    }
    const onEvent = (ev) => {
      if (ev.type === 'progress') postMessage(fromWorker.progress(ev));
      else if (ev.type === 'run_finished') postMessage(fromWorker.runFinished(ev));
    };
    const json = await run_bench(
      JSON.stringify(config), kind, JSON.stringify(prior ?? []), onEvent, () => cancelRequested, yieldNow,
    );
    postMessage(fromWorker.report(json));
  } catch (e) {
    if (e && typeof e === 'object' && 'reason' in e) {
      postMessage(fromWorker.stopped(e.reason, e.message, JSON.parse(e.runs || '[]')));
    } else {
      // A panic or a lost device: this instance cannot be trusted any more.
      postMessage(fromWorker.error(String(e?.message ?? e), true));
    }
  } finally {
    busy = false;
  }
}

onmessage = ({ data }) => {
  if (data?.type === 'cancel') cancelRequested = true;
  else if (data?.type === 'start') start(data);
};
