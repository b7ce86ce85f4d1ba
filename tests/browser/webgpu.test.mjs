// WebGPU: unavailable (the page offers the CPU), a tiny bench on it, its fused kernels.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, launch, openPage, test } from './harness.mjs';
import { runAndDownload, setField, TINY, tinyConfig } from './helpers.mjs';

/** The engine's exported check `fn(...args)` run in a page of a browser with WebGPU: its
 *  result and the page. */
async function engineOnWebgpu(fn, ...args) {
  const page = await openPage(await launch(['--enable-unsafe-webgpu']));
  const out = await page.evaluate(async ([fn, args]) => {
    const m = await import('/www/pkg/rdbench_worker.js');
    await m.default();
    return m[fn](...args);
  }, [fn, args]);
  return { page, out };
}

test('WebGPU unavailable: the page says so, offers the CPU and continues there', async () => {
  // This browser has no WebGPU adapter (no --enable-unsafe-webgpu).
  const page = await openPage(browser());
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
  const cpuPage = await openPage(browser());
  await tinyConfig(cpuPage, { ...tiny, backend: 'cpu' });
  const cpu = await runAndDownload(cpuPage, 300_000);
  // The first point of the first run on the live chart: its loss at step 1.
  const firstLoss = (p) => p.evaluate(() => {
    const [step, loss] = window.rdbench.liveSeries[0].points[0];
    return step === 1 ? loss : `the first point is at step ${step}`;
  });
  const cpuFirst = await firstLoss(cpuPage);

  const page = await openPage(gpuBrowser);
  const isFallback = await page.evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    return Boolean(a?.info?.isFallbackAdapter ?? a?.isFallbackAdapter);
  });
  await tinyConfig(page, { ...tiny, backend: 'webgpu' });
  if (isFallback) {
    // A software adapter is named before Run, with this bench's estimate on it and on the CPU.
    await page.waitForSelector('#adapter-warning:not([hidden])', { timeout: 120_000 });
    const warning = await page.textContent('#adapter-warning');
    assert(/^WebGPU here is a software adapter \(.+\): .* This bench ≈ .+ on it, ≈ .+ on the CPU backend \(\d+ workers?\)\./.test(warning), `warning: ${warning}`);
    console.log(`    ${warning}`);
    // Run asks first, naming it.
    await page.click('#run');
    await page.waitForFunction(() => document.getElementById('confirm-run').open, null, { timeout: 10_000 });
    assert((await page.textContent('#confirm-title')).includes('software WebGPU adapter'), 'the question does not name the adapter');
    await page.screenshot({ path: join(ARTIFACTS, 'webgpu-software-adapter.png') });
    await page.click('#confirm-start');
  }
  const gpu = await runAndDownload(page, 540_000, { clicked: isFallback });
  console.log(`    WebGPU (${gpu.report.environment.adapter}) tiny bench: ${gpu.wall.toFixed(1)} s; CPU: ${cpu.wall.toFixed(1)} s`);
  assert(gpu.report.environment.backend === 'webgpu', `backend ${gpu.report.environment.backend}`);
  // WebGPU is calibrated at 1 and 8 runs and its figure for this bench comes from the fit.
  const cal = gpu.report.environment.calibration.find((c) => c.backend === 'webgpu');
  const fit = cal?.population;
  assert(fit && fit.runs.join() === '1,8', `WebGPU's calibration has no population fit: ${JSON.stringify(cal)}`);
  assert(fit.ms_per_population_unit >= 0 && fit.ms_per_run_unit >= 0 && cal.ms_per_work_unit >= fit.ms_per_run_unit &&
    cal.ms_per_work_unit > 0, `fit ${JSON.stringify(cal)}`);
  console.log(`    WebGPU's fit: ${fit.ms_per_population_unit.toExponential(3)} ms per unit once per population + ` +
    `${fit.ms_per_run_unit.toExponential(3)} per run; this bench ${cal.ms_per_work_unit.toExponential(3)} ms per unit`);
  const gpuFirst = await firstLoss(page);
  assert(Math.abs(gpuFirst - cpuFirst) <= 1e-4, `first-step loss webgpu ${gpuFirst} vs cpu ${cpuFirst}`);
  console.log(`    first-step loss: webgpu ${gpuFirst}, cpu ${cpuFirst}`);
  const note = await page.textContent('#run-note');
  assert(/once per epoch/.test(note ?? ''), `the page does not say how GPU progress arrives: ${note}`);
  await page.screenshot({ path: join(ARTIFACTS, 'webgpu-run.png'), fullPage: true });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);

  // This browser's only adapter is SwiftShader, a software fallback: auto must take the CPU
  // and say why.
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

test('WebGPU: the quick preset gives the CPU verdict and the CPU baseline runs (long)', async () => {
  // The whole protocol at the quick preset on this browser's WebGPU against the CPU backend.
  // Dense BPTT is a contraction of rounding: the baseline's runs agree to ~1e-5 after every
  // epoch. An idea run's gradient goes through up to 15 reversals per checkpoint, which
  // amplify the backends' rounding (a 2.5% difference at k 16 over the preset's steps), and a
  // chained defect near tau can choose another k: the idea runs are printed, not asserted.
  const cpuPage = await openPage(browser());
  await cpuPage.click('#preset-quick');
  await cpuPage.selectOption('#backend', 'cpu');
  const cpu = await runAndDownload(cpuPage, 300_000);
  const page = await openPage(await launch(['--enable-unsafe-webgpu']));
  await page.click('#preset-quick');
  await page.selectOption('#backend', 'webgpu');
  await page.click('#run');
  // A software adapter asks first (the tiny bench test checks the question).
  await page.waitForFunction(() => document.getElementById('confirm-run').open || window.rdbench.state.running, null, { timeout: 120_000 });
  if (await page.evaluate(() => document.getElementById('confirm-run').open)) await page.click('#confirm-start');
  const gpu = await runAndDownload(page, 900_000, { clicked: true });
  const [g, c] = [gpu.report, cpu.report];
  console.log(`    quick preset: WebGPU ${gpu.wall.toFixed(0)} s (${g.environment.adapter}), CPU ${cpu.wall.toFixed(1)} s; ` +
    `verdicts ${g.comparison.verdict} / ${c.comparison.verdict}`);
  assert(g.environment.backend === 'webgpu', `backend ${g.environment.backend}`);
  assert(g.comparison.verdict === c.comparison.verdict, `verdict on WebGPU ${g.comparison.verdict}, on the CPU ${c.comparison.verdict}`);
  const key = (r) => `${r.phase} ${r.arm} lr ${r.lr} seed ${r.seed}`;
  const ks = (r) => (r.probes ?? []).map((p) => p.k).join('/');
  for (const rc of c.runs) {
    const rg = g.runs.find((r) => key(r) === key(rc));
    assert(rg, `no WebGPU run for ${key(rc)}`);
    const rel = Math.abs(rg.metric - rc.metric) / Math.abs(rc.metric);
    if (rc.arm === 'baseline') {
      assert(rel <= 1e-3, `${key(rc)}: WebGPU ${rg.metric}, CPU ${rc.metric}`);
    } else {
      console.log(`    ${key(rc)}: k ${ks(rg)} on WebGPU, ${ks(rc)} on the CPU; metric ${rg.metric.toExponential(4)} vs ` +
        `${rc.metric.toExponential(4)} (${(100 * rel).toFixed(1)}%)`);
    }
  }
  assert(page.errors.length === 0 && cpuPage.errors.length === 0, `page errors: ${page.errors} ${cpuPage.errors}`);
}, { long: true });

test('WebGPU: the fused kernels equal the tensor-op path and launch 10x fewer kernels per step', async () => {
  // The engine's own check (crates/engine/src/fused_check.rs) on this browser's WebGPU device: both arms'
  // gradients and losses and a reversal, fused vs unfused, and the kernel launches of one
  // training step of each arm, counted by cubecl. At T = 32 (the pendulum's default is 80):
  // the tensor-op path's launches grow with T, the fused path's do not.
  const { page, out: c } = await engineOnWebgpu('fused_check', 'webgpu', 2, 1, 32);
  const f = c.fused, u = c.unfused;
  console.log(`    launches per step: dense ${f.dispatches_dense} vs ${u.dispatches_dense} unfused, idea ${f.dispatches_idea} ` +
    `vs ${u.dispatches_idea}; ms per step dense ${f.ms_dense.toFixed(0)} vs ${u.ms_dense.toFixed(0)}; max |diff| ${c.max_abs_diff}, ` +
    `classification ${c.classification_max_abs_diff}`);
  assert(c.max_abs_diff <= 1e-4, `fused vs unfused on WebGPU: ${c.max_abs_diff}`);
  // A probe through the whole-sequence kernels (every state in one launch, each interval's
  // chains in one) against one stepping through the per-step kernels: same k, defects and
  // cosines within the tolerance.
  console.log(`    probe, whole-sequence vs per-step kernels: max |diff| ${c.probe_max_abs_diff}`);
  assert(c.probe_max_abs_diff <= 1e-4, `probe, whole-sequence vs per-step kernels: ${c.probe_max_abs_diff}`);
  // A classification (mnist1d's shape, the cross-entropy at the last step): fused step and
  // reversal kernels with the tensor-op VJP against tensor ops alone.
  assert(c.classification_max_abs_diff <= 1e-4, `classification, fused vs unfused: ${c.classification_max_abs_diff}`);
  assert(f.dispatches_dense * 10 <= u.dispatches_dense, `dense: ${f.dispatches_dense} vs ${u.dispatches_dense}`);
  assert(f.dispatches_idea * 10 <= u.dispatches_idea, `idea: ${f.dispatches_idea} vs ${u.dispatches_idea}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: 40 runs (more (run, row) cubes than a grid dimension holds) equal the tensor-op path (long)', async () => {
  // One cube per (run, row) used to be a 1-D grid capped at 65535 workgroups: the probe's
  // one-step reversal (79 x 32 rows per run) panicked from 26 runs up. Both arms' gradients
  // at 40 runs with mixed k, a reversal of 40 x 1,700 rows and one run's of 70,000 rows.
  const { page, out: c } = await engineOnWebgpu('large_population_check', 'webgpu', 40);
  console.log(`    ${c.population} runs, max |fused - unfused|: dense ${c.dense}, idea mixed k ${c.idea_mixed}, ` +
    `reversal of 40 x 1,700 rows ${c.reversal}, one run's 70,000 rows ${c.reversal_one_run}`);
  assert(c.population === 40, `population ${c.population}`);
  for (const part of ['dense', 'idea_mixed', 'reversal', 'reversal_one_run']) {
    assert(c[part] <= 1e-4, `fused vs unfused at 40 runs, ${part}: ${c[part]}`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
}, { long: true });

/** Log the whole-sequence cases and assert each is within tolerance of its reference. */
function checkSequenceCases(cases) {
  for (const c of cases) {
    console.log(`    ${c.model}, T ${c.t}, ${c.population} runs, ${c.task}, parts of ${c.part_rows ?? 'all'} rows: ` +
      `max |whole - reference| dense ${c.dense}, idea mixed k ${c.idea_mixed}, plans as data ${c.plans} ` +
      `(largest |reference| ${c.reference_size}); ` +
      `launches dense ${c.launches[0]}, idea ${c.launches[1]}, plans ${c.launches[2]} ` +
      `(${c.plan_kernels.map(([k, n]) => `${k} ${n}`).join(', ')})`);
    const what = `${c.model}, T ${c.t}, ${c.population} runs, ${c.task}`;
    // 1e-4 of the reference's scale, at least 1e-4: rev_ode_small does not contract, so its
    // gradients (and the rounding the two paths differ by) grow with T.
    const tol = 1e-4 * Math.max(1, c.reference_size);
    assert(c.dense <= tol && c.idea_mixed <= tol, `${what}: dense ${c.dense}, idea ${c.idea_mixed}, tolerance ${tol}`);
    assert(c.plans <= tol && c.plan_counts_agree, `${what}: plans ${c.plans}, counts agree ${c.plan_counts_agree}`);
  }
}

/** The cases at T `t` launch what the case of the same population, parts and loss at a
 *  shorter T launches (T is data, not a kernel parameter): every one of them where `all`,
 *  else those that have such a case (at least two per model; one where `all`). */
function sameLaunchesAsShorter(cases, t, all) {
  for (const model of ['rnn_small', 'rev_ode_small']) {
    let compared = 0;
    for (const c of cases.filter((c) => c.model === model && c.t === t)) {
      const short = cases.find((d) => d.model === model && d.t < c.t && d.population === c.population &&
        d.part_rows === c.part_rows && d.task === c.task);
      assert(short || !all, `a shorter case like ${model}, T ${c.t}, ${c.population} runs, parts ${c.part_rows}, ${c.task}`);
      if (!short) continue;
      compared++;
      assert(JSON.stringify(short.launches) === JSON.stringify(c.launches),
        `launches at T ${short.t} ${short.launches} vs T ${t} ${c.launches} (${model}, ${c.population} runs, parts ${c.part_rows}, ${c.task})`);
    }
    assert(compared >= (all ? 1 : 2), `${model}: ${compared} cases at T ${t} with a shorter one to compare`);
  }
}

test('WebGPU: the whole-sequence kernels equal their references at T = 3 and 80, for both models and every loss, in the same launches at both', async () => {
  // A whole training pass in a few launches (crates/engine/src/model/cube_sequence.rs for the
  // GRU, cube_rev_ode.rs for rev_ode_small) against a reference on the same device: the GRU's
  // per-step kernels (checked against the tensor ops above), rev_ode_small's tensor ops. Dense
  // BPTT and the idea's pass with the runs at k 1..4, fixed interval and revolve as plans run
  // by one kernel against the same plans stepped, at populations 1 and 8, the rows split in
  // parts where a case sets them; a regression's loss at every step, and the loss at the last
  // step alone (the adding problem's squared error, a classification's cross-entropy). T is
  // data: a pass launches as many kernels at T = 80 as at T = 3. (T = 1,000 and 40 runs: the
  // long test below.)
  const { page, out: cases } = await engineOnWebgpu('sequence_check', 'webgpu', false);
  checkSequenceCases(cases);
  assert(cases.length === 12, `cases: ${cases.length}`);
  for (const model of ['rnn_small', 'rev_ode_small']) {
    const mine = cases.filter((c) => c.model === model);
    assert(mine.some((c) => c.population === 8) && mine.some((c) => c.population === 1) &&
      mine.some((c) => c.task === 'classification') && mine.some((c) => c.task === 'last-step regression') &&
      mine.some((c) => c.task === 'regression') && mine.some((c) => c.part_rows !== null),
    `the cases asked for, ${model}`);
  }
  sameLaunchesAsShorter(cases, 80, false);
  // Parts of one row of four: four launches each of the forward pass, the backward pass and
  // the sum, where one part takes one each.
  for (const model of ['rnn_small', 'rev_ode_small']) {
    const whole = cases.find((c) => c.model === model && c.t === 3 && c.part_rows === null && c.task === 'regression');
    const parts = cases.find((c) => c.model === model && c.t === 3 && c.part_rows === 1);
    assert(parts.launches[0] === whole.launches[0] + 9, `${model}, parts of 1 row: ${parts.launches[0]} vs ${whole.launches[0]}`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: the whole-sequence kernels equal their references at T = 1,000 and 40 runs, in the launches of T = 3 and 80 (long)', async () => {
  // The cases above and the long ones: T = 1,000 (both models, every loss the GRU has, rows
  // in parts) and 40 runs; ~15 min of tensor-op references on a software adapter.
  const { page, out: cases } = await engineOnWebgpu('sequence_check', 'webgpu', true);
  checkSequenceCases(cases);
  assert(cases.length === 18, `cases: ${cases.length}`);
  for (const model of ['rnn_small', 'rev_ode_small']) {
    const mine = cases.filter((c) => c.model === model);
    assert(mine.some((c) => c.t === 1000) && mine.some((c) => c.population === 40), `the cases asked for, ${model}`);
  }
  sameLaunchesAsShorter(cases, 1000, true);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
}, { long: true });

test('WebGPU: rev_gru reverses 200 steps bit for bit and its gradient through reversal agrees with the CPU', async () => {
  // rev_gru runs in tensor ops on a GPU, whose division need not be correctly rounded: the
  // fixed-point step corrects each quotient by its remainder, so its information buffer must
  // still give h_0 back exactly (crates/engine/src/rev_gru_check.rs, against burn-flex). The
  // quotients this adapter's plain division gets wrong are counted and printed: where none
  // are (SwiftShader), the round trip checks the corrections change nothing.
  const { page, out: c } = await engineOnWebgpu('rev_gru_check', 'webgpu', 200);
  for (const t of c.round_trips) {
    console.log(`    bits ${t.bits}: ${c.steps} steps forward and back, h_0 units differing ${t.h0_mismatched} of ${t.units}; ` +
      `without the buffer h_{T-1} wrong in ${t.blind_mismatched}; h_T vs CPU ${t.h_t_vs_cpu}`);
    assert(c.steps === 200 && t.units === 64, `steps ${c.steps}, units ${t.units}`);
    assert(t.h0_mismatched === 0, `bits ${t.bits}: h_0 differs in ${t.h0_mismatched} units after ${c.steps} steps back`);
    assert(t.blind_mismatched > 0, `bits ${t.bits}: the last step forgot nothing, so the buffer was not tested`);
    assert(t.h_t_vs_cpu <= 1e-4, `bits ${t.bits}: h_T on WebGPU vs the CPU: ${t.h_t_vs_cpu}`);
  }
  console.log(`    plain float division floored: ${c.raw_division_off} of ${c.divisions} quotients off on this adapter; ` +
    `gradient through reversal vs CPU ${c.reversal_vs_cpu}, dense vs CPU ${c.dense_vs_cpu}, reversal vs dense ${c.reversal_vs_dense}`);
  // The tolerance of the fused-vs-unfused and first-step WebGPU-vs-CPU checks.
  assert(c.reversal_vs_cpu <= 1e-4, `gradient through reversal, WebGPU vs CPU: ${c.reversal_vs_cpu}`);
  assert(c.dense_vs_cpu <= 1e-4, `dense BPTT, WebGPU vs CPU: ${c.dense_vs_cpu}`);
  assert(c.reversal_vs_dense <= 1e-4, `through reversal vs dense on WebGPU: ${c.reversal_vs_dense}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: a population step, a probe and a frontier probe stay within their dispatch budgets', async () => {
  // On a real GPU each dispatch costs 25-70 us whatever its size, so the count is the step's
  // time (docs/PERF.md "WebGPU: dispatches per step"). The budgets are the measured counts:
  // a change that adds dispatches to a step fails here.
  const BUDGET = { step_dense: 9, step_idea_agreeing: 9, step_idea_mixed: 9, probe: 61, probe_frontier: 66 };
  const { page, out: d } = await engineOnWebgpu('dispatches', 'webgpu', 2, true);
  console.log(`    dispatches pop ${d.population}: step dense ${d.step_dense}, step idea agreeing ${d.step_idea_agreeing}, ` +
    `step idea mixed ${d.step_idea_mixed}, probe ${d.probe}, probe with the frontier ${d.probe_frontier}`);
  for (const [what, budget] of Object.entries(BUDGET)) {
    assert(d[what] > 0 && d[what] <= budget, `${what}: ${d[what]} dispatches, budget ${budget}`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: a rev_ode_small population step, probe and frontier probe stay within their dispatch budgets', async () => {
  // rev_ode_small's passes in its whole-sequence kernels (cube_rev_ode.rs): the same budgets
  // as the GRU's targets, at the default config with this model.
  const BUDGET = { step_dense: 10, step_idea_agreeing: 10, step_idea_mixed: 10, probe: 81, probe_frontier: 86 };
  const { page, out: d } = await engineOnWebgpu('dispatches', 'webgpu', 2, true, 'rev_ode_small');
  console.log(`    rev_ode_small dispatches pop ${d.population}: step dense ${d.step_dense}, step idea agreeing ${d.step_idea_agreeing}, ` +
    `step idea mixed ${d.step_idea_mixed}, probe ${d.probe}, probe with the frontier ${d.probe_frontier}`);
  console.log(`    step by kernel: ${d.step_kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  console.log(`    frontier probe by kernel: ${d.probe_kernels.map(([k, n]) => `${k} ${n}`).join(', ')}`);
  for (const [what, budget] of Object.entries(BUDGET)) {
    assert(d[what] > 0 && d[what] <= budget, `${what}: ${d[what]} dispatches, budget ${budget}`);
  }
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});

test('WebGPU: Cancel stops the bench within seconds while the device still has an epoch queued', async () => {
  // On a GPU the host reads the losses once per epoch (every 2 s at most); on this software
  // adapter an epoch of the baseline sweep takes ~10 s, and Cancel used to wait for it.
  const gpuBrowser = await launch(['--enable-unsafe-webgpu']);
  const page = await openPage(gpuBrowser);
  await setField(page, 'epochs', '3');
  await setField(page, 'n_seeds', '2');
  await setField(page, 'n_sweep_seeds', '1');
  await page.selectOption('#backend', 'webgpu');
  await page.waitForFunction(() => document.getElementById('estimate-time').dataset.state === 'ready', null, { timeout: 120_000 });
  await page.click('#run');
  // A software adapter asks first.
  await page.waitForFunction(() => document.getElementById('confirm-run').open || window.rdbench.state.running, null, { timeout: 10_000 });
  if (await page.evaluate(() => document.getElementById('confirm-run').open)) await page.click('#confirm-start');
  // Just after an epoch's read the next epoch is queued and the engine waits on the device.
  await page.waitForFunction(() => (window.rdbench.liveSeries[0]?.points.length ?? 0) >= 1, null, { timeout: 300_000 });
  const t0 = Date.now();
  await page.click('#cancel');
  await page.waitForFunction(() => document.getElementById('p-phase').textContent === 'cancelled', null, { timeout: 120_000 });
  const took = (Date.now() - t0) / 1000;
  console.log(`    cancel on WebGPU took ${took.toFixed(2)} s (${await page.evaluate(() => window.rdbench.state.backendInfo.adapter)})`);
  assert(took < 5, `Cancel took ${took} s`);
  assert(!(await page.isDisabled('#run')) && (await page.textContent('#run-note')).startsWith('Cancelled after'), 'the page is not ready again');
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
