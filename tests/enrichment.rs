//! Rank enrichment of rev_ode_small (spec §7): the function is unchanged at the moment a rank
//! is added and the new rank then trains; ranks grow by exactly one at the end of a window
//! whose loss stalled, never past r_max and never while the loss still falls fast; and a
//! population whose runs end at different ranks gives each run the numbers it gets alone.

mod common;
use burn::tensor::Tensor;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RankStep, RunRecord, RunSpec};
use rdbench_core::track::{Pendulum, Task, Track};
use rdbench_engine::batch::{Batch, DeviceData};
use rdbench_engine::host::Quiet;
use rdbench_engine::model::{ModelShape, RecurrentModel, RevOde};
use rdbench_engine::protocol::rule_for;
use rdbench_engine::train::adam::{Adam, clip, grad_norms};
use rdbench_engine::train::dense::{dense_grads, hidden_states};
use rdbench_engine::train::{Population, Tally, TrainSettings, init_population, train_population};

const H: usize = 16;

fn model(rank0: usize, rank_max: usize) -> RevOde {
    RevOde::new(&ModelShape { input: 2, hidden: H, output: 2, rank0, rank_max, task: Task::Regression, forget_bits: 3 })
        .unwrap()
}

/// Every state and prediction of a forward pass, flattened.
fn outputs(m: &RevOde, p: &[Tensor<3>], batch: &Batch) -> Vec<f64> {
    let hs = hidden_states(m, p, batch);
    let mut out = Vec::new();
    for (t, x) in batch.xs().enumerate() {
        out.extend(read(hs[t + 1].clone()));
        out.extend(read(m.readout(p, hs[t + 1].clone(), x.clone())));
    }
    out
}

fn adam_steps(m: &RevOde, mut p: Vec<Tensor<3>>, adam: &mut Adam, batch: &Batch, n: usize) -> Vec<Tensor<3>> {
    for _ in 0..n {
        let g = dense_grads(m, &p, batch).grads.into_vec();
        let norms = grad_norms(&g);
        p = adam.step(p, clip(g, norms));
    }
    p
}

/// Row `j` of U_F (`u_f` is U_F^T, `[r_max, H/2]`): U_F's column j.
fn u_col(p: &[Tensor<3>], j: usize) -> Vec<f64> {
    read(p[0].clone().narrow(1, j, 1))
}

/// Column `j` of V_F.
fn v_col(p: &[Tensor<3>], j: usize) -> Vec<f64> {
    read(p[1].clone().narrow(2, j, 1))
}

#[test]
fn enrichment_leaves_the_function_unchanged_then_the_new_rank_trains() {
    let m = model(2, 4);
    let data = Pendulum::default().generate_all(0);
    let batch = DeviceData::new(&data.train, &device()).all(1, 32);
    let (p0, _) = init_population(&m, &[7], &device());
    let mut adam = Adam::new(&p0, &[0.01], &device());
    let mut p = adam_steps(&m, p0.clone(), &mut adam, &batch, 20);
    // Trained at rank 2: U's third column is still 0 and V's third column is still its random init.
    assert!(u_col(&p, 2).iter().all(|&v| v == 0.0));
    assert_eq!(v_col(&p, 2), v_col(&p0, 2));
    assert!(v_col(&p, 2).iter().any(|&v| v != 0.0), "the new V column is random");
    assert_ne!(v_col(&p, 0), v_col(&p0, 0), "live columns trained");

    let before = outputs(&m, &p, &batch);
    m.set_rank(&mut p, 0, 3);
    let after = outputs(&m, &p, &batch);
    let diff = max_abs_diff(&before, &after);
    assert!(diff < 1e-6, "outputs changed by {diff} at enrichment");

    // The same steps from here at rank 3 and at rank 2: only rank 3 trains U's third column,
    // the fourth stays 0 (past the rank), and the function moves differently.
    let mut adam2 = adam.clone();
    let mut at2 = p.clone();
    m.set_rank(&mut at2, 0, 2);
    let p3 = adam_steps(&m, p, &mut adam, &batch, 5);
    let p2 = adam_steps(&m, at2, &mut adam2, &batch, 5);
    assert!(u_col(&p3, 2).iter().any(|&v| v != 0.0), "the new rank did not train");
    assert!(u_col(&p3, 3).iter().all(|&v| v == 0.0), "a rank past the current one trained");
    assert!(u_col(&p2, 2).iter().all(|&v| v == 0.0));
    assert!(max_abs_diff(&outputs(&m, &p3, &batch), &outputs(&m, &p2, &batch)) > 1e-6);
}

fn cfg() -> BenchConfig {
    BenchConfig {
        model: "rev_ode_small".into(),
        epochs: 9,
        batch_size: 16,
        hidden_size: H,
        k_max: 8,
        rank_r0: 2,
        rank_max: 3,
        enrich_window: 2,
        enrich_threshold: 0.05,
        ..BenchConfig::default()
    }
}

fn train(specs: &[RunSpec]) -> Vec<RunRecord> {
    let cfg = cfg();
    let data = Pendulum { n_train: 64, n_test: 32, ..Pendulum::default() }.generate_all(5);
    let (train, eval) = (DeviceData::new(&data.train, &device()), DeviceData::new(&data.test, &device()));
    let m = model(cfg.rank_r0, cfg.rank_max);
    let settings = TrainSettings::new(&cfg, "cpu-flex");
    let mut rule = rule_for(specs[0].arm, specs[0].phase, &cfg);
    let mut tally = Tally::new(1, 1);
    let (dev, mut host) = (device(), Quiet);
    let at = Population { model: &m, train: &train, eval: &eval, settings: &settings, device: &dev };
    let run = train_population(&at, specs, &mut *rule, &mut host, &mut tally);
    futures::executor::block_on(run).unwrap()
}

/// The rank history the rule implies for a loss curve, computed here from the spec's words:
/// at the end of epochs 2, 4, 6, 8 (window 2), one more rank if the loss fell by less than
/// 5% from the window's first epoch to its last and the rank is below r_max; none after the
/// last epoch.
fn expected_history(curve: &[Option<f64>], c: &BenchConfig) -> Vec<RankStep> {
    let mut rank = c.rank_r0;
    let mut out = vec![RankStep { epoch: 0, rank }];
    for end in (c.enrich_window..c.epochs).step_by(c.enrich_window) {
        let (first, last) = (curve[end - c.enrich_window].unwrap(), curve[end - 1].unwrap());
        if (first - last) / first < c.enrich_threshold && rank < c.rank_max {
            rank += 1;
            out.push(RankStep { epoch: end, rank });
        }
    }
    out
}

#[test]
fn ranks_grow_by_one_when_the_loss_stalls_and_a_mixed_population_equals_runs_alone() {
    for arm in [Arm::Baseline, Arm::Idea] {
        // lr 1e-5 barely moves (stalls: gains ranks up to r_max and then stops); lr 0.01 falls
        // fast at first (no rank while it does).
        let specs: Vec<RunSpec> =
            [(1e-5, 0u64), (0.01, 1)].iter().map(|&(lr, seed)| RunSpec { arm, phase: Phase::Full, lr, seed }).collect();
        let together = train(&specs);
        let c = cfg();
        for rec in &together {
            assert_eq!(rec.rank_history, expected_history(&rec.loss_curve, &c), "{arm:?} lr {}", rec.lr);
            for w in rec.rank_history.windows(2) {
                assert_eq!(w[1].rank, w[0].rank + 1);
            }
            assert!(rec.rank_history.iter().all(|s| s.rank <= c.rank_max));
        }
        let (slow, fast) = (&together[0], &together[1]);
        assert_eq!(slow.rank_history.last().unwrap().rank, c.rank_max, "{arm:?}: the stalled run reached r_max");
        assert!(slow.rank_history.len() == 2, "{arm:?}: one rank from 2 to r_max 3, then capped");
        let first = fast.loss_curve[0].unwrap();
        assert!((first - fast.loss_curve[1].unwrap()) / first > 0.05, "{arm:?}: the fast run falls fast");
        assert!(
            fast.rank_history.iter().all(|s| s.epoch != 2),
            "{arm:?}: enriched while the loss fell fast: {:?}",
            fast.rank_history
        );
        assert_ne!(slow.rank_history, fast.rank_history, "the population's runs end at different ranks");

        for (i, spec) in specs.iter().enumerate() {
            let alone = &train(std::slice::from_ref(spec))[0];
            let t = &together[i];
            assert_eq!(t.rank_history, alone.rank_history, "{arm:?} run {i}");
            let (a, b) = (t.metric.unwrap(), alone.metric.unwrap());
            assert!((a - b).abs() <= 1e-4 * b.abs(), "{arm:?} run {i}: metric {a} vs alone {b}");
            for (x, y) in t.loss_curve.iter().zip(&alone.loss_curve) {
                assert!((x.unwrap() - y.unwrap()).abs() <= 1e-4 * y.unwrap().abs(), "{arm:?} run {i}: loss");
            }
            assert_eq!(
                t.probes.iter().map(|p| p.k).collect::<Vec<_>>(),
                alone.probes.iter().map(|p| p.k).collect::<Vec<_>>()
            );
        }
    }
}
