// What the page shows while a bench runs is the bench that runs: the live chart plots each
// run at its own step whatever the number of workers, the form is locked and the URL keeps
// the running configuration, and on a phone the progress comes into view.
import { join } from 'node:path';
import { ARTIFACTS, assert, BASE, browser, openPage, test } from './harness.mjs';
import { hashParams, inView, runAndDownload, TINY, tinyConfig } from './helpers.mjs';

test('the live chart plots each run against its own step with 2 workers', async () => {
  // 3 sweep runs over 2 workers: slices of 1 and 2 runs, which step at different rates, so
  // the workers' reports interleave at different steps.
  const page = await openPage(browser(), '?workers=2');
  await tinyConfig(page, { ...TINY, sweep: 3, epochs: 2, batch: 32 });
  const { report } = await runAndDownload(page, 300_000);
  const series = await page.evaluate(() => window.rdbench.liveSeries);
  assert(series.length === 2 * 3 + 2 * 2, `series: ${series.map((s) => s.label)}`);
  for (const s of series) {
    assert(s.points.length >= 2, `${s.label}: ${s.points.length} points`);
    const xs = s.points.map((p) => p[0]);
    const back = xs.findIndex((x, i) => i > 0 && x <= xs[i - 1]);
    assert(back < 0, `${s.label}: x goes from ${xs[back - 1]} to ${xs[back]} (${xs.join(',')})`);
    // x is the run's own step: sweep runs take 10 steps an epoch, full runs 13. Each worker
    // reports the first step of the bench (later ones at most every 100 ms, and every
    // epoch's last), and no step reported is left off the chart.
    const steps = (s.phase === 'sweep' ? 10 : 13) * 2;
    const first = s.arm === 'baseline' && s.phase === 'sweep' ? xs[0] === 1 : xs[0] >= 1;
    assert(first && xs.at(-1) === steps, `${s.label}: steps ${xs[0]}..${xs.at(-1)} of ${steps}`);
  }
  // A regression (the pendulum): the trivial predictor's MSE and the learning bar are drawn
  // across, at the report's reference and threshold.
  const lines = await page.evaluate(() => window.rdbench.drawn.live.points.map((p) => p.text)
    .filter((t) => t.startsWith('trivial predictor') || t.startsWith('learned below')));
  const ref = report.task.reference;
  const bar = report.task.learnability.threshold;
  const value = (t) => Number(t.match(/: ([-0-9.e]+) \(/)[1]);
  const close = (a, b) => Math.abs(a - b) <= 1e-5 * Math.abs(b);
  assert(lines.length === 2 && lines[0].includes(ref.name) && close(value(lines[0]), ref.value)
    && close(value(lines[1]), bar), `live chart lines: ${lines}; reference ${JSON.stringify(ref)}, bar ${bar}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('during a run the form is locked and the URL keeps the running config; the report is what ran', async () => {
  const page = await openPage(browser());
  await tinyConfig(page, { ...TINY, lrs: [0.003, 0.01], epochs: 2 });
  const before = await hashParams(page);
  await page.click('#run');
  await page.waitForFunction(() => window.rdbench.state.running && window.rdbench.firstProgress, null, { timeout: 60_000 });
  // Edits: typing into a box, a preset, and a link pasted into the tab.
  for (const id of ['n_seeds', 'epochs', 'n_seeds-range', 'lr-add', 'backend']) assert(await page.isDisabled(`#${id}`), `#${id} is editable mid-run`);
  assert(await page.$$eval('#presets button', (bs) => bs.length > 0 && bs.every((b) => b.disabled)), 'presets usable mid-run');
  await page.locator('#n_seeds').fill('6', { timeout: 500 }).catch(() => {});
  await page.locator('#presets button').first().click({ timeout: 500 }).catch(() => {});
  await page.evaluate(() => { location.hash = '#n_seeds=3&epochs=3&backend=cpu'; });
  await page.waitForFunction(() => document.getElementById('banner').textContent.includes('keep its settings'), null, { timeout: 5000 });
  assert(await page.isVisible('#locked-note'), 'the page does not say the settings are locked');
  const mid = await hashParams(page);
  assert(mid.toString() === before.toString(), `URL changed mid-run:\n${mid}\nvs\n${before}`);
  await page.screenshot({ path: join(ARTIFACTS, 'locked-during-run.png') });
  await page.waitForSelector('body[data-report=shown]', { timeout: 300_000 });
  const sent = await page.evaluate(() => window.rdbench.state.sent.at(-1).config);
  const url = await hashParams(page);
  assert(sent.n_seeds === 2 && sent.epochs === 2, `the run used ${sent.n_seeds} seeds / ${sent.epochs} epochs`);
  assert(url.get('n_seeds') === '2' && url.get('epochs') === '2' && url.toString() === before.toString(), `URL after the run: ${url}`);
  // The run panel's elapsed time is the card's wall time once the bench is done.
  const [elapsed, wall] = [await page.textContent('#p-elapsed'), await page.textContent('#card [data-key=wall_time_s]')];
  assert(elapsed === wall, `elapsed ${elapsed} vs the card's wall time ${wall}`);
  const pairs = await page.textContent('#card [data-key=n_pairs]');
  assert(pairs === '2' && (await page.inputValue('#n_seeds')) === '2', `card ${pairs} pairs, form ${await page.inputValue('#n_seeds')} seeds`);
  assert(!(await page.isDisabled('#n_seeds')) && await page.isHidden('#locked-note'), 'the form stays locked after the run');
  // A link opened now loads.
  await page.goto(`${BASE}#n_seeds=3&epochs=3&backend=cpu`);
  await page.waitForFunction(() => document.getElementById('n_seeds').value === '3', null, { timeout: 5000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('on a phone (390 px) the progress comes into view within a second of Run, with a Cancel beside it', async () => {
  const page = await openPage(browser(), '', { width: 390, height: 844 });
  await tinyConfig(page, { ...TINY, epochs: 2 });
  assert(!(await inView(page, '#progress')), 'the progress is already in view: the test shows nothing');
  await page.click('#run');
  const t0 = Date.now();
  await page.waitForFunction(() => {
    const r = document.getElementById('progress').getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight;
  }, null, { timeout: 1000 });
  console.log(`    progress in view ${Date.now() - t0} ms after Run`);
  await page.waitForTimeout(600); // the smooth scroll ends
  assert(await inView(page, '#progress') && await inView(page, '#cancel-run'), 'progress and its Cancel in view');
  assert(await page.evaluate(() => document.activeElement?.id) === 'cancel-run', 'focus is not on the Cancel in view');
  await page.screenshot({ path: join(ARTIFACTS, 'phone-run.png') });
  await page.click('#cancel-run');
  await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 120_000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
