//! `rdbench bench`: step times of both arms, the memory of the checkpointed backward pass
//! (counting allocator), and the wall time of one training run per arm.

use crate::alloc_count::peak_during;
use crate::config::BenchConfig;
use crate::idea::checkpointed::checkpointed_grads;
use crate::model::{self, RecurrentModel};
use crate::progress::{Arm, Phase, Quiet, RunSpec};
use crate::protocol::rule_for;
use crate::track::{self, Track};
use crate::train::batch::{Batch, DeviceData};
use crate::train::dense::dense_grads;
use crate::train::{Tally, TrainSettings, init_population, train_population};
use clap::Args;
use web_time::Instant;

/// Flags of `bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Compute backend (flex, ndarray, vulkan).
    #[arg(long, default_value = "flex")]
    backend: String,
    /// Timed steps per measurement (after one warm-up step).
    #[arg(long, default_value_t = 10)]
    steps: usize,
    /// Also train one default run (15 epochs, 400 trajectories) per arm and time it.
    #[arg(long)]
    runs: bool,
}

fn time_steps(steps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let t0 = Instant::now();
    for _ in 0..steps {
        f();
    }
    t0.elapsed().as_secs_f64() * 1000.0 / steps as f64
}

/// Peak bytes of one step: (dense autodiff, checkpointed k = 1, checkpointed k = k_max).
pub fn step_peaks(
    model: &dyn RecurrentModel,
    params: &[burn::tensor::Tensor<3>],
    batch: &Batch,
    k_max: usize,
) -> [usize; 3] {
    let r = params[0].dims()[0];
    let (_, dense) = peak_during(|| dense_grads(model, params, batch).grads);
    let (_, k1) = peak_during(|| checkpointed_grads(model, params, batch, &vec![1; r], 20).out.grads);
    let (_, kk) = peak_during(|| checkpointed_grads(model, params, batch, &vec![k_max; r], 20).out.grads);
    [dense, k1, kk]
}

/// Run the benchmark; returns the exit code.
pub fn run(args: &BenchArgs) -> i32 {
    let backend = match crate::backend::by_name(&args.backend) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let device = &backend.device;
    let track = track::Pendulum::default();
    let data = track.generate(0);
    let train = DeviceData::new(&data.train, device);
    println!(
        "backend {} ({}), T = {}, {} timed steps each\n",
        backend.name,
        backend.adapter,
        track.seq_len(),
        args.steps
    );

    println!("step time, ms (batch 32, hidden 32)   population 1   population 8");
    let model = model::Gru::new(2, 32, 2);
    let rows: [(&str, Option<usize>); 3] = [
        ("baseline dense BPTT (autodiff)", None),
        ("idea checkpointed k = 1", Some(1)),
        ("idea checkpointed k = 16", Some(16)),
    ];
    for (name, k) in rows {
        let mut cols = Vec::new();
        for pop in [1usize, 8] {
            let (params, _) = init_population(&model, &(0..pop as u64).collect::<Vec<_>>(), device);
            let batch = train.all(pop, 32);
            let ms = time_steps(args.steps, || match k {
                None => drop(dense_grads(&model, &params, &batch)),
                Some(k) => drop(checkpointed_grads(&model, &params, &batch, &vec![k; pop], 20)),
            });
            cols.push(ms);
        }
        println!("  {name:<36} {:>10.1}   {:>12.1}", cols[0], cols[1]);
    }

    println!("\npeak heap bytes of one gradient step (population 1, counting allocator)");
    for (h, b) in [(32usize, 32usize), (256, 64)] {
        let model = model::Gru::new(2, h, 2);
        let (params, _) = init_population(&model, &[0], device);
        let batch = train.all(1, b);
        let [dense, k1, k16] = step_peaks(&model, &params, &batch, 16);
        let states = |n: usize| n * b * h * 4;
        println!(
            "  hidden {h:<3} batch {b:<3}: dense autodiff {dense:>10}  checkpointed k=1 {k1:>10}  k=16 {k16:>10}  (state bytes: 81 -> {}, 6 -> {})",
            states(81),
            states(6)
        );
    }

    if args.runs {
        println!("\nwall time of one training run (15 epochs, 400 trajectories, population 1)");
        let eval = DeviceData::new(&data.test, device);
        for arm in [Arm::Baseline, Arm::Idea] {
            let cfg = BenchConfig { epochs: 15, batch_size: 32, lrs: vec![0.01], ..BenchConfig::default() };
            let settings =
                TrainSettings { epochs: 15, batch_size: 32, backend: backend.name.clone(), run_hash: cfg.run_hash() };
            let mut rule = rule_for(arm, &cfg);
            let spec = [RunSpec { arm, phase: Phase::Full, lr: 0.01, seed: 0 }];
            let mut tally = Tally::new(1, 1);
            let t0 = Instant::now();
            let rec = futures::executor::block_on(train_population(
                &model, &spec, &train, &eval, &settings, &mut *rule, device, &mut Quiet, &mut tally,
            ));
            match rec {
                Ok(r) => println!("  {arm:?}: {:.1} s, test MSE {:?}", t0.elapsed().as_secs_f64(), r[0].metric),
                Err(e) => println!("  {arm:?}: failed: {e}"),
            }
        }
    }
    0
}
