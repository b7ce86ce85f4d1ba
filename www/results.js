// What a bench shows: the run panel (progress, live loss chart) and the results (verdict
// card, the four charts, load and download of a report). Nothing from a report file or the
// engine is inserted as HTML: text goes through textContent, charts through canvas.

const $ = (id) => document.getElementById(id);

export const fmtTime = (s) => {
  if (!Number.isFinite(s)) return '–';
  s = Math.round(s);
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
};

const fmt = (v, digits = 4) => (v === null || v === undefined ? 'n/a' : Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(digits) : v.toExponential(2));

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
export function createResults({ charts, banner, timings }) {
  const live = { key: '', series: new Map(), step: 0, caption: '' };
  let view = null;
  let reportText = null;
  let firstProgress = null;

  // ------------------------------------------------------------ run panel
  function resetRun(phase) {
    Object.assign(live, { key: '', series: new Map(), step: 0, caption: '' });
    firstProgress = null;
    $('p-phase').textContent = phase;
    $('progress').value = 0;
    $('progress-pct').textContent = '0%';
    // Nothing of the last run may linger until the first progress of this one.
    for (const id of ['p-runs', 'p-elapsed', 'p-eta']) $(id).textContent = '–';
  }

  /** The bench stopped (cancel, failure): nothing is in flight and there is no ETA. */
  function stopped() {
    $('p-eta').textContent = '–';
    const runs = $('p-runs').textContent.replace(/, \d+ in flight$/, '');
    $('p-runs').textContent = runs;
  }

  function setPhase(text) {
    $('p-phase').textContent = text;
  }

  function setBackend(info) {
    $('p-backend').textContent = `${info.backend} — ${info.adapter}`;
  }

  function progress(p) {
    if (!firstProgress) firstProgress = p;
    $('progress').value = p.fraction;
    $('progress-pct').textContent = `${Math.floor(p.fraction * 100)}%`;
    $('p-phase').textContent = `${p.phase} · ${p.arm} · epoch ${p.epoch}/${p.epochs} · step ${p.step}/${p.steps}`;
    $('p-runs').textContent = `${p.runs_done}/${p.runs_total} done, ${p.losses.length} in flight`;
    $('p-elapsed').textContent = fmtTime(p.elapsed_s);
    // A resumed bench starts at the reused runs' share: the rate is what this run has done.
    const done = p.fraction - firstProgress.fraction;
    $('p-eta').textContent = done > 0.02 && p.elapsed_s > 0 ? fmtTime(p.elapsed_s * (1 - p.fraction) / done) : 'estimating…';
    // One chart per phase and arm: a new one starts when the bench moves on.
    const key = `${p.phase}/${p.arm}`;
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

  function finished(runsDone) {
    $('p-phase').textContent = 'done';
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
    const series = [...live.series].map(([label, points]) => ({ label, points }));
    try {
      m.draw_losses(canvas, live.caption || 'minibatch loss', JSON.stringify(series), devicePixelRatio || 1);
    } catch (e) {
      console.warn(e);
    }
  }

  // ------------------------------------------------------------ verdict card
  function fact(dl, key, label, value, text) {
    const div = document.createElement('div');
    const dt = document.createElement('dt');
    dt.textContent = label;
    const dd = document.createElement('dd');
    dd.textContent = text;
    // The raw value rides along so tests can compare what is shown with the report.
    dd.dataset.key = key;
    dd.dataset.value = JSON.stringify(value ?? null);
    div.append(dt, dd);
    dl.append(div);
  }

  const bytes = (b) => (b === null || b === undefined ? 'n/a' : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(2)} MiB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${Math.round(b)} B`);

  function renderCard(c, problems) {
    const verdict = $('verdict');
    // A report whose arithmetic fails is not allowed to look like a result.
    const unverified = problems.length > 0;
    verdict.replaceChildren();
    const headline = document.createElement('span');
    headline.textContent = (unverified ? 'Unverified: ' : '') + c.headline;
    const said = document.createElement('span');
    said.className = 'verdict-said';
    said.textContent = ` — report verdict “${c.verdict}”`;
    verdict.append(headline, said);
    verdict.dataset.value = JSON.stringify(c.verdict);
    verdict.dataset.outcome = c.outcome;
    verdict.className = `verdict ${unverified ? 'unverified'
      : c.outcome === 'significant_win' ? 'win' : c.outcome === 'significant_loss' ? 'loss'
        : c.outcome === 'worse_not_significant' ? 'lean-loss' : 'none'}`;
    $('card-explain').textContent = c.explanation;
    $('card-rule').textContent = `Rule: ${c.rule}${c.alpha_from_report ? '' : ' (α is not in this report: the contract default)'}. ` +
      `The smallest p ${c.n_pairs} pair${c.n_pairs === 1 ? '' : 's'} can give is ${c.min_p === 0 ? '0 (Monte Carlo)' : fmt(c.min_p)}.`;
    $('card-rule').dataset.minP = String(c.min_p);
    const plist = $('card-problem-list');
    plist.replaceChildren(...problems.slice(0, 12).map((t) => Object.assign(document.createElement('li'), { textContent: t })));
    if (problems.length > 12) plist.append(Object.assign(document.createElement('li'), { textContent: `… and ${problems.length - 12} more` }));
    $('card-problems').hidden = !unverified;
    const dl = $('card-facts');
    dl.replaceChildren();
    fact(dl, 'p_value', 'p', c.p_value, `${fmt(c.p_value)} (${c.p_method})`);
    fact(dl, 'alpha', 'α', c.alpha, String(c.alpha));
    fact(dl, 'delta_mean', 'Δ mean test MSE (idea − baseline)', c.delta_mean, fmt(c.delta_mean, 6));
    if (c.delta_ci95) fact(dl, 'delta_ci95', '95% CI of Δ', c.delta_ci95, `${fmt(c.delta_ci95[0], 6)} … ${fmt(c.delta_ci95[1], 6)}`);
    fact(dl, 'idea_wins', 'idea wins', c.idea_wins, `${c.idea_wins}/${c.n_pairs}`);
    fact(dl, 'n_pairs', 'pairs tested', c.n_pairs, String(c.n_pairs));
    fact(dl, 'baseline_mean', 'baseline test MSE', c.baseline_mean, fmt(c.baseline_mean, 6));
    fact(dl, 'idea_mean', 'idea test MSE', c.idea_mean, fmt(c.idea_mean, 6));
    if (c.wilcoxon_p !== null) fact(dl, 'wilcoxon_p', 'Wilcoxon p', c.wilcoxon_p, fmt(c.wilcoxon_p));
    if (c.effect_size_dz !== null) fact(dl, 'effect_size_dz', 'effect size d_z', c.effect_size_dz, fmt(c.effect_size_dz, 2));
    fact(dl, 'best_lr_baseline', 'best lr (baseline / idea)', c.best_lr_baseline, `${c.best_lr_baseline} / ${c.best_lr_idea}`);
    if (c.memory_saved_fraction !== null) {
      fact(dl, 'memory_saved_fraction', 'memory saved', c.memory_saved_fraction,
        `${(100 * c.memory_saved_fraction).toFixed(1)}% (${fmt(c.mean_stored_states, 1)} of ${c.dense_states} states saved per minibatch: ` +
        `${bytes(c.mean_stored_bytes)} of ${bytes(c.dense_bytes)})`);
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
        // What the condition claims, then what was measured.
        const what = document.createElement('span');
        what.className = 'cond-what';
        what.textContent = `(${cond.letter}) ${cond.describe}: `;
        li.append(what, cond.detail);
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

  // ------------------------------------------------------------ charts
  function drawCharts() {
    if (!view) return;
    const dpr = devicePixelRatio || 1;
    const jobs = [
      ['chart-per-seed', (c) => view.draw_per_seed(c, dpr)],
      ['chart-sweep', (c) => view.draw_sweep(c, dpr)],
      ['chart-mechanism', (c) => view.draw_mechanism(c, dpr)],
      ['chart-null', (c) => view.draw_null(c, dpr)],
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

  let shownSource = null;

  /** A report that could not be opened: said next to Load, in view, with what is still shown. */
  function loadError(text) {
    const box = $('load-error');
    box.textContent = text + (shownSource ? `\nStill showing ${shownSource}: nothing was replaced.` : '');
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest' });
    box.focus({ preventScroll: true });
  }

  /** Show a report (text as the engine wrote it or as loaded); false if it cannot be read. */
  async function showReport(text, source) {
    const m = await charts;
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
    if (source !== 'this run') banner(null);
    drawCharts();
    timings.chartDrawn = performance.now();
    document.body.dataset.report = 'shown';
    return true;
  }

  async function loadFile(file) {
    if (!file) return;
    if (file.size > 64 * 1024 * 1024) return loadError(`${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MB: too large for a report.`);
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
    if (!reportText) return;
    const blob = new Blob([reportText], { type: 'application/json' });
    const a = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: 'bench_report.json' });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
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
    let resizeTimer;
    addEventListener('resize', () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(() => { drawCharts(); drawLive(); }, 200); });
    drawLive();
  }

  bind();
  return {
    resetRun, stopped, setPhase, setBackend, progress, finished, showReport,
    get firstProgress() { return firstProgress; },
  };
}
