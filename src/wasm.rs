//! The browser worker's door to the engine (wasm32 only). `www/worker.js` drives it; the
//! message protocol is documented in `www/protocol.js`.

use crate::backend::{self, Backend};
use crate::config::BenchConfig;
use crate::progress::{Event, Host, RunRecord};
use crate::protocol::run_bench as engine_run;
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

/// Initialise a backend ("webgpu" or "cpu") and return `{backend, adapter}`.
/// WebGPU is initialised once per worker and reused. `adapter_hint` is the browser's own
/// description of its adapter (wgpu often cannot name it inside a browser).
#[wasm_bindgen]
pub async fn init_backend(kind: String, adapter_hint: String) -> Result<JsValue, JsValue> {
    let b = backend_for(&kind, &adapter_hint).await.map_err(|e| JsValue::from_str(&e))?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"backend".into(), &b.name.into())?;
    js_sys::Reflect::set(&out, &"adapter".into(), &b.adapter.into())?;
    Ok(out.into())
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
    Ok(Backend { device, name: "webgpu".into(), adapter })
}

#[cfg(not(feature = "webgpu"))]
async fn webgpu(_hint: &str) -> Result<Backend, String> {
    Err("this build has no WebGPU backend".into())
}

/// Forwards engine events to JS, throttled, and lets the worker's event loop run.
struct WorkerHost {
    on_event: Function,
    is_cancelled: Function,
    yield_now: Function,
    last_progress: Option<Instant>,
    last_yield: Instant,
}

impl Host for WorkerHost {
    fn event(&mut self, event: &Event) {
        // Progress at most every 100 ms (enough for a smooth bar); every run-finished.
        if let Event::Progress(p) = event {
            let due = self.last_progress.is_none_or(|t| t.elapsed().as_millis() >= 100);
            if !due && p.step != p.steps {
                return;
            }
            self.last_progress = Some(Instant::now());
        }
        let ser = serde_wasm_bindgen::Serializer::json_compatible();
        if let Ok(v) = serde::Serialize::serialize(event, &ser) {
            let _ = self.on_event.call1(&JsValue::NULL, &v);
        }
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
        let promise = self.yield_now.call0(&JsValue::NULL).ok().and_then(|p| p.dyn_into::<Promise>().ok());
        Box::pin(async move {
            if let Some(p) = promise {
                let _ = JsFuture::from(p).await;
            }
        })
    }
}

/// Parse the page's config JSON, naming the field that does not fit.
fn parse_config(text: &str) -> Result<BenchConfig, String> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let cfg: BenchConfig =
        serde_path_to_error::deserialize(de).map_err(|e| format!("config field {}: {}", e.path(), e.inner()))?;
    cfg.validate().map_err(|e| format!("config field {}: {}", e.field, e.message))?;
    Ok(cfg)
}

/// Run the bench. Resolves to the report JSON; rejects with `{reason, message, runs}`
/// (`runs`: JSON of the runs finished before it stopped).
#[wasm_bindgen]
pub async fn run_bench(
    config_json: String,
    backend_kind: String,
    prior_runs_json: String,
    on_event: Function,
    is_cancelled: Function,
    yield_now: Function,
) -> Result<String, JsValue> {
    let fail = |reason: &str, message: String, runs: &[RunRecord]| -> JsValue {
        let o = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&o, &"reason".into(), &reason.into());
        let _ = js_sys::Reflect::set(&o, &"message".into(), &message.into());
        let runs = serde_json::to_string(runs).unwrap_or_else(|_| "[]".into());
        let _ = js_sys::Reflect::set(&o, &"runs".into(), &runs.into());
        o.into()
    };
    let cfg = parse_config(&config_json).map_err(|e| fail("config", e, &[]))?;
    let prior: Vec<RunRecord> = if prior_runs_json.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(&prior_runs_json).map_err(|e| fail("config", format!("finished runs: {e}"), &[]))?
    };
    let backend = backend_for(&backend_kind, "").await.map_err(|e| fail("backend", e, &[]))?;
    let mut host = WorkerHost { on_event, is_cancelled, yield_now, last_progress: None, last_yield: Instant::now() };
    match engine_run(&cfg, &backend, &prior, &mut host).await {
        Ok(report) => Ok(report.to_json() + "\n"),
        Err(stopped) => {
            let reason = match stopped.reason {
                crate::error::EngineError::Cancelled => "cancelled",
                crate::error::EngineError::Config(_) => "config",
                crate::error::EngineError::Device(_) => "device",
            };
            Err(fail(reason, stopped.reason.to_string(), &stopped.runs))
        }
    }
}
