// The page: wires the controls (controls.js), the engine worker (engine-client.js) and what a
// bench shows (results.js). Nothing from a report file or the engine is inserted as HTML.
import { BACKENDS, STOP_REASON } from './protocol.js';
import { createControls } from './controls.js';
import { createEngine, parseWorkers } from './engine-client.js';
import { createResults } from './results.js';
import { createCompare } from './compare.js';
import { createScale } from './scale.js';
import { createStudy } from './study.js';
import { createRecheck } from './recheck.js';
import { $ } from './dom.js';
import { CONFIRM_ABOVE_S, estimateOf, recordOutcome } from './estimate.js';
import { duration, num, percent, useFormats } from './format.js';
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

const results = createResults({
  charts,
  banner,
  timings,
  onShown: (text) => {
    compare.shownChanged();
    let report = null;
    try { report = JSON.parse(text); } catch { /* shown only if it parsed */ }
    recheck.shownChanged(report);
  },
});
const recheck = createRecheck({ shown: () => results.shown?.text ?? null });
let controls = null;

// Finished reports are kept in the browser's history; any two can be compared there.
const compare = createCompare({
  charts,
  showReport: (text, source) => results.showReport(text, source),
  shown: () => results.shown,
  rerun: (config) => rerunConfig(config),
  showSeries: (kind, text, source) => (kind === 'study' ? study : scale)?.showText(text, source) ?? false,
});

/** Put a report's config into the form (the backend control keeps its choice); refused
 *  while a bench runs. */
function rerunConfig(config) {
  if (!controls) return;
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(config)) p.set(k, Array.isArray(v) ? v.join(',') : String(v));
  p.set('backend', controls.current.backend);
  if (isRunning()) return keepRunningSettings('Rerun config');
  const text = linkProblems(controls.loadHash('#' + p.toString()), 'that report');
  if (text) banner('warn', text, 'link');
  $('controls-title').scrollIntoView({ block: 'start' });
  $('run').focus({ preventScroll: true });
}

// ---------------------------------------------------------------- settings while a bench runs
// The form and the URL show the bench that runs: the controls are locked, and a link opened
// meanwhile (pasted, back/forward) or a report's "Rerun config" is refused, said so, and the
// URL put back to the running bench's.

/** A bench, the study or the scale study is running (or measuring before its start). */
const isRunning = () => engine.state.running || Boolean(study?.state.running) || Boolean(scale?.state.running);

function keepRunningSettings(what) {
  if (controls && location.hash !== controls.hash()) history.replaceState(null, '', controls.hash());
  banner('info', `A bench is running: the form and the URL keep its settings. ${what} again when it has ended.`, 'link');
}

// ---------------------------------------------------------------- run state
let study = null;
let scale = null;
function refreshRunState() {
  // The study (study.js) and the scale study (scale.js) run benches on engines of their own:
  // one at a time on the page.
  const running = isRunning();
  const current = controls?.current;
  const errors = current?.errors ?? [];
  $('run').disabled = running || !current?.config;
  // The run panel's Cancel (narrow screens) is the page's bench's; the study has its own.
  $('cancel').disabled = !running;
  $('cancel-run').disabled = !engine.state.running;
  $('continue-cpu').disabled = running || !current?.config;
  controls?.setLocked(running);
  $('locked-note').hidden = !running;
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

/** The parse with the memory check: a valid config that will not fit a worker's memory is
 *  refused like a bad value, on the length (the knob a user turns down), with the figure and
 *  the longest T that fits. WebGPU runs a bench on one worker. */
function withMemory(m, parsed) {
  parsed.memory = '';
  if (!parsed.config) return parsed;
  const workers = controls?.current?.backend === 'webgpu' ? 1 : engine.state.workers;
  const mem = JSON.parse(m.memory_check(JSON.stringify(parsed.config), workers));
  parsed.memory = mem.short;
  parsed.memoryDetail = mem.text;
  if (mem.refused) {
    parsed.errors.push({ field: 'seq_len', message: mem.refused });
    parsed.config = null;
  }
  return parsed;
}

function showEstimate(c) {
  // Runs per arm: a sweep run per lr and sweep seed, then one per paired seed.
  $('estimate').textContent = c
    ? `${2 * (c.lrs.length * c.n_sweep_seeds + c.n_seeds)} runs of ${c.epochs} epoch${c.epochs === 1 ? '' : 's'} (both arms)${controls?.current?.memory ? `, ${controls.current.memory}` : ''}.`
    : '';
  // The sticky bar keeps one short line; the estimate's breakdown sits with the length, the
  // knob memory follows.
  const note = $('seq_len-memory');
  if (note) note.textContent = c ? controls?.current?.memoryDetail ?? '' : '';
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
// The query carries page options only: `?workers=N` sets how many CPU workers a bench is
// split over (default: one per hardware thread, at most 8; the report does not depend on it).
// Settings live after the # (the link the form keeps).
const query = new URLSearchParams(location.search);
const queryOptions = { workers: '?workers=N' };

function workersOption() {
  const text = query.get('workers');
  const w = text === null ? { error: true } : parseWorkers(text);
  return w.error ? {} : { workers: w.value };
}

/** What the query asks that the page does not take, each named, for the link's banner. */
function queryDropped() {
  const out = [];
  const workers = query.get('workers');
  const w = workers === null ? {} : parseWorkers(workers);
  if (w.error) out.push(`?${w.error}: one worker per hardware thread (at most 8) is used`);
  for (const key of new Set(query.keys())) {
    if (key in queryOptions) continue;
    out.push(controls.isSetting(key)
      ? `?${key}: a setting goes after the # (…#${key}=${query.get(key)}), not in the query; ignored`
      : `?${key}: not a page option (the query takes only ${Object.values(queryOptions).join(', ')}); ignored`);
  }
  return out;
}

const engine = createEngine({
  loading: () => engineStatus('loading…'),
  loaded: () => engineStatus('ready', true),
  started: (message) => {
    $('continue-cpu').hidden = true;
    const hadFocus = document.activeElement === $('run') || document.activeElement === document.body;
    $('run-note').textContent = message.prior.length
      ? `Reusing ${message.prior.length} finished runs; the bench's elapsed and wall time count the ${duration(message.prior_elapsed_s)} it ran before.`
      : '';
    results.resetRun(engine.state.loaded ? 'starting' : 'loading the engine', message.prior);
    if (bannerTag !== 'link') banner(null);
    timings.runStart = performance.now();
    refreshRunState();
    // The kept runs are this bench's now: Run no longer offers to resume from them.
    runLabel();
    // On a narrow screen the run panel is below the whole form: bring the progress into view,
    // with a Cancel beside it.
    const narrow = matchMedia('(max-width: 980px)').matches;
    if (narrow) {
      const still = matchMedia('(prefers-reduced-motion: reduce)').matches;
      $('status-title').scrollIntoView({ block: 'start', behavior: still ? 'auto' : 'smooth' });
    }
    // Focus follows the action: Run is now disabled, Cancel is what can act next.
    if (hadFocus) $(narrow ? 'cancel-run' : 'cancel').focus({ preventScroll: true });
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
    let wall = null;
    try { wall = JSON.parse(json).environment?.wall_time_s ?? null; } catch { /* showReport says why */ }
    // First, so that the estimates made next carry what this bench taught.
    learnFromOutcome(wall);
    closeQuestion();
    refreshRunState();
    runLabel();
    scheduleEstimate();
    estimatePresets();
    if ([$('cancel'), $('cancel-run'), document.body].includes(document.activeElement)) $('run').focus({ preventScroll: true });
    results.finished(engine.state.finishedRuns.length, wall);
    // Named by when it finished: "this run" would still be said while the next one runs.
    const label = `the run that finished ${new Date().toLocaleString()}`;
    results.showReport(json, label, { ownRun: true }).then((ok) => ok && compare.keep(json, label));
  },
  stopped: (m, kept, { fractionKept, elapsed }) => {
    startedRun = null;
    closeQuestion();
    refreshRunState();
    runLabel();
    scheduleEstimate();
    estimatePresets();
    // A stop before the engine ran says nothing of the kept runs (fraction 0 with runs kept).
    results.stopped({ fractionKept: fractionKept > 0 || kept === 0 ? fractionKept : null, kept });
    if ([$('cancel'), $('cancel-run'), document.body].includes(document.activeElement)) $('run').focus({ preventScroll: true });
    if (m.reason === STOP_REASON.cancelled) {
      results.setPhase('cancelled');
      $('run-note').textContent = `Cancelled after ${duration(elapsed)}. ${kept} finished run(s) are kept (${percent(fractionKept)} of the bench; ` +
        'the steps of the runs in flight are lost): Run again with the same configuration to resume from them.';
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
    startedRun = null;
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
// Before Run: the engine's estimate (estimate.js) of the form's bench. A bench estimated
// above CONFIRM_ABOVE_S, or on a software WebGPU adapter, asks first.
// Per config and backend: the estimate's promise (shared while the calibration runs), and
// the finished estimates.
const estimates = new Map();
const settled = new Map();
let estimateTimer = null;
// Keys sorted: a preset's config (from the schema) and the form's (from the parser) are the
// same bench whatever their order.
const estimateKey = (next) => JSON.stringify([next.config, next.backend], Object.keys(next.config).sort());

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

async function measure(next) {
  try {
    return estimateOf(await engine.calibrate(next.config, next.backend));
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}

/** Show the estimate's text; a software WebGPU adapter is named beside Run, before it. */
function showTime(text, state, fallback = null, detail = '') {
  const el = $('estimate-time');
  el.textContent = text;
  el.dataset.state = state;
  $('estimate-detail').textContent = detail;
  $('adapter-warning').textContent = fallback?.text ?? '';
  $('adapter-warning').hidden = !fallback;
}

/** Estimate the form's bench a moment after the last edit (a calibration takes ~1 s). */
function scheduleEstimate() {
  clearTimeout(estimateTimer);
  const next = nextStart();
  if (!next) return showTime('', 'none');
  const known = settled.get(estimateKey(next));
  if (known) return showTime(known.text, 'ready', known.fallback, known.detail);
  showTime('Estimated time: measuring the backend’s speed…', 'pending');
  estimateTimer = setTimeout(async () => {
    if (engine.state.running) return;
    const e = await estimateFor(next);
    // Only if the form still shows that bench.
    const now = nextStart();
    if (!now || estimateKey(now) !== estimateKey(next)) return;
    if (e.error) showTime(`No time estimate: ${e.error}`, 'error');
    else showTime(e.text, 'ready', e.fallback, e.detail);
  }, 600);
}

/** How long each preset takes on the chosen backend, beside its button: the engine's
 *  estimate of the preset's config, measured in this browser (one calibration each, shared
 *  with the form's estimate), one after another and only while no bench runs (a bench's end
 *  picks it up again). The form's own bench is measured first. */
let presetRound = 0;
async function estimatePresets() {
  if (!controls) return;
  const round = ++presetRound;
  // The presets' times are the CPU backend's: calibrating every preset on a GPU (a software
  // one especially) would hold the engine for minutes before the user's own bench. With
  // WebGPU chosen they are left out; the form's own estimate is on its backend.
  const gpu = controls.current.backend === 'webgpu';
  const form = nextStart();
  const presets = gpu ? [] : controls.presets.map((p) => ({ config: p.config, backend: 'cpu', name: p.name }));
  if (gpu) for (const p of controls.presets) controls.presetTime(p.name, '');
  const queue = [...(form ? [form] : []), ...presets];
  for (const next of queue) {
    if (next.name && !settled.has(estimateKey(next))) controls.presetTime(next.name, 'measuring…');
  }
  // One config has one estimate: a preset the form shows now takes the form's estimate when
  // the form's backend runs on the CPU (as the presets' do), not a second calibration.
  const sameBench = (a, b) => estimateKey({ ...a, backend: '' }) === estimateKey({ ...b, backend: '' });
  for (const next of queue) {
    if (round !== presetRound) return;
    // A bench's end measures the rest.
    if (isRunning()) {
      for (const p of queue) if (p.name && !settled.has(estimateKey(p))) controls.presetTime(p.name, '');
      return;
    }
    let e = null;
    if (next.name && form && sameBench(form, next)) {
      const f = await estimateFor(form);
      if (!f.error && f.info.backend === 'cpu-flex') e = f;
    }
    e ??= await estimateFor(next);
    if (round !== presetRound || !next.name) continue;
    controls.presetTime(next.name, e.error ? '' : `≈ ${duration(e.seconds)}`, e.error ? '' : e.text);
  }
}

/** A bench that has ended makes "keep it running?" moot. */
function closeQuestion() {
  const dialog = $('confirm-run');
  if (dialog.open) dialog.close('moot');
}

/** Whether an estimate asks before its bench (or study) starts: a long one, or one on a
 *  software WebGPU adapter. */
const asks = (e) => e.seconds > CONFIRM_ABOVE_S || Boolean(e.fallback);

/** Ask about a long bench or study, or one on a software adapter (before it starts, or just
 *  after: `running`); resolves true to go on. */
function confirmLong(e, { running = false, what = 'bench' } = {}) {
  const dialog = $('confirm-run');
  $('confirm-title').textContent = running
    ? (e.fallback ? `This ${what} runs on a software WebGPU adapter: keep it running?` : `This ${what} will take a while: keep it running?`)
    : (e.fallback ? `Start this ${what} on a software WebGPU adapter?` : `Start a long ${what}?`);
  // A software adapter's words carry the estimate there and on the CPU.
  $('confirm-text').textContent = `${e.fallback?.text ?? e.text} ` +
    'Closing or reloading the page while it runs stops it and loses its runs.';
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
  if (known && asks(known) && !(await confirmLong(known))) {
    $('run').focus();
    return;
  }
  const now = nextStart();
  if (!now || estimateKey(now) !== key || engine.state.running) return;
  startedRun = { key, accepted: Boolean(known), fresh: engine.reusable(now.config).length === 0 };
  run();
}

/** A bench Run started has finished in `wall` seconds: keep its wall time over the estimate
 *  it started with (a fresh bench only: a resumed one was estimated whole but ran in part),
 *  and estimate again with the correction that gives. */
function learnFromOutcome(wall) {
  const run = startedRun;
  startedRun = null;
  if (!run?.estimate || !run.fresh || !(wall > 0)) return;
  if (recordOutcome(run.estimate.info.backend, run.estimate.raw, wall) === null) return;
  // The calibrations are kept by the engine; the estimates made from them are redone.
  estimates.clear();
  settled.clear();
}

/** The engine resolved the backend of the bench just started: its estimate, and the
 *  question the user was not asked before Run. */
function onBackendEstimate(info) {
  const run = startedRun;
  if (!run) return;
  const e = estimateOf(info);
  if (e.error) return;
  // What the bench is measured against when it ends: the estimate before any correction, so
  // that the ratios kept are the calibration's own error.
  run.estimate = { info, raw: estimateOf(info, []).seconds };
  settled.set(run.key, e);
  estimates.set(run.key, Promise.resolve(e));
  showTime(e.text, 'ready', e.fallback);
  if (!run.accepted && asks(e)) {
    run.accepted = true;
    confirmLong(e, { running: true }).then((keep) => {
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
  liveSeries: { get: () => results.liveSeries },
  current: { get: () => controls?.current ?? null },
});

// ---------------------------------------------------------------- focus clear of the run bar
// The run bar sticks to the viewport's bottom while the form scrolls under it, so a control
// the browser scrolls just into view (Tab down the form) would sit under it. The root
// scroller's bottom padding is the bar's height (style.css), so focus stops above the bar.
// The bar's height changes with its lines (estimate, warnings), possibly just after focus
// moved, and a form control the browser finds already inside the viewport may lie wholly
// under the bar: either way the focused control is scrolled up by what the bar covers.
function keepFocusClearOfRunBar() {
  const bar = $('run-bar');
  const e = document.activeElement;
  if (!e || e === document.body || bar.contains(e)) return;
  const b = e.getBoundingClientRect();
  const o = bar.getBoundingClientRect();
  const covered = b.top < o.bottom && o.top < b.bottom && b.left < o.right && o.left < b.right;
  if (covered && (b.top < o.top || $('config-fields').contains(e))) window.scrollBy(0, b.bottom - o.top + 8);
}
new ResizeObserver(() => {
  document.documentElement.style.setProperty('--run-bar-height', `${$('run-bar').offsetHeight}px`);
  keepFocusClearOfRunBar();
}).observe($('run-bar'));
document.addEventListener('focusin', () => requestAnimationFrame(keepFocusClearOfRunBar));

// ---------------------------------------------------------------- wiring
/** The banner's words for what loading settings found (controls.loadHash), or ''. */
function linkProblems({ invalid, repeated, dropped }, what) {
  return [
    invalid.length ? `Some settings of ${what} are not valid: each is shown as given and marked, and Run is off until it is fixed:\n${invalid.join('\n')}` : '',
    repeated.length ? `${what[0].toUpperCase()}${what.slice(1)} gives a setting more than once; check it:\n${repeated.join('\n')}` : '',
    dropped.length ? `Not used from ${what}:\n${dropped.join('\n')}` : '',
  ].filter(Boolean).join('\n\n');
}

function loadFromHash() {
  if (isRunning()) return keepRunningSettings('Open the link');
  const found = controls.loadHash(location.hash);
  found.dropped.push(...queryDropped());
  const text = linkProblems(found, 'the link');
  if (text) banner('warn', text, 'link');
  else if (bannerTag === 'link') banner(null);
  // A link may name another backend: the presets' times follow (once they are measured).
  if (presetRound > 0) estimatePresets();
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
  // Leaving or reloading mid-run (or mid-study) would lose the runs in flight: the browser
  // asks first.
  addEventListener('beforeunload', (e) => {
    if (isRunning()) e.preventDefault();
  });
  for (const id of ['cancel', 'cancel-run']) {
    $(id).addEventListener('click', () => {
      if (study?.state.running) return study.cancel();
      if (scale?.state.running) return scale.cancel();
      engine.cancel();
      results.setPhase('cancelling…');
    });
  }
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
    parseConfig: (texts) => withMemory(m, JSON.parse(m.parse_config(JSON.stringify(texts)))),
    backends: BACKENDS,
    onChange: (current, changed) => {
      showEstimate(current.config);
      scheduleEstimate();
      refreshRunState();
      if (changed === 'backend') estimatePresets();
    },
  });
  window.rdbench.controls = controls;
  // A study or scale study that finishes is kept in the history, as a finished bench is.
  const series = (what, other, kind) => ({
    charts, getStart: nextStart, isBusy: () => engine.state.running || Boolean(other()?.state.running), banner,
    onState: refreshRunState,
    confirm: (e) => (asks(e) ? confirmLong(e, { what }) : Promise.resolve(true)),
    onResult: (json, label) => compare.keepSeries(kind, json, label),
  });
  study = createStudy(series('study', () => scale, 'study'));
  scale = createScale(JSON.parse(m.config_schema()), series('scale study', () => study, 'scale'));
  window.rdbench.study = study.state;
  window.rdbench.studyEngine = study.engine;
  window.rdbench.scale = scale.state;
  await results.ready;
  loadFromHash();
  // A link pasted into this tab, or back/forward: the form follows the URL. (The page's own
  // edits use replaceState, which fires no hashchange.)
  addEventListener('hashchange', loadFromHash);
  timings.interactive = performance.now();
  // Fetch and compile the engine in the background: the page never waits for it. The
  // presets' times come once it can measure.
  (window.requestIdleCallback ?? setTimeout)(() => {
    engine.preload();
    estimatePresets();
  });
}

init();
