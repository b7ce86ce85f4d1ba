// WebGPU: unavailable (the page offers the CPU), a tiny bench on it, its fused kernels.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, launch, openPage, test } from './harness.mjs';
import { runAndDownload, TINY, tinyConfig } from './helpers.mjs';

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
  // The engine's own check (crates/engine/src/fused_check.rs) on this browser's WebGPU device: both arms'
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
    `vs ${u.dispatches_idea}; ms per step dense ${f.ms_dense.toFixed(0)} vs ${u.ms_dense.toFixed(0)}; max |diff| ${c.max_abs_diff}, ` +
    `classification ${c.classification_max_abs_diff}`);
  assert(c.max_abs_diff <= 1e-4, `fused vs unfused on WebGPU: ${c.max_abs_diff}`);
  // A classification (mnist1d's shape, the cross-entropy at the last step): fused step and
  // reversal kernels with the tensor-op VJP against tensor ops alone.
  assert(c.classification_max_abs_diff <= 1e-4, `classification, fused vs unfused: ${c.classification_max_abs_diff}`);
  assert(f.dispatches_dense * 10 <= u.dispatches_dense, `dense: ${f.dispatches_dense} vs ${u.dispatches_dense}`);
  assert(f.dispatches_idea * 10 <= u.dispatches_idea, `idea: ${f.dispatches_idea} vs ${u.dispatches_idea}`);
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
