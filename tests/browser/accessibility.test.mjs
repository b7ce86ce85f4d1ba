// Keyboard and screen reader: Tab reaches Load and Run, Enter in a box never runs, every
// control is named, charts are images with a text alternative, dark mode. Focus is never
// hidden under the sticky Run bar, and a phone's tap targets are 44 px.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK_TEXT, setField } from './helpers.mjs';

test('keyboard only: Tab reaches Load (it opens the picker) and Run; Enter in a box does not run', async () => {
  const page = await openPage(browser());
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
  const page = await openPage(browser());
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

/** The page with every kind of control there is: a report shown (card, charts and their
 *  buttons), kept in the history (its checkbox and buttons), and Advanced open. */
async function everyControl(page) {
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  await page.click('#keep-report');
  await page.waitForFunction(() => document.querySelectorAll('#history-list li.h-entry').length === 1);
  await page.click('#advanced-summary');
  await page.evaluate(() => window.scrollTo(0, 0));
}

for (const [width, height] of [[1280, 800], [390, 844]]) {
  test(`keyboard focus stays visible at ${width}x${height}: every control Tab reaches is in view and not under a sticky bar`, async () => {
    const page = await openPage(browser(), '', { width, height });
    await everyControl(page);
    await page.evaluate(() => document.activeElement?.blur());
    const stops = [];
    const hidden = [];
    for (let i = 0; i < 400; i++) {
      await page.keyboard.press('Tab');
      const stop = await page.evaluate(async () => {
        const frames = () => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
        const check = (e) => {
          const b = e.getBoundingClientRect();
          const problems = [];
          if (b.top < 0 || b.left < 0 || b.bottom > innerHeight || b.right > innerWidth) {
            problems.push(`its box ${Math.round(b.top)}..${Math.round(b.bottom)} is not within the viewport's 0..${innerHeight}`);
          }
          for (const bar of document.querySelectorAll('body *')) {
            const { position } = getComputedStyle(bar);
            if ((position !== 'sticky' && position !== 'fixed') || bar.contains(e)) continue;
            const o = bar.getBoundingClientRect();
            if (o.width && o.height && o.left < b.right && b.left < o.right && o.top < b.bottom && b.top < o.bottom) {
              problems.push(`the sticky #${bar.id || bar.className} (${Math.round(o.top)}..${Math.round(o.bottom)}) covers its ${Math.round(b.top)}..${Math.round(b.bottom)}`);
            }
          }
          const top = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
          if (!top || !(top === e || e.contains(top))) problems.push(`its centre shows ${top ? `${top.tagName.toLowerCase()}#${top.id}.${top.className}` : 'nothing'}`);
          return problems;
        };
        // Let any scrolling the focus started settle (two frames).
        await frames();
        const e = document.activeElement;
        if (!e || e === document.body) return null;
        const name = `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''} "${(e.getAttribute('aria-label') ?? e.textContent).trim().slice(0, 40)}"`;
        // The run bar can grow in the frame we measure in (an estimate arriving from the
        // worker): rAF callbacks run before that frame's ResizeObserver, which moves the
        // focus clear before anything is painted. So what is still wrong two frames later
        // counts, not the unpainted moment.
        let problems = check(e);
        if (problems.length) {
          await frames();
          problems = check(e);
        }
        if (!e.dataset.tabStop) e.dataset.tabStop = String(Math.random());
        return { key: e.dataset.tabStop, name, problems };
      }, null);
      if (!stop) continue;
      if (stops.includes(stop.key)) break; // round the page once
      stops.push(stop.key);
      if (stop.problems.length) hidden.push(`${stop.name}: ${stop.problems.join('; ')}`);
    }
    assert(stops.length > 60, `Tab reached only ${stops.length} controls`);
    assert(hidden.length === 0, `${hidden.length} of ${stops.length} focused controls not fully visible:\n${hidden.join('\n')}`);
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    await page.close();
  });
}

test('tap targets on a phone (390 px): every visible control, and a checkbox\'s hit area, is at least 44 px high and wide', async () => {
  const page = await openPage(browser(), '', { width: 390, height: 844 });
  await everyControl(page);
  const small = await page.evaluate(() => {
    const out = [];
    let n = 0;
    for (const e of document.querySelectorAll('button, select, input, summary, a[href], [tabindex]:not([tabindex="-1"])')) {
      if (e.type === 'file' || e.type === 'hidden') continue;
      const r = e.getBoundingClientRect();
      if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue; // not shown
      // A checkbox is hit through its label too.
      const hit = e.type === 'checkbox' && e.closest('label') ? e.closest('label').getBoundingClientRect() : r;
      n++;
      if (hit.height < 44 || hit.width < 44) {
        out.push(`${e.tagName.toLowerCase()}${e.type ? `[${e.type}]` : ''}${e.id ? `#${e.id}` : ''} "${(e.getAttribute('aria-label') ?? e.textContent).trim().slice(0, 30)}": ${hit.width.toFixed(0)}x${hit.height.toFixed(0)}`);
      }
    }
    return { out, n };
  });
  assert(small.n > 60, `only ${small.n} controls measured`);
  // A checkbox itself is big enough to see and aim at (the browser's 13 px is not).
  const boxes = await page.$$eval('input[type=checkbox]', (bs) => bs.filter((b) => b.getBoundingClientRect().width > 0)
    .map((b) => [b.id || b.getAttribute('aria-label'), Math.round(b.getBoundingClientRect().width)]));
  assert(boxes.length >= 4 && boxes.every(([, w]) => w >= 18), `checkboxes: ${JSON.stringify(boxes)}`);
  assert(small.out.length === 0, `${small.out.length} of ${small.n} tap targets under 44 px:\n${small.out.join('\n')}`);
  // Nothing is wider than the phone: no sideways scroll, no control cut off at the right.
  const wide = await page.evaluate(() => [document.documentElement.scrollWidth,
    ...[...document.querySelectorAll('.panel, button')].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5).map((e) => e.id || e.className)]);
  assert(wide[0] <= 390 && wide.length === 1, `wider than 390 px: ${wide}`);
  await page.screenshot({ path: join(ARTIFACTS, 'phone-tap-targets.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});
