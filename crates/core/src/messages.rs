//! The typed messages between the page and the engine's Web Worker: one serde enum each way,
//! mirrored by `www/protocol.js`. They cross the boundary as plain JS objects (serde-wasm-
//! bindgen, JSON-compatible), the only encoding used there; the finished report travels as
//! its JSON text so the page can save it byte for byte.

use crate::config::BenchConfig;
use crate::progress::Progress;
use crate::records::{RunRecord, Slice};
use crate::report::Calibration;
use serde::{Deserialize, Serialize};

/// The backend the page asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// The fastest available (resolved by the worker).
    Auto,
    /// WebGPU (burn-wgpu).
    Webgpu,
    /// The CPU (burn-flex in wasm).
    Cpu,
}

/// Page → worker.
#[allow(clippy::large_enum_variant)] // one start per bench: its size does not matter
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Run a bench, reusing `prior` runs (from a stopped bench) where they match.
    Start {
        /// The configuration.
        config: BenchConfig,
        /// Requested backend.
        backend: BackendChoice,
        /// Finished runs of an earlier, stopped bench.
        #[serde(default)]
        prior: Vec<RunRecord>,
        /// Reuse `prior` runs made on another backend too ("Continue on CPU").
        #[serde(default)]
        reuse_other_backends: bool,
        /// This worker's share when the bench is split over workers (None: all of it).
        #[serde(default)]
        slice: Option<Slice>,
        /// Why the backend was chosen (from the `backend` event), for the report.
        #[serde(default)]
        backend_note: String,
        /// The calibration that chose it (from the `backend` event), for the report.
        #[serde(default)]
        calibration: Vec<Calibration>,
        /// Seconds the stopped attempts whose runs are in `prior` ran (their `stopped`
        /// events' `elapsed_s`): the resumed bench's elapsed time and wall time count them.
        #[serde(default)]
        prior_elapsed_s: f64,
    },
    /// Resolve `backend` (`auto`: calibrate and choose) for a bench of `config` split over
    /// up to `workers` CPU workers; answered by a `backend` event.
    Resolve {
        /// Requested backend.
        backend: BackendChoice,
        /// The configuration (calibration trains a few steps of its baseline).
        config: BenchConfig,
        /// CPU workers the page would run.
        workers: usize,
    },
    /// Train runs of a report again and compare them with its records ("Re-check"):
    /// `selection` as `rdbench validate --rerun` takes it (N, `all`, or named runs), a draw
    /// of N seeded by `seed`; answered by progress, `run_finished` and `rechecked` (or
    /// `stopped`).
    Recheck {
        /// The report's JSON text.
        report: String,
        /// Which runs.
        selection: String,
        /// The draw's seed.
        seed: u64,
    },
    /// Records other workers of a split bench finished (relayed by the page).
    Runs {
        /// The records.
        runs: Vec<RunRecord>,
    },
    /// Stop before the next training step.
    Cancel,
}

/// Why a bench stopped before its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The user cancelled.
    Cancelled,
    /// The device failed mid-run (lost WebGPU device, failed read).
    Device,
    /// The backend could not be started.
    Backend,
    /// The configuration was rejected.
    Config,
}

/// Worker → page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorkerEvent {
    /// The engine's wasm is compiled and ready.
    Loaded,
    /// The backend a `start` runs on; `note` says why `auto` chose it.
    Backend {
        /// Backend name, as in the report (`cpu-flex`, `webgpu`).
        backend: String,
        /// Adapter description.
        adapter: String,
        /// Why this backend (empty when it is the one asked for).
        note: String,
        /// Calibration figures measured to choose, and for the time estimate (empty when
        /// none ran).
        #[serde(default)]
        calibration: Vec<Calibration>,
        /// Workers the bench will be split over (CPU: Web Workers; WebGPU: 1).
        #[serde(default = "one")]
        workers: usize,
        /// Work units of the bench (`protocol::work_total`, the progress bar's total): the
        /// estimate is `work_total x ms_per_work_unit / workers`.
        #[serde(default)]
        work_total: u64,
        /// The work units if the idea trained at k = 1 throughout and at k_max throughout:
        /// the estimate's range (`work_low x ms_per_work_unit_min` to `work_high x
        /// ms_per_work_unit_max`, over the workers).
        #[serde(default)]
        work_low: u64,
        /// See `work_low`.
        #[serde(default)]
        work_high: u64,
        /// The backend is WebGPU on a software (fallback) adapter: the GPU's work emulated on
        /// the CPU, far slower than the engine's own CPU path. The page says so before Run.
        #[serde(default)]
        fallback_adapter: bool,
        /// The track's trivial predictor in the training loss's units (a regression's MSE),
        /// drawn on the live loss chart: a run on the plateau sits at it, one that learned
        /// drops far below. None for a classification (its loss is not its metric).
        #[serde(default)]
        trivial_loss: Option<TrivialLoss>,
    },
    /// Training progress (throttled).
    Progress {
        /// Where the bench is.
        progress: Progress,
    },
    /// A run's final record.
    RunFinished {
        /// The record, as in the report's `runs`.
        run: RunRecord,
    },
    /// The finished report, as the exact text to download.
    Report {
        /// `bench_report.json` text.
        json: String,
    },
    /// The bench stopped early; `runs` are the runs it finished.
    Stopped {
        /// Why.
        reason: StopReason,
        /// What happened, in words.
        message: String,
        /// Finished runs, reusable by a later `start`.
        runs: Vec<RunRecord>,
        /// Seconds the bench had run, the stopped attempts it resumed included (a resume
        /// sends it back as `prior_elapsed_s`).
        #[serde(default)]
        elapsed_s: f64,
        /// Share of the bench's work in the runs it keeps (finished or taken over); in a
        /// bench split over workers each worker's part, and the parts add up. The steps of
        /// runs in flight are lost.
        #[serde(default)]
        fraction_kept: f64,
    },
    /// A re-check's result: the runs trained again, and those whose record differs.
    Rechecked {
        /// The runs re-run, by name (`arm/phase/lr/seed`), in the report's order.
        runs: Vec<String>,
        /// Each differing run: its name and its first differences.
        differing: Vec<String>,
        /// The relative tolerance the comparison allowed (None: bit for bit).
        tolerance: Option<f64>,
        /// Why not bit for bit (empty when it was).
        note: String,
        /// The build that made the report's runs, when it is not this one (empty otherwise).
        other_build: String,
        /// Seconds the re-check took.
        elapsed_s: f64,
    },
    /// The engine crashed (a panic); `fatal`: the worker must be replaced.
    Error {
        /// What happened.
        message: String,
        /// Whether the worker is unusable.
        fatal: bool,
    },
}

/// What a model that learned nothing scores, in the training loss's units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrivialLoss {
    /// What the trivial predictor predicts ("always predicting 1").
    pub name: String,
    /// Its test MSE (the report's `task.reference`).
    pub value: f64,
    /// Where an arm counts as having learned (the report's `task.learnability.threshold`).
    pub learned_below: f64,
}

fn one() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Arm, Phase};

    /// One of every message, with small sample values: `tests/fixtures/messages.json` holds
    /// their JSON, which the JS mirror's test (`tests/js/protocol.test.mjs`) rebuilds with
    /// `www/protocol.js` and compares.
    fn every_message() -> serde_json::Value {
        let config = BenchConfig { n_seeds: 2, lrs: vec![0.01], ..BenchConfig::default() };
        let calibration = vec![Calibration {
            backend: "cpu-flex".into(),
            ms_per_work_unit: 1.5,
            ms_per_work_unit_min: Some(1.2),
            ms_per_work_unit_max: Some(1.8),
            workers: 2,
            population: None,
        }];
        let requests = [
            Request::Start {
                config: config.clone(),
                backend: BackendChoice::Cpu,
                prior: vec![],
                reuse_other_backends: true,
                slice: Some(Slice { index: 1, count: 2 }),
                backend_note: "why".into(),
                calibration: calibration.clone(),
                prior_elapsed_s: 12.5,
            },
            Request::Resolve { backend: BackendChoice::Auto, config, workers: 2 },
            Request::Recheck { report: "{}".into(), selection: "3".into(), seed: 7 },
            Request::Runs { runs: vec![] },
            Request::Cancel,
        ];
        let progress = Progress {
            phase: Phase::Sweep,
            arm: Arm::Idea,
            epoch: 1,
            epochs: 2,
            step: 3,
            steps: 4,
            runs_done: 0,
            runs_total: 8,
            fraction: 0.25,
            lrs: vec![0.01],
            seeds: vec![1000],
            losses: vec![Some(0.5)],
            elapsed_s: 1.0,
        };
        let events = [
            WorkerEvent::Loaded,
            WorkerEvent::Backend {
                backend: "cpu-flex".into(),
                adapter: "burn-flex (CPU)".into(),
                note: "why".into(),
                calibration,
                workers: 2,
                work_total: 100,
                work_low: 60,
                work_high: 140,
                fallback_adapter: true,
                trivial_loss: Some(TrivialLoss {
                    name: "always predicting 1".into(),
                    value: 0.16,
                    learned_below: 0.016,
                }),
            },
            WorkerEvent::Progress { progress },
            WorkerEvent::RunFinished {
                run: RunRecord {
                    arm: Arm::Baseline,
                    phase: Phase::Full,
                    lr: 0.01,
                    seed: 0,
                    metric: Some(0.25),
                    diverged: false,
                    diverged_at: None,
                    loss_curve: vec![Some(1.0), Some(0.5)],
                    wall_time_s: 2.0,
                    population: 2,
                    mean_stored_states: None,
                    probes: vec![],
                    backend: "cpu-flex".into(),
                    run_hash: "0123456789abcdef".into(),
                    rank_history: vec![],
                    secondary_metric: None,
                    build: "0.1.0+0123456789abcdef".into(),
                },
            },
            WorkerEvent::Report { json: "{}".into() },
            WorkerEvent::Stopped {
                reason: StopReason::Device,
                message: "lost".into(),
                runs: vec![],
                elapsed_s: 3.5,
                fraction_kept: 0.25,
            },
            WorkerEvent::Rechecked {
                runs: vec!["idea/full/0.01/1".into()],
                differing: vec!["idea/full/0.01/1 (metric: 0.1 in the report, 0.2 re-run)".into()],
                tolerance: Some(1e-4),
                note: "made natively".into(),
                other_build: String::new(),
                elapsed_s: 1.5,
            },
            WorkerEvent::Error { message: "panic".into(), fatal: true },
        ];
        // Every variant is listed: a new one fails to compile here until it has a sample.
        let name = |r: &Request| match r {
            Request::Start { .. } => "start",
            Request::Resolve { .. } => "resolve",
            Request::Recheck { .. } => "recheck",
            Request::Runs { .. } => "runs",
            Request::Cancel => "cancel",
        };
        let event_name = |e: &WorkerEvent| match e {
            WorkerEvent::Loaded => "loaded",
            WorkerEvent::Backend { .. } => "backend",
            WorkerEvent::Progress { .. } => "progress",
            WorkerEvent::RunFinished { .. } => "run_finished",
            WorkerEvent::Report { .. } => "report",
            WorkerEvent::Rechecked { .. } => "rechecked",
            WorkerEvent::Stopped { .. } => "stopped",
            WorkerEvent::Error { .. } => "error",
        };
        let requests: serde_json::Map<String, serde_json::Value> =
            requests.iter().map(|r| (name(r).to_string(), serde_json::to_value(r).unwrap())).collect();
        let events: serde_json::Map<String, serde_json::Value> =
            events.iter().map(|e| (event_name(e).to_string(), serde_json::to_value(e).unwrap())).collect();
        serde_json::json!({"requests": requests, "events": events})
    }

    /// The serialised messages are the committed golden file (`RDBENCH_BLESS=1` rewrites it),
    /// and each one's `type` is its variant's name.
    #[test]
    fn every_message_is_the_golden_json() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/messages.json");
        let got = every_message();
        for side in ["requests", "events"] {
            for (name, v) in got[side].as_object().unwrap() {
                assert_eq!(v["type"], name.as_str(), "{side}: {name}");
            }
        }
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        if std::env::var_os("RDBENCH_BLESS").is_some() {
            std::fs::write(path, &text).unwrap();
        }
        let want = std::fs::read_to_string(path).expect("tests/fixtures/messages.json (RDBENCH_BLESS=1 writes it)");
        assert_eq!(text, want, "the messages changed: rerun with RDBENCH_BLESS=1 and update www/protocol.js");
    }

    /// Each stop reason reads back as itself.
    #[test]
    fn stop_reasons_round_trip() {
        for r in [StopReason::Cancelled, StopReason::Device, StopReason::Backend, StopReason::Config] {
            let v = serde_json::to_value(r).unwrap();
            assert_eq!(serde_json::from_value::<StopReason>(v).unwrap(), r);
        }
    }

    #[test]
    fn a_start_request_reads_the_page_shape() {
        let text = r#"{"type": "start", "backend": "cpu", "config": CFG, "prior": []}"#
            .replace("CFG", &serde_json::to_string(&BenchConfig::default()).unwrap());
        let r: Request = serde_json::from_str(&text).unwrap();
        let want = Request::Start {
            config: BenchConfig::default(),
            backend: BackendChoice::Cpu,
            prior: vec![],
            reuse_other_backends: false,
            slice: None,
            backend_note: String::new(),
            calibration: vec![],
            prior_elapsed_s: 0.0,
        };
        assert_eq!(r, want);
        let bad = text.replace("\"n_seeds\":8", "\"n_seeds\":8,\"extra\":1");
        assert!(serde_json::from_str::<Request>(&bad).is_err(), "unknown config keys are rejected");
    }
}
