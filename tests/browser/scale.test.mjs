// The Scale view: a scale study of tiny benches run in the workers (estimate, cancel, resume),
// its charts against T and table, scale_report.json valid for the CLI; a committed scale
// report loaded at phone width; a changed one refused; bad lengths keep Run off.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, CLI, ROOT, assert, browser, openPage, test } from './harness.mjs';
import { labelProblems, same, setField, TINY, tinyConfig } from './helpers.mjs';

const COMMITTED = readFileSync(join(ROOT, 'docs/scale/scale_report.json'), 'utf8');

/** The drawn scale charts' label problems, and that the canvas shows what was drawn. */
async function drawnProblems(page) {
  const { drawn, shown } = await page.evaluate(() => ({
    drawn: window.rdbench.scale.drawn,
    shown: Math.round(document.getElementById('scale-chart').clientWidth * devicePixelRatio),
  }));
  const out = labelProblems('scale', drawn);
  if (drawn.width !== shown) out.push(`drawn ${drawn.width} px wide, shown ${shown}`);
  return { out, drawn };
}

test('Scale view: a two-length scale study in the workers, cancel and resume, charts, table, scale_report.json', async () => {
  const page = await openPage(browser());
  await tinyConfig(page, TINY);
  await page.click('#advanced-summary');
  await setField(page, 'rank_max', '4');
  await setField(page, 'train_size', 100);
  // Bad lengths are named and keep Run off.
  await page.fill('#scale-lens', '20,abc');
  assert(await page.isDisabled('#scale-run'), 'Run with a bad length');
  const said = await page.textContent('#scale-problem');
  assert(said.includes('"abc" is not a whole number'), `problem: ${said}`);
  await page.fill('#scale-lens', '20,40');
  assert(!(await page.isDisabled('#scale-run')) && await page.isHidden('#scale-problem'), 'Run after the fix');
  await page.click('#scale-run');
  await page.waitForFunction(() => window.rdbench.scale.estimate, null, { timeout: 120_000 });
  // The status says the estimate until the first bench's progress replaces it, which may come
  // before this reads it: the estimate's own text is what it showed.
  const status = await page.evaluate(() => window.rdbench.scale.estimate.text);
  assert(/Estimated time ≈ .+ for 4 benches on cpu-flex \(adding rnn_small T = 20 .+, adding rev_ode_small T = 40 .+\)/.test(status), `status: ${status}`);
  // Cancel during the second bench, then resume: the button says what is kept, the inputs lock.
  await page.waitForFunction(() => window.rdbench.scale.reports.length === 1 && window.rdbench.scale.running, null, { timeout: 600_000 });
  assert(await page.isDisabled('#scale-lens'), 'lengths locked while the scale study runs');
  await page.click('#scale-cancel');
  await page.waitForFunction(() => !window.rdbench.scale.running, null, { timeout: 120_000 });
  const resume = await page.textContent('#scale-run');
  // The click races the workers: a tiny bench may finish before it lands.
  assert(/^Resume scale study \((1 bench|[23] benches) and \d+ runs? kept\)$/.test(resume), `button: ${resume} ${await page.evaluate(() => JSON.stringify({ base: window.rdbench.scale.base, n: window.rdbench.scale.reports.length, r: !!window.rdbench.scale.resultJson, s: JSON.stringify(window.rdbench.nextStart()) }))}`);
  await page.click('#scale-run');
  await page.waitForFunction(() => !document.getElementById('scale-download').disabled, null, { timeout: 600_000 });
  const done = await page.textContent('#scale-status');
  assert(/^Scale study finished: 4 benches in .+ T = 20, 40; 4 benches \(adding × rnn_small, rev_ode_small\)\.$/.test(done), `status: ${done}`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#scale-download')]);
  const path = await download.path();
  const scale = JSON.parse(readFileSync(path, 'utf8'));
  assert(same(scale.seq_lens, [20, 40]) && same(scale.models, ['rnn_small', 'rev_ode_small']) && scale.table.length === 4, 'benches');
  // The CLI validates it: every figure rebuilt from its embedded bench reports.
  const file = join(ARTIFACTS, 'browser_scale_report.json');
  writeFileSync(file, readFileSync(path));
  const out = execFileSync(CLI, ['validate', file], { encoding: 'utf8' });
  assert(out.includes('valid scale_report.json (4 bench reports)'), out);
  const cells = await page.$$eval('#scale-table tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  assert(same(cells.map((r) => r.slice(0, 3)), scale.table.map((r) => [r.track, r.model, String(r.seq_len)])), `table ${JSON.stringify(cells)}`);
  const { out: bad, drawn } = await drawnProblems(page);
  assert(bad.length === 0, `at 1440 px:\n${bad.join('\n')}`);
  const want = scale.table.reduce((n, r) => n + 3 * r.schedules.length + 2, 0);
  assert(drawn.points.length === want, `${drawn.points.length} points drawn, ${want} wanted`);
  await page.locator('#scale').screenshot({ path: join(ARTIFACTS, 'scale-desktop.png') });
  // The finished scale study is in the history, and survives a reload: Show puts it back in
  // the Scale panel, at desktop and at phone width.
  const entry = '#history-list li[data-kind=scale]';
  await page.waitForSelector(entry, { timeout: 10_000 });
  assert((await page.textContent(entry)).includes('Scale study: memory, work and accuracy against T = 20, 40'), await page.textContent(entry));
  await page.reload();
  await page.waitForFunction(() => window.rdbench?.timings?.interactive);
  for (const [width, height] of [[1440, 1000], [390, 844]]) {
    await page.setViewportSize({ width, height });
    await page.waitForSelector(entry, { timeout: 10_000 });
    await page.click(`${entry} button:has-text("Show")`);
    await page.waitForFunction(() => document.getElementById('scale-status').textContent.startsWith('Showing'), null, { timeout: 60_000 });
    const rows = await page.$$eval('#scale-table tbody tr', (r) => r.length);
    assert(rows === 4 && !(await page.isDisabled('#scale-download')), `${width} px: ${rows} rows after Show`);
    assert(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${width} px: the page scrolls sideways`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('Scale view: a committed scale report loads at phone width; a changed one is refused by name', async () => {
  const page = await openPage(browser(), '', { width: 390, height: 844 });
  const load = (name, text) => page.setInputFiles('#scale-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
  await load('scale_report.json', COMMITTED);
  await page.waitForFunction(() => document.getElementById('scale-status').textContent.startsWith('Loaded'), null, { timeout: 60_000 });
  const committed = JSON.parse(COMMITTED);
  const status = await page.textContent('#scale-status');
  assert(status.includes(`T = ${committed.seq_lens.join(', ')}; ${committed.table.length} benches`), `status: ${status}`);
  await page.waitForTimeout(200);
  const { out: bad, drawn } = await drawnProblems(page);
  assert(bad.length === 0, `at 390 px:\n${bad.join('\n')}`);
  // Every schedule's three points and each arm's mean where it has one (a diverged run leaves
  // none; the legend names the lengths).
  const means = (r) => [r.baseline_metric, r.idea_metric].filter((v) => v !== null).length;
  assert(drawn.points.length === committed.table.reduce((n, r) => n + 3 * r.schedules.length + means(r), 0), 'every point drawn');
  const gaps = committed.table.filter((r) => r.idea_metric === null);
  if (gaps.length) {
    const legend = drawn.labels.map((l) => l.text).join(' | ');
    assert(legend.includes('no mean at T'), `the legend does not name the lengths without a mean: ${legend}`);
  }
  const rows = await page.$$eval('#scale-table tbody tr', (r) => r.length);
  assert(rows === committed.table.length, `${rows} table rows`);
  // Each row says whether its baseline learned, from its embedded report; a void comparison
  // says so in the verdict's place.
  const cells = await page.$$eval('#scale-table tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  const head = await page.$$eval('#scale-table thead th', (ths) => ths.map((th) => th.textContent));
  const [li, vi] = [head.indexOf('baseline learned'), head.indexOf('verdict')];
  committed.table.forEach((r, i) => {
    const l = committed.reports[i].task?.learnability;
    const want = !l ? '\u2013' : `${l.comparison_void ? 'no' : 'yes'} (${l.baseline.seeds_learned} of ${l.baseline.n} seeds)`;
    assert(cells[i][li] === want, `row ${i}: learned ${cells[i][li]}, want ${want}`);
    assert(cells[i][vi] === (l?.comparison_void ? 'VOID: the baseline did not learn' : r.verdict), `row ${i}: verdict ${cells[i][vi]}`);
  });
  assert(!(await page.isDisabled('#scale-download')), 'a loaded report can be downloaded again');
  await page.locator('#scale').screenshot({ path: join(ARTIFACTS, 'scale-phone.png') });
  // One changed figure: refused, the field named; what was shown stays.
  const changed = structuredClone(committed);
  changed.table[1].schedules[2].forward_evals += 1;
  await load('changed.json', JSON.stringify(changed, null, 2));
  await page.waitForFunction(() => !document.getElementById('scale-load-error').hidden, null, { timeout: 60_000 });
  const refused = await page.textContent('#scale-load-error');
  assert(await page.getAttribute('#scale-load-error', 'role') === 'alert' && await page.evaluate(() => document.activeElement.id) === 'scale-load-error', 'the refusal is an alert, focused');
  assert(refused.includes('Still showing the previous result'), `what is still shown: ${refused}`);
  assert(refused.includes('not a valid scale report') && refused.includes('table[1].schedules[2].forward_evals'), `status: ${refused}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});
