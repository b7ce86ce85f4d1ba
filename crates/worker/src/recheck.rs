//! "Re-check N runs": train runs of a loaded report again in this worker and compare each
//! with its record, as `rdbench validate --rerun` does natively (`rdbench_core::rerun`).

use rdbench_core::config::BenchConfig;
use rdbench_core::messages::{StopReason, WorkerEvent};
use rdbench_core::records::{RunRecord, RunSpec};
use rdbench_core::rerun::{GPU_TOLERANCE, compare, parse_selection, run_name, select};
use rdbench_engine::error::EngineError;
use rdbench_engine::host::Host;
use serde_json::Value;
use web_time::Instant;

/// Re-run what `selection` picks of `report` on this worker's CPU backend: `rechecked`, or
/// `stopped` (a report that cannot be re-run, or a cancel).
pub async fn recheck(report: &str, selection: &str, seed: u64, host: &mut dyn Host) -> WorkerEvent {
    let started = Instant::now();
    let refuse = |message: String| WorkerEvent::Stopped {
        reason: StopReason::Config,
        message,
        runs: vec![],
        elapsed_s: 0.0,
        fraction_kept: 0.0,
    };
    let v: Value = match serde_json::from_str(report) {
        Ok(v) => v,
        Err(e) => return refuse(format!("the report is not valid JSON: {e}")),
    };
    let Ok(cfg) = serde_json::from_value::<BenchConfig>(v["config"].clone()) else {
        return refuse("a seed-era report has no config and no runs to re-check".into());
    };
    if let Err(e) = cfg.validate() {
        return refuse(format!("the report's config: {e}"));
    }
    let values: &[Value] = v["runs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let runs: Vec<RunRecord> = match values.iter().map(|r| serde_json::from_value(r.clone())).collect() {
        Ok(r) => r,
        Err(e) => return refuse(format!("a run record does not read: {e}")),
    };
    if runs.is_empty() {
        return refuse("the report has no runs to re-check".into());
    }
    let picked = match parse_selection(selection).and_then(|s| select(&cfg, &runs, &s, seed, false)) {
        Ok(p) => p,
        Err(e) => return refuse(e),
    };
    let backend = match crate::resolve::backend(crate::resolve::Kind::Cpu, "").await {
        Ok(b) => b,
        Err(e) => return refuse(e),
    };
    // wasm's kernels round differently from native ones, and a GPU's reductions need not be
    // ordered: only a report made here, in the browser on the CPU, compares bit for bit.
    let notes: Vec<&str> = picked
        .iter()
        .filter_map(|&i| {
            if v["environment"]["platform"] != "wasm" {
                Some("the report was made natively, and wasm rounds differently")
            } else if runs[i].backend != backend.name {
                Some("its runs were made on another backend")
            } else {
                None
            }
        })
        .collect();
    let tolerance = (!notes.is_empty()).then_some(GPU_TOLERANCE);
    let this = rdbench_engine::BUILD;
    let mut builds: Vec<&str> = picked.iter().map(|&i| runs[i].build.as_str()).filter(|b| *b != this).collect();
    builds.dedup();
    let specs: Vec<RunSpec> = picked.iter().map(|&i| runs[i].spec()).collect();
    let again = match rdbench_engine::protocol::train_runs(&cfg, &backend, &specs, host).await {
        Ok(r) => r,
        Err(s) => {
            let reason = match s.reason {
                EngineError::Cancelled => StopReason::Cancelled,
                EngineError::Config(_) => StopReason::Config,
                EngineError::Device(_) => StopReason::Device,
            };
            return WorkerEvent::Stopped {
                reason,
                message: s.reason.to_string(),
                runs: vec![],
                elapsed_s: started.elapsed().as_secs_f64(),
                fraction_kept: 0.0,
            };
        }
    };
    let mut differing = Vec::new();
    for (&i, spec) in picked.iter().zip(&specs) {
        let Some(r) = again.iter().find(|r| r.spec() == *spec) else {
            differing.push(format!("{} (not re-run)", run_name(spec)));
            continue;
        };
        let diffs = compare(&values[i], r, tolerance);
        if !diffs.is_empty() {
            let more = if diffs.len() > 2 { format!("; {} more", diffs.len() - 2) } else { String::new() };
            differing.push(format!("{} ({}{more})", run_name(spec), diffs[..diffs.len().min(2)].join("; ")));
        }
    }
    WorkerEvent::Rechecked {
        runs: specs.iter().map(run_name).collect(),
        differing,
        tolerance,
        note: notes.first().map(|n| n.to_string()).unwrap_or_default(),
        other_build: builds.join(", "),
        elapsed_s: started.elapsed().as_secs_f64(),
    }
}
