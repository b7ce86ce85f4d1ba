// A report on the page: the seed report is painted at once and its card and charts drawn.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { canvasesDrawn, checkCard, REFERENCE } from './helpers.mjs';

test('the page paints at once and draws the seed report', async () => {
  const page = await openPage(browser());
  const paint = await page.evaluate(() => performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
  await page.click('#load-example');
  await page.waitForSelector('body[data-report=shown]');
  const charts = await canvasesDrawn(page);
  for (const c of charts.filter((x) => x.id !== 'chart-mechanism')) assert(c.drawn && c.ink > 50, `${c.id} not drawn (${c.ink} ink samples)`);
  // The seed report has no probe traces: a short line stands where the mechanism chart would be.
  assert(charts.find((x) => x.id === 'chart-mechanism').note, 'the mechanism chart is not replaced by its line');
  const mech = await page.evaluate(() => {
    const f = document.getElementById('chart-mechanism').closest('figure');
    return { text: f.textContent, height: f.getBoundingClientRect().height, canvas: document.getElementById('chart-mechanism').getBoundingClientRect().height };
  });
  assert(mech.text.includes('No probe traces in this report (seed-era format)') && mech.height < 120 && mech.canvas === 0,
    `mechanism figure: ${JSON.stringify(mech)}`);
  // Its p is a Monte Carlo figure the report does not describe: the null chart's title says so,
  // and its legend gives the exact share drawn.
  const nullText = await page.evaluate(() => window.rdbench.drawn.null.labels.map((l) => l.text).join(' '));
  assert(nullText.includes('all 256 sign assignments; report p = 0.1697 (method not recorded)') && nullText.includes('as extreme: 0.1719'),
    `null chart: ${nullText}`);
  const t = await page.evaluate(() => window.rdbench.timings);
  const fcp = Object.fromEntries(paint)['first-contentful-paint'];
  console.log(`    first contentful paint ${fcp?.toFixed(0)} ms, charts module ready ${t.chartsReady?.toFixed(0)} ms, seed report drawn ${t.chartDrawn?.toFixed(0)} ms`);
  assert(await page.isVisible('#card'), 'card shown');
  assert((await page.textContent('#verdict')).includes('no significant win'), 'verdict');
  await checkCard(page, REFERENCE);
  await page.screenshot({ path: join(ARTIFACTS, 'seed-report.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
