// The estimate's correction by this browser's finished benches (www/estimate.js): what is
// kept, what is refused, and the arithmetic of the corrected estimate and its range, against
// hand-derived figures. The page's number formats are stubbed (they come from the charts
// wasm, tested in Rust).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OUTCOMES_KEPT, OUTCOMES_KEY, correctionOf, estimateOf, outcomesFor, recordOutcome } from '../../www/estimate.js';
import { useFormats } from '../../www/format.js';

useFormats({ fmt_num: (v) => String(v), fmt_duration: (s) => `${s} s` });

/** A Storage stand-in. */
function memoryStorage() {
  const m = new Map();
  return { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), map: m };
}

/** A 'backend' event: 1000 units (800 to 2000), 2 ms per unit (3 at the slowest), 2 workers. */
const info = {
  backend: 'cpu-flex',
  workers: 2,
  work_total: 1000,
  work_low: 800,
  work_high: 2000,
  calibration: [{ backend: 'cpu-flex', ms_per_work_unit: 2, ms_per_work_unit_max: 3, workers: 2 }],
};

test('without outcomes the estimate is the calibration\'s: 1000 x 2 ms / 2 workers, 800 x 2 to 2000 x 3', () => {
  const e = estimateOf(info, []);
  assert.equal(e.seconds, 1);
  assert.equal(e.low, 0.8);
  assert.equal(e.high, 3);
  assert.equal(e.correction, null);
  assert.match(e.detail, /No bench has finished in this browser yet/);
});

test('the fastest trial sets the low end: 800 x 1.5 ms / 2 workers', () => {
  const e = estimateOf({ ...info, calibration: [{ ...info.calibration[0], ms_per_work_unit_min: 1.5 }] }, []);
  assert.equal(e.seconds, 1);
  assert.equal(e.low, 0.6);
  assert.equal(e.high, 3);
});

test('kept outcomes correct it: the median ratio, the range by the least and the most', () => {
  const e = estimateOf(info, [1.5, 2.5, 1.2]);
  assert.deepEqual(e.correction, { factor: 1.5, least: 1.2, most: 2.5, n: 3 });
  assert.equal(e.seconds, 1.5);
  assert.ok(Math.abs(e.low - 0.96) < 1e-12, `${e.low}`);
  assert.equal(e.high, 7.5);
  assert.match(e.detail, /Corrected × 1\.5: the median of this browser's last 3 benches on cpu-flex/);
  // An even count: the mean of the middle two.
  assert.equal(correctionOf([1, 4, 2, 3]).factor, 2.5);
});

test('the range always holds the corrected estimate', () => {
  // Ratios all below 1 on a wide range, all above it on a narrow one.
  for (const ratios of [[0.5, 0.6], [3, 3.2]]) {
    const e = estimateOf({ ...info, work_low: 990, work_high: 1010, calibration: [{ ...info.calibration[0], ms_per_work_unit_max: 2 }] }, ratios);
    assert.ok(e.low <= e.seconds && e.seconds <= e.high, JSON.stringify(e));
  }
});

test('outcomes are kept per backend, the last few only, and nonsense is refused', () => {
  const store = memoryStorage();
  assert.equal(recordOutcome('cpu-flex', 10, 15, store), 1.5);
  assert.equal(recordOutcome('webgpu', 10, 30, store), 3);
  assert.deepEqual(outcomesFor('cpu-flex', store), [1.5]);
  assert.deepEqual(outcomesFor('webgpu', store), [3]);
  // A tab left in the background, a zero or missing estimate: not a bench timed as it ran.
  assert.equal(recordOutcome('cpu-flex', 10, 500, store), null);
  assert.equal(recordOutcome('cpu-flex', 0, 5, store), null);
  assert.equal(recordOutcome('cpu-flex', undefined, 5, store), null);
  assert.deepEqual(outcomesFor('cpu-flex', store), [1.5]);
  for (let i = 0; i < OUTCOMES_KEPT + 3; i++) recordOutcome('cpu-flex', 10, 10 + i, store);
  const kept = outcomesFor('cpu-flex', store);
  assert.equal(kept.length, OUTCOMES_KEPT);
  assert.equal(kept.at(-1), (10 + OUTCOMES_KEPT + 2) / 10);
  // A damaged record reads as none, and the next outcome starts it again.
  store.setItem(OUTCOMES_KEY, '{not json');
  assert.deepEqual(outcomesFor('cpu-flex', store), []);
  assert.equal(recordOutcome('cpu-flex', 10, 12, store), 1.2);
  assert.deepEqual(outcomesFor('cpu-flex', store), [1.2]);
  // No storage (a browser that refuses it): nothing kept, nothing corrected.
  assert.equal(recordOutcome('cpu-flex', 10, 12, null), null);
  assert.deepEqual(outcomesFor('cpu-flex', null), []);
});
