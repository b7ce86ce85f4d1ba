// The configuration in the URL: a bad value in a link stays in its field, marked, and Run
// waits for it; a key given twice is flagged; a pasted link reloads the form, back and
// forward follow, a long slider drag ends on its last state.
import { join } from 'node:path';
import { ARTIFACTS, assert, BASE, browser, openPage, test } from './harness.mjs';
import { hashParams, nextStart, same, schemaOf, setField } from './helpers.mjs';

/** The parser's errors for `texts` ({field: message}), straight from the page wasm. */
const parserErrors = (page, texts) => page.evaluate(async (t) => {
  const m = await import('/www/pkg/rdbench_page.js');
  await m.default();
  return Object.fromEntries(JSON.parse(m.parse_config(JSON.stringify(t))).errors.map((e) => [e.field, e.message]));
}, texts);

test('a bad URL value stays in its field, marked with the parser\'s message, and Run is off until it is fixed', async () => {
  const page = await openPage(browser(), '#lrs=abc');
  const want = (await parserErrors(page, { lrs: 'abc' })).lrs;
  assert(want, 'the parser accepts lrs=abc');
  assert((await page.inputValue('#lr-0')) === 'abc' && (await page.locator('#lr-list .lr-row').count()) === 1, 'lrs=abc replaced in the form');
  assert((await page.getAttribute('#lr-0', 'aria-invalid')) === 'true', 'the lr is not marked');
  assert(await page.isVisible('#lrs-error') && (await page.textContent('#lrs-error')) === want, `field message: ${await page.textContent('#lrs-error')} vs the parser's ${want}`);
  assert(await page.isDisabled('#run') && (await nextStart(page)) === null, 'Run is on with lrs=abc shown');
  assert((await page.textContent('#run-reason')).includes(want), 'Run does not say why it is off');
  const banner = await page.textContent('#banner');
  assert(await page.isVisible('#banner') && banner.includes('lrs') && banner.includes(want) && !banner.includes('default'), `banner: ${banner}`);
  assert((await hashParams(page)).get('lrs') === 'abc', 'the URL no longer says what the link said');
  await setField(page, 'lr-0', '0.02');
  assert(!(await page.isDisabled('#run')) && same((await nextStart(page)).config.lrs, [0.02]), 'fixing the lr does not free Run');
  assert(!(await page.isVisible('#lrs-error')), 'the message stays after the fix');

  // Several at once: each field keeps what the link said and shows the parser's message; a
  // select shows the link's choice, marked; what is no setting is dropped and said.
  await page.goto(BASE + '#n_seeds=abc&lrs=-1,0.01&epochs=0&tau=foo&policy=greedy&backend=quantum&bogus=1&k_max=16');
  await page.waitForFunction(() => document.getElementById('n_seeds').value === 'abc', null, { timeout: 30_000 });
  const texts = { n_seeds: 'abc', lrs: '-1,0.01', epochs: '0', tau: 'foo', policy: 'greedy', k_max: '16' };
  const errors = await parserErrors(page, texts);
  assert(same(Object.keys(errors).sort(), ['epochs', 'lrs', 'n_seeds', 'policy', 'tau']), `parser: ${JSON.stringify(errors)}`);
  for (const [key, message] of Object.entries(errors)) {
    const box = key === 'lrs' ? '#lr-0' : `#${key}`;
    assert((await page.inputValue(box)) === (key === 'lrs' ? '-1' : texts[key]), `${key} shows ${await page.inputValue(box)}`);
    assert((await page.textContent(`#${key}-error`)) === message, `${key}: ${await page.textContent(`#${key}-error`)} vs ${message}`);
  }
  assert((await page.inputValue('#lr-1')) === '0.01' && (await page.inputValue('#k_max')) === '16', 'the valid values of the link');
  for (const key of Object.keys(errors)) assert(await page.isVisible(`#${key}-error`), `${key}'s message is hidden`);
  assert((await page.inputValue('#backend')) === 'auto', 'backend');
  const all = await page.textContent('#banner');
  for (const key of ['n_seeds', 'lrs', 'epochs', 'tau', 'policy', 'backend', 'bogus']) assert(all.includes(key), `banner misses ${key}: ${all}`);
  assert(await page.isDisabled('#run'), 'Run is on');
  const hash = await hashParams(page);
  assert(hash.get('n_seeds') === 'abc' && hash.get('policy') === 'greedy' && !hash.has('bogus'), `URL: ${hash}`);
  await page.screenshot({ path: join(ARTIFACTS, 'bad-url.png') });
  const { defaults } = await schemaOf(page);
  await setField(page, 'n_seeds', '3');
  await setField(page, 'lr-0', '0.002');
  await setField(page, 'epochs', '2');
  await setField(page, 'tau', '0.1');
  assert(await page.isDisabled('#run'), 'Run is on while policy=greedy is shown');
  await page.selectOption('#policy', defaults.policy);
  assert((await page.$$eval('#policy option', (os) => os.filter((o) => o.value === 'greedy').length)) === 0, 'the link\'s choice stays offered');
  const next = await nextStart(page);
  assert(next && next.config.k_max === 16 && same(next.config.lrs, [0.002, 0.01]) && next.config.n_seeds === 3, `config: ${JSON.stringify(next?.config)}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('a key given twice in the link is flagged by name, beside its field and in the banner', async () => {
  const page = await openPage(browser(), '#epochs=3&epochs=4');
  const banner = await page.textContent('#banner');
  assert(await page.isVisible('#banner') && banner.includes('epochs') && banner.includes('"3"') && banner.includes('"4"'), `banner: ${banner}`);
  assert(await page.isVisible('#epochs-link-note'), 'no note beside the field');
  const note = await page.textContent('#epochs-link-note');
  assert(note.includes('epochs') && note.includes('2 times') && note.includes('last'), `note: ${note}`);
  assert((await page.inputValue('#epochs')) === '4', 'the field shows the last');
  assert((await page.getAttribute('#epochs', 'aria-describedby')).includes('epochs-link-note'), 'the note is not tied to the field');
  // Editing the field settles it; a link without repeats shows no note.
  await setField(page, 'epochs', '5');
  assert(!(await page.isVisible('#epochs-link-note')), 'the note stays after an edit');
  await page.goto(BASE + '#epochs=2&n_seeds=4&n_seeds=4');
  await page.waitForFunction(() => document.getElementById('epochs').value === '2', null, { timeout: 30_000 });
  assert(await page.isVisible('#n_seeds-link-note') && !(await page.isVisible('#epochs-link-note')), 'notes of the other link');
  await page.screenshot({ path: join(ARTIFACTS, 'repeated-key-url.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
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
  await page.waitForFunction(() => document.getElementById('n_seeds').value === '7', null, { timeout: 30_000 });
  assert((await page.locator('#lr-list .lr-row').count()) === 2, 'lr rows');
  assert((await page.inputValue('#lr-1')) === '0.02' && (await page.inputValue('#epochs')) === '2', 'controls');
  assert((await page.inputValue('#backend')) === 'cpu', 'backend');
  const next = await nextStart(page);
  assert(same(next.config, { ...defaults, n_seeds: 7, lrs: [0.002, 0.02], epochs: 2 }), `config ${JSON.stringify(next.config)}`);
  assert(next.backend === 'cpu', 'backend sent');
  const params = (await hashParams(page));
  for (const key of Object.keys(defaults)) assert(params.has(key), `hash misses ${key}`);
  assert(params.get('n_seeds') === '7' && params.get('lrs') === '0.002,0.02', 'hash');
  // An invalid value in a pasted link: listed in the banner, kept in its field, marked.
  await page.goto(BASE + '#n_seeds=0&epochs=3');
  await page.waitForFunction(() => document.getElementById('epochs').value === '3', null, { timeout: 30_000 });
  assert((await page.inputValue('#n_seeds')) === '0', 'n_seeds=0 not kept');
  assert((await page.getAttribute('#n_seeds', 'aria-invalid')) === 'true', 'n_seeds not marked');
  assert((await page.textContent('#banner')).includes('n_seeds'), 'banner');
  assert((await nextStart(page)) === null && await page.isDisabled('#run'), 'Run is on');
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('n_seeds').value === '7', null, { timeout: 30_000 });
  assert((await nextStart(page)).config.epochs === 2, 'back: config');
  assert(await page.isHidden('#banner'), 'back: the link banner of the other link stays');
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('epochs').value === '3', null, { timeout: 30_000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
