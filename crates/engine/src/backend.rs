//! Compute backends: which burn device the engine runs on, and how the report names it.

use burn::tensor::Device;
use rdbench_core::records::Slice;
use rdbench_core::report::Calibration;

/// A device plus the names the report records for it.
#[derive(Clone, Debug)]
pub struct Backend {
    /// The burn device (never an autodiff device; the engine adds autodiff where needed).
    pub device: Device,
    /// "cpu-ndarray", "cpu-flex", "webgpu" or "wgpu-vulkan".
    pub name: String,
    /// Adapter description (GPU name, or the CPU backend's).
    pub adapter: String,
    /// Threads a phase's runs are split over (native CPU backends; 1 elsewhere).
    pub threads: usize,
    /// In a browser split over workers: this worker's share (None: every run here).
    pub split: Option<Slice>,
    /// Why this backend, for the report (empty when it is the one asked for).
    pub note: String,
    /// The calibration that chose it, for the report.
    pub calibration: Vec<Calibration>,
}

impl Backend {
    /// A backend on `device` named `name`, one thread, no split, no note.
    pub fn new(device: Device, name: &str, adapter: &str) -> Self {
        Backend {
            device,
            name: name.into(),
            adapter: adapter.into(),
            threads: 1,
            split: None,
            note: String::new(),
            calibration: Vec::new(),
        }
    }
}

/// The threads a CPU backend uses by default: one per core natively; 1 in wasm, which has no
/// threads (the browser splits a bench over Web Workers instead).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// CPU backends this build can run, by name.
pub fn cpu_backends() -> Vec<&'static str> {
    let mut names = vec!["flex"];
    if cfg!(feature = "ndarray") {
        names.push("ndarray");
    }
    names
}

/// A CPU backend: `flex` (the default: fastest here, see README) or `ndarray`.
pub fn cpu(kind: &str) -> Result<Backend, String> {
    match kind {
        #[cfg(feature = "ndarray")]
        #[allow(deprecated)] // burn deprecates ndarray in favour of flex; kept for comparison
        "ndarray" => Ok(Backend {
            threads: default_threads(),
            ..Backend::new(Device::ndarray(), "cpu-ndarray", "burn-ndarray (CPU)")
        }),
        "flex" => {
            Ok(Backend { threads: default_threads(), ..Backend::new(Device::flex(), "cpu-flex", "burn-flex (CPU)") })
        }
        other => Err(format!("unknown CPU backend {other:?} (this build has: {})", cpu_backends().join(", "))),
    }
}

/// Pick a backend by its CLI name (`flex`, `ndarray` or, with the `wgpu` feature, `vulkan`).
pub fn by_name(name: &str) -> Result<Backend, String> {
    match name {
        #[cfg(feature = "wgpu")]
        "vulkan" => vulkan(),
        #[cfg(not(feature = "wgpu"))]
        "vulkan" => Err("invalid value for --backend: vulkan needs a build with `--features wgpu`".into()),
        other => cpu(other).map_err(|e| format!("invalid value for --backend: {e}")),
    }
}

/// The native GPU backend (wgpu over Vulkan), with the `wgpu` feature.
#[cfg(feature = "wgpu")]
pub fn vulkan() -> Result<Backend, String> {
    let device = Device::wgpu_options()
        .graphics_api(burn::tensor::wgpu::WgpuBackend::Vulkan)
        .init()
        .map_err(|e| format!("no Vulkan adapter: {e:?}"))?;
    Ok(Backend::new(device, "wgpu-vulkan", "wgpu (Vulkan)"))
}

/// The browser's GPU backend (WebGPU through wgpu), with the `webgpu` feature. `hint` names
/// the adapter when wgpu cannot (inside a browser it often cannot).
#[cfg(feature = "webgpu")]
pub async fn webgpu(hint: &str) -> Result<Backend, String> {
    let (device, setup) = Device::wgpu_options()
        .graphics_api(burn::tensor::wgpu::WgpuBackend::WebGpu)
        .init_with_setup_async()
        .await
        .map_err(|e| format!("WebGPU initialisation failed: {e:?}"))?;
    let info = setup.adapter.get_info();
    let adapter = if info.name.is_empty() && !hint.is_empty() { hint.to_string() } else { info.name.clone() };
    let adapter = format!("{adapter} ({:?}, {:?})", info.backend, info.device_type);
    Ok(Backend::new(device, "webgpu", &adapter))
}

/// Whether `device` is on burn's cubecl backend (a GPU: WebGPU, Vulkan); false in builds
/// without the GPU kernels.
pub fn cube_device(device: &Device) -> bool {
    #[cfg(feature = "cube")]
    return matches!(device.as_dispatch(), burn::backend::DispatchDevice::Cube(_));
    #[cfg(not(feature = "cube"))]
    {
        let _ = device;
        false
    }
}
