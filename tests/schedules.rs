//! The gradient schedules of the frontier (`rdbench_engine::schedule`): revolve's
//! forward evaluations equal the optimum of the `checkpoint-schedules` package's Revolve for
//! every slot count (tests/fixtures/revolve_schedules.json, made by tools/make_fixtures.py)
//! and it never holds more than its slots; fixed-interval and revolve gradients are dense
//! BPTT's for both models; the counters of every schedule equal a hand count at T = 5;
//! reversal at a fixed k is exact on rev_ode_small and, on a trained GRU, counts the
//! iterations it ran; and a frontier probe records every schedule of the grid.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::frontier::grid;
use rdbench_core::records::ScheduleKind;
use rdbench_core::track::{Pendulum, Track};
use rdbench_engine::batch::{Batch, DeviceData};
use rdbench_engine::idea::probe::{ProbeSettings, probe};
use rdbench_engine::model::{self, Gru, ModelShape, RecurrentModel};
use rdbench_engine::schedule::{Counts, Schedule};
use rdbench_engine::train::init_population;

fn rev_ode(hidden: usize) -> Box<dyn RecurrentModel> {
    model::by_name(
        "rev_ode_small",
        &ModelShape {
            input: 2,
            hidden,
            output: 2,
            rank0: 4,
            rank_max: 8,
            task: rdbench_core::track::Task::Regression,
            forget_bits: 3,
        },
    )
    .unwrap()
}

/// The first `t` steps of `b` pendulum trajectories for `runs` runs.
fn pendulum(t: usize, b: usize, runs: usize) -> Batch {
    let data = Pendulum::default().generate_all(0);
    let full = &data.train;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for n in 0..b {
        for s in 0..t {
            let at = (n * full.t + s) * full.f_in;
            x.extend(full.x[at..at + full.f_in].iter().map(|&v| v as f64));
            y.extend(full.y[at..at + full.f_out].iter().map(|&v| v as f64));
        }
    }
    batch_of(x, y, b, t, full.f_in, runs)
}

fn flat_grads(g: &[Tensor<3>]) -> Vec<f64> {
    g.iter().flat_map(|t| read(t.clone())).collect()
}

/// ||a - b|| / ||b||.
fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>().sqrt();
    d / b.iter().map(|y| y * y).sum::<f64>().sqrt()
}

#[test]
fn revolve_takes_the_reference_optimum_and_never_exceeds_its_slots() {
    let fx = fixture("revolve_schedules.json");
    let model = Gru::new(2, 3, 2);
    let (params, _) = init_population(&model, &[7], &device());
    let mut batches = std::collections::HashMap::new();
    let cases = fx["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1 + 2 + 5 + 17 + 80, "T in {{1, 2, 5, 17, 80}}, every slot count 1..T");
    for c in cases {
        let n = |k: &str| c[k].as_u64().unwrap() as usize;
        let (t, slots) = (n("t"), n("slots"));
        let batch = batches.entry(t).or_insert_with(|| pendulum(t, 2, 1));
        let pass = Schedule::Revolve { slots }.run(&model, &params, batch, 20);
        let got = pass.counts[0];
        assert_eq!(got.forward_evals, n("advances") as u64, "T {t}, {slots} slots: forward evaluations");
        assert_eq!(got.forward_evals + got.vjp_steps, n("optimal_total") as u64, "T {t}, {slots} slots");
        assert_eq!(got.vjp_steps, t as u64);
        assert_eq!(got.reversal_evals, 0);
        // Snapshots held besides the working state: never more than the slots.
        assert!(got.stored_states - 1 <= slots, "T {t}: {} snapshots held with {slots} slots", got.stored_states - 1);
    }
}

#[test]
fn exact_schedules_give_the_dense_gradient_for_both_models() {
    let gru = Gru::new(2, 32, 2);
    let ode = rev_ode(32);
    for model in [&gru as &dyn RecurrentModel, &*ode] {
        let (params, _) = init_population(model, &[0, 1], &device());
        let batch = pendulum(80, 16, 2);
        let dense = Schedule::Dense.run(model, &params, &batch, 20);
        let want = flat_grads(&dense.grads);
        let exact = [2, 9, 16, 80]
            .map(|k| Schedule::FixedInterval { k })
            .into_iter()
            .chain([1, 2, 5, 10, 40, 80].map(|slots| Schedule::Revolve { slots }));
        for s in exact {
            let pass = s.run(model, &params, &batch, 20);
            let err = rel_err(&flat_grads(&pass.grads), &want);
            assert!(err <= 1e-6, "{s:?}: relative error {err:e}");
            assert!(pass.counts[0].stored_states < 81, "{s:?} holds fewer states than dense");
        }
    }
}

#[test]
fn counters_match_a_hand_count_at_t5() {
    let (t, iters) = (5, 20);
    let gru = Gru::new(2, 4, 2);
    let (params, _) = init_population(&gru, &[1], &device());
    let batch = pendulum(t, 3, 1);
    let counts = |s: Schedule| s.run(&gru, &params, &batch, iters).counts[0];
    let c = |stored_states, forward_evals, reversal_evals| Counts {
        stored_states,
        forward_evals,
        reversal_evals,
        vjp_steps: 5,
    };
    // Dense: h_0..h_4 stored and h_5 working; 5 steps forward.
    assert_eq!(counts(Schedule::Dense), c(6, 5, 0));
    // Fixed interval 2: forward to h_4 keeping h_0, h_2 (4 steps); the segments [4, 5], [2, 4],
    // [0, 2] recompute 0, 1 and 1 steps; at most h_0, h_2 and one recomputed state stored
    // beside the working state.
    assert_eq!(counts(Schedule::FixedInterval { k: 2 }), c(3, 6, 0));
    // Revolve, 2 slots: store h_0, advance to h_2 and store it, advance to h_4, VJP 5; restore
    // h_2, advance to h_3, VJP 4; take h_2, VJP 3; restore h_0, advance to h_1, VJP 2; take
    // h_0, VJP 1.
    assert_eq!(counts(Schedule::Revolve { slots: 2 }), c(3, 6, 0));
    // Revolve, 1 slot: 4 + 3 + 2 + 1 steps from h_0.
    assert_eq!(counts(Schedule::Revolve { slots: 1 }), c(2, 10, 0));
    // Reversal at k = 2: checkpoints h_0, h_2, h_4, h_5 (h_5 working); h_3 and h_1 rebuilt,
    // 20 fixed-point iterations each.
    assert_eq!(counts(Schedule::Reversal { k: 2 }), c(4, 5, 40));
    // An algebraic inverse is one evaluation.
    let ode = rev_ode(4);
    let (p2, _) = init_population(&*ode, &[1], &device());
    assert_eq!(Schedule::Reversal { k: 2 }.run(&*ode, &p2, &batch, iters).counts[0], c(4, 5, 2));
    // The idea with a different k per run: only the runs without a checkpoint are reversed.
    let (p3, _) = init_population(&gru, &[1, 2, 3], &device());
    let b3 = pendulum(t, 3, 3);
    let idea = Schedule::Idea { ks: vec![1, 2, 5] }.run(&gru, &p3, &b3, iters).counts;
    assert_eq!(idea, vec![c(6, 5, 0), c(4, 5, 40), c(2, 5, 80)]);
}

#[test]
fn reversal_at_fixed_k_is_exact_on_rev_ode_and_counts_its_gru_iterations() {
    let ode = rev_ode(32);
    let (params, _) = init_population(&*ode, &[0], &device());
    let batch = pendulum(80, 32, 1);
    let dense = flat_grads(&Schedule::Dense.run(&*ode, &params, &batch, 20).grads);
    for k in [2, 4, 8, 16] {
        let pass = Schedule::Reversal { k }.run(&*ode, &params, &batch, 20);
        let cos = cosine(&flat_grads(&pass.grads), &dense);
        assert!(cos > 0.9999, "k = {k}: cosine {cos}");
        assert_eq!(pass.counts[0].stored_states, 80usize.div_ceil(k) + 1);
    }

    // A GRU trained in PyTorch whose reversal does not contract (the gru_reversal_torch
    // fixture): each rebuilt state costs the iterations asked for, so the count grows with k.
    let v = fixture("gru_reversal_torch.json");
    let n = |key: &str| v[key].as_u64().unwrap() as usize;
    let (f, h, b, t) = (n("F"), n("H"), n("B"), n("T"));
    let gru = Gru::new(f, h, f);
    let p = torch_to_ours(&v, "", f, h);
    let batch = batch_of(flat(&v["x"]), flat(&v["y"]), b, t, f, 1);
    let mut last = 0;
    for k in [1, 2, 4, t] {
        for iters in [1, 7] {
            let got = Schedule::Reversal { k }.run(&gru, &p, &batch, iters).counts[0];
            // States 1..T-1 that are not a multiple of k are rebuilt, one reversal each.
            let rebuilt = (1..t).filter(|s| s % k != 0).count() as u64;
            assert_eq!(got.reversal_evals, rebuilt * iters as u64, "k = {k}, {iters} iterations");
            assert_eq!((got.forward_evals, got.vjp_steps), (t as u64, t as u64));
        }
        let now = Schedule::Reversal { k }.run(&gru, &p, &batch, 20).counts[0].reversal_evals;
        assert!(now >= last, "k = {k}: {now} reversal evaluations, fewer than at a smaller k ({last})");
        last = now;
    }
}

#[test]
fn a_frontier_probe_records_every_schedule_of_the_grid() {
    let data = Pendulum::default().generate_all(0);
    let model = Gru::new(2, 16, 2);
    let (params, _) = init_population(&model, &[0, 1], &device());
    let batch = DeviceData::new(&data.train, &device()).all(2, 8);
    let cfg = BenchConfig { k_max: 8, reversal_iters: 5, batch_size: 8, ..BenchConfig::default() };
    let s = ProbeSettings::new(&cfg, true);
    let recs = futures::executor::block_on(probe(&model, &params, &batch, &s, 0)).unwrap();
    let g = grid(80, 8);
    for rec in &recs {
        let of = |kind: ScheduleKind| rec.frontier.iter().filter(move |p| p.at.schedule == kind);
        assert_eq!(of(ScheduleKind::Dense).count(), 1);
        assert_eq!(of(ScheduleKind::Idea).map(|p| p.at.k).collect::<Vec<_>>(), vec![Some(rec.k)]);
        assert_eq!(of(ScheduleKind::Reversal).filter_map(|p| p.at.k).collect::<Vec<_>>(), g.reversal_ks);
        assert_eq!(of(ScheduleKind::FixedInterval).filter_map(|p| p.at.k).collect::<Vec<_>>(), g.fixed_interval_ks);
        let slots: Vec<usize> = of(ScheduleKind::Revolve).filter_map(|p| p.at.slots).collect();
        assert!(g.revolve_slots.iter().all(|s| slots.contains(s)), "{slots:?}");
        for p in &rec.frontier {
            assert_eq!(p.vjp_steps, 80, "{p:?}");
            if p.at.schedule.is_exact() {
                assert!(p.grad_rel_err.unwrap() <= 1e-6 && p.grad_cos.unwrap() > 0.999999, "{p:?}");
                assert_eq!(p.reversal_evals, 0);
            }
        }
        let dense = of(ScheduleKind::Dense).next().unwrap();
        assert_eq!((dense.stored_states, dense.forward_evals), (81, 80));
        assert_eq!(rec.grad_cos_chosen, of(ScheduleKind::Idea).next().unwrap().grad_cos);
        assert_eq!(rec.grad_cos_kmax, of(ScheduleKind::Reversal).find(|p| p.at.k == Some(8)).unwrap().grad_cos);
    }
    // A probe without the frontier records none and the same defects and interval.
    let plain = futures::executor::block_on(probe(&model, &params, &batch, &ProbeSettings { frontier: false, ..s }, 0));
    for (a, b) in plain.unwrap().iter().zip(&recs) {
        assert!(a.frontier.is_empty());
        assert_eq!(
            (a.defect_mean, &a.chained, a.k, a.grad_cos_chosen),
            (b.defect_mean, &b.chained, b.k, b.grad_cos_chosen)
        );
    }
}

/// The work units a probe is counted at (`rdbench_engine::idea::cost::probe`, the progress bar's
/// and the estimate's unit) are what its passes counted as they ran, weighted by the model's
/// cell costs: every schedule of the frontier, the forward pass for the true states and the
/// one-step defects (T - 1 states rebuilt in one call), on each trajectory of the probe batch.
/// Both models: the GRU's reversal costs its iterations, rev_ode_small's one inverse.
#[test]
fn work_units_count_what_a_probes_passes_ran() {
    use rdbench_engine::idea::cost::{self as work, IdeaK};
    use rdbench_engine::schedule::units::reversal_pass;
    let data = Pendulum::default().generate_all(0);
    let (t, rows, iters) = (80u64, 8usize, 5usize);
    let cfg = BenchConfig { k_max: 8, reversal_iters: iters, batch_size: rows, ..BenchConfig::default() };
    let s = ProbeSettings::new(&cfg, true);
    for model in [Box::new(Gru::new(2, 16, 2)) as Box<dyn RecurrentModel>, rev_ode(16)] {
        let (params, _) = init_population(&*model, &[0], &device());
        let batch = DeviceData::new(&data.train, &device()).all(1, rows);
        let rec = &futures::executor::block_on(probe(&*model, &params, &batch, &s, 0)).unwrap()[0];
        let c = model.cell_cost();
        let ran: u64 = rec
            .frontier
            .iter()
            .map(|p| p.forward_evals * c.forward + p.reversal_evals * c.reversal + p.vjp_steps * c.vjp)
            .sum();
        let outside = t * c.forward + (t - 1) * model.reversal_evals(iters) as u64 * c.reversal;
        let which = match rec.k {
            1 => IdeaK::One,
            8 => IdeaK::Max,
            k => panic!("an untrained cell's probe picks k = 1 or k_max, not {k}"),
        };
        assert_eq!(work::probe(&*model, 80, rows, &s, which), (ran + outside) * rows as u64, "k = {}", rec.k);
        // A training step at k is the reversal point's pass.
        for p in rec.frontier.iter().filter(|p| p.at.schedule == ScheduleKind::Reversal) {
            let k = p.at.k.unwrap();
            let counted = p.forward_evals * c.forward + p.reversal_evals * c.reversal + p.vjp_steps * c.vjp;
            assert_eq!(reversal_pass(&*model, 80, k, iters, true), counted, "k = {k}");
        }
    }
}

/// A plan compiled to steps (what the GPU's plan kernel runs as data) does what the plan
/// does, checked by running the steps on states labelled by their time: every VJP reads
/// h_t for its own step t, T..1 once each, an advance reads the state it advances, a load
/// finds the state its snapshot held, no two snapshots live in one slot, and the peak and
/// the advances equal the executor's hand counts for dense BPTT, every fixed interval and
/// revolve at every slot count, T 1..=40.
#[test]
fn compiled_plans_run_as_their_plans_do() {
    use rdbench_engine::schedule::plan::{Action, compile};
    use rdbench_engine::schedule::{dense, fixed_interval, revolve};
    for t in 1..=40usize {
        let mut plans: Vec<(String, Vec<Action>)> = vec![("dense".into(), dense::plan(t))];
        plans.extend((1..=t).map(|k| (format!("interval {k}"), fixed_interval::plan(t, k))));
        plans.extend((1..t.max(2)).map(|s| (format!("revolve {s}"), revolve::plan(t, s))));
        for (name, plan) in plans {
            let c = compile(&plan, t);
            let mut slots: Vec<Option<u32>> = vec![None; c.slots];
            let (mut h, mut vjps, mut advances) = (0u32, Vec::new(), 0usize);
            for &[op, load, store, at] in &c.steps {
                if load > 0 {
                    h = slots[load as usize - 1].unwrap_or_else(|| panic!("{name}, T {t}: load of an empty slot"));
                }
                if store > 0 {
                    slots[store as usize - 1] = Some(h);
                }
                match op {
                    0 => {}
                    1 => {
                        assert_eq!(at, h, "{name}, T {t}: an advance reads the state it advances");
                        h += 1;
                        advances += 1;
                    }
                    2 => {
                        assert_eq!(at, h, "{name}, T {t}: a VJP reads h_t");
                        vjps.push(h + 1);
                    }
                    _ => panic!("op {op}"),
                }
            }
            assert_eq!(vjps, (1..=t as u32).rev().collect::<Vec<_>>(), "{name}, T {t}: VJPs T..1");
            let plan_advances = plan.iter().filter(|a| matches!(a, Action::Advance)).count();
            assert_eq!(advances, plan_advances, "{name}, T {t}: advances");
            assert!(c.slots < c.peak, "{name}, T {t}: {} slots, peak {}", c.slots, c.peak);
            let stores = plan.iter().filter(|a| matches!(a, Action::Store)).count();
            assert!(
                c.steps.len() <= plan.len() && c.steps.len() >= plan_advances + t,
                "{name}: {} steps",
                c.steps.len()
            );
            assert!(stores == 0 || c.slots >= 1);
        }
    }
    // Hand-derived: T 5 at interval 2 keeps h_0, h_2 (h_4 is the working state): 2 slots,
    // peak 3, and advances 4 + 2 (recomputing h_1 and h_3).
    let c = compile(&fixed_interval::plan(5, 2), 5);
    assert_eq!((c.slots, c.peak), (2, 3));
    assert_eq!(c.steps.iter().filter(|s| s[0] == 1).count(), 6);
}
