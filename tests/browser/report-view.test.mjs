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
  for (const c of charts) assert(c.drawn && c.ink > 50, `${c.id} not drawn (${c.ink} ink samples)`);
  const t = await page.evaluate(() => window.rdbench.timings);
  const fcp = Object.fromEntries(paint)['first-contentful-paint'];
  console.log(`    first contentful paint ${fcp?.toFixed(0)} ms, charts module ready ${t.chartsReady?.toFixed(0)} ms, seed report drawn ${t.chartDrawn?.toFixed(0)} ms`);
  assert(await page.isVisible('#card'), 'card shown');
  assert((await page.textContent('#verdict')).includes('no significant win'), 'verdict');
  await checkCard(page, REFERENCE);
  await page.screenshot({ path: join(ARTIFACTS, 'seed-report.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
