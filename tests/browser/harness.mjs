// The browser tests' harness: the app served on a free port, Debian's Chromium driven by
// playwright-core, a fresh page per test, asserts, the test registry and the run, which ends
// with the line "N passed, N failed" (CI reads it). The tests themselves are the
// *.test.mjs files; run.mjs loads them and runs them. What a test opens (pages, browsers with
// their GPU processes and workers) is closed when it ends, and the harness fails the test if
// any of those processes is still alive then: a software WebGPU adapter left computing slows
// every test after it.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createAppServer } from '../../scripts/serve.mjs';
import { browserPid, processTree, waitForExit } from './processes.mjs';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Where the tests leave their screenshots. */
export const ARTIFACTS = join(ROOT, 'test-artifacts');
export const TARGET = process.env.CARGO_TARGET_DIR ?? join(process.env.HOME, '.cache/rdbench-target');
/** Where the wasm builds go (scripts/target-dirs.sh). */
export const WASM_TARGET = process.env.RDBENCH_WASM_TARGET_DIR ?? `${TARGET.replace(/\/+$/, '')}-wasm`;
/** The native CLI the browser's reports are checked against. */
export const CLI = join(TARGET, 'release/rdbench');
mkdirSync(ARTIFACTS, { recursive: true });

// ------------------------------------------------------------------ asserts
export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export function assertClose(a, b, rel, msg) {
  assert(Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b), 1e-12), `${msg}: ${a} vs ${b}`);
}

// ------------------------------------------------------------------ server and browsers
const server = createAppServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
/** The app's URL. */
export const BASE = `http://127.0.0.1:${server.address().port}/`;

/** The browsers and page contexts the running test opened (closed when it ends), and the
 *  shared browser's. */
const opened = { browsers: [], contexts: [] };
let sharedEntry = null;

/** Close a browser and wait for every process it started (GPU, renderers, workers) to exit;
 *  returns the pids still alive after `ms` (none, normally). */
async function closeBrowser({ browser: b, dir, pid }, ms = 15_000) {
  const tree = pid ? processTree(pid) : [];
  await b.close().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
  return waitForExit(tree, ms);
}

/** A headless Chromium (`extra`: more command-line switches), closed when the test that
 *  launched it ends. */
export async function launch(extra = []) {
  const dir = mkdtempSync(join(tmpdir(), 'rdbench-chromium-'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    ignoreDefaultArgs: true,
    args: [
      '--headless', '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${dir}`, '--remote-debugging-pipe',
      '--hide-scrollbars', '--mute-audio', ...extra,
    ],
  });
  const entry = { browser, dir, pid: browserPid(dir) };
  assert(entry.pid, `no Chromium process with --user-data-dir=${dir}`);
  opened.browsers.push(entry);
  return browser;
}

let shared = null;
/** The browser most tests share (no WebGPU), launched by `run`. */
export const browser = () => shared;

/** A fresh page (its own context: storage and history start empty) with its errors collected
 *  in `page.errors`, opened at `hash` once the page is interactive. */
export async function openPage(b, hash = '', viewport = { width: 1440, height: 1000 }) {
  const context = await b.newContext({ acceptDownloads: true, viewport });
  opened.contexts.push(context);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  // The server sends a CSP (scripts/serve.mjs): anything it blocks is an error of the test.
  await page.addInitScript(() => document.addEventListener('securitypolicyviolation',
    (e) => console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'}`)));
  await page.goto(BASE + hash);
  await page.waitForFunction(() => window.rdbench?.timings?.interactive);
  return page;
}

/** Close what the test that just ended opened: its pages (and so their workers) and its
 *  browsers. Throws, naming them, if any of those browsers' processes outlives it. */
async function closeOpened() {
  for (const c of opened.contexts.splice(0)) await c.close().catch(() => {});
  const left = [];
  for (const e of opened.browsers.splice(0)) left.push(...(await closeBrowser(e)));
  assert(left.length === 0, `processes of this test's browsers still alive after it: ${left.join(', ')}`);
}

/** Close every browser and the server. */
export async function close() {
  await closeOpened().catch(() => {});
  if (sharedEntry) await closeBrowser(sharedEntry);
  server.close();
}

// ------------------------------------------------------------------ registry and run
const tests = [];

/** Register a test; they run in the order registered. `long`: a long equivalence, run only
 *  when asked for (`run.mjs --long`; `npm run check:webgpu`). */
export const test = (name, fn, { long = false } = {}) => tests.push({ name, fn, long });

/** Run the registered tests whose name contains `filter` (or one of several joined with |),
 *  the long ones only where `long` (`'with'`: every test, `'only'`: the long ones alone),
 *  print "N passed, N failed" and close everything; returns the number failed. */
export async function run(filter, long = 'without') {
  let passed = 0;
  let failed = 0;
  try {
    shared = await launch();
    sharedEntry = opened.browsers.pop();
    for (const t of tests) {
      if (filter && !filter.split('|').some((f) => t.name.includes(f))) continue;
      if ((long === 'without' && t.long) || (long === 'only' && !t.long)) continue;
      const t0 = Date.now();
      try {
        // The test's own failure first; a browser left alive fails it too.
        let err = null;
        try {
          await t.fn();
        } catch (e) {
          err = e;
        }
        try {
          await closeOpened();
        } catch (e) {
          err ??= e;
        }
        if (err) throw err;
        passed++;
        console.log(`ok   ${t.name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (e) {
        failed++;
        console.log(`FAIL ${t.name}\n     ${e?.stack ?? e}`);
      }
    }
  } finally {
    await close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed;
}
