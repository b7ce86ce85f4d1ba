// The history (IndexedDB) and the compare view: kept reports survive a reload, two compare,
// rerun and delete; a tampered report's row says Unverified; Keep says what it did; a run's
// report is named by when it finished.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK, QUICK_TEXT, setField, TINY, tinyConfig } from './helpers.mjs';

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

/** The quick report with a big green win written over its loss: its checks fail. */
function tampered() {
  const bad = structuredClone(QUICK);
  bad.comparison.p_value = 0.001;
  bad.comparison.delta_mean = -0.001;
  bad.comparison.verdict = 'significant win';
  bad.comparison.system_worked = true;
  return JSON.stringify(bad, null, 2);
}

test('history: a tampered report\'s row says Unverified, as its card does (also one kept by an older page)', async () => {
  const page = await openPage(browser());
  const bad = tampered();
  await loadReport(page, 'tampered.json', bad);
  assert((await page.textContent('#verdict')).startsWith('Unverified'), 'the card does not say Unverified');
  await page.click('#keep-report');
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2);
  const rows = () => page.$$eval('#history-list li.h-entry', (ls) => ls.map((l) => ({
    text: l.querySelector('.h-what').textContent, unverified: l.dataset.unverified === 'true',
    struck: getComputedStyle(l.querySelector('.h-verdict')).textDecorationLine })));
  const [sound, unsound] = await rows(); // newest first
  assert(unsound.text.startsWith('Unverified') && unsound.unverified && unsound.struck === 'line-through', `tampered row: ${JSON.stringify(unsound)}`);
  assert(!sound.text.includes('Unverified') && !sound.unverified && sound.struck === 'none', `sound row: ${JSON.stringify(sound)}`);
  // An entry an older page kept has no record of its checks: it is checked when listed.
  await page.evaluate((text) => new Promise((ok, fail) => {
    const r = indexedDB.open('rdbench', 1);
    r.onsuccess = () => {
      const t = r.result.transaction('reports', 'readwrite');
      t.objectStore('reports').add({ savedAt: new Date(0).toISOString(), source: 'old-page.json', bytes: new Blob([text]).size,
        summary: { headline: 'Significant win', verdict: 'significant win', outcome: 'significant_win', n_pairs: 4, delta_mean: -0.001, p_value: 0.001 }, text });
      t.oncomplete = ok;
      t.onerror = () => fail(t.error);
    };
  }), bad.replace('"significant win"', '"significant win" '));
  await page.reload();
  await page.waitForFunction(() => [...document.querySelectorAll('#history-list li.h-entry')]
    .some((l) => l.textContent.includes('old-page.json') && l.dataset.unverified === 'true'), null, { timeout: 5000 });
  await page.locator('.history').screenshot({ path: join(ARTIFACTS, 'history-unverified.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('Keep says what it did, and is off with the reason when the shown report is already kept', async () => {
  const page = await openPage(browser());
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  await page.waitForFunction(() => !document.getElementById('keep-report').disabled);
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1);
  await page.waitForFunction(() => document.getElementById('keep-report').disabled);
  const note = await page.textContent('#history-note');
  assert(await page.isVisible('#history-note') && note === 'Kept quick_report.json in the history.', `note: ${note}`);
  assert((await page.getAttribute('#history-note', 'role')) === 'status', 'the note is not announced');
  assert((await page.textContent('#keep-report')) === 'Shown report is kept', `Keep reads ${await page.textContent('#keep-report')}`);
  // The same report under another name, or shown from the history: Keep is off and says why.
  await loadReport(page, 'same-again.json', QUICK_TEXT);
  assert(!(await page.isVisible('#history-note')), 'the note outlives the report it was about');
  await page.waitForFunction(() => document.getElementById('keep-report').textContent === 'Shown report is kept', null, { timeout: 3000 });
  assert(await page.isDisabled('#keep-report'), 'Keep is on for a report already kept');
  await page.locator('#history-list button', { hasText: 'Show' }).click();
  await page.waitForFunction(() => document.getElementById('source').textContent.includes('from the history'));
  await page.waitForFunction(() => document.getElementById('keep-report').textContent === 'Shown report is kept', null, { timeout: 3000 });
  assert(await page.isDisabled('#keep-report'), 'Keep is on for a report shown from the history');
  // Another report: Keep is on again.
  const other = structuredClone(QUICK);
  other.config.epochs = 5;
  await loadReport(page, 'other.json', JSON.stringify(other));
  await page.waitForFunction(() => !document.getElementById('keep-report').disabled, null, { timeout: 3000 });
  assert((await page.textContent('#keep-report')) === 'Keep shown report', 'Keep\'s label');
  assert((await page.locator('#history-list li.h-entry').count()) === 1, 'something was kept unasked');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('a run\'s report is named by when it finished, not "this run", also while the next run goes', async () => {
  const page = await openPage(browser());
  await tinyConfig(page, { ...TINY, batch: 320 });
  await page.click('#run');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1, null, { timeout: 120_000 });
  const first = await page.textContent('#source');
  const kept = async () => page.$$eval('#history-list .h-source', (ss) => ss.map((s) => s.textContent.split(' · ')[0]));
  assert(/^Showing the run that finished .+\.$/.test(first) && !first.includes('this run'), `source: ${first}`);
  assert(first === `Showing ${(await kept())[0]}.`, `the history names it otherwise: ${await kept()}`);
  await page.waitForFunction(() => document.getElementById('keep-report').disabled, null, { timeout: 3000 });
  // The next bench: while it runs the shown report is still named as the first run.
  await setField(page, 'n_seeds', '3');
  await page.click('#run');
  await page.waitForFunction(() => window.rdbench.state.running, null, { timeout: 60_000 });
  assert((await page.textContent('#source')) === first, `mid-run source: ${await page.textContent('#source')}`);
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 2, null, { timeout: 120_000 });
  const second = await page.textContent('#source');
  assert(/^Showing the run that finished .+\.$/.test(second) && second === `Showing ${(await kept())[0]}.`, `source after the second run: ${second}`);
  assert((await page.textContent('#card [data-key=n_pairs]')) === '3', 'the card is not the second run\'s');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});
