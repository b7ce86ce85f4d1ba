// Study mode: the mechanism study of issue 9 in the page. It runs the bench on every track,
// model and policy (the configs come from Rust, `study_configs`), one bench after another,
// through its own engine client, then builds study_report.json with the same Rust function as
// `rdbench study` (`build_study`, charts wasm), draws its chart and a table, and offers the
// download. Cancel keeps the finished benches and the in-flight bench's finished runs; Run
// study again with the same configuration resumes from them. Nothing from a report is
// inserted as HTML: the table is built from text nodes.
import { createEngine } from './engine-client.js';
import { el, save } from './dom.js';
import { duration, num, percent } from './format.js';

/**
 * charts: the charts wasm module promise; getStart(): {config, backend} of the controls or
 * null; isBusy(): whether the single-bench engine runs; banner(kind, text); onState(): called
 * when the study starts or stops (the page then turns its own Run off or on).
 */
export function createStudy({ charts, getStart, isBusy, banner, onState = () => {} }) {
  const state = {
    running: false,
    // Bench configs of the study in flight, and the report text of each finished bench.
    configs: [],
    reports: [],
    base: null,
    studyJson: null,
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
    status, figure, el('div', { style: 'overflow-x: auto' }, table), conditions);
  section.setAttribute('aria-labelledby', 'study-title');
  // Full width under the page's columns; a wide table scrolls inside its own box.
  section.style.gridColumn = '1 / -1';
  table.style.borderCollapse = 'collapse';
  table.style.fontSize = '0.85rem';
  (document.querySelector('main') ?? document.body).append(section);

  let t0 = 0;
  let current = 0;
  const engine = createEngine({
    loading: () => {},
    loaded: () => {},
    started: () => {},
    backend: () => {},
    runFinished: () => {},
    progress: (p) => {
      const n = state.configs.length;
      const f = (current + p.fraction) / n;
      progress.value = f;
      const elapsed = (performance.now() - t0) / 1000;
      const eta = f > 0.01 ? (elapsed / f) * (1 - f) : NaN;
      const c = state.configs[current];
      status.textContent = `Bench ${current + 1}/${n}: ${c.track} ${c.model} ${c.policy} \u2014 ${p.phase} ${p.arm}, ` +
        `epoch ${p.epoch}/${p.epochs} \u2014 ${Math.round(100 * f)}%, elapsed ${duration(elapsed)}, ETA ${duration(eta)}`;
    },
    report: (json) => {
      state.reports.push(json);
      next();
    },
    stopped: (m, kept) => {
      finish();
      status.textContent = `Stopped (${m.reason}): ${state.reports.length} bench(es) finished and ${kept} run(s) ` +
        'of the next are kept. Run study again with the same configuration to resume.';
    },
    crashed: (message, { kept }) => {
      finish();
      banner('error', `The study's engine stopped: ${message}\n${state.reports.length} bench(es) and ${kept} run(s) are kept.`);
    },
  });

  function refresh() {
    runBtn.disabled = state.running || isBusy() || !getStart();
    cancelBtn.disabled = !state.running;
  }

  function finish() {
    state.running = false;
    refresh();
    onState();
  }

  async function start() {
    const s = getStart();
    if (!s || state.running) return;
    const m = await charts;
    let configs;
    try {
      configs = JSON.parse(m.study_configs(JSON.stringify(s.config)));
    } catch (e) {
      banner('error', `The study cannot start: ${e.message ?? e}`);
      return;
    }
    const base = JSON.stringify(s);
    // A study with another configuration starts afresh; the same one resumes.
    if (state.base !== base) {
      state.reports = [];
      state.base = base;
    }
    state.configs = configs;
    state.backend = s.backend;
    state.studyJson = null;
    download.disabled = true;
    state.running = true;
    t0 = performance.now();
    refresh();
    onState();
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
    status.textContent = `Study finished: ${study.table.length} benches in ${duration((performance.now() - t0) / 1000)}.`;
    figure.hidden = false;
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(600, figure.clientWidth || 1000);
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(w * 0.46 * dpr);
    canvas.style.width = `${w}px`;
    canvas.style.height = `${Math.round(w * 0.46)}px`;
    m.draw_study(canvas, state.studyJson, dpr);
    renderTable(study);
    renderConditions(study);
    download.disabled = false;
  }

  function renderTable(study) {
    const head = ['track', 'model', 'policy', 'mean defect', 'checkpoints', 'cos chosen k', 'cos k_max',
      'memory saved (counted)', 'memory saved (measured)', 'metric', 'baseline', 'idea', 'p', 'verdict'];
    const rows = study.table.map((r) => [r.track, r.model, r.policy, num(r.mean_defect), num(r.mean_checkpoints),
      num(r.mean_grad_cos_chosen), num(r.mean_grad_cos_kmax), percent(r.memory_saved_counted),
      r.memory_saved_measured === null ? 'not measured in the browser' : percent(r.memory_saved_measured),
      `${r.metric} (${r.metric_direction})`, num(r.baseline_metric), num(r.idea_metric), num(r.p_value), r.verdict]);
    // A number never breaks at its exponent's minus ("7.692e-" / "8"); the table scrolls instead.
    const numeric = new Set([3, 4, 5, 6, 7, 10, 11, 12]);
    table.replaceChildren(
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { textContent: h })))),
      el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v, i) =>
        el('td', { textContent: String(v), style: numeric.has(i) ? 'white-space: nowrap' : '' }))))));
    for (const c of table.querySelectorAll('th, td')) {
      c.style.padding = '0.2rem 0.6rem';
      c.style.borderBottom = '1px solid #e3e3ea';
      c.style.textAlign = 'left';
    }
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

  runBtn.addEventListener('click', start);
  cancelBtn.addEventListener('click', () => {
    engine.cancel();
    status.textContent = 'Cancelling\u2026';
  });
  download.addEventListener('click', () => {
    if (state.studyJson) save(new Blob([state.studyJson + '\n'], { type: 'application/json' }), 'study_report.json');
  });
  setInterval(refresh, 500);
  refresh();
  return { state, start, refresh, engine };
}
