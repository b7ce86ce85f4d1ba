//! Re-execution (`rdbench validate --rerun`): which runs of a report to train again, and
//! whether a run trained again is the run the report records. Validation checks that a
//! report agrees with itself; only training its runs again shows that they ran, so this is
//! the one check a forger who recomputes every derived figure cannot pass.
//!
//! A run is named `ARM/PHASE/LR/SEED` (`idea/full/0.01/3`), and in a study
//! `TRACK/MODEL/POLICY/ARM/PHASE/LR/SEED` (`mnist1d/rnn_small/chained/idea/full/0.01/3`).

use crate::config::BenchConfig;
use crate::records::{Arm, Phase, RunRecord, RunSpec};
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// How far a number re-run on a GPU may be from the report's: the documented agreement of
/// the fused GPU kernels with the tensor-op path (`tests/cube_kernels.rs`), 1e-4, relative
/// above 1 and absolute below. A GPU's reductions need not run in the same order twice.
pub const GPU_TOLERANCE: f64 = 1e-4;

/// Which runs to train again.
#[derive(Clone, Debug, PartialEq)]
pub enum Selection {
    /// A seeded draw of this many runs per bench report.
    Count(usize),
    /// Every run.
    All,
    /// These runs, each with its bench (track, model, policy) where one was named.
    Named(Vec<(Option<[String; 3]>, RunSpec)>),
}

/// A run's name: `ARM/PHASE/LR/SEED`.
pub fn run_name(s: &RunSpec) -> String {
    format!("{}/{}/{}/{}", s.arm.as_str(), s.phase.as_str(), s.lr, s.seed)
}

/// A run's name in a study: `TRACK/MODEL/POLICY/ARM/PHASE/LR/SEED`.
pub fn study_run_name(cfg: &BenchConfig, s: &RunSpec) -> String {
    format!("{}/{}/{}/{}", cfg.track, cfg.model, cfg.policy.as_str(), run_name(s))
}

fn parse_run(text: &str) -> Result<(Option<[String; 3]>, RunSpec), String> {
    let parts: Vec<&str> = text.split('/').collect();
    let (bench, run) = match parts.len() {
        4 => (None, &parts[..]),
        7 => (Some([parts[0].to_string(), parts[1].to_string(), parts[2].to_string()]), &parts[3..]),
        _ => {
            return Err(format!(
                "{text:?}: a run is ARM/PHASE/LR/SEED (idea/full/0.01/3), in a study \
                 TRACK/MODEL/POLICY/ARM/PHASE/LR/SEED"
            ));
        }
    };
    let arm = match run[0] {
        "baseline" => Arm::Baseline,
        "idea" => Arm::Idea,
        a => return Err(format!("{text:?}: the arm is baseline or idea, not {a:?}")),
    };
    let phase = match run[1] {
        "sweep" => Phase::Sweep,
        "full" => Phase::Full,
        p => return Err(format!("{text:?}: the phase is sweep or full, not {p:?}")),
    };
    let lr = run[2].parse::<f64>().ok().filter(|lr| lr.is_finite() && *lr > 0.0);
    let lr = lr.ok_or_else(|| format!("{text:?}: {:?} is not a learning rate", run[2]))?;
    let seed = run[3].parse::<u64>().map_err(|_| format!("{text:?}: {:?} is not a seed", run[3]))?;
    Ok((bench, RunSpec { arm, phase, lr, seed }))
}

/// Read `--rerun`: a count, `all`, or run names separated by commas.
pub fn parse_selection(text: &str) -> Result<Selection, String> {
    let text = text.trim();
    if text == "all" {
        return Ok(Selection::All);
    }
    if let Ok(n) = text.parse::<usize>() {
        return if n == 0 {
            Err("--rerun 0 re-runs nothing: give 1 or more, all, or runs".into())
        } else {
            Ok(Selection::Count(n))
        };
    }
    let texts: Vec<&str> = text.split(',').map(str::trim).collect();
    let runs = texts.iter().map(|r| parse_run(r)).collect::<Result<Vec<_>, _>>()?;
    // The same run named twice (`0.01` and `1e-2` are one lr) is a slip: refused, not merged.
    for (i, run) in runs.iter().enumerate() {
        if let Some(j) = runs[..i].iter().position(|r| r == run) {
            return Err(format!("{:?} and {:?} name the same run", texts[j], texts[i]));
        }
    }
    Ok(Selection::Named(runs))
}

/// A bench report's config and run records, read for training them again: the config valid,
/// every record read, at least one. The CLI and the page's Re-check read a report this way.
pub fn bench_runs(report: &Value) -> Result<(BenchConfig, Vec<RunRecord>), String> {
    let cfg: BenchConfig = serde_json::from_value(report["config"].clone())
        .map_err(|_| "no config to re-run with: a seed-era report has no runs".to_string())?;
    cfg.validate().map_err(|e| format!("the report's config: {e}"))?;
    let values: &[Value] = report["runs"].as_array().map(Vec::as_slice).unwrap_or_default();
    let runs: Vec<RunRecord> = values
        .iter()
        .map(|v| serde_json::from_value(v.clone()).map_err(|e| format!("a run record does not read: {e}")))
        .collect::<Result<_, _>>()?;
    if runs.is_empty() {
        return Err("the report has no runs to re-run".into());
    }
    Ok((cfg, runs))
}

/// Where this build runs: "wasm" in the browser, "native" elsewhere (a report's
/// `environment.platform`).
pub fn this_platform() -> &'static str {
    if cfg!(target_arch = "wasm32") { "wasm" } else { "native" }
}

/// Why a run `made_on` a backend (its record's `backend`) in a report made on
/// `report_platform` (its `environment.platform`; anything but "wasm" is native), trained
/// again here on the backend `here`, is compared within [`GPU_TOLERANCE`] rather than bit
/// for bit; None: the same arithmetic, so bit for bit. wasm's kernels round differently from
/// native ones (no FMA), and a GPU's reductions need not be ordered.
pub fn inexact(report_platform: &str, made_on: &str, here: &str) -> Option<&'static str> {
    let (made_wasm, here_wasm) = (report_platform == "wasm", this_platform() == "wasm");
    if made_wasm != here_wasm {
        Some(if made_wasm { "made in the browser (wasm)" } else { "made natively, and wasm rounds differently" })
    } else if made_on.is_empty() {
        Some("made on a backend the report does not record")
    } else if !made_on.starts_with("cpu-") {
        Some("made on a GPU")
    } else if made_on != here {
        Some("made on another backend")
    } else {
        None
    }
}

/// `n` of `total` runs drawn without replacement by the seeded PRNG (ChaCha8), in report
/// order: the same seed draws the same runs.
pub fn draw(total: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut idx: Vec<usize> = (0..total).collect();
    let n = n.min(total);
    for i in 0..n {
        let j = rng.random_range(i..total);
        idx.swap(i, j);
    }
    let mut out = idx[..n].to_vec();
    out.sort_unstable();
    out
}

/// The indices of `runs` that `selection` picks for a bench of `cfg`, or why a named run
/// is not there. `in_study`: named runs must name their bench.
pub fn select(
    cfg: &BenchConfig,
    runs: &[RunRecord],
    selection: &Selection,
    seed: u64,
    in_study: bool,
) -> Result<Vec<usize>, String> {
    match selection {
        Selection::All => Ok((0..runs.len()).collect()),
        Selection::Count(n) => Ok(draw(runs.len(), *n, seed)),
        Selection::Named(named) => {
            let mut out = Vec::new();
            for (bench, spec) in named {
                let this = [cfg.track.clone(), cfg.model.clone(), cfg.policy.as_str().to_string()];
                match bench {
                    None if in_study => {
                        return Err(format!(
                            "{}: in a study, name the bench too: TRACK/MODEL/POLICY/{}",
                            run_name(spec),
                            run_name(spec)
                        ));
                    }
                    Some(b) if *b != this => continue,
                    _ => {}
                }
                let found = runs
                    .iter()
                    .position(|r| r.arm == spec.arm && r.phase == spec.phase && r.lr == spec.lr && r.seed == spec.seed);
                match found {
                    Some(i) if !out.contains(&i) => out.push(i),
                    Some(_) => {}
                    None => {
                        let name = if in_study { study_run_name(cfg, spec) } else { run_name(spec) };
                        return Err(format!("{name} is not a run of the report"));
                    }
                }
            }
            out.sort_unstable();
            Ok(out)
        }
    }
}

/// What a run's record measures rather than computes, left out of the comparison: its wall
/// time and population (how it was grouped), its build (compared apart), the frontier's
/// seconds, and the measured peak bytes of its probes and frontier points.
pub fn computed_part(v: Value) -> Value {
    computed_with_bytes(v, false)
}

/// [`computed_part`], keeping the measured peak bytes when `bytes`: each is one run's pass
/// alone, the same however runs are grouped, so a re-run that measured them (natively on
/// the CPU) compares them too.
fn computed_with_bytes(mut v: Value, bytes: bool) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["wall_time_s", "population", "build"] {
            o.remove(k);
        }
    }
    if let Some(probes) = v.get_mut("probes").and_then(Value::as_array_mut) {
        for p in probes {
            if let Some(o) = p.as_object_mut().filter(|_| !bytes) {
                o.remove("peak_bytes_checkpointed");
                o.remove("peak_bytes_dense");
            }
            if let Some(points) = p.get_mut("frontier").and_then(Value::as_array_mut) {
                for point in points.iter_mut().filter_map(Value::as_object_mut) {
                    if !bytes {
                        point.remove("peak_bytes");
                    }
                    point.remove("seconds");
                }
            }
        }
    }
    v
}

/// Every path where the re-run record (`rerun`) differs from the report's (`file`, its JSON
/// in the report), measurements aside: exactly, or within `tolerance` (GPU runs). Measured
/// peak bytes are compared where the re-run measured them.
pub fn compare(file: &Value, rerun: &RunRecord, tolerance: Option<f64>) -> Vec<String> {
    let bytes = rerun.probes.iter().any(|p| p.peak_bytes_dense.is_some());
    let rerun = computed_with_bytes(serde_json::to_value(rerun).expect("a record serialises"), bytes);
    let mut out = Vec::new();
    walk(&computed_with_bytes(file.clone(), bytes), &rerun, "", tolerance, &mut out);
    out
}

fn walk(file: &Value, rerun: &Value, path: &str, tol: Option<f64>, out: &mut Vec<String>) {
    let show = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() <= 60 { s } else { format!("{}…", s.chars().take(59).collect::<String>()) }
    };
    let at = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
    match (file, rerun) {
        (Value::Object(f), Value::Object(r)) => {
            for (k, fv) in f {
                match r.get(k) {
                    Some(rv) => walk(fv, rv, &at(k), tol, out),
                    None => out.push(format!("{}: {} in the report, absent re-run", at(k), show(fv))),
                }
            }
            for (k, rv) in r.iter().filter(|(k, _)| !f.contains_key(*k)) {
                out.push(format!("{}: absent in the report, {} re-run", at(k), show(rv)));
            }
        }
        (Value::Array(f), Value::Array(r)) if f.len() == r.len() => {
            for (i, (fv, rv)) in f.iter().zip(r).enumerate() {
                walk(fv, rv, &format!("{path}[{i}]"), tol, out);
            }
        }
        (Value::Number(f), Value::Number(r)) => {
            let (a, b) = (f.as_f64().unwrap_or(f64::NAN), r.as_f64().unwrap_or(f64::NAN));
            let same = match tol {
                // Integers (intervals, counts, epochs) are exact even on a GPU.
                Some(t) if !(f.is_u64() && r.is_u64()) => (a - b).abs() <= t * a.abs().max(b.abs()).max(1.0),
                _ => a == b,
            };
            if !same {
                out.push(format!("{path}: {} in the report, {} re-run", show(file), show(rerun)));
            }
        }
        (f, r) if f == r => {}
        (f, r) => out.push(format!("{path}: {} in the report, {} re-run", show(f), show(r))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit for bit only where the arithmetic is the same: this platform's CPU backend that made
    /// the run; every other case names why not.
    #[test]
    fn a_rerun_is_exact_only_on_the_platform_and_cpu_backend_that_made_the_run() {
        let here = this_platform();
        let there = if here == "wasm" { "native" } else { "wasm" };
        assert_eq!(inexact(here, "cpu-flex", "cpu-flex"), None);
        // An older report without its platform reads as native.
        assert_eq!(inexact("", "cpu-flex", "cpu-flex").is_none(), here == "native");
        assert!(inexact(there, "cpu-flex", "cpu-flex").is_some());
        assert_eq!(inexact(here, "", "cpu-flex"), Some("made on a backend the report does not record"));
        assert_eq!(inexact(here, "webgpu", "cpu-flex"), Some("made on a GPU"));
        assert_eq!(inexact(here, "cpu-ndarray", "cpu-flex"), Some("made on another backend"));
    }

    /// A report's runs read for re-running, or the problem named.
    #[test]
    fn a_bench_reports_runs_are_read_or_refused_by_name() {
        let seed_era = serde_json::json!({"comparison": {}});
        assert!(bench_runs(&seed_era).unwrap_err().contains("a seed-era report has no runs"));
        let cfg = serde_json::to_value(BenchConfig::default()).unwrap();
        let mut invalid = cfg.clone();
        invalid["n_seeds"] = 0.into();
        assert!(bench_runs(&serde_json::json!({ "config": invalid })).unwrap_err().starts_with("the report's config:"));
        let none = serde_json::json!({ "config": cfg, "runs": [] });
        assert_eq!(bench_runs(&none).unwrap_err(), "the report has no runs to re-run");
        let broken = serde_json::json!({ "config": cfg, "runs": [{"arm": "baseline"}] });
        assert!(bench_runs(&broken).unwrap_err().starts_with("a run record does not read"));
    }

    #[test]
    fn a_selection_reads_counts_all_and_names() {
        assert_eq!(parse_selection("3"), Ok(Selection::Count(3)));
        assert_eq!(parse_selection("all"), Ok(Selection::All));
        assert!(parse_selection("0").is_err());
        let Ok(Selection::Named(runs)) =
            parse_selection("idea/full/0.01/3,dynamics/gru/one_step/baseline/sweep/1e-3/1000")
        else {
            panic!("named runs")
        };
        assert_eq!(runs[0], (None, RunSpec { arm: Arm::Idea, phase: Phase::Full, lr: 0.01, seed: 3 }));
        assert_eq!(runs[1].0.as_ref().unwrap()[1], "gru");
        assert_eq!(runs[1].1.lr, 0.001);
        assert_eq!(
            parse_selection("idea/full/0.01/3, idea/full/1e-2/3"),
            Err("\"idea/full/0.01/3\" and \"idea/full/1e-2/3\" name the same run".into())
        );
        for bad in ["idea/full/0.01", "ideas/full/0.01/3", "idea/full/-1/3", "idea/full/0.01/x", "idea/test/0.01/3"] {
            assert!(parse_selection(bad).is_err(), "{bad}");
        }
        assert_eq!(run_name(&runs[0].1), "idea/full/0.01/3");
    }

    #[test]
    fn a_draw_is_its_seeds_and_without_repeats() {
        let a = draw(34, 5, 7);
        assert_eq!(a, draw(34, 5, 7));
        assert_ne!(a, draw(34, 5, 8));
        let mut d = a.clone();
        d.dedup();
        assert_eq!(d.len(), 5);
        assert!(a.windows(2).all(|w| w[0] < w[1]) && a.iter().all(|&i| i < 34));
        assert_eq!(draw(3, 10, 1), [0, 1, 2]);
    }

    #[test]
    fn a_comparison_names_what_differs_and_leaves_measurements_out() {
        let rec: RunRecord = serde_json::from_value(serde_json::json!({
            "arm": "baseline", "phase": "sweep", "lr": 0.01, "seed": 1000, "metric": 0.5, "diverged": false,
            "diverged_at": null, "loss_curve": [0.7, 0.5], "wall_time_s": 1.0, "population": 2,
            "mean_stored_states": null, "probes": [], "backend": "cpu-flex", "run_hash": "ab", "build": "b1"
        }))
        .unwrap();
        let mut file = serde_json::to_value(&rec).unwrap();
        file["wall_time_s"] = 9.0.into();
        file["population"] = 1.into();
        file["build"] = "b0".into();
        assert!(compare(&file, &rec, None).is_empty());
        file["loss_curve"][1] = 0.50000001.into();
        assert_eq!(compare(&file, &rec, None), ["loss_curve[1]: 0.50000001 in the report, 0.5 re-run"]);
        assert!(compare(&file, &rec, Some(GPU_TOLERANCE)).is_empty());
        file["metric"] = 0.6.into();
        assert_eq!(compare(&file, &rec, Some(GPU_TOLERANCE)).len(), 1);
    }
}
