// The time estimate before Run and the questions a long bench asks.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { setField } from './helpers.mjs';

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
