// A bench split over CPU workers, and how auto chooses a backend.
import { assert, browser, openPage, test } from './harness.mjs';
import { runAndDownload, TINY, tinyConfig } from './helpers.mjs';

test('a bench split over 2 CPU workers gives the 1-worker report and records the calibration', async () => {
  // Runs are independent, so each worker trains its slice of every population and the page
  // relays finished runs: the report is the one-worker report but for timing and counts.
  const reports = [];
  for (const workers of [1, 2]) {
    const page = await openPage(browser(), `?workers=${workers}`);
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
    // The frontier's seconds are measurements, like a run's wall time.
    for (const p of v.frontier?.points ?? []) delete p.seconds;
    for (const p of v.runs.flatMap((run) => run.probes).flatMap((probe) => probe.frontier ?? [])) delete p.seconds;
    return JSON.stringify(v);
  };
  assert(strip(reports[0]) === strip(reports[1]), 'the 2-worker report differs from the 1-worker report');
});

test('a bad ?workers value is named', async () => {
  // How auto compares calibrated throughputs is a Rust unit test (calibrate::choose_faster).
  const page = await openPage(browser(), '?workers=zero');
  const text = await page.textContent('#banner');
  assert(text.includes('workers') && text.includes('zero'), `banner: ${text}`);
});

test('a query the page does not read is named, a setting in it pointed to the #', async () => {
  // Settings live after the # (the form's link); the query takes page options only.
  const page = await openPage(browser(), '?preset=quick&hidden_size=64&workers=2#n_seeds=2');
  const text = await page.textContent('#banner');
  assert(/\?preset: not a page option/.test(text), `banner names ?preset: ${text}`);
  assert(/\?hidden_size: a setting goes after the # \(…#hidden_size=64\)/.test(text), `banner points ?hidden_size to the #: ${text}`);
  assert(!/\?workers:/.test(text), `?workers=2 is an option: ${text}`);
  assert(await page.inputValue('#hidden_size') !== '64', 'the query set no setting');
  assert(await page.inputValue('#n_seeds') === '2', 'the hash still set its setting');
});
