// The page: wires the controls (controls.js), the engine worker (engine-client.js) and what a
// bench shows (results.js). Nothing from a report file or the engine is inserted as HTML.
import { BACKENDS, STOP_REASON } from './protocol.js';
import { createControls } from './controls.js';
import { createEngine, parseWorkers } from './engine-client.js';
import { createResults } from './results.js';
import { createCompare } from './compare.js';
import { createStudy } from './study.js';
import { $ } from './dom.js';
import { duration, num, useFormats } from './format.js';
const timings = {};
// For tests and the curious; filled in below.
window.rdbench = { timings };

// ---------------------------------------------------------------- banner
// The banner is shared; `tag` lets a source clear its own message without hiding another's.
let bannerTag = null;
function banner(kind, text, tag = null) {
  const b = $('banner');
  if (!text) { b.hidden = true; b.textContent = ''; bannerTag = null; return; }
  b.className = `banner ${kind}`;
  b.textContent = text;
  b.hidden = false;
  bannerTag = tag;
}

function engineStatus(text, ready = false) {
  const el = $('engine-status');
  el.textContent = `engine: ${text}`;
  el.classList.toggle('ready', ready);
}

// The charts wasm draws the charts and also carries the config schema and parser and the
// number formats (Rust's).
const charts = import('./pkg/rdbench_page.js').then(async (m) => {
  await m.default();
  useFormats(m);
  timings.chartsReady = performance.now();
  return m;
});
charts.catch((e) => banner('error', `The app is not built (www/pkg is missing): run \`npm start\`. (${e?.message ?? e})`));

const results = createResults({ charts, banner, timings, onShown: (text, source) => compare.shownChanged(source === THIS_RUN) });
const THIS_RUN = 'this run';
let controls = null;

// Finished reports are kept in the browser's history; any two can be compared there.
const compare = createCompare({
  charts,
  showReport: (text, source) => results.showReport(text, source),
  shown: () => results.shown,
  rerun: (config) => rerunConfig(config),
});

/** Put a report's config into the form (the backend control keeps its choice). */
function rerunConfig(config) {
  if (!controls) return;
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(config)) p.set(k, Array.isArray(v) ? v.join(',') : String(v));
  p.set('backend', controls.current.backend);
  const problems = controls.loadHash('#' + p.toString());
  if (problems.length) banner('warn', `Some settings of that report are not valid here and were replaced by defaults:\n${problems.join('\n')}`, 'link');
  $('controls-title').scrollIntoView({ block: 'start' });
  $('run').focus({ preventScroll: true });
}

// ---------------------------------------------------------------- run state
let study = null;
function refreshRunState() {
  // The study (study.js) runs benches on its own engine: one at a time on the page.
  const running = engine.state.running || Boolean(study?.state.running);
  const current = controls?.current;
  const errors = current?.errors ?? [];
  $('run').disabled = running || !current?.config;
  $('cancel').disabled = !running;
  $('continue-cpu').disabled = running || !current?.config;
  const reason = $('run-reason');
  if (!controls) reason.textContent = 'Loading the settings…';
  else if (errors.length && !running) {
    // One line per setting in error, named as its control is labelled.
    const fields = [...new Set(errors.map((e) => e.field))];
    reason.textContent = `Run is off until ${fields.length === 1 ? 'this setting is' : `these ${fields.length} settings are`} fixed:\n` +
      fields.map((f) => `${controls.label(f)}: ${errors.find((e) => e.field === f).message}`).join('\n');
  } else reason.textContent = '';
  reason.hidden = reason.textContent === '';
}

let chartsModule = null;

function showEstimate(c) {
  // Runs per arm: a sweep run per lr and sweep seed, then one per paired seed.
  $('estimate').textContent = c
    ? `${2 * (c.lrs.length * c.n_sweep_seeds + c.n_seeds)} runs of ${c.epochs} epoch${c.epochs === 1 ? '' : 's'} (both arms).`
    : '';
  // A run whose pair count can never reach alpha is worth a word before it starts.
  const warn = $('pairs-warning');
  const warning = c && chartsModule ? chartsModule.alpha_warning(c.n_seeds, c.alpha) : undefined;
  warn.textContent = warning ?? '';
  warn.hidden = !warning;
  runLabel();
}

/** Run says what it will do: resume from kept runs, or start afresh. */
function runLabel() {
  const next = nextStart();
  const kept = next ? engine.reusable(next.config).length : 0;
  $('run').textContent = kept ? `Resume bench (${kept} run${kept === 1 ? '' : 's'} kept)` : 'Run bench';
}

// ---------------------------------------------------------------- engine
// `?workers=N` sets how many CPU workers a bench is split over (default: one per hardware
// thread, at most 8); the report does not depend on it.
function workersOption() {
  const text = new URLSearchParams(location.search).get('workers');
  if (text === null) return {};
  const w = parseWorkers(text);
  if (w.error) {
    banner('error', `${w.error}: using the default.`);
    return {};
  }
  return { workers: w.value };
}

const engine = createEngine({
  loading: () => engineStatus('loading…'),
  loaded: () => engineStatus('ready', true),
  started: (message) => {
    $('continue-cpu').hidden = true;
    const hadFocus = document.activeElement === $('run') || document.activeElement === document.body;
    $('run-note').textContent = message.prior.length ? `Reusing ${message.prior.length} finished runs.` : '';
    results.resetRun(engine.state.loaded ? 'starting' : 'loading the engine');
    if (bannerTag !== 'link') banner(null);
    timings.runStart = performance.now();
    refreshRunState();
    // Focus follows the action: Run is now disabled, Cancel is what can act next.
    if (hadFocus) $('cancel').focus();
  },
  backend: (info) => {
    results.setBackend(info);
    onBackendEstimate(info);
    // A GPU is read once per epoch (src/train/population.rs): say why progress comes in steps.
    const gpu = info.backend === 'webgpu'
      ? 'On WebGPU progress and the loss curve update once per epoch (and every 2 s): reading them every step would stall the GPU.'
      : '';
    const note = [info.note, gpu].filter(Boolean).join(' ');
    if (note) $('run-note').textContent = note;
  },
  progress: (p) => results.progress(p),
  runFinished: () => {},
  report: (json) => {
    closeQuestion();
    refreshRunState();
    runLabel();
    scheduleEstimate();
    if (document.activeElement === $('cancel') || document.activeElement === document.body) $('run').focus();
    results.finished(engine.state.finishedRuns.length);
    results.showReport(json, THIS_RUN).then((ok) => ok && compare.keep(json, `run of ${new Date().toLocaleString()}`));
  },
  stopped: (m, kept) => {
    closeQuestion();
    refreshRunState();
    runLabel();
    scheduleEstimate();
    results.stopped();
    if (document.activeElement === $('cancel') || document.activeElement === document.body) $('run').focus();
    if (m.reason === STOP_REASON.cancelled) {
      results.setPhase('cancelled');
      $('run-note').textContent = `Cancelled. ${kept} finished run(s) are kept: Run again with the same configuration to resume from them.`;
    } else if (m.reason === STOP_REASON.device || m.reason === STOP_REASON.backend) {
      results.setPhase('stopped');
      banner('error', `WebGPU failed: ${m.message}\n${kept} finished run(s) are kept. You can continue on the CPU.`);
      $('continue-cpu').hidden = false;
    } else {
      results.setPhase('stopped');
      banner('error', `The engine rejected the configuration: ${m.message}`);
    }
  },
  crashed: (message, { wasRunning, fatal, onWebGpu, kept }) => {
    if (fatal) engineStatus('not loaded');
    closeQuestion();
    refreshRunState();
    runLabel();
    results.stopped();
    results.setPhase('failed');
    banner('error', `The engine stopped: ${message}\n${kept} finished run(s) are kept.` +
      (onWebGpu ? ' WebGPU failed mid-run; you can continue on the CPU.' : ''));
    $('continue-cpu').hidden = !(wasRunning && onWebGpu);
  },
}, workersOption());

/** What Run would send now: exactly the parsed texts of the controls (null while invalid). */
function nextStart() {
  const c = controls?.current;
  return c?.config ? { config: structuredClone(c.config), backend: c.backend } : null;
}

function run(options) {
  const next = nextStart();
  if (next) engine.start(next.config, next.backend, options);
}

// ---------------------------------------------------------------- time estimate
// Before Run: the bench's work units (the engine's own count, the unit of its progress)
// times the engine's calibrated milliseconds per unit for the backend it resolves to, over
// the workers it will run on. A bench estimated above CONFIRM_ABOVE_S asks first.
const CONFIRM_ABOVE_S = 120;
// Per config and backend: the estimate's promise (shared while the calibration runs), and
// the finished estimates.
const estimates = new Map();
const settled = new Map();
let estimateTimer = null;
const estimateKey = (next) => JSON.stringify([next.config, next.backend]);

/** The estimate of `next` ({seconds, text} or {error}): one calibration per config and
 *  backend, shared by every caller while it runs; successes are kept. */
function estimateFor(next) {
  const key = estimateKey(next);
  if (!estimates.has(key)) {
    const pending = measure(next).then((e) => {
      if (e.error) estimates.delete(key);
      else settled.set(key, e);
      return e;
    });
    estimates.set(key, pending);
  }
  return estimates.get(key);
}

/** The estimate from a 'backend' event (the engine's calibration and work units). */
function estimateOf(info) {
  const cal = info.calibration.find((c) => c.backend === info.backend);
  if (!cal || !info.work_total) return { error: `the engine did not measure ${info.backend}` };
  const workers = Math.max(1, info.workers);
  const seconds = (info.work_total * cal.ms_per_work_unit) / workers / 1000;
  const text = `Estimated time ≈ ${duration(seconds)} on ${info.backend}` +
    `${workers > 1 ? ` (${workers} workers)` : ''}: ${info.work_total.toLocaleString('en')} work units × ` +
    `${num(cal.ms_per_work_unit)} ms${workers > 1 ? ` ÷ ${workers}` : ''}, speed measured in this browser.`;
  return { seconds, text, info };
}

async function measure(next) {
  try {
    return estimateOf(await engine.calibrate(next.config, next.backend));
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

function showTime(text, state) {
  const el = $('estimate-time');
  el.textContent = text;
  el.dataset.state = state;
}

/** Estimate the form's bench a moment after the last edit (a calibration takes ~1 s). */
function scheduleEstimate() {
  clearTimeout(estimateTimer);
  const next = nextStart();
  if (!next) return showTime('', 'none');
  const known = settled.get(estimateKey(next));
  if (known) return showTime(known.text, 'ready');
  showTime('Estimated time: measuring the backend’s speed…', 'pending');
  estimateTimer = setTimeout(async () => {
    if (engine.state.running) return;
    const e = await estimateFor(next);
    // Only if the form still shows that bench.
    const now = nextStart();
    if (!now || estimateKey(now) !== estimateKey(next)) return;
    if (e.error) showTime(`No time estimate: ${e.error}`, 'error');
    else showTime(e.text, 'ready');
  }, 600);
}

/** A bench that has ended makes "keep it running?" moot. */
function closeQuestion() {
  const dialog = $('confirm-run');
  if (dialog.open) dialog.close('moot');
}

/** Ask about a long bench (before it starts, or just after); resolves true to go on. */
function confirmLong(e, running) {
  const dialog = $('confirm-run');
  $('confirm-title').textContent = running ? 'This bench will take a while: keep it running?' : 'Start a long bench?';
  $('confirm-text').textContent = `${e.text} Closing or reloading the page while it runs stops it and loses its runs.`;
  $('confirm-start').textContent = running ? `Keep running (≈ ${duration(e.seconds)})` : `Start (≈ ${duration(e.seconds)})`;
  $('confirm-cancel').textContent = running ? 'Stop it' : 'Not now';
  return new Promise((resolve) => {
    const done = (ok) => {
      dialog.removeEventListener('close', onClose);
      resolve(ok);
    };
    const onClose = () => done(dialog.returnValue === 'start');
    dialog.addEventListener('close', onClose);
    dialog.returnValue = '';
    dialog.showModal();
    $('confirm-start').focus();
  });
}

// The bench Run started and whether its length was already accepted (known short, or
// confirmed); an unknown estimate is checked when the engine reports its backend.
let startedRun = null;

/** Run: with a known estimate above CONFIRM_ABOVE_S, ask first. Without one yet, start at
 *  once (the engine calibrates while it starts anyway) and ask when its estimate arrives. */
async function requestRun() {
  const next = nextStart();
  if (!next || engine.state.running) return;
  const key = estimateKey(next);
  const known = settled.get(key);
  if (known && known.seconds > CONFIRM_ABOVE_S && !(await confirmLong(known, false))) {
    $('run').focus();
    return;
  }
  const now = nextStart();
  if (!now || estimateKey(now) !== key || engine.state.running) return;
  startedRun = { key, accepted: Boolean(known) };
  run();
}

/** The engine resolved the backend of the bench just started: its estimate, and the
 *  question the user was not asked before Run. */
function onBackendEstimate(info) {
  const run = startedRun;
  if (!run) return;
  const e = estimateOf(info);
  if (e.error) return;
  settled.set(run.key, e);
  estimates.set(run.key, Promise.resolve(e));
  showTime(e.text, 'ready');
  if (!run.accepted && e.seconds > CONFIRM_ABOVE_S) {
    run.accepted = true;
    confirmLong(e, true).then((keep) => {
      if (!keep && engine.state.running) {
        engine.cancel();
        results.setPhase('cancelling…');
      }
    });
  }
}
window.rdbench.state = engine.state;
window.rdbench.engine = engine;
window.rdbench.nextStart = nextStart;
window.rdbench.estimateFor = estimateFor;
window.rdbench.CONFIRM_ABOVE_S = CONFIRM_ABOVE_S;
// Live views (Object.assign would copy a getter's value once).
Object.defineProperties(window.rdbench, {
  firstProgress: { get: () => results.firstProgress },
  drawn: { get: () => results.drawn },
  current: { get: () => controls?.current ?? null },
});

// ---------------------------------------------------------------- wiring
function loadFromHash() {
  const problems = controls.loadHash(location.hash);
  if (problems.length) {
    banner('warn', `Some settings in the link were invalid and were replaced by defaults:\n${problems.join('\n')}`, 'link');
  } else if (bannerTag === 'link') banner(null);
}

async function init() {
  $('config').addEventListener('submit', (e) => {
    e.preventDefault();
    requestRun();
  });
  // Enter in a text box would submit the form (implicit submission clicks Run): a long run
  // must start from the Run button only.
  $('config').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && e.target instanceof HTMLInputElement) e.preventDefault();
  });
  // Leaving or reloading mid-run would lose the runs in flight: the browser asks first.
  addEventListener('beforeunload', (e) => {
    if (engine.state.running) e.preventDefault();
  });
  $('cancel').addEventListener('click', () => {
    engine.cancel();
    results.setPhase('cancelling…');
  });
  $('continue-cpu').addEventListener('click', () => {
    // The backend is part of what the controls show: switch it there, then run as usual;
    // the same config resumes from the finished runs, those made on WebGPU included.
    controls.setBackend('cpu');
    run({ reuseOtherBackends: true });
  });
  refreshRunState();

  const m = await charts;
  chartsModule = m;
  controls = createControls({
    schema: JSON.parse(m.config_schema()),
    parseConfig: (texts) => JSON.parse(m.parse_config(JSON.stringify(texts))),
    backends: BACKENDS,
    onChange: (current) => {
      showEstimate(current.config);
      scheduleEstimate();
      refreshRunState();
    },
  });
  window.rdbench.controls = controls;
  study = createStudy({ charts, getStart: nextStart, isBusy: () => engine.state.running, banner, onState: refreshRunState });
  window.rdbench.study = study.state;
  await results.ready;
  loadFromHash();
  // A link pasted into this tab, or back/forward: the form follows the URL. (The page's own
  // edits use replaceState, which fires no hashchange.)
  addEventListener('hashchange', loadFromHash);
  timings.interactive = performance.now();
  // Fetch and compile the engine in the background: the page never waits for it.
  (window.requestIdleCallback ?? setTimeout)(() => engine.preload());
}

init();
