//! rev_gru (MacKay et al.'s reversible GRU in fixed point): 1,000 steps forward and back give
//! the initial state bit for bit through its information buffer at several forgetting caps;
//! each digit the buffer keeps is the index of h_{t-1} among the states the step maps to h_t
//! (the preimages counted by brute force); the gradient through reversal equals dense BPTT
//! of the same forward; the forward matches a PyTorch float64 reference of the RevGRU
//! equations within the fixed-point resolution; a tiny bench runs and validates.

mod common;
use burn::tensor::{Tensor, TensorData};
use common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rdbench_core::models::buffer_words;
use rdbench_core::track::Task;
use rdbench_engine::batch::DeviceData;
use rdbench_engine::model::{self, ModelShape, RecurrentModel};
use rdbench_engine::schedule::Schedule;
use rdbench_engine::schedule::info_buffer::InfoBuffer;
use rdbench_engine::train::init_population;

const STATE_ONE: f64 = 8_388_608.0;

fn shape(hidden: usize, bits: usize) -> ModelShape {
    ModelShape { input: 3, hidden, output: 3, rank0: 1, rank_max: 1, task: Task::Regression, forget_bits: bits }
}

fn rev_gru(hidden: usize, bits: usize) -> Box<dyn RecurrentModel> {
    model::by_name("rev_gru", &shape(hidden, bits)).unwrap()
}

/// Random `[runs, rows, cols]` values in (-scale, scale).
fn random(rng: &mut ChaCha8Rng, [a, b, c]: [usize; 3], scale: f32) -> Tensor<3> {
    let v: Vec<f32> = (0..a * b * c).map(|_| rng.random_range(-scale..scale)).collect();
    Tensor::from_data(TensorData::new(v, [a, b, c]), &device())
}

/// A state on the fixed-point grid: integers times 2^-23.
fn on_grid(t: Tensor<3>) -> Tensor<3> {
    t.mul_scalar(STATE_ONE as f32).round().div_scalar(STATE_ONE as f32)
}

#[test]
fn a_thousand_steps_reverse_bit_for_bit_at_several_caps() {
    let (r, b, h, t_len) = (2, 3, 8, 1000);
    for bits in [1usize, 2, 3, 5, 10] {
        let model = rev_gru(h, bits);
        let mut rng = ChaCha8Rng::seed_from_u64(bits as u64);
        // Larger weights than the init's, so the gates forget near the cap.
        let params: Vec<Tensor<3>> =
            model.param_shapes().iter().map(|&[p, q]| random(&mut rng, [r, p, q], 1.5)).collect();
        let xs: Vec<Tensor<3>> = (0..t_len).map(|_| random(&mut rng, [r, b, 3], 1.0)).collect();
        let h0 = on_grid(random(&mut rng, [r, b, h], 0.9));
        let mut buffer = InfoBuffer::new(bits as u32);
        let mut hs = vec![h0.clone()];
        for x in &xs {
            let (next, digits) = model.step_forgetting(&params, hs.last().unwrap().clone(), x.clone());
            // The step is a function of (h, x): the plain step agrees.
            assert_eq!(read(next.clone()), read(model.step(&params, hs.last().unwrap().clone(), x.clone())));
            let d = read(digits.clone());
            assert!(d.iter().all(|&v| v >= 0.0 && v < (1u64 << bits) as f64 && v.fract() == 0.0), "bits {bits}");
            buffer.push(digits);
            hs.push(next);
        }
        assert_eq!(buffer.words(), buffer_words(t_len, bits), "bits {bits}: one word per 24 / bits steps");
        // The forgetting is real: without the buffer the reversal is wrong somewhere.
        let last = hs[t_len].clone();
        let blind = model.reverse(&params, last.clone(), xs[t_len - 1].clone(), 1);
        assert_ne!(read(blind), read(hs[t_len - 1].clone()), "bits {bits}: the last step forgot nothing");
        let mut g = last;
        for t in (1..=t_len).rev() {
            g = model.reverse_with(&params, g, xs[t - 1].clone(), buffer.pop());
            if t % 250 == 1 {
                assert_eq!(read(g.clone()), read(hs[t - 1].clone()), "bits {bits}: h_{} rebuilt", t - 1);
            }
        }
        assert_eq!(read(g), read(h0), "bits {bits}: h_0 after 1,000 steps back");
        assert_eq!(buffer.words(), 0);
    }
}

#[test]
fn each_digit_is_the_index_among_the_states_the_step_maps_together() {
    // Brute force with the plain step only: for a unit of the first half, perturb its low
    // bits by d units of 2^-23 and count the d that leave h_t unchanged (the first half's
    // update of a unit depends on that unit and the second half; the second half then sees
    // the same a'). Those are the states the step forgot between; the digit must be h's index
    // among them, and their count at most 2^bits.
    let (h, bits) = (6, 3);
    let model = rev_gru(h, bits);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let params: Vec<Tensor<3>> = model.param_shapes().iter().map(|&[p, q]| random(&mut rng, [1, p, q], 1.5)).collect();
    let (mut forgotten_bits, mut checked) = (0.0f64, 0);
    for trial in 0..40 {
        let x = random(&mut rng, [1, 1, 3], 1.0);
        let h0 = on_grid(random(&mut rng, [1, 1, h], 0.9));
        let (next, digits) = model.step_forgetting(&params, h0.clone(), x.clone());
        let (next, digits) = (read(next), read(digits));
        let base = read(h0.clone());
        for j in 0..h / 2 {
            let same: Vec<i64> = (-20i64..=20)
                .filter(|&d| {
                    let mut v = base.clone();
                    v[j] += d as f64 / STATE_ONE;
                    let t = Tensor::from_data(
                        TensorData::new(v.iter().map(|&a| a as f32).collect::<Vec<_>>(), [1, 1, h]),
                        &device(),
                    );
                    read(model.step(&params, t, x.clone())) == next
                })
                .collect();
            let n = same.len();
            assert!((1..=1 << bits).contains(&n), "trial {trial} unit {j}: {n} preimages");
            assert_eq!(same.windows(2).filter(|w| w[1] != w[0] + 1).count(), 0, "preimages are consecutive");
            let index = same.iter().position(|&d| d == 0).unwrap();
            assert_eq!(digits[j], index as f64, "trial {trial} unit {j}: digit against the brute-force index");
            forgotten_bits += (n as f64).log2();
            checked += 1;
        }
    }
    // The buffer spends `bits` per unit and step: never less than what was forgotten.
    let kept = (checked * bits) as f64;
    assert!(forgotten_bits > 0.0 && forgotten_bits <= kept, "forgot {forgotten_bits} bits, kept {kept}");
}

#[test]
fn gradient_through_reversal_is_dense_bptt_of_the_same_forward() {
    let model = model::by_name("rev_gru", &ModelShape { input: 2, output: 2, ..shape(16, 3) }).unwrap();
    let (params, _) = init_population(&*model, &[0, 1, 2], &device());
    let data = rdbench_core::track::Pendulum::default();
    let data = rdbench_core::track::Track::generate_all(&data, 0);
    let batch = DeviceData::new(&data.train, &device()).all(3, 16);
    let t = batch.t();
    let dense = Schedule::Dense.run(&*model, &params, &batch, 1);
    for k in [4, 16, t] {
        let rev = Schedule::Reversal { k }.run(&*model, &params, &batch, 1);
        let (a, b): (Vec<f64>, Vec<f64>) = (
            rev.grads.iter().flat_map(|g| read(g.clone())).collect(),
            dense.grads.iter().flat_map(|g| read(g.clone())).collect(),
        );
        let diff = a.iter().zip(&b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
        let norm = b.iter().map(|y| y * y).sum::<f64>().sqrt();
        assert!(norm > 0.0 && diff / norm <= 1e-6, "k = {k}: relative error {}", diff / norm);
        // Held: the checkpoints and the buffer's words, counted as the pass ran.
        let want = t.div_ceil(k) + 1 + buffer_words(t, 3);
        assert_eq!(rev.stored_states(), vec![want; 3], "k = {k}");
        // Every step reverses every run (the digits are packed for all of them), except
        // where every run has a checkpoint.
        assert_eq!(rev.counts[0].reversal_evals, (t - (t - 1) / k - 1) as u64, "k = {k}");
    }
}

#[test]
fn the_forward_matches_a_float64_reference_of_the_revgru_equations() {
    let fx = fixture("rev_gru_torch.json");
    let n = |k: &str| fx[k].as_u64().unwrap() as usize;
    let (f, h, t_len, b, bits) = (n("F"), n("H"), n("T"), n("B"), n("bits"));
    let model = model::by_name("rev_gru", &ModelShape { input: f, output: f, ..shape(h, bits) }).unwrap();
    let params: Vec<Tensor<3>> = model
        .param_names()
        .iter()
        .zip(model.param_shapes())
        .map(|(name, [p, q])| t3(&flat(&fx["params"][*name]), p, q))
        .collect();
    let x = flat(&fx["x"]); // [T, B, F]
    let want = flat(&fx["h"]); // [T + 1, B, H]
    let mut state = Tensor::<3>::zeros([1, b, h], &device());
    let mut worst = 0.0f64;
    for t in 0..t_len {
        let xt = t3(&x[t * b * f..(t + 1) * b * f], b, f);
        state = model.step(&params, state, xt);
        let err = max_abs_diff(&read(state.clone()), &want[(t + 1) * b * h..(t + 2) * b * h]);
        worst = worst.max(err);
    }
    // Each step rounds the product down and the update to nearest, at 2^-23: the float64
    // reference (with the same rounded gate) differs by at most ~2 units per step, carried
    // through the later steps' gates.
    assert!(worst <= t_len as f64 * 4.0 / STATE_ONE, "max abs difference {worst:e} over {t_len} steps");
    assert!(worst > 0.0, "the fixed-point forward equals float64 exactly: the test compares nothing");
}

#[test]
fn a_tiny_rev_gru_bench_runs_and_validates() {
    let dir = tempdir("rev_gru", "tiny");
    let out = dir.join("rep.json");
    let args =
        ["run", "--model", "rev_gru", "--seeds", "2", "--sweep-seeds", "1", "--lrs", "0.003,0.01", "--epochs", "2"];
    ok(&[&args[..], &["--hidden", "8", "--threads", "1", "--quiet", "--out", s(&out)]].concat());
    let v = ok(&["validate", s(&out)]);
    assert!(v.contains("valid bench_report.json"), "{v}");
    let rep = json(&out);
    let idea = rep["runs"].as_array().unwrap().iter().find(|r| r["arm"] == "idea" && r["phase"] == "full").unwrap();
    let probes = idea["probes"].as_array().unwrap();
    assert!(probes.iter().all(|p| p["defect_mean"] == 0.0), "the reversal with its buffer is exact");
    assert!(probes.iter().any(|p| !p["frontier"].as_array().unwrap().is_empty()), "the frontier is measured");
}
