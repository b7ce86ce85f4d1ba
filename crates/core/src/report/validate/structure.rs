//! The structure of a bench report: the seed report's keys in the seed's order, the
//! extension keys after them, and no others. Which format a report is in (`Era`) decides
//! what it must carry: a seed-era report is the seed's schema exactly; a report with any
//! extension carries every one this project writes, and every key its rebuild writes (a
//! report of an earlier version may lack only the keys added since, and only everywhere).

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

/// The extension keys every report of this project carries (`frontier` and `task` came
/// later: an earlier report may lack them; a current one lacks `frontier` only when no
/// probe measured it, which its rebuild knows).
pub const REQUIRED_EXTENSION_KEYS: &[&str] =
    &["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs"];

/// Which format a report is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// The seed report's schema exactly: no extension key (nothing to rebuild from).
    Seed,
    /// A report of this project from before builds were recorded (no `environment.build`):
    /// keys added since (`LATE_KEYS`) may be missing, each everywhere or nowhere.
    Earlier,
    /// A report that names its build: every key its rebuild writes must be there.
    Current,
}

impl Era {
    /// The format of the report `value` (an object).
    pub fn of(value: &Value) -> Era {
        let has_extension = EXTENSION_KEYS.iter().any(|k| value.get(k).is_some());
        if !has_extension {
            Era::Seed
        } else if value["environment"]["build"].as_str().is_some_and(|b| !b.is_empty()) {
            Era::Current
        } else {
            Era::Earlier
        }
    }
}

/// Keys added after the first reports with extensions, as `[*]` patterns of their paths:
/// an earlier report may lack each, everywhere it would be (a report that has one somewhere
/// and not elsewhere was edited).
const LATE_KEYS: &[&str] = &[
    "frontier",
    "task",
    "config.rank_r0",
    "config.rank_max",
    "config.enrich_window",
    "config.enrich_threshold",
    "config.train_size",
    "config.seq_len",
    "environment.run_backends",
    "environment.reused_runs",
    "environment.threads",
    "environment.backend_note",
    "environment.calibration",
    "environment.build",
    "statistics.dropped_pairs",
    "memory.measured_peak_bytes_checkpointed",
    "memory.measured_peak_bytes_dense",
    "memory.measured_saved_fraction",
    "runs[*].backend",
    "runs[*].run_hash",
    "runs[*].rank_history",
    "runs[*].build",
    "runs[*].probes[*].peak_bytes_checkpointed",
    "runs[*].probes[*].peak_bytes_dense",
    "runs[*].probes[*].frontier",
];

/// Keys a report of any era may lack: figures added after builds that name themselves
/// (`environment.build`) were written, which those builds' reports leave out. A file without
/// one claims nothing about it; a file with one has it rebuilt and compared.
const UNCLAIMED_KEYS: &[&str] = &["task.reference", "task.learnability"];

/// A report with any extension key must carry every required one, and a seed-era report is
/// the seed's: the dynamics track and the GRU (the only ones it had). Otherwise a report
/// with its extensions stripped would be read as a seed-era one, with fewer checks.
pub(super) fn check_era(value: &Value, c: &mut Checker) {
    match Era::of(value) {
        Era::Seed => {
            let (track, model) = (value["track"].as_str(), value["model"].as_str());
            if track != Some("dynamics") || model != Some("rnn_small") {
                c.problem(
                    ProblemKind::Structure,
                    "(format)",
                    format!(
                        "no extension keys, so the seed-era format, but a seed-era report is of the dynamics track \
                         and the rnn_small model, not {} {}: a report of this project with its extension keys \
                         ({}) removed",
                        track.unwrap_or("?"),
                        model.unwrap_or("?"),
                        REQUIRED_EXTENSION_KEYS.join(", ")
                    ),
                );
            }
        }
        Era::Earlier | Era::Current => {
            for k in REQUIRED_EXTENSION_KEYS.iter().filter(|k| value.get(**k).is_none()) {
                c.problem(
                    ProblemKind::Structure,
                    k,
                    "missing key: a report with extension keys is this project's format, which carries every one \
                     of config, environment, statistics, mechanism, memory, warnings and runs (only the seed-era \
                     report has none)",
                );
            }
        }
    }
}

/// Every key `rebuilt` has and `file` lacks, as (path, pattern with `[*]` for indices), and
/// every pattern the file does have.
fn keys_missing(
    file: &Value,
    rebuilt: &Value,
    (path, pattern): (&str, &str),
    missing: &mut Vec<(String, String)>,
    present: &mut std::collections::HashSet<String>,
) {
    match (file, rebuilt) {
        (Value::Object(f), Value::Object(r)) => {
            for (k, rv) in r {
                let (p, pat) = (join(path, k), join(pattern, k));
                match f.get(k) {
                    Some(fv) => {
                        keys_missing(fv, rv, (&p, &pat), missing, present);
                        present.insert(pat);
                    }
                    None => missing.push((p, pat)),
                }
            }
        }
        (Value::Array(f), Value::Array(r)) => {
            let pat = format!("{pattern}[*]");
            for (i, (fv, rv)) in f.iter().zip(r).enumerate() {
                keys_missing(fv, rv, (&format!("{path}[{i}]"), &pat), missing, present);
            }
        }
        _ => {}
    }
}

/// Name every key the rebuilt report writes that the file lacks: all of them in a current
/// report; in an earlier one, those not added since, and those added since that the file
/// has elsewhere.
pub(super) fn check_missing(file: &Value, rebuilt: &Value, era: Era, c: &mut Checker) {
    let (mut missing, mut present) = (Vec::new(), std::collections::HashSet::new());
    keys_missing(file, rebuilt, ("", ""), &mut missing, &mut present);
    // The forgetting cap applies only to a model with an information buffer: reports of the
    // other models written before it was a knob lack it, whatever their era.
    let buffered = file["model"].as_str().and_then(crate::models::info).is_some_and(|m| m.info_buffer);
    for (path, pattern) in missing {
        if pattern == "config.forget_bits" && !buffered {
            continue;
        }
        if UNCLAIMED_KEYS.contains(&pattern.as_str()) {
            continue;
        }
        let late = LATE_KEYS.contains(&pattern.as_str());
        let why = match era {
            Era::Current => "missing key: the build that wrote this report writes it (environment.build names it)",
            _ if !late => "missing key: every report of this project carries it",
            _ if present.contains(&pattern) => {
                "missing key: added after the first reports, but this report has it elsewhere (a report of one \
                 version has it everywhere or nowhere)"
            }
            _ => continue,
        };
        c.problem(ProblemKind::Structure, &path, why);
    }
}
