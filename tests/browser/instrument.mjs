// Browser tests of issue 8, "the page as a research instrument": the card reads right,
// errors sit next to their cause, chart labels neither overlap nor clip at two widths,
// keyboard and screen-reader basics, history and compare, the estimate before Run.
// Registered by run.mjs (one call), which owns the harness.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** h: { test, assert, openPage, browser: () => Browser, ROOT, ARTIFACTS, REFERENCE, setField } */
export function instrumentTests(h) {
  const { test, assert, openPage, ROOT, ARTIFACTS, REFERENCE, setField } = h;
  const QUICK_TEXT = readFileSync(join(ROOT, 'charts/tests/fixtures/quick_report.json'), 'utf8');
  const QUICK = JSON.parse(QUICK_TEXT);

  async function loadReport(page, name, text) {
    await page.setInputFiles('#load-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.waitForFunction((n) => document.getElementById('source').textContent.includes(n)
      || document.getElementById('load-error').textContent.includes(n), name);
  }

  /** Is the element's box inside the viewport? */
  const inView = (page, sel) => page.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
  });

  test('card: the 4-pair warning before Run, the outcome in words, α, the rule and the smallest p', async () => {
    const page = await openPage(h.browser());
    await setField(page, 'n_seeds', '4');
    assert(await page.isVisible('#pairs-warning'), 'no warning for 4 pairs');
    const warn = await page.textContent('#pairs-warning');
    assert(warn.includes('0.125') && warn.includes('6 paired seeds'), `warning: ${warn}`);
    await setField(page, 'n_seeds', '6');
    assert(!(await page.isVisible('#pairs-warning')), 'warning shown for 6 pairs');
    await page.click('#advanced-summary');
    await setField(page, 'alpha', '0.01');
    assert(await page.isVisible('#pairs-warning'), 'alpha 0.01 needs 8 pairs: no warning for 6');
    await setField(page, 'alpha', '0.05');

    await loadReport(page, 'quick_report.json', QUICK_TEXT);
    const verdict = page.locator('#verdict');
    assert((await verdict.getAttribute('data-outcome')) === 'worse_not_significant', 'outcome');
    const text = await verdict.textContent();
    assert(/worse/.test(text) && text.includes(QUICK.comparison.verdict), `headline: ${text}`);
    assert(!(await verdict.getAttribute('class')).includes('win'), 'a loss is not styled as a win');
    const explain = await page.textContent('#card-explain');
    for (const want of ['lost on all 4 seeds', 'cannot reach p < 0.05', '0.125']) assert(explain.includes(want), `explanation misses "${want}": ${explain}`);
    const rule = await page.textContent('#card-rule');
    assert(rule.includes('α = 0.05') && rule.includes('0.1250'), `rule: ${rule}`);
    assert((await page.textContent('#card [data-key=alpha]')) === '0.05', 'α fact');
    await page.screenshot({ path: join(ARTIFACTS, 'card-4-pairs.png'), fullPage: true });
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  });

  test('a tampered report shows its problems on the card, and its verdict is marked unverified', async () => {
    const page = await openPage(h.browser());
    const bad = structuredClone(QUICK);
    // A big green win written over a loss: the diffs and means say otherwise.
    bad.comparison.p_value = 0.001;
    bad.comparison.delta_mean = -0.001;
    bad.comparison.verdict = 'significant win';
    bad.comparison.system_worked = true;
    await loadReport(page, 'tampered.json', JSON.stringify(bad, null, 2));
    assert(await page.isVisible('#card-problems'), 'problems not on the card');
    assert((await page.textContent('#card-problems')).includes('delta_mean'), 'problem not named');
    const cls = await page.getAttribute('#verdict', 'class');
    assert(cls.includes('unverified') && !/\b(win|loss)\b/.test(cls), `verdict class ${cls}`);
    assert((await page.textContent('#verdict')).startsWith('Unverified'), 'headline says unverified');
    // A sound report clears it.
    await loadReport(page, 'quick_report.json', QUICK_TEXT);
    assert(!(await page.isVisible('#card-problems')), 'problems linger');
    await page.close();
  });

  test('errors sit next to their cause: a field, Run, and a load error scrolled into view', async () => {
    const page = await openPage(h.browser());
    await page.setViewportSize({ width: 1280, height: 900 });
    await setField(page, 'epochs', '5000');
    assert(await page.isVisible('#epochs-error'), 'field message hidden');
    assert((await page.textContent('#epochs-error')).includes('1000'), 'message names the limit');
    assert(await page.isVisible('#run-reason') && await inView(page, '#run-reason'), 'Run reason not in view');
    assert(await inView(page, '#run'), 'Run not in view at 1280x900');
    await setField(page, 'epochs', '2');
    // Load a good report, scroll to the bottom, load a bad one: the error comes into view
    // and says the old report is still shown.
    await loadReport(page, 'quick_report.json', QUICK_TEXT);
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await loadReport(page, 'broken.json', '{"bench_version": 1,');
    assert(await page.isVisible('#load-error'), 'no load error');
    await page.waitForFunction(() => {
      const r = document.getElementById('load-error').getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight;
    }, null, { timeout: 3000 });
    const text = await page.textContent('#load-error');
    assert(text.includes('broken.json') && text.includes('not valid JSON') && text.includes('Still showing quick_report.json'), `load error: ${text}`);
    assert((await page.textContent('#source')).includes('quick_report.json'), 'old report replaced');
    await page.screenshot({ path: join(ARTIFACTS, 'load-error.png') });
    await page.close();
  });

  test('chart labels neither overlap nor leave the canvas at 1280 and 390 px wide', async () => {
    // A 64-seed report with nearly equal values (crowded seed labels) besides the real ones.
    const many = structuredClone(QUICK);
    many.n_seeds = 64;
    many.baseline.full.per_seed = Array.from({ length: 64 }, (_, i) => 0.01 + 1e-6 * i);
    many.idea.per_seed = Array.from({ length: 64 }, (_, i) => (i === 5 ? 0.0194 : 0.01 + 1.3e-6 * i));
    many.comparison.per_seed_diffs = many.idea.per_seed.map((v, i) => v - many.baseline.full.per_seed[i]);
    const reports = [['seed report', JSON.stringify(REFERENCE)], ['quick report', QUICK_TEXT], ['64 seeds', JSON.stringify(many)]];
    for (const [width, height] of [[1280, 900], [390, 844]]) {
      const page = await openPage(h.browser());
      await page.setViewportSize({ width, height });
      for (const [name, text] of reports) {
        await loadReport(page, `${name.replaceAll(' ', '-')}.json`, text);
        await page.waitForFunction(() => Object.keys(window.rdbench.drawn).length >= 4);
        await page.waitForTimeout(400); // a redraw after a size change is debounced
        const bad = await page.evaluate(() => {
          const out = [];
          // What was recorded is what is on screen: drawn for the canvas's current size.
          for (const [chart, id] of [['per_seed', 'chart-per-seed'], ['sweep', 'chart-sweep'], ['mechanism', 'chart-mechanism'], ['null', 'chart-null']]) {
            const c = document.getElementById(id);
            const want = Math.round(c.clientWidth * devicePixelRatio);
            if (window.rdbench.drawn[chart].width !== want) out.push(`${chart}: drawn ${window.rdbench.drawn[chart].width} px wide, shown ${want}`);
          }
          for (const [chart, d] of Object.entries(window.rdbench.drawn)) {
            if (chart === 'live') continue;
            const L = d.labels;
            if (!L.length) out.push(`${chart}: no labels recorded`);
            L.forEach((a, i) => {
              if (a.x0 < -1 || a.y0 < -1 || a.x1 > d.width + 1 || a.y1 > d.height + 1) out.push(`${chart}: "${a.text}" leaves the ${d.width}x${d.height} canvas (${a.x0},${a.y0})-(${a.x1},${a.y1})`);
              for (const b of L.slice(i + 1)) {
                if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) out.push(`${chart}: "${a.text}" overlaps "${b.text}"`);
              }
            });
          }
          return out;
        });
        assert(bad.length === 0, `${name} at ${width}px:\n${bad.join('\n')}`);
        if (name === 'quick report') await page.locator('#charts').screenshot({ path: join(ARTIFACTS, `charts-${width}.png`) });
      }
      assert(page.errors.length === 0, `page errors: ${page.errors}`);
      await page.close();
    }
  });

  test('charts: hover reads exact values, values list as text alternative, PNG and SVG export', async () => {
    const page = await openPage(h.browser());
    await loadReport(page, 'quick_report.json', QUICK_TEXT);
    const p = await page.evaluate(() => window.rdbench.drawn.per_seed.points.find((x) => x.text.startsWith('seed 0: idea')));
    const canvas = page.locator('#chart-per-seed');
    const dpr = await page.evaluate(() => devicePixelRatio);
    await canvas.hover({ position: { x: p.x / dpr, y: p.y / dpr } });
    const tip = page.locator('#chart-per-seed ~ .tip');
    await tip.waitFor({ state: 'visible', timeout: 2000 });
    const shown = await tip.textContent();
    const value = Number(shown.match(/idea ([0-9.e+-]+)/)[1]);
    assert(Math.abs(value - QUICK.idea.per_seed[0]) <= 1e-5 * QUICK.idea.per_seed[0], `hover shows ${shown}, report ${QUICK.idea.per_seed[0]}`);
    assert(await page.getAttribute('#chart-per-seed', 'role') === 'img', 'chart role');
    const items = await page.$$eval('#per_seed-data li', (l) => l.map((x) => x.textContent));
    assert(items.length === 2 * 4 + 2 && items.some((t) => t.startsWith('seed 3: baseline')), `values list: ${items}`);
    const [png] = await Promise.all([page.waitForEvent('download'), page.click('button[data-chart=sweep][data-export=png]')]);
    const pngBytes = readFileSync(await png.path());
    assert(pngBytes.subarray(1, 4).toString() === 'PNG', 'PNG export');
    const [svg] = await Promise.all([page.waitForEvent('download'), page.click('button[data-chart=sweep][data-export=svg]')]);
    const svgText = readFileSync(await svg.path(), 'utf8');
    assert(svgText.startsWith('<svg') && svgText.includes('lr sweep'), 'SVG export');
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  });

  test('keyboard only: Tab reaches Load (it opens the picker) and Run; Enter in a box does not run', async () => {
    const page = await openPage(h.browser());
    await page.selectOption('#backend', 'cpu');
    // Enter in a number box is not a Run.
    await page.focus('#epochs');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(200);
    assert((await page.evaluate(() => window.rdbench.state.sent.length)) === 0, 'Enter in a box started a run');
    // Tab from the top until Load, then open it from the keyboard.
    await page.evaluate(() => document.activeElement?.blur());
    let reached = false;
    for (let i = 0; i < 120 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'load-button');
    }
    assert(reached, 'Load report… not reachable with Tab');
    await page.bringToFront();
    assert(await page.evaluate(() => document.activeElement?.id) === 'load-button', 'focus left Load');
    // Enter on Load asks the browser for its file picker (the hidden file input is clicked;
    // headless Chromium does not always surface the picker to the test once other pages
    // have used file inputs, so the click is what is checked), then a file is chosen.
    await page.evaluate(() => {
      window.__picker = false;
      // The picker itself is not wanted here: the click that asks for it is what counts.
      document.getElementById('load-file').addEventListener('click', (e) => { window.__picker = true; e.preventDefault(); }, { once: true });
    });
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__picker, null, { timeout: 3000 }).catch(() => {});
    assert(await page.evaluate(() => window.__picker), 'Enter on Load did not open the file picker');
    await page.setInputFiles('#load-file', { name: 'quick_report.json', mimeType: 'application/json', buffer: Buffer.from(QUICK_TEXT) });
    await page.waitForSelector('body[data-report=shown]');
    // Shift+Tab back to Run and start with the keyboard: focus moves to Cancel.
    await setField(page, 'n_seeds', '1');
    await setField(page, 'n_sweep_seeds', '1');
    await setField(page, 'epochs', '1');
    await page.focus('#run');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.rdbench.state.running, null, { timeout: 60_000 });
    assert(await page.evaluate(() => document.activeElement?.id) === 'cancel', 'focus did not move to Cancel');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 120_000 });
    await page.waitForFunction(() => document.activeElement?.id === 'run', null, { timeout: 5000 });
    assert((await page.textContent('#p-eta')) === '–', 'ETA left after cancel');
  });

  test('names and roles: every control has an accessible name, charts have role img, sliders announce values', async () => {
    const page = await openPage(h.browser());
    await page.click('#load-example');
    await page.waitForSelector('body[data-report=shown]');
    const missing = await page.evaluate(() => {
      const nameOf = (e) => {
        if (e.getAttribute('aria-label')) return e.getAttribute('aria-label');
        const by = e.getAttribute('aria-labelledby');
        if (by) return by.split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
        if (e.id) { const l = document.querySelector(`label[for="${e.id}"]`); if (l) return l.textContent; }
        if (e.closest('label')) return e.closest('label').textContent;
        return e.tagName === 'INPUT' || e.tagName === 'SELECT' ? '' : e.textContent;
      };
      const out = [];
      for (const e of document.querySelectorAll('button, input, select, summary, canvas, a[href], [tabindex]')) {
        if (e.type === 'file' || e.id === 'load-error' || e.closest('[hidden]')) continue;
        if (!nameOf(e).trim()) out.push(e.outerHTML.slice(0, 80));
        if (e.tagName === 'CANVAS' && e.getAttribute('role') !== 'img') out.push(`canvas ${e.id} has no role img`);
      }
      for (const s of document.querySelectorAll('input[type=range]')) {
        const box = s.closest('.field, .lr-row').querySelector('input[type=text]');
        const vt = s.getAttribute('aria-valuetext') ?? '';
        if (!vt.startsWith(box.value)) out.push(`${s.getAttribute('aria-label')}: announces "${vt}", box shows ${box.value}`);
      }
      return out;
    });
    assert(missing.length === 0, `unnamed or wrong:\n${missing.join('\n')}`);
    // Dark mode follows the system setting.
    const bg = () => page.evaluate(() => getComputedStyle(document.body.parentElement).backgroundColor);
    const light = await bg();
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await bg();
    const lum = (c) => c.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
    assert(lum(dark) < 150 && lum(light) > 600, `background light ${light}, dark ${dark}`);
  });

  test('history: kept reports survive a reload, two compare (config diff, per-seed, verdicts), rerun and delete', async () => {
    const page = await openPage(h.browser());
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

  test('the estimate before Run: minutes from the engine calibration, a confirmation above the threshold, a leave-page warning', async () => {
    const page = await openPage(h.browser());
    await page.selectOption('#backend', 'cpu');
    await setField(page, 'epochs', '1000');
    await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 60_000 });
    const est = await page.evaluate(() => window.rdbench.estimateFor(window.rdbench.nextStart()));
    const cal = est.info.calibration.find((c) => c.backend === est.info.backend);
    const seconds = est.info.work_total * cal.ms_per_work_unit / est.info.workers / 1000;
    assert(Math.abs(est.seconds - seconds) < 1e-9 && est.info.work_total > 0 && cal.ms_per_work_unit > 0, `estimate ${JSON.stringify(est)}`);
    const shown = await page.textContent('#estimate-time');
    assert(shown.includes(est.info.work_total.toLocaleString('en')) && shown.includes('ms') && /≈ \d+(h|m)/.test(shown), `estimate text: ${shown}`);
    // 1000 epochs is far above the threshold: Run asks, and "Not now" starts nothing.
    assert(est.seconds > await page.evaluate(() => window.rdbench.CONFIRM_ABOVE_S), `1000 epochs estimated at ${est.seconds} s`);
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 10_000 });
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
    const page = await openPage(h.browser());
    await page.selectOption('#backend', 'cpu');
    await setField(page, 'epochs', '1000');
    // Run at once: no estimate yet, so the bench starts and the question comes with the
    // engine's own calibration.
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 60_000 });
    assert(await page.evaluate(() => window.rdbench.state.sent.length === 1), 'the bench did not start');
    assert((await page.textContent('#confirm-title')).includes('keep it running'), 'question');
    await page.click('#confirm-cancel');
    await page.waitForFunction(() => !window.rdbench.state.running, null, { timeout: 120_000 });
    assert((await page.textContent('#estimate-time')).includes('Estimated time'), 'estimate shown');
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  });
}
