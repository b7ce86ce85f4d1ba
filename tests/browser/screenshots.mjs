// The page's screenshots for docs/page/ (README and docs/PAGE.md show them): the verdict
// card, the compare view and each chart, at 1280x900 (desktop) and 390x844 (phone), from
// the seed report and crates/page/tests/fixtures/quick_report.json, a tiny bench running on
// the phone, and the Long sequences preset with a length refused for memory. Needs www/pkg built.
// node tests/browser/screenshots.mjs   (served and driven by the tests' harness)
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, close, launch, openPage } from './harness.mjs';
import { QUICK, QUICK_TEXT, TINY, loadReport, tinyConfig } from './helpers.mjs';

const OUT = join(ROOT, 'docs/page');
mkdirSync(OUT, { recursive: true });
const other = structuredClone(QUICK);
other.config.epochs = 5;
other.config.hidden_size = 24;

const browser = await launch();

async function load(page, name, text) {
  await loadReport(page, name, text);
  // Charts redraw after a size change with a short debounce.
  await page.waitForTimeout(400);
}

for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
  const page = await openPage(browser, '', { width, height });
  // The start of the page, once the engine has measured its speed for the estimate and the
  // presets' times.
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready' &&
    [...document.querySelectorAll('.preset-time')].every((t) => t.textContent.startsWith('≈')), null, { timeout: 240_000 });
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
  // Long sequences: the preset's length and memory estimate by the track, then a config that
  // will not fit a worker, refused on the length with the longest T that fits.
  await page.locator('#presets button', { hasText: 'Long sequences' }).click();
  await page.locator('#seq_len').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(OUT, `${tag}-long.png`) });
  await page.fill('#hidden_size', '512');
  await page.fill('#seq_len', '20000');
  await page.waitForFunction(() => document.getElementById('run-reason').textContent.includes('largest T'));
  await page.locator('#seq_len').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(OUT, `${tag}-long-refused.png`) });
  await page.click('#preset-seed');
  await load(page, 'quick_report.json', QUICK_TEXT);
  if (tag === 'phone') {
    // A real tiny bench: after Run the progress comes into view, with a Cancel beside it.
    await tinyConfig(page, { ...TINY, epochs: 3, sweep: 3 });
    await page.click('#run');
    await page.waitForFunction(() => window.rdbench.liveSeries.length >= 3, null, { timeout: 120_000 });
    await page.waitForTimeout(1000);
    await page.screenshot({ path: join(OUT, `${tag}-run.png`) });
    await page.click('#cancel-run');
    await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 60_000 });
  }
  await page.locator('#card').screenshot({ path: join(OUT, `${tag}-card.png`) });
  // One picture per report chart (their figures come from the charts registry).
  for (const id of await page.$$eval('#charts canvas', (cs) => cs.map((c) => c.id))) {
    await page.locator(`#${id}`).screenshot({ path: join(OUT, `${tag}-${id.slice(6)}.png`) });
  }
  await page.click('#keep-report');
  await load(page, 'quick-5-epochs.json', JSON.stringify(other));
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2);
  for (const box of await page.locator('#history-list input[type=checkbox]').all()) await box.check();
  await page.click('#compare');
  await page.waitForSelector('#compare-view:not([hidden])');
  await page.locator('.history').screenshot({ path: join(OUT, `${tag}-compare.png`) });
  await page.close();
}
await close();
console.log(`screenshots in ${OUT}`);
