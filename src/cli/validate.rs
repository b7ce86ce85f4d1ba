//! `rdbench validate`: check a bench report, or a study report, against the schema and
//! against what its own config and runs rebuild.

use crate::outln;
use rdbench_core::report::{MAX_REPORT_BYTES, is_study, validate_json, validate_study_json};
use std::io::Read;
use std::path::Path;

/// The file's text, refusing more than a report can be (`/dev/zero` is not read to the end).
fn read_capped(file: &Path) -> Result<String, String> {
    let f = std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut bytes = Vec::new();
    f.take(MAX_REPORT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if bytes.len() > MAX_REPORT_BYTES {
        return Err(format!("{} is larger than {MAX_REPORT_BYTES} bytes: not a report", file.display()));
    }
    String::from_utf8(bytes).map_err(|e| format!("{} is not UTF-8 text: {e}", file.display()))
}

pub fn validate(file: &Path) -> i32 {
    let text = match read_capped(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let study = serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| is_study(&v));
    let result = if study {
        validate_study_json(&text).map(|s| format!("valid study_report.json ({} bench reports)", s.reports.len()))
    } else {
        validate_json(&text).map(|r| {
            if r.runs.is_some() {
                "valid bench_report.json (rebuilt from its config and runs)".to_string()
            } else {
                "valid bench_report.json (seed-era: no runs to rebuild from)".to_string()
            }
        })
    };
    match result {
        Ok(what) => {
            outln!("{}: {what}", file.display());
            0
        }
        Err(problems) => {
            eprintln!("{}: {} problem(s)", file.display(), problems.len());
            for p in problems {
                eprintln!("  {p}");
            }
            1
        }
    }
}
