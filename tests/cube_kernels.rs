//! The fused GPU kernels (cubecl) on a native Vulkan device: against PyTorch's fixture, against
//! the tensor-op path on the same device (within 1e-4), their kernel launches (>= 10x fewer
//! per training step), and a population trained on the GPU recording what the CPU records.
//! Needs `--features wgpu` and a Vulkan adapter (CI installs Mesa's lavapipe, a CPU one).
#![cfg(feature = "wgpu")]

mod common;
use burn::tensor::{Device, Tensor};
use common::*;
use rdbench_core::records::{Arm, Phase, RunRecord, RunSpec};
use rdbench_core::track::{Dataset, Pendulum, Track};
use rdbench_engine::batch::DeviceData;
use rdbench_engine::fused_check::fused_check;
use rdbench_engine::host::Quiet;
use rdbench_engine::model::kernels::cube_on;
use rdbench_engine::model::{Gru, RecurrentModel};
use rdbench_engine::protocol::rule_for;
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::{dense_grads, hidden_states};
use rdbench_engine::train::{Population, Tally, TrainSettings, train_population};

const TOL: f64 = 1e-4;

fn gpu() -> Device {
    let b = rdbench_engine::backend::vulkan().unwrap_or_else(|e| panic!("these tests need a Vulkan adapter: {e}"));
    assert!(cube_on(&b.device), "the Vulkan device runs the fused kernels");
    b.device
}

fn on(t: &Tensor<3>, device: &Device) -> Tensor<3> {
    t.clone().to_device(device)
}

/// The torch fixture's parameters and batch on `device`.
fn fixture_on(device: &Device) -> (GruFixture, Vec<Tensor<3>>, rdbench_engine::batch::Batch) {
    let fx = gru_fixture();
    let params = fx.params.iter().map(|p| on(p, device)).collect();
    let ds = Dataset {
        n: fx.b,
        t: fx.t,
        f_in: fx.f,
        f_out: fx.f,
        x: flat(&fx.v["x"]).iter().map(|&v| v as f32).collect(),
        y: flat(&fx.v["y"]).iter().map(|&v| v as f32).collect(),
        task: rdbench_core::track::Task::Regression,
    };
    let batch = DeviceData::new(&ds, device).all(1, fx.b);
    (fx, params, batch)
}

fn check_grads(label: &str, grads: &[Tensor<3>], fx: &GruFixture) {
    let cpu: Vec<Tensor<3>> = grads.iter().map(|g| on(g, &device())).collect();
    for (got, key) in ours_to_torch(&cpu, fx.f, fx.h).iter().zip(TORCH_GRAD_KEYS) {
        let err = max_abs_diff(got, &flat(&fx.v[key]));
        assert!(err <= TOL, "{label}: {key} max abs error {err:e}");
    }
}

#[test]
fn fused_gpu_gradients_match_torch() {
    let dev = gpu();
    let (fx, params, batch) = fixture_on(&dev);
    let model = Gru::new(fx.f, fx.h, fx.f);
    let want_loss = fx.v["loss"].as_f64().unwrap();
    let out = dense_grads(&model, &params, &batch);
    let loss = read(out.loss)[0];
    assert!((loss - want_loss).abs() < TOL, "dense loss {loss} vs torch {want_loss}");
    check_grads("dense BPTT on the GPU", &out.grads, &fx);
    // The checkpointed pass at several intervals: states rebuilt by the fused reversal where
    // the fixture's cell allows (k = 1 is exact BPTT).
    let out = checkpointed_grads(&model, &params, &batch, &[1], 20);
    check_grads("checkpointed k=1 on the GPU", &out.grads, &fx);
}

#[test]
fn fused_gpu_reversal_matches_the_cpu_kernel() {
    let dev = gpu();
    let (fx, params, batch) = fixture_on(&dev);
    let model = Gru::new(fx.f, fx.h, fx.f);
    let small: Vec<Tensor<3>> = params.iter().map(|p| p.clone().mul_scalar(0.3)).collect();
    let cpu_small: Vec<Tensor<3>> = small.iter().map(|p| on(p, &device())).collect();
    let hs = hidden_states(&model, &small, &batch);
    for t in 2..=fx.t {
        let g = model.reverse(&small, hs[t].clone(), batch.x(t - 1), 50);
        let cpu = model.reverse(&cpu_small, on(&hs[t], &device()), on(&batch.x(t - 1), &device()), 50);
        let err = max_abs_diff(&read(g.clone()), &read(cpu));
        assert!(err < TOL, "step {t}: GPU vs CPU reversal {err}");
        let err = max_abs_diff(&read(g), &read(hs[t - 1].clone()));
        assert!(err < TOL, "step {t}: reversal error {err}");
    }
}

#[test]
fn fused_and_unfused_agree_and_the_fused_path_launches_10x_fewer_kernels() {
    let dev = gpu();
    let c = futures::executor::block_on(fused_check(&dev, 3, 1)).unwrap();
    assert!(c.max_abs_diff <= TOL as f32, "fused vs unfused {}", c.max_abs_diff);
    assert!(c.classification_max_abs_diff <= TOL as f32, "classification {}", c.classification_max_abs_diff);
    let (f, u) = (&c.fused, &c.unfused);
    assert!(f.dispatches_dense * 10 <= u.dispatches_dense, "dense {} vs {}", f.dispatches_dense, u.dispatches_dense);
    assert!(f.dispatches_idea * 10 <= u.dispatches_idea, "idea {} vs {}", f.dispatches_idea, u.dispatches_idea);
    // The unfused path still works on the GPU (it is the reference).
    let model = Gru::new(2, 8, 2);
    let (params, _) = rdbench_engine::train::init_population(&model, &[1], &dev);
    let data = Pendulum { n_train: 8, n_test: 8, ..Pendulum::default() }.generate_all(0);
    let batch = DeviceData::new(&data.train, &dev).all(1, 4);
    let a = read(dense_grads(&model, &params, &batch).loss);
    let b = read(dense_grads(&model.clone().without_gpu_kernels(), &params, &batch).loss);
    assert!((a[0] - b[0]).abs() < TOL, "{a:?} vs {b:?}");
}

fn train_on(device: &Device, specs: &[RunSpec]) -> Vec<RunRecord> {
    let cfg = population_cfg();
    let data = Pendulum { n_train: 64, n_test: 32, ..Pendulum::default() }.generate_all(5);
    let (train, eval) = (DeviceData::new(&data.train, device), DeviceData::new(&data.test, device));
    let model = Gru::new(2, cfg.hidden_size, 2);
    let settings = TrainSettings::new(&cfg, "test");
    let mut rule = rule_for(specs[0].arm, specs[0].phase, &cfg);
    let mut tally = Tally::new(1, 1);
    let at = Population { model: &model, train: &train, eval: &eval, settings: &settings, device };
    futures::executor::block_on(train_population(&at, specs, &mut *rule, &mut Quiet, &mut tally)).unwrap()
}

#[test]
fn a_population_on_the_gpu_records_what_the_cpu_records() {
    // Losses are read once per epoch on the GPU; a run that diverges mid-epoch must still
    // record the step it diverged at, and the others train on untouched.
    let dev = gpu();
    for arm in [Arm::Baseline, Arm::Idea] {
        let specs = [
            RunSpec { arm, phase: Phase::Full, lr: 0.01, seed: 0 },
            RunSpec { arm, phase: Phase::Full, lr: 1e30, seed: 1 },
        ];
        let g = train_on(&dev, &specs);
        let c = train_on(&device(), &specs);
        for (i, (g, c)) in g.iter().zip(&c).enumerate() {
            assert_eq!(g.diverged_at, c.diverged_at, "{arm:?} run {i}");
            assert_eq!(g.mean_stored_states.is_some(), c.mean_stored_states.is_some());
            if let (Some(a), Some(b)) = (g.metric, c.metric) {
                assert!((a - b).abs() / b < 1e-3, "{arm:?} run {i}: metric GPU {a} vs CPU {b}");
            }
        }
        assert!(g[1].diverged && !g[0].diverged, "{arm:?}");
        // Probes (idea arm): the same k chosen at every epoch.
        let ks = |r: &RunRecord| r.probes.iter().map(|p| p.k).collect::<Vec<_>>();
        assert_eq!(ks(&g[0]), ks(&c[0]), "{arm:?}: chosen k");
    }
}

#[test]
fn packed_layout_round_trips_the_parameters() {
    // gru_pack then a packed gradient's split gives every parameter back (the GPU gradient's layout).
    let dev = gpu();
    let model = Gru::new(3, 5, 2);
    let (params, _) = rdbench_engine::train::init_population(&model, &[4, 5], &dev);
    let layout = rdbench_engine::model::cube_kernels::PackedLayout { f: 3, h: 5, o: 2 };
    let packed = rdbench_engine::model::cube_kernels::gru_pack(&params);
    assert_eq!(packed.dims(), [2, 1, layout.n_params()]);
    let shapes = model.param_shapes();
    let back = rdbench_engine::model::Gradient::packed(rdbench_engine::model::Packed {
        grad: packed.clone(),
        params: packed,
        shapes,
    })
    .into_vec();
    for (a, b) in params.iter().zip(back) {
        assert_eq!(read(a.clone()), read(b));
    }
}
