// The verdict card reads right: the outcome in words, α, the rule, the smallest p, and a
// tampered report marked unverified.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK, QUICK_TEXT, setField } from './helpers.mjs';

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
