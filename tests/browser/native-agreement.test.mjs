// The browser (wasm simd128: products as a multiply then an add) against the native CLI
// (AVX-512 FMA products) on the same config, docs/SPEC.md "Native and browser": the baseline's
// runs agree to rounding; the idea's do not, because each of its training steps at k > 1
// runs its gradient through chained reversals that amplify the products' last-bit
// differences, so its trajectories part from the first epoch on. What must agree is the
// verdict, p, the wins and the mechanism's conditions. The quick preset runs in the browser
// here; the seed preset's browser report (4-6 min in the browser) is committed, stripped to
// what is compared (tests/fixtures/browser_seed_report.json; RDBENCH_BLESS=1 runs the preset
// and rewrites it), and checked against a native run of its config.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, assert, browser, openPage, test } from './harness.mjs';
import { nativeReport, runAndDownload } from './helpers.mjs';

/** The baseline's runs: every metric and loss-curve value within this, relative. Measured on
 *  the seed preset: 1.7e-7. */
const BASELINE_REL = 1e-6;
/** Probes whose regime (defect <= τ or above) may differ, as a share of all probes: the idea's
 *  diverged trajectories cross τ at other epochs. Measured on the seed preset: 1 of 128. */
const REGIME_SHARE = 0.05;
const FIXTURE = join(ROOT, 'tests/fixtures/browser_seed_report.json');

const rel = (a, b) => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), 1e-30));
const key = (r) => `${r.arm}/${r.phase}/${r.lr}/${r.seed}`;
const CONDITIONS = ['a_both_regimes', 'b_spearman_positive', 'c_low_defect_cosine', 'd_high_defect_needs_dense'];
const lowDefect = (report) => report.runs.flatMap((r) => r.probes).filter((p) => p.defect_mean <= report.config.tau).length;

/** What is compared of a report, the rest dropped. */
export function stripped(report) {
  return {
    config: report.config,
    environment: { platform: report.environment.platform, backend: report.environment.backend, build: report.environment.build },
    comparison: report.comparison,
    mechanism: Object.fromEntries(CONDITIONS.map((c) => [c, { holds: report.mechanism[c].holds, detail: report.mechanism[c].detail }])),
    idea_mean: report.idea.mean,
    runs: report.runs.map((r) => ({
      arm: r.arm, phase: r.phase, lr: r.lr, seed: r.seed, metric: r.metric, loss_curve: r.loss_curve,
      probes: r.probes.map((p) => ({ epoch: p.epoch, k: p.k, defect_mean: p.defect_mean, chained: p.chained })),
    })),
  };
}

/** Where a native and a browser report of one config part, and what they must share:
 *  { failures, measured }. */
export function agreement(native, web) {
  const failures = [];
  const measured = { baseline_rel: 0, idea_metric_rel: 0, k_flips: 0, first_idea_epoch_rel: 0 };
  const webRuns = new Map(web.runs.map((r) => [key(r), r]));
  for (const r of native.runs) {
    const o = webRuns.get(key(r));
    if (!o) { failures.push(`${key(r)} missing in the browser report`); continue; }
    if (r.arm === 'baseline') {
      const worst = Math.max(rel(r.metric, o.metric), ...r.loss_curve.map((v, i) => rel(v, o.loss_curve[i])));
      measured.baseline_rel = Math.max(measured.baseline_rel, worst);
      if (!(worst <= BASELINE_REL)) failures.push(`${key(r)}: the baseline differs by ${worst} relative (bound ${BASELINE_REL})`);
    } else {
      measured.idea_metric_rel = Math.max(measured.idea_metric_rel, rel(r.metric, o.metric));
      measured.first_idea_epoch_rel = Math.max(measured.first_idea_epoch_rel, rel(r.loss_curve[0], o.loss_curve[0]));
      measured.k_flips += r.probes.filter((p, i) => p.k !== o.probes[i]?.k).length;
      // The first probe sees the same untrained weights: its interval is the same.
      if (r.probes[0]?.k !== o.probes[0]?.k) failures.push(`${key(r)}: the first probe's k ${r.probes[0]?.k} vs ${o.probes[0]?.k}`);
    }
  }
  for (const f of ['verdict', 'idea_wins', 'n_pairs', 'p_value', 'system_worked']) {
    if (native.comparison[f] !== web.comparison[f]) failures.push(`comparison.${f}: ${native.comparison[f]} vs ${web.comparison[f]}`);
  }
  for (const c of CONDITIONS) {
    if (native.mechanism[c].holds !== web.mechanism[c].holds) failures.push(`mechanism ${c}: ${native.mechanism[c].holds} vs ${web.mechanism[c].holds}`);
  }
  const probes = native.runs.reduce((n, r) => n + r.probes.length, 0);
  measured.regime_moved = Math.abs(lowDefect(native) - lowDefect(web));
  if (measured.regime_moved > REGIME_SHARE * probes) failures.push(`${measured.regime_moved} of ${probes} probes changed regime`);
  return { failures, measured };
}

/** Run preset `name` on the CPU backend in the browser and download its report. */
async function browserPreset(name, timeout) {
  const page = await openPage(browser());
  await page.click(`#preset-${name}`);
  await page.selectOption('#backend', 'cpu');
  await page.click('#run');
  // A bench estimated above the page's threshold asks first (before it starts, or once the
  // engine has measured it): go on.
  for (const ready of ['running', 'backendInfo']) {
    await page.waitForFunction((k) => window.rdbench.state[k] || document.getElementById('confirm-run')?.open, ready, { timeout });
    if (await page.evaluate(() => document.getElementById('confirm-run')?.open)) await page.click('#confirm-start');
  }
  const { report } = await runAndDownload(page, timeout, { clicked: true });
  await page.close();
  return report;
}

function check(name, native, web) {
  const { failures, measured } = agreement(native, web);
  console.log(`  ${name}: native vs browser ${JSON.stringify(measured)}`);
  assert(web.environment.platform === 'wasm' && native.environment.platform === 'native', 'one report from each side');
  assert(failures.length === 0, `${name}: ${failures.join('; ')}`);
}

test('quick preset: the browser and the native CLI agree on the verdict; the baseline to rounding', async () => {
  const web = stripped(await browserPreset('quick', 600_000));
  check('quick', stripped(nativeReport(web.config)), web);
});

test('seed preset: a browser report (committed) and the native CLI agree on the verdict; the baseline to rounding', async () => {
  if (process.env.RDBENCH_BLESS) {
    writeFileSync(FIXTURE, `${JSON.stringify(stripped(await browserPreset('seed', 4 * 3600_000)))}\n`);
  }
  const web = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  check('seed', stripped(nativeReport(web.config)), web);
});
