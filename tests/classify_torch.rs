//! Both models on a classification against PyTorch float64 autograd on real
//! MNIST-1D sequences (tests/fixtures/classify_torch.json, `tools/make_fixtures.py
//! classify_torch`): the cross-entropy of the last step's readout and every parameter
//! gradient, through burn autodiff, dense BPTT (the hand-written VJP, fused on the CPU) and
//! the checkpointed pass — at k = 1 for the GRU, and at k = 1, 4 and T for rev_ode_small,
//! whose reversal is exact.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::track::{Dataset, Task};
use rdbench_engine::batch::{Batch, DeviceData};
use rdbench_engine::model::{self, Gru, ModelShape};
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::{autodiff_grads, dense_grads, mean_loss};
use serde_json::Value;

const TOL: f64 = 1e-5;
const CLASSES: usize = 10;
const TASK: Task = Task::Classification { classes: CLASSES };
const REV_NAMES: [&str; 10] = ["u_f", "v_f", "w_f", "d_f", "u_g", "v_g", "w_g", "d_g", "w_o", "b_o"];

struct Fx {
    v: Value,
    f: usize,
    t: usize,
    batch: Batch,
}

fn fx() -> Fx {
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
    let batch = DeviceData::new(&ds, &device()).all(1, b);
    Fx { v, f, t, batch }
}

fn assert_loss(label: &str, got: Tensor<1>, want: &Value) {
    let (got, want) = (read(got)[0], want.as_f64().unwrap());
    assert!((got - want).abs() < TOL, "{label}: loss {got} vs torch {want}");
}

#[test]
fn gru_cross_entropy_gradients_match_torch() {
    let fx = fx();
    let g = &fx.v["gru"];
    let h = g["H"].as_u64().unwrap() as usize;
    let model = Gru::new(fx.f, h, CLASSES).for_task(TASK);
    let params = torch_to_ours(g, "", fx.f, h);
    assert_loss("forward", mean_loss(&model, &params, &fx.batch), &g["loss"]);
    let check = |label: &str, out: rdbench_engine::train::GradOut| {
        assert_loss(label, out.loss, &g["loss"]);
        for (got, key) in ours_to_torch(&out.grads, fx.f, h).iter().zip(TORCH_GRAD_KEYS) {
            let err = max_abs_diff(got, &flat(&g[key]));
            assert!(err <= TOL, "{label}: {key} max abs error {err:e}");
        }
    };
    check("autodiff", autodiff_grads(&model, &params, &fx.batch));
    check("dense BPTT", dense_grads(&model, &params, &fx.batch));
    let ck = checkpointed_grads(&model, &params, &fx.batch, &[1], 20);
    assert_eq!(ck.stored_states(), vec![fx.t + 1]);
    check("checkpointed k=1", ck.into_grad_out());
}

#[test]
fn rev_ode_cross_entropy_gradients_match_torch() {
    let fx = fx();
    let r = &fx.v["rev_ode"];
    let n = |k: &str| r[k].as_u64().unwrap() as usize;
    let shape = ModelShape {
        input: fx.f,
        hidden: n("H"),
        output: CLASSES,
        rank0: n("rank"),
        rank_max: n("r_max"),
        task: TASK,
        forget_bits: 3,
    };
    let model = model::by_name("rev_ode_small", &shape).unwrap();
    let shapes = model.param_shapes();
    let mut params: Vec<Tensor<3>> =
        REV_NAMES.iter().zip(&shapes).map(|(k, &[a, b])| t3(&flat(&r["params"][*k]), a, b)).collect();
    let [a, b] = shapes[10];
    params.push(t3(&flat(&r["mask"]), a, b));
    assert_loss("forward", mean_loss(&*model, &params, &fx.batch), &r["loss"]);
    let check = |label: &str, out: rdbench_engine::train::GradOut| {
        assert_loss(label, out.loss, &r["loss"]);
        for (i, k) in REV_NAMES.iter().enumerate() {
            let err = max_abs_diff(&read(out.grads[i].clone()), &flat(&r["grads"][*k]));
            assert!(err <= TOL, "{label}: {k} max abs error {err:e}");
        }
    };
    check("autodiff", autodiff_grads(&*model, &params, &fx.batch));
    check("dense BPTT", dense_grads(&*model, &params, &fx.batch));
    for k in [1, 4, fx.t] {
        let ck = checkpointed_grads(&*model, &params, &fx.batch, &[k], 1);
        assert_eq!(ck.stored_states(), vec![fx.t.div_ceil(k) + 1]);
        check(&format!("checkpointed k={k}"), ck.into_grad_out());
    }
}

#[test]
fn the_regression_readout_of_rev_ode_needs_matching_widths_but_a_classification_does_not() {
    let shape = |task| ModelShape { input: 1, hidden: 8, output: CLASSES, rank0: 2, rank_max: 3, task, forget_bits: 3 };
    let err = model::by_name("rev_ode_small", &shape(Task::Regression)).err().unwrap();
    assert!(err.contains("as many outputs as inputs"), "{err}");
    assert!(model::by_name("rev_ode_small", &shape(TASK)).is_ok());
}
