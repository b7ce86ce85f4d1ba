//! The browser worker's door to the engine (wasm32 only). The worker's whole message loop is
//! here: `www/worker.js` loads this module and hands every message to [`on_message`], which
//! matches each [`Request`] variant and answers with [`WorkerEvent`]s (the typed enums of
//! `rdbench_core::messages`, mirrored by `www/protocol.js`).
#![cfg(target_arch = "wasm32")]

mod browser;
mod recheck;
mod resolve;

use js_sys::Function;
use rdbench_core::config::BenchConfig;
use rdbench_core::messages::{Request, StopReason, WorkerEvent};
use rdbench_core::records::RunRecord;
use rdbench_engine::backend::Backend;
use rdbench_engine::host::{Event, Host};
use rdbench_engine::protocol::{Prior, run_bench};
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::prelude::*;
use web_time::Instant;

unsafe extern "C" {
    /// Static constructors (cubecl's kernel registry). Calling them once here makes wasm-ld
    /// link a "reactor" instead of wrapping every export in a constructor re-run.
    fn __wasm_call_ctors();
}

/// Module start: run the static constructors once and route panics to the console.
#[wasm_bindgen(start)]
pub fn start() {
    unsafe { __wasm_call_ctors() };
    console_error_panic_hook::set_once();
}

/// This worker's state between messages (one wasm instance per worker, one thread).
struct Worker {
    /// Sends an event to the page (`postMessage`).
    post: Function,
    /// A `start` or `resolve` is in flight.
    busy: Cell<bool>,
    /// The page asked the bench in flight to stop.
    cancel: Cell<bool>,
    /// Records other workers of a split bench finished, not yet taken by the engine.
    received: RefCell<Vec<RunRecord>>,
}

thread_local! {
    static WORKER: RefCell<Option<std::rc::Rc<Worker>>> = const { RefCell::new(None) };
}

impl Worker {
    fn emit(&self, event: &WorkerEvent) {
        if let Ok(v) = browser::to_js(event) {
            let _ = self.post.call1(&JsValue::NULL, &v);
        }
    }
}

/// The worker's loop body: handle one message from the page. `post` sends an event back.
/// A `start` or `resolve` resolves the returned promise when it has answered; it rejects
/// only if the engine panics (the worker then reports a fatal error).
#[wasm_bindgen]
pub async fn on_message(data: JsValue, post: Function) -> Result<(), JsValue> {
    let worker = WORKER.with(|w| w.borrow_mut().get_or_insert_with(|| std::rc::Rc::new(new_worker(post))).clone());
    let request = match serde_wasm_bindgen::from_value::<Request>(data) {
        Ok(r) => r,
        Err(e) => {
            worker.emit(&stopped(StopReason::Config, format!("malformed request: {e}"), vec![], 0.0));
            return Ok(());
        }
    };
    match request {
        Request::Cancel => {
            worker.cancel.set(true);
            browser::wake();
        }
        Request::Recheck { report, selection, seed } => {
            if worker.busy.replace(true) {
                worker.emit(&stopped(StopReason::Config, "a bench is already running".into(), vec![], 0.0));
                return Ok(());
            }
            worker.cancel.set(false);
            let mut host = WorkerHost { worker: worker.clone(), last_progress: None, last_yield: Instant::now() };
            let event = recheck::recheck(&report, &selection, seed, &mut host).await;
            worker.busy.set(false);
            worker.emit(&event);
        }
        Request::Runs { runs } => {
            worker.received.borrow_mut().extend(runs);
            browser::wake();
        }
        Request::Resolve { backend, config, workers } => {
            if worker.busy.replace(true) {
                worker.emit(&stopped(StopReason::Config, "a bench is already running".into(), vec![], 0.0));
                return Ok(());
            }
            let event = match config.resolve() {
                Err(e) => stopped(StopReason::Config, e.to_string(), vec![], 0.0),
                Ok(ctx) => resolve::resolve(backend, &ctx, workers)
                    .await
                    .unwrap_or_else(|e| stopped(StopReason::Backend, e, vec![], 0.0)),
            };
            worker.busy.set(false);
            worker.emit(&event);
        }
        Request::Start {
            config,
            backend,
            prior,
            reuse_other_backends,
            slice,
            backend_note,
            calibration,
            prior_elapsed_s,
        } => {
            if worker.busy.replace(true) {
                let event = stopped(StopReason::Config, "a bench is already running".into(), prior, prior_elapsed_s);
                worker.emit(&event);
                return Ok(());
            }
            worker.cancel.set(false);
            worker.received.borrow_mut().clear();
            let resume = Resume { prior, any_backend: reuse_other_backends, elapsed_s: prior_elapsed_s };
            let event = run(&worker, &config, backend, resume, slice, backend_note, calibration).await;
            worker.busy.set(false);
            worker.emit(&event);
        }
    }
    Ok(())
}

fn new_worker(post: Function) -> Worker {
    Worker { post, busy: Cell::new(false), cancel: Cell::new(false), received: RefCell::new(Vec::new()) }
}

/// A stop before the engine ran: nothing new is kept, and no time was added to the bench's.
fn stopped(reason: StopReason, message: String, runs: Vec<RunRecord>, elapsed_s: f64) -> WorkerEvent {
    WorkerEvent::Stopped { reason, message, runs, elapsed_s, fraction_kept: 0.0 }
}

/// What a `start` takes over from a stopped bench.
struct Resume {
    prior: Vec<RunRecord>,
    any_backend: bool,
    elapsed_s: f64,
}

/// Run a bench (or this worker's share of one) and return its last event: the report, or
/// why it stopped with the runs it finished.
async fn run(
    worker: &std::rc::Rc<Worker>,
    config: &BenchConfig,
    requested: rdbench_core::messages::BackendChoice,
    resume: Resume,
    slice: Option<rdbench_core::records::Slice>,
    note: String,
    calibration: Vec<rdbench_core::report::Calibration>,
) -> WorkerEvent {
    let Resume { prior, any_backend, elapsed_s } = resume;
    // Resolved once (its track built): everything below takes the bench.
    let ctx = match config.resolve() {
        Ok(c) => c,
        Err(e) => return stopped(StopReason::Config, e.to_string(), prior, elapsed_s),
    };
    // The page resolves `auto` first (a `resolve` request) and starts with the result; a
    // start that still says `auto` resolves here, for one worker.
    let kind = match resolve::kind_for_start(requested, &ctx).await {
        Ok(k) => k,
        Err(e) => return stopped(StopReason::Backend, e, prior, elapsed_s),
    };
    let backend = match resolve::backend(kind, "").await {
        Ok(b) => Backend { split: slice.filter(|s| s.count > 1), note, calibration, ..b },
        Err(e) => return stopped(StopReason::Backend, e, prior, elapsed_s),
    };
    let mut host = WorkerHost { worker: worker.clone(), last_progress: None, last_yield: Instant::now() };
    match run_bench(&ctx, &backend, Prior { runs: &prior, any_backend, elapsed_s }, &mut host).await {
        Ok(report) => WorkerEvent::Report { json: report.to_json() + "\n" },
        Err(s) => WorkerEvent::Stopped {
            reason: s.reason.stop_reason(),
            message: s.reason.to_string(),
            runs: s.runs,
            elapsed_s: s.elapsed_s,
            fraction_kept: s.fraction_kept,
        },
    }
}

/// The engine's host in a worker: events to the page (progress throttled), the page's
/// cancel, and a turn of the worker's event loop now and then so that messages get in.
struct WorkerHost {
    worker: std::rc::Rc<Worker>,
    last_progress: Option<Instant>,
    last_yield: Instant,
}

impl Host for WorkerHost {
    fn event(&mut self, event: &Event) {
        let message = match event {
            // Progress at most every 100 ms (enough for a smooth bar), each epoch's end, and
            // where the bench starts (epoch 0, before the first step: it counts as no report
            // in the 100 ms, so the first step is reported too).
            Event::Progress(p) => {
                if p.epoch > 0 {
                    let due = self.last_progress.is_none_or(|t| t.elapsed().as_millis() >= 100);
                    if !due && p.step != p.steps {
                        return;
                    }
                    self.last_progress = Some(Instant::now());
                }
                WorkerEvent::Progress { progress: p.clone() }
            }
            Event::RunFinished(run) => WorkerEvent::RunFinished { run: run.clone() },
        };
        self.worker.emit(&message);
    }

    fn cancelled(&self) -> bool {
        self.worker.cancel.get()
    }

    fn pause(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        // A macrotask turn every ~25 ms lets a cancel message in without slowing training.
        if self.last_yield.elapsed().as_millis() < 25 {
            return Box::pin(std::future::ready(()));
        }
        self.last_yield = Instant::now();
        Box::pin(browser::next_macrotask())
    }

    fn interrupted(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        // A cancel message wakes it (so does a relayed record; the engine then waits on).
        Box::pin(browser::woken_or_after(60_000))
    }

    fn take_runs(&mut self) -> Vec<RunRecord> {
        std::mem::take(&mut *self.worker.received.borrow_mut())
    }

    fn wait_for_runs(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        // No busy loop: the core belongs to another worker. A relayed record or a cancel
        // wakes it; a second passes at most.
        Box::pin(browser::woken_or_after(1000))
    }
}

/// The fused kernels checked on backend `kind` ("webgpu" or "cpu") against the tensor-op
/// path (`rdbench_engine::fused_check`): kernel launches and ms per training step of both
/// arms at `population` runs on sequences of `seq_len` steps (0: the pendulum's default), and
/// the largest difference of their results. A diagnostic for the benchmark script and the
/// browser tests, not part of the message loop.
#[wasm_bindgen]
pub async fn fused_check(kind: String, population: usize, steps: usize, seq_len: usize) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let c = rdbench_engine::fused_check::fused_check(&b.device, population.max(1), steps, seq_len)
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&c)
}

/// The fused kernels against the tensor-op path at `population` runs, past one grid
/// dimension's 65535 workgroups (`rdbench_engine::fused_check::large_population_check`): the
/// largest differences, per part. A diagnostic for the browser tests.
#[wasm_bindgen]
pub async fn large_population_check(kind: String, population: usize) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let c = rdbench_engine::fused_check::large_population_check(&b.device, population.max(1))
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&c)
}

/// The whole-sequence kernels against their references at T = 3 and 80, and with `long` at
/// T = 1,000 and 40 runs too (`rdbench_engine::fused_check::sequence_check`): the largest
/// differences, per case. A diagnostic for the browser tests.
#[wasm_bindgen]
pub async fn sequence_check(kind: String, long: bool) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let c = rdbench_engine::fused_check::sequence_check(&b.device, long)
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&c)
}

/// rev_gru on backend `kind` against the CPU (`rdbench_engine::rev_gru_check`): `steps`
/// steps forward and back through its information buffer, and its gradient through
/// reversal. A diagnostic for the browser tests.
#[wasm_bindgen]
pub async fn rev_gru_check(kind: String, steps: usize) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let c = rdbench_engine::rev_gru_check::rev_gru_check(&b.device, steps)
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&c)
}

/// Kernel launches of a whole population step of each arm and of a probe at `population`
/// runs under the default config, its model or `model` (`rdbench_engine::fused_check::dispatches`);
/// the frontier's probe too if `frontier`. A diagnostic for the benchmark script and the
/// browser tests.
#[wasm_bindgen]
pub async fn dispatches(
    kind: String,
    population: usize,
    frontier: bool,
    model: Option<String>,
) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let d = rdbench_engine::fused_check::dispatches(&b.device, population.max(1), frontier, model.as_deref())
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&d)
}

/// The default protocol's kernel launches (`rdbench_engine::fused_check::default_protocol_dispatches`):
/// the measured per-step and per-probe counts times the protocol's steps and probes.
#[wasm_bindgen]
pub async fn protocol_dispatches(kind: String) -> Result<JsValue, JsValue> {
    let kind = resolve::Kind::parse(&kind).map_err(|e| JsValue::from_str(&e))?;
    let b = resolve::backend(kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let d = rdbench_engine::fused_check::default_protocol_dispatches(&b.device)
        .await
        .map_err(|e| JsValue::from_str(&e.to_string()))?;
    browser::to_js(&d)
}

/// This core's f32 peak in this browser (`rdbench_engine::peak`: wasm simd128 multiply + add,
/// register-only), `{ gflops, unit }`: the ceiling the browser's kernels are read against. A
/// diagnostic for the benchmark script, not part of the message loop.
#[wasm_bindgen]
pub fn simd_peak() -> Result<JsValue, JsValue> {
    let p = rdbench_engine::peak::measure().ok_or_else(|| JsValue::from_str("no peak measured on this target"))?;
    browser::to_js(&p)
}
