// The page: controls <-> config <-> URL, the engine worker, progress, results.
// Nothing from a report file or the engine is ever inserted as HTML: text only.
import { DEFAULTS, DEFAULT_BACKEND, LABELS, PRESETS, countSteps, fromHash, parseValue, toHash } from './config.js';
import { toWorker } from './protocol.js';

const $ = (id) => document.getElementById(id);
const state = {
  config: structuredClone(DEFAULTS),
  backend: DEFAULT_BACKEND,
  invalid: new Map(), // field -> message
  worker: null,
  engineLoaded: false,
  running: false,
  finishedRuns: [],
  lastReportText: null,
  view: null,
  live: { key: '', series: new Map(), step: 0, caption: '' },
  firstProgress: null,
  backendInfo: null,
  lastConfigRun: null,
  resumable: false,
};
// For tests and the curious: timings and the first progress event.
window.rdbench = { state, timings: {} };

// ---------------------------------------------------------------- banner
function banner(kind, text) {
  const b = $('banner');
  if (!text) { b.hidden = true; b.textContent = ''; return; }
  b.className = `banner ${kind}`;
  b.textContent = text;
  b.hidden = false;
}

// ---------------------------------------------------------------- controls
const NUMERIC = ['n_seeds', 'n_sweep_seeds', 'epochs', 'batch_size', 'hidden_size', 'tau', 'k_max'];
const LOG_SLIDERS = new Set(['tau']);
const fmtNum = (v) => String(Number(v.toPrecision(6)));

function setInvalid(key, el, message) {
  if (message) state.invalid.set(key, message); else state.invalid.delete(key);
  el.setAttribute('aria-invalid', message ? 'true' : 'false');
  el.title = message ?? '';
  refreshRunState();
}

function bindNumeric(key) {
  const box = $(key);
  const slider = $(`${key}-range`);
  const log = LOG_SLIDERS.has(key);
  box.addEventListener('input', () => {
    const r = parseValue(key, box.value);
    if ('error' in r) return setInvalid(key, box, `${LABELS[key]}: ${r.error}`);
    setInvalid(key, box, null);
    state.config[key] = r.value;
    slider.value = log ? Math.log10(r.value) : r.value;
    configChanged();
  });
  slider.addEventListener('input', () => {
    const v = log ? Number(Math.pow(10, Number(slider.value)).toPrecision(2)) : Number(slider.value);
    state.config[key] = v;
    box.value = fmtNum(v);
    setInvalid(key, box, null);
    configChanged();
  });
}

function renderLrs() {
  const list = $('lr-list');
  list.replaceChildren();
  state.config.lrs.forEach((lr, i) => {
    const row = document.createElement('div');
    row.className = 'lr-row';
    const slider = Object.assign(document.createElement('input'), {
      type: 'range', min: '-5', max: '0', step: '0.01', value: String(Math.log10(lr)),
    });
    slider.setAttribute('aria-label', `learning rate ${i + 1} (log scale)`);
    const box = Object.assign(document.createElement('input'), { type: 'number', step: 'any', value: fmtNum(lr) });
    box.id = `lr-${i}`;
    box.setAttribute('aria-label', `learning rate ${i + 1}`);
    const remove = Object.assign(document.createElement('button'), { type: 'button', textContent: '×', className: 'ghost small' });
    remove.setAttribute('aria-label', `remove learning rate ${i + 1}`);
    remove.disabled = state.config.lrs.length <= 1;
    const apply = (v) => {
      const next = state.config.lrs.slice();
      next[i] = v;
      const r = parseValue('lrs', next.join(','));
      if ('error' in r) return setInvalid('lrs', box, `learning rates: ${r.error}`);
      setInvalid('lrs', box, null);
      state.config.lrs = r.value;
      configChanged();
    };
    slider.addEventListener('input', () => {
      const v = Number(Math.pow(10, Number(slider.value)).toPrecision(2));
      box.value = fmtNum(v);
      apply(v);
    });
    box.addEventListener('input', () => {
      const v = Number(box.value);
      if (box.value.trim() === '' || !Number.isFinite(v) || v <= 0) {
        return setInvalid('lrs', box, `learning rates: every lr must be a positive number (got "${box.value}")`);
      }
      slider.value = String(Math.log10(v));
      apply(v);
    });
    remove.addEventListener('click', () => {
      state.config.lrs = state.config.lrs.filter((_, j) => j !== i);
      state.invalid.delete('lrs');
      renderLrs();
      configChanged();
    });
    row.append(slider, box, remove);
    list.append(row);
  });
  $('lr-add').disabled = state.config.lrs.length >= 12;
}

function renderControls() {
  for (const key of NUMERIC) {
    const v = state.config[key];
    $(key).value = fmtNum(v);
    $(key).setAttribute('aria-invalid', 'false');
    $(`${key}-range`).value = LOG_SLIDERS.has(key) ? Math.log10(v) : v;
  }
  $('policy').value = state.config.policy;
  $('model').value = state.config.model;
  $('backend').value = state.backend;
  state.invalid.clear();
  renderLrs();
  configChanged();
}

function configChanged() {
  history.replaceState(null, '', toHash(state.config, state.backend));
  const steps = countSteps(state.config);
  $('estimate').textContent =
    `${2 * (state.config.lrs.length * state.config.n_sweep_seeds + state.config.n_seeds)} runs, ` +
    `${steps.toLocaleString()} run-steps of training.`;
  refreshRunState();
}

function refreshRunState() {
  $('run').disabled = state.running || state.invalid.size > 0;
  $('cancel').disabled = !state.running;
  if (state.invalid.size > 0 && !state.running) {
    $('run').title = [...state.invalid.values()].join('\n');
  } else {
    $('run').title = '';
  }
}

// ---------------------------------------------------------------- engine worker
function engineStatus(text, ready = false) {
  const el = $('engine-status');
  el.textContent = `engine: ${text}`;
  el.classList.toggle('ready', ready);
}

function ensureWorker() {
  if (state.worker) return state.worker;
  engineStatus('loading…');
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  w.onmessage = ({ data }) => onWorkerMessage(data);
  w.onerror = (e) => onWorkerCrash(e.message || 'the engine worker failed to start');
  state.worker = w;
  return w;
}

function dropWorker() {
  state.worker?.terminate();
  state.worker = null;
  state.engineLoaded = false;
  engineStatus('not loaded');
}

function startRun(prior = [], backend = state.backend) {
  if (state.invalid.size > 0) return;
  state.running = true;
  state.firstProgress = null;
  state.lastConfigRun = structuredClone(state.config);
  if (prior.length === 0) state.finishedRuns = [];
  state.live = { key: '', series: new Map(), step: 0, caption: '' };
  $('continue-cpu').hidden = true;
  $('run-note').textContent = prior.length ? `Reusing ${prior.length} finished runs.` : '';
  $('p-phase').textContent = state.engineLoaded ? 'starting' : 'loading the engine';
  $('progress').value = 0;
  $('progress-pct').textContent = '0%';
  banner(null);
  refreshRunState();
  window.rdbench.timings.runStart = performance.now();
  ensureWorker().postMessage(toWorker.start(structuredClone(state.config), backend, prior));
}

function onWorkerMessage(m) {
  switch (m.type) {
    case 'loaded':
      state.engineLoaded = true;
      engineStatus('ready', true);
      break;
    case 'backend':
      state.backendInfo = m;
      $('p-backend').textContent = `${m.backend} — ${m.adapter}`;
      if (m.note) $('run-note').textContent = m.note;
      break;
    case 'progress':
      onProgress(m.progress);
      break;
    case 'run-finished':
      state.finishedRuns.push(m.run);
      break;
    case 'report':
      state.running = false;
      state.resumable = false;
      refreshRunState();
      $('p-phase').textContent = 'done';
      $('progress').value = 1;
      $('progress-pct').textContent = '100%';
      $('p-runs').textContent = `${state.finishedRuns.length} runs done`;
      showReport(m.json, 'this run');
      break;
    case 'stopped':
      onStopped(m);
      break;
    case 'error':
      onWorkerCrash(m.message);
      break;
  }
}

function onStopped(m) {
  state.running = false;
  state.resumable = true;
  refreshRunState();
  // The engine's list is authoritative for what finished.
  if (Array.isArray(m.runs) && m.runs.length >= state.finishedRuns.length) state.finishedRuns = m.runs;
  const kept = state.finishedRuns.length;
  if (m.reason === 'cancelled') {
    $('p-phase').textContent = 'cancelled';
    $('run-note').textContent = `Cancelled. ${kept} finished run(s) are kept: Run again with the same configuration to resume from them.`;
  } else if (m.reason === 'device' || m.reason === 'backend') {
    $('p-phase').textContent = 'stopped';
    banner('error', `WebGPU failed: ${m.message}\n${kept} finished run(s) are kept. You can continue on the CPU.`);
    $('continue-cpu').hidden = false;
  } else {
    $('p-phase').textContent = 'stopped';
    banner('error', `The engine rejected the configuration: ${m.message}`);
  }
}

function onWorkerCrash(message) {
  const wasRunning = state.running;
  state.running = false;
  state.resumable = true;
  dropWorker();
  refreshRunState();
  $('p-phase').textContent = 'failed';
  const kept = state.finishedRuns.length;
  const gpu = state.backendInfo?.backend === 'webgpu';
  banner('error', `The engine stopped: ${message}\n${kept} finished run(s) are kept.` +
    (gpu ? ' WebGPU failed mid-run; you can continue on the CPU.' : ''));
  $('continue-cpu').hidden = !(wasRunning && gpu);
}

function sameConfig(a, b) {
  return a && b && JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------- progress and live chart
const fmtTime = (s) => {
  if (!Number.isFinite(s)) return '–';
  s = Math.round(s);
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
};

function onProgress(p) {
  if (!state.firstProgress) {
    state.firstProgress = p;
    window.rdbench.firstProgress = p;
  }
  $('progress').value = p.fraction;
  $('progress-pct').textContent = `${Math.floor(p.fraction * 100)}%`;
  $('p-phase').textContent = `${p.phase} · ${p.arm} · epoch ${p.epoch}/${p.epochs} · step ${p.step}/${p.steps}`;
  $('p-runs').textContent = `${p.runs_done}/${p.runs_total} done, ${p.losses.length} in flight`;
  $('p-elapsed').textContent = fmtTime(p.elapsed_s);
  $('p-eta').textContent = p.fraction > 0.02 ? fmtTime(p.elapsed_s * (1 - p.fraction) / p.fraction) : 'estimating…';
  const key = `${p.phase}/${p.arm}`;
  const live = state.live;
  if (live.key !== key) {
    Object.assign(live, { key, series: new Map(), step: 0, caption: `${p.arm} ${p.phase}: minibatch loss` });
  }
  live.step = (p.epoch - 1) * p.steps + p.step;
  p.losses.forEach((loss, i) => {
    const label = `lr ${p.lrs[i]} seed ${p.seeds[i]}`;
    if (!live.series.has(label)) live.series.set(label, []);
    if (loss !== null) live.series.get(label).push([live.step, loss]);
  });
  scheduleLive();
}

let liveQueued = false;
function scheduleLive() {
  if (liveQueued) return;
  liveQueued = true;
  setTimeout(() => { liveQueued = false; drawLive(); }, 250);
}

async function drawLive() {
  const m = await charts.catch(() => null);
  if (!m) return;
  const canvas = sizeCanvas($('live'));
  const series = [...state.live.series].map(([label, points]) => ({ label, points }));
  try {
    m.draw_losses(canvas, state.live.caption || 'minibatch loss', JSON.stringify(series), devicePixelRatio || 1);
  } catch (e) {
    console.warn(e);
  }
}

// ---------------------------------------------------------------- results
const charts = import('./pkg/rdbench_charts.js').then(async (m) => {
  await m.default();
  window.rdbench.timings.chartsReady = performance.now();
  return m;
});
charts.catch(() => banner('error', 'The app is not built (www/pkg is missing): run `npm start`.'));

function sizeCanvas(canvas) {
  const dpr = devicePixelRatio || 1;
  const w = Math.max(200, Math.round(canvas.clientWidth * dpr));
  const h = Math.max(150, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  return canvas;
}

const fmt = (v, digits = 4) => (v === null || v === undefined ? 'n/a' : Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(digits) : v.toExponential(2));

function fact(dl, key, label, value, text) {
  const div = document.createElement('div');
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.textContent = text;
  dd.dataset.key = key;
  dd.dataset.value = JSON.stringify(value ?? null);
  div.append(dt, dd);
  dl.append(div);
}

function renderCard(c) {
  const verdict = $('verdict');
  verdict.textContent = `Verdict: ${c.verdict}`;
  verdict.dataset.value = JSON.stringify(c.verdict);
  verdict.className = `verdict ${c.verdict === 'significant win' ? 'win' : c.verdict === 'significant loss' ? 'loss' : 'none'}`;
  const dl = $('card-facts');
  dl.replaceChildren();
  fact(dl, 'p_value', 'p', c.p_value, `${fmt(c.p_value)} (${c.p_method})`);
  fact(dl, 'delta_mean', 'Δ mean MSE (idea − baseline)', c.delta_mean, fmt(c.delta_mean, 6));
  if (c.delta_ci95) fact(dl, 'delta_ci95', '95% CI of Δ', c.delta_ci95, `${fmt(c.delta_ci95[0], 6)} … ${fmt(c.delta_ci95[1], 6)}`);
  fact(dl, 'idea_wins', 'idea wins', c.idea_wins, `${c.idea_wins}/${c.n_pairs}`);
  fact(dl, 'n_pairs', 'pairs tested', c.n_pairs, String(c.n_pairs));
  fact(dl, 'baseline_mean', 'baseline MSE', c.baseline_mean, fmt(c.baseline_mean, 6));
  fact(dl, 'idea_mean', 'idea MSE', c.idea_mean, fmt(c.idea_mean, 6));
  if (c.wilcoxon_p !== null) fact(dl, 'wilcoxon_p', 'Wilcoxon p', c.wilcoxon_p, fmt(c.wilcoxon_p));
  if (c.effect_size_dz !== null) fact(dl, 'effect_size_dz', 'effect size d_z', c.effect_size_dz, fmt(c.effect_size_dz, 2));
  fact(dl, 'best_lr_baseline', 'best lr (baseline / idea)', c.best_lr_baseline, `${c.best_lr_baseline} / ${c.best_lr_idea}`);
  if (c.memory_saved_fraction !== null) {
    fact(dl, 'memory_saved_fraction', 'memory saved', c.memory_saved_fraction,
      `${(100 * c.memory_saved_fraction).toFixed(1)}% (${fmt(c.mean_stored_states, 1)} of ${c.dense_states} states)`);
  }
  if (c.wall_time_s !== null) fact(dl, 'wall_time_s', 'wall time', c.wall_time_s, fmtTime(c.wall_time_s));
  if (c.backend !== null) fact(dl, 'backend', 'backend', c.backend, `${c.backend} — ${c.adapter}`);

  const mech = $('card-mechanism');
  mech.replaceChildren();
  const head = document.createElement('div');
  head.dataset.key = 'mechanism_confirmed';
  head.dataset.value = JSON.stringify(c.mechanism_confirmed);
  const failed = c.conditions.filter((x) => !x.holds).map((x) => `(${x.letter})`);
  head.textContent = `Mechanism: ${c.mechanism_confirmed ? 'confirmed' : 'not confirmed'}` +
    (failed.length ? ` — failed ${failed.join(', ')}` : '') +
    ` · final probe: mean defect ${fmt(c.observed_mean_defect)}, mean checkpoints ${fmt(c.observed_mean_checkpoints, 1)}`;
  mech.append(head);
  if (c.conditions.length) {
    const ul = document.createElement('ul');
    for (const cond of c.conditions) {
      const li = document.createElement('li');
      li.className = cond.holds ? 'ok' : 'fail';
      li.textContent = `(${cond.letter}) ${cond.detail}`;
      ul.append(li);
    }
    mech.append(ul);
  }
  const warn = $('card-warnings');
  warn.replaceChildren();
  for (const w of c.warnings) {
    const li = document.createElement('li');
    li.textContent = w;
    warn.append(li);
  }
  $('card').hidden = false;
}

function drawCharts() {
  const v = state.view;
  if (!v) return;
  const dpr = devicePixelRatio || 1;
  const jobs = [
    ['chart-per-seed', (c) => v.draw_per_seed(c, dpr)],
    ['chart-sweep', (c) => v.draw_sweep(c, dpr)],
    ['chart-mechanism', (c) => v.draw_mechanism(c, dpr)],
    ['chart-null', (c) => v.draw_null(c, dpr)],
  ];
  for (const [id, draw] of jobs) {
    const canvas = sizeCanvas($(id));
    try {
      draw(canvas);
      canvas.dataset.drawn = 'true';
    } catch (e) {
      canvas.dataset.drawn = 'false';
      banner('error', `Could not draw ${id}: ${e?.message ?? e}`);
    }
  }
}

async function showReport(text, source) {
  const m = await charts;
  let view;
  try {
    view = new m.View(text);
  } catch (e) {
    banner('error', `Could not open ${source}: ${e?.message ?? e}`);
    return false;
  }
  state.view?.free();
  state.view = view;
  state.lastReportText = text;
  $('download').disabled = false;
  $('source').textContent = `Showing ${source}.`;
  renderCard(JSON.parse(view.card_json()));
  $('results-empty').hidden = true;
  $('charts').hidden = false;
  const problems = view.problems();
  if (problems.length) banner('warn', `This report's numbers do not all add up:\n${problems.slice(0, 6).join('\n')}`);
  else if (source !== 'this run') banner(null);
  drawCharts();
  window.rdbench.timings.chartDrawn = performance.now();
  document.body.dataset.report = 'shown';
  return true;
}

async function loadFile(file) {
  if (!file) return;
  if (file.size > 64 * 1024 * 1024) return banner('error', `${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MB: too large for a report.`);
  let text;
  try {
    text = await file.text();
  } catch (e) {
    return banner('error', `Could not read ${file.name}: ${e?.message ?? e}`);
  }
  await showReport(text, file.name);
}

function download() {
  if (!state.lastReportText) return;
  const blob = new Blob([state.lastReportText], { type: 'application/json' });
  const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: 'bench_report.json' });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// ---------------------------------------------------------------- wiring
function init() {
  NUMERIC.forEach(bindNumeric);
  $('policy').addEventListener('change', () => { state.config.policy = $('policy').value; configChanged(); });
  $('model').addEventListener('change', () => { state.config.model = $('model').value; configChanged(); });
  $('backend').addEventListener('change', () => { state.backend = $('backend').value; configChanged(); });
  $('lr-add').addEventListener('click', () => {
    const last = state.config.lrs[state.config.lrs.length - 1] ?? 0.001;
    let next = Number((last * 3).toPrecision(2));
    while (state.config.lrs.includes(next)) next = Number((next * 1.5).toPrecision(2));
    state.config.lrs = [...state.config.lrs, next];
    renderLrs();
    configChanged();
  });
  $('preset-quick').addEventListener('click', () => { state.config = structuredClone(PRESETS.quick); renderControls(); });
  $('preset-seed').addEventListener('click', () => { state.config = structuredClone(PRESETS.seed); renderControls(); });
  $('config').addEventListener('submit', (e) => {
    e.preventDefault();
    // After a cancel or a failure, the same configuration resumes from the finished runs.
    const resume = state.resumable && sameConfig(state.config, state.lastConfigRun) && state.finishedRuns.length > 0;
    startRun(resume ? state.finishedRuns : []);
  });
  $('cancel').addEventListener('click', () => {
    state.worker?.postMessage(toWorker.cancel());
    $('p-phase').textContent = 'cancelling…';
  });
  $('continue-cpu').addEventListener('click', () => {
    state.backend = 'cpu';
    $('backend').value = 'cpu';
    configChanged();
    startRun(state.finishedRuns, 'cpu');
  });
  $('download').addEventListener('click', download);
  $('load-file').addEventListener('change', (e) => { loadFile(e.target.files[0]); e.target.value = ''; });
  $('load-example').addEventListener('click', async () => {
    try {
      const r = await fetch(new URL('./examples/seed_bench_report.json', import.meta.url));
      await showReport(await r.text(), 'the seed report (reference/seed_bench_report.json)');
    } catch (e) {
      banner('error', `Could not fetch the example: ${e?.message ?? e}`);
    }
  });
  document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
  document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dragging'); });
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    loadFile(e.dataTransfer?.files?.[0]);
  });
  let resizeTimer;
  addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { drawCharts(); drawLive(); }, 200); });

  const { config, backend, errors } = fromHash(location.hash);
  state.config = config;
  state.backend = backend;
  renderControls();
  if (errors.length) banner('warn', `Some settings in the link were invalid and were replaced by defaults:\n${errors.join('\n')}`);
  drawLive();
  // Fetch and compile the engine in the background: the page never waits for it.
  (window.requestIdleCallback ?? setTimeout)(() => ensureWorker());
}

init();
window.rdbench.timings.interactive = performance.now();
