// What a bench shows: the run panel (progress, live loss chart) and the results (verdict
// card, the report charts, load and download of a report). Nothing from a report file or the
// engine is inserted as HTML: text goes through textContent, charts through canvas.
import { $, el, save } from './dom.js';
import { bytes, delta, duration, num, percent } from './format.js';

/** Match a canvas's backing store to its CSS size (charts are drawn in device pixels). */
function sizeCanvas(canvas) {
  const dpr = devicePixelRatio || 1;
  const w = Math.max(200, Math.round(canvas.clientWidth * dpr));
  const h = Math.max(150, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  return canvas;
}

/**
 * The run panel and the results panel.
 * charts: promise of the initialised charts wasm module; banner(kind, text): the page banner;
 * timings: where load timings are recorded for tests.
 */
export function createResults({ charts, banner, timings, onShown = () => {} }) {
  // The live chart: the runs trained in this attempt (by label), the runs a resumed bench
  // reuses (RunRecords), and the steps per epoch of each phase (sweep and full runs train on
  // sets of different sizes), as the bench's progress said; they place a reused run's epochs.
  // The steps outlive a stop: the reused runs were trained by the attempts before.
  // trivial: the backend event's trivial_loss (a regression's plateau and learning bar), or null.
  const live = { series: new Map(), caption: '', reused: [], stepsOf: new Map(), trivial: null };
  let view = null;
  let reportText = null;
  let firstProgress = null;
  let lastProgress = null;

  // ------------------------------------------------------------ run panel
  /** A bench starts; `reused`: the RunRecords it resumes from (kept from stopped attempts). */
  function resetRun(phase, reused = []) {
    Object.assign(live, { series: new Map(), caption: '', reused, trivial: null });
    if (!reused.length) live.stepsOf = new Map();
    firstProgress = null;
    lastProgress = null;
    $('p-phase').textContent = phase;
    $('progress').value = 0;
    $('progress-pct').textContent = '0%';
    // Nothing of the last run may linger until the first progress of this one.
    for (const id of ['p-runs', 'p-elapsed', 'p-eta']) $(id).textContent = '–';
  }

  /** The bench stopped (cancel, failure): nothing is in flight and there is no ETA. The bar
   *  drops to the share of the bench its kept runs hold (`fractionKept`, when the engine said):
   *  the steps of the runs in flight are lost, and a resume starts from there. */
  function stopped({ fractionKept = null, kept = null } = {}) {
    $('p-eta').textContent = '–';
    // The runs kept, which may have finished after the last progress said.
    const runs = $('p-runs').textContent.replace(/, \d+ in flight$/, '');
    $('p-runs').textContent = kept !== null && lastProgress ? `${kept}/${lastProgress.runs_total} done` : runs;
    if (fractionKept !== null) {
      $('progress').value = fractionKept;
      $('progress-pct').textContent = `${Math.floor(fractionKept * 100)}% kept`;
    }
  }

  function setPhase(text) {
    $('p-phase').textContent = text;
  }

  function setBackend(info) {
    $('p-backend').textContent = `${info.backend} — ${info.adapter}`;
    live.trivial = info.trivial_loss ?? null;
  }

  /** A merged progress of the bench (engine-client.js): its figures and its runs in flight. */
  function progress(p) {
    drawReported(p.reported, p);
    // Every worker reports once before its first step (worker 0 with the reused runs): the
    // bench's figures are shown once all are in, never a sum that lacks a part.
    if (!p.complete) return;
    if (!firstProgress) firstProgress = p;
    lastProgress = p;
    const pct = `${Math.floor(p.fraction * 100)}%`;
    $('progress').value = p.fraction;
    $('progress-pct').textContent = pct;
    // Before the first step: a resumed bench starts at the share its reused runs hold.
    $('p-phase').textContent = p.epoch === 0
      ? (p.fraction > 0 ? `resuming from the ${pct} kept` : 'starting')
      : `${p.phase} · ${p.arm} · epoch ${p.epoch}/${p.epochs} · step ${p.step}/${p.steps}`;
    $('p-runs').textContent = `${p.runs_done}/${p.runs_total} done, ${p.in_flight.length} in flight`;
    // The bench's time, its stopped attempts included.
    $('p-elapsed').textContent = duration(p.elapsed_s);
    // The rate is this attempt's: the work done since its first report over the time since.
    const done = p.fraction - firstProgress.fraction;
    const took = p.elapsed_s - firstProgress.elapsed_s;
    $('p-eta').textContent = done > 0.02 && took > 0 ? duration(took * (1 - p.fraction) / done) : 'estimating…';
  }

  /** Every run of the bench stays on the live chart, each at its own step (workers of a split
   *  bench are at different steps), so the arms' losses can be compared side by side;
   *  colour = arm, sweep runs faint. */
  function drawReported(runs, p) {
    live.caption = 'minibatch loss of every run so far';
    if (p.steps > 0) live.stepsOf.set(p.phase, p.steps);
    for (const r of runs) {
      const label = `${r.arm} ${r.phase} lr ${r.lr} seed ${r.seed}`;
      if (!live.series.has(label)) live.series.set(label, { label, arm: r.arm, phase: r.phase, points: [] });
      if (r.loss !== null) live.series.get(label).points.push([r.step, r.loss]);
    }
    scheduleLive();
  }

  /** The bench finished: its elapsed time becomes the report's wall time (the last progress
   *  came before the final scoring and report, so it would read short of the card's). */
  function finished(runsDone, wallS = null) {
    $('p-phase').textContent = 'done';
    if (Number.isFinite(wallS)) $('p-elapsed').textContent = duration(wallS);
    $('p-eta').textContent = '–';
    $('progress').value = 1;
    $('progress-pct').textContent = '100%';
    $('p-runs').textContent = `${runsDone} runs done`;
  }

  // Progress arrives up to every 100 ms; redrawing the live chart at most every 250 ms is enough.
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
    try {
      drawnBy.live = JSON.parse(m.draw_losses(canvas, live.caption || 'minibatch loss', liveJson(), JSON.stringify(live.trivial), devicePixelRatio || 1));
      describe('live');
    } catch (e) {
      console.warn(e);
    }
  }

  // ------------------------------------------------------------ verdict card
  function fact(dl, key, label, value, text) {
    const dd = el('dd', { textContent: text });
    // The raw value rides along so tests can compare what is shown with the report.
    dd.dataset.key = key;
    dd.dataset.value = JSON.stringify(value ?? null);
    dl.append(el('div', {}, el('dt', { textContent: label }), dd));
  }

  function renderCard(c, problems) {
    const verdict = $('verdict');
    // A report whose arithmetic fails is not allowed to look like a result.
    const unverified = problems.length > 0;
    // A void comparison (the baseline did not learn) leads with that; the test's reading and
    // the report's verdict stay as secondary text.
    const said = c.comparison_void ? ` — the test alone reads: ${c.test_headline}; report verdict “${c.verdict}”`
      : ` — report verdict “${c.verdict}”`;
    verdict.replaceChildren(el('span', { textContent: (unverified ? 'Unverified: ' : '') + c.headline }),
      el('span', { className: 'verdict-said', textContent: said }));
    verdict.dataset.value = JSON.stringify(c.verdict);
    verdict.dataset.outcome = c.outcome;
    verdict.dataset.comparisonVoid = String(c.comparison_void);
    verdict.className = `verdict ${unverified ? 'unverified' : c.comparison_void ? 'none'
      : c.outcome === 'significant_win' ? 'win' : c.outcome === 'significant_loss' ? 'loss'
        : c.outcome === 'worse_not_significant' ? 'lean-loss' : 'none'}`;
    $('card-explain').textContent = c.explanation;
    $('card-rule').textContent = `Rule: ${c.rule}${c.alpha_from_report ? '' : ' (α is not in this report: the contract default)'}. ` +
      `The smallest p ${c.n_pairs} pair${c.n_pairs === 1 ? '' : 's'} can give is ${c.min_p === 0 ? '0 (Monte Carlo)' : num(c.min_p)}.`;
    $('card-rule').dataset.minP = String(c.min_p);
    const plist = $('card-problem-list');
    plist.replaceChildren(...problems.slice(0, 12).map((t) => el('li', { textContent: t })));
    if (problems.length > 12) plist.append(el('li', { textContent: `… and ${problems.length - 12} more` }));
    $('card-problems').hidden = !unverified;
    const dl = $('card-facts');
    dl.replaceChildren();
    fact(dl, 'p_value', 'p', c.p_value, `${num(c.p_value)} (${c.p_method})`);
    fact(dl, 'alpha', 'α', c.alpha, num(c.alpha));
    fact(dl, 'metric', 'metric', c.metric, `${c.metric} (${c.metric_direction})`);
    fact(dl, 'delta_mean', `Δ mean ${c.metric} (idea − baseline)`, c.delta_mean, delta(c.delta_mean));
    if (c.delta_ci95) fact(dl, 'delta_ci95', '95% CI of Δ', c.delta_ci95, `${delta(c.delta_ci95[0])} … ${delta(c.delta_ci95[1])}`);
    fact(dl, 'idea_wins', 'idea wins', c.idea_wins, `${c.idea_wins}/${c.n_pairs}`);
    fact(dl, 'n_pairs', 'pairs tested', c.n_pairs, String(c.n_pairs));
    fact(dl, 'baseline_mean', `baseline ${c.metric}`, c.baseline_mean, num(c.baseline_mean));
    fact(dl, 'idea_mean', `idea ${c.metric}`, c.idea_mean, num(c.idea_mean));
    if (c.secondary) {
      const [name, b, i] = c.secondary;
      fact(dl, 'secondary', `${name} (baseline / idea, lower is better)`, c.secondary, `${num(b)} / ${num(i)}`);
    }
    if (c.reference) {
      const [name, value] = c.reference;
      fact(dl, 'reference', `trivial predictor (${name})`, c.reference, `${c.metric} ${num(value)}`);
    }
    // Each arm against the trivial predictor; the value is the report's task.learnability arm.
    if (c.learnability_threshold !== null) fact(dl, 'learnability_threshold', 'learnability', c.learnability_threshold, c.learnability_rule);
    for (const [arm, a] of [['baseline', c.baseline_learned], ['idea', c.idea_learned]]) {
      if (a) fact(dl, `${arm}_learned`, `${arm} against the trivial predictor`, { learned: a.learned, seeds_learned: a.seeds_learned, n: a.n }, a.text);
    }
    if (c.wilcoxon_p !== null) fact(dl, 'wilcoxon_p', 'Wilcoxon p', c.wilcoxon_p, num(c.wilcoxon_p));
    if (c.effect_size_dz !== null) fact(dl, 'effect_size_dz', 'effect size d_z', c.effect_size_dz, num(c.effect_size_dz));
    fact(dl, 'best_lr_baseline', 'best lr (baseline / idea)', c.best_lr_baseline, `${num(c.best_lr_baseline)} / ${num(c.best_lr_idea)}`);
    if (c.memory_saved_fraction !== null) {
      fact(dl, 'memory_saved_fraction', 'memory saved', c.memory_saved_fraction,
        `${percent(c.memory_saved_fraction)} (${num(c.mean_stored_states)} of ${c.dense_states} states stored per minibatch: ` +
        `${bytes(c.mean_stored_bytes)} of ${bytes(c.dense_bytes)})`);
    }
    if (c.frontier !== null) fact(dl, 'frontier_dominated', 'against exact checkpointing', c.frontier_dominated, c.frontier);
    if (c.wall_time_s !== null) fact(dl, 'wall_time_s', 'wall time', c.wall_time_s, duration(c.wall_time_s));
    if (c.backend !== null) fact(dl, 'backend', 'backend', c.backend, `${c.backend} — ${c.adapter}`);
    // A resumed or mixed-backend bench says so (Resume, Continue on CPU).
    if (c.reused_runs > 0) fact(dl, 'reused_runs', 'resumed', c.reused_runs, `${c.reused_runs} run(s) reused from a stopped bench`);
    if (c.run_backends.length > 1) {
      fact(dl, 'run_backends', 'runs per backend', c.run_backends, c.run_backends.map(([b, n]) => `${b} ${n}`).join(', '));
    }

    const mech = $('card-mechanism');
    mech.replaceChildren();
    const head = el('div');
    head.dataset.key = 'mechanism_confirmed';
    head.dataset.value = JSON.stringify(c.mechanism_confirmed);
    const letters = (f) => c.conditions.filter(f).map((x) => `(${x.letter})`).join(', ');
    const failed = letters((x) => !x.holds && x.tested);
    const untested = letters((x) => !x.holds && !x.tested);
    head.textContent = `Mechanism: ${c.mechanism_confirmed ? 'confirmed' : 'not confirmed'}` +
      (failed ? ` — failed ${failed}` : '') + (untested ? `${failed ? ';' : ' —'} untested ${untested} (no probe of its regime)` : '') +
      ` · final probe: mean defect ${num(c.observed_mean_defect)}, mean checkpoints ${num(c.observed_mean_checkpoints)}`;
    mech.append(head);
    if (c.conditions.length) {
      // What each condition claims, then what was measured.
      mech.append(el('ul', {}, ...c.conditions.map((cond) => el('li', { className: cond.holds ? 'ok' : cond.tested ? 'fail' : 'untested' },
        el('span', { className: 'cond-what', textContent: `(${cond.letter}) ${cond.describe}: ` }), cond.detail))));
    }
    $('card-warnings').replaceChildren(...c.warnings.map((w) => el('li', { textContent: w })));
    $('card').hidden = false;
  }

  // ------------------------------------------------------------ charts
  // What each chart drew (label boxes, hover points), by chart name; tests read it too.
  const drawnBy = {};
  // The report charts ({name, canvas_id, title, tall}), from the charts wasm's registry.
  let registry = [];
  const canvasOf = (name) => $(name === 'live' ? 'live' : registry.find((c) => c.name === name).canvas_id);
  const liveJson = () => JSON.stringify(liveRuns());

  /** What the live chart draws: the reused runs (each epoch's mean loss from its record, at
   *  the middle of that epoch's steps), then the runs trained in this attempt. */
  function liveRuns() {
    const reused = live.reused.map((r) => {
      const n = live.stepsOf.get(r.phase);
      return {
        label: `${r.arm} ${r.phase} lr ${r.lr} seed ${r.seed}, reused`,
        arm: r.arm,
        phase: r.phase,
        reused: true,
        points: n ? r.loss_curve.flatMap((loss, e) => (loss === null ? [] : [[(e + 0.5) * n, loss]])) : [],
      };
    });
    return [...reused, ...live.series.values()];
  }

  /** A report chart's figure: the canvas, its tooltip, the values list and export buttons. */
  function figure({ name, canvas_id: id, title, tall }) {
    const canvas = el('canvas', { id, className: tall ? 'chart tall' : 'chart' });
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', title);
    canvas.setAttribute('aria-describedby', `${name}-alt`);
    const tip = el('div', { className: 'tip', hidden: true });
    tip.setAttribute('role', 'tooltip');
    const exportButton = (kind) => {
      const b = el('button', { type: 'button', className: 'ghost small', textContent: kind.toUpperCase() });
      Object.assign(b.dataset, { chart: name, export: kind });
      b.setAttribute('aria-label', `Download ${title} as ${kind.toUpperCase()}`);
      return b;
    };
    // The line shown instead of the chart when a report has nothing for it to draw.
    const note = el('p', { className: 'chart-note', id: `${name}-note` });
    return el('figure', {}, note, canvas, tip, el('figcaption', { className: 'fig-tools' },
      el('details', { id: `${name}-alt` },
        el('summary', {}, 'Values ', el('span', { id: `${name}-count` })),
        el('ul', { className: 'chart-data', id: `${name}-data` })),
      el('span', { className: 'export' }, exportButton('png'), exportButton('svg'))));
  }

  /** The text alternative of a chart: every value it can read out, as a list. */
  function describe(name) {
    const list = $(`${name}-data`);
    if (!list) return;
    const points = drawnBy[name]?.points ?? [];
    list.replaceChildren(...points.slice(0, 400).map((p) => el('li', { textContent: p.text })));
    if (points.length > 400) list.append(el('li', { textContent: `… and ${points.length - 400} more` }));
    const count = $(`${name}-count`);
    if (count) count.textContent = `(${points.length} values)`;
  }

  function drawCharts() {
    if (!view) return;
    const dpr = devicePixelRatio || 1;
    for (const { name, canvas_id: id, title } of registry) {
      // A report with nothing for this chart (no probe traces, no complete pair) gets a short
      // line in its place, not an empty canvas.
      const note = view.note(name) ?? null;
      const figure = $(id).closest('figure');
      figure.classList.toggle('noted', note !== null);
      $(`${name}-note`).replaceChildren(...(note === null ? [] : [el('strong', { textContent: `${title}: ` }), note]));
      if (note !== null) {
        drawnBy[name] = { width: 0, height: 0, labels: [], points: [], note };
        $(id).dataset.drawn = 'note';
        describe(name);
        continue;
      }
      const canvas = sizeCanvas($(id));
      try {
        drawnBy[name] = JSON.parse(view.draw(name, canvas, dpr));
        canvas.dataset.drawn = 'true';
        describe(name);
      } catch (e) {
        canvas.dataset.drawn = 'false';
        banner('error', `Could not draw ${id}: ${e?.message ?? e}`);
      }
    }
  }

  /** Exact values under the pointer: the nearest drawn point within 14 px. */
  function bindHover(name, canvas) {
    const tip = canvas.parentElement.querySelector('.tip');
    const hide = () => { tip.hidden = true; };
    canvas.addEventListener('pointerleave', hide);
    canvas.addEventListener('pointermove', (ev) => {
      const points = drawnBy[name]?.points ?? [];
      const dpr = canvas.width / canvas.clientWidth;
      const x = ev.offsetX * dpr;
      const y = ev.offsetY * dpr;
      let best = null;
      let bestD = (14 * dpr) ** 2;
      for (const p of points) {
        const d = (p.x - x) ** 2 + (p.y - y) ** 2;
        if (d < bestD) { bestD = d; best = p; }
      }
      if (!best) return hide();
      tip.textContent = best.text;
      tip.hidden = false;
      const left = Math.min(best.x / dpr + 10, canvas.clientWidth - tip.offsetWidth - 4);
      tip.style.left = `${Math.max(4, left)}px`;
      tip.style.top = `${Math.max(4, best.y / dpr - tip.offsetHeight - 8)}px`;
    });
  }

  /** PNG (the canvas as drawn) or SVG (drawn again by the same Rust code) of one chart. */
  async function exportChart(name, kind) {
    const canvas = canvasOf(name);
    if (kind === 'png') {
      canvas.toBlob((b) => b && save(b, `rdbench-${name}.png`), 'image/png');
      return;
    }
    const [w, h] = [canvas.clientWidth, canvas.clientHeight];
    const m = await charts;
    const svg = name === 'live' ? m.svg_losses(live.caption || 'minibatch loss', liveJson(), JSON.stringify(live.trivial), w, h) : view?.svg(name, w, h);
    if (svg) save(new Blob([svg], { type: 'image/svg+xml' }), `rdbench-${name}.svg`);
  }

  let shownSource = null;

  /** A report that could not be opened: said next to Load, in view, with what is still shown. */
  function loadError(text) {
    const box = $('load-error');
    box.textContent = text + (shownSource ? `\nStill showing ${shownSource}: nothing was replaced.` : '');
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest' });
    box.focus({ preventScroll: true });
  }

  /** Show a report (text as the engine wrote it or as loaded); false if it cannot be read.
   *  `ownRun`: the report of a bench this page ran (its banner messages stay). */
  async function showReport(text, source, { ownRun = false } = {}) {
    const m = await charts;
    await ready;
    let next;
    try {
      next = new m.View(text);
    } catch (e) {
      loadError(`Could not open ${source}: ${e?.message ?? e}`);
      return false;
    }
    $('load-error').hidden = true;
    shownSource = source;
    view?.free();
    view = next;
    reportText = text;
    $('download').disabled = false;
    $('source').textContent = `Showing ${source}.`;
    const problems = view.problems();
    renderCard(JSON.parse(view.card_json()), problems);
    $('results-empty').hidden = true;
    $('charts').hidden = false;
    if (!ownRun) banner(null);
    drawCharts();
    timings.chartDrawn = performance.now();
    document.body.dataset.report = 'shown';
    onShown(text, source);
    return true;
  }

  async function loadFile(file) {
    if (!file) return;
    if (file.size > 64 * 1024 * 1024) return loadError(`${file.name} is ${bytes(file.size)}: too large for a report.`);
    let text;
    try {
      text = await file.text();
    } catch (e) {
      return loadError(`Could not read ${file.name}: ${e?.message ?? e}`);
    }
    await showReport(text, file.name);
  }

  /** The report's text byte for byte, as the engine wrote it or as it was loaded. */
  function download() {
    if (reportText) save(new Blob([reportText], { type: 'application/json' }), 'bench_report.json');
  }

  function bind() {
    $('download').addEventListener('click', download);
    // A real button (a <label> for a hidden input is not reachable with Tab).
    $('load-button').addEventListener('click', () => $('load-file').click());
    $('load-file').addEventListener('change', (e) => { loadFile(e.target.files[0]); e.target.value = ''; });
    $('load-example').addEventListener('click', async () => {
      try {
        const r = await fetch(new URL('./examples/seed_bench_report.json', import.meta.url));
        if (!r.ok) throw new Error(`HTTP ${r.status}`);
        await showReport(await r.text(), 'the seed report (www/examples/seed_bench_report.json)');
      } catch (e) {
        loadError(`Could not fetch the example: ${e?.message ?? e}`);
      }
    });
    document.addEventListener('dragover', (e) => { e.preventDefault(); document.body.classList.add('dragging'); });
    document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) document.body.classList.remove('dragging'); });
    document.addEventListener('drop', (e) => {
      e.preventDefault();
      document.body.classList.remove('dragging');
      loadFile(e.dataTransfer?.files?.[0]);
    });
    drawLive();
  }

  // Redraw whenever a chart's box changes size (window resize, a scrollbar appearing, the
  // layout switching to one column): a canvas drawn for another width would be stretched.
  let resizeTimer;
  const resized = new ResizeObserver(() => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { drawCharts(); drawLive(); }, 120);
  });

  /** Hover, export and redraw on resize for the chart `name` (its figure is on the page). */
  function bindChart(name) {
    const canvas = canvasOf(name);
    bindHover(name, canvas);
    for (const b of canvas.closest('figure').querySelectorAll('button[data-export]')) {
      b.addEventListener('click', () => exportChart(name, b.dataset.export));
    }
    resized.observe(canvas);
  }

  bind();
  bindChart('live');
  // The report charts' figures come from the registry in the charts wasm.
  const ready = charts.then((m) => {
    registry = JSON.parse(m.chart_registry());
    $('charts').replaceChildren(...registry.map(figure));
    for (const c of registry) bindChart(c.name);
  }).catch(() => {}); // a charts wasm that does not load is reported by app.js
  return {
    /** Resolves once the report charts' figures are on the page. */
    ready,
    resetRun, stopped, setPhase, setBackend, progress, finished, showReport,
    get firstProgress() { return firstProgress; },
    drawn: drawnBy,
    /** The live chart's series as drawn ({label, arm, phase, reused, points: [[step, loss]]}). */
    get liveSeries() { return liveRuns(); },
    /** The report shown now: {text, source}, or null. */
    get shown() { return reportText ? { text: reportText, source: shownSource } : null; },
  };
}
