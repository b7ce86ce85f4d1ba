//! Both models on a last-step regression against PyTorch float64 autograd on adding-problem
//! sequences (tests/fixtures/adding_torch.json, `tools/make_fixtures.py adding_torch`): the
//! MSE of the last step's readout and every parameter gradient, by every path
//! (`common::torch_pinned`).

mod common;
use common::torch_pinned::Pinned;
use common::*;
use rdbench_core::track::{Dataset, Task};

const TASK: Task = Task::LastStepRegression;

fn fx() -> Pinned {
    let v = fixture("adding_torch.json");
    let n = |k: &str| v[k].as_u64().unwrap() as usize;
    let (f, o, t, b) = (n("F"), n("O"), n("T"), n("B"));
    let (x, y) = (flat(&v["x"]), flat(&v["y"]));
    // The adding problem: the target is the sum of the two marked values.
    for (seq, &target) in x.chunks(t * f).zip(&y) {
        let marked: Vec<f64> = seq.chunks(f).filter(|s| s[1] == 1.0).map(|s| s[0]).collect();
        assert_eq!(marked.len(), 2);
        assert!((marked[0] + marked[1] - target).abs() < 1e-6);
    }
    let ds = Dataset {
        n: b,
        t,
        f_in: f,
        f_out: o,
        x: x.iter().map(|&v| v as f32).collect(),
        y: y.iter().map(|&v| v as f32).collect(),
        task: TASK,
    };
    assert_eq!(ds.y.len(), b * TASK.target_steps(t) * o);
    Pinned::new(v, &ds)
}

#[test]
fn gru_last_step_mse_gradients_match_torch() {
    fx().check_gru();
}

/// Two inputs, one output: only a readout that is not residual can be built.
#[test]
fn rev_ode_last_step_mse_gradients_match_torch() {
    fx().check_rev_ode();
}
