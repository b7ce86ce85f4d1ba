//! A population of R runs gives the same per-run numbers as R populations of one; the
//! epoch loss is the mean over trajectories (a smaller last batch weighs less).

mod common;
use common::*;
use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RunRecord, RunSpec};
use rdbench_core::track::{Pendulum, Track};
use rdbench_engine::batch::DeviceData;
use rdbench_engine::host::{Event, Host, Quiet};
use rdbench_engine::model::Gru;
use rdbench_engine::protocol::rule_for;
use rdbench_engine::train::{Population, Tally, TrainSettings, train_population};

/// The bench config these populations train under (epochs, batch and idea settings).
fn cfg() -> BenchConfig {
    population_cfg()
}

fn train_with(specs: &[RunSpec], n_train: usize, host: &mut dyn Host) -> Vec<RunRecord> {
    let cfg = cfg();
    let data = Pendulum { n_train, n_test: 32, ..Pendulum::default() }.generate_all(5);
    let (train, eval) = (DeviceData::new(&data.train, &device()), DeviceData::new(&data.test, &device()));
    let model = Gru::new(2, cfg.hidden_size, 2);
    let settings = TrainSettings::new(&cfg, "cpu-flex");
    let mut rule = rule_for(specs[0].arm, specs[0].phase, &cfg);
    let mut tally = Tally::new(1, 1);
    let device = device();
    let at = Population { model: &model, train: &train, eval: &eval, settings: &settings, device: &device };
    futures::executor::block_on(train_population(&at, specs, &mut *rule, host, &mut tally)).unwrap()
}

fn train(specs: &[RunSpec]) -> Vec<RunRecord> {
    train_with(specs, 64, &mut Quiet)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

fn check(arm: Arm) {
    let specs: Vec<RunSpec> = [(0.01, 0u64), (0.003, 1), (0.03, 2)]
        .iter()
        .map(|&(lr, seed)| RunSpec { arm, phase: Phase::Full, lr, seed })
        .collect();
    let together = train(&specs);
    for (i, spec) in specs.iter().enumerate() {
        let alone = &train(std::slice::from_ref(spec))[0];
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
        assert_eq!((t.backend.as_str(), t.run_hash.as_str()), ("cpu-flex", cfg().run_hash().as_str()));
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

/// Records every minibatch loss of the first epoch.
struct Losses(Vec<f64>);

impl Host for Losses {
    fn event(&mut self, e: &Event) {
        if let Event::Progress(p) = e
            && p.epoch == 1
        {
            self.0.push(p.losses[0].unwrap());
        }
    }
    fn cancelled(&self) -> bool {
        false
    }
}

#[test]
fn epoch_loss_weighs_each_batch_by_its_size() {
    // 40 trajectories in batches of 16: 16, 16 and a last batch of 8.
    let spec = RunSpec { arm: Arm::Baseline, phase: Phase::Full, lr: 0.01, seed: 3 };
    let mut host = Losses(Vec::new());
    let rec = &train_with(&[spec], 40, &mut host)[0];
    let l = &host.0;
    assert_eq!(l.len(), 3);
    let weighted = (16.0 * l[0] + 16.0 * l[1] + 8.0 * l[2]) / 40.0;
    let unweighted = (l[0] + l[1] + l[2]) / 3.0;
    // The data must tell the two apart for this test to mean anything.
    assert!(rel(weighted, unweighted) > 1e-4, "{weighted} vs {unweighted}");
    assert!(rel(rec.loss_curve[0].unwrap(), weighted) < 1e-12, "{:?} vs {weighted}", rec.loss_curve[0]);
}

#[test]
fn idea_mean_stored_states_is_what_the_pass_stored() {
    // T = 80: each minibatch stores ceil(80 / k) + 1 states at its probe's k.
    let spec = RunSpec { arm: Arm::Idea, phase: Phase::Full, lr: 0.01, seed: 0 };
    let rec = &train(&[spec])[0];
    let ks: Vec<usize> = rec.probes.iter().map(|p| p.k).collect();
    // 64 trajectories in batches of 16: 4 minibatches per epoch, each at the k of the probe before it.
    let want = ks[..2].iter().map(|&k| 4.0 * (80usize.div_ceil(k) + 1) as f64).sum::<f64>() / 8.0;
    assert_eq!(rec.mean_stored_states, Some(want), "ks {ks:?}");
}

#[test]
fn a_diverged_run_stops_alone_and_records_where() {
    // lr 1e30 blows run 1 up within its first epoch; run 0 must train as if alone, and run 1
    // must record the same step and the same stored states as when trained alone.
    for arm in [Arm::Baseline, Arm::Idea] {
        let specs = [
            RunSpec { arm, phase: Phase::Full, lr: 0.01, seed: 0 },
            RunSpec { arm, phase: Phase::Full, lr: 1e30, seed: 1 },
        ];
        let together = train(&specs);
        let d = &together[1];
        assert!(d.diverged && d.metric.is_none(), "{arm:?}: run 1 diverged");
        assert_eq!(d.diverged_at.as_ref().map(|a| a.epoch), Some(0), "{arm:?}: {:?}", d.diverged_at);
        assert!(d.loss_curve.iter().all(Option::is_none), "{arm:?}: no epoch of run 1 completed");
        assert!(!together[0].diverged);
        for (i, spec) in specs.iter().enumerate() {
            let alone = &train(std::slice::from_ref(spec))[0];
            let t = &together[i];
            assert_eq!(t.diverged_at, alone.diverged_at, "{arm:?} run {i}");
            assert_eq!(t.mean_stored_states, alone.mean_stored_states, "{arm:?} run {i}");
            assert_eq!(t.loss_curve.len(), alone.loss_curve.len());
            for (x, y) in t.loss_curve.iter().zip(&alone.loss_curve) {
                assert_eq!(x.is_some(), y.is_some());
                if let (Some(x), Some(y)) = (x, y) {
                    assert!(rel(*x, *y) < 1e-4, "{arm:?} run {i}: loss curve {x} vs {y}");
                }
            }
            if let (Some(a), Some(b)) = (t.metric, alone.metric) {
                assert!(rel(a, b) < 1e-4, "{arm:?} run {i}: metric {a} vs {b}");
            }
        }
    }
}
