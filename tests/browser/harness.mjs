// The browser tests' harness: the app served on a free port, Debian's Chromium driven by
// playwright-core, a fresh page per test, asserts, the test registry and the run, which ends
// with the line "N passed, N failed" (CI reads it). The tests themselves are the
// *.test.mjs files; run.mjs loads them and runs them.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createAppServer } from '../../scripts/serve.mjs';

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Where the tests leave their screenshots. */
export const ARTIFACTS = join(ROOT, 'test-artifacts');
export const TARGET = process.env.CARGO_TARGET_DIR ?? join(process.env.HOME, '.cache/rdbench-target');
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

const browsers = [];

/** A headless Chromium (`extra`: more command-line switches), closed by `close()`. */
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
  browsers.push({ browser, dir });
  return browser;
}

let shared = null;
/** The browser most tests share (no WebGPU), launched by `run`. */
export const browser = () => shared;

/** A fresh page (its own context: storage and history start empty) with its errors collected
 *  in `page.errors`, opened at `hash` once the page is interactive. */
export async function openPage(b, hash = '', viewport = { width: 1440, height: 1000 }) {
  const context = await b.newContext({ acceptDownloads: true, viewport });
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

/** Close every browser and the server. */
export async function close() {
  for (const { browser: b, dir } of browsers.splice(0)) {
    await b.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  server.close();
}

// ------------------------------------------------------------------ registry and run
const tests = [];

/** Register a test; they run in the order registered. */
export const test = (name, fn) => tests.push({ name, fn });

/** Run the registered tests whose name contains `filter` (or one of several joined with |),
 *  print "N passed, N failed" and close everything; returns the number failed. */
export async function run(filter) {
  let passed = 0;
  let failed = 0;
  try {
    shared = await launch();
    for (const t of tests) {
      if (filter && !filter.split('|').some((f) => t.name.includes(f))) continue;
      const t0 = Date.now();
      try {
        await t.fn();
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
