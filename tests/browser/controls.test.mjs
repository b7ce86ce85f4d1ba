// The configuration controls: built from the schema, every text is what runs, errors name
// their field, presets set every control.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { hashParams, nextStart, same, schemaOf, setField } from './helpers.mjs';

test('an invalid value typed in a control blocks Run and names the field', async () => {
  const page = await openPage(browser());
  await setField(page, 'n_seeds', '0');
  assert(await page.isDisabled('#run'), 'run disabled');
  assert((await page.getAttribute('#n_seeds', 'aria-invalid')) === 'true', 'field marked invalid');
  assert(await page.isVisible('#n_seeds-error'), 'the message is shown next to the field');
  assert((await page.textContent('#n_seeds-error')).includes('0'), 'the message names the value');
  assert(await page.isVisible('#run-reason'), 'the reason is shown beside Run');
  assert((await page.textContent('#run-reason')).toLowerCase().includes('paired seeds'), 'reason names the field');
  await setField(page, 'n_seeds', '3');
  assert(!(await page.isDisabled('#run')), 'run enabled again');
  assert(!(await page.isVisible('#n_seeds-error')) && !(await page.isVisible('#run-reason')), 'messages gone');
  assert((await hashParams(page)).get('n_seeds') === '3', 'URL follows the controls');
  assert((await nextStart(page)).config.n_seeds === 3, 'config follows the controls');
});

test('lr list: Run stays off while any lr is invalid, and the run sends exactly the lrs shown', async () => {
  const page = await openPage(browser());
  await setField(page, 'lr-0', '0');
  await setField(page, 'lr-1', '-1');
  // Both bad lrs are named at once.
  const both = await page.textContent('#lrs-error');
  assert(both.includes('2 bad lrs') && both.includes('"0"') && both.includes('"-1"'), `lr message: ${both}`);
  await setField(page, 'lr-1', '0.02');
  // lr-0 still shows 0: nothing may run, and nothing of the old list may linger.
  assert(await page.isDisabled('#run'), 'Run enabled while lr-0 shows 0');
  assert((await page.getAttribute('#lr-0', 'aria-invalid')) === 'true', 'lr-0 not marked');
  assert((await page.getAttribute('#lr-1', 'aria-invalid')) === 'false', 'lr-1 still marked after the fix');
  assert(await page.isVisible('#lrs-error'), 'lr message not visible');
  assert((await page.textContent('#run-reason')).toLowerCase().includes('learning rate'), 'reason names the lrs');
  assert((await nextStart(page)) === null, 'a config would be sent');
  const shown = async () => Promise.all([0, 1, 2].map((i) => page.inputValue(`#lr-${i}`)));
  assert((await hashParams(page)).get('lrs') === (await shown()).join(','), `hash ${(await hashParams(page)).get('lrs')} is not what is shown`);
  await setField(page, 'lr-0', '0.005');
  assert(!(await page.isDisabled('#run')), 'Run still off');
  assert(same((await nextStart(page)).config.lrs, [0.005, 0.02, 0.01]), 'config lrs');
  assert((await hashParams(page)).get('lrs') === '0.005,0.02,0.01', `hash lrs ${(await hashParams(page)).get('lrs')}`);
  // A list pasted into one box becomes one row per lr.
  await setField(page, 'lr-2', '0.01,0.05');
  assert((await page.locator('#lr-list .lr-row').count()) === 4 && (await page.inputValue('#lr-3')) === '0.05', 'pasted list not split into rows');
  const next = await nextStart(page);
  assert(same(next.config.lrs, [0.005, 0.02, 0.01, 0.05]), `config lrs ${next.config.lrs}`);
  // Run sends exactly that config.
  await page.selectOption('#backend', 'cpu');
  await page.click('#run');
  // A long bench asks first when its estimate is known, else once the engine has measured
  // it (the page's confirmation): this one is stopped either way.
  await page.waitForFunction(() => window.rdbench.state.sent.length > 0 || document.getElementById('confirm-run').open, null, { timeout: 60_000 });
  if (await page.evaluate(() => document.getElementById('confirm-run').open)) await page.click('#confirm-start');
  await page.waitForFunction(() => window.rdbench.state.sent.length > 0, null, { timeout: 60_000 });
  const sent = await page.evaluate(() => window.rdbench.state.sent.at(-1));
  assert(same(sent.config, next.config) && sent.backend === 'cpu', `sent ${JSON.stringify(sent)}`);
  await page.waitForFunction(() => window.rdbench.state.backendInfo || !window.rdbench.state.running, null, { timeout: 60_000 });
  if (await page.evaluate(() => document.getElementById('confirm-run').open)) await page.click('#confirm-cancel');
  else await page.click('#cancel');
  await page.waitForFunction(() => ['cancelled', 'done'].includes(document.getElementById('p-phase').textContent), null, { timeout: 120_000 });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('a number typed keystroke by keystroke: the config is what the box shows', async () => {
  const page = await openPage(browser());
  const knob = (await schemaOf(page)).knobs.find((k) => k.key === 'n_seeds');
  const type = async (text) => { await page.fill('#n_seeds', ''); await page.locator('#n_seeds').pressSequentially(text); };
  await type('12');
  assert((await nextStart(page)).config.n_seeds === 12, 'config stopped at a keystroke on the way');
  assert((await hashParams(page)).get('n_seeds') === '12', 'hash');
  // Above the slider's range but valid: the slider pins at its end and leaves the text alone.
  const big = knob.slider.max + 1;
  assert(big <= knob.max, 'schema: a value between the slider and the knob maximum exists');
  await type(String(big));
  assert((await page.inputValue('#n_seeds')) === String(big), 'the slider altered the text');
  assert(Number(await page.inputValue('#n_seeds-range')) === knob.slider.max, 'slider not pinned at its end');
  assert((await nextStart(page)).config.n_seeds === big, 'config');
  // Past the maximum: the box shows it, so nothing runs (not the 10 typed on the way).
  const tooBig = knob.max < 100 ? '100' : String(knob.max * 2);
  await type(tooBig);
  assert((await page.inputValue('#n_seeds')) === tooBig, 'box');
  assert(await page.isDisabled('#run'), 'Run enabled with an invalid value shown');
  assert((await nextStart(page)) === null, 'a config would be sent');
  assert(await page.isVisible('#n_seeds-error'), 'no visible message');
  assert((await hashParams(page)).get('n_seeds') === tooBig, 'hash is not what is shown');
  await page.screenshot({ path: join(ARTIFACTS, 'invalid-typed.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('every knob of config_schema() has a labelled control that drives the config and the hash', async () => {
  const page = await openPage(browser());
  const schema = await schemaOf(page);
  const keys = await page.$$eval('#config [data-key]', (els) => els.map((e) => e.dataset.key));
  const knobKeys = schema.knobs.map((k) => k.key);
  assert(same(keys.filter((k) => k !== 'backend').sort(), [...knobKeys].sort()), `controls ${keys} vs schema ${knobKeys}`);
  assert(same(Object.keys(schema.defaults).sort(), [...knobKeys].sort()), 'schema knobs vs defaults');
  await page.click('#advanced-summary');
  const ok = (k, v) => (k.min === null || (k.min_exclusive ? v > k.min : v >= k.min)) && (k.max === null || (k.max_exclusive ? v < k.max : v <= k.max));
  const config = async () => (await nextStart(page))?.config;
  for (const k of schema.knobs) {
    const field = page.locator(`#config [data-key="${k.key}"]`);
    assert((await field.count()) === 1, `${k.key}: ${await field.count()} controls`);
    const label = field.locator(':scope > label, :scope > legend').first();
    assert(await label.isVisible(), `${k.key}: no visible label`);
    assert((await label.textContent()).includes(k.label), `${k.key}: label ${await label.textContent()}`);
    const id = k.kind === 'lr_list' ? 'lr-0' : k.key;
    const before = await config();
    let want;
    if (k.kind === 'choice') {
      const options = await page.$$eval(`#${id} option`, (os) => os.map((o) => o.value));
      assert(same(options, k.choices.map((c) => c.value)), `${k.key}: options ${options}`);
      const other = k.choices.find((c) => c.value !== k.default);
      // A knob with one choice cannot change; its select must still carry the value sent.
      if (!other) { assert(before[k.key] === (await page.inputValue(`#${id}`)), `${k.key}: select vs config`); continue; }
      await page.selectOption(`#${id}`, other.value);
      want = other.value;
    } else if (k.kind === 'lr_list') {
      const v = [2, 5, 7].map((f) => Number((k.default[0] * f).toPrecision(2))).find((x) => !k.default.includes(x));
      await setField(page, id, v);
      want = [v, ...k.default.slice(1)];
    } else if (k.kind === 'int' || k.kind === 'float') {
      // train_size: 0 is the track's default and 1-4 would leave the sweep no validation set;
      // seq_len: 0 is the track's default and 1 is shorter than the default k_max.
      const cands = k.key === 'train_size' || k.key === 'seq_len' ? [100]
        : k.kind === 'int' ? [k.default + 1, k.default - 1] : [k.default * 2, k.default / 2];
      const v = cands.find((x) => ok(k, x));
      await setField(page, id, v);
      want = v;
    } else {
      throw new Error(`${k.key}: kind ${k.kind} is not covered by this test`);
    }
    const after = await config();
    assert(after && same(after[k.key], want), `${k.key}: config ${JSON.stringify(after?.[k.key])} after setting ${JSON.stringify(want)}`);
    const inHash = (await hashParams(page)).get(k.key);
    assert(same(k.kind === 'lr_list' ? inHash.split(',').map(Number) : typeof want === 'number' ? Number(inHash) : inHash, want), `${k.key}: hash ${inHash}`);
    if (k.slider) {
      // The slider drives the same text: move it to an end and read the text and the config.
      const end = await page.evaluate((key) => {
        const s = key === 'lrs' ? document.querySelector('#lr-list input[type=range]') : document.getElementById(`${key}-range`);
        s.value = s.max;
        s.dispatchEvent(new Event('input', { bubbles: true }));
        return Number(s.value); // the end on the slider's step grid
      }, k.key);
      const v = k.slider.log ? Number((10 ** end).toPrecision(2)) : end;
      const got = (await config())?.[k.key];
      assert(same(k.kind === 'lr_list' ? got?.[0] : got, v), `${k.key}: slider at ${end} gave ${JSON.stringify(got)}`);
      assert(Number(await page.inputValue(`#${id}`)) === v, `${k.key}: slider did not set the text`);
    }
    // Back to the default so the knobs stay independent.
    if (k.kind === 'choice') await page.selectOption(`#${id}`, k.default);
    else await setField(page, id, k.kind === 'lr_list' ? k.default[0] : k.default);
    assert(same(await config(), schema.defaults), `${k.key}: not back to the defaults`);
  }
  await page.screenshot({ path: join(ARTIFACTS, 'all-knobs.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('presets come from the schema, set every control, and show their time without hovering', async () => {
  const page = await openPage(browser());
  const schema = await schemaOf(page);
  assert(schema.presets.length >= 1, 'no presets');
  const pressed = () => page.$$eval('#presets button[aria-pressed=true]', (bs) => bs.map((b) => b.id));
  // A first visit shows the spec's defaults: the Seed protocol.
  assert(JSON.stringify(await pressed()) === '["preset-seed"]', `pressed on a first visit: ${await pressed()}`);
  // Each preset's time, from the engine's estimate of its config on the CPU backend in this browser.
  await page.waitForFunction(() => [...document.querySelectorAll('.preset-time')].every((t) => t.textContent.startsWith('≈ ')), null, { timeout: 240_000 });
  // One config, one estimate: the preset the form shows has the form's estimate, the figure
  // the line under the form gives.
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 240_000 });
  const formTime = (await page.textContent('#estimate-time')).match(/≈ (.+?) \(/)[1];
  assert(await page.textContent('#preset-seed-time') === `≈ ${formTime}`, `seed preset ${await page.textContent('#preset-seed-time')}, the form's estimate ≈ ${formTime}`);
  for (const p of schema.presets) {
    const backend = p.name === 'seed' ? (await nextStart(page)).backend : 'cpu';
    const est = await page.evaluate(([config, b]) => window.rdbench.estimateFor({ config, backend: b }), [p.config, backend]);
    const time = await page.textContent(`#preset-${p.name}-time`);
    assert(time === `≈ ${await page.evaluate(async (v) => (await import('/www/format.js')).duration(v), est.seconds)}`, `preset ${p.name}: ${time}, estimate ${est.seconds} s`);
    assert(await page.isVisible(`#preset-${p.name}-time`), `preset ${p.name}: time not shown`);
  }
  for (const p of schema.presets) {
    const button = page.locator(`#preset-${p.name}`);
    assert((await button.locator('.preset-label').textContent()) === p.label, `preset ${p.name} label`);
    await setField(page, 'epochs', '7');
    assert((await pressed()).length === 0, 'a preset is pressed for a config that is none');
    await button.click();
    const next = await nextStart(page);
    assert(next && same(next.config, p.config), `preset ${p.name}: ${JSON.stringify(next?.config)}`);
    assert(Number((await hashParams(page)).get('epochs')) === p.config.epochs, `preset ${p.name}: hash`);
    assert(JSON.stringify(await pressed()) === JSON.stringify([`preset-${p.name}`]), `pressed after ${p.name}: ${await pressed()}`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('a negative seed count is told the range it misses, not that it is no whole number', async () => {
  const page = await openPage(browser());
  const knob = (await schemaOf(page)).knobs.find((k) => k.key === 'n_seeds');
  await setField(page, 'n_seeds', '-3');
  const text = await page.textContent('#n_seeds-error');
  assert(text === `must be between ${knob.min} and ${knob.max} (got -3)`, `message: ${text}`);
  assert((await page.textContent('#run-reason')).includes(text), 'Run\'s reason differs');
  // A text that is no whole number is still told so.
  await setField(page, 'n_seeds', '1.5');
  assert((await page.textContent('#n_seeds-error')).startsWith('must be a whole number'), await page.textContent('#n_seeds-error'));
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
  await page.close();
});

test('the form at 1280 and 390 px: track names fit their select, the run bar stays short, bad lrs and a refused length are named in the page\'s words', async () => {
  for (const [tag, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]]) {
    const page = await openPage(browser(), '', { width, height });
    // Every track's name fits its select (a cut "adding (the adding problem, long me" does not).
    const fits = await page.evaluate(() => {
      const sel = document.getElementById('track');
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.font = getComputedStyle(sel).font;
      // The select's own padding and arrow take about 40 px of its width.
      return [...sel.options].map((o) => ({ text: o.text, fits: ctx.measureText(o.text).width <= sel.clientWidth - 40 }));
    });
    assert(fits.every((f) => f.fits), `${tag}: cut track names ${JSON.stringify(fits)}`);
    // The sticky bar beside Run: the estimate in one short line, the breakdown below the form.
    await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 120_000 });
    const bar = await page.evaluate(() => document.getElementById('run-bar').getBoundingClientRect().height);
    assert(bar <= 0.2 * height, `${tag}: the run bar is ${bar} px of ${height}`);
    // Two bad lrs, both named.
    await setField(page, 'lr-0', '0');
    await setField(page, 'lr-1', 'abc');
    const lrs = await page.textContent('#lrs-error');
    assert(lrs.startsWith('2 bad lrs') && lrs.includes('"0"') && lrs.includes('"abc"'), `${tag}: ${lrs}`);
    await setField(page, 'lr-0', '0.001');
    await setField(page, 'lr-1', '0.003');
    // A length that does not fit a worker: one unit (GB), no CLI flag.
    await page.selectOption('#track', 'adding');
    await setField(page, 'hidden_size', '512');
    await setField(page, 'seq_len', '20000');
    const refused = await page.textContent('#seq_len-error');
    assert(/ GB/.test(refused) && !refused.includes('GiB') && !refused.includes('--') && /the largest T that fits is \d+/.test(refused), `${tag}: ${refused}`);
    assert(page.errors.length === 0, `${tag}: page errors: ${page.errors}`);
    await page.close();
  }
});
