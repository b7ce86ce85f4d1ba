// Study mode: the mechanism study of issue 9 in the page. It runs the bench on every track,
// model and policy (the configs come from Rust, `study_configs`), one bench after another,
// through its own engine client, then builds study_report.json with the same Rust function as
// `rdbench study` (`build_study`, charts wasm), draws its chart and a table, and offers the
// download. Before it starts it measures each bench's speed (the bench's own estimate,
// estimate.js) and asks when the study is long. Cancel keeps the finished benches and the
// in-flight bench's finished runs; Run study again with the same configuration resumes from
// them (the button says so), and its progress and time count the whole study. Nothing from a
// report is inserted as HTML: the table is built from text nodes.
import { createEngine } from './engine-client.js';
import { el, save } from './dom.js';
import { estimateOf, sumEstimates } from './estimate.js';
import { duration, num, percent } from './format.js';

/**
 * charts: the charts wasm module promise; getStart(): {config, backend} of the controls or
 * null; isBusy(): whether the single-bench engine runs; banner(kind, text); onState(): called
 * when the study starts or stops (the page then turns its own Run off or on); confirm(e):
 * asks about a long study ({seconds, text, fallback}), resolves true to go on.
 */
export function createStudy({ charts, getStart, isBusy, banner, onState = () => {}, confirm = async () => true }) {
  const state = {
    // From Run study (its measuring included) until the study ends or stops.
    running: false,
    // Bench configs of the study in flight, and the report text of each finished bench.
    configs: [],
    reports: [],
    base: null,
    studyJson: null,
    // The study's estimate ({seconds, text, fallback}) once measured.
    estimate: null,
    // Seconds the study's stopped attempts ran (a resume counts them).
    elapsedBefore: 0,
    // Cancel was pressed while the benches were measured: the study does not start.
    cancelled: false,
  };

  const runBtn = el('button', { type: 'button', id: 'study-run', className: 'primary', textContent: 'Run study' });
  const cancelBtn = el('button', { type: 'button', id: 'study-cancel', textContent: 'Cancel', disabled: true });
  const download = el('button', { type: 'button', id: 'study-download', textContent: 'Download study_report.json', disabled: true });
  const progress = el('progress', { id: 'study-progress', max: 1, value: 0 });
  const status = el('p', { id: 'study-status', className: 'help' });
  status.setAttribute('aria-live', 'polite');
  const canvas = el('canvas', { id: 'study-chart', className: 'chart' });
  canvas.setAttribute('aria-label', 'Study chart: gradient cosine against reversal defect');
  const figure = el('figure', { hidden: true }, canvas);
  // Each model's frontier (issue 17): cell evaluations against states held, side by side.
  const frontierCanvas = el('canvas', { id: 'study-frontier', className: 'chart' });
  frontierCanvas.setAttribute('role', 'img');
  frontierCanvas.setAttribute('aria-label', 'Study frontier chart: cell evaluations against states held, per model');
  const frontierFigure = el('figure', { hidden: true }, frontierCanvas);
  const table = el('table', { id: 'study-table', className: 'study-table', hidden: true });
  const conditions = el('div', { id: 'study-conditions', hidden: true });
  const section = el('section', { id: 'study', className: 'panel study' },
    el('h2', { id: 'study-title', textContent: 'Study' }),
    el('p', {
      className: 'help',
      textContent: 'Runs the bench with the configuration above on every track, model and policy ' +
        '(its track, model and policy are set by the study), pools the idea arms\u2019 probes and judges ' +
        'the mechanism conditions (a)\u2013(d) over them, per model and per track.',
    }),
    el('div', { className: 'actions' }, runBtn, cancelBtn, download),
    el('div', { className: 'progress-row' }, progress),
    status, figure, frontierFigure, el('div', { className: 'study-table-box' }, table), conditions);
  section.setAttribute('aria-labelledby', 'study-title');
  (document.querySelector('main') ?? document.body).append(section);

  // When this attempt started (performance.now()); the study's time adds the stopped ones'.
  let t0 = 0;
  let current = 0;
  const elapsed = () => state.elapsedBefore + (performance.now() - t0) / 1000;
  const engine = createEngine({
    loading: () => {},
    loaded: () => {},
    started: () => {},
    backend: () => {},
    runFinished: () => {},
    progress: (p) => {
      if (!p.complete) return;
      const n = state.configs.length;
      // A bench's fraction starts at its kept runs' share when it resumes.
      const f = (current + p.fraction) / n;
      progress.value = f;
      // What is left by the estimate: the rest of this bench and the benches after it.
      const ahead = state.estimate?.benches.slice(current - state.estimate.first) ?? [];
      const left = ahead.length ? ahead[0] * (1 - p.fraction) + ahead.slice(1).reduce((a, b) => a + b, 0) : NaN;
      const c = state.configs[current];
      const where = p.epoch === 0 ? 'starting' : `${p.phase} ${p.arm}, epoch ${p.epoch}/${p.epochs}`;
      status.textContent = `Bench ${current + 1}/${n}: ${c.track} ${c.model} ${c.policy} \u2014 ${where} \u2014 ` +
        `${Math.floor(100 * f)}%, elapsed ${duration(elapsed())}` +
        (Number.isFinite(left) ? `, about ${duration(left)} left by the estimate` : '');
    },
    report: (json) => {
      state.reports.push(json);
      next();
    },
    stopped: (m, kept, { fractionKept }) => {
      stop();
      const f = (state.reports.length + (fractionKept > 0 ? fractionKept : 0)) / state.configs.length;
      progress.value = f;
      status.textContent = `Stopped (${m.reason}) after ${duration(state.elapsedBefore)}: ${state.reports.length} bench(es) ` +
        `finished and ${kept} run(s) of the next are kept (${percent(f)} of the study). Resume study runs the rest.`;
    },
    crashed: (message, { kept }) => {
      stop();
      banner('error', `The study's engine stopped: ${message}\n${state.reports.length} bench(es) and ${kept} run(s) are kept.`);
    },
  });

  /** Whether Run study would resume: the same configuration, stopped with work kept. */
  function resumable() {
    const s = getStart();
    if (!s || JSON.stringify(s) !== state.base || state.studyJson) return null;
    const runs = engine.reusable(state.configs[state.reports.length] ?? null).length;
    return state.reports.length || runs ? { benches: state.reports.length, runs } : null;
  }

  function refresh() {
    runBtn.disabled = state.running || isBusy() || !getStart();
    cancelBtn.disabled = !state.running;
    const r = state.running ? null : resumable();
    runBtn.textContent = r
      ? `Resume study (${r.benches} bench${r.benches === 1 ? '' : 'es'} and ${r.runs} run${r.runs === 1 ? '' : 's'} kept)`
      : 'Run study';
  }

  function finish() {
    state.running = false;
    refresh();
    onState();
  }

  /** The study stopped: its time so far is kept for a resume. */
  function stop() {
    state.elapsedBefore = elapsed();
    finish();
  }

  /** The estimate of the benches from index `first` on: their sum, each bench's seconds
   *  (`benches`) and a text. The engine calibrates each config once; the start reuses it. */
  async function measure(configs, first, backend) {
    const parts = [];
    for (const c of configs.slice(first)) {
      const e = estimateOf(await engine.calibrate(c, backend));
      if (e.error) throw new Error(e.error);
      parts.push({ ...e, label: `${c.track} ${c.model} ${c.policy}` });
    }
    const sum = sumEstimates(parts);
    const text = `Estimated time ≈ ${duration(sum.seconds)} for ${parts.length} bench${parts.length === 1 ? '' : 'es'} ` +
      `on ${parts[0].info.backend} (${parts.map((p) => `${p.label} ${duration(p.seconds)}`).join(', ')}), speed measured in this browser.`;
    return { ...sum, text, first, benches: parts.map((p) => p.seconds) };
  }

  async function start() {
    const s = getStart();
    if (!s || state.running || isBusy()) return;
    const m = await charts;
    let configs;
    try {
      configs = JSON.parse(m.study_configs(JSON.stringify(s.config)));
    } catch (e) {
      banner('error', `The study cannot start: ${e.message ?? e}`);
      return;
    }
    const base = JSON.stringify(s);
    // A study with another configuration, or a finished one, starts afresh; the same one
    // stopped resumes.
    if (state.base !== base || state.reports.length >= configs.length) {
      state.reports = [];
      state.base = base;
      state.elapsedBefore = 0;
    }
    state.configs = configs;
    state.backend = s.backend;
    state.studyJson = null;
    state.cancelled = false;
    download.disabled = true;
    state.running = true;
    refresh();
    onState();
    // The benches left, measured before anything starts.
    status.textContent = `Measuring the speed of the ${configs.length - state.reports.length} bench(es) to run\u2026`;
    try {
      state.estimate = await measure(configs, state.reports.length, s.backend);
    } catch (e) {
      finish();
      status.textContent = `The study did not start: no time estimate (${e.message ?? e}).`;
      return;
    }
    if (state.cancelled || !(await confirm(state.estimate))) {
      finish();
      status.textContent = `Not started. ${state.estimate.text}`;
      return;
    }
    status.textContent = state.estimate.text;
    t0 = performance.now();
    next();
  }

  function next() {
    current = state.reports.length;
    if (current < state.configs.length) {
      if (!engine.start(state.configs[current], state.backend)) {
        finish();
        banner('error', 'The study could not start its next bench.');
      }
      return;
    }
    finish();
    show();
  }

  async function show() {
    const m = await charts;
    try {
      state.studyJson = m.build_study(JSON.stringify(state.reports));
    } catch (e) {
      banner('error', `The study report could not be built: ${e.message ?? e}`);
      return;
    }
    const study = JSON.parse(state.studyJson);
    progress.value = 1;
    state.elapsedBefore = elapsed();
    status.textContent = `Study finished: ${study.table.length} benches in ${duration(state.elapsedBefore)}.`;
    figure.hidden = false;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(600, figure.clientWidth || 1000);
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(w * 0.46 * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${Math.round(w * 0.46)}px`;
    m.draw_study(canvas, state.studyJson, dpr);
    if (study.frontier?.length) {
      // Side by side on a wide screen, one above the other on a phone.
      const stacked = w < 720;
      // Rows of two panels on a wide screen (a row per track), one panel per row on a phone.
      const n = study.frontier.length;
      const h = stacked ? Math.round(w * 0.9) * n : Math.round(w * 0.5) * (n > 2 ? Math.ceil(n / 2) : 1);
      frontierCanvas.width = Math.round(w * dpr);
      frontierCanvas.height = Math.round(h * dpr);
      frontierCanvas.style.width = `${w}px`;
      frontierCanvas.style.height = `${h}px`;
      frontierFigure.hidden = false;
      frontierFigure.dataset.points = m.draw_study_frontier(frontierCanvas, state.studyJson, dpr, stacked);
    }
    renderTable(study);
    renderConditions(study);
    download.disabled = false;
  }

  function renderTable(study) {
    const head = ['track', 'model', 'policy', 'mean defect', 'checkpoints', 'cos chosen k', 'cos k_max',
      'memory saved (counted)', 'memory saved (measured)', 'metric', 'baseline', 'idea', 'p', 'verdict',
      'best lr at the grid\u2019s edge'];
    const rows = study.table.map((r) => [r.track, r.model, r.policy, num(r.mean_defect), num(r.mean_checkpoints),
      num(r.mean_grad_cos_chosen), num(r.mean_grad_cos_kmax), percent(r.memory_saved_counted),
      r.memory_saved_measured === null ? 'not measured in the browser' : percent(r.memory_saved_measured),
      `${r.metric} (${r.metric_direction})`, num(r.baseline_metric), num(r.idea_metric), num(r.p_value), r.verdict,
      (r.lr_at_grid_edge ?? []).join(', ') || '\u2013']);
    // A number never breaks at its exponent's minus ("7.692e-" / "8"); the table scrolls instead.
    const numeric = new Set([3, 4, 5, 6, 7, 10, 11, 12]);
    table.replaceChildren(
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { textContent: h })))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v, i) =>
        el('td', { textContent: String(v), className: numeric.has(i) ? 'num' : '' }))))));
    table.hidden = false;
  }

  function renderConditions(study) {
    const block = (m) => el('div', { className: 'study-scope' },
      el('h3', { textContent: `${m.scope === 'all' ? 'Pooled over every bench' : m.scope}: ` +
        (m.confirmed ? 'mechanism confirmed' : `not confirmed (failed: ${m.failed.join(', ')})`) +
        ` \u2014 ${m.n_probes} probes` }),
      el('ul', {}, ...Object.entries(m.conditions).map(([k, c]) =>
        el('li', { textContent: `${k}: ${c.holds ? 'holds' : 'fails'} \u2014 ${c.detail}` }))));
    conditions.replaceChildren(block(study.pooled), ...study.per_model.map(block), ...study.per_track.map(block));
    conditions.hidden = false;
  }

  function cancel() {
    state.cancelled = true;
    engine.cancel();
    status.textContent = 'Cancelling\u2026';
  }

  runBtn.addEventListener('click', start);
  cancelBtn.addEventListener('click', cancel);
  download.addEventListener('click', () => {
    if (state.studyJson) save(new Blob([state.studyJson + '\n'], { type: 'application/json' }), 'study_report.json');
  });
  setInterval(refresh, 500);
  refresh();
  return { state, start, cancel, refresh, engine };
}
