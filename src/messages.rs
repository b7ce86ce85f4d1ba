//! The typed messages between the page and the engine's Web Worker: one serde enum each way,
//! mirrored by `www/protocol.js`. They cross the boundary as plain JS objects (serde-wasm-
//! bindgen, JSON-compatible), the only encoding used there; the finished report travels as
//! its JSON text so the page can save it byte for byte.

use crate::config::BenchConfig;
use crate::progress::{Progress, RunRecord, Slice};
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
        /// Work units of the bench (`protocol::work_total`): the estimate is
        /// `work_total x ms_per_work_unit / workers`.
        #[serde(default)]
        work_total: usize,
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
    },
    /// The engine crashed (a panic); `fatal`: the worker must be replaced.
    Error {
        /// What happened.
        message: String,
        /// Whether the worker is unusable.
        fatal: bool,
    },
}

fn one() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn type_of<T: Serialize>(v: &T) -> String {
        serde_json::to_value(v).unwrap()["type"].as_str().unwrap().to_string()
    }

    /// Every message type is spelled the same in `www/protocol.js`.
    #[test]
    fn the_js_mirror_names_every_message() {
        let js = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/www/protocol.js")).unwrap();
        let events = [
            WorkerEvent::Loaded,
            WorkerEvent::Backend {
                backend: String::new(),
                adapter: String::new(),
                note: String::new(),
                calibration: vec![],
                workers: 1,
                work_total: 0,
            },
            WorkerEvent::Report { json: String::new() },
            WorkerEvent::Stopped { reason: StopReason::Cancelled, message: String::new(), runs: vec![] },
            WorkerEvent::Error { message: String::new(), fatal: true },
        ];
        let mut names: Vec<String> = events.iter().map(type_of).collect();
        names.extend(["progress".into(), "run_finished".into()]);
        names.push(type_of(&Request::Cancel));
        names.push(type_of(&Request::Runs { runs: vec![] }));
        names.push(type_of(&Request::Resolve {
            backend: BackendChoice::Auto,
            config: BenchConfig::default(),
            workers: 1,
        }));
        names.push(type_of(&Request::Start {
            config: BenchConfig::default(),
            backend: BackendChoice::Auto,
            prior: vec![],
            reuse_other_backends: false,
            slice: None,
            backend_note: String::new(),
            calibration: vec![],
        }));
        for n in names {
            assert!(js.contains(&format!("'{n}'")), "www/protocol.js does not name message type {n:?}");
        }
        for r in ["cancelled", "device", "backend", "config"] {
            let parsed: StopReason = serde_json::from_value(serde_json::json!(r)).unwrap();
            assert_eq!(serde_json::to_value(parsed).unwrap(), r);
            assert!(js.contains(&format!("'{r}'")), "www/protocol.js does not name stop reason {r:?}");
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
        };
        assert_eq!(r, want);
        let bad = text.replace("\"n_seeds\":8", "\"n_seeds\":8,\"extra\":1");
        assert!(serde_json::from_str::<Request>(&bad).is_err(), "unknown config keys are rejected");
    }
}
