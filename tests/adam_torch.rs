//! Clipping + Adam with a per-run lr against torch.nn.utils.clip_grad_norm_ + torch.optim.Adam
//! (tests/fixtures/adam_torch.json): two runs with different lrs in one population, two steps,
//! the first clipped (norm 3) and the second not (norm 0.2).

mod common;
use common::*;
use rdbench_engine::train::adam::{Adam, clip, grad_norms};

#[test]
fn two_steps_match_torch_per_run() {
    let v = fixture("adam_torch.json");
    let shapes: Vec<(usize, usize)> = v["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s[0].as_u64().unwrap() as usize, s[1].as_u64().unwrap() as usize))
        .collect();
    let runs = v["runs"].as_array().unwrap();
    let lrs: Vec<f64> = runs.iter().map(|r| r["lr"].as_f64().unwrap()).collect();
    // Population tensors: parameter i of run r.
    let pop = |get: &dyn Fn(&serde_json::Value, usize) -> Vec<f64>| -> Vec<burn::tensor::Tensor<3>> {
        shapes
            .iter()
            .enumerate()
            .map(|(i, &(a, b))| stack(runs.iter().map(|r| t3(&get(r, i), a, b)).collect()))
            .collect()
    };
    let mut params = pop(&|r, i| flat(&r["init"][i]));
    let mut adam = Adam::new(&params, &lrs, &device());
    for step in 0..2 {
        let grads = pop(&|r, i| flat(&r["steps"][step]["grads"][i]));
        let norms = read(grad_norms(&grads).reshape([2]));
        assert!((norms[0] - [3.0, 0.2][step]).abs() < 1e-5, "norm {norms:?}");
        let norms = grad_norms(&grads);
        params = adam.step(params, clip(grads, norms));
        for (run_i, run) in runs.iter().enumerate() {
            for (i, &(a, b)) in shapes.iter().enumerate() {
                let got = read(params[i].clone().narrow(0, run_i, 1));
                let want = flat(&run["steps"][step]["params_after"][i]);
                assert_eq!(got.len(), a * b);
                let err = max_abs_diff(&got, &want);
                assert!(
                    err < 1e-6,
                    "run {run_i} (lr {}) step {} param {i}: max abs error {err:e}",
                    lrs[run_i],
                    step + 1
                );
            }
        }
    }
}

#[test]
fn clipping_leaves_small_gradients_alone_and_caps_large_ones() {
    let small = vec![t3(&[0.3, 0.4], 1, 2)]; // norm 0.5
    let big = vec![t3(&[3.0, 4.0], 1, 2)]; // norm 5
    let s = read(clip(small.clone(), grad_norms(&small))[0].clone());
    assert!(max_abs_diff(&s, &[0.3, 0.4]) < 1e-7);
    let b = read(clip(big.clone(), grad_norms(&big))[0].clone());
    assert!(max_abs_diff(&b, &[0.6, 0.8]) < 1e-6, "{b:?}");
}
