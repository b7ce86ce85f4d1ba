//! This core's f32 peak: a register-only loop of independent multiply-adds at the widest
//! vector width the code can use here, the ceiling the kernels' GFLOP/s are read against:
//! natively fused multiply-adds (AVX-512 or AVX2), in wasm simd128's separate multiply and
//! add on 4 lanes (wasm has no FMA outside relaxed SIMD), so the browser's ceiling is measured
//! in the browser.

use web_time::Instant;

/// One core's measured f32 multiply-add throughput.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Peak {
    /// GFLOP/s (a fused multiply-add counts 2).
    pub gflops: f64,
    /// The instructions it ran.
    pub unit: &'static str,
}

/// Independent accumulators: more than FMA latency × FMA ports, so the loop is bound by
/// throughput, not by one chain's latency.
#[cfg(target_arch = "x86_64")]
const CHAINS: usize = 16;

/// Measure this core's peak: the best of five timed runs (~20 ms each) after three shorter
/// ones that warm the code up (in wasm they move it to V8's optimising tier). `None` where no vector unit is
/// known (x86_64 without AVX2 + FMA, other targets).
pub fn measure() -> Option<Peak> {
    #[cfg(target_arch = "wasm32")]
    {
        let iters = 10_000_000u64;
        let best = best_of(iters, wasm::mul_add128);
        let flop = iters as f64 * (wasm::CHAINS * 4 * 2) as f64;
        Some(Peak { gflops: flop / best / 1e9, unit: "wasm simd128 multiply + add" })
    }
    #[cfg(target_arch = "x86_64")]
    {
        type Kernel = unsafe fn(u64) -> f32;
        let (kernel, lanes, unit): (Kernel, usize, _) = match crate::model::simd::Width::detected() {
            crate::model::simd::Width::Avx512 => (x86::fma512, 16, "AVX-512 FMA"),
            crate::model::simd::Width::Avx2 => (x86::fma256, 8, "AVX2 FMA"),
            crate::model::simd::Width::Baseline => return None,
        };
        let iters = 10_000_000u64;
        // SAFETY: the CPU has the features the kernel is compiled for (checked above).
        let best = best_of(iters, |n| unsafe { kernel(n) });
        let flop = iters as f64 * (CHAINS * lanes * 2) as f64;
        Some(Peak { gflops: flop / best / 1e9, unit })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "wasm32")))]
    None
}

/// The shortest of five timed calls `f(iters)`, in seconds, after three warm-up calls of a
/// quarter as many iterations; each in this thread's CPU time where the system counts it (see
/// [`Clock`]).
#[allow(dead_code)] // unused on targets without a measured peak
fn best_of(iters: u64, mut f: impl FnMut(u64) -> f32) -> f64 {
    for _ in 0..3 {
        std::hint::black_box(f(std::hint::black_box(iters / 4)));
    }
    (0..5)
        .map(|_| {
            let t0 = Clock::start();
            std::hint::black_box(f(std::hint::black_box(iters)));
            t0.seconds()
        })
        .fold(f64::INFINITY, f64::min)
}

/// This thread's CPU time so far, in ns (`CLOCK_THREAD_CPUTIME_ID`: exact, where
/// /proc's schedstat moves only at scheduler ticks), None elsewhere (and in wasm).
pub fn thread_cpu_ns() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// A timer of this thread's work: its CPU time where the system counts it, so that time other
/// processes take the core away is not counted (on a shared machine a 20 ms window of wall
/// time is often cut, and the peak and a kernel's share of it would read what the load left),
/// else wall time. The peak and every kernel it is compared with are timed the same way.
pub struct Clock {
    wall: Instant,
    cpu: Option<u64>,
}

impl Clock {
    /// Start timing.
    pub fn start() -> Clock {
        Clock { wall: Instant::now(), cpu: thread_cpu_ns() }
    }

    /// Seconds since [`start`](Self::start).
    pub fn seconds(&self) -> f64 {
        match (self.cpu, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => self.wall.elapsed().as_secs_f64(),
        }
    }

    /// Whether this clock counts CPU time (else wall time), for the benchmark's header.
    pub fn counts_cpu_time() -> bool {
        thread_cpu_ns().is_some()
    }
}

#[cfg(target_arch = "wasm32")]
mod wasm {
    use std::arch::wasm32::*;

    /// Fewer chains than natively: V8 maps v128 values to the 16 XMM registers and keeps some
    /// for itself. 8 chains of a multiply then an add (~7 cycles of latency) still keep both
    /// vector units busy.
    pub const CHAINS: usize = 8;

    /// `iters` rounds of `acc = acc * a + b` on each of the accumulators of 4 lanes. Not
    /// inlined: V8 moves a function to its optimising tier between calls, never inside one.
    #[inline(never)]
    pub fn mul_add128(iters: u64) -> f32 {
        let (a, b) = (f32x4_splat(0.999_999), f32x4_splat(1e-7));
        let mut acc = [f32x4_splat(0.0); CHAINS];
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = f32x4_add(f32x4_mul(*r, a), b);
            }
        }
        let s = acc.into_iter().fold(f32x4_splat(0.0), |s, r| f32x4_add(s, r));
        f32x4_extract_lane::<0>(s)
            + f32x4_extract_lane::<1>(s)
            + f32x4_extract_lane::<2>(s)
            + f32x4_extract_lane::<3>(s)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::CHAINS;
    use std::arch::x86_64::*;

    /// `iters` rounds of one FMA on each of the 16 accumulators of 16 lanes.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma512(iters: u64) -> f32 {
        let (a, b) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_setzero_ps(); CHAINS];
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm512_fmadd_ps(*r, a, b);
            }
        }
        _mm512_reduce_add_ps(acc.into_iter().fold(_mm512_setzero_ps(), |s, r| _mm512_add_ps(s, r)))
    }

    /// As [`fma512`] with 8 lanes.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma256(iters: u64) -> f32 {
        let (a, b) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_setzero_ps(); CHAINS];
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm256_fmadd_ps(*r, a, b);
            }
        }
        let s = acc.into_iter().fold(_mm256_setzero_ps(), |s, r| _mm256_add_ps(s, r));
        let mut out = [0f32; 8];
        // SAFETY: `out` holds the 8 values stored.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), s) };
        out.iter().sum()
    }
}

#[cfg(test)]
mod clock_tests {
    use super::Clock;

    /// Where the thread's CPU time is counted, time the thread does not run (here a sleep,
    /// on a loaded machine the other processes' share) is left out, and work is counted.
    #[test]
    fn the_clock_counts_the_threads_work_not_its_waiting() {
        if !Clock::counts_cpu_time() {
            return;
        }
        let c = Clock::start();
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(c.seconds() < 0.05, "a 200 ms sleep counted {} s", c.seconds());
        let c = Clock::start();
        let t0 = std::time::Instant::now();
        let mut x = 1.0f64;
        while t0.elapsed().as_millis() < 100 {
            x = std::hint::black_box(x * 1.000_000_1);
        }
        assert!(c.seconds() > 0.02, "100 ms of work counted {} s", c.seconds());
    }
}
