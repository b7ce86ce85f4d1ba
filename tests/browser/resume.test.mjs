// Cancel keeps the finished runs; Run again resumes from them.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { runAndDownload, TINY, tinyConfig } from './helpers.mjs';

test('cancel mid-run keeps the finished runs; the page stays usable and resumes', async () => {
  const page = await openPage(browser());
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
  assert((await page.textContent('#p-runs')).startsWith(`${kept}/`), `after the cancel the runs read ${await page.textContent('#p-runs')}, ${kept} kept`);
  await page.screenshot({ path: join(ARTIFACTS, 'cancelled.png') });
  // The bar drops to the share the kept runs hold (the steps in flight are lost) and says so.
  const keptPct = await page.textContent('#progress-pct');
  assert(/^\d+% kept$/.test(keptPct), `after the cancel the bar reads ${keptPct}`);
  const before = await page.evaluate(() => window.rdbench.state.elapsedBefore);
  assert(before > 0, `time before the cancel: ${before}`);
  // Resume: the same configuration reuses the finished runs. The bar starts at the kept
  // share and never goes back, and the time counts the whole bench.
  await page.evaluate(() => {
    window.__shown = [];
    window.__runText = [];
    new MutationObserver(() => {
      window.__shown.push(document.getElementById('progress-pct').textContent);
      if (window.rdbench.state.running) window.__runText.push(document.getElementById('run').textContent);
    })
      .observe(document.getElementById('progress-pct'), { childList: true, characterData: true, subtree: true });
  });
  const keptRuns = await page.evaluate(() => window.rdbench.state.finishedRuns);
  const { report, wall } = await runAndDownload(page, 300_000);
  const shown = (await page.evaluate(() => window.__shown)).map((t) => parseInt(t, 10)).filter((v) => !Number.isNaN(v));
  const first = shown.findIndex((v) => v > 0);
  assert(first >= 0 && shown[first] >= parseInt(keptPct, 10), `the resumed bar starts at ${shown[first]}%, ${keptPct} before: ${shown}`);
  assert(shown.slice(first).every((v, i, a) => i === 0 || v >= a[i - 1]), `the bar went back: ${shown}`);
  // Once the bench runs, its kept runs are its own: Run no longer offers to resume from them.
  const runText = await page.evaluate(() => window.__runText);
  assert(runText.length > 0 && runText.every((t) => t === 'Run bench'), `Run read ${[...new Set(runText)]} while the bench ran`);
  const wallTime = report.environment.wall_time_s;
  assert(wallTime >= before && wallTime <= before + wall, `wall time ${wallTime} s: ${before} s before the cancel, the resume took ${wall} s`);
  assert((await page.textContent('#card [data-key=wall_time_s]')).length > 0, 'card wall time');
  const note = await page.textContent('#run-note');
  assert(note.includes(`Reusing ${kept} finished runs`), `resumed: ${note}`);
  assert(report.environment.reused_runs >= kept, `report reused_runs ${report.environment.reused_runs}`);
  assert((await page.textContent('#card [data-key=reused_runs]')).includes(`${report.environment.reused_runs} run(s) reused`), 'card does not say the bench resumed');
  for (const run of keptRuns) {
    const same = report.runs.find((r) => r.arm === run.arm && r.phase === run.phase && r.lr === run.lr && r.seed === run.seed);
    assert(same && same.metric === run.metric, `run ${run.arm} ${run.phase} lr ${run.lr} seed ${run.seed} was not reused`);
  }
  // The live chart keeps the reused runs (dashed, from their records' epoch means) beside
  // the runs this attempt trained, and its legend counts each group.
  const series = await page.evaluate(() => window.rdbench.liveSeries);
  const reused = series.filter((s) => s.reused);
  assert(reused.length === kept && reused.every((s) => s.points.length === 2), `reused on the live chart: ${JSON.stringify(reused)}`);
  const count = (runs) => runs.reduce((m, r) => m.set(`${r.arm} ${r.phase}`, (m.get(`${r.arm} ${r.phase}`) ?? 0) + 1), new Map());
  const isKept = (r) => keptRuns.some((k) => k.arm === r.arm && k.phase === r.phase && k.lr === r.lr && k.seed === r.seed);
  const want = [...[...count(keptRuns)].map(([g, n]) => `${g}, reused (${n} run${n === 1 ? '' : 's'})`),
    ...[...count(report.runs.filter((r) => !isKept(r)))].map(([g, n]) => `${g} (${n} run${n === 1 ? '' : 's'})`)];
  await page.waitForFunction((w) => w.every((t) => window.rdbench.drawn.live?.labels.some((l) => l.text === t)), want, { timeout: 5000 })
    .catch(async () => assert(false, `live legend ${JSON.stringify(await page.evaluate(() => window.rdbench.drawn.live.labels.map((l) => l.text)))}, want ${want}`));
  await page.locator('#live').screenshot({ path: join(ARTIFACTS, 'resumed-live.png') });
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
