//! Compute backends: which burn device the engine runs on, and how the report names it.

use burn::tensor::Device;

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
}

/// The threads a native CPU backend uses by default: one per core.
pub fn default_threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    return std::thread::available_parallelism().map_or(1, |n| n.get());
    #[cfg(target_arch = "wasm32")]
    1
}

/// CPU backends this build can run, by name.
pub fn cpu_backends() -> Vec<&'static str> {
    vec!["flex", "ndarray"]
}

/// A CPU backend: `flex` (the default: fastest here, see README) or `ndarray`.
pub fn cpu(kind: &str) -> Result<Backend, String> {
    match kind {
        #[allow(deprecated)] // burn deprecates ndarray in favour of flex; kept for comparison
        "ndarray" => Ok(Backend {
            device: Device::ndarray(),
            name: "cpu-ndarray".into(),
            adapter: "burn-ndarray (CPU)".into(),
            threads: default_threads(),
        }),
        "flex" => Ok(Backend {
            device: Device::flex(),
            name: "cpu-flex".into(),
            adapter: "burn-flex (CPU)".into(),
            threads: default_threads(),
        }),
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
#[cfg(all(feature = "wgpu", not(target_arch = "wasm32")))]
pub fn vulkan() -> Result<Backend, String> {
    let device = Device::wgpu_options()
        .graphics_api(burn::tensor::wgpu::WgpuBackend::Vulkan)
        .init()
        .map_err(|e| format!("no Vulkan adapter: {e:?}"))?;
    Ok(Backend { device, name: "wgpu-vulkan".into(), adapter: "wgpu (Vulkan)".into(), threads: 1 })
}
