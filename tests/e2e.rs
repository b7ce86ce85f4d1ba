//! End to end: a tiny bench produces a report with the seed report's key paths in the seed's
//! order, which `validate` accepts and which round-trips through serde; the same config gives
//! the same numbers again; a huge lr is reported as divergence; the reference report loads;
//! a resumed bench reuses exactly the matching runs and gives the uninterrupted report.

mod common;

use rdbench_core::config::BenchConfig;
use rdbench_core::records::{Arm, Phase, RunRecord, Slice};
use rdbench_core::report::{ProblemKind, Report, validate_json};
use rdbench_core::stats::Verdict;
use rdbench_engine::backend;
use rdbench_engine::host::{Event, Host, Quiet};
use rdbench_engine::protocol::{Prior, run_bench};
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::mpsc;

fn tiny() -> BenchConfig {
    BenchConfig { n_seeds: 2, n_sweep_seeds: 1, lrs: vec![0.003, 0.01], epochs: 2, ..BenchConfig::default() }
}

/// The CPU backend on one thread (tests that count events need one population at a time).
fn cpu1() -> backend::Backend {
    backend::Backend { threads: 1, ..backend::cpu("flex").unwrap() }
}

fn run(cfg: &BenchConfig) -> Report {
    futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &cpu1(), &[], &mut Quiet)).unwrap()
}

fn tiny_report() -> &'static Report {
    static R: OnceLock<Report> = OnceLock::new();
    R.get_or_init(|| run(&tiny()))
}

fn reference_text() -> String {
    let p = format!("{}/www/examples/seed_bench_report.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(p).unwrap()
}

/// Key paths in document order; array items and idea_sweep's lr keys collapse to `*`.
fn key_paths(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                let p = if path == "idea_sweep" { "idea_sweep.*".to_string() } else { p };
                if !out.contains(&p) {
                    out.push(p.clone());
                }
                key_paths(child, &p, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|c| key_paths(c, &format!("{path}[*]"), out)),
        _ => {}
    }
}

#[test]
fn report_keys_follow_the_reference_order_then_extensions() {
    let reference: Value = serde_json::from_str(&reference_text()).unwrap();
    let ours: Value = serde_json::from_str(&tiny_report().to_json()).unwrap();
    let (mut want, mut got) = (Vec::new(), Vec::new());
    key_paths(&reference, "", &mut want);
    key_paths(&ours, "", &mut got);
    assert_eq!(got[..want.len()], want[..], "seed key paths and order");
    let top: Vec<&String> = ours.as_object().unwrap().keys().collect();
    assert_eq!(
        top[10..],
        ["config", "environment", "statistics", "mechanism", "memory", "warnings", "runs", "frontier", "task"]
    );
}

#[test]
fn the_frontier_is_derived_from_the_probes_and_validated() {
    use rdbench_core::records::ScheduleKind;
    let r = tiny_report();
    let f = r.frontier.as_ref().expect("a frontier block");
    assert_eq!(f.t, 80);
    // Every probe of the 2 idea full runs (3 each) measured every schedule; sweep runs none.
    assert_eq!(f.dominated.n_probes, 6);
    for run in r.runs.as_ref().unwrap() {
        let full_idea = run.arm == rdbench_core::records::Arm::Idea && run.phase == rdbench_core::records::Phase::Full;
        assert!(run.probes.iter().all(|p| p.frontier.is_empty() != full_idea), "{:?} {:?}", run.arm, run.phase);
    }
    for kind in ScheduleKind::ALL {
        assert!(f.points.iter().any(|p| p.at.schedule == kind), "no {kind:?} point");
    }
    let dense = f.points.iter().find(|p| p.at.schedule == ScheduleKind::Dense).unwrap();
    assert_eq!((dense.stored_states, dense.forward_evals, dense.n), (81.0, 80.0, 6));
    assert!(f.points.iter().filter(|p| p.at.schedule.is_exact()).all(|p| p.grad_rel_err.unwrap() <= 1e-6));
    assert!(!f.dominated.conclusion.is_empty());

    // A tampered point, in the block or in a run's probe, is named by its path.
    let good: Value = serde_json::from_str(&r.to_json()).unwrap();
    let bad = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        validate_json(&serde_json::to_string(&v).unwrap()).unwrap_err()
    };
    let p = bad(&|v| v["frontier"]["points"][2]["forward_evals"] = Value::from(1.0));
    assert!(
        p.iter().any(|p| p.path == "frontier.points[2].forward_evals" && p.kind == ProblemKind::Arithmetic),
        "{p:?}"
    );
    let idea_full = good["runs"]
        .as_array()
        .unwrap()
        .iter()
        .position(|r| r["probes"][0]["frontier"].as_array().is_some_and(|a| !a.is_empty()))
        .unwrap();
    let p = bad(&|v| v["runs"][idea_full]["probes"][0]["frontier"][0]["stored_states"] = Value::from(3));
    assert!(p.iter().any(|p| p.path.starts_with("frontier.") && p.kind == ProblemKind::Arithmetic), "{p:?}");
    let p = bad(&|v| v["frontier"]["dominated"]["n_dominated"] = Value::from(99));
    assert!(p.iter().any(|p| p.path == "frontier.dominated.n_dominated"), "{p:?}");
}

#[test]
fn validate_accepts_and_serde_round_trips() {
    let r = tiny_report();
    let text = r.to_json();
    let back = validate_json(&text).unwrap_or_else(|p| panic!("validate rejected our report: {p:?}"));
    assert_eq!(&back, r);
    assert_eq!(back.to_json(), text);
    // Everything the spec asks the report to carry is there.
    assert_eq!(r.comparison.n_pairs, 2);
    assert_eq!(r.runs.as_ref().unwrap().len(), 2 * (2 + 2));
    assert_eq!(r.idea_sweep.keys().collect::<Vec<_>>(), ["0.003", "0.01"]);
    let idea_runs: Vec<&RunRecord> = r.runs.as_ref().unwrap().iter().filter(|r| !r.probes.is_empty()).collect();
    assert_eq!(idea_runs.len(), 4, "every idea run has probes");
    assert!(idea_runs.iter().all(|r| r.probes.len() == 3), "a probe before each of 2 epochs and one after");
    let env = r.environment.as_ref().unwrap();
    assert_eq!(env.backend, "cpu-flex");
    assert!(env.wall_time_s > 0.0);
}

#[test]
fn reference_report_loads_validates_and_round_trips() {
    let text = reference_text();
    let r = validate_json(&text).unwrap_or_else(|p| panic!("{p:?}"));
    assert_eq!(r.comparison.p_value, Some(0.1697));
    assert!(r.config.is_none());
    // Same keys, order and numbers (serde writes 9.51e-05 as 0.0000951: the same f64).
    let again: Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(again, serde_json::from_str::<Value>(&text).unwrap());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    key_paths(&again, "", &mut a);
    key_paths(&serde_json::from_str(&text).unwrap(), "", &mut b);
    assert_eq!(a, b);
}

#[test]
fn validate_names_what_is_wrong() {
    let good: Value = serde_json::from_str(&reference_text()).unwrap();
    let bad = |edit: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        edit(&mut v);
        validate_json(&serde_json::to_string(&v).unwrap()).unwrap_err()
    };
    let p = bad(&|v| v["comparison"]["per_seed_diffs"][2] = Value::from(0.5));
    assert!(p.iter().any(|p| p.path == "comparison.per_seed_diffs[2]" && p.kind == ProblemKind::Arithmetic), "{p:?}");
    let p = bad(&|v| v["comparison"]["verdict"] = Value::from("a win"));
    assert!(p.iter().any(|p| p.kind == ProblemKind::Schema && p.message.contains("comparison.verdict")), "{p:?}");
    let p = bad(&|v| v["comparison"]["verdict"] = Value::from("significant win"));
    assert!(p.iter().any(|p| p.path == "comparison.verdict"), "{p:?}");
    let p = bad(&|v| {
        v.as_object_mut().unwrap().remove("n_seeds");
    });
    assert!(p.iter().any(|p| p.path == "n_seeds" && p.kind == ProblemKind::Structure), "{p:?}");
    let p = bad(&|v| v["baseline"]["full"]["n"] = Value::from("eight"));
    assert!(p.iter().any(|p| p.message.contains("baseline.full.n")), "{p:?}");
    let p = bad(&|v| v["idea"]["std"] = Value::from(1.0));
    assert!(p.iter().any(|p| p.path == "idea.std"), "{p:?}");
    // Key order: swap track and model.
    let text = reference_text().replacen(
        "\"track\": \"dynamics\",\n  \"model\": \"rnn_small\"",
        "\"model\": \"rnn_small\",\n  \"track\": \"dynamics\"",
        1,
    );
    let p = validate_json(&text).unwrap_err();
    assert!(p[0].message.contains("out of order") && p[0].kind == ProblemKind::Structure, "{p:?}");
    let p = validate_json("{not json").unwrap_err();
    assert!(p[0].message.contains("not valid JSON") && p[0].kind == ProblemKind::NotJson, "{p:?}");
}

#[test]
fn same_config_gives_the_same_report() {
    let strip = |r: &Report| {
        let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
        v.as_object_mut().unwrap().remove("environment");
        for run in v["runs"].as_array_mut().unwrap() {
            run.as_object_mut().unwrap().remove("wall_time_s");
        }
        common::strip_frontier(&mut v, false);
        v
    };
    assert_eq!(strip(&run(&tiny())), strip(tiny_report()));
}

#[test]
fn huge_lr_is_reported_as_divergence() {
    let cfg = BenchConfig { n_seeds: 2, n_sweep_seeds: 1, lrs: vec![1e30], epochs: 1, ..BenchConfig::default() };
    let r = run(&cfg);
    let runs = r.runs.as_ref().unwrap();
    assert!(runs.iter().all(|x| x.diverged && x.metric.is_none()), "every run diverged");
    assert_eq!(r.baseline.full.mean, None);
    assert_eq!(r.baseline.full.per_seed, vec![None, None]);
    assert_eq!(r.comparison.n_pairs, 0);
    assert_eq!(r.comparison.verdict, Verdict::NoSignificantWin);
    let warnings = r.warnings.as_ref().unwrap();
    assert_eq!(warnings.len(), runs.len() + 1, "one per diverged run and one for the dropped pairs");
    assert!(warnings[0].contains("diverged"));
    assert!(warnings[runs.len()].contains("2 of 2 pairs left out"), "{warnings:?}");
    let dropped = &r.statistics.as_ref().unwrap().dropped_pairs;
    assert!(dropped.iter().all(|d| d.reason == rdbench_core::report::DropReason::BothDiverged) && dropped.len() == 2);
    validate_json(&r.to_json()).unwrap_or_else(|p| panic!("{p:?}"));
}

/// A host that cancels after a number of steps.
struct CancelAfter {
    steps: usize,
    finished: usize,
}

impl Host for CancelAfter {
    fn event(&mut self, e: &Event) {
        match e {
            Event::Progress(_) => self.steps = self.steps.saturating_sub(1),
            Event::RunFinished(_) => self.finished += 1,
        }
    }
    fn cancelled(&self) -> bool {
        self.steps == 0
    }
}

#[test]
fn cancel_keeps_finished_runs_and_they_can_be_reused() {
    let cfg = tiny();
    let b = cpu1();
    // The baseline sweep population (2 runs x 2 epochs x 10 steps) finishes, then cancel.
    let mut host = CancelAfter { steps: 25, finished: 0 };
    let stopped = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut host)).unwrap_err();
    assert_eq!(stopped.reason, rdbench_engine::error::EngineError::Cancelled);
    assert_eq!(stopped.runs.len(), 2);
    assert_eq!(host.finished, 2);
    assert!(stopped.runs.iter().all(|r| r.backend == "cpu-flex" && r.run_hash == cfg.run_hash()));
    // Resuming with those runs reuses them and gives the uninterrupted report: the whole
    // report, except what measures time (environment's started_at, wall_time_s and
    // phase_wall_time_s, and each run's wall_time_s) and the count of reused runs.
    let resumed =
        futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &stopped.runs, &mut Quiet)).unwrap();
    assert_eq!(resumed.environment.as_ref().unwrap().reused_runs, 2);
    assert_eq!(tiny_report().environment.as_ref().unwrap().reused_runs, 0);
    assert_eq!(untimed(&resumed), untimed(tiny_report()));
}

/// A host that records every progress event.
#[derive(Default)]
struct Watch {
    progress: Vec<rdbench_core::progress::Progress>,
}

impl Host for Watch {
    fn event(&mut self, e: &Event) {
        if let Event::Progress(p) = e {
            self.progress.push(p.clone());
        }
    }
    fn cancelled(&self) -> bool {
        false
    }
}

#[test]
fn a_resumed_bench_counts_the_whole_bench_in_progress_and_wall_time() {
    let cfg = tiny();
    let b = cpu1();
    // Cancelled 5 steps into the idea sweep: the baseline sweep's 2 runs are kept; the idea
    // sweep's steps in flight are lost.
    let mut host = CancelAfter { steps: 26, finished: 0 };
    let stopped = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut host)).unwrap_err();
    let total = rdbench_engine::protocol::work_total(&cfg.resolve().unwrap()) as f64;
    assert_eq!(stopped.runs.len(), 2);
    let kept = 2 * rdbench_engine::protocol::run_work(&cfg.resolve().unwrap(), Arm::Baseline, Phase::Sweep);
    assert_eq!(stopped.fraction_kept, kept as f64 / total);
    assert!(stopped.elapsed_s > 0.0);
    // Resumed as if the stopped attempt had run 1000 s: progress starts at the kept share
    // and never goes back; elapsed and the report's wall time count the 1000 s.
    let mut watch = Watch::default();
    let prior = Prior { runs: &stopped.runs, elapsed_s: 1000.0, ..Prior::default() };
    let t0 = std::time::Instant::now();
    let report = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, prior, &mut watch)).unwrap();
    let took = t0.elapsed().as_secs_f64();
    let first = &watch.progress[0];
    assert_eq!((first.fraction, first.runs_done, first.step), (stopped.fraction_kept, 2, 0));
    assert!(watch.progress.windows(2).all(|w| w[1].fraction >= w[0].fraction), "progress went back");
    assert_eq!(watch.progress.last().unwrap().fraction, 1.0);
    assert!(watch.progress.iter().all(|p| p.elapsed_s >= 1000.0 && p.elapsed_s <= 1000.0 + took));
    let wall = report.environment.as_ref().unwrap().wall_time_s;
    assert!((1000.0..=1000.0 + took).contains(&wall), "wall time {wall} s, resumed part {took} s");
    // A fresh bench starts at 0, and its wall time is its own.
    let mut fresh = Watch::default();
    let t0 = std::time::Instant::now();
    let r = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut fresh)).unwrap();
    assert_eq!(fresh.progress[0].fraction, 0.0);
    assert!(r.environment.unwrap().wall_time_s <= t0.elapsed().as_secs_f64());
}

#[test]
fn the_report_does_not_depend_on_how_runs_are_split_over_threads() {
    // Every kernel works run by run, so a run's numbers are the same whichever slice of its
    // population it trains in: only timing, the slice size (`population`) and the thread
    // count may differ.
    let cfg = BenchConfig { n_sweep_seeds: 2, ..tiny() };
    let one = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &cpu1(), &[], &mut Quiet)).unwrap();
    for threads in [2, 3] {
        let b = backend::Backend { threads, ..cpu1() };
        let split = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut Quiet)).unwrap();
        assert_eq!(split.environment.as_ref().unwrap().threads, threads);
        assert_eq!(unsplit(&split), unsplit(&one), "{threads} threads");
    }
}

#[test]
fn an_mnist1d_bench_is_a_classification_that_does_not_depend_on_the_thread_split() {
    // The mnist1d track end to end: accuracies and cross-entropies for every full run, the
    // task in the report, a valid report, the same numbers on 1 and 2 threads.
    let cfg = BenchConfig { track: "mnist1d".into(), train_size: 60, n_sweep_seeds: 2, ..tiny() };
    let one = run(&cfg);
    let two = futures::executor::block_on(run_bench(
        &cfg.resolve().unwrap(),
        &backend::Backend { threads: 2, ..cpu1() },
        &[],
        &mut Quiet,
    ))
    .unwrap();
    assert_eq!(unsplit(&two), unsplit(&one));
    assert_eq!(one.metric_direction, "higher is better");
    let task = one.task.as_ref().unwrap();
    assert_eq!((task.train_sequences, task.validation_sequences, task.test_sequences), (60, 12, 1000));
    for run in one.runs.as_ref().unwrap() {
        let acc = run.metric.unwrap();
        // Accuracies are multiples of 1 / (12 validation or 1000 test sequences).
        let n = if run.phase == Phase::Sweep { 12.0 } else { 1000.0 };
        assert!((0.0..=1.0).contains(&acc) && ((acc * n).round() - acc * n).abs() < 1e-9, "{acc}");
        assert!(run.secondary_metric.unwrap() > 0.0, "a cross-entropy");
        assert!(run.probes.iter().all(|p| p.checkpoints <= 41), "T = 40");
    }
    assert!(task.secondary.as_ref().unwrap().baseline_mean.is_some());
    validate_json(&one.to_json()).unwrap();
}

/// A browser worker of a split bench, simulated on a thread: it sends each run it finishes
/// to the other workers and takes theirs, as the page relays them.
struct Relay {
    inbox: mpsc::Receiver<RunRecord>,
    outs: Vec<mpsc::Sender<RunRecord>>,
    cancel_after_runs: Option<usize>,
    finished: usize,
    /// The fraction of its first progress event.
    first: Option<f64>,
}

impl Host for Relay {
    fn event(&mut self, e: &Event) {
        if let Event::Progress(p) = e {
            self.first.get_or_insert(p.fraction);
        }
        if let Event::RunFinished(r) = e {
            self.finished += 1;
            for o in &self.outs {
                let _ = o.send(r.clone());
            }
        }
    }
    fn cancelled(&self) -> bool {
        self.cancel_after_runs.is_some_and(|n| self.finished >= n)
    }
    fn take_runs(&mut self) -> Vec<RunRecord> {
        self.inbox.try_iter().collect()
    }
    fn wait_for_runs(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        std::thread::sleep(std::time::Duration::from_millis(2));
        Box::pin(std::future::ready(()))
    }
}

/// Run `cfg` split over `count` simulated workers; each worker's result and the fraction of
/// its first progress event.
fn split_bench(
    cfg: &BenchConfig,
    count: usize,
    prior: &[RunRecord],
) -> Vec<(Result<Report, rdbench_engine::protocol::Stopped>, f64)> {
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..count).map(|_| mpsc::channel()).unzip();
    std::thread::scope(|scope| {
        let handles: Vec<_> = rxs
            .into_iter()
            .enumerate()
            .map(|(index, inbox)| {
                let outs: Vec<_> =
                    txs.iter().enumerate().filter(|(j, _)| *j != index).map(|(_, t)| t.clone()).collect();
                scope.spawn(move || {
                    let b = backend::Backend { split: Some(Slice { index, count }), ..cpu1() };
                    let mut host = Relay { inbox, outs, cancel_after_runs: None, finished: 0, first: None };
                    let result = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, prior, &mut host));
                    (result, host.first.unwrap_or(f64::NAN))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn a_bench_split_over_workers_gives_the_one_worker_report() {
    // The browser splits each population over Web Workers that trade finished runs through
    // the page: every worker ends with every run, and worker 0's report is the bench's.
    let cfg = BenchConfig { n_sweep_seeds: 2, ..tiny() };
    let one = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &cpu1(), &[], &mut Quiet)).unwrap();
    for count in [2, 3] {
        let reports = split_bench(&cfg, count, &[]);
        for (i, (r, _)) in reports.into_iter().enumerate() {
            let r = r.unwrap_or_else(|s| panic!("worker {i} of {count} stopped: {}", s.reason));
            assert_eq!(r.environment.as_ref().unwrap().threads, count, "environment.threads counts workers");
            assert_eq!(unsplit(&r), unsplit(&one), "worker {i} of {count}");
        }
    }
    // A resumed split bench reuses the finished runs once each and trains only the rest.
    let mut host = CancelAfter { steps: 25, finished: 0 };
    let stopped = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &cpu1(), &[], &mut host)).unwrap_err();
    let resumed = split_bench(&cfg, 2, &stopped.runs);
    let r0 = resumed[0].0.as_ref().unwrap();
    // Worker 0 alone counts the reused runs, before its first step, so the workers' figures
    // add up to the kept share from the start.
    let firsts: Vec<f64> = resumed.iter().map(|(_, first)| *first).collect();
    assert_eq!(firsts, vec![stopped.fraction_kept, 0.0]);
    assert_eq!(r0.environment.as_ref().unwrap().reused_runs, stopped.runs.len());
    assert_eq!(unsplit(r0), unsplit(&one));
}

#[test]
fn calibration_times_real_steps_and_names_the_backend() {
    let cfg = tiny();
    let c = futures::executor::block_on(rdbench_engine::calibrate::calibrate(
        &cfg.resolve().unwrap(),
        &cpu1(),
        4,
        3,
        std::time::Duration::from_secs(30),
        2,
    ))
    .unwrap();
    assert_eq!((c.backend.as_str(), c.workers), ("cpu-flex", 2));
    // A unit is a tenth of one trajectory's forward step (H 32): well over a picosecond and
    // well under a tenth of a millisecond on any machine this runs on; the slowest of the
    // trials is no faster than the fastest.
    assert!(c.ms_per_work_unit > 1e-9 && c.ms_per_work_unit < 1e-1, "{c:?}");
    assert!(c.ms_per_work_unit_max.is_some_and(|m| m >= c.ms_per_work_unit), "{c:?}");
}

#[test]
fn work_total_counts_every_run_with_its_passes() {
    // tiny: 2 lrs x 1 sweep seed and 2 paired seeds per arm, 2 epochs; 320 sweep and 400
    // full training trajectories (80 validation, 200 test) of T = 80.
    let cfg = tiny();
    let w = rdbench_engine::work::BenchWork::of(&cfg.resolve().unwrap());
    let (t, c) = (80u64, rdbench_engine::model::CellCost { forward: 10, reversal: 10, vjp: 30 });
    // The baseline: dense BPTT per training trajectory, a forward pass per evaluated one.
    let baseline = |n: u64, n_eval: u64| 2 * n * t * (c.forward + c.vjp) + n_eval * t * c.forward;
    assert_eq!(w.run(Arm::Baseline, Phase::Sweep).mid, baseline(320, 80));
    assert_eq!(w.run(Arm::Baseline, Phase::Full).mid, baseline(400, 200));
    // The idea: its probes, and the frontier's passes in the full runs, on top of its steps.
    for phase in [Phase::Sweep, Phase::Full] {
        let (b, i) = (w.run(Arm::Baseline, phase), w.run(Arm::Idea, phase));
        assert!(b.low == b.mid && b.mid == b.high, "{b:?}");
        assert!(b.mid < i.low && i.low < i.mid && i.mid < i.high, "{phase:?}: {b:?} {i:?}");
    }
    let (s, f) = (w.run(Arm::Idea, Phase::Sweep), w.run(Arm::Idea, Phase::Full));
    // 400 against 320 trajectories and 200 against 80 evaluated explain less than the
    // difference (the probes do not grow with the trajectories): the frontier's passes.
    assert!(f.low > s.low * 400 / 320 + 120 * t * c.forward, "the frontier counts: {s:?} {f:?}");
    let total = rdbench_engine::protocol::work_total(&cfg.resolve().unwrap());
    let by_run = |arm| 2 * w.run(arm, Phase::Sweep).mid + 2 * w.run(arm, Phase::Full).mid;
    assert_eq!(total, by_run(Arm::Baseline) + by_run(Arm::Idea));
    assert_eq!(w.total().mid, total);
}

/// The report as JSON without its timing fields, the reused-run count and what a split over
/// threads or workers changes.
fn unsplit(r: &Report) -> Value {
    common::unsplit_json(serde_json::from_str(&r.to_json()).unwrap())
}

/// The report as JSON without its timing fields and the reused-run count.
fn untimed(r: &Report) -> Value {
    common::untimed_json(serde_json::from_str(&r.to_json()).unwrap())
}

#[test]
fn prior_runs_of_another_backend_or_config_are_not_reused() {
    let cfg = tiny();
    let b = cpu1();
    let mut host = CancelAfter { steps: 25, finished: 0 };
    let stopped = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &[], &mut host)).unwrap_err();
    // The same runs, labelled as another backend's or another config's, are retrained.
    for edit in [
        (|r: &mut RunRecord| r.backend = "webgpu".into()) as fn(&mut RunRecord),
        |r: &mut RunRecord| r.run_hash = "0000000000000000".into(),
        |r: &mut RunRecord| r.run_hash.clear(),
    ] {
        let mut prior = stopped.runs.clone();
        prior.iter_mut().for_each(|r| {
            edit(r);
            r.metric = Some(123.0); // would show in the report if reused
        });
        let r = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, &prior, &mut Quiet)).unwrap();
        assert_eq!(r.environment.as_ref().unwrap().reused_runs, 0);
        assert!(r.runs.as_ref().unwrap().iter().all(|x| x.metric != Some(123.0)));
        assert_eq!(r.environment.as_ref().unwrap().run_backends.get("cpu-flex"), Some(&8));
    }
    // "Continue on CPU": the user asks to reuse another backend's runs; the report says
    // which backends its runs came from and warns about the mix.
    let mut prior = stopped.runs.clone();
    prior.iter_mut().for_each(|r| r.backend = "webgpu".into());
    let continued = Prior { runs: &prior, any_backend: true, ..Prior::default() };
    let r = futures::executor::block_on(run_bench(&cfg.resolve().unwrap(), &b, continued, &mut Quiet)).unwrap();
    let env = r.environment.as_ref().unwrap();
    assert_eq!(env.reused_runs, 2);
    assert_eq!((env.run_backends.get("webgpu"), env.run_backends.get("cpu-flex")), (Some(&2), Some(&6)));
    assert!(r.warnings.as_ref().unwrap().iter().any(|w| w.contains("webgpu")), "{:?}", r.warnings);
    // A run of another config is still never reused, whatever the backend.
    prior.iter_mut().for_each(|r| r.run_hash = "0000000000000000".into());
    let r = futures::executor::block_on(run_bench(
        &cfg.resolve().unwrap(),
        &b,
        Prior { runs: &prior, any_backend: true, ..Prior::default() },
        &mut Quiet,
    ));
    assert_eq!(r.unwrap().environment.unwrap().reused_runs, 0);
}
