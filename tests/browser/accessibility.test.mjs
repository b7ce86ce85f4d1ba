// Keyboard and screen reader: Tab reaches Load and Run, Enter in a box never runs, every
// control is named, charts are images with a text alternative, dark mode.
import { assert, browser, openPage, test } from './harness.mjs';
import { QUICK_TEXT, setField } from './helpers.mjs';

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
