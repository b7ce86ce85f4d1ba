//! `rdbench validate`: check a bench report, or a study report, against the schema and
//! against what its own config and runs rebuild; say which build made it; and with
//! `--rerun`, train some or all of its runs again and compare them with the report.

use super::Failure;
use crate::outln;
use rdbench_core::report::{is_scale, is_study, validate_json};
use rdbench_core::scale::validate_scale_json;
use rdbench_core::study::validate_study_json;
use std::path::PathBuf;

/// Flags of `validate`.
#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// Report to check (bench_report.json, study_report.json or scale_report.json).
    pub file: PathBuf,
    /// Train runs of the report again and compare them with it (bit for bit on a CPU
    /// backend): N runs drawn at random per bench report, `all`, or runs named
    /// ARM/PHASE/LR/SEED (idea/full/0.01/3; in a study TRACK/MODEL/POLICY/ARM/PHASE/LR/SEED),
    /// separated by commas.
    #[arg(long, value_name = "N|all|RUNS")]
    pub rerun: Option<String>,
    /// Seed of the draw of `--rerun N` (default: one from the clock, printed).
    #[arg(long, value_name = "SEED", requires = "rerun")]
    pub rerun_seed: Option<u64>,
    /// Backend to re-run on: flex, ndarray or (with the wgpu feature) vulkan (default: each
    /// run's own; runs re-run on another backend are compared within the GPU tolerance).
    #[arg(long, requires = "rerun")]
    pub backend: Option<String>,
    /// Threads to split the re-run populations over (default: one per core; the numbers are
    /// the same).
    #[arg(long, requires = "rerun", value_parser = clap::value_parser!(u16).range(1..=super::args::MAX_THREADS as i64))]
    pub threads: Option<u16>,
}

/// Which build made a report, in words.
pub(super) fn made_by(value: &serde_json::Value) -> String {
    let env = &value["environment"];
    match (env["build"].as_str().filter(|b| !b.is_empty()), env["backend"].as_str()) {
        (Some(b), Some(backend)) => format!("made by build {b} on {backend}"),
        (None, Some(backend)) => {
            let version = env["rdbench_version"].as_str().unwrap_or("?");
            format!("made by rdbench {version} on {backend}, before builds were recorded")
        }
        _ => "seed-era: no record of what made it".into(),
    }
}

pub fn validate(args: &ValidateArgs) -> i32 {
    let file = &args.file;
    let text = match super::input::read(file, "the report") {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let value = serde_json::from_str::<serde_json::Value>(&text).ok();
    // A study's or a scale study's bench reports are embedded under `reports`.
    let scale = value.as_ref().is_some_and(is_scale);
    let study = scale || value.as_ref().is_some_and(is_study);
    let result = if scale {
        validate_scale_json(&text).map(|s| format!("valid scale_report.json ({} bench reports)", s.reports.len()))
    } else if study {
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
    let valid = match result {
        Ok(what) => {
            outln!("{}: {what}", file.display());
            true
        }
        Err(problems) => {
            eprintln!("{}: {} problem(s)", file.display(), problems.len());
            for p in problems {
                eprintln!("  {p}");
            }
            false
        }
    };
    if let Some(v) = &value {
        let reports: Vec<&serde_json::Value> =
            if study { v["reports"].as_array().map(|r| r.iter().collect()).unwrap_or_default() } else { vec![v] };
        let mut builds: Vec<String> = reports.iter().map(|r| made_by(r)).collect();
        builds.dedup();
        for b in builds {
            outln!("{}: {b}", file.display());
        }
    }
    let Some(selection) = &args.rerun else { return if valid { 0 } else { 1 } };
    let Some(v) = &value else {
        eprintln!("error: the file is not JSON: nothing to re-run");
        return 2;
    };
    let reports: Vec<&serde_json::Value> =
        if study { v["reports"].as_array().map(|r| r.iter().collect()).unwrap_or_default() } else { vec![v] };
    let opts = super::rerun::RerunOpts {
        selection: selection.clone(),
        seed: args.rerun_seed,
        backend: args.backend.clone(),
        threads: args.threads,
    };
    match super::rerun::rerun(&opts, &reports, study) {
        Ok(true) if valid => 0,
        Ok(_) => 1,
        Err(Failure::Interrupted) => super::signal::EXIT_INTERRUPTED,
        Err(Failure::Error(e)) => {
            eprintln!("error: {e}");
            2
        }
    }
}
