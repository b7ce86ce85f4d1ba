// Report files that cannot be trusted: malformed and hostile files give clear errors and no
// markup; an error sits next to Load and says what is still shown.
import { join } from 'node:path';
import { ARTIFACTS, assert, browser, openPage, test } from './harness.mjs';
import { inView, loadReport, QUICK_TEXT, REFERENCE, setField } from './helpers.mjs';

test('malformed and hostile report files give clear errors and no markup', async () => {
  const page = await openPage(browser());
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
  // Free text fields carry markup as text only (in a report of this project's format: the
  // seed era has no warnings).
  const hostile = JSON.parse(QUICK_TEXT);
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

test('errors sit next to their cause: a field, Run, and a load error scrolled into view', async () => {
  const page = await openPage(browser());
  await page.setViewportSize({ width: 1280, height: 900 });
  await setField(page, 'epochs', '5000');
  assert(await page.isVisible('#epochs-error'), 'field message hidden');
  assert((await page.textContent('#epochs-error')).includes('1000'), 'message names the limit');
  assert(await page.isVisible('#run-reason') && await inView(page, '#run-reason'), 'Run reason not in view');
  assert(await inView(page, '#run'), 'Run not in view at 1280x900');
  await setField(page, 'epochs', '2');
  // Load a good report, scroll to the bottom, load a bad one: the error comes into view
  // and says the old report is still shown.
  await loadReport(page, 'quick_report.json', QUICK_TEXT);
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await loadReport(page, 'broken.json', '{"bench_version": 1,');
  assert(await page.isVisible('#load-error'), 'no load error');
  await page.waitForFunction(() => {
    const r = document.getElementById('load-error').getBoundingClientRect();
    return r.top >= 0 && r.bottom <= innerHeight;
  }, null, { timeout: 3000 });
  const text = await page.textContent('#load-error');
  assert(text.includes('broken.json') && text.includes('not valid JSON') && text.includes('Still showing quick_report.json'), `load error: ${text}`);
  assert((await page.textContent('#source')).includes('quick_report.json'), 'old report replaced');
  await page.screenshot({ path: join(ARTIFACTS, 'load-error.png') });
  await page.close();
});
