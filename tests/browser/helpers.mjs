// What the browser tests do to the page and read from it: the reports they load, the
// controls they set, the runs they start and download, the card and canvases they check.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { CLI, ROOT, assert } from './harness.mjs';

/** The seed-era reference report (www/examples). */
export const REFERENCE = JSON.parse(readFileSync(join(ROOT, 'www/examples/seed_bench_report.json'), 'utf8'));
/** A real 4-pair CLI report (docs/PAGE.md), as text and parsed. */
export const QUICK_TEXT = readFileSync(join(ROOT, 'crates/page/tests/fixtures/quick_report.json'), 'utf8');
export const QUICK = JSON.parse(QUICK_TEXT);
/** The smallest bench worth running in a test. */
export const TINY = { seeds: 2, sweep: 1, lrs: [0.01], epochs: 1, batch: 64, hidden: 8, backend: 'cpu' };

/** Key paths in document order; array items and idea_sweep's lr keys collapse. */
export function keyPaths(v, path = '', out = []) {
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

export async function setField(page, id, value) {
  await page.fill(`#${id}`, String(value));
}

/** The config schema straight from the charts wasm, independent of what the page built. */
export async function schemaOf(page) {
  return page.evaluate(async () => {
    const m = await import('/www/pkg/rdbench_page.js');
    await m.default();
    return JSON.parse(m.config_schema());
  });
}

/** The page URL's hash parameters, once the page has written its latest state there
 *  (it coalesces writes to at most one per 100 ms). */
export async function hashParams(page) {
  await page.waitForFunction(() => location.hash === window.rdbench.controls.hash(), null, { timeout: 5000 });
  return new URLSearchParams(new URL(page.url()).hash.slice(1));
}

/** What Run would send now ({config, backend}, or null while a control is invalid). */
export const nextStart = (page) => page.evaluate(() => window.rdbench.nextStart());

/** Deep equality of JSON values, object key order aside. */
const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object'
  ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
export const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));

/** Configure a tiny bench through the controls. */
export async function tinyConfig(page, { seeds, sweep, lrs, epochs, batch, hidden, backend }) {
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

/** Run (unless `clicked`: Run was pressed and its question answered), wait for the report
 *  and download it. */
export async function runAndDownload(page, timeout, { clicked = false } = {}) {
  const t0 = Date.now();
  if (!clicked) await page.click('#run');
  await page.waitForSelector('body[data-report=shown]', { timeout });
  const wall = (Date.now() - t0) / 1000;
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const text = readFileSync(await download.path(), 'utf8');
  return { text, report: JSON.parse(text), wall };
}

/** Every number shown in the verdict card equals the report's. */
export async function checkCard(page, report) {
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

export function nativeReport(config) {
  const out = join(mkdtempSync(join(tmpdir(), 'rdbench-native-')), 'report.json');
  execFileSync(CLI, ['run', '--quiet', '--out', out, '--seeds', String(config.n_seeds), '--sweep-seeds', String(config.n_sweep_seeds),
    '--lrs', config.lrs.join(','), '--epochs', String(config.epochs), '--batch', String(config.batch_size),
    '--hidden', String(config.hidden_size), '--tau', String(config.tau), '--k-max', String(config.k_max),
    '--policy', config.policy, '--track', config.track, '--seq-len', String(config.seq_len ?? 0),
    '--train-size', String(config.train_size ?? 0), '--backend', 'flex'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return JSON.parse(readFileSync(out, 'utf8'));
}

export async function canvasesDrawn(page) {
  return page.$$eval('.charts canvas', (cs) => cs.map((c) => {
    const ctx = c.getContext('2d');
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 0; i < data.length; i += 16) if (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200) ink++;
    return { id: c.id, drawn: c.dataset.drawn === 'true', note: c.dataset.drawn === 'note', ink };
  }));
}

/** Load report text through the Load control; resolves once it is shown or refused. */
export async function loadReport(page, name, text) {
  await page.setInputFiles('#load-file', { name, mimeType: 'application/json', buffer: Buffer.from(text) });
  await page.waitForFunction((n) => document.getElementById('source').textContent.includes(n)
    || document.getElementById('load-error').textContent.includes(n), name);
}

/** Is the element's box inside the viewport? */
export const inView = (page, sel) => page.$eval(sel, (e) => {
  const r = e.getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.left >= 0 && r.right <= innerWidth;
});

/** What is wrong with the labels of a drawn chart (`{width, height, labels}` as the charts
 *  wasm returns it): a label leaving the canvas or overlapping another, in words. */
export function labelProblems(chart, d) {
  const out = [];
  const L = d.labels;
  if (!L.length) out.push(`${chart}: no labels recorded`);
  L.forEach((a, i) => {
    if (a.x0 < -1 || a.y0 < -1 || a.x1 > d.width + 1 || a.y1 > d.height + 1) out.push(`${chart}: "${a.text}" leaves the ${d.width}x${d.height} canvas (${a.x0},${a.y0})-(${a.x1},${a.y1})`);
    for (const b of L.slice(i + 1)) {
      if (a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1) out.push(`${chart}: "${a.text}" overlaps "${b.text}"`);
    }
  });
  return out;
}
