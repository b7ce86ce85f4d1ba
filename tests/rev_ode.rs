//! rev_ode_small in the bench: exact reversal on a random cell at the bench's size, the
//! checkpointed gradient at k = k_max equal to dense BPTT while storing ceil(T / k_max) + 1
//! states, config validation of its shape, and a bench report that does not depend on how
//! runs are split over threads.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::config::{BenchConfig, parse_texts};
use rdbench_core::track::{Pendulum, Task, Track};
use rdbench_engine::backend;
use rdbench_engine::batch::DeviceData;
use rdbench_engine::host::Quiet;
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::{self, ModelShape};
use rdbench_engine::protocol::run_bench;
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::dense_grads;
use rdbench_engine::train::init_population;

fn shape(hidden: usize, rank0: usize) -> ModelShape {
    ModelShape { input: 2, hidden, output: 2, rank0, rank_max: 8, task: Task::Regression, forget_bits: 3 }
}

fn flat_grads(g: &[Tensor<3>]) -> Vec<f64> {
    g.iter().flat_map(|t| read(t.clone())).collect()
}

#[test]
fn random_cell_reverses_exactly_and_k_max_checkpointing_is_bptt() {
    let data = Pendulum::default().generate_all(0);
    let model = model::by_name("rev_ode_small", &shape(32, 8)).unwrap();
    let (params, _) = init_population(&*model, &[0, 1], &device());
    let batch = DeviceData::new(&data.train, &device()).all(2, 32);
    // The spec defaults: tau 0.08, k_max 16, one_step, 20 reversal iterations, batch 32.
    let s = ProbeSettings::new(&BenchConfig::default(), false);
    let recs = futures::executor::block_on(probe(&*model, &params, &batch, &s, 0)).unwrap();
    for r in &recs {
        assert!(r.defect_mean.unwrap() < 1e-5, "defect {:?}", r.defect_mean);
        assert!(r.chained.iter().all(|c| c.defect.unwrap() < 1e-5), "{:?}", r.chained);
        assert_eq!((r.k, r.checkpoints), (16, 6));
        assert!(r.grad_cos_kmax.unwrap() > 0.9999 && r.grad_cos_chosen.unwrap() > 0.9999);
    }
    let dense = dense_grads(&*model, &params, &batch);
    let ck = checkpointed_grads(&*model, &params, &batch, &[16, 16], 20);
    assert_eq!(ck.stored_states(), vec![80usize.div_ceil(16) + 1; 2]);
    for run in 0..2 {
        let pick = |g: &[Tensor<3>]| flat_grads(&g.iter().map(|t| t.clone().narrow(0, run, 1)).collect::<Vec<_>>());
        let cos = cosine(&pick(&ck.grads), &pick(&dense.grads));
        assert!(cos > 0.9999, "run {run}: cosine {cos}");
    }
}

#[test]
fn shapes_it_cannot_take_are_clear_errors() {
    let odd = model::by_name("rev_ode_small", &shape(33, 2)).err().unwrap();
    assert!(odd.contains("even hidden size") && odd.contains("33"), "{odd}");
    let ranks = model::by_name("rev_ode_small", &shape(32, 9)).err().unwrap();
    assert!(ranks.contains("r0 9"), "{ranks}");
    let unknown = model::by_name("lstm", &shape(32, 2)).err().unwrap();
    assert!(unknown.contains("rev_ode_small") && unknown.contains("rnn_small"), "{unknown}");
    let errs = parse_texts([("model", "rev_ode_small"), ("hidden_size", "15")]).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "hidden_size (--hidden): rev_ode_small splits h into two halves: the hidden size must be even (got 15)"
    );
}

#[test]
fn the_rev_ode_report_does_not_depend_on_how_runs_are_split_over_threads() {
    let cfg = BenchConfig {
        model: "rev_ode_small".into(),
        n_seeds: 2,
        n_sweep_seeds: 2,
        lrs: vec![0.003, 0.01],
        epochs: 3,
        hidden_size: 8,
        rank_max: 4, // at most hidden_size / 2
        enrich_window: 1,
        enrich_threshold: 0.9,
        ..BenchConfig::default()
    };
    let run = |threads| {
        let b = backend::Backend { threads, ..backend::cpu("flex").unwrap() };
        let r = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut Quiet)).unwrap();
        if let Err(p) = rdbench_core::report::validate_json(&r.to_json()) {
            panic!("{p:?}");
        }
        let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        v.as_object_mut().unwrap().remove("environment");
        let memory = v["memory"].as_object_mut().unwrap();
        for k in ["measured_peak_bytes_checkpointed", "measured_peak_bytes_dense", "measured_saved_fraction"] {
            memory.remove(k);
        }
        for run in v["runs"].as_array_mut().unwrap() {
            let o = run.as_object_mut().unwrap();
            for k in ["wall_time_s", "population"] {
                o.remove(k);
            }
            for p in o["probes"].as_array_mut().unwrap() {
                // Measured bytes are a measurement of the population's pass, like its time.
                let p = p.as_object_mut().unwrap();
                p.remove("peak_bytes_checkpointed");
                p.remove("peak_bytes_dense");
                for point in p["frontier"].as_array_mut().unwrap() {
                    point.as_object_mut().unwrap().retain(|k, _| k != "peak_bytes" && k != "seconds");
                }
            }
        }
        for point in v["frontier"]["points"].as_array_mut().unwrap() {
            point.as_object_mut().unwrap().retain(|k, _| k != "peak_bytes" && k != "seconds");
        }
        v
    };
    let one = run(1);
    assert_eq!(one["model"], "rev_ode_small");
    // Some run gained a rank (the knobs reach the model), so the split is tested with ranks.
    let grew = one["runs"].as_array().unwrap().iter().any(|r| r["rank_history"].as_array().unwrap().len() > 1);
    assert!(grew, "no run was enriched");
    assert_eq!(run(2), one);
}
