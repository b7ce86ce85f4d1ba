// Study mode: eighteen benches (three tracks, three models, two policies), pooled conditions, chart,
// table and study_report.json.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, assert, browser, openPage, test } from './harness.mjs';
import { same, setField, TINY, tinyConfig } from './helpers.mjs';

test('Study mode: estimate, cancel, resume; eighteen tiny benches on every track, pooled conditions, chart, table, study_report.json', async () => {
  const page = await openPage(browser());
  await tinyConfig(page, TINY);
  // The study runs rev_ode_small too, whose rank is at most hidden_size / 2 = 4.
  await page.click('#advanced-summary');
  await setField(page, 'rank_max', '4');
  await setField(page, 'train_size', 100);
  const t0 = Date.now();
  await page.click('#study-run');
  // The benches' speed is measured first: the status gives the estimate, per bench.
  await page.waitForFunction(() => window.rdbench.study.estimate, null, { timeout: 120_000 });
  const status = await page.textContent('#study-status');
  assert(/Estimated time ≈ .+ for 18 benches on cpu-flex \(dynamics rnn_small one_step .+, adding rev_gru chained .+\)/.test(status), `status: ${status}`);
  assert(!(await page.evaluate(() => document.getElementById('confirm-run').open)), 'a tiny study asked');
  // Cancel during the second bench, then resume: the button says what is kept.
  await page.waitForFunction(() => window.rdbench.study.reports.length === 1 && window.rdbench.study.running, null, { timeout: 600_000 });
  await page.click('#study-cancel');
  await page.waitForFunction(() => !window.rdbench.study.running, null, { timeout: 120_000 });
  assert(/^Resume study \(1 bench and \d+ runs? kept\)$/.test(await page.textContent('#study-run')), `button: ${await page.textContent('#study-run')}`);
  assert(!(await page.isDisabled('#n_seeds')), 'the form stays locked after the study stopped');
  const before = await page.evaluate(() => window.rdbench.study.elapsedBefore);
  await page.click('#study-run');
  await page.waitForFunction(() => !document.getElementById('study-download').disabled, null, { timeout: 600_000 });
  const wall = (Date.now() - t0) / 1000;
  const done = await page.textContent('#study-status');
  const after = await page.evaluate(() => window.rdbench.study.elapsedBefore);
  assert(done.startsWith('Study finished: 18 benches in') && after > before, `status ${done}; ${before} s before the cancel, ${after} s in all`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#study-download')]);
  const study = JSON.parse(readFileSync(await download.path(), 'utf8'));
  console.log(`    tiny study in the browser: ${wall.toFixed(1)} s`);
  assert(same(study.tracks, ['dynamics', 'mnist1d', 'adding']), `tracks ${study.tracks}`);
  assert(same(study.models, ['rnn_small', 'rev_ode_small', 'rev_gru']), `models ${study.models}`);
  assert(same(study.policies, ['one_step', 'chained']), `policies ${study.policies}`);
  assert(study.table.length === 18 && study.reports.length === 18, 'eighteen benches');
  assert(same(study.reports.map((r) => r.metric_direction), [...Array(6).fill('lower is better'), ...Array(6).fill('higher is better'), ...Array(6).fill('lower is better')]),
    'each report in its track\'s direction');
  // Every embedded report is a bench report of its model and policy that the viewer loads.
  const loads = await page.evaluate(async (reports) => {
    const m = await import('/www/pkg/rdbench_page.js');
    await m.default();
    return reports.map((r) => { try { new m.View(JSON.stringify(r)); return [`${r.track} ${r.model} ${r.config.policy}`, 'ok']; } catch (e) { return [r.model, String(e)]; } });
  }, study.reports);
  assert(loads.every((l) => l[1] === 'ok'), `viewer: ${JSON.stringify(loads)}`);
  assert(same(loads.map((l) => l[0]), study.table.map((r) => `${r.track} ${r.model} ${r.policy}`)), 'bench order');
  // Pooled over every idea full-run probe of the embedded reports, each condition judged.
  const probes = study.reports.flatMap((r) => r.runs.filter((x) => x.arm === 'idea' && x.phase === 'full').flatMap((x) => x.probes));
  assert(study.pooled.n_probes === probes.length && probes.length > 0, `pooled ${study.pooled.n_probes} of ${probes.length}`);
  assert(same(Object.keys(study.pooled.conditions), ['a_both_regimes', 'b_spearman_positive', 'c_low_defect_cosine', 'd_high_defect_needs_dense']), 'conditions');
  const low = probes.some((p) => p.defect_mean !== null && p.defect_mean <= study.tau);
  const high = probes.some((p) => p.defect_mean === null || p.defect_mean > study.tau);
  assert(study.pooled.conditions.a_both_regimes.holds === (low && high), 'condition (a) from the pooled probes');
  assert(study.per_model.map((m) => m.scope).join() === 'rnn_small,rev_ode_small,rev_gru', 'per model');
  assert(study.per_track.map((m) => m.scope).join() === 'dynamics,mnist1d,adding', 'per track');
  // Measured memory is a native measurement: null in the browser, and the table says so.
  assert(study.table.every((r) => r.memory_saved_measured === null), 'no measured memory in wasm');
  const cells = await page.$$eval('#study-table tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  assert(cells.length === 18 && cells[2][1] === 'rev_ode_small' && cells[2][8] === 'not measured in the browser', `table ${JSON.stringify(cells)}`);
  assert(cells[6][0] === 'mnist1d' && cells[6][9] === 'test accuracy (higher is better)', `metric named: ${JSON.stringify(cells[6])}`);
  // Its numbers are written as the card writes them (the page's one formatter).
  const written = await page.evaluate((t) => import('/www/format.js')
    .then((f) => t.map((r) => [f.num(r.baseline_metric), f.percent(r.memory_saved_counted), f.num(r.p_value)])), study.table);
  assert(same(cells.map((r) => [r[10], r[7], r[13]]), written), `table ${JSON.stringify(cells)} vs ${JSON.stringify(written)}`);
  // Each bench says whether its baseline learned (its embedded report's learnability); a
  // void comparison says so in the verdict's place.
  study.table.forEach((r, i) => {
    const l = study.reports[i].task.learnability;
    const want = `${l.comparison_void ? 'no' : 'yes'} (${l.baseline.seeds_learned} of ${l.baseline.n} seeds)`;
    assert(cells[i][12] === want && cells[i][14] === (l.comparison_void ? 'VOID: the baseline did not learn' : r.verdict),
      `row ${i}: ${cells[i][12]} / ${cells[i][14]}, want ${want}`);
  });
  // A best lr at the grid's edge is named per bench (a grid of one lr chooses nothing: none).
  const edges = study.table.map((r) => r.lr_at_grid_edge.join(', ') || '\u2013');
  assert(same(cells.map((r) => r[15]), edges), `lr edges ${JSON.stringify(cells.map((r) => r[15]))} vs ${JSON.stringify(edges)}`);
  const ink = await page.$eval('#study-chart', (c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 16) if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) n++;
    return n;
  });
  assert(ink > 200, `study chart not drawn (${ink})`);
  assert((await page.textContent('#study-conditions')).includes('Pooled over every bench'), 'conditions listed');
  await page.screenshot({ path: join(ARTIFACTS, 'study.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('Study mode: a long study asks first, with its estimate; "Not now" starts nothing', async () => {
  const page = await openPage(browser());
  await page.selectOption('#backend', 'cpu');
  await setField(page, 'epochs', '1000');
  await page.click('#study-run');
  await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 120_000 });
  const title = await page.textContent('#confirm-title');
  const text = await page.textContent('#confirm-text');
  assert(title === 'Start a long study?' && /Estimated time ≈ \d+ (h|min) .* for 18 benches/.test(text), `dialog: ${title} / ${text}`);
  await page.click('#confirm-cancel');
  await page.waitForFunction(() => !window.rdbench.study.running, null, { timeout: 10_000 });
  assert((await page.textContent('#study-status')).startsWith('Not started.'), 'status');
  assert(await page.evaluate(() => window.rdbench.studyEngine.state.sent.length === 0), '"Not now" started a bench');
  assert(!(await page.isDisabled('#n_seeds')), 'the form stays locked');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('Study mode on a phone: the study chart and the frontier fit the column (panels stacked), nothing scrolls sideways', async () => {
  const page = await openPage(browser(), '', { width: 390, height: 844 });
  await tinyConfig(page, TINY);
  await page.click('#advanced-summary');
  await setField(page, 'rank_max', '4');
  await setField(page, 'train_size', 100);
  await page.click('#study-run');
  await page.waitForFunction(() => !document.getElementById('study-download').disabled, null, { timeout: 600_000 });
  await page.waitForTimeout(300);
  const fit = await page.evaluate(() => ['study-chart', 'study-frontier'].map((id) => {
    const c = document.getElementById(id);
    const box = c.closest('figure') ?? c.parentElement;
    return { id, canvas: c.clientWidth, pixels: c.width, column: box.clientWidth, dpr: devicePixelRatio };
  }));
  for (const f of fit) {
    assert(f.canvas > 0 && f.canvas <= f.column, `${f.id}: ${f.canvas} px in a ${f.column} px column`);
    assert(Math.abs(f.pixels - Math.round(f.canvas * f.dpr)) <= 1, `${f.id}: drawn ${f.pixels} px wide, shown ${f.canvas}`);
  }
  assert(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'the page scrolls sideways');
  await page.locator('#study-chart').screenshot({ path: join(ARTIFACTS, 'study-chart-phone.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('Study mode: the committed study report loads in the Study panel at 1280 and 390 px; a changed one is refused by name', async () => {
  const text = readFileSync(join(ROOT, 'docs/study/study_report.json'), 'utf8');
  const study = JSON.parse(text);
  for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
    const page = await openPage(browser(), '', { width, height });
    const load = (name, body) => page.setInputFiles('#study-file', { name, mimeType: 'application/json', buffer: Buffer.from(body) });
    await load('study_report.json', text);
    await page.waitForFunction(() => document.getElementById('study-status').textContent.startsWith('Loaded'), null, { timeout: 120_000 });
    const rows = await page.$$eval('#study-table tbody tr', (r) => r.length);
    assert(rows === study.table.length, `${tag}: ${rows} table rows, ${study.table.length} benches`);
    assert(!(await page.isDisabled('#study-download')), `${tag}: a loaded study can be downloaded again`);
    assert(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${tag}: the page scrolls sideways`);
    // No cell is cut inside its column; a table wider than its box says that it scrolls.
    const table = await page.evaluate(() => {
      const box = document.querySelector('#study .study-table-box');
      const hint = box.previousElementSibling;
      const cut = [...box.querySelectorAll('td, th')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent);
      return { over: box.scrollWidth > box.clientWidth + 1, hint: hint.hidden ? null : hint.textContent, cut };
    });
    assert(table.cut.length === 0, `${tag}: cells cut: ${table.cut.slice(0, 5)}`);
    assert(table.over === (table.hint !== null) && (!table.over || /Scroll the table sideways: it has 16 columns/.test(table.hint)), `${tag}: ${JSON.stringify(table)}`);
    if (tag === 'desktop') assert(!table.over, `desktop: the study table is wider than its box`);
    else assert(table.over, 'phone: the table fits a phone?');
    // The conditions read as the card's letters and words, not as the report's keys.
    const conditions = await page.$$eval('#study-conditions li', (lis) => lis.map((li) => li.textContent));
    assert(conditions.length > 0 && conditions.every((c) => /^\([abcd]\) [a-z ]+: (holds|fails) \u2014 /.test(c)), `${tag}: ${conditions.slice(0, 4)}`);
    assert(conditions.some((c) => c.startsWith('(a) both regimes: ')), `${tag}: ${conditions[0]}`);
    await page.locator('#study').screenshot({ path: join(ARTIFACTS, `study-loaded-${tag}.png`) });
    // One changed figure: refused, the field named.
    const changed = structuredClone(study);
    changed.table[0].baseline_metric *= 2;
    await load('changed.json', JSON.stringify(changed, null, 2));
    await page.waitForFunction(() => !document.getElementById('study-load-error').hidden, null, { timeout: 120_000 });
    const refused = await page.textContent('#study-load-error');
    assert(await page.getAttribute('#study-load-error', 'role') === 'alert' && await page.evaluate(() => document.activeElement.id) === 'study-load-error', `${tag}: the refusal is an alert, focused`);
    assert((await page.textContent('#study-status')).startsWith('Loaded study_report.json'), `${tag}: the loaded study stays`);
    assert(refused.includes('not a valid study report') && refused.includes('table[0].baseline_metric'), `${tag}: ${refused}`);
    assert(page.errors.length === 0, `${tag}: page errors: ${page.errors}`);
    await page.close();
  }
});

test('Study and Scale: a configuration their benches cannot run keeps their Run off with the reason, before Run, at 1280 and 390 px', async () => {
  for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
    const page = await openPage(browser(), '', { width, height });
    // Hidden size 8 with r_max 8: the bench's GRU runs, but rev_ode_small (in both series)
    // maps each half of h through rank r_max, at most hidden_size / 2 = 4.
    await setField(page, 'hidden_size', '8');
    assert(!(await page.isDisabled('#run')), `${tag}: the bench itself is refused`);
    for (const id of ['study', 'scale']) {
      await page.waitForFunction((i) => !document.getElementById(`${i}-config-error`).hidden, id, { timeout: 10_000 });
      const said = await page.textContent(`#${id}-config-error`);
      assert(await page.isDisabled(`#${id}-run`) && said.includes('r_max') && said.includes('cannot run this configuration'), `${tag} ${id}: ${said}`);
    }
    await page.click('#advanced-summary');
    await setField(page, 'rank_max', '4');
    for (const id of ['study', 'scale']) {
      await page.waitForFunction((i) => document.getElementById(`${i}-config-error`).hidden, id, { timeout: 10_000 });
      assert(!(await page.isDisabled(`#${id}-run`)), `${tag} ${id}: Run stays off after the fix`);
    }
    assert(page.errors.length === 0, `${tag}: page errors: ${page.errors}`);
    await page.close();
  }
});
