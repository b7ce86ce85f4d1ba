//! A population of R runs gives the same per-run numbers as R populations of one.

mod common;
use common::*;
use rdbench::config::Policy;
use rdbench::model::Gru;
use rdbench::probe::ProbeSettings;
use rdbench::progress::{Arm, Phase, Quiet, RunRecord, RunSpec};
use rdbench::track::{Pendulum, Track};
use rdbench::train::batch::DeviceData;
use rdbench::train::{Tally, TrainSettings, train_population};

fn train(specs: &[RunSpec], settings: &TrainSettings) -> Vec<RunRecord> {
    let data = Pendulum { n_train: 64, n_test: 32, ..Pendulum::default() }.generate(5);
    let (train, eval) = (DeviceData::new(&data.train, &device()), DeviceData::new(&data.test, &device()));
    let model = Gru::new(2, 16, 2);
    let mut tally = Tally { start: web_time::Instant::now(), runs_done: 0, runs_total: 1, work_done: 0, work_total: 1 };
    futures::executor::block_on(train_population(
        &model,
        specs,
        &train,
        &eval,
        settings,
        &device(),
        &mut Quiet,
        &mut tally,
    ))
    .unwrap()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

fn check(arm: Arm) {
    let probe = (arm == Arm::Idea).then_some(ProbeSettings {
        tau: 0.08,
        k_max: 8,
        policy: Policy::OneStep,
        reversal_iters: 10,
        batch_size: 16,
    });
    let settings = TrainSettings { epochs: 2, batch_size: 16, probe };
    let specs: Vec<RunSpec> = [(0.01, 0u64), (0.003, 1), (0.03, 2)]
        .iter()
        .map(|&(lr, seed)| RunSpec { arm, phase: Phase::Full, lr, seed })
        .collect();
    let together = train(&specs, &settings);
    for (i, spec) in specs.iter().enumerate() {
        let alone = &train(std::slice::from_ref(spec), &settings)[0];
        let t = &together[i];
        assert_eq!((t.lr, t.seed), (alone.lr, alone.seed));
        let (a, b) = (t.metric.unwrap(), alone.metric.unwrap());
        assert!(rel(a, b) < 1e-4, "{arm:?} run {i}: metric {a} vs alone {b}");
        for (x, y) in t.loss_curve.iter().zip(&alone.loss_curve) {
            assert!(rel(x.unwrap(), y.unwrap()) < 1e-4, "{arm:?} run {i}: loss curve");
        }
        assert_eq!(t.probes.len(), alone.probes.len());
        for (p, q) in t.probes.iter().zip(&alone.probes) {
            assert_eq!(p.k, q.k, "{arm:?} run {i}: chosen k");
            assert!(rel(p.defect_mean.unwrap(), q.defect_mean.unwrap()) < 1e-3);
        }
        assert_eq!(t.mean_stored_states, alone.mean_stored_states);
    }
}

#[test]
fn baseline_population_equals_separate_runs() {
    check(Arm::Baseline);
}

#[test]
fn idea_population_equals_separate_runs() {
    check(Arm::Idea);
}
