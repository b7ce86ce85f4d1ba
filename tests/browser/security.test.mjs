// The page under the server's headers (scripts/serve.mjs): the CSP and nosniff reach the
// page and its worker, the CSP is enforced, and the page works within it. (Every test's page
// reports a CSP violation as an error: harness.mjs.)
import { assert, BASE, browser, openPage, test } from './harness.mjs';
import { loadReport, QUICK_TEXT, runAndDownload, TINY, tinyConfig } from './helpers.mjs';

test('CSP: the page and its worker get it, it blocks inline script, and a run, charts and export stay within it', async () => {
  const page = await openPage(browser(), '?workers=2');
  const doc = await page.request.get(BASE);
  const csp = doc.headers()['content-security-policy'];
  assert(csp?.includes("script-src 'self' 'wasm-unsafe-eval'") && doc.headers()['x-content-type-options'] === 'nosniff', `headers ${JSON.stringify(doc.headers())}`);
  const worker = await page.request.get(`${BASE}www/worker.js`);
  assert(worker.headers()['content-security-policy'] === csp, 'the worker script has no CSP');
  // Enforced: an injected inline script does not run, and the violation is reported.
  const ran = await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = true';
    document.body.append(s);
    return window.__inline === true;
  });
  await page.waitForTimeout(200);
  assert(!ran && page.errors.some((e) => e.includes('CSP violation: script-src')), `inline script ran: ${ran}; ${page.errors}`);
  page.errors.length = 0;
  // Within it: a bench on 2 CPU workers (their wasm), a report's charts, PNG and SVG export.
  await tinyConfig(page, TINY);
  await runAndDownload(page, 300_000);
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  for (const kind of ['png', 'svg']) {
    const [d] = await Promise.all([page.waitForEvent('download'), page.click(`button[data-chart=per_seed][data-export=${kind}]`)]);
    assert(d.suggestedFilename() === `rdbench-per_seed.${kind}`, d.suggestedFilename());
  }
  await page.click('#load-example');
  await page.waitForFunction(() => document.getElementById('source').textContent.includes('seed report'));
  assert(page.errors.length === 0, `page errors: ${page.errors}`);
});
