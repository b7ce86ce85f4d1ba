// The engine worker: plumbing only. It loads the engine's wasm and hands every message to the
// Rust loop (crates/worker: `on_message` matches each request of protocol.js and posts the
// events); it reports a load failure or a crash as an 'error' event.
import init, { on_message } from './pkg/rdbench_worker.js';
import { event } from './protocol.js';

const crashed = (e) => postMessage(event.error(String(e?.message ?? e?.reason ?? e), true));
addEventListener('error', crashed);
addEventListener('unhandledrejection', crashed);

const ready = init().then(
  () => postMessage(event.loaded()),
  (e) => { postMessage(event.error(`could not load the engine: ${e?.message ?? e}`, true)); throw e; },
);

// Messages wait for the wasm; the Rust loop answers each one through `postMessage`.
onmessage = ({ data }) => { ready.then(() => on_message(data, postMessage)).catch(crashed); };
