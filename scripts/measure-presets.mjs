// Benchmark the page in headless Chromium: the page's estimate of a preset bench and its wall
// time from the Run click to the drawn report (plus a screenshot and the downloaded report), or with `calibrate`
// only the engine's calibration of a backend (ms per work unit, the unit of the progress bar:
// a share of one trajectory's cell evaluation, docs/SPEC.md "Progress and ETA") and the
// estimate it gives for the Seed protocol.
// With `kernels`: the fused kernels' check on WebGPU at populations 1 and 8 (kernel launches
// and ms per training step, fused and unfused) and the CPU path's ms per step at population 8.
// With `peak`: this core's f32 peak in the browser (wasm simd128 multiply + add).
// With `dispatches`: WebGPU kernel launches (cubecl's launch observer) of a whole population
// step of each arm (minibatch to optimizer) and of a probe at populations 1, 8 and 40 under
// the default config, then the default protocol's total: the counts measured at its
// populations times its steps and probes (crates/engine/src/fused_check.rs); then a step and
// a probe of rev_ode_small at populations 1, 8 (with the frontier) and 40.
// Usage: node scripts/measure-presets.mjs quick|seed|calibrate|kernels|peak|dispatches [cpu|webgpu|auto] [workers] [out-prefix]
// `workers`: CPU Web Workers the bench is split over (default: the page's, one per hardware
// thread up to 8). Needs the built app (npm run build) and Debian's chromium. Figures are in
// docs/PERF.md.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createAppServer } from './serve.mjs';

const [preset = 'quick', backend = 'cpu', workers = '', outArg] = process.argv.slice(2);
const out = outArg ?? join(tmpdir(), `rdbench-${preset}-${backend}${workers ? `-w${workers}` : ''}`);
if (!['quick', 'seed', 'calibrate', 'kernels', 'peak', 'dispatches'].includes(preset) || !['cpu', 'webgpu', 'auto'].includes(backend)
  || (workers && !/^\d+$/.test(workers))) {
  console.error('usage: node scripts/measure-presets.mjs quick|seed|calibrate|kernels|peak|dispatches [cpu|webgpu|auto] [workers] [out-prefix]');
  process.exit(2);
}
const server = createAppServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  ignoreDefaultArgs: true,
  args: ['--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', `--user-data-dir=${mkdtempSync(join(tmpdir(), 'rdbench-chromium-'))}`,
    '--remote-debugging-pipe', '--hide-scrollbars',
    ...(backend === 'cpu' && !['kernels', 'dispatches'].includes(preset) ? [] : ['--enable-unsafe-webgpu'])],
});
try {
  const page = await (await browser.newContext({ acceptDownloads: true, viewport: { width: 1440, height: 1000 } })).newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/${workers ? `?workers=${workers}` : ''}`);
  await page.waitForFunction(() => window.rdbench?.state?.loaded, null, { timeout: 300_000 });
  if (preset === 'peak') {
    // This core's f32 peak in this browser (wasm simd128, register-only), beside which the
    // native `rdbench perf` peak is read.
    // Three calls, the best kept: V8 compiles the loop with its optimising tier while the
    // first one runs.
    const runs = await page.evaluate(async () => {
      const m = await import('/www/pkg/rdbench_worker.js');
      await m.default();
      return [m.simd_peak(), m.simd_peak(), m.simd_peak()];
    });
    const best = Math.max(...runs.map((p) => p.gflops));
    console.log(`this core's f32 peak in the browser: ${best.toFixed(1)} GFLOP/s (${runs[0].unit}, register-only; ` +
      `calls: ${runs.map((p) => p.gflops.toFixed(1)).join(', ')})`);
  } else if (preset === 'dispatches') {
    // The engine's wasm on the page's own thread, WebGPU whatever the backend argument.
    await page.evaluate(async () => {
      const m = await import('/www/pkg/rdbench_worker.js');
      await m.default();
      window.rdbenchWorker = m;
    });
    for (const pop of [1, 8, 40]) {
      const d = await page.evaluate((p) => window.rdbenchWorker.dispatches('webgpu', p, false), pop);
      console.log(`dispatches pop ${d.population}: step dense ${d.step_dense}, step idea agreeing ${d.step_idea_agreeing}, ` +
        `step idea mixed ${d.step_idea_mixed}, probe ${d.probe}`);
      const kernels = (list) => list.map(([k, n]) => `${k} ${n}`).join(', ');
      console.log(`  step idea mixed by kernel: ${kernels(d.step_kernels)}`);
      console.log(`  probe by kernel: ${kernels(d.probe_kernels)}`);
    }
    const p = await page.evaluate(() => window.rdbenchWorker.protocol_dispatches('webgpu'));
    for (const d of p.measured) {
      console.log(`  measured at pop ${d.population}: step dense ${d.step_dense}, step idea mixed ${d.step_idea_mixed}, ` +
        `probe ${d.probe}, probe with the frontier ${d.probe_frontier ?? '-'}`);
      if (d.probe_frontier) console.log(`    the frontier's probe by kernel: ${d.probe_kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
    }
    for (const [label, runs, steps, probes] of p.populations) {
      console.log(`  ${label}: ${runs} runs, ${steps} population steps, ${probes} probes`);
    }
    console.log(`dispatches default protocol: ${p.total}`);
    // rev_ode_small (the default config with its model): its whole-sequence kernels.
    for (const pop of [1, 8, 40]) {
      const d = await page.evaluate(([p, f]) => window.rdbenchWorker.dispatches('webgpu', p, f, 'rev_ode_small'), [pop, pop === 8]);
      console.log(`dispatches rev_ode_small pop ${d.population}: step dense ${d.step_dense}, step idea agreeing ${d.step_idea_agreeing}, ` +
        `step idea mixed ${d.step_idea_mixed}, probe ${d.probe}, probe with the frontier ${d.probe_frontier ?? '-'}`);
      console.log(`  step idea mixed by kernel: ${d.step_kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
      console.log(`  probe by kernel: ${d.probe_kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
    }
  } else if (preset === 'kernels') {
    // The engine's wasm on the page's own thread: `fused_check` per backend and population.
    const rows = await page.evaluate(async () => {
      const m = await import('/www/pkg/rdbench_worker.js');
      await m.default();
      const out = [];
      for (const pop of [1, 8]) out.push(await m.fused_check('webgpu', pop, 2, 0));
      out.push(await m.fused_check('cpu', 8, 2, 0));
      return out;
    });
    for (const [i, c] of rows.entries()) {
      const kind = i < 2 ? 'webgpu' : 'cpu (1 worker)';
      const f = c.fused, u = c.unfused;
      console.log(`${kind} pop ${c.population}: launches per step dense ${f.dispatches_dense} (unfused ${u.dispatches_dense}, ` +
        `${(u.dispatches_dense / Math.max(1, f.dispatches_dense)).toFixed(1)}x), idea k=${c.k} ${f.dispatches_idea} (unfused ` +
        `${u.dispatches_idea}, ${(u.dispatches_idea / Math.max(1, f.dispatches_idea)).toFixed(1)}x); ms per step dense ` +
        `${f.ms_dense.toFixed(1)} (unfused ${u.ms_dense.toFixed(1)}), idea ${f.ms_idea.toFixed(1)} (unfused ` +
        `${u.ms_idea.toFixed(1)}); max |fused - unfused| ${c.max_abs_diff.toExponential(2)}`);
    }
    const [gpu8, cpu8] = [rows[1], rows[2]];
    console.log(`WebGPU / CPU per step at population 8: dense ${(gpu8.fused.ms_dense / cpu8.fused.ms_dense).toFixed(2)}x, ` +
      `idea ${(gpu8.fused.ms_idea / cpu8.fused.ms_idea).toFixed(2)}x`);
  } else {
    await page.click(`#preset-${preset === 'calibrate' ? 'seed' : preset}`);
    await page.selectOption('#backend', backend);
    if (preset === 'calibrate') {
      const info = await page.evaluate(async (b) => {
        const next = window.rdbench.nextStart();
        return window.rdbench.engine.calibrate(next.config, b);
      }, backend);
      for (const c of info.calibration) {
        const at = (units, ms) => (units * ms) / c.workers / 1000;
        const [low, high] = [at(info.work_low, c.ms_per_work_unit), at(info.work_high, c.ms_per_work_unit_max ?? c.ms_per_work_unit)];
        console.log(`calibrate ${c.backend}: ${c.ms_per_work_unit.toExponential(3)} ms per work unit on one worker ` +
          `(slowest trial ${(c.ms_per_work_unit_max ?? c.ms_per_work_unit).toExponential(3)}), ${c.workers} worker(s): ` +
          `the Seed protocol (${info.work_total} units) estimated at ${at(info.work_total, c.ms_per_work_unit).toFixed(0)} s ` +
          `(${low.toFixed(0)}–${high.toFixed(0)} s)`);
        const f = c.population;
        if (f) {
          console.log(`  ${c.backend}'s population fit (${f.runs.join(' and ')} runs): ${f.ms_per_population_unit.toExponential(3)} ms ` +
            `per unit once per population + ${f.ms_per_run_unit.toExponential(3)} ms per unit per run`);
        }
      }
      // The engine's choice is auto's only when auto was asked for; a named backend is used as asked.
      const chose = backend === 'auto' ? 'auto chose' : `asked for ${backend}, the engine uses`;
      console.log(`${chose} ${info.backend}${info.note ? `: ${info.note}` : ''}`);
    } else {
      // The page's own estimate of this bench, before Run, to set beside the wall time.
      await page.waitForFunction(() => /Estimated time ≈/.test(document.getElementById('estimate-time')?.textContent ?? ''),
        null, { timeout: 300_000 });
      const estimate = await page.evaluate(() => document.getElementById('estimate-time').textContent);
      const t0 = Date.now();
      await page.click('#run');
      // A bench estimated above the page's threshold asks (before it starts, or once the engine
      // has measured it): go on.
      // Function predicates: the page's CSP forbids evaluating strings.
      for (const ready of ['running', 'backendInfo']) {
        await page.waitForFunction((k) => window.rdbench.state[k] || document.getElementById('confirm-run')?.open, ready, { timeout: 300_000 });
        if (await page.evaluate(() => document.getElementById('confirm-run')?.open)) await page.click('#confirm-start');
      }
      await page.waitForSelector('body[data-report=shown]', { timeout: 4 * 3600_000 });
      const wall = (Date.now() - t0) / 1000;
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
      writeFileSync(`${out}.json`, readFileSync(await download.path(), 'utf8'));
      await page.screenshot({ path: `${out}.png`, fullPage: true });
      const env = JSON.parse(readFileSync(`${out}.json`, 'utf8')).environment;
      const phases = Object.entries(env.phase_wall_time_s).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ');
      console.log(`the page's estimate before Run: ${estimate}`);
      console.log(`${preset} on ${env.backend} (${env.adapter}), ${env.threads} worker(s): ${wall.toFixed(1)} s from Run ` +
        `to the drawn report; engine wall time ${env.wall_time_s.toFixed(1)} s (${phases}); report ${out}.json, screenshot ${out}.png`);
    }
  }
} finally {
  await browser.close();
  server.close();
}
