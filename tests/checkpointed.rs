//! The idea's checkpointed backward pass (`idea::checkpointed`): equal to autodiff BPTT at k = 1, storing
//! ceil(T/k) + 1 states at interval k, and per-run intervals inside one population.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::track::{Pendulum, Track};
use rdbench_engine::batch::{Batch, DeviceData};
use rdbench_engine::model::Gru;
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::autodiff_grads;
use rdbench_engine::train::init_population;

fn setup(seeds: &[u64], b: usize) -> (Gru, Vec<Tensor<3>>, Batch) {
    let data = Pendulum::default().generate_all(0);
    let model = Gru::new(2, 32, 2);
    let (params, _) = init_population(&model, seeds, &device());
    let batch = DeviceData::new(&data.train, &device()).all(seeds.len(), b);
    (model, params, batch)
}

fn flat_grads(g: &[Tensor<3>]) -> Vec<f64> {
    g.iter().flat_map(|t| read(t.clone())).collect()
}

#[test]
fn k1_equals_autodiff_bptt() {
    let (model, params, batch) = setup(&[0], 32);
    let dense = autodiff_grads(&model, &params, &batch);
    let ck = checkpointed_grads(&model, &params, &batch, &[1], 20);
    let (a, b) = (flat_grads(&ck.grads), flat_grads(&dense.grads));
    let cos = cosine(&a, &b);
    assert!(cos > 0.99999, "cosine {cos}");
    for (i, (ga, gb)) in ck.grads.iter().zip(&dense.grads).enumerate() {
        let (x, y) = (read(ga.clone()), read(gb.clone()));
        let num: f64 = x.iter().zip(&y).map(|(p, q)| (p - q).powi(2)).sum::<f64>().sqrt();
        let den: f64 = y.iter().map(|q| q * q).sum::<f64>().sqrt();
        assert!(num / den < 1e-4, "param {i}: relative error {}", num / den);
    }
    let (la, lb) = (read(ck.loss.unwrap())[0], read(dense.loss)[0]);
    assert!((la - lb).abs() < 1e-6 * lb.abs().max(1e-3), "loss {la} vs {lb}");
}

#[test]
fn stored_state_count_is_ceil_t_over_k_plus_one() {
    let (model, params, batch) = setup(&[0], 8);
    for k in [1usize, 2, 3, 5, 7, 16, 40, 80] {
        let out = checkpointed_grads(&model, &params, &batch, &[k], 3);
        assert_eq!(out.stored_states(), vec![80usize.div_ceil(k) + 1], "k = {k}");
    }
    let out = checkpointed_grads(&model, &params, &batch, &[1], 3);
    assert_eq!(out.stored_states(), vec![81]);
}

#[test]
fn runs_with_different_intervals_match_separate_runs() {
    let seeds = [3u64, 4, 5];
    let ks = [1usize, 4, 16];
    let (model, params, batch) = setup(&seeds, 8);
    let together = checkpointed_grads(&model, &params, &batch, &ks, 20);
    assert_eq!(together.stored_states(), vec![81, 21, 6]);
    for (i, (&seed, &k)) in seeds.iter().zip(&ks).enumerate() {
        let (_, p1, b1) = setup(&[seed], 8);
        let alone = checkpointed_grads(&model, &p1, &b1, &[k], 20);
        for (gt, ga) in together.grads.iter().zip(&alone.grads) {
            let err = max_abs_diff(&read(gt.clone().narrow(0, i, 1)), &read(ga.clone()));
            assert!(err < 1e-6, "run {i} (k = {k}): {err}");
        }
    }
}

#[test]
fn accurate_reversal_keeps_the_gradient_at_large_k() {
    // Shrunken weights make the cell contracting and its reversal accurate: checkpointing
    // every 16 steps then barely changes the gradient.
    let (model, params, batch) = setup(&[0], 8);
    let small: Vec<Tensor<3>> = params.iter().map(|p| p.clone().mul_scalar(0.2)).collect();
    let dense = flat_grads(&autodiff_grads(&model, &small, &batch).grads);
    let ck = flat_grads(&checkpointed_grads(&model, &small, &batch, &[16], 40).grads);
    let cos = cosine(&ck, &dense);
    assert!(cos > 0.999, "cosine {cos}");
}
