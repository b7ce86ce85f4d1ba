//! Check a report file against the schema: key order of the seed report, types, and the
//! arithmetic that ties its numbers together. Every problem names its JSON path and kind.

use super::Report;
use super::build::Pairs;
use super::sweep::best_lr;
use crate::stats::Verdict;
use serde_json::Value;
use std::fmt;

/// What sort of problem a report has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The text is not JSON.
    NotJson,
    /// A seed key is missing or out of order, or a value that must be an object is not.
    Structure,
    /// A key the schema does not know (ignored when the report is read).
    UnknownKey,
    /// A value has the wrong type or spelling (the report cannot be read).
    Schema,
    /// The numbers do not agree with each other (the report can still be read and drawn).
    Arithmetic,
}

impl ProblemKind {
    /// Whether a report with this problem cannot be read as a report at all.
    pub fn is_structural(self) -> bool {
        matches!(self, ProblemKind::NotJson | ProblemKind::Structure | ProblemKind::Schema)
    }
}

/// One thing wrong with a report.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// JSON path, e.g. `comparison.per_seed_diffs[3]`.
    pub path: String,
    /// What sort of problem it is.
    pub kind: ProblemKind,
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
pub const EXTENSION_KEYS: &[&str] =
    &["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs", "task"];
const BASELINE_KEYS: &[&str] = &["best_cfg", "sweep", "full"];
const FULL_KEYS: &[&str] = &["mean", "std", "per_seed", "n"];
const IDEA_KEYS: &[&str] = &["best_cfg", "mean", "std", "per_seed", "n"];
const COMPARISON_KEYS: &[&str] =
    &["delta_mean", "idea_wins", "n_pairs", "per_seed_diffs", "p_value", "verdict", "system_worked"];
const SIGNATURE_KEYS: &[&str] =
    &["prediction", "observed_mean_defect", "observed_mean_checkpoints", "low_defect_checkpoint_relation", "confirmed"];
struct Checker {
    problems: Vec<Problem>,
}

impl Checker {
    fn problem(&mut self, kind: ProblemKind, path: &str, message: impl Into<String>) {
        self.problems.push(Problem { path: path.into(), kind, message: message.into() });
    }

    /// An arithmetic problem (most of them).
    fn fail(&mut self, path: &str, message: impl Into<String>) {
        self.problem(ProblemKind::Arithmetic, path, message);
    }

    /// `v` at `path` must be an object whose first keys are `keys`, in order; `extra` lists
    /// keys allowed after them (None: any).
    fn keys(&mut self, v: &Value, path: &str, keys: &[&str], extra: Option<&[&str]>) {
        let Some(obj) = v.as_object() else {
            return self.problem(ProblemKind::Structure, path, "expected an object");
        };
        let have: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        let mut missing = false;
        for k in keys {
            if !have.contains(k) {
                missing = true;
                self.problem(ProblemKind::Structure, &join(path, k), "missing key");
            }
        }
        let head: Vec<&str> = have.iter().take(keys.len()).copied().collect();
        if !missing && head != keys {
            let at = if path.is_empty() { "top level" } else { path };
            let msg = format!("keys out of order: expected {} first, found {}", keys.join(", "), head.join(", "));
            self.problem(ProblemKind::Structure, at, msg);
        }
        if let Some(extra) = extra {
            for k in &have {
                if !keys.contains(k) && !extra.contains(k) {
                    self.problem(ProblemKind::UnknownKey, &join(path, k), "unknown key");
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
            c.problem(ProblemKind::NotJson, "(file)", format!("not valid JSON: {e}"));
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
            c.problem(ProblemKind::Schema, "(schema)", e);
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
    // The track's direction; a report without a config is of the dynamics track.
    let track = r.config.as_ref().map_or("dynamics", |c| c.track.as_str());
    let task = crate::track::by_name(track).map(|t| t.task());
    match (crate::track::Direction::parse(&r.metric_direction), task) {
        (None, _) => c.fail(
            "metric_direction",
            format!("expected \"lower is better\" or \"higher is better\", found {:?}", r.metric_direction),
        ),
        (Some(d), Some(task)) if d != task.direction() => c.fail(
            "metric_direction",
            format!("{:?}, but the {track} track's {} is {:?}", d.as_str(), task.metric(), task.direction().as_str()),
        ),
        _ => {}
    }
    let direction = r.direction();
    let classification = matches!(task, Some(crate::track::Task::Classification { .. }));
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
            let Some(v) = v else { continue };
            if classification && !(0.0..=1.0).contains(v) {
                c.fail(&format!("{path}.per_seed[{i}]"), format!("an accuracy must be in [0, 1], found {v}"));
            } else if !v.is_finite() || *v < 0.0 {
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
                wins += (direction.gain(*d) > 0.0) as usize;
                if !close(*d, x - b) {
                    c.fail(
                        &format!("comparison.per_seed_diffs[{i}]"),
                        format!("{d} is not idea - baseline ({})", x - b),
                    );
                }
            }
            // A pair with a diverged run has no difference and is never a win.
            (None, None, _) | (None, _, None) => {}
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
    let expected = Pairs::new(&base.per_seed, &idea.per_seed, direction);
    match (cmp.delta_mean, expected.delta_mean) {
        (Some(d), Some(want)) if !close(d, want) => c.fail(
            "comparison.delta_mean",
            format!("{d} is not mean(idea) - mean(baseline) over the complete pairs ({want})"),
        ),
        (Some(_), None) => c.fail("comparison.delta_mean", "a number, though no pair has both metrics"),
        (None, Some(want)) => c.fail("comparison.delta_mean", format!("null, though the complete pairs give {want}")),
        _ => {}
    }
    if let Some(st) = &r.statistics
        && st.dropped_pairs != expected.dropped
        // Reports written before dropped_pairs (and run_backends) existed list none.
        && !(st.dropped_pairs.is_empty() && r.environment.as_ref().is_none_or(|e| e.run_backends.is_empty()))
    {
        c.fail(
            "statistics.dropped_pairs",
            "must list exactly the pairs whose diff is null, with the run that diverged",
        );
    }
    if let Some(p) = cmp.p_value
        && !(0.0..=1.0).contains(&p)
    {
        c.fail("comparison.p_value", format!("{p} is not a probability"));
    }
    let alpha = r.config.as_ref().map_or(0.05, |c| c.alpha);
    let want = Verdict::decide(cmp.p_value, cmp.delta_mean, alpha, direction);
    if cmp.verdict != want {
        c.fail(
            "comparison.verdict",
            format!("{:?} but p, delta_mean and alpha {alpha} give {:?}", cmp.verdict.as_str(), want.as_str()),
        );
    }
    if cmp.system_worked != cmp.verdict.system_worked() {
        c.fail("comparison.system_worked", "must be true exactly when the verdict is \"significant win\"");
    }
    // best_cfg: the protocol's rule.
    let base_sweep: Vec<(f64, Option<f64>)> = r.baseline.sweep.iter().map(|e| (e.cfg.lr, e.mean)).collect();
    if let Some(b) = best_lr(&base_sweep, direction)
        && b != r.baseline.best_cfg.lr
    {
        c.fail("baseline.best_cfg.lr", format!("{} but the best sweep mean is at lr {b}", r.baseline.best_cfg.lr));
    }
    let mut idea_sweep = Vec::new();
    for (k, v) in &r.idea_sweep {
        match k.parse::<f64>() {
            Ok(lr) if lr > 0.0 => idea_sweep.push((lr, v.mean)),
            _ => c.fail(&format!("idea_sweep.{k}"), "the key must be a positive learning rate"),
        }
    }
    if let Some(b) = best_lr(&idea_sweep, direction)
        && b != r.idea.best_cfg.lr
    {
        c.fail("idea.best_cfg.lr", format!("{} but the best idea_sweep mean is at lr {b}", r.idea.best_cfg.lr));
    }
}
