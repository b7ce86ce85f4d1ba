//! "Re-check N runs": train runs of a loaded report again in this worker and compare each
//! with its record, as `rdbench validate --rerun` does natively (`rdbench_core::rerun`).

use rdbench_core::messages::{StopReason, WorkerEvent};
use rdbench_core::records::RunSpec;
use rdbench_core::rerun::{GPU_TOLERANCE, bench_runs, compare, inexact, parse_selection, run_name, select};
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
    let (cfg, runs) = match bench_runs(&v) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let values: &[Value] = v["runs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let picked = match parse_selection(selection).and_then(|s| select(&cfg, &runs, &s, seed, false)) {
        Ok(p) => p,
        Err(e) => return refuse(e),
    };
    let backend = match crate::resolve::backend(crate::resolve::Kind::Cpu, "").await {
        Ok(b) => b,
        Err(e) => return refuse(e),
    };
    let platform = v["environment"]["platform"].as_str().unwrap_or_default();
    let notes: Vec<&str> = picked.iter().filter_map(|&i| inexact(platform, &runs[i].backend, &backend.name)).collect();
    let tolerance = (!notes.is_empty()).then_some(GPU_TOLERANCE);
    let this = rdbench_engine::BUILD;
    let mut builds: Vec<&str> = picked.iter().map(|&i| runs[i].build.as_str()).filter(|b| *b != this).collect();
    builds.dedup();
    let specs: Vec<RunSpec> = picked.iter().map(|&i| runs[i].spec()).collect();
    let ctx = match cfg.resolve() {
        Ok(c) => c,
        Err(e) => return refuse(format!("the report's config: {e}")),
    };
    let again = match rdbench_engine::protocol::train_runs(&ctx, &backend, &specs, host).await {
        Ok(r) => r,
        Err(s) => {
            return WorkerEvent::Stopped {
                reason: s.reason.stop_reason(),
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
