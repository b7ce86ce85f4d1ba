// The history panel (reports kept in IndexedDB, see history.js) and the compare view: two
// reports' configs diffed, their outcomes, per-seed results and mechanism side by side.
// "Rerun this config" puts a report's config into the form. Everything shown is text
// (textContent); the numbers come from each report's card (the charts wasm).
import { HISTORY_MAX_BYTES, HISTORY_MAX_REPORTS, createHistory } from './history.js';
import { $, el } from './dom.js';
import { bytes, delta, duration, num, percent } from './format.js';

// A config value as the report has it (settings are shown as written, not as numbers).
const textOf = (v) => (v === undefined ? 'not recorded' : Array.isArray(v) ? v.join(', ') : String(v));

/**
 * charts: promise of the charts wasm; showReport(text, source): show a report above;
 * shown(): {text, source} of the report shown now (or null); rerun(config): fill the form;
 * showSeries(kind, text, source): show a kept study or scale study in its panel.
 */
export function createCompare({ charts, showReport, shown, rerun, showSeries = async () => false }) {
  const history = createHistory();
  const selected = new Set();

  function error(text) {
    const box = $('history-error');
    box.textContent = text ?? '';
    box.hidden = !text;
  }

  /** The card (from the charts wasm) of report text; throws what the loader says. */
  async function cardOf(text) {
    const m = await charts;
    const view = new m.View(text);
    try {
      return { card: JSON.parse(view.card_json()), problems: view.problems() };
    } finally {
      view.free();
    }
  }

  /** The list's line for a report: from its card, and whether its numbers add up (a report
   *  that fails the checks is "Unverified" in the list as on its card). */
  async function summaryOf(text) {
    const { card, problems } = await cardOf(text);
    const report = JSON.parse(text);
    return {
      headline: card.headline, verdict: card.verdict, outcome: card.comparison_void ? 'void' : card.outcome, n_pairs: card.n_pairs,
      delta_mean: card.delta_mean, p_value: card.p_value, backend: card.backend,
      started_at: report.environment?.started_at ?? null, epochs: report.config?.epochs ?? null,
      problems: problems.length,
      // What ran: the track, the model and the length (the seed report has no task block).
      bench: `${report.track ?? report.config?.track ?? '?'} ${report.model ?? report.config?.model ?? '?'}` +
        (report.task?.seq_len ? ` T = ${report.task.seq_len}` : ''),
    };
  }

  /** The list's line for a study or a scale study (`kind` 'study' or 'scale'): what it ran
   *  and, for a study, whether the pooled mechanism held. Not comparable with a bench. */
  function seriesSummary(kind, text) {
    const r = JSON.parse(text);
    const n = r.table?.length ?? 0;
    const list = (v) => (Array.isArray(v) ? v.join(', ') : '?');
    const headline = kind === 'study'
      ? `Study: mechanism ${r.pooled?.confirmed ? 'confirmed' : 'not confirmed'} over ${r.pooled?.n_probes ?? '?'} pooled probes`
      : `Scale study: memory, work and accuracy against T = ${list(r.seq_lens)}`;
    return { kind, headline, outcome: 'series', problems: 0, bench: `${n} benches: ${list(r.tracks)} × ${list(r.models)}` };
  }

  /** A line under the history's buttons saying what Keep did (a role=status region). */
  function note(text) {
    $('history-note').textContent = text ?? '';
  }

  /** Keep a report (`kind` null), a study or a scale study ('study', 'scale'); resolves to
   *  {id, twin} (twin: the entry that already held it), or null when it could not be kept. */
  async function keep(text, source, kind = null) {
    try {
      const summary = kind ? seriesSummary(kind, text) : await summaryOf(text);
      const { id, dropped, twin } = await history.add(text, source, summary);
      for (const d of dropped) selected.delete(d);
      await render();
      flash(id);
      return { id, twin };
    } catch (e) {
      error(`Could not keep ${source} in the history: ${e?.message ?? e}`);
      return null;
    }
  }

  /** Draw the eye to an entry (the one just kept, or the one that already held it). */
  function flash(id) {
    const li = $('history-list').querySelector(`li[data-id="${id}"]`);
    if (!li) return;
    li.classList.remove('h-flash');
    void li.offsetWidth; // restart the animation
    li.classList.add('h-flash');
  }

  // Entries kept before the list recorded the report's checks (or its bench): summarised
  // once more, then stored.
  const checking = new Set();
  async function recheck(entries) {
    const old = (s) => typeof s.problems !== 'number' || typeof s.bench !== 'string';
    const stale = entries.filter((e) => e.summary && old(e.summary) && !checking.has(e.id));
    if (!stale.length) return;
    for (const e of stale) checking.add(e.id);
    for (const e of stale) {
      try {
        const full = await history.get(e.id);
        if (full) await history.setSummary(e.id, await summaryOf(full.text));
      } catch {
        // An entry that no longer opens keeps its old line.
      }
    }
    await render();
  }

  async function render() {
    let entries;
    try {
      entries = await history.list();
      error(null);
    } catch (e) {
      error(`The history is not available in this browser: ${e?.message ?? e}`);
      return;
    }
    const list = $('history-list');
    list.replaceChildren();
    for (const id of [...selected]) if (!entries.some((e) => e.id === id)) selected.delete(id);
    const total = entries.reduce((s, e) => s + e.bytes, 0);
    $('history-count').textContent = `${entries.length} of ${HISTORY_MAX_REPORTS} reports, ` +
      `${bytes(total)} of ${bytes(HISTORY_MAX_BYTES)}`;
    if (!entries.length) list.append(el('li', { className: 'empty-line', textContent: 'No reports kept yet: finished runs appear here.' }));
    for (const e of entries) {
      const s = e.summary ?? {};
      const when = new Date(e.savedAt).toLocaleString();
      const name = `${e.source}, ${when}`;
      if (s.kind === 'study' || s.kind === 'scale') {
        list.append(seriesEntry(e, s, name, when));
        continue;
      }
      const box = el('input', { type: 'checkbox', checked: selected.has(e.id) });
      box.setAttribute('aria-label', `select ${name} for comparison`);
      box.addEventListener('change', () => {
        if (box.checked) selected.add(e.id); else selected.delete(e.id);
        compareState();
      });
      // The label around the box is its hit area (44 px on a touch screen).
      const pick = el('label', { className: 'h-pick' }, box);
      // A report whose numbers do not add up is not shown as a result here either.
      const unverified = s.problems > 0;
      const what = el('div', { className: 'h-what' },
        ...(unverified ? [el('span', { className: 'h-unverified', textContent: 'Unverified: ' })] : []),
        el('span', { className: `h-verdict ${unverified ? 'unverified' : s.outcome ?? ''}`, textContent: s.headline ?? s.verdict ?? '?' }),
        el('span', { className: 'h-meta', textContent: `${s.bench ? ` · ${s.bench}` : ''} · ${s.n_pairs ?? '?'} pairs · Δ ${delta(s.delta_mean)} · p ${num(s.p_value)}` +
          `${s.epochs ? ` · ${s.epochs} epochs` : ''}${s.backend ? ` · ${s.backend}` : ''}` }),
        el('div', { className: 'h-source', textContent: `${e.source} · kept ${when} · ${bytes(e.bytes)}` }));
      const show = el('button', { type: 'button', className: 'ghost small', textContent: 'Show' });
      show.setAttribute('aria-label', `show ${name}`);
      show.addEventListener('click', async () => {
        const full = await history.get(e.id);
        await showReport(full.text, `${e.source} (from the history)`);
      });
      const again = el('button', { type: 'button', className: 'ghost small', textContent: 'Rerun config' });
      again.setAttribute('aria-label', `put the config of ${name} into the form`);
      again.addEventListener('click', async () => {
        const full = await history.get(e.id);
        const config = JSON.parse(full.text).config;
        if (!config) error(`${e.source} has no config (a seed-era report): nothing to put into the form.`);
        else rerun(config);
      });
      const del = el('button', { type: 'button', className: 'ghost small danger', textContent: 'Delete' });
      del.setAttribute('aria-label', `delete ${name} from the history`);
      del.addEventListener('click', async () => {
        await history.remove(e.id);
        selected.delete(e.id);
        await render();
        $('history-list').querySelector('input, button')?.focus();
      });
      const li = el('li', { className: 'h-entry' }, pick, what, el('div', { className: 'h-actions' }, show, again, del));
      li.dataset.id = String(e.id);
      if (unverified) li.dataset.unverified = 'true';
      list.append(li);
    }
    compareState();
    keepState();
    recheck(entries);
  }

  /** A kept study or scale study: shown in its own panel (not above), never compared. */
  function seriesEntry(e, s, name, when) {
    const what = el('div', { className: 'h-what' },
      el('span', { className: 'h-verdict series', textContent: s.headline }),
      el('span', { className: 'h-meta', textContent: ` · ${s.bench}` }),
      el('div', { className: 'h-source', textContent: `${e.source} · kept ${when} · ${bytes(e.bytes)} · shown in its panel, not compared` }));
    const show = el('button', { type: 'button', className: 'ghost small', textContent: 'Show' });
    show.setAttribute('aria-label', `show ${name} in the ${s.kind === 'study' ? 'Study' : 'Scale'} panel`);
    show.addEventListener('click', async () => {
      const full = await history.get(e.id);
      await showSeries(s.kind, full.text, `${e.source} (from the history)`);
    });
    const del = el('button', { type: 'button', className: 'ghost small danger', textContent: 'Delete' });
    del.setAttribute('aria-label', `delete ${name} from the history`);
    del.addEventListener('click', async () => {
      await history.remove(e.id);
      await render();
      $('history-list').querySelector('input, button')?.focus();
    });
    // The pick column stays, empty, so the entries line up.
    const li = el('li', { className: 'h-entry' }, el('span', { className: 'h-pick' }), what, el('div', { className: 'h-actions' }, show, del));
    li.dataset.id = String(e.id);
    li.dataset.kind = s.kind;
    return li;
  }

  /** Compare needs two: two ticked, or one ticked and the report shown above. */
  function compareState() {
    const b = $('compare');
    const n = selected.size;
    const withShown = n === 1 && shown();
    b.disabled = !(n === 2 || withShown);
    b.textContent = withShown ? 'Compare with the shown report' : 'Compare selected';
    $('compare-reason').textContent = n > 2 ? `${n} ticked: tick exactly two (or one, to compare with the report shown above).`
      : n === 0 ? 'Tick two reports to compare them, or one to compare it with the report shown above.' : '';
  }

  async function sideOf(id) {
    const e = await history.get(id);
    return { label: `${e.source} (kept ${new Date(e.savedAt).toLocaleString()})`, text: e.text };
  }

  async function compare() {
    const ids = [...selected];
    const sides = ids.length === 2 ? await Promise.all(ids.map(sideOf))
      : [await sideOf(ids[0]), { label: `${shown().source} (shown above)`, text: shown().text }];
    const [a, b] = await Promise.all(sides.map(async (s) => ({ ...s, ...(await cardOf(s.text)), report: JSON.parse(s.text) })));
    renderCompare(a, b);
  }

  function table(caption, head, rows, cls = '') {
    const t = el('table', { className: `cmp ${cls}` }, el('caption', { textContent: caption }));
    t.append(el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col', textContent: h })))));
    const body = el('tbody');
    for (const r of rows) {
      const tr = el('tr', { className: r.cls ?? '' }, el('th', { scope: 'row', textContent: r.cells[0] }), ...r.cells.slice(1).map((c) => el('td', { textContent: c })));
      if (r.key) tr.dataset.key = r.key;
      body.append(tr);
    }
    t.append(body);
    return t;
  }

  function renderCompare(a, b) {
    const view = $('compare-view');
    view.replaceChildren();
    view.append(el('h3', { textContent: 'Compare' }),
      el('p', { className: 'cmp-sides' }, el('strong', { textContent: 'A: ' }), a.label, el('br'), el('strong', { textContent: 'B: ' }), b.label));
    for (const [side, x] of [['A', a], ['B', b]]) {
      if (x.problems.length) view.append(el('p', { className: 'card-problems', textContent: `${side}'s numbers do not add up (${x.problems.length} problem(s)): its verdict cannot be trusted.` }));
    }
    const ca = a.card;
    const cb = b.card;
    const row = (label, f, key) => ({ cells: [label, f(ca, a), f(cb, b)], key });
    const env = (x) => x.report.environment ?? {};
    view.append(table('Outcome', ['', 'A', 'B'], [
      row('outcome', (c) => c.headline, 'headline'),
      row('report verdict', (c) => c.verdict, 'verdict'),
      row('explanation', (c) => c.explanation, 'explanation'),
      row('p (α)', (c) => `${num(c.p_value)} (α ${num(c.alpha)})`, 'p_value'),
      row('metric', (c) => `${c.metric} (${c.metric_direction})`, 'metric'),
      row('Δ mean (idea − baseline)', (c) => delta(c.delta_mean), 'delta_mean'),
      row('idea wins', (c) => `${c.idea_wins}/${c.n_pairs}`, 'idea_wins'),
      row('baseline / idea', (c) => `${num(c.baseline_mean)} / ${num(c.idea_mean)}`, 'means'),
      row('best lr (baseline / idea)', (c) => `${num(c.best_lr_baseline)} / ${num(c.best_lr_idea)}`, 'best_lr'),
      row('mechanism', (c) => {
        if (c.mechanism_confirmed) return 'confirmed';
        const which = (tested) => c.conditions.filter((k) => !k.holds && k.tested === tested).map((k) => `(${k.letter})`).join(', ');
        const [failed, untested] = [which(true), which(false)];
        return `not confirmed${failed ? `: ${failed} failed` : ''}${untested ? `${failed ? ';' : ':'} ${untested} untested` : ''}`;
      }, 'mechanism'),
      row('memory saved', (c) => percent(c.memory_saved_fraction), 'memory'),
      row('backend', (c) => (c.backend ? `${c.backend} — ${c.adapter}` : 'not recorded'), 'backend'),
      row('runs per backend', (_, x) => Object.entries(env(x).run_backends ?? {}).map(([k, v]) => `${k} ${v}`).join(', ') || 'not recorded', 'run_backends'),
      row('runs reused (resumed)', (_, x) => textOf(env(x).reused_runs), 'reused_runs'),
      row('wall time', (c) => duration(c.wall_time_s), 'wall_time'),
    ], 'outcome'));

    const keys = [...new Set([...Object.keys(a.report.config ?? {}), ...Object.keys(b.report.config ?? {})])];
    const cfgRows = keys.map((k) => {
      const [va, vb] = [a.report.config?.[k], b.report.config?.[k]];
      const differs = JSON.stringify(va) !== JSON.stringify(vb);
      return { cells: [k, textOf(va), textOf(vb)], cls: differs ? 'differs' : 'same', key: k };
    });
    const diff = cfgRows.filter((r) => r.cls === 'differs');
    const sameRows = cfgRows.filter((r) => r.cls === 'same');
    view.append(table(diff.length ? `Configuration: ${diff.length} setting(s) differ` : keys.length ? 'Configuration: identical' : 'Configuration: not recorded in either report', ['setting', 'A', 'B'], diff, 'config'));
    if (sameRows.length) {
      view.append(el('details', {}, el('summary', { textContent: `${sameRows.length} identical setting(s)` }), table('Identical settings', ['setting', 'A', 'B'], sameRows, 'config-same')));
    }

    const n = Math.max(a.report.baseline.full.per_seed.length, b.report.baseline.full.per_seed.length);
    const seedRows = [];
    for (let i = 0; i < n; i++) {
      const cell = (x) => {
        const [bv, iv] = [x.report.baseline.full.per_seed[i], x.report.idea.per_seed[i]];
        return [num(bv), num(iv), bv === undefined ? '' : bv === null || iv === null ? 'dropped' : delta(iv - bv)];
      };
      seedRows.push({ cells: [String(i), ...cell(a), ...cell(b)], key: `seed-${i}` });
    }
    const metrics = [...new Set([ca.metric, cb.metric])].join(' / ');
    view.append(table(`Per-seed ${metrics}`, ['seed', 'A baseline', 'A idea', 'A idea − base', 'B baseline', 'B idea', 'B idea − base'], seedRows, 'seeds'));

    const letters = [...new Set([...ca.conditions, ...cb.conditions].map((c) => c.letter))];
    if (letters.length) {
      const cond = (c, l) => {
        const k = c.conditions.find((x) => x.letter === l);
        return k ? `${k.holds ? '✓' : k.tested ? '✗' : '– untested:'} ${k.detail}` : 'not recorded';
      };
      view.append(table('Mechanism conditions', ['', 'A', 'B'],
        letters.map((l) => ({ cells: [`(${l}) ${(ca.conditions.concat(cb.conditions)).find((x) => x.letter === l).describe}`, cond(ca, l), cond(cb, l)], key: `cond-${l}` })), 'mechanism'));
    }
    view.hidden = false;
    view.focus();
    view.scrollIntoView({ block: 'start' });
  }

  /** Keep is on while the report shown above is not in the history; when it is (a finished
   *  run is kept at once, a report shown from the history), the button says so. */
  let keepCheck = 0;
  async function keepState() {
    const b = $('keep-report');
    const s = shown();
    const ask = ++keepCheck;
    let kept = null;
    try {
      kept = s ? await history.find(s.text) : null;
    } catch {
      // No history: Keep stays on and says why when pressed.
    }
    if (ask !== keepCheck) return;
    b.disabled = !s || Boolean(kept);
    b.textContent = kept ? 'Shown report is kept' : 'Keep shown report';
  }

  function bind() {
    $('compare').addEventListener('click', () => compare().catch((e) => error(`Could not compare: ${e?.message ?? e}`)));
    $('keep-report').addEventListener('click', async () => {
      const s = shown();
      if (!s) return;
      const kept = await keep(s.text, s.source);
      if (!kept) return note('');
      note(kept.twin
        ? `Already in the history: ${kept.twin.source}, kept ${new Date(kept.twin.savedAt).toLocaleString()}.`
        : `Kept ${s.source} in the history.`);
    });
  }

  bind();
  // The list writes sizes with the charts wasm's formats: it is drawn once that has loaded.
  charts.then(render, () => {});
  return {
    keep,
    /** Keep a study or scale study that finished here. */
    keepSeries: (kind, text, source) => keep(text, source, kind),
    /** The report shown above changed: Keep and Compare follow, and Keep's last word goes. */
    shownChanged() {
      note('');
      keepState();
      compareState();
    },
    render,
  };
}
