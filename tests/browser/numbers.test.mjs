// Numbers read the same everywhere: the card, the charts, the history and compare write a
// number with the one set of rules (crates/page/src/format.rs through the page wasm).
import { assert, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK, QUICK_TEXT } from './helpers.mjs';

/** Text of the elements matching `sel`. */
const texts = (page, sel) => page.$$eval(sel, (els) => els.map((e) => e.textContent));

test('a number reads the same on the card, in the charts, the history and compare; never -0', async () => {
  const page = await openPage(browser());
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  // The quick report: p = 0.125 exactly, Δ = +0.0012889…, d_z 1.0736…, 24.91 s.
  const p = '0.125';
  const d = '+0.001289';
  assert((await page.textContent('#card [data-key=p_value]')).startsWith(`${p} (`), 'card p');
  assert((await page.textContent('#card [data-key=delta_mean]')) === d, 'card Δ');
  assert((await page.textContent('#card [data-key=effect_size_dz]')) === '1.074', 'card d_z: 4 significant digits');
  assert((await page.textContent('#card [data-key=wall_time_s]')) === '25 s', 'card wall time');
  const explain = await page.textContent('#card-explain');
  assert(explain.includes(`Δ = ${d}`), `the card's prose (Rust) writes Δ as its facts do: ${explain}`);
  const labels = await page.evaluate(() => Object.fromEntries(Object.entries(window.rdbench.drawn)
    .map(([name, d]) => [name, [...d.labels.map((l) => l.text), ...d.points.map((x) => x.text)]])));
  assert(labels.null.join(' ').includes(`report p = ${p} (exact, 16 sign assignments)`), `null chart title: ${labels.null}`);
  assert(labels.null.includes(`as extreme: ${p}`) && labels.null.includes(`observed ${d}`), `null chart: ${labels.null}`);
  const means = `mean: baseline ${await page.textContent('#card [data-key=baseline_mean]')}, idea ${await page.textContent('#card [data-key=idea_mean]')}`;
  assert(labels.per_seed.includes(means), `per-seed legend vs card: ${means} not in ${labels.per_seed}`);
  // No number anywhere is written as a negative zero.
  const negativeZero = /(^|[\s(=:])-0(\.0*)?(?![.\d]*[1-9])/;
  for (const [name, all] of Object.entries(labels)) {
    for (const t of all) assert(!negativeZero.test(t), `${name} writes -0: "${t}"`);
  }

  // The same numbers in the history list and in compare (against the report shown).
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1);
  const meta = (await texts(page, '#history-list .h-meta'))[0];
  assert(meta.includes(`Δ ${d} · p ${p}`) && meta.startsWith(` · ${QUICK.track} ${QUICK.model}`), `history: ${meta}`);
  await page.locator('#history-list input[type=checkbox]').check();
  await page.click('#compare');
  await page.waitForSelector('#compare-view:not([hidden])');
  const row = (key) => texts(page, `#compare-view tr[data-key=${key}] td`);
  assert((await row('p_value')).every((t) => t === `${p} (α 0.05)`), `compare p: ${await row('p_value')}`);
  assert((await row('delta_mean')).every((t) => t === d), `compare Δ: ${await row('delta_mean')}`);
  assert((await row('wall_time')).every((t) => t === '25 s'), `compare wall time: ${await row('wall_time')}`);
  const seed0 = await row('seed-0');
  const diff0 = QUICK.idea.per_seed[0] - QUICK.baseline.full.per_seed[0];
  const want = await page.evaluate((v) => import('/www/format.js').then((f) => f.delta(v)), diff0);
  assert(seed0[2] === want && want === '+0.002924', `compare per-seed Δ ${seed0[2]}, format ${want}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});
