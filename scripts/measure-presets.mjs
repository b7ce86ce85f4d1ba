// Benchmark the page's presets in headless Chromium: wall time of a whole bench from the
// Run click to the drawn report, plus a screenshot and the downloaded report.
// Usage: node scripts/measure-presets.mjs quick|seed [cpu|webgpu|auto] [out-prefix]
// Needs the built app (npm run build) and Debian's chromium. Figures are in the README.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createAppServer } from './serve.mjs';

const [preset = 'quick', backend = 'cpu', out = join(tmpdir(), `rdbench-${preset}-${backend}`)] = process.argv.slice(2);
if (!['quick', 'seed'].includes(preset) || !['cpu', 'webgpu', 'auto'].includes(backend)) {
  console.error('usage: node scripts/measure-presets.mjs quick|seed [cpu|webgpu|auto] [out-prefix]');
  process.exit(2);
}
const server = createAppServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  ignoreDefaultArgs: true,
  args: ['--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'rdbench-chromium-'))}`,
    '--remote-debugging-pipe', '--hide-scrollbars', ...(backend === 'cpu' ? [] : ['--enable-unsafe-webgpu'])],
});
try {
  const page = await (await browser.newContext({ acceptDownloads: true, viewport: { width: 1440, height: 1000 } })).newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.rdbench?.state?.loaded, null, { timeout: 300_000 });
  await page.click(`#preset-${preset}`);
  await page.selectOption('#backend', backend);
  const t0 = Date.now();
  await page.click('#run');
  await page.waitForSelector('body[data-report=shown]', { timeout: 4 * 3600_000 });
  const wall = (Date.now() - t0) / 1000;
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  writeFileSync(`${out}.json`, readFileSync(await download.path(), 'utf8'));
  await page.screenshot({ path: `${out}.png`, fullPage: true });
  const env = JSON.parse(readFileSync(`${out}.json`, 'utf8')).environment;
  console.log(`${preset} on ${env.backend} (${env.adapter}): ${wall.toFixed(1)} s from Run to the drawn report; ` +
    `engine wall time ${env.wall_time_s.toFixed(1)} s; report ${out}.json, screenshot ${out}.png`);
} finally {
  await browser.close();
  server.close();
}
