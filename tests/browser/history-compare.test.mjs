// The history (IndexedDB) and the compare view: kept reports survive a reload, two compare,
// rerun and delete.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK, QUICK_TEXT, setField } from './helpers.mjs';

test('history: kept reports survive a reload, two compare (config diff, per-seed, verdicts), rerun and delete', async () => {
  const page = await openPage(browser());
  const entries = () => page.locator('#history-list li.h-entry');
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1);
  const other = structuredClone(QUICK);
  other.config.epochs = 5;
  other.config.hidden_size = 24;
  await loadReport(page, 'quick-5-epochs.json', JSON.stringify(other, null, 2));
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2);
  // A finished run is kept without asking.
  await setField(page, 'n_seeds', '1');
  await setField(page, 'n_sweep_seeds', '1');
  await setField(page, 'epochs', '1');
  await setField(page, 'batch_size', '320');
  await setField(page, 'hidden_size', '8');
  while ((await page.locator('#lr-list .lr-row').count()) > 1) await page.locator('#lr-list .lr-row button').first().click();
  await page.selectOption('#backend', 'cpu');
  await page.click('#run');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 3, null, { timeout: 120_000 });

  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 3, null, { timeout: 5000 });
  assert((await page.textContent('#history-count')).startsWith('3 of'), 'count');
  // The two quick reports are the older entries (the list is newest first).
  await entries().nth(1).locator('input[type=checkbox]').check();
  await entries().nth(2).locator('input[type=checkbox]').check();
  assert(!(await page.isDisabled('#compare')), 'Compare stays off with two ticked');
  await page.click('#compare');
  await page.waitForSelector('#compare-view:not([hidden])');
  const diffKeys = await page.$$eval('#compare-view table.config tbody tr', (rows) => rows.map((r) => r.dataset.key));
  assert(JSON.stringify(diffKeys.sort()) === JSON.stringify(['epochs', 'hidden_size']), `config diff: ${diffKeys}`);
  assert((await page.locator('#compare-view table.seeds tbody tr').count()) === 4, 'per-seed rows');
  const outcome = await page.$$eval('#compare-view tr[data-key=verdict] td', (t) => t.map((x) => x.textContent));
  assert(outcome.length === 2 && outcome.every((t) => t === QUICK.comparison.verdict), `verdicts ${outcome}`);
  assert((await page.locator('#compare-view table.mechanism tbody tr').count()) === 4, 'mechanism conditions side by side');
  await page.screenshot({ path: join(ARTIFACTS, 'compare.png'), fullPage: true });
  // One ticked + the shown report also compares.
  await entries().nth(2).locator('input[type=checkbox]').uncheck();
  await entries().nth(0).locator('button', { hasText: 'Show' }).click();
  await page.waitForFunction(() => document.getElementById('source').textContent.includes('from the history'));
  assert((await page.textContent('#compare')).includes('shown report'), 'compare with the shown report');
  // Rerun this config: the 5-epoch report's config lands in the form.
  const fiveEpochs = entries().filter({ hasText: '5 epochs' });
  await fiveEpochs.locator('button', { hasText: 'Rerun config' }).click();
  await page.waitForFunction(() => document.getElementById('epochs').value === '5', null, { timeout: 3000 }).catch(() => {});
  assert((await page.inputValue('#epochs')) === '5' && (await page.inputValue('#hidden_size')) === '24', 'config not in the form');
  assert((await page.evaluate(() => window.rdbench.nextStart().config.epochs)) === 5, 'Run would not send it');
  // Delete survives a reload too.
  await fiveEpochs.locator('button', { hasText: 'Delete' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2);
  await page.reload();
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2, null, { timeout: 5000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});
