// The time estimate before Run and the questions a long bench asks.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { TINY, runAndDownload, setField, tinyConfig } from './helpers.mjs';

/** A page set for a bench far above the confirmation threshold: 1000 epochs on the CPU. */
async function longBenchPage() {
  const page = await openPage(browser());
  await page.selectOption('#backend', 'cpu');
  await setField(page, 'epochs', '1000');
  return page;
}

/** Wait until the page asks whether to run (or keep running) the long bench. */
const asked = (page, timeout) => page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout });

test('the estimate before Run: minutes from the engine calibration, a confirmation above the threshold, a leave-page warning', async () => {
  const page = await longBenchPage();
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 60_000 });
  const est = await page.evaluate(() => window.rdbench.estimateFor(window.rdbench.nextStart()));
  const cal = est.info.calibration.find((c) => c.backend === est.info.backend);
  const seconds = est.info.work_total * cal.ms_per_work_unit / est.info.workers / 1000;
  assert(Math.abs(est.seconds - seconds) < 1e-9 && est.info.work_total > 0 && cal.ms_per_work_unit > 0, `estimate ${JSON.stringify(est)}`);
  const shown = await page.textContent('#estimate-time');
  const detail = await page.textContent('#estimate-detail');
  assert(/≈ \d+ (h|min) .*\(.+–.+\)/.test(shown), `estimate text: ${shown}`);
  assert(detail.includes(est.info.work_total.toLocaleString('en')) && detail.includes('ms'), `estimate detail: ${detail}`);
  // The breakdown sits below the form, not in the sticky bar beside Run.
  assert(await page.$eval('#estimate-detail', (e) => !e.closest('.run-bar')), 'the breakdown is in the run bar');
  // The range: the idea at k = 1 to k_max, the fastest to the slowest calibration trial.
  assert(est.low > 0 && est.low <= est.seconds && est.seconds <= est.high && est.info.work_low < est.info.work_high, `range ${JSON.stringify(est)}`);
  // 1000 epochs is far above the threshold: Run asks, and "Not now" starts nothing.
  assert(est.seconds > await page.evaluate(() => window.rdbench.CONFIRM_ABOVE_S), `1000 epochs estimated at ${est.seconds} s`);
  await page.click('#run');
  await asked(page, 10_000);
  assert((await page.textContent('#confirm-text')).includes('Estimated time'), 'confirmation says the estimate');
  await page.screenshot({ path: join(ARTIFACTS, 'confirm-long-run.png') });
  await page.click('#confirm-cancel');
  await page.waitForTimeout(300);
  assert((await page.evaluate(() => window.rdbench.state.sent.length)) === 0, '"Not now" started a run');
  // A short bench starts at once; leaving mid-run asks first.
  await setField(page, 'epochs', '1');
  await setField(page, 'n_seeds', '2');
  await setField(page, 'n_sweep_seeds', '1');
  await setField(page, 'hidden_size', '8');
  await page.click('#run');
  await page.waitForFunction(() => window.rdbench.state.running, null, { timeout: 60_000 });
  assert(!(await page.evaluate(() => document.getElementById('confirm-run').open)), 'a short bench asked');
  const dialog = page.waitForEvent('dialog', { timeout: 5000 });
  await page.close({ runBeforeUnload: true });
  const d = await dialog;
  assert(d.type() === 'beforeunload', `dialog ${d.type()}`);
  await d.dismiss();
  await page.click('#cancel');
  await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 120_000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('a long bench started before its estimate was known asks once the engine has measured it', async () => {
  const page = await longBenchPage();
  // Run at once: no estimate yet, so the bench starts and the question comes with the
  // engine's own calibration.
  await page.click('#run');
  await asked(page, 60_000);
  assert(await page.evaluate(() => window.rdbench.state.sent.length === 1), 'the bench did not start');
  assert((await page.textContent('#confirm-title')).includes('keep it running'), 'question');
  await page.click('#confirm-cancel');
  await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 120_000 });
  assert((await page.textContent('#estimate-time')).includes('Estimated time'), 'estimate shown');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('the estimate is timed on every worker at once and learns from the benches that finish, at 1280 and 390 px', async () => {
  for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
    const page = await openPage(browser(), '?workers=2', { width, height });
    await tinyConfig(page, TINY);
    const ready = () => page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 60_000 });
    await ready();
    const before = await page.evaluate(() => window.rdbench.estimateFor(window.rdbench.nextStart()));
    // Both workers timed the CPU at once; no bench has finished here yet: no correction.
    assert(before.info.timed_workers === 2, `${tag}: timed on ${before.info.timed_workers} worker(s)`);
    const shownDetail = await page.textContent('#estimate-detail');
    assert(before.correction === null && shownDetail.includes('on 2 workers at once'), `${tag}: ${JSON.stringify(before.correction)} / ${shownDetail}`);
    const { report } = await runAndDownload(page, 120_000);
    const wall = report.environment.wall_time_s;
    // The finished bench is kept: its wall time over the estimate it started with.
    const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('rdbench.estimate-outcomes'))['cpu-flex']);
    assert(kept?.length === 1 && Math.abs(kept[0] - wall / before.seconds) < 1e-9 * kept[0], `${tag}: kept ${kept}, wall ${wall}, estimate ${before.seconds}`);
    // The next estimate of the same bench is the calibration's times that ratio, and says so.
    await ready();
    const after = await page.evaluate(() => window.rdbench.estimateFor(window.rdbench.nextStart()));
    const cal = after.info.calibration.find((c) => c.backend === after.info.backend);
    const raw = after.info.work_total * cal.ms_per_work_unit / after.info.workers / 1000;
    assert(Math.abs(after.seconds - raw * kept[0]) < 1e-9 * after.seconds, `${tag}: ${after.seconds} vs ${raw} x ${kept[0]}`);
    assert(after.low <= after.seconds && after.seconds <= after.high, `${tag}: range ${after.low}–${after.high}`);
    const detail = await page.textContent('#estimate-detail');
    assert(detail.includes('Corrected ×') && detail.includes("this browser's last 1 bench on cpu-flex"), `${tag}: ${detail}`);
    assert(await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth), `${tag}: the page scrolls sideways`);
    await page.screenshot({ path: join(ARTIFACTS, `estimate-learned-${tag}.png`) });
    assert(page.errors.length === 0, `${tag}: page errors: ${page.errors}`);
    await page.close();
  }
});
