//! A counting global allocator for memory measurements (the CLI and the memory tests install
//! it with `#[global_allocator]`, then [`install_meter`] so the engine's probes read it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Wraps the system allocator and tracks live and peak bytes.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

thread_local! {
    // Per-thread live and peak bytes: a bench trains populations on several threads at once,
    // and one pass's peak must not count the allocations of another. Const-initialised
    // `Cell`s allocate nothing, so the allocator may touch them. Bytes freed on another
    // thread than the one that allocated them make `THREAD_LIVE` drift; it is signed so the
    // drift cannot wrap, and a measurement only uses differences within one pass.
    static THREAD_LIVE: Cell<isize> = const { Cell::new(0) };
    static THREAD_PEAK: Cell<isize> = const { Cell::new(0) };
    // Set while the engine runs a library call whose scratch it does not measure: its
    // allocations and frees (both inside the call) leave the thread's counters alone.
    static THREAD_PAUSED: Cell<bool> = const { Cell::new(false) };
}

fn thread_add(delta: isize) {
    if THREAD_PAUSED.try_with(Cell::get).unwrap_or(false) {
        return;
    }
    // `try_with`: during thread teardown the slots may be gone; those bytes go uncounted.
    let _ = THREAD_LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        if delta > 0 {
            let _ = THREAD_PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            INSTALLED.store(true, Ordering::Relaxed);
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
            thread_add(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        thread_add(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
            thread_add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes allocated now.
pub fn live() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Start a new peak measurement from the current live bytes.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Highest live bytes since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Peak bytes above the starting level while `f` runs (0 if the counting allocator is not
/// installed in this binary).
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = live();
    reset_peak();
    let out = f();
    (out, peak().saturating_sub(base))
}

/// Whether the counting allocator is this binary's global allocator (it has counted an
/// allocation).
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Relaxed)
}

/// The engine reads this allocator's per-thread counters through its `HeapMeter`.
struct Meter;

impl rdbench_engine::memory::HeapMeter for Meter {
    fn start(&self) -> isize {
        let base = THREAD_LIVE.with(Cell::get);
        THREAD_PEAK.with(|p| p.set(base));
        base
    }
    fn peak_since(&self, mark: isize) -> Option<usize> {
        let peak = THREAD_PEAK.with(Cell::get);
        installed().then(|| (peak - mark).max(0) as usize)
    }
    fn pause(&self, paused: bool) -> bool {
        THREAD_PAUSED.try_with(|p| p.replace(paused)).unwrap_or(false)
    }
}

/// Let the engine measure with this allocator (call once, in a binary that installs it).
pub fn install_meter() {
    rdbench_engine::memory::set_meter(&Meter);
}

/// Peak bytes above the starting level that this thread allocated while `f` ran, or None
/// when the counting allocator is not installed. Other threads' allocations do not count,
/// so it measures one pass even while other populations train.
pub fn thread_peak_during<T>(f: impl FnOnce() -> T) -> (T, Option<usize>) {
    use rdbench_engine::memory::HeapMeter;
    let mark = Meter.start();
    let out = f();
    (out, Meter.peak_since(mark))
}
