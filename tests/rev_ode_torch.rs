//! rev_ode_small (spec §7) against the same cell in PyTorch float64 autograd
//! (tests/fixtures/rev_ode_torch.json, `tools/make_fixtures.py rev_ode_torch`): forward states,
//! loss, every parameter gradient through the hand-written VJP and through burn autodiff, the
//! algebraic inverse, and a trained cell's states and reversal defect.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::track::Task;
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::{ModelShape, RecurrentModel, RevOde};
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::{autodiff_grads, dense_grads, hidden_states, mean_loss};
use serde_json::Value;

const TOL: f64 = 1e-5;
const NAMES: [&str; 10] = ["u_f", "v_f", "w_f", "d_f", "u_g", "v_g", "w_g", "d_g", "w_o", "b_o"];

struct Fx {
    v: Value,
    model: RevOde,
    f: usize,
    h: usize,
    b: usize,
    t: usize,
}

fn fx() -> Fx {
    let v = fixture("rev_ode_torch.json");
    let n = |k: &str| v[k].as_u64().unwrap() as usize;
    let (f, h, b, t) = (n("F"), n("H"), n("B"), n("T"));
    let shape = ModelShape {
        input: f,
        hidden: h,
        output: f,
        rank0: n("rank"),
        rank_max: n("r_max"),
        task: Task::Regression,
        forget_bits: 3,
    };
    Fx { model: RevOde::new(&shape).unwrap(), v, f, h, b, t }
}

/// The fixture's parameters (already in the engine's layout) plus the rank mask, `[1, ..]`.
fn params(fx: &Fx, p: &Value) -> Vec<Tensor<3>> {
    let shapes = fx.model.param_shapes();
    let mut out: Vec<Tensor<3>> = NAMES.iter().zip(&shapes).map(|(k, &[a, b])| t3(&flat(&p[*k]), a, b)).collect();
    let [a, b] = shapes[10];
    out.push(t3(&flat(&fx.v["mask"]), a, b));
    out
}

/// Per-step states `[1, B, H]` against torch's `[B, T, H]`.
fn assert_states(label: &str, got: &[Tensor<3>], want: &[f64], fx: &Fx, t_len: usize) {
    for t in 1..=t_len {
        let g = read(got[t].clone());
        for b in 0..fx.b {
            for j in 0..fx.h {
                let w = want[(b * t_len + (t - 1)) * fx.h + j];
                let e = (g[b * fx.h + j] - w).abs();
                assert!(e < TOL, "{label} h_{t}[{b},{j}]: {} vs torch {w}", g[b * fx.h + j]);
            }
        }
    }
}

#[test]
fn forward_states_and_loss_match_torch() {
    let fx = fx();
    let p = params(&fx, &fx.v["params"]);
    let batch = batch_of(flat(&fx.v["x"]), flat(&fx.v["y"]), fx.b, fx.t, fx.f, 1);
    let hs = hidden_states(&fx.model, &p, &batch);
    assert_states("random", &hs, &flat(&fx.v["states"]), &fx, fx.t);
    let loss = read(mean_loss(&fx.model, &p, &batch))[0];
    let want = fx.v["loss"].as_f64().unwrap();
    assert!((loss - want).abs() < TOL, "loss {loss} vs torch {want}");
}

fn check_grads(label: &str, grads: &[Tensor<3>], fx: &Fx) {
    for (i, k) in NAMES.iter().enumerate() {
        let err = max_abs_diff(&read(grads[i].clone()), &flat(&fx.v["grads"][*k]));
        assert!(err <= TOL, "{label}: {k} max abs error {err:e}");
    }
}

#[test]
fn every_parameter_gradient_matches_torch() {
    let fx = fx();
    let p = params(&fx, &fx.v["params"]);
    let batch = batch_of(flat(&fx.v["x"]), flat(&fx.v["y"]), fx.b, fx.t, fx.f, 1);
    let want_loss = fx.v["loss"].as_f64().unwrap();
    // The hand-written VJP (dense BPTT, the baseline's gradient).
    let dense = dense_grads(&fx.model, &p, &batch);
    assert!((read(dense.loss)[0] - want_loss).abs() < TOL);
    check_grads("dense BPTT", &dense.grads, &fx);
    // The rank mask is not trained: its gradient is exactly zero, and so is U's past the rank.
    assert!(read(dense.grads[10].clone()).iter().all(|&g| g == 0.0));
    let u_f = read(dense.grads[0].clone());
    assert!(u_f[2 * (fx.h / 2)..].iter().all(|&g| g == 0.0), "masked U row has a gradient: {u_f:?}");
    // burn autodiff of the same forward pass.
    let auto = autodiff_grads(&fx.model, &p, &batch);
    assert!((read(auto.loss)[0] - want_loss).abs() < TOL);
    check_grads("autodiff", &auto.grads[..10], &fx);
    // The checkpointed pass at every interval: the reversal is exact, so every k is BPTT.
    for k in [1, 2, 4, fx.t] {
        let ck = checkpointed_grads(&fx.model, &p, &batch, &[k], 1);
        check_grads(&format!("checkpointed k={k}"), &ck.grads, &fx);
        assert_eq!(ck.stored_states(), vec![fx.t.div_ceil(k) + 1]);
    }
}

#[test]
fn the_inverse_matches_torch() {
    let fx = fx();
    let p = params(&fx, &fx.v["params"]);
    let batch = batch_of(flat(&fx.v["x"]), flat(&fx.v["y"]), fx.b, fx.t, fx.f, 1);
    let hs = hidden_states(&fx.model, &p, &batch);
    let want = flat(&fx.v["inverse"]); // [B, T, H]: h_{t-1} rebuilt from h_t
    for t in 1..=fx.t {
        // `iters` is ignored: the inverse is algebraic.
        for iters in [1, 20] {
            let g = read(fx.model.reverse(&p, hs[t].clone(), batch.x(t - 1), iters));
            for b in 0..fx.b {
                for j in 0..fx.h {
                    let w = want[(b * fx.t + (t - 1)) * fx.h + j];
                    assert!((g[b * fx.h + j] - w).abs() < TOL, "inverse of h_{t}[{b},{j}]");
                }
            }
        }
    }
}

#[test]
fn a_trained_cell_matches_torch_and_reverses_exactly() {
    let fx = fx();
    let tr = &fx.v["trained"];
    assert!(tr["loss_last"].as_f64().unwrap() < tr["loss_first"].as_f64().unwrap() / 10.0, "it did train");
    let p = params(&fx, &tr["params"]);
    let x = flat(&tr["x"]);
    let t_len = x.len() / (fx.b * fx.f);
    let batch = batch_of(x.clone(), x, fx.b, t_len, fx.f, 1);
    let hs = hidden_states(&fx.model, &p, &batch);
    assert_states("trained", &hs, &flat(&tr["states"]), &fx, t_len);
    // One-step relative defect of every step, as the probe defines it (spec §5).
    let mut worst = 0.0f64;
    for t in 2..=t_len {
        let g = read(fx.model.reverse(&p, hs[t].clone(), batch.x(t - 1), 20));
        let truth = read(hs[t - 1].clone());
        for b in 0..fx.b {
            let (g, h) = (&g[b * fx.h..(b + 1) * fx.h], &truth[b * fx.h..(b + 1) * fx.h]);
            let err = g.iter().zip(h).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
            let norm = h.iter().map(|a| a * a).sum::<f64>().sqrt();
            worst = worst.max(err / (norm + 1e-6));
        }
    }
    assert!(worst < 1e-5, "trained one-step defect {worst:e}");
    // The probe reports it: defect below 1e-5, so one_step takes k_max, and the gradient at
    // k_max is the dense one.
    // The spec defaults: tau 0.08, k_max 16, one_step, 20 reversal iterations, batch 32.
    let s = ProbeSettings::new(&BenchConfig::default(), false);
    let recs = futures::executor::block_on(probe(&fx.model, &p, &batch, &s, 0)).unwrap();
    let d = recs[0].defect_mean.unwrap();
    assert!(d < 1e-5 && recs[0].defect_max.unwrap() < 1e-5, "probe defect {d:e}");
    assert_eq!(recs[0].k, 16);
    assert!(recs[0].grad_cos_kmax.unwrap() > 0.9999);
}
