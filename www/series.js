// A series of benches run one after another on a panel of its own: the mechanism study
// (study.js) and the scale study (scale.js) are each a series. It runs the benches through
// its own engine client, then hands their report texts to the view's `build` (a Rust
// function of the charts wasm, the same as the CLI's) and `show`s the result, and offers the
// download. Before it starts it measures each bench's speed (the bench's own estimate,
// estimate.js) and asks when the series is long. While it runs, the time left is the
// estimate of the benches ahead scaled by how the finished benches of this attempt compared
// with their estimates, so the ETA follows the machine. Cancel keeps the finished benches and
// the in-flight bench's finished runs; Run again with the same configuration resumes from
// them (the button says so), and its progress and time count the whole series.
import { createEngine } from './engine-client.js';
import { el, save } from './dom.js';
import { estimateOf, sumEstimates } from './estimate.js';
import { bytes, duration, percent } from './format.js';

/** A loaded result above this size is refused before it is read. */
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * view: { id ('study'), title, help, noun ('study'), fileName, label(c) (a bench in words),
 *   configs(m, start) (the bench configs, may throw), build(m, reports) (the result's JSON
 *   text, may throw), show(m, json) (draws it; returns a sentence for the status),
 *   controls: elements placed before the buttons, check(m, text): throws what is wrong with a
 *   loaded result file (its Load button: `${id}-load`, `${id}-file`),
 *   key(): what else besides the page's config makes a different series (its inputs),
 *   problem(): what is wrong with those inputs (Run stays off), or null }
 * charts: the charts wasm module promise; getStart(): {config, backend} of the controls or
 * null; isBusy(): whether another engine runs; banner(kind, text); onState(): called when
 * the series starts or stops; confirm(e): asks about a long series, resolves true to go on;
 * onResult(json, label): a series finished here (the page keeps it in its history).
 */
export function createSeries(view, { charts, getStart, isBusy, banner, onState = () => {}, confirm = async () => true, onResult = () => {} }) {
  const { id, noun } = view;
  const state = {
    // From Run (its measuring included) until the series ends or stops.
    running: false,
    // Bench configs of the series in flight, and the report text of each finished bench.
    configs: [],
    reports: [],
    base: null,
    // The result's JSON text once built (or loaded).
    resultJson: null,
    // The series' estimate ({seconds, text, fallback, first, benches}) once measured.
    estimate: null,
    // Seconds the stopped attempts ran (a resume counts them).
    elapsedBefore: 0,
    // Cancel was pressed while the benches were measured: the series does not start.
    cancelled: false,
    // Benches finished in this attempt: [estimated seconds, measured seconds] each.
    finished: [],
  };

  const runLabel = `Run ${noun}`;
  const runBtn = el('button', { type: 'button', id: `${id}-run`, className: 'primary', textContent: runLabel });
  const cancelBtn = el('button', { type: 'button', id: `${id}-cancel`, textContent: 'Cancel', disabled: true });
  const download = el('button', { type: 'button', id: `${id}-download`, textContent: `Download ${view.fileName}`, disabled: true });
  // A result file made anywhere (the CLI, another browser) is loaded and checked as
  // `rdbench validate` checks it, every figure rebuilt from its embedded bench reports.
  const loadBtn = el('button', { type: 'button', id: `${id}-load`, textContent: `Load ${view.fileName}\u2026` });
  const file = el('input', { type: 'file', id: `${id}-file`, accept: '.json,application/json', hidden: true });
  // A file Load refuses is said as the main Load says it: an alert next to the buttons.
  const loadError = el('p', { id: `${id}-load-error`, className: 'load-error', hidden: true, tabIndex: -1 });
  loadError.setAttribute('role', 'alert');
  const configError = el('p', { id: `${id}-config-error`, className: 'field-error', hidden: true });
  configError.setAttribute('aria-live', 'polite');
  runBtn.setAttribute('aria-describedby', `${id}-config-error`);
  const progress = el('progress', { id: `${id}-progress`, max: 1, value: 0 });
  // No bar before anything ran: an empty one reads as a stalled series.
  const progressRow = el('div', { className: 'progress-row', hidden: true }, progress);
  const status = el('p', { id: `${id}-status`, className: 'help' });
  status.setAttribute('aria-live', 'polite');
  const output = el('div', { id: `${id}-output` });
  const section = el('section', { id, className: `panel study ${id}` },
    el('h2', { id: `${id}-title`, textContent: view.title }),
    el('p', { className: 'help', textContent: view.help }),
    ...(view.controls ?? []),
    el('div', { className: 'actions' }, runBtn, cancelBtn, download, loadBtn, file),
    configError,
    loadError,
    progressRow,
    status, output);
  section.setAttribute('aria-labelledby', `${id}-title`);
  (document.querySelector('main') ?? document.body).append(section);

  // When this attempt started, and when its current bench started (performance.now()).
  let t0 = 0;
  let benchT0 = 0;
  let current = 0;
  const elapsed = () => state.elapsedBefore + (performance.now() - t0) / 1000;
  /** How this attempt's finished benches ran against their estimates (1 before any). */
  const pace = () => {
    const [e, m] = state.finished.reduce(([a, b], [x, y]) => [a + x, b + y], [0, 0]);
    return e > 0 && m > 0 ? m / e : 1;
  };
  const benchSeconds = (i) => state.estimate?.benches[i - state.estimate.first];
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
      // What is left by the estimate: the rest of this bench and the benches after it, at
      // the pace the finished benches of this attempt ran.
      const ahead = state.estimate?.benches.slice(current - state.estimate.first) ?? [];
      const left = ahead.length ? pace() * (ahead[0] * (1 - p.fraction) + ahead.slice(1).reduce((a, b) => a + b, 0)) : NaN;
      const where = p.epoch === 0 ? 'starting' : `${p.phase} ${p.arm}, epoch ${p.epoch}/${p.epochs}`;
      const adjusted = state.finished.length ? `, the estimate × ${pace().toFixed(2)} as the finished benches ran` : ' by the estimate';
      status.textContent = `Bench ${current + 1}/${n}: ${view.label(state.configs[current])} \u2014 ${where} \u2014 ` +
        `${Math.floor(100 * f)}%, elapsed ${duration(elapsed())}` +
        (Number.isFinite(left) ? `, about ${duration(left)} left${adjusted}` : '');
    },
    report: (json) => {
      const planned = benchSeconds(state.reports.length);
      if (Number.isFinite(planned)) state.finished.push([planned, (performance.now() - benchT0) / 1000]);
      state.reports.push(json);
      next();
    },
    stopped: (m, kept, { fractionKept }) => {
      stop();
      const f = (state.reports.length + (fractionKept > 0 ? fractionKept : 0)) / state.configs.length;
      progress.value = f;
      status.textContent = `Stopped (${m.reason}) after ${duration(state.elapsedBefore)}: ${state.reports.length} bench(es) ` +
        `finished and ${kept} run(s) of the next are kept (${percent(f)} of the ${noun}). Resume ${noun} runs the rest.`;
    },
    crashed: (message, { kept }) => {
      stop();
      banner('error', `The ${noun}'s engine stopped: ${message}\n${state.reports.length} bench(es) and ${kept} run(s) are kept.`);
    },
  });

  /** What makes a series the same one: the page's start and the view's own inputs. */
  const keyOf = (s) => JSON.stringify([s, view.key?.() ?? null]);

  /** Whether Run would resume: the same configuration, stopped with work kept. */
  function resumable() {
    const s = getStart();
    if (!s || keyOf(s) !== state.base || state.resultJson) return null;
    const runs = engine.reusable(state.configs[state.reports.length] ?? null).length;
    return state.reports.length || runs ? { benches: state.reports.length, runs } : null;
  }

  // The series' bench configs are checked as the form changes (by the Rust that builds them
  // at Run), so a config the series cannot run keeps Run off with its reason beside it.
  let module = null;
  charts.then((m) => { module = m; refresh(); }).catch(() => {});
  let checked = { key: null, problem: null };
  function configProblem(s) {
    if (!s || !module) return null;
    const key = keyOf(s);
    if (checked.key !== key) {
      let problem = null;
      try {
        view.configs(module, s);
      } catch (e) {
        problem = `The ${noun} cannot run this configuration: ${e.message ?? e}`;
      }
      checked = { key, problem };
    }
    return checked.problem;
  }

  function refresh() {
    const s = getStart();
    const problem = state.running || view.problem?.() ? null : configProblem(s);
    configError.textContent = problem ?? '';
    configError.hidden = !problem;
    runBtn.disabled = state.running || isBusy() || !s || Boolean(view.problem?.()) || Boolean(problem);
    // The view's own inputs are part of the series that runs: locked with the form.
    for (const c of view.controls ?? []) for (const i of c.querySelectorAll('input')) i.disabled = state.running;
    cancelBtn.disabled = !state.running;
    const r = state.running ? null : resumable();
    runBtn.textContent = r
      ? `Resume ${noun} (${r.benches} bench${r.benches === 1 ? '' : 'es'} and ${r.runs} run${r.runs === 1 ? '' : 's'} kept)`
      : runLabel;
  }

  function finish() {
    state.running = false;
    refresh();
    onState();
  }

  /** The series stopped: its time so far is kept for a resume. */
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
      parts.push({ ...e, label: view.label(c) });
    }
    const sum = sumEstimates(parts);
    const text = `Estimated time ≈ ${duration(sum.seconds)} (${duration(sum.low)}–${duration(sum.high)}) for ` +
      `${parts.length} bench${parts.length === 1 ? '' : 'es'} ` +
      `on ${parts[0].info.backend} (${parts.map((p) => `${p.label} ${duration(p.seconds)}`).join(', ')}), speed measured in this browser.`;
    return { ...sum, text, first, benches: parts.map((p) => p.seconds) };
  }

  async function start() {
    const s = getStart();
    if (!s || state.running || isBusy()) return;
    const m = await charts;
    let configs;
    try {
      configs = view.configs(m, s);
    } catch (e) {
      status.textContent = `The ${noun} cannot start: ${e.message ?? e}`;
      banner('error', `The ${noun} cannot start: ${e.message ?? e}`);
      return;
    }
    const base = keyOf(s);
    // A series with another configuration, or a finished one, starts afresh; the same one
    // stopped resumes.
    if (state.base !== base || state.reports.length >= configs.length) {
      state.reports = [];
      state.base = base;
      state.elapsedBefore = 0;
    }
    state.configs = configs;
    state.backend = s.backend;
    state.resultJson = null;
    state.cancelled = false;
    state.finished = [];
    progressRow.hidden = false;
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
      status.textContent = `The ${noun} did not start: no time estimate (${e.message ?? e}).`;
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
    benchT0 = performance.now();
    if (current < state.configs.length) {
      if (!engine.start(state.configs[current], state.backend)) {
        finish();
        banner('error', `The ${noun} could not start its next bench.`);
      }
      return;
    }
    finish();
    done();
  }

  async function done() {
    const m = await charts;
    let json;
    try {
      json = view.build(m, state.reports);
    } catch (e) {
      banner('error', `The ${noun} report could not be built: ${e.message ?? e}`);
      return;
    }
    state.elapsedBefore = elapsed();
    progress.value = 1;
    display(m, json, `${noun[0].toUpperCase()}${noun.slice(1)} finished: ${state.reports.length} benches in ${duration(state.elapsedBefore)}.`);
    onResult(json, `the ${noun} that finished ${new Date().toLocaleString()}`);
  }

  /** Show a result text kept elsewhere (the history): checked as Load checks a file. */
  async function showText(text, source) {
    loadError.hidden = true;
    const m = await charts;
    try {
      view.check(m, text);
    } catch (e) {
      refuse(`${source} is not a valid ${kind}: ${e.message ?? e}`);
      return false;
    }
    display(m, text, `Showing ${source} (valid: every figure rebuilt from its embedded bench reports).`);
    section.scrollIntoView({ block: 'start' });
    return true;
  }

  /** Show a result (built here or loaded) and enable its download; refused while running. */
  function display(m, json, lead) {
    if (state.running) {
      status.textContent = `A ${noun} is running: load a report when it has ended.`;
      return;
    }
    state.resultJson = json;
    const said = view.show(m, json, output);
    status.textContent = said ? `${lead} ${said}` : lead;
    download.disabled = false;
    refresh();
  }

  function cancel() {
    state.cancelled = true;
    engine.cancel();
    status.textContent = 'Cancelling\u2026';
  }

  // "scale report" for scale_report.json.
  const kind = view.fileName.replace(/_report\.json$/, ' report');

  /** A refused file: said in the alert, in view, with what is still shown. */
  function refuse(text) {
    loadError.textContent = text + (state.resultJson ? '\nStill showing the previous result: nothing was replaced.' : '');
    loadError.hidden = false;
    loadError.scrollIntoView({ block: 'nearest' });
    loadError.focus({ preventScroll: true });
  }

  async function load(f) {
    if (!f) return;
    loadError.hidden = true;
    if (f.size > MAX_BYTES) {
      refuse(`${f.name} is ${bytes(f.size)}: too large for a ${kind}.`);
      return;
    }
    const before = status.textContent;
    status.textContent = `Checking ${f.name}\u2026 (every figure is rebuilt from its embedded bench reports)`;
    const m = await charts;
    let text;
    try {
      text = await f.text();
      view.check(m, text);
    } catch (e) {
      status.textContent = before;
      refuse(`${f.name} is not a valid ${kind}: ${e.message ?? e}`);
      return;
    }
    display(m, text.replace(/^\uFEFF/, '').trimEnd(), `Loaded ${f.name} (valid: every figure rebuilt from its embedded bench reports).`);
  }

  runBtn.addEventListener('click', start);
  cancelBtn.addEventListener('click', cancel);
  loadBtn.addEventListener('click', () => file.click());
  file.addEventListener('change', (e) => {
    load(e.target.files[0]);
    e.target.value = '';
  });
  download.addEventListener('click', () => {
    if (state.resultJson) save(new Blob([state.resultJson + '\n'], { type: 'application/json' }), view.fileName);
  });
  setInterval(refresh, 500);
  refresh();
  return { state, start, cancel, refresh, engine, display, showText, status, output };
}

/** A canvas in a hidden figure, named for assistive technology. */
export function chartFigure(id, label) {
  const canvas = el('canvas', { id, className: 'chart' });
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', label);
  return { canvas, figure: el('figure', { hidden: true }, canvas) };
}

/** Size `canvas` to `w` × `h` CSS pixels at the device's pixel ratio; returns the ratio. */
export function sizeCanvas(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(w * dpr);
  canvas.height = Math.round(h * dpr);
  canvas.style.width = `${w}px`;
  canvas.style.height = `${h}px`;
  return dpr;
}

/** Fill `table` with a header and rows of text cells (`numeric`: column indexes that hold
 *  numbers, kept from breaking). Nothing is inserted as HTML. */
/** A bench report's baseline against the trivial predictor (its `task.learnability`), for a
 *  table: [the learned cell, the verdict to show]. Where the baseline did not learn the
 *  comparison is void at that protocol, and the verdict cell says so instead of "no
 *  significant win". A report from before the block: '–' and the verdict as it is. */
export function learnedAndVerdict(report, verdict) {
  const l = report?.task?.learnability;
  if (!l) return ['\u2013', verdict];
  const seeds = `${l.baseline.seeds_learned} of ${l.baseline.n} seeds`;
  if (l.comparison_void) return [`no (${seeds})`, 'VOID: the baseline did not learn'];
  return [l.baseline.learned ? `yes (${seeds})` : `no mean (${seeds})`, verdict];
}

export function fillTable(table, head, rows, numeric) {
  table.replaceChildren(
    el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { textContent: h })))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((v, i) =>
      el('td', { textContent: String(v), className: numeric.has(i) ? 'num' : '' }))))));
  table.hidden = false;
  scrollHint(table, head.length);
}

/** A table wider than its box scrolls sideways, and a line above it says so (scroll bars
 *  are hidden until touched on phones and in some browsers, so a cut column looks like the
 *  table's end). Kept true as the box resizes. */
function scrollHint(table, columns) {
  table.dataset.columns = String(columns);
  const box = table.parentElement;
  if (!box?.classList.contains('study-table-box')) return;
  let hint = box.previousElementSibling?.classList.contains('table-hint') ? box.previousElementSibling : null;
  if (!hint) {
    hint = el('p', { className: 'help table-hint', hidden: true });
    box.before(hint);
    new ResizeObserver(() => update()).observe(box);
  }
  function update() {
    const over = box.scrollWidth > box.clientWidth + 1;
    hint.hidden = !over;
    hint.textContent = over ? `Scroll the table sideways: it has ${table.dataset.columns} columns, more than fit here.` : '';
  }
  update();
}
