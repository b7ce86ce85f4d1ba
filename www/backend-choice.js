// How `auto` chooses between WebGPU and the CPU from their calibration (src/calibrate.rs):
// the CPU's time per work unit is divided by its workers, which run in parallel.

/** Milliseconds per work unit of the whole backend (its workers together). */
export const throughputMs = (c) => c.ms_per_work_unit / Math.max(1, c.workers);

/** The faster of two calibrations, and why, in words for the page and the report. */
export function chooseFaster(gpu, cpu) {
  const [g, c] = [throughputMs(gpu), throughputMs(cpu)];
  const fmt = (ms) => (ms >= 10 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toFixed(3));
  const figures = `WebGPU ${fmt(g)} ms per run-step, CPU ${fmt(c)} ms per run-step on ${cpu.workers} worker${cpu.workers === 1 ? '' : 's'}`;
  return g < c
    ? { backend: gpu.backend, why: `calibrated: ${figures}; WebGPU is faster` }
    : { backend: cpu.backend, why: `calibrated: ${figures}; the CPU is faster` };
}
