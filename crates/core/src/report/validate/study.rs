//! A report merged from bench reports (a study's `study_report.json`, a scale study's
//! `scale_report.json`): every embedded bench report validated as a bench report (its
//! problems under `reports[i]`), and the whole rebuilt from them by the merge's own builder
//! (`study::build_study`, `scale::build_scale`, which call this with it) and compared path by
//! path, so every figure traces to the benches it merged.

use super::diff::{differences, json};
use super::{Checker, Problem, ProblemKind, parse, validate_json};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A report built from embedded bench reports: its version key, the version this build
/// writes and what it is in words; `build` rebuilds it from the embedded texts.
pub fn validate_merged<T: Serialize + DeserializeOwned>(
    text: &str,
    (key, version, what): (&str, u32, &str),
    build: fn(&[String]) -> Result<T, String>,
    parts: fn(&T) -> (u32, &Vec<serde_json::Value>),
) -> Result<T, Vec<Problem>> {
    let text = crate::report::without_bom(text);
    let mut c = Checker::default();
    let Some(value) = parse(text, &mut c) else { return Err(c.problems) };
    if value.get(key).is_none() {
        c.problem(ProblemKind::Structure, key, format!("missing key: not {what}"));
        return Err(c.problems);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    let merged: T = match serde_path_to_error::deserialize(de) {
        Ok(s) => s,
        Err(e) => {
            c.problem(ProblemKind::Schema, "(schema)", format!("at {}: {}", e.path(), e.inner()));
            return Err(c.problems);
        }
    };
    let (found, reports) = parts(&merged);
    if found != version {
        c.fail(key, format!("expected {version}, found {found}"));
    }
    let texts: Vec<String> = reports.iter().map(|v| v.to_string()).collect();
    for (i, t) in texts.iter().enumerate() {
        if let Err(problems) = validate_json(t) {
            for p in problems {
                let path =
                    if p.path.starts_with('(') { format!("reports[{i}]") } else { format!("reports[{i}].{}", p.path) };
                c.problems.push(Problem { path, ..p });
            }
        }
    }
    match build(&texts) {
        Err(e) => c.fail("reports", e),
        Ok(rebuilt) => {
            let (mut file, mut rebuilt) = (value.clone(), json(&rebuilt));
            // The embedded reports are the inputs, checked above.
            for v in [&mut file, &mut rebuilt] {
                v.as_object_mut().expect("an object").remove("reports");
            }
            let mut out = Vec::new();
            differences(&file, &rebuilt, "", &mut out);
            for (path, what) in out {
                c.fail_once(&path, format!("{what} from the embedded bench reports"));
            }
        }
    }
    c.result(merged)
}
