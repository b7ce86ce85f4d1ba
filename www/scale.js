// The Scale view: the scaling study in the page, a series of benches (series.js), the bench
// of the configuration above at each sequence length T for each chosen track and model (the
// configs come from Rust, `scale_configs`, in `rdbench scale`'s order). Its report is built
// with the same Rust function as `rdbench scale` (`build_scale`); a `scale_report.json` made
// anywhere can be loaded instead, and is checked as `rdbench validate` checks it. Shown as
// the charts against T and a table of each bench's figures. Nothing from a report is
// inserted as HTML.
import { el } from './dom.js';
import { bytes, num } from './format.js';
import { chartFigure, createSeries, fillTable, learnedAndVerdict, sizeCanvas } from './series.js';

/** The lengths a first scale study runs: short enough for the browser. */
const DEFAULT_LENS = '100,1000';

/** The scale panel; `schema`: the parsed config_schema() (its track and model choices);
 *  `options` as `createSeries`'s. */
export function createScale(schema, options) {
  const knob = (key) => schema.knobs.find((k) => k.key === key);
  const lens = el('input', { id: 'scale-lens', type: 'text', value: DEFAULT_LENS, inputMode: 'numeric', autocomplete: 'off' });
  lens.setAttribute('aria-describedby', 'scale-lens-help scale-problem');
  const boxes = (key, legend, checked) => {
    const inputs = knob(key).choices.map((c) => el('input', { type: 'checkbox', id: `scale-${key}-${c.value}`, value: c.value, checked: checked(c.value) }));
    const set = el('fieldset', { className: 'scale-choices', id: `scale-${key}s` }, el('legend', { textContent: legend }),
      ...inputs.map((i, n) => el('label', { htmlFor: i.id }, i, ` ${knob(key).choices[n].label}`)));
    return { set, chosen: () => inputs.filter((i) => i.checked).map((i) => i.value).join(',') };
  };
  const tracks = boxes('track', 'Tracks', (v) => v === 'adding');
  // The two models `rdbench scale` runs by default (rev_gru is one click away).
  const models = boxes('model', 'Models', (v) => v === 'rnn_small' || v === 'rev_ode_small');
  const problem = el('p', { id: 'scale-problem', className: 'field-error', hidden: true });
  const inputs = el('div', { className: 'scale-inputs' },
    el('label', { htmlFor: 'scale-lens', className: 'scale-lens' }, 'Sequence lengths T', lens,
      el('span', { id: 'scale-lens-help', className: 'help', textContent: 'comma-separated, e.g. 100,1000,10000 (0 is the track\u2019s default)' })),
    tracks.set, models.set);

  const chart = chartFigure('scale-chart', 'Scale charts: states held, cell evaluations, gradient cosine and test metric against the sequence length T');
  const table = el('table', { id: 'scale-table', className: 'study-table', hidden: true });
  let placed = false;

  /** What is wrong with the view's own inputs (the lengths are checked by Rust at Run). */
  function inputProblem() {
    if (!tracks.chosen()) return 'Choose at least one track.';
    if (!models.chosen()) return 'Choose at least one model.';
    const bad = lens.value.split(',').map((v) => v.trim()).find((v) => !/^\d+$/.test(v));
    if (bad !== undefined) return `Sequence lengths: ${bad === '' ? 'an empty value' : `"${bad}"`} is not a whole number.`;
    return null;
  }
  function checkInputs() {
    const p = inputProblem();
    problem.textContent = p ?? '';
    problem.hidden = !p;
    lens.setAttribute('aria-invalid', String(Boolean(p) && p.startsWith('Sequence')));
    series.refresh();
  }

  function show(m, json, output) {
    if (!placed) {
      output.append(chart.figure, el('div', { className: 'study-table-box' }, table));
      placed = true;
    }
    const scale = JSON.parse(json);
    chart.figure.hidden = false;
    const w = Math.max(300, chart.figure.clientWidth || 1000);
    // A column per model on a wide screen, one panel per row on a phone.
    const stacked = w < 720;
    const rows = m.scale_panel_rows(json, stacked);
    const h = rows * Math.round(stacked ? w * 0.72 : (w / Math.max(1, scale.models.length)) * 0.6);
    series.state.drawn = JSON.parse(m.draw_scale(chart.canvas, json, sizeCanvas(chart.canvas, w, h), stacked));
    renderTable(scale);
    const lensText = scale.seq_lens.join(', ');
    return `T = ${lensText}; ${scale.table.length} benches (${scale.tracks.join(', ')} \u00d7 ${scale.models.join(', ')}).`;
  }

  function renderTable(scale) {
    const at = (r, kind) => r.schedules.find((s) => s.schedule === kind);
    const cells = (p) => (p ? p.forward_evals + p.reversal_evals : null);
    const head = ['track', 'model', 'T', 'k (idea)', 'states: dense', 'idea', 'revolve', 'cells: idea', 'revolve',
      'idea\u2019s gradient cosine', 'peak bytes: dense', 'idea', 'metric', 'baseline', 'idea', 'baseline learned', 'p',
      'verdict', 'where the idea stands'];
    const rows = scale.table.map((r, i) => {
      const [learned, verdict] = learnedAndVerdict(scale.reports?.[i], r.verdict);
      const [dense, idea, revolve] = ['dense', 'idea', 'revolve'].map((k) => at(r, k));
      return [r.track, r.model, r.seq_len, r.operating_k ?? '\u2013', num(dense?.stored_states ?? r.memory.dense_states),
        num(idea?.stored_states ?? null), num(revolve?.stored_states ?? null), num(cells(idea)), num(cells(revolve)),
        num(idea?.grad_cos ?? null),
        r.memory.measured_peak_bytes_dense === null ? 'not measured' : bytes(r.memory.measured_peak_bytes_dense),
        r.memory.measured_peak_bytes_idea === null ? 'not measured' : bytes(r.memory.measured_peak_bytes_idea),
        r.metric, num(r.baseline_metric), num(r.idea_metric), learned, num(r.p_value), verdict, r.standing ?? 'no frontier'];
    });
    fillTable(table, head, rows, new Set([2, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 16]));
  }

  const series = createSeries({
    id: 'scale',
    title: 'Scale',
    noun: 'scale study',
    fileName: 'scale_report.json',
    help: 'Runs the bench with the configuration above at each sequence length, for each track and model ' +
      'chosen here (their track, model and length are set by the scale study), and draws memory, work, ' +
      'gradient fidelity and test metric against T, as the CLI\u2019s rdbench scale does. Long lengths take long: ' +
      'start from the Quick look preset; the estimate comes before anything runs.',
    controls: [inputs, problem],
    check: (m, text) => m.check_scale(text),
    label: (c) => `${c.track} ${c.model} T = ${c.seq_len}`,
    key: () => [lens.value, tracks.chosen(), models.chosen()],
    problem: inputProblem,
    configs: (m, s) => JSON.parse(m.scale_configs(JSON.stringify(s.config), tracks.chosen(), lens.value, models.chosen())),
    build: (m, reports) => m.build_scale(JSON.stringify(reports)),
    show,
  }, options);

  lens.addEventListener('input', checkInputs);
  for (const set of [tracks.set, models.set]) set.addEventListener('change', checkInputs);
  return series;
}
