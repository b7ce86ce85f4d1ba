//! Both models on a classification against PyTorch float64 autograd on real
//! MNIST-1D sequences (tests/fixtures/classify_torch.json, `tools/make_fixtures.py
//! classify_torch`): the cross-entropy of the last step's readout and every parameter
//! gradient, by every path (`common::torch_pinned`).

mod common;
use common::torch_pinned::Pinned;
use common::*;
use rdbench_core::track::{Dataset, Task};
use rdbench_engine::model::{self, ModelShape};

const CLASSES: usize = 10;
const TASK: Task = Task::Classification { classes: CLASSES };

fn fx() -> Pinned {
    let v = fixture("classify_torch.json");
    let n = |k: &str| v[k].as_u64().unwrap() as usize;
    let (f, t, b) = (n("F"), n("T"), n("B"));
    let labels: Vec<usize> = v["labels"].as_array().unwrap().iter().map(|l| l.as_u64().unwrap() as usize).collect();
    let ds = Dataset {
        n: b,
        t,
        f_in: f,
        f_out: CLASSES,
        x: flat(&v["x"]).iter().map(|&x| x as f32).collect(),
        y: labels.iter().flat_map(|&c| (0..CLASSES).map(move |k| if k == c { 1.0 } else { 0.0 })).collect(),
        task: TASK,
    };
    assert_eq!(ds.labels().unwrap(), labels);
    Pinned::new(v, &ds)
}

#[test]
fn gru_cross_entropy_gradients_match_torch() {
    fx().check_gru();
}

#[test]
fn rev_ode_cross_entropy_gradients_match_torch() {
    fx().check_rev_ode();
}

#[test]
fn the_regression_readout_of_rev_ode_needs_matching_widths_but_a_classification_does_not() {
    let shape = |task| ModelShape { input: 1, hidden: 8, output: CLASSES, rank0: 2, rank_max: 3, task, forget_bits: 3 };
    let err = model::by_name("rev_ode_small", &shape(Task::Regression)).err().unwrap();
    assert!(err.contains("as many outputs as inputs"), "{err}");
    assert!(model::by_name("rev_ode_small", &shape(TASK)).is_ok());
}
