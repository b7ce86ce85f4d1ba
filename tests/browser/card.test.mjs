// The verdict card reads right: the outcome in words, α, the rule, the smallest p, a
// tampered report marked unverified, and a comparison void when the baseline did not learn.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS, CLI, assert, browser, openPage, test } from './harness.mjs';
import { labelProblems, loadReport, QUICK, QUICK_TEXT, setField } from './helpers.mjs';

test('card: the 4-pair warning before Run, the outcome in words, α, the rule and the smallest p', async () => {
  const page = await openPage(browser());
  await setField(page, 'n_seeds', '4');
  assert(await page.isVisible('#pairs-warning'), 'no warning for 4 pairs');
  const warn = await page.textContent('#pairs-warning');
  assert(warn.includes('0.125') && warn.includes('6 paired seeds'), `warning: ${warn}`);
  await setField(page, 'n_seeds', '6');
  assert(!(await page.isVisible('#pairs-warning')), 'warning shown for 6 pairs');
  await page.click('#advanced-summary');
  await setField(page, 'alpha', '0.01');
  assert(await page.isVisible('#pairs-warning'), 'alpha 0.01 needs 8 pairs: no warning for 6');
  await setField(page, 'alpha', '0.05');

  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  const verdict = page.locator('#verdict');
  assert((await verdict.getAttribute('data-outcome')) === 'worse_not_significant', 'outcome');
  const text = await verdict.textContent();
  assert(/worse/.test(text) && text.includes(QUICK.comparison.verdict), `headline: ${text}`);
  assert(!(await verdict.getAttribute('class')).includes('win'), 'a loss is not styled as a win');
  const explain = await page.textContent('#card-explain');
  for (const want of ['lost on all 4 seeds', 'cannot reach p < 0.05', '0.125']) assert(explain.includes(want), `explanation misses "${want}": ${explain}`);
  const rule = await page.textContent('#card-rule');
  assert(rule.includes('α = 0.05') && rule.includes('can give is 0.125.'), `rule: ${rule}`);
  assert((await page.textContent('#card [data-key=alpha]')) === '0.05', 'α fact');
  await page.screenshot({ path: join(ARTIFACTS, 'card-4-pairs.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('a tampered report shows its problems on the card, and its verdict is marked unverified', async () => {
  const page = await openPage(browser());
  const bad = structuredClone(QUICK);
  // A big green win written over a loss: the diffs and means say otherwise.
  bad.comparison.p_value = 0.001;
  bad.comparison.delta_mean = -0.001;
  bad.comparison.verdict = 'significant win';
  bad.comparison.system_worked = true;
  await loadReport(page, 'tampered.json', JSON.stringify(bad, null, 2));
  assert(await page.isVisible('#card-problems'), 'problems not on the card');
  assert((await page.textContent('#card-problems')).includes('delta_mean'), 'problem not named');
  const cls = await page.getAttribute('#verdict', 'class');
  assert(cls.includes('unverified') && !/\b(win|loss)\b/.test(cls), `verdict class ${cls}`);
  assert((await page.textContent('#verdict')).startsWith('Unverified'), 'headline says unverified');
  // A sound report clears it.
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  assert(!(await page.isVisible('#card-problems')), 'problems linger');
  await page.close();
});

test('card: a baseline that did not learn voids the comparison, and each arm shows its learnability, at 1280 and 390 px', async () => {
  // One epoch of the adding problem at T = 200: nothing learns, both arms stay near the
  // trivial predictor (always 1).
  const dir = mkdtempSync(join(tmpdir(), 'rdbench-void-'));
  const out = join(dir, 'void.json');
  execFileSync(CLI, ['run', '--quiet', '--out', out, '--track', 'adding', '--seeds', '2', '--sweep-seeds', '1',
    '--lrs', '0.01', '--epochs', '1', '--hidden', '8', '--train-size', '200', '--backend', 'flex'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const text = readFileSync(out, 'utf8');
  const report = JSON.parse(text);
  const l = report.task.learnability;
  assert(l.comparison_void && !l.baseline.learned, `the tiny bench learned: ${JSON.stringify(l)}`);
  for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
    const page = await openPage(browser(), '', { width, height });
    await loadReport(page, 'void.json', text);
    const verdict = page.locator('#verdict');
    const said = await verdict.textContent();
    assert(said.startsWith('Comparison void at this protocol: the baseline did not learn'), `${tag} headline: ${said}`);
    assert(said.includes(report.comparison.verdict), `${tag}: the report's verdict is not shown beside it: ${said}`);
    assert((await verdict.getAttribute('data-comparison-void')) === 'true', `${tag}: data-comparison-void`);
    assert(!/\b(win|loss)\b/.test(await verdict.getAttribute('class')), `${tag}: a void comparison is styled as an outcome`);
    const fact = async (key) => JSON.parse(await page.getAttribute(`#card [data-key=${key}]`, 'data-value'));
    for (const arm of ['baseline', 'idea']) {
      const shown = await fact(`${arm}_learned`);
      assert(JSON.stringify(shown) === JSON.stringify(l[arm]), `${tag} ${arm}: ${JSON.stringify(shown)} vs ${JSON.stringify(l[arm])}`);
      const words = await page.textContent(`#card [data-key=${arm}_learned]`);
      assert(words.includes(`${l[arm].seeds_learned} of ${l[arm].n} seeds`), `${tag} ${arm}: ${words}`);
    }
    assert((await fact('learnability_threshold')) === l.threshold, `${tag}: threshold`);
    const explain = await page.textContent('#card-explain');
    assert(explain.includes('did not learn'), `${tag}: the explanation does not say why: ${explain}`);
    // Every probe of this bench is in the low-defect regime: (d), which judges the high one,
    // is untested (–), not failed (✗), and the mechanism line says so.
    const marks = await page.$$eval('#card-mechanism li', (lis) => lis.map((li) => li.className));
    const d = report.mechanism.d_high_defect_needs_dense;
    assert(d.value === null && !d.holds, `the bench was to have no high-defect probe: ${JSON.stringify(d)}`);
    assert(marks[3] === 'untested' && marks.slice(0, 3).every((m) => m !== 'untested'), `${tag}: condition marks ${marks}`);
    const head = await page.textContent('#card [data-key=mechanism_confirmed]');
    assert(/failed \(a\), \(b\); untested \(d\)/.test(head), `${tag}: ${head}`);
    assert(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${tag}: the page scrolls sideways`);
    await page.locator('#card').screenshot({ path: join(ARTIFACTS, `card-void-${tag}.png`) });
    // The per-seed chart draws the trivial predictor's line among the seeds and says why.
    await page.waitForFunction(() => {
      const d = window.rdbench.drawn?.per_seed;
      const c = document.getElementById('chart-per-seed');
      return d && c && d.width === Math.round(c.clientWidth * devicePixelRatio);
    }, null, { timeout: 30_000 });
    const drawn = await page.evaluate(() => window.rdbench.drawn.per_seed);
    const line = drawn.points.find((p) => p.text.startsWith('trivial predictor'));
    assert(line && line.text.includes(report.task.reference.name), `${tag}: no trivial line in ${JSON.stringify(drawn.points.map((p) => p.text))}`);
    const legend = drawn.labels.map((b) => b.text).join(' ');
    assert(legend.includes('trivial predictor') && legend.includes('did not learn'), `${tag}: legend ${legend}`);
    const problems = labelProblems('per_seed', drawn);
    assert(problems.length === 0, `${tag}: ${problems.join("; ")}`);
    await page.locator('#chart-per-seed').screenshot({ path: join(ARTIFACTS, `per-seed-void-${tag}.png`) });
    // Kept in History, its line says what ran (track, model, T) and files it as void.
    await page.click('#keep-report');
    await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1);
    const meta = await page.textContent('#history-list .h-meta');
    assert(meta.startsWith(' · adding rnn_small T = 200 · 2 pairs'), `${tag}: history line ${meta}`);
    assert(/\bvoid\b/.test(await page.getAttribute('#history-list .h-verdict', 'class')), `${tag}: history verdict class`);
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
  }
});
