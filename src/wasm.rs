//! The browser worker's door to the engine (wasm32 only). `www/worker.js` drives it; the
//! messages are the typed enums of `messages.rs` (mirrored by `www/protocol.js`).

use crate::backend::{self, Backend};
use crate::config::BenchConfig;
use crate::error::EngineError;
use crate::messages::{Request, StopReason, WorkerEvent};
use crate::progress::{Event, Host, RunRecord};
use crate::protocol::{Prior, run_bench as engine_run};
use js_sys::{Function, Promise};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
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

thread_local! {
    static WEBGPU: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

/// Initialise a backend ("webgpu" or "cpu") and return its `backend` event (the worker adds
/// the note). WebGPU is initialised once per worker and reused. `adapter_hint` is the
/// browser's own description of its adapter (wgpu often cannot name it inside a browser).
#[wasm_bindgen]
pub async fn init_backend(kind: String, adapter_hint: String) -> Result<JsValue, JsValue> {
    let b = backend_for(&kind, &adapter_hint).await.map_err(|e| JsValue::from_str(&e))?;
    let event = WorkerEvent::Backend {
        backend: b.name,
        adapter: b.adapter,
        note: String::new(),
        calibration: Vec::new(),
        workers: 1,
        work_total: 0,
    };
    to_js(&event)
}

fn to_js<T: serde::Serialize>(v: &T) -> Result<JsValue, JsValue> {
    serde::Serialize::serialize(v, &serde_wasm_bindgen::Serializer::json_compatible()).map_err(JsValue::from)
}

fn config_of(config: JsValue) -> Result<BenchConfig, JsValue> {
    let cfg: BenchConfig =
        serde_wasm_bindgen::from_value(config).map_err(|e| JsValue::from_str(&format!("malformed config: {e}")))?;
    cfg.validate().map_err(|e| JsValue::from_str(&e.to_string()))?;
    Ok(cfg)
}

/// Work units of a bench of `config` (`protocol::work_total`); rejects an invalid config.
#[wasm_bindgen]
pub fn work_total(config: JsValue) -> Result<usize, JsValue> {
    Ok(crate::protocol::work_total(&config_of(config)?))
}

/// Measure backend `kind` ("webgpu" or "cpu", initialised) on a few training steps of
/// `config`'s baseline (`calibrate::calibrate_default`);
/// returns a `Calibration` object with `workers` recorded.
#[wasm_bindgen]
pub async fn calibrate(kind: String, config: JsValue, workers: usize) -> Result<JsValue, JsValue> {
    let cfg = config_of(config)?;
    let b = backend_for(&kind, "").await.map_err(|e| JsValue::from_str(&e))?;
    let c =
        crate::calibrate::calibrate_default(&cfg, &b, workers).await.map_err(|e| JsValue::from_str(&e.to_string()))?;
    to_js(&c)
}

/// The fused kernels checked on backend `kind` ("webgpu" or "cpu") against the tensor-op
/// path (`fused_check::fused_check`): kernel launches and ms per training step of both arms
/// at `population` runs, and the largest difference of their results (on the CPU both
/// paths are the fused CPU kernels, and nothing is launched). For the benchmark and the
/// browser tests.
#[wasm_bindgen]
pub async fn fused_check(kind: String, population: usize, steps: usize) -> Result<JsValue, JsValue> {
    #[cfg(feature = "cube")]
    {
        let b = backend_for(&kind, "").await.map_err(|e| JsValue::from_str(&e))?;
        let c = crate::fused_check::fused_check(&b.device, population.max(1), steps)
            .await
            .map_err(|e| JsValue::from_str(&e.to_string()))?;
        to_js(&c)
    }
    #[cfg(not(feature = "cube"))]
    {
        let _ = (kind, population, steps);
        Err(JsValue::from_str("this build has no GPU kernels"))
    }
}

async fn backend_for(kind: &str, hint: &str) -> Result<Backend, String> {
    match kind {
        "cpu" => backend::cpu("flex"),
        "webgpu" => {
            if let Some(b) = WEBGPU.with(|w| w.borrow().clone()) {
                return Ok(b);
            }
            let b = webgpu(hint).await?;
            WEBGPU.with(|w| *w.borrow_mut() = Some(b.clone()));
            Ok(b)
        }
        other => Err(format!("unknown backend {other:?} (webgpu or cpu)")),
    }
}

#[cfg(feature = "webgpu")]
async fn webgpu(hint: &str) -> Result<Backend, String> {
    use burn::tensor::Device;
    use burn::tensor::wgpu::WgpuBackend;
    let (device, setup) = Device::wgpu_options()
        .graphics_api(WgpuBackend::WebGpu)
        .init_with_setup_async()
        .await
        .map_err(|e| format!("WebGPU initialisation failed: {e:?}"))?;
    let info = setup.adapter.get_info();
    let adapter = if info.name.is_empty() && !hint.is_empty() { hint.to_string() } else { info.name.clone() };
    let adapter = format!("{adapter} ({:?}, {:?})", info.backend, info.device_type);
    Ok(Backend::new(device, "webgpu", &adapter))
}

#[cfg(not(feature = "webgpu"))]
async fn webgpu(_hint: &str) -> Result<Backend, String> {
    Err("this build has no WebGPU backend".into())
}

/// Send one event to the page's handler as a plain JS object.
fn emit(on_event: &Function, event: &WorkerEvent) {
    let ser = serde_wasm_bindgen::Serializer::json_compatible();
    if let Ok(v) = serde::Serialize::serialize(event, &ser) {
        let _ = on_event.call1(&JsValue::NULL, &v);
    }
}

/// Forwards engine events to JS, throttled, and lets the worker's event loop run.
struct WorkerHost {
    on_event: Function,
    is_cancelled: Function,
    yield_now: Function,
    /// `() => RunRecord[]`: records other workers sent since the last call.
    take_runs: Function,
    /// `() => Promise`: resolves when another worker's records or a cancel arrive.
    wait_runs: Function,
    last_progress: Option<Instant>,
    last_yield: Instant,
}

/// A JS function returning a promise, as a future (a ready one if it returned none).
fn await_promise(f: &Function) -> Pin<Box<dyn Future<Output = ()>>> {
    let promise = f.call0(&JsValue::NULL).ok().and_then(|p| p.dyn_into::<Promise>().ok());
    Box::pin(async move {
        if let Some(p) = promise {
            let _ = JsFuture::from(p).await;
        }
    })
}

impl Host for WorkerHost {
    fn event(&mut self, event: &Event) {
        let message = match event {
            // Progress at most every 100 ms (enough for a smooth bar), and each epoch's end.
            Event::Progress(p) => {
                let due = self.last_progress.is_none_or(|t| t.elapsed().as_millis() >= 100);
                if !due && p.step != p.steps {
                    return;
                }
                self.last_progress = Some(Instant::now());
                WorkerEvent::Progress { progress: p.clone() }
            }
            Event::RunFinished(run) => WorkerEvent::RunFinished { run: run.clone() },
        };
        emit(&self.on_event, &message);
    }

    fn cancelled(&self) -> bool {
        self.is_cancelled.call0(&JsValue::NULL).map(|v| v.is_truthy()).unwrap_or(false)
    }

    fn pause(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        // A macrotask turn every ~25 ms lets a cancel message in without slowing training.
        if self.last_yield.elapsed().as_millis() < 25 {
            return Box::pin(std::future::ready(()));
        }
        self.last_yield = Instant::now();
        await_promise(&self.yield_now)
    }

    fn take_runs(&mut self) -> Vec<RunRecord> {
        let runs = self.take_runs.call0(&JsValue::NULL).unwrap_or(JsValue::UNDEFINED);
        serde_wasm_bindgen::from_value(runs).unwrap_or_default()
    }

    fn wait_for_runs(&mut self) -> Pin<Box<dyn Future<Output = ()>>> {
        await_promise(&self.wait_runs)
    }
}

/// Run the bench of a `start` request (a [`Request`] object) on `backend_kind` ("webgpu" or
/// "cpu", resolved by the worker). Every outcome is an event through `on_event`: progress,
/// finished runs, then `report` or `stopped`. With a `slice`, this worker trains its share of
/// each population and gets the others' records through `take_runs` / `wait_runs`. Rejects
/// only if the engine panics.
#[allow(clippy::too_many_arguments)] // the worker's hooks, one JS function each
#[wasm_bindgen]
pub async fn run_bench(
    request: JsValue,
    backend_kind: String,
    on_event: Function,
    is_cancelled: Function,
    yield_now: Function,
    take_runs: Function,
    wait_runs: Function,
) -> Result<(), JsValue> {
    let stopped =
        |reason: StopReason, message: String, runs: Vec<RunRecord>| WorkerEvent::Stopped { reason, message, runs };
    let (cfg, prior, any_backend, slice, note, calibration) = match serde_wasm_bindgen::from_value::<Request>(request) {
        Ok(Request::Start { config, prior, reuse_other_backends, slice, backend_note, calibration, .. }) => {
            (config, prior, reuse_other_backends, slice, backend_note, calibration)
        }
        Ok(other) => {
            emit(&on_event, &stopped(StopReason::Config, format!("not a start request: {other:?}"), vec![]));
            return Ok(());
        }
        Err(e) => {
            emit(&on_event, &stopped(StopReason::Config, format!("malformed start request: {e}"), vec![]));
            return Ok(());
        }
    };
    if let Err(e) = cfg.validate() {
        emit(&on_event, &stopped(StopReason::Config, e.to_string(), prior));
        return Ok(());
    }
    let backend = match backend_for(&backend_kind, "").await {
        Ok(b) => Backend { split: slice.filter(|s| s.count > 1), note, calibration, ..b },
        Err(e) => {
            emit(&on_event, &stopped(StopReason::Backend, e, prior));
            return Ok(());
        }
    };
    let mut host = WorkerHost {
        on_event: on_event.clone(),
        is_cancelled,
        yield_now,
        take_runs,
        wait_runs,
        last_progress: None,
        last_yield: Instant::now(),
    };
    let prior_runs = Prior { runs: &prior, any_backend };
    let event = match engine_run(&cfg, &backend, prior_runs, &mut host).await {
        Ok(report) => WorkerEvent::Report { json: report.to_json() + "\n" },
        Err(s) => {
            let reason = match s.reason {
                EngineError::Cancelled => StopReason::Cancelled,
                EngineError::Config(_) => StopReason::Config,
                EngineError::Device(_) => StopReason::Device,
            };
            stopped(reason, s.reason.to_string(), s.runs)
        }
    };
    emit(&on_event, &event);
    Ok(())
}
