// Checks on the page's source and the built engine wasm.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assert, browser, openPage, ROOT, WASM_TARGET, test } from './harness.mjs';

test('the page spells no worker message type itself (protocol.js does)', async () => {
  // Read in the browser: protocol.js is a browser module (node would warn about its type).
  const page = await openPage(browser());
  const { EVENT, REQUEST, STOP_REASON } = await page.evaluate(async () => {
    const p = await import('/www/protocol.js');
    return { EVENT: p.EVENT, REQUEST: p.REQUEST, STOP_REASON: p.STOP_REASON };
  });
  const names = new Set([...Object.values(EVENT), ...Object.values(REQUEST), ...Object.values(STOP_REASON)]);
  for (const file of ['app.js', 'controls.js', 'engine-client.js', 'results.js', 'recheck.js']) {
    const text = readFileSync(join(ROOT, 'www', file), 'utf8');
    // A message type or stop reason written where a message is built or matched.
    for (const m of text.matchAll(/(?:type\s*(?:===?|:)\s*|case\s+|reason\s*===?\s*)['"`](\w+)['"`]/g)) {
      assert(!names.has(m[1]), `www/${file} spells '${m[1]}': use protocol.js`);
    }
  }
});

test('the engine wasm has no command_export wrappers (static constructors run once)', async () => {
  const wasm = readFileSync(join(WASM_TARGET, 'wasm32-unknown-unknown/wasm-release/rdbench_worker.wasm'));
  const text = wasm.toString('latin1');
  assert(text.includes('__wasm_call_ctors'), 'the name section is there to check');
  assert(!text.includes('command_export'), 'exports are wrapped in command_export: __wasm_call_ctors is not called from start');
});
