//! rnn_small against PyTorch's nn.GRU + nn.Linear on fixed weights (tests/fixtures/gru_torch.json):
//! forward states, loss and every parameter gradient, through burn autodiff and through the
//! hand-written vector-Jacobian product of the checkpointed pass.

mod common;
use common::*;
use rdbench_engine::model::{Gru, RecurrentModel};
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::{autodiff_grads, dense_grads, hidden_states, mean_loss};

const TOL: f64 = 1e-5;

#[test]
fn forward_states_and_loss_match_torch() {
    let fx = gru_fixture();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let hs = hidden_states(&model, &fx.params, &fx.batch);
    assert_eq!(hs.len(), fx.t + 1);
    assert!(read(hs[0].clone()).iter().all(|&v| v == 0.0), "h_0 = 0");
    // torch states are [B, T, H]; ours per step [1, B, H].
    let want = flat(&fx.v["states"]);
    for t in 1..=fx.t {
        let got = read(hs[t].clone());
        for b in 0..fx.b {
            for j in 0..fx.h {
                let w = want[(b * fx.t + (t - 1)) * fx.h + j];
                assert!((got[b * fx.h + j] - w).abs() < TOL, "h_{t}[{b},{j}]: {} vs torch {w}", got[b * fx.h + j]);
            }
        }
    }
    let loss = read(mean_loss(&model, &fx.params, &fx.batch))[0];
    let want = fx.v["loss"].as_f64().unwrap();
    assert!((loss - want).abs() < TOL, "loss {loss} vs torch {want}");
}

fn check_grads(label: &str, grads: &[burn::tensor::Tensor<3>], fx: &GruFixture) {
    let ours = ours_to_torch(grads, fx.f, fx.h);
    for (got, key) in ours.iter().zip(TORCH_GRAD_KEYS) {
        let want = flat(&fx.v[key]);
        let err = max_abs_diff(got, &want);
        assert!(err <= TOL, "{label}: {key} max abs error {err:e}");
    }
}

#[test]
fn autodiff_gradients_match_torch() {
    let fx = gru_fixture();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let out = autodiff_grads(&model, &fx.params, &fx.batch);
    let loss = read(out.loss)[0];
    assert!((loss - fx.v["loss"].as_f64().unwrap()).abs() < TOL);
    check_grads("autodiff", &out.grads, &fx);
}

#[test]
fn dense_bptt_gradients_match_torch() {
    // The baseline's BPTT: every state stored, the model's VJP per step (fused on the CPU).
    let fx = gru_fixture();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let out = dense_grads(&model, &fx.params, &fx.batch);
    let loss = read(out.loss)[0];
    assert!((loss - fx.v["loss"].as_f64().unwrap()).abs() < TOL);
    check_grads("dense BPTT", &out.grads, &fx);
}

#[test]
fn hand_written_vjp_gradients_match_torch() {
    // k = 1 stores every state, so the checkpointed pass is exactly BPTT.
    let fx = gru_fixture();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let out = checkpointed_grads(&model, &fx.params, &fx.batch, &[1], 20);
    let loss = read(out.loss.clone().unwrap())[0];
    assert!((loss - fx.v["loss"].as_f64().unwrap()).abs() < TOL);
    check_grads("checkpointed k=1", &out.grads, &fx);
    assert_eq!(out.stored_states(), vec![fx.t + 1]);
}

#[test]
fn reversal_rebuilds_previous_state_of_a_contracting_cell() {
    // With small hidden weights the fixed-point map contracts and the reversal is accurate.
    let fx = gru_fixture();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let small: Vec<_> = fx.params.iter().map(|p| p.clone().mul_scalar(0.3)).collect();
    let hs = hidden_states(&model, &small, &fx.batch);
    for t in 2..=fx.t {
        let g = model.reverse(&small, hs[t].clone(), fx.batch.x(t - 1), 50);
        let err = max_abs_diff(&read(g), &read(hs[t - 1].clone()));
        assert!(err < 1e-4, "step {t}: reversal error {err}");
    }
}
