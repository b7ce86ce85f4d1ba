//! Host-side f64 accumulation: the evaluation MSE adds per-trajectory sums in f64, the
//! probe's gradient cosine adds per-parameter dot and norm sums in f64. The inputs are
//! chosen so every per-trajectory / per-parameter sum is exact in f32 while the totals
//! are not: a device-side f32 total is off, the host-side f64 one is exact.

mod common;
use burn::tensor::{Tensor, TensorData};
use common::*;
use rdbench_core::track::{Pendulum, Track};
use rdbench_engine::batch::DeviceData;
use rdbench_engine::idea::probe::{cosine_of_sums, grad_dot_sums};
use rdbench_engine::model::{Gru, RecurrentModel};
use rdbench_engine::train::dense::{evaluate, mean_loss};
use rdbench_engine::train::{init_population, read_f32};

fn filled(v: f32, a: usize, b: usize) -> Tensor<3> {
    Tensor::from_data(TensorData::new(vec![v; a * b], [1, a, b]), &device())
}

#[test]
fn eval_mse_adds_trajectories_in_f64() {
    // All-zero weights keep h = 0 and predict 0, so every squared error is y^2 =
    // (1 + 2^-6)^2 = 1 + 2^-5 + 2^-12, exact in f32, as is any sum of up to 160 of them
    // (one trajectory: T = 80 steps x 2 features). 16000 of them need 27 bits.
    let (b, t, f) = (100, 80, 2);
    let y = 1.0 + 2f64.powi(-6);
    let batch = batch_of(vec![0.0; b * t * f], vec![y; b * t * f], b, t, f, 1);
    let model = Gru::new(f, 8, f);
    let params: Vec<Tensor<3>> = model.param_shapes().iter().map(|&[r, c]| filled(0.0, r, c)).collect();
    let exact = y * y;
    let ours = futures::executor::block_on(evaluate(&model, &params, &batch)).unwrap()[0].metric;
    assert_eq!(ours, exact);
    // The old way (one f32 sum on the device, scaled in f32) is not exact here.
    let device_f32 = read(mean_loss(&model, &params, &batch))[0];
    assert!((device_f32 - exact).abs() > 1e-9, "the data must tell the two apart: {device_f32} vs {exact}");
}

#[test]
fn gradient_cosine_adds_parameters_in_f64() {
    // Parameter A: 16 elements of 2^12 in both gradients; parameter B: 16 ones, negated in
    // the second. Per-parameter sums are exact in f32; |a|^2 = 2^28 + 16 is not.
    let a = vec![filled(4096.0, 4, 4), filled(1.0, 4, 4)];
    let b = vec![filled(4096.0, 4, 4), filled(-1.0, 4, 4)];
    let row = futures::executor::block_on(read_f32(grad_dot_sums(&a, &b))).unwrap();
    let cos = cosine_of_sums(&row);
    let exact = (2f64.powi(24) - 1.0) / (2f64.powi(24) + 1.0);
    assert!((cos - exact).abs() < 1e-15, "{cos} vs {exact}");
    // All in f32 (the old way) rounds |a|^2 to 2^28 and gives 1 - 2^-24.
    let f32_cos = ((2f32.powi(28) - 16.0) / (2f32.powi(28) + 16.0).sqrt().powi(2)) as f64;
    assert!((f32_cos - exact).abs() > 1e-8, "{f32_cos}");
}

#[test]
fn eval_mse_of_real_runs_matches_an_f64_reference() {
    // Eight freshly initialised runs on the 200 test trajectories (32000 squared errors
    // per run). Reference: the device's f32 predictions read back, errors summed in f64.
    let data = Pendulum::default().generate_all(0);
    let batch = DeviceData::new(&data.test, &device()).all(8, data.test.n);
    let model = Gru::new(2, 32, 2);
    let (params, _) = init_population(&model, &(0..8).collect::<Vec<u64>>(), &device());
    let [r, tb, f] = batch.y_all().dims();
    let mut h = Tensor::<3>::zeros([r, batch.b, model.hidden()], &device());
    let mut preds = Vec::new();
    for x in batch.xs() {
        h = model.step(&params, h, x.clone());
        preds.push(model.readout(&params, h.clone(), x.clone()));
    }
    let pred = read(Tensor::cat(preds, 1));
    let y = read(batch.y_all());
    let per_run = tb * f;
    let reference: Vec<f64> = (0..r)
        .map(|i| (i * per_run..(i + 1) * per_run).map(|j| (pred[j] - y[j]).powi(2)).sum::<f64>() / per_run as f64)
        .collect();
    let ours: Vec<f64> =
        futures::executor::block_on(evaluate(&model, &params, &batch)).unwrap().iter().map(|e| e.metric).collect();
    let old = read(mean_loss(&model, &params, &batch));
    let rel = |a: f64, b: f64| (a - b).abs() / b;
    let worst = |v: &[f64]| v.iter().zip(&reference).map(|(a, b)| rel(*a, *b)).fold(0.0, f64::max);
    eprintln!("worst relative error: host f64 {:.2e}, device f32 {:.2e}", worst(&ours), worst(&old));
    assert!(worst(&ours) < 3e-7, "host f64 sum: {:.2e}", worst(&ours));
}
