// The configuration in the URL: a bad link is repaired and said, a pasted link reloads the
// form, back and forward follow, a long slider drag ends on its last state.
import { join } from 'node:path';
import { ARTIFACTS, assert, BASE, browser, openPage, test } from './harness.mjs';
import { hashParams, nextStart, same, schemaOf, setField } from './helpers.mjs';

test('bad URL values are reported and replaced by defaults', async () => {
  const page = await openPage(browser(), '#n_seeds=abc&lrs=-1,0.01&epochs=0&tau=foo&backend=quantum&bogus=1&k_max=16');
  const { defaults } = await schemaOf(page);
  const text = await page.textContent('#banner');
  for (const key of ['n_seeds', 'lrs', 'epochs', 'tau', 'backend', 'bogus']) assert(text.includes(key), `banner misses ${key}: ${text}`);
  assert((await page.inputValue('#n_seeds')) === String(defaults.n_seeds), 'n_seeds back to default');
  assert((await page.inputValue('#epochs')) === String(defaults.epochs), 'epochs back to default');
  assert((await page.inputValue('#backend')) === 'auto', 'backend back to default');
  assert(!(await page.isDisabled('#run')), 'run still possible');
  assert((await hashParams(page)).get('n_seeds') === String(defaults.n_seeds), 'URL rewritten with valid values');
  assert(!(await hashParams(page)).has('bogus'), 'unknown key dropped from the URL');
  const next = await nextStart(page);
  assert(next && same(next.config.lrs, defaults.lrs) && next.config.k_max === 16, `config sent: ${JSON.stringify(next)}`);
  await page.screenshot({ path: join(ARTIFACTS, 'bad-url.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('a long slider drag leaves the URL at the last position', async () => {
  // Chromium drops history updates past 200 in 10 s; the page must still end on the last state.
  const page = await openPage(browser());
  const last = await page.evaluate(() => {
    const s = document.getElementById('n_seeds-range');
    const [lo, hi] = [Number(s.min), Number(s.max)];
    let v = lo;
    for (let i = 0; i < 400; i++) {
      v = lo + (i % (hi - lo + 1));
      s.value = String(v);
      s.dispatchEvent(new Event('input', { bubbles: true }));
    }
    return v;
  });
  assert((await page.inputValue('#n_seeds')) === String(last), 'text follows the slider');
  assert((await nextStart(page)).config.n_seeds === last, 'config follows the slider');
  assert((await hashParams(page)).get('n_seeds') === String(last), 'hash');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('a link pasted into the open tab reloads the form; back and forward follow', async () => {
  const page = await openPage(browser());
  const { defaults } = await schemaOf(page);
  await setField(page, 'n_seeds', '5');
  await page.goto(BASE + '#n_seeds=7&lrs=0.002,0.02&epochs=2&backend=cpu');
  await page.waitForFunction(() => document.getElementById('n_seeds').value === '7', null, { timeout: 5000 });
  assert((await page.locator('#lr-list .lr-row').count()) === 2, 'lr rows');
  assert((await page.inputValue('#lr-1')) === '0.02' && (await page.inputValue('#epochs')) === '2', 'controls');
  assert((await page.inputValue('#backend')) === 'cpu', 'backend');
  const next = await nextStart(page);
  assert(same(next.config, { ...defaults, n_seeds: 7, lrs: [0.002, 0.02], epochs: 2 }), `config ${JSON.stringify(next.config)}`);
  assert(next.backend === 'cpu', 'backend sent');
  const params = (await hashParams(page));
  for (const key of Object.keys(defaults)) assert(params.has(key), `hash misses ${key}`);
  assert(params.get('n_seeds') === '7' && params.get('lrs') === '0.002,0.02', 'hash');
  // An invalid value in a pasted link: listed in the banner and replaced by its default.
  await page.goto(BASE + '#n_seeds=0&epochs=3');
  await page.waitForFunction(() => document.getElementById('epochs').value === '3', null, { timeout: 5000 });
  assert((await page.inputValue('#n_seeds')) === String(defaults.n_seeds), 'n_seeds not replaced by its default');
  assert((await page.textContent('#banner')).includes('n_seeds'), 'banner');
  assert((await nextStart(page)).config.n_seeds === defaults.n_seeds, 'config');
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('n_seeds').value === '7', null, { timeout: 5000 });
  assert((await nextStart(page)).config.epochs === 2, 'back: config');
  assert(await page.isHidden('#banner'), 'back: the link banner of the other link stays');
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('epochs').value === '3', null, { timeout: 5000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
