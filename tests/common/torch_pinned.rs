//! The checks every PyTorch-pinned gradient test makes (tests/adding_torch.rs,
//! tests/classify_torch.rs): a fixture from `tools/make_fixtures.py` holds a batch, each
//! model's parameters and PyTorch float64 autograd's loss and gradients; both models must
//! give them through burn autodiff, dense BPTT (the hand-written VJP, fused on the CPU) and
//! the checkpointed pass — at k = 1 for the GRU, at k = 1, 4 and T for rev_ode_small, whose
//! reversal is exact.

use super::*;
use rdbench_core::track::Task;
use rdbench_engine::model::{self, Gru, ModelShape};
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::GradOut;
use rdbench_engine::train::dense::{autodiff_grads, dense_grads, mean_loss};

/// How far from PyTorch's float64 figures a loss or a gradient may be.
pub const TOL: f64 = 1e-5;

/// rev_ode_small's parameters in the fixture's names, in the model's order (its mask last).
const REV_NAMES: [&str; 10] = ["u_f", "v_f", "w_f", "d_f", "u_g", "v_g", "w_g", "d_g", "w_o", "b_o"];

/// A fixture's batch and sizes.
pub struct Pinned {
    /// The fixture (its `gru` and `rev_ode` entries are the models').
    pub v: Value,
    /// The task the fixture's loss is.
    pub task: Task,
    /// Input features, outputs, time steps.
    pub f: usize,
    pub o: usize,
    pub t: usize,
    /// The whole fixture batch as one run's.
    pub batch: Batch,
}

impl Pinned {
    /// The fixture `v` with its dataset `ds` (checked against the fixture by the caller).
    pub fn new(v: Value, ds: &Dataset) -> Pinned {
        let batch = DeviceData::new(ds, &device()).all(1, ds.n);
        Pinned { v, task: ds.task, f: ds.f_in, o: ds.f_out, t: ds.t, batch }
    }

    fn assert_loss(label: &str, got: burn::tensor::Tensor<1>, want: &Value) {
        let (got, want) = (read(got)[0], want.as_f64().unwrap());
        assert!((got - want).abs() < TOL, "{label}: loss {got} vs torch {want}");
    }

    /// The GRU's loss and gradients are PyTorch's by every path.
    pub fn check_gru(&self) {
        let g = &self.v["gru"];
        let h = g["H"].as_u64().unwrap() as usize;
        let model = Gru::new(self.f, h, self.o).for_task(self.task);
        let params = torch_to_ours(g, "", self.f, h);
        Self::assert_loss("forward", mean_loss(&model, &params, &self.batch), &g["loss"]);
        let check = |label: &str, out: GradOut| {
            Self::assert_loss(label, out.loss, &g["loss"]);
            for (got, key) in ours_to_torch(&out.grads, self.f, h).iter().zip(TORCH_GRAD_KEYS) {
                let err = max_abs_diff(got, &flat(&g[key]));
                assert!(err <= TOL, "{label}: {key} max abs error {err:e}");
            }
        };
        check("autodiff", autodiff_grads(&model, &params, &self.batch));
        check("dense BPTT", dense_grads(&model, &params, &self.batch));
        let ck = checkpointed_grads(&model, &params, &self.batch, &[1], 20);
        assert_eq!(ck.stored_states(), vec![self.t + 1]);
        check("checkpointed k=1", ck.into_grad_out());
    }

    /// rev_ode_small's loss and gradients are PyTorch's by every path.
    pub fn check_rev_ode(&self) {
        let r = &self.v["rev_ode"];
        let n = |k: &str| r[k].as_u64().unwrap() as usize;
        let shape = ModelShape {
            input: self.f,
            hidden: n("H"),
            output: self.o,
            rank0: n("rank"),
            rank_max: n("r_max"),
            task: self.task,
            forget_bits: 3,
        };
        let model = model::by_name("rev_ode_small", &shape).unwrap();
        let shapes = model.param_shapes();
        let mut params: Vec<burn::tensor::Tensor<3>> =
            REV_NAMES.iter().zip(&shapes).map(|(k, &[a, b])| t3(&flat(&r["params"][*k]), a, b)).collect();
        let [a, b] = shapes[10];
        params.push(t3(&flat(&r["mask"]), a, b));
        Self::assert_loss("forward", mean_loss(&*model, &params, &self.batch), &r["loss"]);
        let check = |label: &str, out: GradOut| {
            Self::assert_loss(label, out.loss, &r["loss"]);
            for (i, k) in REV_NAMES.iter().enumerate() {
                let err = max_abs_diff(&read(out.grads[i].clone()), &flat(&r["grads"][*k]));
                assert!(err <= TOL, "{label}: {k} max abs error {err:e}");
            }
        };
        check("autodiff", autodiff_grads(&*model, &params, &self.batch));
        check("dense BPTT", dense_grads(&*model, &params, &self.batch));
        for k in [1, 4, self.t] {
            let ck = checkpointed_grads(&*model, &params, &self.batch, &[k], 1);
            assert_eq!(ck.stored_states(), vec![self.t.div_ceil(k) + 1]);
            check(&format!("checkpointed k={k}"), ck.into_grad_out());
        }
    }
}
