// How long a bench will take, from the engine's own figures: its work units (`work_total`,
// the unit of its progress: each run's cell evaluations, the idea's probes and frontier
// included) times the milliseconds per unit the engine measured for the backend it resolves
// to (the fastest of a few short trials of this config's training steps in this browser;
// WebGPU's from its cost fitted at two population sizes, for this bench's populations), over
// the workers it runs on. The range: the idea training at k = 1 throughout
// (`work_low`) at the fastest trial, to k_max throughout (`work_high`) at the slowest. A
// bench, or a study of several, estimated above CONFIRM_ABOVE_S asks first. WebGPU on a
// software adapter is named, with the CPU's estimate beside it.
import { duration, num } from './format.js';

/** Seconds above which a bench or a study asks before it starts (or just after). */
export const CONFIRM_ABOVE_S = 120;

/** Seconds `units` work units take at `ms` per unit over `workers`. */
const secondsOf = (units, ms, workers) => (units * ms) / Math.max(1, workers) / 1000;

/** Seconds `info.work_total` takes at calibration `cal` over its workers. */
const secondsAt = (info, cal) => secondsOf(info.work_total, cal.ms_per_work_unit, cal.workers);

/** The range around `info`'s estimate at `cal`: { low, high } seconds. */
const rangeAt = (info, cal) => ({
  low: secondsOf(info.work_low || info.work_total, cal.ms_per_work_unit, cal.workers),
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
 * The estimate from a 'backend' event: { seconds, low, high, text, detail, info, fallback } or
 * { error }; text is one line, detail how it was computed.
 * fallback: null, or { adapter, cpuSeconds, cpuWorkers, text } when WebGPU is a software
 * adapter (the engine lists the CPU's calibration beside it).
 */
export function estimateOf(info) {
  const cal = info.calibration.find((c) => c.backend === info.backend);
  if (!cal || !info.work_total) return { error: `the engine did not measure ${info.backend}` };
  const workers = Math.max(1, info.workers);
  const seconds = secondsAt(info, { ...cal, workers });
  const { low, high } = rangeAt(info, { ...cal, workers });
  // One short line for the sticky bar beside Run; how it was computed goes below the form.
  const text = `Estimated time ≈ ${duration(seconds)} (${duration(low)}–${duration(high)}) on ${info.backend}` +
    `${workers > 1 ? ` (${workers} workers)` : ''}.`;
  const detail = `The estimate: ${info.work_total.toLocaleString('en')} work units × ` +
    `${num(cal.ms_per_work_unit)} ms${workers > 1 ? ` ÷ ${workers} workers` : ''}, speed measured in this browser ` +
    '(the range: the idea at k = 1 to k_max throughout, the fastest to the slowest trial).';
  let fallback = null;
  if (info.fallback_adapter) {
    const cpu = info.calibration.find((c) => c.backend !== info.backend);
    fallback = { adapter: info.adapter, cpuSeconds: cpu ? secondsAt(info, cpu) : null, cpuWorkers: cpu?.workers ?? 0 };
    fallback.text = adapterWarning('bench', seconds, fallback);
  }
  return { seconds, low, high, text, detail, info, fallback };
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
