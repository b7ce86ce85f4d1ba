// A real bench on the wasm CPU backend, set through the controls, checked against its card
// and the native CLI.
import { join } from 'node:path';
import { ARTIFACTS, assert, assertClose, browser, openPage, test } from './harness.mjs';
import { canvasesDrawn, checkCard, keyPaths, nativeReport, REFERENCE, runAndDownload, same, setField, TINY, tinyConfig } from './helpers.mjs';

test('CPU: a tiny bench set through the controls runs, downloads, matches its card and the native CLI', async () => {
  const page = await openPage(browser());
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
  const page = await openPage(browser());
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
