//! Check a report file against the schema: key order of the seed report, types, and the
//! arithmetic that ties its numbers together. Every problem names its JSON path.

use super::Report;
use serde_json::Value;
use std::fmt;

/// One thing wrong with a report.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// JSON path, e.g. `comparison.per_seed_diffs[3]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

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
pub const EXTENSION_KEYS: &[&str] = &["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs"];
const BASELINE_KEYS: &[&str] = &["best_cfg", "sweep", "full"];
const FULL_KEYS: &[&str] = &["mean", "std", "per_seed", "n"];
const IDEA_KEYS: &[&str] = &["best_cfg", "mean", "std", "per_seed", "n"];
const COMPARISON_KEYS: &[&str] =
    &["delta_mean", "idea_wins", "n_pairs", "per_seed_diffs", "p_value", "verdict", "system_worked"];
const SIGNATURE_KEYS: &[&str] =
    &["prediction", "observed_mean_defect", "observed_mean_checkpoints", "low_defect_checkpoint_relation", "confirmed"];
/// The verdicts spec §4.8 allows.
pub const VERDICTS: &[&str] = &["significant win", "significant loss", "no significant win"];

struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn fail(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(Problem { path: path.into(), message: message.into() });
    }

    /// `v` at `path` must be an object whose first keys are `keys`, in order; `extra` lists
    /// keys allowed after them (None: any).
    fn keys(&mut self, v: &Value, path: &str, keys: &[&str], extra: Option<&[&str]>) {
        let Some(obj) = v.as_object() else {
            return self.fail(path, "expected an object");
        };
        let have: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        let mut missing = false;
        for k in keys {
            if !have.contains(k) {
                missing = true;
                self.fail(&join(path, k), "missing key");
            }
        }
        let head: Vec<&str> = have.iter().take(keys.len()).copied().collect();
        if !missing && head != keys {
            let at = if path.is_empty() { "top level" } else { path };
            self.fail(at, format!("keys out of order: expected {} first, found {}", keys.join(", "), head.join(", ")));
        }
        if let Some(extra) = extra {
            for k in &have {
                if !keys.contains(k) && !extra.contains(k) {
                    self.fail(&join(path, k), "unknown key");
                }
            }
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12
}

/// Validate report text; on success return the parsed report.
pub fn validate_json(text: &str) -> Result<Report, Vec<Problem>> {
    let mut c = Checker { problems: Vec::new() };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            c.fail("(file)", format!("not valid JSON: {e}"));
            return Err(c.problems);
        }
    };
    c.keys(&value, "", TOP_KEYS, Some(EXTENSION_KEYS));
    if !c.problems.is_empty() && !value.is_object() {
        return Err(c.problems);
    }
    c.keys(&value["baseline"], "baseline", BASELINE_KEYS, Some(&[]));
    c.keys(&value["baseline"]["best_cfg"], "baseline.best_cfg", &["lr"], Some(&[]));
    if let Some(sweep) = value["baseline"]["sweep"].as_array() {
        for (i, e) in sweep.iter().enumerate() {
            let p = format!("baseline.sweep[{i}]");
            c.keys(e, &p, &["cfg", "mean"], Some(&[]));
            c.keys(&e["cfg"], &join(&p, "cfg"), &["lr"], Some(&[]));
        }
    }
    c.keys(&value["baseline"]["full"], "baseline.full", FULL_KEYS, Some(&[]));
    c.keys(&value["idea"], "idea", IDEA_KEYS, Some(&[]));
    c.keys(&value["idea"]["best_cfg"], "idea.best_cfg", &["lr"], Some(&[]));
    c.keys(&value["comparison"], "comparison", COMPARISON_KEYS, Some(&[]));
    c.keys(&value["mechanism_signature"], "mechanism_signature", SIGNATURE_KEYS, Some(&[]));
    if let Some(m) = value["idea_sweep"].as_object() {
        for (k, v) in m {
            c.keys(v, &format!("idea_sweep.{k}"), &["mean"], Some(&[]));
        }
    }
    if !c.problems.is_empty() {
        return Err(c.problems);
    }
    let report = match Report::from_json(text) {
        Ok(r) => r,
        Err(e) => {
            c.fail("(schema)", e);
            return Err(c.problems);
        }
    };
    semantics(&report, &mut c);
    if c.problems.is_empty() { Ok(report) } else { Err(c.problems) }
}

/// The arithmetic that ties the report's numbers together.
fn semantics(r: &Report, c: &mut Checker) {
    if r.bench_version != super::BENCH_VERSION {
        c.fail("bench_version", format!("expected {}, found {}", super::BENCH_VERSION, r.bench_version));
    }
    if r.metric_direction != "lower is better" {
        c.fail("metric_direction", format!("expected \"lower is better\", found {:?}", r.metric_direction));
    }
    let base = &r.baseline.full;
    let idea = &r.idea;
    for (path, per_seed, n, mean, std) in [
        ("baseline.full", &base.per_seed, base.n, base.mean, base.std),
        ("idea", &idea.per_seed, idea.n, idea.mean, idea.std),
    ] {
        if per_seed.len() != n {
            c.fail(&join(path, "n"), format!("n = {n} but per_seed has {} values", per_seed.len()));
        }
        if n != r.n_seeds {
            c.fail(&join(path, "n"), format!("n = {n} but n_seeds = {}", r.n_seeds));
        }
        for (i, v) in per_seed.iter().enumerate() {
            if let Some(v) = v
                && (!v.is_finite() || *v < 0.0)
            {
                c.fail(&format!("{path}.per_seed[{i}]"), format!("an MSE must be finite and >= 0, found {v}"));
            }
        }
        let all: Option<Vec<f64>> = per_seed.iter().copied().collect();
        match (all, mean) {
            (Some(vals), Some(m)) if !vals.is_empty() => {
                let want = crate::stats::mean(&vals);
                if !close(m, want) {
                    c.fail(&join(path, "mean"), format!("{m} is not the mean of per_seed ({want})"));
                }
                if let Some(s) = std {
                    let want = crate::stats::std(&vals, 0);
                    if !close(s, want) {
                        c.fail(&join(path, "std"), format!("{s} is not the population std of per_seed ({want})"));
                    }
                }
            }
            (None, Some(_)) => c.fail(&join(path, "mean"), "a number, though a per_seed value is null (diverged)"),
            _ => {}
        }
    }
    let cmp = &r.comparison;
    if cmp.per_seed_diffs.len() != base.per_seed.len().min(idea.per_seed.len()) {
        c.fail("comparison.per_seed_diffs", "must have one value per seed");
    }
    let mut wins = 0;
    let mut pairs = 0;
    for (i, d) in cmp.per_seed_diffs.iter().enumerate() {
        let (b, x) = (base.per_seed.get(i).copied().flatten(), idea.per_seed.get(i).copied().flatten());
        match (d, b, x) {
            (Some(d), Some(b), Some(x)) => {
                pairs += 1;
                wins += (*d < 0.0) as usize;
                if !close(*d, x - b) {
                    c.fail(
                        &format!("comparison.per_seed_diffs[{i}]"),
                        format!("{d} is not idea - baseline ({})", x - b),
                    );
                }
            }
            (None, Some(_), None) => {} // idea diverged: not a win
            (None, None, Some(_)) => wins += 1,
            (None, None, None) => {}
            (Some(_), _, _) => c.fail(&format!("comparison.per_seed_diffs[{i}]"), "a number, though a run is null"),
            (None, Some(_), Some(_)) => {
                c.fail(&format!("comparison.per_seed_diffs[{i}]"), "null, though both runs have a metric")
            }
        }
    }
    if cmp.idea_wins != wins {
        c.fail("comparison.idea_wins", format!("{} but the diffs give {wins}", cmp.idea_wins));
    }
    if cmp.n_pairs != pairs {
        c.fail("comparison.n_pairs", format!("{} but {pairs} pairs have both metrics", cmp.n_pairs));
    }
    if let (Some(d), Some(bm), Some(im)) = (cmp.delta_mean, base.mean, idea.mean)
        && !close(d, im - bm)
    {
        c.fail("comparison.delta_mean", format!("{d} is not idea.mean - baseline.full.mean ({})", im - bm));
    }
    if let Some(p) = cmp.p_value
        && !(0.0..=1.0).contains(&p)
    {
        c.fail("comparison.p_value", format!("{p} is not a probability"));
    }
    if !VERDICTS.contains(&cmp.verdict.as_str()) {
        c.fail("comparison.verdict", format!("{:?} is not one of {}", cmp.verdict, VERDICTS.join(", ")));
    } else {
        let alpha = r.config.as_ref().map_or(0.05, |c| c.alpha);
        let want = crate::stats::verdict(cmp.p_value, cmp.delta_mean, alpha);
        if cmp.verdict != want {
            c.fail(
                "comparison.verdict",
                format!("{:?} but p, delta_mean and alpha {alpha} give {want:?}", cmp.verdict),
            );
        }
    }
    if cmp.system_worked != (cmp.verdict == "significant win") {
        c.fail("comparison.system_worked", "must be true exactly when the verdict is \"significant win\"");
    }
    // best_cfg = lowest sweep mean, ties to the smaller lr.
    let best = |entries: &[(f64, Option<f64>)]| -> Option<f64> {
        let mut sorted: Vec<(f64, f64)> = entries.iter().map(|&(lr, m)| (lr, m.unwrap_or(f64::INFINITY))).collect();
        sorted.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
        sorted.first().map(|e| e.0)
    };
    let base_sweep: Vec<(f64, Option<f64>)> = r.baseline.sweep.iter().map(|e| (e.cfg.lr, e.mean)).collect();
    if let Some(b) = best(&base_sweep)
        && b != r.baseline.best_cfg.lr
    {
        c.fail("baseline.best_cfg.lr", format!("{} but the lowest sweep mean is at lr {b}", r.baseline.best_cfg.lr));
    }
    let mut idea_sweep = Vec::new();
    for (k, v) in &r.idea_sweep {
        match k.parse::<f64>() {
            Ok(lr) if lr > 0.0 => idea_sweep.push((lr, v.mean)),
            _ => c.fail(&format!("idea_sweep.{k}"), "the key must be a positive learning rate"),
        }
    }
    if let Some(b) = best(&idea_sweep)
        && b != r.idea.best_cfg.lr
    {
        c.fail("idea.best_cfg.lr", format!("{} but the lowest idea_sweep mean is at lr {b}", r.idea.best_cfg.lr));
    }
}
