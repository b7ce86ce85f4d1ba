//! The checkpointed pass really holds fewer states: peak heap bytes of one idea gradient
//! step at k = 16 against k = 1, measured by a counting global allocator on a config where
//! hidden states dominate (hidden 256, batch 64, T 80), for the GRU and for rev_ode_small at
//! k = k_max, and the probe's measured peaks; and revolve with fewer slots holds less.
//! Figures are in the README.

mod common;
use common::*;
use rdbench::alloc_count::{Counting, thread_peak_during};
use rdbench_core::policy::Policy;
use rdbench_core::track::{Pendulum, Task, Track};
use rdbench_engine::batch::DeviceData;
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::Gru;
use rdbench_engine::model::{ModelShape, RevOde};
use rdbench_engine::schedule::Schedule;
use rdbench_engine::schedule::reversal::checkpointed_grads;
use rdbench_engine::train::init_population;

#[global_allocator]
static ALLOC: Counting = Counting;

/// A GRU of `h` hidden units (one run) and a batch of `b` pendulum trajectories.
fn gru_at(h: usize, b: usize) -> (Gru, Vec<burn::tensor::Tensor<3>>, rdbench_engine::batch::Batch) {
    let data = Pendulum::default().generate_all(0);
    let model = Gru::new(2, h, 2);
    let (params, _) = init_population(&model, &[0], &device());
    (model, params, DeviceData::new(&data.train, &device()).all(1, b))
}

#[test]
fn k16_peak_is_below_k1_peak_by_the_states_it_does_not_keep() {
    rdbench::alloc_count::install_meter();
    let (h, b) = (256usize, 64usize);
    let (model, params, batch) = gru_at(h, b);
    // Warm up any lazily allocated pools before measuring.
    drop(checkpointed_grads(&model, &params, &batch, &[1], 20));
    // Per-thread peaks: the tests of this binary run on parallel threads.
    let (_, k1) = thread_peak_during(|| checkpointed_grads(&model, &params, &batch, &[1], 20).grads);
    let (_, k16) = thread_peak_during(|| checkpointed_grads(&model, &params, &batch, &[16], 20).grads);
    let (k1, k16) = (k1.expect("installed"), k16.expect("installed"));
    let state = b * h * 4;
    let saved_states = (81 - 6) * state;
    eprintln!("peak bytes: k=1 {k1}, k=16 {k16}, state bytes 81 -> 6 differ by {saved_states}");
    assert!(k16 < k1, "k=16 peak {k16} not below k=1 peak {k1}");
    assert!(k1 - k16 >= saved_states * 8 / 10, "saved {} of the {saved_states} state bytes", k1 - k16);
    // And k = 1 holds at least its 81 states.
    assert!(k1 >= 81 * state);
}

#[test]
fn rev_ode_k_max_holds_fewer_states_and_the_probe_measures_it() {
    // Exact reversal: k = k_max stores ceil(80 / 16) + 1 = 6 states and keeps the gradient.
    // Measured on this thread only, so the other test of this binary does not disturb it.
    // The probe reads the meter, which this test installs too (a test may run alone).
    rdbench::alloc_count::install_meter();
    let (h, b) = (256usize, 64usize);
    let data = Pendulum::default().generate_all(0);
    let shape =
        ModelShape { input: 2, hidden: h, output: 2, rank0: 8, rank_max: 8, task: Task::Regression, forget_bits: 3 };
    let model = RevOde::new(&shape).unwrap();
    let (params, _) = init_population(&model, &[0], &device());
    let batch = DeviceData::new(&data.train, &device()).all(1, b);
    drop(checkpointed_grads(&model, &params, &batch, &[1], 1));
    let (dense, k1) = thread_peak_during(|| checkpointed_grads(&model, &params, &batch, &[1], 1));
    let (ck, k16) = thread_peak_during(|| checkpointed_grads(&model, &params, &batch, &[16], 1));
    let (k1, k16) = (k1.expect("installed"), k16.expect("installed"));
    let state = b * h * 4;
    eprintln!("rev_ode peak bytes: k=1 {k1}, k=16 {k16}, state bytes 81 -> 6 differ by {}", 75 * state);
    assert_eq!((dense.stored_states()[0], ck.stored_states()[0]), (81, 6));
    assert!(k16 < k1 && k1 - k16 >= 75 * state * 8 / 10, "k=1 {k1}, k=16 {k16}");
    let cos = cosine(
        &ck.grads.iter().flat_map(|t| read(t.clone())).collect::<Vec<_>>(),
        &dense.grads.iter().flat_map(|t| read(t.clone())).collect::<Vec<_>>(),
    );
    assert!(cos > 0.9999, "cosine {cos}");

    // The probe records both peaks; at k = 16 the checkpointed pass's is the lower one.
    let s = ProbeSettings {
        tau: 0.08,
        k_max: 16,
        policy: Policy::OneStep,
        reversal_iters: 1,
        batch_size: b,
        frontier: false,
    };
    let rec = &futures::executor::block_on(probe(&model, &params, &batch, &s, 0)).unwrap()[0];
    assert_eq!(rec.k, 16);
    let (pc, pd) = (rec.peak_bytes_checkpointed.unwrap(), rec.peak_bytes_dense.unwrap());
    eprintln!("probe measured peak bytes: checkpointed {pc}, dense {pd}");
    assert!(pc < pd && pd - pc >= (75 * state * 8 / 10) as u64, "checkpointed {pc}, dense {pd}");
}

#[test]
fn revolve_with_fewer_slots_holds_less() {
    // Revolve keeps at most its slots' snapshots: 5 slots against 40 (the budgets of k = 16
    // and k = 2) should differ by about the 35 states it does not keep.
    rdbench::alloc_count::install_meter();
    let (h, b) = (256usize, 64usize);
    let (model, params, batch) = gru_at(h, b);
    let run = |slots| Schedule::Revolve { slots }.run(&model, &params, &batch, 20);
    drop(run(40));
    let (wide, p40) = thread_peak_during(|| run(40));
    let (narrow, p5) = thread_peak_during(|| run(5));
    let (p40, p5) = (p40.expect("installed"), p5.expect("installed"));
    assert_eq!((wide.counts[0].stored_states, narrow.counts[0].stored_states), (41, 6));
    let state = b * h * 4;
    let saved = 35 * state;
    eprintln!("revolve peak bytes: 40 slots {p40}, 5 slots {p5}, 35 states are {saved}");
    assert!(p5 < p40 && p40 - p5 >= saved * 8 / 10, "40 slots {p40}, 5 slots {p5}");
}

/// What the engine runs unmetered (gemm's packing scratch, whose size follows its SIMD kernel)
/// leaves the thread's peak alone; the same allocation outside it counts in full.
#[test]
fn unmetered_scratch_leaves_the_peak_alone() {
    rdbench::alloc_count::install_meter();
    let scratch = || std::hint::black_box(vec![1u8; 1 << 20]).len();
    let (_, counted) = thread_peak_during(scratch);
    let (_, paused) = thread_peak_during(|| rdbench_engine::memory::unmetered(scratch));
    assert!(counted.unwrap() >= 1 << 20, "{counted:?}");
    assert!(paused.unwrap() < 1 << 10, "{paused:?}");
    // Counting resumes after it, and after a panic inside it.
    let _ = std::panic::catch_unwind(|| rdbench_engine::memory::unmetered(|| panic!("inside")));
    let (_, after) = thread_peak_during(scratch);
    assert_eq!(after, counted);
}
