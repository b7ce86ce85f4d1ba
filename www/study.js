// Study mode: the mechanism study in the page, a series of benches (series.js) on every
// track, model and policy (the configs come from Rust, `study_configs`). Its report is built
// with the same Rust function as `rdbench study` (`build_study`), and shown as its chart,
// each model's frontier, a table and the pooled conditions. Nothing from a report is
// inserted as HTML: the table is built from text nodes.
import { el } from './dom.js';
import { num, percent } from './format.js';
import { chartFigure, createSeries, fillTable, learnedAndVerdict, sizeCanvas } from './series.js';

/** The study panel; `options` as `createSeries`'s. */
export function createStudy(options) {
  const chart = chartFigure('study-chart', 'Study chart: gradient cosine against reversal defect');
  // Each model's frontier: cell evaluations against states held, side by side.
  const frontier = chartFigure('study-frontier', 'Study frontier chart: cell evaluations against states held, per model');
  const table = el('table', { id: 'study-table', className: 'study-table', hidden: true });
  const conditions = el('div', { id: 'study-conditions', hidden: true });
  let placed = false;

  function show(m, json, output) {
    if (!placed) {
      output.append(chart.figure, frontier.figure, el('div', { className: 'study-table-box' }, table), conditions);
      placed = true;
    }
    const study = JSON.parse(json);
    chart.figure.hidden = false;
    // As wide as the column, a phone's included; below 720 px the panels stack.
    const w = Math.max(300, chart.figure.clientWidth || 1000);
    const stacked = w < 720;
    m.draw_study(chart.canvas, json, sizeCanvas(chart.canvas, w, Math.round(stacked ? w * 1.6 : w * 0.46)), stacked);
    if (study.frontier?.length) {
      // Rows of two panels on a wide screen (a row per track), one panel per row on a phone.
      const n = study.frontier.length;
      const h = stacked ? Math.round(w * 0.9) * n : Math.round(w * 0.5) * (n > 2 ? Math.ceil(n / 2) : 1);
      frontier.figure.hidden = false;
      frontier.figure.dataset.points = m.draw_study_frontier(frontier.canvas, json, sizeCanvas(frontier.canvas, w, h), stacked);
    }
    renderTable(study);
    renderConditions(study);
    return '';
  }

  function renderTable(study) {
    const head = ['track', 'model', 'policy', 'mean defect', 'check\u00adpoints', 'cos chosen k', 'cos k_max',
      'memory saved (counted)', 'memory saved (measured)', 'metric', 'baseline', 'idea', 'baseline learned', 'p',
      'verdict', 'best lr at the grid\u2019s edge'];
    const rows = study.table.map((r, i) => {
      const [learned, verdict] = learnedAndVerdict(study.reports?.[i], r.verdict);
      return [r.track, r.model, r.policy, num(r.mean_defect), num(r.mean_checkpoints),
        num(r.mean_grad_cos_chosen), num(r.mean_grad_cos_kmax), percent(r.memory_saved_counted),
        r.memory_saved_measured === null ? 'not measured in the browser' : percent(r.memory_saved_measured),
        `${r.metric} (${r.metric_direction})`, num(r.baseline_metric), num(r.idea_metric), learned, num(r.p_value), verdict,
        gridEdge(r.lr_at_grid_edge ?? [])];
    });
    // A number never breaks at its exponent's minus ("7.692e-" / "8"); the table scrolls instead.
    fillTable(table, head, rows, new Set([3, 4, 5, 6, 7, 10, 11, 13]));
  }

  /** The arms whose best lr is at the grid's edge; both arms at the same edge in one phrase
   *  ("both 0.01 (largest)"), so the column stays narrow. */
  function gridEdge(edges) {
    const rest = edges.map((e) => e.replace(/^(baseline|idea) /, ''));
    if (edges.length === 2 && rest[0] === rest[1] && edges[0].startsWith('baseline') && edges[1].startsWith('idea')) return `both ${rest[0]}`;
    return edges.join(', ') || '\u2013';
  }

  /** A condition's report key in words: "a_both_regimes" reads "(a) both regimes". */
  const conditionName = (key) => `(${key[0]}) ${key.slice(2).replaceAll('_', ' ')}`;

  function renderConditions(study) {
    const block = (m) => el('div', { className: 'study-scope' },
      el('h3', { textContent: `${m.scope === 'all' ? 'Pooled over every bench' : m.scope}: ` +
        (m.confirmed ? 'mechanism confirmed' : `not confirmed (failed: ${m.failed.join(', ')})`) +
        ` \u2014 ${m.n_probes} probes` }),
      el('ul', {}, ...Object.entries(m.conditions).map(([k, c]) =>
        el('li', { textContent: `${conditionName(k)}: ${c.holds ? 'holds' : 'fails'} \u2014 ${c.detail}` }))));
    conditions.replaceChildren(block(study.pooled), ...study.per_model.map(block), ...study.per_track.map(block));
    conditions.hidden = false;
  }

  return createSeries({
    id: 'study',
    title: 'Study',
    noun: 'study',
    fileName: 'study_report.json',
    help: 'Runs the bench with the configuration above on every track, model and policy ' +
      '(its track, model and policy are set by the study), pools the idea arms\u2019 probes and judges ' +
      'the mechanism conditions (a)\u2013(d) over them, per model and per track.',
    label: (c) => `${c.track} ${c.model} ${c.policy}`,
    configs: (m, s) => JSON.parse(m.study_configs(JSON.stringify(s.config))),
    build: (m, reports) => m.build_study(JSON.stringify(reports)),
    check: (m, text) => m.check_study(text),
    show,
  }, options);
}
