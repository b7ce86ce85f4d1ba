// The JS mirror of the worker messages (www/protocol.js) against the Rust enums: a Rust test
// writes one of every message to tests/fixtures/messages.json; here protocol.js builds the
// same messages from the same values and must give the same JSON, and its type names must be
// exactly the variants'.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { REQUEST, EVENT, STOP_REASON, request, event } from '../../www/protocol.js';

const golden = JSON.parse(readFileSync(new URL('../fixtures/messages.json', import.meta.url), 'utf8'));
const { requests, events } = golden;

test('the type names are the Rust variants', () => {
  assert.deepEqual(Object.values(REQUEST).sort(), Object.keys(requests).sort());
  assert.deepEqual(Object.values(EVENT).sort(), Object.keys(events).sort());
  assert.ok(Object.values(STOP_REASON).includes(events.stopped.reason));
});

test('every request protocol.js builds is the Rust message', () => {
  const s = requests.start;
  assert.deepEqual(
    request.start(s.config, s.backend, s.prior, s.reuse_other_backends,
      { slice: s.slice, note: s.backend_note, calibration: s.calibration, priorElapsed: s.prior_elapsed_s }),
    s,
  );
  const r = requests.resolve;
  assert.deepEqual(request.resolve(r.config, r.backend, r.workers), r);
  const c = requests.recheck;
  assert.deepEqual(request.recheck(c.report, c.selection, c.seed), c);
  assert.deepEqual(request.runs(requests.runs.runs), requests.runs);
  assert.deepEqual(request.cancel(), requests.cancel);
});

test('every event protocol.js builds is the Rust message', () => {
  assert.deepEqual(event.loaded(), events.loaded);
  const st = events.stopped;
  assert.deepEqual(event.stopped(st.reason, st.message, st.runs, st.elapsed_s, st.fraction_kept), st);
  assert.deepEqual(event.error(events.error.message, events.error.fatal), events.error);
});
