// How the page writes numbers. The rules are Rust's (crates/page/src/format.rs, docs/PAGE.md
// "Numbers"), called through the charts wasm, so a number reads the same on the verdict card,
// in the charts, the history, compare and the study. app.js hands the module over as soon as
// it is initialised: the controls, reports and runs all wait for it, so no number is written
// before.
let wasm = null;

/** Use the initialised charts wasm module `m` (app.js). */
export function useFormats(m) {
  wasm = m;
}

const rule = (name) => (v) => {
  if (!wasm) throw new Error(`${name} was called before the charts wasm loaded`);
  return wasm[name](v);
};

/** A value (metric, p, α, lr, defect…): 4 significant digits; null or NaN is "n/a". */
export const num = rule('fmt_num');
/** A difference, with its sign ("+0.001289"). */
export const delta = rule('fmt_delta');
/** A share (0.489) as a percentage ("48.9%"). */
export const percent = rule('fmt_percent');
/** A size in bytes ("82.8 KiB"). */
export const bytes = rule('fmt_bytes');
/** A duration in seconds ("8.2 s", "1 min 05 s"). */
export const duration = rule('fmt_duration');
