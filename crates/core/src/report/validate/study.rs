//! A study report (`study_report.json`): every embedded bench report validated as a bench
//! report (its problems under `reports[i]`), and the study rebuilt from them with
//! `study::build_study` and compared path by path.

use super::diff::{differences, json};
use super::{Checker, Problem, ProblemKind, is_study, parse, validate_json};
use crate::study::{StudyReport, build_study};

/// Validate study report text; on success return the parsed study.
pub fn validate_study_json(text: &str) -> Result<StudyReport, Vec<Problem>> {
    let text = crate::report::without_bom(text);
    let mut c = Checker::default();
    let Some(value) = parse(text, &mut c) else { return Err(c.problems) };
    if !is_study(&value) {
        c.problem(ProblemKind::Structure, "study_version", "missing key: not a study report");
        return Err(c.problems);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    let study: StudyReport = match serde_path_to_error::deserialize(de) {
        Ok(s) => s,
        Err(e) => {
            c.problem(ProblemKind::Schema, "(schema)", format!("at {}: {}", e.path(), e.inner()));
            return Err(c.problems);
        }
    };
    if study.study_version != crate::study::STUDY_VERSION {
        let msg = format!("expected {}, found {}", crate::study::STUDY_VERSION, study.study_version);
        c.fail("study_version", msg);
    }
    let texts: Vec<String> = study.reports.iter().map(|v| v.to_string()).collect();
    for (i, t) in texts.iter().enumerate() {
        if let Err(problems) = validate_json(t) {
            for p in problems {
                let path =
                    if p.path.starts_with('(') { format!("reports[{i}]") } else { format!("reports[{i}].{}", p.path) };
                c.problems.push(Problem { path, ..p });
            }
        }
    }
    match build_study(&texts) {
        Err(e) => c.fail("reports", e),
        Ok(rebuilt) => {
            let (mut file, mut rebuilt) = (value.clone(), json(&rebuilt));
            // The embedded reports are the study's inputs, checked above.
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
    c.result(study)
}
