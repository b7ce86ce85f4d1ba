//! `rdbench perf`: this core's f32 FMA peak, each fused CPU kernel's matmul GFLOP/s against
//! it, step times of both arms at populations 1 / 8 / 17, the memory of each backward pass
//! (counting allocator), and on request the default protocol's wall time per phase and one
//! training run per arm.

use crate::alloc_count::peak_during;
use crate::outln;
use clap::Args;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RunSpec};
use rdbench_core::track::{self, Track};
use rdbench_engine::batch::{Batch, DeviceData};
use rdbench_engine::host::Quiet;
use rdbench_engine::model::kernels::flops;
use rdbench_engine::model::{self, RecurrentModel};
use rdbench_engine::peak;
use rdbench_engine::protocol::rule_for;
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::dense::{autodiff_grads, dense_grads};
use rdbench_engine::train::{Population, Tally, TrainSettings, init_population, train_population};
use web_time::Instant;

/// Flags of `perf`.
#[derive(Args, Debug)]
pub struct PerfArgs {
    /// Compute backend (flex, ndarray, vulkan).
    #[arg(long, default_value = "flex")]
    backend: String,
    /// Timed steps per measurement (after one warm-up step), 1 to 10000.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=10_000))]
    steps: u16,
    /// Threads for `--protocol` (default: one per core), 1 to 256 as for `run`.
    #[arg(long, value_parser = crate::cli::args::threads_arg().get_value_parser().clone())]
    threads: Option<u16>,
    /// Also run a protocol and time each phase: `default` (the spec defaults on every track,
    /// each track's time against the dynamics track's; what `--protocol` alone runs), `long`
    /// (the page's Long sequences preset: the adding problem at T = 1000 under the protocol its
    /// GRU baseline learns, tens of minutes on 2 cores) or `all` (both).
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "default")]
    protocol: Option<ProtocolChoice>,
    /// Also train one default run (15 epochs, 400 trajectories) per arm and time it.
    #[arg(long)]
    runs: bool,
}

/// Which protocols `--protocol` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ProtocolChoice {
    /// The spec defaults on every track.
    Default,
    /// The Long sequences preset (adding, T = 1000).
    Long,
    /// Both.
    All,
}

impl ProtocolChoice {
    /// The benches it runs: (title, track name for the comparison line, config).
    fn benches(self) -> Vec<(String, &'static str, BenchConfig)> {
        let mut out = Vec::new();
        if self != ProtocolChoice::Long {
            for t in track::TRACKS {
                let cfg = BenchConfig { track: t.name.into(), ..BenchConfig::default() };
                out.push((format!("the default protocol (spec defaults) on {}", t.name), t.name, cfg));
            }
        }
        if self != ProtocolChoice::Default {
            let long = rdbench_core::config::PRESETS.iter().find(|p| p.name == "long").expect("the long preset");
            let cfg = rdbench_core::config::parse_texts(long.overrides.iter().copied()).expect("presets are valid");
            out.push((format!("the long learning protocol ({}: adding, T = {})", long.label, cfg.seq_len), "", cfg));
        }
        out
    }
}

/// Milliseconds per call of `f` over `steps` calls (after a warm-up) and the fused
/// kernels' matmul GFLOP/s meanwhile, in this thread's CPU time where the system counts it
/// (`peak::Clock`, as the peak is timed: the ratio does not move with the machine's load).
fn time_steps(steps: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm-up
    let (t0, f0) = (peak::Clock::start(), flops());
    for _ in 0..steps {
        f();
    }
    let s = t0.seconds();
    (s * 1000.0 / steps as f64, (flops() - f0) as f64 / s / 1e9)
}

/// Peak bytes of one step: (dense autodiff, dense BPTT by VJP, checkpointed k = 1,
/// checkpointed k = k_max).
pub fn step_peaks(
    model: &dyn RecurrentModel,
    params: &[burn::tensor::Tensor<3>],
    batch: &Batch,
    k_max: usize,
) -> [usize; 4] {
    let r = params[0].dims()[0];
    let (_, autodiff) = peak_during(|| autodiff_grads(model, params, batch).grads);
    let (_, dense) = peak_during(|| dense_grads(model, params, batch).grads);
    let (_, k1) = peak_during(|| checkpointed_grads(model, params, batch, &vec![1; r], 20).grads);
    let (_, kk) = peak_during(|| checkpointed_grads(model, params, batch, &vec![k_max; r], 20).grads);
    [autodiff, dense, k1, kk]
}

/// Populations the step table measures (the default protocol's are 9 sweep and 8 full runs,
/// split over the threads).
const POPULATIONS: [usize; 3] = [1, 8, 17];

/// Run the benchmark; returns the exit code.
pub fn run(args: &PerfArgs) -> i32 {
    let mut backend = match rdbench_engine::backend::by_name(&args.backend) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(t) = args.threads {
        backend.threads = t as usize;
    }
    let device = &backend.device;
    let track = track::Pendulum::default();
    let data = track.generate_all(0);
    let train = DeviceData::new(&data.train, device);
    outln!(
        "backend {} ({}), T = {}, {} timed steps each, {} cores\n",
        backend.name,
        backend.adapter,
        track.seq_len(),
        args.steps as usize,
        rdbench_engine::backend::default_threads()
    );

    let peak = peak::measure();
    #[cfg(feature = "wgpu")]
    if rdbench_engine::model::kernels::cube_on(device) {
        gpu_table(device, args.steps as usize);
    } else {
        cpu_tables(device, &train, args.steps as usize, peak.as_ref());
    }
    #[cfg(not(feature = "wgpu"))]
    cpu_tables(device, &train, args.steps as usize, peak.as_ref());
    protocol_and_runs(args, &backend, &data, &train, peak.as_ref());
    0
}

/// The GPU's step table: kernel launches and ms per training step of each arm, fused and
/// unfused (`fused_check`), at each population.
#[cfg(feature = "wgpu")]
fn gpu_table(device: &burn::tensor::Device, steps: usize) {
    outln!("per training step on the GPU (batch 32, hidden 32; idea: checkpointed k = 16, 20 reversal iterations)");
    outln!(
        "  pop   dispatches dense (fused/unfused)   idea (fused/unfused)   ms dense (fused/unfused)   ms idea (fused/unfused)   max |diff| (regression / classification)"
    );
    for pop in POPULATIONS {
        match futures::executor::block_on(rdbench_engine::fused_check::fused_check(device, pop, steps, 0)) {
            Ok(c) => outln!(
                "  {pop:>3}   {:>6} / {:<6} ({:>5.1}x)          {:>6} / {:<6} ({:>5.1}x)   {:>8.2} / {:<8.2}          {:>8.2} / {:<8.2}         {:.2e} / {:.2e}",
                c.fused.dispatches_dense,
                c.unfused.dispatches_dense,
                c.unfused.dispatches_dense as f64 / c.fused.dispatches_dense as f64,
                c.fused.dispatches_idea,
                c.unfused.dispatches_idea,
                c.unfused.dispatches_idea as f64 / c.fused.dispatches_idea as f64,
                c.fused.ms_dense,
                c.unfused.ms_dense,
                c.fused.ms_idea,
                c.unfused.ms_idea,
                c.max_abs_diff,
                c.classification_max_abs_diff
            ),
            Err(e) => outln!("  {pop:>3}   failed: {e}"),
        }
    }
}

/// `gflops` as a share of the core's peak, a percentage column (blank without a peak).
fn of_peak(gflops: f64, peak: Option<&peak::Peak>) -> String {
    peak.map_or(String::new(), |p| format!("{:>6.1}%", 100.0 * gflops / p.gflops))
}

/// This core's peak, the fused kernels alone, the CPU's step table (ms and GFLOP/s per arm
/// and population) and peak heap bytes.
fn cpu_tables(device: &burn::tensor::Device, train: &DeviceData, steps: usize, peak: Option<&peak::Peak>) {
    match peak {
        Some(p) => outln!(
            "this core's f32 peak: {:.1} GFLOP/s ({}, register-only; the fused elementwise gate math uses {}); it and the \
             tables below are timed in {}\n",
            p.gflops,
            p.unit,
            rdbench_engine::model::simd::level(),
            if peak::Clock::counts_cpu_time() {
                "this thread's CPU time (what other processes take is not counted, so the ratios hold under load)"
            } else {
                "wall time"
            }
        ),
        None => outln!("this core's f32 peak: not measured (no known FMA unit on this CPU)\n"),
    }
    kernel_table(device, train, steps, peak);
    cell_cost_table(device, train, steps);
    outln!(
        "ms per training step (batch 32, hidden 32, one thread)   pop 1    pop 8   pop 17   8 vs 1   GFLOP/s (pop 8)  of peak   cell-steps/s (pop 8)"
    );
    let model = model::Gru::new(2, 32, 2);
    type Step = fn(&model::Gru, &[burn::tensor::Tensor<3>], &Batch, usize);
    let rows: [(&str, Step); 4] = [
        ("baseline dense BPTT (VJP, fused)", |m, p, b, _| drop(dense_grads(m, p, b))),
        ("baseline dense BPTT (burn autodiff)", |m, p, b, _| drop(autodiff_grads(m, p, b))),
        ("idea checkpointed k = 1", |m, p, b, r| drop(checkpointed_grads(m, p, b, &vec![1; r], 20))),
        ("idea checkpointed k = 16", |m, p, b, r| drop(checkpointed_grads(m, p, b, &vec![16; r], 20))),
    ];
    for (name, step) in rows {
        let mut cols = Vec::new();
        for pop in POPULATIONS {
            let (params, _) = init_population(&model, &(0..pop as u64).collect::<Vec<_>>(), device);
            let batch = train.all(pop, 32);
            cols.push(time_steps(steps, || step(&model, &params, &batch, pop)));
        }
        // Sequences x time steps trained per second: a step of population 8 trains 8 runs'
        // minibatches of 32 sequences over T steps.
        let cell_steps = (8 * 32 * train.t) as f64 / (cols[1].0 / 1000.0);
        outln!(
            "  {name:<52} {:>6.1} {:>8.1} {:>8.1} {:>7.2}x {:>10.2}      {}   {:>10.3e}",
            cols[0].0,
            cols[1].0,
            cols[2].0,
            cols[1].0 / cols[0].0,
            cols[1].1,
            of_peak(cols[1].1, peak),
            cell_steps
        );
    }

    outln!("\npeak heap bytes of one gradient step (population 1, counting allocator)");
    for (h, b) in [(32usize, 32usize), (256, 64)] {
        let model = model::Gru::new(2, h, 2);
        let (params, _) = init_population(&model, &[0], device);
        let batch = train.all(1, b);
        let [autodiff, dense, k1, k16] = step_peaks(&model, &params, &batch, 16);
        let states = |n: usize| n * b * h * 4;
        outln!(
            "  hidden {h:<3} batch {b:<3}: autodiff {autodiff:>10}  dense VJP {dense:>10}  checkpointed k=1 {k1:>10}  k=16 {k16:>10}  (state bytes: 81 -> {}, 6 -> {})",
            states(81),
            states(6)
        );
    }
}

/// Each fused CPU kernel alone at population 8 (batch 32, hidden 32): ms per call, matmul
/// GFLOP/s (2 m n k per product, counted as executed) and that against the core's peak. The
/// gate math (sigmoid, tanh, the reversal's division) is not in the FLOP count, so a kernel
/// whose time goes there reads low.
fn kernel_table(device: &burn::tensor::Device, train: &DeviceData, steps: usize, peak: Option<&peak::Peak>) {
    use burn::tensor::{Distribution, Tensor};
    use rdbench_engine::model::kernels;
    use rdbench_engine::model::{Grads, StepLoss, VjpStep};
    let (pop, batch, hid) = (8, 32, 32);
    let model = model::Gru::new(2, hid, 2);
    let (params, _) = init_population(&model, &(0..pop as u64).collect::<Vec<_>>(), device);
    let b = train.all(pop, batch);
    let h = Tensor::<3>::random([pop, batch, hid], Distribution::Uniform(-0.5, 0.5), device);
    let (x, y) = (b.x(3), b.y(3));
    let cell = [&params[0], &params[1], &params[2], &params[3]];
    let mut grads = Grads::PerParam(params.iter().map(|p| p.zeros_like()).collect());
    let Grads::PerParam(g) = &mut grads else { unreachable!("the CPU's layout") };
    outln!(
        "the fused CPU kernels alone (population 8, batch 32, hidden 32, one thread)   ms per call   matmul GFLOP/s  of peak"
    );
    let rows: [(&str, &mut dyn FnMut()); 3] = [
        ("GRU step", &mut || drop(kernels::gru_step(cell, h.clone(), x.clone()))),
        ("GRU reversal (20 fixed-point iterations)", &mut || {
            drop(kernels::gru_reverse(cell, h.clone(), x.clone(), 20))
        }),
        ("GRU step VJP (squared loss)", &mut || {
            let step = VjpStep {
                h_prev: h.clone(),
                x: x.clone(),
                loss: StepLoss::Squared { y: y.clone(), scale: 1e-3 },
                dh: h.clone(),
            };
            drop(kernels::gru_step_vjp(&params, step, g));
        }),
    ];
    for (name, f) in rows {
        let (ms, gflops) = time_steps(steps.max(20), f);
        outln!("  {name:<76} {ms:>8.3} {gflops:>12.2}    {}", of_peak(gflops, peak));
    }
    // The product inside all three, alone: a run's batch times W_hh, what a reversal repeats.
    let (h1, w, b) = (vec![0.25f32; batch * hid], vec![0.01f32; hid * 3 * hid], vec![0.1f32; 3 * hid]);
    let mut out = vec![0f32; batch * 3 * hid];
    let (ms, gflops) = time_steps(steps.max(20) * 100, || kernels::hidden_product(&mut out, &h1, &w, &b, batch, hid));
    outln!(
        "  {:<76} {:>8.4} {gflops:>12.2}    {}",
        format!("their product h W_hh + b_hh alone ([{batch} x {hid}] x [{hid} x {}], one run)", 3 * hid),
        ms,
        of_peak(gflops, peak)
    );
    outln!();
}

/// Milliseconds per call of `f`, the fastest of 5 trials of `calls` calls after a warm-up:
/// in this thread's CPU time where the system counts it (time other work takes the core
/// away is not the call's), else in wall time.
fn cpu_ms_per_call(calls: usize, f: &mut dyn FnMut()) -> f64 {
    f();
    (0..5)
        .map(|_| {
            let t0 = peak::Clock::start();
            for _ in 0..calls {
                f();
            }
            t0.seconds() * 1000.0 / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Each model's cell evaluations through its own interface (what the passes call) at
/// population 8, batch 32 and the spec's other defaults, one thread: ms per forward step, per
/// reversal evaluation (a 20-iteration reversal over 20 for the GRU, one inverse for an
/// exact model) and per one-step VJP (each the fastest of 5 trials, in CPU time), against
/// the forward step, beside the weights the model's work units use (`RecurrentModel::cell_cost`).
fn cell_cost_table(device: &burn::tensor::Device, train: &DeviceData, steps: usize) {
    use burn::tensor::{Distribution, Tensor};
    use rdbench_engine::model::VjpStep;
    outln!(
        "cell costs (population 8, batch 32, spec defaults, one thread)     ms: forward  reversal eval      VJP   ratio 1 : rev : VJP   work units 1 : rev : VJP"
    );
    let pop = 8;
    let b = train.all(pop, 32);
    for m in rdbench_core::models::MODELS {
        let cfg = BenchConfig { model: m.name.into(), ..BenchConfig::default() };
        let ctx = cfg.resolve().expect("the defaults resolve for every model");
        let model = rdbench_engine::model::build(&ctx).expect("a registered model");
        let (params, _) = init_population(&*model, &(0..pop as u64).collect::<Vec<_>>(), device);
        let h = Tensor::<3>::random([pop, 32, model.hidden()], Distribution::Uniform(-0.5, 0.5), device);
        let x = b.x(3);
        let iters = 20;
        let per_rev = model.reversal_evals(iters) as f64;
        let mut grads = model.grad_zeros(&params);
        let fastest = |f: &mut dyn FnMut()| cpu_ms_per_call(steps.max(200), f);
        let fwd = fastest(&mut || drop(model.step(&params, h.clone(), x.clone())));
        let rev = fastest(&mut || drop(model.reverse(&params, h.clone(), x.clone(), iters))) / per_rev;
        let vjp = fastest(&mut || {
            let s = VjpStep { h_prev: h.clone(), x: x.clone(), loss: b.loss_at(4), dh: h.clone() };
            drop(model.step_vjp(&params, s, &mut grads));
        });
        let c = model.cell_cost();
        outln!(
            "  {:<62} {fwd:>8.4} {rev:>14.4} {vjp:>8.4}   1 : {:.2} : {:.2}       {} : {} : {}",
            m.name,
            rev / fwd,
            vjp / fwd,
            c.forward,
            c.reversal,
            c.vjp
        );
    }
    outln!();
}

/// `--protocol` and `--runs`.
fn protocol_and_runs(
    args: &PerfArgs,
    backend: &rdbench_engine::backend::Backend,
    data: &track::TrackData,
    train: &DeviceData,
    peak: Option<&peak::Peak>,
) {
    let device = &backend.device;
    let model = model::Gru::new(2, 32, 2);
    if let Some(choice) = args.protocol {
        let mut walls: Vec<(&str, f64)> = Vec::new();
        for (title, name, cfg) in choice.benches() {
            outln!("\n{title}, {} thread(s)", backend.threads);
            // What `auto` and the page's estimate measure, checked against the real wall time.
            let ctx = cfg.resolve().expect("the protocols' configs are valid");
            let cal =
                futures::executor::block_on(rdbench_engine::calibrate::calibrate_for(&ctx, backend, backend.threads));
            let work = rdbench_engine::work::BenchWork::of(&ctx).total();
            if let Ok(c) = &cal {
                let s = |u: u64, ms: f64| u as f64 * ms / c.workers as f64 / 1000.0;
                let slowest = c.ms_per_work_unit_max.unwrap_or(c.ms_per_work_unit);
                let fastest = c.ms_per_work_unit_min.unwrap_or(c.ms_per_work_unit);
                outln!(
                    "  calibration {:.3e} ms per work unit (trials {fastest:.3e}–{slowest:.3e}), {} units on {} thread(s): estimate {:.1} s ({:.1}–{:.1} s)",
                    c.ms_per_work_unit,
                    work.mid,
                    c.workers,
                    s(work.mid, c.ms_per_work_unit),
                    s(work.low, fastest),
                    s(work.high, slowest),
                );
            }
            let (t0, f0) = (Instant::now(), flops());
            match futures::executor::block_on(rdbench_engine::protocol::run_bench(&ctx, backend, &[], &mut Quiet)) {
                Ok(report) => {
                    let wall = t0.elapsed().as_secs_f64();
                    if !name.is_empty() {
                        walls.push((name, wall));
                    }
                    let gflop = (flops() - f0) as f64 / 1e9;
                    if let Some(env) = &report.environment {
                        for (phase, s) in &env.phase_wall_time_s {
                            outln!("  {phase:<16} {s:>7.1} s");
                        }
                    }
                    outln!("  {:<16} {wall:>7.1} s", "total");
                    let cores =
                        peak.map(|p| p.gflops * backend.threads.min(rdbench_engine::backend::default_threads()) as f64);
                    outln!(
                        "  fused-kernel matmul work {gflop:.1} GFLOP: {:.2} GFLOP/s{}",
                        gflop / wall,
                        cores.map_or(String::new(), |c| format!(
                            ", {:.1}% of the threads' cores' peak",
                            100.0 * gflop / wall / c
                        ))
                    );
                    outln!(
                        "  test {}: baseline {:?}, idea {:?}; verdict {} (p = {:?}), mechanism confirmed: {}",
                        report.metric_name(),
                        report.baseline.full.mean,
                        report.idea.mean,
                        report.comparison.verdict.as_str(),
                        report.comparison.p_value,
                        report.mechanism_signature.confirmed
                    );
                    // A protocol that learns nothing says nothing: whether its baseline did.
                    let task = report.task.as_ref();
                    if let (Some(l), Some(r)) =
                        (task.and_then(|t| t.learnability.as_ref()), task.and_then(|t| t.reference.as_ref()))
                    {
                        outln!(
                            "  learned (test {} beyond {:.4}, the trivial predictor {:.4}): baseline {}/{} seeds, idea {}/{}{}",
                            report.metric_name(),
                            l.threshold,
                            r.value,
                            l.baseline.seeds_learned,
                            l.baseline.n,
                            l.idea.seeds_learned,
                            l.idea.n,
                            if l.comparison_void { "; THE COMPARISON IS VOID: the baseline did not learn" } else { "" }
                        );
                    }
                }
                Err(s) => outln!("  failed: {}", s.reason),
            }
        }
        if let Some(&(_, base)) = walls.iter().find(|(n, _)| *n == "dynamics") {
            for (name, wall) in walls.iter().filter(|(n, _)| *n != "dynamics") {
                outln!("  {name} / dynamics wall time: {:.2}x", wall / base);
            }
        }
    }

    if args.runs {
        outln!("\nwall time of one training run (15 epochs, 400 trajectories, population 1)");
        let eval = DeviceData::new(&data.test, device);
        for arm in [Arm::Baseline, Arm::Idea] {
            let cfg = BenchConfig { epochs: 15, batch_size: 32, lrs: vec![0.01], ..BenchConfig::default() };
            let settings = TrainSettings::new(&cfg, &backend.name);
            let mut rule = rule_for(arm, Phase::Full, &cfg);
            let spec = [RunSpec { arm, phase: Phase::Full, lr: 0.01, seed: 0 }];
            let mut tally = Tally::new(1, 1);
            let t0 = Instant::now();
            let at = Population { model: &model, train, eval: &eval, settings: &settings, device };
            let rec = futures::executor::block_on(train_population(&at, &spec, &mut *rule, &mut Quiet, &mut tally));
            match rec {
                Ok(r) => outln!("  {arm:?}: {:.1} s, test MSE {:?}", t0.elapsed().as_secs_f64(), r[0].metric),
                Err(e) => outln!("  {arm:?}: failed: {e}"),
            }
        }
    }
}
