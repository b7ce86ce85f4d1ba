//! A tiny study end to end: both tracks, both models, both policies, conditions judged over
//! the pooled probes, per model and per track, a JSON that round-trips, embeds every bench report unchanged
//! (each still validates, so it loads in the viewer), and a chart; bad inputs are refused
//! with a reason.

use rdbench::summary::study as summary;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase};
use rdbench_core::report::validate_json;
use rdbench_core::study::{StudyReport, all_tracks, bench_configs, build_study};
use rdbench_engine::backend;
use rdbench_engine::host::Quiet;
use rdbench_engine::protocol::run_bench;
use rdbench_page::study_chart as chart;
use serde_json::Value;
use std::sync::OnceLock;

// Measured memory needs the counting allocator, as the `rdbench` binary installs it.
#[global_allocator]
static ALLOC: rdbench::alloc_count::Counting = rdbench::alloc_count::Counting;

fn tiny() -> BenchConfig {
    // rev_ode_small's rank is at most hidden_size / 2.
    BenchConfig {
        n_seeds: 2,
        n_sweep_seeds: 1,
        lrs: vec![0.01],
        epochs: 2,
        hidden_size: 8,
        rank_max: 4,
        train_size: 100,
        ..BenchConfig::default()
    }
}

fn texts() -> &'static Vec<String> {
    static T: OnceLock<Vec<String>> = OnceLock::new();
    T.get_or_init(|| {
        rdbench::alloc_count::install_meter();
        let b = backend::cpu("flex").unwrap();
        bench_configs(&tiny(), &all_tracks())
            .unwrap()
            .iter()
            .map(|c| {
                futures::executor::block_on(run_bench(&c.resolve().unwrap(), &b, &[], &mut Quiet)).unwrap().to_json()
            })
            .collect()
    })
}

#[test]
fn a_tiny_study_pools_both_tracks_and_models_and_embeds_every_report() {
    let study = build_study(texts()).unwrap();
    assert_eq!(study.tracks, ["dynamics", "mnist1d", "adding"]);
    assert_eq!(study.models, ["rnn_small", "rev_ode_small", "rev_gru"]);
    assert_eq!(study.policies, ["one_step", "chained"]);
    let rows: Vec<String> = study.table.iter().map(|r| format!("{} {} {}", r.track, r.model, r.policy)).collect();
    let mut want = Vec::new();
    for t in ["dynamics", "mnist1d", "adding"] {
        for m in ["rnn_small", "rev_ode_small", "rev_gru"] {
            for p in ["one_step", "chained"] {
                want.push(format!("{t} {m} {p}"));
            }
        }
    }
    assert_eq!(rows, want);
    // Each row names its track's metric and direction.
    for r in &study.table {
        let (metric, direction) =
            if r.track == "mnist1d" { ("test accuracy", "higher is better") } else { ("test MSE", "lower is better") };
        let o = &r.outcome;
        assert_eq!((o.metric.as_str(), o.metric_direction.as_str()), (metric, direction), "{}", r.track);
        let acc = o.baseline_metric.unwrap();
        assert!(r.track != "mnist1d" || (0.0..=1.0).contains(&acc), "an accuracy: {acc}");
    }

    // The pooled probes are exactly the idea full runs' probes of every embedded report,
    // and condition (a) says whether both regimes occur among them.
    let mut defects = Vec::new();
    for (text, v) in texts().iter().zip(&study.reports) {
        assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), v, "embedded unchanged");
        let r = validate_json(&serde_json::to_string(v).unwrap()).expect("an embedded report validates");
        for run in r.runs.unwrap().iter().filter(|r| r.arm == Arm::Idea && r.phase == Phase::Full) {
            defects.extend(run.probes.iter().map(|p| p.defect_mean.unwrap_or(f64::INFINITY)));
        }
    }
    assert_eq!(study.pooled.n_probes, defects.len());
    assert_eq!(study.pooled.n_probes, study.table.iter().map(|r| r.n_probes).sum::<usize>());
    let both = defects.iter().any(|&d| d <= study.tau) && defects.iter().any(|&d| d > study.tau);
    assert_eq!(study.pooled.conditions["a_both_regimes"].holds, both);
    assert_eq!(study.pooled.conditions.len(), 4);
    for m in &study.per_model {
        let n: usize = study.table.iter().filter(|r| r.model == m.scope).map(|r| r.n_probes).sum();
        assert_eq!(m.n_probes, n, "{}", m.scope);
    }
    assert_eq!(study.per_track.iter().map(|m| m.scope.as_str()).collect::<Vec<_>>(), ["dynamics", "mnist1d", "adding"]);
    for m in &study.per_track {
        let n: usize = study.table.iter().filter(|r| r.track == m.scope).map(|r| r.n_probes).sum();
        assert_eq!((m.n_probes, m.benches.len()), (n, 6), "{}", m.scope);
    }
    // The exactly reversible model's probes are all in the low-defect regime, with the dense
    // gradient at k_max.
    for rev in study.table.iter().filter(|r| r.model == "rev_ode_small") {
        assert!(rev.mean_defect.unwrap() < 1e-5 && rev.mean_grad_cos_kmax.unwrap() > 0.9999, "{rev:?}");
    }
    // The reversible GRU's, with its information buffer, exactly 0.
    for rev in study.table.iter().filter(|r| r.model == "rev_gru") {
        assert!(rev.mean_defect == Some(0.0) && rev.mean_grad_cos_kmax.unwrap() > 0.9999, "{rev:?}");
    }
    let rev = study.table.iter().find(|r| r.model == "rev_ode_small").unwrap();
    let rev_m = study.per_model.iter().find(|m| m.scope == "rev_ode_small").unwrap();
    assert!(!rev_m.conditions["a_both_regimes"].holds, "one model alone shows one regime");
    // Measured memory natively: the checkpointed pass at k_max peaks lower than dense BPTT.
    assert!(rev.memory_saved_measured.unwrap() > 0.0, "{rev:?}");

    let back: StudyReport = serde_json::from_str(&study.to_json()).unwrap();
    assert_eq!(back, study);
    let text = summary::render(&study);
    assert!(text.contains("mnist1d / rev_ode_small / chained") && text.contains("a_both_regimes"), "{text}");
    assert!(text.contains("test accuracy (higher is better)"), "{text}");

    let mut svg = String::new();
    {
        use plotters::prelude::*;
        let root = SVGBackend::with_string(&mut svg, (1200, 560)).into_drawing_area();
        chart::draw(&root, &study, 1.0, false).unwrap();
        root.present().unwrap();
    }
    assert!(svg.contains("rev_ode_small") && svg.contains("tau = 0.08") && svg.contains("at k_max"), "chart text");
    let (pts, hidden) = chart::points(&study).unwrap();
    assert_eq!(pts.len() + hidden, study.pooled.n_probes);
    let markers: usize = pts.iter().map(|p| p.cos_chosen.iter().chain(&p.cos_kmax).count()).sum();
    assert!(markers > 0 && svg.matches("<polygon").count() >= markers, "one marker per probe and panel");
}

#[test]
fn reports_that_do_not_belong_together_are_refused() {
    let t = texts();
    let err = build_study(&[]).unwrap_err();
    assert!(err.contains("at least one"), "{err}");
    let err = build_study(&[t[0].clone(), t[0].clone()]).unwrap_err();
    assert!(err.contains("both dynamics rnn_small one_step"), "{err}");
    // Another config (epochs) is not the same study.
    let mut v: Value = serde_json::from_str(&t[1]).unwrap();
    v["config"]["epochs"] = 3.into();
    let err = build_study(&[t[0].clone(), v.to_string()]).unwrap_err();
    assert!(err.contains("differs from report 1 in epochs"), "{err}");
    let seed =
        std::fs::read_to_string(format!("{}/www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let err = build_study(&[seed]).unwrap_err();
    assert!(err.contains("seed-era"), "{err}");
    assert!(build_study(&["{".into()]).unwrap_err().contains("not JSON"));
}
