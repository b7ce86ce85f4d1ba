//! Check a report file. Its structure first (the seed report's keys in order, the types),
//! then its numbers: everything a report without runs lets one recompute (`arithmetic`),
//! and, when it carries its `config` and `runs`, the protocol's runs (`runs`) and the whole
//! report rebuilt from them with `report::build` and compared path by path (`rebuild`).
//! Every problem names its JSON path and kind. A study report is checked as one (`study`).

mod arithmetic;
mod diff;
mod environment;
mod rebuild;
mod runs;
mod structure;
mod study;

pub use structure::Era;
pub use study::validate_merged;

use super::{MAX_REPORT_BYTES, Report};
use serde_json::Value;
use std::fmt;

/// What sort of problem a report has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// The text is not JSON (or too large to be a report).
    NotJson,
    /// A seed key is missing or out of order, or a value that must be an object is not.
    Structure,
    /// A key the schema does not know (ignored when the report is read).
    UnknownKey,
    /// A value has the wrong type or spelling (the report cannot be read).
    Schema,
    /// The numbers do not agree with each other, with the config, or with what the report's
    /// own config and runs rebuild (the report can still be read and drawn).
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

/// The problems found so far.
#[derive(Default)]
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

    /// An arithmetic problem at `path` unless a problem at it, inside it or around it is
    /// already listed (the rebuild finds again what the arithmetic checks named first).
    fn fail_once(&mut self, path: &str, message: impl Into<String>) {
        let within = |outer: &str, inner: &str| {
            inner == outer
                || outer.is_empty()
                || inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
        };
        if !self.problems.iter().any(|p| within(&p.path, path) || within(path, &p.path)) {
            self.fail(path, message);
        }
    }

    fn result<T>(self, ok: T) -> Result<T, Vec<Problem>> {
        if self.problems.is_empty() { Ok(ok) } else { Err(self.problems) }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

/// Parse `text` as JSON within the size a report may have.
fn parse(text: &str, c: &mut Checker) -> Option<Value> {
    if text.len() > MAX_REPORT_BYTES {
        let msg = format!("the file is {} bytes; a report is at most {MAX_REPORT_BYTES} bytes", text.len());
        c.problem(ProblemKind::NotJson, "(file)", msg);
        return None;
    }
    match serde_json::from_str(text) {
        Ok(v) => Some(v),
        Err(e) => {
            c.problem(ProblemKind::NotJson, "(file)", format!("not valid JSON: {e}"));
            None
        }
    }
}

/// Whether `v` is a study report (`study_report.json`) rather than a bench report.
pub fn is_study(v: &Value) -> bool {
    v.get("study_version").is_some()
}

/// Whether `v` is a scale report (`scale_report.json`) rather than a bench report.
pub fn is_scale(v: &Value) -> bool {
    v.get("scale_version").is_some()
}

/// Validate bench report text; on success return the parsed report.
pub fn validate_json(text: &str) -> Result<Report, Vec<Problem>> {
    let text = super::without_bom(text);
    let mut c = Checker::default();
    let Some(value) = parse(text, &mut c) else { return Err(c.problems) };
    if is_study(&value) {
        c.problem(
            ProblemKind::Structure,
            "study_version",
            "this is a study report (study_report.json), not a bench report: check it with `rdbench validate`, \
             which validates a study and every bench report in it (on the page: the Study panel's Load)",
        );
        return Err(c.problems);
    }
    if is_scale(&value) {
        c.problem(
            ProblemKind::Structure,
            "scale_version",
            "this is a scale report (scale_report.json), not a bench report: check it with `rdbench validate`, \
             which validates it and every bench report in it (on the page: the Scale panel's Load)",
        );
        return Err(c.problems);
    }
    structure::check(&value, &mut c);
    if value.is_object() {
        structure::check_era(&value, &mut c);
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
    check_report(&report, &value, &mut c);
    c.result(report)
}

/// The checks of a parsed report whose file text parsed to `value`.
fn check_report(report: &Report, value: &Value, c: &mut Checker) {
    let era = Era::of(value);
    arithmetic::check(report, c);
    if let Some(env) = &report.environment {
        environment::check(env, report.runs.as_deref().unwrap_or_default(), era, c);
    }
    if let (Some(cfg), Some(runs)) = (&report.config, &report.runs) {
        // `build` needs a valid config (an lr grid, a known track); its problems are listed.
        if let Ok(ctx) = cfg.resolve() {
            let rebuilt = rebuild::rebuilt(report, &ctx, runs);
            // Keys left out first: a check of what is there must not name them again.
            structure::check_missing(value, &rebuilt, era, c);
            runs::check(cfg, runs, &value["config"], era, c);
            rebuild::check(value, &rebuilt, c);
        }
    }
}
