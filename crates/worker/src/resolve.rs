//! Which backend a bench runs on in this browser: `auto` never takes a software (fallback)
//! WebGPU adapter and, given a real one, calibrates WebGPU and the CPU workers and takes the
//! one whose predicted wall time for the bench is lower
//! (`rdbench_engine::calibrate::choose_faster`); the answer is one `backend` event.
//! WebGPU asked for by name on a software adapter is used, and the event says so with the
//! CPU's calibration beside it, so the page can name the adapter and compare before Run.

use crate::browser::get;
use js_sys::{Function, Promise};
use rdbench_core::context::BenchContext;
use rdbench_core::learnability;
use rdbench_core::messages::{BackendChoice, TrivialLoss, WorkerEvent};
use rdbench_core::report::Calibration;
use rdbench_engine::backend::{self, Backend};
use rdbench_engine::calibrate::{Share, calibrate_default, calibrate_gpu, choose_faster};
use rdbench_engine::work::BenchWork;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// A backend a bench can run on here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// WebGPU (burn-wgpu).
    Webgpu,
    /// The CPU (burn-flex in wasm).
    Cpu,
}

impl Kind {
    /// "webgpu" or "cpu".
    pub fn parse(s: &str) -> Result<Kind, String> {
        match s {
            "webgpu" => Ok(Kind::Webgpu),
            "cpu" => Ok(Kind::Cpu),
            other => Err(format!("unknown backend {other:?} (webgpu or cpu)")),
        }
    }
}

thread_local! {
    /// WebGPU is initialised once per worker and reused.
    static WEBGPU: RefCell<Option<Backend>> = const { RefCell::new(None) };
}

/// Initialise backend `kind`. `adapter_hint` is the browser's own description of its adapter
/// (wgpu often cannot name it inside a browser).
pub async fn backend(kind: Kind, adapter_hint: &str) -> Result<Backend, String> {
    match kind {
        Kind::Cpu => backend::cpu("flex"),
        Kind::Webgpu => {
            if let Some(b) = WEBGPU.with(|w| w.borrow().clone()) {
                return Ok(b);
            }
            let b = backend::webgpu(adapter_hint).await?;
            WEBGPU.with(|w| *w.borrow_mut() = Some(b.clone()));
            Ok(b)
        }
    }
}

/// The browser's WebGPU adapter, if it has one.
async fn gpu_adapter() -> Option<JsValue> {
    let gpu = get(&js_sys::global(), "navigator").and_then(|n| get(&n, "gpu"))?;
    let request: Function = get(&gpu, "requestAdapter")?.dyn_into().ok()?;
    let promise: Promise = request.call0(&gpu).ok()?.dyn_into().ok()?;
    JsFuture::from(promise).await.ok().filter(|a| !a.is_null() && !a.is_undefined())
}

/// Whether the adapter is a software fallback (SwiftShader and the like).
fn is_fallback(adapter: &JsValue) -> bool {
    let flag = |o: Option<JsValue>| o.and_then(|i| get(&i, "isFallbackAdapter")).is_some_and(|v| v.is_truthy());
    flag(get(adapter, "info")) || flag(Some(adapter.clone()))
}

/// The browser's words for its adapter, e.g. "google swiftshader (fallback adapter)".
fn describe(adapter: &JsValue) -> String {
    let info = get(adapter, "info");
    let words: Vec<String> = ["vendor", "architecture", "device", "description"]
        .iter()
        .filter_map(|k| info.as_ref().and_then(|i| get(i, k)).and_then(|v| v.as_string()))
        .filter(|s| !s.is_empty())
        .collect();
    let words = if words.is_empty() { "unnamed adapter".to_string() } else { words.join(" ") };
    format!("{words}{}", if is_fallback(adapter) { " (fallback adapter)" } else { "" })
}

/// Resolve `requested` for the bench `ctx` split over up to `workers` CPU workers, and
/// measure it: the `backend` event (with the calibration and the bench's work units, for the
/// page's estimate), or why no backend could be had.
pub async fn resolve(requested: BackendChoice, ctx: &BenchContext, workers: usize) -> Result<WorkerEvent, String> {
    let cpu_workers = workers.max(1);
    let mut figures: Vec<Calibration> = Vec::new();
    let mut kind = Kind::Cpu;
    let mut note = String::new();
    let mut hint = String::new();
    let mut fallback = false;
    if requested != BackendChoice::Cpu {
        match gpu_adapter().await {
            None if requested == BackendChoice::Webgpu => {
                return Err("WebGPU is not available in this browser (navigator.gpu gave no adapter).".into());
            }
            None => note = "no WebGPU adapter: running on the CPU".into(),
            // A software adapter runs WebGPU on the CPU, through an emulation far slower than
            // the engine's own CPU path (measured: 40x on a tiny bench), so auto never picks it.
            Some(a) if requested == BackendChoice::Auto && is_fallback(&a) => {
                note = format!(
                    "the only WebGPU adapter is a software fallback ({}): running on the CPU, which is faster",
                    describe(&a)
                );
            }
            Some(a) => {
                hint = describe(&a);
                fallback = is_fallback(&a);
                match backend(Kind::Webgpu, &hint).await {
                    Ok(_) => kind = Kind::Webgpu,
                    Err(e) if requested == BackendChoice::Webgpu => return Err(e),
                    Err(e) => note = format!("WebGPU failed to start ({e}): running on the CPU"),
                }
                if kind == Kind::Webgpu && requested == BackendChoice::Auto {
                    let gpu = measure(Kind::Webgpu, ctx, 1).await?;
                    let cpu = measure(Kind::Cpu, ctx, cpu_workers).await?;
                    let pick = choose_faster(&gpu, &cpu, &Share::of(&BenchWork::of(ctx)));
                    kind = if pick.backend == gpu.backend { Kind::Webgpu } else { Kind::Cpu };
                    note = pick.why;
                    figures.extend([gpu, cpu]);
                }
            }
        }
    }
    let b = backend(kind, &hint).await?;
    let n = if kind == Kind::Webgpu { 1 } else { cpu_workers };
    if !figures.iter().any(|f| f.backend == b.name) {
        figures.push(measure(kind, ctx, n).await?);
    }
    let fallback_adapter = kind == Kind::Webgpu && fallback;
    if fallback_adapter {
        figures.push(measure(Kind::Cpu, ctx, cpu_workers).await?);
    }
    let work = rdbench_engine::work::BenchWork::of(ctx).total();
    let trivial_loss = ctx.trivial_loss().map(|r| TrivialLoss {
        learned_below: learnability::threshold(ctx.task.direction(), r.metric),
        name: r.name,
        value: r.metric,
    });
    Ok(WorkerEvent::Backend {
        backend: b.name,
        adapter: b.adapter,
        note,
        calibration: figures,
        workers: n,
        work_total: work.mid,
        work_low: work.low,
        work_high: work.high,
        fallback_adapter,
        trivial_loss,
    })
}

/// The backend a `start` request runs on: `auto` resolved for one worker.
pub async fn kind_for_start(requested: BackendChoice, ctx: &BenchContext) -> Result<Kind, String> {
    match requested {
        BackendChoice::Cpu => Ok(Kind::Cpu),
        BackendChoice::Webgpu => Ok(Kind::Webgpu),
        BackendChoice::Auto => match resolve(BackendChoice::Auto, ctx, 1).await? {
            WorkerEvent::Backend { backend, .. } if backend == "webgpu" => Ok(Kind::Webgpu),
            _ => Ok(Kind::Cpu),
        },
    }
}

/// `kind`'s calibration for the bench `ctx`: WebGPU's at two population sizes (its cost grows with
/// population steps, not runs), the CPU's for `workers` workers.
async fn measure(kind: Kind, ctx: &BenchContext, workers: usize) -> Result<Calibration, String> {
    let b = backend(kind, "").await?;
    if kind == Kind::Cpu && !CPU_WARMED.replace(true) {
        // A worker's wasm starts in the browser's baseline tier and is optimised on background
        // threads while it runs, so its first timing reads slow (measured: 2.7x with 2 workers
        // calibrating at once on 2 cores, where the compilers share the cores with them): the
        // first calibration of a worker's life is a warm-up, not kept.
        calibrate_default(ctx, &b, workers).await.map_err(|e| e.to_string())?;
    }
    match kind {
        Kind::Webgpu => calibrate_gpu(ctx, &b).await,
        Kind::Cpu => calibrate_default(ctx, &b, workers).await,
    }
    .map_err(|e| e.to_string())
}

thread_local! {
    /// Whether this worker has timed the CPU before (see `measure`).
    static CPU_WARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
