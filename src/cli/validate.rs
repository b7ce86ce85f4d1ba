//! `rdbench validate`: check a report file against the schema and its own numbers.

use rdbench_core::report::validate_json;
use std::path::PathBuf;

pub fn validate(file: &PathBuf) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return 2;
        }
    };
    match validate_json(&text) {
        Ok(report) => {
            let kind = if report.config.is_some() { "full report" } else { "seed-era report (no extensions)" };
            println!("{}: valid bench_report.json ({kind})", file.display());
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
