//! The fused GPU kernels against the tensor-op path on the same device: kernel launches per
//! training step (cubecl's launch observer), milliseconds per step, and how far the two
//! paths' gradients, losses and reversals differ. `rdbench perf --backend vulkan`, the
//! page's worker (`fused_check`) and the tests read it.

use crate::batch::{Batch, DeviceData, epoch_order, rows};
use crate::error::EngineError;
use crate::model::{Gru, RecurrentModel};
use crate::schedule::reversal::checkpointed_grads;
use crate::train::adam::Adam;
use crate::train::dense::dense_grads;
use crate::train::{init_population, optimizer_step, read_f32, train_step};
use burn::tensor::{Device, Tensor};
use cubecl::logging::{LaunchObservation, LaunchObserver};
use rdbench_core::track::{self, Track};
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use web_time::Instant;

/// Counts every kernel launch while installed, in all and by kernel.
#[derive(Default)]
struct Launches(AtomicUsize, std::sync::Mutex<std::collections::BTreeMap<&'static str, usize>>);

impl LaunchObserver for Launches {
    fn launched(&self, kernel: &'static str) {
        self.0.fetch_add(1, Ordering::Relaxed);
        *self.1.lock().unwrap_or_else(|e| e.into_inner()).entry(kernel).or_default() += 1;
    }
}

impl Launches {
    /// The launches by kernel name, most first.
    fn by_kernel(&self) -> Vec<(String, usize)> {
        let mut v: Vec<(String, usize)> =
            self.1.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(k, &n)| (short(k), n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// A kernel's name without its module path and type parameters.
fn short(name: &str) -> String {
    let base = name.split('<').next().unwrap_or(name);
    base.rsplit("::").next().unwrap_or(base).to_string()
}

/// `f`'s result and the kernel launches it issued. The observer is process-wide: nothing
/// else may launch kernels meanwhile.
pub fn count_launches<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let launches = Arc::new(Launches::default());
    let watching = LaunchObservation::new(launches.clone());
    let out = f();
    drop(watching);
    (out, launches.0.load(Ordering::Relaxed))
}

/// [`count_launches`] of a future (a probe reads its defects back while it runs), with the
/// launches by kernel, most first.
pub async fn count_launches_async<T>(f: impl std::future::Future<Output = T>) -> (T, usize, Vec<(String, usize)>) {
    let launches = Arc::new(Launches::default());
    let watching = LaunchObservation::new(launches.clone());
    let out = f.await;
    drop(watching);
    (out, launches.0.load(Ordering::Relaxed), launches.by_kernel())
}

/// One path's figures for one training step of each arm.
#[derive(Clone, Debug, Serialize)]
pub struct PathFigures {
    /// Kernel launches of one baseline step (dense BPTT, clip, Adam).
    pub dispatches_dense: usize,
    /// Kernel launches of one idea step (checkpointed at k = `k`, its reversals included).
    pub dispatches_idea: usize,
    /// Milliseconds per baseline step (the device's queue drained at the end).
    pub ms_dense: f64,
    /// Milliseconds per idea step.
    pub ms_idea: f64,
}

/// The check's result.
#[derive(Clone, Debug, Serialize)]
pub struct FusedCheck {
    /// Runs stepped together.
    pub population: usize,
    /// Checkpoint interval of the idea step.
    pub k: usize,
    /// Timed steps per figure.
    pub steps: usize,
    /// With the fused kernels.
    pub fused: PathFigures,
    /// Tensor ops only (the path before the kernels).
    pub unfused: PathFigures,
    /// Largest |fused - unfused| over both arms' gradients and losses and a 20-iteration
    /// reversal.
    pub max_abs_diff: f32,
    /// Largest difference between a probe through the whole-sequence kernels and one stepping
    /// through the per-step kernels: defects (one-step mean and max, chained), the gradient
    /// cosines; infinite if a run chose another k or a figure is missing on one side only.
    pub probe_max_abs_diff: f64,
    /// The same for a classification (the mnist1d track's shape: one input, ten classes,
    /// the cross-entropy at the last step), whose VJP takes the tensor ops on the GPU too
    /// while its step and reversal stay fused.
    pub classification_max_abs_diff: f32,
}

/// The idea step's checkpoint interval (reversals on 15 of every 16 steps).
const K: usize = 16;

/// One training step (gradients of parameters packed afresh, then `optimizer_step`:
/// divergence masks, per-run clip, Adam), without the host read.
fn one_step(model: &Gru, params: Vec<Tensor<3>>, adam: &mut Adam, batch: &Batch, k: Option<usize>) -> Vec<Tensor<3>> {
    let r = params[0].dims()[0];
    let out = match k {
        None => dense_grads(model, &params, batch),
        Some(k) => checkpointed_grads(model, &params, batch, &vec![k; r], 20).into_grad_out(),
    };
    optimizer_step(params, adam, out).params
}

/// Launches of one step, and ms per step over `steps` steps (after a warm-up that also
/// compiles the kernels).
async fn measure(
    model: &Gru,
    params: &[Tensor<3>],
    batch: &Batch,
    lrs: &[f64],
    k: Option<usize>,
    steps: usize,
    fused: bool,
) -> Result<(usize, f64), EngineError> {
    let device = params[0].device();
    let run = |p: Vec<Tensor<3>>, adam: &mut Adam| one_step(model, p, adam, batch, k);
    let mut adam = Adam::new(params, lrs, &device);
    if !fused {
        adam = adam.without_gpu_kernels();
    }
    let p = run(params.to_vec(), &mut adam);
    read_f32(p[0].clone().sum()).await?;
    let (p, launches) = count_launches(|| run(p, &mut adam));
    read_f32(p[0].clone().sum()).await?;
    let t0 = Instant::now();
    let mut p = p;
    for _ in 0..steps {
        p = run(p, &mut adam);
    }
    read_f32(p[0].clone().sum()).await?;
    Ok((launches, t0.elapsed().as_secs_f64() * 1000.0 / steps.max(1) as f64))
}

/// Largest |fused - unfused| of `model` on `batch`: both arms' gradients and losses (the idea
/// at k = 4) and a 20-iteration reversal of a mid-sequence state.
async fn agreement(model: &Gru, batch: &Batch, params: &[Tensor<3>]) -> Result<f32, EngineError> {
    let reference = model.clone().without_gpu_kernels();
    let r = params[0].dims()[0];
    let ks = vec![4; r];
    let both = |f: &dyn Fn(&Gru) -> Vec<Tensor<3>>| (f(model), f(&reference));
    let (dense_f, dense_u) = both(&|m| {
        let o = dense_grads(m, params, batch);
        [o.grads.into_vec(), vec![o.loss.reshape([r, 1, 1])]].concat()
    });
    let (ck_f, ck_u) = both(&|m| {
        let o = checkpointed_grads(m, params, batch, &ks, 20).into_grad_out();
        [o.grads.into_vec(), vec![o.loss.reshape([r, 1, 1])]].concat()
    });
    let h = crate::train::dense::hidden_states(model, params, batch);
    let x = batch.x(batch.t() / 2);
    let h_t = h[batch.t() / 2 + 1].clone();
    let (rev_f, rev_u) = both(&|m| vec![m.reverse(params, h_t.clone(), x.clone(), 20)]);
    let (opt_f, opt_u) = (optimizer_steps(model, params, batch, true), optimizer_steps(model, params, batch, false));
    max_diff([dense_f, ck_f, rev_f, opt_f].concat().into_iter().zip([dense_u, ck_u, rev_u, opt_u].concat()).collect())
        .await
}

/// Largest difference of a probe (the default config's settings, no frontier) through the
/// whole-sequence kernels against one stepping through the per-step kernels.
async fn probe_agreement(model: &Gru, batch: &Batch, params: &[Tensor<3>]) -> Result<f64, EngineError> {
    use crate::idea::probe::{ProbeSettings, probe};
    let s = ProbeSettings::new(&rdbench_core::config::BenchConfig::default(), false);
    let whole = probe(model, params, batch, &s, 0).await?;
    let stepped = probe(&model.clone().without_whole_kernels(), params, batch, &s, 0).await?;
    let mut worst = 0f64;
    let mut d = |a: Option<f64>, b: Option<f64>| {
        worst = match (a, b) {
            (Some(a), Some(b)) => worst.max((a - b).abs()),
            (None, None) => worst,
            _ => f64::INFINITY,
        }
    };
    for (a, b) in whole.iter().zip(&stepped) {
        d(a.defect_mean, b.defect_mean);
        d(a.defect_max, b.defect_max);
        for (ca, cb) in a.chained.iter().zip(&b.chained) {
            d(ca.defect, cb.defect);
        }
        d(a.grad_cos_chosen, b.grad_cos_chosen);
        d(a.grad_cos_kmax, b.grad_cos_kmax);
        if a.k != b.k || a.chained.len() != b.chained.len() {
            d(Some(0.0), None);
        }
    }
    Ok(worst)
}

/// Two optimizer steps on `batch`'s dense gradients, with the fused GPU step or the tensor
/// ops: the parameters and the gradient norms. Run 0's loss is NaN at the second step, so
/// the divergence mask is compared too (its parameters and norm come out zero and NaN).
fn optimizer_steps(model: &Gru, params: &[Tensor<3>], batch: &Batch, fused: bool) -> Vec<Tensor<3>> {
    let r = params[0].dims()[0];
    let device = params[0].device();
    let lrs: Vec<f64> = (0..r).map(|i| 0.01 * (i + 1) as f64).collect();
    let mut adam = Adam::new(params, &lrs, &device);
    if !fused {
        adam = adam.without_gpu_kernels();
    }
    assert_eq!(adam.is_fused(), fused && crate::model::kernels::cube_on(&device), "the path asked for");
    let mut p = params.to_vec();
    // As the population loop steps: the second step's pass takes the rows the first left
    // packed (the fused path), so a difference between those and its parameters shows here.
    let mut packed = adam.take_start();
    let mut norms = Vec::new();
    for step in 0..2 {
        let stepped = train_step(p, packed.take(), &mut adam, |p| {
            let mut out = dense_grads(model, p, batch);
            if step == 1 {
                let first = Tensor::<1, burn::tensor::Int>::arange(0..r as i64, &device).equal_elem(0);
                out.loss = out.loss.mask_fill(first, f32::NAN);
            }
            out
        });
        (p, packed) = (stepped.params, stepped.packed);
        norms.push(stepped.norm.reshape([r, 1, 1]));
    }
    // NaN on both paths is a match; max_diff counts a NaN difference as infinitely far.
    let norms = norms.into_iter().map(|n| n.clone().mask_fill(n.is_nan(), -1.0)).collect::<Vec<_>>();
    [p, norms].concat()
}

/// Largest |a - b| over pairs of tensors (NaN counts as infinitely far).
async fn max_diff(pairs: Vec<(Tensor<3>, Tensor<3>)>) -> Result<f32, EngineError> {
    let mut worst = 0f32;
    for (a, b) in pairs {
        let d = read_f32((a - b).abs().max().reshape([1, 1, 1])).await?[0];
        worst = if d.is_nan() { f32::INFINITY } else { worst.max(d) };
    }
    Ok(worst)
}

/// Run the check on `device` (a GPU device; on another device both paths are the same
/// code): the default GRU (hidden 32), batch 32 of the pendulum track at `seq_len` steps (0:
/// its default, 80), `population` runs. The tests take a shorter T: the tensor-op path's
/// launches, each a millisecond or more on a software adapter, grow with T; the fused ones
/// do not.
pub async fn fused_check(
    device: &Device,
    population: usize,
    steps: usize,
    seq_len: usize,
) -> Result<FusedCheck, EngineError> {
    let model = Gru::new(2, 32, 2);
    let reference = model.clone().without_gpu_kernels();
    let track = if seq_len == 0 { track::Pendulum::default() } else { track::Pendulum::new(seq_len) };
    let data = track.generate_all(0);
    let train = DeviceData::new(&data.train, device);
    let batch = train.all(population, 32);
    let seeds: Vec<u64> = (0..population as u64).collect();
    let lrs = vec![0.01; population];
    let (params, _) = init_population(&model, &seeds, device);

    // Agreement: both arms' gradients and losses, and one reversal of a trained-looking state.
    let max_abs_diff = agreement(&model, &batch, &params).await?;
    // The same on a classification: 32 MNIST-1D sequences of a small generated set.
    let mnist = track::Mnist1d { args: track::mnist1d::Mnist1dArgs { num_samples: 100, ..Default::default() } };
    let task = mnist.task();
    let classifier = Gru::new(mnist.input_dim(), 32, mnist.output_dim()).for_task(task);
    let c_batch = DeviceData::new(&mnist.generate_all(42).train, device).all(population, 32);
    let (c_params, _) = init_population(&classifier, &seeds, device);
    let classification_max_abs_diff = agreement(&classifier, &c_batch, &c_params).await?;

    let probe_max_abs_diff = probe_agreement(&model, &batch, &params).await?;

    let mut figures = Vec::new();
    for (m, fused) in [(&model, true), (&reference, false)] {
        let (dd, md) = measure(m, &params, &batch, &lrs, None, steps, fused).await?;
        let (di, mi) = measure(m, &params, &batch, &lrs, Some(K), steps, fused).await?;
        figures.push(PathFigures { dispatches_dense: dd, dispatches_idea: di, ms_dense: md, ms_idea: mi });
    }
    let unfused = figures.pop().expect("two paths");
    let fused = figures.pop().expect("two paths");
    Ok(FusedCheck {
        population,
        k: K,
        steps,
        fused,
        unfused,
        max_abs_diff,
        probe_max_abs_diff,
        classification_max_abs_diff,
    })
}

/// Rows per run of the many-row reversal in [`large_population_check`]: at 40 runs more
/// cubes than one grid dimension holds (65535), as the probe's one-step reversal
/// (79 x 32 rows per run at the default T) from 26 runs up.
const MANY_ROWS: usize = 1_700;

/// Rows of one run's reversal past 65535 on its own (a long sequence's probe).
const ONE_RUN_ROWS: usize = 70_000;

/// How far the fused kernels are from the tensor-op path at many runs
/// ([`large_population_check`]).
#[derive(Clone, Debug, Serialize)]
pub struct LargeCheck {
    /// Runs.
    pub population: usize,
    /// Largest |fused - unfused| of the baseline's gradients and losses.
    pub dense: f32,
    /// The same for the idea's checkpointed pass, the runs at different k.
    pub idea_mixed: f32,
    /// A reversal of `population` x [`MANY_ROWS`] rows.
    pub reversal: f32,
    /// One run's reversal of [`ONE_RUN_ROWS`] rows.
    pub reversal_one_run: f32,
}

/// The fused kernels against the tensor-op path at `population` runs, where one cube per
/// (run, row) exceeds a grid dimension: both arms' gradients and losses (the runs choosing
/// different k), a reversal of `population` x [`MANY_ROWS`] rows and one run's reversal of
/// [`ONE_RUN_ROWS`] rows, each of states one GRU step made (as the probe reverses). A small
/// GRU (hidden 8, batch 4) keeps it quick on a software adapter.
pub async fn large_population_check(device: &Device, population: usize) -> Result<LargeCheck, EngineError> {
    use burn::tensor::Distribution;
    let model = Gru::new(2, 8, 2);
    let reference = model.clone().without_gpu_kernels();
    let data = track::Pendulum::default().generate_all(0);
    let batch = DeviceData::new(&data.train, device).all(population, 4);
    let seeds: Vec<u64> = (0..population as u64).collect();
    let (params, _) = init_population(&model, &seeds, device);
    // Intervals 1..=4 across the runs: the pass's mixed-k path. Converged reversals (20
    // iterations, as `agreement`): with few iterations and long chains the rebuilt states
    // amplify the two paths' rounding (5 iterations at k up to 8 differed by 1.7e-3).
    let ks: Vec<usize> = (0..population).map(|r| 4 - r % 4).collect();
    let ((dense, _), idea_mixed) = pass_diffs((&model, &reference), &params, &batch, &ks).await?;
    let both = |f: &dyn Fn(&Gru) -> Vec<Tensor<3>>| (f(&model), f(&reference));
    let diff = |(a, b): (Vec<Tensor<3>>, Vec<Tensor<3>>)| max_diff(a.into_iter().zip(b).collect());
    let uniform = Distribution::Uniform(-0.5, 0.5);
    // States a step made from random ones, through the tensor ops: reachable, as the
    // probe's are (a random state need not be, and its reversal amplifies rounding).
    let stepped = |p: &[Tensor<3>], rows: usize| {
        let g = Tensor::<3>::random([p[0].dims()[0], rows, 8], uniform, device);
        let x = Tensor::<3>::random([p[0].dims()[0], rows, 2], uniform, device);
        (reference.step(p, g, x.clone()), x)
    };
    let (h, x) = stepped(&params, MANY_ROWS);
    let reversal = diff(both(&|m| vec![m.reverse(&params, h.clone(), x.clone(), 4)])).await?;
    let first: Vec<Tensor<3>> = params.iter().map(|p| rows(p, &[0])).collect();
    let (h1, x1) = stepped(&first, ONE_RUN_ROWS);
    let reversal_one_run = diff(both(&|m| vec![m.reverse(&first, h1.clone(), x1.clone(), 2)])).await?;
    Ok(LargeCheck { population, dense, idea_mixed, reversal, reversal_one_run })
}

/// Largest |a - b| of two models' dense BPTT (gradients and loss; with the largest |b|
/// there) and of their reversal passes at intervals `ks` (20 iterations).
async fn pass_diffs(
    (a, b): (&dyn RecurrentModel, &dyn RecurrentModel),
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
) -> Result<((f32, f32), f32), EngineError> {
    let r = params[0].dims()[0];
    let with_loss = |o: crate::train::GradOut| [o.grads.into_vec(), vec![o.loss.reshape([r, 1, 1])]].concat();
    let pairs = |f: &dyn Fn(&dyn RecurrentModel) -> crate::train::GradOut| -> Vec<(Tensor<3>, Tensor<3>)> {
        with_loss(f(a)).into_iter().zip(with_loss(f(b))).collect()
    };
    let dense_pairs = pairs(&|m| dense_grads(m, params, batch));
    let sizes = dense_pairs.iter().map(|(_, b)| b.clone().abs().max().reshape([1, 1, 1])).collect();
    let size = read_f32(Tensor::cat(sizes, 0)).await?.into_iter().fold(0.0f32, f32::max);
    let dense = max_diff(dense_pairs).await?;
    let idea = max_diff(pairs(&|m| checkpointed_grads(m, params, batch, ks, 20).into_grad_out())).await?;
    Ok(((dense, size), idea))
}

/// One case of [`sequence_check`]: the whole-sequence kernels against the per-step ones.
#[derive(Clone, Debug, Serialize)]
pub struct SequenceCase {
    /// The model: `rnn_small` (the reference its per-step kernels) or `rev_ode_small` (the
    /// reference its tensor ops).
    pub model: &'static str,
    /// Time steps.
    pub t: usize,
    /// Runs.
    pub population: usize,
    /// The loss: `regression` (every step), `last-step regression`, `classification`.
    pub task: &'static str,
    /// Rows per backward launch, when set below the rows (a pass in parts).
    pub part_rows: Option<usize>,
    /// Largest |whole - reference| of dense BPTT's gradients and losses.
    pub dense: f32,
    /// Largest |value| of the reference's dense gradients and losses: the scale the
    /// differences are read against (a non-contracting model's gradients grow with T).
    pub reference_size: f32,
    /// The same for the idea's pass, the runs at intervals 1..4 (4 - r mod 4).
    pub idea_mixed: f32,
    /// The same for the recomputing schedules' plans run as data (`plan_schedules`: fixed
    /// interval at k 3, revolve) against the plans stepped.
    pub plans: f32,
    /// Whether those passes counted the same states and evaluations both ways.
    pub plan_counts_agree: bool,
    /// Kernel launches of the whole-sequence passes (dense BPTT, the idea's mixed k, both
    /// plans together): the same at every T.
    pub launches: [usize; 3],
    /// The plans' launches by kernel, most first.
    pub plan_kernels: Vec<(String, usize)>,
}

/// The whole-sequence kernels (dense and reversal passes, the recomputing schedules' plans)
/// against a reference on the same device, on random data: the GRU's against its per-step
/// kernels (themselves checked against the tensor ops above), `rev_ode_small`'s against its
/// tensor ops (at rank 2 of r_max 3, so the mask is in play). The small cases, which every
/// CI run checks: T = 3 and 80, populations 1 and 8, the rows in one part and in several, a
/// regression's loss at every step at both lengths (so the launches can be compared), and
/// once each the loss at the last step alone (the adding problem's squared error, a
/// classification's cross-entropy: the per-step path takes the tensor-op VJP there). `long`
/// adds the long equivalences (T = 1,000, 40 runs), minutes of tensor ops on a software
/// adapter (`npm run check:webgpu`). Small models (hidden 8, batch 4) keep it quick.
pub async fn sequence_check(device: &Device, long: bool) -> Result<Vec<SequenceCase>, EngineError> {
    use track::Task;
    type Case = (usize, usize, Option<usize>, Task);
    let (reg, last, class) = (Task::Regression, Task::LastStepRegression, Task::Classification { classes: 3 });
    // Dense regression at both lengths, whole and in parts of one row (so the launches
    // compare across T); each last-step loss once, in parts of three rows.
    let gru_small: [Case; 6] = [
        (3, 8, None, reg),
        (80, 8, None, reg),
        (3, 1, Some(1), reg),
        (80, 1, Some(1), reg),
        (80, 8, Some(3), last),
        (80, 8, None, class),
    ];
    let gru_long: [Case; 4] =
        [(80, 40, None, reg), (1000, 8, None, reg), (1000, 1, Some(1), reg), (1000, 8, None, class)];
    let rev_ode_small: [Case; 6] = [
        (3, 8, None, reg),
        (80, 8, None, reg),
        (3, 1, Some(1), reg),
        (80, 1, Some(1), reg),
        (80, 8, Some(3), last),
        (80, 1, None, class),
    ];
    // Its reference (tensor ops, ~60 launches a step) is slow on a software adapter: one case
    // at T = 1,000.
    let rev_ode_long: [Case; 2] = [(80, 40, None, reg), (1000, 1, None, class)];
    let pick = |small: &[Case], extra: &[Case]| -> Vec<Case> {
        small.iter().chain(if long { extra } else { &[] }).copied().collect()
    };
    let (gru, rev_ode) = (pick(&gru_small, &gru_long), pick(&rev_ode_small, &rev_ode_long));
    let mut out = Vec::new();
    for (t, population, part_rows, task) in gru {
        let f_out = if task == class { 3 } else { 2 };
        let mut model = Gru::new(2, 8, f_out).for_task(task);
        if let Some(rows) = part_rows {
            model = model.with_part_rows(rows);
        }
        let reference = model.clone().without_whole_kernels();
        out.push(sequence_case(("rnn_small", &model, &reference), (t, population, part_rows, task), device).await?);
    }
    for (t, population, part_rows, task) in rev_ode {
        let output = if task == class { 3 } else { 2 };
        let shape =
            crate::model::ModelShape { input: 2, hidden: 8, output, rank0: 2, rank_max: 3, task, forget_bits: 0 };
        let mut model = crate::model::RevOde::new(&shape).expect("a shape rev_ode_small takes");
        if let Some(rows) = part_rows {
            model = model.with_part_rows(rows);
        }
        let reference = model.clone().without_whole_kernels();
        out.push(sequence_case(("rev_ode_small", &model, &reference), (t, population, part_rows, task), device).await?);
    }
    Ok(out)
}

/// One [`SequenceCase`]: `model` against `reference` at T `t`, `population` runs, `task`'s
/// loss on random data (4 rows, 2 input features, the model's outputs).
async fn sequence_case(
    (name, model, reference): (&'static str, &dyn RecurrentModel, &dyn RecurrentModel),
    (t, population, part_rows, task): (usize, usize, Option<usize>, track::Task),
    device: &Device,
) -> Result<SequenceCase, EngineError> {
    use rand::{Rng, SeedableRng};
    use track::Task;
    let f_out = model.param_shapes()[model.param_names().iter().position(|&n| n == "b_o").expect("a readout")][1];
    let target_steps = task.target_steps(t);
    let n = 4;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(t as u64);
    let mut draw = |len: usize| (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect::<Vec<_>>();
    let x = draw(n * t * 2);
    let y = match task {
        // One-hot rows, the class drawn from the first value's sign and size.
        Task::Classification { classes } => draw(n)
            .iter()
            .flat_map(|v| {
                let c = (((v + 1.0) / 2.0 * classes as f32) as usize).min(classes - 1);
                (0..classes).map(move |q| f32::from(u8::from(q == c)))
            })
            .collect(),
        _ => draw(n * target_steps * f_out),
    };
    let data = track::Dataset { n, t, f_in: 2, f_out, x, y, task };
    let batch = DeviceData::new(&data, device).all(population, n);
    let seeds: Vec<u64> = (0..population as u64).collect();
    let (params, _) = init_population(model, &seeds, device);
    let ks: Vec<usize> = (0..population).map(|r| 4 - r % 4).collect();
    let ((dense, reference_size), idea_mixed) = pass_diffs((model, reference), &params, &batch, &ks).await?;
    let (plans, plan_counts_agree) = plan_diffs((model, reference), &params, &batch).await?;
    let (launches, plan_kernels) = whole_launches(model, &params, &batch, &ks).await;
    Ok(SequenceCase {
        model: name,
        reference_size,
        t,
        population,
        task: match task {
            Task::Regression => "regression",
            Task::LastStepRegression => "last-step regression",
            Task::Classification { .. } => "classification",
        },
        part_rows,
        dense,
        idea_mixed,
        plans,
        plan_counts_agree,
        launches,
        plan_kernels,
    })
}

/// Kernel launches of `model`'s whole passes (see [`SequenceCase::launches`]).
async fn whole_launches(
    model: &dyn RecurrentModel,
    params: &[Tensor<3>],
    batch: &Batch,
    ks: &[usize],
) -> ([usize; 3], Vec<(String, usize)>) {
    use crate::schedule::whole::plans_at_each;
    let plans: Vec<_> = plan_schedules(batch.t()).iter().map(|s| s.plan(batch.t()).expect("recomputing")).collect();
    let (_, plan_launches, plan_kernels) =
        count_launches_async(async { plans_at_each(model, params, batch, &plans) }).await;
    let launches = [
        count_launches(|| dense_grads(model, params, batch)).1,
        count_launches(|| checkpointed_grads(model, params, batch, ks, 20)).1,
        plan_launches,
    ];
    (launches, plan_kernels)
}

/// The recomputing schedules the sequence check runs as plans over `t` steps: fixed interval
/// at k 3 and revolve at 2 slots, or T / 100 where that is more (its recomputation at 2
/// slots, ~45 T advances at T = 1,000, is minutes of tensor ops on a software adapter).
fn plan_schedules(t: usize) -> [crate::schedule::Schedule; 2] {
    use crate::schedule::Schedule;
    [Schedule::FixedInterval { k: 3 }, Schedule::Revolve { slots: 2.max(t / 100) }]
}

/// Largest |a - b| of two models' recomputing passes ([`plan_schedules`]: gradients and loss; `a`'s both in one pass of the population repeated, and the
/// first alone too), and whether their counts agree.
async fn plan_diffs(
    (a, b): (&dyn RecurrentModel, &dyn RecurrentModel),
    params: &[Tensor<3>],
    batch: &Batch,
) -> Result<(f32, bool), EngineError> {
    use crate::schedule::whole::plans_at_each;
    let r = params[0].dims()[0];
    let (mut worst, mut agree) = (0.0f32, true);
    let schedules = plan_schedules(batch.t());
    let plans: Vec<_> = schedules.iter().map(|s| s.plan(batch.t()).expect("recomputing")).collect();
    let together = plans_at_each(a, params, batch, &plans)
        .ok_or(EngineError::Device("the model has no plan kernel on this device".into()))?;
    let alone = schedules[0].run(a, params, batch, 0);
    for (s, pa) in schedules.iter().chain([&schedules[0]]).zip(together.into_iter().chain([alone])) {
        let pb = s.run(b, params, batch, 0);
        agree &= pa.counts == pb.counts;
        // A part of passes run as one carries no loss of its own (the one run alone does):
        // the pairs stop at the shorter list.
        let with_loss = |p: crate::schedule::Pass| {
            let loss = p.loss.map(|l| l.reshape([r, 1, 1]));
            [p.grads.into_vec(), loss.into_iter().collect()].concat()
        };
        let d = max_diff(with_loss(pa).into_iter().zip(with_loss(pb)).collect()).await?;
        worst = worst.max(d);
    }
    Ok((worst, agree))
}

/// Kernel launches of the GPU path at one population size under the default config: a whole
/// population step of each arm, from the minibatch through the optimizer, and one probe.
#[derive(Clone, Debug, Serialize)]
pub struct Dispatches {
    /// Runs stepped together.
    pub population: usize,
    /// A baseline step (minibatch, dense BPTT, clip, Adam).
    pub step_dense: usize,
    /// An idea step, every run at k = k_max.
    pub step_idea_agreeing: usize,
    /// An idea step, the runs at different k (k_max, k_max - 1, .. cycling).
    pub step_idea_mixed: usize,
    /// A probe of the sweep's idea runs (no frontier).
    pub probe: usize,
    /// A probe of the full idea runs (every schedule of the frontier too), if asked.
    pub probe_frontier: Option<usize>,
    /// The launches of the mixed idea step by kernel, most first.
    pub step_kernels: Vec<(String, usize)>,
    /// The launches of the probe (the frontier's where asked) by kernel, most first.
    pub probe_kernels: Vec<(String, usize)>,
}

/// [`Dispatches`] at `population` runs on `device`, the default config's data, batch size,
/// k_max and reversal iterations, its model or `model` (a registry name); the frontier's
/// probe only if `frontier` (slow on a software adapter).
pub async fn dispatches(
    device: &Device,
    population: usize,
    frontier: bool,
    model: Option<&str>,
) -> Result<Dispatches, EngineError> {
    use crate::idea::probe::{PROBE_TRAJECTORIES, ProbeSettings, probe};
    use crate::train::GradientRule;
    let mut cfg = rdbench_core::config::BenchConfig::default();
    if let Some(name) = model {
        cfg.model = name.to_string();
    }
    let ctx = cfg.resolve()?;
    let model = crate::model::build(&ctx)?;
    let data = ctx.track.generate(cfg.data_seed, ctx.train_sequences).full_split();
    let train = DeviceData::new(&data.train, device);
    let seeds: Vec<u64> = (0..population as u64).collect();
    let (params, mut rngs) = init_population(&*model, &seeds, device);
    let lrs = vec![cfg.lrs[0]; population];
    let order = epoch_order(&mut rngs, train.n, cfg.batch_size);
    let step_kernels = std::cell::RefCell::new(Vec::new());
    // A step as the population loop takes it after its first: the last step's packed rows
    // known to the passes.
    let step = |grads: &dyn Fn(&[Tensor<3>], &Batch) -> crate::train::GradOut| {
        let mut adam = Adam::new(&params, &lrs, device);
        let first = adam.take_start();
        let batch = train.batch(&order[0]);
        let stepped = train_step(params.clone(), first, &mut adam, |p| grads(p, &batch));
        let launches = Arc::new(Launches::default());
        let watching = LaunchObservation::new(launches.clone());
        let batch = train.batch(&order[1]);
        drop(train_step(stepped.params, stepped.packed, &mut adam, |p| grads(p, &batch)));
        drop(watching);
        *step_kernels.borrow_mut() = launches.by_kernel();
        launches.0.load(Ordering::Relaxed)
    };
    let k = cfg.k_max;
    let mixed: Vec<usize> = (0..population).map(|r| k - r % k).collect();
    let idea = |ks: &[usize]| {
        step(&|p: &[Tensor<3>], b: &Batch| checkpointed_grads(&*model, p, b, ks, cfg.reversal_iters).into_grad_out())
    };
    let step_dense = step(&|p: &[Tensor<3>], b: &Batch| crate::train::dense::DenseRule.grads(&*model, p, b));
    let step_idea_agreeing = idea(&vec![k; population]);
    let step_idea_mixed = idea(&mixed);
    let step_kernels = step_kernels.into_inner();
    let probe_batch = train.all(population, PROBE_TRAJECTORIES);
    // A probe as the population loop takes it: the parameters' packed rows known (the
    // optimizer's, or at the first epoch the ones `Adam::new` packed).
    let packed = Adam::new(&params, &lrs, device).take_start();
    let probe_with = |frontier: bool| {
        let s = ProbeSettings::new(&cfg, frontier);
        let (model, params, batch, packed) = (&*model, &params, &probe_batch, packed.clone());
        async move {
            let _known = crate::model::packed_rows::know_some(params, packed);
            let (out, n, by_kernel) = count_launches_async(probe(model, params, batch, &s, 0)).await;
            out.map(|_| (n, by_kernel))
        }
    };
    let (probe_n, mut probe_kernels) = probe_with(false).await?;
    let probe_frontier = if frontier {
        let (n, by_kernel) = probe_with(true).await?;
        probe_kernels = by_kernel;
        Some(n)
    } else {
        None
    };
    Ok(Dispatches {
        population,
        step_dense,
        step_idea_agreeing,
        step_idea_mixed,
        probe: probe_n,
        probe_frontier,
        step_kernels,
        probe_kernels,
    })
}

/// The default protocol's dispatches: each (phase, arm) population's runs, steps and probes
/// as `run_phases` trains them (one population per phase and arm on a GPU, whose backend
/// has one thread), times the counts [`dispatches`] measures at that population (the idea's
/// steps counted mixed, the runs choosing their own k). Evaluation passes are left out.
#[derive(Clone, Debug, Serialize)]
pub struct ProtocolDispatches {
    /// The measured counts, per population size the protocol trains.
    pub measured: Vec<Dispatches>,
    /// Per (phase, arm): its label, runs, population steps and probes.
    pub populations: Vec<(String, usize, usize, usize)>,
    /// The whole protocol's dispatches.
    pub total: usize,
}

/// [`ProtocolDispatches`] of the default config on `device`.
pub async fn default_protocol_dispatches(device: &Device) -> Result<ProtocolDispatches, EngineError> {
    let cfg = rdbench_core::config::BenchConfig::default();
    let ctx = cfg.resolve()?;
    let n_train = ctx.train_sequences;
    let n_sweep_train = n_train - track::validation_size(n_train);
    let n_sweep = cfg.lrs.len() * cfg.n_sweep_seeds;
    let phases = [("sweep", n_sweep, n_sweep_train, false), ("full", cfg.n_seeds, n_train, true)];
    let mut measured: Vec<Dispatches> = Vec::new();
    let mut populations = Vec::new();
    let mut total = 0;
    for (phase, runs, n, frontier) in phases {
        let d = dispatches(device, runs, frontier, None).await?;
        let steps = cfg.epochs * n.div_ceil(cfg.batch_size);
        let probes = cfg.epochs + 1;
        let probe = if frontier { d.probe_frontier.expect("asked") } else { d.probe };
        total += steps * d.step_dense + steps * d.step_idea_mixed + probes * probe;
        populations.push((format!("{phase} baseline"), runs, steps, 0));
        populations.push((format!("{phase} idea"), runs, steps, probes));
        measured.push(d);
    }
    Ok(ProtocolDispatches { measured, populations, total })
}
