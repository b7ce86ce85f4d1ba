// Browser end-to-end tests: the served app in Debian's Chromium driven by playwright-core.
// Needs `bash scripts/build-web.sh` (www/pkg) and the native CLI (cargo build --release).
// Screenshots go to test-artifacts/. Prints "N passed, N failed" at the end.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createAppServer } from '../../scripts/serve.mjs';
import { instrumentTests } from './instrument.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const ARTIFACTS = join(ROOT, 'test-artifacts');
const TARGET = process.env.CARGO_TARGET_DIR ?? join(process.env.HOME, '.cache/rdbench-target');
const CLI = join(TARGET, 'release/rdbench');
const REFERENCE = JSON.parse(readFileSync(join(ROOT, 'www/examples/seed_bench_report.json'), 'utf8'));
const only = process.argv[2];
mkdirSync(ARTIFACTS, { recursive: true });

// ------------------------------------------------------------------ harness
const tests = [];
const test = (name, fn) => tests.push({ name, fn });
function assert(cond, msg) { if (!cond) throw new Error(msg); }
function assertClose(a, b, rel, msg) {
  assert(Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-12), `${msg}: ${a} vs ${b}`);
}

const server = createAppServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const BASE = `http://127.0.0.1:${server.address().port}/`;

const browsers = [];
async function launch(extra = []) {
  const dir = mkdtempSync(join(tmpdir(), 'rdbench-chromium-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    ignoreDefaultArgs: true,
    args: [
      '--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${dir}`, '--remote-debugging-pipe',
      '--hide-scrollbars', '--mute-audio', ...extra,
    ],
  });
  browsers.push({ browser, dir });
  return browser;
}

/** A fresh page with error collection. */
async function openPage(browser, hash = '') {
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1440, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  await page.goto(BASE + hash);
  await page.waitForFunction(() => window.rdbench?.timings?.interactive);
  return page;
}

// ------------------------------------------------------------------ helpers
/** Key paths in document order; array items and idea_sweep's lr keys collapse. */
function keyPaths(v, path = '', out = []) {
  if (Array.isArray(v)) v.forEach((c) => keyPaths(c, `${path}[*]`, out));
  else if (v && typeof v === 'object') {
    for (const [k, c] of Object.entries(v)) {
      const p = path === 'idea_sweep' ? 'idea_sweep.*' : path ? `${path}.${k}` : k;
      if (!out.includes(p)) out.push(p);
      keyPaths(c, p, out);
    }
  }
  return out;
}

async function setField(page, id, value) {
  await page.fill(`#${id}`, String(value));
}

/** The config schema straight from the charts wasm, independent of what the page built. */
async function schemaOf(page) {
  return page.evaluate(async () => {
    const m = await import('/www/pkg/rdbench_page.js');
    await m.default();
    return JSON.parse(m.config_schema());
  });
}

/** The page URL's hash parameters, once the page has written its latest state there
 *  (it coalesces writes to at most one per 100 ms). */
async function hashParams(page) {
  await page.waitForFunction(() => location.hash === window.rdbench.controls.hash(), null, { timeout: 2000 });
  return new URLSearchParams(new URL(page.url()).hash.slice(1));
}

/** What Run would send now ({config, backend}, or null while a control is invalid). */
const nextStart = (page) => page.evaluate(() => window.rdbench.nextStart());

/** Deep equality of JSON values, object key order aside. */
const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object'
  ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));

/** Configure a tiny bench through the controls. */
async function tinyConfig(page, { seeds, sweep, lrs, epochs, batch, hidden, backend }) {
  await setField(page, 'n_seeds', seeds);
  await setField(page, 'n_sweep_seeds', sweep);
  await setField(page, 'epochs', epochs);
  await setField(page, 'batch_size', batch);
  await setField(page, 'hidden_size', hidden);
  // lr grid: remove rows down to one, then set and add values.
  while ((await page.locator('#lr-list .lr-row').count()) > 1) {
    await page.locator('#lr-list .lr-row button').first().click();
  }
  await setField(page, 'lr-0', lrs[0]);
  for (let i = 1; i < lrs.length; i++) {
    await page.click('#lr-add');
    await setField(page, `lr-${i}`, lrs[i]);
  }
  await page.selectOption('#backend', backend);
}

async function runAndDownload(page, timeout) {
  const t0 = Date.now();
  await page.click('#run');
  await page.waitForSelector('body[data-report=shown]', { timeout });
  const wall = (Date.now() - t0) / 1000;
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const text = readFileSync(await download.path(), 'utf8');
  return { text, report: JSON.parse(text), wall };
}

/** Every number shown in the verdict card equals the report's. */
async function checkCard(page, report) {
  const shown = await page.$$eval('#card [data-key]', (els) =>
    Object.fromEntries(els.map((e) => [e.dataset.key, JSON.parse(e.dataset.value)])));
  const env = report.environment ?? {};
  const expect = {
    verdict: report.comparison.verdict,
    p_value: report.comparison.p_value,
    delta_mean: report.comparison.delta_mean,
    delta_ci95: report.statistics?.delta_mean_ci95,
    idea_wins: report.comparison.idea_wins,
    n_pairs: report.comparison.n_pairs,
    baseline_mean: report.baseline.full.mean,
    idea_mean: report.idea.mean,
    wilcoxon_p: report.statistics?.wilcoxon?.p_value,
    effect_size_dz: report.statistics?.effect_size_dz,
    best_lr_baseline: report.baseline.best_cfg.lr,
    memory_saved_fraction: report.memory?.saved_fraction,
    wall_time_s: env.wall_time_s,
    backend: env.backend,
    mechanism_confirmed: report.mechanism_signature.confirmed,
  };
  for (const [key, want] of Object.entries(expect)) {
    if (want === undefined || want === null) continue;
    assert(key in shown, `card does not show ${key}`);
    assert(JSON.stringify(shown[key]) === JSON.stringify(want), `card ${key}: ${JSON.stringify(shown[key])} vs report ${JSON.stringify(want)}`);
  }
  const verdictText = await page.textContent('#verdict');
  assert(verdictText.includes(report.comparison.verdict), 'verdict text');
  const winsText = await page.textContent('#card [data-key=idea_wins]');
  assert(winsText === `${report.comparison.idea_wins}/${report.comparison.n_pairs}`, `wins text ${winsText}`);
}

function nativeReport(config) {
  const out = join(mkdtempSync(join(tmpdir(), 'rdbench-native-')), 'report.json');
  execFileSync(CLI, ['run', '--quiet', '--out', out, '--seeds', String(config.n_seeds), '--sweep-seeds', String(config.n_sweep_seeds),
    '--lrs', config.lrs.join(','), '--epochs', String(config.epochs), '--batch', String(config.batch_size),
    '--hidden', String(config.hidden_size), '--tau', String(config.tau), '--k-max', String(config.k_max),
    '--policy', config.policy, '--backend', 'flex'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return JSON.parse(readFileSync(out, 'utf8'));
}

async function canvasesDrawn(page) {
  return page.$$eval('.charts canvas', (cs) => cs.map((c) => {
    const ctx = c.getContext('2d');
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 0; i < data.length; i += 16) if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) ink++;
    return { id: c.id, drawn: c.dataset.drawn === 'true', ink };
  }));
}

// ------------------------------------------------------------------ tests
let cpuBrowser;
const TINY = { seeds: 2, sweep: 1, lrs: [0.01], epochs: 1, batch: 64, hidden: 8, backend: 'cpu' };

instrumentTests({ test, assert, openPage, browser: () => cpuBrowser, ROOT, ARTIFACTS, REFERENCE, setField });

test('the page paints at once and draws the seed report', async () => {
  const page = await openPage(cpuBrowser);
  const paint = await page.evaluate(() => performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
  await page.click('#load-example');
  await page.waitForSelector('body[data-report=shown]');
  const charts = await canvasesDrawn(page);
  for (const c of charts) assert(c.drawn && c.ink > 50, `${c.id} not drawn (${c.ink} ink samples)`);
  const t = await page.evaluate(() => window.rdbench.timings);
  const fcp = Object.fromEntries(paint)['first-contentful-paint'];
  console.log(`    first contentful paint ${fcp?.toFixed(0)} ms, charts module ready ${t.chartsReady?.toFixed(0)} ms, seed report drawn ${t.chartDrawn?.toFixed(0)} ms`);
  assert(await page.isVisible('#card'), 'card shown');
  assert((await page.textContent('#verdict')).includes('no significant win'), 'verdict');
  await checkCard(page, REFERENCE);
  await page.screenshot({ path: join(ARTIFACTS, 'seed-report.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('bad URL values are reported and replaced by defaults', async () => {
  const page = await openPage(cpuBrowser, '#n_seeds=abc&lrs=-1,0.01&epochs=0&tau=foo&backend=quantum&bogus=1&k_max=16');
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

test('an invalid value typed in a control blocks Run and names the field', async () => {
  const page = await openPage(cpuBrowser);
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
  const page = await openPage(cpuBrowser);
  await setField(page, 'lr-0', '0');
  await setField(page, 'lr-1', '-1');
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
  const page = await openPage(cpuBrowser);
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

test('a long slider drag leaves the URL at the last position', async () => {
  // Chromium drops history updates past 200 in 10 s; the page must still end on the last state.
  const page = await openPage(cpuBrowser);
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
  const page = await openPage(cpuBrowser);
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

test('every knob of config_schema() has a labelled control that drives the config and the hash', async () => {
  const page = await openPage(cpuBrowser);
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
      const cands = k.kind === 'int' ? [k.default + 1, k.default - 1] : [k.default * 2, k.default / 2];
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

test('presets come from the schema and set every control', async () => {
  const page = await openPage(cpuBrowser);
  const schema = await schemaOf(page);
  assert(schema.presets.length >= 1, 'no presets');
  for (const p of schema.presets) {
    const button = page.locator(`#preset-${p.name}`);
    assert((await button.textContent()) === p.label, `preset ${p.name} label`);
    await setField(page, 'epochs', '7');
    await button.click();
    const next = await nextStart(page);
    assert(next && same(next.config, p.config), `preset ${p.name}: ${JSON.stringify(next?.config)}`);
    assert(Number((await hashParams(page)).get('epochs')) === p.config.epochs, `preset ${p.name}: hash`);
  }
});

test('malformed and hostile report files give clear errors and no markup', async () => {
  const page = await openPage(cpuBrowser);
  await page.setInputFiles('#load-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"bench_version": 1, ') });
  await page.waitForFunction(() => !document.getElementById('load-error').hidden);
  let text = await page.textContent('#load-error');
  assert(text.includes('broken.json') && text.includes('not valid JSON'), `load error: ${text}`);
  await page.setInputFiles('#load-file', { name: 'array.json', mimeType: 'application/json', buffer: Buffer.from('[1,2,3]') });
  await page.waitForFunction(() => document.getElementById('load-error').textContent.includes('array.json'));
  const payload = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
  const scripts = await page.$$eval('script', (s) => s.length);
  const load = async (name, report) => {
    await page.setInputFiles('#load-file', { name, mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(report)) });
    await page.waitForFunction((n) => document.getElementById('source').textContent.includes(n)
      || document.getElementById('load-error').textContent.includes(n), name);
    await page.waitForTimeout(300);
  };
  // A verdict is one of three typed values: markup there is a schema error, named by path.
  const badVerdict = structuredClone(REFERENCE);
  badVerdict.comparison.verdict = payload;
  await load('bad-verdict.json', badVerdict);
  text = await page.textContent('#load-error');
  assert(text.includes('bad-verdict.json') && text.includes('comparison.verdict'), `problem named: ${text}`);
  // Free text fields carry markup as text only.
  const hostile = structuredClone(REFERENCE);
  hostile.mechanism_signature.low_defect_checkpoint_relation = payload;
  hostile.idea_sweep[payload] = { mean: 0.1 };
  hostile.warnings = [payload];
  await load('hostile.json', hostile);
  assert((await page.$$eval('img', (i) => i.length)) === 0, 'an <img> was injected');
  assert((await page.$$eval('script', (s) => s.length)) === scripts, 'a <script> was injected');
  assert(!(await page.evaluate(() => window.__pwned)), 'payload ran');
  const warnings = await page.textContent('#card-warnings');
  assert(warnings.includes('<script>'), `payload shown as text: ${warnings}`);
  text = await page.textContent('#card-problems');
  assert(text.includes('idea_sweep'), `problem named on the card: ${text}`);
  await page.screenshot({ path: join(ARTIFACTS, 'hostile-report.png') });
  assert(page.errors.filter((e) => !e.includes('Failed to load resource')).length === 0, `page errors: ${page.errors}`);
});

test('CPU: a tiny bench set through the controls runs, downloads, matches its card and the native CLI', async () => {
  const page = await openPage(cpuBrowser);
  await tinyConfig(page, { ...TINY, lrs: [0.003, 0.01] });
  const { text, report, wall } = await runAndDownload(page, 300_000);
  console.log(`    wasm CPU tiny bench: ${wall.toFixed(1)} s`);
  const want = keyPaths(REFERENCE);
  const got = keyPaths(report);
  assert(JSON.stringify(got.slice(0, want.length)) === JSON.stringify(want), `key order differs:\n${got.slice(0, want.length)}\nvs\n${want}`);
  assert(text.startsWith('{\n  "bench_version": 1,'), 'downloaded bytes are the engine report');
  assert(report.config.n_seeds === 2 && report.config.lrs.join() === '0.003,0.01' && report.config.hidden_size === 8, 'config from the controls');
  assert(report.environment.platform === 'wasm' && report.environment.backend === 'cpu-flex', `environment ${JSON.stringify(report.environment)}`);
  await checkCard(page, report);
  const drawn = await canvasesDrawn(page);
  for (const c of drawn) assert(c.drawn && c.ink > 50, `${c.id} not drawn`);
  await page.screenshot({ path: join(ARTIFACTS, 'cpu-run.png'), fullPage: true });
  // Same config natively. The baseline agrees within 1e-5. The idea arm trains through
  // chained GRU reversals, which amplify last-bit differences between native x86 and wasm
  // arithmetic (gemm's FMA, libm); it must choose the same intervals and agree within 1e-3.
  const native = nativeReport(report.config);
  report.baseline.full.per_seed.forEach((v, i) => assertClose(v, native.baseline.full.per_seed[i], 1e-5, `baseline seed ${i} wasm vs native`));
  report.idea.per_seed.forEach((v, i) => assertClose(v, native.idea.per_seed[i], 1e-3, `idea seed ${i} wasm vs native`));
  const ks = (r) => JSON.stringify(r.runs.map((x) => x.probes.map((p) => p.k)));
  assert(ks(report) === ks(native), 'same intervals chosen in wasm and natively');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('wasm CPU gives the native per-seed metrics (within 1e-5) for the same tiny config', async () => {
  // tau below every defect keeps k = 1 (exact BPTT) in the idea arm, so no reversal chain
  // amplifies rounding; both arms must then agree with the native CLI within 1e-5.
  const page = await openPage(cpuBrowser);
  await tinyConfig(page, { ...TINY, lrs: [0.003, 0.01] });
  await setField(page, 'tau', '0.00000001');
  const { report } = await runAndDownload(page, 300_000);
  assert(report.config.tau === 1e-8, `tau ${report.config.tau}`);
  const native = nativeReport(report.config);
  for (const [a, b, arm] of [[report.baseline.full.per_seed, native.baseline.full.per_seed, 'baseline'], [report.idea.per_seed, native.idea.per_seed, 'idea']]) {
    a.forEach((v, i) => assertClose(v, b[i], 1e-5, `${arm} seed ${i} wasm vs native`));
  }
  for (const run of report.runs) {
    const twin = native.runs.find((r) => r.arm === run.arm && r.phase === run.phase && r.lr === run.lr && r.seed === run.seed);
    assertClose(run.metric, twin.metric, 1e-5, `${run.arm} ${run.phase} lr ${run.lr} seed ${run.seed}`);
  }
  assert(report.runs.every((r) => r.probes.every((p) => p.k === 1)), 'k = 1 throughout');
});

test('the page spells no worker message type itself (protocol.js does)', async () => {
  // Read in the browser: protocol.js is a browser module (node would warn about its type).
  const page = await openPage(cpuBrowser);
  const { EVENT, REQUEST, STOP_REASON } = await page.evaluate(async () => {
    const p = await import('/www/protocol.js');
    return { EVENT: p.EVENT, REQUEST: p.REQUEST, STOP_REASON: p.STOP_REASON };
  });
  const names = new Set([...Object.values(EVENT), ...Object.values(REQUEST), ...Object.values(STOP_REASON)]);
  for (const file of ['app.js', 'controls.js', 'engine-client.js', 'results.js']) {
    const text = readFileSync(join(ROOT, 'www', file), 'utf8');
    // A message type or stop reason written where a message is built or matched.
    for (const m of text.matchAll(/(?:type\s*(?:===?|:)\s*|case\s+|reason\s*===?\s*)['"`](\w+)['"`]/g)) {
      assert(!names.has(m[1]), `www/${file} spells '${m[1]}': use protocol.js`);
    }
  }
});

test('the engine wasm has no command_export wrappers (static constructors run once)', async () => {
  const wasm = readFileSync(join(TARGET, 'wasm32-unknown-unknown/wasm-release/rdbench.wasm'));
  const text = wasm.toString('latin1');
  assert(text.includes('__wasm_call_ctors'), 'the name section is there to check');
  assert(!text.includes('command_export'), 'exports are wrapped in command_export: __wasm_call_ctors is not called from start');
});

test('cancel mid-run keeps the finished runs; the page stays usable and resumes', async () => {
  const page = await openPage(cpuBrowser);
  await tinyConfig(page, { ...TINY, lrs: [0.003, 0.01], epochs: 2 });
  await page.click('#run');
  await page.waitForFunction(() => window.rdbench.state.finishedRuns.length >= 2, null, { timeout: 300_000 });
  const t0 = Date.now();
  await page.click('#cancel');
  await page.waitForFunction(() => document.getElementById('p-phase').textContent === 'cancelled', null, { timeout: 60_000 });
  const stopS = (Date.now() - t0) / 1000;
  console.log(`    cancel took ${stopS.toFixed(2)} s`);
  const kept = await page.evaluate(() => window.rdbench.state.finishedRuns.length);
  assert(kept >= 2, `kept ${kept} runs`);
  assert((await page.textContent('#run-note')).includes(`${kept} finished run(s) are kept`), 'note says what was kept');
  assert(!(await page.isDisabled('#run')), 'Run is enabled again');
  assert((await page.textContent('#run')).includes(`Resume bench (${kept} run`), 'Run does not say it resumes');
  assert((await page.textContent('#p-eta')) === '–' && !(await page.textContent('#p-runs')).includes('in flight'), 'stale status after cancel');
  await page.screenshot({ path: join(ARTIFACTS, 'cancelled.png') });
  // Resume: the same configuration reuses the finished runs.
  const keptRuns = await page.evaluate(() => window.rdbench.state.finishedRuns);
  const { report } = await runAndDownload(page, 300_000);
  const note = await page.textContent('#run-note');
  assert(note.includes(`Reusing ${kept} finished runs`), `resumed: ${note}`);
  assert(report.environment.reused_runs >= kept, `report reused_runs ${report.environment.reused_runs}`);
  assert((await page.textContent('#card [data-key=reused_runs]')).includes(`${report.environment.reused_runs} run(s) reused`), 'card does not say the bench resumed');
  for (const run of keptRuns) {
    const same = report.runs.find((r) => r.arm === run.arm && r.phase === run.phase && r.lr === run.lr && r.seed === run.seed);
    assert(same && same.metric === run.metric, `run ${run.arm} ${run.phase} lr ${run.lr} seed ${run.seed} was not reused`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU unavailable: the page says so, offers the CPU and continues there', async () => {
  // This browser has no WebGPU adapter (no --enable-unsafe-webgpu).
  const page = await openPage(cpuBrowser);
  await tinyConfig(page, { ...TINY, backend: 'webgpu' });
  await page.click('#run');
  await page.waitForSelector('#continue-cpu:not([hidden])', { timeout: 120_000 });
  const text = await page.textContent('#banner');
  assert(text.includes('WebGPU') && text.includes('not available'), `banner: ${text}`);
  assert(!(await page.isDisabled('#run')), 'Run usable');
  await page.screenshot({ path: join(ARTIFACTS, 'webgpu-unavailable.png') });
  await page.click('#continue-cpu');
  await page.waitForSelector('body[data-report=shown]', { timeout: 300_000 });
  assert((await page.inputValue('#backend')) === 'cpu', 'switched to the CPU');
  assert(page.url().includes('backend=cpu'), 'URL follows');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: a tiny bench completes on webgpu and its first step agrees with the CPU', async () => {
  const gpuBrowser = await launch(['--enable-unsafe-webgpu']);
  const tiny = { seeds: 1, sweep: 1, lrs: [0.01], epochs: 1, batch: 320, hidden: 8 };
  const cpuPage = await openPage(cpuBrowser);
  await tinyConfig(cpuPage, { ...tiny, backend: 'cpu' });
  const cpu = await runAndDownload(cpuPage, 300_000);
  const cpuFirst = await cpuPage.evaluate(() => window.rdbench.firstProgress.losses[0]);

  const page = await openPage(gpuBrowser);
  await tinyConfig(page, { ...tiny, backend: 'webgpu' });
  const gpu = await runAndDownload(page, 540_000);
  console.log(`    WebGPU (${gpu.report.environment.adapter}) tiny bench: ${gpu.wall.toFixed(1)} s; CPU: ${cpu.wall.toFixed(1)} s`);
  assert(gpu.report.environment.backend === 'webgpu', `backend ${gpu.report.environment.backend}`);
  const gpuFirst = await page.evaluate(() => window.rdbench.firstProgress.losses[0]);
  assert(Math.abs(gpuFirst - cpuFirst) <= 1e-4, `first-step loss webgpu ${gpuFirst} vs cpu ${cpuFirst}`);
  console.log(`    first-step loss: webgpu ${gpuFirst}, cpu ${cpuFirst}`);
  const note = await page.textContent('#run-note');
  assert(/once per epoch/.test(note ?? ''), `the page does not say how GPU progress arrives: ${note}`);
  await page.screenshot({ path: join(ARTIFACTS, 'webgpu-run.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);

  // This browser's only adapter is SwiftShader, a software fallback: auto must take the CPU
  // and say why.
  const isFallback = await page.evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    return Boolean(a?.info?.isFallbackAdapter ?? a?.isFallbackAdapter);
  });
  if (isFallback) {
    const autoPage = await openPage(gpuBrowser);
    await tinyConfig(autoPage, { ...tiny, backend: 'auto' });
    const auto = await runAndDownload(autoPage, 300_000);
    assert(auto.report.environment.backend === 'cpu-flex', `auto chose ${auto.report.environment.backend}`);
    const note = await autoPage.textContent('#run-note');
    assert(/fallback/.test(note ?? ''), `no reason given for the CPU: ${note}`);
    console.log(`    auto with a fallback adapter: ${auto.report.environment.backend} — ${note}`);
  } else {
    console.log('    (this browser has a hardware adapter: the fallback rule was not exercised)');
  }
});

test('WebGPU: the fused kernels equal the tensor-op path and launch 10x fewer kernels per step', async () => {
  // The engine's own check (src/fused_check.rs) on this browser's WebGPU device: both arms'
  // gradients and losses and a reversal, fused vs unfused, and the kernel launches of one
  // training step of each arm, counted by cubecl.
  const gpuBrowser = await launch(['--enable-unsafe-webgpu']);
  const page = await openPage(gpuBrowser);
  const c = await page.evaluate(async () => {
    const m = await import('/www/pkg/rdbench_worker.js');
    await m.default();
    return m.fused_check('webgpu', 2, 1);
  });
  const f = c.fused, u = c.unfused;
  console.log(`    launches per step: dense ${f.dispatches_dense} vs ${u.dispatches_dense} unfused, idea ${f.dispatches_idea} ` +
    `vs ${u.dispatches_idea}; ms per step dense ${f.ms_dense.toFixed(0)} vs ${u.ms_dense.toFixed(0)}; max |diff| ${c.max_abs_diff}`);
  assert(c.max_abs_diff <= 1e-4, `fused vs unfused on WebGPU: ${c.max_abs_diff}`);
  assert(f.dispatches_dense * 10 <= u.dispatches_dense, `dense: ${f.dispatches_dense} vs ${u.dispatches_dense}`);
  assert(f.dispatches_idea * 10 <= u.dispatches_idea, `idea: ${f.dispatches_idea} vs ${u.dispatches_idea}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('a bench split over 2 CPU workers gives the 1-worker report and records the calibration', async () => {
  // Runs are independent, so each worker trains its slice of every population and the page
  // relays finished runs: the report is the one-worker report but for timing and counts.
  const reports = [];
  for (const workers of [1, 2]) {
    const page = await openPage(cpuBrowser, `?workers=${workers}`);
    await tinyConfig(page, { ...TINY, lrs: [0.003, 0.01], sweep: 2 });
    const { report, wall } = await runAndDownload(page, 300_000);
    console.log(`    ${workers} worker(s): ${wall.toFixed(1)} s`);
    assert(report.environment.threads === workers, `environment.threads ${report.environment.threads}`);
    const cal = report.environment.calibration;
    assert(cal.length === 1 && cal[0].backend === 'cpu-flex' && cal[0].ms_per_work_unit > 0 && cal[0].workers === workers,
      `calibration ${JSON.stringify(cal)}`);
    const info = await page.evaluate(() => window.rdbench.state.backendInfo);
    assert(info.work_total > 0 && info.workers === workers, `backend event ${JSON.stringify(info)}`);
    assert(page.errors.length === 0, `page errors: ${page.errors}`);
    reports.push(report);
  }
  const strip = (r) => {
    const v = structuredClone(r);
    for (const k of ['started_at', 'wall_time_s', 'phase_wall_time_s', 'threads', 'calibration']) delete v.environment[k];
    for (const run of v.runs) { delete run.wall_time_s; delete run.population; }
    return JSON.stringify(v);
  };
  assert(strip(reports[0]) === strip(reports[1]), 'the 2-worker report differs from the 1-worker report');
});

test('a bad ?workers value is named', async () => {
  // How auto compares the calibrated throughputs is a Rust unit test (calibrate::choose_faster).
  const page = await openPage(cpuBrowser, '?workers=zero');
  const text = await page.textContent('#banner');
  assert(text.includes('workers') && text.includes('zero'), `banner: ${text}`);
});

test('Study mode: four tiny benches, pooled conditions, chart, table, study_report.json', async () => {
  const page = await openPage(cpuBrowser);
  await tinyConfig(page, TINY);
  const t0 = Date.now();
  await page.click('#study-run');
  await page.waitForFunction(() => !document.getElementById('study-download').disabled, null, { timeout: 600_000 });
  const wall = (Date.now() - t0) / 1000;
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#study-download')]);
  const study = JSON.parse(readFileSync(await download.path(), 'utf8'));
  console.log(`    tiny study in the browser: ${wall.toFixed(1)} s`);
  assert(same(study.models, ['rnn_small', 'rev_ode_small']), `models ${study.models}`);
  assert(same(study.policies, ['one_step', 'chained']), `policies ${study.policies}`);
  assert(study.table.length === 4 && study.reports.length === 4, 'four benches');
  // Every embedded report is a bench report of its model and policy that the viewer loads.
  const loads = await page.evaluate(async (reports) => {
    const m = await import('/www/pkg/rdbench_page.js');
    await m.default();
    return reports.map((r) => { try { new m.View(JSON.stringify(r)); return [r.model, r.config.policy, 'ok']; } catch (e) { return [r.model, r.config.policy, String(e)]; } });
  }, study.reports);
  assert(same(loads.map((l) => l[2]), ['ok', 'ok', 'ok', 'ok']), `viewer: ${JSON.stringify(loads)}`);
  assert(same(loads.map((l) => `${l[0]} ${l[1]}`), study.table.map((r) => `${r.model} ${r.policy}`)), 'bench order');
  // Pooled over every idea full-run probe of the embedded reports, each condition judged.
  const probes = study.reports.flatMap((r) => r.runs.filter((x) => x.arm === 'idea' && x.phase === 'full').flatMap((x) => x.probes));
  assert(study.pooled.n_probes === probes.length && probes.length > 0, `pooled ${study.pooled.n_probes} of ${probes.length}`);
  assert(same(Object.keys(study.pooled.conditions), ['a_both_regimes', 'b_spearman_positive', 'c_low_defect_cosine', 'd_high_defect_needs_dense']), 'conditions');
  const low = probes.some((p) => p.defect_mean !== null && p.defect_mean <= study.tau);
  const high = probes.some((p) => p.defect_mean === null || p.defect_mean > study.tau);
  assert(study.pooled.conditions.a_both_regimes.holds === (low && high), 'condition (a) from the pooled probes');
  assert(study.per_model.map((m) => m.scope).join() === 'rnn_small,rev_ode_small', 'per model');
  // Measured memory is a native measurement: null in the browser, and the table says so.
  assert(study.table.every((r) => r.memory_saved_measured === null), 'no measured memory in wasm');
  const cells = await page.$$eval('#study-table tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  assert(cells.length === 4 && cells[2][0] === 'rev_ode_small' && cells[2][7] === 'not measured in the browser', `table ${JSON.stringify(cells)}`);
  const ink = await page.$eval('#study-chart', (c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 16) if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) n++;
    return n;
  });
  assert(ink > 200, `study chart not drawn (${ink})`);
  assert((await page.textContent('#study-conditions')).includes('Pooled over every bench'), 'conditions listed');
  await page.screenshot({ path: join(ARTIFACTS, 'study.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

// ------------------------------------------------------------------ run
let passed = 0;
let failed = 0;
try {
  cpuBrowser = await launch();
  for (const t of tests) {
    // A filter is a substring of the test's name, or several joined with |.
    if (only && !only.split('|').some((o) => t.name.includes(o))) continue;
    const t0 = Date.now();
    try {
      await t.fn();
      passed++;
      console.log(`ok   ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${t.name}\n     ${e?.stack ?? e}`);
    }
  }
} finally {
  for (const { browser, dir } of browsers) {
    await browser.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
