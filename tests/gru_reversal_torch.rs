//! rnn_small's reversal (spec §5) against the same fixed-point iteration written with torch ops
//! in float64 on a trained nn.GRU (tests/fixtures/gru_reversal_torch.json, made by
//! tools/make_fixtures.py): the rebuilt h_{t-1} after 1, 3 and 20 iterations, and the
//! one-step defect the probe reports.
//!
//! The fixture's cell does not contract under the reversal (spectral radius of the
//! fixed-point map > 1 at the data), so the iteration never settles: a wrong iteration count,
//! floor max(z, 0.05) or clamp to [-1, 1] moves the result by far more than the tolerance.
//! With a contracting cell (tests/gru_torch.rs) every variant converges to the same h_{t-1}
//! and none of that would show.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::policy::Policy;
use rdbench_engine::batch::Batch;
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::{Gru, RecurrentModel};
use serde_json::Value;

/// Iteration counts the fixture holds.
const ITERS: [usize; 3] = [1, 3, 20];

/// Largest |engine - torch| allowed for a rebuilt state after `iters` iterations.
///
/// The engine computes in f32, torch in f64 from the same f32-representable weights, inputs
/// and h_t, so only arithmetic rounding separates them: ~1e-7 per element and step. The
/// non-contracting map then amplifies it at every iteration (that is the regime this test
/// needs). Measured here: the engine (flex) is 1.8e-6, 8.1e-6 and 4.5e-5 from torch after
/// 1, 3 and 20 iterations, and torch's own float32 run is 1.4e-6, 5.1e-6 and 2.6e-5 from
/// its float64 one (recorded in the fixture). The tolerances leave ~5x room for other
/// backends' rounding (FMA, libm), checked against the fixture's float32 gap below, while a
/// wrong iteration count, floor or clamp moves states by 0.1 to 1.4.
fn tol(iters: usize) -> f64 {
    match iters {
        0..=1 => 1e-5,
        2..=3 => 5e-5,
        _ => 3e-4,
    }
}

struct Fixture {
    f: usize,
    h: usize,
    b: usize,
    t: usize,
    params: Vec<Tensor<3>>,
    batch: Batch,
    v: Value,
}

fn load() -> Fixture {
    let v = fixture("gru_reversal_torch.json");
    let n = |k: &str| v[k].as_u64().unwrap() as usize;
    let (f, h, b, t) = (n("F"), n("H"), n("B"), n("T"));
    // Same loading as tests/gru_torch.rs: torch's [3H, F] / [3H, H] weights transposed into
    // our `x @ w_ih` layout, gate blocks r | z | n kept in torch's order.
    let params = torch_to_ours(&v, "", f, h);
    let batch = batch_of(flat(&v["x"]), flat(&v["y"]), b, t, f, 1);
    Fixture { f, h, b, t, params, batch, v }
}

impl Fixture {
    /// Rows (t, b) for t = `from..=to` of a `[B, T, width]` fixture array, as `[1, rows, width]`,
    /// in the order the engine's probe concatenates steps.
    fn rows(&self, key: &str, width: usize, from: usize, to: usize) -> Vec<f64> {
        let all = flat(&self.v[key]);
        let mut out = Vec::new();
        for t in from..=to {
            for b in 0..self.b {
                let at = (b * self.t + (t - 1)) * width;
                out.extend_from_slice(&all[at..at + width]);
            }
        }
        out
    }

    /// h_2..h_T, x_2..x_T (inputs of the reversal) and h_1..h_{T-1} (what it should rebuild).
    fn reversal_inputs(&self) -> (Tensor<3>, Tensor<3>, Vec<f64>) {
        let n = (self.t - 1) * self.b;
        let h_t = t3(&self.rows("states", self.h, 2, self.t), n, self.h);
        let x_t = t3(&self.rows("x", self.f, 2, self.t), n, self.f);
        (h_t, x_t, self.rows("states", self.h, 1, self.t - 1))
    }

    fn reversal(&self, iters: usize) -> &Value {
        &self.v["reversals"][iters.to_string()]
    }
}

/// Spec §5's defect of each row: ||g - h|| / (||h|| + 1e-6) over the hidden dimension.
fn row_defects(g: &[f64], truth: &[f64], h: usize) -> Vec<f64> {
    g.chunks(h)
        .zip(truth.chunks(h))
        .map(|(g, t)| {
            let err = g.iter().zip(t).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
            err / (t.iter().map(|a| a * a).sum::<f64>().sqrt() + 1e-6)
        })
        .collect()
}

#[test]
fn fixture_is_a_non_contracting_trained_cell() {
    // Guards the premise: if the fixture were regenerated from a tame cell, the other tests
    // would pass for a wrong count, floor or clamp.
    let fx = load();
    let nc = &fx.v["non_contracting"];
    let radius = nc["fixed_point_map_spectral_radius"]["median"].as_f64().unwrap();
    assert!(radius > 1.0, "median spectral radius of the fixed-point map {radius} <= 1: it contracts");
    let training = &fx.v["training"];
    assert!(training["loss_last"].as_f64().unwrap() < 0.01 * training["loss_first"].as_f64().unwrap());
    for iters in [3, 20] {
        let r = fx.reversal(iters);
        assert!(r["floor_active"].as_u64().unwrap() > 0, "{iters} iterations never hit the floor 0.05");
        assert!(r["clamp_active"].as_u64().unwrap() > 0, "{iters} iterations never hit the clamp");
    }
    assert!(fx.reversal(1)["floor_active"].as_u64().unwrap() > 0, "1 iteration never hits the floor");
    for iters in ITERS {
        let gap = fx.reversal(iters)["float32_max_abs_gap"].as_f64().unwrap();
        assert!(5.0 * gap <= tol(iters), "{iters} iterations: f32 costs {gap:e}, tolerance {:e}", tol(iters));
    }
}

#[test]
fn forward_states_match_torch() {
    // The reversal starts from torch's h_t; our own forward pass must agree with them too.
    let fx = load();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let hs = rdbench_engine::train::dense::hidden_states(&model, &fx.params, &fx.batch);
    let want = flat(&fx.v["states"]);
    for t in 1..=fx.t {
        let got = read(hs[t].clone());
        for b in 0..fx.b {
            for j in 0..fx.h {
                let w = want[(b * fx.t + (t - 1)) * fx.h + j];
                let g = got[b * fx.h + j];
                assert!((g - w).abs() < 1e-5, "h_{t}[{b},{j}]: {g} vs torch {w}");
            }
        }
    }
}

#[test]
fn reversal_matches_torch_after_1_3_and_20_iterations() {
    let fx = load();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let (h_t, x_t, _) = fx.reversal_inputs();
    for iters in ITERS {
        let got = read(model.reverse(&fx.params, h_t.clone(), x_t.clone(), iters));
        let want = flat(&fx.reversal(iters)["reversed"]);
        let err = max_abs_diff(&got, &want);
        assert!(err <= tol(iters), "{iters} iterations: max |engine - torch| = {err:e} > {:e}", tol(iters));
    }
}

#[test]
fn iteration_count_is_pinned() {
    // Neighbouring counts must miss the fixture by far more than the tolerance, or the
    // comparison above could not tell 20 iterations from 19 or 21.
    let fx = load();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let (h_t, x_t, _) = fx.reversal_inputs();
    for (iters, wrong) in [(1, [2, 3]), (3, [2, 4]), (20, [19, 21])] {
        let want = flat(&fx.reversal(iters)["reversed"]);
        for w in wrong {
            let got = read(model.reverse(&fx.params, h_t.clone(), x_t.clone(), w));
            let err = max_abs_diff(&got, &want);
            assert!(err > 100.0 * tol(iters), "{w} iterations are only {err:e} from the {iters}-iteration fixture");
        }
    }
}

#[test]
fn defect_matches_torch() {
    let fx = load();
    let model = Gru::new(fx.f, fx.h, fx.f);
    let (h_t, x_t, truth) = fx.reversal_inputs();
    // A row's relative defect moves by at most ||state error|| / ||h_{t-1}|| <=
    // sqrt(H) x max abs error / smallest ||h_{t-1}||.
    let min_norm = truth.chunks(fx.h).map(|t| t.iter().map(|a| a * a).sum::<f64>().sqrt()).fold(f64::MAX, f64::min);
    assert!(min_norm > 0.05, "smallest ||h_(t-1)|| = {min_norm}: the defect bound below would be loose");
    for iters in ITERS {
        let r = fx.reversal(iters);
        let (want_mean, want_max) = (r["defect_mean"].as_f64().unwrap(), r["defect_max"].as_f64().unwrap());
        let bound = (fx.h as f64).sqrt() * tol(iters) / min_norm;

        // The contract's formula on the engine's rebuilt states against torch's true ones.
        let d = row_defects(&read(model.reverse(&fx.params, h_t.clone(), x_t.clone(), iters)), &truth, fx.h);
        let mean = d.iter().sum::<f64>() / d.len() as f64;
        let max = d.iter().copied().fold(0.0, f64::max);
        assert!((mean - want_mean).abs() <= bound, "{iters}: mean defect {mean} vs torch {want_mean}");
        assert!((max - want_max).abs() <= bound, "{iters}: max defect {max} vs torch {want_max}");

        // What the bench reports: the probe on the same batch. It runs its own forward pass
        // (states within 1e-6 of torch's, see forward_states_match_torch) and averages over
        // batch and t = 2..T itself, so this checks its averaging and its range of t.
        let settings = ProbeSettings {
            tau: 0.08,
            k_max: 4,
            policy: Policy::OneStep,
            reversal_iters: iters,
            batch_size: fx.b,
            frontier: false,
        };
        let rec = futures::executor::block_on(probe(&model, &fx.params, &fx.batch, &settings, 0)).unwrap();
        let (pm, px) = (rec[0].defect_mean.unwrap(), rec[0].defect_max.unwrap());
        assert!((pm - want_mean).abs() <= bound, "{iters}: probe mean defect {pm} vs torch {want_mean}");
        assert!((px - want_max).abs() <= bound, "{iters}: probe max defect {px} vs torch {want_max}");
    }
}
