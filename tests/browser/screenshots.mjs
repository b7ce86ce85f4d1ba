// The page's screenshots for docs/page/ (README and docs/PAGE.md show them): the verdict
// card, the compare view and each chart, at 1280x900 (desktop) and 390x844 (phone), from
// the seed report and charts/tests/fixtures/quick_report.json. Needs www/pkg built.
// node tests/browser/screenshots.mjs
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createAppServer } from '../../scripts/serve.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const OUT = join(ROOT, 'docs/page');
mkdirSync(OUT, { recursive: true });
const QUICK = readFileSync(join(ROOT, 'charts/tests/fixtures/quick_report.json'));
const other = JSON.parse(QUICK);
other.config.epochs = 5;
other.config.hidden_size = 24;

const server = createAppServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const BASE = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--hide-scrollbars'] });

async function load(page, name, buffer) {
  await page.setInputFiles('#load-file', { name, mimeType: 'application/json', buffer });
  await page.waitForFunction((n) => document.getElementById('source').textContent.includes(n), name);
  await page.waitForTimeout(400);
}

for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
  const page = await browser.newPage({ viewport: { width, height } });
  await page.goto(BASE);
  await page.waitForFunction(() => window.rdbench?.timings?.interactive);
  // The start of the page, once the engine has measured its speed for the estimate.
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 120_000 });
  await page.screenshot({ path: join(OUT, `${tag}-start.png`) });
  if (tag === 'desktop') {
    await page.fill('#epochs', '1000');
    await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 120_000 });
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 60_000 });
    await page.screenshot({ path: join(OUT, `${tag}-confirm.png`) });
    await page.click('#confirm-cancel');
    await page.fill('#epochs', '15');
  }
  await load(page, 'quick_report.json', QUICK);
  await page.locator('#card').screenshot({ path: join(OUT, `${tag}-card.png`) });
  for (const id of ['chart-per-seed', 'chart-sweep', 'chart-mechanism', 'chart-null']) {
    await page.locator(`#${id}`).screenshot({ path: join(OUT, `${tag}-${id.slice(6)}.png`) });
  }
  await page.click('#keep-report');
  await load(page, 'quick-5-epochs.json', Buffer.from(JSON.stringify(other)));
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2);
  for (const box of await page.locator('#history-list input[type=checkbox]').all()) await box.check();
  await page.click('#compare');
  await page.waitForSelector('#compare-view:not([hidden])');
  await page.locator('.history').screenshot({ path: join(OUT, `${tag}-compare.png`) });
  await page.close();
}
await browser.close();
server.close();
console.log(`screenshots in ${OUT}`);
