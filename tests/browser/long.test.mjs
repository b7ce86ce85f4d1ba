// Long sequences in the browser: the length control sits with the track, the "Long
// sequences" preset sets the adding problem at T = 1000, a config that will not fit a
// worker's memory is refused before Run with the longest T that fits, and a tiny adding
// bench at T = 2000 runs in the workers, validates and agrees with the native CLI.
import { join } from 'node:path';
import { ARTIFACTS, assert, assertClose, browser, openPage, test } from './harness.mjs';
import { nativeReport, runAndDownload, setField, TINY, tinyConfig } from './helpers.mjs';

test('Long sequences: the length sits with the track, and the preset sets adding at T = 1000', async () => {
  const page = await openPage(browser());
  // The length's box comes right after the track's select in the form.
  const order = await page.$$eval('select, input[type=text]', (els) => els.map((e) => e.id));
  const [t, s] = [order.indexOf('track'), order.indexOf('seq_len')];
  assert(t >= 0 && s === t + 1, `seq_len should follow track: ${order.join(', ')}`);
  await page.locator('#presets button', { hasText: 'Long sequences' }).click();
  const cfg = await page.evaluate(() => window.rdbench.controls.current.config);
  assert(cfg.track === 'adding' && cfg.seq_len === 1000, `preset config ${JSON.stringify(cfg)}`);
  // A protocol whose baseline learns: 4800 sequences x 15 epochs at lr 0.01 (2250 steps a
  // full run), the training size's box still 0 (the track's default, which follows T).
  assert(cfg.train_size === 4800 && cfg.epochs === 15 && JSON.stringify(cfg.lrs) === '[0.01]', `preset protocol ${JSON.stringify(cfg)}`);
  assert(await page.inputValue('#train_size') === '0', `train_size box ${await page.inputValue('#train_size')}`);
  // The run bar says the figure in a few words; the breakdown sits under the length.
  const estimate = await page.textContent('#estimate');
  assert(/\(both arms\), peak memory ≈ [\d.]+ [kMG]?B( per worker)?\.$/.test(estimate), `estimate: ${estimate}`);
  const note = await page.textContent('#seq_len-memory');
  assert(/Estimated peak memory ≈ .* at T = 1000/.test(note), `memory note: ${note}`);
  // k_max follows T, and the page says why a value is refused.
  await setField(page, 'seq_len', '10');
  const reason = await page.textContent('#run-reason');
  assert(/at most the sequence length T = 10/.test(reason), `run reason: ${reason}`);
  assert(await page.isDisabled('#run'), 'Run enabled with k_max > T');
  // Back at T = 1000 on the CPU: its estimate is shown before Run, and Run asks first.
  await page.selectOption('#backend', 'cpu');
  await setField(page, 'seq_len', '1000');
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 120_000 });
  const est = await page.evaluate(() => window.rdbench.estimateFor(window.rdbench.nextStart()));
  assert(est.seconds > await page.evaluate(() => window.rdbench.CONFIRM_ABOVE_S), `the preset estimated at ${est.seconds} s`);
  assert(/≈ \d+ (h|min)/.test(await page.textContent('#estimate-time')), `estimate: ${await page.textContent('#estimate-time')}`);
  await page.click('#run');
  await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 10_000 });
  assert(/Start a long bench\?/.test(await page.textContent('#confirm-title')), 'Run asks before the long preset');
  await page.click('#confirm-cancel');
  await page.waitForTimeout(300);
  assert((await page.evaluate(() => window.rdbench.state.sent.length)) === 0, '"Not now" started a run');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('Long sequences: a config beyond a worker\'s 4 GiB is refused before Run, with the largest T that fits', async () => {
  const page = await openPage(browser());
  await page.selectOption('#track', 'adding');
  await setField(page, 'hidden_size', '512');
  await setField(page, 'batch_size', '160');
  await setField(page, 'train_size', '1000');
  await setField(page, 'seq_len', '20000');
  const reason = await page.textContent('#run-reason');
  assert(/more than 4\.3 GB, what a browser worker can address; the largest T that fits is \d+/.test(reason)
    && /in each of \d+ workers/.test(reason) && !reason.includes('--') && !reason.includes('GiB'), `run reason: ${reason}`);
  const m = /the largest T that fits is (\d+)/.exec(reason);
  assert(m && Number(m[1]) > 2 && Number(m[1]) < 20000, `largest T: ${reason}`);
  assert(await page.isDisabled('#run'), 'Run enabled for a config that will not fit');
  await setField(page, 'seq_len', m[1]);
  assert(!(await page.isDisabled('#run')), `T = ${m[1]} was said to fit`);
  await page.screenshot({ path: join(ARTIFACTS, 'long-refused.png'), fullPage: false });
});

test('Long sequences: a tiny adding bench at T = 2000 runs in the workers and agrees with the native CLI', async () => {
  const page = await openPage(browser());
  await page.selectOption('#track', 'adding');
  await setField(page, 'seq_len', '2000');
  await tinyConfig(page, { ...TINY, batch: 8, hidden: 4 });
  await setField(page, 'train_size', '10');
  const { report, wall } = await runAndDownload(page, 300_000);
  console.log(`    wasm CPU adding T = 2000 tiny bench: ${wall.toFixed(1)} s`);
  assert(report.config.track === 'adding' && report.config.seq_len === 2000, 'config from the controls');
  assert(report.task.seq_len === 2000 && report.memory.dense_states === 2001, 'T = 2000 in the report');
  assert(await page.$eval('#card', (c) => !/Unverified/.test(c.textContent)), 'the report validates on Load');
  const shown = await page.textContent('#card');
  assert(/trivial predictor \(always predicting 1\)/.test(shown), 'the card shows the trivial predictor');
  const native = nativeReport(report.config);
  assertClose(report.task.reference.value, native.task.reference.value, 0, 'trivial MSE wasm vs native');
  report.baseline.full.per_seed.forEach((v, i) => assertClose(v, native.baseline.full.per_seed[i], 1e-5, `baseline seed ${i} wasm vs native`));
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
