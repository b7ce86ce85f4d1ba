// The bench config in the page: defaults, presets, validation (mirroring the engine's, which
// checks again), and the URL hash that carries the whole config so a link reproduces a run.

export const DEFAULTS = Object.freeze({
  track: 'dynamics',
  model: 'rnn_small',
  n_seeds: 8,
  n_sweep_seeds: 3,
  lrs: [0.001, 0.003, 0.01],
  epochs: 15,
  batch_size: 32,
  hidden_size: 32,
  tau: 0.08,
  k_max: 16,
  policy: 'one_step',
  reversal_iters: 20,
  data_seed: 0,
  alpha: 0.05,
  permutations: 10000,
  bootstrap_resamples: 10000,
});
export const DEFAULT_BACKEND = 'auto';

export const PRESETS = Object.freeze({
  // Small enough to finish in well under a minute on a laptop CPU.
  quick: { ...DEFAULTS, n_seeds: 4, n_sweep_seeds: 1, lrs: [0.003, 0.01], epochs: 3, hidden_size: 16 },
  // The spec's defaults.
  seed: { ...DEFAULTS },
});

const int = (lo, hi) => ({ kind: 'int', lo, hi });
const num = (lo, hi, openLo = true) => ({ kind: 'num', lo, hi, openLo });
const choice = (...values) => ({ kind: 'choice', values });

/** Limits as in src/config.rs (the engine is the authority; these give early feedback). */
export const RULES = Object.freeze({
  track: choice('dynamics'),
  model: choice('rnn_small'),
  n_seeds: int(1, 64),
  n_sweep_seeds: int(1, 16),
  lrs: { kind: 'lrs' },
  epochs: int(1, 1000),
  batch_size: int(1, 320),
  hidden_size: int(2, 512),
  tau: num(0, Infinity),
  k_max: int(2, 80),
  policy: choice('one_step', 'chained'),
  reversal_iters: int(1, 1000),
  data_seed: int(0, Number.MAX_SAFE_INTEGER),
  alpha: num(0, 1),
  permutations: int(100, 10_000_000),
  bootstrap_resamples: int(100, 10_000_000),
});

export const LABELS = {
  track: 'track', model: 'model', n_seeds: 'paired seeds', n_sweep_seeds: 'sweep seeds', lrs: 'learning rates',
  epochs: 'epochs', batch_size: 'batch size', hidden_size: 'hidden size', tau: 'τ', k_max: 'k_max',
  policy: 'policy', reversal_iters: 'reversal iterations', data_seed: 'data seed', alpha: 'alpha',
  permutations: 'permutations', bootstrap_resamples: 'bootstrap resamples', backend: 'backend',
};

/** Parse one value from text; returns {value} or {error}. */
export function parseValue(key, text) {
  const rule = RULES[key];
  if (!rule) return { error: `unknown setting "${key}"` };
  const t = String(text).trim();
  if (rule.kind === 'choice') {
    return rule.values.includes(t) ? { value: t } : { error: `must be one of ${rule.values.join(', ')} (got "${t}")` };
  }
  if (rule.kind === 'lrs') {
    if (t === '') return { error: 'the list is empty' };
    const parts = t.split(',').map((s) => s.trim());
    const vals = [];
    for (const p of parts) {
      const v = Number(p);
      if (p === '' || !Number.isFinite(v) || v <= 0) return { error: `every lr must be a positive number (got "${p}")` };
      if (vals.includes(v)) return { error: `lr ${v} is listed twice` };
      vals.push(v);
    }
    if (vals.length > 12) return { error: 'at most 12 learning rates' };
    return { value: vals };
  }
  if (rule.kind === 'int') {
    if (!/^\d+$/.test(t)) return { error: `must be a whole number (got "${t}")` };
    const v = Number(t);
    if (v < rule.lo || v > rule.hi) return { error: `must be between ${rule.lo} and ${rule.hi} (got ${v})` };
    return { value: v };
  }
  const v = Number(t);
  if (t === '' || !Number.isFinite(v)) return { error: `must be a number (got "${t}")` };
  if (v <= rule.lo || v >= rule.hi) {
    const hi = Number.isFinite(rule.hi) ? `, below ${rule.hi}` : '';
    return { error: `must be above ${rule.lo}${hi} (got ${v})` };
  }
  return { value: v };
}

/** Config and backend from a URL hash; bad values are listed and replaced by defaults. */
export function fromHash(hash) {
  const config = structuredClone(DEFAULTS);
  let backend = DEFAULT_BACKEND;
  const errors = [];
  const params = new URLSearchParams(String(hash).replace(/^#/, ''));
  for (const [key, text] of params) {
    if (key === 'backend') {
      if (['auto', 'webgpu', 'cpu'].includes(text)) backend = text;
      else errors.push(`backend: must be auto, webgpu or cpu (got "${text}")`);
      continue;
    }
    if (!(key in RULES)) {
      errors.push(`${key}: unknown setting`);
      continue;
    }
    const r = parseValue(key, text);
    if ('error' in r) errors.push(`${LABELS[key]} (${key}): ${r.error}`);
    else config[key] = r.value;
  }
  return { config, backend, errors };
}

/** The URL hash of a config (every key, so the link is complete). */
export function toHash(config, backend) {
  const p = new URLSearchParams();
  for (const key of Object.keys(DEFAULTS)) {
    p.set(key, key === 'lrs' ? config.lrs.join(',') : String(config[key]));
  }
  p.set('backend', backend);
  return '#' + p.toString().replaceAll('%2C', ',');
}

/** Training steps of a config (both arms), for the estimate shown next to Run. */
export function countSteps(c) {
  const sweep = c.lrs.length * c.n_sweep_seeds * Math.ceil(320 / c.batch_size);
  const full = c.n_seeds * Math.ceil(400 / c.batch_size);
  return 2 * (sweep + full) * c.epochs;
}
