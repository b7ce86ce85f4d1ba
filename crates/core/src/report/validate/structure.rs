//! The structure of a bench report: the seed report's keys in the seed's order, the
//! extension keys after them, and no others.

use super::{Checker, ProblemKind, join};
use serde_json::Value;

/// Top-level keys of the seed report, in order.
pub const TOP_KEYS: &[&str] = &[
    "bench_version",
    "track",
    "model",
    "metric_direction",
    "n_seeds",
    "baseline",
    "idea",
    "comparison",
    "mechanism_signature",
    "idea_sweep",
];
/// Extension keys this version writes after the seed keys.
pub const EXTENSION_KEYS: &[&str] =
    &["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs", "frontier", "task"];
const BASELINE_KEYS: &[&str] = &["best_cfg", "sweep", "full"];
const FULL_KEYS: &[&str] = &["mean", "std", "per_seed", "n"];
const IDEA_KEYS: &[&str] = &["best_cfg", "mean", "std", "per_seed", "n"];
const COMPARISON_KEYS: &[&str] =
    &["delta_mean", "idea_wins", "n_pairs", "per_seed_diffs", "p_value", "verdict", "system_worked"];
const SIGNATURE_KEYS: &[&str] =
    &["prediction", "observed_mean_defect", "observed_mean_checkpoints", "low_defect_checkpoint_relation", "confirmed"];

/// `v` at `path` must be an object whose first keys are `keys`, in order; `extra` lists
/// keys allowed after them (None: any).
fn keys(c: &mut Checker, v: &Value, path: &str, keys: &[&str], extra: Option<&[&str]>) {
    let Some(obj) = v.as_object() else {
        return c.problem(ProblemKind::Structure, path, "expected an object");
    };
    let have: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
    let mut missing = false;
    for k in keys {
        if !have.contains(k) {
            missing = true;
            c.problem(ProblemKind::Structure, &join(path, k), "missing key");
        }
    }
    let head: Vec<&str> = have.iter().take(keys.len()).copied().collect();
    if !missing && head != keys {
        let at = if path.is_empty() { "top level" } else { path };
        let msg = format!("keys out of order: expected {} first, found {}", keys.join(", "), head.join(", "));
        c.problem(ProblemKind::Structure, at, msg);
    }
    if let Some(extra) = extra {
        for k in &have {
            if !keys.contains(k) && !extra.contains(k) {
                c.problem(ProblemKind::UnknownKey, &join(path, k), "unknown key");
            }
        }
    }
}

/// Check the keys of every seed-era object of `value`.
pub(super) fn check(value: &Value, c: &mut Checker) {
    keys(c, value, "", TOP_KEYS, Some(EXTENSION_KEYS));
    if !value.is_object() {
        return;
    }
    keys(c, &value["baseline"], "baseline", BASELINE_KEYS, Some(&[]));
    keys(c, &value["baseline"]["best_cfg"], "baseline.best_cfg", &["lr"], Some(&[]));
    if let Some(sweep) = value["baseline"]["sweep"].as_array() {
        for (i, e) in sweep.iter().enumerate() {
            let p = format!("baseline.sweep[{i}]");
            keys(c, e, &p, &["cfg", "mean"], Some(&[]));
            keys(c, &e["cfg"], &join(&p, "cfg"), &["lr"], Some(&[]));
        }
    }
    keys(c, &value["baseline"]["full"], "baseline.full", FULL_KEYS, Some(&[]));
    keys(c, &value["idea"], "idea", IDEA_KEYS, Some(&[]));
    keys(c, &value["idea"]["best_cfg"], "idea.best_cfg", &["lr"], Some(&[]));
    keys(c, &value["comparison"], "comparison", COMPARISON_KEYS, Some(&[]));
    keys(c, &value["mechanism_signature"], "mechanism_signature", SIGNATURE_KEYS, Some(&[]));
    if let Some(m) = value["idea_sweep"].as_object() {
        for (k, v) in m {
            keys(c, v, &format!("idea_sweep.{k}"), &["mean"], Some(&[]));
        }
    }
}
