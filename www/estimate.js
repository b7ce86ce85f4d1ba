// How long a bench will take, from the engine's own figures: its work units (`work_total`,
// the unit of its progress: each run's cell evaluations, the idea's probes and frontier
// included) times the milliseconds per unit the engine measured for the backend it resolves
// to (the median of a few short trials of this config's training steps in this browser, timed
// on every CPU worker at once so that they share the cores as the bench's workers will;
// WebGPU's from its cost fitted at two population sizes, for this bench's populations), over
// the workers it runs on. The range: the idea training at k = 1 throughout (`work_low`) at
// the fastest trial, to k_max throughout (`work_high`) at the slowest. Then this browser's own
// record: each bench that finishes stores its wall time over its estimate (the last
// OUTCOMES_KEPT per backend, in localStorage), and later estimates are multiplied by the
// median of those ratios, the range by their least and most, so that what the calibration
// does not see (the page's own work, load that comes and goes) is learned from what really
// happened. A bench, or a study of several, estimated above CONFIRM_ABOVE_S asks first.
// WebGPU on a software adapter is named, with the CPU's estimate beside it.
import { duration, num } from './format.js';

/** Seconds above which a bench or a study asks before it starts (or just after). */
export const CONFIRM_ABOVE_S = 120;

/** Finished benches per backend whose wall time over estimate the correction keeps. */
export const OUTCOMES_KEPT = 8;

/** Where this browser keeps them: { [backend]: [ratio, ...] }, oldest first. */
export const OUTCOMES_KEY = 'rdbench.estimate-outcomes';

/** Ratios outside this range are not a bench timed as it ran (a tab left in the
 *  background, a machine put to sleep) and are not kept. */
const RATIO_RANGE = [0.2, 10];

const storage = () => {
  try { return globalThis.localStorage ?? null; } catch { return null; }
};

/** This browser's kept ratios (wall time over estimate) for `backend`, oldest first. */
export function outcomesFor(backend, store = storage()) {
  try {
    const all = JSON.parse(store?.getItem(OUTCOMES_KEY) ?? '{}');
    const list = Array.isArray(all?.[backend]) ? all[backend] : [];
    return list.filter((r) => Number.isFinite(r) && r >= RATIO_RANGE[0] && r <= RATIO_RANGE[1]);
  } catch {
    return [];
  }
}

/** Keep a finished bench's wall time over its estimate for `backend`; returns the ratio kept,
 *  or null when it is not one (no estimate, or outside RATIO_RANGE). */
export function recordOutcome(backend, estimateSeconds, wallSeconds, store = storage()) {
  const ratio = wallSeconds / estimateSeconds;
  if (!store || !(estimateSeconds > 0) || !Number.isFinite(ratio) || ratio < RATIO_RANGE[0] || ratio > RATIO_RANGE[1]) {
    return null;
  }
  let all = {};
  try { all = JSON.parse(store.getItem(OUTCOMES_KEY) ?? '{}') ?? {}; } catch { all = {}; }
  if (typeof all !== 'object' || Array.isArray(all)) all = {};
  all[backend] = [...outcomesFor(backend, store), ratio].slice(-OUTCOMES_KEPT);
  try { store.setItem(OUTCOMES_KEY, JSON.stringify(all)); } catch { return null; }
  return ratio;
}

/** The correction kept ratios give: { factor (their median), least, most, n }, or null
 *  without any. */
export function correctionOf(ratios) {
  if (!ratios.length) return null;
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const factor = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { factor, least: sorted[0], most: sorted[sorted.length - 1], n: sorted.length };
}

/** Seconds `units` work units take at `ms` per unit over `workers`. */
const secondsOf = (units, ms, workers) => (units * ms) / Math.max(1, workers) / 1000;

/** Seconds `info.work_total` takes at calibration `cal` over its workers. */
const secondsAt = (info, cal) => secondsOf(info.work_total, cal.ms_per_work_unit, cal.workers);

/** The range around `info`'s estimate at `cal`: { low, high } seconds. */
const rangeAt = (info, cal) => ({
  low: secondsOf(info.work_low || info.work_total, cal.ms_per_work_unit_min ?? cal.ms_per_work_unit, cal.workers),
  high: secondsOf(info.work_high || info.work_total, cal.ms_per_work_unit_max ?? cal.ms_per_work_unit, cal.workers),
});

/** What a software WebGPU adapter means for a bench or a study (`what`) of `seconds` on it. */
function adapterWarning(what, seconds, { adapter, cpuSeconds, cpuWorkers }) {
  return `WebGPU here is a software adapter (${adapter}): the GPU's work is emulated on the CPU. ` +
    `This ${what} ≈ ${duration(seconds)} on it` +
    (cpuSeconds === null ? '.' : `, ≈ ${duration(cpuSeconds)} on the CPU backend (${cpuWorkers} worker${cpuWorkers === 1 ? '' : 's'}).`) +
    ' Choose CPU or auto unless you mean to test this adapter.';
}

/**
 * The estimate from a 'backend' event: { seconds, low, high, text, detail, info, fallback,
 * correction } or { error }; text is one line, detail how it was computed. `ratios`: this
 * browser's kept outcomes for the backend (outcomesFor), the correction's.
 * fallback: null, or { adapter, cpuSeconds, cpuWorkers, text } when WebGPU is a software
 * adapter (the engine lists the CPU's calibration beside it).
 */
export function estimateOf(info, ratios = outcomesFor(info.backend)) {
  const cal = info.calibration.find((c) => c.backend === info.backend);
  if (!cal || !info.work_total) return { error: `the engine did not measure ${info.backend}` };
  const workers = Math.max(1, info.workers);
  const correction = correctionOf(ratios);
  const [factor, least, most] = correction ? [correction.factor, correction.least, correction.most] : [1, 1, 1];
  const seconds = secondsAt(info, { ...cal, workers }) * factor;
  const range = rangeAt(info, { ...cal, workers });
  // The range holds the corrected estimate whatever the ratios' spread.
  const low = Math.min(range.low * least, seconds);
  const high = Math.max(range.high * most, seconds);
  // One short line for the sticky bar beside Run; how it was computed goes below the form.
  const text = `Estimated time ≈ ${duration(seconds)} (${duration(low)}–${duration(high)}) on ${info.backend}` +
    `${workers > 1 ? ` (${workers} workers)` : ''}.`;
  const learned = correction
    ? ` Corrected × ${num(factor)}: the median of this browser's last ${correction.n} bench${correction.n === 1 ? '' : 'es'} ` +
      `on ${info.backend}, wall time over estimate (the range: their least, ${num(least)}, and most, ${num(most)}).`
    : ' No bench has finished in this browser yet to correct it by.';
  const detail = `The estimate: ${info.work_total.toLocaleString('en')} work units × ` +
    `${num(cal.ms_per_work_unit)} ms${workers > 1 ? ` ÷ ${workers} workers` : ''}, speed measured in this browser ` +
    `(${info.timed_workers > 1 ? `on ${info.timed_workers} workers at once; ` : ''}the range: the idea at k = 1 to k_max throughout, the fastest to the slowest trial).` +
    learned;
  let fallback = null;
  if (info.fallback_adapter) {
    const cpu = info.calibration.find((c) => c.backend !== info.backend);
    const cpuFactor = cpu ? correctionOf(outcomesFor(cpu.backend))?.factor ?? 1 : 1;
    fallback = { adapter: info.adapter, cpuSeconds: cpu ? secondsAt(info, cpu) * cpuFactor : null, cpuWorkers: cpu?.workers ?? 0 };
    fallback.text = adapterWarning('bench', seconds, fallback);
  }
  return { seconds, low, high, text, detail, info, fallback, correction };
}

/** Several estimates as one, for a study whose benches run one after another. */
export function sumEstimates(parts) {
  const sum = (key) => parts.reduce((s, p) => s + (p[key] ?? p.seconds), 0);
  const [seconds, low, high] = [sum('seconds'), sum('low'), sum('high')];
  const one = parts.find((p) => p.fallback)?.fallback;
  if (!one) return { seconds, low, high, fallback: null };
  const cpu = parts.every((p) => p.fallback?.cpuSeconds != null) ? parts.reduce((s, p) => s + p.fallback.cpuSeconds, 0) : null;
  const fallback = { ...one, cpuSeconds: cpu };
  return { seconds, low, high, fallback: { ...fallback, text: adapterWarning('study', seconds, fallback) } };
}
