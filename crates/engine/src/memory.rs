//! Peak heap bytes of a pass, for the memory a report measures. The engine cannot count
//! allocations itself (only a binary installs a global allocator), so a binary that counts
//! registers a [`HeapMeter`] once; without one (the browser) every measurement is None.

use std::sync::OnceLock;

/// Per-thread heap counters a binary's global allocator keeps.
pub trait HeapMeter: Sync {
    /// Start a measurement on this thread; returns its mark.
    fn start(&self) -> isize;
    /// The peak bytes above `mark` this thread allocated since [`start`](Self::start), or
    /// None when the allocator has not counted anything (it is not installed).
    fn peak_since(&self, mark: isize) -> Option<usize>;
    /// Stop (true) or resume (false) counting this thread's allocations and frees; returns
    /// whether counting was stopped before.
    fn pause(&self, paused: bool) -> bool;
}

static METER: OnceLock<&'static dyn HeapMeter> = OnceLock::new();

/// Register the process's meter (once; later calls are ignored).
pub fn set_meter(meter: &'static dyn HeapMeter) {
    let _ = METER.set(meter);
}

/// Whether a pass on `device` is measured: a CPU backend with a meter registered.
pub fn metered(device: &burn::tensor::Device) -> bool {
    METER.get().is_some() && !crate::backend::cube_device(device) && !device.is_autodiff()
}

/// Run `f` with this thread's counting stopped, for a library's transient scratch that is
/// allocated and freed within `f`: gemm packs its operands into a buffer whose size follows
/// its SIMD kernel, which `small_mm` does without, so counting it would make measured bytes
/// depend on the CPU and on `RDBENCH_SIMD` rather than on the schedule.
pub fn unmetered<T>(f: impl FnOnce() -> T) -> T {
    struct Resume(&'static dyn HeapMeter, bool);
    impl Drop for Resume {
        fn drop(&mut self) {
            self.0.pause(self.1);
        }
    }
    match METER.get() {
        Some(&m) => {
            let _resume = Resume(m, m.pause(true));
            f()
        }
        None => f(),
    }
}

/// Run `f` and measure the peak heap bytes it allocated on this thread on `device`: a CPU
/// backend (host heap is where its tensors live) with a meter registered; None elsewhere
/// (GPU backends, where host heap says nothing about the pass, or no meter).
pub fn thread_peak_during<T>(device: &burn::tensor::Device, f: impl FnOnce() -> T) -> (T, Option<usize>) {
    match METER.get() {
        Some(m) if metered(device) => {
            let mark = m.start();
            let out = f();
            (out, m.peak_since(mark))
        }
        _ => (f(), None),
    }
}
