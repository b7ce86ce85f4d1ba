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
/// quarter as many iterations.
#[allow(dead_code)] // unused on targets without a measured peak
fn best_of(iters: u64, mut f: impl FnMut(u64) -> f32) -> f64 {
    for _ in 0..3 {
        std::hint::black_box(f(std::hint::black_box(iters / 4)));
    }
    (0..5)
        .map(|_| {
            let t0 = Instant::now();
            std::hint::black_box(f(std::hint::black_box(iters)));
            t0.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
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
